#include "server/session_store.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "engine/core/status_macros.h"
#include "engine/runtime/allocator.h"
#include "server/auth.h"
#include "server/log.h"
#include "server/metrics.h"

namespace tensord::server {
namespace {

// 128 bits from the kernel's CSPRNG (std::random_device reads /dev/urandom on Linux).
std::string NewSecret() {
  std::random_device rd;
  std::string raw(16, '\0');
  for (size_t i = 0; i < raw.size(); i += 4) {
    const uint32_t word = rd();
    for (size_t k = 0; k < 4; ++k) raw[i + k] = static_cast<char>((word >> (8 * k)) & 0xff);
  }
  return absl::BytesToHexString(raw);
}

absl::Status SessionNotFound(absl::string_view public_id) {
  return absl::NotFoundError(
      absl::StrCat("session ", public_id, " not found (unknown, closed or expired)"));
}

}  // namespace

bool ValidReplicaName(absl::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::optional<SessionIdParts> SplitSessionId(absl::string_view id) {
  const size_t last = id.rfind('/');
  if (last == absl::string_view::npos) return std::nullopt;
  const size_t first = id.find('/');
  if (first == last) return std::nullopt;
  SessionIdParts parts{id.substr(0, last), id.substr(0, first), id.substr(last + 1)};
  const absl::string_view serial = id.substr(first + 1, last - first - 1);
  if (!ValidReplicaName(parts.replica) || serial.empty() || serial.size() > 20 ||
      !std::all_of(serial.begin(), serial.end(), absl::ascii_isdigit) || parts.secret.empty()) {
    return std::nullopt;
  }
  return parts;
}

SessionStore::SessionStore(std::string replica, const ServerLimits& limits,
                           engine::Executor* executor)
    : replica_(std::move(replica)),
      limits_(limits),
      executor_(executor),
      server_budget_(engine::DeviceBudgets::Create("the server", limits.max_server_bytes,
                                                   limits.max_server_gpu_bytes)) {
  reaper_ = std::thread([this] {
    const absl::Duration period =
        std::max(absl::Milliseconds(50), std::min(absl::Seconds(1), limits_.session_ttl / 4));
    absl::MutexLock lock(&mu_);
    while (!stopping_) {
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), period);
      if (stopping_) break;
      mu_.Unlock();
      ExpireIdle();
      engine::TrimCpuMemoryIfIdle(limits_.pool_idle_floor_bytes);
      mu_.Lock();
    }
  });
}

SessionStore::~SessionStore() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  reaper_.join();
  Map sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  for (auto& [id, entry] : sessions) entry.session->Close();
}

absl::StatusOr<std::shared_ptr<Session>> SessionStore::Open(engine::Device device,
                                                             std::string tenant,
                                                             std::string peer,
                                                             std::string client) {
  absl::StatusOr<std::shared_ptr<Session>> session =
      NewSession(device, std::move(tenant), std::move(peer), std::move(client));
  if (!session.ok()) return session;
  ServerMetrics().CountSessionOpened();
  // Logged outside the store's lock: a log write may block.
  Log(LogLevel::kInfo, "session_opened",
      {{"session", (*session)->public_id()}, {"peer", (*session)->peer()},
       {"client", (*session)->client()}, {"device", device.ToString()},
       {"tenant", (*session)->tenant()}});
  return session;
}

absl::StatusOr<std::shared_ptr<Session>> SessionStore::NewSession(engine::Device device,
                                                                   std::string tenant,
                                                                   std::string peer,
                                                                   std::string client) {
  absl::MutexLock lock(&mu_);
  if (static_cast<int64_t>(sessions_.size()) >= limits_.max_sessions) {
    return absl::ResourceExhaustedError(absl::StrCat("open_session: the server already has ",
                                                     sessions_.size(),
                                                     " sessions open, the limit"));
  }
  Tenant& t = tenants_[tenant];
  if (limits_.max_tenant_sessions > 0 && t.sessions >= limits_.max_tenant_sessions) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "open_session: tenant '", tenant, "' already has ", limits_.max_tenant_sessions,
        " sessions open, its limit (--max-tenant-sessions)"));
  }
  if (t.budget == nullptr) {
    t.budget = limits_.max_tenant_bytes > 0
                   ? engine::DeviceBudgets::Create(absl::StrCat("tenant '", tenant, "'"),
                                                   limits_.max_tenant_bytes,
                                                   limits_.max_tenant_bytes, server_budget_)
                   : server_budget_;
  }
  ++t.sessions;
  std::string public_id = absl::StrCat(replica_, "/", next_serial_++);
  std::string secret = NewSecret();
  auto budget = engine::DeviceBudgets::Create(absl::StrCat("session ", public_id),
                                              limits_.max_session_bytes,
                                              limits_.max_session_gpu_bytes, t.budget);
  auto session = std::make_shared<Session>(absl::StrCat(public_id, "/", secret), public_id,
                                           device, std::move(budget), limits_, executor_);
  session->set_opened_by(std::move(tenant), std::move(peer), std::move(client));
  sessions_[public_id] = Entry{std::move(secret), session};
  return session;
}

