#include "engine/runtime/device_health.h"

#include <map>
#include <utility>

#include "absl/synchronization/mutex.h"

namespace tensord::engine {
namespace {

struct Registry {
  absl::Mutex mu;
  std::vector<LostDevice> lost ABSL_GUARDED_BY(mu);
  std::map<int, std::function<void(const LostDevice&)>> listeners ABSL_GUARDED_BY(mu);
  int next_id ABSL_GUARDED_BY(mu) = 1;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry();  // never destroyed: backends may report at exit
  return *registry;
}

}  // namespace

void ReportDeviceLost(const Device& device, const std::string& reason) {
  Registry& r = TheRegistry();
  std::vector<std::function<void(const LostDevice&)>> listeners;
  LostDevice lost{device, reason};
  {
    absl::MutexLock lock(&r.mu);
    for (const LostDevice& l : r.lost) {
      if (l.device == device) return;  // told once
    }
    r.lost.push_back(lost);
    for (const auto& [id, fn] : r.listeners) listeners.push_back(fn);
  }
  for (const auto& fn : listeners) fn(lost);
}

std::vector<LostDevice> LostDevices() {
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  return r.lost;
}

int AddDeviceLostListener(std::function<void(const LostDevice&)> listener) {
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  const int id = r.next_id++;
  r.listeners.emplace(id, std::move(listener));
  return id;
}

void RemoveDeviceLostListener(int id) {
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  r.listeners.erase(id);
}

}  // namespace tensord::engine
