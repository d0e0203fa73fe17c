// CUDA kernels of the binary elementwise ops (engine/kernels/binary_ops.h).
#include "engine/cuda/elementwise_kernels.h"
#include "engine/cuda/grid.h"
#include "engine/cuda/elementwise_loops.cuh"
#include "engine/kernels/binary_ops.h"
#include "engine/kernels/value_check.h"

namespace tensord::engine::cuda {
namespace {

template <ValueCheck kCheck, typename T>
__global__ void CheckValuesKernel(OffsetCalculator<1> calc, const char* values, int64_t n,
                                  KernelError* slot) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step) {
    int64_t off[1];
    calc.Offsets(i, off);
    if (ValueFails<kCheck>(*reinterpret_cast<const T*>(values + off[0]))) {
      ReportKernelError(slot, KernelError::kBadValue, i, 0);
      return;
    }
  }
}

}  // namespace

cudaError_t LaunchCheckValues(ValueCheck check, DType dtype, const OffsetCalculator<1>& calc,
                              int64_t numel, const char* values, KernelError* slot,
                              cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  const int grid = GridFor(numel, 256);
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    if (check == ValueCheck::kNonzero || check == ValueCheck::kEnoughSource ||
        check == ValueCheck::kPivotRange) {
      if constexpr (ValueCheckApplies<T>(ValueCheck::kNonzero)) {
        if (check == ValueCheck::kNonzero) {
          CheckValuesKernel<ValueCheck::kNonzero, T>
              <<<grid, 256, 0, stream>>>(calc, values, numel, slot);
        } else {  // kPivotRange's predicate is kEnoughSource's (a negative value fails)
          CheckValuesKernel<ValueCheck::kEnoughSource, T>
              <<<grid, 256, 0, stream>>>(calc, values, numel, slot);
        }
      }
    } else if constexpr (ValueCheckApplies<T>(ValueCheck::kUnitInterval)) {
      if (check == ValueCheck::kFinite) {
        CheckValuesKernel<ValueCheck::kFinite, T>
            <<<grid, 256, 0, stream>>>(calc, values, numel, slot);
      } else {
        CheckValuesKernel<ValueCheck::kUnitInterval, T>
            <<<grid, 256, 0, stream>>>(calc, values, numel, slot);
      }
    }
  });
  return cudaGetLastError();
}

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
