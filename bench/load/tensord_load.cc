// tensord-load: a load generator for any tensord server, by address.
//
// Closed loop: N channels x M sessions per channel x K calls outstanding per session, each slot
// starting its next op when the previous one completes. Open loop (--rate, --sweep): a fixed
// arrival rate for all sessions together; arrival times are fixed in advance and latency is
// measured from the intended start (as wrk2 does), so a server that falls behind shows it in the
// latency instead of silently slowing the load down (no coordinated omission). A session never
// has more than K calls in flight; arrivals beyond that wait in its queue, and that wait counts.
//
// Every call is asynchronous: no thread per call or per session. Unary calls complete on a
// completion queue per channel, polled by one thread of the tool's own (gRPC's async API): with
// gRPC 1.51's callback API each completion reached the code on another gRPC thread, two context
// switches per call that cost one caller a quarter of its rate. Streams (uploads, downloads)
// use the callback API's reactors.
//
//   tensord-load --address=127.0.0.1:50051 --duration=10s --workload=small:3,metadata:1
//   tensord-load --address=... --sweep=1000,2000,4000,8000 --json=sweep.json
//   bench/load/plot_sweep.py sweep.json -o sweep.svg
//
// Exit status: 0 when no call failed, 1 when some did (they are counted by status code in the
// report), 2 on a bad command line or a server that cannot be reached.
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "grpcpp/grpcpp.h"
#include "histogram.h"
#include "nlohmann/json.hpp"
#include "tensord/v1/tensord.grpc.pb.h"

#ifndef TENSORD_VERSION
#define TENSORD_VERSION "0.1.0"
#endif

namespace {

namespace v1 = tensord::v1;
using tensord::load::Histogram;
using Json = nlohmann::ordered_json;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "tensord-load: %s\n", message.c_str());
  std::exit(2);
}

const char* CodeName(int code) {
  static const char* kNames[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
                                 "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
                                 "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                                 "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
                                 "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  return code >= 0 && code <= 16 ? kNames[code] : "UNKNOWN";
}

// "5s", "500ms", "2m", "1.5" (seconds) -> seconds.
double ParseDuration(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    Die("not a duration: '" + text + "' (say 10s, 500ms, 2m)");
  }
  const std::string unit = text.substr(used);
  if (unit.empty() || unit == "s") return value;
  if (unit == "ms") return value / 1e3;
  if (unit == "us") return value / 1e6;
  if (unit == "m" || unit == "min") return value * 60;
  if (unit == "h") return value * 3600;
  Die("not a duration: '" + text + "' (say 10s, 500ms, 2m)");
}

// "4096", "64k", "1M", "1MiB", "1g" -> bytes (binary multiples).
int64_t ParseBytes(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    Die("not a byte count: '" + text + "' (say 4096, 64k, 1M)");
  }
  std::string unit = text.substr(used);
  if (unit.size() > 1 && (unit.substr(1) == "iB" || unit.substr(1) == "B")) unit = unit.substr(0, 1);
  double scale = 1;
  if (unit == "k" || unit == "K") scale = 1024;
  else if (unit == "m" || unit == "M") scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty() && unit != "B") Die("not a byte count: '" + text + "'");
  const auto bytes = static_cast<int64_t>(value * scale);
  if (bytes <= 0) Die("a byte count must be positive: '" + text + "'");
  return bytes;
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::string Human(double bytes) {
  char buf[32];
  if (bytes >= 1 << 30) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1 << 30));
  else if (bytes >= 1 << 20) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1 << 20));
  else if (bytes >= 1 << 10) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / (1 << 10));
  else std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

// ---- Workloads ---------------------------------------------------------------------------------

enum class Kind { kMetadata, kSmall, kLarge, kUpload, kDownload, kChurn, kEvents, kNonzero };

struct Workload {
  std::string name;   // as reported: "small", "download:1048576"
  Kind kind;
  int64_t bytes = 0;  // upload/download
  double weight = 1;
  std::vector<v1::UploadRequest> chunks;  // upload: the data messages, shared by every call
};

std::vector<Workload> ParseWorkloads(const std::string& spec) {
  static const std::map<std::string, Kind> kKinds = {
      {"metadata", Kind::kMetadata}, {"small", Kind::kSmall},     {"large", Kind::kLarge},
      {"upload", Kind::kUpload},     {"download", Kind::kDownload}, {"churn", Kind::kChurn},
      {"events", Kind::kEvents},     {"nonzero", Kind::kNonzero}};
  std::vector<Workload> out;
  for (const std::string& item : Split(spec, ',')) {
    std::vector<std::string> parts = Split(item, ':');
    auto it = kKinds.find(parts.empty() ? "" : parts[0]);
    if (it == kKinds.end()) {
      Die("unknown workload '" + item +
          "' (metadata, small, large, upload:BYTES, download:BYTES, churn, events, nonzero)");
    }
    Workload w;
    w.kind = it->second;
    size_t next = 1;
    if (w.kind == Kind::kUpload || w.kind == Kind::kDownload) {
      if (parts.size() < 2) Die("workload '" + item + "' needs a size: " + parts[0] + ":BYTES");
      w.bytes = ParseBytes(parts[1]);
      next = 2;
      w.name = parts[0] + ":" + std::to_string(w.bytes);
    } else {
      w.name = parts[0];
    }
    if (parts.size() > next) {
      try {
        w.weight = std::stod(parts[next]);
      } catch (...) {
        Die("bad weight in workload '" + item + "'");
      }
      if (!(w.weight > 0)) Die("a weight must be positive: '" + item + "'");
    }
    if (parts.size() > next + 1) Die("bad workload '" + item + "'");
    for (const Workload& seen : out) {
      if (seen.name == w.name) Die("workload '" + w.name + "' named twice");
    }
    out.push_back(std::move(w));
  }
  if (out.empty()) Die("no workload given");
  return out;
}

// ---- Statistics --------------------------------------------------------------------------------

struct Stats {
  std::mutex mu;
  Histogram latency;              // successful ops whose intended start is in the window
  int64_t completed_in_window = 0;  // of those, completed before the window's end
  int64_t bytes = 0;
  int64_t unsent = 0;             // open loop: arrivals still queued when the window closed
  std::map<std::string, int64_t> errors;
  std::string first_error;
};

// One measurement (a closed-loop run, or one rate of a sweep).
struct Point {
  bool open = false;
  double rate = 0;
  double duration_s = 0, warmup_s = 0;
  int64_t warmup_end = 0, end = 0;  // steady-clock ns
  std::vector<std::unique_ptr<Stats>> stats;  // one per workload
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> done{0}, failed{0};  // all completions, for the progress line
};

// ---- Channels and sessions ---------------------------------------------------------------------

struct Options {
  std::string address, token, tls_ca, tls_server_name, device = "cpu";
  int channels = 1, sessions = 4, outstanding = 4;
  double timeout_s = 30;
};

