#include "engine/ops/composition.h"

#include <string>
#include <utility>

#include "engine/core/status_macros.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/factory_ops.h"
#include "engine/runtime/backend.h"

namespace tensord::engine {

Composition::Composition(absl::Span<const Tensor> inputs) {
  for (const Tensor& t : inputs) {
    if (t.defined()) inputs_.insert(t.storage().get());
  }
}

std::vector<Tensor> Composition::Add(PlannedOp step) {
  if (step.kernel) kernels_.push_back(std::move(step.kernel));
  // Only the inputs' storages matter to the executor's ordering: the steps' own outputs are new,
  // and the composed op's outputs are added by Finish.
  for (auto& s : step.reads) {
    if (inputs_.contains(s.get())) reads_.push_back(std::move(s));
  }
  for (auto& s : step.writes) {
    if (inputs_.contains(s.get())) writes_.push_back(std::move(s));
  }
  return std::move(step.outputs);
}

absl::StatusOr<std::vector<Tensor>> Composition::Op(absl::string_view name,
                                                    std::vector<Tensor> inputs,
                                                    const Attrs& attrs) {
  TENSORD_ASSIGN_OR_RETURN(PlannedOp step, PlanStep(name, inputs, attrs));
  return Add(std::move(step));
}

absl::StatusOr<Tensor> Composition::Op1(absl::string_view name, std::vector<Tensor> inputs,
                                        const Attrs& attrs) {
  TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, Op(name, std::move(inputs), attrs));
  return outputs.at(0);
}

PlannedOp Composition::Finish(std::vector<Tensor> outputs) && {
  PlannedOp plan;
  for (const Tensor& t : outputs) {
    if (!inputs_.contains(t.storage().get())) plan.writes.push_back(t.storage());
  }
  plan.outputs = std::move(outputs);
  plan.reads = std::move(reads_);
  for (auto& s : writes_) plan.writes.push_back(std::move(s));
  if (!kernels_.empty()) {
    plan.kernel = [steps = std::move(kernels_)]() mutable -> absl::Status {
      for (auto& step : steps) TENSORD_RETURN_IF_ERROR(step());
      return absl::OkStatus();
    };
  }
  return plan;
}

absl::StatusOr<Tensor> Composition::Contiguous(const Tensor& t) {
  if (!t.defined()) return t;
  TENSORD_ASSIGN_OR_RETURN(PlannedOp step, PlanContiguous(t));
  return Add(std::move(step)).at(0);
}

absl::StatusOr<Tensor> Composition::ToDType(const Tensor& t, DType dtype) {
  if (!t.defined() || t.dtype() == dtype) return t;
  TENSORD_ASSIGN_OR_RETURN(PlannedOp step, PlanToDType(t, dtype));
  return Add(std::move(step)).at(0);
}

absl::StatusOr<Tensor> Composition::Reshape(const Tensor& t, IntList shape) {
  TENSORD_ASSIGN_OR_RETURN(PlannedOp step, PlanReshape(t, shape));
  return Add(std::move(step)).at(0);
}

absl::StatusOr<Tensor> Composition::Arange(const Scalar& start, const Scalar& end,
                                           const Scalar& step, DType dtype,
                                           const Device& device) {
  TENSORD_ASSIGN_OR_RETURN(PlannedOp range, PlanArange(start, end, step, dtype, device));
  return Add(std::move(range)).at(0);
}

absl::StatusOr<Tensor> Composition::Full(IntList shape, const Scalar& value, DType dtype,
                                         const Device& device) {
  TENSORD_ASSIGN_OR_RETURN(PlannedOp full, PlanFull(shape, value, dtype, device));
  return Add(std::move(full)).at(0);
}

absl::Status Composition::CheckValues(ValueCheck check, absl::string_view op, const Tensor& t) {
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(t.device()));
  PlannedOp step;
  step.reads = {t.storage()};
  step.kernel = [backend, check, t, name = std::string(op)]() {
    return backend->CheckValues(check, name, t.sizes(), StridedRef::Of(t));
  };
  Add(std::move(step));
  return absl::OkStatus();
}

}  // namespace tensord::engine
