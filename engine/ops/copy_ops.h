// Data ops that move or write elements: copies, fills and the sometimes-copying reshapes.
// Each has a Plan form (outputs now, kernel later) and a synchronous form.
#ifndef TENSORD_ENGINE_OPS_COPY_OPS_H_
#define TENSORD_ENGINE_OPS_COPY_OPS_H_

#include <optional>

#include "absl/status/statusor.h"
#include "engine/core/device.h"
#include "engine/ops/planned_op.h"
#include "engine/core/scalar.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

// The layout of a copy of `meta` with memory_format=preserve, in `dtype`: meta's strides if
// non-overlapping and dense, else dense strides in meta's dim order (PyTorch's empty_like rule).
TensorMeta PreservedLayout(const TensorMeta& meta, DType dtype);

// self if already contiguous (the same tensor, strides untouched), else a contiguous copy.
absl::StatusOr<PlannedOp> PlanContiguous(const Tensor& self);
// A copy with memory_format=preserve: self's strides if non-overlapping and dense, else dense
// strides in self's dim order (PyTorch's rule).
absl::StatusOr<PlannedOp> PlanClone(const Tensor& self);
// A contiguous copy (clone(memory_format=torch.contiguous_format)).
absl::StatusOr<PlannedOp> PlanCloneContiguous(const Tensor& self);
// self.to(device, dtype): self when both already match (an unset one matches), else a clone on
// `device` converted to `dtype`, with clone()'s layout rule.
absl::StatusOr<PlannedOp> PlanTo(const Tensor& self, std::optional<DType> dtype,
                                 std::optional<Device> device);
// self.to(dtype).
absl::StatusOr<PlannedOp> PlanToDType(const Tensor& self, DType dtype);
// self.copy_(src): src broadcast to self's shape and converted to self's dtype, written through
// self's view; src may live on another device. Errors: shapes that do not broadcast, self with internal overlap (expanded), src
// partially overlapping self. Output: self.
absl::StatusOr<PlannedOp> PlanCopyInto(const Tensor& self, const Tensor& src);
// self.fill_(value) / self.zero_(). Output: self.
absl::StatusOr<PlannedOp> PlanFill(const Tensor& self, const Scalar& value);
// torch.flip: a copy with the elements of `dims` reversed (layout as clone()).
absl::StatusOr<PlannedOp> PlanFlip(const Tensor& self, IntList dims);
// Tensor.repeat: a contiguous copy tiled `repeats` times (len(repeats) >= dim()).
absl::StatusOr<PlannedOp> PlanRepeat(const Tensor& self, IntList repeats);
// reshape: a view when the strides allow (as view), else a contiguous copy.
absl::StatusOr<PlannedOp> PlanReshape(const Tensor& self, IntList shape);
// flatten(start_dim, end_dim): 0-d -> reshape({1}); start == end -> self; else reshape.
absl::StatusOr<PlannedOp> PlanFlatten(const Tensor& self, int64_t start_dim, int64_t end_dim);

// Synchronous forms.
absl::StatusOr<Tensor> Contiguous(const Tensor& self);
absl::StatusOr<Tensor> Clone(const Tensor& self);
absl::StatusOr<Tensor> CloneContiguous(const Tensor& self);
absl::StatusOr<Tensor> ToDType(const Tensor& self, DType dtype);
absl::Status CopyInto(const Tensor& self, const Tensor& src);
absl::Status FillInto(const Tensor& self, const Scalar& value);
absl::Status ZeroInto(const Tensor& self);
absl::StatusOr<Tensor> Flip(const Tensor& self, IntList dims);
absl::StatusOr<Tensor> Repeat(const Tensor& self, IntList repeats);
absl::StatusOr<Tensor> Reshape(const Tensor& self, IntList shape);
absl::StatusOr<Tensor> ReshapeAs(const Tensor& self, const Tensor& other);
absl::StatusOr<Tensor> Flatten(const Tensor& self, int64_t start_dim, int64_t end_dim);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_COPY_OPS_H_
