// How a queued task's kernel reaches an asynchronous device.
//
// A Stream runs each task's kernel inside an ExecContext. A backend of an asynchronous device
// (CUDA) asks the context for the stream's lane on its device, launches its work there and
// returns at once; the stream then retires the task (ends its writes, completes its events,
// reports its status) only once the lane says the work is done. Outside any context (the
// synchronous engine API, RunNow), every backend waits for its own work before returning.
#ifndef TENSORD_ENGINE_EXEC_CONTEXT_H_
#define TENSORD_ENGINE_EXEC_CONTEXT_H_

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"

namespace tensord::engine {

class Backend;

// An in-order queue of work on one device for one tensord stream (a cudaStream_t).
class DeviceLane {
 public:
  virtual ~DeviceLane() = default;
  // Calls `done` once every piece of work launched on the lane so far has finished. `done` may
  // run on a thread of the device runtime: it must only post work, never block.
  virtual void AfterLaunchedWork(absl::AnyInvocable<void()> done) = 0;
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

  // The lane of `backend`'s device, created with `create` on first use; the running task now
  // counts as having launched work on it.
  DeviceLane* Launch(const Backend* backend,
                     absl::AnyInvocable<std::unique_ptr<DeviceLane>()> create);
  // The lane of `backend`'s device if this task launched on it, else null.
  DeviceLane* Launched(const Backend* backend) const;

  const std::vector<DeviceLane*>& launched() const { return launched_; }

 private:
  DeviceLanes* lanes_;
  std::vector<DeviceLane*> launched_;
  ExecContext* previous_;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_EXEC_CONTEXT_H_
