#include <malloc.h>
#include <sys/mman.h>
#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "engine/runtime/allocator.h"
#include "engine/core/errors.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace tensord::engine {
namespace {

constexpr int64_t kSmallAlignment = 64;
constexpr int64_t kLargeThreshold = 1 << 20;  // blocks from here on are mmap'ed
constexpr int64_t kHugePage = 2 << 20;

// Size classes: multiples of 64 bytes below 4 KiB, then 4 steps per power of two (at most 25%
// slack, 12.5% on average), rounded to whole huge pages for large blocks.
int64_t RoundToClass(int64_t nbytes) {
  if (nbytes <= 4096) return (nbytes + kSmallAlignment - 1) / kSmallAlignment * kSmallAlignment;
  int msb = 63 - __builtin_clzll(static_cast<uint64_t>(nbytes));
  int64_t step = int64_t{1} << (msb - 2);
  int64_t rounded = (nbytes + step - 1) / step * step;
  if (rounded >= kLargeThreshold) rounded = (rounded + kHugePage - 1) / kHugePage * kHugePage;
  return rounded;
}

void* OsAllocate(int64_t capacity) {
  if (capacity < kLargeThreshold) {
    return std::aligned_alloc(kSmallAlignment, static_cast<size_t>(capacity));
  }
  // Over-map by one huge page so the block can start on a 2 MiB boundary.
  const size_t span = static_cast<size_t>(capacity + kHugePage);
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (begin + kHugePage - 1) & ~static_cast<uintptr_t>(kHugePage - 1);
  if (aligned > begin) munmap(raw, aligned - begin);
  uintptr_t end = begin + span;
  uintptr_t aligned_end = aligned + static_cast<uintptr_t>(capacity);
  if (end > aligned_end) munmap(reinterpret_cast<void*>(aligned_end), end - aligned_end);
  void* block = reinterpret_cast<void*>(aligned);
  madvise(block, static_cast<size_t>(capacity), MADV_HUGEPAGE);
  // Fault every page in now, in one call: far faster than first-touch faults one by one, and
  // a shortage of memory shows up here as ENOMEM instead of as a killed process later. Kernels
  // without MADV_POPULATE_WRITE answer EINVAL: pages then fault in on first use.
  if (madvise(block, static_cast<size_t>(capacity), MADV_POPULATE_WRITE) != 0 &&
      errno != EINVAL) {
    munmap(block, static_cast<size_t>(capacity));
    return nullptr;
  }
  return block;
}

void OsFree(void* ptr, int64_t capacity) {
  if (capacity < kLargeThreshold) {
    std::free(ptr);
  } else {
    munmap(ptr, static_cast<size_t>(capacity));
  }
}

int64_t PhysicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{4} << 30;
  return static_cast<int64_t>(pages) * page_size;
}

int64_t DefaultCacheLimit() { return PhysicalMemory() / 4; }

class PoolAllocator final : public Allocator {
 public:
  Device device() const override { return kCpu; }

  absl::StatusOr<void*> Allocate(int64_t nbytes) override {
    if (nbytes == 0) return nullptr;
    // More than the machine has can never succeed; refuse before asking the kernel.
    static const int64_t physical = PhysicalMemory();
    if (nbytes < 0 || nbytes > physical) {
      return ResourceError("allocate", absl::StrCat("CPU allocator: can't allocate memory: you "
                                                    "tried to allocate ", nbytes,
                                                    " bytes, more than the machine's ", physical));
    }
    const int64_t capacity = RoundToClass(nbytes);
    {
      absl::MutexLock lock(&mu_);
      auto it = free_.find(capacity);
      if (it != free_.end() && !it->second.empty()) {
        void* ptr = it->second.back();
        it->second.pop_back();
        cached_bytes_ -= capacity;
        ++pool_hits_;
        live_bytes_ += nbytes;
        ++live_allocations_;
        return ptr;
      }
      ++pool_misses_;
    }
    void* ptr = OsAllocate(capacity);
    if (ptr == nullptr) {
      // Give the cache back to the system and try once more.
      ReleaseCached();
      ptr = OsAllocate(capacity);
      if (ptr == nullptr) {
        return ResourceError("allocate", absl::StrCat("CPU allocator: can't allocate memory: you "
                                                      "tried to allocate ", nbytes, " bytes"));
      }
    }
    absl::MutexLock lock(&mu_);
    live_bytes_ += nbytes;
    ++live_allocations_;
    return ptr;
  }

