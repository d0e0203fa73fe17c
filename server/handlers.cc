#include "server/handlers.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/runtime/backend.h"
#include "engine/core/checked_math.h"
#include "engine/ops/copy_ops.h"
#include "engine/cuda/cuda_backend.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry.h"
#include "engine/core/status_macros.h"
#include "engine/runtime/event.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/proto_convert.h"

namespace tensord::server {

using engine::Tensor;

// ---- Uploads and downloads -------------------------------------------------------------------

absl::Status PendingUpload::AppendWith(int64_t n, absl::FunctionRef<void(char*)> fill) {
  const int64_t total = tensor_.storage()->nbytes();
  if (n > total - received_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "upload: more bytes than the header announced: ", received_ + n, " > ", total,
        " (numel * itemsize)"));
  }
  const engine::Tensor& into = staging_ ? *staging_ : tensor_;
  if (n > 0) fill(static_cast<char*>(into.storage()->data()) + received_);
  received_ += n;
  return absl::OkStatus();
}

absl::Status PendingUpload::Append(absl::string_view data) {
  return AppendWith(static_cast<int64_t>(data.size()),
                    [&](char* to) { std::memcpy(to, data.data(), data.size()); });
}

absl::StatusOr<v1::UploadResponse> PendingUpload::Finish() {
  const int64_t total = tensor_.storage()->nbytes();
  if (received_ != total) {
    return absl::InvalidArgumentError(absl::StrCat("upload: truncated: received ", received_,
                                                   " of ", total, " bytes (numel * itemsize)"));
  }
  ServerMetrics().CountUploadBytes(total);
  session_->CountUploaded(total);
  if (staging_) {
    // The device copy is queued on the default stream: later ops and reads of the tensor are
    // ordered after it, and no RPC thread waits for it.
    TENSORD_ASSIGN_OR_RETURN(std::shared_ptr<engine::Stream> stream,
                             session_->FindStream("upload", 0));
    TENSORD_ASSIGN_OR_RETURN(engine::Backend * backend, engine::BackendFor(tensor_.device()));
    engine::StreamTask task;
    task.label = session_->NextOpLabel("upload");
    task.writes.push_back(tensor_.storage());
    task.kernel = [backend, device = tensor_.storage(), host = staging_->storage()]() {
      return backend->CopyFromHost(device->data(), host->data(), device->nbytes());
    };
    TENSORD_RETURN_IF_ERROR(stream->Enqueue(std::move(task)));
    staging_.reset();  // the task holds it until the copy is done
  }
  TENSORD_RETURN_IF_ERROR(session_->Register("upload", id_, tensor_));
  v1::UploadResponse response;
  session_->FillInfo(id_, tensor_, response.mutable_tensor());
  return response;
}

ReadyDownload::~ReadyDownload() {
  if (fenced_) fenced_->EndRead(read_ticket_);
}

namespace {

// The lease in whole seconds, rounded up: a client renewing at a fraction of it never lets a
// sub-second lease lapse because it read 0.
int64_t LeaseSeconds(absl::Duration ttl) {
  return absl::ToInt64Seconds(absl::Ceil(ttl, absl::Seconds(1)));
}

}  // namespace

// ---- Backend -----------------------------------------------------------------------------------

Handlers::Handlers(std::string replica, const ServerLimits& limits,
                   engine::Device default_device, engine::Executor* executor)
    : limits_(limits),
      default_device_(default_device),
      executor_(executor),
      sessions_(std::move(replica), limits, executor) {
  for (const engine::OpDef& op : engine::OpRegistry::Global().ops()) {
    FillOpSpec(op, ops_.add_ops());
  }
}

void Handlers::HandleGetVersion(v1::GetVersionResponse* response) const {
  response->set_api_version(kApiVersion);
  response->set_server_version(kServerVersion);
}

