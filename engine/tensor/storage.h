// Storage: one flat allocation on one device.
#ifndef TENSORD_ENGINE_TENSOR_STORAGE_H_
#define TENSORD_ENGINE_TENSOR_STORAGE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/runtime/allocator.h"
#include "engine/core/device.h"
#include "engine/runtime/memory_budget.h"

namespace tensord::engine {

// Owns `nbytes` bytes on one device. Not copyable: tensors share a Storage through
// std::shared_ptr, and so do queued ops that read or write it; the bytes go back to the allocator
// (and the bytes charged to a memory budget are released) when the last of them lets go.
//
// Thread-safe. Besides the bytes, a storage carries the state that orders host reads against
// queued writes (see "Ordering" below) and its poison: the error of a failed op that wrote it.
class Storage {
 public:
  // Allocates `nbytes` (>= 0), charged to `budget` first when given (RESOURCE_EXHAUSTED, and
  // nothing allocated, when it does not fit).
  static absl::StatusOr<std::shared_ptr<Storage>> Create(
      Allocator& allocator, int64_t nbytes, std::shared_ptr<MemoryBudget> budget = nullptr);

  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  void* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }  // NB: bytes, not elements
  Device device() const { return allocator_->device(); }
  // Process-unique, never reused: tells whether two tensors share a storage.
  uint64_t id() const { return id_; }

  // The address clients see for this storage (a session-private address space, never a server
  // address). Assigned once by the owner; 0 until then.
  uint64_t virtual_address() const { return virtual_address_.load(std::memory_order_acquire); }
  // Sets it if unset; returns the address in effect.
  uint64_t SetVirtualAddressOnce(uint64_t address);

  // ---- Ordering ------------------------------------------------------------------------------
  // Queued ops write storages on streams; the host reads them (downloads, storage reads) from
  // RPC handlers. A host read must see every write queued before it and none queued after it,
  // without waiting for unrelated work. Tickets from one counter order them: a write takes a
  // ticket when queued; a read takes the current counter value r and waits for writes <= r; a
  // write with ticket w waits (before its kernel runs) for reads with r < w. Neither can wait
  // on something queued after it, so there is no cycle.

  // A write is queued: returns its ticket.
  uint64_t BeginWrite();
  // The write finished (whether or not it succeeded).
  void EndWrite(uint64_t ticket);
  // Whether no read that must precede write `ticket` is outstanding.
  bool IsWritable(uint64_t ticket) const;
  // Runs `ready` once no read that must precede write `ticket` is outstanding — inline when
  // that is already so, else on the thread that ends the last such read.
  void WhenWritable(uint64_t ticket, absl::AnyInvocable<void()> ready);
  // A host read of everything queued so far: returns its ticket; writes queued from now on wait
  // for it. The caller must call EndRead(ticket) after reading.
  uint64_t BeginRead();
  // Runs `ready` once every write read `ticket` must see is done — inline when they already
  // are, else on the thread that ends the last of them.
  void WhenReadable(uint64_t ticket, absl::AnyInvocable<void()> ready);
  void EndRead(uint64_t ticket);
  // Whether writes are queued and not yet done: a host read now would have to wait.
  bool HasQueuedWrites() const;

  // ---- Poison --------------------------------------------------------------------------------
  // The root-cause error of the failed op that wrote this storage, or null.
  std::shared_ptr<const absl::Status> poison() const;
  void Poison(std::shared_ptr<const absl::Status> cause);

 private:
  Storage(Allocator* allocator, void* data, int64_t nbytes,
          std::shared_ptr<MemoryBudget> budget);
  void RunReadyLocked(std::vector<absl::AnyInvocable<void()>>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Allocator* allocator_;
  void* data_;
  int64_t nbytes_;
  uint64_t id_;
  std::shared_ptr<MemoryBudget> budget_;
  std::atomic<uint64_t> virtual_address_{0};

  mutable absl::Mutex mu_;
  uint64_t counter_ ABSL_GUARDED_BY(mu_) = 0;
  std::multiset<uint64_t> pending_writes_ ABSL_GUARDED_BY(mu_);
  std::multiset<uint64_t> pending_reads_ ABSL_GUARDED_BY(mu_);
  struct Waiter {
    uint64_t ticket;
    absl::AnyInvocable<void()> ready;
  };
  std::vector<Waiter> read_waiters_ ABSL_GUARDED_BY(mu_);   // reads waiting for writes <= ticket
  std::vector<Waiter> write_waiters_ ABSL_GUARDED_BY(mu_);  // writes waiting for reads < ticket
  std::shared_ptr<const absl::Status> poison_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_TENSOR_STORAGE_H_
