#include "tensord/client.h"

#include <atomic>
#include <cstdlib>
#include <functional>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/functional/function_ref.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/client_context.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/channel_arguments.h"
#include "absl/container/flat_hash_set.h"
#include "engine/core/device.h"
#include "engine/ops/op_registry.h"
#include "engine/ops/plan_on_metadata.h"
#include "tensord/v1/tensord.grpc.pb.h"
#include "tensord/wire.h"
#include "tensord/wire_attr.h"

#define TENSORD_CLIENT_RETURN_IF_ERROR(expr)      \
  do {                                            \
    absl::Status status_ = (expr);                \
    if (!status_.ok()) return status_;            \
  } while (false)

namespace tensord::client {

namespace {

constexpr const char* kNames[] = {"bool",    "uint8",    "int8",    "int16",   "int32",
                                  "int64",   "float16",  "bfloat16", "float32", "float64"};
constexpr int64_t kSizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
// Ops that return a list reserve this many ids (the server's max_view_outputs).
constexpr uint64_t kMultiOutputIds = uint64_t{1} << 16;

v1::DType ToProto(DType d) { return static_cast<v1::DType>(static_cast<int>(d) + 1); }
DType FromProto(v1::DType d) { return static_cast<DType>(static_cast<int>(d) - 1); }

absl::Status FromGrpc(const grpc::Status& s, const grpc::ClientContext* ctx = nullptr) {
  if (s.ok()) return absl::OkStatus();
  absl::Status status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  if (ctx != nullptr) {
    const auto& trailers = ctx->GetServerTrailingMetadata();
    auto it = trailers.find("tensord-error-kind");
    if (it != trailers.end()) {
      status.SetPayload(kErrorKindUrl, absl::Cord(std::string(it->second.data(),
                                                              it->second.size())));
    }
  }
  return status;
}

absl::Status FromProtoError(const v1::Error& e) {
  absl::Status status(static_cast<absl::StatusCode>(e.code()), e.message());
  if (!e.kind().empty()) status.SetPayload(kErrorKindUrl, absl::Cord(e.kind()));
  return status;
}

TensorInfo InfoFromProto(const v1::TensorInfo& p) {
  TensorInfo info;
  info.sizes.assign(p.sizes().begin(), p.sizes().end());
  info.strides.assign(p.strides().begin(), p.strides().end());
  info.storage_offset = p.storage_offset();
  info.dtype = FromProto(p.dtype());
  info.device = p.device();
  info.is_contiguous = p.is_contiguous();
  info.storage_id = p.storage_id();
  info.storage_nbytes = p.storage_nbytes();
  info.data_ptr = p.data_ptr();
  info.storage_data_ptr = p.storage_data_ptr();
  return info;
}

// One call of a bulk-data method: raw ByteBuffers through a GenericStub, so no protobuf copies
// of the bytes on this side. The calling thread drives the call on a completion queue of its
// own: it sends `messages` in order (the last with WritesDone folded in) while it hands each
// received message to `on_read` (which returns false to cancel the call), then takes the status.
// No other thread is woken per chunk: on small machines the callback API's thread hops cost
// more than the bytes of a small transfer.
class RawCall {
 public:
  static grpc::Status Run(grpc::GenericStub& stub, grpc::ClientContext* ctx,
                          const std::string& method, const std::vector<grpc::ByteBuffer>& messages,
                          const std::function<bool(const grpc::ByteBuffer&)>& on_read) {
    grpc::CompletionQueue cq;
    // Corked: the initial metadata goes out with the first message.
    ctx->set_initial_metadata_corked(true);
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call = stub.PrepareCall(ctx, method, &cq);
    void* const kWrite = reinterpret_cast<void*>(1);
    void* const kRead = reinterpret_cast<void*>(2);
    void* const kFinish = reinterpret_cast<void*>(3);
    // With corked metadata StartCall completes nothing (no tag comes back for it).
    call->StartCall(nullptr);
    size_t next = 0;
    bool writing = false, stopped = false;
    grpc::ByteBuffer in;
    auto write_next = [&] {
      if (next == messages.size()) return;
      const grpc::ByteBuffer& message = messages[next++];
      if (next == messages.size()) {
        call->WriteLast(message, grpc::WriteOptions(), kWrite);
      } else {
        call->Write(message, kWrite);
      }
      writing = true;
    };
    write_next();
    call->Read(&in, kRead);
    bool reading = true;
    void* tag;
    bool ok;
    while ((writing || reading) && cq.Next(&tag, &ok)) {
      if (tag == kWrite) {
        writing = false;
        if (ok) write_next();  // a failed write ends the call; its status says why
      } else if (tag == kRead) {
        reading = false;
        if (!ok) continue;  // the server has finished
        if (!stopped && !on_read(in)) {
          stopped = true;
          ctx->TryCancel();
        }
        call->Read(&in, kRead);
        reading = true;
      }
    }
    grpc::Status status;
    call->Finish(&status, kFinish);
    while (cq.Next(&tag, &ok) && tag != kFinish) {
    }
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    return status;
  }
};

constexpr char kUploadMethod[] = "/tensord.v1.Tensord/Upload";
constexpr char kDownloadMethod[] = "/tensord.v1.Tensord/Download";

// A third of the lease, so that two renewals in a row may fail before it runs out; once a
// minute from a server that does not say how long its leases last.
absl::Duration RenewInterval(int64_t ttl_seconds) {
  return ttl_seconds > 0 ? absl::Seconds(ttl_seconds) / 3 : absl::Seconds(60);
}

// Renews a session's lease from a thread of its own while the session is open, so a program
// that pauses longer than the server's session TTL keeps its tensors. It owns what it needs
// rather than a reference to the SessionState, which must still go with the last handle (and
// stops it then). Failures are quiet: the next tick tries again; NOT_FOUND (the session is
// closed or expired) ends it.
class LeaseRenewer {
 public:
  LeaseRenewer(const std::shared_ptr<grpc::Channel>& channel, std::string session_id,
               std::string route, std::string auth_token, absl::Duration interval)
      : stub_(v1::Tensord::NewStub(channel)),
        session_id_(std::move(session_id)),
        route_(std::move(route)),
        auth_token_(std::move(auth_token)),
        thread_([this, interval] { Run(interval); }) {}
  ~LeaseRenewer() { Stop(); }

  // Returns once the thread has ended: no renewal is sent after it.
  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      if (in_flight_ != nullptr) in_flight_->TryCancel();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run(absl::Duration interval) {
    absl::MutexLock lock(&mu_);
    while (!mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval)) {
      grpc::ClientContext ctx;
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + interval));
      if (!auth_token_.empty()) ctx.AddMetadata("authorization", "Bearer " + auth_token_);
      if (!route_.empty()) ctx.AddMetadata("tensord-route", route_);
      v1::RenewLeaseRequest request;
      request.set_session_id(session_id_);
      v1::RenewLeaseResponse response;
      in_flight_ = &ctx;
      mu_.Unlock();
      const grpc::Status status = stub_->RenewLease(&ctx, request, &response);
      mu_.Lock();
      in_flight_ = nullptr;
      if (status.error_code() == grpc::StatusCode::NOT_FOUND) return;
      if (status.ok()) interval = RenewInterval(response.ttl_seconds());
    }
  }

  const std::unique_ptr<v1::Tensord::Stub> stub_;
  const std::string session_id_;
  const std::string route_;
  const std::string auth_token_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* in_flight_ ABSL_GUARDED_BY(mu_) = nullptr;  // Stop() cancels it
  std::thread thread_;  // last: it starts once the members it uses are made
};

}  // namespace

