// OpProfile: what a profiling session records of each op it queues (the Profile RPC; the data
// torch.profiler's tables and traces are made of).
#ifndef TENSORD_SERVER_PROFILE_H_
#define TENSORD_SERVER_PROFILE_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "engine/ops/planned_op.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/memory_budget.h"
#include "engine/tensor/tensor.h"
#include "tensord/v1/tensord.pb.h"

namespace tensord::server {

// What one recorded op is charged at least (its message, each op its own size), and how much
// room is charged at a time.
inline constexpr int64_t kProfiledOpBytes = 256;
inline constexpr int64_t kProfiledBytesPerCharge = 1024 * kProfiledOpBytes;

// Ops are added in queue order by the session (under its lock); their kernels report when they
// ran from the stream's worker threads. Thread-safe. Holds at most max_ops ops and an answer
// of at most max_bytes, and its memory (each op's size in memory, at least kProfiledOpBytes,
// taken in blocks) is charged to the session's host budget: ops past any of these limits are
// counted as dropped, never refused, so a profile left on cannot grow without bound, outgrow
// its answer, nor make an op fail.
class OpProfile : public std::enable_shared_from_this<OpProfile> {
 public:
  // `max_bytes`: the most its answer may hold (the largest gRPC message, less a margin).
  OpProfile(bool record_shapes, int64_t max_ops, std::shared_ptr<engine::MemoryBudget> budget,
            int64_t max_bytes = int64_t{1} << 62);
  ~OpProfile();
  OpProfile(const OpProfile&) = delete;
  OpProfile& operator=(const OpProfile&) = delete;

  // Records op `name` as queued now, with its inputs and planned outputs; for an op with a
  // kernel, wraps plan.kernel so that it reports when it ran. `op_id`: the session's number
  // of an op with a kernel (0 for one without); `first_output`: the client's id of its first
  // output (0: none), by which a client finds its own record of the op.
  void Add(absl::string_view name, uint64_t op_id, uint64_t stream, uint64_t first_output,
           absl::Span<const engine::Tensor> inputs, engine::PlannedOp& plan);
  // The op just added was not queued after all (its stream refused it): forgotten.
  void ForgetLast();

  // What was recorded, in queue order, and how many ops were dropped; the profile records
  // nothing more after it (kernels still queued report to it in vain).
  void Collect(v1::ProfileResponse* response);

 private:
  int64_t Now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now() - start_)
        .count();
  }
  // Marks around a kernel's launch on one device lane (DeviceLane::Mark).
  struct DeviceSpan {
    std::unique_ptr<engine::LaneMark> before, after;
  };
  void Ran(int64_t index, int64_t start_ns, int64_t end_ns, bool failed,
           std::vector<DeviceSpan> spans);

  const bool record_shapes_;
  const int64_t max_ops_;
  const int64_t max_bytes_;
  const std::shared_ptr<engine::MemoryBudget> budget_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  absl::Mutex mu_;
  // A deque: references to recorded ops stay valid as more are added.
  std::deque<v1::ProfiledOp> ops_ ABSL_GUARDED_BY(mu_);
  // The device marks of the ops whose kernels launched on a lane that times its work: their
  // device times are read when the profile is collected (the work has run by then).
  std::vector<std::pair<int64_t, std::vector<DeviceSpan>>> spans_ ABSL_GUARDED_BY(mu_);
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  bool collected_ ABSL_GUARDED_BY(mu_) = false;
  int64_t charged_ ABSL_GUARDED_BY(mu_) = 0;    // bytes charged to budget_
  int64_t used_ ABSL_GUARDED_BY(mu_) = 0;       // of which the ops hold
  int64_t wire_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // their answer's size
  // The last op added, while ForgetLast may still take it back: its (used, wire) sizes.
  std::optional<std::pair<int64_t, int64_t>> last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_PROFILE_H_
