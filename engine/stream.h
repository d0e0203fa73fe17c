// Stream: an ordered queue of work on one device (a worker queue on the CPU; on a GPU the
// same interface fronts a cudaStream_t).
#ifndef TENSORD_ENGINE_STREAM_H_
#define TENSORD_ENGINE_STREAM_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "engine/event.h"
#include "engine/executor.h"
#include "engine/planned_op.h"
#include "engine/storage.h"

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
  // Runs on the worker after the task, with its status.
  absl::AnyInvocable<void(const absl::Status&)> on_done;
  bool is_marker = false;  // markers do not count against the queue limit

  std::vector<uint64_t> write_tickets;  // set by Stream::Enqueue
};

// Makes a task from a planned op (its kernel and storages).
StreamTask TaskFromPlan(std::string label, PlannedOp& plan);

// Runs its tasks one at a time, in the order they were queued, on an executor's threads; while
// the head task waits (for an event, or for a host read of a storage it writes) the stream
// parks and holds no thread.
//
// A task whose kernel fails poisons the storages it writes with its error (the root cause); a
// later task reading or writing a poisoned storage does not run and fails with an error that
// names the root cause, poisoning its own outputs the same way. The first error since the last
// Synchronize is kept for it. Thread-safe.
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
  // Tasks queued and not finished.
  int64_t pending() const;

  Stream(Executor* executor, uint64_t id, int64_t max_queued)
      : executor_(executor), id_(id), max_queued_(max_queued) {}

 private:
  enum class State { kIdle, kScheduled, kRunning, kParked };

  void Run();
  // Whether the head task may start; if not, arranges a Wake() for when it may.
  bool HeadReady(StreamTask& task);
  void Execute(StreamTask& task);

  Executor* const executor_;
  const uint64_t id_;
  const int64_t max_queued_;

  mutable absl::Mutex mu_;
  std::deque<StreamTask> queue_ ABSL_GUARDED_BY(mu_);
  int64_t counted_ ABSL_GUARDED_BY(mu_) = 0;  // non-marker tasks in queue_
  State state_ ABSL_GUARDED_BY(mu_) = State::kIdle;
  bool wake_pending_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_STREAM_H_