std::shared_ptr<grpc::Channel> CreateChannel(
    const std::string& address, const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
  // tensord keeps gRPC's default server ping policy: no pings while no call is open, and pings
  // more often than every 5 minutes with no data between them are abuse (GOAWAY
  // "too_many_pings", which fails the calls in flight). gRPC's default of at most 2 pings
  // without data (GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA) keeps 30 s pings under that limit:
  // leave it as it is.
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
  return grpc::CreateCustomChannel(address, credentials, args);
}

std::string ErrorKind(const absl::Status& status) {
  if (status.ok()) return "";
  if (auto kind = status.GetPayload(kErrorKindUrl)) return std::string(*kind);
  return status.code() == absl::StatusCode::kOutOfRange ? "IndexError" : "RuntimeError";
}

const char* DTypeName(DType dtype) { return kNames[static_cast<int>(dtype)]; }
int64_t ItemSize(DType dtype) { return kSizes[static_cast<int>(dtype)]; }

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

void Scalar::ToProto(v1::AttrValue* value) const {
  if (const bool* b = std::get_if<bool>(&v_)) {
    value->set_b(*b);
  } else if (const int64_t* i = std::get_if<int64_t>(&v_)) {
    value->set_i(*i);
  } else {
    value->set_f(std::get<double>(v_));
  }
}

Attrs& Attrs::Int(const std::string& name, int64_t v) {
  values_[name].set_i(v);
  return *this;
}
Attrs& Attrs::Ints(const std::string& name, const std::vector<int64_t>& v) {
  auto* list = values_[name].mutable_ints()->mutable_values();
  list->Assign(v.begin(), v.end());
  return *this;
}
Attrs& Attrs::Bool(const std::string& name, bool v) {
  values_[name].set_b(v);
  return *this;
}
Attrs& Attrs::Number(const std::string& name, const Scalar& v) {
  v.ToProto(&values_[name]);
  return *this;
}
Attrs& Attrs::IntOrList(const std::string& name, const class IntOrList& v) {
  if (v.is_list()) return Ints(name, v.ints());
  return Int(name, v.ints()[0]);
}

Attrs& Attrs::None(const std::string& name) {
  values_[name].set_none(true);
  return *this;
}

TensorOrScalar::TensorOrScalar(const Tensor& t) : value_(t.state_) {}

void TensorOrScalar::AddTo(const std::string& name, std::vector<Tensor>& inputs,
                           Attrs& attrs) const {
  if (const auto* t = std::get_if<std::shared_ptr<TensorState>>(&value_)) {
    inputs.push_back(Tensor(*t));
  } else {
    attrs.Number(name, std::get<Scalar>(value_));
  }
}

Attrs& Attrs::Dtype(const std::string& name, DType v) {
  values_[name].set_dtype(ToProto(v));
  return *this;
}
Attrs& Attrs::Device(const std::string& name, const std::string& v) {
  values_[name].set_device(v);
  return *this;
}
Attrs& Attrs::Text(const std::string& name, const std::string& v) {
  values_[name].set_text(v);
  return *this;
}
Attrs& Attrs::IndexList(const std::string& name, const std::vector<Index>& items) {
  v1::IndexList* list = values_[name].mutable_index();
  for (const Index& item : items) {
    v1::IndexItem* out = list->add_items();
    if (const int64_t* i = std::get_if<int64_t>(&item)) {
      out->set_integer(*i);
    } else if (const Slice* s = std::get_if<Slice>(&item)) {
      v1::Slice* slice = out->mutable_slice();
      if (s->start) slice->set_start(*s->start);
      if (s->stop) slice->set_stop(*s->stop);
      if (s->step) slice->set_step(*s->step);
    } else if (std::holds_alternative<NoneIndex>(item)) {
      out->set_none(true);
    } else {
      out->set_ellipsis(true);
    }
  }
  return *this;
}

// ---- Shared state -----------------------------------------------------------------------------

// One buffered op: the tensors it makes, and where to put its outputs' metadata when only the
// server's reply says how many there are (a list op the client could not plan).
struct PendingOp {
  // Weak: a tensor dropped before its op is sent goes (its id is released after the batch), and
  // a session whose handles are all gone closes even with ops still buffered.
  std::vector<std::weak_ptr<TensorState>> outputs;
  std::vector<v1::TensorInfo>* capture = nullptr;
  absl::Status* capture_error = nullptr;  // the op's own failure, with `capture`
};

struct SessionState {
  std::unique_ptr<v1::Tensord::Stub> stub;
  std::unique_ptr<grpc::GenericStub> raw;  // Upload and Download, as raw bytes
  std::string id;
  // The id's public part, sent with every call in the `tensord-route` header (for routers).
  std::string route;
  std::string device;
  SessionOptions options;
  bool closed = false;
  std::unique_ptr<LeaseRenewer> lease;  // while open

  // Ops are planned here, with the server's own planners, when the two registries agree.
  bool local_planning = false;
  engine::Device default_device = engine::kCpu;

  absl::Mutex mu;
  uint64_t next_id ABSL_GUARDED_BY(mu) = 1;
  // Storages of ops planned here are named here (the server names the others from 1 up): ids
  // from 2^62, addresses (data_ptr) from 2^48, as the Python client's.
  uint64_t next_local_storage ABSL_GUARDED_BY(mu) = uint64_t{1} << 62;
  uint64_t next_local_address ABSL_GUARDED_BY(mu) = uint64_t{1} << 48;
  v1::RunOpsRequest pending ABSL_GUARDED_BY(mu);
  // The tensors made by each pending op, in order.
  std::vector<PendingOp> pending_outputs ABSL_GUARDED_BY(mu);
  // Ids of dropped tensors, released after the next batch. Its own lock: tensors may be
  // destroyed while `mu` is held (NB: `mu` may be taken before `release_mu`, never after).
  absl::Mutex release_mu ABSL_ACQUIRED_AFTER(mu);
  std::vector<uint64_t> releases ABSL_GUARDED_BY(release_mu);
  Stream current_stream ABSL_GUARDED_BY(mu);
  DType default_dtype ABSL_GUARDED_BY(mu) = DType::kFloat32;
  int64_t ops_sent ABSL_GUARDED_BY(mu) = 0;
  int64_t batches_sent ABSL_GUARDED_BY(mu) = 0;

