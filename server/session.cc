#include "server/session.h"

#include <algorithm>

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/runtime/memory_budget.h"
#include "server/metrics.h"
#include "engine/ops/op_registry.h"
#include "engine/core/status_macros.h"
#include "server/proto_convert.h"
#include "server/status_util.h"

namespace tensord::server {

using engine::Tensor;

Session::Session(std::string id, std::string public_id, engine::Device device,
                 std::shared_ptr<engine::DeviceBudgets> budget, const ServerLimits& limits,
                 engine::Executor* executor)
    : id_(std::move(id)),
      public_id_(std::move(public_id)),
      device_(device),
      budget_(std::move(budget)),
      limits_(limits),
      executor_(executor),
      last_active_(absl::Now()) {
  streams_[0] = engine::Stream::Create(executor_, 0, limits_.max_queued_ops_per_stream);
}

Session::~Session() { Close(); }

Session::Counts Session::counts() const {
  Counts counts;
  std::vector<std::shared_ptr<engine::Stream>> streams;
  {
    absl::MutexLock lock(&mu_);
    counts.tensors = static_cast<int64_t>(tensors_.size());
    for (const auto& [id, stream] : streams_) streams.push_back(stream);
  }
  // Outside the session's lock: a scrape holds it only to copy.
  for (const auto& stream : streams) counts.queued_ops += stream->pending();
  return counts;
}

void Session::Touch() {
  absl::MutexLock lock(&mu_);
  last_active_ = absl::Now();
}

absl::Time Session::last_active() const {
  absl::MutexLock lock(&mu_);
  return last_active_;
}

absl::StatusOr<Tensor> Session::Find(absl::string_view op, uint64_t id) const {
  absl::MutexLock lock(&mu_);
  auto it = tensors_.find(id);
  if (it == tensors_.end()) {
    return absl::NotFoundError(absl::StrCat(op, ": tensor ", id, " not found in this session"));
  }
  return it->second;
}

absl::Status Session::CheckNewId(absl::string_view op, uint64_t id) const {
  if (id == 0) return absl::InvalidArgumentError(absl::StrCat(op, ": tensor id 0 is reserved"));
  if (tensors_.contains(id)) {
    return absl::AlreadyExistsError(absl::StrCat(op, ": tensor ", id, " already exists"));
  }
  if (static_cast<int64_t>(tensors_.size()) >= limits_.max_tensors_per_session) {
    return absl::ResourceExhaustedError(absl::StrCat(op, ": the session already holds ",
                                                     tensors_.size(),
                                                     " tensors, the limit; release some"));
  }
  return absl::OkStatus();
}

absl::Status Session::ChargeMetadata(absl::string_view op, int64_t count) {
  absl::Status charged = budget_->For(engine::kCpu)->Charge(count * kTensorMetadataBytes);
  if (charged.ok()) return charged;
  return engine::WithPayloadsOf(charged, absl::ResourceExhaustedError(absl::StrCat(
      op, ": no room for the metadata of ", count, " more tensor(s) (", kTensorMetadataBytes,
      " bytes each): ", charged.message())));
}

void Session::ReleaseMetadata(int64_t count) {
  if (count > 0) budget_->For(engine::kCpu)->Release(count * kTensorMetadataBytes);
}

absl::Status Session::Register(absl::string_view op, uint64_t id, Tensor tensor) {
  absl::MutexLock lock(&mu_);
  TENSORD_RETURN_IF_ERROR(CheckNewId(op, id));
  TENSORD_RETURN_IF_ERROR(ChargeMetadata(op, 1));
  tensors_.emplace(id, std::move(tensor));
  return absl::OkStatus();
}

void Session::FillInfo(uint64_t id, const Tensor& tensor, v1::TensorInfo* info) {
  absl::MutexLock lock(&mu_);
  FillInfoLocked(id, tensor, info);
}

void Session::FillInfoLocked(uint64_t id, const Tensor& tensor, v1::TensorInfo* info) {
  const engine::TensorMeta& m = tensor.meta();
  info->set_id(id);
  info->mutable_sizes()->Assign(m.sizes().begin(), m.sizes().end());
  info->mutable_strides()->Assign(m.strides().begin(), m.strides().end());
  info->set_storage_offset(m.storage_offset());
  info->set_dtype(DTypeToProto(m.dtype()));
  info->set_device(tensor.device().ToString());
  info->set_is_contiguous(m.is_contiguous());
  engine::Storage& storage = *tensor.storage();
  info->set_storage_id(storage.id());
  info->set_storage_nbytes(storage.nbytes());
  uint64_t base = storage.virtual_address();
  if (storage.nbytes() == 0) {
    base = 0;  // as torch: an empty storage has a null data pointer
  } else if (base == 0) {
    // 64-byte aligned, with a gap, so distinct storages never share an address.
    const uint64_t span = (static_cast<uint64_t>(storage.nbytes()) + 127) / 64 * 64;
    base = storage.SetVirtualAddressOnce(next_virtual_address_);
    if (base == next_virtual_address_) next_virtual_address_ += span;
  }
  info->set_storage_data_ptr(base);
  // As torch, an empty tensor's data pointer is null whatever its storage.
  info->set_data_ptr(m.numel() == 0
                         ? 0
                         : base + static_cast<uint64_t>(m.storage_offset() * m.itemsize()));
}

absl::Status Session::Describe(absl::Span<const uint64_t> ids, v1::DescribeResponse* response) {
  absl::MutexLock lock(&mu_);
  for (uint64_t id : ids) {
    auto it = tensors_.find(id);
    if (it == tensors_.end()) {
      return absl::NotFoundError(absl::StrCat("describe: tensor ", id,
                                              " not found in this session"));
    }
    FillInfoLocked(id, it->second, response->add_tensors());
  }
  return absl::OkStatus();
}

void Session::Release(absl::Span<const uint64_t> ids, v1::ReleaseResponse* response) {
  std::vector<Tensor> dropped;  // destroyed outside the lock
  {
    absl::MutexLock lock(&mu_);
    dropped.reserve(ids.size());
    for (uint64_t id : ids) {
      auto it = tensors_.find(id);
      if (it == tensors_.end()) {
        response->add_not_found(id);
        continue;
      }
      dropped.push_back(std::move(it->second));
      tensors_.erase(it);
    }
  }
  ReleaseMetadata(static_cast<int64_t>(dropped.size()));
  response->set_released(static_cast<int64_t>(dropped.size()));
}

absl::StatusOr<std::shared_ptr<engine::Stream>> Session::FindStream(absl::string_view op,
                                                                    uint64_t stream) const {
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(stream);
  if (it == streams_.end()) {
    return absl::NotFoundError(absl::StrCat(op, ": stream ", stream,
                                            " not found in this session"));
  }
  return it->second;
}

absl::StatusOr<uint64_t> Session::CreateStream() {
  absl::MutexLock lock(&mu_);
  if (static_cast<int64_t>(streams_.size()) >= limits_.max_streams_per_session) {
    return absl::ResourceExhaustedError(absl::StrCat("create_stream: the session already has ",
                                                     streams_.size(), " streams, the limit"));
  }
  const uint64_t id = next_stream_id_++;
  streams_[id] = engine::Stream::Create(executor_, id, limits_.max_queued_ops_per_stream);
  return id;
}

std::vector<std::shared_ptr<engine::Stream>> Session::Streams() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<engine::Stream>> out;
  out.reserve(streams_.size());
  for (const auto& [id, stream] : streams_) out.push_back(stream);
  return out;
}

