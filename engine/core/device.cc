#include "engine/core/device.h"

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"

namespace tensord::engine {

std::string Device::ToString() const {
  if (type == DeviceType::kCPU) return "cpu";
  return absl::StrCat("cuda:", index);
}

absl::StatusOr<Device> ParseDevice(absl::string_view text) {
  if (text == "cpu") return kCpu;
  if (text == "cuda") return Device{DeviceType::kCUDA, 0};
  if (absl::ConsumePrefix(&text, "cuda:")) {
    int index;
    if (absl::SimpleAtoi(text, &index) && index >= 0 && index < 1024) {
      return Device{DeviceType::kCUDA, index};
    }
  }
  return RuntimeError("device", absl::StrCat("Expected one of cpu, cuda device type at start of "
                                             "device string: ", text));
}

}  // namespace tensord::engine
