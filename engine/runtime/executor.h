// Executor: the worker threads that run streams' tasks and other background work.
#ifndef TENSORD_ENGINE_RUNTIME_EXECUTOR_H_
#define TENSORD_ENGINE_RUNTIME_EXECUTOR_H_

#include <atomic>
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
//
// Long kernels run in pieces: between pieces (ParallelFor chunks, matrix panels, index loops)
// a kernel calls YieldToWaiting(), which runs one waiting closure (another stream's turn) on
// the kernel's thread before the kernel goes on. So when every thread is inside a long kernel,
// a small op of another session still starts within one piece's time.
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

  // Inside an AllowYields scope on a thread of an executor, with closures waiting and no idle
  // thread to take them: runs the oldest one here and returns after it. Closures that run this
  // way may yield in turn, up to a small depth (a kernel's thread is never lent out without
  // bound). Otherwise returns at once; the check is a few thread-local and relaxed loads.
  static void YieldToWaiting();

  // Marks the calling thread's current work as one that may yield: a stream task's kernel,
  // which holds no lock that a waiting closure could want. Elsewhere (a closure holding a
  // session's lock, a gRPC thread) YieldToWaiting does nothing.
  class AllowYields {
   public:
    AllowYields();
    ~AllowYields();
    AllowYields(const AllowYields&) = delete;
    AllowYields& operator=(const AllowYields&) = delete;

   private:
    bool previous_;
  };

 private:
  void Loop();
  // Pops the oldest closure if any (mu_ not held).
  absl::AnyInvocable<void()> TakeWaiting();

  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> waiting_{0};  // queue_.size(), readable without mu_
  std::atomic<int> idle_{0};         // threads waiting for a closure: they take what is posted
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_EXECUTOR_H_
