// CUDA reductions, scans and softmax over any strides. The functors are the CPU's
// (engine/kernels/reduce_functors.h), so both devices compute the same thing.
#include <algorithm>
#include <atomic>
#include <type_traits>

#include "engine/cuda/reduce_kernels.h"
#include "engine/cuda/grid.h"
#include "engine/kernels/reduce_functors.h"
#include "engine/tensor/tensor_meta.h"

namespace tensord::engine::cuda {
namespace {

// An index space (sizes, row-major) and the element strides it walks.
struct Dims {
  int n = 0;
  int64_t sizes[kMaxRank];
  int64_t strides[kMaxRank];
};

Dims MakeDims(IntList sizes, IntList strides) {
  Dims d;
  d.n = static_cast<int>(sizes.size());
  for (int i = 0; i < d.n; ++i) d.sizes[i] = sizes[i], d.strides[i] = strides[i];
  return d;
}

__device__ __forceinline__ int64_t OffsetOf(const Dims& d, int64_t i) {
  if (d.n == 1) return i * d.strides[0];
  int64_t off = 0;
  for (int k = d.n - 1; k >= 0; --k) {
    off += (i % d.sizes[k]) * d.strides[k];
    i /= d.sizes[k];
  }
  return off;
}

// One block per (output, part): its threads stride over the part's reduced elements, then
// combine in shared memory. With one part the block stores the output, else its partial.
template <typename T, typename F>
__global__ void ReduceBlocks(Dims kept, Dims red, const T* in, int64_t m, int64_t r,
                             int64_t parts, F f, typename F::Acc* partial, char* out, DType od,
                             int64_t* idx) {
  using Acc = typename F::Acc;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Acc* sh = reinterpret_cast<Acc*>(shared_bytes);
  const int64_t per = (r + parts - 1) / parts;
  for (int64_t t = blockIdx.x; t < m * parts; t += gridDim.x) {
    const int64_t o = t / parts, part = t % parts;
    const int64_t base = OffsetOf(kept, o);
    const int64_t r0 = part * per, r1 = r < r0 + per ? r : r0 + per;
    Acc acc;
    if (red.n == 1 && red.strides[0] == 1) {  // a contiguous run: four 16-byte loads in flight
      acc = AccumulateContiguous<T>(f, in, base, r0, r1, threadIdx.x, blockDim.x);
    } else if (red.n == 1) {  // one (coalesced) reduced dim: four loads in flight per thread
      acc = AccumulateStrided<T>(f, in, base, red.strides[0], r0 + threadIdx.x, r1, blockDim.x);
    } else {
      acc = f.Init();
      for (int64_t j = r0 + threadIdx.x; j < r1; j += blockDim.x) {
        acc = f.Step(acc, LoadCalc(in + base + OffsetOf(red, j)), j);
      }
    }
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) sh[threadIdx.x] = f.Combine(sh[threadIdx.x], sh[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (parts == 1) {
        f.Store(out, od, idx, o, sh[0]);
      } else {
        partial[t] = sh[0];
      }
    }
    __syncthreads();
  }
}

template <typename F>
__global__ void CombineParts(int64_t m, int64_t parts, F f, const typename F::Acc* partial,
                             char* out, DType od, int64_t* idx) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < m;
       o += step) {
    typename F::Acc acc = partial[o * parts];
    for (int64_t p = 1; p < parts; ++p) acc = f.Combine(acc, partial[o * parts + p]);
    f.Store(out, od, idx, o, acc);
  }
}

// One thread per output, stepping through its reduced elements in order.
template <typename T, typename F>
__global__ void ReducePerThread(Dims kept, Dims red, const T* in, int64_t m, int64_t r, F f,
                                char* out, DType od, int64_t* idx) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < m;
       o += step) {
    const int64_t base = OffsetOf(kept, o);
    typename F::Acc acc = f.Init();
    for (int64_t j = 0; j < r; ++j) {
      acc = f.Step(acc, LoadCalc(in + base + OffsetOf(red, j)), j);
    }
    f.Store(out, od, idx, o, acc);
  }
}

