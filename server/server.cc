#include "server/server.h"

#include <malloc.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "engine/core/status_macros.h"
#include "engine/runtime/device_health.h"
#include "server/log.h"
#include "server/reflection.h"
#include "grpcpp/server_builder.h"

namespace tensord::server {

void TuneMallocForReuse() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}


absl::StatusOr<std::unique_ptr<TensordServer>> TensordServer::Start(
    const ServerOptions& options) {
  if (!ValidReplicaName(options.replica)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "replica name '", options.replica, "' is not 1-63 of [A-Za-z0-9._-]"));
  }
  auto server = std::unique_ptr<TensordServer>(new TensordServer());
  const int threads = options.executor_threads > 0
                          ? options.executor_threads
                          : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  server->executor_ = std::make_unique<engine::Executor>(threads);
  server->handlers_ =
      std::make_unique<Handlers>(options.replica, options.limits, options.device,
                                 server->executor_.get());
  server->service_ = std::make_unique<TensordService>(
      server->handlers_.get(),
      Authenticator(options.tokens, /*mtls=*/!options.tls_client_ca_pem.empty()));

  grpc::EnableDefaultHealthCheckService(true);
  server->reflection_ = std::make_unique<ReflectionService>(
      std::vector<std::string>{"tensord.v1.Tensord", "grpc.health.v1.Health",
                               "grpc.reflection.v1alpha.ServerReflection"},
      server->service_.get());
  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (options.tls_cert_pem.empty()) {
    credentials = grpc::InsecureServerCredentials();
  } else {
    grpc::SslServerCredentialsOptions ssl(
        options.tls_client_ca_pem.empty()
            ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
            : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = options.tls_client_ca_pem;
    ssl.pem_key_cert_pairs.push_back({options.tls_key_pem, options.tls_cert_pem});
    credentials = grpc::SslServerCredentials(ssl);
  }
  builder.AddListeningPort(options.listen, credentials, &server->port_);
  const int max_message = static_cast<int>(
      std::min<int64_t>(options.limits.max_message_bytes, std::numeric_limits<int>::max()));
  builder.SetMaxReceiveMessageSize(max_message);
  builder.SetMaxSendMessageSize(max_message);
  // Client keepalive (every 30 s, idle connections included) is welcome: a client that stops
  // answering pings is noticed, and its calls end. (gRPC's default refuses pings more often than
  // every 5 minutes without data, and closes the connection with "too_many_pings".)
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 20000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.RegisterService(server->service_.get());
  builder.RegisterService(server->reflection_.get());
  // Every call's latency and status, for the metrics.
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(RpcMetricsInterceptorCreator());
  builder.experimental().SetInterceptorCreators(std::move(creators));
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  server->server_->GetHealthCheckService()->SetServingStatus(true);

  if (!options.health_listen.empty()) {
    grpc::ServerBuilder health;
    health.AddListeningPort(options.health_listen, grpc::InsecureServerCredentials(),
                            &server->health_port_);
    // Other methods: UNIMPLEMENTED (and a callback service, which gRPC needs to start a server
    // whose only service, the default health one, is added as it starts).
    health.RegisterCallbackGenericService(&server->unimplemented_);
    server->health_server_ = health.BuildAndStart();
    if (!server->health_server_ || server->health_port_ == 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", options.health_listen, " (--health-listen)"));
    }
    server->health_server_->GetHealthCheckService()->SetServingStatus(true);
  }
  if (!options.metrics_listen.empty()) {
    TENSORD_ASSIGN_OR_RETURN(
        server->metrics_,
        MetricsEndpoint::Start(options.metrics_listen, &server->handlers_->sessions()));
  }
  // A device lost for good (a CUDA context after a kernel fault: every later call on it fails
  // until the process restarts): NOT_SERVING on both ports, so that orchestrators restart it.
  TensordServer* self = server.get();
  const auto on_lost = [self](const engine::LostDevice& lost) {
    Log(LogLevel::kError, "device_lost",
        {{"device", lost.device.ToString()}, {"reason", lost.reason},
         {"health", "NOT_SERVING: this server must be restarted"}});
    self->server_->GetHealthCheckService()->SetServingStatus(false);
    if (self->health_server_) self->health_server_->GetHealthCheckService()->SetServingStatus(false);
  };
  server->device_lost_listener_ = engine::AddDeviceLostListener(on_lost);
  for (const engine::LostDevice& lost : engine::LostDevices()) on_lost(lost);
  return server;
}

int TensordServer::metrics_port() const { return metrics_ ? metrics_->port() : 0; }

void TensordServer::Shutdown(absl::Duration drain) {
  if (!server_) return;
  // NOT_SERVING on both ports first: routers and readiness probes stop sending new work while
  // calls in flight finish. The health port keeps answering until the drain is over.
  server_->GetHealthCheckService()->SetServingStatus(false);
  if (health_server_) health_server_->GetHealthCheckService()->SetServingStatus(false);
  server_->Shutdown(absl::ToChronoTime(absl::Now() + drain));
}

void TensordServer::Wait() {
  if (server_) server_->Wait();
  if (health_server_) {
    health_server_->Shutdown(absl::ToChronoTime(absl::Now()));
    health_server_->Wait();
  }
}

TensordServer::~TensordServer() {
  if (device_lost_listener_ != 0) engine::RemoveDeviceLostListener(device_lost_listener_);
  if (server_) {
    server_->Shutdown(absl::ToChronoTime(absl::Now()));
    server_->Wait();
  }
  if (health_server_) {
    health_server_->Shutdown(absl::ToChronoTime(absl::Now()));
    health_server_->Wait();
  }
  metrics_.reset();
  // Sessions (and their queued work) go before the executor that runs it.
  handlers_.reset();
  executor_.reset();
}

}  // namespace tensord::server
