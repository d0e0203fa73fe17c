// RowGather: index_select and gather over contiguous tensors as copies of whole rows (or of
// single elements, for gather), with the position arithmetic of a flat index instead of a
// per-element unravelling over every dim. Plain data and host/device code, so that the host
// tests (tests/engine/row_gather_test.cc) run the very mapping the CUDA kernel runs.
//
// The tensors seen as [outer, rows, inner] around `dim`: out[o, j, i] = self[o, k, i] with
// k = index[j] (index_select: one index per row, the row copied in chunks of up to 16 bytes)
// or k = index[o, j, i] (gather: one index per element, a chunk is one element).
#ifndef TENSORD_ENGINE_CUDA_ROW_GATHER_H_
#define TENSORD_ENGINE_CUDA_ROW_GATHER_H_

#include <cstdint>
#include <cstring>
#include <optional>

#include "engine/core/host_device.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine::cuda {

struct RowGather {
  int64_t n = 0;             // chunks of out: the work items
  int64_t inner = 1;         // chunks per [o, j] row
  int64_t rows = 1;          // out's size along dim
  int64_t self_rows = 1;     // self's size along dim: indices are in [0, self_rows)
  int64_t index_stride = 0;  // elements between consecutive index positions
  bool per_element = false;  // gather: an index per chunk; index_select: one per row j
  int index_itemsize = 8;    // int64 or int32 indices
  int chunk = 1;             // bytes per work item: 1, 2, 4, 8 or 16

  // Work item c as [o, j, i], and the index position it reads (the position an error names).
  struct Item {
    int64_t position, o, i;
  };
  // Two divisions per item. Pos: uint32_t where n < 2^31 (a GPU divides 32-bit numbers far
  // faster), else int64_t.
  template <typename Pos>
  TENSORD_HD Item Locate(Pos c) const {
    const Pos q = c / static_cast<Pos>(inner), o = q / static_cast<Pos>(rows);
    const Pos j = q - o * static_cast<Pos>(rows), i = c - q * static_cast<Pos>(inner);
    return {static_cast<int64_t>(per_element ? c : j), static_cast<int64_t>(o),
            static_cast<int64_t>(i)};
  }
  // The chunk of self that item copies for index value k.
  TENSORD_HD int64_t Source(const Item& item, int64_t k) const {
    return (item.o * self_rows + k) * inner + item.i;
  }
  TENSORD_HD int64_t LoadIndex(const char* index, int64_t position) const {
    const char* p = index + position * index_stride * index_itemsize;
    if (index_itemsize == 4) {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    int64_t v;
    memcpy(&v, p, 8);
    return v;
  }
};

// The RowGather of out = index_select(self, dim, index) or gather(self, dim, index), or none
// where the tensors are not laid out for it (then the general kernels run): out and self
// contiguous of one dtype, self of at least one dim; index_select's index of at most one dim;
// gather's index contiguous, out's shape, and self's sizes but along dim.
inline std::optional<RowGather> MakeRowGather(const Tensor& out, const Tensor& self, int64_t dim,
                                              const Tensor& index, bool gather) {
  if (self.dim() == 0 || out.dim() != self.dim() || dim < 0 || dim >= self.dim() ||
      out.dtype() != self.dtype() || !out.is_contiguous() || !self.is_contiguous()) {
    return std::nullopt;
  }
  // Integer indices only (the planners refuse others; a float of the same width would be read
  // as an integer here).
  if (index.dtype() != DType::kInt32 && index.dtype() != DType::kInt64) return std::nullopt;
  RowGather g;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == dim) continue;
    if (out.size(d) != self.size(d)) return std::nullopt;
    (d < dim ? outer : inner) *= self.size(d);
  }
  g.rows = out.size(dim);
  g.self_rows = self.size(dim);
  g.index_itemsize = static_cast<int>(index.itemsize());
  const int64_t itemsize = self.itemsize();
  if (gather) {
    if (!index.is_contiguous() || index.dim() != out.dim()) return std::nullopt;
    for (int64_t d = 0; d < out.dim(); ++d) {
      if (index.size(d) != out.size(d)) return std::nullopt;
    }
    g.per_element = true;
    g.index_stride = 1;
    g.chunk = static_cast<int>(itemsize);
    g.inner = inner;
  } else {
    if (index.dim() > 1 || index.numel() != g.rows) return std::nullopt;
    g.index_stride = index.dim() == 0 ? 0 : index.stride(0);
    // The widest chunk that divides a row's bytes and keeps both tensors' rows aligned.
    const int64_t row_bytes = inner * itemsize;
    const auto base_self = reinterpret_cast<uintptr_t>(self.data());
    const auto base_out = reinterpret_cast<uintptr_t>(out.data());
    int chunk = 16;
    while (chunk > itemsize &&
           (row_bytes % chunk != 0 || base_self % chunk != 0 || base_out % chunk != 0)) {
      chunk /= 2;
    }
    if (chunk < itemsize) chunk = static_cast<int>(itemsize);
    g.chunk = chunk;
    g.inner = row_bytes / chunk;
  }
  g.n = outer * g.rows * g.inner;
  return g;
}

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_ROW_GATHER_H_