struct Session {
  v1::Tensord::Stub* stub = nullptr;
  grpc::CompletionQueue* cq = nullptr;  // its channel's, where its unary calls complete
  const Options* options = nullptr;
  std::string id, route, device;
  std::vector<std::vector<uint64_t>> base;  // per workload: its tensors (or stream for events)
  std::atomic<uint64_t> next_id{uint64_t{1} << 32};
  std::mutex mu;
  std::vector<uint64_t> to_release;  // ids whose last use has been answered
  std::vector<int> free_slots;       // slot numbers (event ids) of calls not in flight
  struct Arrival { int workload; int64_t intended; };
  std::deque<Arrival> queue;         // open loop: arrivals waiting for a free slot

  void Prepare(grpc::ClientContext* ctx, const std::string& session_route) const {
    if (!options->token.empty()) ctx->AddMetadata("authorization", "Bearer " + options->token);
    if (!session_route.empty()) ctx->AddMetadata("tensord-route", session_route);
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::microseconds(static_cast<int64_t>(options->timeout_s * 1e6)));
  }
  std::vector<uint64_t> TakeReleases() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(to_release, {});
  }
  void Released(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu);
    to_release.push_back(id);
  }
};

std::shared_ptr<grpc::Channel> MakeChannel(const Options& o, int index) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  args.SetInt("tensord_load.channel", index);  // distinct arguments: a connection of its own
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (!o.tls_ca.empty()) {
    std::ifstream in(o.tls_ca);
    if (!in) Die("cannot read --tls-ca " + o.tls_ca);
    std::stringstream pem;
    pem << in.rdbuf();
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = pem.str();
    creds = grpc::SslCredentials(ssl);
    if (!o.tls_server_name.empty()) args.SetSslTargetNameOverride(o.tls_server_name);
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(o.address, creds, args);
}

void SetFactory(v1::OpCall* call, const std::string& op, std::vector<int64_t> size, uint64_t out,
                const std::string& device, v1::DType dtype = v1::DTYPE_FLOAT32) {
  call->set_op(op);
  auto& attrs = *call->mutable_attrs();
  for (int64_t s : size) attrs["size"].mutable_ints()->add_values(s);
  attrs["dtype"].set_dtype(dtype);
  if (!device.empty()) attrs["device"].set_device(device);
  call->add_outputs(out);
}

// Opens a session and makes the tensors its workloads use. Blocking: before the clock runs.
grpc::Status SetUp(Session& s, const std::vector<Workload>& workloads) {
  v1::OpenSessionRequest open;
  open.set_device(s.options->device);
  open.set_client_name("tensord-load");
  open.set_client_version(TENSORD_VERSION);
  v1::OpenSessionResponse opened;
  {
    grpc::ClientContext ctx;
    s.Prepare(&ctx, "");
    grpc::Status st = s.stub->OpenSession(&ctx, open, &opened);
    if (!st.ok()) return st;
  }
  s.id = opened.session_id();
  s.route = opened.route();
  s.device = opened.device();
  v1::RunOpsRequest make;
  make.set_session_id(s.id);
  make.set_omit_metadata(true);
  uint64_t id = 1;
  s.base.assign(workloads.size(), {});
  for (size_t w = 0; w < workloads.size(); ++w) {
    const Workload& wl = workloads[w];
    auto add = [&](const std::string& op, std::vector<int64_t> size,
                   v1::DType dtype = v1::DTYPE_FLOAT32) {
      SetFactory(make.add_ops(), op, std::move(size), id, s.device, dtype);
      s.base[w].push_back(id++);
    };
    switch (wl.kind) {
      case Kind::kMetadata: add("zeros", {64, 32}); break;
      case Kind::kSmall: add("ones", {64}); add("ones", {64}); break;
      case Kind::kLarge: add("ones", {1024, 1024}); add("ones", {1024, 1024}); break;
      case Kind::kDownload: add("zeros", {wl.bytes}, v1::DTYPE_UINT8); break;
      case Kind::kNonzero: {
        v1::OpCall* call = make.add_ops();
        call->set_op("arange");
        (*call->mutable_attrs())["end"].set_i(64);
        if (!s.device.empty()) (*call->mutable_attrs())["device"].set_device(s.device);
        call->add_outputs(id);
        s.base[w].push_back(id++);
        break;
      }
      case Kind::kEvents: {
        grpc::ClientContext ctx;
        s.Prepare(&ctx, s.route);
        v1::CreateStreamRequest req;
        req.set_session_id(s.id);
        v1::CreateStreamResponse resp;
        grpc::Status st = s.stub->CreateStream(&ctx, req, &resp);
        if (!st.ok()) return st;
        s.base[w].push_back(resp.stream());
        break;
      }
      case Kind::kUpload:
      case Kind::kChurn: break;
    }
  }
  if (make.ops_size() > 0) {
    grpc::ClientContext ctx;
    s.Prepare(&ctx, s.route);
    v1::RunOpsResponse made;
    grpc::Status st = s.stub->RunOps(&ctx, make, &made);
    if (!st.ok()) return st;
    if (made.has_error()) return grpc::Status(static_cast<grpc::StatusCode>(made.error().code()),
                                              made.error().message());
    grpc::ClientContext sync_ctx;
    s.Prepare(&sync_ctx, s.route);
    v1::SynchronizeRequest sync;
    sync.set_session_id(s.id);
    v1::SynchronizeResponse synced;
    st = s.stub->Synchronize(&sync_ctx, sync, &synced);
    if (!st.ok()) return st;
  }
  for (int k = s.options->outstanding; k >= 1; --k) s.free_slots.push_back(k);
  return grpc::Status::OK;
}

void Close(Session& s) {
  if (s.id.empty()) return;
  grpc::ClientContext ctx;
  s.Prepare(&ctx, s.route);
  v1::CloseSessionRequest req;
  req.set_session_id(s.id);
  v1::CloseSessionResponse resp;
  (void)s.stub->CloseSession(&ctx, req, &resp);
}

// ---- The engine: ops as chains of asynchronous calls -------------------------------------------

class Engine;

// One op in flight: its workload, slot, intended start; `Finish` records it and moves on.
struct Op {
  Engine* engine;
  Session* s;
  int workload;
  int slot;
  int64_t intended;
  int64_t bytes = 0;
};

// A completion queue and the thread that polls it: every unary call of one channel's sessions
// completes there, and its `done` runs on that thread.
class Poller {
 public:
  struct Tag {
    virtual ~Tag() = default;
    virtual void Complete() = 0;
  };
  Poller() : thread_([this] {
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) static_cast<Tag*>(tag)->Complete();
  }) {}
  ~Poller() {
    cq_.Shutdown();
    thread_.join();
  }
  grpc::CompletionQueue* cq() { return &cq_; }

 private:
  grpc::CompletionQueue cq_;
  std::thread thread_;
};

