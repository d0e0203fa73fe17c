#include "server/metrics.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <dirent.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <sstream>
#include <cstring>
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "engine/core/status_macros.h"
#include "engine/ops/op_registry.h"
#include "grpcpp/server_context.h"
#include "prometheus/text_serializer.h"
#include "server/log.h"
#include "server/session_store.h"

namespace tensord::server {
namespace {

// RPC latency buckets, seconds: 50 µs (a metadata call) to 100 s (a large transfer).
prometheus::Histogram::BucketBoundaries RpcBuckets() {
  return {5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2,
          0.1,  0.25, 0.5,    1,    2.5,  5,      10,   30,   100};
}

// "/tensord.v1.Tensord/RunOps" -> "run_ops"; other services keep their full name.
std::string MethodLabel(absl::string_view full) {
  if (!absl::ConsumePrefix(&full, "/tensord.v1.Tensord/")) return std::string(full);
  std::string label;
  for (char c : full) {
    if (absl::ascii_isupper(c)) {
      if (!label.empty()) label.push_back('_');
      label.push_back(absl::ascii_tolower(c));
    } else {
      label.push_back(c);
    }
  }
  return label;
}

// The methods whose latency is recorded: every method the server registers.
constexpr const char* kMethods[] = {
    "/tensord.v1.Tensord/GetVersion",    "/tensord.v1.Tensord/GetServerInfo",
    "/tensord.v1.Tensord/ListOps",       "/tensord.v1.Tensord/OpenSession",
    "/tensord.v1.Tensord/CloseSession",  "/tensord.v1.Tensord/RenewLease",
    "/tensord.v1.Tensord/RunOps",        "/tensord.v1.Tensord/Describe",
    "/tensord.v1.Tensord/Release",       "/tensord.v1.Tensord/ReadStorage",
    "/tensord.v1.Tensord/WriteStorage",  "/tensord.v1.Tensord/Upload",
    "/tensord.v1.Tensord/Download",      "/tensord.v1.Tensord/Connect",
    "/tensord.v1.Tensord/CreateStream",  "/tensord.v1.Tensord/RecordEvent",
    "/tensord.v1.Tensord/WaitEvent",     "/tensord.v1.Tensord/QueryEvent",
    "/tensord.v1.Tensord/Synchronize",   "/tensord.v1.Tensord/Cancel",
    "/tensord.v1.Tensord/Profile",
    "/grpc.health.v1.Health/Check",
    "/grpc.health.v1.Health/Watch",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
};

std::string CodeName(absl::StatusCode code) { return absl::StatusCodeToString(code); }

// Gauges read from one server's sessions when Prometheus scrapes.
class StateCollector final : public prometheus::Collectable {
 public:
  explicit StateCollector(SessionStore* sessions) : sessions_(sessions) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    const SessionStore::Totals totals = sessions_->totals();
    std::vector<prometheus::MetricFamily> families;
    auto family = [&](std::string name, std::string help) -> prometheus::MetricFamily& {
      families.push_back({std::move(name), std::move(help), prometheus::MetricType::Gauge, {}});
      return families.back();
    };
    auto add = [](prometheus::MetricFamily& f, double value,
                  std::vector<prometheus::ClientMetric::Label> labels = {}) {
      prometheus::ClientMetric metric;
      metric.label = std::move(labels);
      metric.gauge.value = value;
      f.metric.push_back(std::move(metric));
    };
    add(family("tensord_sessions", "Sessions open."), static_cast<double>(totals.sessions));
    add(family("tensord_session_limit", "Sessions the server may hold at once (--max-sessions)."),
        static_cast<double>(totals.max_sessions));
    add(family("tensord_tensors", "Tensors held by all sessions."),
        static_cast<double>(totals.tensors));
    add(family("tensord_queued_ops", "Ops queued on the sessions' streams, not yet retired."),
        static_cast<double>(totals.queued_ops));
    // One series per device that has held bytes; "cpu" always.
    prometheus::MetricFamily& bytes =
        family("tensord_tensor_bytes", "Bytes of tensor storage held by all sessions, by device.");
    bool cpu = false;
    for (const auto& [device, used] : totals.bytes_by_device) {
      cpu |= device == "cpu";
      add(bytes, static_cast<double>(used), {{"device", device}});
    }
    if (!cpu) add(bytes, 0, {{"device", "cpu"}});
    AddProcessFamilies(&families);
    return families;
  }

