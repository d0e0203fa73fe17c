#include "engine/runtime/executor.h"

#include <algorithm>

#include "absl/synchronization/mutex.h"

namespace tensord::engine {
namespace {

// Debian's Abseil is built with assertions on, which makes every Mutex acquisition update a
// global lock-order graph (deadlock detection): a debugging aid that costs microseconds per op
// on the hot path. tensord's lock order is fixed by design; the graph stays off.
const bool kDeadlockGraphOff = [] {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return true;
}();

}  // namespace

Executor::Executor(int num_threads) {
  for (int i = 0; i < std::max(1, num_threads); ++i) threads_.emplace_back([this] { Loop(); });
}

Executor::~Executor() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void Executor::Post(absl::AnyInvocable<void()> fn) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(fn));
}

void Executor::Loop() {
  for (;;) {
    absl::AnyInvocable<void()> fn;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Executor* e) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return e->stopping_ || !e->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping, and nothing left
      fn = std::move(queue_.front());
      queue_.pop_front();
    }
    fn();
  }
}

Executor& Executor::Default() {
  static Executor* executor =
      new Executor(static_cast<int>(std::max(2u, std::thread::hardware_concurrency())));
  return *executor;
}

}  // namespace tensord::engine