template <typename T, typename F>
void Run(const ReduceGeometry& g, const T* in, char* out, DType od, int64_t* idx, const F& f,
         const ReduceLaunch& how, void* scratch, cudaStream_t stream) {
  int64_t m = 1, r = 1;
  for (int64_t s : g.kept_sizes) m *= s;
  for (int64_t s : g.red_sizes) r *= s;
  if (m == 0) return;
  const Dims kept = MakeDims(g.kept_sizes, g.kept_strides);
  const Dims red = MakeDims(g.red_sizes, g.red_strides);
  if (how.per_thread) {
    ReducePerThread<T, F><<<GridFor(m, 256), 256, 0, stream>>>(kept, red, in, m, r, f, out, od,
                                                               idx);
    return;
  }
  using Acc = typename F::Acc;
  static_assert(sizeof(Acc) <= 32, "ReduceLaunch's scratch holds 32 bytes per partial");
  ReduceBlocks<T, F><<<GridFor(m * how.parts, 1), how.threads, how.threads * sizeof(Acc), stream>>>(
      kept, red, in, m, r, how.parts, f, static_cast<Acc*>(scratch), out, od, idx);
  if (how.parts > 1) {
    CombineParts<F><<<GridFor(m, 256), 256, 0, stream>>>(m, how.parts, f,
                                                         static_cast<const Acc*>(scratch), out,
                                                         od, idx);
  }
}

// Calls run(f) with the functor of `op` over T for `r` reduced elements (values: max/min with
// a dim store their values, and indices).
template <typename T, typename Run>
void WithReduceFunctor(ReduceOp op, int64_t r, bool values, const ReduceArgs& args,
                       const Run& run) {
  switch (op) {
    case ReduceOp::kSum: return run(SumOp<T>{});
    case ReduceOp::kMean: {
      SumOp<T> f;
      f.mean = true;
      f.count = r;
      return run(f);
    }
    case ReduceOp::kProd: return run(ProdOp<T>{});
    case ReduceOp::kAmax: return run(ExtremumOp<T, true>{});
    case ReduceOp::kAmin: return run(ExtremumOp<T, false>{});
    case ReduceOp::kArgmax: {
      ArgOp<T, true> f;
      f.values = values;
      return run(f);
    }
    case ReduceOp::kArgmin: {
      ArgOp<T, false> f;
      f.values = values;
      return run(f);
    }
    case ReduceOp::kAll: return run(LogicalOp<T, true>{});
    case ReduceOp::kAny: return run(LogicalOp<T, false>{});
    case ReduceOp::kCountNonzero: return run(CountOp<T>{});
    case ReduceOp::kVar:
    case ReduceOp::kStd:
      if constexpr (kIsFloat<T>) {  // the planners refuse other dtypes
        VarOp<T> f;
        f.correction = args.correction;
        f.take_sqrt = op == ReduceOp::kStd;
        return run(f);
      }
      return;
    case ReduceOp::kNorm:
      if constexpr (kIsFloat<T>) {
        NormOp<T> f;
        f.p = args.p;
        return run(f);
      }
      return;
    case ReduceOp::kLogsumexp: return run(LseOp<T>{});
  }
}

template <typename T>
void ReduceTyped(ReduceOp op, const ReduceGeometry& g, const T* in, char* out, DType od,
                 int64_t* idx, const ReduceArgs& args, const ReduceLaunch& how, void* scratch,
                 cudaStream_t stream) {
  int64_t r = 1;
  for (int64_t s : g.red_sizes) r *= s;
  WithReduceFunctor<T>(op, r, idx != nullptr, args, [&](const auto& f) {
    Run<T>(g, in, out, od, idx, f, how, scratch, stream);
  });
}

// Lines along `dim`: the other dims' sizes and each tensor's strides over them.
struct Lines {
  Dims in, out;
  int64_t count = 1, n = 1, in_step = 0, out_step = 0;
};

Lines MakeLines(IntList shape, int64_t dim, const StridedRef& in, const StridedRef& out) {
  Lines l;
  DimVector sizes, is, os;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d == dim) continue;
    sizes.push_back(shape[d]);
    is.push_back(in.strides[d]);
    os.push_back(out.strides[d]);
    l.count *= shape[d];
  }
  l.in = MakeDims(sizes, is);
  l.out = MakeDims(sizes, os);
  if (!shape.empty()) {
    l.n = shape[dim];
    l.in_step = in.strides[dim];
    l.out_step = out.strides[dim];
  }
  return l;
}

