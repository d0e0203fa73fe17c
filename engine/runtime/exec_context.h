// How a queued task's kernel reaches an asynchronous device.
//
// A Stream runs each task's kernel inside an ExecContext. A backend of an asynchronous device
// (CUDA) asks the context for the stream's lane on its device, launches its work there and
// returns at once; the stream then retires the task (ends its writes, completes its events,
// reports its status) only once the lane says the work is done. Outside any context (the
// synchronous engine API, RunNow), every backend waits for its own work before returning.
#ifndef TENSORD_ENGINE_RUNTIME_EXEC_CONTEXT_H_
#define TENSORD_ENGINE_RUNTIME_EXEC_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/kernels/kernel_error.h"

namespace tensord::engine {

class Backend;

// A point in a lane's work, timed by its device (a cudaEvent recorded on the lane's stream):
// profiles measure a kernel's device time between the marks around its launch.
class LaneMark {
 public:
  virtual ~LaneMark() = default;
  // Nanoseconds of device time from `earlier` (a mark of the same lane) to this mark, once the
  // work before both has run; an error when the device cannot tell.
  virtual absl::StatusOr<int64_t> NanosecondsSince(const LaneMark& earlier) const = 0;
};

// An in-order queue of work on one device for one tensord stream (a cudaStream_t).
class DeviceLane {
 public:
  virtual ~DeviceLane() = default;
  // A mark at the lane's position now; null where the lane cannot time its work.
  virtual std::unique_ptr<LaneMark> Mark() { return nullptr; }
  // Calls `done` once every piece of work launched on the lane so far has finished, with OK; or,
  // when the device can no longer finish it (its context was lost to a kernel fault), with the
  // reason, as soon as that is known. `done` may run on a thread of the device runtime: it must
  // only post work, never block.
  virtual void AfterLaunchedWork(absl::AnyInvocable<void(absl::Status)> done) = 0;
  // A cleared error slot that the lane's kernels can write (kernels/kernel_error.h), and its
  // handle; null when every slot is in use.
  virtual KernelError* AcquireErrorSlot(int64_t* handle) = 0;
  // Reads and frees a slot once the work that could write it has finished.
  virtual KernelError ReleaseErrorSlot(int64_t handle) = 0;
};

// Turns a kernel's report into the op's error (the same text the CPU kernel gives).
using KernelErrorDecoder = absl::AnyInvocable<absl::Status(const KernelError&) const>;

// A slot a task's kernels may have written, read when the task retires.
struct PendingKernelError {
  DeviceLane* lane;
  int64_t handle;
  KernelErrorDecoder decode;
};

// A stream's lanes, one per device it has launched on, created on first use. Used only by the
// thread running the stream.
using DeviceLanes = absl::flat_hash_map<const Backend*, std::unique_ptr<DeviceLane>>;

class ExecContext {
 public:
  // Installs this context on the calling thread for its lifetime.
  explicit ExecContext(DeviceLanes* lanes);
  ~ExecContext();
  ExecContext(const ExecContext&) = delete;
  ExecContext& operator=(const ExecContext&) = delete;

  // The context of the task running on this thread, or null.
  static ExecContext* Current();

  // For its lifetime the thread runs outside any task: work lent a task's thread between its
  // kernel's pieces (Executor::YieldToWaiting) must neither launch on that task's lanes nor see
  // its cancellation.
  class Outside {
   public:
    Outside();
    ~Outside();
    Outside(const Outside&) = delete;
    Outside& operator=(const Outside&) = delete;

   private:
    ExecContext* saved_;
  };

  // The lane of `backend`'s device, created with `create` on first use; the running task now
  // counts as having launched work on it.
  DeviceLane* Launch(const Backend* backend,
                     absl::AnyInvocable<std::unique_ptr<DeviceLane>()> create);
  // The lane of `backend`'s device if this task launched on it, else null.
  DeviceLane* Launched(const Backend* backend) const;

  const std::vector<DeviceLane*>& launched() const { return launched_; }
  // Every lane of the running task's stream (those earlier tasks created too).
  const DeviceLanes& lanes() const { return *lanes_; }

  // Cancellation (Stream::Cancel): the running task is cancelled once `*cancel_below` exceeds
  // its sequence number `seq`. A long kernel asks between its pieces and stops early; its
  // outputs are then poisoned with CANCELLED, so what it left half written is never read.
  void set_cancel(const std::atomic<uint64_t>* cancel_below, uint64_t seq) {
    cancel_below_ = cancel_below;
    seq_ = seq;
  }
  bool cancel_requested() const {
    return cancel_below_ != nullptr && cancel_below_->load(std::memory_order_relaxed) > seq_;
  }
  // Whether the task running on this thread was cancelled (false outside any task). On a pool
  // worker running a task's ParallelFor chunks (ChunksOf), whether that task was.
  static bool CancelRequested();
  // The task whose cancellation applies on this thread: its own, or the one whose chunks a pool
  // worker runs (null: none).
  static const ExecContext* CancelSource();

  // For its lifetime a pool worker runs chunks of `task`'s ParallelFor (null: of no task): the
  // long kernels in those chunks see the task's cancellation, as the task's own thread does.
  class ChunksOf {
   public:
    explicit ChunksOf(const ExecContext* task);
    ~ChunksOf();
    ChunksOf(const ChunksOf&) = delete;
    ChunksOf& operator=(const ChunksOf&) = delete;

   private:
    const ExecContext* saved_;
  };

  // An error slot on `lane` for the running task, read when it retires; null when the lane has
  // none free.
  KernelError* ErrorSlot(DeviceLane* lane, KernelErrorDecoder decode);
  std::vector<PendingKernelError> TakeErrorSlots() { return std::move(error_slots_); }

 private:
  DeviceLanes* lanes_;
  std::vector<DeviceLane*> launched_;
  std::vector<PendingKernelError> error_slots_;
  const std::atomic<uint64_t>* cancel_below_ = nullptr;
  uint64_t seq_ = 0;
  ExecContext* previous_;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_EXEC_CONTEXT_H_
