// tensord: the gRPC tensor compute server.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/internal/program_name.h"
#include "absl/flags/internal/usage.h"  // FlagsHelp: --help that exits 0
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "engine/cpu/blas_core.h"
#include "engine/runtime/backend.h"
#include "engine/cuda/cuda_backend.h"
#include "server/handlers.h"
#include "server/log.h"
#include "server/server.h"
#include "server/session_store.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "address:port to serve on (port 0: any free)");
ABSL_FLAG(std::string, replica, "",
          "this server's name in session ids, which a router maps to its address (empty: the "
          "host name; in a Kubernetes StatefulSet that is the pod name, tensord-0, …)");
ABSL_FLAG(std::string, health_listen, "",
          "address:port of a second, plaintext port serving only grpc.health.v1 (no token, no "
          "TLS, no reflection), for orchestrators' probes; NOT_SERVING once a drain starts");
ABSL_FLAG(std::string, metrics_listen, "",
          "address:port to serve Prometheus metrics on, over HTTP at /metrics (empty: none)");
ABSL_FLAG(std::string, log_level, "info", "least level logged: debug, info, warning or error");
ABSL_FLAG(std::string, log_format, "text",
          "text, or json (one object per line: session opened/closed/expired, every error with "
          "its id, slow calls, drain progress)");
ABSL_FLAG(double, slow_call_seconds, 1.0, "unary calls that take this long are logged");
ABSL_FLAG(std::string, device, "cpu", "default device of new sessions: cpu, cuda or auto");
ABSL_FLAG(absl::Duration, session_ttl, absl::Seconds(300),
          "a session with no call for this long is closed and its memory freed");
ABSL_FLAG(int64_t, max_sessions, 1024, "sessions open at once");
ABSL_FLAG(int64_t, max_session_bytes, int64_t{4} << 30, "tensor bytes one session may hold");
ABSL_FLAG(int64_t, max_server_bytes, int64_t{16} << 30, "tensor bytes all sessions may hold");
ABSL_FLAG(int64_t, max_session_gpu_bytes, 0,
          "tensor bytes one session may hold on each GPU (0: the GPU's memory)");
ABSL_FLAG(int64_t, max_server_gpu_bytes, 0,
          "tensor bytes all sessions may hold on each GPU (0: the GPU's memory)");
ABSL_FLAG(int64_t, max_message_bytes, int64_t{64} << 20, "largest gRPC message, each way");
ABSL_FLAG(int64_t, max_queued_ops, 1 << 16, "ops waiting on one stream");
ABSL_FLAG(int64_t, max_batch_ops, 1 << 17, "ops in one RunOps batch");
ABSL_FLAG(int64_t, max_profiled_ops, 1 << 16,
          "ops one profile of a session records (Profile); later ones are counted as dropped");
ABSL_FLAG(int64_t, max_streams, 256, "streams per session");
ABSL_FLAG(int64_t, max_queued_calls, 1024,
          "calls of one session that may wait behind an earlier one still waiting for data");
ABSL_FLAG(int64_t, chunk_bytes, 1 << 20, "bytes per Download message");
ABSL_FLAG(int64_t, pool_idle_floor_bytes, int64_t{256} << 20,
          "host memory an idle server keeps cached for reuse; the rest goes back to the system "
          "within seconds");
ABSL_FLAG(int, threads, 0, "executor threads (0: one per core, at least 2)");
ABSL_FLAG(absl::Duration, drain_timeout, absl::Seconds(10),
          "on SIGTERM, how long calls in flight may take to finish");
ABSL_FLAG(std::string, auth_token_file, "",
          "file of bearer tokens, one line per tenant: '<tenant> <token>' (or '<token>' for the "
          "tenant 'default'); every call must present one (empty: no authentication; with "
          "--tls_client_ca and no tokens, a client certificate's common name is its tenant)");