template <typename T, typename O>
__global__ void ScanKernel(Lines l, ScanOp op, const T* in, O* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       line < l.count; line += step) {
    const T* x = in + OffsetOf(l.in, line);
    O* y = out + OffsetOf(l.out, line);
    ScanLine<T>(
        op, l.n, [&](int64_t i) { return LoadCalc(x + i * l.in_step); },
        [&](int64_t i, SumAcc<T> acc) { y[i * l.out_step] = Convert<O>(acc); });
  }
}

template <typename T>
__global__ void CumExtremeKernel(Lines l, bool max, const T* in, T* values, int64_t* indices) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       line < l.count; line += step) {
    const T* x = in + OffsetOf(l.in, line);
    const int64_t first = OffsetOf(l.out, line);
    CumExtremeLine<T>(
        max, l.n, [&](int64_t i) { return LoadCalc(x + i * l.in_step); },
        [&](int64_t i, Calc<T> v, int64_t k) {
          values[first + i * l.out_step] = Convert<T>(v);
          indices[first + i * l.out_step] = k;
        });
  }
}

// A block's shared memory for a cached softmax line: under the 48 KiB a block may take without
// opting in, beside the 2 KiB of partials.
constexpr size_t kSoftmaxCacheBytes = 32768;

// Long lines: a block per line, its threads striding over the line for the maximum, the sum of
// exp(x - maximum) (each combined in shared memory) and the outputs: SoftmaxLine's arithmetic,
// with the sum in a tree order. kCached: the line's values, read once from global memory, are
// kept in shared memory for the second and third pass (each thread reads back only the
// elements it stored, so the passes need no barrier for them); the arithmetic is the same.
template <typename T, bool kCached>
__global__ void SoftmaxRows(Lines l, bool log, const T* in, T* out) {
  using C = Calc<T>;
  __shared__ C partial[256];
  extern __shared__ __align__(16) unsigned char row_bytes[];
  C* row = reinterpret_cast<C*>(row_bytes);
  for (int64_t line = blockIdx.x; line < l.count; line += gridDim.x) {
    const T* x = in + OffsetOf(l.in, line);
    T* y = out + OffsetOf(l.out, line);
    const auto at = [&](int64_t i) -> C {
      if constexpr (kCached) {
        return row[i];
      } else {
        return static_cast<C>(x[i * l.in_step]);
      }
    };
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t i = threadIdx.x; i < l.n; i += blockDim.x) {
      const C v = static_cast<C>(x[i * l.in_step]);
      if constexpr (kCached) row[i] = v;
      m = m < v ? v : m;
    }
    partial[threadIdx.x] = m;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) {
        const C o = partial[threadIdx.x + s];
        partial[threadIdx.x] = partial[threadIdx.x] < o ? o : partial[threadIdx.x];
      }
      __syncthreads();
    }
    m = partial[0];
    __syncthreads();
    C sum = 0;
    for (int64_t i = threadIdx.x; i < l.n; i += blockDim.x) sum += std::exp(at(i) - m);
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
      __syncthreads();
    }
    const C total = partial[0];
    __syncthreads();
    const C ls = log ? std::log(total) : C(0);
    for (int64_t i = threadIdx.x; i < l.n; i += blockDim.x) {
      const C v = at(i) - m;
      y[i * l.out_step] = Convert<T>(log ? v - ls : std::exp(v) / total);
    }
  }
}

template <typename T>
__global__ void SoftmaxKernel(Lines l, bool log, const T* in, T* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       line < l.count; line += step) {
    const T* x = in + OffsetOf(l.in, line);
    T* y = out + OffsetOf(l.out, line);
    SoftmaxLine<T>(
        log, l.n, [&](int64_t i) { return LoadCalc(x + i * l.in_step); },
        [&](int64_t i, Calc<T> v) { y[i * l.out_step] = Convert<T>(v); });
  }
}

}  // namespace

int ReduceBlocksPerSm(ReduceOp op, DType dtype) {
  // CUDA's answer depends on the kernel and the device's architecture; asked once per (op,
  // dtype) and kept (a server's GPUs are of one architecture; a wrong guess costs only speed).
  constexpr int kOps = static_cast<int>(ReduceOp::kCountNonzero) + 1, kDTypes = kNumDTypes;
  static std::atomic<int> known[kOps][kDTypes] = {};
  const int o = static_cast<int>(op), d = static_cast<int>(dtype);
  if (o < 0 || o >= kOps || d < 0 || d >= kDTypes) return 0;
  int blocks = known[o][d].load(std::memory_order_relaxed);
  if (blocks > 0) return blocks;
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    WithReduceFunctor<T>(op, 1, false, ReduceArgs{}, [&](const auto& f) {
      using F = std::decay_t<decltype(f)>;
      const size_t shared = kSplitReduceThreads * sizeof(typename F::Acc);
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, ReduceBlocks<T, F>,
                                                        kSplitReduceThreads,
                                                        shared) != cudaSuccess) {
        (void)cudaGetLastError();
        blocks = 0;
      }
    });
  });
  if (blocks > 0) known[o][d].store(blocks, std::memory_order_relaxed);
  return blocks;
}

