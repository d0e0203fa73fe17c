// plan_fuzz: the op planner on metadata alone, as both clients run it (PlanOnMetadata,
// engine/ops/plan_on_metadata.h): any registry op, attributes and operand metadata, no storage
// bytes and no kernels, so inputs may ask for any size (2^60-byte tensors plan as readily as
// small ones) and every planner's validation and overflow checks are reached quickly.
//
// Input: a serialized v1::RunOpsRequest, the run_ops target's format (its corpus seeds this one),
// read as a chain of calls on the preamble's tensors (their metadata taken once from a real
// session, fuzz_backend.h) and on the outputs of earlier calls. Attributes go through the wire
// conversion the server and the C++ client use (tensord/wire_attr.h).
//
// Checks beyond the sanitizers: an op's error is never INTERNAL or UNKNOWN; only data-dependent
// ops decline to plan; every output's metadata stays inside its storage (CheckTensorInfo); an
// output aliases an existing input, and then its storage's size is that input's.
#include <atomic>
#include <cstdint>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/ops/plan_on_metadata.h"
#include "server/proto_convert.h"
#include "tensord/wire_attr.h"
#include "tests/fuzz/fuzz_backend.h"
#include "tests/fuzz/op_mutator.h"

namespace tensord::fuzz {
namespace {

struct Stats {
  std::atomic<int64_t> executions{0}, ops{0}, planned{0}, missing_inputs{0};
  ~Stats() {
    if (executions == 0) return;
    std::fprintf(stderr,
                 "plan_fuzz stats: executions=%lld ops=%lld planned_ok=%lld (%.1f%%) "
                 "missing_inputs=%lld\n",
                 (long long)executions, (long long)ops, (long long)planned,
                 ops == 0 ? 0.0 : 100.0 * planned / ops, (long long)missing_inputs);
  }
};
Stats stats;

const RequestMutator& Mutator() {
  static const RequestMutator* mutator = new RequestMutator(SessionMutatorConfig());
  return *mutator;
}

engine::MetaInput FromInfo(const v1::TensorInfo& info) {
  engine::MetaInput in;
  in.dtype = *server::DTypeFromProto(info.dtype(), "preamble");
  in.device = engine::kCpu;
  in.sizes.assign(info.sizes().begin(), info.sizes().end());
  in.strides.assign(info.strides().begin(), info.strides().end());
  in.storage_offset = info.storage_offset();
  in.storage_key = static_cast<int64_t>(info.storage_id());
  in.storage_nbytes = info.storage_nbytes();
  return in;
}

// The preamble's tensors as metadata, by id: what a real session holds before an input runs.
const absl::flat_hash_map<uint64_t, engine::MetaInput>& Preamble() {
  static const auto* preamble = [] {
    auto* metas = new absl::flat_hash_map<uint64_t, engine::MetaInput>();
    FuzzSession session;
    for (uint64_t id : PreambleIds()) {
      v1::DescribeRequest request;
      request.set_session_id(session.id());
      request.add_ids(id);
      v1::DescribeResponse response;
      FUZZ_CHECK(Describe(Backend(), request, &response).ok() && response.tensors_size() == 1,
                 absl::StrCat("describe preamble tensor ", id));
      (*metas)[id] = FromInfo(response.tensors(0));
    }
    return metas;
  }();
  return *preamble;
}

v1::TensorInfo ToInfo(const engine::MetaOutput& o) {
  v1::TensorInfo info;
  for (int64_t s : o.sizes) info.add_sizes(s);
  for (int64_t s : o.strides) info.add_strides(s);
  info.set_storage_offset(o.storage_offset);
  info.set_dtype(server::DTypeToProto(o.dtype));
  info.set_storage_nbytes(o.storage_nbytes);
  info.set_is_contiguous(o.is_contiguous);
  return info;
}

void Run(const uint8_t* data, size_t size) {
  ++stats.executions;
  v1::RunOpsRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  absl::flat_hash_map<uint64_t, engine::MetaInput> tensors = Preamble();
  int64_t next_storage = int64_t{1} << 40;  // storages made by planned ops
  static Rng rng(1);
  for (const v1::OpCall& call : request.ops()) {
    ++stats.ops;
    std::vector<engine::MetaInput> inputs;
    for (uint64_t id : call.inputs()) {
      auto it = tensors.find(id);
      if (it == tensors.end()) break;
      inputs.push_back(it->second);
    }
    if (inputs.size() != static_cast<size_t>(call.inputs_size())) {
      ++stats.missing_inputs;
      continue;
    }
    std::vector<std::pair<std::string, engine::WireAttr>> attrs;
    for (const auto& [name, value] : call.attrs()) {
      attrs.emplace_back(name, wire::WireAttrFromProto(value));
    }
    const auto what = [&] { return call.ShortDebugString().substr(0, 4000); };
    absl::StatusOr<std::optional<std::vector<engine::MetaOutput>>> planned =
        engine::PlanOnMetadata(call.op(), inputs, attrs, engine::kCpu);
    if (!planned.ok()) {
      const absl::StatusCode code = planned.status().code();
      FUZZ_CHECK(code != absl::StatusCode::kInternal && code != absl::StatusCode::kUnknown,
                 absl::StrCat(what(), ": ", planned.status().ToString()));
      continue;
    }
    const engine::OpDef* op = engine::OpRegistry::Global().Find(call.op());
    FUZZ_CHECK(op != nullptr, what());
    if (!planned->has_value()) {
      FUZZ_CHECK(op->kind == engine::OpKind::kDataDependent, what());
      continue;
    }
    ++stats.planned;
    Mutator().valid_calls().Add(call, PreambleIds(), rng);
    const std::vector<engine::MetaOutput>& outputs = **planned;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const engine::MetaOutput& o = outputs[i];
      CheckTensorInfo(ToInfo(o), "planned output");
      FUZZ_CHECK(o.alias >= -1 && o.alias < static_cast<int>(inputs.size()), what());
      engine::MetaInput next{o.dtype, o.device, o.sizes, o.strides, o.storage_offset, 0,
                             o.storage_nbytes};
      if (o.alias >= 0) {
        FUZZ_CHECK(o.storage_nbytes == inputs[o.alias].storage_nbytes,
                   absl::StrCat(what(), ": a view's storage changed size"));
        next.storage_key = inputs[o.alias].storage_key;
      } else {
        next.storage_key = next_storage++;
      }
      uint64_t id = 0;
      if (static_cast<size_t>(call.outputs_size()) == outputs.size()) {
        id = call.outputs(static_cast<int>(i));
      } else if (call.output_id_start() != 0) {
        id = call.output_id_start() + i;
      }
      if (id != 0) tensors[id] = std::move(next);
    }
  }
}

}  // namespace
}  // namespace tensord::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensord::fuzz::QuietProtobufLogs();
  tensord::fuzz::Preamble();
  tensord::fuzz::Mutator();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensord::fuzz::Run(data, size);
  return 0;
}

TENSORD_FUZZ_RUN_OPS_MUTATOR(tensord::fuzz::Mutator())
