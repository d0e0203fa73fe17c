#include "engine/ops/type_promotion.h"

#include <optional>

namespace tensord::engine {
namespace {

bool IsUnsigned(DType d) { return d == DType::kUInt8; }

// Integer dtypes in widening order.
int IntRank(DType d) {
  switch (d) {
    case DType::kUInt8:
    case DType::kInt8: return 1;
    case DType::kInt16: return 2;
    case DType::kInt32: return 3;
    default: return 4;
  }
}

std::optional<DType> Promote(std::optional<DType> a, std::optional<DType> b) {
  if (!a) return b;
  if (!b) return a;
  return PromoteTypes(*a, *b);
}

std::optional<DType> Combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (higher && IsFloating(*higher)) return higher;
  if ((higher && *higher == DType::kBool) || (lower && IsFloating(*lower))) {
    return Promote(higher, lower);
  }
  return higher ? higher : lower;
}

}  // namespace

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  const bool fa = IsFloating(a), fb = IsFloating(b);
  if (fa && fb) {
    if (a == DType::kFloat64 || b == DType::kFloat64) return DType::kFloat64;
    return DType::kFloat32;  // f16/bf16 mixed, or either with f32
  }
  if (fa) return a;
  if (fb) return b;
  // Both integral.
  if (IsUnsigned(a) != IsUnsigned(b)) {
    const DType s = IsUnsigned(a) ? b : a;  // the signed one
    return s == DType::kInt8 ? DType::kInt16 : s;
  }
  return IntRank(a) >= IntRank(b) ? a : b;
}

DType ResultType(absl::Span<const Tensor> operands) {
  std::optional<DType> dim_result, zero_result, wrapped_result;
  for (const Tensor& t : operands) {
    if (!t.defined()) continue;
    DType current = t.dtype();
    if (t.is_wrapped_number()) {
      if (IsFloating(current)) current = DefaultFloatDType();
      wrapped_result = Promote(wrapped_result, current);
    } else if (t.dim() == 0) {
      zero_result = Promote(zero_result, current);
    } else {
      dim_result = Promote(dim_result, current);
    }
  }
  return Combine(dim_result, Combine(zero_result, wrapped_result)).value_or(DefaultFloatDType());
}

DType WrappedNumberDType(const Scalar& value) {
  if (value.is_bool()) return DType::kBool;
  if (value.is_int()) return DType::kInt64;
  return DType::kFloat64;
}

}  // namespace tensord::engine
