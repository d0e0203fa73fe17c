// View ops: metadata-only ops that return tensors sharing the input's storage.
//
// Every op has the same shape: validate -> wrap dims -> compute sizes/strides/offset -> MakeView,
// which runs the validator. Errors and results are PyTorch 1.13's (docs/PYTORCH_SEMANTICS.md);
// messages start with the op name. None of these touch data.
#ifndef TENSORD_ENGINE_VIEWS_VIEW_OPS_H_
#define TENSORD_ENGINE_VIEWS_VIEW_OPS_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

// Ops that return many views refuse to return more than this many (a request could otherwise
// ask for billions of handles).
inline constexpr int64_t kMaxViewOutputs = 1 << 16;

// The one constructor of views: validates (sizes, strides, offset) against self's storage.
absl::StatusOr<Tensor> MakeView(absl::string_view op, const Tensor& self, IntList sizes,
                                IntList strides, int64_t storage_offset);

absl::StatusOr<Tensor> View(const Tensor& self, IntList shape);
// self.view(dtype): the same bytes as `dtype`. With a different element size the last dim
// (stride 1) scales by the ratio of the sizes, as torch's view(dtype).
absl::StatusOr<Tensor> ViewDType(const Tensor& self, DType dtype);
absl::StatusOr<Tensor> ViewAs(const Tensor& self, const Tensor& other);
// The view strides reshape would use, or nullopt when reshape must copy. `shape` may hold a -1.
absl::StatusOr<std::optional<TensorMeta>> ReshapeAsView(const Tensor& self, IntList shape);
absl::StatusOr<Tensor> AsStrided(const Tensor& self, IntList sizes, IntList strides,
                                 std::optional<int64_t> storage_offset);
absl::StatusOr<Tensor> Unflatten(const Tensor& self, int64_t dim, IntList sizes);

absl::StatusOr<Tensor> Transpose(const Tensor& self, int64_t dim0, int64_t dim1);
absl::StatusOr<Tensor> T(const Tensor& self);         // t(): <= 2-d
absl::StatusOr<Tensor> NumpyT(const Tensor& self);    // .T: all dims reversed
absl::StatusOr<Tensor> MatrixH(const Tensor& self);   // .H: 0-d or 2-d (real: as .T)
absl::StatusOr<Tensor> MT(const Tensor& self);        // .mT: last two dims
absl::StatusOr<Tensor> MH(const Tensor& self);        // .mH (real: as .mT)
absl::StatusOr<Tensor> Adjoint(const Tensor& self);   // adjoint() (real: as .mT)
absl::StatusOr<Tensor> Permute(const Tensor& self, IntList dims);
absl::StatusOr<Tensor> Movedim(const Tensor& self, IntList source, IntList destination);

absl::StatusOr<Tensor> Expand(const Tensor& self, IntList sizes);
absl::StatusOr<Tensor> ExpandAs(const Tensor& self, const Tensor& other);
absl::StatusOr<Tensor> BroadcastTo(const Tensor& self, IntList sizes);

absl::StatusOr<Tensor> Squeeze(const Tensor& self);                 // every size-1 dim
absl::StatusOr<Tensor> SqueezeDim(const Tensor& self, int64_t dim);  // dim if its size is 1
absl::StatusOr<Tensor> SqueezeDims(const Tensor& self, IntList dims);
absl::StatusOr<Tensor> Unsqueeze(const Tensor& self, int64_t dim);

absl::StatusOr<Tensor> Narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
absl::StatusOr<Tensor> Select(const Tensor& self, int64_t dim, int64_t index);
// aten::slice: start/end default to 0/INT64_MAX, are wrapped and clamped; step must be > 0.
absl::StatusOr<Tensor> Slice(const Tensor& self, int64_t dim, std::optional<int64_t> start,
                             std::optional<int64_t> end, int64_t step);

// One item of a basic index (Python's int, slice, None and Ellipsis).
struct IndexItem {
  enum class Kind : uint8_t { kInteger, kSlice, kNone, kEllipsis };
  Kind kind = Kind::kNone;
  int64_t integer = 0;
  std::optional<int64_t> start;
  std::optional<int64_t> stop;
  int64_t step = 1;

  static IndexItem Integer(int64_t i) { return {Kind::kInteger, i, {}, {}, 1}; }
  static IndexItem MakeSlice(std::optional<int64_t> start, std::optional<int64_t> stop,
                             int64_t step = 1) {
    return {Kind::kSlice, 0, start, stop, step};
  }
  static IndexItem None() { return {Kind::kNone, 0, {}, {}, 1}; }
  static IndexItem Ellipsis() { return {Kind::kEllipsis, 0, {}, {}, 1}; }
};
// `self[items]` for basic indices, as PyTorch's applySlicing: left to right with a dim cursor.
absl::StatusOr<Tensor> Index(const Tensor& self, absl::Span<const IndexItem> items);

absl::StatusOr<Tensor> Diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2);
absl::StatusOr<Tensor> Unfold(const Tensor& self, int64_t dim, int64_t size, int64_t step);

absl::StatusOr<std::vector<Tensor>> Split(const Tensor& self, int64_t split_size, int64_t dim);
absl::StatusOr<std::vector<Tensor>> SplitWithSizes(const Tensor& self, IntList split_sizes,
                                                   int64_t dim);
absl::StatusOr<std::vector<Tensor>> TensorSplit(const Tensor& self, int64_t sections,
                                                int64_t dim);
absl::StatusOr<std::vector<Tensor>> TensorSplitIndices(const Tensor& self, IntList indices,
                                                       int64_t dim);
absl::StatusOr<std::vector<Tensor>> Chunk(const Tensor& self, int64_t chunks, int64_t dim);
absl::StatusOr<std::vector<Tensor>> Unbind(const Tensor& self, int64_t dim);

absl::StatusOr<Tensor> Alias(const Tensor& self);
absl::StatusOr<Tensor> Detach(const Tensor& self);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_VIEWS_VIEW_OPS_H_
