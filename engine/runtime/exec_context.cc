#include "engine/runtime/exec_context.h"

#include <algorithm>

namespace tensord::engine {
namespace {
thread_local ExecContext* current_context = nullptr;
thread_local const ExecContext* chunks_of = nullptr;  // a pool worker's (ChunksOf)
}  // namespace

const ExecContext* ExecContext::CancelSource() {
  return current_context != nullptr ? current_context : chunks_of;
}

bool ExecContext::CancelRequested() {
  const ExecContext* context = CancelSource();
  return context != nullptr && context->cancel_requested();
}

ExecContext::ChunksOf::ChunksOf(const ExecContext* task) : saved_(chunks_of) { chunks_of = task; }
ExecContext::ChunksOf::~ChunksOf() { chunks_of = saved_; }

ExecContext::ExecContext(DeviceLanes* lanes) : lanes_(lanes), previous_(current_context) {
  current_context = this;
}

ExecContext::~ExecContext() { current_context = previous_; }

ExecContext* ExecContext::Current() { return current_context; }

ExecContext::Outside::Outside() : saved_(current_context) { current_context = nullptr; }
ExecContext::Outside::~Outside() { current_context = saved_; }

DeviceLane* ExecContext::Launch(const Backend* backend,
                                absl::AnyInvocable<std::unique_ptr<DeviceLane>()> create) {
  std::unique_ptr<DeviceLane>& lane = (*lanes_)[backend];
  if (lane == nullptr) lane = create();
  if (std::find(launched_.begin(), launched_.end(), lane.get()) == launched_.end()) {
    launched_.push_back(lane.get());
  }
  return lane.get();
}

DeviceLane* ExecContext::Launched(const Backend* backend) const {
  auto it = lanes_->find(backend);
  if (it == lanes_->end()) return nullptr;
  DeviceLane* lane = it->second.get();
  return std::find(launched_.begin(), launched_.end(), lane) == launched_.end() ? nullptr : lane;
}

KernelError* ExecContext::ErrorSlot(DeviceLane* lane, KernelErrorDecoder decode) {
  int64_t handle = 0;
  KernelError* slot = lane->AcquireErrorSlot(&handle);
  if (slot != nullptr) error_slots_.push_back({lane, handle, std::move(decode)});
  return slot;
}

}  // namespace tensord::engine
