// Stream: an ordered queue of work on one device (a worker queue on the CPU; on a GPU the
// same interface fronts a cudaStream_t).
#ifndef TENSORD_ENGINE_RUNTIME_STREAM_H_
#define TENSORD_ENGINE_RUNTIME_STREAM_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/container/flat_hash_map.h"
#include "engine/runtime/event.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/executor.h"
#include "engine/ops/planned_op.h"
#include "engine/tensor/storage.h"

namespace tensord::engine {

// One unit of queued work: a kernel (or none, for markers), the storages it reads and writes,
// and optionally an event to wait for before it or to complete after it.
struct StreamTask {
  std::string label;  // "op 12 (mul)": names the op in errors
  absl::AnyInvocable<absl::Status()> kernel;
  std::vector<std::shared_ptr<Storage>> reads;
  std::vector<std::shared_ptr<Storage>> writes;
  std::shared_ptr<Event> wait_event;  // wait for generation wait_generation first
  uint64_t wait_generation = 0;
  std::shared_ptr<Event> record_event;  // complete generation record_generation after
  uint64_t record_generation = 0;
  // Occupies the stream this long before the kernel runs (PlannedOp::hold); the stream parks,
  // holding no thread, until `hold_until`.
  absl::Duration hold = absl::ZeroDuration();
  absl::Time hold_until = absl::InfinitePast();
  // Runs on the worker after the task, with its status.
  absl::AnyInvocable<void(const absl::Status&)> on_done;
  bool is_marker = false;  // markers do not count against the queue limit

  std::vector<uint64_t> write_tickets;  // set by Stream::Enqueue
  uint64_t seq = 0;                     // its place in the stream's order (Stream::Enqueue)
};

// Makes a task from a planned op (its kernel and storages).
StreamTask TaskFromPlan(std::string label, PlannedOp& plan);

// Runs its tasks one at a time, in the order they were queued, on an executor's threads; while
// the head task waits (for an event, or for a host read of a storage it writes) the stream
// parks and holds no thread.
//
// On an asynchronous device (a GPU) a task's kernel only launches its work, on the stream's
// lane for that device (exec_context.h), and the stream goes on launching the tasks behind it.
// Tasks are *retired* in queue order: a launched task once its lane reports the work done (one
// report per run of up to 64 tasks, never a thread waiting), any other task once every task
// before it has retired. Retiring ends the task's writes (host reads of them may start),
// completes its event record and reports its status; a task's storages live until then.
//
// A task whose kernel fails poisons the storages it writes with its error (the root cause); a
// later task reading or writing a poisoned storage does not run and fails with an error that
// names the root cause, poisoning its own outputs the same way. The first error since the last
// Synchronize is kept for it.
//
// Cancel() drops every task queued so far: a task not started does not run (nor hold; a wait
// for another stream's event is kept, so that later work stays ordered after it), one running
// stops at its next piece (ExecContext::CancelRequested); both
// fail with CANCELLED, which poisons their outputs like any error, so a later read says they
// were cancelled. Their storages are freed as they retire. Tasks queued after Cancel() run as
// usual. Event records and synchronize markers are not dropped: they complete, in order; a
// cancelled op is not an error Synchronize reports (whoever cancelled knows), but ops queued
// later that use its outputs fail as usual.
// Thread-safe.
class Stream : public std::enable_shared_from_this<Stream> {
 public:
  static std::shared_ptr<Stream> Create(Executor* executor, uint64_t id, int64_t max_queued);

  uint64_t id() const { return id_; }

  // Queues a task. RESOURCE_EXHAUSTED when max_queued tasks are already waiting. With
  // `wake` false the stream is not woken: the caller queues more and calls Wake() once (a batch
  // of ops then costs one wake-up of the worker, not one per op).
  absl::Status Enqueue(StreamTask task, bool wake = true);
  // Starts the stream's worker on what is queued, if it is idle.
  void Wake();
  // Queues a record of `event`.
  absl::Status RecordEvent(const std::shared_ptr<Event>& event);
  // Later tasks wait for the event's latest record.
  absl::Status WaitEvent(const std::shared_ptr<Event>& event);
  // Calls done(first error since the previous Synchronize, or OK) once every task queued
  // before this call has finished. Never refused.
  void Synchronize(absl::AnyInvocable<void(absl::Status)> done);
  // A read of data a failed op poisoned raised `reported` (that op's error) to the client:
  // Synchronize does not raise it again (nor this stream's error of an op that failed only
  // because it read that data), as an error raised once is handled once.
  void ForgetError(const absl::Status& reported);
  // Tasks queued and not retired.
  int64_t pending() const;
  // Cancels every task queued so far (see above) with `reason` (a CANCELLED status naming who
  // cancelled); returns how many ops that is (markers not counted).
  int64_t Cancel(absl::Status reason);

  Stream(Executor* executor, uint64_t id, int64_t max_queued)
      : executor_(executor), id_(id), max_queued_(max_queued) {}

 private:
  enum class State { kIdle, kScheduled, kRunning, kParked };

  // A task whose kernel has run (or launched) and that waits to retire.
  struct InFlight {
    StreamTask task;
    absl::Status status;
    int lanes_pending = 0;  // lanes whose report of its work has not come yet
    absl::Status lane_error;  // a lane's report that its work was lost (the device failed)
    std::vector<PendingKernelError> errors;  // slots its kernels may have written
  };

  void Run();
  // Whether the head task may start; if not, arranges a Wake() for when it may.
  bool HeadReady(StreamTask& task);
  // Runs (or launches) the task's kernel; retires it at once when nothing is in flight.
  void Execute(StreamTask& task);
  // Asks each lane launched on since the last call to report when its work is done.
  void RequestLaneReports();
  // Retires the tasks at the front of in_flight_ whose work is done, in order.
  void Retire();
  // The tail of a task: poison, end of writes, event, first error, on_done.
  void Complete(StreamTask& task, const absl::Status& status);
  // Retiring a launched task: the errors its kernels reported (or a lane's report that its work
  // was lost), or those of the ops it depends on that failed after it launched, poison its
  // writes.
  absl::Status CheckRetired(InFlight& entry);
  bool Cancelled(const StreamTask& task) const {
    return task.seq < cancel_below_.load(std::memory_order_acquire);
  }
  // The error of a cancelled task: `label` and the reason.
  absl::Status CancelledError(const StreamTask& task) const;

  Executor* const executor_;
  const uint64_t id_;
  const int64_t max_queued_;

  mutable absl::Mutex mu_;
  std::deque<StreamTask> queue_ ABSL_GUARDED_BY(mu_);
  int64_t counted_ ABSL_GUARDED_BY(mu_) = 0;  // non-marker tasks in queue_
  State state_ ABSL_GUARDED_BY(mu_) = State::kIdle;
  bool wake_pending_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // Tasks with a smaller seq are cancelled; written under mu_, read by running kernels.
  std::atomic<uint64_t> cancel_below_{0};
  absl::Status cancel_reason_ ABSL_GUARDED_BY(mu_);
  std::deque<std::shared_ptr<InFlight>> in_flight_ ABSL_GUARDED_BY(mu_);
  bool retiring_ ABSL_GUARDED_BY(mu_) = false;
  bool retire_again_ ABSL_GUARDED_BY(mu_) = false;

  // Used only by the thread running the stream.
  DeviceLanes lanes_;
  // Tasks launched on each lane since its last report request.
  absl::flat_hash_map<DeviceLane*, std::vector<std::shared_ptr<InFlight>>> unreported_;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_STREAM_H_
