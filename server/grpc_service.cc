#include "server/grpc_service.h"

#include <deque>
#include <optional>
#include <type_traits>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "engine/core/errors.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/status_util.h"
#include "tensord/wire.h"

namespace tensord::server {
namespace {

constexpr char kErrorKindKey[] = "tensord-error-kind";
constexpr char kErrorIdKey[] = "tensord-error-id";

// Finishes a call of `method` (of the session `session_id`, if any) with `status`; errors name
// the method (engine::NameOp), carry the Python exception class and the id of their log line
// in trailing metadata, and are logged.
template <typename Reactor>
void FinishWith(grpc::CallbackServerContext* ctx, Reactor* reactor, absl::string_view method,
                const absl::Status& status, absl::string_view session_id = {}) {
  if (status.ok()) return reactor->Finish(grpc::Status::OK);
  const absl::Status named = engine::NameOp(method, status);
  ctx->AddTrailingMetadata(kErrorKindKey, engine::ErrorKind(status));
  ctx->AddTrailingMetadata(kErrorIdKey,
                           LogRpcError(named, method, PublicSessionId(session_id), ctx->peer()));
  reactor->Finish(ToGrpcStatus(named));
}

template <typename T, typename = void>
struct HasSessionId : std::false_type {};
template <typename T>
struct HasSessionId<T, std::void_t<decltype(std::declval<const T&>().session_id())>>
    : std::true_type {};

// The session a request names ("" for calls outside a session).
template <typename Request>
absl::string_view SessionOf(const Request& request) {
  if constexpr (HasSessionId<Request>::value) {
    return request.session_id();
  } else {
    return {};
  }
}

// Parses a request straight from the received slices.
bool ParseRaw(const grpc::ByteBuffer& raw, google::protobuf::MessageLite* message) {
  // The reader only reads the buffer (gRPC's API lacks the const).
  grpc::ProtoBufferReader reader(const_cast<grpc::ByteBuffer*>(&raw));
  return message->ParseFromZeroCopyStream(&reader);
}

// ---- Upload: client streaming, raw bytes ---------------------------------------------------

class UploadReactor final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  UploadReactor(const TensordService* service, grpc::CallbackServerContext* ctx,
                grpc::ByteBuffer* response)
      : service_(service),
        handlers_(&service->handlers()),
        ctx_(ctx),
        response_(response),
        tenant_(service->Authorize(*ctx)) {
    if (!tenant_.ok()) {
      FinishWith(ctx_, this, "upload", tenant_.status());
      return;
    }
    StartRead(&message_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client is done writing, or went away
      if (ctx_->IsCancelled()) return Finish(grpc::Status::CANCELLED);
      if (!upload_) {
        return FinishWith(ctx_, this, "upload",
                          absl::InvalidArgumentError("upload: no header was sent"));
      }
      absl::StatusOr<v1::UploadResponse> done = upload_->Finish();
      if (done.ok()) *response_ = wire::Serialize(*done);
      return FinishWith(ctx_, this, "upload", done.status(), session_id_);
    }
    if (!upload_) return StartUpload();
    absl::Status status = Append();
    if (!status.ok()) return FinishWith(ctx_, this, "upload", status, session_id_);
    StartRead(&message_);
  }

  // Destroys a partial upload, freeing its storage.
  void OnDone() override { delete this; }

 private:
  // The first message: the header. The next read starts once the session has taken it (in the
  // session's call order).
  void StartUpload() {
    v1::UploadRequest request;
    if (!wire::Reader(message_).Parse(&request)) {
      return FinishWith(ctx_, this, "upload",
                        absl::InvalidArgumentError("upload: a message is not an UploadRequest"));
    }
    if (request.kind_case() != v1::UploadRequest::kHeader) {
      return FinishWith(ctx_, this, "upload",
                        absl::InvalidArgumentError("upload: the first message must be the header"));
    }
    session_id_ = request.header().session_id();
    if (absl::Status admitted = service_->Admit(session_id_, *tenant_); !admitted.ok()) {
      return FinishWith(ctx_, this, "upload", admitted, session_id_);
    }
    handlers_->StartUpload(std::move(*request.mutable_header()),
                          [this](absl::StatusOr<std::unique_ptr<PendingUpload>> upload) {
                            if (!upload.ok())
                              return FinishWith(ctx_, this, "upload", upload.status(), session_id_);
                            upload_ = *std::move(upload);
                            StartRead(&message_);
                          });
  }

