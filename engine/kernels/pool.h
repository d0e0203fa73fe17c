// How a planner describes a pool to a backend's pooling kernel, and the window arithmetic the
// CPU loop and the CUDA kernel share. Host and device code (TENSORD_HD).
#ifndef TENSORD_ENGINE_KERNELS_POOL_H_
#define TENSORD_ENGINE_KERNELS_POOL_H_

#include <cstdint>
#include <limits>
#include <type_traits>

#include "engine/core/dtype.h"
#include "engine/core/host_device.h"
#include "engine/kernels/element_math.h"

namespace tensord::engine {

enum class PoolKind : int8_t { kMax, kAvg };

// max_pool{2,3}d, adaptive_max_pool{2,3}d and avg_pool{2,3}d over an input (n, c, *in) of
// `dtype` at `input_strides` (elements, any layout), 3 spatial dims (a 2-d pool is a 3-d one of
// depth 1), torch's kernels' way. Along each dim an output position o's window starts at
// o * stride - padding and ends before min(start + (kernel - 1) * dilation + 1, in), its start
// moved by `dilation` until it is inside the input; `adaptive` windows are the bins
// [floor(o * in / out), ceil((o + 1) * in / out)) (the planner has checked that (out + 1) * in
// fits int64).
// - kMax (a floating dtype): a NaN replaces the max (so the last NaN wins), a larger value too
//   (the first of equal maxima wins); `indices`, when not null, gets each max's flat position
//   in its input plane or volume ((d * H + h) * W + w), that of the window's first position
//   inside the input when no element beats -inf.
// - kAvg (a floating dtype or int64; dilation 1): the window's elements added in row-major order
//   in the computation type (an integer sum wraps), divided by `divisor` when it is not 0, else
//   by the window's size capped at the padded input (count_include_pad) or by the number of its
//   elements inside the input; a window with none gives 0. An adaptive bin's sum is divided by
//   its length along each dim in turn (depth, height, width), as torch's adaptive kernels do.
// `out` and `indices` are contiguous (n, c, *out).
struct PoolCall {
  PoolKind kind = PoolKind::kMax;
  const char* input = nullptr;
  char* out = nullptr;
  int64_t* indices = nullptr;
  DType dtype = DType::kFloat32;
  int64_t n = 0, c = 0;
  int64_t input_strides[5] = {0, 0, 0, 0, 0};  // n, c, then the 3 spatial dims
  int64_t in[3] = {1, 1, 1}, out_size[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0};
  int64_t dilation[3] = {1, 1, 1};
  bool adaptive = false;          // bins instead of kernel, stride, padding and dilation
  bool count_include_pad = true;  // kAvg
  int64_t divisor = 0;            // kAvg: divisor_override, 0 when none
};

// Output position o's window along spatial dim `dim` (0 depth, 1 height, 2 width): the input
// positions [first, end) by `step`.
struct PoolSpan {
  int64_t first, end, step;
};

TENSORD_HD inline PoolSpan WindowSpan(const PoolCall& c, int dim, int64_t o) {
  if (c.adaptive) {
    const int64_t in = c.in[dim], out = c.out_size[dim];
    return {o * in / out, ((o + 1) * in + out - 1) / out, 1};
  }
  int64_t first = o * c.stride[dim] - c.padding[dim];
  int64_t end = first + (c.kernel[dim] - 1) * c.dilation[dim] + 1;
  if (end > c.in[dim]) end = c.in[dim];
  while (first < 0) first += c.dilation[dim];
  return {first, end, c.dilation[dim]};
}

// kAvg's divisor for output position (z, y, x).
TENSORD_HD inline int64_t AvgPoolDivisor(const PoolCall& c, int64_t z, int64_t y, int64_t x) {
  if (c.divisor != 0) return c.divisor;
  const int64_t o[3] = {z, y, x};
  int64_t size = 1, inside = 1;
  for (int d = 0; d < 3; ++d) {
    const int64_t start = o[d] * c.stride[d] - c.padding[d];
    int64_t end = start + c.kernel[d];
    if (end > c.in[d] + c.padding[d]) end = c.in[d] + c.padding[d];
    size *= end - start;
    inside *= (end < c.in[d] ? end : c.in[d]) - (start > 0 ? start : 0);
  }
  return c.count_include_pad ? size : inside;
}

// kMax over one window of the plane or volume at `base` (elements at the call's spatial
// strides) into *best, and its flat position into *at.
template <typename T>
TENSORD_HD inline void MaxPoolWindow(const PoolCall& c, const T* base, const PoolSpan& zs,
                                     const PoolSpan& ys, const PoolSpan& xs, Calc<T>* best,
                                     int64_t* at) {
  using C = Calc<T>;
  const int64_t ih = c.in[1], iw = c.in[2];
  C b = -std::numeric_limits<C>::infinity();
  int64_t where = (zs.first * ih + ys.first) * iw + xs.first;
  for (int64_t k = zs.first; k < zs.end; k += zs.step) {
    for (int64_t i = ys.first; i < ys.end; i += ys.step) {
      const T* row = base + k * c.input_strides[2] + i * c.input_strides[3];
      for (int64_t j = xs.first; j < xs.end; j += xs.step) {
        const C v = static_cast<C>(row[j * c.input_strides[4]]);
        if (v > b || v != v) {
          b = v;
          where = (k * ih + i) * iw + j;
        }
      }
    }
  }
  *best = b;
  *at = where;
}

// kAvg over one window (step 1), divided by `divisor` (not read for adaptive bins).
template <typename T>
TENSORD_HD inline Calc<T> AvgPoolWindow(const PoolCall& c, const T* base, const PoolSpan& zs,
                                        const PoolSpan& ys, const PoolSpan& xs,
                                        int64_t divisor) {
  using C = Calc<T>;
  if (zs.first >= zs.end || ys.first >= ys.end || xs.first >= xs.end) return C(0);
  C sum = 0;
  for (int64_t k = zs.first; k < zs.end; ++k) {
    for (int64_t i = ys.first; i < ys.end; ++i) {
      const T* row = base + k * c.input_strides[2] + i * c.input_strides[3];
      for (int64_t j = xs.first; j < xs.end; ++j) {
        sum = WrapAdd<C>(sum, static_cast<C>(row[j * c.input_strides[4]]));
      }
    }
  }
  if constexpr (std::is_integral_v<C>) {
    return DivTruncInt<C>(sum, static_cast<C>(divisor));
  } else {
    if (c.adaptive) {
      return sum / static_cast<C>(zs.end - zs.first) / static_cast<C>(ys.end - ys.first) /
             static_cast<C>(xs.end - xs.first);
    }
    return sum / static_cast<C>(divisor);
  }
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_POOL_H_
