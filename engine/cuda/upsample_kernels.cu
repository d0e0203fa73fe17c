// CUDA resampling (linear and cubic modes): each output computed by UpsampleOutput
// (kernels/upsample.h), the arithmetic the CPU loop uses, dims nested as torch's kernels nest
// them.
#include "engine/cuda/grid.h"
#include "engine/cuda/upsample_kernels.h"
#include "engine/kernels/element_math.h"
#include "engine/kernels/spatial.h"

namespace tensord::engine::cuda {
namespace {

template <typename T>
__global__ void UpsampleKernel(UpsampleCall c, int64_t n) {
  T* out = reinterpret_cast<T*>(c.out);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const auto [plane, z, y, x] = PositionOf(c.out_size, i);
    const T* base = PlaneInput<T>(c.input, c.input_strides, c.c, plane);
    out[i] = Convert<T>(UpsampleOutput<T>(c, base, z, y, x));
  }
}

}  // namespace

cudaError_t LaunchUpsample(const UpsampleCall& c, cudaStream_t stream) {
  const int64_t n = c.n * c.c * c.out_size[0] * c.out_size[1] * c.out_size[2];
  if (n == 0) return cudaSuccess;
  DispatchDType(c.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsFloat<T>) {
      UpsampleKernel<T><<<GridFor(n, 256), 256, 0, stream>>>(c, n);
    }
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