  ~SessionState();
  void Context(grpc::ClientContext* ctx) const {
    if (!options.auth_token.empty()) {
      ctx->AddMetadata("authorization", "Bearer " + options.auth_token);
    }
    if (!route.empty()) ctx->AddMetadata("tensord-route", route);
  }
  // Sends the buffered ops. An op the server refuses (a limit) fails its outputs and the ops
  // after it that read them; the batch's other ops are sent again. Returns the first failure.
  absl::Status FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Plans `op` here. std::nullopt: the server must plan it (no local planning, or outputs that
  // depend on data). Inputs whose metadata only the server knows yet are sent first.
  absl::StatusOr<std::optional<std::vector<TensorInfo>>> PlanLocked(
      const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // call(ctx) with a context of this session; when the connection is lost (UNAVAILABLE), again
  // with a fresh one that waits for the connection to come back, for up to
  // options.reconnect_timeout. Every call made through it may be repeated: reads, writes of
  // the same bytes, numbered batches (the server answers a resent one, not running it twice).
  absl::Status WithReconnect(absl::FunctionRef<absl::Status(grpc::ClientContext*)> call) const {
    grpc::ClientContext first;
    Context(&first);
    absl::Status status = call(&first);
    if (!absl::IsUnavailable(status) || options.reconnect_timeout <= absl::ZeroDuration()) {
      return status;
    }
    const absl::Status lost = status;
    const absl::Time deadline = absl::Now() + options.reconnect_timeout;
    while (absl::Now() < deadline) {
      grpc::ClientContext retry;
      Context(&retry);
      retry.set_wait_for_ready(true);
      retry.set_deadline(absl::ToChronoTime(deadline));
      status = call(&retry);
      if (absl::IsDeadlineExceeded(status)) return lost;
      if (!absl::IsUnavailable(status)) return status;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return lost;
  }
  // One unary call of this session (its id and token set), with the error kind of a failure:
  // the one way every session RPC but RunOps and the byte streams is made.
  template <typename Request, typename Response>
  absl::StatusOr<Response> Rpc(
      grpc::Status (v1::Tensord::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
      Request request) const {
    request.set_session_id(id);
    Response response;
    absl::Status status = WithReconnect([&](grpc::ClientContext* ctx) {
      return FromGrpc((stub.get()->*method)(ctx, request, &response), ctx);
    });
    if (!status.ok()) return status;
    return response;
  }
  // Queues `call` (its inputs, stream and attributes set) with `outputs`.
  void QueueLocked(v1::OpCall call, PendingOp outputs) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void ReleaseLater(uint64_t id);
};

struct TensorState {
  std::shared_ptr<SessionState> session;
  uint64_t id = 0;
  // Guarded by session->mu.
  bool known = false;
  TensorInfo info;
  absl::Status error;

  ~TensorState() {
    if (session && id != 0) session->ReleaseLater(id);
  }
};

SessionState::~SessionState() {
  if (lease) lease->Stop();  // first: no renewal may reach the server after the close
  if (closed || !stub) return;
  (void)Rpc(&v1::Tensord::Stub::CloseSession, v1::CloseSessionRequest());
}

void SessionState::ReleaseLater(uint64_t id) {
  absl::MutexLock lock(&release_mu);
  releases.push_back(id);
}

absl::Status SessionState::FlushLocked() {
  absl::Status first_error;
  for (;;) {
    std::vector<uint64_t> dropped;
    {
      absl::MutexLock lock(&release_mu);
      dropped.swap(releases);
    }
    if (pending.ops_size() == 0 && dropped.empty()) return first_error;
    if (closed) return absl::FailedPreconditionError("the session is closed");
    v1::RunOpsRequest request;
    request.Swap(&pending);
    request.set_session_id(id);
    request.mutable_release_after()->Assign(dropped.begin(), dropped.end());
    std::vector<PendingOp> ops;
    ops.swap(pending_outputs);
    // Outputs planned here need no metadata back.
    bool all_known = true;
    for (const PendingOp& op : ops) {
      if (op.capture != nullptr) all_known = false;
      for (const auto& w : op.outputs) {
        if (auto t = w.lock()) all_known = all_known && t->known;
      }
    }
    request.set_omit_metadata(all_known);
    ops_sent += request.ops_size();
    ++batches_sent;
    request.set_batch_seq(static_cast<uint64_t>(batches_sent));  // 1, 2, …: resends run once

    v1::RunOpsResponse response;
    absl::Status status = WithReconnect([&](grpc::ClientContext* ctx) {
      response.Clear();
      return FromGrpc(stub->RunOps(ctx, request, &response), ctx);
    });
    if (!status.ok()) {
      for (auto& op : ops) {
        for (auto& w : op.outputs) {
          if (auto t = w.lock()) t->error = status;
        }
      }
      return status;
    }
    for (int i = 0; i < response.results_size() && i < static_cast<int>(ops.size()); ++i) {
      const v1::OpResult& result = response.results(i);
      if (ops[i].capture != nullptr) {
        ops[i].capture->assign(result.outputs().begin(), result.outputs().end());
      }
      for (const v1::TensorInfo& info : result.outputs()) {
        for (auto& w : ops[i].outputs) {
          auto t = w.lock();
          if (t && t->id == info.id() && !t->known) {  // planned here: the client's stands
            t->info = InfoFromProto(info);
            t->known = true;
          }
        }
      }
    }
    // Tensors dropped meanwhile are released with the next batch.
    if (!response.has_error()) return first_error;
    // The server stops a batch at its first failing op: that op and the later ones that read
    // its outputs fail; the others are sent again, so no error lands on an op that does not
    // depend on it.
    const int failed = std::max(response.error().op_index(), 0);
    const absl::Status error = FromProtoError(response.error());
    if (first_error.ok()) first_error = error;
    absl::flat_hash_set<uint64_t> failed_ids;
    v1::RunOpsRequest retry;
    std::vector<PendingOp> retry_ops;
    for (int i = failed; i < request.ops_size() && i < static_cast<int>(ops.size()); ++i) {
      bool depends = i == failed;
      for (uint64_t input : request.ops(i).inputs()) depends = depends || failed_ids.count(input);
      if (!depends) {
        *retry.add_ops() = request.ops(i);
        retry_ops.push_back(std::move(ops[i]));
        continue;
      }
      for (uint64_t id : request.ops(i).outputs()) failed_ids.insert(id);
      if (request.ops(i).output_id_start() != 0) {
        // A list op's outputs: its reserved range.
        for (uint64_t k = 0; k < kMultiOutputIds; ++k) {
          failed_ids.insert(request.ops(i).output_id_start() + k);
        }
      }
      for (auto& w : ops[i].outputs) {
        if (auto t = w.lock()) {
          t->error = error;
          t->id = 0;  // never registered: nothing to release
        }
      }
      if (ops[i].capture != nullptr) ops[i].capture->clear();
      if (ops[i].capture_error != nullptr) *ops[i].capture_error = error;
    }
    // In front of whatever was buffered meanwhile (nothing: the lock is held), in order.
    for (v1::OpCall& call : *pending.mutable_ops()) *retry.add_ops() = std::move(call);
    for (PendingOp& op : pending_outputs) retry_ops.push_back(std::move(op));
    pending.Swap(&retry);
    pending_outputs.swap(retry_ops);
    if (pending.ops_size() == 0) return first_error;
  }
}

absl::StatusOr<std::optional<std::vector<TensorInfo>>> SessionState::PlanLocked(
    const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  if (!local_planning) return std::nullopt;
  bool unknown = false;
  for (const Tensor& t : inputs) unknown = unknown || !t.state_->known;
  if (unknown) (void)FlushLocked();  // made by an op only the server could plan
  std::vector<engine::MetaInput> metas;
  metas.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    if (!t.state_->error.ok()) return t.state_->error;
    if (!t.state_->known) return std::nullopt;
    const TensorInfo& i = t.state_->info;
    absl::StatusOr<engine::DType> dtype = engine::DTypeFromWire(ToProto(i.dtype), op);
    absl::StatusOr<engine::Device> device = engine::ParseDevice(i.device);
    if (!dtype.ok() || !device.ok()) return std::nullopt;  // the server judges it
    metas.push_back(engine::MetaInput{
        *dtype, *device, engine::DimVector(i.sizes.begin(), i.sizes.end()),
        engine::DimVector(i.strides.begin(), i.strides.end()), i.storage_offset,
        static_cast<int64_t>(i.storage_id), i.storage_nbytes});
  }
  std::vector<std::pair<std::string, engine::WireAttr>> wire;
  wire.reserve(attrs.values().size());
  for (const auto& [name, value] : attrs.values()) {
    wire.emplace_back(name, wire::WireAttrFromProto(value));
  }
  const engine::DefaultFloatDTypeScope default_dtype_scope(
      static_cast<engine::DType>(static_cast<int>(default_dtype)));
  absl::StatusOr<std::optional<std::vector<engine::MetaOutput>>> planned =
      engine::PlanOnMetadata(op, metas, wire, default_device);
  if (!planned.ok()) return planned.status();
  if (!planned->has_value()) return std::nullopt;
  std::vector<TensorInfo> infos;
  for (const engine::MetaOutput& o : **planned) {
    TensorInfo info;
    info.sizes.assign(o.sizes.begin(), o.sizes.end());
    info.strides.assign(o.strides.begin(), o.strides.end());
    info.storage_offset = o.storage_offset;
    info.dtype = FromProto(static_cast<v1::DType>(static_cast<int>(o.dtype) + 1));
    info.device = o.device.ToString();
    info.is_contiguous = o.is_contiguous;
    info.storage_nbytes = o.storage_nbytes;
    if (o.alias >= 0) {
      const TensorInfo& base = inputs[o.alias].state_->info;
      info.storage_id = base.storage_id;
      info.storage_data_ptr = base.storage_data_ptr;
    } else {
      info.storage_id = next_local_storage++;
      // Room for the bytes, 64-byte aligned, and a gap: no two storages touch (torch: an
      // empty storage is at 0).
      info.storage_data_ptr = o.storage_nbytes > 0 ? next_local_address : 0;
      next_local_address += (static_cast<uint64_t>(o.storage_nbytes) + 63) / 64 * 64 + 64;
    }
    info.data_ptr = info.storage_data_ptr + info.storage_offset * ItemSize(info.dtype);
    infos.push_back(std::move(info));
  }
  return infos;
}

void SessionState::QueueLocked(v1::OpCall call, PendingOp outputs) {
  *pending.add_ops() = std::move(call);
  pending_outputs.push_back(std::move(outputs));
  if (static_cast<size_t>(pending.ops_size()) >= options.max_buffered_ops) {
    (void)FlushLocked();  // errors stay with the tensors they concern
  }
}

// ---- Session ----------------------------------------------------------------------------------

absl::StatusOr<Session> Session::Open(std::shared_ptr<grpc::Channel> channel,
                                      const SessionOptions& options) {
  auto state = std::make_shared<SessionState>();
  state->stub = v1::Tensord::NewStub(channel);
  state->raw = std::make_unique<grpc::GenericStub>(channel);
  state->options = options;
  grpc::ClientContext ctx;
  state->Context(&ctx);
  v1::OpenSessionRequest request;
  request.set_device(options.device);
  request.set_client_name("tensord C++ client");
  request.set_client_version(TENSORD_VERSION);
  v1::OpenSessionResponse response;
  absl::Status status = FromGrpc(state->stub->OpenSession(&ctx, request, &response));
  if (!status.ok()) {
    state->closed = true;
    return status;
  }
  state->id = response.session_id();
  state->route = response.route();
  state->device = response.device();
  // Plan here when this client's op registry is the server's (TENSORD_LOCAL_PLANNING=0: never).
  const char* local = std::getenv("TENSORD_LOCAL_PLANNING");
  state->local_planning = (local == nullptr || std::string(local) != "0") &&
                          response.op_registry_fingerprint() == engine::RegistryFingerprint();
  if (absl::StatusOr<engine::Device> d = engine::ParseDevice(state->device); d.ok()) {
    state->default_device = *d;
  }
  state->lease = std::make_unique<LeaseRenewer>(channel, state->id, state->route,
                                                options.auth_token,
                                                RenewInterval(response.ttl_seconds()));
  return Session(std::move(state));
}

const std::string& Session::id() const { return state_->id; }
const std::string& Session::device() const { return state_->device; }

namespace {

// The op's call with its inputs, stream, default dtype and attributes.
v1::OpCall MakeCall(const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
                    uint64_t stream, DType default_dtype,
                    const std::function<uint64_t(const Tensor&)>& id_of) {
  v1::OpCall call;
  call.set_op(op);
  for (const Tensor& input : inputs) call.add_inputs(id_of(input));
  call.set_stream(stream);
  if (default_dtype != DType::kFloat32) call.set_default_dtype(ToProto(default_dtype));
  for (const auto& [name, value] : attrs.values()) (*call.mutable_attrs())[name] = value;
  return call;
}

// An op on an undefined or failed tensor fails the same way, without a trip to the server.
absl::Status InputsUsable(const std::string& op, const std::vector<Tensor>& inputs,
                          const std::function<absl::Status(const Tensor&)>& error_of) {
  for (const Tensor& input : inputs) {
    if (!input.defined()) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": an input tensor is undefined"));
    }
    absl::Status error = error_of(input);
    if (!error.ok()) return error;
  }
  return absl::OkStatus();
}

}  // namespace

