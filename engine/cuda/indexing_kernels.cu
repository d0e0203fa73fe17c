// CUDA kernels of index_select, gather, scatter/scatter_add, take, put_ and the data-dependent
// selections (nonzero, masked_select). Bad indices report into the op's error slot; nothing
// traps, and the writing kernels write nothing once an index was found bad.
#include "engine/cuda/indexing_kernels.h"
#include "engine/cuda/grid.h"
#include "engine/cuda/row_gather.h"

#include <algorithm>
#include <optional>
#include <type_traits>

#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"

namespace tensord::engine::cuda {
namespace {

// A tensor as a kernel reads it: data, itemsize, sizes and strides (a 0-d tensor as [1]).
struct View {
  char* data;
  int n;
  int itemsize;
  int64_t sizes[kMaxIndexDims];
  int64_t strides[kMaxIndexDims];
};

View MakeView(const Tensor& t) {
  View v;
  v.data = t.data();
  v.itemsize = static_cast<int>(t.itemsize());
  v.n = static_cast<int>(std::max<int64_t>(t.dim(), 1));
  v.sizes[0] = 1, v.strides[0] = 1;
  for (int64_t d = 0; d < t.dim(); ++d) v.sizes[d] = t.size(d), v.strides[d] = t.stride(d);
  return v;
}

constexpr int kThreads = 256;

// The multi-index of row-major position p, and the element offset it has in `v`.
__device__ __forceinline__ int64_t Unravel(const View& v, int64_t p, int64_t* idx) {
  int64_t off = 0;
  for (int d = v.n - 1; d >= 0; --d) {
    idx[d] = p % v.sizes[d];
    p /= v.sizes[d];
    off += idx[d] * v.strides[d];
  }
  return off;
}

__device__ __forceinline__ int64_t RowMajorOffset(const View& v, int64_t p) {
  int64_t off = 0;
  for (int d = v.n - 1; d >= 0; --d) {
    off += (p % v.sizes[d]) * v.strides[d];
    p /= v.sizes[d];
  }
  return off;
}

__device__ __forceinline__ int64_t LoadIndex(const View& index, int64_t off) {
  const char* p = index.data + off * index.itemsize;
  return index.itemsize == 4 ? *reinterpret_cast<const int32_t*>(p)
                             : *reinterpret_cast<const int64_t*>(p);
}

__device__ __forceinline__ void CopyElement(char* dst, const char* src, int itemsize) {
  switch (itemsize) {
    case 1: *dst = *src; break;
    case 2: *reinterpret_cast<int16_t*>(dst) = *reinterpret_cast<const int16_t*>(src); break;
    case 4: *reinterpret_cast<int32_t*>(dst) = *reinterpret_cast<const int32_t*>(src); break;
    default: *reinterpret_cast<int64_t*>(dst) = *reinterpret_cast<const int64_t*>(src); break;
  }
}

__device__ __forceinline__ bool Failed(const KernelError* slot) {
  return *reinterpret_cast<const volatile int32_t*>(&slot->code) != KernelError::kNone;
}

// *p = ScatterCombine(mode, *p, v) (in T's arithmetic, wrapping integers) atomically, for
// elements of any size: a
// compare-and-swap loop on the word holding the element (itself for 4- and 8-byte elements, the
// aligned 32-bit word around a 1- or 2-byte one).
template <typename T>
__device__ void AtomicCombine(T* p, ScatterMode mode, Calc<T> v) {
  using Word = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned int>;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  Word* word = reinterpret_cast<Word*>(addr & ~uintptr_t{sizeof(Word) - 1});
  const unsigned shift = static_cast<unsigned>(addr & (sizeof(Word) - 1)) * 8;
  Word mask = ~Word{0};
  if constexpr (sizeof(T) < sizeof(Word)) mask = ((Word{1} << (8 * sizeof(T))) - 1) << shift;
  Word old = *word, assumed;
  do {
    assumed = old;
    const Word raw = (assumed & mask) >> shift;
    T cur;
    memcpy(&cur, &raw, sizeof(T));
    cur = LoadElement(&cur);  // a bool as its byte (kernels/convert.h)
    const T next = Convert<T>(ScatterCombine<Calc<T>>(mode, static_cast<Calc<T>>(cur), v));
    Word bits = 0;
    memcpy(&bits, &next, sizeof(T));
    old = atomicCAS(word, assumed, (assumed & ~mask) | (bits << shift));
  } while (assumed != old);
}

// ---- index_select, gather, take: read through checked indices -------------------------------

// A 16-byte chunk of a row (index_select's widest copy).
struct alignas(16) Chunk16 {
  uint64_t lo, hi;
};

template <int kBytes>
using ChunkOf = std::conditional_t<
    kBytes == 16, Chunk16,
    std::conditional_t<kBytes == 8, uint64_t,
                       std::conditional_t<kBytes == 4, uint32_t,
                                          std::conditional_t<kBytes == 2, uint16_t, uint8_t>>>>;

// Contiguous tensors (row_gather.h): a thread per chunk, flat position arithmetic.
template <typename C, typename Pos>
__global__ void RowGatherKernel(RowGather g, const C* __restrict__ self, C* __restrict__ out,
                                const char* __restrict__ index, KernelError* slot) {
  const Pos n = static_cast<Pos>(g.n);
  const Pos step = static_cast<Pos>(gridDim.x) * blockDim.x;
  for (Pos c = static_cast<Pos>(blockIdx.x) * blockDim.x + threadIdx.x; c < n; c += step) {
    const RowGather::Item item = g.Locate(c);
    const int64_t k = g.LoadIndex(index, item.position);
    if (k < 0 || k >= g.self_rows) {
      // Reported by the row's first chunk only: the slot's system-scope atomics once per bad
      // index, not once per chunk of its row.
      if (g.per_element || item.i == 0) ReportBadIndexAt(slot, item.position);
      continue;
    }
    out[c] = self[g.Source(item, k)];
  }
}

template <int kBytes>
void LaunchRowGatherOf(const RowGather& g, const char* self, char* out, const char* index,
                       KernelError* slot, cudaStream_t stream) {
  using C = ChunkOf<kBytes>;
  const auto* s = reinterpret_cast<const C*>(self);
  auto* o = reinterpret_cast<C*>(out);
  if (g.n < (int64_t{1} << 31)) {
    RowGatherKernel<C, uint32_t><<<GridFor(g.n, kThreads), kThreads, 0, stream>>>(g, s, o, index,
                                                                                slot);
  } else {
    RowGatherKernel<C, int64_t><<<GridFor(g.n, kThreads), kThreads, 0, stream>>>(g, s, o, index,
                                                                               slot);
  }
}

void LaunchRowGather(const RowGather& g, const char* self, char* out, const char* index,
                     KernelError* slot, cudaStream_t stream) {
  switch (g.chunk) {
    case 16: return LaunchRowGatherOf<16>(g, self, out, index, slot, stream);
    case 8: return LaunchRowGatherOf<8>(g, self, out, index, slot, stream);
    case 4: return LaunchRowGatherOf<4>(g, self, out, index, slot, stream);
    case 2: return LaunchRowGatherOf<2>(g, self, out, index, slot, stream);
    default: return LaunchRowGatherOf<1>(g, self, out, index, slot, stream);
  }
}

__global__ void IndexSelectKernel(View out, View self, View index, int dim, int64_t limit,
                                  int64_t n, KernelError* slot) {
  int64_t idx[kMaxIndexDims];
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n;
       p += step) {
    const int64_t out_off = Unravel(out, p, idx);
    const int64_t k = LoadIndex(index, idx[dim] * index.strides[0]);
    if (k < 0 || k >= limit) {
      ReportBadIndexAt(slot, idx[dim]);
      continue;
    }
    int64_t off = 0;
    for (int x = 0; x < self.n; ++x) off += (x == dim ? k : idx[x]) * self.strides[x];
    CopyElement(out.data + out_off * out.itemsize, self.data + off * self.itemsize,
                self.itemsize);
  }
}

__global__ void GatherKernel(View out, View self, View index, int dim, int64_t limit, int64_t n,
                             KernelError* slot) {
  int64_t idx[kMaxIndexDims];
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n;
       p += step) {
    const int64_t k = LoadIndex(index, Unravel(index, p, idx));
    if (k < 0 || k >= limit) {  // torch's gather takes no negative indices
      ReportBadIndexAt(slot, p);
      continue;
    }
    int64_t off = 0;
    for (int x = 0; x < self.n; ++x) off += (x == dim ? k : idx[x]) * self.strides[x];
    CopyElement(out.data + RowMajorOffset(out, p) * out.itemsize,
                self.data + off * self.itemsize, self.itemsize);
  }
}