  void Deallocate(void* ptr, int64_t nbytes) override {
    if (ptr == nullptr) return;
    const int64_t capacity = RoundToClass(nbytes);
    {
      absl::MutexLock lock(&mu_);
      ++deallocations_;
      live_bytes_ -= nbytes;
      --live_allocations_;
      if (cached_bytes_ + capacity <= cache_limit_) {
        free_[capacity].push_back(ptr);
        cached_bytes_ += capacity;
        return;
      }
    }
    OsFree(ptr, capacity);
  }

  AllocatorStats stats() const override {
    absl::MutexLock lock(&mu_);
    return AllocatorStats{live_bytes_, live_allocations_, cached_bytes_, pool_hits_, pool_misses_};
  }

  void ReleaseCached() override {
    absl::flat_hash_map<int64_t, std::vector<void*>> released;
    {
      absl::MutexLock lock(&mu_);
      released.swap(free_);
      cached_bytes_ = 0;
    }
    for (auto& [capacity, blocks] : released) {
      for (void* ptr : blocks) OsFree(ptr, capacity);
    }
  }

  // Returns whether the pool was idle since the previous call (and trimmed it).
  bool TrimIfIdle(int64_t floor) {
    std::vector<std::pair<int64_t, void*>> released;
    {
      absl::MutexLock lock(&mu_);
      const int64_t activity = pool_hits_ + pool_misses_ + deallocations_;
      if (activity != activity_at_last_trim_check_) {
        activity_at_last_trim_check_ = activity;
        trimmed_since_activity_ = false;
        return false;
      }
      if (trimmed_since_activity_) return false;
      trimmed_since_activity_ = true;
      std::vector<int64_t> classes;
      for (const auto& [capacity, blocks] : free_) {
        if (!blocks.empty()) classes.push_back(capacity);
      }
      std::sort(classes.rbegin(), classes.rend());
      for (int64_t capacity : classes) {
        std::vector<void*>& blocks = free_[capacity];
        while (!blocks.empty() && cached_bytes_ > floor) {
          released.emplace_back(capacity, blocks.back());
          blocks.pop_back();
          cached_bytes_ -= capacity;
        }
      }
    }
    for (const auto& [capacity, ptr] : released) OsFree(ptr, capacity);
    return true;
  }

  void SetCacheLimit(int64_t bytes) {
    {
      absl::MutexLock lock(&mu_);
      cache_limit_ = bytes;
    }
    ReleaseCached();
  }

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int64_t, std::vector<void*>> free_ ABSL_GUARDED_BY(mu_);
  int64_t cache_limit_ ABSL_GUARDED_BY(mu_) = DefaultCacheLimit();
  int64_t cached_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t live_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t live_allocations_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t pool_hits_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t pool_misses_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t deallocations_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t activity_at_last_trim_check_ ABSL_GUARDED_BY(mu_) = -1;
  bool trimmed_since_activity_ ABSL_GUARDED_BY(mu_) = false;
};

PoolAllocator& Pool() {
  static PoolAllocator* pool = new PoolAllocator();  // never destroyed: outlives all storages
  return *pool;
}

}  // namespace

Allocator& CpuAllocator() { return Pool(); }
void SetCpuPoolCacheLimit(int64_t bytes) { Pool().SetCacheLimit(bytes); }

void TrimCpuMemoryIfIdle(int64_t floor) {
  if (Pool().TrimIfIdle(floor)) malloc_trim(0);
}

}  // namespace tensord::engine