Tensor Session::Call(const std::string& op, const std::vector<Tensor>& inputs,
                     const Attrs& attrs) {
  SessionState& s = *state_;
  auto out = std::make_shared<TensorState>();
  out->session = state_;
  absl::MutexLock lock(&s.mu);
  out->error = InputsUsable(op, inputs, [](const Tensor& t) { return t.state_->error; });
  if (!out->error.ok()) return Tensor(out);
  absl::StatusOr<std::optional<std::vector<TensorInfo>>> planned = s.PlanLocked(op, inputs, attrs);
  if (!planned.ok()) {  // the op's own error, here, at its call: nothing is sent
    out->error = planned.status();
    return Tensor(out);
  }
  if (planned->has_value()) {
    if ((*planned)->size() != 1) {
      out->error = absl::InvalidArgumentError(absl::StrCat(
          op, " makes ", (*planned)->size(), " tensors: call it with Session::CallMulti"));
      return Tensor(out);
    }
    out->info = std::move((**planned)[0]);
    out->known = true;
  }
  out->id = s.next_id++;
  v1::OpCall call = MakeCall(op, inputs, attrs, s.current_stream.id, s.default_dtype,
                             [](const Tensor& t) { return t.state_->id; });
  call.add_outputs(out->id);
  s.QueueLocked(std::move(call), PendingOp{{out}});
  return Tensor(out);
}