absl::StatusOr<int64_t> Session::Cancel(std::optional<uint64_t> stream) {
  std::vector<std::shared_ptr<engine::Stream>> streams;
  if (stream.has_value()) {
    TENSORD_ASSIGN_OR_RETURN(std::shared_ptr<engine::Stream> one, FindStream("cancel", *stream));
    streams.push_back(std::move(one));
  } else {
    streams = Streams();
  }
  Touch();
  int64_t cancelled = 0;
  for (const auto& s : streams) {
    cancelled += s->Cancel(absl::CancelledError("cancelled by the client before it finished"));
  }
  return cancelled;
}

std::shared_ptr<engine::Event> Session::EventForRecord(uint64_t id) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<engine::Event>& event = events_[id];
  if (!event) event = std::make_shared<engine::Event>();
  return event;
}

absl::StatusOr<std::shared_ptr<engine::Event>> Session::FindEvent(absl::string_view op,
                                                                  uint64_t id) const {
  absl::MutexLock lock(&mu_);
  auto it = events_.find(id);
  if (it == events_.end()) {
    return absl::NotFoundError(absl::StrCat(op, ": event ", id, " was never recorded"));
  }
  return it->second;
}

std::string Session::NextOpLabel(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  return absl::StrCat("op ", next_op_id_++, " (", name, ")");
}

