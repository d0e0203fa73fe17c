#include "engine/runtime/event.h"

#include <algorithm>

namespace tensord::engine {

uint64_t Event::NewRecord() {
  absl::MutexLock lock(&mu_);
  return ++recorded_;
}

void Event::Complete(uint64_t generation) {
  std::vector<absl::AnyInvocable<void()>> ready;
  {
    absl::MutexLock lock(&mu_);
    completed_ = std::max(completed_, generation);
    for (size_t i = 0; i < waiters_.size();) {
      if (waiters_[i].generation <= completed_) {
        ready.push_back(std::move(waiters_[i].fn));
        waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }
  for (auto& fn : ready) fn();
}

uint64_t Event::latest() const {
  absl::MutexLock lock(&mu_);
  return recorded_;
}

bool Event::IsComplete(uint64_t generation) const {
  absl::MutexLock lock(&mu_);
  return completed_ >= generation;
}

void Event::OnComplete(uint64_t generation, absl::AnyInvocable<void()> fn) {
  {
    absl::MutexLock lock(&mu_);
    if (completed_ < generation) {
      waiters_.push_back(Waiter{generation, std::move(fn)});
      return;
    }
  }
  fn();
}

bool Event::Query() const {
  absl::MutexLock lock(&mu_);
  return completed_ >= recorded_;
}

}  // namespace tensord::engine
