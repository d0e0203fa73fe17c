// tensord-health: asks a tensord server for its grpc.health.v1 status, for container and
// orchestrator health checks (the image's HEALTHCHECK runs it).
//
//   tensord-health [--address=127.0.0.1:50051] [--timeout=2s] [--service=NAME]
//
// Exit status 0 when the server answers SERVING, 1 otherwise (NOT_SERVING, e.g. while it drains;
// unreachable; timed out), with one line saying which.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/byte_buffer.h"

ABSL_FLAG(std::string, address, "127.0.0.1:50051", "the server's address");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(2), "how long to wait for the answer");
ABSL_FLAG(std::string, service, "", "the service to ask about (empty: the whole server)");

namespace {

// HealthCheckRequest { string service = 1; } and HealthCheckResponse { ServingStatus status = 1; }
// (grpc/health/v1/health.proto), encoded by hand: two one-field messages.
std::string EncodeRequest(const std::string& service) {
  std::string out;
  if (service.empty()) return out;
  out.push_back(0x0a);
  out.push_back(static_cast<char>(service.size()));  // names under 128 bytes
  return out + service;
}

int DecodeStatus(const std::string& bytes) {
  if (bytes.size() >= 2 && bytes[0] == 0x08) return static_cast<unsigned char>(bytes[1]);
  return 0;  // the field left out: UNKNOWN
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("tensord-health [--address=HOST:PORT]: exit 0 when SERVING");
  absl::ParseCommandLine(argc, argv);
  const std::string address = absl::GetFlag(FLAGS_address);
  const std::string service = absl::GetFlag(FLAGS_service);
  if (service.size() > 127) {
    std::fprintf(stderr, "tensord-health: --service is too long\n");
    return 2;
  }
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       absl::ToChronoMicroseconds(absl::GetFlag(FLAGS_timeout)));
  const std::string request_bytes = EncodeRequest(service);
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1), response;
  grpc::CompletionQueue cq;
  auto call = stub.PrepareUnaryCall(&context, "/grpc.health.v1.Health/Check", request, &cq);
  call->StartCall();
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  if (!cq.Next(&tag, &ok) || !ok) {
    std::printf("tensord-health: %s: no answer\n", address.c_str());
    return 1;
  }
  if (!status.ok()) {
    std::printf("tensord-health: %s: %s\n", address.c_str(), status.error_message().c_str());
    return 1;
  }
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  const int serving = DecodeStatus(bytes);
  static const char* const kNames[] = {"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"};
  std::printf("tensord-health: %s: %s\n", address.c_str(),
              serving >= 0 && serving <= 3 ? kNames[serving] : "UNKNOWN");
  return serving == 1 ? 0 : 1;
}
