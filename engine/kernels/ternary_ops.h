// The ternary elementwise ops (where, lerp, addcmul/addcdiv, clamp with tensor bounds): one
// function per op, written once, run by the CPU loops (engine/cpu/binary_kernels.cc) and the
// CUDA kernels (engine/cuda/elementwise_kernels.cu). Each Visit* calls fn(function) for elements
// of type T (computed in Calc<T>); the output has type T.
#ifndef TENSORD_ENGINE_KERNELS_TERNARY_OPS_H_
#define TENSORD_ENGINE_KERNELS_TERNARY_OPS_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "engine/core/host_device.h"
#include "engine/kernels/binary_ops.h"
#include "engine/kernels/element_math.h"
#include "engine/core/scalar.h"

namespace tensord::engine {

// out = cond ? a : b; the condition is bool or (deprecated in torch) uint8: one byte, nonzero
// true. Operands: (uint8_t cond, T a, T b).
template <typename T, typename Fn>
void VisitWhere(Fn&& fn) {
  using C = Calc<T>;
  fn([] TENSORD_HD (uint8_t c, C x, C y) { return c ? x : y; });
}

// out = start + weight * (end - start), torch's two-sided formula (floating T only).
template <typename T, typename Fn>
void VisitLerp(Fn&& fn) {
  using C = Calc<T>;
  if constexpr (kIsFloat<T>) {
    fn([] TENSORD_HD (C s, C e, C w) {
      return (w < C(0) ? -w : w) < C(0.5) ? s + w * (e - s) : e - (e - s) * (C(1) - w);
    });
  }
}

// out = self + value * t1 * t2 (addcmul) or self + value * t1 / t2 (addcdiv, floating T only).
template <typename T, typename Fn>
void VisitAddc(bool divide, const Scalar& value, Fn&& fn) {
  using C = Calc<T>;
  const C val = BinaryAlpha<T>(value);
  if (divide) {
    if constexpr (kIsFloat<T>) fn([val] TENSORD_HD (C s, C x, C y) { return s + val * (x / y); });
  } else if constexpr (std::is_same_v<T, bool>) {
    fn([val] TENSORD_HD (C s, C x, C y) { return s || (val && x && y); });
  } else {
    fn([val] TENSORD_HD (C s, C x, C y) { return WrapAdd(s, WrapMul(WrapMul(val, x), y)); });
  }
}

// out = clamp(x, lo, hi) with tensor bounds (an absent one is passed as x itself).
template <typename T, typename Fn>
void VisitClampTensor(bool has_lo, bool has_hi, Fn&& fn) {
  using C = Calc<T>;
  fn([has_lo, has_hi] TENSORD_HD (C a, C l, C h) {
    if constexpr (kIsFloat<T>) {
      if (a != a) return a;
      if (has_lo) a = (l != l) ? l : (a < l ? l : a);
      if (has_hi) a = (h != h) ? h : (a > h ? h : a);
    } else {
      if (has_lo && a < l) a = l;
      if (has_hi && a > h) a = h;
    }
    return a;
  });
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_TERNARY_OPS_H_
