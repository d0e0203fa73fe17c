// Session: one client's tensors, streams and events, and its memory budget.
#ifndef TENSORD_SERVER_SESSION_H_
#define TENSORD_SERVER_SESSION_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "engine/runtime/event.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/memory_budget.h"
#include "engine/runtime/stream.h"
#include "engine/tensor/tensor.h"
#include "server/limits.h"
#include "server/profile.h"
#include "tensord/v1/tensord.pb.h"

namespace tensord::server {

// Tensor ids are the client's: a session maps them to tensors and nothing outside it can see
// them. Thread-safe. The calls of one session run one at a time, in arrival order (InOrder);
// different sessions run in parallel. No call waits on a thread: a batch that reaches a
// data-dependent op whose inputs are still being written suspends until they are, and the
// session's later calls queue behind it, while other sessions (and health checks) go on.
class Session : public std::enable_shared_from_this<Session> {
 public:
  // `id`: the whole session id (SessionStore); `public_id`: its part that may be logged.
  Session(std::string id, std::string public_id, engine::Device device,
          std::shared_ptr<engine::DeviceBudgets> budget, const ServerLimits& limits,
          engine::Executor* executor);
  ~Session();

  const std::string& id() const { return id_; }
  const std::string& public_id() const { return public_id_; }
  engine::Device device() const { return device_; }
  const std::shared_ptr<engine::DeviceBudgets>& budget() const { return budget_; }

  // Who opened it (for the log): the peer's address and the client's name and version.
  void set_opened_by(std::string tenant, std::string peer, std::string client) {
    tenant_ = std::move(tenant);
    peer_ = std::move(peer);
    client_ = std::move(client);
  }
  // The tenant that opened it (auth.h): only its calls find the session.
  const std::string& tenant() const { return tenant_; }
  const std::string& peer() const { return peer_; }
  const std::string& client() const { return client_; }
  // Totals over its life, for the log line of its end.
  void CountUploaded(int64_t bytes) { uploaded_bytes_ += bytes; }
  void CountDownloaded(int64_t bytes) { downloaded_bytes_ += bytes; }
  int64_t uploaded_bytes() const { return uploaded_bytes_.load(); }
  int64_t downloaded_bytes() const { return downloaded_bytes_.load(); }
  int64_t ops_run() const { return ops_run_.load(); }
  absl::Time opened_at() const { return opened_at_; }

  // What the session holds now (for metrics).
  struct Counts {
    int64_t tensors = 0;
    int64_t queued_ops = 0;  // on all its streams, not yet retired
  };
  Counts counts() const;

  // Activity, for the lease.
  void Touch();
  absl::Time last_active() const;
  // A session opened by a Connect stream lives as long as the stream, whatever its lease.
  void set_stream_bound(bool bound) { stream_bound_.store(bound); }
  bool stream_bound() const { return stream_bound_.load(); }

  // Runs `call` in the session's call order: now, on this thread, unless an earlier call is
  // still queued or suspended; else it is queued and runs on the thread that finishes the call
  // before it. `call` gets OK and returns true when it is done, false when it suspended itself,
  // in which case it calls CallDone() once it has finished. When max_queued_calls are already
  // waiting, `call` runs at once with RESOURCE_EXHAUSTED, to report it (and return true).
  void InOrder(absl::AnyInvocable<bool(absl::Status)> call);

  // Runs the ops of a batch in order, stopping at the first failure, then releases the batch's
  // `release_after` ids; calls `done` after that (on another thread when a data-dependent op
  // had to wait for its inputs). `request` and `response` must live until then.
  // `done` gets an error only when the call could not be queued.
  void RunOps(const v1::RunOpsRequest& request, v1::RunOpsResponse* response,
              absl::AnyInvocable<void(absl::Status)> done);

  // Tensors.
  absl::StatusOr<engine::Tensor> Find(absl::string_view op, uint64_t id) const;
  // Registers a new tensor under a client-chosen id (ALREADY_EXISTS when taken).
  absl::Status Register(absl::string_view op, uint64_t id, engine::Tensor tensor);
  absl::Status Describe(absl::Span<const uint64_t> ids, v1::DescribeResponse* response);
  void Release(absl::Span<const uint64_t> ids, v1::ReleaseResponse* response);
  void FillInfo(uint64_t id, const engine::Tensor& tensor, v1::TensorInfo* info);

