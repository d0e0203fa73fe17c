#include "server/session_store.h"

#include <fstream>
#include <random>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "engine/runtime/allocator.h"

namespace tensord::server {
namespace {

// 128 bits from the kernel's CSPRNG (std::random_device reads /dev/urandom on Linux).
std::string NewSessionId() {
  std::random_device rd;
  std::string raw(16, '\0');
  for (size_t i = 0; i < raw.size(); i += 4) {
    const uint32_t word = rd();
    for (size_t k = 0; k < 4; ++k) raw[i + k] = static_cast<char>((word >> (8 * k)) & 0xff);
  }
  return absl::BytesToHexString(raw);
}

}  // namespace

SessionStore::SessionStore(const ServerLimits& limits, engine::Executor* executor)
    : limits_(limits),
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
  absl::flat_hash_map<std::string, std::shared_ptr<Session>> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  for (auto& [id, session] : sessions) session->Close();
}

absl::StatusOr<std::shared_ptr<Session>> SessionStore::Open(engine::Device device) {
  absl::MutexLock lock(&mu_);
  if (static_cast<int64_t>(sessions_.size()) >= limits_.max_sessions) {
    return absl::ResourceExhaustedError(absl::StrCat("open_session: the server already has ",
                                                     sessions_.size(),
                                                     " sessions open, the limit"));
  }
  std::string id;
  do {
    id = NewSessionId();
  } while (sessions_.contains(id));
  auto budget = engine::DeviceBudgets::Create(absl::StrCat("session ", id.substr(0, 8), "…"),
                                              limits_.max_session_bytes,
                                              limits_.max_session_gpu_bytes, server_budget_);
  auto session = std::make_shared<Session>(id, device, std::move(budget), limits_, executor_);
  sessions_[id] = session;
  return session;
}

absl::StatusOr<std::shared_ptr<Session>> SessionStore::Find(absl::string_view session_id) {
  std::shared_ptr<Session> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(session_id);
    if (it != sessions_.end()) session = it->second;
  }
  if (!session) {
    return absl::NotFoundError("session not found (unknown, closed or expired)");
  }
  session->Touch();
  return session;
}

absl::Status SessionStore::Close(absl::string_view session_id) {
  std::shared_ptr<Session> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(session_id);
    if (it == sessions_.end()) {
      return absl::NotFoundError("session not found (unknown, closed or expired)");
    }
    session = std::move(it->second);
    sessions_.erase(it);
  }
  session->Close();
  return absl::OkStatus();
}

int64_t SessionStore::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(sessions_.size());
}

void SessionStore::ExpireIdle() {
  const absl::Time now = absl::Now();
  std::vector<std::shared_ptr<Session>> expired;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      Session& s = *it->second;
      if (!s.stream_bound() && now - s.last_active() > limits_.session_ttl) {
        expired.push_back(std::move(it->second));
        sessions_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (auto& session : expired) session->Close();
}

}  // namespace tensord::server
