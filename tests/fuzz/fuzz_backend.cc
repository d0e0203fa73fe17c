#include "tests/fuzz/fuzz_backend.h"

#include "server/log.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "engine/runtime/allocator.h"
#include "engine/core/device.h"
#include "engine/runtime/executor.h"
#include "google/protobuf/stubs/logging.h"

namespace tensord::fuzz {

void Fail(const char* file, int line, const char* condition, const std::string& what) {
  std::fprintf(stderr, "\n==== FUZZ CHECK FAILED at %s:%d: %s\n     %s\n", file, line, condition,
               what.c_str());
  std::fflush(stderr);
  std::abort();
}

void AwaitOrDie(absl::Notification& done, const char* what) {
  if (!done.WaitForNotificationWithTimeout(absl::Seconds(60))) {
    Fail(__FILE__, __LINE__, "call completed", absl::StrCat(what, ": no completion after 60 s"));
  }
}

void QuietProtobufLogs() { google::protobuf::SetLogHandler(nullptr); }

server::ServerLimits FuzzLimits() {
  server::ServerLimits l;
  l.max_sessions = 16;
  l.max_session_bytes = int64_t{64} << 20;
  l.max_server_bytes = int64_t{256} << 20;
  l.max_session_gpu_bytes = int64_t{64} << 20;
  l.max_server_gpu_bytes = int64_t{256} << 20;
  l.max_message_bytes = int64_t{4} << 20;
  l.max_queued_ops_per_stream = 256;
  l.max_ops_per_batch = 32;
  l.max_streams_per_session = 8;
  l.max_tensors_per_session = 1024;
  l.chunk_bytes = 64 << 10;
  l.session_ttl = absl::Hours(24);  // no session expires while an input runs
  return l;
}

Handlers& Backend() {
  static Handlers* backend = [] {
    QuietProtobufLogs();
    // Fuzz inputs are mostly errors: their log lines would be most of the run's time.
    (void)server::SetLogLevel("error");
    engine::SetCpuPoolCacheLimit(0);
    auto* executor = new engine::Executor(2);
    return new Handlers("fuzz", FuzzLimits(), engine::kCpu, executor);
  }();
  return *backend;
}

// ---- The preamble --------------------------------------------------------------------------

namespace {

void Add(v1::RunOpsRequest& r, uint64_t out, const char* op, std::initializer_list<uint64_t> in,
         std::initializer_list<std::pair<const char*, v1::AttrValue>> attrs) {
  v1::OpCall* c = r.add_ops();
  c->set_op(op);
  for (uint64_t i : in) c->add_inputs(i);
  for (const auto& [name, value] : attrs) (*c->mutable_attrs())[name] = value;
  c->add_outputs(out);
}

}  // namespace

const std::vector<PreambleTensor>& PreambleTensors() {
  static const auto* tensors = new std::vector<PreambleTensor>{
      {1, "float32 [24] arange", {24}},
      {2, "float32 [2,3,4] view of 1", {2, 3, 4}},
      {3, "float32 [4,3,2] transpose of 2 (not contiguous)", {4, 3, 2}},
      {4, "float64 [] 2.5", {}},
      {5, "int64 [3] arange (indices)", {3}},
      {6, "bool [2,3,4] 2 < 12 (mask)", {2, 3, 4}},
      {7, "int32 [3,4] randint [-5, 5)", {3, 4}},
      {8, "float16 [5] 1.5", {5}},
      {9, "bfloat16 [2,2] -0.5", {2, 2}},
      {10, "uint8 [6] arange", {6}},
      {11, "int8 [2,3] randint [-100, 100)", {2, 3}},
      {12, "float32 [4,4] randn", {4, 4}},
      {13, "float32 [0,3] empty", {0, 3}},
      {14, "int64 [2,3,4] randint [0, 2) (gather/scatter index)", {2, 3, 4}},
      {15, "int16 [4] 7", {4}},
      {16, "float32 [3,1] 1.0", {3, 1}},
      {17, "float32 [3,4] expand of 16 (stride 0)", {3, 4}},
      {18, "float32 [8] slice 1:23:3 of 1 (stride 3, offset 1)", {8}},
      {19, "float32 [4] arange 0.5:4.5", {4}},
      {20, "float32 [2,4,3] transpose of 2 (dims 1, 2)", {2, 4, 3}},
  };
  return *tensors;
}

std::vector<uint64_t> PreambleIds() {
  std::vector<uint64_t> ids;
  for (const PreambleTensor& t : PreambleTensors()) ids.push_back(t.id);
  return ids;
}

MutatorConfig SessionMutatorConfig() {
  MutatorConfig config;
  for (const PreambleTensor& t : PreambleTensors()) {
    config.known_ids.push_back(t.id);
    config.known_shapes[t.id] = t.sizes;
  }
  config.index_ids = PreambleIndexIds();
  config.mask_ids = PreambleMaskIds();
  config.first_free_id = kFirstFreeId;
  config.max_ops = static_cast<int>(FuzzLimits().max_ops_per_batch) / 2;
  return config;
}

const v1::RunOpsRequest& PreambleRequest() {
  static const v1::RunOpsRequest* request = [] {
    auto* r = new v1::RunOpsRequest();
    Add(*r, 1, "arange", {}, {{"end", I(24)}, {"dtype", D(v1::DTYPE_FLOAT32)}});
    Add(*r, 2, "view", {1}, {{"shape", Ints({2, 3, 4})}});
    Add(*r, 3, "transpose", {2}, {{"dim0", I(0)}, {"dim1", I(2)}});
    Add(*r, 4, "full", {}, {{"size", Ints({})}, {"fill_value", F(2.5)}, {"dtype", D(v1::DTYPE_FLOAT64)}});
    Add(*r, 5, "arange", {}, {{"end", I(3)}});
    Add(*r, 6, "lt", {2}, {{"other", I(12)}});
    Add(*r, 7, "randint", {},
        {{"size", Ints({3, 4})}, {"low", I(-5)}, {"high", I(5)}, {"dtype", D(v1::DTYPE_INT32)},
         {"seed", I(1)}});
    Add(*r, 8, "full", {}, {{"size", Ints({5})}, {"fill_value", F(1.5)}, {"dtype", D(v1::DTYPE_FLOAT16)}});
    Add(*r, 9, "full", {}, {{"size", Ints({2, 2})}, {"fill_value", F(-0.5)}, {"dtype", D(v1::DTYPE_BFLOAT16)}});
    Add(*r, 10, "arange", {}, {{"end", I(6)}, {"dtype", D(v1::DTYPE_UINT8)}});
    Add(*r, 11, "randint", {},
        {{"size", Ints({2, 3})}, {"low", I(-100)}, {"high", I(100)}, {"dtype", D(v1::DTYPE_INT8)},
         {"seed", I(2)}});
    Add(*r, 12, "randn", {}, {{"size", Ints({4, 4})}, {"seed", I(3)}});
    Add(*r, 13, "empty", {}, {{"size", Ints({0, 3})}});
    Add(*r, 14, "randint", {},
        {{"size", Ints({2, 3, 4})}, {"low", I(0)}, {"high", I(2)}, {"seed", I(4)}});
    Add(*r, 15, "full", {}, {{"size", Ints({4})}, {"fill_value", I(7)}, {"dtype", D(v1::DTYPE_INT16)}});
    Add(*r, 16, "full", {}, {{"size", Ints({3, 1})}, {"fill_value", F(1.0)}});
    Add(*r, 17, "expand", {16}, {{"size", Ints({3, 4})}});
    Add(*r, 18, "slice", {1}, {{"dim", I(0)}, {"start", I(1)}, {"end", I(23)}, {"step", I(3)}});
    Add(*r, 19, "arange", {}, {{"start", F(0.5)}, {"end", F(4.5)}});
    Add(*r, 20, "transpose", {2}, {{"dim0", I(1)}, {"dim1", I(2)}});
    return r;
  }();
  return *request;
}

// ---- Sessions ------------------------------------------------------------------------------

FuzzSession::FuzzSession() {
  v1::OpenSessionRequest open;
  open.set_client_name("fuzz");
  v1::OpenSessionResponse opened;
  absl::Status status = OpenSession(Backend(), open, &opened);
  FUZZ_CHECK(status.ok(), absl::StrCat("open_session: ", status.ToString()));
  id_ = opened.session_id();
  v1::RunOpsRequest preamble = PreambleRequest();
  preamble.set_session_id(id_);
  v1::RunOpsResponse response;
  status = RunOps(Backend(), preamble, &response);
  FUZZ_CHECK(status.ok() && !response.has_error(),
             absl::StrCat("the preamble failed: ", status.ToString(), " ",
                          response.error().ShortDebugString()));
}

FuzzSession::~FuzzSession() {
  (void)SynchronizeAll();
  v1::CloseSessionRequest close;
  close.set_session_id(id_);
  (void)CloseSession(Backend(), close);  // the input may have closed it already
}

absl::Status FuzzSession::SynchronizeAll() {
  v1::SynchronizeRequest sync;
  sync.set_session_id(id_);
  return Synchronize(Backend(), sync);
}

// ---- Checks --------------------------------------------------------------------------------

int64_t WireItemSize(int dtype) {
  switch (dtype) {
    case v1::DTYPE_BOOL: case v1::DTYPE_UINT8: case v1::DTYPE_INT8: return 1;
    case v1::DTYPE_INT16: case v1::DTYPE_FLOAT16: case v1::DTYPE_BFLOAT16: return 2;
    case v1::DTYPE_INT32: case v1::DTYPE_FLOAT32: return 4;
    case v1::DTYPE_INT64: case v1::DTYPE_FLOAT64: return 8;
    default: return 0;
  }
}

void CheckTensorInfo(const v1::TensorInfo& info, const char* context) {
  const auto what = [&] { return absl::StrCat(context, ": ", info.ShortDebugString()); };
  FUZZ_CHECK(info.sizes_size() == info.strides_size(), what());
  FUZZ_CHECK(info.sizes_size() <= 64, what());
  const int64_t itemsize = WireItemSize(info.dtype());
  FUZZ_CHECK(itemsize > 0, what());
  FUZZ_CHECK(info.storage_offset() >= 0 && info.storage_nbytes() >= 0, what());
  __int128 numel = 1, last = info.storage_offset();
  bool contiguous = true;
  __int128 expected_stride = 1;
  for (int d = info.sizes_size() - 1; d >= 0; --d) {
    FUZZ_CHECK(info.sizes(d) >= 0 && info.strides(d) >= 0, what());
    numel *= info.sizes(d);
    if (numel > (__int128{1} << 64)) numel = __int128{1} << 64;  // stays > INT64_MAX
    if (info.sizes(d) > 0) last += static_cast<__int128>(info.sizes(d) - 1) * info.strides(d);
    if (info.sizes(d) != 1) {
      if (info.strides(d) != expected_stride) contiguous = false;
      expected_stride *= info.sizes(d);
      if (expected_stride > (__int128{1} << 64)) expected_stride = __int128{1} << 64;
    }
  }
  FUZZ_CHECK(numel <= INT64_MAX, what());
  if (numel > 0) {
    // Every element addressed lies inside the storage: the validator's promise.
    FUZZ_CHECK((last + 1) * itemsize <= info.storage_nbytes(), what());
    FUZZ_CHECK(info.data_ptr() == 0 || info.storage_data_ptr() == 0 ||
                   info.data_ptr() == info.storage_data_ptr() +
                                          static_cast<uint64_t>(info.storage_offset() * itemsize),
               what());
  }
  // PyTorch's is_contiguous(): size-1 dims ignored; empty tensors are contiguous.
  if (numel == 0) contiguous = true;
  FUZZ_CHECK(info.is_contiguous() == contiguous, what());
}

absl::StatusOr<std::string> DownloadBytes(const std::string& session, uint64_t id) {
  v1::DownloadRequest request;
  request.set_session_id(session);
  request.set_id(id);
  absl::StatusOr<std::unique_ptr<ReadyDownload>> download = StartDownload(Backend(), request);
  if (!download.ok()) return download.status();
  const v1::TensorInfo& header = (*download)->header();
  CheckTensorInfo(header, "download header");
  int64_t numel = 1;
  for (int64_t s : header.sizes()) numel *= s;
  const int64_t total = (*download)->total_bytes();
  FUZZ_CHECK(total == numel * WireItemSize(header.dtype()),
             absl::StrCat("download of ", id, ": ", total, " bytes for ", header.ShortDebugString()));
  std::string bytes;
  bytes.reserve(static_cast<size_t>(total));
  const int64_t chunk = Backend().limits().chunk_bytes;
  for (int64_t at = 0; at < total; at += chunk) {
    const absl::string_view piece = (*download)->Bytes(at, std::min(chunk, total - at));
    bytes.append(piece.data(), piece.size());
  }
  return bytes;
}

}  // namespace tensord::fuzz
