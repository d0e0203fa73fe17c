#include "engine/ops/plan_on_metadata.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/planned_op.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/meta_backend.h"
#include "engine/tensor/storage.h"

namespace tensord::engine {

absl::StatusOr<std::optional<std::vector<MetaOutput>>> PlanOnMetadata(
    absl::string_view name, absl::Span<const MetaInput> inputs,
    absl::Span<const std::pair<std::string, WireAttr>> attrs, Device default_device) {
  const OpDef* op = OpRegistry::Global().Find(name);
  if (op == nullptr) return absl::NotFoundError(absl::StrCat("unknown op '", name, "'"));
  if (op->kind == OpKind::kDataDependent) return std::nullopt;
  MetadataOnlyScope metadata_only;
  std::vector<Tensor> tensors;
  tensors.reserve(inputs.size());
  absl::flat_hash_map<int64_t, std::shared_ptr<Storage>> storages;
  std::vector<const Storage*> input_storages;
  for (const MetaInput& in : inputs) {
    if (in.sizes.size() != in.strides.size()) {
      return absl::InvalidArgumentError(absl::StrCat(op->name, ": bad input metadata"));
    }
    std::shared_ptr<Storage>& storage = storages[in.storage_key];
    if (storage == nullptr) {
      absl::StatusOr<Backend*> backend = BackendFor(in.device);
      if (!backend.ok()) return NameOp(op->name, backend.status());
      TENSORD_ASSIGN_OR_RETURN(storage,
                               Storage::Create((*backend)->allocator(), in.storage_nbytes));
    }
    input_storages.push_back(storage.get());
    tensors.emplace_back(storage, TensorMeta(in.dtype, in.sizes, in.strides, in.storage_offset));
  }
  TENSORD_ASSIGN_OR_RETURN(Attrs typed, AttrsFromWire(*op, attrs));
  if (op->kind == OpKind::kFactory && !typed.Has("device")) typed.Set("device", default_device);
  TENSORD_ASSIGN_OR_RETURN(PlannedOp plan, PlanOp(op->name, tensors, typed));
  std::vector<MetaOutput> outputs;
  outputs.reserve(plan.outputs.size());
  for (const Tensor& t : plan.outputs) {
    MetaOutput out{t.dtype(), t.device(), DimVector(t.sizes().begin(), t.sizes().end()),
                   DimVector(t.strides().begin(), t.strides().end()), t.storage_offset(),
                   t.is_contiguous(), -1, t.storage()->nbytes()};
    for (size_t i = 0; i < input_storages.size(); ++i) {
      if (input_storages[i] == t.storage().get()) out.alias = static_cast<int>(i);
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

}  // namespace tensord::engine
