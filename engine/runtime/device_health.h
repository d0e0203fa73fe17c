// Devices that cannot recover: a backend reports one once it knows (CUDA's context lost to a
// kernel fault, after which every later call on that device fails until the process restarts),
// and listeners act on it (the server stops answering SERVING, so that orchestrators restart it).
#ifndef TENSORD_ENGINE_RUNTIME_DEVICE_HEALTH_H_
#define TENSORD_ENGINE_RUNTIME_DEVICE_HEALTH_H_

#include <functional>
#include <string>
#include <vector>

#include "engine/core/device.h"

namespace tensord::engine {

struct LostDevice {
  Device device;
  std::string reason;
};

// Records `device` as lost; the first report of each device reaches every listener, on the
// reporting thread (listeners must not block).
void ReportDeviceLost(const Device& device, const std::string& reason);

// Every device reported lost, in the order of their first reports.
std::vector<LostDevice> LostDevices();

// Adds a listener for the devices reported lost from now on; returns its id for removal.
int AddDeviceLostListener(std::function<void(const LostDevice&)> listener);
void RemoveDeviceLostListener(int id);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_DEVICE_HEALTH_H_
