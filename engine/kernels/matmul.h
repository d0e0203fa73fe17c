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

// A 2-d convolution (torch.nn.functional.conv2d, cross-correlation) over contiguous operands of
// one dtype: out[b, o, y, x] = bias[o] + sum over the group's channels c and taps (i, j) of
// weight[o, c, i, j] * input[b, g * cg + c, y * stride[0] - padding[0] + i * dilation[0],
// x * stride[1] - padding[1] + j * dilation[1]] (0 outside the input), o in group g.
struct Conv2dCall {
  const char* input = nullptr;   // (batch, channels, height, width)
  const char* weight = nullptr;  // (out_channels, channels / groups, kernel[0], kernel[1])
  const char* bias = nullptr;    // (out_channels), or null
  char* out = nullptr;           // (batch, out_channels, out_size[0], out_size[1])
  DType dtype = DType::kFloat32;
  int64_t batch = 0, channels = 0, height = 0, width = 0, out_channels = 0, groups = 1;
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  int64_t out_size[2] = {0, 0};
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_MATMUL_H_
