// Matrix products on the GPU through cuBLAS, loaded when the first product runs (dlopen of the
// toolkit's libcublas), so that tensord starts, and runs everything else, where it is missing.
#ifndef TENSORD_ENGINE_CUDA_CUBLAS_H_
#define TENSORD_ENGINE_CUDA_CUBLAS_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "engine/core/device.h"
#include "engine/kernels/matmul.h"

namespace tensord::engine::cuda {

// Launches `call` on `stream` of `device` (the calling thread's current device), as cuBLAS
// calls planned by gemm_plan.h. Both operands must already have a usable layout
// (OperandLayout(...).usable). float16, bfloat16 (accumulated in float32), float32 (float32
// arithmetic: no TF32) and float64.
// `handle`: the cuBLAS handle of `stream` (created here when null; one per stream, so that
// concurrent products never share a handle's workspace).
absl::Status CublasMatmul(Device device, cudaStream_t stream, void*& handle,
                          const MatmulCall& call);

// Destroys a handle CublasMatmul created (null: nothing).
void DestroyCublasHandle(void* handle);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_CUBLAS_H_
