// Where a storage lives.
#ifndef TENSORD_ENGINE_CORE_DEVICE_H_
#define TENSORD_ENGINE_CORE_DEVICE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tensord::engine {

// NB: numeric values are part of the wire protocol.
enum class DeviceType : int8_t { kCPU = 0, kCUDA = 1 };

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;  // always 0 for the CPU

  bool is_cpu() const { return type == DeviceType::kCPU; }
  bool is_cuda() const { return type == DeviceType::kCUDA; }
  // "cpu", "cuda:0" — PyTorch's spelling.
  std::string ToString() const;
  friend bool operator==(const Device& a, const Device& b) {
    return a.type == b.type && a.index == b.index;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
};

inline constexpr Device kCpu{DeviceType::kCPU, 0};
// cuda:0 … cuda:15: the devices a server serves and a client plans for.
inline constexpr int kMaxCudaDevices = 16;

// Parses "cpu", "cuda", "cuda:N".
absl::StatusOr<Device> ParseDevice(absl::string_view text);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_CORE_DEVICE_H_
