#include "engine/ops/index_ops.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/ops/copy_ops.h"
#include "engine/runtime/backend.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/core/status_macros.h"
#include "engine/tensor/overlap.h"

namespace tensord::engine {

namespace {

// What take and put_ both require of their index (and, for put_, source).
absl::Status CheckLinearIndex(absl::string_view op, const Tensor& self, const Tensor& index,
                              const Tensor* source) {
  if (index.dtype() != DType::kInt64) {
    return RuntimeError(op, absl::StrCat(op, "(): Expected a long tensor for index, but got ",
                                         DTypeLegacyName(index.dtype())));
  }
  if (self.device() != index.device() || (source && self.device() != source->device())) {
    return RuntimeError(op, "expected all tensors on the same device");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PlannedOp> PlanTake(const Tensor& self, const Tensor& index) {
  constexpr absl::string_view op = "take";
  TENSORD_RETURN_IF_ERROR(CheckLinearIndex(op, self, index, nullptr));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor out, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), index.sizes()),
                                 self.device()));
  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.reads = {self.storage(), index.storage()};
  plan.writes = {out.storage()};
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  plan.kernel = [backend, self, index, out]() -> absl::Status {
    return backend->Take(out, self, index);
  };
  return plan;
}

absl::StatusOr<PlannedOp> PlanPut(const Tensor& self, const Tensor& index, const Tensor& source,
                                  bool accumulate) {
  constexpr absl::string_view op = "put_";
  TENSORD_RETURN_IF_ERROR(CheckLinearIndex(op, self, index, &source));
  if (self.dtype() != source.dtype()) {
    return RuntimeError(op, absl::StrCat("put_(): self and source expected to have the same "
                                         "dtype, but got self.dtype = ",
                                         DTypeLegacyName(self.dtype()), " and source.dtype = ",
                                         DTypeLegacyName(source.dtype())));
  }
  if (index.numel() != source.numel()) {
    return IndexError(op, absl::StrCat("put_(): Expected source and index to have the same "
                                         "number of elements, but got source.numel() = ",
                                         source.numel(), ", index.numel() = ", index.numel()));
  }
  // The kernel reads index and source while it writes self: torch refuses any overlap. (torch's
  // put_ also refuses an expanded self, but its index_put_ and advanced-index assignment, which
  // the clients send as put_, only warn: put_ here writes through expanded tensors.)
  TENSORD_RETURN_IF_ERROR(CheckNoOverlap(op, self, index));
  TENSORD_RETURN_IF_ERROR(CheckNoOverlap(op, self, source));
  PlannedOp plan;
  plan.outputs.push_back(self);
  plan.reads = {index.storage(), source.storage()};
  plan.writes = {self.storage()};
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  plan.kernel = [backend, self, index, source, accumulate]() -> absl::Status {
    return backend->Put(self, index, source, accumulate);
  };
  return plan;
}

}  // namespace tensord::engine
