// Shape arithmetic shared by view ops and compute ops (PyTorch's rules, overflow-checked).
#ifndef TENSORD_ENGINE_TENSOR_SHAPE_UTIL_H_
#define TENSORD_ENGINE_TENSOR_SHAPE_UTIL_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/tensor/tensor_meta.h"

namespace tensord::engine {

// maybe_wrap_dim: maps dim in [-ndim, ndim) to [0, ndim). A 0-d tensor is treated as 1-d
// (PyTorch's wrap_scalar). Out of range: IndexError naming `op`.
absl::StatusOr<int64_t> WrapDim(absl::string_view op, int64_t dim, int64_t ndim);
// The same for the ops that index a dim of the tensor itself (maybe_wrap_dim with wrap_scalar
// false: roll, cross, unique's dim): a 0-d tensor has none, torch's IndexError "Dimension
// specified as D but tensor has no dimensions".
absl::StatusOr<int64_t> WrapDimNoScalar(absl::string_view op, int64_t dim, int64_t ndim);

// infer_size: resolves at most one -1 in `shape` so that the product equals `numel`.
absl::StatusOr<DimVector> InferSize(absl::string_view op, IntList shape, int64_t numel);

// computeStride (aten/src/ATen/TensorUtils.cpp, 1.13): strides that let a tensor with
// `old_sizes`/`old_strides` be viewed as `new_sizes` without copying, or nullopt if no such
// strides exist. `new_sizes` must have the same numel. Overflow of a computed stride is an error.
absl::StatusOr<std::optional<DimVector>> ComputeViewStrides(absl::string_view op,
                                                            IntList old_sizes,
                                                            IntList old_strides,
                                                            IntList new_sizes);

// Broadcast shape of two shapes (PyTorch's infer_size for broadcasting).
absl::StatusOr<DimVector> BroadcastShapes(absl::string_view op, IntList a, IntList b);

// TensorIterator's dim order (reorder_dimensions): the dims innermost first, sorted by the
// operands' strides (one list per operand, broadcast to `sizes`; a 0 stride says nothing, equal
// strides put the smaller dim first, and a pair no operand orders keeps its place). The one
// stride-ordering routine: output layouts of elementwise ops and dense layouts of copies use it.
DimVector StrideOrder(IntList sizes, absl::Span<const DimVector> operand_strides);

// PyTorch's infer_dense_strides: dense strides that keep the dim order of `strides`
// (the layout clone() and empty_like() give to non-dense inputs).
DimVector InferDenseStrides(IntList sizes, IntList strides);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_TENSOR_SHAPE_UTIL_H_