// Starts one unary call: `prepare(ctx, request, cq)` is the stub's PrepareAsync<Method>;
// `done(status, request, response)` runs on the session's poller thread.
template <class Req, class Resp, class Prepare, class Done>
void CallAsync(Session* s, const std::string& route, Req req, Prepare prepare, Done done) {
  struct Call final : Poller::Tag {
    explicit Call(Done d) : on_done(std::move(d)) {}
    void Complete() override {
      on_done(status, req, resp);
      delete this;
    }
    grpc::ClientContext ctx;
    Req req;
    Resp resp;
    grpc::Status status;
    Done on_done;
    std::unique_ptr<grpc::ClientAsyncResponseReader<Resp>> rpc;
  };
  auto* c = new Call(std::move(done));
  c->req = std::move(req);
  s->Prepare(&c->ctx, route);
  c->rpc = prepare(&c->ctx, c->req, s->cq);
  c->rpc->StartCall();
  c->rpc->Finish(&c->resp, &c->status, c);
}

class Engine {
 public:
  Engine(std::vector<Workload>& workloads, const Options& options)
      : workloads_(workloads), options_(options) {
    double sum = 0;
    for (const Workload& w : workloads_) cumulative_.push_back(sum += w.weight);
  }

  void Begin(Point* point) {
    point_ = point;
  }
  std::atomic<int64_t> in_flight{0};

  int Pick() {
    thread_local std::mt19937_64 rng(std::random_device{}() ^
                                     std::hash<std::thread::id>()(std::this_thread::get_id()));
    std::uniform_real_distribution<double> u(0, cumulative_.back());
    const double x = u(rng);
    for (size_t i = 0; i < cumulative_.size(); ++i) {
      if (x < cumulative_[i]) return static_cast<int>(i);
    }
    return static_cast<int>(cumulative_.size()) - 1;
  }

