// Element conversions with PyTorch's CPU semantics (c10::static_cast_with_inter_type), shared by
// the CPU loops and the CUDA kernels, so that both devices convert every value the same way.
#ifndef TENSORD_ENGINE_KERNELS_CONVERT_H_
#define TENSORD_ENGINE_KERNELS_CONVERT_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "engine/core/half.h"
#include "engine/core/host_device.h"

namespace tensord::engine {

template <typename T>
struct IsReducedFloat : std::false_type {};
template <>
struct IsReducedFloat<Half> : std::true_type {};
template <>
struct IsReducedFloat<BFloat16> : std::true_type {};

// float/double -> integer the way x86's truncating conversions behave, without C++'s undefined
// behaviour: NaN and out-of-range values give the "integer indefinite" (INT_MIN of the
// conversion width); 8/16-bit targets convert through int32, uint8 through int64 (as c10 does).
template <typename I, typename F>
TENSORD_HD inline I FloatToInt(F v) {
  if constexpr (std::is_same_v<I, uint8_t> || std::is_same_v<I, int64_t>) {
    if (!(v >= -9.2233720368547758e18 && v < 9.2233720368547758e18)) {
      return static_cast<I>(INT64_MIN);
    }
    return static_cast<I>(static_cast<int64_t>(v));
  } else {
    if (!(v >= -2147483648.0 && v < 2147483648.0)) {
      return static_cast<I>(INT32_MIN);
    }
    return static_cast<I>(static_cast<int32_t>(v));
  }
}

template <typename D, typename S>
TENSORD_HD inline D Convert(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (IsReducedFloat<S>::value) {
    return Convert<D>(static_cast<float>(v));
  } else if constexpr (IsReducedFloat<D>::value) {
    return D(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    return FloatToInt<D>(v);
  } else {
    return static_cast<D>(v);
  }
}

// Reads an element of a tensor's storage. A bool storage may hold any byte (a uint8 tensor
// viewed as bool, bytes a client uploaded): reading such a byte as a C++ bool is undefined (a
// comparison sort of them left its buffer), so a bool is read as its byte, and any byte but 0
// is true, as torch reads it.
template <typename T>
TENSORD_HD inline T LoadElement(const T* p) {
  if constexpr (std::is_same_v<T, bool>) {
    return *reinterpret_cast<const uint8_t*>(p) != 0;
  } else {
    return *p;
  }
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_CONVERT_H_
