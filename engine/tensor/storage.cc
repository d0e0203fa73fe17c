#include "engine/tensor/storage.h"

#include "engine/core/status_macros.h"

namespace tensord::engine {
namespace {
std::atomic<uint64_t> next_storage_id{1};
}  // namespace

absl::StatusOr<std::shared_ptr<Storage>> Storage::Create(Allocator& allocator, int64_t nbytes,
                                                         std::shared_ptr<MemoryBudget> budget) {
  if (budget) TENSORD_RETURN_IF_ERROR(budget->Charge(nbytes));
  absl::StatusOr<void*> data = allocator.Allocate(nbytes);
  if (!data.ok()) {
    if (budget) budget->Release(nbytes);
    return data.status();
  }
  return std::shared_ptr<Storage>(new Storage(&allocator, *data, nbytes, std::move(budget)));
}

Storage::Storage(Allocator* allocator, void* data, int64_t nbytes,
                 std::shared_ptr<MemoryBudget> budget)
    : allocator_(allocator),
      data_(data),
      nbytes_(nbytes),
      id_(next_storage_id.fetch_add(1, std::memory_order_relaxed)),
      budget_(std::move(budget)) {}

Storage::~Storage() {
  allocator_->Deallocate(data_, nbytes_);
  if (budget_) budget_->Release(nbytes_);
}

uint64_t Storage::SetVirtualAddressOnce(uint64_t address) {
  uint64_t expected = 0;
  if (virtual_address_.compare_exchange_strong(expected, address, std::memory_order_acq_rel)) {
    return address;
  }
  return expected;
}

uint64_t Storage::BeginWrite() {
  absl::MutexLock lock(&mu_);
  const uint64_t ticket = ++counter_;
  pending_writes_.insert(ticket);
  return ticket;
}

void Storage::RunReadyLocked(std::vector<absl::AnyInvocable<void()>>& out) {
  // Reads whose writes (<= ticket) are all done.
  const uint64_t first_write = pending_writes_.empty() ? UINT64_MAX : *pending_writes_.begin();
  for (size_t i = 0; i < read_waiters_.size();) {
    if (read_waiters_[i].ticket < first_write) {
      out.push_back(std::move(read_waiters_[i].ready));
      read_waiters_.erase(read_waiters_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  // Writes with no read (< ticket) outstanding.
  const uint64_t first_read = pending_reads_.empty() ? UINT64_MAX : *pending_reads_.begin();
  for (size_t i = 0; i < write_waiters_.size();) {
    if (first_read >= write_waiters_[i].ticket) {
      out.push_back(std::move(write_waiters_[i].ready));
      write_waiters_.erase(write_waiters_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void Storage::EndWrite(uint64_t ticket) {
  std::vector<absl::AnyInvocable<void()>> ready;
  {
    absl::MutexLock lock(&mu_);
    auto it = pending_writes_.find(ticket);
    if (it != pending_writes_.end()) pending_writes_.erase(it);
    RunReadyLocked(ready);
  }
  for (auto& fn : ready) fn();
}

bool Storage::IsWritable(uint64_t ticket) const {
  absl::MutexLock lock(&mu_);
  return pending_reads_.empty() || *pending_reads_.begin() >= ticket;
}

void Storage::WhenWritable(uint64_t ticket, absl::AnyInvocable<void()> ready) {
  {
    absl::MutexLock lock(&mu_);
    if (!pending_reads_.empty() && *pending_reads_.begin() < ticket) {
      write_waiters_.push_back(Waiter{ticket, std::move(ready)});
      return;
    }
  }
  ready();
}

uint64_t Storage::BeginRead() {
  absl::MutexLock lock(&mu_);
  const uint64_t ticket = counter_;
  pending_reads_.insert(ticket);
  return ticket;
}

void Storage::WhenReadable(uint64_t ticket, absl::AnyInvocable<void()> ready) {
  {
    absl::MutexLock lock(&mu_);
    if (!pending_writes_.empty() && *pending_writes_.begin() <= ticket) {
      read_waiters_.push_back(Waiter{ticket, std::move(ready)});
      return;
    }
  }
  ready();
}

void Storage::EndRead(uint64_t ticket) {
  std::vector<absl::AnyInvocable<void()>> ready;
  {
    absl::MutexLock lock(&mu_);
    auto it = pending_reads_.find(ticket);
    if (it != pending_reads_.end()) pending_reads_.erase(it);
    RunReadyLocked(ready);
  }
  for (auto& fn : ready) fn();
}

bool Storage::HasQueuedWrites() const {
  absl::MutexLock lock(&mu_);
  return !pending_writes_.empty();
}

std::shared_ptr<const absl::Status> Storage::poison() const {
  absl::MutexLock lock(&mu_);
  return poison_;
}

void Storage::Poison(std::shared_ptr<const absl::Status> cause) {
  absl::MutexLock lock(&mu_);
  if (!poison_) poison_ = std::move(cause);
}

}  // namespace tensord::engine