  // Closed loop: fills every slot of the session.
  void StartClosed(Session* s) {
    std::vector<int> slots;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      slots.swap(s->free_slots);
    }
    for (int slot : slots) Start(new Op{this, s, Pick(), slot, NowNs()});
  }

  // Open loop: an arrival for the session at `intended`.
  void Arrive(Session* s, int64_t intended) {
    const int w = Pick();
    int slot = 0;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      if (s->free_slots.empty()) {
        s->queue.push_back({w, intended});
        return;
      }
      slot = s->free_slots.back();
      s->free_slots.pop_back();
    }
    Start(new Op{this, s, w, slot, intended});
  }

  // Open loop, at the window's end: arrivals never sent are counted, not run.
  void DropQueued(Session* s) {
    std::lock_guard<std::mutex> lock(s->mu);
    for (const Session::Arrival& a : s->queue) {
      if (a.intended >= point_->warmup_end) {
        Stats& st = *point_->stats[static_cast<size_t>(a.workload)];
        std::lock_guard<std::mutex> l(st.mu);
        ++st.unsent;
      }
    }
    s->queue.clear();
  }

  void Start(Op* op) {
    in_flight.fetch_add(1);
    Session* s = op->s;
    const Workload& wl = workloads_[static_cast<size_t>(op->workload)];
    const std::vector<uint64_t>& base = s->base[static_cast<size_t>(op->workload)];
    switch (wl.kind) {
      case Kind::kMetadata:
        RunOps(op, OneOp(s, "transpose", {base[0]}, {{"dim0", 0}, {"dim1", 1}}));
        break;
      case Kind::kSmall:
        RunOps(op, OneOp(s, "add", {base[0], base[1]}, {}));
        break;
      case Kind::kNonzero:
        RunOps(op, OneOp(s, "nonzero", {base[0]}, {}));
        break;
      case Kind::kLarge: Large(op, base); break;
      case Kind::kUpload: Upload(op, wl); break;
      case Kind::kDownload: Download(op, wl, base[0]); break;
      case Kind::kChurn: Churn(op); break;
      case Kind::kEvents: Events(op, base[0]); break;
    }
  }

  // Records the op and starts what follows it in its slot.
  void Finish(Op* op, const std::string& error) {
    const int64_t now = NowNs();
    Point& p = *point_;
    Session* s = op->s;
    {
      Stats& st = *p.stats[static_cast<size_t>(op->workload)];
      std::lock_guard<std::mutex> lock(st.mu);
      if (op->intended >= p.warmup_end && op->intended < p.end) {
        st.bytes += op->bytes;
        if (error.empty()) {
          st.latency.Record(now - op->intended);
          if (now <= p.end) ++st.completed_in_window;
        } else {
          const std::string code = error.substr(0, error.find(':'));
          ++st.errors[code];
          if (st.first_error.empty()) st.first_error = error;
        }
      }
    }
    (error.empty() ? p.done : p.failed).fetch_add(1);
    Op* next = nullptr;
    if (!p.stopping.load()) {
      if (!p.open) {
        next = new Op{this, s, Pick(), op->slot, now};
      } else {
        std::lock_guard<std::mutex> lock(s->mu);
        if (!s->queue.empty()) {
          next = new Op{this, s, s->queue.front().workload, op->slot, s->queue.front().intended};
          s->queue.pop_front();
        }
      }
    }
    if (next == nullptr) {
      std::lock_guard<std::mutex> lock(s->mu);
      s->free_slots.push_back(op->slot);
    }
    delete op;
    if (next != nullptr) Start(next);
    in_flight.fetch_sub(1);
  }

 private:
  // A batch of one op on `inputs` with integer attributes, its output released by the next
  // batch (release_after).
  static v1::RunOpsRequest OneOp(Session* s, const char* name, std::vector<uint64_t> inputs,
                                 std::vector<std::pair<const char*, int64_t>> attrs) {
    v1::RunOpsRequest r = Batch(s, true);
    const uint64_t out = s->next_id.fetch_add(1);
    v1::OpCall* call = r.add_ops();
    call->set_op(name);
    for (uint64_t id : inputs) call->add_inputs(id);
    for (const auto& [key, value] : attrs) (*call->mutable_attrs())[key].set_i(value);
    call->add_outputs(out);
    r.add_release_after(out);
    return r;
  }

  static v1::RunOpsRequest Batch(Session* s, bool with_releases) {
    v1::RunOpsRequest r;
    r.set_session_id(s->id);
    r.set_omit_metadata(true);
    if (with_releases) {
      for (uint64_t id : s->TakeReleases()) r.add_release_after(id);
    }
    return r;
  }

  static std::string StatusError(const grpc::Status& st) {
    return std::string(CodeName(st.error_code())) + ": " + st.error_message();
  }
  static std::string BatchError(const v1::RunOpsResponse& r) {
    return std::string(CodeName(r.error().code())) + ": " + r.error().message();
  }

  void RunOps(Op* op, v1::RunOpsRequest r) {
    Session* s = op->s;
    op->bytes += static_cast<int64_t>(r.ByteSizeLong());
    CallAsync<v1::RunOpsRequest, v1::RunOpsResponse>(
        s, s->route, std::move(r),
        [stub = s->stub](auto* ctx, const auto& req, grpc::CompletionQueue* cq) {
          return stub->PrepareAsyncRunOps(ctx, req, cq);
        },
        [this, op](const grpc::Status& st, const v1::RunOpsRequest&, const v1::RunOpsResponse& resp) {
          op->bytes += static_cast<int64_t>(resp.ByteSizeLong());
          Finish(op, !st.ok() ? StatusError(st) : resp.has_error() ? BatchError(resp) : "");
        });
  }

  // matmul of two 1024x1024 tensors, then a one-element ReadStorage of the product: it answers
  // once the product is computed (RunOps alone answers once it is queued). The product is
  // released by a later call of the session.
  void Large(Op* op, const std::vector<uint64_t>& base) {
    Session* s = op->s;
    v1::RunOpsRequest r = Batch(s, true);
    const uint64_t out = s->next_id.fetch_add(1);
    v1::OpCall* call = r.add_ops();
    call->set_op("matmul");
    call->add_inputs(base[0]);
    call->add_inputs(base[1]);
    call->add_outputs(out);
    op->bytes += static_cast<int64_t>(r.ByteSizeLong());
    CallAsync<v1::RunOpsRequest, v1::RunOpsResponse>(
        s, s->route, std::move(r),
        [stub = s->stub](auto* ctx, const auto& req, grpc::CompletionQueue* cq) {
          return stub->PrepareAsyncRunOps(ctx, req, cq);
        },
        [this, op, out](const grpc::Status& st, const v1::RunOpsRequest&,
                        const v1::RunOpsResponse& resp) {
          if (!st.ok() || resp.has_error()) {
            if (st.ok()) op->s->Released(out);  // harmless if it was never made
            return Finish(op, !st.ok() ? StatusError(st) : BatchError(resp));
          }
          v1::ReadStorageRequest read;
          read.set_session_id(op->s->id);
          read.set_id(out);
          read.set_offset(0);
          read.set_count(1);
          CallAsync<v1::ReadStorageRequest, v1::ReadStorageResponse>(
              op->s, op->s->route, std::move(read),
              [stub = op->s->stub](auto* ctx, const auto& req, grpc::CompletionQueue* cq) {
                return stub->PrepareAsyncReadStorage(ctx, req, cq);
              },
              [this, op, out](const grpc::Status& st2, const v1::ReadStorageRequest&,
                              const v1::ReadStorageResponse& got) {
                op->s->Released(out);
                op->bytes += static_cast<int64_t>(got.ByteSizeLong());
                Finish(op, st2.ok() ? "" : StatusError(st2));
              });
        });
  }

  class Uploader final : public grpc::ClientWriteReactor<v1::UploadRequest> {
   public:
    Uploader(Engine* engine, Op* op, const Workload& wl) : engine_(engine), op_(op), wl_(wl) {
      Session* s = op->s;
      s->Prepare(&ctx_, s->route);
      v1::UploadHeader* h = header_.mutable_header();
      h->set_session_id(s->id);
      id_ = s->next_id.fetch_add(1);
      h->set_id(id_);
      h->add_sizes(wl.bytes);
      h->set_dtype(v1::DTYPE_UINT8);
      for (uint64_t id : s->TakeReleases()) h->add_release_before(id);
      s->stub->async()->Upload(&ctx_, &resp_, this);
      StartWrite(&header_);
      StartCall();
    }
    void OnWriteDone(bool ok) override {
      if (!ok) return;  // the call failed: OnDone follows
      if (next_ < wl_.chunks.size()) {
        op_->bytes += static_cast<int64_t>(wl_.chunks[next_].data().size());
        StartWrite(&wl_.chunks[next_++]);
      } else {
        StartWritesDone();
      }
    }
    void OnDone(const grpc::Status& st) override {
      if (st.ok()) op_->s->Released(id_);
      engine_->Finish(op_, st.ok() ? "" : StatusError(st));
      delete this;
    }

   private:
    Engine* engine_;
    Op* op_;
    const Workload& wl_;
    grpc::ClientContext ctx_;
    v1::UploadRequest header_;
    v1::UploadResponse resp_;
    uint64_t id_ = 0;
    size_t next_ = 0;
  };

  class Downloader final : public grpc::ClientReadReactor<v1::DownloadResponse> {
   public:
    Downloader(Engine* engine, Op* op, const Workload& wl, uint64_t id)
        : engine_(engine), op_(op), expected_(wl.bytes) {
      Session* s = op->s;
      s->Prepare(&ctx_, s->route);
      req_.set_session_id(s->id);
      req_.set_id(id);
      s->stub->async()->Download(&ctx_, &req_, this);
      StartRead(&msg_);
      StartCall();
    }
    void OnReadDone(bool ok) override {
      if (!ok) return;
      if (msg_.has_data()) got_ += static_cast<int64_t>(msg_.data().size());
      StartRead(&msg_);
    }
    void OnDone(const grpc::Status& st) override {
      op_->bytes += got_;
      std::string error;
      if (!st.ok()) error = StatusError(st);
      else if (got_ != expected_) {
        error = "DATA_LOSS: downloaded " + std::to_string(got_) + " bytes of " +
                std::to_string(expected_);
      }
      engine_->Finish(op_, error);
      delete this;
    }

   private:
    Engine* engine_;
    Op* op_;
    int64_t expected_;
    int64_t got_ = 0;
    grpc::ClientContext ctx_;
    v1::DownloadRequest req_;
    v1::DownloadResponse msg_;
  };

  void Upload(Op* op, const Workload& wl) { new Uploader(this, op, wl); }
  void Download(Op* op, const Workload& wl, uint64_t id) { new Downloader(this, op, wl, id); }

  // OpenSession, a few ops (factory, add, view), CloseSession: one op.
  void Churn(Op* op) {
    Session* s = op->s;
    v1::OpenSessionRequest open;
    open.set_device(options_.device);
    open.set_client_name("tensord-load churn");
    open.set_client_version(TENSORD_VERSION);
    CallAsync<v1::OpenSessionRequest, v1::OpenSessionResponse>(
        s, "", std::move(open),
        [stub = s->stub](auto* ctx, const auto& req, grpc::CompletionQueue* cq) {
          return stub->PrepareAsyncOpenSession(ctx, req, cq);
        },
        [this, op](const grpc::Status& st, const v1::OpenSessionRequest&,
                   const v1::OpenSessionResponse& opened) {
          if (!st.ok()) return Finish(op, StatusError(st));
          v1::RunOpsRequest r;
          r.set_session_id(opened.session_id());
          SetFactory(r.add_ops(), "ones", {64}, 1, opened.device());
          v1::OpCall* call = r.add_ops();
          call->set_op("add");
          call->add_inputs(1);
          call->add_inputs(1);
          call->add_outputs(2);
          call = r.add_ops();
          call->set_op("view");
          call->add_inputs(2);
          (*call->mutable_attrs())["shape"].mutable_ints()->add_values(8);
          (*call->mutable_attrs())["shape"].mutable_ints()->add_values(8);
          call->add_outputs(3);
          const std::string id = opened.session_id(), route = opened.route();
          CallAsync<v1::RunOpsRequest, v1::RunOpsResponse>(
              op->s, route, std::move(r),
              [stub = op->s->stub](auto* ctx, const auto& req, grpc::CompletionQueue* cq) {
                return stub->PrepareAsyncRunOps(ctx, req, cq);
              },
              [this, op, id, route](const grpc::Status& st2, const v1::RunOpsRequest& sent,
                                    const v1::RunOpsResponse& ran) {
                op->bytes += static_cast<int64_t>(sent.ByteSizeLong() + ran.ByteSizeLong());
                std::string error = !st2.ok() ? StatusError(st2) : ran.has_error() ? BatchError(ran) : "";
                v1::CloseSessionRequest close;
                close.set_session_id(id);
                CallAsync<v1::CloseSessionRequest, v1::CloseSessionResponse>(
                    op->s, route, std::move(close),
                    [stub = op->s->stub](auto* ctx, const auto& req, grpc::CompletionQueue* cq) {
                      return stub->PrepareAsyncCloseSession(ctx, req, cq);
                    },
                    [this, op, error](const grpc::Status& st3, const v1::CloseSessionRequest&,
                                      const v1::CloseSessionResponse&) {
                      Finish(op, !error.empty() ? error : st3.ok() ? "" : StatusError(st3));
                    });
              });
        });
  }

  // RecordEvent on the session's extra stream, WaitEvent on the default stream, QueryEvent:
  // one op. The event id is the call's slot, so a session uses at most K events.
  void Events(Op* op, uint64_t stream) {
    Session* s = op->s;
    const auto event = static_cast<uint64_t>(op->slot);
    v1::RecordEventRequest record;
    record.set_session_id(s->id);
    record.set_event(event);
    record.set_stream(stream);
    CallAsync<v1::RecordEventRequest, v1::RecordEventResponse>(
        s, s->route, std::move(record),
        [stub = s->stub](auto* ctx, const auto& req, grpc::CompletionQueue* cq) {
          return stub->PrepareAsyncRecordEvent(ctx, req, cq);
        },
        [this, op, event](const grpc::Status& st, const v1::RecordEventRequest& sent,
                          const v1::RecordEventResponse&) {
          op->bytes += static_cast<int64_t>(sent.ByteSizeLong());
          if (!st.ok()) return Finish(op, StatusError(st));
          v1::WaitEventRequest wait;
          wait.set_session_id(op->s->id);
          wait.set_event(event);
          wait.set_stream(0);
          CallAsync<v1::WaitEventRequest, v1::WaitEventResponse>(
              op->s, op->s->route, std::move(wait),
              [stub = op->s->stub](auto* ctx, const auto& req, grpc::CompletionQueue* cq) {
                return stub->PrepareAsyncWaitEvent(ctx, req, cq);
              },
              [this, op, event](const grpc::Status& st2, const v1::WaitEventRequest&,
                                const v1::WaitEventResponse&) {
                if (!st2.ok()) return Finish(op, StatusError(st2));
                v1::QueryEventRequest query;
                query.set_session_id(op->s->id);
                query.set_event(event);
                CallAsync<v1::QueryEventRequest, v1::QueryEventResponse>(
                    op->s, op->s->route, std::move(query),
                    [stub = op->s->stub](auto* ctx, const auto& req, grpc::CompletionQueue* cq) {
                      return stub->PrepareAsyncQueryEvent(ctx, req, cq);
                    },
                    [this, op](const grpc::Status& st3, const v1::QueryEventRequest&,
                               const v1::QueryEventResponse&) {
                      Finish(op, st3.ok() ? "" : StatusError(st3));
                    });
              });
        });
  }

  std::vector<Workload>& workloads_;
  const Options& options_;
  std::vector<double> cumulative_;
  Point* point_ = nullptr;
};

