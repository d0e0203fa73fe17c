#include "engine/ops/planned_op.h"

namespace tensord::engine {

absl::StatusOr<std::vector<Tensor>> RunNow(absl::StatusOr<PlannedOp> planned) {
  if (!planned.ok()) return planned.status();
  if (planned->kernel) {
    absl::Status status = planned->kernel();
    if (!status.ok()) return status;
  }
  return std::move(planned->outputs);
}

absl::StatusOr<Tensor> RunNowSingle(absl::StatusOr<PlannedOp> planned) {
  absl::StatusOr<std::vector<Tensor>> outputs = RunNow(std::move(planned));
  if (!outputs.ok()) return outputs.status();
  return std::move(outputs->front());
}

}  // namespace tensord::engine
