// The reports that the lanes of one GPU owe their streams (DeviceLane::AfterLaunchedWork).
//
// A lane asks the device to signal when the work launched so far is done (a host function
// queued behind it); the stream retires that work on the signal. Once a kernel faults, CUDA's
// context on the device is lost and it never runs the host functions queued behind the fault:
// without another way to deliver them, every stream with work in flight would wait forever.
// So each report is registered here and delivered exactly once, by whichever comes first: the
// device's signal (OK), or FailAll once the device is known lost (the reason). Host code, no
// CUDA: tested on machines without a GPU (tests/engine/owed_reports_test.cc).
#ifndef TENSORD_ENGINE_CUDA_OWED_REPORTS_H_
#define TENSORD_ENGINE_CUDA_OWED_REPORTS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tensord::engine::cuda {

class OwedReports {
 public:
  using Done = absl::AnyInvocable<void(absl::Status)>;
  struct Report {
    Done done;
    absl::Time since;  // when it was asked for
  };
  using Handle = std::shared_ptr<Report>;

  // Registers a report owed from `now` on.
  Handle Add(Done done, absl::Time now) {
    auto report = std::make_shared<Report>(Report{std::move(done), now});
    absl::MutexLock lock(&mu_);
    owed_.emplace(report.get(), report);
    return report;
  }

  // Delivers `report` with `status` unless it has been delivered already; returns whether this
  // call delivered it. `done` runs on the calling thread, outside the lock.
  bool Deliver(const Handle& report, absl::Status status) {
    {
      absl::MutexLock lock(&mu_);
      if (owed_.erase(report.get()) == 0) return false;
    }
    Done done = std::move(report->done);
    done(std::move(status));
    return true;
  }

  // Delivers every report owed now with `status`; returns how many.
  int FailAll(const absl::Status& status) {
    absl::flat_hash_map<Report*, Handle> owed;
    {
      absl::MutexLock lock(&mu_);
      owed.swap(owed_);
    }
    for (auto& [key, report] : owed) {
      Done done = std::move(report->done);
      done(status);
    }
    return static_cast<int>(owed.size());
  }

  // When the oldest report owed now was asked for; nullopt when none is owed.
  std::optional<absl::Time> OldestSince() const {
    absl::MutexLock lock(&mu_);
    std::optional<absl::Time> oldest;
    for (const auto& [key, report] : owed_) {
      if (!oldest || report->since < *oldest) oldest = report->since;
    }
    return oldest;
  }

  // Blocks until a report is owed, or `timeout` passes; returns whether one is owed.
  bool WaitUntilOwed(absl::Duration timeout) const {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(this, &OwedReports::AnyOwedLocked), timeout);
  }

  int64_t owed() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(owed_.size());
  }

 private:
  bool AnyOwedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !owed_.empty(); }

  mutable absl::Mutex mu_;
  absl::flat_hash_map<Report*, Handle> owed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_OWED_REPORTS_H_
