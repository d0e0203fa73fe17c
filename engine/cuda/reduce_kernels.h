// Launchers of the CUDA reductions, scans and softmax. The element math is the CPU's
// (engine/kernels/reduce_functors.h); these are the loops. Each enqueues on `stream` and returns.
#ifndef TENSORD_ENGINE_CUDA_REDUCE_KERNELS_H_
#define TENSORD_ENGINE_CUDA_REDUCE_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/core/dtype.h"
#include "engine/kernels/kernel_error.h"
#include "engine/kernels/reduce_ops.h"
#include "engine/tensor/strided_ref.h"

namespace tensord::engine::cuda {

// How a reduction is spread over the GPU, chosen on the host from its geometry:
//  - one thread per output, when the outputs lie side by side in memory and are many (column
//    reductions: neighbouring threads read neighbouring elements);
//  - else one block per output (its threads stride over the reduced elements, then combine in
//    shared memory), and when outputs are few, `parts` blocks per output whose partial results
//    a second kernel combines (scratch: `scratch_bytes` of device memory).
struct ReduceLaunch {
  bool per_thread = false;
  int threads = 256;
  int64_t parts = 1;
  int64_t scratch_bytes = 0;
};
ReduceLaunch ChooseReduceLaunch(const ReduceGeometry& g);

cudaError_t LaunchReduce(ReduceOp op, const ReduceGeometry& g, const StridedRef& in, char* out,
                         DType out_dtype, int64_t* indices, const ReduceArgs& args,
                         const ReduceLaunch& how, void* scratch, cudaStream_t stream);

// cumsum/cumprod/logcumsumexp along `dim`, a thread per line; softmax/log_softmax, a thread per short line
// and a block per line of 1024 elements or more.
cudaError_t LaunchScan(ScanOp op, IntList shape, int64_t dim, const StridedRef& in,
                       const StridedRef& out, cudaStream_t stream);
// cummax / cummin along `dim`, a thread per line (values and indices contiguous, one shape).
cudaError_t LaunchCumExtreme(bool max, IntList shape, int64_t dim, const StridedRef& in,
                             const StridedRef& values, const StridedRef& indices,
                             cudaStream_t stream);
// layer_norm, a block per row (kernels/reduce_ops.h).
cudaError_t LaunchLayerNorm(const LayerNormCall& call, cudaStream_t stream);
// out = x * scale + shift per channel (kernels/reduce_ops.h), a thread per element.
cudaError_t LaunchChannelAffine(const ChannelAffineCall& call, cudaStream_t stream);
// cross_entropy / nll_loss (kernels/reduce_ops.h), a warp per position. A target out of range
// is reported into `slot` (kIndexOutOfRange: a = the first bad target, b = the classes).
// Reductions need `scratch`: CrossEntropyScratchBytes of device memory.
int64_t CrossEntropyScratchBytes(const CrossEntropyCall& call);
cudaError_t LaunchCrossEntropy(const CrossEntropyCall& call, void* scratch, KernelError* slot,
                               cudaStream_t stream);
cudaError_t LaunchSoftmax(bool log, IntList shape, int64_t dim, const StridedRef& in,
                          const StridedRef& out, cudaStream_t stream);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_REDUCE_KERNELS_H_
