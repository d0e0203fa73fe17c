#include "engine/core/dtype.h"

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"

namespace tensord::engine {
namespace {

struct DTypeInfo {
  const char* name;
  const char* legacy;
  int64_t itemsize;
};

constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"bool", "Bool", 1},         {"uint8", "Byte", 1},      {"int8", "Char", 1},
    {"int16", "Short", 2},       {"int32", "Int", 4},       {"int64", "Long", 8},
    {"float16", "Half", 2},      {"bfloat16", "BFloat16", 2}, {"float32", "Float", 4},
    {"float64", "Double", 8},
};

}  // namespace

int64_t ItemSize(DType dtype) { return kInfo[static_cast<int>(dtype)].itemsize; }
const char* DTypeName(DType dtype) { return kInfo[static_cast<int>(dtype)].name; }
const char* DTypeLegacyName(DType dtype) { return kInfo[static_cast<int>(dtype)].legacy; }

bool IsFloating(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat32 ||
         dtype == DType::kFloat64;
}

bool IsIntegral(DType dtype, bool include_bool) {
  if (dtype == DType::kBool) return include_bool;
  return !IsFloating(dtype);
}

bool IsValidDType(int value) { return value >= 0 && value < kNumDTypes; }

namespace {
thread_local DType default_float_dtype = DType::kFloat32;
}  // namespace

DType DefaultFloatDType() { return default_float_dtype; }

DefaultFloatDTypeScope::DefaultFloatDTypeScope(DType dtype) : previous_(default_float_dtype) {
  default_float_dtype = IsFloating(dtype) ? dtype : DType::kFloat32;
}

DefaultFloatDTypeScope::~DefaultFloatDTypeScope() { default_float_dtype = previous_; }

absl::StatusOr<DType> ParseDType(absl::string_view name) {
  absl::ConsumePrefix(&name, "torch.");
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == kInfo[i].name) return static_cast<DType>(i);
  }
  struct Alias {
    const char* name;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"half", DType::kFloat16}, {"float", DType::kFloat32}, {"double", DType::kFloat64},
      {"short", DType::kInt16},  {"int", DType::kInt32},     {"long", DType::kInt64},
  };
  for (const Alias& alias : kAliases) {
    if (name == alias.name) return alias.dtype;
  }
  return RuntimeError("dtype", absl::StrCat("unknown dtype '", name, "'"));
}

}  // namespace tensord::engine
