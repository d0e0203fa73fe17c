// MemoryBudget: byte accounting with a limit, nested (a session's budget inside the server's).
#ifndef TENSORD_ENGINE_RUNTIME_MEMORY_BUDGET_H_
#define TENSORD_ENGINE_RUNTIME_MEMORY_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "engine/core/device.h"

namespace tensord::engine {

// Thread-safe. A charge succeeds only if it fits this budget and every parent; on failure
// nothing is charged anywhere. Budgets are shared_ptrs: every storage charged to one keeps it
// alive until the storage is freed.
class MemoryBudget {
 public:
  static std::shared_ptr<MemoryBudget> Create(std::string name, int64_t limit_bytes,
                                              std::shared_ptr<MemoryBudget> parent = nullptr);

  // RESOURCE_EXHAUSTED naming the budget, the request and what is in use.
  absl::Status Charge(int64_t bytes);
  void Release(int64_t bytes);

  int64_t used() const { return used_.load(std::memory_order_relaxed); }
  int64_t limit() const { return limit_; }
  const std::string& name() const { return name_; }

  MemoryBudget(std::string name, int64_t limit, std::shared_ptr<MemoryBudget> parent)
      : name_(std::move(name)), limit_(limit), parent_(std::move(parent)) {}

 private:
  const std::string name_;
  const int64_t limit_;
  const std::shared_ptr<MemoryBudget> parent_;
  std::atomic<int64_t> used_{0};
};

// One owner's budgets (a session's, the server's), one per device: the host's and each GPU's,
// each nested in the parent owner's budget for the same device. Thread-safe.
class DeviceBudgets {
 public:
  // `gpu_limit` applies to each GPU.
  static std::shared_ptr<DeviceBudgets> Create(std::string name, int64_t host_limit,
                                               int64_t gpu_limit,
                                               std::shared_ptr<DeviceBudgets> parent = nullptr);
  // The budget of `device`, made on first use ("session 1a2b… on cuda:0").
  std::shared_ptr<MemoryBudget> For(Device device);
  // Bytes charged, on every device together.
  int64_t used() const;
  // Bytes in use on each device that has a budget ("cpu", "cuda:0", …), for metrics.
  std::vector<std::pair<std::string, int64_t>> UsedByDevice() const;

  DeviceBudgets(std::string name, int64_t host_limit, int64_t gpu_limit,
                std::shared_ptr<DeviceBudgets> parent)
      : name_(std::move(name)), host_limit_(host_limit), gpu_limit_(gpu_limit),
        parent_(std::move(parent)) {}

 private:
  const std::string name_;
  const int64_t host_limit_, gpu_limit_;
  const std::shared_ptr<DeviceBudgets> parent_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int, std::shared_ptr<MemoryBudget>> budgets_ ABSL_GUARDED_BY(mu_);
};

// The budget of `device` that storages made on this thread are charged to (none by default).
// The server sets the budgets around planning a session's ops.
std::shared_ptr<MemoryBudget> CurrentMemoryBudget(Device device);

class ScopedMemoryBudget {
 public:
  explicit ScopedMemoryBudget(std::shared_ptr<DeviceBudgets> budgets);
  ~ScopedMemoryBudget();
  ScopedMemoryBudget(const ScopedMemoryBudget&) = delete;
  ScopedMemoryBudget& operator=(const ScopedMemoryBudget&) = delete;

 private:
  std::shared_ptr<DeviceBudgets> previous_;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_MEMORY_BUDGET_H_
