#include "engine/memory_budget.h"

#include "absl/strings/str_cat.h"

namespace tensord::engine {
namespace {
thread_local std::shared_ptr<MemoryBudget> current_budget;
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

MemoryBudget* CurrentMemoryBudget() { return current_budget.get(); }
std::shared_ptr<MemoryBudget> CurrentMemoryBudgetShared() { return current_budget; }

ScopedMemoryBudget::ScopedMemoryBudget(std::shared_ptr<MemoryBudget> budget)
    : previous_(std::move(current_budget)) {
  current_budget = std::move(budget);
}

ScopedMemoryBudget::~ScopedMemoryBudget() { current_budget = std::move(previous_); }

}  // namespace tensord::engine