void Handlers::HandleGetServerInfo(v1::GetServerInfoResponse* response) {
  response->add_devices("cpu");
  for (const engine::cuda::DeviceInfo& gpu : engine::cuda::RegisterBackends()) {
    response->add_devices(gpu.device.ToString());
    v1::DeviceInfo* info = response->add_device_info();
    info->set_device(gpu.device.ToString());
    info->set_name(gpu.name);
    info->set_total_memory(gpu.total_memory);
    info->set_major(gpu.major);
    info->set_minor(gpu.minor);
    info->set_multi_processor_count(gpu.multiprocessors);
  }
  response->set_default_device(default_device_.ToString());
  for (int i = 0; i < engine::kNumDTypes; ++i) {
    response->add_dtypes(engine::DTypeName(static_cast<engine::DType>(i)));
  }
  v1::Limits* l = response->mutable_limits();
  l->set_max_sessions(limits_.max_sessions);
  l->set_max_session_bytes(limits_.max_session_bytes);
  l->set_max_server_bytes(limits_.max_server_bytes);
  l->set_max_session_gpu_bytes(limits_.max_session_gpu_bytes);
  l->set_max_server_gpu_bytes(limits_.max_server_gpu_bytes);
  l->set_max_rank(engine::kMaxRank);
  l->set_max_message_bytes(limits_.max_message_bytes);
  l->set_max_queued_ops_per_stream(limits_.max_queued_ops_per_stream);
  l->set_max_ops_per_batch(limits_.max_ops_per_batch);
  l->set_max_streams_per_session(limits_.max_streams_per_session);
  l->set_session_ttl_seconds(LeaseSeconds(limits_.session_ttl));
  l->set_chunk_bytes(limits_.chunk_bytes);
  l->set_max_view_outputs(engine::kMaxViewOutputs);
  response->set_active_sessions(sessions_.size());
  response->set_bytes_in_use(sessions_.server_budget()->used());
  response->set_replica(sessions_.replica());
}

void Handlers::HandleListOps(v1::ListOpsResponse* response) const { *response = ops_; }

namespace {

// "MAJOR.MINOR.PATCH" (a pre-release or build suffix after '-' or '+' is ignored).
std::optional<std::array<int64_t, 3>> ParseVersion(absl::string_view text) {
  text = text.substr(0, std::min(text.find('-'), text.find('+')));
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  if (parts.size() != 3) return std::nullopt;
  std::array<int64_t, 3> version{};
  for (size_t i = 0; i < 3; ++i) {
    if (!absl::SimpleAtoi(parts[i], &version[i]) || version[i] < 0) return std::nullopt;
  }
  return version;
}

}  // namespace

absl::Status CheckClientVersion(absl::string_view client_version) {
  if (client_version.empty()) return absl::OkStatus();
  const auto client = ParseVersion(client_version);
  const auto server = ParseVersion(kServerVersion);
  const auto oldest = ParseVersion(kMinClientVersion);
  if (!server || !oldest) {
    return absl::InternalError(absl::StrCat("open_session: this server's version ",
                                            kServerVersion, " is not MAJOR.MINOR.PATCH"));
  }
  if (!client) {
    return absl::InvalidArgumentError(absl::StrCat(
        "open_session: client_version '", absl::CEscape(client_version.substr(0, 64)),
        "' is not a version (MAJOR.MINOR.PATCH)"));
  }
  if ((*client)[0] != (*server)[0] || *client < *oldest) {
    return absl::FailedPreconditionError(absl::StrCat(
        "open_session: client version ", client_version.substr(0, 64),
        " is not supported by server version ",
        kServerVersion, " (it serves clients ", kMinClientVersion, " to ", (*server)[0],
        ".x): upgrade the client"));
  }
  return absl::OkStatus();
}

absl::Status Handlers::HandleOpenSession(const v1::OpenSessionRequest& request,
                                         v1::OpenSessionResponse* response,
                                         absl::string_view tenant, absl::string_view peer) {
  engine::Device device = default_device_;
  if (!request.device().empty()) {
    TENSORD_ASSIGN_OR_RETURN(device, engine::ParseDevice(request.device()));
  }
  if (!engine::BackendFor(device).ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "open_session: device ", device.ToString(), " is not available on this server"));
  }
  TENSORD_RETURN_IF_ERROR(CheckClientVersion(request.client_version()));
  TENSORD_ASSIGN_OR_RETURN(
      std::shared_ptr<Session> session,
      sessions_.Open(device, std::string(tenant), std::string(peer),
                     absl::StrCat(request.client_name().substr(0, 64),
                                  request.client_version().empty() ? "" : " ",
                                  request.client_version().substr(0, 32))));
  response->set_session_id(session->id());
  response->set_route(session->public_id());
  response->set_server_version(kServerVersion);
  response->set_device(device.ToString());
  response->set_ttl_seconds(LeaseSeconds(limits_.session_ttl));
  response->set_op_registry_fingerprint(engine::RegistryFingerprint());
  return absl::OkStatus();
}

