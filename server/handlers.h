// Handlers: the service's logic, request in, response out, with no gRPC in it, so it can
// be tested without sockets. The gRPC layer (grpc_service.h) only moves messages and statuses.
#ifndef TENSORD_SERVER_HANDLERS_H_
#define TENSORD_SERVER_HANDLERS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "engine/runtime/executor.h"
#include "engine/tensor/tensor.h"
#include "server/limits.h"
#include "server/session_store.h"
#include "tensord/v1/tensord.pb.h"

namespace tensord::server {

inline constexpr char kApiVersion[] = "v1";
inline constexpr char kServerVersion[] = TENSORD_VERSION;
// The oldest client version a session may be opened with (OpenSessionRequest.client_version);
// newer clients are served while their major version is the server's.
inline constexpr char kMinClientVersion[] = "0.1.0";

// An upload in progress: the storage is allocated (and charged) when the header arrives and
// freed if the upload does not complete.
class PendingUpload {
 public:
  // Copies the next bytes in; INVALID_ARGUMENT past the announced size.
  absl::Status Append(absl::string_view data);
  // The same, for `n` bytes that `fill` writes to the address it is given.
  absl::Status AppendWith(int64_t n, absl::FunctionRef<void(char*)> fill);
  // Registers the tensor; INVALID_ARGUMENT when fewer bytes than announced arrived.
  absl::StatusOr<v1::UploadResponse> Finish();

 private:
  friend class Handlers;
  std::shared_ptr<Session> session_;
  uint64_t id_ = 0;
  engine::Tensor tensor_;
  // For a tensor on a GPU: host memory the bytes arrive in, copied to the device at Finish.
  std::optional<engine::Tensor> staging_;
  int64_t received_ = 0;
};

// A download whose data is ready: the elements of the tensor in row-major order, read from the
// storage itself (contiguous tensors, under a read fence that holds back later writes) or from
// a contiguous snapshot. Destroying it releases the fence.
class ReadyDownload {
 public:
  ~ReadyDownload();
  const v1::TensorInfo& header() const { return header_; }
  int64_t total_bytes() const { return total_bytes_; }
  // Bytes [offset, offset + n).
  absl::string_view Bytes(int64_t offset, int64_t n) const {
    return absl::string_view(data_ + offset, static_cast<size_t>(n));
  }

 private:
  friend class Handlers;
  v1::TensorInfo header_;
  engine::Tensor source_;  // keeps the bytes alive
  const char* data_ = nullptr;
  int64_t total_bytes_ = 0;
  std::shared_ptr<engine::Storage> fenced_;  // storage whose read fence is held, if any
  uint64_t read_ticket_ = 0;
};

// OK when a client of `client_version` may open a session (empty: not checked);
// FAILED_PRECONDITION naming both versions otherwise.
absl::Status CheckClientVersion(absl::string_view client_version);

class Handlers {
 public:
  // `replica`: this server's name in session ids (SessionStore).
  Handlers(std::string replica, const ServerLimits& limits, engine::Device default_device,
           engine::Executor* executor);

  const ServerLimits& limits() const { return limits_; }
  SessionStore& sessions() { return sessions_; }

  void HandleGetVersion(v1::GetVersionResponse* response) const;
  void HandleGetServerInfo(v1::GetServerInfoResponse* response);
  void HandleListOps(v1::ListOpsResponse* response) const;

  // For `tenant` (auth.h); `peer`: the caller's address, for the log.
  absl::Status HandleOpenSession(const v1::OpenSessionRequest& request,
                                 v1::OpenSessionResponse* response, absl::string_view tenant = {},
                                 absl::string_view peer = {});
  absl::Status HandleCloseSession(const v1::CloseSessionRequest& request);
  absl::Status HandleRenewLease(const v1::RenewLeaseRequest& request,
                                v1::RenewLeaseResponse* response);

