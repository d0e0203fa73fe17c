// The server's Prometheus metrics (prometheus-cpp), served over HTTP on --metrics-listen.
//
// Counters and histograms are process-wide (ServerMetrics()): ops and op errors by op, RPCs by
// method with their latency, transfer bytes, sessions opened and closed. Gauges are read from a
// server's state when Prometheus scrapes (StateCollector): sessions, tensors, bytes per device,
// queued ops. Label values come from fixed sets (op names of the registry, method names, status
// code names, devices), never from a request, and never carry a session's secret.
#ifndef TENSORD_SERVER_METRICS_H_
#define TENSORD_SERVER_METRICS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/server_interceptor.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace tensord::server {

class SessionStore;

class Metrics {
 public:
  Metrics();

  // One op of a batch ran (planned and queued) or failed with `status`.
  void CountOp(absl::string_view op, const absl::Status& status);
  // An RPC of `method` (the service's snake_case name) ended with `status` after `seconds`.
  void CountRpc(absl::string_view method, const absl::Status& status, double seconds);
  void CountUploadBytes(int64_t bytes) { upload_bytes_->Increment(static_cast<double>(bytes)); }
  void CountDownloadBytes(int64_t bytes) {
    download_bytes_->Increment(static_cast<double>(bytes));
  }
  void CountSessionOpened() { sessions_opened_->Increment(); }
  void CountSessionEnded(bool expired) {
    (expired ? sessions_expired_ : sessions_closed_)->Increment();
  }

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* op_family_;
  prometheus::Family<prometheus::Counter>* op_error_family_;
  prometheus::Family<prometheus::Histogram>* rpc_family_;
  prometheus::Family<prometheus::Counter>* rpc_error_family_;
  // Built once (every registry op and every method), then only read: no lock on the hot path.
  absl::flat_hash_map<std::string, prometheus::Counter*> ops_;
  absl::flat_hash_map<std::string, prometheus::Histogram*> rpcs_;
  prometheus::Counter* unknown_op_;
  prometheus::Counter* upload_bytes_;
  prometheus::Counter* download_bytes_;
  prometheus::Counter* sessions_opened_;
  prometheus::Counter* sessions_closed_;
  prometheus::Counter* sessions_expired_;
};

// The process's metrics.
Metrics& ServerMetrics();

// Records every RPC's latency and status (ServerBuilder::experimental().SetInterceptorCreators),
// and logs unary calls that took `SetSlowCallSeconds` (1 s by default) or longer.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
RpcMetricsInterceptorCreator();
void SetSlowCallSeconds(double seconds);

// Seconds since `start`, for CountRpc.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Serves ServerMetrics() and the gauges of `sessions` at http://<address>/metrics.
// INVALID_ARGUMENT / UNAVAILABLE when the address cannot be served.
class MetricsEndpoint {
 public:
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const std::string& address,
                                                                SessionStore* sessions);
  ~MetricsEndpoint();
  int port() const { return port_; }
  // The exposition text a scrape returns now.
  std::string Scrape() const;

 private:
  MetricsEndpoint() = default;
  void Serve();
  void Respond(int fd) const;  // one request on `fd`

  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::thread thread_;
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_METRICS_H_
