// Server-wide limits. Each is checked before anything is allocated; going over one is
// RESOURCE_EXHAUSTED and leaves the session usable.
#ifndef TENSORD_SERVER_LIMITS_H_
#define TENSORD_SERVER_LIMITS_H_

#include <cstdint>

#include "absl/time/time.h"

namespace tensord::server {

// Each tensor a session names costs server memory besides its storage (the map entry, sizes
// and strides): about this much, charged to the session's host budget, so that a million views
// cannot hold memory that no limit sees.
inline constexpr int64_t kTensorMetadataBytes = 512;

struct ServerLimits {
  int64_t max_sessions = 1024;
  // Per tenant (auth.h): sessions open at once and tensor bytes held (host and each GPU);
  // 0: only the server's limits.
  int64_t max_tenant_sessions = 0;
  int64_t max_tenant_bytes = 0;
  int64_t max_session_bytes = int64_t{4} << 30;
  int64_t max_server_bytes = int64_t{16} << 30;
  // The same on each GPU.
  int64_t max_session_gpu_bytes = int64_t{1} << 62;
  int64_t max_server_gpu_bytes = int64_t{1} << 62;
  int64_t max_message_bytes = int64_t{64} << 20;   // largest request or response message
  int64_t max_queued_ops_per_stream = 1 << 16;
  int64_t max_ops_per_batch = 1 << 17;
  int64_t max_streams_per_session = 256;
  int64_t max_tensors_per_session = int64_t{1} << 22;
  // Calls of one session waiting (holding their requests) behind an earlier one that waits for
  // data: beyond it, RESOURCE_EXHAUSTED.
  int64_t max_queued_calls = 1024;
  int64_t chunk_bytes = 1 << 20;                    // Download chunk size
  int64_t max_profiled_ops = 1 << 16;               // ops one profile records (Profile RPC)
  absl::Duration session_ttl = absl::Seconds(300);
  // Host memory an idle server keeps cached for reuse; the rest goes back to the system.
  int64_t pool_idle_floor_bytes = int64_t{256} << 20;
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_LIMITS_H_
