#include "engine/runtime/stream.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/runtime/timer.h"

namespace tensord::engine {

StreamTask TaskFromPlan(std::string label, PlannedOp& plan) {
  StreamTask task;
  task.label = std::move(label);
  task.kernel = std::move(plan.kernel);
  task.reads = plan.reads;
  task.writes = plan.writes;
  task.hold = plan.hold;
  return task;
}

std::shared_ptr<Stream> Stream::Create(Executor* executor, uint64_t id, int64_t max_queued) {
  return std::make_shared<Stream>(executor, id, max_queued);
}

absl::Status Stream::Enqueue(StreamTask task, bool wake) {
  {
    absl::MutexLock lock(&mu_);
    if (!task.is_marker && counted_ >= max_queued_) {
      return ResourceError(task.label, absl::StrCat("stream ", id_, " already has ", counted_,
                                                    " queued ops, the limit; synchronize and "
                                                    "retry"));
    }
    // Tickets are taken in queue order, under the stream's lock, so writes on one stream
    // ticket in the order they run.
    task.write_tickets.reserve(task.writes.size());
    for (const auto& storage : task.writes) task.write_tickets.push_back(storage->BeginWrite());
    task.seq = next_seq_++;
    if (!task.is_marker) ++counted_;
    queue_.push_back(std::move(task));
  }
  if (wake) Wake();
  return absl::OkStatus();
}

absl::Status Stream::RecordEvent(const std::shared_ptr<Event>& event) {
  // On an idle stream everything queued before the record is done: it completes now (as
  // cudaEventRecord on an idle stream), so a query right after a synchronize sees it.
  bool idle;
  uint64_t generation = 0;
  {
    absl::MutexLock lock(&mu_);
    idle = queue_.empty() && in_flight_.empty() && !retiring_;
    if (idle) generation = event->NewRecord();
  }
  if (idle) {
    event->Complete(generation);
    return absl::OkStatus();
  }
  StreamTask task;
  task.label = "record_event";
  task.record_event = event;
  task.record_generation = event->NewRecord();
  task.is_marker = true;
  return Enqueue(std::move(task));
}

absl::Status Stream::WaitEvent(const std::shared_ptr<Event>& event) {
  StreamTask task;
  task.label = "wait_event";
  task.wait_event = event;
  task.wait_generation = event->latest();
  task.is_marker = true;
  return Enqueue(std::move(task));
}

void Stream::Synchronize(absl::AnyInvocable<void(absl::Status)> done) {
  StreamTask task;
  task.label = "synchronize";
  task.is_marker = true;
  task.on_done = [this, done = std::move(done)](const absl::Status&) mutable {
    absl::Status error;
    {
      absl::MutexLock lock(&mu_);
      error = std::move(first_error_);
      first_error_ = absl::OkStatus();
    }
    done(std::move(error));
  };
  (void)Enqueue(std::move(task));  // markers are never refused
}

void Stream::ForgetError(const absl::Status& reported) {
  absl::MutexLock lock(&mu_);
  if (!first_error_.ok() && (first_error_ == reported ||
                             absl::EndsWith(first_error_.message(),
                                            absl::StrCat("depends on a failed op: ",
                                                         reported.message())))) {
    first_error_ = absl::OkStatus();
  }
}

int64_t Stream::pending() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size() + in_flight_.size());
}

int64_t Stream::Cancel(absl::Status reason) {
  int64_t cancelled;
  {
    absl::MutexLock lock(&mu_);
    cancel_reason_ = std::move(reason);
    // Ops not yet dropped by an earlier cancel (the head may be running).
    const uint64_t below = cancel_below_.load(std::memory_order_relaxed);
    cancelled = 0;
    for (const StreamTask& task : queue_) {
      if (!task.is_marker && task.seq >= below) ++cancelled;
    }
    cancel_below_.store(next_seq_, std::memory_order_release);
  }
  Wake();  // a stream parked on a hold goes on to drop what it holds for
  return cancelled;
}

absl::Status Stream::CancelledError(const StreamTask& task) const {
  absl::Status reason;
  {
    absl::MutexLock lock(&mu_);
    reason = cancel_reason_;
  }
  return absl::CancelledError(absl::StrCat(task.label, ": ", reason.message()));
}

void Stream::Wake() {
  absl::MutexLock lock(&mu_);
  switch (state_) {
    case State::kIdle:
    case State::kParked:
      if (queue_.empty()) return;
      state_ = State::kScheduled;
      executor_->Post([self = shared_from_this()] { self->Run(); });
      return;
    case State::kRunning:
      wake_pending_ = true;
      return;
    case State::kScheduled:
      return;
  }
}

