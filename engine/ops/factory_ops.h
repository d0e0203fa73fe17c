// Ops that create tensors on a fresh storage.
#ifndef TENSORD_ENGINE_OPS_FACTORY_OPS_H_
#define TENSORD_ENGINE_OPS_FACTORY_OPS_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/core/device.h"
#include "engine/ops/planned_op.h"
#include "engine/core/scalar.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

// A tensor with `meta`'s layout on a new storage just big enough for it. NB: the bytes are NOT
// initialised — for ops whose kernel overwrites every element. RESOURCE_EXHAUSTED when memory
// runs out.
absl::StatusOr<Tensor> AllocateTensor(absl::string_view op, const TensorMeta& meta,
                                      Device device = kCpu);

// torch.empty_strided. Unlike PyTorch, "empty" memory is zero-filled: pooled buffers are reused
// across sessions, and no session may ever read another's data. torch.empty is
// PlanEmptyStrided with contiguous strides.
absl::StatusOr<PlannedOp> PlanEmpty(IntList sizes, DType dtype, Device device = kCpu);
absl::StatusOr<PlannedOp> PlanEmptyStrided(IntList sizes, IntList strides, DType dtype,
                                           Device device = kCpu);
// torch.empty_like(memory_format=preserve): self's strides when self is non-overlapping and
// dense, otherwise dense strides in self's dim order.
absl::StatusOr<PlannedOp> PlanEmptyLike(const Tensor& self);
// torch.full: dtype defaults to the value's (bool, int64 or float32). zeros/ones are full.
absl::StatusOr<PlannedOp> PlanFull(IntList sizes, const Scalar& value, std::optional<DType> dtype,
                                   Device device = kCpu);
// torch.arange(start, end, step): dtype defaults to int64, or float32 if any argument is a
// float. Negative and fractional steps work as in PyTorch.
absl::StatusOr<PlannedOp> PlanArange(const Scalar& start, const Scalar& end, const Scalar& step,
                                     std::optional<DType> dtype, Device device = kCpu);

// Synchronous forms.
absl::StatusOr<Tensor> Empty(IntList sizes, DType dtype, Device device = kCpu);
absl::StatusOr<Tensor> EmptyStrided(IntList sizes, IntList strides, DType dtype,
                                    Device device = kCpu);
absl::StatusOr<Tensor> EmptyLike(const Tensor& self);
absl::StatusOr<Tensor> Zeros(IntList sizes, DType dtype, Device device = kCpu);
absl::StatusOr<Tensor> Ones(IntList sizes, DType dtype, Device device = kCpu);
absl::StatusOr<Tensor> Full(IntList sizes, const Scalar& value, std::optional<DType> dtype,
                            Device device = kCpu);
absl::StatusOr<Tensor> Arange(const Scalar& start, const Scalar& end, const Scalar& step,
                              std::optional<DType> dtype, Device device = kCpu);
// A contiguous CPU tensor holding `bytes` (exactly numel * itemsize of them, native order).
absl::StatusOr<Tensor> FromBytes(IntList sizes, DType dtype, absl::string_view bytes);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_FACTORY_OPS_H_
