#include "server/grpc_service.h"

#include <deque>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "engine/errors.h"
#include "server/status_util.h"
#include "tensord/wire.h"

namespace tensord::server {
namespace {

constexpr char kErrorKindKey[] = "tensord-error-kind";

// Finishes with `status`; errors also carry the Python exception class in trailing metadata.
template <typename Reactor>
void FinishWith(grpc::CallbackServerContext* ctx, Reactor* reactor, const absl::Status& status) {
  if (!status.ok()) ctx->AddTrailingMetadata(kErrorKindKey, engine::ErrorKind(status));
  reactor->Finish(ToGrpcStatus(status));
}

// ---- Upload: client streaming, raw bytes ---------------------------------------------------

class UploadReactor final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  UploadReactor(TensordBackend* backend, grpc::CallbackServerContext* ctx,
                grpc::ByteBuffer* response, absl::Status auth)
      : backend_(backend), ctx_(ctx), response_(response) {
    if (!auth.ok()) {
      FinishWith(ctx_, this, auth);
      return;
    }
    StartRead(&message_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client is done writing, or went away
      if (ctx_->IsCancelled()) return Finish(grpc::Status::CANCELLED);
      if (!upload_) {
        return FinishWith(ctx_, this,
                          absl::InvalidArgumentError("upload: no header was sent"));
      }
      absl::StatusOr<v1::UploadResponse> done = upload_->Finish();
      if (done.ok()) *response_ = wire::Serialize(*done);
      return FinishWith(ctx_, this, done.status());
    }
    absl::Status status = Handle();
    if (!status.ok()) return FinishWith(ctx_, this, status);
    StartRead(&message_);
  }

  // Destroys a partial upload, freeing its storage.
  void OnDone() override { delete this; }

 private:
  absl::Status Handle() {
    wire::Reader reader(message_);
    if (upload_) {
      // The common case, a lone data record: straight from the slices into the storage.
      const int64_t n = reader.DataRecordLength();
      if (n >= 0) {
        return upload_->AppendWith(n, [&](char* to) { reader.CopyTo(to, static_cast<size_t>(n)); });
      }
    }
    v1::UploadRequest request;
    if (!reader.Parse(&request)) {
      return absl::InvalidArgumentError("upload: a message is not an UploadRequest");
    }
    if (!upload_) {
      if (request.kind_case() != v1::UploadRequest::kHeader) {
        return absl::InvalidArgumentError("upload: the first message must be the header");
      }
      absl::StatusOr<std::unique_ptr<PendingUpload>> upload = backend_->StartUpload(request.header());
      if (!upload.ok()) return upload.status();
      upload_ = *std::move(upload);
      return absl::OkStatus();
    }
    if (request.kind_case() == v1::UploadRequest::kData) return upload_->Append(request.data());
    return absl::InvalidArgumentError("upload: only the first message may be a header");
  }

  TensordBackend* const backend_;
  grpc::CallbackServerContext* const ctx_;
  grpc::ByteBuffer* const response_;
  grpc::ByteBuffer message_;
  std::unique_ptr<PendingUpload> upload_;
};

// ---- Download: server streaming, raw bytes --------------------------------------------------

class DownloadReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  DownloadReactor(TensordBackend* backend, grpc::CallbackServerContext* ctx,
                  const grpc::ByteBuffer* raw_request, absl::Status auth)
      : ctx_(ctx), chunk_(backend->limits().chunk_bytes) {
    if (!auth.ok()) {
      FinishWith(ctx_, this, auth);
      return;
    }
    v1::DownloadRequest request;
    if (!wire::Reader(*raw_request).Parse(&request)) {
      FinishWith(ctx_, this, absl::InvalidArgumentError("download: malformed request"));
      return;
    }
    backend->StartDownload(request,
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
    if (!download.ok()) return FinishWith(ctx_, this, download.status());
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
      // The last chunk goes with the status (no OnWriteDone follows).
      StartWriteAndFinish(&message_, grpc::WriteOptions(), grpc::Status::OK);
    } else {
      StartWrite(&message_);
    }
  }

  grpc::CallbackServerContext* const ctx_;
  const int64_t chunk_;
  std::unique_ptr<ReadyDownload> download_;
  int64_t offset_ = 0;
  grpc::ByteBuffer message_;
};

// ---- Connect: a bidirectional stream of batches ------------------------------------------------

