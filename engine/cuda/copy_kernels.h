// Launchers of the CUDA data-movement kernels (copy with dtype conversion, fill, arange, sleep). Host
// code calls them with device pointers; each enqueues on `stream` and returns at once.
#ifndef TENSORD_ENGINE_CUDA_COPY_KERNELS_H_
#define TENSORD_ENGINE_CUDA_COPY_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/cuda/offset_calculator.h"
#include "engine/core/dtype.h"

namespace tensord::engine::cuda {

// Operand 0 is the destination, operand 1 the source; `numel` elements.
cudaError_t LaunchCopy(const OffsetCalculator<2>& calc, int64_t numel, char* dst, DType dst_dtype,
                       const char* src, DType src_dtype, cudaStream_t stream);
// Writes the `itemsize`-byte `pattern` (a value already converted to the dtype) to every element.
cudaError_t LaunchFill(const OffsetCalculator<1>& calc, int64_t numel, char* dst,
                       int64_t itemsize, uint64_t pattern, cudaStream_t stream);
// out[i] = start + i * step, in double for floating dtypes and wrapping int64 for integral ones.
cudaError_t LaunchArange(char* out, DType dtype, int64_t n, bool floating, double start_d,
                         double step_d, int64_t start_i, int64_t step_i, cudaStream_t stream);

// Occupies `stream` for `ms` milliseconds (one thread sleeping on the GPU's global timer).
cudaError_t LaunchSleep(int64_t ms, cudaStream_t stream);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_COPY_KERNELS_H_