absl::Status Session::CallNoOutput(const std::string& op, const std::vector<Tensor>& inputs,
                                   const Attrs& attrs) {
  SessionState& s = *state_;
  absl::MutexLock lock(&s.mu);
  TENSORD_CLIENT_RETURN_IF_ERROR(
      InputsUsable(op, inputs, [](const Tensor& t) { return t.state_->error; }));
  absl::StatusOr<std::optional<std::vector<TensorInfo>>> planned = s.PlanLocked(op, inputs, attrs);
  if (!planned.ok()) return planned.status();  // refused here, as torch raises: nothing sent
  s.QueueLocked(MakeCall(op, inputs, attrs, s.current_stream.id, s.default_dtype,
                         [](const Tensor& t) { return t.state_->id; }),
                PendingOp{});
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Session::CallMulti(const std::string& op,
                                                       const std::vector<Tensor>& inputs,
                                                       const Attrs& attrs) {
  SessionState& s = *state_;
  absl::MutexLock lock(&s.mu);
  TENSORD_CLIENT_RETURN_IF_ERROR(
      InputsUsable(op, inputs, [](const Tensor& t) { return t.state_->error; }));
  absl::StatusOr<std::optional<std::vector<TensorInfo>>> planned = s.PlanLocked(op, inputs, attrs);
  if (!planned.ok()) return planned.status();
  v1::OpCall call = MakeCall(op, inputs, attrs, s.current_stream.id, s.default_dtype,
                             [](const Tensor& t) { return t.state_->id; });
  std::vector<Tensor> result;
  if (planned->has_value()) {  // as many tensors as planned: queued like any op
    PendingOp outputs;
    for (TensorInfo& info : **planned) {
      auto t = std::make_shared<TensorState>();
      t->session = state_;
      t->id = s.next_id++;
      t->info = std::move(info);
      t->known = true;
      call.add_outputs(t->id);
      outputs.outputs.push_back(t);
      result.push_back(Tensor(std::move(t)));
    }
    s.QueueLocked(std::move(call), std::move(outputs));
    return result;
  }
  // Only the server's reply says how many: ids from a reserved range, sent now.
  const uint64_t start = s.next_id;
  s.next_id += kMultiOutputIds;
  call.set_output_id_start(start);
  std::vector<v1::TensorInfo> infos;
  absl::Status op_error;
  {
    PendingOp capture;
    capture.capture = &infos;
    capture.capture_error = &op_error;
    s.QueueLocked(std::move(call), std::move(capture));
  }
  absl::Status flushed = s.FlushLocked();
  if (!op_error.ok()) return op_error;
  if (infos.empty() && !flushed.ok()) return flushed;
  for (const v1::TensorInfo& info : infos) {
    auto t = std::make_shared<TensorState>();
    t->session = state_;
    t->id = info.id();
    t->info = InfoFromProto(info);
    t->known = true;
    result.push_back(Tensor(std::move(t)));
  }
  return result;
}

absl::Status Session::Flush() {
  absl::MutexLock lock(&state_->mu);
  return state_->FlushLocked();
}

absl::Status Session::Synchronize() {
  absl::MutexLock lock(&state_->mu);
  absl::Status flushed = state_->FlushLocked();
  absl::Status synced =
      state_->Rpc(&v1::Tensord::Stub::Synchronize, v1::SynchronizeRequest()).status();
  return flushed.ok() ? synced : flushed;
}

absl::Status Session::Synchronize(Stream stream) {
  absl::MutexLock lock(&state_->mu);
  absl::Status flushed = state_->FlushLocked();
  v1::SynchronizeRequest request;
  request.set_stream(stream.id);
  absl::Status synced = state_->Rpc(&v1::Tensord::Stub::Synchronize, request).status();
  return flushed.ok() ? synced : flushed;
}

namespace {

absl::StatusOr<int64_t> CancelOps(SessionState& state, const v1::CancelRequest& request) {
  // Once for what the server has, without the session's lock (a thread waiting in Synchronize
  // holds it, and this ends its wait); then the buffered ops are sent and dropped too.
  absl::StatusOr<v1::CancelResponse> first = state.Rpc(&v1::Tensord::Stub::Cancel, request);
  if (!first.ok()) return first.status();
  absl::MutexLock lock(&state.mu);
  if (state.pending.ops_size() == 0) return first->cancelled_ops();
  (void)state.FlushLocked();  // its errors are those of ops being dropped
  absl::StatusOr<v1::CancelResponse> second = state.Rpc(&v1::Tensord::Stub::Cancel, request);
  if (!second.ok()) return second.status();
  return first->cancelled_ops() + second->cancelled_ops();
}

}  // namespace

absl::StatusOr<int64_t> Session::Cancel() { return CancelOps(*state_, v1::CancelRequest()); }

absl::StatusOr<int64_t> Session::Cancel(Stream stream) {
  v1::CancelRequest request;
  request.set_stream(stream.id);
  return CancelOps(*state_, request);
}

absl::StatusOr<Stream> Session::CreateStream() {
  absl::StatusOr<v1::CreateStreamResponse> response =
      state_->Rpc(&v1::Tensord::Stub::CreateStream, v1::CreateStreamRequest());
  if (!response.ok()) return response.status();
  return Stream{response->stream()};
}

absl::Status Session::SetDefaultDType(DType dtype) {
  if (dtype != DType::kFloat16 && dtype != DType::kBFloat16 && dtype != DType::kFloat32 &&
      dtype != DType::kFloat64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "set_default_dtype: only floating-point types are supported as the default type, got ",
        DTypeName(dtype)));
  }
  absl::MutexLock lock(&state_->mu);
  state_->default_dtype = dtype;
  return absl::OkStatus();
}

DType Session::default_dtype() const {
  absl::MutexLock lock(&state_->mu);
  return state_->default_dtype;
}

void Session::SetCurrentStream(Stream stream) {
  absl::MutexLock lock(&state_->mu);
  state_->current_stream = stream;
}

Stream Session::current_stream() const {
  absl::MutexLock lock(&state_->mu);
  return state_->current_stream;
}

absl::Status Session::RecordEvent(uint64_t event, Stream stream) {
  absl::MutexLock lock(&state_->mu);
  TENSORD_CLIENT_RETURN_IF_ERROR(state_->FlushLocked());
  v1::RecordEventRequest request;
  request.set_event(event);
  request.set_stream(stream.id);
  return state_->Rpc(&v1::Tensord::Stub::RecordEvent, request).status();
}

absl::Status Session::WaitEvent(uint64_t event, Stream stream) {
  absl::MutexLock lock(&state_->mu);
  TENSORD_CLIENT_RETURN_IF_ERROR(state_->FlushLocked());
  v1::WaitEventRequest request;
  request.set_event(event);
  request.set_stream(stream.id);
  return state_->Rpc(&v1::Tensord::Stub::WaitEvent, request).status();
}

absl::StatusOr<bool> Session::QueryEvent(uint64_t event) {
  absl::MutexLock lock(&state_->mu);
  TENSORD_CLIENT_RETURN_IF_ERROR(state_->FlushLocked());
  v1::QueryEventRequest request;
  request.set_event(event);
  absl::StatusOr<v1::QueryEventResponse> response =
      state_->Rpc(&v1::Tensord::Stub::QueryEvent, request);
  if (!response.ok()) return response.status();
  return response->completed();
}

absl::Status Session::StartProfile(bool record_shapes) {
  absl::MutexLock lock(&state_->mu);
  TENSORD_CLIENT_RETURN_IF_ERROR(state_->FlushLocked());
  v1::ProfileRequest request;
  request.set_enable(true);
  request.set_record_shapes(record_shapes);
  return state_->Rpc(&v1::Tensord::Stub::Profile, request).status();
}

absl::StatusOr<v1::ProfileResponse> Session::StopProfile() {
  absl::MutexLock lock(&state_->mu);
  TENSORD_CLIENT_RETURN_IF_ERROR(state_->FlushLocked());
  v1::ProfileRequest request;
  request.set_enable(false);
  return state_->Rpc(&v1::Tensord::Stub::Profile, request);
}

int64_t Session::ops_sent() const {
  absl::MutexLock lock(&state_->mu);
  return state_->ops_sent;
}

int64_t Session::batches_sent() const {
  absl::MutexLock lock(&state_->mu);
  return state_->batches_sent;
}

