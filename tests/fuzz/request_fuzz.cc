// request_fuzz: the per-session RPCs other than RunOps. The first input byte selects the RPC
// (modulo the count, see kRpcNames), the rest is that request's protobuf bytes. Each input runs
// against a fresh session holding the preamble's tensors (ids 1-20), a second stream (1) and a
// recorded event (1). A session id that is empty or "S" is replaced by that session's id; any
// other is passed on as it is (an unknown session).
//
// Checks beyond the sanitizers: Describe returns one valid TensorInfo per id; Release accounts
// for every id; ReadStorage returns exactly the elements asked for; data written by WriteStorage
// reads back equal; after a Synchronize of the whole session every recorded event is complete;
// an opened session closes; downloads have the bytes their header promises; a profile stopped
// lists what it recorded in queue order with consistent times.
#include <cstdint>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "tests/fuzz/fuzz_backend.h"

namespace tensord::fuzz {
namespace {

enum Rpc {
  kDescribe, kRelease, kReadStorage, kWriteStorage, kCreateStream, kRecordEvent, kWaitEvent,
  kQueryEvent, kSynchronize, kOpenSession, kCloseSession, kRenewLease, kDownload, kProfile,
  kNumRpcs
};

std::string Resolve(const std::string& given, const FuzzSession& session) {
  return given.empty() || given == "S" ? session.id() : given;
}

template <typename Request>
bool Parse(const uint8_t* data, size_t size, Request* request, const FuzzSession& session) {
  if (!request->ParseFromArray(data, static_cast<int>(size))) return false;
  request->set_session_id(Resolve(request->session_id(), session));
  return true;
}

void CheckEventsComplete(const FuzzSession& session, uint64_t event) {
  v1::QueryEventRequest query;
  query.set_session_id(session.id());
  query.set_event(event);
  v1::QueryEventResponse answer;
  if (QueryEvent(Backend(), query, &answer).ok()) {
    FUZZ_CHECK(answer.completed(), absl::StrCat("event ", event, " incomplete after Synchronize"));
  }
}

void Run(int rpc, const uint8_t* data, size_t size, FuzzSession& session) {
  Handlers& b = Backend();
  switch (rpc) {
    case kDescribe: {
      v1::DescribeRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      v1::DescribeResponse rs;
      if (!Describe(b, rq, &rs).ok()) return;
      FUZZ_CHECK(rs.tensors_size() == rq.ids_size(), rs.ShortDebugString());
      for (int i = 0; i < rs.tensors_size(); ++i) {
        FUZZ_CHECK(rs.tensors(i).id() == rq.ids(i), rs.ShortDebugString());
        CheckTensorInfo(rs.tensors(i), "describe");
      }
      return;
    }
    case kRelease: {
      v1::ReleaseRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      v1::ReleaseResponse rs;
      if (!Release(b, rq, &rs).ok()) return;
      FUZZ_CHECK(rs.released() + rs.not_found_size() == rq.ids_size(), rs.ShortDebugString());
      return;
    }
    case kReadStorage: {
      v1::ReadStorageRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      absl::StatusOr<v1::ReadStorageResponse> rs = ReadStorage(b, rq);
      if (!rs.ok()) return;
      const int64_t itemsize = WireItemSize(rs->dtype());
      FUZZ_CHECK(itemsize > 0, rs->ShortDebugString());
      const int64_t count = rq.count() < 0 ? rs->storage_numel() - rq.offset() : rq.count();
      FUZZ_CHECK(static_cast<int64_t>(rs->data().size()) == count * itemsize,
                 absl::StrCat(rq.ShortDebugString(), " -> ", rs->data().size(), " bytes"));
      return;
    }
    case kWriteStorage: {
      v1::WriteStorageRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      if (!WriteStorage(b, rq).ok()) return;
      // The bytes read back equal (the read waits for the queued write).
      v1::ReadStorageRequest read;
      read.set_session_id(rq.session_id());
      read.set_id(rq.id());
      read.set_offset(rq.offset());
      read.set_count(-1);
      absl::StatusOr<v1::ReadStorageResponse> rs = ReadStorage(b, read);
      FUZZ_CHECK(rs.ok() || rs.status().code() == absl::StatusCode::kFailedPrecondition,
                 rs.status().ToString());
      if (!rs.ok()) return;  // poisoned by an earlier failure
      FUZZ_CHECK(rs->data().substr(0, rq.data().size()) == rq.data(),
                 absl::StrCat("write_storage then read_storage differ: ", rq.ShortDebugString(),
                              " read back: ", absl::BytesToHexString(rs->data())));
      return;
    }
    case kCreateStream: {
      v1::CreateStreamRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      v1::CreateStreamResponse rs;
      (void)CreateStream(b, rq, &rs);
      return;
    }
    case kRecordEvent: {
      v1::RecordEventRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      if (!RecordEvent(b, rq).ok()) return;
      if (session.SynchronizeAll().ok()) CheckEventsComplete(session, rq.event());
      return;
    }
    case kWaitEvent: {
      v1::WaitEventRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      if (!WaitEvent(b, rq).ok()) return;
      if (session.SynchronizeAll().ok()) CheckEventsComplete(session, rq.event());
      return;
    }
    case kQueryEvent: {
      v1::QueryEventRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      v1::QueryEventResponse rs;
      (void)QueryEvent(b, rq, &rs);
      return;
    }
    case kSynchronize: {
      v1::SynchronizeRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      (void)Synchronize(b, rq);
      return;
    }
    case kOpenSession: {
      v1::OpenSessionRequest rq;
      if (!rq.ParseFromArray(data, static_cast<int>(size))) return;
      v1::OpenSessionResponse rs;
      if (!OpenSession(b, rq, &rs).ok()) return;
      // "<route>/<32 hex digits>"
      FUZZ_CHECK(rs.session_id().size() == rs.route().size() + 33 &&
                     rs.session_id().rfind(rs.route() + "/", 0) == 0,
                 rs.ShortDebugString());
      v1::CloseSessionRequest close;
      close.set_session_id(rs.session_id());
      const absl::Status closed = CloseSession(b, close);
      FUZZ_CHECK(closed.ok(), closed.ToString());
      return;
    }
    case kCloseSession: {
      v1::CloseSessionRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      (void)CloseSession(b, rq);
      return;
    }
    case kRenewLease: {
      v1::RenewLeaseRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      v1::RenewLeaseResponse rs;
      if (!RenewLease(b, rq, &rs).ok()) return;
      FUZZ_CHECK(rs.ttl_seconds() == absl::ToInt64Seconds(FuzzLimits().session_ttl),
                 rs.ShortDebugString());
      return;
    }
    case kDownload: {
      v1::DownloadRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      (void)DownloadBytes(rq.session_id(), rq.id());
      return;
    }
    case kProfile: {
      v1::ProfileRequest rq;
      if (!Parse(data, size, &rq, session)) return;
      v1::ProfileResponse rs;
      if (!Profile(b, rq, &rs).ok() || rq.enable()) return;
      int64_t queued = 0;
      for (const v1::ProfiledOp& op : rs.ops()) {
        FUZZ_CHECK(op.queued_ns() >= queued, rs.ShortDebugString());
        FUZZ_CHECK(op.end_ns() >= op.start_ns(), rs.ShortDebugString());
        queued = op.queued_ns();
      }
      FUZZ_CHECK(rs.dropped() >= 0 && rs.ops_size() <= rs.max_ops(), rs.ShortDebugString());
      return;
    }
    default: return;
  }
}

}  // namespace
}  // namespace tensord::fuzz

using namespace tensord::fuzz;  // NOLINT

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Backend();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  FuzzSession session;
  {
    // Stream 1 and event 1 (recorded on stream 0) exist in every session.
    v1::CreateStreamRequest create;
    create.set_session_id(session.id());
    v1::CreateStreamResponse created;
    const absl::Status s = CreateStream(Backend(), create, &created);
    FUZZ_CHECK(s.ok() && created.stream() == 1, s.ToString());
    v1::RecordEventRequest record;
    record.set_session_id(session.id());
    record.set_event(1);
    const absl::Status r = RecordEvent(Backend(), record);
    FUZZ_CHECK(r.ok(), r.ToString());
  }
  const int rpc = data[0] % kNumRpcs;
  if (rpc == kWriteStorage) {
    // The preamble's kernels (stream 0) finish first: a write on another stream is unordered
    // with them (CUDA's semantics), and the write must be the last one for the read-back check.
    const absl::Status s = session.SynchronizeAll();
    FUZZ_CHECK(s.ok(), s.ToString());
  }
  Run(rpc, data + 1, size - 1, session);
  return 0;
}