  // Streams and events. Stream 0 is the default stream.
  absl::StatusOr<std::shared_ptr<engine::Stream>> FindStream(absl::string_view op,
                                                             uint64_t stream) const;
  absl::StatusOr<uint64_t> CreateStream();
  std::vector<std::shared_ptr<engine::Stream>> Streams() const;
  // Cancels the ops queued on stream `stream` (unset: on every stream), engine::Stream::Cancel;
  // returns how many. Not in the call order: it may run while an earlier call waits.
  absl::StatusOr<int64_t> Cancel(std::optional<uint64_t> stream);
  std::shared_ptr<engine::Event> EventForRecord(uint64_t id);
  absl::StatusOr<std::shared_ptr<engine::Event>> FindEvent(absl::string_view op,
                                                           uint64_t id) const;
  // A label for errors of queued work: "op 12 (mul)".
  std::string NextOpLabel(absl::string_view name);

  // Profiling (the Profile RPC), in the call order: starts recording the ops queued from now
  // on (dropping a profile not collected), or stops: the profile, which records nothing more
  // (null when none was started).
  void StartProfile(bool record_shapes);
  std::shared_ptr<OpProfile> StopProfile();

  // Drops every tensor, stream and event, and cancels the queued work (engine::Stream::Cancel):
  // a running op stops at its next piece and everything is freed as the streams drain.
  void Close();

 private:
  struct Batch;
  // Runs the batch's ops from where it stopped; false when it suspended again.
  // A numbered batch already run (its number is the last one's): answers it again from the
  // kept answer and returns true; an older number is FAILED_PRECONDITION (also true).
  bool AnswerIfResent(const v1::RunOpsRequest& request, v1::RunOpsResponse* response,
                      absl::Status* status);
  bool ContinueBatch(const std::shared_ptr<Batch>& batch);
  // When `call` is a data-dependent op whose inputs have queued writes: arranges for the batch
  // to continue once they are done and returns true.
  bool SuspendForInputsLocked(const v1::OpCall& call, const std::shared_ptr<Batch>& batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs the calls queued behind the one that just finished.
  void CallDone();

  absl::Status RunOneOp(const v1::OpCall& call, bool omit_metadata, v1::OpResult* result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FillInfoLocked(uint64_t id, const engine::Tensor& tensor, v1::TensorInfo* info)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckNewId(absl::string_view op, uint64_t id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // kTensorMetadataBytes per named tensor (limits.h), charged to the host budget.
  absl::Status ChargeMetadata(absl::string_view op, int64_t count);
  void ReleaseMetadata(int64_t count);

  const std::string id_;
  const std::string public_id_;
  const absl::Time opened_at_ = absl::Now();
  std::string tenant_, peer_, client_;  // set once, before the session is shared
  std::atomic<int64_t> uploaded_bytes_{0}, downloaded_bytes_{0}, ops_run_{0};
  const engine::Device device_;
  const std::shared_ptr<engine::DeviceBudgets> budget_;
  const ServerLimits limits_;
  engine::Executor* const executor_;
  std::atomic<bool> stream_bound_{false};

  // The call order: whether a call has the turn, and the calls waiting for it.
  absl::Mutex order_mu_;
  bool busy_ ABSL_GUARDED_BY(order_mu_) = false;
  std::deque<absl::AnyInvocable<bool(absl::Status)>> waiting_calls_ ABSL_GUARDED_BY(order_mu_);

  mutable absl::Mutex mu_;
  absl::Time last_active_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, engine::Tensor> tensors_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::shared_ptr<engine::Stream>> streams_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::shared_ptr<engine::Event>> events_ ABSL_GUARDED_BY(mu_);
  uint64_t next_stream_id_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_op_id_ ABSL_GUARDED_BY(mu_) = 1;
  // The last numbered batch and its answer (RunOpsRequest.batch_seq).
  uint64_t last_batch_seq_ ABSL_GUARDED_BY(mu_) = 0;
  v1::RunOpsResponse last_batch_answer_ ABSL_GUARDED_BY(mu_);
  // Streams given ops by the current batch and not yet woken, and how many ops: a batch wakes
  // each stream's worker once per kWakeEvery ops instead of once per op.
  std::vector<std::shared_ptr<engine::Stream>> unwoken_ ABSL_GUARDED_BY(mu_);
  int unwoken_ops_ ABSL_GUARDED_BY(mu_) = 0;
  void WakeStreamsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // While profiling: records each op RunOneOp queues.
  std::shared_ptr<OpProfile> profile_ ABSL_GUARDED_BY(mu_);
  // Storages get addresses in a session-private space (PyTorch's data_ptr), never server ones.
  uint64_t next_virtual_address_ ABSL_GUARDED_BY(mu_) = uint64_t{1} << 32;
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_SESSION_H_