cudaError_t LaunchReduce(ReduceOp op, const ReduceGeometry& g, const StridedRef& in, char* out,
                         DType out_dtype, int64_t* indices, const ReduceArgs& args,
                         const ReduceLaunch& how, void* scratch, cudaStream_t stream) {
  DispatchDType(in.dtype, [&](auto t) {
    using T = decltype(t);
    ReduceTyped<T>(op, g, reinterpret_cast<const T*>(in.data), out, out_dtype, indices, args,
                   how, scratch, stream);
  });
  return cudaGetLastError();
}

cudaError_t LaunchCumExtreme(bool max, IntList shape, int64_t dim, const StridedRef& in,
                             const StridedRef& values, const StridedRef& indices,
                             cudaStream_t stream) {
  const Lines l = MakeLines(shape, dim, in, values);
  if (l.count == 0 || l.n == 0) return cudaSuccess;
  DispatchDType(in.dtype, [&](auto t) {
    using T = decltype(t);
    CumExtremeKernel<T><<<GridFor(l.count, 128), 128, 0, stream>>>(
        l, max, reinterpret_cast<const T*>(in.data), reinterpret_cast<T*>(values.data),
        reinterpret_cast<int64_t*>(indices.data));
  });
  return cudaGetLastError();
}

cudaError_t LaunchScan(ScanOp op, IntList shape, int64_t dim, const StridedRef& in,
                       const StridedRef& out, cudaStream_t stream) {
  const Lines l = MakeLines(shape, dim, in, out);
  if (l.count == 0 || l.n == 0) return cudaSuccess;
  DispatchDType(in.dtype, [&](auto t) {
    using T = decltype(t);
    const auto launch = [&](auto* y) {
      ScanKernel<<<GridFor(l.count, 128), 128, 0, stream>>>(
          l, op, reinterpret_cast<const T*>(in.data), y);
    };
    if (out.dtype == in.dtype) {
      launch(reinterpret_cast<T*>(out.data));
    } else if (out.dtype == DType::kInt64) {
      launch(reinterpret_cast<int64_t*>(out.data));
    }
  });
  return cudaGetLastError();
}

// A block of 256 threads per row: the sum, then the sum of squared deviations (two passes, as
// the CPU kernel), each reduced in shared memory, then the normalized row.
template <typename T>
__device__ Calc<T> BlockSum(Calc<T> v, Calc<T>* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const Calc<T> total = partial[0];
  __syncthreads();
  return total;
}

template <typename T>
__global__ void LayerNormRows(const T* x, T* y, const T* w, const T* b, int64_t rows, int64_t n,
                              double eps) {
  using C = Calc<T>;
  __shared__ C partial[256];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    C s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += static_cast<C>(xr[i]);
    const C mean = BlockSum<T>(s, partial) / static_cast<C>(n);
    C q = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const C d = static_cast<C>(xr[i]) - mean;
      q += d * d;
    }
    const C rstd = C(1) / sqrt(BlockSum<T>(q, partial) / static_cast<C>(n) + static_cast<C>(eps));
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      C v = (static_cast<C>(xr[i]) - mean) * rstd;
      if (w != nullptr) v *= static_cast<C>(w[i]);
      if (b != nullptr) v += static_cast<C>(b[i]);
      yr[i] = Convert<T>(v);
    }
  }
}

cudaError_t LaunchLayerNorm(const LayerNormCall& c, cudaStream_t stream) {
  if (c.rows == 0 || c.n == 0) return cudaSuccess;
  DispatchDType(c.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsFloat<T>) {
      LayerNormRows<T><<<GridFor(c.rows, 1), 256, 0, stream>>>(
          reinterpret_cast<const T*>(c.x), reinterpret_cast<T*>(c.out),
          reinterpret_cast<const T*>(c.weight), reinterpret_cast<const T*>(c.bias), c.rows, c.n,
          c.eps);
    }
  });
  return cudaGetLastError();
}

