// Builds and runs a tensord gRPC server.
#ifndef TENSORD_SERVER_SERVER_H_
#define TENSORD_SERVER_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/core/device.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/server.h"
#include "server/auth.h"
#include "server/handlers.h"
#include "server/grpc_service.h"
#include "server/limits.h"
#include "server/metrics.h"

namespace tensord::server {

// Makes glibc malloc serve large blocks from the heap and keep freed memory for reuse (up to
// 1 GiB), so gRPC's per-message buffers do not fault in fresh pages on every call. Process-wide:
// call once, early, in programs that host a server.
void TuneMallocForReuse();

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";
  // This server's name in session ids ("<replica>/<n>/<secret>"), which a router maps to its
  // address: in a Kubernetes StatefulSet, the pod name. ValidReplicaName.
  std::string replica = "tensord";
  engine::Device device = engine::kCpu;
  ServerLimits limits;
  int executor_threads = 0;  // 0: one per core (at least 2)
  // Bearer tokens, one per tenant (auth.h); empty: no token needed.
  std::vector<TenantToken> tokens;
  std::string tls_cert_pem;  // empty: plaintext
  std::string tls_key_pem;
  std::string tls_client_ca_pem;  // set: clients must present a certificate signed by it (mTLS)
  // Set: a second, plaintext port serving only grpc.health.v1 (no token, no reflection), for
  // orchestrators' probes (Kubernetes' gRPC probes speak neither TLS nor tokens).
  std::string health_listen;
  // Set: Prometheus metrics over HTTP at http://<metrics_listen>/metrics.
  std::string metrics_listen;
};

// A running server: the gRPC server, the standard health and reflection services, and the
// handlers (the service logic) with their sessions.
class ReflectionService;

class TensordServer {
 public:
  static absl::StatusOr<std::unique_ptr<TensordServer>> Start(const ServerOptions& options);
  ~TensordServer();

  int port() const { return port_; }
  int health_port() const { return health_port_; }    // 0: none
  int metrics_port() const;                            // 0: none
  // Stops accepting calls, marks itself NOT_SERVING, lets calls in flight finish until
  // `deadline`, cancels the rest.
  void Shutdown(absl::Duration drain);
  void Wait();

 private:
  TensordServer() = default;

  std::unique_ptr<engine::Executor> executor_;
  std::unique_ptr<Handlers> handlers_;
  std::unique_ptr<TensordService> service_;
  std::unique_ptr<ReflectionService> reflection_;
  std::unique_ptr<grpc::Server> server_;
  grpc::CallbackGenericService unimplemented_;  // the health port's other methods
  std::unique_ptr<grpc::Server> health_server_;
  std::unique_ptr<MetricsEndpoint> metrics_;
  int port_ = 0;
  int health_port_ = 0;
  int device_lost_listener_ = 0;  // engine::AddDeviceLostListener's id, 0 before Start
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_SERVER_H_