class ConnectReactor final
    : public grpc::ServerBidiReactor<v1::ConnectRequest, v1::ConnectResponse> {
 public:
  ConnectReactor(TensordBackend* backend, grpc::CallbackServerContext* ctx, absl::Status auth)
      : backend_(backend), ctx_(ctx) {
    if (!auth.ok()) {
      FinishWith(ctx_, this, auth);
      return;
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      absl::MutexLock lock(&mu_);
      reads_done_ = true;
      MaybeFinishLocked();
      return;
    }
    v1::ConnectResponse response;
    response.set_seq(request_.seq());
    Handle(request_, &response);
    absl::MutexLock lock(&mu_);
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

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    outbox_.pop_front();
    if (!ok) {
      writing_ = false;
      if (!finished_) {
        finished_ = true;
        Finish(grpc::Status::CANCELLED);
      }
      return;
    }
    if (!outbox_.empty()) {
      StartWrite(&outbox_.front());
    } else {
      writing_ = false;
      MaybeFinishLocked();
    }
    if (read_paused_ && outbox_.size() < kMaxOutbox / 2) {
      read_paused_ = false;
      StartRead(&request_);
    }
  }

  void OnDone() override {
    // A session opened by this stream ends with it.
    if (owns_session_) (void)backend_->sessions().Close(session_id_);
    delete this;
  }

 private:
  static constexpr size_t kMaxOutbox = 64;

  void MaybeFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reads_done_ && !writing_ && !finished_) {
      finished_ = true;
      Finish(grpc::Status::OK);
    }
  }

  void Handle(const v1::ConnectRequest& request, v1::ConnectResponse* response) {
    absl::Status status;
    switch (request.kind_case()) {
      case v1::ConnectRequest::kOpenSession:
        if (!session_id_.empty()) {
          status = absl::FailedPreconditionError("connect: this stream already has a session");
          break;
        }
        status = backend_->HandleOpenSession(request.open_session(), response->mutable_opened());
        if (status.ok()) {
          session_id_ = response->opened().session_id();
          owns_session_ = true;
          if (auto s = backend_->sessions().Find(session_id_); s.ok()) (*s)->set_stream_bound(true);
        }
        break;
      case v1::ConnectRequest::kAttachSessionId:
        if (!session_id_.empty()) {
          status = absl::FailedPreconditionError("connect: this stream already has a session");
          break;
        }
        status = backend_->sessions().Find(request.attach_session_id()).status();
        if (status.ok()) session_id_ = request.attach_session_id();
        break;
      case v1::ConnectRequest::kRunOps: {
        v1::RunOpsRequest run = request.run_ops();
        if (run.session_id().empty()) run.set_session_id(session_id_);
        status = backend_->HandleRunOps(run, response->mutable_ran());
        break;
      }
      case v1::ConnectRequest::kRelease: {
        v1::ReleaseRequest release = request.release();
        if (release.session_id().empty()) release.set_session_id(session_id_);
        status = backend_->HandleRelease(release, response->mutable_released());
        break;
      }
      default:
        status = absl::InvalidArgumentError("connect: empty request");
    }
    if (!status.ok()) ToProtoError(status, -1, response->mutable_error());
  }

  TensordBackend* const backend_;
  grpc::CallbackServerContext* const ctx_;
  v1::ConnectRequest request_;
  std::string session_id_;
  bool owns_session_ = false;

  absl::Mutex mu_;
  std::deque<v1::ConnectResponse> outbox_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool read_paused_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

TensordService::TensordService(TensordBackend* backend, std::string auth_token)
    : backend_(backend), auth_token_(std::move(auth_token)) {}

absl::Status TensordService::Authorize(grpc::CallbackServerContext* ctx) const {
  if (auth_token_.empty()) return absl::OkStatus();
  const auto& metadata = ctx->client_metadata();
  auto it = metadata.find("authorization");
  if (it != metadata.end()) {
    absl::string_view value(it->second.data(), it->second.size());
    if (absl::ConsumePrefix(&value, "Bearer ") && value == auth_token_) return absl::OkStatus();
  }
  return absl::UnauthenticatedError("a valid 'authorization: Bearer <token>' is required");
}

#define TENSORD_UNARY(body)                         \
  auto* reactor = ctx->DefaultReactor();            \
  absl::Status status = Authorize(ctx);             \
  if (status.ok()) status = [&]() -> absl::Status { \
    body                                            \
  }();                                              \
  FinishWith(ctx, reactor, status);                 \
  return reactor;

grpc::ServerUnaryReactor* TensordService::GetVersion(grpc::CallbackServerContext* ctx,
                                                     const v1::GetVersionRequest*,
                                                     v1::GetVersionResponse* response) {
  TENSORD_UNARY(backend_->HandleGetVersion(response); return absl::OkStatus();)
}

grpc::ServerUnaryReactor* TensordService::GetServerInfo(grpc::CallbackServerContext* ctx,
                                                        const v1::GetServerInfoRequest*,
                                                        v1::GetServerInfoResponse* response) {
  TENSORD_UNARY(backend_->HandleGetServerInfo(response); return absl::OkStatus();)
}

grpc::ServerUnaryReactor* TensordService::ListOps(grpc::CallbackServerContext* ctx,
                                                  const v1::ListOpsRequest*,
                                                  v1::ListOpsResponse* response) {
  TENSORD_UNARY(backend_->HandleListOps(response); return absl::OkStatus();)
}

grpc::ServerUnaryReactor* TensordService::OpenSession(grpc::CallbackServerContext* ctx,
                                                      const v1::OpenSessionRequest* request,
                                                      v1::OpenSessionResponse* response) {
  TENSORD_UNARY(return backend_->HandleOpenSession(*request, response);)
}

