// The CUDA entry points of a build without nvcc: no GPU is ever found.
#include "engine/cuda/cuda_backend.h"

namespace tensord::engine::cuda {

bool Built() { return false; }

std::vector<DeviceInfo> RegisterBackends(std::string* why) {
  if (why != nullptr) *why = "this tensord was built without CUDA (no nvcc at build time)";
  return {};
}

}  // namespace tensord::engine::cuda