void Session::StartProfile(bool record_shapes) {
  auto profile = std::make_shared<OpProfile>(record_shapes, limits_.max_profiled_ops,
                                             budget_->For(engine::kCpu),
                                             limits_.max_message_bytes - 4096);
  absl::MutexLock lock(&mu_);
  profile_ = std::move(profile);
}

std::shared_ptr<OpProfile> Session::StopProfile() {
  absl::MutexLock lock(&mu_);
  return std::move(profile_);
}

void Session::Close() {
  absl::flat_hash_map<uint64_t, Tensor> tensors;
  absl::flat_hash_map<uint64_t, std::shared_ptr<engine::Stream>> streams;
  absl::flat_hash_map<uint64_t, std::shared_ptr<engine::Event>> events;
  {
    absl::MutexLock lock(&mu_);
    tensors.swap(tensors_);
    profile_.reset();
    streams.swap(streams_);
    events.swap(events_);
  }
  // Nobody can read what its queued ops would compute: they are dropped, and what they hold is
  // freed as soon as each stream reaches them (a running op stops at its next piece).
  for (const auto& [id, stream] : streams) {
    stream->Cancel(absl::CancelledError("cancelled: its session was closed"));
  }
  ReleaseMetadata(static_cast<int64_t>(tensors.size()));
}

void Session::InOrder(absl::AnyInvocable<bool(absl::Status)> call) {
  bool refused = false;
  {
    absl::MutexLock lock(&order_mu_);
    if (!busy_) {
      busy_ = true;
    } else if (static_cast<int64_t>(waiting_calls_.size()) < limits_.max_queued_calls) {
      waiting_calls_.push_back(std::move(call));
      return;
    } else {
      refused = true;
    }
  }
  if (refused) {
    (void)call(absl::ResourceExhaustedError(absl::StrCat(
        limits_.max_queued_calls, " calls of this session already wait for an earlier one, "
        "the limit; wait for their answers")));
    return;
  }
  if (call(absl::OkStatus())) CallDone();
}

void Session::CallDone() {
  for (;;) {
    absl::AnyInvocable<bool(absl::Status)> next;
    {
      absl::MutexLock lock(&order_mu_);
      if (waiting_calls_.empty()) {
        busy_ = false;
        return;
      }
      next = std::move(waiting_calls_.front());
      waiting_calls_.pop_front();
    }
    if (!next(absl::OkStatus())) return;  // suspended: it calls CallDone() when it finishes
  }
}

struct Session::Batch {
  const v1::RunOpsRequest* request;
  v1::RunOpsResponse* response;
  absl::AnyInvocable<void(absl::Status)> done;
  int next = 0;  // the first op not yet run
};

void Session::RunOps(const v1::RunOpsRequest& request, v1::RunOpsResponse* response,
                     absl::AnyInvocable<void(absl::Status)> done) {
  if (request.ops_size() > limits_.max_ops_per_batch) {
    ToProtoError(absl::ResourceExhaustedError(absl::StrCat(
                     "run_ops: a batch may hold at most ", limits_.max_ops_per_batch,
                     " ops, got ", request.ops_size())),
                 0, response->mutable_error());
    LogOpError(response->error(), "run_ops", public_id_);
    return done(absl::OkStatus());
  }
  response->mutable_results()->Reserve(request.ops_size());
  auto batch = std::make_shared<Batch>(Batch{&request, response, std::move(done)});
  InOrder([self = shared_from_this(), batch](absl::Status admitted) {
    if (!admitted.ok()) {
      batch->done(std::move(admitted));
      return true;
    }
    absl::Status status;
    if (self->AnswerIfResent(*batch->request, batch->response, &status)) {
      batch->done(std::move(status));
      return true;
    }
    return self->ContinueBatch(batch);
  });
}

bool Session::AnswerIfResent(const v1::RunOpsRequest& request, v1::RunOpsResponse* response,
                              absl::Status* status) {
  const uint64_t seq = request.batch_seq();
  if (seq == 0) return false;
  absl::MutexLock lock(&mu_);
  if (seq > last_batch_seq_) return false;  // a new batch
  if (seq == last_batch_seq_) {
    *response = last_batch_answer_;  // ran already: its answer again, nothing runs twice
    return true;
  }
  *status = absl::FailedPreconditionError(absl::StrCat(
      "run_ops: batch ", seq, " is older than this session's last batch (", last_batch_seq_,
      "): batch numbers must grow"));
  return true;
}

