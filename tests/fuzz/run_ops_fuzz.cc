// run_ops_fuzz: the input is a serialized v1::RunOpsRequest (its wire format). Each input runs in
// a fresh session that already holds the preamble's tensors (ids 1-20, fuzz_backend.h), through
// Handlers's RunOps: the op registry, the attribute conversion, the planners and (once the
// session is synchronized) the kernels. The harness replaces the session id, and clamps `_sleep`
// to 2 ms so that no input idles a stream.
//
// Checks beyond the sanitizers: the call succeeds (the session exists); the response has one
// result per op up to the failing one, whose index the error names; an op error is never
// INTERNAL or UNKNOWN; every output's metadata stays inside its storage (CheckTensorInfo); the
// outputs download with as many bytes as their metadata says.
//
// When an op fails validation, the ops after it run as a further batch, so every op of an input is
// tried. A structure-aware mutator (op_mutator.h) keeps most mutants valid; the fraction of
// executions whose ops all pass validation, and of ops that do, is printed at exit
// ("run_ops_fuzz stats").
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "tests/fuzz/fuzz_backend.h"
#include "tests/fuzz/op_mutator.h"

namespace tensord::fuzz {
namespace {

struct Stats {
  std::atomic<int64_t> executions{0}, parsed{0}, nonempty{0}, all_valid{0}, ops_attempted{0},
      ops_valid{0}, kernel_errors{0};
  ~Stats() {
    if (executions == 0) return;
    const auto pct = [](int64_t a, int64_t b) { return b == 0 ? 0.0 : 100.0 * a / b; };
    std::fprintf(stderr,
                 "run_ops_fuzz stats: executions=%lld parsed=%lld (%.1f%%) with_ops=%lld "
                 "all_ops_valid=%lld (%.1f%% of executions, %.1f%% of requests with ops) "
                 "ops_valid=%lld of %lld attempted (%.1f%%) kernel_errors=%lld\n",
                 (long long)executions, (long long)parsed, pct(parsed, executions),
                 (long long)nonempty, (long long)all_valid, pct(all_valid, executions),
                 pct(all_valid, nonempty), (long long)ops_valid, (long long)ops_attempted,
                 pct(ops_valid, ops_attempted), (long long)kernel_errors);
  }
};
Stats stats;

const RequestMutator& Mutator() {
  static const RequestMutator* mutator = [] {
    return new RequestMutator(SessionMutatorConfig());
  }();
  return *mutator;
}

void ClampSleeps(v1::RunOpsRequest& request) {
  for (v1::OpCall& call : *request.mutable_ops()) {
    if (call.op() != "_sleep") continue;
    auto it = call.mutable_attrs()->find("ms");
    if (it != call.mutable_attrs()->end() && it->second.value_case() == v1::AttrValue::kI &&
        it->second.i() > 2) {
      it->second.set_i(2);
    }
  }
}

}  // namespace
}  // namespace tensord::fuzz

using namespace tensord::fuzz;  // NOLINT

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Backend();
  Mutator();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ++stats.executions;
  v1::RunOpsRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  ++stats.parsed;
  if (request.ops_size() > 0) ++stats.nonempty;
  ClampSleeps(request);

  static Rng rng(1);
  FuzzSession session;
  request.set_session_id(session.id());
  // The batch as sent; when an op fails, the ops after it run as a new batch of the same session
  // (and so on), so that every op of an input is tried, not only those before its first error.
  std::vector<uint64_t> outputs;
  v1::RunOpsRequest batch = request;
  for (bool first = true;; first = false) {
    v1::RunOpsResponse response;
    const absl::Status status = RunOps(Backend(), batch, &response);
    FUZZ_CHECK(status.ok(), absl::StrCat("run_ops on an open session: ", status.ToString()));
    const auto what = [&] {  // only built when a check fails
      return absl::StrCat(batch.ShortDebugString().substr(0, 4000), " -> ",
                          response.ShortDebugString().substr(0, 2000));
    };
    stats.ops_valid += response.results_size();
    for (int i = 0; i < response.results_size(); ++i) {
      Mutator().valid_calls().Add(batch.ops(i), PreambleIds(), rng);
    }
    for (const v1::OpResult& result : response.results()) {
      for (const v1::TensorInfo& info : result.outputs()) {
        CheckTensorInfo(info, "run_ops output");
        outputs.push_back(info.id());
      }
    }
    if (!response.has_error()) {
      FUZZ_CHECK(response.results_size() == batch.ops_size(), what());
      stats.ops_attempted += response.results_size();
      if (first && batch.ops_size() > 0) ++stats.all_valid;
      break;
    }
    const v1::Error& e = response.error();
    FUZZ_CHECK(e.op_index() >= 0 && e.op_index() < std::max(batch.ops_size(), 1), what());
    FUZZ_CHECK(response.results_size() == e.op_index(), what());
    FUZZ_CHECK(e.code() != 0 && e.code() != static_cast<int>(absl::StatusCode::kInternal) &&
                   e.code() != static_cast<int>(absl::StatusCode::kUnknown),
               what());
    stats.ops_attempted += response.results_size() + 1;
    if (std::getenv("FUZZ_VERBOSE") != nullptr && e.op_index() < batch.ops_size()) {
      // Why ops fail validation, to tune the mutator.
      std::fprintf(stderr, "op %s: %s\n", batch.ops(e.op_index()).op().c_str(), e.message().c_str());
    }
    if (e.op_index() + 1 >= batch.ops_size()) break;
    v1::RunOpsRequest rest;
    rest.set_session_id(session.id());
    rest.set_omit_metadata(batch.omit_metadata());
    for (int i = e.op_index() + 1; i < batch.ops_size(); ++i) *rest.add_ops() = batch.ops(i);
    batch = std::move(rest);
  }
  if (!session.SynchronizeAll().ok()) ++stats.kernel_errors;
  // The last few outputs, downloaded: reads every element through the output's metadata.
  int downloads = 0;
  for (auto it = outputs.rbegin(); it != outputs.rend() && downloads < 3; ++it, ++downloads) {
    (void)DownloadBytes(session.id(), *it);  // errors (a poisoned or released id) are fine
  }
  return 0;
}

TENSORD_FUZZ_RUN_OPS_MUTATOR(Mutator())
