// metadata_fuzz: tensor metadata (sizes, strides, storage offset, dtype) from the wire, checked
// by the engine's validator, reached only through the op registry (engine::PlanOp), so that the
// corpus stays meaningful whatever the planners' internals become.
//
// Input: a serialized v1::RunOpsRequest read as a chain of metadata ops, planned one after the
// other with no session: a tensor description is a factory call (empty_strided's size, stride
// and dtype; empty, zeros, full, arange, …), an as_strided-like call is a view op on an earlier
// output (as_strided's size, stride and storage_offset; view, expand, unfold, diagonal, index,
// …). Inputs name earlier outputs by their output ids; attributes go through the server's own
// conversion (server::AttrsFromProto). Ops that are not views, maybe-views or factories are
// skipped. Every allocation is charged to a 64 MiB budget, as a session's would be.
//
// Checks, for every tensor an op returns: its metadata addresses only bytes of its storage
// (computed independently, CheckTensorInfo), its first and last elements can be read (ASan), and
// as_strided with its own sizes, strides and offset is accepted and gives the same metadata.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/runtime/memory_budget.h"
#include "engine/ops/op_registry.h"
#include "engine/ops/planned_op.h"
#include "server/proto_convert.h"
#include "tests/fuzz/fuzz_backend.h"
#include "tests/fuzz/op_mutator.h"