absl::Status Handlers::HandleCloseSession(const v1::CloseSessionRequest& request) {
  return sessions_.Close(request.session_id());
}

absl::Status Handlers::HandleRenewLease(const v1::RenewLeaseRequest& request,
                                              v1::RenewLeaseResponse* response) {
  TENSORD_RETURN_IF_ERROR(sessions_.Find(request.session_id()).status());
  response->set_ttl_seconds(LeaseSeconds(limits_.session_ttl));
  return absl::OkStatus();
}

namespace {

// Runs work(session, done) in the session's call order (Session::InOrder); `done` gets the
// error instead when the session is unknown or too many of its calls already wait. `work` ends
// by calling `done`, now or later.
template <typename DoneFn, typename Work>
void InOrder(SessionStore& sessions, const std::string& session_id, DoneFn done, Work work) {
  absl::StatusOr<std::shared_ptr<Session>> session = sessions.Find(session_id);
  if (!session.ok()) return done(session.status());
  Session& s = **session;
  s.InOrder([session = *std::move(session), done = std::move(done),
             work = std::move(work)](absl::Status admitted) mutable {
    if (admitted.ok()) {
      work(session, std::move(done));
    } else {
      done(std::move(admitted));
    }
    return true;
  });
}

}  // namespace

void Handlers::InSession(const std::string& session_id,
                               absl::AnyInvocable<absl::Status(Session&)> work, Done done) {
  InOrder(sessions_, session_id, std::move(done),
          [work = std::move(work)](std::shared_ptr<Session>& session, Done done) mutable {
            done(work(*session));
          });
}

void Handlers::HandleRunOps(const v1::RunOpsRequest& request, v1::RunOpsResponse* response,
                                  Done done) {
  absl::StatusOr<std::shared_ptr<Session>> session = sessions_.Find(request.session_id());
  if (!session.ok()) return done(session.status());
  (*session)->RunOps(request, response, std::move(done));
}

void Handlers::HandleDescribe(const v1::DescribeRequest& request,
                                    v1::DescribeResponse* response, Done done) {
  InSession(request.session_id(),
            [&request, response](Session& session) {
              return session.Describe(request.ids(), response);
            },
            std::move(done));
}

void Handlers::HandleRelease(const v1::ReleaseRequest& request,
                                   v1::ReleaseResponse* response, Done done) {
  InSession(request.session_id(),
            [&request, response](Session& session) {
              session.Release(request.ids(), response);
              return absl::OkStatus();
            },
            std::move(done));
}

namespace {

// The error of a read of poisoned data. It is raised to the client, so `streams` (the
// session's) forget it: a later Synchronize does not raise it a second time.
absl::Status PoisonError(absl::string_view op, uint64_t id, const engine::Storage& storage,
                         const std::vector<std::shared_ptr<engine::Stream>>& streams) {
  if (auto cause = storage.poison()) {
    for (const auto& stream : streams) stream->ForgetError(*cause);
    return engine::WithPayloadsOf(*cause, absl::FailedPreconditionError(absl::StrCat(
        op, ": tensor ", id, " holds no valid data: it depends on a failed op: ",
        cause->message())));
  }
  return absl::OkStatus();
}

}  // namespace

void Handlers::ReadWhenReady(const Tensor& tensor,
                                   absl::AnyInvocable<void(uint64_t)> read) {
  std::shared_ptr<engine::Storage> storage = tensor.storage();
  const uint64_t ticket = storage->BeginRead();
  storage->WhenReadable(ticket, [this, ticket, read = std::move(read)]() mutable {
    // Reading (copying) is work: never on an RPC thread.
    executor_->Post([ticket, read = std::move(read)]() mutable { read(ticket); });
  });
}

void Handlers::HandleReadStorage(
    const v1::ReadStorageRequest& request,
    absl::AnyInvocable<void(absl::StatusOr<v1::ReadStorageResponse>)> done) {
  // In the session's call order: the read sees the writes of every call before it.
  InOrder(sessions_, request.session_id(), std::move(done),
          [this, &request](std::shared_ptr<Session>& session, auto done) {
            ReadStorageInOrder(*session, request, std::move(done));
          });
}

