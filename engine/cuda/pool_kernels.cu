// CUDA pooling: each output's window read in place by MaxPoolWindow or AvgPoolWindow
// (kernels/pool.h), the functions the CPU loop uses for its edge outputs, so both devices
// compute the same maxima, indices and sums.
#include <type_traits>

#include "engine/cuda/grid.h"
#include "engine/cuda/pool_kernels.h"
#include "engine/kernels/element_math.h"
#include "engine/kernels/spatial.h"

namespace tensord::engine::cuda {
namespace {

template <typename T>
__global__ void PoolKernel(PoolCall c, int64_t n) {
  T* out = reinterpret_cast<T*>(c.out);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const auto [plane, z, y, x] = PositionOf(c.out_size, i);
    const T* base = PlaneInput<T>(c.input, c.input_strides, c.c, plane);
    const PoolSpan zs = WindowSpan(c, 0, z), ys = WindowSpan(c, 1, y), xs = WindowSpan(c, 2, x);
    if (c.kind == PoolKind::kAvg) {
      const int64_t divisor = c.adaptive ? 1 : AvgPoolDivisor(c, z, y, x);
      out[i] = Convert<T>(AvgPoolWindow<T>(c, base, zs, ys, xs, divisor));
      continue;
    }
    if constexpr (kIsFloat<T>) {
      Calc<T> best;
      int64_t at;
      MaxPoolWindow<T>(c, base, zs, ys, xs, &best, &at);
      out[i] = Convert<T>(best);
      if (c.indices != nullptr) c.indices[i] = at;
    }
  }
}

}  // namespace

cudaError_t LaunchPool(const PoolCall& c, cudaStream_t stream) {
  const int64_t n = c.n * c.c * c.out_size[0] * c.out_size[1] * c.out_size[2];
  if (n == 0) return cudaSuccess;
  DispatchDType(c.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsFloat<T> || std::is_same_v<T, int64_t>) {
      PoolKernel<T><<<GridFor(n, 256), 256, 0, stream>>>(c, n);
    }
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
