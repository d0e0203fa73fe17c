// Launcher of the CUDA pooling kernel (kernels/pool.h); the window arithmetic is the CPU's.
#ifndef TENSORD_ENGINE_CUDA_POOL_KERNELS_H_
#define TENSORD_ENGINE_CUDA_POOL_KERNELS_H_

#include <cuda_runtime_api.h>

#include "engine/kernels/pool.h"

namespace tensord::engine::cuda {

// max_pool, adaptive_max_pool and avg_pool, a thread per output position (grid-stride).
// Enqueues on `stream`.
cudaError_t LaunchPool(const PoolCall& call, cudaStream_t stream);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_POOL_KERNELS_H_