void Handlers::ReadStorageInOrder(
    Session& session, const v1::ReadStorageRequest& request,
    absl::AnyInvocable<void(absl::StatusOr<v1::ReadStorageResponse>)> done) {
  constexpr absl::string_view op = "read_storage";
  absl::StatusOr<Tensor> tensor = session.Find(op, request.id());
  if (!tensor.ok()) return done(tensor.status());
  const int64_t itemsize = tensor->itemsize();
  const int64_t numel = tensor->storage()->nbytes() / itemsize;
  const int64_t offset = request.offset();
  if (request.count() < -1) {
    return done(engine::IndexError(op, absl::StrCat("count must be -1 (to the end) or >= 0, got ",
                                                    request.count())));
  }
  const int64_t count =
      request.count() == -1 && offset >= 0 && offset <= numel ? numel - offset : request.count();
  if (offset < 0 || offset > numel || count < 0 || count > numel - offset) {
    return done(engine::IndexError(op, absl::StrCat("elements [", offset, ", ", offset,
                                                    " + ", request.count(),
                                                    ") are out of range for a storage of ",
                                                    numel, " elements")));
  }
  if (count * itemsize > limits_.max_message_bytes - 1024) {
    return done(absl::ResourceExhaustedError(absl::StrCat(
        op, ": ", count * itemsize, " bytes do not fit one message (limit ",
        limits_.max_message_bytes, "); use Download")));
  }
  std::shared_ptr<engine::Storage> storage = tensor->storage();
  ReadWhenReady(*tensor, [storage, id = request.id(), dtype = tensor->dtype(), numel, offset,
                          count, itemsize, streams = session.Streams(),
                          done = std::move(done)](uint64_t ticket) mutable {
    absl::Status poisoned = PoisonError("read_storage", id, *storage, streams);
    if (!poisoned.ok()) {
      storage->EndRead(ticket);
      return done(poisoned);
    }
    v1::ReadStorageResponse response;
    response.set_dtype(DTypeToProto(dtype));
    response.set_storage_numel(numel);
    const char* from = static_cast<const char*>(storage->data()) + offset * itemsize;
    const int64_t nbytes = count * itemsize;
    if (storage->device().is_cpu()) {
      response.set_data(from, static_cast<size_t>(nbytes));
    } else {
      std::string* data = response.mutable_data();
      data->resize(static_cast<size_t>(nbytes));
      absl::Status copied = engine::BackendFor(storage->device()).value()->CopyToHost(
          data->data(), from, nbytes);
      if (!copied.ok()) {
        storage->EndRead(ticket);
        return done(copied);
      }
    }
    storage->EndRead(ticket);
    done(std::move(response));
  });
}

void Handlers::HandleWriteStorage(const v1::WriteStorageRequest& request, Done done) {
  InSession(request.session_id(),
            [&request](Session& session) { return WriteStorageInOrder(session, request); },
            std::move(done));
}

absl::Status Handlers::WriteStorageInOrder(Session& session,
                                                 const v1::WriteStorageRequest& request) {
  constexpr absl::string_view op = "write_storage";
  TENSORD_ASSIGN_OR_RETURN(Tensor tensor, session.Find(op, request.id()));
  TENSORD_ASSIGN_OR_RETURN(std::shared_ptr<engine::Stream> stream,
                           session.FindStream(op, request.stream()));
  const int64_t itemsize = tensor.itemsize();
  const int64_t numel = tensor.storage()->nbytes() / itemsize;
  const int64_t bytes = static_cast<int64_t>(request.data().size());
  if (bytes % itemsize != 0) {
    return engine::RuntimeError(op, absl::StrCat(bytes, " bytes are not a whole number of ",
                                                 engine::DTypeName(tensor.dtype()),
                                                 " elements"));
  }
  const int64_t count = bytes / itemsize;
  if (request.offset() < 0 || request.offset() > numel || count > numel - request.offset()) {
    return engine::IndexError(op, absl::StrCat(count, " elements at offset ", request.offset(),
                                               " are out of range for a storage of ", numel,
                                               " elements"));
  }
  TENSORD_ASSIGN_OR_RETURN(engine::Backend * backend, engine::BackendFor(tensor.device()));
  // The bytes wait in the queue as the session's memory (charged to it), not as an uncharged
  // copy held by the task.
  engine::ScopedMemoryBudget scoped_budget(session.budget());
  TENSORD_ASSIGN_OR_RETURN(
      Tensor payload,
      engine::AllocateTensor(op, engine::TensorMeta::Contiguous(engine::DType::kUInt8, {bytes}),
                             engine::kCpu));
  if (bytes > 0) std::memcpy(payload.data(), request.data().data(), static_cast<size_t>(bytes));
  engine::StreamTask task;
  task.label = session.NextOpLabel(op);
  task.writes.push_back(tensor.storage());
  task.kernel = [backend, storage = tensor.storage(), at = request.offset() * itemsize,
                 payload = payload.storage()]() {
    return backend->CopyFromHost(static_cast<char*>(storage->data()) + at, payload->data(),
                                 payload->nbytes());
  };
  return stream->Enqueue(std::move(task));
}

