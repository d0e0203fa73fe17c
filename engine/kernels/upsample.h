// How a planner describes interpolate's linear and cubic modes to a backend, and the
// per-output arithmetic the CPU loop and the CUDA kernel share. Host and device code
// (TENSORD_HD).
#ifndef TENSORD_ENGINE_KERNELS_UPSAMPLE_H_
#define TENSORD_ENGINE_KERNELS_UPSAMPLE_H_

#include <cstdint>

#include "engine/core/dtype.h"
#include "engine/core/host_device.h"
#include "engine/kernels/element_math.h"

namespace tensord::engine {

// out (n, c, *out_size), contiguous, from an input (n, c, *in) of `dtype` (a floating type) at
// `input_strides` (elements; n, c, then 3 spatial dims: a 1-d or 2-d resampling has leading
// spatial dims of size 1, and `first` names the first resampled one). Along each resampled dim
// d, output position o blends `taps` input positions index[d][t][o] with weights
// weight[d][t][o], t < taps (2 for the linear modes, 4 for bicubic; contiguous tables of
// out_size[d] entries: int64 positions inside the input, weights computed by the planner as
// torch computes them). torch's kernels nest the dims, the last innermost, and add the taps in
// order: along W, v = x[i0] * w0, then v += x[i1] * w1, …; along H the same over such values.
// With 2 taps (the linear modes) the weights are of `dtype` and every product and sum is
// rounded to `dtype`, as torch's reduced-float arithmetic rounds (RoundsSteps); with 4
// (bicubic) the weights are of the computation type (float32 for 16-bit dtypes) and only the
// output is rounded:
// torch 1.13 computes bicubic's bfloat16 weights and partial sums in bfloat16, 0.1 and more
// off the exact value for values of size 2.
struct UpsampleCall {
  static constexpr int kMaxTaps = 4;
  const char* input = nullptr;
  char* out = nullptr;
  DType dtype = DType::kFloat32;
  int64_t n = 0, c = 0;
  int64_t input_strides[5] = {0, 0, 0, 0, 0};
  int64_t out_size[3] = {1, 1, 1};
  int first = 2;  // 0 for trilinear, 1 for bilinear and bicubic, 2 for linear
  int taps = 2;  // 2 or 4
  const int64_t* index[3][kMaxTaps] = {};
  const char* weight[3][kMaxTaps] = {};
};

// Whether the call rounds every step to its dtype: the linear modes do, bicubic does not.
TENSORD_HD inline bool RoundsSteps(const UpsampleCall& c) { return c.taps == 2; }

// Tap t's weight along dim d at output position o (kRound: RoundsSteps of the call).
template <typename T, bool kRound>
TENSORD_HD inline Calc<T> TapWeightAs(const UpsampleCall& c, int d, int t, int64_t o) {
  if constexpr (kRound) {
    return static_cast<Calc<T>>(reinterpret_cast<const T*>(c.weight[d][t])[o]);
  } else {
    return reinterpret_cast<const Calc<T>*>(c.weight[d][t])[o];
  }
}

// acc + p (t > 0) or p (t == 0), rounded to T when the call rounds its steps.
template <typename T, bool kRound>
TENSORD_HD inline Calc<T> AddTapAs(int t, Calc<T> acc, Calc<T> p) {
  if constexpr (kRound) {
    return t == 0 ? R<T>(p) : R<T>(acc + R<T>(p));
  } else {
    return t == 0 ? p : acc + p;
  }
}

template <typename T>
TENSORD_HD inline Calc<T> TapWeight(const UpsampleCall& c, int d, int t, int64_t o) {
  return RoundsSteps(c) ? TapWeightAs<T, true>(c, d, t, o) : TapWeightAs<T, false>(c, d, t, o);
}
template <typename T>
TENSORD_HD inline Calc<T> AddTap(const UpsampleCall& c, int t, Calc<T> acc, Calc<T> p) {
  return RoundsSteps(c) ? AddTapAs<T, true>(t, acc, p) : AddTapAs<T, false>(t, acc, p);
}

// The taps' values v[t] blended along dim d at output position o: v0 * w0 + v1 * w1 + …,
// added in order.
template <typename T>
TENSORD_HD inline Calc<T> Blend(const UpsampleCall& c, int d, int64_t o, const Calc<T>* v) {
  Calc<T> acc = 0;
  for (int t = 0; t < c.taps; ++t) acc = AddTap<T>(c, t, acc, v[t] * TapWeight<T>(c, d, t, o));
  return acc;
}

// The value along W at output column x of the input row at `row`.
template <typename T>
TENSORD_HD inline Calc<T> AlongW(const UpsampleCall& c, const T* row, int64_t x) {
  Calc<T> v[UpsampleCall::kMaxTaps];
  for (int t = 0; t < c.taps; ++t) {
    v[t] = static_cast<Calc<T>>(row[c.index[2][t][x] * c.input_strides[4]]);
  }
  return Blend<T>(c, 2, x, v);
}

// The value along H and W at output (y, x) of the input plane at `plane`.
template <typename T>
TENSORD_HD inline Calc<T> AlongHW(const UpsampleCall& c, const T* plane, int64_t y, int64_t x) {
  if (c.first > 1) return AlongW<T>(c, plane, x);
  Calc<T> v[UpsampleCall::kMaxTaps];
  for (int t = 0; t < c.taps; ++t) {
    v[t] = AlongW<T>(c, plane + c.index[1][t][y] * c.input_strides[3], x);
  }
  return Blend<T>(c, 1, y, v);
}

// Output (z, y, x) of the plane or volume at `base`, dims nested as torch's kernels nest them.
template <typename T>
TENSORD_HD inline Calc<T> UpsampleOutput(const UpsampleCall& c, const T* base, int64_t z,
                                         int64_t y, int64_t x) {
  if (c.first > 0) return AlongHW<T>(c, base, y, x);
  Calc<T> v[UpsampleCall::kMaxTaps];
  for (int t = 0; t < c.taps; ++t) {
    v[t] = AlongHW<T>(c, base + c.index[0][t][z] * c.input_strides[2], y, x);
  }
  return Blend<T>(c, 0, z, v);
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_UPSAMPLE_H_
