// CPU matrix products: float32/float64 through BLAS (OpenBLAS), transposed operands passed as
// such; other dtypes through a loop.
#ifndef TENSORD_ENGINE_CPU_LINALG_KERNELS_H_
#define TENSORD_ENGINE_CPU_LINALG_KERNELS_H_

#include "engine/kernels/matmul.h"

namespace tensord::engine::cpu {

// Runs `call` (kernels/matmul.h). Long products run in row panels, yielding the thread to
// other streams' work between panels (Executor::YieldToWaiting).
void Matmul(const MatmulCall& call);

// Runs `call` (kernels/matmul.h) as GEMMs over tiles of each image's im2col matrix (a few
// hundred KiB each, built by the thread that multiplies it, so that it stays in cache), the
// (image, group, tile)s shared by the pool's threads; a 1x1 convolution without stride or
// padding multiplies the image itself.
void Conv(const ConvCall& call);

// Makes OpenBLAS run every call on the calling thread: the CPU backend parallelizes products
// itself (Matmul's panels), and OpenBLAS's own threads would compete with the pool's.
void UseOneBlasThread();

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_LINALG_KERNELS_H_