absl::Status Session::Close() {
  absl::MutexLock lock(&state_->mu);
  if (state_->closed) return absl::OkStatus();
  (void)state_->FlushLocked();
  state_->lease->Stop();  // no renewal may reach the server after the close
  state_->closed = true;
  return state_->Rpc(&v1::Tensord::Stub::CloseSession, v1::CloseSessionRequest()).status();
}

Tensor Session::arange(const Scalar& end, std::optional<DType> dtype) {
  return arange(Scalar(int64_t{0}), end, Scalar(int64_t{1}), dtype);
}

Tensor Session::arange(const Scalar& start, const Scalar& end, const Scalar& step,
                       std::optional<DType> dtype) {
  Attrs a;
  a.Number("start", start).Number("end", end).Number("step", step);
  if (dtype) a.Dtype("dtype", *dtype);
  return Call("arange", {}, a);
}

namespace {
Attrs SizeAndDType(const std::vector<int64_t>& size, std::optional<DType> dtype) {
  Attrs a;
  a.Ints("size", size);
  if (dtype) a.Dtype("dtype", *dtype);
  return a;
}
}  // namespace

Tensor Session::zeros(const std::vector<int64_t>& size, std::optional<DType> dtype) {
  return Call("zeros", {}, SizeAndDType(size, dtype));
}
Tensor Session::ones(const std::vector<int64_t>& size, std::optional<DType> dtype) {
  return Call("ones", {}, SizeAndDType(size, dtype));
}
Tensor Session::empty(const std::vector<int64_t>& size, std::optional<DType> dtype) {
  return Call("empty", {}, SizeAndDType(size, dtype));
}
Tensor Session::full(const std::vector<int64_t>& size, const Scalar& value,
                     std::optional<DType> dtype) {
  Attrs a;
  a.Ints("size", size).Number("fill_value", value);
  if (dtype) a.Dtype("dtype", *dtype);
  return Call("full", {}, a);
}
Tensor Session::empty_strided(const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                              std::optional<DType> dtype) {
  return Call("empty_strided", {}, SizeAndDType(size, dtype).Ints("stride", stride));
}

absl::StatusOr<Tensor> Session::from_bytes(const std::vector<int64_t>& sizes, DType dtype,
                                           const std::string& bytes) {
  return from_bytes(sizes, dtype, bytes.data(), static_cast<int64_t>(bytes.size()));
}

absl::StatusOr<Tensor> Session::from_bytes(const std::vector<int64_t>& sizes, DType dtype,
                                           const void* data, int64_t nbytes) {
  SessionState& s = *state_;
  v1::UploadRequest message;
  v1::UploadHeader* header = message.mutable_header();
  header->set_session_id(s.id);
  header->mutable_sizes()->Assign(sizes.begin(), sizes.end());
  header->set_dtype(ToProto(dtype));
  {
    absl::MutexLock lock(&s.mu);
    header->set_id(s.next_id++);
    // Dropped handles go first, so their memory can serve this upload. (Ops still buffered
    // may use those ids: they are released only when nothing is buffered.)
    if (s.pending.ops_size() == 0) {
      absl::MutexLock release_lock(&s.release_mu);
      header->mutable_release_before()->Assign(s.releases.begin(), s.releases.end());
      s.releases.clear();
    }
  }
  const uint64_t id = header->id();
  // The chunks are sent from the caller's memory, which outlives the call.
  constexpr int64_t kChunk = 1 << 20;
  const char* bytes = static_cast<const char*>(data);
  v1::UploadResponse response;
  bool parsed = false;
  int attempts = 0;
  // Sent again, whole, when the connection drops (SessionState::WithReconnect). An id the
  // server already has on a later attempt is this upload's: it arrived, and only the reply was
  // lost (ids are this client's own and never reused). The releases go with every attempt: an
  // earlier one may never have arrived, and releasing an id twice is harmless.
  absl::Status status = s.WithReconnect([&](grpc::ClientContext* ctx) {
    ++attempts;
    std::vector<grpc::ByteBuffer> messages;
    messages.reserve(static_cast<size_t>(1 + (nbytes + kChunk - 1) / kChunk));
    messages.push_back(wire::Serialize(message));
    for (int64_t at = 0; at < nbytes; at += kChunk) {
      messages.push_back(
          wire::DataRecord(bytes + at, static_cast<size_t>(std::min(kChunk, nbytes - at))));
    }
    int replies = 0;
    parsed = false;
    return FromGrpc(RawCall::Run(*s.raw, ctx, kUploadMethod, std::move(messages),
                                 [&](const grpc::ByteBuffer& reply) {
                                   parsed = ++replies == 1 && wire::Reader(reply).Parse(&response);
                                   return true;
                                 }),
                    ctx);
  });
  if (absl::IsAlreadyExists(status) && attempts > 1) {
    v1::DescribeRequest describe;
    describe.add_ids(id);
    absl::StatusOr<v1::DescribeResponse> described = s.Rpc(&v1::Tensord::Stub::Describe, describe);
    if (!described.ok()) return described.status();
    if (described->tensors_size() != 1) return absl::DataLossError("upload: malformed reply");
    *response.mutable_tensor() = described->tensors(0);
    status = absl::OkStatus();
    parsed = true;
  }
  if (!status.ok()) return status;
  if (!parsed) return absl::DataLossError("upload: malformed reply");
  auto state = std::make_shared<TensorState>();
  state->session = state_;
  state->id = id;
  state->info = InfoFromProto(response.tensor());
  state->known = true;
  return Tensor(std::move(state));
}

// ---- Tensor -----------------------------------------------------------------------------------

uint64_t Tensor::id() const { return state_ ? state_->id : 0; }

Session Tensor::session() const { return Session(state_->session); }

TypedStorage Tensor::storage() const { return TypedStorage(*this); }

absl::StatusOr<TensorInfo> Tensor::info() const {
  if (!state_) return absl::FailedPreconditionError("undefined tensor");
  SessionState& s = *state_->session;
  absl::MutexLock lock(&s.mu);
  if (!state_->known && state_->error.ok()) (void)s.FlushLocked();
  if (!state_->error.ok()) return state_->error;
  if (!state_->known) return absl::InternalError("no metadata for tensor");
  return state_->info;
}

absl::Status Tensor::status() const {
  if (!state_) return absl::FailedPreconditionError("undefined tensor");
  SessionState& s = *state_->session;
  absl::MutexLock lock(&s.mu);
  // An error found here (at the call) is known; one only the server finds (a limit) is known once
  // the op is sent.
  if (state_->error.ok()) (void)s.FlushLocked();
  return state_->error;
}