  absl::Status Append() {
    wire::Reader reader(message_);
    // The common case, a lone data record: straight from the slices into the storage.
    const int64_t n = reader.DataRecordLength();
    if (n >= 0) {
      return upload_->AppendWith(n, [&](char* to) { reader.CopyTo(to, static_cast<size_t>(n)); });
    }
    v1::UploadRequest request;
    if (!reader.Parse(&request)) {
      return absl::InvalidArgumentError("upload: a message is not an UploadRequest");
    }
    if (request.kind_case() == v1::UploadRequest::kData) return upload_->Append(request.data());
    return absl::InvalidArgumentError("upload: only the first message may be a header");
  }

  const TensordService* const service_;
  Handlers* const handlers_;
  grpc::CallbackServerContext* const ctx_;
  grpc::ByteBuffer* const response_;
  const absl::StatusOr<std::string> tenant_;
  grpc::ByteBuffer message_;
  std::string session_id_;  // the header's
  std::unique_ptr<PendingUpload> upload_;
};

// ---- Download: server streaming, raw bytes --------------------------------------------------

class DownloadReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  DownloadReactor(const TensordService* service, grpc::CallbackServerContext* ctx,
                  const grpc::ByteBuffer* raw_request)
      : ctx_(ctx), chunk_(service->handlers().limits().chunk_bytes) {
    Handlers* handlers = &service->handlers();
    absl::StatusOr<std::string> tenant = service->Authorize(*ctx);
    if (!tenant.ok()) {
      FinishWith(ctx_, this, "download", tenant.status());
      return;
    }
    if (ctx->IsCancelled()) {  // cut before its request arrived whole: nothing to answer
      Finish(grpc::Status::CANCELLED);
      return;
    }
    v1::DownloadRequest request;
    if (!wire::Reader(*raw_request).Parse(&request)) {
      FinishWith(ctx_, this, "download", absl::InvalidArgumentError("download: malformed request"));
      return;
    }
    session_id_ = request.session_id();
    if (absl::Status admitted = service->Admit(session_id_, *tenant); !admitted.ok()) {
      FinishWith(ctx_, this, "download", admitted, session_id_);
      return;
    }
    handlers->StartDownload(request,
                           [this](absl::StatusOr<std::unique_ptr<ReadyDownload>> download) {
                             OnReady(std::move(download));
                           });
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::CANCELLED);
    WriteNext();
  }

  // Releases the download (and the read fence it may hold).
  void OnDone() override { delete this; }

 private:
  void OnReady(absl::StatusOr<std::unique_ptr<ReadyDownload>> download) {
    if (!download.ok()) {
      return FinishWith(ctx_, this, "download", download.status(), session_id_);
    }
    download_ = *std::move(download);
    v1::DownloadResponse header;
    *header.mutable_header() = download_->header();
    message_ = wire::Serialize(header);
    StartWrite(&message_);
  }

  void WriteNext() {
    const int64_t left = download_->total_bytes() - offset_;
    if (left <= 0) return Finish(grpc::Status::OK);
    const int64_t n = std::min(left, chunk_);
    // The slice points into the tensor's bytes, which download_ keeps alive until OnDone.
    absl::string_view bytes = download_->Bytes(offset_, n);
    message_ = wire::DataRecord(bytes.data(), bytes.size());
    offset_ += n;
    if (offset_ == download_->total_bytes()) {
      ServerMetrics().CountDownloadBytes(offset_);
      // The last chunk goes with the status (no OnWriteDone follows).
      StartWriteAndFinish(&message_, grpc::WriteOptions(), grpc::Status::OK);
    } else {
      StartWrite(&message_);
    }
  }

  grpc::CallbackServerContext* const ctx_;
  const int64_t chunk_;
  std::unique_ptr<ReadyDownload> download_;
  std::string session_id_;
  int64_t offset_ = 0;
  grpc::ByteBuffer message_;
};

