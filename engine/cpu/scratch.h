// Working memory of a CPU kernel, taken from the CPU pool (engine/runtime/allocator.h) rather
// than from a std::vector: a reused block has its pages already, where a fresh one faults every
// page in (and a vector writes zeros over it first), which cost a sort of a million elements
// more than the sort itself. The elements are not initialised. An allocation the machine cannot
// give is RESOURCE_EXHAUSTED for the op, not an exception that ends the server.
#ifndef TENSORD_ENGINE_CPU_SCRATCH_H_
#define TENSORD_ENGINE_CPU_SCRATCH_H_

#include <cstdint>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/runtime/allocator.h"

namespace tensord::engine::cpu {

template <typename T>
class Scratch {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  Scratch() = default;
  static absl::StatusOr<Scratch> Make(int64_t n) {
    Scratch s;
    if (n <= 0) return s;
    absl::StatusOr<void*> block = CpuAllocator().Allocate(n * static_cast<int64_t>(sizeof(T)));
    if (!block.ok()) return block.status();
    s.data_ = static_cast<T*>(*block);
    s.n_ = n;
    return s;
  }
  Scratch(Scratch&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), n_(std::exchange(other.n_, 0)) {}
  Scratch& operator=(Scratch&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(n_, other.n_);
    return *this;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (data_ != nullptr) CpuAllocator().Deallocate(data_, n_ * static_cast<int64_t>(sizeof(T)));
  }

  T* data() const { return data_; }
  int64_t size() const { return n_; }
  T& operator[](int64_t i) const { return data_[i]; }
  void swap(Scratch& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(n_, other.n_);
  }

 private:
  T* data_ = nullptr;
  int64_t n_ = 0;
};

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_SCRATCH_H_
