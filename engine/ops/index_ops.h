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

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_INDEX_OPS_H_
