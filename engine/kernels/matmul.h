// How a planner describes a matrix product, or a convolution, to a backend.
#ifndef TENSORD_ENGINE_KERNELS_MATMUL_H_
#define TENSORD_ENGINE_KERNELS_MATMUL_H_

#include <cstdint>

#include "engine/tensor/strided_ref.h"

namespace tensord::engine {

// For every batch index b: out[b] = alpha * a[b] @ b[b] + beta * out[b], with a[b] [n x k],
// b[b] [k x m] and out contiguous [batch..., n, m]. `a` and `b` are strided views over
// [batch..., n, k] and [batch..., k, m] (batch dims already broadcast: stride 0 where
// expanded), passed as they are (a transposed operand is not copied). beta == 0 ignores what
// out holds. Operands and out share one dtype.
struct MatmulCall {
  IntList batch;
  int64_t n = 0, k = 0, m = 0;
  StridedRef a, b;
  char* out = nullptr;
  double alpha = 1, beta = 0;
};

// A convolution of up to three spatial dims (torch.nn.functional.conv1d/2d/3d,
// cross-correlation) over contiguous operands of one dtype: out[b, o, z, y, x] = bias[o] + sum
// over the group's channels c and taps (a, i, j) of weight[o, c, a, i, j] * input[b, g * cg + c,
// z * stride[0] - padding[0] + a * dilation[0], y * stride[1] - padding[1] + i * dilation[1],
// x * stride[2] - padding[2] + j * dilation[2]] (0 outside the input), o in group g. A 2-d
// convolution is a 3-d one of depth 1 (size, kernel, stride, dilation and out_size 1 in dim 0,
// padding 0).
struct ConvCall {
  const char* input = nullptr;   // (batch, channels, size[0], size[1], size[2])
  const char* weight = nullptr;  // (out_channels, channels / groups, kernel[0..2])
  const char* bias = nullptr;    // (out_channels), or null
  char* out = nullptr;           // (batch, out_channels, out_size[0..2])
  DType dtype = DType::kFloat32;
  int64_t batch = 0, channels = 0, out_channels = 0, groups = 1;
  int64_t size[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1};
  int64_t padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1}, out_size[3] = {1, 1, 1};
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_MATMUL_H_
