// Service benchmark, all in one process and one run:
//  1. round trip of one view op (RunOps) vs a bare gRPC echo of the same request and reply
//     sizes: p50 and p99;
//  2. pipelined view and compute ops per second on one session (RunOps batches, and the
//     Connect stream with several batches in flight);
//  3. upload and download GB/s, 1 MiB to 256 MiB, vs a raw TCP loopback stream of the same
//     bytes.
//
//   build/bench/service_bench [--quick] [--transfer | --round-trip] [--device=cuda]
//   build/bench/service_bench --address=HOST:PORT   # the round trip against another server
//
// --device: the sessions' device (their tensors, ops and transfers); the raw TCP and echo
// baselines are the same on every device.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "echo.grpc.pb.h"
#include "engine/cuda/cuda_backend.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/server_builder.h"
#include "server/server.h"
#include "tensord/client.h"
#include "tensord/v1/tensord.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
using tensord::client::Tensor;
namespace v1 = tensord::v1;

std::string g_device;  // --device: the benchmark sessions' device ("": the server's default)

v1::OpenSessionRequest OpenRequest() {
  v1::OpenSessionRequest r;
  r.set_device(g_device);
  return r;
}

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "benchmark failed: %s\n", what);
    std::exit(1);
  }
}

class EchoService final : public tensord::bench::Echo::CallbackService {
  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* ctx,
                                 const tensord::bench::EchoRequest* request,
                                 tensord::bench::EchoResponse* response) override {
    response->mutable_payload()->assign(static_cast<size_t>(request->reply_bytes()), 'e');
    auto* reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

std::string g_address;  // --address: the round trip against that server instead of this one's

std::shared_ptr<grpc::Channel> Channel(int port, const std::string& address = "") {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel(
      address.empty() ? "127.0.0.1:" + std::to_string(port) : address,
      grpc::InsecureChannelCredentials(), args);
}

// ---- 1. Round trip -----------------------------------------------------------------------------

void BenchRoundTrip(int tensord_port, int echo_port, int calls) {
  auto stub = v1::Tensord::NewStub(Channel(tensord_port, g_address));
  auto echo = tensord::bench::Echo::NewStub(Channel(echo_port));
  grpc::ClientContext open_ctx;
  v1::OpenSessionResponse opened;
  Check(stub->OpenSession(&open_ctx, OpenRequest(), &opened).ok(), "open session");
  // A tensor to view.
  {
    grpc::ClientContext ctx;
    v1::RunOpsRequest make;
    make.set_session_id(opened.session_id());
    v1::OpCall* call = make.add_ops();
    call->set_op("zeros");
    (*call->mutable_attrs())["size"].mutable_ints()->add_values(64);
    (*call->mutable_attrs())["size"].mutable_ints()->add_values(32);
    call->add_outputs(1);
    v1::RunOpsResponse made;
    Check(stub->RunOps(&ctx, make, &made).ok() && !made.has_error(), "make tensor");
  }
  // One view op per call; its output is released by the same call.
  v1::RunOpsRequest request;
  request.set_session_id(opened.session_id());
  v1::OpCall* call = request.add_ops();
  call->set_op("transpose");
  call->add_inputs(1);
  (*call->mutable_attrs())["dim0"].set_i(0);
  (*call->mutable_attrs())["dim1"].set_i(1);
  call->add_outputs(2);
  request.add_release_after(2);
  v1::RunOpsResponse sample;
  {
    grpc::ClientContext ctx;
    Check(stub->RunOps(&ctx, request, &sample).ok() && !sample.has_error(), "view op");
  }
  tensord::bench::EchoRequest echo_request;
  echo_request.set_payload(std::string(request.ByteSizeLong(), 'p'));
  echo_request.set_reply_bytes(static_cast<int32_t>(sample.ByteSizeLong()));

  std::vector<double> op_us, echo_us;
  for (int round = 0; round < 10; ++round) {  // interleaved, so drift hits both alike
    for (int i = 0; i < calls / 10; ++i) {
      grpc::ClientContext ctx;
      v1::RunOpsResponse response;
      auto t0 = Clock::now();
      Check(stub->RunOps(&ctx, request, &response).ok(), "view op");
      op_us.push_back(Since(t0) * 1e6);
    }
    for (int i = 0; i < calls / 10; ++i) {
      grpc::ClientContext ctx;
      tensord::bench::EchoResponse response;
      auto t0 = Clock::now();
      Check(echo->Echo(&ctx, echo_request, &response).ok(), "echo");
      echo_us.push_back(Since(t0) * 1e6);
    }
  }
  const double op50 = Percentile(op_us, 0.5), op99 = Percentile(op_us, 0.99);
  const double e50 = Percentile(echo_us, 0.5), e99 = Percentile(echo_us, 0.99);
  std::printf("1. Round trip of one view op vs a bare gRPC echo (%zu-byte request, %zu-byte "
              "reply; %d calls each)%s%s:\n",
              request.ByteSizeLong(), sample.ByteSizeLong(), calls,
              g_address.empty() ? "" : "; the view op against ", g_address.c_str());
  std::printf("   %-26s p50 %7.1f us   p99 %7.1f us\n", "RunOps(transpose)", op50, op99);
  std::printf("   %-26s p50 %7.1f us   p99 %7.1f us\n", "bare echo", e50, e99);
  std::printf("   ratio                      p50 %7.2fx      p99 %7.2fx   (goal <= 1.3x)\n",
              op50 / e50, op99 / e99);
  double op_total_us = 0;
  for (double us : op_us) op_total_us += us;
  // One caller's throughput (what tensord-load --sessions=1 --outstanding=1 compares with).
  std::printf("   one caller                 %.0f view ops/s\n",
              static_cast<double>(op_us.size()) / (op_total_us * 1e-6));
}

// ---- 2. Pipelined ops -------------------------------------------------------------------------

void BenchPipelined(int port, int batches) {
  auto stub = v1::Tensord::NewStub(Channel(port));
  grpc::ClientContext open_ctx;
  v1::OpenSessionResponse opened;
  Check(stub->OpenSession(&open_ctx, OpenRequest(), &opened).ok(), "open session");
  const std::string session = opened.session_id();
  {
    grpc::ClientContext ctx;
    v1::RunOpsRequest make;
    make.set_session_id(session);
    v1::OpCall* call = make.add_ops();
    call->set_op("zeros");
    (*call->mutable_attrs())["size"].mutable_ints()->add_values(16);
    call->add_outputs(1);
    v1::RunOpsResponse made;
    Check(stub->RunOps(&ctx, make, &made).ok() && !made.has_error(), "make tensor");
  }
  constexpr int kOps = 1000;
  uint64_t next_id = 100;
  // Half view ops (transpose, metadata only), half compute ops (fill_, queued on the stream).
  auto make_batch = [&](bool omit) {
    v1::RunOpsRequest r;
    r.set_session_id(session);
    r.set_omit_metadata(omit);
    for (int i = 0; i < kOps; ++i) {
      v1::OpCall* call = r.add_ops();
      call->add_inputs(1);
      if (i % 2 == 0) {
        call->set_op("t");
        call->add_outputs(next_id);
        r.add_release_after(next_id++);
      } else {
        call->set_op("fill_");
        (*call->mutable_attrs())["value"].set_f(static_cast<double>(i));
      }
    }
    return r;
  };
  auto sync = [&] {
    grpc::ClientContext ctx;
    v1::SynchronizeRequest s;
    s.set_session_id(session);
    v1::SynchronizeResponse done;
    Check(stub->Synchronize(&ctx, s, &done).ok(), "synchronize");
  };
  std::printf("\n2. Pipelined ops on one session (batches of %d: half views, half fill_), "
              "synchronize included:\n", kOps);
  for (bool omit : {false, true}) {
    auto t0 = Clock::now();
    for (int b = 0; b < batches; ++b) {
      grpc::ClientContext ctx;
      v1::RunOpsResponse response;
      v1::RunOpsRequest r = make_batch(omit);
      Check(stub->RunOps(&ctx, r, &response).ok() && !response.has_error(), "batch");
    }
    sync();
    const double s = Since(t0);
    std::printf("   RunOps, %-22s %9.0f ops/s  (goal >= 100000)\n",
                omit ? "metadata omitted:" : "metadata returned:", batches * kOps / s);
  }
  // 10,000 small compute ops queued (add_ of a number: planned, queued on the stream, run by
  // the stream's worker), then one synchronize: the amortised cost of one op.
  {
    constexpr int kSmall = 10000, kPerBatch = 1000;
    double best = 1e30;
    for (int round = 0; round < 3; ++round) {
      auto t0 = Clock::now();
      for (int b = 0; b < kSmall / kPerBatch; ++b) {
        v1::RunOpsRequest r;
        r.set_session_id(session);
        r.set_omit_metadata(true);
        for (int i = 0; i < kPerBatch; ++i) {
          v1::OpCall* call = r.add_ops();
          call->set_op("add_");
          call->add_inputs(1);
          (*call->mutable_attrs())["other"].set_i(1);
        }
        grpc::ClientContext ctx;
        v1::RunOpsResponse response;
        Check(stub->RunOps(&ctx, r, &response).ok() && !response.has_error(), "add_ batch");
      }
      sync();
      best = std::min(best, Since(t0));
    }
    std::printf("   %-31s %9.2f us/op amortised (goal <= 10)\n",
                "10,000 add_(1), then sync:", best / kSmall * 1e6);
  }
  // The Connect stream with up to 8 batches in flight.
  {
    grpc::ClientContext ctx;
    auto stream = stub->Connect(&ctx);
    v1::ConnectRequest attach;
    attach.set_seq(0);
    attach.set_attach_session_id(session);
    Check(stream->Write(attach), "attach");
    v1::ConnectResponse response;
    Check(stream->Read(&response) && !response.has_error(), "attached");
    std::vector<v1::ConnectRequest> requests(batches);
    for (int b = 0; b < batches; ++b) {
      requests[b].set_seq(static_cast<uint64_t>(b + 1));
      *requests[b].mutable_run_ops() = make_batch(true);
      requests[b].mutable_run_ops()->clear_session_id();
    }
    auto t0 = Clock::now();
    std::thread writer([&] {
      for (auto& r : requests) stream->Write(r);
      stream->WritesDone();
    });
    int received = 0;
    while (received < batches && stream->Read(&response)) {
      Check(!response.ran().has_error(), "stream batch");
      ++received;
    }
    writer.join();
    sync();
    const double s = Since(t0);
    stream->Finish();
    std::printf("   %-31s %9.0f ops/s\n", "Connect stream, pipelined:", batches * kOps / s);
  }
}

// ---- 3. Bulk transfer -------------------------------------------------------------------------

// Raw TCP over loopback: `bytes` bytes one way, a one-byte answer the other. The sender writes
// from `from` and the receiver reads into `to`, each in 1 MiB calls: with full-size buffers this
// moves the same bytes between the same memory as tensord does; with 1 MiB buffers reused for
// every call it is the cache-resident best case.
double RawTcpSeconds(int64_t bytes, bool upload, const char* from, int64_t from_size, char* to,
                     int64_t to_size) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  Check(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0, "bind");
  socklen_t len = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  listen(listener, 1);
  constexpr int64_t kCall = 1 << 20;
  auto send_all = [&](int fd) {
    for (int64_t sent = 0; sent < bytes;) {
      const ssize_t n = write(fd, from + sent % from_size,
                              static_cast<size_t>(std::min({bytes - sent, kCall, from_size - sent % from_size})));
      Check(n > 0, "raw write");
      sent += n;
    }
  };
  auto receive_all = [&](int fd) {
    for (int64_t got = 0; got < bytes;) {
      const ssize_t n = read(fd, to + got % to_size,
                             static_cast<size_t>(std::min({bytes - got, kCall, to_size - got % to_size})));
      Check(n > 0, "raw read");
      got += n;
    }
  };
  std::thread server([&] {
    int fd = accept(listener, nullptr, nullptr);
    char one = 0;
    if (upload) {
      receive_all(fd);
      (void)!write(fd, &one, 1);
    } else {
      (void)!read(fd, &one, 1);
      send_all(fd);
    }
    close(fd);
  });
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  Check(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0, "connect");
  char one = 0;
  auto t0 = Clock::now();
  if (upload) {
    send_all(fd);
    (void)!read(fd, &one, 1);
  } else {
    (void)!write(fd, &one, 1);
    receive_all(fd);
  }
  const double s = Since(t0);
  server.join();
  close(fd);
  close(listener);
  return s;
}

