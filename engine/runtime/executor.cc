#include "engine/runtime/executor.h"

#include <algorithm>

#include "absl/synchronization/mutex.h"
#include "engine/runtime/exec_context.h"

namespace tensord::engine {
namespace {

// Debian's Abseil is built with assertions on, which makes every Mutex acquisition update a
// global lock-order graph (deadlock detection): a debugging aid that costs microseconds per op
// on the hot path. tensord's lock order is fixed by design; the graph stays off.
const bool kDeadlockGraphOff = [] {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return true;
}();

// The executor whose Loop runs on this thread, and how deep in yields this thread is.
thread_local Executor* current_executor = nullptr;
thread_local int yield_depth = 0;
thread_local bool yield_allowed = false;
constexpr int kMaxYieldDepth = 2;

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
  waiting_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
}

absl::AnyInvocable<void()> Executor::TakeWaiting() {
  absl::MutexLock lock(&mu_);
  if (queue_.empty()) return nullptr;
  absl::AnyInvocable<void()> fn = std::move(queue_.front());
  queue_.pop_front();
  waiting_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
  return fn;
}

void Executor::YieldToWaiting() {
  Executor* e = current_executor;
  if (e == nullptr || !yield_allowed || yield_depth >= kMaxYieldDepth ||
      e->waiting_.load(std::memory_order_relaxed) == 0 ||
      e->idle_.load(std::memory_order_relaxed) > 0) {
    return;
  }
  absl::AnyInvocable<void()> fn = e->TakeWaiting();
  if (!fn) return;
  ++yield_depth;
  yield_allowed = false;  // the closure allows yields where it may (its own kernels)
  {
    ExecContext::Outside outside;  // not part of the task whose thread it borrows
    fn();
  }
  yield_allowed = true;
  --yield_depth;
}

Executor::AllowYields::AllowYields() : previous_(yield_allowed) { yield_allowed = true; }
Executor::AllowYields::~AllowYields() { yield_allowed = previous_; }

void Executor::Loop() {
  current_executor = this;
  for (;;) {
    absl::AnyInvocable<void()> fn;
    {
      absl::MutexLock lock(&mu_);
      idle_.fetch_add(1, std::memory_order_relaxed);
      mu_.Await(absl::Condition(
          +[](Executor* e) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return e->stopping_ || !e->queue_.empty();
          },
          this));
      idle_.fetch_sub(1, std::memory_order_relaxed);
      if (queue_.empty()) return;  // stopping, and nothing left
      fn = std::move(queue_.front());
      queue_.pop_front();
      waiting_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
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
