#include "server/profile.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "server/proto_convert.h"

namespace tensord::server {

OpProfile::OpProfile(bool record_shapes, int64_t max_ops,
                     std::shared_ptr<engine::MemoryBudget> budget, int64_t max_bytes)
    : record_shapes_(record_shapes),
      max_ops_(max_ops),
      max_bytes_(max_bytes),
      budget_(std::move(budget)) {}

OpProfile::~OpProfile() {
  absl::MutexLock lock(&mu_);
  if (budget_ != nullptr) budget_->Release(charged_);
}

void OpProfile::Add(absl::string_view name, uint64_t op_id, uint64_t stream,
                    uint64_t first_output, absl::Span<const engine::Tensor> inputs,
                    engine::PlannedOp& plan) {
  v1::ProfiledOp op;
  op.set_op(std::string(name));
  op.set_op_id(op_id);
  op.set_first_output(first_output);
  op.set_stream(stream);
  const int64_t now = Now();
  op.set_queued_ns(now);
  const bool has_kernel = plan.has_kernel();
  op.set_has_kernel(has_kernel);
  op.set_start_ns(has_kernel ? -1 : now);
  op.set_end_ns(has_kernel ? -1 : now);
  op.set_device_ns(-1);
  if (!plan.outputs.empty()) {
    op.set_device(plan.outputs[0].device().ToString());
  } else if (!inputs.empty()) {
    op.set_device(inputs[0].device().ToString());
  }
  if (record_shapes_) {
    for (const engine::Tensor& t : inputs) {
      auto* sizes = op.add_input_sizes();
      for (int64_t s : t.sizes()) sizes->add_values(s);
      op.add_input_dtypes(DTypeToProto(t.dtype()));
    }
    for (const engine::Tensor& t : plan.outputs) {
      auto* sizes = op.add_output_sizes();
      for (int64_t s : t.sizes()) sizes->add_values(s);
    }
  }
  // New storages: an output's storage that no input and no earlier output holds.
  int64_t allocated = 0;
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const auto& storage = plan.outputs[i].storage();
    if (storage == nullptr) continue;
    bool seen = false;
    for (const engine::Tensor& t : inputs) seen = seen || t.storage() == storage;
    for (size_t j = 0; j < i; ++j) seen = seen || plan.outputs[j].storage() == storage;
    if (!seen) allocated += storage->nbytes();
  }
  op.set_allocated_bytes(allocated);
  // Its size in memory and in the answer (each with room for the times set when it runs).
  const int64_t used = std::max<int64_t>(kProfiledOpBytes,
                                         static_cast<int64_t>(op.SpaceUsedLong()));
  const int64_t wire = static_cast<int64_t>(op.ByteSizeLong()) + 64;
  int64_t index;
  {
    absl::MutexLock lock(&mu_);
    if (collected_) return;
    const int64_t n = static_cast<int64_t>(ops_.size());
    bool room = n < max_ops_ && wire_bytes_ + wire <= max_bytes_;
    if (room && budget_ != nullptr && used_ + used > charged_) {
      const int64_t more = std::max(kProfiledBytesPerCharge, used_ + used - charged_);
      room = budget_->Charge(more).ok();
      if (room) charged_ += more;
    }
    if (!room) {
      ++dropped_;
      last_.reset();
      return;
    }
    used_ += used;
    wire_bytes_ += wire;
    last_.emplace(used, wire);
    index = n;
    ops_.push_back(std::move(op));
  }
  if (!has_kernel) return;
  // The profile lives as long as a queued kernel that reports to it. On a device whose lanes
  // time their work (a GPU), marks before and after the launch time the kernel on the device.
  plan.kernel = [kernel = std::move(plan.kernel), self = shared_from_this(), index]() mutable {
    engine::ExecContext* context = engine::ExecContext::Current();
    std::vector<std::pair<engine::DeviceLane*, std::unique_ptr<engine::LaneMark>>> before;
    if (context != nullptr) {
      for (const auto& [backend, lane] : context->lanes()) {
        if (std::unique_ptr<engine::LaneMark> mark = lane->Mark()) {
          before.emplace_back(lane.get(), std::move(mark));
        }
      }
    }
    const int64_t start = self->Now();
    absl::Status status = kernel();
    const int64_t end = self->Now();
    std::vector<DeviceSpan> spans;
    if (context != nullptr) {
      for (engine::DeviceLane* lane : context->launched()) {
        for (auto& [marked, mark] : before) {
          if (marked != lane || mark == nullptr) continue;
          if (std::unique_ptr<engine::LaneMark> after = lane->Mark()) {
            spans.push_back(DeviceSpan{std::move(mark), std::move(after)});
          }
        }
      }
    }
    self->Ran(index, start, end, !status.ok(), std::move(spans));
    return status;
  };
}

void OpProfile::ForgetLast() {
  absl::MutexLock lock(&mu_);
  if (collected_ || ops_.empty() || !last_) return;
  used_ -= last_->first;
  wire_bytes_ -= last_->second;
  last_.reset();
  ops_.pop_back();
}

void OpProfile::Ran(int64_t index, int64_t start_ns, int64_t end_ns, bool failed,
                    std::vector<DeviceSpan> spans) {
  absl::MutexLock lock(&mu_);
  if (collected_) return;
  v1::ProfiledOp& op = ops_[static_cast<size_t>(index)];
  op.set_start_ns(start_ns);
  op.set_end_ns(end_ns);
  op.set_failed(failed);
  if (!spans.empty()) spans_.emplace_back(index, std::move(spans));
}

void OpProfile::Collect(v1::ProfileResponse* response) {
  absl::MutexLock lock(&mu_);
  collected_ = true;
  for (auto& [index, spans] : spans_) {
    int64_t total = 0;
    for (const DeviceSpan& span : spans) {
      absl::StatusOr<int64_t> ns = span.after->NanosecondsSince(*span.before);
      if (!ns.ok()) {
        total = -1;
        break;
      }
      total += *ns;
    }
    ops_[static_cast<size_t>(index)].set_device_ns(total);
  }
  spans_.clear();  // (the marks go with their events here, not on a device's callback thread)
  response->mutable_ops()->Reserve(static_cast<int>(ops_.size()));
  for (v1::ProfiledOp& op : ops_) *response->add_ops() = std::move(op);
  ops_.clear();
  response->set_dropped(dropped_);
  response->set_max_ops(max_ops_);
}

}  // namespace tensord::server