__global__ void TakeKernel(View out, View self, View index, int64_t numel, int64_t n,
                           KernelError* slot) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n;
       p += step) {
    int64_t k = LoadIndex(index, RowMajorOffset(index, p));
    if (k < -numel || k >= numel) {
      ReportBadIndexAt(slot, p);
      continue;
    }
    if (k < 0) k += numel;
    CopyElement(out.data + RowMajorOffset(out, p) * out.itemsize,
                self.data + RowMajorOffset(self, k) * self.itemsize, self.itemsize);
  }
}

// After a checking kernel: the first bad index (at the slot's smallest position) and the size
// it indexes, for the op's message.
__global__ void NameFirstBadIndex(View index, int64_t limit, KernelError* slot) {
  if (slot->code != KernelError::kIndexOutOfRange || slot->position == INT64_MAX) return;
  slot->a = LoadIndex(index, RowMajorOffset(index, slot->position));
  slot->b = limit;
  __threadfence_system();
}

// ---- scatter, put_: every index checked first, then written ---------------------------------

// Reports the indices of `index` (row-major positions [0, n)) outside [0, limit), or outside
// [-limit, limit) where negative indices count from the end (put_).
__global__ void CheckIndices(View index, int64_t limit, bool negative_ok, int64_t n,
                             KernelError* slot) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n;
       p += step) {
    const int64_t k = LoadIndex(index, RowMajorOffset(index, p));
    if (k < (negative_ok ? -limit : 0) || k >= limit) ReportBadIndexAt(slot, p);
  }
}

