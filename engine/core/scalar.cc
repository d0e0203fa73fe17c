#include "engine/core/scalar.h"

#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/kernels/convert.h"

namespace tensord::engine {

std::string Scalar::ToString() const {
  switch (kind_) {
    case Kind::kBool: return i_ ? "True" : "False";
    case Kind::kInt: return absl::StrCat(i_);
    case Kind::kFloat: break;
  }
  return absl::StrCat(d_);
}

uint64_t FillPattern(DType dtype, const Scalar& value) {
  uint64_t pattern = 0;
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    T v;
    if (value.is_float()) {
      v = Convert<T>(value.to_double());
    } else if (value.is_bool()) {
      v = Convert<T>(value.to_bool());
    } else {
      v = Convert<T>(value.to_int());
    }
    std::memcpy(&pattern, &v, sizeof(T));
  });
  return pattern;
}

absl::Status CheckScalarFits(absl::string_view op, const Scalar& value, DType dtype) {
  // As c10::overflows<To, From> (1.13): bool targets and bool values never overflow; an integer
  // may wrap into uint8 from as low as -255; a float must lie within [lowest, max] of the
  // target, where inf fits floating targets and NaN fits only floating targets.
  if (value.is_bool() || dtype == DType::kBool) return absl::OkStatus();
  double lowest = 0, highest = 0;
  const char* type_name = "";
  switch (dtype) {
    case DType::kUInt8: lowest = 0; highest = 255; type_name = "uint8_t"; break;
    case DType::kInt8: lowest = -128; highest = 127; type_name = "int8_t"; break;
    case DType::kInt16: lowest = -32768; highest = 32767; type_name = "int16_t"; break;
    case DType::kInt32: lowest = -2147483648.0; highest = 2147483647.0; type_name = "int"; break;
    case DType::kInt64:
      lowest = -9223372036854775808.0;
      highest = 9223372036854775807.0;
      type_name = "int64_t";
      break;
    case DType::kFloat16: lowest = -65504.0; highest = 65504.0; type_name = "at::Half"; break;
    case DType::kBFloat16:
      lowest = -3.3895313892515355e38;
      highest = 3.3895313892515355e38;
      type_name = "at::BFloat16";
      break;
    case DType::kFloat32:
      lowest = -std::numeric_limits<float>::max();
      highest = std::numeric_limits<float>::max();
      type_name = "float";
      break;
    case DType::kFloat64:
    case DType::kBool:
      return absl::OkStatus();
  }
  bool overflows;
  if (value.is_int()) {
    const int64_t v = value.to_int();
    if (dtype == DType::kUInt8) {
      overflows = v > 255 || (v < 0 && -static_cast<uint64_t>(v) > 255);
    } else if (dtype == DType::kInt64) {
      overflows = false;
    } else {
      overflows = static_cast<double>(v) < lowest || static_cast<double>(v) > highest;
    }
  } else {
    const double v = value.to_double();
    if (IsFloating(dtype)) {
      overflows = std::isfinite(v) && (v < lowest || v > highest);
    } else {
      overflows = !std::isfinite(v) || v < lowest || v > highest;
    }
  }
  if (overflows) {
    return RuntimeError(op, absl::StrCat("value cannot be converted to type ", type_name,
                                         " without overflow"));
  }
  return absl::OkStatus();
}

}  // namespace tensord::engine