bool Session::ContinueBatch(const std::shared_ptr<Batch>& batch) {
  const v1::RunOpsRequest& request = *batch->request;
  std::string failed_op;  // logged once the session's lock is released
  {
    // Every allocation made while planning is charged to this session.
    engine::ScopedMemoryBudget scoped_budget(budget_);
    absl::MutexLock lock(&mu_);
    last_active_ = absl::Now();
    for (; batch->next < request.ops_size(); ++batch->next) {
      const v1::OpCall& call = request.ops(batch->next);
      if (SuspendForInputsLocked(call, batch)) return false;
      v1::OpResult result;
      absl::Status status = RunOneOp(call, request.omit_metadata(), &result);
      ServerMetrics().CountOp(call.op(), status);
      ops_run_.fetch_add(1, std::memory_order_relaxed);
      if (!status.ok()) {
        ToProtoError(status, batch->next, batch->response->mutable_error());
        failed_op = call.op();
        break;
      }
      *batch->response->add_results() = std::move(result);
    }
    WakeStreamsLocked();
    if (request.batch_seq() != 0) {
      // Kept for a resend of this batch (its client may never see this answer).
      last_batch_seq_ = request.batch_seq();
      last_batch_answer_ = *batch->response;
    }
  }
  if (!failed_op.empty()) LogOpError(batch->response->error(), failed_op, public_id_);
  if (request.release_after_size() > 0) {
    v1::ReleaseResponse released;
    Release(request.release_after(), &released);
  }
  batch->done(absl::OkStatus());
  return true;
}

bool Session::SuspendForInputsLocked(const v1::OpCall& call,
                                     const std::shared_ptr<Batch>& batch) {
  const engine::OpDef* op = engine::OpRegistry::Global().Find(call.op());
  if (op == nullptr || op->kind != engine::OpKind::kDataDependent) return false;
  std::vector<std::shared_ptr<engine::Storage>> writing;
  for (uint64_t id : call.inputs()) {
    auto it = tensors_.find(id);
    if (it == tensors_.end()) continue;  // RunOneOp reports it
    if (it->second.storage()->HasQueuedWrites()) writing.push_back(it->second.storage());
  }
  if (writing.empty()) return false;
  // The ops writing them must run; the batch goes on, on an executor thread, once the last of
  // them is done. Nothing else of this session can queue writes meanwhile (calls are in order).
  WakeStreamsLocked();
  auto remaining = std::make_shared<std::atomic<int>>(static_cast<int>(writing.size()));
  for (const auto& storage : writing) {
    const uint64_t ticket = storage->BeginRead();
    storage->WhenReadable(ticket, [self = shared_from_this(), batch, storage, ticket, remaining] {
      storage->EndRead(ticket);
      if (remaining->fetch_sub(1) != 1) return;
      self->executor_->Post([self, batch] {
        if (self->ContinueBatch(batch)) self->CallDone();
      });
    });
  }
  return true;
}

void Session::WakeStreamsLocked() {
  for (const auto& stream : unwoken_) stream->Wake();
  unwoken_.clear();
  unwoken_ops_ = 0;
}