template <typename T>
__global__ void ScatterKernel(View self, View index, View src, int dim,
                              bool has_value, uint64_t value, ScatterMode mode, int64_t n,
                              const KernelError* slot) {
  if (Failed(slot)) return;
  T fill;
  memcpy(&fill, &value, sizeof(T));
  int64_t idx[kMaxIndexDims];
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n;
       p += step) {
    const int64_t k = LoadIndex(index, Unravel(index, p, idx));
    int64_t off = 0;
    for (int x = 0; x < self.n; ++x) off += (x == dim ? k : idx[x]) * self.strides[x];
    T* dst = reinterpret_cast<T*>(self.data) + off;
    T v = fill;
    if (!has_value) {
      int64_t src_off = 0;
      for (int x = 0; x < src.n; ++x) src_off += idx[x] * src.strides[x];
      v = LoadElement(reinterpret_cast<const T*>(src.data) + src_off);
    }
    if (mode == ScatterMode::kAssign) {
      *dst = v;
    } else {
      AtomicCombine(dst, mode, static_cast<Calc<T>>(v));
    }
  }
}

template <typename T>
__global__ void PutKernel(View self, View index, View source, int64_t numel, bool accumulate,
                          int64_t n, const KernelError* slot) {
  if (Failed(slot)) return;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n;
       p += step) {
    int64_t k = LoadIndex(index, RowMajorOffset(index, p));
    if (k < 0) k += numel;
    T* dst = reinterpret_cast<T*>(self.data) + RowMajorOffset(self, k);
    const T v =
        LoadElement(reinterpret_cast<const T*>(source.data) + RowMajorOffset(source, p));
    if (accumulate) {
      AtomicCombine(dst, ScatterMode::kAdd, static_cast<Calc<T>>(v));
    } else {
      *dst = v;
    }
  }
}

// ---- nonzero, masked_select ---------------------------------------------------------------

// Whether row-major position p is selected: a true mask element, or a nonzero self element.
template <typename T>
__device__ __forceinline__ bool Selected(const View& self, const View& mask, bool has_mask,
                                         int64_t p) {
  if (has_mask) {
    return LoadElement(reinterpret_cast<const bool*>(mask.data + RowMajorOffset(mask, p)));
  }
  const T x =
      LoadElement(reinterpret_cast<const T*>(self.data + RowMajorOffset(self, p) * self.itemsize));
  return static_cast<Calc<T>>(x) != Calc<T>(0);
}