bool Stream::HeadReady(StreamTask& task) {
  // A cancelled task does not hold; it still waits for its event (the ops queued after the
  // cancel keep their order after the other stream's work, which a cancel there ends too) and
  // takes its turn among the host reads of its storages (their tickets keep their order).
  const bool cancelled = Cancelled(task);
  if (task.wait_event && !task.wait_event->IsComplete(task.wait_generation)) {
    task.wait_event->OnComplete(task.wait_generation,
                                [self = shared_from_this()] { self->Wake(); });
    return task.wait_event->IsComplete(task.wait_generation);
  }
  for (size_t i = 0; i < task.writes.size(); ++i) {
    if (!task.writes[i]->IsWritable(task.write_tickets[i])) {
      task.writes[i]->WhenWritable(task.write_tickets[i],
                                   [self = shared_from_this()] { self->Wake(); });
      return false;
    }
  }
  if (!cancelled && task.hold > absl::ZeroDuration()) {
    const absl::Time now = absl::Now();
    if (task.hold_until == absl::InfinitePast()) task.hold_until = now + task.hold;
    if (now < task.hold_until) {
      RunAfter(task.hold_until - now, [self = shared_from_this()] { self->Wake(); });
      return false;
    }
  }
  return true;
}

void Stream::Execute(StreamTask& task) {
  absl::Status status;
  std::shared_ptr<const absl::Status> cause;
  // A task touching a poisoned storage does not run.
  for (const auto* list : {&task.reads, &task.writes}) {
    for (const auto& storage : *list) {
      if (cause) break;
      cause = storage->poison();
    }
  }
  std::vector<DeviceLane*> launched;
  std::vector<PendingKernelError> error_slots;
  if (task.kernel && Cancelled(task)) {  // cancelled before it ran
    status = CancelledError(task);
    cause = std::make_shared<const absl::Status>(status);
  } else if (cause) {
    status = WithPayloadsOf(*cause, absl::FailedPreconditionError(absl::StrCat(
                                        task.label, " depends on a failed op: ", cause->message())));
  } else if (task.kernel) {
    {
      ExecContext context(&lanes_);
      context.set_cancel(&cancel_below_, task.seq);
      Executor::AllowYields pieces;  // a long kernel lets other streams' turns run between pieces
      status = task.kernel();
      launched = context.launched();
      error_slots = context.TakeErrorSlots();
    }
    // Cancelled while it ran: a CPU kernel may have stopped part way. (Work launched on a GPU
    // lane runs to its end; the op still reports CANCELLED, so its outputs are never read.)
    if (status.ok() && Cancelled(task)) {
      status = CancelledError(task);
      cause = std::make_shared<const absl::Status>(status);
    } else if (!status.ok()) {
      cause = std::make_shared<const absl::Status>(WithPayloadsOf(
          status, absl::Status(status.code(), absl::StrCat(task.label, ": ", status.message()))));
      status = *cause;
    }
  }
  // Poisoned at once, so that the tasks behind it see it before they launch.
  if (cause) {
    for (const auto& storage : task.writes) storage->Poison(cause);
  }
  bool retire_now;
  {
    absl::MutexLock lock(&mu_);
    retire_now = launched.empty() && in_flight_.empty() && !retiring_;
  }
  if (retire_now) {  // nothing before it in flight, nothing of its own: done now
    Complete(task, status);
    return;
  }
  auto entry = std::make_shared<InFlight>();
  entry->task = std::move(task);
  entry->status = std::move(status);
  entry->lanes_pending = static_cast<int>(launched.size());
  entry->errors = std::move(error_slots);
  for (DeviceLane* lane : launched) unreported_[lane].push_back(entry);
  {
    absl::MutexLock lock(&mu_);
    in_flight_.push_back(std::move(entry));
  }
  Retire();  // a task with nothing launched may already be at the front
}

void Stream::Complete(StreamTask& task, const absl::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (!task.is_marker) --counted_;
    // A cancelled op's CANCELLED is not an error for Synchronize to raise: whoever cancelled
    // knows; its outputs say so when read, and ops that use them fail as usual.
    const bool dropped = status.code() == absl::StatusCode::kCancelled && task.kernel &&
                         Cancelled(task);
    // Before the writes end: a read they release that raises this error forgets it after.
    if (!status.ok() && first_error_.ok() && !dropped) first_error_ = status;
  }
  for (size_t i = 0; i < task.writes.size(); ++i) task.writes[i]->EndWrite(task.write_tickets[i]);
  if (task.record_event) task.record_event->Complete(task.record_generation);
  if (task.on_done) task.on_done(status);
}