// ---- The server's metrics (Prometheus text over plain HTTP) ------------------------------------

// Scrapes http://host:port/path; returns series ("name{labels}" -> value), empty on failure.
std::map<std::string, double> Scrape(const std::string& url, std::string* error) {
  std::map<std::string, double> series;
  const std::string prefix = "http://";
  if (url.rfind(prefix, 0) != 0) {
    *error = "only http:// URLs";
    return series;
  }
  std::string rest = url.substr(prefix.size());
  const size_t slash = rest.find('/');
  const std::string path = slash == std::string::npos ? "/metrics" : rest.substr(slash);
  std::string hostport = rest.substr(0, slash);
  std::string host = hostport, port = "80";
  if (const size_t colon = hostport.rfind(':'); colon != std::string::npos) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
  }
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
    *error = "cannot resolve " + host;
    return series;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) {
    *error = "cannot connect to " + hostport;
    return series;
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: " + hostport +
                              "\r\nAccept: text/plain\r\nConnection: close\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    *error = "cannot send the request";
    return series;
  }
  std::string reply;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) reply.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t body = reply.find("\r\n\r\n");
  if (reply.rfind("HTTP/1.", 0) != 0 || body == std::string::npos ||
      reply.find(" 200") > reply.find("\r\n")) {
    *error = "no HTTP 200 from " + url;
    return series;
  }
  std::istringstream in(reply.substr(body + 4));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t brace = line.find('}');
    const size_t space = line.find(' ', brace == std::string::npos ? 0 : brace);
    if (space == std::string::npos) continue;
    try {
      series[line.substr(0, space)] = std::stod(line.substr(space + 1));
    } catch (...) {
    }
  }
  return series;
}

// What the scrapes before and after say about the server.
Json ServerReport(const std::map<std::string, double>& before,
                  const std::map<std::string, double>& after, double seconds) {
  Json j;
  auto value = [](const std::map<std::string, double>& m, const std::string& k) -> Json {
    auto it = m.find(k);
    return it == m.end() ? Json() : Json(it->second);
  };
  auto sum_of = [](const std::map<std::string, double>& m, const std::string& name) {
    double total = 0;
    for (const auto& [k, v] : m) {
      if (k == name || k.rfind(name + "{", 0) == 0) total += v;
    }
    return total;
  };
  if (after.count("process_cpu_seconds_total") && before.count("process_cpu_seconds_total")) {
    const double cpu = after.at("process_cpu_seconds_total") - before.at("process_cpu_seconds_total");
    j["cpu_seconds"] = cpu;
    j["cpu_cores_busy"] = seconds > 0 ? cpu / seconds : 0;
  }
  if (after.count("process_resident_memory_bytes")) {
    j["rss_bytes_before"] = value(before, "process_resident_memory_bytes");
    j["rss_bytes_after"] = value(after, "process_resident_memory_bytes");
  }
  j["cpu_rss_exposed"] = after.count("process_cpu_seconds_total") > 0 ||
                         after.count("process_resident_memory_bytes") > 0;
  for (const char* name : {"tensord_sessions", "tensord_tensors", "tensord_queued_ops"}) {
    j[name] = {{"before", value(before, name)}, {"after", value(after, name)}};
  }
  j["tensord_tensor_bytes"] = {{"before", sum_of(before, "tensord_tensor_bytes")},
                               {"after", sum_of(after, "tensord_tensor_bytes")}};
  for (const char* name : {"tensord_ops_total", "tensord_transfer_bytes_total",
                           "tensord_rpc_errors_total", "tensord_op_errors_total"}) {
    j[std::string(name) + "_delta"] = sum_of(after, name) - sum_of(before, name);
  }
  return j;
}

