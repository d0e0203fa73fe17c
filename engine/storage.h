// Storage: one flat allocation on one device.
#ifndef TENSORD_ENGINE_STORAGE_H_
#define TENSORD_ENGINE_STORAGE_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/allocator.h"
#include "engine/device.h"

namespace tensord::engine {

// Owns `nbytes` bytes on one device. Not copyable: tensors share a Storage through
// std::shared_ptr, and so do queued ops that read or write it; the bytes go back to the allocator
// when the last of them lets go. Thread-safe for concurrent readers; the bytes themselves are
// guarded by stream ordering, not by this class.
class Storage {
 public:
  // Allocates `nbytes` (>= 0). RESOURCE_EXHAUSTED when the allocator cannot.
  static absl::StatusOr<std::shared_ptr<Storage>> Create(Allocator& allocator, int64_t nbytes);

  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  void* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }  // NB: bytes, not elements
  Device device() const { return allocator_->device(); }
  // Process-unique, never reused: lets clients tell whether two tensors share a storage.
  uint64_t id() const { return id_; }

 private:
  Storage(Allocator* allocator, void* data, int64_t nbytes);

  Allocator* allocator_;
  void* data_;
  int64_t nbytes_;
  uint64_t id_;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_STORAGE_H_
