#include "engine/runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/executor.h"

namespace tensord::engine {
namespace {

// One ParallelFor call. Lives on the caller's stack; the caller leaves only when no worker
// holds it any more.
struct Job {
  absl::FunctionRef<void(int64_t, int64_t)> fn;
  int64_t begin;
  int64_t end;
  int64_t chunk;
  int64_t num_chunks;
  std::atomic<int64_t> next{0};
  int helpers_wanted = 0;  // guarded by the pool mutex
  int users = 0;           // workers inside RunChunks; guarded by the pool mutex
  // The caller's task (null outside one): once it is cancelled, the chunks not started are
  // skipped by every thread.
  const ExecContext* task = ExecContext::CancelSource();

  // `yields`: between chunks, lend the thread to waiting executor work (the caller only).
  void RunChunks(bool yields) {
    for (;;) {
      if (task != nullptr && task->cancel_requested()) return;
      const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= num_chunks) return;
      const int64_t b = begin + c * chunk;
      fn(b, std::min(end, b + chunk));
      if (yields) Executor::YieldToWaiting();
    }
  }
};

class Pool {
 public:
  Pool() {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    degree_ = static_cast<int>(hw);
    for (unsigned i = 1; i < hw; ++i) {
      std::thread([this] { WorkerLoop(); }).detach();  // lives as long as the process
    }
  }

  int degree() const { return degree_; }

  void Run(Job& job) {
    const int helpers = static_cast<int>(std::min<int64_t>(job.num_chunks - 1, degree_ - 1));
    if (helpers > 0) {
      absl::MutexLock lock(&mu_);
      job.helpers_wanted = helpers;
      queue_.push_back(&job);
      queued_.store(static_cast<int>(queue_.size()), std::memory_order_release);
    }
    job.RunChunks(/*yields=*/true);
    if (helpers > 0) {
      absl::MutexLock lock(&mu_);
      auto it = std::find(queue_.begin(), queue_.end(), &job);
      if (it != queue_.end()) queue_.erase(it);
      queued_.store(static_cast<int>(queue_.size()), std::memory_order_release);
      mu_.Await(absl::Condition(
          +[](Job* j) { return j->users == 0; }, &job));
    }
  }

 private:
  void WorkerLoop() {
    for (;;) {
      Job* job;
      // Kernels come in bursts (one op's ParallelFor after another): a worker that just finished
      // one watches for the next for a moment before it sleeps, as OpenMP's threads spin, so
      // that the next job does not wait for a futex wake-up (tens of microseconds).
      const auto spin_until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
      while (queued_.load(std::memory_order_acquire) == 0 &&
             std::chrono::steady_clock::now() < spin_until) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](std::deque<Job*>* q) { return !q->empty(); }, &queue_));
        job = queue_.front();
        ++job->users;
        if (--job->helpers_wanted == 0) queue_.pop_front();
        queued_.store(static_cast<int>(queue_.size()), std::memory_order_release);
      }
      {
        const ExecContext::ChunksOf chunks(job->task);  // its cancellation reaches the chunks
        job->RunChunks(/*yields=*/false);
      }
      absl::MutexLock lock(&mu_);
      --job->users;
    }
  }

  static constexpr std::chrono::microseconds kSpinBeforeSleep{50};

  int degree_ = 1;
  std::atomic<int> queued_{0};  // queue_.size(), readable without the mutex
  absl::Mutex mu_;
  std::deque<Job*> queue_ ABSL_GUARDED_BY(mu_);
};

Pool& GlobalPool() {
  static Pool* pool = new Pool();
  return *pool;
}

}  // namespace

int ParallelismDegree() { return GlobalPool().degree(); }

void ParallelFor(int64_t begin, int64_t end, int64_t grain,
                 absl::FunctionRef<void(int64_t, int64_t)> fn) {
  if (end <= begin) return;
  const int64_t range = end - begin;
  grain = std::max<int64_t>(grain, 1);
  if (range <= grain) {
    fn(begin, end);
    return;
  }
  Pool& pool = GlobalPool();
  // A few chunks per thread balance uneven work without much overhead; long work gets more, so
  // that no chunk (the unit between yields) is long: kMaxChunkGrains grains at most.
  constexpr int64_t kMaxChunkGrains = 16;
  const int64_t max_chunks =
      std::max(int64_t{pool.degree()} * 4, range / grain / kMaxChunkGrains);
  const int64_t num_chunks = std::min(max_chunks, (range + grain - 1) / grain);
  const int64_t chunk = (range + num_chunks - 1) / num_chunks;
  Job job{fn, begin, end, chunk, (range + chunk - 1) / chunk};
  if (pool.degree() == 1) {
    job.RunChunks(/*yields=*/true);
    return;
  }
  pool.Run(job);
}

}  // namespace tensord::engine
