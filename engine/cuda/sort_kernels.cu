#include "engine/cuda/sort_kernels.h"

#include <cub/device/device_merge_sort.cuh>

#include "engine/cuda/grid.h"
#include "engine/cuda/indexing_kernels.h"
#include "engine/kernels/element_math.h"

namespace tensord::engine::cuda {
namespace {

constexpr int kThreads = 256;

// The slices of a tensor along `dim` and where each starts in self, values and indices.
struct SliceGeometry {
  int nd = 0;  // dims other than `dim`
  int64_t sizes[kMaxIndexDims];
  int64_t in_strides[kMaxIndexDims];
  int64_t v_strides[kMaxIndexDims];
  int64_t i_strides[kMaxIndexDims];
  int64_t n = 1;  // elements along dim
  int64_t in_step = 1, v_step = 1, i_step = 1;

  __host__ __device__ int64_t InOffset(int64_t s) const {
    int64_t off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (s % sizes[d]) * in_strides[d];
      s /= sizes[d];
    }
    return off;
  }
  __host__ __device__ void OutOffsets(int64_t s, int64_t* v, int64_t* ix) const {
    *v = 0;
    *ix = 0;
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t i = s % sizes[d];
      s /= sizes[d];
      *v += i * v_strides[d];
      *ix += i * i_strides[d];
    }
  }
};

SliceGeometry MakeGeometry(const Tensor& self, int64_t dim, const Tensor* values,
                           const Tensor* indices) {
  SliceGeometry g;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == dim) continue;
    g.sizes[g.nd] = self.size(d);
    g.in_strides[g.nd] = self.stride(d);
    g.v_strides[g.nd] = values != nullptr ? values->stride(d) : 0;
    g.i_strides[g.nd] = indices != nullptr ? indices->stride(d) : 0;
    ++g.nd;
  }
  if (self.dim() > 0) {
    g.n = self.size(dim);
    g.in_step = self.stride(dim);
    if (values != nullptr) g.v_step = values->stride(dim);
    if (indices != nullptr) g.i_step = indices->stride(dim);
  }
  return g;
}

// Orders element positions p = slice * n + i: by slice, then by value (NaN above every number;
// reversed when descending), then by position.
template <typename T>
struct ByValue {
  const T* in;
  SliceGeometry g;
  bool descending;

  __device__ bool operator()(const int64_t& p, const int64_t& q) const {
    const int64_t sp = p / g.n, sq = q / g.n;
    if (sp != sq) return sp < sq;
    using C = Calc<T>;
    // A bool as its byte (kernels/convert.h): the order must be a strict weak order.
    const C a = LoadCalc(in + g.InOffset(sp) + (p % g.n) * g.in_step);
    const C b = LoadCalc(in + g.InOffset(sq) + (q % g.n) * g.in_step);
    const bool a_nan = a != a, b_nan = b != b;
    const bool before = descending ? (!b_nan && (a_nan || a > b)) : (!a_nan && (b_nan || a < b));
    if (before) return true;
    const bool after = descending ? (!a_nan && (b_nan || b > a)) : (!b_nan && (a_nan || b < a));
    if (after) return false;
    return p < q;
  }
};

__global__ void Positions(int64_t* p, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{blockDim.x} * gridDim.x) {
    p[i] = i;
  }
}

template <typename T>
__global__ void WriteFirstK(const T* in, T* values, int64_t* indices, const int64_t* sorted,
                            SliceGeometry g, int64_t k, int64_t total) {
  for (int64_t r = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; r < total;
       r += int64_t{blockDim.x} * gridDim.x) {
    const int64_t s = r / k, j = r % k;
    const int64_t i = sorted[s * g.n + j] % g.n;
    int64_t v_off, i_off;
    g.OutOffsets(s, &v_off, &i_off);
    values[v_off + j * g.v_step] = LoadElement(in + g.InOffset(s) + i * g.in_step);
    indices[i_off + j * g.i_step] = i;
  }
}

size_t Align(size_t bytes) { return (bytes + 255) / 256 * 256; }

template <typename T, typename O>
__global__ void SearchSortedKernel(SearchSortedCall c, const T* seq, const T* values, O* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < c.count;
       i += step) {
    const T* row = c.one_row ? seq : seq + (i / c.per_row) * c.length;
    out[i] = static_cast<O>(
        SearchPosition<Calc<T>>(row, c.length, LoadCalc(values + i),
                                c.right));
  }
}

}  // namespace

size_t SortScratchBytes(const Tensor& self) {
  const int64_t total = self.numel();
  size_t temp = 0;
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    ByValue<T> order{nullptr, SliceGeometry(), false};
    (void)cub::DeviceMergeSort::SortKeys(nullptr, temp, static_cast<int64_t*>(nullptr), total,
                                         order);
  });
  return Align(static_cast<size_t>(total) * sizeof(int64_t)) + Align(temp);
}

cudaError_t LaunchSortSlices(const Tensor& self, int64_t dim, int64_t k, bool descending,
                             const Tensor& values, const Tensor& indices, void* scratch,
                             size_t scratch_bytes, cudaStream_t stream) {
  const int64_t total = self.numel();
  const SliceGeometry g = MakeGeometry(self, dim, &values, &indices);
  const int64_t slices = total / g.n;
  int64_t* positions = static_cast<int64_t*>(scratch);
  const size_t positions_bytes = Align(static_cast<size_t>(total) * sizeof(int64_t));
  void* temp = static_cast<char*>(scratch) + positions_bytes;
  size_t temp_bytes = scratch_bytes - positions_bytes;
  Positions<<<GridFor(total, kThreads), kThreads, 0, stream>>>(positions, total);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* in = reinterpret_cast<const T*>(self.data());
    e = cub::DeviceMergeSort::SortKeys(temp, temp_bytes, positions, total,
                                       ByValue<T>{in, g, descending}, stream);
    if (e != cudaSuccess) return;
    const int64_t out = slices * k;
    WriteFirstK<T><<<GridFor(out, kThreads), kThreads, 0, stream>>>(
        in, reinterpret_cast<T*>(values.data()), reinterpret_cast<int64_t*>(indices.data()),
        positions, g, k, out);
    e = cudaGetLastError();
  });
  return e;
}

cudaError_t LaunchSearchSorted(const SearchSortedCall& call, cudaStream_t stream) {
  DispatchDType(call.dtype, [&](auto t) {
    using T = decltype(t);
    const T* seq = reinterpret_cast<const T*>(call.sequence);
    const T* values = reinterpret_cast<const T*>(call.values);
    if (call.out_dtype == DType::kInt32) {
      SearchSortedKernel<T><<<GridFor(call.count, kThreads), kThreads, 0, stream>>>(
          call, seq, values, reinterpret_cast<int32_t*>(call.out));
    } else {
      SearchSortedKernel<T><<<GridFor(call.count, kThreads), kThreads, 0, stream>>>(
          call, seq, values, reinterpret_cast<int64_t*>(call.out));
    }
  });
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
