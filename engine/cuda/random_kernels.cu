// CUDA kernel of the random draws: every element from the shared DrawElement
// (engine/kernels/random.h), so a seed gives the CPU's numbers on the GPU.
#include "engine/cuda/elementwise_kernels.h"
#include "engine/cuda/grid.h"
#include "engine/cuda/elementwise_loops.cuh"
#include "engine/kernels/random.h"

namespace tensord::engine::cuda {
namespace {

template <typename T>
__global__ void DrawKernel(DistArgs d, T* out, int64_t n, const double* probs,
                           KernelError* slot) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step) {
    double p = 0;
    if (probs != nullptr) {
      p = probs[i];
      if (!DrawParameterValid(d.dist, p)) {
        ReportKernelError(slot, KernelError::kBadProbability, i, 0);
        return;
      }
    }
    out[i] = DrawElement<T>(d, static_cast<uint64_t>(i), p);
  }
}

}  // namespace

cudaError_t LaunchRandom(const DistArgs& d, DType dtype, char* out, int64_t n,
                         const double* probs, KernelError* slot, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int grid = GridFor(n, loops::kThreads);
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    DrawKernel<T><<<grid, loops::kThreads, 0, stream>>>(d, reinterpret_cast<T*>(out), n, probs,
                                                        slot);
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