template <typename T>
__global__ void CountSelectedKernel(View self, View mask, bool has_mask, int64_t numel,
                                    int64_t chunks, int64_t* counts) {
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int64_t p = c * kSelectBlock + threadIdx.x;
    const int selected = p < numel && Selected<T>(self, mask, has_mask, p);
    const int total = __syncthreads_count(selected);
    if (threadIdx.x == 0) counts[c] = total;
  }
}

template <typename T>
__global__ void WriteSelectedKernel(View self, View mask, bool has_mask, int64_t numel,
                                    int64_t chunks, const int64_t* starts, int64_t count,
                                    int64_t* indices, char* values) {
  __shared__ int prefix[kSelectBlock];
  int64_t idx[kMaxIndexDims];
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int64_t p = c * kSelectBlock + threadIdx.x;
    const int selected = p < numel && Selected<T>(self, mask, has_mask, p);
    // Inclusive scan of the flags (Hillis-Steele), then this position's place among them.
    prefix[threadIdx.x] = selected;
    __syncthreads();
    for (int s = 1; s < kSelectBlock; s <<= 1) {
      const int add = threadIdx.x >= s ? prefix[threadIdx.x - s] : 0;
      __syncthreads();
      prefix[threadIdx.x] += add;
      __syncthreads();
    }
    if (selected) {
      const int64_t at = starts[c] + prefix[threadIdx.x] - 1;
      if (indices != nullptr) {
        int64_t rest = p;
        for (int d = self.n - 1; d >= 0; --d) {
          idx[d] = rest % self.sizes[d];
          rest /= self.sizes[d];
        }
        for (int d = 0; d < self.n; ++d) indices[d * count + at] = idx[d];
      } else {
        CopyElement(values + at * self.itemsize,
                    self.data + RowMajorOffset(self, p) * self.itemsize, self.itemsize);
      }
    }
    __syncthreads();
  }
}

}  // namespace

cudaError_t LaunchIndexSelect(const Tensor& out, const Tensor& self, int64_t dim,
                              const Tensor& index, KernelError* slot, cudaStream_t stream) {
  const int64_t n = out.numel();
  const int64_t limit = self.dim() == 0 ? 1 : self.size(dim);
  View o = MakeView(out), s = MakeView(self), i = MakeView(index);
  i.strides[0] = index.dim() == 0 ? 0 : index.stride(0);
  if (n == 0) {
    // Nothing to copy (another dim of self is empty), but the indices are checked, as the CPU's.
    const int64_t count = index.numel();
    if (count == 0) return cudaSuccess;
    CheckIndices<<<GridFor(count, kThreads), kThreads, 0, stream>>>(i, limit, false, count, slot);
  } else if (const std::optional<RowGather> rows = MakeRowGather(out, self, dim, index, false)) {
    LaunchRowGather(*rows, self.data(), out.data(), index.data(), slot, stream);
  } else {
    if (self.dim() == 0) o.n = 1, o.sizes[0] = n, o.strides[0] = 1;  // n copies of the one element
    IndexSelectKernel<<<GridFor(n, kThreads), kThreads, 0, stream>>>(o, s, i, static_cast<int>(dim),
                                                                     limit, n, slot);
  }
  NameFirstBadIndex<<<1, 1, 0, stream>>>(i, limit, slot);
  return cudaGetLastError();
}

cudaError_t LaunchGather(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                         KernelError* slot, cudaStream_t stream) {
  const int64_t n = index.numel();
  if (n == 0) return cudaSuccess;
  const int64_t limit = self.dim() == 0 ? 1 : self.size(dim);
  const View i = MakeView(index);
  if (const std::optional<RowGather> rows = MakeRowGather(out, self, dim, index, true)) {
    LaunchRowGather(*rows, self.data(), out.data(), index.data(), slot, stream);
  } else {
    GatherKernel<<<GridFor(n, kThreads), kThreads, 0, stream>>>(MakeView(out), MakeView(self), i,
                                                                static_cast<int>(dim), limit, n,
                                                                slot);
  }
  NameFirstBadIndex<<<1, 1, 0, stream>>>(i, limit, slot);
  return cudaGetLastError();
}

