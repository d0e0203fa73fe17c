// Scalar: a Python number (bool, int or float) as an op argument.
#ifndef TENSORD_ENGINE_CORE_SCALAR_H_
#define TENSORD_ENGINE_CORE_SCALAR_H_

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/core/dtype.h"

namespace tensord::engine {

class Scalar {
 public:
  enum class Kind : uint8_t { kBool, kInt, kFloat };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::kBool), i_(v), d_(v) {}          // NOLINT: implicit, like torch
  Scalar(int64_t v) : kind_(Kind::kInt), i_(v), d_(static_cast<double>(v)) {}  // NOLINT
  Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}            // NOLINT
  Scalar(double v) : kind_(Kind::kFloat), i_(0), d_(v) {}       // NOLINT

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  // A float truncates toward zero; one outside int64's range saturates and NaN is 0 (a cast
  // would be undefined): ops that must refuse such values check them first (CheckScalarFits).
  int64_t to_int() const {
    if (kind_ != Kind::kFloat) return i_;
    if (!(d_ == d_)) return 0;
    if (d_ >= 9.2233720368547758e18) return INT64_MAX;
    if (d_ <= -9.2233720368547758e18) return INT64_MIN;
    return static_cast<int64_t>(d_);
  }
  double to_double() const { return d_; }
  bool to_bool() const { return kind_ == Kind::kFloat ? d_ != 0 : i_ != 0; }

  // The dtype PyTorch infers for a tensor made from this value (torch.full, torch.tensor).
  DType DefaultDType() const {
    switch (kind_) {
      case Kind::kBool: return DType::kBool;
      case Kind::kInt: return DType::kInt64;
      case Kind::kFloat: break;
    }
    return DefaultFloatDType();
  }
  std::string ToString() const;

 private:
  Kind kind_;
  int64_t i_;
  double d_;
};

// The bits of `value` converted to `dtype` (as a fill writes every element), in the low
// ItemSize(dtype) bytes.
uint64_t FillPattern(DType dtype, const Scalar& value);

// Checks, as c10's checked_convert, that `value` fits `dtype` (e.g. 300 does not fit uint8);
// `op` names the op in the error.
absl::Status CheckScalarFits(absl::string_view op, const Scalar& value, DType dtype);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_CORE_SCALAR_H_
