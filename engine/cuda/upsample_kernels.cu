// CUDA resampling (linear and cubic modes): each output computed by UpsampleOutput
// (kernels/upsample.h), the arithmetic the CPU loop uses, dims nested as torch's kernels nest
// them.
#include "engine/cuda/grid.h"
#include "engine/cuda/upsample_kernels.h"
#include "engine/kernels/element_math.h"

namespace tensord::engine::cuda {
namespace {

template <typename T>
__global__ void UpsampleKernel(UpsampleCall c, int64_t n) {
  const int64_t od = c.out_size[0], oh = c.out_size[1], ow = c.out_size[2];
  T* out = reinterpret_cast<T*>(c.out);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t x = i % ow, y = i / ow % oh, z = i / (ow * oh) % od;
    const int64_t plane = i / (ow * oh * od);
    const T* base = reinterpret_cast<const T*>(c.input) + plane / c.c * c.input_strides[0] +
                    plane % c.c * c.input_strides[1];
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
