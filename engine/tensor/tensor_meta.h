// TensorMeta: how a tensor reads its storage.
#ifndef TENSORD_ENGINE_TENSOR_TENSOR_META_H_
#define TENSORD_ENGINE_TENSOR_TENSOR_META_H_

#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/core/dtype.h"

namespace tensord::engine {

// The largest rank any tensor may have (PyTorch's dim bitsets hold 64 dims too).
inline constexpr int64_t kMaxRank = 64;

using IntList = absl::Span<const int64_t>;
using DimVector = absl::InlinedVector<int64_t, 6>;

// Sizes, strides and storage offset of a strided tensor, plus its dtype.
//
// WARNING: strides and the storage offset are in elements, NOT in bytes — as in PyTorch.
// Strides are exactly PyTorch's: size-1 dims keep whatever stride they were given.
//
// An immutable value. Sizes and strides live in one buffer of one length, so they cannot drift
// apart. numel and contiguity are computed once, at construction. A TensorMeta built from
// request data is meaningful only after ValidateMeta() accepted it; every op output goes through
// the validator before it becomes a tensor.
class TensorMeta {
 public:
  // A 0-d float32 tensor at offset 0.
  TensorMeta() : TensorMeta(DType::kFloat32, {}, {}, 0) {}
  // NB: sizes.size() must equal strides.size() (an internal invariant, asserted).
  TensorMeta(DType dtype, IntList sizes, IntList strides, int64_t storage_offset);
  // Row-major strides for `sizes` (which must be non-negative and not overflow).
  static TensorMeta Contiguous(DType dtype, IntList sizes, int64_t storage_offset = 0);

  DType dtype() const { return dtype_; }
  int64_t itemsize() const { return ItemSize(dtype_); }
  int64_t dim() const { return static_cast<int64_t>(buffer_.size() / 2); }
  IntList sizes() const { return IntList(buffer_.data(), buffer_.size() / 2); }
  IntList strides() const { return IntList(buffer_.data() + dim(), buffer_.size() / 2); }
  int64_t size(int64_t d) const { return buffer_[d]; }
  int64_t stride(int64_t d) const { return buffer_[dim() + d]; }
  int64_t storage_offset() const { return storage_offset_; }  // NB: elements, not bytes

  // Number of elements; -1 if the product of sizes overflows (such a meta never validates).
  int64_t numel() const { return numel_; }
  // PyTorch's is_contiguous(): size-1 dims are ignored; 0-d and empty tensors are contiguous.
  bool is_contiguous() const { return contiguous_; }
  // PyTorch's is_non_overlapping_and_dense(): some permutation of the dims is contiguous.
  bool is_non_overlapping_and_dense() const;

  // Same sizes/strides/offset/dtype.
  friend bool operator==(const TensorMeta& a, const TensorMeta& b) {
    return a.dtype_ == b.dtype_ && a.storage_offset_ == b.storage_offset_ &&
           a.buffer_ == b.buffer_;
  }
  std::string DebugString() const;

 private:
  absl::InlinedVector<int64_t, 12> buffer_;  // sizes, then strides
  int64_t storage_offset_ = 0;
  int64_t numel_ = 1;
  DType dtype_ = DType::kFloat32;
  bool contiguous_ = true;
};

// Row-major strides for `sizes`: st[i] = prod_{j>i} max(sz[j], 1). Sizes must be validated.
DimVector ContiguousStrides(IntList sizes);
// PyTorch's is_contiguous() rule for `numel` elements of `sizes` laid out with `strides`:
// row-major and dense, size-1 dims' strides ignored, empty layouts contiguous.
bool IsContiguousLayout(IntList sizes, IntList strides, int64_t numel);

// Checks that `sizes` is a valid tensor shape for `op`: rank within kMaxRank, no negative size,
// and a numel that fits in int64. Returns the numel.
absl::StatusOr<int64_t> CheckShape(absl::string_view op, IntList sizes);

// The validator. Proves that `meta` addresses only bytes inside a storage of `storage_nbytes`:
// rank <= kMaxRank, sizes/strides/offset >= 0, numel representable, and, when numel > 0,
// (offset + sum((size_i - 1) * stride_i) + 1) * itemsize <= storage_nbytes — all overflow-checked.
// Errors are INVALID_ARGUMENT naming `op` and the values.
absl::Status ValidateMeta(absl::string_view op, const TensorMeta& meta, int64_t storage_nbytes);

// Bytes a storage must hold for `meta` (0 when numel == 0). Overflow-checked.
absl::StatusOr<int64_t> RequiredStorageBytes(absl::string_view op, const TensorMeta& meta);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_TENSOR_TENSOR_META_H_