namespace {

template <typename T>
__global__ void ChannelAffineKernel(ChannelAffineCall c, int64_t n) {
  using C = Calc<T>;
  const T* x = reinterpret_cast<const T*>(c.x);
  T* out = reinterpret_cast<T*>(c.out);
  const C* scale = reinterpret_cast<const C*>(c.scale);
  const C* shift = reinterpret_cast<const C*>(c.shift);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t ch = i / c.plane % c.channels;
    out[i] = Convert<T>(static_cast<C>(static_cast<C>(x[i]) * scale[ch] + shift[ch]));
  }
}

}  // namespace

cudaError_t LaunchChannelAffine(const ChannelAffineCall& c, cudaStream_t stream) {
  const int64_t n = c.planes * c.plane;
  if (n == 0) return cudaSuccess;
  DispatchDType(c.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsFloat<T>) {
      ChannelAffineKernel<T><<<GridFor(n, 256), 256, 0, stream>>>(c, n);
    }
  });
  return cudaGetLastError();
}

namespace {

// cross_entropy: a warp per position, its lanes striding over the classes; max, sum of exp and
// the weighted sums combined by shuffles (a NaN skipped by the max reaches the sum, as the CPU).
// kNone stores each loss; the reductions store each position's (nll, smooth, weight) in
// `parts`, which one block then sums in a fixed order.
struct LossParts {
  double nll, smooth, weight;
};

template <typename C>
__device__ C WarpSum(C v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename C>
__device__ C WarpMax(C v) {
  for (int o = 16; o > 0; o >>= 1) {
    const C u = __shfl_xor_sync(0xffffffffu, v, o);
    v = v < u ? u : v;
  }
  return v;
}

template <typename T>
__global__ void CrossEntropyWarps(CrossEntropyCall c, LossParts* parts, KernelError* slot) {
  using C = Calc<T>;
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  const int64_t positions = c.outer * c.inner, n = c.classes, s = c.inner;
  const T* w = reinterpret_cast<const T*>(c.weight);
  const auto weight = [w](int64_t k) { return w == nullptr ? C(1) : static_cast<C>(w[k]); };
  for (int64_t p = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; p < positions; p += warps) {
    const int64_t o = p / c.inner, i = p - o * c.inner;
    const int64_t base = o * n * c.inner + i;
    const T* x = reinterpret_cast<const T*>(c.input) + base;
    int64_t t = 0;
    bool skip = false;
    if (!c.has_probs) {
      t = c.target[p];
      if (t == c.ignore_index) {
        skip = true;
      } else if (t < 0 || t >= n) {
        if (lane == 0) ReportBadIndexAt(slot, p);
        skip = true;
      }
    }
    C nll = 0, smooth = 0, wt = 0;
    if (!skip) {
      C lse = 0;
      if (!c.log_probs) {
        C m = -INFINITY;
        for (int64_t k = lane; k < n; k += 32) {
          const C v = static_cast<C>(x[k * s]);
          m = m < v ? v : m;
        }
        m = WarpMax(m);
        C sum = 0;
        for (int64_t k = lane; k < n; k += 32) sum += exp(static_cast<C>(x[k * s]) - m);
        lse = m + log(WarpSum(sum));
      }
      if (c.has_probs) {
        const T* q = reinterpret_cast<const T*>(c.probs) + base;
        const C keep = static_cast<C>(1 - c.label_smoothing);
        const C spread = static_cast<C>(c.label_smoothing / static_cast<double>(n));
        C acc = 0;
        for (int64_t k = lane; k < n; k += 32) {
          acc += weight(k) * (static_cast<C>(q[k * s]) * keep + spread) *
                 (static_cast<C>(x[k * s]) - lse);
        }
        nll = -WarpSum(acc);
        wt = n > 0 ? 1 : 0;  // the mean is over positions (none with no classes, as torch)
      } else {
        wt = weight(t);
        nll = -wt * (static_cast<C>(x[t * s]) - lse);
        if (c.label_smoothing > 0) {
          C acc = 0;
          for (int64_t k = lane; k < n; k += 32) {
            acc += weight(k) * (static_cast<C>(x[k * s]) - lse);
          }
          smooth = -WarpSum(acc);
        }
      }
    }
    if (lane != 0) continue;
    if (c.reduction == LossReduction::kNone) {
      const bool apart = !c.has_probs && c.label_smoothing > 0;
      const C keep = static_cast<C>(1 - c.label_smoothing);
      const C spread = static_cast<C>(c.label_smoothing / static_cast<double>(n));
      reinterpret_cast<T*>(c.out)[p] = Convert<T>(apart ? keep * nll + spread * smooth : nll);
    } else {
      parts[p] = LossParts{static_cast<double>(nll), static_cast<double>(smooth),
                           static_cast<double>(wt)};
    }
  }
}

// One block: the positions' parts summed (each thread a fixed stride, then a tree), the loss.
template <typename T>
__global__ void CrossEntropyTotal(CrossEntropyCall c, const LossParts* parts) {
  __shared__ double sh[3][256];
  const int64_t positions = c.outer * c.inner;
  double nll = 0, smooth = 0, weight = 0;
  for (int64_t p = threadIdx.x; p < positions; p += blockDim.x) {
    nll += parts[p].nll;
    smooth += parts[p].smooth;
    weight += parts[p].weight;
  }
  sh[0][threadIdx.x] = nll, sh[1][threadIdx.x] = smooth, sh[2][threadIdx.x] = weight;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) {
      for (int j = 0; j < 3; ++j) sh[j][threadIdx.x] += sh[j][threadIdx.x + h];
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  double loss = sh[0][0], smoothed = sh[1][0];
  if (c.reduction == LossReduction::kMean) {
    loss /= sh[2][0];
    smoothed /= sh[2][0];
  }
  if (!c.has_probs && c.label_smoothing > 0) {
    loss = (1 - c.label_smoothing) * loss +
           c.label_smoothing / static_cast<double>(c.classes) * smoothed;
  }
  *reinterpret_cast<T*>(c.out) = Convert<T>(static_cast<Calc<T>>(loss));
}

// The first bad target's value, from its position (ReportBadIndexAt kept the smallest).
__global__ void CrossEntropyBadTarget(const int64_t* target, int64_t classes, KernelError* slot) {
  if (slot->code == KernelError::kIndexOutOfRange) {
    slot->a = target[slot->position];
    slot->b = classes;
    __threadfence_system();
  }
}

}  // namespace

int64_t CrossEntropyScratchBytes(const CrossEntropyCall& c) {
  if (c.reduction == LossReduction::kNone) return 0;
  return c.outer * c.inner * static_cast<int64_t>(sizeof(LossParts));
}

cudaError_t LaunchCrossEntropy(const CrossEntropyCall& c, void* scratch, KernelError* slot,
                               cudaStream_t stream) {
  const int64_t positions = c.outer * c.inner;
  auto* parts = static_cast<LossParts*>(scratch);
  DispatchDType(c.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsFloat<T>) {
      if (positions > 0) {
        CrossEntropyWarps<T><<<GridFor(positions, 8), 256, 0, stream>>>(c, parts, slot);
      }
      if (c.reduction != LossReduction::kNone) {
        CrossEntropyTotal<T><<<1, 256, 0, stream>>>(c, parts);
      }
    }
  });
  if (c.target != nullptr && positions > 0) {
    CrossEntropyBadTarget<<<1, 1, 0, stream>>>(c.target, c.classes, slot);
  }
  return cudaGetLastError();
}

cudaError_t LaunchSoftmax(bool log, IntList shape, int64_t dim, const StridedRef& in,
                          const StridedRef& out, cudaStream_t stream) {
  const Lines l = MakeLines(shape, dim, in, out);
  if (l.count == 0 || l.n == 0) return cudaSuccess;
  DispatchDType(in.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsFloat<T>) {
      const T* x = reinterpret_cast<const T*>(in.data);
      T* y = reinterpret_cast<T*>(out.data);
      if (l.n >= 1024) {  // long lines: a block each, cached in shared memory up to 32 KiB
        const size_t cache = static_cast<size_t>(l.n) * sizeof(Calc<T>);
        if (cache <= kSoftmaxCacheBytes) {
          SoftmaxRows<T, true><<<GridFor(l.count, 1), 256, cache, stream>>>(l, log, x, y);
        } else {
          SoftmaxRows<T, false><<<GridFor(l.count, 1), 256, 0, stream>>>(l, log, x, y);
        }
      } else {
        SoftmaxKernel<T><<<GridFor(l.count, 128), 128, 0, stream>>>(l, log, x, y);
      }
    }
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
