// Memory-overlap tests between tensors, as PyTorch's MemoryOverlap.cpp: what in-place and out=
// ops check before writing.
#ifndef TENSORD_ENGINE_TENSOR_OVERLAP_H_
#define TENSORD_ENGINE_TENSOR_OVERLAP_H_

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "engine/core/errors.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

enum class Overlap { kNo, kFull, kPartial, kTooHard };

// PyTorch's get_overlap_status (aten/src/ATen/MemoryOverlap.cpp).
inline Overlap GetOverlap(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0) return Overlap::kNo;
  if (!a.is_alias_of(b)) return Overlap::kNo;
  if (!a.meta().is_non_overlapping_and_dense() || !b.meta().is_non_overlapping_and_dense()) {
    return Overlap::kTooHard;
  }
  // Byte offsets in the one storage the two share, not addresses: a storage planned on
  // metadata alone has none (runtime/meta_backend.h).
  const int64_t a_begin = a.storage_offset() * a.itemsize();
  const int64_t a_end = a_begin + a.numel() * a.itemsize();
  const int64_t b_begin = b.storage_offset() * b.itemsize();
  const int64_t b_end = b_begin + b.numel() * b.itemsize();
  if (a_begin == b_begin && a_end == b_end) {
    return std::equal(a.strides().begin(), a.strides().end(), b.strides().begin(),
                      b.strides().end())
               ? Overlap::kFull
               : Overlap::kPartial;
  }
  if (a_begin < b_end && b_begin < a_end) return Overlap::kPartial;
  return Overlap::kNo;
}

// True when some element of `t` is addressed twice through a 0 stride (PyTorch's
// has_internal_overlap == YES).
inline bool HasInternalOverlap(const Tensor& t) {
  if (t.meta().is_non_overlapping_and_dense()) return false;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) == 0 && t.size(d) > 1) return true;
  }
  return false;
}

// Whether the byte ranges `a` and `b` may touch intersect (a conservative extent test).
inline bool ExtentsIntersect(const Tensor& a, const Tensor& b) {
  if (!a.is_alias_of(b) || a.numel() == 0 || b.numel() == 0) return false;
  // Byte offsets in the shared storage (validated metadata: inside it, so no overflow).
  const auto extent = [](const Tensor& t) {
    int64_t last = t.storage_offset();
    for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
    return std::make_pair(t.storage_offset() * t.itemsize(), (last + 1) * t.itemsize());
  };
  auto [a0, a1] = extent(a);
  auto [b0, b1] = extent(b);
  return a0 < b1 && b0 < a1;
}

// torch's assert_no_internal_overlap: `written` addresses no element twice.
inline absl::Status CheckNoInternalOverlap(absl::string_view op, const Tensor& written) {
  if (!HasInternalOverlap(written)) return absl::OkStatus();
  return RuntimeError(op, "unsupported operation: more than one element of the written-to "
                          "tensor refers to a single memory location. Please clone() the "
                          "tensor before performing the operation.");
}

// torch's assert_no_partial_overlap (`full_ok`: elementwise ops and copies, where an input may
// be the output itself) and assert_no_overlap (kernels that read an input while they write:
// scatter, put_).
inline absl::Status CheckNoOverlap(absl::string_view op, const Tensor& written,
                                   const Tensor& read, bool full_ok = false) {
  const Overlap o = GetOverlap(written, read);
  if (o != Overlap::kPartial && (full_ok || o != Overlap::kFull)) return absl::OkStatus();
  return RuntimeError(op, "unsupported operation: some elements of the input tensor and the "
                          "written-to tensor refer to a single memory location. Please clone() "
                          "the tensor before performing the operation.");
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_TENSOR_OVERLAP_H_
