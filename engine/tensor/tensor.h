// Tensor: a storage plus the metadata that says how to read it.
#ifndef TENSORD_ENGINE_TENSOR_TENSOR_H_
#define TENSORD_ENGINE_TENSOR_TENSOR_H_

#include <memory>
#include <utility>

#include "engine/tensor/storage.h"
#include "engine/tensor/tensor_meta.h"

namespace tensord::engine {

// A value type: copying a Tensor copies the metadata and shares the storage, like a PyTorch
// view. Thread-compatible. A default-constructed Tensor is undefined (no storage).
class Tensor {
 public:
  Tensor() = default;
  // NB: callers must have validated `meta` against `storage` (ValidateMeta).
  Tensor(std::shared_ptr<Storage> storage, TensorMeta meta)
      : storage_(std::move(storage)), meta_(std::move(meta)) {}

  bool defined() const { return storage_ != nullptr; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  const TensorMeta& meta() const { return meta_; }
  Device device() const { return storage_->device(); }

  DType dtype() const { return meta_.dtype(); }
  int64_t itemsize() const { return meta_.itemsize(); }
  int64_t dim() const { return meta_.dim(); }
  IntList sizes() const { return meta_.sizes(); }
  IntList strides() const { return meta_.strides(); }
  int64_t size(int64_t d) const { return meta_.size(d); }
  int64_t stride(int64_t d) const { return meta_.stride(d); }
  int64_t storage_offset() const { return meta_.storage_offset(); }
  int64_t numel() const { return meta_.numel(); }
  bool is_contiguous() const { return meta_.is_contiguous(); }

  // Address of element [0, 0, …]: storage base + offset * itemsize (PyTorch's data_ptr()).
  // A storage without bytes (empty, or metadata only) gives nullptr whatever the offset.
  char* data() const {
    char* base = static_cast<char*>(storage_->data());
    return base == nullptr ? nullptr : base + meta_.storage_offset() * meta_.itemsize();
  }
  template <typename T>
  T* data_as() const {
    return reinterpret_cast<T*>(data());
  }
  // Shares the storage with `other`.
  bool is_alias_of(const Tensor& other) const { return storage_ == other.storage_; }
  // A tensor on the same storage with other metadata (already validated by the caller).
  Tensor WithMeta(TensorMeta meta) const { return Tensor(storage_, std::move(meta)); }

 // A 0-d tensor made from a Python number passed where a tensor goes (torch's
  // is_wrapped_number): it takes part in an op but has the lowest priority in type promotion.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool v) { wrapped_number_ = v; }

 private:
  std::shared_ptr<Storage> storage_;
  TensorMeta meta_;
  bool wrapped_number_ = false;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_TENSOR_TENSOR_H_