// ---- Connect: a bidirectional stream of batches ------------------------------------------------

class ConnectReactor final
    : public grpc::ServerBidiReactor<v1::ConnectRequest, v1::ConnectResponse> {
 public:
  ConnectReactor(const TensordService* service, grpc::CallbackServerContext* ctx)
      : service_(service),
        handlers_(&service->handlers()),
        ctx_(ctx),
        tenant_(service->Authorize(*ctx)) {
    if (!tenant_.ok()) {
      FinishWith(ctx_, this, "connect", tenant_.status());
      return;
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      std::optional<grpc::Status> finish;
      {
        absl::MutexLock lock(&mu_);
        reads_done_ = true;
        finish = MaybeFinishLocked();
      }
      if (finish) Finish(*finish);
      return;
    }
    // One request at a time: the next read starts once this one is answered (at once, unless
    // the session is still running an earlier call).
    auto response = std::make_shared<v1::ConnectResponse>();
    response->set_seq(request_.seq());
    {
      // While a request is handled the stream is not finished (its answer would reach a
      // deleted reactor): a failed write only marks it cancelled, and Deliver finishes it.
      absl::MutexLock lock(&mu_);
      handling_ = true;
    }
    Handle(response.get(), [this, response](absl::Status status) {
      if (!status.ok()) {
        ToProtoError(engine::NameOp("connect", status), -1, response->mutable_error());
        LogOpError(response->error(), "connect", PublicSessionId(session_id_));
      }
      Deliver(std::move(*response));
    });
  }

  void Deliver(v1::ConnectResponse response) {
    std::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      handling_ = false;
      if (cancelled_) {  // a write failed meanwhile: the client is gone
        finish = FinishOnceLocked(grpc::Status::CANCELLED);
      } else {
        outbox_.push_back(std::move(response));
        if (!writing_) {
          writing_ = true;
          StartWrite(&outbox_.front());
        }
        // Backpressure: stop reading while too many answers wait to be written.
        if (outbox_.size() < kMaxOutbox) {
          StartRead(&request_);
        } else {
          read_paused_ = true;
        }
      }
    }
    if (finish) Finish(*finish);
  }

  void OnWriteDone(bool ok) override {
    std::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      outbox_.pop_front();
      if (!ok) {
        writing_ = false;
        cancelled_ = true;
        if (!handling_) finish = FinishOnceLocked(grpc::Status::CANCELLED);
      } else {
        if (!outbox_.empty()) {
          StartWrite(&outbox_.front());
        } else {
          writing_ = false;
          finish = MaybeFinishLocked();
        }
        if (read_paused_ && outbox_.size() < kMaxOutbox / 2) {
          read_paused_ = false;
          StartRead(&request_);
        }
      }
    }
    if (finish) Finish(*finish);
  }

  void OnDone() override {
    // A session opened by this stream outlives it on its lease (a client may come back after a
    // network blip); CloseSession ends it at once.
    if (owns_session_) {
      if (auto s = handlers_->sessions().Find(session_id_); s.ok()) {
        (*s)->Touch();
        (*s)->set_stream_bound(false);
      }
    }
    delete this;
  }

 private:
  static constexpr size_t kMaxOutbox = 64;

  // The status to finish with, once everything is written and nothing is being handled.
  std::optional<grpc::Status> MaybeFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reads_done_ && !writing_ && !handling_) return FinishOnceLocked(grpc::Status::OK);
    return std::nullopt;
  }

  // `status` the first time only. The caller calls Finish after releasing mu_: OnDone, which
  // deletes the reactor, may run as soon as Finish is called.
  std::optional<grpc::Status> FinishOnceLocked(grpc::Status status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return std::nullopt;
    finished_ = true;
    return status;
  }

  void Handle(v1::ConnectResponse* response, Handlers::Done done) {
    const v1::ConnectRequest& request = request_;
    absl::Status status;
    switch (request.kind_case()) {
      case v1::ConnectRequest::kOpenSession:
        if (!session_id_.empty()) {
          status = absl::FailedPreconditionError("connect: this stream already has a session");
          break;
        }
        status = handlers_->HandleOpenSession(request.open_session(), response->mutable_opened(),
                                              *tenant_, ctx_->peer());
        if (status.ok()) {
          session_id_ = response->opened().session_id();
          owns_session_ = true;
          if (auto s = handlers_->sessions().Find(session_id_); s.ok()) (*s)->set_stream_bound(true);
        }
        break;
      case v1::ConnectRequest::kAttachSessionId:
        if (!session_id_.empty()) {
          status = absl::FailedPreconditionError("connect: this stream already has a session");
          break;
        }
        status = service_->Admit(request.attach_session_id(), *tenant_);
        if (status.ok()) status = handlers_->sessions().Find(request.attach_session_id()).status();
        if (status.ok()) session_id_ = request.attach_session_id();
        break;
      case v1::ConnectRequest::kRunOps: {
        // Moved out of request_, which the next read reuses, for as long as the batch runs.
        auto run = std::make_shared<v1::RunOpsRequest>();
        run->Swap(request_.mutable_run_ops());
        if (run->session_id().empty()) run->set_session_id(session_id_);
        if (absl::Status admitted = service_->Admit(run->session_id(), *tenant_); !admitted.ok()) {
          return done(std::move(admitted));
        }
        return handlers_->HandleRunOps(
            *run, response->mutable_ran(),
            [run, done = std::move(done)](absl::Status s) mutable { done(std::move(s)); });
      }
      case v1::ConnectRequest::kRelease: {
        auto release = std::make_shared<v1::ReleaseRequest>();
        release->Swap(request_.mutable_release());
        if (release->session_id().empty()) release->set_session_id(session_id_);
        if (absl::Status admitted = service_->Admit(release->session_id(), *tenant_);
            !admitted.ok()) {
          return done(std::move(admitted));
        }
        return handlers_->HandleRelease(
            *release, response->mutable_released(),
            [release, done = std::move(done)](absl::Status s) mutable { done(std::move(s)); });
      }
      default:
        status = absl::InvalidArgumentError("connect: empty request");
    }
    done(std::move(status));
  }

  const TensordService* const service_;
  Handlers* const handlers_;
  grpc::CallbackServerContext* const ctx_;
  const absl::StatusOr<std::string> tenant_;
  v1::ConnectRequest request_;
  std::string session_id_;
  bool owns_session_ = false;

  absl::Mutex mu_;
  std::deque<v1::ConnectResponse> outbox_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool read_paused_ ABSL_GUARDED_BY(mu_) = false;
  bool handling_ ABSL_GUARDED_BY(mu_) = false;   // a request is being handled
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;  // a write failed
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

