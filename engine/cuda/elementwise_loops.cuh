// The CUDA elementwise loops: contiguous (unrolled, with broadcast scalar operands) and strided
// (32- or 64-bit index arithmetic over merged dims) maps of 1, 2 or 3 inputs that apply a
// shared per-element function (engine/kernels/). Included by the *_kernels.cu files only.
#ifndef TENSORD_ENGINE_CUDA_ELEMENTWISE_LOOPS_CUH_
#define TENSORD_ENGINE_CUDA_ELEMENTWISE_LOOPS_CUH_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/cuda/offset_calculator.h"
#include "engine/cuda/grid.h"
#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"

namespace tensord::engine::cuda::loops {


constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // elements per thread per step of the contiguous loops

// Blocks of the contiguous (unrolled) loops.
inline int BlocksFor(int64_t n) { return GridFor(n, int64_t{kThreads} * kUnroll); }

// Every operand contiguous; `b_scalar`: b is one element broadcast (a Python number, a 0-d
// tensor), read once.
template <typename Out, typename A, typename B, typename F>
__global__ void Map2Contiguous(Out* o, const A* x, const B* y, int64_t n, bool a_scalar,
                               bool b_scalar, F f) {  // NB: o may be x or y (in-place ops)
  const Calc<A> x0 = a_scalar ? LoadCalc(x) : Calc<A>();
  const Calc<B> y0 = b_scalar ? LoadCalc(y) : Calc<B>();
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * kUnroll;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x;
       base < n; base += step) {
    Calc<A> xs[kUnroll];
    Calc<B> ys[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t i = base + int64_t{k} * blockDim.x;
      if (i < n) {
        xs[k] = a_scalar ? x0 : LoadCalc(x + i);
        ys[k] = b_scalar ? y0 : LoadCalc(y + i);
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t i = base + int64_t{k} * blockDim.x;
      if (i < n) o[i] = Convert<Out>(f(xs[k], ys[k]));
    }
  }
}

template <typename Out, typename A, typename B, typename F>
__global__ void Map2Strided32(OffsetCalculator<3> calc, char* o, const char* x, const char* y,
                              uint32_t n, F f) {
  const uint32_t step = gridDim.x * blockDim.x;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[3];
    calc.Offsets32(i, off);
    *reinterpret_cast<Out*>(o + off[0]) =
        Convert<Out>(f(LoadCalc(reinterpret_cast<const A*>(x + off[1])),
                       LoadCalc(reinterpret_cast<const B*>(y + off[2]))));
  }
}

template <typename Out, typename A, typename B, typename F>
__global__ void Map2Strided64(OffsetCalculator<3> calc, char* o, const char* x, const char* y,
                              int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step) {
    int64_t off[3];
    calc.Offsets(i, off);
    *reinterpret_cast<Out*>(o + off[0]) =
        Convert<Out>(f(LoadCalc(reinterpret_cast<const A*>(x + off[1])),
                       LoadCalc(reinterpret_cast<const B*>(y + off[2]))));
  }
}

template <typename Out, typename A, typename B, typename F>
void GpuMap2(const OffsetCalculator<3>& calc, int64_t n, char* o, const char* x, const char* y,
             F f, cudaStream_t stream) {
  if (n == 0) return;
  // One merged run with the output contiguous: inputs contiguous or one broadcast element.
  if (calc.ndim <= 1) {
    const int64_t so = calc.ndim == 0 ? sizeof(Out) : calc.strides[0][0];
    const int64_t sa = calc.ndim == 0 ? 0 : calc.strides[0][1];
    const int64_t sb = calc.ndim == 0 ? 0 : calc.strides[0][2];
    if (so == int64_t{sizeof(Out)} && (sa == int64_t{sizeof(A)} || sa == 0) &&
        (sb == int64_t{sizeof(B)} || sb == 0)) {
      Map2Contiguous<Out, A, B, F><<<BlocksFor(n), kThreads, 0, stream>>>(
          reinterpret_cast<Out*>(o), reinterpret_cast<const A*>(x),
          reinterpret_cast<const B*>(y), n, sa == 0, sb == 0, f);
      return;
    }
  }
  const int grid = GridFor(n, kThreads);
  if (n < (int64_t{1} << 31)) {
    Map2Strided32<Out, A, B, F><<<grid, kThreads, 0, stream>>>(calc, o, x, y,
                                                              static_cast<uint32_t>(n), f);
  } else {
    Map2Strided64<Out, A, B, F><<<grid, kThreads, 0, stream>>>(calc, o, x, y, n, f);
  }
}