absl::StatusOr<std::vector<int64_t>> Tensor::sizes() const {
  absl::StatusOr<TensorInfo> i = info();
  if (!i.ok()) return i.status();
  return i->sizes;
}
absl::StatusOr<std::vector<int64_t>> Tensor::stride() const {
  absl::StatusOr<TensorInfo> i = info();
  if (!i.ok()) return i.status();
  return i->strides;
}
absl::StatusOr<int64_t> Tensor::size(int64_t dim) const {
  absl::StatusOr<TensorInfo> i = info();
  if (!i.ok()) return i.status();
  const int64_t n = static_cast<int64_t>(i->sizes.size());
  if (dim < -n || dim >= n) return absl::OutOfRangeError("size: dimension out of range");
  return i->sizes[dim < 0 ? dim + n : dim];
}
absl::StatusOr<int64_t> Tensor::stride(int64_t dim) const {
  absl::StatusOr<TensorInfo> i = info();
  if (!i.ok()) return i.status();
  const int64_t n = static_cast<int64_t>(i->strides.size());
  if (dim < -n || dim >= n) return absl::OutOfRangeError("stride: dimension out of range");
  return i->strides[dim < 0 ? dim + n : dim];
}
absl::StatusOr<int64_t> Tensor::dim() const {
  absl::StatusOr<TensorInfo> i = info();
  if (!i.ok()) return i.status();
  return static_cast<int64_t>(i->sizes.size());
}
absl::StatusOr<int64_t> Tensor::numel() const {
  absl::StatusOr<TensorInfo> i = info();
  if (!i.ok()) return i.status();
  return i->numel();
}
absl::StatusOr<int64_t> Tensor::storage_offset() const {
  absl::StatusOr<TensorInfo> i = info();
  if (!i.ok()) return i.status();
  return i->storage_offset;
}
absl::StatusOr<bool> Tensor::is_contiguous() const {
  absl::StatusOr<TensorInfo> i = info();
  if (!i.ok()) return i.status();
  return i->is_contiguous;
}
absl::StatusOr<DType> Tensor::dtype() const {
  absl::StatusOr<TensorInfo> i = info();
  if (!i.ok()) return i.status();
  return i->dtype;
}
absl::StatusOr<uint64_t> Tensor::data_ptr() const {
  absl::StatusOr<TensorInfo> i = info();
  if (!i.ok()) return i.status();
  return i->data_ptr;
}

Tensor Tensor::Op(const std::string& name, std::vector<Tensor> others, Attrs attrs) const {
  if (!state_) return Tensor();
  std::vector<Tensor> inputs = {*this};
  inputs.insert(inputs.end(), others.begin(), others.end());
  return Session(state_->session).Call(name, inputs, attrs);
}

absl::StatusOr<std::vector<Tensor>> Tensor::MultiOp(const std::string& name, Attrs attrs) const {
  if (!state_) return absl::FailedPreconditionError("undefined tensor");
  return Session(state_->session).CallMulti(name, {*this}, attrs);
}

Tensor Tensor::view(const std::vector<int64_t>& shape) const {
  return Op("view", {}, Attrs().Ints("shape", shape));
}
Tensor Tensor::view_as(const Tensor& other) const { return Op("view_as", {other}, {}); }
Tensor Tensor::reshape(const std::vector<int64_t>& shape) const {
  return Op("reshape", {}, Attrs().Ints("shape", shape));
}
Tensor Tensor::reshape_as(const Tensor& other) const { return Op("reshape_as", {other}, {}); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  return Op("flatten", {}, Attrs().Int("start_dim", start_dim).Int("end_dim", end_dim));
}
Tensor Tensor::unflatten(int64_t dim, const std::vector<int64_t>& sizes) const {
  return Op("unflatten", {}, Attrs().Int("dim", dim).Ints("sizes", sizes));
}
Tensor Tensor::as_strided(const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                          std::optional<int64_t> storage_offset) const {
  Attrs a;
  a.Ints("size", size).Ints("stride", stride);
  if (storage_offset) a.Int("storage_offset", *storage_offset);
  return Op("as_strided", {}, a);
}
Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  return Op("transpose", {}, Attrs().Int("dim0", dim0).Int("dim1", dim1));
}
Tensor Tensor::swapaxes(int64_t axis0, int64_t axis1) const {
  return Op("swapaxes", {}, Attrs().Int("axis0", axis0).Int("axis1", axis1));
}
Tensor Tensor::swapdims(int64_t dim0, int64_t dim1) const {
  return Op("swapdims", {}, Attrs().Int("dim0", dim0).Int("dim1", dim1));
}
Tensor Tensor::t() const { return Op("t", {}, {}); }
Tensor Tensor::T() const { return Op("T", {}, {}); }
Tensor Tensor::H() const { return Op("H", {}, {}); }
Tensor Tensor::mT() const { return Op("mT", {}, {}); }
Tensor Tensor::mH() const { return Op("mH", {}, {}); }
Tensor Tensor::adjoint() const { return Op("adjoint", {}, {}); }
Tensor Tensor::permute(const std::vector<int64_t>& dims) const {
  return Op("permute", {}, Attrs().Ints("dims", dims));
}
Tensor Tensor::movedim(const std::vector<int64_t>& source, const std::vector<int64_t>& dest) const {
  return Op("movedim", {}, Attrs().Ints("source", source).Ints("destination", dest));
}
Tensor Tensor::expand(const std::vector<int64_t>& size) const {
  return Op("expand", {}, Attrs().Ints("size", size));
}
Tensor Tensor::expand_as(const Tensor& other) const { return Op("expand_as", {other}, {}); }
Tensor Tensor::broadcast_to(const std::vector<int64_t>& size) const {
  return Op("broadcast_to", {}, Attrs().Ints("size", size));
}
Tensor Tensor::squeeze() const { return Op("squeeze", {}, {}); }
Tensor Tensor::squeeze(int64_t dim) const { return Op("squeeze", {}, Attrs().Int("dim", dim)); }
Tensor Tensor::squeeze(const std::vector<int64_t>& dims) const {
  return Op("squeeze", {}, Attrs().Ints("dim", dims));
}
Tensor Tensor::unsqueeze(int64_t dim) const {
  return Op("unsqueeze", {}, Attrs().Int("dim", dim));
}
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return Op("narrow", {}, Attrs().Int("dim", dim).Int("start", start).Int("length", length));
}
Tensor Tensor::select(int64_t dim, int64_t index) const {
  return Op("select", {}, Attrs().Int("dim", dim).Int("index", index));
}
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  Attrs a;
  a.Int("dim", dim).Int("step", step);
  if (start) a.Int("start", *start);
  if (end) a.Int("end", *end);
  return Op("slice", {}, a);
}
Tensor Tensor::index(const std::vector<Index>& items) const {
  return Op("index", {}, Attrs().IndexList("indices", items));
}
Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  return Op("diagonal", {}, Attrs().Int("offset", offset).Int("dim1", dim1).Int("dim2", dim2));
}
Tensor Tensor::unfold(int64_t dimension, int64_t size, int64_t step) const {
  return Op("unfold", {}, Attrs().Int("dimension", dimension).Int("size", size).Int("step", step));
}
Tensor Tensor::alias() const { return Op("alias", {}, {}); }
Tensor Tensor::detach() const { return Op("detach", {}, {}); }

absl::StatusOr<std::vector<Tensor>> Tensor::split(int64_t split_size, int64_t dim) const {
  return MultiOp("split", Attrs().Int("split_size", split_size).Int("dim", dim));
}
absl::StatusOr<std::vector<Tensor>> Tensor::split(const std::vector<int64_t>& sizes,
                                                  int64_t dim) const {
  return MultiOp("split", Attrs().Ints("split_size", sizes).Int("dim", dim));
}
absl::StatusOr<std::vector<Tensor>> Tensor::tensor_split(int64_t sections, int64_t dim) const {
  return MultiOp("tensor_split", Attrs().Int("sections", sections).Int("dim", dim));
}
absl::StatusOr<std::vector<Tensor>> Tensor::chunk(int64_t chunks, int64_t dim) const {
  return MultiOp("chunk", Attrs().Int("chunks", chunks).Int("dim", dim));
}
absl::StatusOr<std::vector<Tensor>> Tensor::unbind(int64_t dim) const {
  return MultiOp("unbind", Attrs().Int("dim", dim));
}

