// Executor: the worker threads that run streams' tasks and other background work.
#ifndef TENSORD_ENGINE_RUNTIME_EXECUTOR_H_
#define TENSORD_ENGINE_RUNTIME_EXECUTOR_H_

#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace tensord::engine {

// A fixed pool of threads running posted closures in FIFO order. Thread-safe. Streams are
// strands on it: each runs its tasks one at a time, in order, and parks (holding no thread)
// while it waits for an event or a host read.
class Executor {
 public:
  explicit Executor(int num_threads);
  // Runs what is already posted, then joins the threads.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  void Post(absl::AnyInvocable<void()> fn);
  int num_threads() const { return static_cast<int>(threads_.size()); }

  // A process-wide executor sized to the machine.
  static Executor& Default();

 private:
  void Loop();

  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_EXECUTOR_H_
