// What the fuzz targets share: the calls into Handlers (the adapters, first), one backend
// per process with small limits, and a session with a few known tensors.
#ifndef TENSORD_TESTS_FUZZ_FUZZ_BACKEND_H_
#define TENSORD_TESTS_FUZZ_FUZZ_BACKEND_H_

#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "server/handlers.h"
#include "tensord/v1/tensord.pb.h"
#include "tests/fuzz/op_mutator.h"

namespace tensord::fuzz {

namespace v1 = ::tensord::v1;

// Attribute values, for building requests (the preamble, the seed corpora).
inline v1::AttrValue I(int64_t v) {
  v1::AttrValue a;
  a.set_i(v);
  return a;
}
inline v1::AttrValue F(double v) {
  v1::AttrValue a;
  a.set_f(v);
  return a;
}
inline v1::AttrValue B(bool v) {
  v1::AttrValue a;
  a.set_b(v);
  return a;
}
inline v1::AttrValue Ints(const std::vector<int64_t>& v) {
  v1::AttrValue a;
  a.mutable_ints();  // an empty list is still a list
  for (int64_t x : v) a.mutable_ints()->add_values(x);
  return a;
}
inline v1::AttrValue D(v1::DType d) {
  v1::AttrValue a;
  a.set_dtype(d);
  return a;
}
inline v1::AttrValue Dev(const char* d) {
  v1::AttrValue a;
  a.set_device(d);
  return a;
}
inline v1::AttrValue NoneV() {
  v1::AttrValue a;
  a.set_none(true);
  return a;
}
using server::PendingUpload;
using server::ReadyDownload;
using server::Handlers;

// Waits for a call's completion; a call that never completes (60 s) is a finding: aborts.
void AwaitOrDie(absl::Notification& done, const char* what);

// Starts an asynchronous call with a `done(absl::Status)` callback and waits for it.
template <typename Start>
absl::Status CallAndWait(const char* what, Start start) {
  absl::Notification notified;
  absl::Status result;
  start([&](absl::Status status) {
    result = std::move(status);
    notified.Notify();
  });
  AwaitOrDie(notified, what);
  return result;
}

// The same for a callback that receives an absl::StatusOr<T>.
template <typename T, typename Start>
absl::StatusOr<T> CallAndWaitFor(const char* what, Start start) {
  absl::Notification notified;
  absl::StatusOr<T> result = absl::UnknownError("not called");
  start([&](absl::StatusOr<T> value) {
    result = std::move(value);
    notified.Notify();
  });
  AwaitOrDie(notified, what);
  return result;
}

// ==== Adapters: every call into Handlers / PendingUpload goes through these ===============
// Each is written against today's signature. The per-session handlers are becoming asynchronous
// (`..., absl::AnyInvocable<void(absl::Status)> done)`, done possibly on another thread): each
// adapter then takes its `else` branch, which waits for `done`; only this block ever changes.

// Open/Close/RenewLease: synchronous, returning a status (unchanged by the asynchronous API).
inline absl::Status OpenSession(Handlers& b, const v1::OpenSessionRequest& rq,
                                v1::OpenSessionResponse* rs) {
  return b.HandleOpenSession(rq, rs);
}
inline absl::Status CloseSession(Handlers& b, const v1::CloseSessionRequest& rq) {
  return b.HandleCloseSession(rq);
}
inline absl::Status RenewLease(Handlers& b, const v1::RenewLeaseRequest& rq,
                               v1::RenewLeaseResponse* rs) {
  return b.HandleRenewLease(rq, rs);
}

// RunOps: today `Status HandleRunOps(rq, rs)`; asynchronous: `HandleRunOps(rq, rs, done)`.
template <typename B = Handlers>
absl::Status RunOps(B& b, const v1::RunOpsRequest& rq, v1::RunOpsResponse* rs) {
  if constexpr (requires { { b.HandleRunOps(rq, rs) } -> std::same_as<absl::Status>; }) {
    return b.HandleRunOps(rq, rs);
  } else {
    return CallAndWait("RunOps", [&](auto done) { b.HandleRunOps(rq, rs, std::move(done)); });
  }
}

// Describe: today `Status HandleDescribe(rq, rs)`; asynchronous: `(rq, rs, done)`.
template <typename B = Handlers>
absl::Status Describe(B& b, const v1::DescribeRequest& rq, v1::DescribeResponse* rs) {
  if constexpr (requires { { b.HandleDescribe(rq, rs) } -> std::same_as<absl::Status>; }) {
    return b.HandleDescribe(rq, rs);
  } else {
    return CallAndWait("Describe", [&](auto done) { b.HandleDescribe(rq, rs, std::move(done)); });
  }
}

// Release: today `Status HandleRelease(rq, rs)`; asynchronous: `(rq, rs, done)`.
template <typename B = Handlers>
absl::Status Release(B& b, const v1::ReleaseRequest& rq, v1::ReleaseResponse* rs) {
  if constexpr (requires { { b.HandleRelease(rq, rs) } -> std::same_as<absl::Status>; }) {
    return b.HandleRelease(rq, rs);
  } else {
    return CallAndWait("Release", [&](auto done) { b.HandleRelease(rq, rs, std::move(done)); });
  }
}

// ReadStorage: already asynchronous (`done(StatusOr<ReadStorageResponse>)`): waits for it.
template <typename B = Handlers>
absl::StatusOr<v1::ReadStorageResponse> ReadStorage(B& b, const v1::ReadStorageRequest& rq) {
  return CallAndWaitFor<v1::ReadStorageResponse>(
      "ReadStorage", [&](auto done) { b.HandleReadStorage(rq, std::move(done)); });
}

// WriteStorage: today `Status HandleWriteStorage(rq)`; asynchronous: `(rq, done)`.
template <typename B = Handlers>
absl::Status WriteStorage(B& b, const v1::WriteStorageRequest& rq) {
  if constexpr (requires { { b.HandleWriteStorage(rq) } -> std::same_as<absl::Status>; }) {
    return b.HandleWriteStorage(rq);
  } else {
    return CallAndWait("WriteStorage", [&](auto done) { b.HandleWriteStorage(rq, std::move(done)); });
  }
}

// StartUpload: today `StatusOr<unique_ptr<PendingUpload>> StartUpload(header)`; asynchronous:
// `StartUpload(header, done(StatusOr<unique_ptr<PendingUpload>>))`.
template <typename B = Handlers>
absl::StatusOr<std::unique_ptr<PendingUpload>> StartUpload(B& b, const v1::UploadHeader& header) {
  if constexpr (requires { { b.StartUpload(header) } -> std::same_as<absl::StatusOr<std::unique_ptr<PendingUpload>>>; }) {
    return b.StartUpload(header);
  } else {
    return CallAndWaitFor<std::unique_ptr<PendingUpload>>(
        "StartUpload", [&](auto done) { b.StartUpload(header, std::move(done)); });
  }
}
// PendingUpload: synchronous (Append, AppendWith, Finish).
inline absl::Status UploadAppend(PendingUpload& u, absl::string_view data) { return u.Append(data); }
template <typename Fill>
absl::Status UploadAppendWith(PendingUpload& u, int64_t n, Fill&& fill) {
  return u.AppendWith(n, std::forward<Fill>(fill));
}
inline absl::StatusOr<v1::UploadResponse> UploadFinish(PendingUpload& u) { return u.Finish(); }

// StartDownload: already asynchronous (`done(StatusOr<unique_ptr<ReadyDownload>>)`): waits.
template <typename B = Handlers>
absl::StatusOr<std::unique_ptr<ReadyDownload>> StartDownload(B& b, const v1::DownloadRequest& rq) {
  return CallAndWaitFor<std::unique_ptr<ReadyDownload>>(
      "StartDownload", [&](auto done) { b.StartDownload(rq, std::move(done)); });
}

// CreateStream: today `Status HandleCreateStream(rq, rs)`; asynchronous: `(rq, rs, done)`.
template <typename B = Handlers>
absl::Status CreateStream(B& b, const v1::CreateStreamRequest& rq, v1::CreateStreamResponse* rs) {
  if constexpr (requires { { b.HandleCreateStream(rq, rs) } -> std::same_as<absl::Status>; }) {
    return b.HandleCreateStream(rq, rs);
  } else {
    return CallAndWait("CreateStream",
                       [&](auto done) { b.HandleCreateStream(rq, rs, std::move(done)); });
  }
}

// RecordEvent: today `Status HandleRecordEvent(rq)`; asynchronous: `(rq, done)`.
template <typename B = Handlers>
absl::Status RecordEvent(B& b, const v1::RecordEventRequest& rq) {
  if constexpr (requires { { b.HandleRecordEvent(rq) } -> std::same_as<absl::Status>; }) {
    return b.HandleRecordEvent(rq);
  } else {
    return CallAndWait("RecordEvent", [&](auto done) { b.HandleRecordEvent(rq, std::move(done)); });
  }
}

// WaitEvent: today `Status HandleWaitEvent(rq)`; asynchronous: `(rq, done)`.
template <typename B = Handlers>
absl::Status WaitEvent(B& b, const v1::WaitEventRequest& rq) {
  if constexpr (requires { { b.HandleWaitEvent(rq) } -> std::same_as<absl::Status>; }) {
    return b.HandleWaitEvent(rq);
  } else {
    return CallAndWait("WaitEvent", [&](auto done) { b.HandleWaitEvent(rq, std::move(done)); });
  }
}

// QueryEvent: today `Status HandleQueryEvent(rq, rs)`; asynchronous: `(rq, rs, done)`.
template <typename B = Handlers>
absl::Status QueryEvent(B& b, const v1::QueryEventRequest& rq, v1::QueryEventResponse* rs) {
  if constexpr (requires { { b.HandleQueryEvent(rq, rs) } -> std::same_as<absl::Status>; }) {
    return b.HandleQueryEvent(rq, rs);
  } else {
    return CallAndWait("QueryEvent", [&](auto done) { b.HandleQueryEvent(rq, rs, std::move(done)); });
  }
}

// Profile: asynchronous (a stop answers once the ops before it have run): waits for it.
template <typename B>
absl::Status Profile(B& b, const v1::ProfileRequest& rq, v1::ProfileResponse* rs) {
  return CallAndWait("Profile", [&](auto done) { b.HandleProfile(rq, rs, std::move(done)); });
}

// Synchronize: already asynchronous (`done(Status)` once the streams drain): waits for it.
template <typename B = Handlers>
absl::Status Synchronize(B& b, const v1::SynchronizeRequest& rq) {
  return CallAndWait("Synchronize", [&](auto done) { b.HandleSynchronize(rq, std::move(done)); });
}

// ==== The backend and sessions ==================================================================

// Aborts with `what` when `condition` is false: a broken invariant is a finding, in every build.
#define FUZZ_CHECK(condition, ...)                                                    \
  do {                                                                                \
    if (!(condition)) ::tensord::fuzz::Fail(__FILE__, __LINE__, #condition, __VA_ARGS__); \
  } while (0)
[[noreturn]] void Fail(const char* file, int line, const char* condition, const std::string& what);

// Silences protobuf's log lines (every string field with invalid UTF-8 is logged when parsed).
void QuietProtobufLogs();

// The limits of the fuzzing backend: small, so that no input can take the machine's memory or
// time (the per-session budget is what bounds every allocation an op plans).
server::ServerLimits FuzzLimits();

// One backend for the whole process (never destroyed: its executor's threads outlive main).
// The CPU pool caches no blocks, so freed storages go back to malloc (ASan sees reuse).
Handlers& Backend();

// The tensors every session starts with (ids 1..), made by one RunOps batch: different dtypes,
// ranks 0 to 3, views that are not contiguous (a transpose, an expand with stride 0, a strided
// slice), a bool mask and int64 indices.
struct PreambleTensor {
  uint64_t id;
  const char* what;
  std::vector<int64_t> sizes;
};
const std::vector<PreambleTensor>& PreambleTensors();
std::vector<uint64_t> PreambleIds();
// The preamble's int64 index tensors and bool masks.
inline std::vector<uint64_t> PreambleIndexIds() { return {5, 14}; }
inline std::vector<uint64_t> PreambleMaskIds() { return {6}; }
const v1::RunOpsRequest& PreambleRequest();
// Output ids of fuzzed ops start here (above every preamble id).
inline constexpr uint64_t kFirstFreeId = 100;
// The mutator's view of a session: the preamble's ids and shapes, fresh ids from kFirstFreeId.
MutatorConfig SessionMutatorConfig();

// A session with the preamble's tensors. The destructor waits for the session's queued work
// (kernel errors are fine, a hang aborts) and closes it.
class FuzzSession {
 public:
  FuzzSession();
  ~FuzzSession();
  FuzzSession(const FuzzSession&) = delete;
  FuzzSession& operator=(const FuzzSession&) = delete;

  const std::string& id() const { return id_; }
  // Waits for every stream of the session; the first asynchronous error, as Synchronize gives it.
  absl::Status SynchronizeAll();

 private:
  std::string id_;
};

// Downloads tensor `id` of session `session` and checks the download's own consistency (header
// against byte count; every byte is read, so ASan sees a bad source). Returns the bytes.
absl::StatusOr<std::string> DownloadBytes(const std::string& session, uint64_t id);

// Checks what the server says of a tensor (TensorInfo) against the validator's promise: the
// sizes and strides have one length, nothing is negative, and every element addressed lies in
// the storage. Computed here, independently of the engine (128-bit arithmetic).
void CheckTensorInfo(const v1::TensorInfo& info, const char* context);

// Itemsize of a wire dtype, 0 for an invalid one.
int64_t WireItemSize(int dtype);

}  // namespace tensord::fuzz

#endif  // TENSORD_TESTS_FUZZ_FUZZ_BACKEND_H_