Tensor Tensor::contiguous() const { return Op("contiguous", {}, {}); }
Tensor Tensor::clone() const { return Op("clone", {}, {}); }
Tensor Tensor::to(DType dtype) const { return Op("to", {}, Attrs().Dtype("dtype", dtype)); }
Tensor Tensor::flip(const std::vector<int64_t>& dims) const {
  return Op("flip", {}, Attrs().Ints("dims", dims));
}
Tensor Tensor::repeat(const std::vector<int64_t>& repeats) const {
  return Op("repeat", {}, Attrs().Ints("repeats", repeats));
}

// In-place ops name no output: self is updated. A failure is reported by Flush/Synchronize
// and by the next result that depends on it.
Tensor Tensor::AfterInPlace(absl::Status status) const {
  if (status.ok()) return *this;
  auto failed = std::make_shared<TensorState>();
  failed->session = state_->session;
  failed->error = std::move(status);
  return Tensor(std::move(failed));
}

Tensor Tensor::copy_(const Tensor& src) const {
  if (!state_) return *this;
  return AfterInPlace(session().CallNoOutput("copy_", {*this, src}));
}
Tensor Tensor::fill_(const Scalar& value) const {
  if (!state_) return *this;
  return AfterInPlace(session().CallNoOutput("fill_", {*this}, Attrs().Number("value", value)));
}
Tensor Tensor::zero_() const {
  if (!state_) return *this;
  return AfterInPlace(session().CallNoOutput("zero_", {*this}));
}

namespace {

// Sends the session's buffered ops so that the server has everything written before a read or
// write of `t`'s data; `t`'s own error (its op failed) comes before the batch's.
absl::Status FlushForLocked(SessionState& s, const TensorState& t)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
  absl::Status flushed = s.FlushLocked();
  if (!t.error.ok()) return t.error;
  return flushed;
}

// Streams a download; `sink(header)` returns where the data goes (or an error), then every
// chunk is copied there in order.
absl::Status DownloadTo(SessionState& s, uint64_t id,
                        const std::function<absl::StatusOr<char*>(int64_t total)>& sink,
                        int64_t* received) {
  v1::DownloadRequest request;
  request.set_session_id(s.id);
  request.set_id(id);
  char* out = nullptr;
  int64_t total = 0;
  absl::Status sink_status;
  bool have_header = false;
  *received = 0;
  // Runs on gRPC's thread: data goes straight from the received slices to the destination.
  auto on_read = [&](const grpc::ByteBuffer& buffer) {
    wire::Reader reader(buffer);
    if (have_header) {
      const int64_t n = reader.DataRecordLength();
      if (n < 0 || *received + n > total) {
        sink_status = absl::DataLossError("download: a malformed or oversized data message");
        return false;
      }
      reader.CopyTo(out + *received, static_cast<size_t>(n));
      *received += n;
      return true;
    }
    v1::DownloadResponse header;
    if (!reader.Parse(&header) || header.kind_case() != v1::DownloadResponse::kHeader) {
      sink_status = absl::DataLossError("download: the first message is not a header");
      return false;
    }
    const TensorInfo info = InfoFromProto(header.header());
    total = info.numel() * ItemSize(info.dtype);
    absl::StatusOr<char*> where = sink(total);
    if (!where.ok()) {
      sink_status = where.status();
      return false;
    }
    out = *where;
    have_header = true;
    return true;
  };
  // A read: when the connection drops, it starts again from the first byte.
  absl::Status status = s.WithReconnect([&](grpc::ClientContext* ctx) {
    have_header = false;
    *received = 0;
    std::vector<grpc::ByteBuffer> messages;
    messages.push_back(wire::Serialize(request));
    return FromGrpc(RawCall::Run(*s.raw, ctx, kDownloadMethod, std::move(messages), on_read), ctx);
  });
  if (!sink_status.ok()) return sink_status;
  if (!status.ok()) return status;
  if (*received != total) return absl::DataLossError("download: fewer bytes than announced");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> Tensor::bytes() const {
  if (!state_) return absl::FailedPreconditionError("undefined tensor");
  SessionState& s = *state_->session;
  {
    absl::MutexLock lock(&s.mu);
    if (absl::Status st = FlushForLocked(s, *state_); !st.ok()) return st;
  }
  const uint64_t id = state_->id;
  std::string out;
  int64_t received = 0;
  absl::Status status = DownloadTo(
      s, id,
      [&out](int64_t total) -> absl::StatusOr<char*> {
        out.resize(static_cast<size_t>(total));  // one allocation, sized by the header
        return out.data();
      },
      &received);
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<int64_t> Tensor::ReadInto(void* buffer, int64_t capacity) const {
  if (!state_) return absl::FailedPreconditionError("undefined tensor");
  SessionState& s = *state_->session;
  {
    absl::MutexLock lock(&s.mu);
    if (absl::Status st = FlushForLocked(s, *state_); !st.ok()) return st;
  }
  const uint64_t id = state_->id;
  int64_t received = 0;
  absl::Status status = DownloadTo(
      s, id,
      [buffer, capacity](int64_t total) -> absl::StatusOr<char*> {
        if (total > capacity) {
          return absl::OutOfRangeError(absl::StrCat("ReadInto: the tensor has ", total,
                                                    " bytes, the buffer ", capacity));
        }
        return static_cast<char*>(buffer);
      },
      &received);
  if (!status.ok()) return status;
  return received;
}

absl::StatusOr<int64_t> TypedStorage::size() const {
  absl::StatusOr<TensorInfo> i = tensor_.info();
  if (!i.ok()) return i.status();
  return i->storage_nbytes / ItemSize(i->dtype);
}

absl::StatusOr<int64_t> TypedStorage::nbytes() const {
  absl::StatusOr<TensorInfo> i = tensor_.info();
  if (!i.ok()) return i.status();
  return i->storage_nbytes;
}

absl::StatusOr<uint64_t> TypedStorage::data_ptr() const {
  absl::StatusOr<TensorInfo> i = tensor_.info();
  if (!i.ok()) return i.status();
  return i->storage_data_ptr;
}

absl::StatusOr<std::string> TypedStorage::ReadBytes(int64_t offset, int64_t count) const {
  if (!tensor_.state_) return absl::FailedPreconditionError("undefined tensor");
  SessionState& s = *tensor_.state_->session;
  {
    absl::MutexLock lock(&s.mu);
    if (absl::Status st = FlushForLocked(s, *tensor_.state_); !st.ok()) return st;
  }
  v1::ReadStorageRequest request;
  request.set_id(tensor_.id());
  request.set_offset(offset);
  request.set_count(count);
  absl::StatusOr<v1::ReadStorageResponse> response =
      s.Rpc(&v1::Tensord::Stub::ReadStorage, request);
  if (!response.ok()) return response.status();
  return std::move(*response->mutable_data());
}

absl::Status TypedStorage::WriteBytes(int64_t offset, const std::string& bytes) const {
  if (!tensor_.state_) return absl::FailedPreconditionError("undefined tensor");
  SessionState& s = *tensor_.state_->session;
  absl::MutexLock lock(&s.mu);  // held: the write is ordered after every op before it
  if (absl::Status st = FlushForLocked(s, *tensor_.state_); !st.ok()) return st;
  v1::WriteStorageRequest request;
  request.set_id(tensor_.id());
  request.set_offset(offset);
  request.set_data(bytes);
  request.set_stream(s.current_stream.id);
  return s.Rpc(&v1::Tensord::Stub::WriteStorage, request).status();
}

}  // namespace tensord::client
