// The CUDA backend's entry points. This header needs no CUDA headers: builds without nvcc link
// a version of these functions that finds no GPU (engine/cuda/no_cuda.cc).
#ifndef TENSORD_ENGINE_CUDA_CUDA_BACKEND_H_
#define TENSORD_ENGINE_CUDA_CUDA_BACKEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/device.h"

namespace tensord::engine::cuda {

struct DeviceInfo {
  Device device;
  std::string name;               // "NVIDIA H100 80GB HBM3"
  int64_t total_memory = 0;       // bytes
  int major = 0, minor = 0;       // compute capability
  int multiprocessors = 0;
};

// Whether this build has the CUDA backend compiled in.
bool Built();

// Finds the machine's GPUs and registers a Backend for each (engine/runtime/backend.h), once; later calls
// return the same list. Empty when there is no usable GPU, with the reason in `*why`.
std::vector<DeviceInfo> RegisterBackends(std::string* why = nullptr);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_CUDA_BACKEND_H_
