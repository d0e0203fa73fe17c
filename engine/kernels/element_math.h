// The per-element arithmetic that the CPU loops and the CUDA kernels share: the type an element
// is computed in, torch's rounding of reduced-float intermediates, wrapping integer arithmetic
// and torch's integer/float division rules. Host and device code (TENSORD_HD); no Abseil.
#ifndef TENSORD_ENGINE_KERNELS_ELEMENT_MATH_H_
#define TENSORD_ENGINE_KERNELS_ELEMENT_MATH_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "engine/core/half.h"
#include "engine/core/host_device.h"
#include "engine/kernels/convert.h"

namespace tensord::engine {

// The type a kernel computes in for elements of type T (float for float16/bfloat16).
template <typename T>
using Calc = std::conditional_t<IsReducedFloat<T>::value, float, T>;

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<Calc<T>>;
template <typename T>
constexpr bool kIsInt = !kIsFloat<T> && !std::is_same_v<T, bool>;

// *p in its computation type, a bool read as its byte (LoadElement): how kernels read elements.
template <typename T>
TENSORD_HD inline Calc<T> LoadCalc(const T* p) {
  return static_cast<Calc<T>>(LoadElement(p));
}

// Rounds a float intermediate to T, as torch's float16/bfloat16 arithmetic does after every
// operation (identity for float and double).
template <typename T>
TENSORD_HD inline Calc<T> R(Calc<T> v) {
  if constexpr (IsReducedFloat<T>::value) return static_cast<float>(T(v));
  else return v;
}

// Integer + - * that wrap (two's complement) instead of overflowing: device code has no
// -fwrapv, so the shared functions wrap explicitly. Other types: the plain operation.
template <typename C>
TENSORD_HD inline C WrapAdd(C a, C b) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename C>
TENSORD_HD inline C WrapSub(C a, C b) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <typename C>
TENSORD_HD inline C WrapMul(C a, C b) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    using U = std::make_unsigned_t<C>;
    // Narrow types promote to int: multiply in at least 32 unsigned bits.
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<C>(static_cast<W>(static_cast<W>(static_cast<U>(a)) *
                                         static_cast<W>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

template <typename T, typename C = Calc<T>>
TENSORD_HD inline C DivFloorFloat(C a, C b) {
  if (b == 0) return a / b;
  const C mod = R<T>(std::fmod(a, b));
  C div = R<T>(R<T>(a - mod) / b);
  if (mod != 0 && (b < 0) != (mod < 0)) div = R<T>(div - C(1));
  if (div == 0) return std::copysign(C(0), R<T>(a / b));
  C floordiv = std::floor(div);
  if (R<T>(div - floordiv) > C(0.5)) floordiv = R<T>(floordiv + C(1));
  return floordiv;
}

// Integer division and remainder without the trap on MIN / -1 (signed types only: for uint8,
// C(-1) is 255, an ordinary divisor). The divisor is never 0: the op checks first.
template <typename C>
TENSORD_HD inline C DivTruncInt(C a, C b) {
  if constexpr (std::is_signed_v<C>) {
    if (b == C(-1)) return WrapSub(C(0), a);
  }
  return static_cast<C>(a / b);
}
template <typename C>
TENSORD_HD inline C ModInt(C a, C b) {
  if constexpr (std::is_signed_v<C>) {
    if (b == C(-1)) return 0;
  }
  return static_cast<C>(a % b);
}
template <typename C>
TENSORD_HD inline C DivFloorInt(C a, C b) {
  const C q = DivTruncInt(a, b);
  if ((a < 0) != (b < 0) && ModInt(a, b) != 0) return static_cast<C>(q - 1);
  return q;
}

template <typename C>
TENSORD_HD inline C PowIntInt(C base, C exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == C(-1)) return (exp % 2) ? C(-1) : C(1);
    return 0;
  }
  C result = 1;
  while (exp) {
    if (exp & 1) result = WrapMul(result, base);
    exp = static_cast<C>(exp / 2);
    base = WrapMul(base, base);
  }
  return result;
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_ELEMENT_MATH_H_