cudaError_t LaunchScatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                          const uint64_t* value, ScatterMode mode, KernelError* slot,
                          cudaStream_t stream) {
  const int64_t n = index.numel();
  if (n == 0) return cudaSuccess;
  const int64_t limit = self.dim() == 0 ? 1 : self.size(dim);
  const View s = MakeView(self), i = MakeView(index);
  const View from = value != nullptr ? i : MakeView(src);
  CheckIndices<<<GridFor(n, kThreads), kThreads, 0, stream>>>(i, limit, false, n, slot);
  NameFirstBadIndex<<<1, 1, 0, stream>>>(i, limit, slot);
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    ScatterKernel<T><<<GridFor(n, kThreads), kThreads, 0, stream>>>(
        s, i, from, static_cast<int>(dim), value != nullptr,
        value != nullptr ? *value : 0, mode, n, slot);
  });
  return cudaGetLastError();
}

cudaError_t LaunchCheckIndexBounds(const Tensor& index, int64_t limit, KernelError* slot,
                                   cudaStream_t stream) {
  const int64_t n = index.numel();
  if (n == 0) return cudaSuccess;
  const View i = MakeView(index);
  CheckIndices<<<GridFor(n, kThreads), kThreads, 0, stream>>>(i, limit, true, n, slot);
  NameFirstBadIndex<<<1, 1, 0, stream>>>(i, limit, slot);
  return cudaGetLastError();
}

cudaError_t LaunchTake(const Tensor& out, const Tensor& self, const Tensor& index,
                       KernelError* slot, cudaStream_t stream) {
  const int64_t n = index.numel();
  if (n == 0) return cudaSuccess;
  const View i = MakeView(index);
  TakeKernel<<<GridFor(n, kThreads), kThreads, 0, stream>>>(MakeView(out), MakeView(self), i, self.numel(),
                                                  n, slot);
  NameFirstBadIndex<<<1, 1, 0, stream>>>(i, self.numel(), slot);
  return cudaGetLastError();
}

cudaError_t LaunchPut(const Tensor& self, const Tensor& index, const Tensor& source,
                      bool accumulate, KernelError* slot, cudaStream_t stream) {
  const int64_t n = index.numel();
  if (n == 0) return cudaSuccess;
  const View s = MakeView(self), i = MakeView(index), src = MakeView(source);
  CheckIndices<<<GridFor(n, kThreads), kThreads, 0, stream>>>(i, self.numel(), true, n, slot);
  NameFirstBadIndex<<<1, 1, 0, stream>>>(i, self.numel(), slot);
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    PutKernel<T><<<GridFor(n, kThreads), kThreads, 0, stream>>>(s, i, src, self.numel(), accumulate, n,
                                                      slot);
  });
  return cudaGetLastError();
}

int64_t SelectBlocks(int64_t numel) { return (numel + kSelectBlock - 1) / kSelectBlock; }

cudaError_t LaunchCountSelected(const Tensor& self, const Tensor* mask, int64_t* block_counts,
                                cudaStream_t stream) {
  const int64_t numel = self.numel(), chunks = SelectBlocks(numel);
  if (chunks == 0) return cudaSuccess;
  const View s = MakeView(self), m = mask != nullptr ? MakeView(*mask) : s;
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    CountSelectedKernel<T><<<GridFor(chunks, 1), kSelectBlock, 0, stream>>>(
        s, m, mask != nullptr, numel, chunks, block_counts);
  });
  return cudaGetLastError();
}

cudaError_t LaunchWriteSelected(const Tensor& self, const Tensor* mask,
                                const int64_t* block_starts, int64_t count, int64_t* indices,
                                char* values, cudaStream_t stream) {
  const int64_t numel = self.numel(), chunks = SelectBlocks(numel);
  if (chunks == 0 || count == 0) return cudaSuccess;
  View s = MakeView(self);
  if (self.dim() == 0) s.n = 0;  // a 0-d tensor's indices have no columns
  const View m = mask != nullptr ? MakeView(*mask) : MakeView(self);
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    WriteSelectedKernel<T><<<GridFor(chunks, 1), kSelectBlock, 0, stream>>>(
        s, m, mask != nullptr, numel, chunks, block_starts, count, indices, values);
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
