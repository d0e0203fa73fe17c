// Composition: an op planned as a sequence of other ops (linalg.det as an LU factorization, a
// diagonal and a product). Each step is planned at once by its own planner, so every error
// raises when the op is planned; the steps' kernels then run as the op's one kernel, in order,
// on whatever device the inputs are on. Intermediate tensors live as long as that kernel.
#ifndef TENSORD_ENGINE_OPS_COMPOSITION_H_
#define TENSORD_ENGINE_OPS_COMPOSITION_H_

#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/kernels/value_check.h"
#include "engine/ops/op_registry.h"
#include "engine/ops/planned_op.h"

namespace tensord::engine {

class Composition {
 public:
  // `inputs`: the composed op's inputs (their storages are what it reads and may write).
  explicit Composition(absl::Span<const Tensor> inputs);

  // Plans registered op `name` as the next step; returns its outputs.
  absl::StatusOr<std::vector<Tensor>> Op(absl::string_view name, std::vector<Tensor> inputs,
                                         const Attrs& attrs = Attrs());
  // Op for single-output ops.
  absl::StatusOr<Tensor> Op1(absl::string_view name, std::vector<Tensor> inputs,
                             const Attrs& attrs = Attrs());
  // Adds a step the caller planned; returns its outputs.
  std::vector<Tensor> Add(PlannedOp step);
  // `t` contiguous: itself, or a copy made by a step (undefined stays undefined).
  absl::StatusOr<Tensor> Contiguous(const Tensor& t);
  // `t` in `dtype`: itself, or a converted copy made by a step (undefined stays undefined).
  absl::StatusOr<Tensor> ToDType(const Tensor& t, DType dtype);
  // `t` reshaped: a view where the strides allow, else a copy made by a step.
  absl::StatusOr<Tensor> Reshape(const Tensor& t, IntList shape);
  // arange(start, end, step) in `dtype` on `device`, made by a step (index arithmetic of
  // compositions: window starts, gather positions).
  absl::StatusOr<Tensor> Arange(const Scalar& start, const Scalar& end, const Scalar& step,
                                DType dtype, const Device& device);
  // A new tensor of `shape` filled with `value` (zeros, ones, a number made on the device).
  absl::StatusOr<Tensor> Full(IntList shape, const Scalar& value, DType dtype,
                              const Device& device);
  // A step that fails the op where the kernels run if `t`'s values fail `check`
  // (Backend::CheckValues: a q tensor outside [0, 1], a range that is not finite, …).
  absl::Status CheckValues(ValueCheck check, absl::string_view op, const Tensor& t);

  // The composed op, returning `outputs`.
  PlannedOp Finish(std::vector<Tensor> outputs) &&;

 private:
  absl::flat_hash_set<const Storage*> inputs_;
  std::vector<absl::AnyInvocable<absl::Status()>> kernels_;
  std::vector<std::shared_ptr<Storage>> reads_;
  std::vector<std::shared_ptr<Storage>> writes_;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_COMPOSITION_H_
