#include "engine/runtime/memory_budget.h"

#include "absl/strings/str_cat.h"

namespace tensord::engine {
namespace {
thread_local std::shared_ptr<DeviceBudgets> current_budgets;
}  // namespace

std::shared_ptr<MemoryBudget> MemoryBudget::Create(std::string name, int64_t limit_bytes,
                                                   std::shared_ptr<MemoryBudget> parent) {
  return std::make_shared<MemoryBudget>(std::move(name), limit_bytes, std::move(parent));
}

absl::Status MemoryBudget::Charge(int64_t bytes) {
  if (bytes <= 0) return absl::OkStatus();
  int64_t used = used_.load(std::memory_order_relaxed);
  for (;;) {
    if (bytes > limit_ - used) {
      return absl::ResourceExhaustedError(
          absl::StrCat("out of memory in ", name_, ": allocating ", bytes, " bytes with ", used,
                       " of ", limit_, " bytes in use"));
    }
    if (used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed)) break;
  }
  if (parent_) {
    absl::Status s = parent_->Charge(bytes);
    if (!s.ok()) {
      used_.fetch_sub(bytes, std::memory_order_relaxed);
      return s;
    }
  }
  return absl::OkStatus();
}

void MemoryBudget::Release(int64_t bytes) {
  if (bytes <= 0) return;
  used_.fetch_sub(bytes, std::memory_order_relaxed);
  if (parent_) parent_->Release(bytes);
}

std::shared_ptr<DeviceBudgets> DeviceBudgets::Create(std::string name, int64_t host_limit,
                                                     int64_t gpu_limit,
                                                     std::shared_ptr<DeviceBudgets> parent) {
  return std::make_shared<DeviceBudgets>(std::move(name), host_limit, gpu_limit,
                                         std::move(parent));
}

std::shared_ptr<MemoryBudget> DeviceBudgets::For(Device device) {
  const int key = device.is_cpu() ? -1 : device.index;
  {
    absl::MutexLock lock(&mu_);
    auto it = budgets_.find(key);
    if (it != budgets_.end()) return it->second;
  }
  std::shared_ptr<MemoryBudget> parent = parent_ ? parent_->For(device) : nullptr;
  absl::MutexLock lock(&mu_);
  std::shared_ptr<MemoryBudget>& budget = budgets_[key];
  if (budget == nullptr) {
    budget = MemoryBudget::Create(
        device.is_cpu() ? name_ : absl::StrCat(name_, " on ", device.ToString()),
        device.is_cpu() ? host_limit_ : gpu_limit_, std::move(parent));
  }
  return budget;
}

int64_t DeviceBudgets::used() const {
  absl::MutexLock lock(&mu_);
  int64_t total = 0;
  for (const auto& [key, budget] : budgets_) total += budget->used();
  return total;
}

std::vector<std::pair<std::string, int64_t>> DeviceBudgets::UsedByDevice() const {
  std::vector<std::pair<std::string, int64_t>> used;
  absl::MutexLock lock(&mu_);
  for (const auto& [key, budget] : budgets_) {
    used.emplace_back(key < 0 ? std::string("cpu") : absl::StrCat("cuda:", key), budget->used());
  }
  return used;
}

std::shared_ptr<MemoryBudget> CurrentMemoryBudget(Device device) {
  return current_budgets ? current_budgets->For(device) : nullptr;
}

ScopedMemoryBudget::ScopedMemoryBudget(std::shared_ptr<DeviceBudgets> budgets)
    : previous_(std::move(current_budgets)) {
  current_budgets = std::move(budgets);
}

ScopedMemoryBudget::~ScopedMemoryBudget() { current_budgets = std::move(previous_); }

}  // namespace tensord::engine