void Handlers::StartUpload(
    v1::UploadHeader header,
    absl::AnyInvocable<void(absl::StatusOr<std::unique_ptr<PendingUpload>>)> done) {
  // In the session's call order: its release_before ids may be inputs of an earlier batch.
  const std::string session_id = header.session_id();
  InOrder(sessions_, session_id, std::move(done),
          [header = std::move(header)](std::shared_ptr<Session>& session, auto done) {
            done(StartUploadInOrder(session, header));
          });
}

absl::StatusOr<std::unique_ptr<PendingUpload>> Handlers::StartUploadInOrder(
    std::shared_ptr<Session> session, const v1::UploadHeader& header) {
  constexpr absl::string_view op = "upload";
  TENSORD_ASSIGN_OR_RETURN(engine::DType dtype, DTypeFromProto(header.dtype(), op));
  engine::Device device = session->device();
  if (!header.device().empty()) {
    TENSORD_ASSIGN_OR_RETURN(device, engine::ParseDevice(header.device()));
  }
  if (header.release_before_size() > 0) {
    v1::ReleaseResponse released;
    session->Release(header.release_before(), &released);
  }
  if (header.id() == 0) return absl::InvalidArgumentError("upload: tensor id 0 is reserved");
  if (session->Find(op, header.id()).ok()) {
    return absl::AlreadyExistsError(absl::StrCat(op, ": tensor ", header.id(),
                                                 " already exists"));
  }
  const std::vector<int64_t> sizes(header.sizes().begin(), header.sizes().end());
  TENSORD_RETURN_IF_ERROR(engine::CheckShape(op, sizes).status());
  // Charged to the session before anything is allocated.
  engine::ScopedMemoryBudget budget(session->budget());
  TENSORD_ASSIGN_OR_RETURN(Tensor tensor,
                           engine::AllocateTensor(op, engine::TensorMeta::Contiguous(dtype, sizes),
                                                  device));
  auto upload = std::unique_ptr<PendingUpload>(new PendingUpload());
  if (!device.is_cpu()) {
    // Staged in host memory, charged to the session too while the upload lasts.
    TENSORD_ASSIGN_OR_RETURN(upload->staging_,
                             engine::AllocateTensor(
                                 op, engine::TensorMeta::Contiguous(dtype, sizes), engine::kCpu));
  }
  upload->session_ = std::move(session);
  upload->id_ = header.id();
  upload->tensor_ = std::move(tensor);
  return upload;
}

void Handlers::StartDownload(
    v1::DownloadRequest request,
    absl::AnyInvocable<void(absl::StatusOr<std::unique_ptr<ReadyDownload>>)> done) {
  const std::string session_id = request.session_id();
  InOrder(sessions_, session_id, std::move(done),
          [this, request = std::move(request)](std::shared_ptr<Session>& session, auto done) {
            DownloadInOrder(*session, request, std::move(done));
          });
}