absl::StatusOr<SessionStore::Map::iterator> SessionStore::Lookup(absl::string_view session_id) {
  const std::optional<SessionIdParts> parts = SplitSessionId(session_id);
  if (!parts) {
    return absl::NotFoundError(
        "session not found: the id is not one this server issues (<replica>/<n>/<secret>)");
  }
  if (parts->replica != replica_) {
    return absl::NotFoundError(absl::StrCat(
        "session ", parts->public_id, " is held by replica ", parts->replica,
        ", and this is replica ", replica_,
        ": send its calls with the header 'tensord-route: ", parts->public_id,
        "' through a router that honours it"));
  }
  auto it = sessions_.find(parts->public_id);
  if (it == sessions_.end() || !ConstantTimeEqual(it->second.secret, parts->secret)) {
    return SessionNotFound(parts->public_id);
  }
  return it;
}

absl::StatusOr<std::shared_ptr<Session>> SessionStore::Find(absl::string_view session_id) {
  std::shared_ptr<Session> session;
  {
    absl::MutexLock lock(&mu_);
    TENSORD_ASSIGN_OR_RETURN(Map::iterator it, Lookup(session_id));
    session = it->second.session;
  }
  session->Touch();
  return session;
}

absl::Status SessionStore::Close(absl::string_view session_id) {
  std::shared_ptr<Session> session;
  {
    absl::MutexLock lock(&mu_);
    TENSORD_ASSIGN_OR_RETURN(Map::iterator it, Lookup(session_id));
    session = std::move(it->second.session);
    sessions_.erase(it);
    ForgetTenantSession(session->tenant());
  }
  Ended(*session, /*expired=*/false);
  return absl::OkStatus();
}

int64_t SessionStore::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(sessions_.size());
}

absl::Status SessionStore::CheckTenant(absl::string_view session_id, absl::string_view tenant) {
  absl::MutexLock lock(&mu_);
  TENSORD_ASSIGN_OR_RETURN(Map::iterator it, Lookup(session_id));
  if (it->second.session->tenant() != tenant) {
    return SessionNotFound(it->first);
  }
  return absl::OkStatus();
}

void SessionStore::ForgetTenantSession(const std::string& tenant) {
  // The entry (and its budget, which closed sessions' storages still in use are charged to)
  // stays: tenants are few (a token file's lines, or client certificates).
  auto it = tenants_.find(tenant);
  if (it != tenants_.end()) --it->second.sessions;
}

void SessionStore::Ended(Session& session, bool expired) {
  const int64_t held = session.budget()->used();
  session.Close();
  ServerMetrics().CountSessionEnded(expired);
  Log(LogLevel::kInfo, expired ? "session_expired" : "session_closed",
      {{"session", session.public_id()}, {"peer", session.peer()},
       {"seconds", absl::ToDoubleSeconds(absl::Now() - session.opened_at())},
       {"ops", session.ops_run()}, {"uploaded_bytes", session.uploaded_bytes()},
       {"downloaded_bytes", session.downloaded_bytes()}, {"held_bytes", held}});
}

SessionStore::Totals SessionStore::totals() const {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.reserve(sessions_.size());
    for (const auto& [id, entry] : sessions_) sessions.push_back(entry.session);
  }
  Totals totals;
  totals.sessions = static_cast<int64_t>(sessions.size());
  totals.max_sessions = limits_.max_sessions;
  for (const auto& session : sessions) {
    const Session::Counts counts = session->counts();
    totals.tensors += counts.tensors;
    totals.queued_ops += counts.queued_ops;
  }
  totals.bytes_by_device = server_budget_->UsedByDevice();
  return totals;
}

void SessionStore::ExpireIdle() {
  const absl::Time now = absl::Now();
  std::vector<std::shared_ptr<Session>> expired;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      Session& s = *it->second.session;
      if (!s.stream_bound() && now - s.last_active() > limits_.session_ttl) {
        ForgetTenantSession(s.tenant());
        expired.push_back(std::move(it->second.session));
        sessions_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (auto& session : expired) Ended(*session, /*expired=*/true);
}

}  // namespace tensord::server