ABSL_FLAG(int64_t, max_tenant_sessions, 0, "sessions one tenant may hold at once (0: no limit)");
ABSL_FLAG(int64_t, max_tenant_bytes, 0,
          "tensor bytes one tenant may hold, on the host and on each GPU (0: no limit)");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "", "PEM CA: require client certificates (mTLS)");

namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

int signal_pipe[2] = {-1, -1};

void OnSignal(int signal_number) {
  const unsigned char byte = static_cast<unsigned char>(signal_number);
  [[maybe_unused]] ssize_t n = write(signal_pipe[1], &byte, 1);
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "tensord: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Fresh pages fault in slowly (far slower than copying into reused memory): keep freed
  // message buffers in the heap for reuse instead of returning each one to the kernel.
  tensord::server::TuneMallocForReuse();
  absl::SetProgramUsageMessage(
      "tensord [flags]: serve tensors over gRPC (flags may be spelled --session-ttl or --session_ttl)");
  // --help lists tensord's own flags (Abseil's default keeps only those of a file named after
  // the program); --version prints the version.
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "server/") || absl::StrContains(file, "engine/");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  usage.version_string = [] { return std::string("tensord " TENSORD_VERSION "\n"); };
  absl::SetFlagsUsageConfig(usage);
  // Flag names are accepted with dashes as well as underscores: --session-ttl=60s.
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> arg_ptrs;
  for (std::string& arg : args) {
    if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      const size_t end = std::min(arg.find('='), arg.size());
      std::replace(arg.begin() + 2, arg.begin() + static_cast<std::ptrdiff_t>(end), '-', '_');
    }
    arg_ptrs.push_back(arg.data());
  }
  // --help and -h: the flags, and exit 0 (Abseil's own --help exits 1).
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      absl::flags_internal::SetProgramInvocationName("tensord");
      std::ostringstream out;
      absl::flags_internal::FlagsHelp(out, "server/", absl::flags_internal::HelpFormat::kHumanReadable,
                                      absl::ProgramUsageMessage());
      std::fputs(out.str().c_str(), stdout);
      return 0;
    }
  }
  absl::ParseCommandLine(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  if (absl::Status s = tensord::server::SetLogLevel(absl::GetFlag(FLAGS_log_level)); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (absl::Status s = tensord::server::SetLogFormat(absl::GetFlag(FLAGS_log_format)); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  tensord::server::SetSlowCallSeconds(absl::GetFlag(FLAGS_slow_call_seconds));
  // The version clients are checked against must itself be one (MAJOR.MINOR.PATCH).
  if (!tensord::server::CheckClientVersion(TENSORD_VERSION).ok()) {
    return Fail("this build's version " TENSORD_VERSION " is not MAJOR.MINOR.PATCH");
  }

  // SIGTERM/SIGINT may arrive on any thread: the handler only writes to a pipe that the main
  // thread waits on (async-signal-safe), so it works whichever thread takes the signal.
  if (pipe(signal_pipe) != 0) return Fail("cannot create the signal pipe");
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);

  tensord::server::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.replica = absl::GetFlag(FLAGS_replica);
  options.health_listen = absl::GetFlag(FLAGS_health_listen);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  if (options.replica.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof(host) - 1) == 0) options.replica = host;
    // A host name with other characters (rare) gives the plain default.
    if (!tensord::server::ValidReplicaName(options.replica)) options.replica = "tensord";
  }
  // The machine's GPUs, each with a backend, before any session can name one. (On stderr: the
  // first line on stdout is the listening address, which launchers read.)
  std::string no_gpu_reason;
  const std::vector<tensord::engine::cuda::DeviceInfo> gpus =
      tensord::engine::cuda::RegisterBackends(&no_gpu_reason);
  using tensord::server::Log;
  using tensord::server::LogLevel;
  for (const auto& gpu : gpus) {
    Log(LogLevel::kInfo, "gpu",
        {{"device", gpu.device.ToString()}, {"name", gpu.name},
         {"memory_bytes", gpu.total_memory},
         {"compute_capability", absl::StrCat(gpu.major, ".", gpu.minor)}});
  }
  if (gpus.empty()) Log(LogLevel::kInfo, "cpu_only", {{"reason", no_gpu_reason}});
  const std::string device = absl::GetFlag(FLAGS_device);
  if (device == "auto") {
    const tensord::engine::Device cuda{tensord::engine::DeviceType::kCUDA, 0};
    options.device = tensord::engine::BackendFor(cuda).ok() ? cuda : tensord::engine::kCpu;
  } else {
    auto parsed = tensord::engine::ParseDevice(device);
    if (!parsed.ok()) return Fail(std::string(parsed.status().message()));
    if (!tensord::engine::BackendFor(*parsed).ok()) {
      return Fail(absl::StrCat("--device=", device, ": no such device on this machine",
                               gpus.empty() ? absl::StrCat(" (", no_gpu_reason, ")") : ""));
    }
    options.device = *parsed;
  }
  auto& limits = options.limits;
  limits.session_ttl = absl::GetFlag(FLAGS_session_ttl);
  limits.max_sessions = absl::GetFlag(FLAGS_max_sessions);
  limits.max_tenant_sessions = absl::GetFlag(FLAGS_max_tenant_sessions);
  limits.max_tenant_bytes = absl::GetFlag(FLAGS_max_tenant_bytes);
  limits.max_session_bytes = absl::GetFlag(FLAGS_max_session_bytes);
  limits.max_server_bytes = absl::GetFlag(FLAGS_max_server_bytes);
  // GPU limits default to the smallest GPU's memory (device OOM is RESOURCE_EXHAUSTED anyway).
  int64_t gpu_memory = 0;
  for (const auto& gpu : gpus) {
    if (gpu_memory == 0 || gpu.total_memory < gpu_memory) gpu_memory = gpu.total_memory;
  }
  if (gpu_memory == 0) gpu_memory = int64_t{1} << 62;
  limits.max_session_gpu_bytes = absl::GetFlag(FLAGS_max_session_gpu_bytes);
  if (limits.max_session_gpu_bytes <= 0) limits.max_session_gpu_bytes = gpu_memory;
  limits.max_server_gpu_bytes = absl::GetFlag(FLAGS_max_server_gpu_bytes);
  if (limits.max_server_gpu_bytes <= 0) limits.max_server_gpu_bytes = gpu_memory;
  limits.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  limits.max_queued_ops_per_stream = absl::GetFlag(FLAGS_max_queued_ops);
  limits.max_ops_per_batch = absl::GetFlag(FLAGS_max_batch_ops);
  limits.max_profiled_ops = absl::GetFlag(FLAGS_max_profiled_ops);
  limits.max_streams_per_session = absl::GetFlag(FLAGS_max_streams);
  limits.max_queued_calls = absl::GetFlag(FLAGS_max_queued_calls);
  limits.chunk_bytes = absl::GetFlag(FLAGS_chunk_bytes);
  limits.pool_idle_floor_bytes = absl::GetFlag(FLAGS_pool_idle_floor_bytes);
  if (limits.max_profiled_ops < 0) return Fail("--max_profiled_ops must not be negative");
  if (limits.chunk_bytes <= 0 || limits.chunk_bytes > limits.max_message_bytes - 1024) {
    return Fail("--chunk_bytes must be positive and below --max_message_bytes");
  }
  options.executor_threads = absl::GetFlag(FLAGS_threads);
  if (const std::string path = absl::GetFlag(FLAGS_auth_token_file); !path.empty()) {
    std::string contents;
    if (!ReadFile(path, &contents)) return Fail("cannot read --auth_token_file");
    auto tokens = tensord::server::ParseTokenFile(contents);
    if (!tokens.ok()) return Fail(absl::StrCat("--auth_token_file: ", tokens.status().message()));
    options.tokens = *std::move(tokens);
  }
  if (const std::string cert = absl::GetFlag(FLAGS_tls_cert); !cert.empty()) {
    if (!ReadFile(cert, &options.tls_cert_pem) ||
        !ReadFile(absl::GetFlag(FLAGS_tls_key), &options.tls_key_pem)) {
      return Fail("cannot read --tls_cert / --tls_key");
    }
    if (const std::string ca = absl::GetFlag(FLAGS_tls_client_ca); !ca.empty()) {
      if (!ReadFile(ca, &options.tls_client_ca_pem)) return Fail("cannot read --tls_client_ca");
    }
  }

  auto server = tensord::server::TensordServer::Start(options);
  if (!server.ok()) return Fail(std::string(server.status().message()));
  const std::string host = options.listen.substr(0, options.listen.rfind(':'));
  std::printf("tensord listening on %s:%d (device %s, replica %s)\n", host.c_str(),
              (*server)->port(), options.device.ToString().c_str(), options.replica.c_str());
  if ((*server)->health_port() != 0) {
    const std::string& h = options.health_listen;
    std::printf("tensord: health on %s:%d\n", h.substr(0, h.rfind(':')).c_str(),
                (*server)->health_port());
  }
  if ((*server)->metrics_port() != 0) {
    const std::string& m = options.metrics_listen;
    std::printf("tensord: metrics on http://%s:%d/metrics\n", m.substr(0, m.rfind(':')).c_str(),
                (*server)->metrics_port());
  }
  std::fflush(stdout);
  Log(LogLevel::kInfo, "serving",
      {{"address", absl::StrCat(host, ":", (*server)->port())}, {"replica", options.replica},
       {"device", options.device.ToString()}, {"health_port", (*server)->health_port()},
       {"metrics_port", (*server)->metrics_port()}, {"tls", !options.tls_cert_pem.empty()},
       {"mtls", !options.tls_client_ca_pem.empty()}, {"tenants", options.tokens.size()},
       {"blas_core", tensord::engine::cpu::LoadedBlasCore()}, {"version", TENSORD_VERSION}});

  unsigned char signal_number = 0;
  while (read(signal_pipe[0], &signal_number, 1) != 1) {
  }
  std::printf("tensord: signal %d, draining\n", static_cast<int>(signal_number));
  std::fflush(stdout);
  Log(LogLevel::kInfo, "drain_started",
      {{"signal", static_cast<int>(signal_number)},
       {"timeout_seconds", absl::ToDoubleSeconds(absl::GetFlag(FLAGS_drain_timeout))}});
  // Calls in flight get the drain timeout; then gRPC cancels the rest. The process exits once
  // every call has ended, or at the deadline (plus a moment for the cancellations), without
  // waiting for kernels still running: sessions live in memory only, so there is nothing to
  // save, and a 20 s kernel must not hold a rolling update past its grace period.
  const absl::Duration drain = absl::GetFlag(FLAGS_drain_timeout);
  absl::Notification calls_ended;
  std::thread([&server, &calls_ended, drain] {
    (*server)->Shutdown(drain);
    (*server)->Wait();
    calls_ended.Notify();
  }).detach();
  const absl::Time drain_start = absl::Now();
  const absl::Time drain_end = drain_start + drain + absl::Milliseconds(300);
  bool ended = false;
  while (!ended && absl::Now() < drain_end) {
    ended = calls_ended.WaitForNotificationWithTimeout(
        std::min(absl::Seconds(1), drain_end - absl::Now()));
    if (!ended) {
      Log(LogLevel::kInfo, "draining",
          {{"seconds", absl::ToDoubleSeconds(absl::Now() - drain_start)}});
    }
  }
  Log(ended ? LogLevel::kInfo : LogLevel::kWarning, "drain_finished",
      {{"seconds", absl::ToDoubleSeconds(absl::Now() - drain_start)},
       {"calls_cut", !ended}});
  std::printf("tensord: stopped%s\n", ended ? "" : " (calls still waiting on kernels were cut)");
  std::fflush(stdout);
  std::_Exit(0);
}
