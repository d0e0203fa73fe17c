// SessionStore: every open session, by id; opens, closes and expires them.
#ifndef TENSORD_SERVER_SESSION_STORE_H_
#define TENSORD_SERVER_SESSION_STORE_H_

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/memory_budget.h"
#include "server/limits.h"
#include "server/session.h"

namespace tensord::server {

// A session id is "<replica>/<n>/<secret>". Its public part "<replica>/<n>" names the replica
// that holds the session (a router sends every call whose `tensord-route` header carries it
// there, so no store is shared between replicas) and the session within it (logs, metrics,
// errors); the secret, 128 random bits from the OS's generator as 32 hex digits, is what lets
// a caller use the session: it is compared in constant time and never logged or sent in a header.
struct SessionIdParts {
  absl::string_view public_id;  // "<replica>/<n>"
  absl::string_view replica;
  absl::string_view secret;
};
// Splits an id; nullopt when it does not have the form above.
std::optional<SessionIdParts> SplitSessionId(absl::string_view id);
// A replica name is 1-63 of [A-Za-z0-9._-] (a host or pod name); others are refused at start.
bool ValidReplicaName(absl::string_view name);

// Thread-safe. A housekeeping thread closes sessions whose lease ran out (no call for the TTL;
// a session bound to an open Connect stream keeps its lease while the stream lives) and gives
// idle host memory back (engine::TrimCpuMemoryIfIdle).
class SessionStore {
 public:
  // `replica`: this server's name in session ids (ValidReplicaName).
  SessionStore(std::string replica, const ServerLimits& limits, engine::Executor* executor);
  ~SessionStore();  // closes every session

  // RESOURCE_EXHAUSTED when max_sessions are open.
  // For `tenant` (auth.h; RESOURCE_EXHAUSTED at its session limit); `peer` and `client` name
  // who opened it, in the log.
  absl::StatusOr<std::shared_ptr<Session>> Open(engine::Device device, std::string tenant = "",
                                                std::string peer = "", std::string client = "");
  // OK when `session_id` is open and belongs to `tenant`; NOT_FOUND otherwise, the same answer
  // as for an unknown id (another tenant learns nothing). Renews nothing.
  absl::Status CheckTenant(absl::string_view session_id, absl::string_view tenant);
  // NOT_FOUND for an unknown or closed id (the same answer whether it ever existed or not).
  // Renews the session's lease.
  absl::StatusOr<std::shared_ptr<Session>> Find(absl::string_view session_id);
  absl::Status Close(absl::string_view session_id);

  int64_t size() const;
  const std::string& replica() const { return replica_; }
  // Now, over every open session (for metrics).
  struct Totals {
    int64_t sessions = 0;
    int64_t max_sessions = 0;
    int64_t tensors = 0;
    int64_t queued_ops = 0;
    std::vector<std::pair<std::string, int64_t>> bytes_by_device;
  };
  Totals totals() const;
  const std::shared_ptr<engine::DeviceBudgets>& server_budget() const { return server_budget_; }
  // Closes idle sessions now (the reaper thread calls it periodically).
  void ExpireIdle();

 private:
  struct Entry {
    std::string secret;
    std::shared_ptr<Session> session;
  };
  using Map = absl::flat_hash_map<std::string, Entry>;
  // The entry of `session_id` (NOT_FOUND naming only its public part otherwise).
  absl::StatusOr<Map::iterator> Lookup(absl::string_view session_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::StatusOr<std::shared_ptr<Session>> NewSession(engine::Device device, std::string tenant,
                                                      std::string peer, std::string client);
  // Closes a session taken out of the map; counts and logs its end.
  void Ended(Session& session, bool expired);
  void ForgetTenantSession(const std::string& tenant) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string replica_;
  const ServerLimits limits_;
  engine::Executor* const executor_;
  const std::shared_ptr<engine::DeviceBudgets> server_budget_;

  mutable absl::Mutex mu_;
  // By public id.
  Map sessions_ ABSL_GUARDED_BY(mu_);
  struct Tenant {
    int64_t sessions = 0;
    std::shared_ptr<engine::DeviceBudgets> budget;  // under the server's
  };
  absl::flat_hash_map<std::string, Tenant> tenants_ ABSL_GUARDED_BY(mu_);
  uint64_t next_serial_ ABSL_GUARDED_BY(mu_) = 1;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reaper_;
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_SESSION_STORE_H_
