// CUDA data-movement kernels. Element conversions are engine/kernels/convert.h's, the same
// functions the CPU loops use, so both devices give the same bits for every dtype pair.
#include "engine/cuda/copy_kernels.h"
#include "engine/cuda/grid.h"

#include "engine/core/half.h"
#include "engine/kernels/convert.h"

namespace tensord::engine::cuda {
namespace {

constexpr int kThreads = 256;


template <typename D, typename S>
__global__ void CopyContiguousKernel(D* __restrict__ dst, const S* __restrict__ src, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    dst[i] = Convert<D>(LoadElement(src + i));
  }
}

template <typename D, typename S>
__global__ void CopyStridedKernel(OffsetCalculator<2> calc, char* dst, const char* src,
                                  int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t off[2];
    calc.Offsets(i, off);
    *reinterpret_cast<D*>(dst + off[0]) =
        Convert<D>(LoadElement(reinterpret_cast<const S*>(src + off[1])));
  }
}

template <typename D, typename S>
__global__ void CopyStrided32Kernel(OffsetCalculator<2> calc, char* dst, const char* src,
                                    uint32_t n) {
  const uint32_t stride = gridDim.x * blockDim.x;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[2];
    calc.Offsets32(i, off);
    *reinterpret_cast<D*>(dst + off[0]) =
        Convert<D>(LoadElement(reinterpret_cast<const S*>(src + off[1])));
  }
}

// Transposing copies: dst is contiguous along dim a, src along dim b. A 32x32 tile is read with
// the threads of a warp along b and written along a through shared memory, so both sides move
// whole lines. The other dims are batches (blockIdx.z), through `batch`.
constexpr int kTile = 32;
constexpr int kTileRows = 8;

struct TransposeGeometry {
  int64_t na, nb;                    // extents of the two tiled dims
  int64_t dst_a, dst_b, src_a, src_b;  // their byte strides
  OffsetCalculator<2> batch;         // the remaining dims
};

template <typename D, typename S>
__global__ void TransposeKernel(TransposeGeometry g, char* dst, const char* src) {
  __shared__ D tile[kTile][kTile + 1];
  int64_t off[2];
  g.batch.Offsets(blockIdx.z, off);
  const char* s = src + off[1];
  char* d = dst + off[0];
  const int64_t a0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t b0 = static_cast<int64_t>(blockIdx.y) * kTile;
  for (int j = threadIdx.y; j < kTile; j += kTileRows) {
    const int64_t a = a0 + j, b = b0 + threadIdx.x;
    if (a < g.na && b < g.nb) {
      tile[j][threadIdx.x] =
          Convert<D>(LoadElement(reinterpret_cast<const S*>(s + a * g.src_a + b * g.src_b)));
    }
  }
  __syncthreads();
  for (int j = threadIdx.y; j < kTile; j += kTileRows) {
    const int64_t b = b0 + j, a = a0 + threadIdx.x;
    if (a < g.na && b < g.nb) *reinterpret_cast<D*>(d + a * g.dst_a + b * g.dst_b) = tile[threadIdx.x][j];
  }
}

// The transpose geometry of `calc`, when it is one: dst contiguous along merged dim 0, src
// contiguous along another dim, and a grid that fits CUDA's limits.
bool AsTranspose(const OffsetCalculator<2>& calc, int64_t dst_size, int64_t src_size,
                 TransposeGeometry* g) {
  if (calc.ndim < 2 || calc.strides[0][0] != dst_size) return false;
  int b = -1;
  for (int d = 1; d < calc.ndim; ++d) {
    if (calc.strides[d][1] == src_size) b = d;
  }
  if (b < 0 || calc.sizes[0] < 8 || calc.sizes[b] < 8) return false;
  g->na = calc.sizes[0];
  g->nb = calc.sizes[b];
  g->dst_a = calc.strides[0][0];
  g->src_a = calc.strides[0][1];
  g->dst_b = calc.strides[b][0];
  g->src_b = calc.strides[b][1];
  g->batch.ndim = 0;
  int64_t batches = 1;
  for (int d = 1; d < calc.ndim; ++d) {
    if (d == b) continue;
    const int k = g->batch.ndim++;
    g->batch.sizes[k] = calc.sizes[d];
    g->batch.strides[k][0] = calc.strides[d][0];
    g->batch.strides[k][1] = calc.strides[d][1];
    batches *= calc.sizes[d];
  }
  return (g->nb + kTile - 1) / kTile <= 65535 && batches <= 65535 &&
         (g->na + kTile - 1) / kTile <= 0x7fffffff;
}

// Same-dtype copies move bits: one instantiation per element width.
template <int W>
struct Bits;
template <>
struct Bits<1> { using T = uint8_t; };
template <>
struct Bits<2> { using T = uint16_t; };
template <>
struct Bits<4> { using T = uint32_t; };
template <>
struct Bits<8> { using T = uint64_t; };

