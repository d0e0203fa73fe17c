// Launcher of the CUDA resampling (kernels/upsample.h); the arithmetic is the CPU's.
#ifndef TENSORD_ENGINE_CUDA_UPSAMPLE_KERNELS_H_
#define TENSORD_ENGINE_CUDA_UPSAMPLE_KERNELS_H_

#include <cuda_runtime_api.h>

#include "engine/kernels/upsample.h"

namespace tensord::engine::cuda {

// linear / bilinear / trilinear / bicubic, a thread per output (grid-stride). Enqueues on `stream`; the
// call's tables are device memory.
cudaError_t LaunchUpsample(const UpsampleCall& call, cudaStream_t stream);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_UPSAMPLE_KERNELS_H_