 private:
  // The standard process metrics (Prometheus' process collector's names), from /proc/self:
  // load tests read the server's CPU time, memory, threads and descriptors from them.
  static void AddProcessFamilies(std::vector<prometheus::MetricFamily>* families) {
    auto single = [&](const char* name, const char* help, prometheus::MetricType type,
                      double value) {
      prometheus::ClientMetric metric;
      if (type == prometheus::MetricType::Counter) {
        metric.counter.value = value;
      } else {
        metric.gauge.value = value;
      }
      families->push_back({name, help, type, {metric}});
    };
    std::ifstream stat("/proc/self/stat");
    std::string line;
    if (std::getline(stat, line)) {
      // Fields after the command name (which may hold spaces, in parentheses): state is 3rd.
      std::istringstream rest(line.substr(line.rfind(')') + 2));
      std::vector<std::string> f{std::istream_iterator<std::string>(rest), {}};
      // utime, stime: fields 14, 15; num_threads: 20 (1-based, so f[11], f[12], f[17]).
      if (f.size() > 17) {
        const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
        single("process_cpu_seconds_total", "User and system CPU time spent, seconds.",
               prometheus::MetricType::Counter,
               (std::stod(f[11]) + std::stod(f[12])) / ticks);
        single("process_threads", "Threads of the process.", prometheus::MetricType::Gauge,
               std::stod(f[17]));
      }
    }
    std::ifstream statm("/proc/self/statm");
    int64_t pages_total = 0, pages_resident = 0;
    if (statm >> pages_total >> pages_resident) {
      single("process_resident_memory_bytes", "Resident memory, bytes.",
             prometheus::MetricType::Gauge,
             static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)));
    }
    int fds = 0;
    if (DIR* dir = opendir("/proc/self/fd")) {
      while (readdir(dir) != nullptr) ++fds;
      closedir(dir);
      single("process_open_fds", "Open file descriptors.", prometheus::MetricType::Gauge,
             fds - 3);  // ".", "..", and the directory's own descriptor
    }
  }

  SessionStore* const sessions_;
};

}  // namespace

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {
  op_family_ = &prometheus::BuildCounter()
                    .Name("tensord_ops_total")
                    .Help("Ops run (planned and queued), by op.")
                    .Register(*registry_);
  op_error_family_ = &prometheus::BuildCounter()
                          .Name("tensord_op_errors_total")
                          .Help("Ops refused or failed when planned, by op and status code.")
                          .Register(*registry_);
  rpc_family_ = &prometheus::BuildHistogram()
                     .Name("tensord_rpc_duration_seconds")
                     .Help("RPC latency from the request's arrival to its status, by method.")
                     .Register(*registry_);
  rpc_error_family_ = &prometheus::BuildCounter()
                           .Name("tensord_rpc_errors_total")
                           .Help("RPCs that ended with an error, by method and status code.")
                           .Register(*registry_);
  for (const engine::OpDef& op : engine::OpRegistry::Global().ops()) {
    ops_[op.name] = &op_family_->Add({{"op", op.name}});
  }
  unknown_op_ = &op_family_->Add({{"op", "unknown"}});
  for (const char* method : kMethods) {
    rpcs_[method] = &rpc_family_->Add({{"method", MethodLabel(method)}}, RpcBuckets());
  }
  auto& transfer = prometheus::BuildCounter()
                       .Name("tensord_transfer_bytes_total")
                       .Help("Tensor bytes uploaded and downloaded.")
                       .Register(*registry_);
  upload_bytes_ = &transfer.Add({{"direction", "upload"}});
  download_bytes_ = &transfer.Add({{"direction", "download"}});
  auto& sessions = prometheus::BuildCounter()
                       .Name("tensord_sessions_total")
                       .Help("Sessions opened, closed by their client, and expired (lease ran out).")
                       .Register(*registry_);
  sessions_opened_ = &sessions.Add({{"event", "opened"}});
  sessions_closed_ = &sessions.Add({{"event", "closed"}});
  sessions_expired_ = &sessions.Add({{"event", "expired"}});
}