void Handlers::DownloadInOrder(
    Session& session, const v1::DownloadRequest& request,
    absl::AnyInvocable<void(absl::StatusOr<std::unique_ptr<ReadyDownload>>)> done) {
  constexpr absl::string_view op = "download";
  absl::StatusOr<Tensor> tensor = session.Find(op, request.id());
  if (!tensor.ok()) return done(tensor.status());
  auto download = std::unique_ptr<ReadyDownload>(new ReadyDownload());
  session.FillInfo(request.id(), *tensor, &download->header_);
  std::optional<int64_t> total_bytes = engine::CheckedMul(tensor->numel(), tensor->itemsize());
  if (!total_bytes) {
    return done(absl::ResourceExhaustedError(
        absl::StrCat(op, ": tensor ", request.id(), " of ", tensor->numel(), " elements of ",
                     tensor->itemsize(), " bytes is larger than any download")));
  }
  download->total_bytes_ = *total_bytes;
  session.CountDownloaded(*total_bytes);
  ReadWhenReady(*tensor, [tensor = *tensor, id = request.id(), download = std::move(download),
                          budget = session.budget(), streams = session.Streams(),
                          done = std::move(done)](uint64_t ticket) mutable {
    std::shared_ptr<engine::Storage> storage = tensor.storage();
    // A snapshot (below) is the session's memory while the download lasts: charged to it, so
    // that downloads of a broadcast view cannot hold more than the session may.
    engine::ScopedMemoryBudget scoped_budget(budget);
    absl::Status poisoned = PoisonError("download", id, *storage, streams);
    if (!poisoned.ok()) {
      storage->EndRead(ticket);
      return done(poisoned);
    }
    if (!tensor.device().is_cpu()) {
      // Device memory: gathered into rows on the device when strided, then one copy into a
      // host snapshot.
      absl::StatusOr<Tensor> rows =
          tensor.is_contiguous() ? absl::StatusOr<Tensor>(tensor) : engine::CloneContiguous(tensor);
      absl::StatusOr<Tensor> snapshot =
          rows.ok() ? engine::RunNowSingle(engine::PlanTo(*rows, std::nullopt, engine::kCpu))
                    : rows.status();
      storage->EndRead(ticket);
      if (!snapshot.ok()) return done(engine::NameOp("download", snapshot.status()));
      download->data_ = snapshot->numel() == 0 ? "" : snapshot->data();
      download->source_ = *std::move(snapshot);
      return done(std::move(download));
    }
    if (tensor.is_contiguous()) {
      // Stream straight from the storage; the read fence holds back later writes until the
      // download is destroyed.
      download->data_ = tensor.numel() == 0 ? "" : tensor.data();
      download->source_ = tensor;
      download->fenced_ = storage;
      download->read_ticket_ = ticket;
      return done(std::move(download));
    }
    // A contiguous snapshot, then the fence goes at once.
    absl::StatusOr<Tensor> snapshot = engine::CloneContiguous(tensor);
    storage->EndRead(ticket);
    if (!snapshot.ok()) return done(engine::NameOp("download", snapshot.status()));
    download->data_ = snapshot->data();
    download->source_ = *std::move(snapshot);
    done(std::move(download));
  });
}

void Handlers::HandleCreateStream(const v1::CreateStreamRequest& request,
                                        v1::CreateStreamResponse* response, Done done) {
  InSession(request.session_id(),
            [response](Session& session) -> absl::Status {
              TENSORD_ASSIGN_OR_RETURN(uint64_t id, session.CreateStream());
              response->set_stream(id);
              return absl::OkStatus();
            },
            std::move(done));
}

void Handlers::HandleRecordEvent(const v1::RecordEventRequest& request, Done done) {
  InSession(request.session_id(),
            [&request](Session& session) -> absl::Status {
              TENSORD_ASSIGN_OR_RETURN(std::shared_ptr<engine::Stream> stream,
                                       session.FindStream("record_event", request.stream()));
              return stream->RecordEvent(session.EventForRecord(request.event()));
            },
            std::move(done));
}

void Handlers::HandleWaitEvent(const v1::WaitEventRequest& request, Done done) {
  InSession(request.session_id(),
            [&request](Session& session) -> absl::Status {
              TENSORD_ASSIGN_OR_RETURN(std::shared_ptr<engine::Stream> stream,
                                       session.FindStream("wait_event", request.stream()));
              TENSORD_ASSIGN_OR_RETURN(std::shared_ptr<engine::Event> event,
                                       session.FindEvent("wait_event", request.event()));
              return stream->WaitEvent(event);
            },
            std::move(done));
}