// ---- One input ----------------------------------------------------------------------------

template <typename Out, typename A, typename F>
__global__ void Map1Contiguous(Out* o, const A* x, int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * kUnroll;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x;
       base < n; base += step) {
    Calc<A> xs[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t i = base + int64_t{k} * blockDim.x;
      if (i < n) xs[k] = LoadCalc(x + i);
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t i = base + int64_t{k} * blockDim.x;
      if (i < n) o[i] = Convert<Out>(f(xs[k]));
    }
  }
}

template <typename Out, typename A, typename F>
__global__ void Map1Strided(OffsetCalculator<2> calc, char* o, const char* x, int64_t n,
                            bool index32, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step) {
    int64_t off[2];
    if (index32) {
      calc.Offsets32(static_cast<uint32_t>(i), off);
    } else {
      calc.Offsets(i, off);
    }
    *reinterpret_cast<Out*>(o + off[0]) =
        Convert<Out>(f(LoadCalc(reinterpret_cast<const A*>(x + off[1]))));
  }
}

template <typename Out, typename A, typename F>
void GpuMap1(const OffsetCalculator<2>& calc, int64_t n, char* o, const char* x, F f,
             cudaStream_t stream) {
  if (n == 0) return;
  if (calc.IsContiguous({sizeof(Out), sizeof(A)})) {
    Map1Contiguous<Out, A, F><<<BlocksFor(n), kThreads, 0, stream>>>(
        reinterpret_cast<Out*>(o), reinterpret_cast<const A*>(x), n, f);
    return;
  }
  Map1Strided<Out, A, F><<<GridFor(n, kThreads), kThreads, 0, stream>>>(
      calc, o, x, n, n < (int64_t{1} << 31), f);
}

// ---- Three inputs (where, lerp, addcmul/addcdiv, clamp) ---------------------------------------

template <typename Out, typename A, typename B, typename C3, typename F>
__global__ void Map3Strided(OffsetCalculator<4> calc, char* o, const char* x, const char* y,
                            const char* z, int64_t n, bool index32, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step) {
    int64_t off[4];
    if (index32) {
      calc.Offsets32(static_cast<uint32_t>(i), off);
    } else {
      calc.Offsets(i, off);
    }
    *reinterpret_cast<Out*>(o + off[0]) =
        Convert<Out>(f(LoadCalc(reinterpret_cast<const A*>(x + off[1])),
                       LoadCalc(reinterpret_cast<const B*>(y + off[2])),
                       LoadCalc(reinterpret_cast<const C3*>(z + off[3]))));
  }
}

template <typename Out, typename A, typename B, typename C3, typename F>
void GpuMap3(const OffsetCalculator<4>& calc, int64_t n, char* o, const char* x, const char* y,
             const char* z, F f, cudaStream_t stream) {
  if (n == 0) return;
  Map3Strided<Out, A, B, C3, F><<<GridFor(n, kThreads), kThreads, 0, stream>>>(
      calc, o, x, y, z, n, n < (int64_t{1} << 31), f);
}


// Callbacks of the Visit* functions, as named types: nvcc allows __host__ __device__ lambdas only
// in functions whose template arguments are not local types (as a lambda's would be).

template <typename T>
struct LaunchMap1 {
  const OffsetCalculator<2>& calc;
  int64_t n;
  char* out;
  const char* in;
  cudaStream_t stream;
  template <typename F, typename Out>
  void operator()(F f, Out) const {
    GpuMap1<Out, T>(calc, n, out, in, f, stream);
  }
};

template <typename Out, typename A, typename B, typename C3>
struct LaunchMap3 {
  const OffsetCalculator<4>& calc;
  int64_t n;
  char* out;
  const char* a;
  const char* b;
  const char* c;
  cudaStream_t stream;
  template <typename F>
  void operator()(F f) const {
    GpuMap3<Out, A, B, C3>(calc, n, out, a, b, c, f, stream);
  }
};


}  // namespace tensord::engine::cuda::loops

#endif  // TENSORD_ENGINE_CUDA_ELEMENTWISE_LOOPS_CUH_
