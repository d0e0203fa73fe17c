// The (n, c, depth, height, width) layout the pooling and resampling kernels share: an output
// position's spatial coordinates, and the input plane (or volume) of its (n, c). Host and
// device code (TENSORD_HD).
#ifndef TENSORD_ENGINE_KERNELS_SPATIAL_H_
#define TENSORD_ENGINE_KERNELS_SPATIAL_H_

#include <cstdint>

#include "engine/core/host_device.h"

namespace tensord::engine {

// Contiguous output position i of (planes, out_size[0], out_size[1], out_size[2]).
struct SpatialPosition {
  int64_t plane, z, y, x;
};

TENSORD_HD inline SpatialPosition PositionOf(const int64_t* out_size, int64_t i) {
  const int64_t ow = out_size[2], oh = out_size[1], od = out_size[0];
  return {i / (ow * oh * od), i / (ow * oh) % od, i / ow % oh, i % ow};
}

// The first input element of plane p = b * channels + ch, `strides` (elements) those of
// (n, c, …): a kernel call's input and input_strides.
template <typename T>
TENSORD_HD inline const T* PlaneInput(const char* input, const int64_t* strides, int64_t channels,
                                      int64_t plane) {
  return reinterpret_cast<const T*>(input) + plane / channels * strides[0] +
         plane % channels * strides[1];
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_SPATIAL_H_
