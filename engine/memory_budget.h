// MemoryBudget: byte accounting with a limit, nested (a session's budget inside the server's).
#ifndef TENSORD_ENGINE_MEMORY_BUDGET_H_
#define TENSORD_ENGINE_MEMORY_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"

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

// The budget new storages made on this thread are charged to (none by default). The server
// sets it around planning a session's ops.
MemoryBudget* CurrentMemoryBudget();
std::shared_ptr<MemoryBudget> CurrentMemoryBudgetShared();

class ScopedMemoryBudget {
 public:
  explicit ScopedMemoryBudget(std::shared_ptr<MemoryBudget> budget);
  ~ScopedMemoryBudget();
  ScopedMemoryBudget(const ScopedMemoryBudget&) = delete;
  ScopedMemoryBudget& operator=(const ScopedMemoryBudget&) = delete;

 private:
  std::shared_ptr<MemoryBudget> previous_;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_MEMORY_BUDGET_H_