void BenchTransfer(int port, bool quick) {
  tensord::client::SessionOptions options;
  options.device = g_device;
  auto session = tensord::client::Session::Open(Channel(port), options);
  Check(session.ok(), "open session");
  const int reps = quick ? 3 : 5;
  std::printf("\n3. Upload and download vs raw TCP loopback (same bytes; best of %d):\n", reps);
  std::printf("   raw TCP = the same bytes between full-size buffers (the same memory traffic);\n"
              "   cached = raw TCP through one reused 1 MiB buffer per side, for reference\n");
  {
    std::vector<double> up_us, down_us;
    float one = 1;
    for (int i = 0; i < 300; ++i) {
      auto t0 = Clock::now();
      absl::StatusOr<Tensor> t = session->from_bytes({1}, tensord::client::DType::kFloat32, &one, 4);
      up_us.push_back(Since(t0) * 1e6);
      t0 = Clock::now();
      float back = 0;
      Check(t.ok() && t->ReadInto(&back, 4).ok() && back == 1, "small transfer");
      down_us.push_back(Since(t0) * 1e6);
    }
    std::sort(up_us.begin(), up_us.end());
    std::sort(down_us.begin(), down_us.end());
    std::printf("   4-byte upload p50 %.1f us, download p50 %.1f us (the fixed cost of a transfer)\n",
                up_us[150], down_us[150]);
  }
  std::printf("   %8s  %10s %10s %6s %6s   %10s %10s %6s %6s\n", "size", "upload", "raw TCP",
              "ratio", "cached", "download", "raw TCP", "ratio", "cached");
  std::vector<int64_t> sizes_mib = {1, 4, 16, 64, 256};
  if (quick) sizes_mib = {1, 16};
  // Sessions on a GPU: up to 1 GiB (the CUDA backend issue's figure), quick or not.
  if (!g_device.empty() && g_device != "cpu") sizes_mib = {1, 64, 1024};
  std::vector<char> small_from(1 << 20, 'x'), small_to(1 << 20);
  for (int64_t mib : sizes_mib) {
    const int64_t bytes = mib << 20;
    // Every buffer is allocated and faulted in once, before timing.
    std::string data(static_cast<size_t>(bytes), '\x3f');
    std::string back(static_cast<size_t>(bytes), '\0');
    std::string raw_to(static_cast<size_t>(bytes), '\0');
    double up = 1e9, down = 1e9, tcp_up = 1e9, tcp_down = 1e9, cached_up = 1e9, cached_down = 1e9;
    for (int rep = 0; rep < reps; ++rep) {
      auto t0 = Clock::now();
      absl::StatusOr<Tensor> t =
          session->from_bytes({bytes / 4}, tensord::client::DType::kFloat32, data);
      up = std::min(up, Since(t0));
      Check(t.ok(), "upload");
      t0 = Clock::now();
      absl::StatusOr<int64_t> got = t->ReadInto(back.data(), bytes);
      down = std::min(down, Since(t0));
      Check(got.ok() && *got == bytes && back == data, "download");
      tcp_up = std::min(tcp_up, RawTcpSeconds(bytes, true, data.data(), bytes, raw_to.data(), bytes));
      tcp_down = std::min(tcp_down, RawTcpSeconds(bytes, false, data.data(), bytes, raw_to.data(), bytes));
      cached_up = std::min(cached_up, RawTcpSeconds(bytes, true, small_from.data(), 1 << 20,
                                                    small_to.data(), 1 << 20));
      cached_down = std::min(cached_down, RawTcpSeconds(bytes, false, small_from.data(), 1 << 20,
                                                        small_to.data(), 1 << 20));
    }
    const double g = 1e9;
    std::printf("   %5ld MiB  %5.2f GB/s %5.2f GB/s %5.2fx %5.2fx   %5.2f GB/s %5.2f GB/s %5.2fx %5.2fx\n",
                static_cast<long>(mib), bytes / up / g, bytes / tcp_up / g, tcp_up / up,
                cached_up / up, bytes / down / g, bytes / tcp_down / g, tcp_down / down,
                cached_down / down);
  }
  std::printf("   (goal: ratio >= 0.5x raw TCP)\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, transfer_only = false, round_trip_only = false;
  for (int i = 1; i < argc; ++i) {
    quick |= std::string(argv[i]) == "--quick";
    round_trip_only |= std::string(argv[i]) == "--round-trip";
    transfer_only |= std::string(argv[i]) == "--transfer";
    if (std::string(argv[i]).rfind("--device=", 0) == 0) g_device = std::string(argv[i]).substr(9);
    if (std::string(argv[i]).rfind("--address=", 0) == 0) {
      g_address = std::string(argv[i]).substr(10);
      round_trip_only = true;
    }
  }
  tensord::server::TuneMallocForReuse();  // as the tensord binary does
  // The machine's GPUs, each with a backend, as the tensord binary registers them at start.
  std::string no_gpu_reason;
  if (tensord::engine::cuda::RegisterBackends(&no_gpu_reason).empty() && !g_device.empty() &&
      g_device != "cpu") {
    std::fprintf(stderr, "--device=%s: no GPU on this machine (%s)\n", g_device.c_str(),
                 no_gpu_reason.c_str());
    return 1;
  }
  tensord::server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.limits.max_message_bytes = 64 << 20;
  auto server = tensord::server::TensordServer::Start(options);
  Check(server.ok(), "start tensord");

  EchoService echo_service;
  grpc::ServerBuilder builder;
  int echo_port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &echo_port);
  builder.RegisterService(&echo_service);
  auto echo_server = builder.BuildAndStart();
  Check(echo_server != nullptr, "start echo");

  std::printf("tensord service benchmark (server, echo server and clients in this process)%s%s\n\n",
              g_device.empty() ? "" : ", sessions on ", g_device.c_str());
  if (!transfer_only) {
    BenchRoundTrip((*server)->port(), echo_port, quick ? 2000 : 20000);
    if (round_trip_only) {
      echo_server->Shutdown();
      return 0;
    }
    BenchPipelined((*server)->port(), quick ? 20 : 200);
  }
  BenchTransfer((*server)->port(), quick);
  echo_server->Shutdown();
  return 0;
}