absl::Status Session::RunOneOp(const v1::OpCall& call, bool omit_metadata,
                               v1::OpResult* result) {
  const engine::OpDef* op = engine::OpRegistry::Global().Find(call.op());
  if (op == nullptr) {
    return absl::NotFoundError(absl::StrCat("unknown op '", call.op(), "'"));
  }
  // Inputs.
  std::vector<Tensor> inputs;
  inputs.reserve(call.inputs_size());
  for (uint64_t id : call.inputs()) {
    auto it = tensors_.find(id);
    if (it == tensors_.end()) {
      return absl::NotFoundError(absl::StrCat(op->name, ": tensor ", id,
                                              " not found in this session"));
    }
    inputs.push_back(it->second);
  }
  // Output ids: checked before planning, so a bad id allocates nothing.
  // In-place ops may leave out their output id: self is updated, no new tensor is named.
  const bool name_outputs =
      !op->returns_nothing && !(op->kind == engine::OpKind::kInPlace &&
                                call.outputs_size() == 0 && call.output_id_start() == 0);
  if (op->returns_nothing && (call.outputs_size() > 0 || call.output_id_start() != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(op->name, " returns nothing: give no output "
                                                   "ids"));
  }
  if (name_outputs && !op->multi_output && call.outputs_size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(op->name, ": expected 1 output id, got ",
                                                   call.outputs_size()));
  }
  if (op->multi_output && call.outputs_size() == 0 && call.output_id_start() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        op->name, ": returns a list of tensors: give their ids in outputs or output_id_start"));
  }
  for (int i = 0; i < call.outputs_size(); ++i) {
    TENSORD_RETURN_IF_ERROR(CheckNewId(op->name, call.outputs(i)));
    for (int j = 0; j < i; ++j) {
      if (call.outputs(j) == call.outputs(i)) {
        return absl::InvalidArgumentError(absl::StrCat(op->name, ": output id ", call.outputs(i),
                                                       " is given twice"));
      }
    }
  }
  auto stream_it = streams_.find(call.stream());
  if (stream_it == streams_.end()) {
    return absl::NotFoundError(absl::StrCat(op->name, ": stream ", call.stream(),
                                            " not found in this session"));
  }
  absl::StatusOr<engine::Attrs> parsed = AttrsFromProto(*op, call.attrs());
  if (!parsed.ok()) return engine::NameOp(op->name, parsed.status());
  engine::Attrs attrs = *std::move(parsed);
  if (op->kind == engine::OpKind::kFactory && !attrs.Has("device")) {
    attrs.Set("device", device_);
  }
  engine::DType default_dtype = engine::DType::kFloat32;
  if (call.default_dtype() != tensord::v1::DTYPE_UNSPECIFIED) {
    absl::StatusOr<engine::DType> d = engine::DTypeFromWire(call.default_dtype(), op->name);
    if (!d.ok() || !engine::IsFloating(*d)) {
      return engine::TypeError(op->name, "only floating-point types are supported as the "
                                         "default type");
    }
    default_dtype = *d;
  }
  const engine::DefaultFloatDTypeScope default_dtype_scope(default_dtype);
  TENSORD_ASSIGN_OR_RETURN(engine::PlannedOp plan, engine::PlanOp(op->name, inputs, attrs));

  // The ids of the outputs, now that their number is known.
  const int64_t n = static_cast<int64_t>(plan.outputs.size());
  std::vector<uint64_t> ids;
  ids.reserve(n);
  if (!name_outputs) {
    // Nothing to name.
  } else if (call.outputs_size() > 0) {
    if (call.outputs_size() != n) {
      return absl::InvalidArgumentError(absl::StrCat(op->name, " returned ", n, " tensors but ",
                                                     call.outputs_size(),
                                                     " output ids were given"));
    }
    ids.assign(call.outputs().begin(), call.outputs().end());
  } else {
    const uint64_t start = call.output_id_start();
    if (start > UINT64_MAX - static_cast<uint64_t>(n)) {
      return absl::InvalidArgumentError(absl::StrCat(op->name, ": output_id_start ", start,
                                                     " leaves no room for ", n, " ids"));
    }
    for (int64_t i = 0; i < n; ++i) {
      TENSORD_RETURN_IF_ERROR(CheckNewId(op->name, start + static_cast<uint64_t>(i)));
      ids.push_back(start + static_cast<uint64_t>(i));
    }
  }

  // The outputs' metadata is session memory too: charged before anything is queued.
  TENSORD_RETURN_IF_ERROR(ChargeMetadata(op->name, static_cast<int64_t>(ids.size())));
  if (profile_ != nullptr) {
    profile_->Add(op->name, plan.has_kernel() ? next_op_id_ : 0, call.stream(),
                  ids.empty() ? 0 : ids[0], inputs, plan);
  }
  if (plan.has_kernel()) {
    std::string label = absl::StrCat("op ", next_op_id_++, " (", op->name, ")");
    constexpr int kWakeEvery = 64;
    if (absl::Status queued =
            stream_it->second->Enqueue(engine::TaskFromPlan(label, plan), /*wake=*/false);
        !queued.ok()) {
      ReleaseMetadata(static_cast<int64_t>(ids.size()));
      if (profile_ != nullptr) profile_->ForgetLast();
      return queued;
    }
    if (std::find(unwoken_.begin(), unwoken_.end(), stream_it->second) == unwoken_.end()) {
      unwoken_.push_back(stream_it->second);
    }
    if (++unwoken_ops_ >= kWakeEvery) WakeStreamsLocked();
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!omit_metadata) FillInfoLocked(ids[i], plan.outputs[i], result->add_outputs());
    tensors_.emplace(ids[i], std::move(plan.outputs[i]));
  }
  return absl::OkStatus();
}

}  // namespace tensord::server
