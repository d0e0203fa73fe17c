// PlannedOp: an op whose outputs exist (metadata computed, storage allocated) but whose kernel
// may not have run yet.
//
// Every op is planned synchronously: validation and output metadata happen at once, so errors
// come back immediately. The kernel runs either right away (the synchronous engine API) or later,
// in stream order, on the executor. View ops have no kernel.
#ifndef TENSORD_ENGINE_OPS_PLANNED_OP_H_
#define TENSORD_ENGINE_OPS_PLANNED_OP_H_

#include <memory>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

struct PlannedOp {
  std::vector<Tensor> outputs;
  // Fills the outputs / writes in place. Holds references to every storage it touches, so they
  // outlive it even if every handle is released first. Empty for view ops.
  absl::AnyInvocable<absl::Status()> kernel;
  // Storages the kernel reads and writes (outputs and in-place targets): the executor orders
  // work and propagates failures by them.
  std::vector<std::shared_ptr<Storage>> reads;
  std::vector<std::shared_ptr<Storage>> writes;
  // Queued on a stream, the op occupies it this long before its kernel runs, holding no thread
  // (the CPU's _sleep: as a long GPU kernel holds no CPU).
  absl::Duration hold = absl::ZeroDuration();

  bool has_kernel() const { return static_cast<bool>(kernel); }
};

// A view op's plan: outputs only.
inline PlannedOp ViewPlan(std::vector<Tensor> outputs) {
  PlannedOp op;
  op.outputs = std::move(outputs);
  return op;
}

// Runs the kernel now and returns the outputs.
absl::StatusOr<std::vector<Tensor>> RunNow(absl::StatusOr<PlannedOp> planned);
// RunNow for single-output ops.
absl::StatusOr<Tensor> RunNowSingle(absl::StatusOr<PlannedOp> planned);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_PLANNED_OP_H_
