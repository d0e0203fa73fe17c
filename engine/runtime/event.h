// Event: a marker in a stream that other streams and the host can wait for (CUDA's semantics).
#ifndef TENSORD_ENGINE_RUNTIME_EVENT_H_
#define TENSORD_ENGINE_RUNTIME_EVENT_H_

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace tensord::engine {

// Each record of the event gets a generation; waiting means waiting for the generation that
// was the latest when the wait was queued. An event never recorded counts as complete, so
// waiting on it is a no-op (as cudaStreamWaitEvent). Thread-safe.
class Event {
 public:
  // A new record is queued: returns its generation.
  uint64_t NewRecord();
  // The record of `generation` was reached by its stream.
  void Complete(uint64_t generation);
  // The generation a wait queued now must wait for.
  uint64_t latest() const;
  bool IsComplete(uint64_t generation) const;
  // Runs `fn` once `generation` is complete: inline if it already is.
  void OnComplete(uint64_t generation, absl::AnyInvocable<void()> fn);
  // Every record so far is complete (cudaEventQuery).
  bool Query() const;

 private:
  mutable absl::Mutex mu_;
  uint64_t recorded_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
  struct Waiter {
    uint64_t generation;
    absl::AnyInvocable<void()> fn;
  };
  std::vector<Waiter> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_EVENT_H_