// ---- Reports -----------------------------------------------------------------------------------

Json StatsJson(const Histogram& h, int64_t completed_in_window, int64_t bytes, int64_t unsent,
               const std::map<std::string, int64_t>& errors, double seconds) {
  Json j;
  int64_t error_count = 0;
  for (const auto& [code, n] : errors) error_count += n;
  auto us = [](int64_t ns) { return static_cast<double>(ns) / 1e3; };
  j["ops"] = h.count();
  j["ops_per_s"] = seconds > 0 ? static_cast<double>(completed_in_window) / seconds : 0;
  j["latency_us"] = {{"p50", us(h.Percentile(0.50))},   {"p90", us(h.Percentile(0.90))},
                     {"p99", us(h.Percentile(0.99))},   {"p99_9", us(h.Percentile(0.999))},
                     {"max", us(h.max())},              {"min", us(h.min())},
                     {"mean", h.mean() / 1e3}};
  j["errors"] = Json::object();
  for (const auto& [code, n] : errors) j["errors"][code] = n;
  j["error_count"] = error_count;
  j["bytes"] = bytes;
  j["unsent"] = unsent;
  return j;
}

Json PointJson(Point& p, const std::vector<Workload>& workloads) {
  Json j;
  j["mode"] = p.open ? "open" : "closed";
  j["rate"] = p.open ? Json(p.rate) : Json();
  j["duration_s"] = p.duration_s;
  j["warmup_s"] = p.warmup_s;
  Histogram all;
  int64_t in_window = 0, bytes = 0, unsent = 0;
  std::map<std::string, int64_t> errors;
  j["workloads"] = Json::object();
  for (size_t w = 0; w < workloads.size(); ++w) {
    Stats& st = *p.stats[w];
    std::lock_guard<std::mutex> lock(st.mu);
    Json one = StatsJson(st.latency, st.completed_in_window, st.bytes, st.unsent, st.errors,
                         p.duration_s);
    if (!st.first_error.empty()) one["first_error"] = st.first_error;
    j["workloads"][workloads[w].name] = one;
    all.Merge(st.latency);
    in_window += st.completed_in_window;
    bytes += st.bytes;
    unsent += st.unsent;
    for (const auto& [code, n] : st.errors) errors[code] += n;
  }
  j["total"] = StatsJson(all, in_window, bytes, unsent, errors, p.duration_s);
  return j;
}

