// Indexing ops that gather elements by integer indices (copies, not views).
#ifndef TENSORD_ENGINE_OPS_INDEX_OPS_H_
#define TENSORD_ENGINE_OPS_INDEX_OPS_H_

#include "absl/status/statusor.h"
#include "engine/ops/planned_op.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

// torch.take: self viewed as 1-d, gathered at `index` (int64; negative indices count from the
// end). The output has index's shape. An index out of range is found by the kernel, while it
// runs: it fails then (IndexError), as on a GPU.
absl::StatusOr<PlannedOp> PlanTake(const Tensor& self, const Tensor& index);

// Tensor.put_(index, source): self viewed as 1-d (in row-major order, whatever its strides)
// gets source's elements at `index` (int64, negative counts from the end; source has as many
// elements as index and self's dtype). Duplicate indices leave one of the written values. An
// index out of range fails the kernel while it runs, which then has written nothing.
// With `accumulate`, source elements are added (repeated indices add up), as index_put_.
absl::StatusOr<PlannedOp> PlanPut(const Tensor& self, const Tensor& index, const Tensor& source,
                                  bool accumulate = false);

// Advanced indexing, torch's index.Tensor: self indexed at dims `dims` (strictly increasing) by
// the int64 tensors `indices` (one per dim, broadcast together to a shape B; negative indices
// count from the end). Where the dims are adjacent, B takes their place in the result; else it
// leads, followed by self's other dims. The clients apply ints, slices, None and Ellipsis as a
// view first, and turn masks into their nonzero() positions, as torch's own indexing does. Each
// index is checked against its dim's size where the kernels run (torch's IndexError); the
// indices then become one offset into self's storage, gathered by one index_select of a view of
// self: no copy of self, on every device.
absl::StatusOr<PlannedOp> PlanIndexTensor(const Tensor& self, absl::Span<const Tensor> indices,
                                          IntList dims);

// torch's index_put_: self[indices at dims] = values (broadcast to the indexing result's shape,
// self's dtype), or += with `accumulate` (repeated indices add up). In place on self.
absl::StatusOr<PlannedOp> PlanIndexPut(const Tensor& self, const Tensor& values,
                                       absl::Span<const Tensor> indices, IntList dims,
                                       bool accumulate);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_INDEX_OPS_H_
