// CUDA data-movement kernels. Element conversions are engine/kernels/convert.h's, the same
// functions the CPU loops use, so both devices give the same bits for every dtype pair.
#include "engine/cuda/copy_kernels.h"

#include "engine/half.h"
#include "engine/kernels/convert.h"

namespace tensord::engine::cuda {
namespace {

constexpr int kThreads = 256;

// Enough blocks to fill the GPU; grid-stride loops cover the rest.
int BlocksFor(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65536 ? blocks : 65536);
}

template <typename D, typename S>
__global__ void CopyContiguousKernel(D* __restrict__ dst, const S* __restrict__ src, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    dst[i] = Convert<D>(src[i]);
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
    *reinterpret_cast<D*>(dst + off[0]) = Convert<D>(*reinterpret_cast<const S*>(src + off[1]));
  }
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
  if (calc.IsContiguous({sizeof(D), sizeof(S)})) {
    CopyContiguousKernel<D, S><<<BlocksFor(n), kThreads, 0, stream>>>(
        reinterpret_cast<D*>(dst), reinterpret_cast<const S*>(src), n);
  } else {
    CopyStridedKernel<D, S><<<BlocksFor(n), kThreads, 0, stream>>>(calc, dst, src, n);
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

}  // namespace

cudaError_t LaunchCopy(const OffsetCalculator<2>& calc, int64_t numel, char* dst, DType dst_dtype,
                       const char* src, DType src_dtype, cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  if (dst_dtype == src_dtype) {
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
    case 1:
      FillKernel<uint8_t><<<BlocksFor(numel), kThreads, 0, stream>>>(
          calc, dst, static_cast<uint8_t>(pattern), numel);
      break;
    case 2:
      FillKernel<uint16_t><<<BlocksFor(numel), kThreads, 0, stream>>>(
          calc, dst, static_cast<uint16_t>(pattern), numel);
      break;
    case 4:
      FillKernel<uint32_t><<<BlocksFor(numel), kThreads, 0, stream>>>(
          calc, dst, static_cast<uint32_t>(pattern), numel);
      break;
    default:
      FillKernel<uint64_t><<<BlocksFor(numel), kThreads, 0, stream>>>(calc, dst, pattern, numel);
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchArange(char* out, DType dtype, int64_t n, bool floating, double start_d,
                         double step_d, int64_t start_i, int64_t step_i, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    if (floating) {
      ArangeFloatKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(reinterpret_cast<T*>(out), n,
                                                                  start_d, step_d);
    } else {
      ArangeIntKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(reinterpret_cast<T*>(out), n,
                                                                start_i, step_i);
    }
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
