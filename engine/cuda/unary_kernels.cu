// CUDA kernels of the unary elementwise ops (engine/kernels/unary_ops.h).
#include "engine/cuda/elementwise_kernels.h"
#include "engine/cuda/elementwise_loops.cuh"
#include "engine/kernels/unary_ops.h"

namespace tensord::engine::cuda {

cudaError_t LaunchUnary(UnaryOp op, DType dtype, const UnaryArgs& args,
                        const OffsetCalculator<2>& calc, int64_t numel, char* out, const char* in,
                        cudaStream_t stream) {
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    VisitUnary<T>(op, args, loops::LaunchMap1<T>{calc, numel, out, in, stream});
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
