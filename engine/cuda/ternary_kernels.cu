// CUDA kernels of the ternary elementwise ops (engine/kernels/ternary_ops.h).
#include "engine/cuda/elementwise_kernels.h"
#include "engine/cuda/elementwise_loops.cuh"
#include "engine/kernels/ternary_ops.h"

namespace tensord::engine::cuda {

cudaError_t LaunchTernary(TernaryOp op, DType dtype, const Scalar& value, bool has_lo,
                          bool has_hi, const OffsetCalculator<4>& calc, int64_t numel, char* out,
                          const char* a, const char* b, const char* c, cudaStream_t stream) {
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    const loops::LaunchMap3<T, T, T, T> same{calc, numel, out, a, b, c, stream};
    switch (op) {
      case TernaryOp::kWhere:
        VisitWhere<T>(loops::LaunchMap3<T, uint8_t, T, T>{calc, numel, out, a, b, c, stream});
        break;
      case TernaryOp::kLerp: VisitLerp<T>(same); break;
      case TernaryOp::kAddcmul: VisitAddc<T>(false, value, same); break;
      case TernaryOp::kAddcdiv: VisitAddc<T>(true, value, same); break;
      case TernaryOp::kClamp: VisitClampTensor<T>(has_lo, has_hi, same); break;
    }
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