void Handlers::HandleQueryEvent(const v1::QueryEventRequest& request,
                                      v1::QueryEventResponse* response, Done done) {
  InSession(request.session_id(),
            [&request, response](Session& session) -> absl::Status {
              TENSORD_ASSIGN_OR_RETURN(std::shared_ptr<engine::Event> event,
                                       session.FindEvent("query_event", request.event()));
              response->set_completed(event->Query());
              return absl::OkStatus();
            },
            std::move(done));
}

absl::Status Handlers::HandleCancel(const v1::CancelRequest& request,
                                   v1::CancelResponse* response) {
  TENSORD_ASSIGN_OR_RETURN(std::shared_ptr<Session> session, sessions_.Find(request.session_id()));
  TENSORD_ASSIGN_OR_RETURN(
      int64_t cancelled,
      session->Cancel(request.has_stream() ? std::optional<uint64_t>(request.stream())
                                           : std::nullopt));
  response->set_cancelled_ops(cancelled);
  Log(LogLevel::kInfo, "ops_cancelled",
      {{"session", session->public_id()}, {"ops", cancelled}});
  return absl::OkStatus();
}

void Handlers::HandleProfile(const v1::ProfileRequest& request, v1::ProfileResponse* response,
                             Done done) {
  // In the session's call order: a start covers the batches sent after it, a stop those sent
  // before it.
  InOrder(sessions_, request.session_id(), std::move(done),
          [&request, response](std::shared_ptr<Session>& session, Done done) {
            if (request.enable()) {
              session->StartProfile(request.record_shapes());
              return done(absl::OkStatus());
            }
            std::shared_ptr<OpProfile> profile = session->StopProfile();
            if (profile == nullptr) {
              return done(absl::FailedPreconditionError(
                  "profile: this session is not profiling (start a profile before stopping it)"));
            }
            // Collected once the ops queued before the stop have run, so that their times are
            // in it: a marker on each stream, never a wait that takes the streams' errors
            // (those stay for Synchronize and for reads of what they poisoned).
            struct Join {
              std::atomic<int> remaining;
              std::shared_ptr<OpProfile> profile;
              v1::ProfileResponse* response;
              Done done;
              void Arrive() {
                if (remaining.fetch_sub(1) != 1) return;
                profile->Collect(response);
                done(absl::OkStatus());
              }
            };
            std::vector<std::shared_ptr<engine::Stream>> streams = session->Streams();
            auto join = std::make_shared<Join>();
            join->remaining.store(static_cast<int>(streams.size()) + 1);
            join->profile = std::move(profile);
            join->response = response;
            join->done = std::move(done);
            for (const auto& stream : streams) {
              auto marker = std::make_shared<engine::Event>();
              if (!stream->RecordEvent(marker).ok()) {
                join->Arrive();
                continue;
              }
              marker->OnComplete(marker->latest(), [join] { join->Arrive(); });
            }
            join->Arrive();
          });
}

void Handlers::HandleSynchronize(const v1::SynchronizeRequest& request, Done done) {
  // In the session's call order: it covers the ops of every batch sent before it.
  InOrder(sessions_, request.session_id(), std::move(done),
          [&request](std::shared_ptr<Session>& session, Done done) {
            SynchronizeInOrder(*session, request, std::move(done));
          });
}

void Handlers::SynchronizeInOrder(Session& session, const v1::SynchronizeRequest& request,
                                        Done done) {
  std::vector<std::shared_ptr<engine::Stream>> streams;
  if (request.has_stream()) {
    absl::StatusOr<std::shared_ptr<engine::Stream>> stream =
        session.FindStream("synchronize", request.stream());
    if (!stream.ok()) return done(stream.status());
    streams.push_back(*std::move(stream));
  } else {
    streams = session.Streams();
  }
  // Completes when the last stream drains, with the first error any of them reported.
  struct Join {
    absl::Mutex mu;
    int remaining;
    absl::Status first;
    absl::AnyInvocable<void(absl::Status)> done;
  };
  auto join = std::make_shared<Join>();
  join->remaining = static_cast<int>(streams.size());
  join->done = std::move(done);
  if (streams.empty()) return join->done(absl::OkStatus());
  for (const auto& stream : streams) {
    stream->Synchronize([join](absl::Status error) {
      bool last;
      {
        absl::MutexLock lock(&join->mu);
        if (join->first.ok() && !error.ok()) join->first = std::move(error);
        last = --join->remaining == 0;
      }
      if (last) join->done(std::move(join->first));
    });
  }
}

}  // namespace tensord::server
