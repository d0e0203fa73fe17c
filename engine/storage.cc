#include "engine/storage.h"

#include <atomic>

#include "engine/status_macros.h"

namespace tensord::engine {
namespace {
std::atomic<uint64_t> next_storage_id{1};
}  // namespace

absl::StatusOr<std::shared_ptr<Storage>> Storage::Create(Allocator& allocator, int64_t nbytes) {
  TENSORD_ASSIGN_OR_RETURN(void* data, allocator.Allocate(nbytes));
  return std::shared_ptr<Storage>(new Storage(&allocator, data, nbytes));
}

Storage::Storage(Allocator* allocator, void* data, int64_t nbytes)
    : allocator_(allocator),
      data_(data),
      nbytes_(nbytes),
      id_(next_storage_id.fetch_add(1, std::memory_order_relaxed)) {}

Storage::~Storage() { allocator_->Deallocate(data_, nbytes_); }

}  // namespace tensord::engine
