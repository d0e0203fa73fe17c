// Builds and runs a tensord gRPC server.
#ifndef TENSORD_SERVER_SERVER_H_
#define TENSORD_SERVER_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/core/device.h"
#include "grpcpp/server.h"
#include "server/handlers.h"
#include "server/grpc_service.h"
#include "server/limits.h"

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
  std::string auth_token;    // empty: no authentication
  std::string tls_cert_pem;  // empty: plaintext
  std::string tls_key_pem;
  std::string tls_client_ca_pem;  // set: clients must present a certificate signed by it (mTLS)
};

// A running server: the gRPC server, the standard health and reflection services, and the
// handlers (the service logic) with their sessions.
class TensordServer {
 public:
  static absl::StatusOr<std::unique_ptr<TensordServer>> Start(const ServerOptions& options);
  ~TensordServer();

  int port() const { return port_; }
  // Stops accepting calls, marks itself NOT_SERVING, lets calls in flight finish until
  // `deadline`, cancels the rest.
  void Shutdown(absl::Duration drain);
  void Wait();

 private:
  TensordServer() = default;

  std::unique_ptr<engine::Executor> executor_;
  std::unique_ptr<Handlers> handlers_;
  std::unique_ptr<TensordService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_SERVER_H_