absl::Status Stream::CheckRetired(InFlight& entry) {
  StreamTask& task = entry.task;
  absl::Status reported;
  for (PendingKernelError& slot : entry.errors) {
    const KernelError error = slot.lane->ReleaseErrorSlot(slot.handle);
    if (error.code != KernelError::kNone && reported.ok()) reported = slot.decode(error);
  }
  entry.errors.clear();
  if (reported.ok()) reported = entry.lane_error;
  std::shared_ptr<const absl::Status> cause;
  absl::Status status;
  if (!reported.ok()) {
    cause = std::make_shared<const absl::Status>(WithPayloadsOf(
        reported,
        absl::Status(reported.code(), absl::StrCat(task.label, ": ", reported.message()))));
    status = *cause;
  } else {
    // An op it reads (or whose outputs it overwrites) failed after this one launched.
    for (const auto* list : {&task.reads, &task.writes}) {
      for (const auto& storage : *list) {
        if (cause) break;
        cause = storage->poison();
      }
    }
    if (!cause) return absl::OkStatus();
    status = WithPayloadsOf(*cause, absl::FailedPreconditionError(absl::StrCat(
                                        task.label, " depends on a failed op: ", cause->message())));
  }
  for (const auto& storage : task.writes) {
    if (!storage->poison()) storage->Poison(cause);
  }
  return status;
}

void Stream::RequestLaneReports() {
  for (auto& [lane, entries] : unreported_) {
    if (entries.empty()) continue;
    lane->AfterLaunchedWork(
        [self = shared_from_this(), entries = std::move(entries)](absl::Status lost) mutable {
          // On the device runtime's thread: hand over to the executor. The task takes this
          // callback's reference, so that the stream (and its lanes, whose destruction waits
          // for their device streams) is never destroyed on the device runtime's thread.
          Executor* const executor = self->executor_;
          executor->Post([self = std::move(self), entries = std::move(entries),
                          lost = std::move(lost)] {
            {
              absl::MutexLock lock(&self->mu_);
              for (const auto& entry : entries) {
                --entry->lanes_pending;
                if (!lost.ok() && entry->lane_error.ok()) entry->lane_error = lost;
              }
            }
            self->Retire();
          });
        });
    entries.clear();
  }
}

void Stream::Retire() {
  {
    absl::MutexLock lock(&mu_);
    if (retiring_) {  // another thread is retiring: it will look again
      retire_again_ = true;
      return;
    }
    retiring_ = true;
  }
  for (;;) {
    std::shared_ptr<InFlight> entry;
    {
      absl::MutexLock lock(&mu_);
      if (!in_flight_.empty() && in_flight_.front()->lanes_pending == 0) {
        entry = std::move(in_flight_.front());
        in_flight_.pop_front();
      } else if (retire_again_) {
        retire_again_ = false;
        continue;
      } else {
        retiring_ = false;
        return;
      }
    }
    // Its error slots are read and freed whatever its status (a cancelled task's included).
    absl::Status retired = CheckRetired(*entry);
    if (entry->status.ok()) entry->status = std::move(retired);
    Complete(entry->task, entry->status);
    // The task's storages and kernel (and the memory they hold) go here, after the work.
  }
}

void Stream::Run() {
  {
    absl::MutexLock lock(&mu_);
    state_ = State::kRunning;
    wake_pending_ = false;
  }
  // A bounded number of tasks per turn, so streams share the executor fairly.
  for (int budget = 64; budget > 0; --budget) {
    StreamTask* head = nullptr;
    bool empty;
    {
      absl::MutexLock lock(&mu_);
      empty = queue_.empty();
      if (!empty) head = &queue_.front();  // stable: only this thread pops; pushes keep it
    }
    if (empty) {
      RequestLaneReports();
      absl::MutexLock lock(&mu_);
      if (!queue_.empty() && wake_pending_) {  // queued and woken meanwhile: run it
        wake_pending_ = false;
        ++budget;
        continue;
      }
      state_ = State::kIdle;
      return;
    }
    if (!HeadReady(*head)) {
      RequestLaneReports();
      absl::MutexLock lock(&mu_);
      if (wake_pending_) {  // became ready while we registered: look again
        wake_pending_ = false;
        ++budget;
        continue;
      }
      state_ = State::kParked;
      return;
    }
    Execute(*head);
    absl::MutexLock lock(&mu_);
    queue_.pop_front();
  }
  RequestLaneReports();
  absl::MutexLock lock(&mu_);
  state_ = State::kScheduled;
  executor_->Post([self = shared_from_this()] { self->Run(); });
}

}  // namespace tensord::engine
