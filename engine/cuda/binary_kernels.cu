// CUDA kernels of the binary elementwise ops (engine/kernels/binary_ops.h).
#include "engine/cuda/elementwise_kernels.h"
#include "engine/cuda/elementwise_loops.cuh"
#include "engine/kernels/binary_ops.h"

namespace tensord::engine::cuda {

cudaError_t LaunchBinary(BinaryOp op, DType dtype, const Scalar& alpha,
                         const OffsetCalculator<3>& calc, int64_t numel, char* out,
                         const char* a, const char* b, cudaStream_t stream) {
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    VisitBinary<T>(op, BinaryAlpha<T>(alpha), BinaryAlphaIsOne(op, alpha),
                   [&](auto f, auto out_type) {
                     loops::GpuMap2<decltype(out_type), T, T>(calc, numel, out, a, b, f, stream);
                   });
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
