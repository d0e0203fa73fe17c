// Convolution planning (engine/ops/conv_ops.cc), for the registry and for tests that check the
// composed form against the device kernel.
#ifndef TENSORD_ENGINE_OPS_CONV_OPS_H_
#define TENSORD_ENGINE_OPS_CONV_OPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ops/planned_op.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

struct ConvParams {
  int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  int64_t groups = 1;
};

// How conv2d and conv3d run: the device's own kernel where it has one (the CPU's), else the
// composition (im2col by copies of a strided view of the zero-padded input, then matmul): what
// other devices run, and what tests compare with the kernel on the CPU.
enum class ConvPath { kDeviceDefault, kComposition };

// torch.nn.functional.conv2d of a (N, C, H, W) or (C, H, W) input with (O, C / groups, kh, kw)
// weights and an optional (O) bias (undefined: none): torch's checks and errors, a contiguous
// result.
absl::StatusOr<PlannedOp> PlanConv2d(const Tensor& input, const Tensor& weight,
                                     const Tensor& bias, const ConvParams& params,
                                     ConvPath path = ConvPath::kDeviceDefault);

// torch.nn.functional.conv3d's parameters, three values each.
struct Conv3dParams {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};

// torch.nn.functional.conv3d of a (N, C, D, H, W) or (C, D, H, W) input with
// (O, C / groups, kd, kh, kw) weights and an optional (O) bias: on the CPU its convolution
// kernel; elsewhere (and as kComposition) one conv2d whose batch is every output depth of every
// sample and whose channels are the planes every kernel depth offset meets. A contiguous result.
absl::StatusOr<PlannedOp> PlanConv3d(const Tensor& input, const Tensor& weight,
                                     const Tensor& bias, const Conv3dParams& params,
                                     ConvPath path = ConvPath::kDeviceDefault);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_CONV_OPS_H_
