#include "engine/runtime/timer.h"

#include <memory>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tensord::engine {
namespace {

class TimerThread {
 public:
  TimerThread() : thread_([this] { Loop(); }) {}

  void Add(absl::Time when, absl::AnyInvocable<void()> fn) {
    absl::MutexLock lock(&mu_);
    timers_.push(
        Timer{when, next_seq_++, std::make_shared<absl::AnyInvocable<void()>>(std::move(fn))});
    added_ = true;
  }

 private:
  struct Timer {
    absl::Time when;
    uint64_t seq;  // equal deadlines fire in the order they were set
    std::shared_ptr<absl::AnyInvocable<void()>> fn;
    bool operator>(const Timer& other) const {
      return when != other.when ? when > other.when : seq > other.seq;
    }
  };

  void Loop() {
    for (;;) {
      std::vector<std::shared_ptr<absl::AnyInvocable<void()>>> due;
      {
        absl::MutexLock lock(&mu_);
        // Until the earliest deadline, or until a timer is added (it may be earlier).
        const absl::Time wake = timers_.empty() ? absl::InfiniteFuture() : timers_.top().when;
        mu_.AwaitWithDeadline(absl::Condition(&added_), wake);
        added_ = false;
        const absl::Time now = absl::Now();
        while (!timers_.empty() && timers_.top().when <= now) {
          due.push_back(timers_.top().fn);
          timers_.pop();
        }
      }
      for (auto& fn : due) (*fn)();
    }
  }

  absl::Mutex mu_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool added_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace

void RunAfter(absl::Duration delay, absl::AnyInvocable<void()> fn) {
  static TimerThread* timers = new TimerThread();  // never destroyed: lives with the process
  timers->Add(absl::Now() + delay, std::move(fn));
}

}  // namespace tensord::engine
