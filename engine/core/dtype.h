// Element types, with PyTorch's names.
#ifndef TENSORD_ENGINE_CORE_DTYPE_H_
#define TENSORD_ENGINE_CORE_DTYPE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/core/half.h"

namespace tensord::engine {

// NB: the numeric values are part of the wire protocol (proto DType mirrors them).
enum class DType : int8_t {
  kBool = 0,
  kUInt8 = 1,
  kInt8 = 2,
  kInt16 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kFloat16 = 6,
  kBFloat16 = 7,
  kFloat32 = 8,
  kFloat64 = 9,
};
inline constexpr int kNumDTypes = 10;

// Size of one element, in bytes.
int64_t ItemSize(DType dtype);
bool IsFloating(DType dtype);
bool IsIntegral(DType dtype, bool include_bool);
// Whether a copy from `src` to `dst` may move bytes as they are: the same dtype, but not bool,
// whose copy writes each byte as 0 or 1 (a bool storage may hold other bytes, read as true).
inline bool CopyMovesBytes(DType dst, DType src) { return dst == src && dst != DType::kBool; }
// "float32", "int64", … (torch.float32 without the module prefix).
const char* DTypeName(DType dtype);
// The legacy tensor type name used in PyTorch messages: "Float", "Long", "Bool", …
const char* DTypeLegacyName(DType dtype);
// Parses a dtype name; accepts PyTorch's aliases ("float", "double", "half", "long", "int",
// "short", "torch.float32", …).
absl::StatusOr<DType> ParseDType(absl::string_view name);
bool IsValidDType(int value);

// torch.get_default_dtype() of the op being planned: the dtype of Python floats, of floating
// factories given no dtype, and of integer inputs that an op computes in floating point (sqrt,
// true division). float32 unless a DefaultFloatDTypeScope on this thread says otherwise; each
// op call carries its client's default (OpCall.default_dtype) and the server plans it in scope.
DType DefaultFloatDType();

// Sets DefaultFloatDType() on this thread for the scope's life (planning is synchronous on the
// thread that plans, compositions and data-dependent steps included). `dtype` must be floating.
class DefaultFloatDTypeScope {
 public:
  explicit DefaultFloatDTypeScope(DType dtype);
  ~DefaultFloatDTypeScope();
  DefaultFloatDTypeScope(const DefaultFloatDTypeScope&) = delete;
  DefaultFloatDTypeScope& operator=(const DefaultFloatDTypeScope&) = delete;

 private:
  DType previous_;
};

// C++ type for each dtype.
template <DType D> struct DTypeTraits;
template <> struct DTypeTraits<DType::kBool> { using type = bool; };
template <> struct DTypeTraits<DType::kUInt8> { using type = uint8_t; };
template <> struct DTypeTraits<DType::kInt8> { using type = int8_t; };
template <> struct DTypeTraits<DType::kInt16> { using type = int16_t; };
template <> struct DTypeTraits<DType::kInt32> { using type = int32_t; };
template <> struct DTypeTraits<DType::kInt64> { using type = int64_t; };
template <> struct DTypeTraits<DType::kFloat16> { using type = Half; };
template <> struct DTypeTraits<DType::kBFloat16> { using type = BFloat16; };
template <> struct DTypeTraits<DType::kFloat32> { using type = float; };
template <> struct DTypeTraits<DType::kFloat64> { using type = double; };

// Calls fn(T{}) with T the C++ type of `dtype`.
template <typename Fn>
decltype(auto) DispatchDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kBool: return fn(bool{});
    case DType::kUInt8: return fn(uint8_t{});
    case DType::kInt8: return fn(int8_t{});
    case DType::kInt16: return fn(int16_t{});
    case DType::kInt32: return fn(int32_t{});
    case DType::kInt64: return fn(int64_t{});
    case DType::kFloat16: return fn(Half{});
    case DType::kBFloat16: return fn(BFloat16{});
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: break;
  }
  return fn(double{});
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_CORE_DTYPE_H_
