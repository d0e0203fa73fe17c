// SessionStore: every open session, by id; opens, closes and expires them.
#ifndef TENSORD_SERVER_SESSION_STORE_H_
#define TENSORD_SERVER_SESSION_STORE_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/memory_budget.h"
#include "server/limits.h"
#include "server/session.h"

namespace tensord::server {

// Thread-safe. Session ids are 128 random bits from the OS's generator (32 hex digits), never
// sequential. A housekeeping thread closes sessions whose lease ran out (no call for the TTL;
// a session bound to an open Connect stream keeps its lease while the stream lives) and gives
// idle host memory back (engine::TrimCpuMemoryIfIdle).
class SessionStore {
 public:
  SessionStore(const ServerLimits& limits, engine::Executor* executor);
  ~SessionStore();  // closes every session

  // RESOURCE_EXHAUSTED when max_sessions are open.
  absl::StatusOr<std::shared_ptr<Session>> Open(engine::Device device);
  // NOT_FOUND for an unknown or closed id (the same answer whether it ever existed or not).
  // Renews the session's lease.
  absl::StatusOr<std::shared_ptr<Session>> Find(absl::string_view session_id);
  absl::Status Close(absl::string_view session_id);

  int64_t size() const;
  const std::shared_ptr<engine::DeviceBudgets>& server_budget() const { return server_budget_; }
  // Closes idle sessions now (the reaper thread calls it periodically).
  void ExpireIdle();

 private:
  const ServerLimits limits_;
  engine::Executor* const executor_;
  const std::shared_ptr<engine::DeviceBudgets> server_budget_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Session>> sessions_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reaper_;
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_SESSION_STORE_H_
