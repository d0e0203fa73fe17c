// Launchers of the CUDA reductions, scans and softmax. The element math is the CPU's
// (engine/kernels/reduce_functors.h); these are the loops. Each enqueues on `stream` and returns.
#ifndef TENSORD_ENGINE_CUDA_REDUCE_KERNELS_H_
#define TENSORD_ENGINE_CUDA_REDUCE_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/core/dtype.h"
#include "engine/cuda/reduce_launch.h"
#include "engine/kernels/kernel_error.h"
#include "engine/kernels/reduce_ops.h"
#include "engine/tensor/strided_ref.h"

namespace tensord::engine::cuda {

// Blocks of the split reduction's kernel for `op` over `dtype`, kSplitReduceThreads threads
// each, that one SM runs at once (CUDA's occupancy of that kernel; 0 where it cannot say).
int ReduceBlocksPerSm(ReduceOp op, DType dtype);

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