grpc::ServerUnaryReactor* TensordService::CloseSession(grpc::CallbackServerContext* ctx,
                                                       const v1::CloseSessionRequest* request,
                                                       v1::CloseSessionResponse*) {
  TENSORD_UNARY(return backend_->HandleCloseSession(*request);)
}

grpc::ServerUnaryReactor* TensordService::RenewLease(grpc::CallbackServerContext* ctx,
                                                     const v1::RenewLeaseRequest* request,
                                                     v1::RenewLeaseResponse* response) {
  TENSORD_UNARY(return backend_->HandleRenewLease(*request, response);)
}

grpc::ServerUnaryReactor* TensordService::RunOps(grpc::CallbackServerContext* ctx,
                                                 const v1::RunOpsRequest* request,
                                                 v1::RunOpsResponse* response) {
  TENSORD_UNARY(return backend_->HandleRunOps(*request, response);)
}

grpc::ServerUnaryReactor* TensordService::Describe(grpc::CallbackServerContext* ctx,
                                                   const v1::DescribeRequest* request,
                                                   v1::DescribeResponse* response) {
  TENSORD_UNARY(return backend_->HandleDescribe(*request, response);)
}

grpc::ServerUnaryReactor* TensordService::Release(grpc::CallbackServerContext* ctx,
                                                  const v1::ReleaseRequest* request,
                                                  v1::ReleaseResponse* response) {
  TENSORD_UNARY(return backend_->HandleRelease(*request, response);)
}

grpc::ServerUnaryReactor* TensordService::WriteStorage(grpc::CallbackServerContext* ctx,
                                                       const v1::WriteStorageRequest* request,
                                                       v1::WriteStorageResponse*) {
  TENSORD_UNARY(return backend_->HandleWriteStorage(*request);)
}

grpc::ServerUnaryReactor* TensordService::CreateStream(grpc::CallbackServerContext* ctx,
                                                       const v1::CreateStreamRequest* request,
                                                       v1::CreateStreamResponse* response) {
  TENSORD_UNARY(return backend_->HandleCreateStream(*request, response);)
}

grpc::ServerUnaryReactor* TensordService::RecordEvent(grpc::CallbackServerContext* ctx,
                                                      const v1::RecordEventRequest* request,
                                                      v1::RecordEventResponse*) {
  TENSORD_UNARY(return backend_->HandleRecordEvent(*request);)
}

grpc::ServerUnaryReactor* TensordService::WaitEvent(grpc::CallbackServerContext* ctx,
                                                    const v1::WaitEventRequest* request,
                                                    v1::WaitEventResponse*) {
  TENSORD_UNARY(return backend_->HandleWaitEvent(*request);)
}

grpc::ServerUnaryReactor* TensordService::QueryEvent(grpc::CallbackServerContext* ctx,
                                                     const v1::QueryEventRequest* request,
                                                     v1::QueryEventResponse* response) {
  TENSORD_UNARY(return backend_->HandleQueryEvent(*request, response);)
}

#undef TENSORD_UNARY

grpc::ServerUnaryReactor* TensordService::ReadStorage(grpc::CallbackServerContext* ctx,
                                                      const v1::ReadStorageRequest* request,
                                                      v1::ReadStorageResponse* response) {
  auto* reactor = ctx->DefaultReactor();
  if (absl::Status auth = Authorize(ctx); !auth.ok()) {
    FinishWith(ctx, reactor, auth);
    return reactor;
  }
  backend_->HandleReadStorage(
      *request, [ctx, reactor, response](absl::StatusOr<v1::ReadStorageResponse> result) {
        if (result.ok()) *response = *std::move(result);
        FinishWith(ctx, reactor, result.status());
      });
  return reactor;
}

grpc::ServerUnaryReactor* TensordService::Synchronize(grpc::CallbackServerContext* ctx,
                                                      const v1::SynchronizeRequest* request,
                                                      v1::SynchronizeResponse*) {
  auto* reactor = ctx->DefaultReactor();
  if (absl::Status auth = Authorize(ctx); !auth.ok()) {
    FinishWith(ctx, reactor, auth);
    return reactor;
  }
  backend_->HandleSynchronize(
      *request, [ctx, reactor](absl::Status status) { FinishWith(ctx, reactor, status); });
  return reactor;
}

grpc::ServerReadReactor<grpc::ByteBuffer>* TensordService::Upload(
    grpc::CallbackServerContext* ctx, grpc::ByteBuffer* response) {
  return new UploadReactor(backend_, ctx, response, Authorize(ctx));
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* TensordService::Download(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) {
  return new DownloadReactor(backend_, ctx, request, Authorize(ctx));
}

grpc::ServerBidiReactor<v1::ConnectRequest, v1::ConnectResponse>* TensordService::Connect(
    grpc::CallbackServerContext* ctx) {
  return new ConnectReactor(backend_, ctx, Authorize(ctx));
}

}  // namespace tensord::server