TensordService::TensordService(Handlers* handlers, Authenticator auth)
    : handlers_(handlers),
      auth_(std::move(auth)),
      per_tenant_(auth_.requires_token() || auth_.mtls()) {}

absl::StatusOr<std::string> TensordService::Authorize(const grpc::ServerContextBase& ctx) const {
  return auth_.Tenant(ctx);
}

absl::Status TensordService::Admit(absl::string_view session_id,
                                   absl::string_view tenant) const {
  if (!per_tenant_ || session_id.empty()) return absl::OkStatus();
  return handlers_->sessions().CheckTenant(session_id, tenant);
}

namespace {

// Serves one unary call from raw bytes: parses the request (INVALID_ARGUMENT naming the method
// when the bytes are not one), runs `handle(request, response, done)`, and when `done` comes
// (now or later, from another thread) serializes the response and finishes. Every error names
// the method.
template <typename Request, typename Response, typename Handle>
grpc::ServerUnaryReactor* ServeUnary(grpc::CallbackServerContext* ctx,
                                     const grpc::ByteBuffer* raw_request,
                                     grpc::ByteBuffer* raw_response, const char* method,
                                     const TensordService* service, Handle handle) {
  auto* reactor = ctx->DefaultReactor();
  absl::StatusOr<std::string> tenant = service->Authorize(*ctx);
  if (!tenant.ok()) {
    FinishWith(ctx, reactor, method, tenant.status());
    return reactor;
  }
  // A call cut before its request arrived whole comes with an empty one: nothing to answer
  // (the client, if it is still there, sends it again), and no error to log.
  if (ctx->IsCancelled()) {
    reactor->Finish(grpc::Status::CANCELLED);
    return reactor;
  }
  struct Call {
    Request request;
    Response response;
  };
  auto call = std::make_unique<Call>();
  if (!ParseRaw(*raw_request, &call->request)) {
    FinishWith(ctx, reactor, method,
               absl::InvalidArgumentError(absl::StrCat(
                   "the request is not a valid ", Request::descriptor()->full_name(), " message")));
    return reactor;
  }
  if (absl::Status admitted = service->Admit(SessionOf(call->request), *tenant); !admitted.ok()) {
    FinishWith(ctx, reactor, method, admitted, SessionOf(call->request));
    return reactor;
  }
  Call* c = call.release();  // owned by `done`, which runs exactly once
  auto finish = [ctx, reactor, raw_response, method, c](absl::Status status) {
    std::unique_ptr<Call> owned(c);
    if (status.ok()) {
      bool own_buffer;
      grpc::Status serialized = grpc::SerializationTraits<Response>::Serialize(
          owned->response, raw_response, &own_buffer);
      if (!serialized.ok()) status = absl::InternalError(serialized.error_message());
    }
    FinishWith(ctx, reactor, method, status, SessionOf(owned->request));
  };
  // Handlers that need the caller's tenant (OpenSession) take it first.
  if constexpr (std::is_invocable_v<Handle, const std::string&, const Request&, Response*,
                                    Handlers::Done>) {
    handle(*tenant, c->request, &c->response, std::move(finish));
  } else {
    handle(c->request, &c->response, std::move(finish));
  }
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* TensordService::GetVersion(grpc::CallbackServerContext* ctx,
                                                     const grpc::ByteBuffer* raw_request,
                                                     grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::GetVersionRequest, v1::GetVersionResponse>(
      ctx, raw_request, raw_response, "get_version", this,
      [this](const v1::GetVersionRequest& request, v1::GetVersionResponse* response,
             Handlers::Done done) {
        handlers_->HandleGetVersion(response);
        done(absl::OkStatus());
      });
}

grpc::ServerUnaryReactor* TensordService::GetServerInfo(grpc::CallbackServerContext* ctx,
                                                        const grpc::ByteBuffer* raw_request,
                                                        grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::GetServerInfoRequest, v1::GetServerInfoResponse>(
      ctx, raw_request, raw_response, "get_server_info", this,
      [this](const v1::GetServerInfoRequest& request, v1::GetServerInfoResponse* response,
             Handlers::Done done) {
        handlers_->HandleGetServerInfo(response);
        done(absl::OkStatus());
      });
}

grpc::ServerUnaryReactor* TensordService::ListOps(grpc::CallbackServerContext* ctx,
                                                  const grpc::ByteBuffer* raw_request,
                                                  grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::ListOpsRequest, v1::ListOpsResponse>(
      ctx, raw_request, raw_response, "list_ops", this,
      [this](const v1::ListOpsRequest& request, v1::ListOpsResponse* response,
             Handlers::Done done) {
        handlers_->HandleListOps(response);
        done(absl::OkStatus());
      });
}

grpc::ServerUnaryReactor* TensordService::OpenSession(grpc::CallbackServerContext* ctx,
                                                      const grpc::ByteBuffer* raw_request,
                                                      grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::OpenSessionRequest, v1::OpenSessionResponse>(
      ctx, raw_request, raw_response, "open_session", this,
      [this, ctx](const std::string& tenant, const v1::OpenSessionRequest& request,
                  v1::OpenSessionResponse* response, Handlers::Done done) {
        done(handlers_->HandleOpenSession(request, response, tenant, ctx->peer()));
      });
}

grpc::ServerUnaryReactor* TensordService::CloseSession(grpc::CallbackServerContext* ctx,
                                                       const grpc::ByteBuffer* raw_request,
                                                       grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::CloseSessionRequest, v1::CloseSessionResponse>(
      ctx, raw_request, raw_response, "close_session", this,
      [this](const v1::CloseSessionRequest& request, v1::CloseSessionResponse* response,
             Handlers::Done done) { done(handlers_->HandleCloseSession(request)); });
}

grpc::ServerUnaryReactor* TensordService::RenewLease(grpc::CallbackServerContext* ctx,
                                                     const grpc::ByteBuffer* raw_request,
                                                     grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::RenewLeaseRequest, v1::RenewLeaseResponse>(
      ctx, raw_request, raw_response, "renew_lease", this,
      [this](const v1::RenewLeaseRequest& request, v1::RenewLeaseResponse* response,
             Handlers::Done done) { done(handlers_->HandleRenewLease(request, response)); });
}

grpc::ServerUnaryReactor* TensordService::RunOps(grpc::CallbackServerContext* ctx,
                                                 const grpc::ByteBuffer* raw_request,
                                                 grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::RunOpsRequest, v1::RunOpsResponse>(
      ctx, raw_request, raw_response, "run_ops", this,
      [this](const v1::RunOpsRequest& request, v1::RunOpsResponse* response,
             Handlers::Done done) {
        handlers_->HandleRunOps(request, response, std::move(done));
      });
}

grpc::ServerUnaryReactor* TensordService::Describe(grpc::CallbackServerContext* ctx,
                                                   const grpc::ByteBuffer* raw_request,
                                                   grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::DescribeRequest, v1::DescribeResponse>(
      ctx, raw_request, raw_response, "describe", this,
      [this](const v1::DescribeRequest& request, v1::DescribeResponse* response,
             Handlers::Done done) {
        handlers_->HandleDescribe(request, response, std::move(done));
      });
}

grpc::ServerUnaryReactor* TensordService::Release(grpc::CallbackServerContext* ctx,
                                                  const grpc::ByteBuffer* raw_request,
                                                  grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::ReleaseRequest, v1::ReleaseResponse>(
      ctx, raw_request, raw_response, "release", this,
      [this](const v1::ReleaseRequest& request, v1::ReleaseResponse* response,
             Handlers::Done done) {
        handlers_->HandleRelease(request, response, std::move(done));
      });
}

grpc::ServerUnaryReactor* TensordService::ReadStorage(grpc::CallbackServerContext* ctx,
                                                      const grpc::ByteBuffer* raw_request,
                                                      grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::ReadStorageRequest, v1::ReadStorageResponse>(
      ctx, raw_request, raw_response, "read_storage", this,
      [this](const v1::ReadStorageRequest& request, v1::ReadStorageResponse* response,
             Handlers::Done done) {
        handlers_->HandleReadStorage(request,
                                    [response, done = std::move(done)](
                                        absl::StatusOr<v1::ReadStorageResponse> result) mutable {
                                      if (result.ok()) *response = *std::move(result);
                                      done(result.status());
                                    });
      });
}

grpc::ServerUnaryReactor* TensordService::WriteStorage(grpc::CallbackServerContext* ctx,
                                                       const grpc::ByteBuffer* raw_request,
                                                       grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::WriteStorageRequest, v1::WriteStorageResponse>(
      ctx, raw_request, raw_response, "write_storage", this,
      [this](const v1::WriteStorageRequest& request, v1::WriteStorageResponse* response,
             Handlers::Done done) {
        handlers_->HandleWriteStorage(request, std::move(done));
      });
}

grpc::ServerUnaryReactor* TensordService::CreateStream(grpc::CallbackServerContext* ctx,
                                                       const grpc::ByteBuffer* raw_request,
                                                       grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::CreateStreamRequest, v1::CreateStreamResponse>(
      ctx, raw_request, raw_response, "create_stream", this,
      [this](const v1::CreateStreamRequest& request, v1::CreateStreamResponse* response,
             Handlers::Done done) {
        handlers_->HandleCreateStream(request, response, std::move(done));
      });
}

grpc::ServerUnaryReactor* TensordService::RecordEvent(grpc::CallbackServerContext* ctx,
                                                      const grpc::ByteBuffer* raw_request,
                                                      grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::RecordEventRequest, v1::RecordEventResponse>(
      ctx, raw_request, raw_response, "record_event", this,
      [this](const v1::RecordEventRequest& request, v1::RecordEventResponse* response,
             Handlers::Done done) { handlers_->HandleRecordEvent(request, std::move(done)); });
}

grpc::ServerUnaryReactor* TensordService::WaitEvent(grpc::CallbackServerContext* ctx,
                                                    const grpc::ByteBuffer* raw_request,
                                                    grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::WaitEventRequest, v1::WaitEventResponse>(
      ctx, raw_request, raw_response, "wait_event", this,
      [this](const v1::WaitEventRequest& request, v1::WaitEventResponse* response,
             Handlers::Done done) { handlers_->HandleWaitEvent(request, std::move(done)); });
}

grpc::ServerUnaryReactor* TensordService::QueryEvent(grpc::CallbackServerContext* ctx,
                                                     const grpc::ByteBuffer* raw_request,
                                                     grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::QueryEventRequest, v1::QueryEventResponse>(
      ctx, raw_request, raw_response, "query_event", this,
      [this](const v1::QueryEventRequest& request, v1::QueryEventResponse* response,
             Handlers::Done done) {
        handlers_->HandleQueryEvent(request, response, std::move(done));
      });
}

grpc::ServerUnaryReactor* TensordService::Synchronize(grpc::CallbackServerContext* ctx,
                                                      const grpc::ByteBuffer* raw_request,
                                                      grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::SynchronizeRequest, v1::SynchronizeResponse>(
      ctx, raw_request, raw_response, "synchronize", this,
      [this](const v1::SynchronizeRequest& request, v1::SynchronizeResponse* response,
             Handlers::Done done) { handlers_->HandleSynchronize(request, std::move(done)); });
}

grpc::ServerUnaryReactor* TensordService::Cancel(grpc::CallbackServerContext* ctx,
                                                 const grpc::ByteBuffer* raw_request,
                                                 grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::CancelRequest, v1::CancelResponse>(
      ctx, raw_request, raw_response, "cancel", this,
      [this](const v1::CancelRequest& request, v1::CancelResponse* response, Handlers::Done done) {
        done(handlers_->HandleCancel(request, response));
      });
}

grpc::ServerUnaryReactor* TensordService::Profile(grpc::CallbackServerContext* ctx,
                                                  const grpc::ByteBuffer* raw_request,
                                                  grpc::ByteBuffer* raw_response) {
  return ServeUnary<v1::ProfileRequest, v1::ProfileResponse>(
      ctx, raw_request, raw_response, "profile", this,
      [this](const v1::ProfileRequest& request, v1::ProfileResponse* response,
             Handlers::Done done) {
        handlers_->HandleProfile(request, response, std::move(done));
      });
}

grpc::ServerReadReactor<grpc::ByteBuffer>* TensordService::Upload(grpc::CallbackServerContext* ctx,
                                                                  grpc::ByteBuffer* response) {
  return new UploadReactor(this, ctx, response);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* TensordService::Download(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) {
  return new DownloadReactor(this, ctx, request);
}

grpc::ServerBidiReactor<v1::ConnectRequest, v1::ConnectResponse>* TensordService::Connect(
    grpc::CallbackServerContext* ctx) {
  return new ConnectReactor(this, ctx);
}

}  // namespace tensord::server