void Metrics::CountOp(absl::string_view op, const absl::Status& status) {
  auto it = ops_.find(op);
  const bool known = it != ops_.end();
  if (status.ok()) {
    (known ? it->second : unknown_op_)->Increment();
    return;
  }
  op_error_family_
      ->Add({{"op", known ? std::string(op) : "unknown"}, {"code", CodeName(status.code())}})
      .Increment();
}

void Metrics::CountRpc(absl::string_view method, const absl::Status& status, double seconds) {
  auto it = rpcs_.find(method);
  if (it == rpcs_.end()) return;  // not one of ours (an unknown method): no label from a client
  it->second->Observe(seconds);
  if (!status.ok()) {
    rpc_error_family_->Add({{"method", MethodLabel(method)}, {"code", CodeName(status.code())}})
        .Increment();
  }
}

Metrics& ServerMetrics() {
  static Metrics* metrics = new Metrics();
  return *metrics;
}

// ---- The RPC interceptor: every call's latency and status ---------------------------------

namespace {

std::atomic<double> slow_call_seconds{1.0};

class RpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit RpcMetricsInterceptor(grpc::experimental::ServerRpcInfo* info)
      : method_(info->method()),
        unary_(info->type() == grpc::experimental::ServerRpcInfo::Type::UNARY),
        context_(info->server_context()),
        start_(std::chrono::steady_clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      const double seconds = SecondsSince(start_);
      const absl::StatusCode code = static_cast<absl::StatusCode>(status.error_code());
      ServerMetrics().CountRpc(
          method_, status.ok() ? absl::OkStatus() : absl::Status(code, status.error_message()),
          seconds);
      // Streams (transfers, Connect) last as long as their data: only unary calls are "slow".
      if (unary_ && seconds >= slow_call_seconds.load(std::memory_order_relaxed)) {
        Log(LogLevel::kWarning, "slow_call",
            {{"method", MethodLabel(method_)}, {"seconds", seconds},
             {"code", absl::StatusCodeToString(code)},
             {"peer", context_ != nullptr ? context_->peer() : std::string()}});
      }
    }
    methods->Proceed();
  }

 private:
  const char* const method_;
  const bool unary_;
  grpc::ServerContextBase* const context_;
  const std::chrono::steady_clock::time_point start_;
};

class RpcMetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new RpcMetricsInterceptor(info);
  }
};

}  // namespace

void SetSlowCallSeconds(double seconds) { slow_call_seconds.store(seconds); }

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
RpcMetricsInterceptorCreator() {
  return std::make_unique<RpcMetricsInterceptorFactory>();
}

// ---- The HTTP endpoint ----------------------------------------------------------------------
//
// prometheus-cpp's own endpoint (civetweb) runs its workers on 100 KiB stacks, of which the
// process's static TLS (OpenBLAS alone holds 60 KiB of it) leaves too little: it overflows on
// the first scrape. The exposition format is prometheus-cpp's (TextSerializer); the transport is
// this small HTTP/1.1 responder: one thread, one connection at a time, GET /metrics only,
// 3 seconds for a whole exchange, requests over 8 KiB refused.