template <typename D, typename S>
cudaError_t LaunchTyped(const OffsetCalculator<2>& calc, int64_t n, char* dst, const char* src,
                        cudaStream_t stream) {
  TransposeGeometry t;
  if (calc.IsContiguous({sizeof(D), sizeof(S)})) {
    CopyContiguousKernel<D, S><<<GridFor(n, kThreads), kThreads, 0, stream>>>(
        reinterpret_cast<D*>(dst), reinterpret_cast<const S*>(src), n);
  } else if (AsTranspose(calc, sizeof(D), sizeof(S), &t)) {
    int64_t batches = 1;
    for (int d = 0; d < t.batch.ndim; ++d) batches *= t.batch.sizes[d];
    const dim3 grid(static_cast<unsigned>((t.na + kTile - 1) / kTile),
                    static_cast<unsigned>((t.nb + kTile - 1) / kTile),
                    static_cast<unsigned>(batches));
    TransposeKernel<D, S><<<grid, dim3(kTile, kTileRows), 0, stream>>>(t, dst, src);
  } else if (n < (int64_t{1} << 31)) {
    CopyStrided32Kernel<D, S><<<GridFor(n, kThreads), kThreads, 0, stream>>>(calc, dst, src,
                                                                     static_cast<uint32_t>(n));
  } else {
    CopyStridedKernel<D, S><<<GridFor(n, kThreads), kThreads, 0, stream>>>(calc, dst, src, n);
  }
  return cudaGetLastError();
}

template <typename T>
__global__ void FillKernel(OffsetCalculator<1> calc, char* dst, T value, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t off[1];
    calc.Offsets(i, off);
    *reinterpret_cast<T*>(dst + off[0]) = value;
  }
}

template <typename T>
__global__ void FillContiguousKernel(T* dst, T value, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    dst[i] = value;
  }
}

template <typename T>
void LaunchFillTyped(const OffsetCalculator<1>& calc, int64_t n, char* dst, T value,
                     cudaStream_t stream) {
  if (calc.IsContiguous({sizeof(T)})) {
    FillContiguousKernel<T><<<GridFor(n, kThreads), kThreads, 0, stream>>>(reinterpret_cast<T*>(dst),
                                                                   value, n);
  } else {
    FillKernel<T><<<GridFor(n, kThreads), kThreads, 0, stream>>>(calc, dst, value, n);
  }
}

template <typename T>
__global__ void ArangeFloatKernel(T* out, int64_t n, double start, double step) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = Convert<T>(start + step * static_cast<double>(i));
  }
}

template <typename T>
__global__ void ArangeIntKernel(T* out, int64_t n, int64_t start, int64_t step) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    // Wrapping arithmetic in uint64, as the CPU kernel.
    out[i] = Convert<T>(static_cast<int64_t>(static_cast<uint64_t>(start) +
                                             static_cast<uint64_t>(step) *
                                                 static_cast<uint64_t>(i)));
  }
}

__global__ void SleepKernel(uint64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(100000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace

cudaError_t LaunchSleep(int64_t ms, cudaStream_t stream) {
  SleepKernel<<<1, 1, 0, stream>>>(static_cast<uint64_t>(ms) * 1000000u);
  return cudaGetLastError();
}

cudaError_t LaunchCopy(const OffsetCalculator<2>& calc, int64_t numel, char* dst, DType dst_dtype,
                       const char* src, DType src_dtype, cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  if (CopyMovesBytes(dst_dtype, src_dtype)) {
    switch (ItemSize(dst_dtype)) {
      case 1: return LaunchTyped<uint8_t, uint8_t>(calc, numel, dst, src, stream);
      case 2: return LaunchTyped<uint16_t, uint16_t>(calc, numel, dst, src, stream);
      case 4: return LaunchTyped<uint32_t, uint32_t>(calc, numel, dst, src, stream);
      default: return LaunchTyped<uint64_t, uint64_t>(calc, numel, dst, src, stream);
    }
  }
  return DispatchDType(dst_dtype, [&](auto d) {
    return DispatchDType(src_dtype, [&](auto s) {
      return LaunchTyped<decltype(d), decltype(s)>(calc, numel, dst, src, stream);
    });
  });
}

cudaError_t LaunchFill(const OffsetCalculator<1>& calc, int64_t numel, char* dst,
                       int64_t itemsize, uint64_t pattern, cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  switch (itemsize) {
    case 1: LaunchFillTyped(calc, numel, dst, static_cast<uint8_t>(pattern), stream); break;
    case 2: LaunchFillTyped(calc, numel, dst, static_cast<uint16_t>(pattern), stream); break;
    case 4: LaunchFillTyped(calc, numel, dst, static_cast<uint32_t>(pattern), stream); break;
    default: LaunchFillTyped(calc, numel, dst, pattern, stream); break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchArange(char* out, DType dtype, int64_t n, bool floating, double start_d,
                         double step_d, int64_t start_i, int64_t step_i, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    if (floating) {
      ArangeFloatKernel<T><<<GridFor(n, kThreads), kThreads, 0, stream>>>(reinterpret_cast<T*>(out), n,
                                                                  start_d, step_d);
    } else {
      ArangeIntKernel<T><<<GridFor(n, kThreads), kThreads, 0, stream>>>(reinterpret_cast<T*>(out), n,
                                                                start_i, step_i);
    }
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