namespace tensord::fuzz {
namespace {

using engine::OpDef;
using engine::OpKind;
using engine::Tensor;

bool MetadataOp(const OpDef& op) {
  return op.kind == OpKind::kView || op.kind == OpKind::kMaybeView || op.kind == OpKind::kFactory;
}

struct Stats {
  std::atomic<int64_t> executions{0}, ops{0}, planned{0}, skipped{0};
  ~Stats() {
    if (executions == 0) return;
    std::fprintf(stderr,
                 "metadata_fuzz stats: executions=%lld ops=%lld planned_ok=%lld (%.1f%%) "
                 "skipped=%lld\n",
                 (long long)executions, (long long)ops, (long long)planned,
                 ops == 0 ? 0.0 : 100.0 * planned / ops, (long long)skipped);
  }
};
Stats stats;

const RequestMutator& Mutator() {
  static const RequestMutator* mutator = [] {
    MutatorConfig config;
    config.first_free_id = 1;
    config.max_ops = 8;
    for (const OpDef& op : engine::OpRegistry::Global().ops()) {
      if (MetadataOp(op)) config.ops.push_back(&op);
    }
    for (const char* name : {"as_strided", "empty_strided", "as_strided", "view", "expand"}) {
      config.favourite_ops.push_back(engine::OpRegistry::Global().Find(name));
    }
    return new RequestMutator(config);
  }();
  return *mutator;
}

v1::TensorInfo Describe(const Tensor& t) {
  v1::TensorInfo info;
  for (int64_t s : t.sizes()) info.add_sizes(s);
  for (int64_t s : t.strides()) info.add_strides(s);
  info.set_storage_offset(t.storage_offset());
  info.set_dtype(server::DTypeToProto(t.dtype()));
  info.set_storage_nbytes(t.storage()->nbytes());
  info.set_is_contiguous(t.is_contiguous());
  return info;
}

void CheckOutput(const Tensor& t, const v1::OpCall& call, size_t index) {
  const auto what = [&] { return absl::StrCat(call.ShortDebugString(), " output ", index); };
  FUZZ_CHECK(t.defined(), what());
  const v1::TensorInfo info = Describe(t);
  CheckTensorInfo(info, "metadata op output");
  int64_t numel = 1;
  for (int64_t d = 0; d < t.dim(); ++d) numel = t.size(d) == 0 ? 0 : numel;
  for (int64_t d = 0; d < t.dim() && numel != 0; ++d) numel *= t.size(d);  // fits: checked above
  FUZZ_CHECK(numel == t.numel(), what());
  if (numel > 0 && t.device().is_cpu()) {
    int64_t last = t.storage_offset();  // no overflow either: inside the storage (checked)
    for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
    // The first and the last element addressed: ASan sees a storage too small.
    const char* base = static_cast<const char*>(t.storage()->data());
    volatile char first = base[t.storage_offset() * t.itemsize()];
    volatile char end = base[(last + 1) * t.itemsize() - 1];
    (void)first;
    (void)end;
  }
  // A tensor's own metadata is a valid as_strided of its storage, and gives the same tensor.
  engine::Attrs attrs;
  attrs.Set("size", std::vector<int64_t>(t.sizes().begin(), t.sizes().end()));
  attrs.Set("stride", std::vector<int64_t>(t.strides().begin(), t.strides().end()));
  attrs.Set("storage_offset", t.storage_offset());
  const Tensor inputs[] = {t};
  absl::StatusOr<engine::PlannedOp> again = engine::PlanOp("as_strided", inputs, attrs);
  FUZZ_CHECK(again.ok(), absl::StrCat(what(), ": as_strided of its own metadata: ",
                                      again.status().ToString()));
  FUZZ_CHECK(again->outputs.size() == 1 && again->outputs[0].meta() == t.meta(),
             absl::StrCat(what(), ": as_strided of its own metadata differs: ",
                          again->outputs[0].meta().DebugString(), " vs ", t.meta().DebugString()));
}

void Run(const uint8_t* data, size_t size) {
  ++stats.executions;
  v1::RunOpsRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  static const std::shared_ptr<engine::DeviceBudgets> budgets = engine::DeviceBudgets::Create(
      "metadata_fuzz", FuzzLimits().max_session_bytes, FuzzLimits().max_session_gpu_bytes);
  engine::ScopedMemoryBudget scoped(budgets);
  absl::flat_hash_map<uint64_t, Tensor> tensors;
  for (const v1::OpCall& call : request.ops()) {
    const OpDef* op = engine::OpRegistry::Global().Find(call.op());
    if (op == nullptr || !MetadataOp(*op)) {
      ++stats.skipped;
      continue;
    }
    ++stats.ops;
    std::vector<Tensor> inputs;
    bool missing = false;
    for (uint64_t id : call.inputs()) {
      auto it = tensors.find(id);
      if (it == tensors.end()) {
        missing = true;
        break;
      }
      inputs.push_back(it->second);
    }
    if (missing) continue;
    absl::StatusOr<engine::Attrs> attrs = server::AttrsFromProto(*op, call.attrs());
    if (!attrs.ok()) continue;
    if (op->kind == OpKind::kFactory && !attrs->Has("device")) attrs->Set("device", engine::kCpu);
    absl::StatusOr<engine::PlannedOp> plan = engine::PlanOp(op->name, inputs, *attrs);
    if (!plan.ok()) {
      const auto code = plan.status().code();
      FUZZ_CHECK(code != absl::StatusCode::kInternal && code != absl::StatusCode::kUnknown,
                 absl::StrCat(call.ShortDebugString(), ": ", plan.status().ToString()));
      continue;
    }
    ++stats.planned;
    static Rng rng(1);
    Mutator().valid_calls().Add(call, {}, rng);  // factories (no inputs) come back as they are
    // Factories and copies fill their outputs now (zeros, aranges, draws, gathered rows).
    absl::StatusOr<std::vector<Tensor>> outputs = engine::RunNow(*std::move(plan));
    if (!outputs.ok()) continue;
    for (size_t i = 0; i < outputs->size(); ++i) {
      const Tensor& t = (*outputs)[i];
      CheckOutput(t, call, i);
      uint64_t id = 0;
      if (call.outputs_size() == static_cast<int>(outputs->size())) {
        id = call.outputs(static_cast<int>(i));
      } else if (call.output_id_start() != 0) {
        id = call.output_id_start() + i;
      }
      if (id != 0) tensors[id] = t;
    }
  }
}

}  // namespace
}  // namespace tensord::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensord::fuzz::QuietProtobufLogs();
  tensord::engine::SetCpuPoolCacheLimit(0);
  tensord::fuzz::Mutator();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensord::fuzz::Run(data, size);
  return 0;
}

TENSORD_FUZZ_RUN_OPS_MUTATOR(tensord::fuzz::Mutator())