namespace {

absl::StatusOr<sockaddr_storage> ParseAddress(const std::string& address, socklen_t* length) {
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen=", address, ": expected HOST:PORT"));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host == "*") host = "0.0.0.0";
  sockaddr_storage storage{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    *length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    *length = sizeof(sockaddr_in6);
  } else if (host == "localhost") {
    inet_pton(AF_INET, "127.0.0.1", &v4->sin_addr);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    *length = sizeof(sockaddr_in);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics-listen=", address, ": the host must be an IP address (or localhost)"));
  }
  return storage;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& address, SessionStore* sessions) {
  socklen_t length = 0;
  TENSORD_ASSIGN_OR_RETURN(sockaddr_storage addr, ParseAddress(address, &length));
  auto endpoint = std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint());
  endpoint->listen_fd_ = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  if (endpoint->listen_fd_ < 0 ||
      setsockopt(endpoint->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      bind(endpoint->listen_fd_, reinterpret_cast<sockaddr*>(&addr), length) != 0 ||
      listen(endpoint->listen_fd_, 16) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", address, ": ",
                                               std::strerror(errno)));
  }
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof(bound);
  getsockname(endpoint->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &bound_length);
  endpoint->port_ = ntohs(bound.ss_family == AF_INET6
                              ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (pipe2(endpoint->wake_, O_CLOEXEC) != 0) {
    return absl::InternalError("metrics: cannot create a pipe");
  }
  endpoint->collectables_ = {ServerMetrics().registry(),
                             std::make_shared<StateCollector>(sessions)};
  endpoint->thread_ = std::thread([e = endpoint.get()] { e->Serve(); });
  return endpoint;
}

std::string MetricsEndpoint::Scrape() const {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& collectable : collectables_) {
    std::vector<prometheus::MetricFamily> more = collectable->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

namespace {

// Waits until `fd` is ready for `events`, the wake pipe fires (false) or `deadline` passes
// (false).
bool WaitFor(int fd, short events, int wake, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fds[2] = {{fd, events, 0}, {wake, POLLIN, 0}};
    const int n = poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || fds[1].revents != 0) return false;
    return true;  // ready, or an error the next recv/send reports
  }
}

}  // namespace

void MetricsEndpoint::Serve() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;  // stopping
    if ((fds[0].revents & (POLLERR | POLLNVAL)) != 0) {
      Log(LogLevel::kError, "metrics_endpoint_failed", {{"port", port_}});
      return;
    }
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      // Out of descriptors (EMFILE, ENFILE, ENOBUFS): the connection stays queued, so wait a
      // moment rather than spin; EAGAIN: it was reset meanwhile.
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        pollfd wake = {wake_[0], POLLIN, 0};
        if (poll(&wake, 1, 100) > 0) return;
      }
      continue;
    }
    Respond(fd);
    close(fd);
  }
}

void MetricsEndpoint::Respond(int fd) const {
  // The whole exchange has 3 seconds, however slowly the client sends or reads.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  std::string request;
  char buffer[2048];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 8192) {
    if (!WaitFor(fd, POLLIN, wake_[0], deadline)) return;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) break;
    request.append(buffer, static_cast<size_t>(n));
  }
  const absl::string_view line = absl::string_view(request).substr(0, request.find("\r\n"));
  std::string status = "404 Not Found", type = "text/plain; charset=utf-8";
  std::string body = "tensord: metrics are at /metrics\n";
  if (request.find("\r\n\r\n") == std::string::npos) {
    status = "400 Bad Request";
    body = "tensord: malformed or oversized request\n";
  } else if (absl::StartsWith(line, "GET /metrics ") || absl::StartsWith(line, "GET /metrics?")) {
    status = "200 OK";
    type = "text/plain; version=0.0.4; charset=utf-8";
    body = Scrape();
  }
  const std::string reply =
      absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", type, "\r\nContent-Length: ",
                   body.size(), "\r\nConnection: close\r\n\r\n", body);
  absl::string_view left = reply;
  while (!left.empty()) {
    if (!WaitFor(fd, POLLOUT, wake_[0], deadline)) return;
    const ssize_t n = send(fd, left.data(), left.size(), MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return;
    left.remove_prefix(static_cast<size_t>(n));
  }
  shutdown(fd, SHUT_WR);
}

MetricsEndpoint::~MetricsEndpoint() {
  if (thread_.joinable()) {
    const char byte = 0;
    [[maybe_unused]] ssize_t n = write(wake_[1], &byte, 1);
    thread_.join();
  }
  for (int fd : {listen_fd_, wake_[0], wake_[1]}) {
    if (fd >= 0) close(fd);
  }
}

}  // namespace tensord::server
