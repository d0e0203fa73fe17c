// Device memory allocators.
#ifndef TENSORD_ENGINE_RUNTIME_ALLOCATOR_H_
#define TENSORD_ENGINE_RUNTIME_ALLOCATOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/core/device.h"

namespace tensord::engine {

struct AllocatorStats {
  int64_t live_bytes = 0;        // bytes handed out and not yet returned (requested sizes)
  int64_t live_allocations = 0;  // blocks handed out and not yet returned
  int64_t cached_bytes = 0;      // bytes held in the pool for reuse (block capacities)
  int64_t pool_hits = 0;         // allocations served from the pool
  int64_t pool_misses = 0;       // allocations that went to the operating system
};

// Thread-safe. An allocation of 0 bytes returns nullptr and must be deallocated with 0.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual Device device() const = 0;
  // Returns RESOURCE_EXHAUSTED when the memory cannot be had.
  virtual absl::StatusOr<void*> Allocate(int64_t nbytes) = 0;
  // `nbytes` must be the value passed to Allocate.
  virtual void Deallocate(void* ptr, int64_t nbytes) = 0;
  virtual AllocatorStats stats() const = 0;
  // Returns cached blocks to the operating system.
  virtual void ReleaseCached() = 0;
};

// The process-wide CPU allocator: a size-bucketed buffer pool. Fresh pages fault in slowly (far
// slower than copying into a reused buffer), so freed blocks are kept, per size class, for reuse
// up to a cap on cached bytes. Large blocks are 2 MiB-aligned, advised for transparent huge pages
// and pre-faulted in one call.
Allocator& CpuAllocator();

// Caps the bytes the CPU pool keeps cached (default: 1/4 of physical memory).
void SetCpuPoolCacheLimit(int64_t bytes);
// Gives idle host memory back to the system: when the pool has neither allocated nor freed
// anything since the previous call, it keeps at most `floor` bytes cached (the largest blocks
// go first) and the C heap returns its free pages (malloc_trim). Called periodically; a busy
// server is left alone, an idle one shrinks to its floor within two periods.
void TrimCpuMemoryIfIdle(int64_t floor);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_ALLOCATOR_H_
