// How a planner describes linear resampling (interpolate's linear, bilinear and trilinear
// modes) to a backend, and the per-output arithmetic the CPU loop and the CUDA kernel share.
// Host and device code (TENSORD_HD).
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
// d, output position o blends input positions lo[d][o] and hi[d][o] with weights w0[d][o] and
// w1[d][o] (contiguous tables of out_size[d] entries: int64 positions, weights of `dtype`,
// computed by the planner as torch computes them). torch's kernels nest the dims, the last
// innermost: a value along W is t = x[lo] * w0 + x[hi] * w1, and along H the blend of two such
// values, each product and sum rounded to `dtype` (as torch's reduced-float arithmetic rounds).
struct UpsampleLinearCall {
  const char* input = nullptr;
  char* out = nullptr;
  DType dtype = DType::kFloat32;
  int64_t n = 0, c = 0;
  int64_t input_strides[5] = {0, 0, 0, 0, 0};
  int64_t out_size[3] = {1, 1, 1};
  int first = 2;  // 0 for trilinear, 1 for bilinear, 2 for linear
  const int64_t* lo[3] = {nullptr, nullptr, nullptr};
  const int64_t* hi[3] = {nullptr, nullptr, nullptr};
  const char* w0[3] = {nullptr, nullptr, nullptr};
  const char* w1[3] = {nullptr, nullptr, nullptr};
};

// The blend a * w0 + b * w1 along dim d at output position o, rounded as torch's T arithmetic.
template <typename T>
TENSORD_HD inline Calc<T> LinearBlend(const UpsampleLinearCall& c, int d, int64_t o, Calc<T> a,
                                      Calc<T> b) {
  const Calc<T> w0 = static_cast<Calc<T>>(reinterpret_cast<const T*>(c.w0[d])[o]);
  const Calc<T> w1 = static_cast<Calc<T>>(reinterpret_cast<const T*>(c.w1[d])[o]);
  return R<T>(R<T>(a * w0) + R<T>(b * w1));
}

// The value along W at output column x of the input row at `row`.
template <typename T>
TENSORD_HD inline Calc<T> LinearAlongW(const UpsampleLinearCall& c, const T* row, int64_t x) {
  const int64_t sw = c.input_strides[4];
  return LinearBlend<T>(c, 2, x, static_cast<Calc<T>>(row[c.lo[2][x] * sw]),
                        static_cast<Calc<T>>(row[c.hi[2][x] * sw]));
}

// Output (z, y, x) of the plane or volume at `base`, dims nested as torch's kernels nest them.
template <typename T>
TENSORD_HD inline Calc<T> LinearOutput(const UpsampleLinearCall& c, const T* base, int64_t z,
                                       int64_t y, int64_t x) {
  const int64_t sd = c.input_strides[2], sh = c.input_strides[3];
  const auto along_h = [&](const T* plane) -> Calc<T> {
    if (c.first > 1) return LinearAlongW<T>(c, plane, x);
    return LinearBlend<T>(c, 1, y, LinearAlongW<T>(c, plane + c.lo[1][y] * sh, x),
                          LinearAlongW<T>(c, plane + c.hi[1][y] * sh, x));
  };
  if (c.first > 0) return along_h(base);
  return LinearBlend<T>(c, 0, z, along_h(base + c.lo[0][z] * sd), along_h(base + c.hi[0][z] * sd));
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_UPSAMPLE_H_