void PrintPoint(const Json& j) {
  if (j["mode"] == "open") {
    std::printf("open loop at %.0f ops/s: achieved %.0f ops/s\n", j["rate"].get<double>(),
                j["total"]["ops_per_s"].get<double>());
  }
  std::printf("%-20s %10s %11s %9s %9s %9s %9s %9s %8s %11s\n", "workload", "ops", "ops/s",
              "p50 us", "p90 us", "p99 us", "p99.9 us", "max us", "errors", "moved");
  auto row = [](const std::string& name, const Json& s) {
    const Json& l = s["latency_us"];
    std::printf("%-20s %10lld %11.1f %9.1f %9.1f %9.1f %9.1f %9.1f %8lld %11s\n", name.c_str(),
                static_cast<long long>(s["ops"].get<int64_t>()), s["ops_per_s"].get<double>(),
                l["p50"].get<double>(), l["p90"].get<double>(), l["p99"].get<double>(),
                l["p99_9"].get<double>(), l["max"].get<double>(),
                static_cast<long long>(s["error_count"].get<int64_t>()),
                Human(static_cast<double>(s["bytes"].get<int64_t>())).c_str());
  };
  for (const auto& [name, s] : j["workloads"].items()) row(name, s);
  if (j["workloads"].size() > 1) row("total", j["total"]);
  for (const auto& [name, s] : j["workloads"].items()) {
    if (s["error_count"].get<int64_t>() > 0) {
      std::printf("errors in %s:", name.c_str());
      for (const auto& [code, n] : s["errors"].items()) {
        std::printf(" %s %lld", code.c_str(), static_cast<long long>(n.get<int64_t>()));
      }
      std::printf("  (first: %s)\n", s.value("first_error", std::string()).c_str());
    }
    if (s["unsent"].get<int64_t>() > 0) {
      std::printf("%s: %lld arrivals never sent (queued behind a full session when the window "
                  "closed: the server fell behind the rate)\n",
                  name.c_str(), static_cast<long long>(s["unsent"].get<int64_t>()));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tensord-load: a load generator for a tensord server (closed or open loop)"};
  Options o;
  std::string duration = "10s", warmup = "1s", workload_spec = "small", json_path, sweep_spec,
              metrics_url, timeout = "30s";
  double rate = 0;
  bool quiet = false;
  app.add_option("--address", o.address, "the server, host:port")->required();
  app.add_option("--token", o.token, "bearer token (authorization: Bearer <token>)");
  app.add_option("--tls-ca", o.tls_ca, "PEM file of the CA that signed the server's certificate: "
                                       "speak TLS");
  app.add_option("--tls-server-name", o.tls_server_name,
                 "the name to check in the server's certificate (default: the address's host)");
  app.add_option("--channels", o.channels, "gRPC channels (connections)")->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--sessions", o.sessions, "sessions per channel")->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--outstanding", o.outstanding, "calls in flight per session (open loop: at most; later arrivals wait "
                 "in the session's queue, and the wait counts in their latency)")->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--rate", rate, "open loop: ops per second for all sessions together "
                                 "(0: closed loop)")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--duration", duration, "measured time (10s, 500ms, 2m)")->capture_default_str();
  app.add_option("--warmup", warmup, "unmeasured time before it")->capture_default_str();
  app.add_option("--workload", workload_spec,
                 "name[:weight],...: metadata, small, large, upload:BYTES, download:BYTES, "
                 "churn, events, nonzero (BYTES: 4096, 64k, 1M)")->capture_default_str();
  app.add_option("--device", o.device, "the sessions' device: cpu, cuda, cuda:N")->capture_default_str();
  app.add_option("--json", json_path, "write the report as JSON to this file");
  app.add_option("--sweep", sweep_spec, "R1,R2,...: an open-loop run at each rate, one JSON");
  app.add_option("--metrics-url", metrics_url,
                 "the server's Prometheus endpoint (http://host:port/metrics), scraped before "
                 "and after");
  app.add_option("--timeout", timeout, "deadline of each call")->capture_default_str();
  app.add_flag("--quiet", quiet, "no progress line");
  CLI11_PARSE(app, argc, argv);

  std::vector<Workload> workloads = ParseWorkloads(workload_spec);
  std::vector<double> rates;
  if (!sweep_spec.empty()) {
    for (const std::string& r : Split(sweep_spec, ',')) {
      try {
        rates.push_back(std::stod(r));
      } catch (...) {
        Die("bad rate in --sweep: '" + r + "'");
      }
      if (!(rates.back() > 0)) Die("a sweep rate must be positive");
    }
    if (rate > 0) Die("--rate and --sweep exclude each other");
  } else {
    rates.push_back(rate);  // 0: closed loop
  }
  const double duration_s = ParseDuration(duration), warmup_s = ParseDuration(warmup);
  o.timeout_s = ParseDuration(timeout);
  if (duration_s <= 0) Die("--duration must be positive");

  // The server: reachable? its limits.
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<v1::Tensord::Stub>> stubs;
  for (int c = 0; c < o.channels; ++c) {
    channels.push_back(MakeChannel(o, c));
    stubs.push_back(v1::Tensord::NewStub(channels.back()));
  }
  v1::GetServerInfoResponse info;
  v1::GetVersionResponse version;
  {
    Session probe;
    probe.options = &o;
    grpc::ClientContext ctx;
    probe.Prepare(&ctx, "");
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status st = stubs[0]->GetVersion(&ctx, v1::GetVersionRequest(), &version);
    if (!st.ok()) {
      Die("cannot reach " + o.address + ": " + CodeName(st.error_code()) + ": " +
          st.error_message());
    }
    grpc::ClientContext ctx2;
    probe.Prepare(&ctx2, "");
    st = stubs[0]->GetServerInfo(&ctx2, v1::GetServerInfoRequest(), &info);
    if (!st.ok()) Die("GetServerInfo: " + st.error_message());
  }
  const int64_t chunk = info.limits().chunk_bytes() > 0 ? info.limits().chunk_bytes() : 1 << 20;
  for (Workload& w : workloads) {
    if (w.kind != Kind::kUpload) continue;
    for (int64_t at = 0; at < w.bytes; at += chunk) {
      v1::UploadRequest r;
      r.set_data(std::string(static_cast<size_t>(std::min(chunk, w.bytes - at)), '\x5a'));
      w.chunks.push_back(std::move(r));
    }
  }

  std::map<std::string, double> scrape_before;
  std::string scrape_error;
  if (!metrics_url.empty()) scrape_before = Scrape(metrics_url, &scrape_error);

  // Sessions, opened before the clock runs; a poller per channel, which outlives them.
  std::vector<std::unique_ptr<Poller>> pollers;
  for (int c = 0; c < o.channels; ++c) pollers.push_back(std::make_unique<Poller>());
  std::vector<std::unique_ptr<Session>> sessions;
  std::map<std::string, int64_t> setup_errors;
  std::string first_setup_error;
  for (int c = 0; c < o.channels; ++c) {
    for (int m = 0; m < o.sessions; ++m) {
      auto s = std::make_unique<Session>();
      s->stub = stubs[static_cast<size_t>(c)].get();
      s->cq = pollers[static_cast<size_t>(c)]->cq();
      s->options = &o;
      grpc::Status st = SetUp(*s, workloads);
      if (!st.ok()) {
        ++setup_errors[CodeName(st.error_code())];
        if (first_setup_error.empty()) {
          first_setup_error = std::string(CodeName(st.error_code())) + ": " + st.error_message();
        }
        Close(*s);
        continue;
      }
      sessions.push_back(std::move(s));
    }
  }
  const int64_t wanted = static_cast<int64_t>(o.channels) * o.sessions;
  std::fprintf(stderr, "tensord-load: server %s (%s), %zu of %lld sessions open on %s%s\n",
               o.address.c_str(), version.server_version().c_str(), sessions.size(),
               static_cast<long long>(wanted), o.device.c_str(),
               setup_errors.empty() ? "" : (", first failure: " + first_setup_error).c_str());

  Engine engine(workloads, o);
  std::vector<std::unique_ptr<Point>> points;
  // Calls still in flight when the tool ends would complete into freed state: then it exits
  // without running destructors (the pollers would deliver them).
  bool abandoned = false;
  const auto finish = [&](int code) {
    if (!abandoned) return code;
    std::fflush(nullptr);
    std::_Exit(code);
  };
  const int64_t run_t0 = NowNs();
  for (double r : rates) {
    if (sessions.empty()) break;
    auto p = std::make_unique<Point>();
    Point& point = *p;
    point.open = r > 0;
    point.rate = r;
    point.duration_s = duration_s;
    point.warmup_s = warmup_s;
    for (size_t w = 0; w < workloads.size(); ++w) point.stats.push_back(std::make_unique<Stats>());
    const int64_t start = NowNs();
    point.warmup_end = start + static_cast<int64_t>(warmup_s * 1e9);
    point.end = point.warmup_end + static_cast<int64_t>(duration_s * 1e9);
    engine.Begin(&point);

    // The progress line, once a second.
    std::mutex progress_mu;
    std::condition_variable progress_cv;
    bool progress_stop = false;
    std::thread progress([&] {
      int64_t last_done = 0, last_t = start;
      std::unique_lock<std::mutex> lock(progress_mu);
      while (!progress_cv.wait_for(lock, std::chrono::seconds(1), [&] { return progress_stop; })) {
        if (quiet) continue;
        const int64_t now = NowNs();
        const int64_t done = point.done.load();
        Histogram h;
        for (auto& st : point.stats) {
          std::lock_guard<std::mutex> l(st->mu);
          h.Merge(st->latency);
        }
        std::fprintf(stderr, "[%6.1fs %-7s] %9.0f ops/s  p99 %9.1f us  errors %lld  in flight %lld\n",
                     static_cast<double>(now - start) / 1e9,
                     last_t < point.warmup_end ? "warm-up" : "run",
                     static_cast<double>(done - last_done) * 1e9 / static_cast<double>(now - last_t),
                     static_cast<double>(h.Percentile(0.99)) / 1e3,
                     static_cast<long long>(point.failed.load()),
                     static_cast<long long>(engine.in_flight.load()));
        last_done = done;
        last_t = now;
      }
    });

    if (!point.open) {
      for (auto& s : sessions) engine.StartClosed(s.get());
      std::this_thread::sleep_until(std::chrono::steady_clock::time_point(
          std::chrono::nanoseconds(point.end)));
    } else {
      // Arrival i is due at start + i / rate, whatever happened before it.
      const double interval = 1e9 / r;
      size_t next_session = 0;
      for (int64_t i = 0;; ++i) {
        const int64_t due = start + static_cast<int64_t>(static_cast<double>(i) * interval);
        if (due >= point.end) break;
        if (due > NowNs()) {
          std::this_thread::sleep_until(std::chrono::steady_clock::time_point(
              std::chrono::nanoseconds(due)));
        }
        engine.Arrive(sessions[next_session].get(), due);
        next_session = (next_session + 1) % sessions.size();
      }
      std::this_thread::sleep_until(std::chrono::steady_clock::time_point(
          std::chrono::nanoseconds(point.end)));
    }
    point.stopping = true;
    if (point.open) {
      for (auto& s : sessions) engine.DropQueued(s.get());
    }
    // Calls in flight end by themselves: each has a deadline, and an op chains at most three
    // (churn: open, work, close).
    const int64_t drain_deadline = NowNs() + static_cast<int64_t>((3 * o.timeout_s + 5) * 1e9);
    while (engine.in_flight.load() > 0 && NowNs() < drain_deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    {
      std::lock_guard<std::mutex> lock(progress_mu);
      progress_stop = true;
    }
    progress_cv.notify_all();
    progress.join();
    if (engine.in_flight.load() > 0) {
      std::fprintf(stderr, "tensord-load: %lld calls still in flight past their deadline\n",
                   static_cast<long long>(engine.in_flight.load()));
      abandoned = true;
    }
    points.push_back(std::move(p));
  }
  const double run_s = static_cast<double>(NowNs() - run_t0) / 1e9;

  std::map<std::string, double> scrape_after;
  if (!metrics_url.empty() && scrape_error.empty()) scrape_after = Scrape(metrics_url, &scrape_error);
  for (auto& s : sessions) Close(*s);

  // The report.
  Json report;
  report["tool"] = "tensord-load";
  report["address"] = o.address;
  report["server_version"] = version.server_version();
  report["config"] = {{"channels", o.channels},       {"sessions_per_channel", o.sessions},
                      {"outstanding", o.outstanding}, {"device", o.device},
                      {"duration_s", duration_s},     {"warmup_s", warmup_s},
                      {"sessions_open", sessions.size()}};
  report["config"]["workloads"] = Json::array();
  for (const Workload& w : workloads) {
    report["config"]["workloads"].push_back({{"name", w.name}, {"weight", w.weight}});
  }
  report["sweep"] = !sweep_spec.empty();
  report["setup_errors"] = Json::object();
  for (const auto& [code, n] : setup_errors) report["setup_errors"][code] = n;
  if (!first_setup_error.empty()) report["first_setup_error"] = first_setup_error;
  report["points"] = Json::array();
  for (auto& p : points) report["points"].push_back(PointJson(*p, workloads));
  if (!metrics_url.empty()) {
    if (!scrape_error.empty()) {
      report["server"] = {{"error", scrape_error}};
    } else {
      report["server"] = ServerReport(scrape_before, scrape_after, run_s);
    }
  }

  std::printf("tensord-load against %s (server %s): %d channel(s) x %d session(s) x %d outstanding, "
              "%s, %.1f s measured after %.1f s warm-up, device %s\n",
              o.address.c_str(), version.server_version().c_str(), o.channels, o.sessions,
              o.outstanding, sweep_spec.empty() && rate <= 0 ? "closed loop" : "open loop",
              duration_s, warmup_s, o.device.c_str());
  int64_t errors = 0;
  for (const auto& [code, n] : setup_errors) errors += n;
  if (!setup_errors.empty()) {
    std::printf("sessions that could not be opened or set up: %lld of %lld (",
                static_cast<long long>(errors), static_cast<long long>(wanted));
    for (const auto& [code, n] : setup_errors) {
      std::printf("%s %lld ", code.c_str(), static_cast<long long>(n));
    }
    std::printf("; first: %s)\n", first_setup_error.c_str());
  }
  for (const Json& p : report["points"]) {
    std::printf("\n");
    PrintPoint(p);
    errors += p["total"]["error_count"].get<int64_t>();
  }
  if (report["sweep"].get<bool>()) {
    std::printf("\n%12s %12s %10s %10s %10s\n", "rate", "achieved", "p50 us", "p99 us", "errors");
    for (const Json& p : report["points"]) {
      std::printf("%12.0f %12.0f %10.1f %10.1f %10lld\n", p["rate"].get<double>(),
                  p["total"]["ops_per_s"].get<double>(),
                  p["total"]["latency_us"]["p50"].get<double>(),
                  p["total"]["latency_us"]["p99"].get<double>(),
                  static_cast<long long>(p["total"]["error_count"].get<int64_t>()));
    }
  }
  if (report.contains("server")) {
    const Json& sv = report["server"];
    std::printf("\nserver (%s):", metrics_url.c_str());
    if (sv.contains("error")) {
      std::printf(" metrics not read: %s\n", sv["error"].get<std::string>().c_str());
    } else {
      if (sv.contains("cpu_seconds")) {
        std::printf(" CPU %.2f s (%.2f cores),", sv["cpu_seconds"].get<double>(),
                    sv["cpu_cores_busy"].get<double>());
      }
      if (sv.contains("rss_bytes_after") && !sv["rss_bytes_after"].is_null()) {
        std::printf(" RSS %s -> %s,",
                    Human(sv["rss_bytes_before"].is_null() ? 0 : sv["rss_bytes_before"].get<double>()).c_str(),
                    Human(sv["rss_bytes_after"].get<double>()).c_str());
      }
      if (!sv["cpu_rss_exposed"].get<bool>()) std::printf(" server CPU/RSS: not exposed;");
      auto ba = [&](const char* name) {
        const Json& x = sv[name];
        auto num = [](const Json& v) { return v.is_null() ? std::string("-") : std::to_string(v.get<int64_t>()); };
        return num(x["before"]) + " -> " + num(x["after"]);
      };
      std::printf(" sessions %s, tensors %s, tensor bytes %s -> %s, ops +%.0f, transfer bytes +%s, "
                  "rpc errors +%.0f\n",
                  ba("tensord_sessions").c_str(), ba("tensord_tensors").c_str(),
                  Human(sv["tensord_tensor_bytes"]["before"].get<double>()).c_str(),
                  Human(sv["tensord_tensor_bytes"]["after"].get<double>()).c_str(),
                  sv["tensord_ops_total_delta"].get<double>(),
                  Human(sv["tensord_transfer_bytes_total_delta"].get<double>()).c_str(),
                  sv["tensord_rpc_errors_total_delta"].get<double>());
    }
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    if (!out) Die("cannot write " + json_path);
    out << report.dump(2) << "\n";
  }
  if (sessions.empty()) {
    std::printf("\nno session could be opened: nothing was measured\n");
    return finish(1);
  }
  if (errors > 0) {
    std::printf("\n%lld errors (see above)\n", static_cast<long long>(errors));
    return finish(1);
  }
  return finish(0);
}
