// A device lost for good (CUDA's context after a kernel fault; engine/runtime/device_health.h)
// turns the server's health to NOT_SERVING on its main and health ports, so that orchestrators
// restart it. The loss is reported as the CUDA backend reports it; no GPU is needed.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/core/device.h"
#include "engine/runtime/device_health.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "server/server.h"

namespace tensord::server {
namespace {

grpc::health::v1::HealthCheckResponse::ServingStatus Health(int port) {
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                     grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&ctx, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.status();
}

TEST(DeviceLostTest, ALostDeviceMakesTheServerNotServing) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.health_listen = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<TensordServer>> server = TensordServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port(), health_port = (*server)->health_port();
  EXPECT_EQ(Health(port), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ(Health(health_port), grpc::health::v1::HealthCheckResponse::SERVING);

  const engine::Device gpu{engine::DeviceType::kCUDA, 0};
  engine::ReportDeviceLost(gpu, "cudaErrorIllegalAddress (an illegal memory access was encountered)");
  engine::ReportDeviceLost(gpu, "a second report of the same device is dropped");
  EXPECT_EQ(Health(port), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(Health(health_port), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  ASSERT_EQ(engine::LostDevices().size(), 1u);
  EXPECT_EQ(engine::LostDevices()[0].device, gpu);
  EXPECT_NE(engine::LostDevices()[0].reason.find("cudaErrorIllegalAddress"), std::string::npos);

  // A server started after the loss starts NOT_SERVING: the process cannot use the device.
  absl::StatusOr<std::unique_ptr<TensordServer>> later = TensordServer::Start(options);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(Health((*later)->port()), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
}

}  // namespace
}  // namespace tensord::server