  // The calls of a session below run in the session's call order (Session::InOrder) and end by
  // calling `done`: at once, on this thread, unless an earlier call of the session is still
  // running (a batch waiting for the inputs of a data-dependent op); no thread waits meanwhile.
  // Requests and responses must live until `done` is called.
  using Done = absl::AnyInvocable<void(absl::Status)>;

  // Op errors are reported in response->error with an OK status; the status is an error only
  // when the request cannot be handled at all (no such session).
  void HandleRunOps(const v1::RunOpsRequest& request, v1::RunOpsResponse* response, Done done);
  void HandleDescribe(const v1::DescribeRequest& request, v1::DescribeResponse* response,
                      Done done);
  void HandleRelease(const v1::ReleaseRequest& request, v1::ReleaseResponse* response,
                     Done done);

  // Calls `done` once the data can be read (possibly inline, possibly on an executor thread).
  void HandleReadStorage(const v1::ReadStorageRequest& request,
                         absl::AnyInvocable<void(absl::StatusOr<v1::ReadStorageResponse>)> done);
  void HandleWriteStorage(const v1::WriteStorageRequest& request, Done done);

  void StartUpload(v1::UploadHeader header,
                   absl::AnyInvocable<void(absl::StatusOr<std::unique_ptr<PendingUpload>>)> done);
  // Calls `done` with the download once the work that writes the tensor has finished.
  void StartDownload(v1::DownloadRequest request,
                     absl::AnyInvocable<void(absl::StatusOr<std::unique_ptr<ReadyDownload>>)> done);

  void HandleCreateStream(const v1::CreateStreamRequest& request,
                          v1::CreateStreamResponse* response, Done done);
  void HandleRecordEvent(const v1::RecordEventRequest& request, Done done);
  void HandleWaitEvent(const v1::WaitEventRequest& request, Done done);
  void HandleQueryEvent(const v1::QueryEventRequest& request, v1::QueryEventResponse* response,
                        Done done);
  // Calls `done` with the first asynchronous error (or OK) once the streams are drained; an
  // error a download or storage read has returned already is not returned again.
  void HandleSynchronize(const v1::SynchronizeRequest& request, Done done);
  // Cancels the session's queued ops at once (not in its call order; Session::Cancel).
  absl::Status HandleCancel(const v1::CancelRequest& request, v1::CancelResponse* response);
  void HandleProfile(const v1::ProfileRequest& request, v1::ProfileResponse* response,
                     Done done);

 private:
  // Runs `work` on the session, in its call order, and passes its status to `done`.
  void InSession(const std::string& session_id, absl::AnyInvocable<absl::Status(Session&)> work,
                 Done done);
  // The parts of the calls above that run in the session's call order.
  void ReadStorageInOrder(Session& session, const v1::ReadStorageRequest& request,
                          absl::AnyInvocable<void(absl::StatusOr<v1::ReadStorageResponse>)> done);
  static absl::Status WriteStorageInOrder(Session& session,
                                          const v1::WriteStorageRequest& request);
  static absl::StatusOr<std::unique_ptr<PendingUpload>> StartUploadInOrder(
      std::shared_ptr<Session> session, const v1::UploadHeader& header);
  void DownloadInOrder(
      Session& session, const v1::DownloadRequest& request,
      absl::AnyInvocable<void(absl::StatusOr<std::unique_ptr<ReadyDownload>>)> done);
  static void SynchronizeInOrder(Session& session, const v1::SynchronizeRequest& request,
                                 Done done);
  // Waits (without blocking) for the writes a host read of `tensor` must see, then calls
  // `read` on an executor thread with the read fence held; the fence is released after `read`
  // unless `read` takes it over (ReadyDownload).
  void ReadWhenReady(const engine::Tensor& tensor, absl::AnyInvocable<void(uint64_t ticket)> read);

  const ServerLimits limits_;
  const engine::Device default_device_;
  engine::Executor* const executor_;
  SessionStore sessions_;
  v1::ListOpsResponse ops_;  // built once
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_HANDLERS_H_
