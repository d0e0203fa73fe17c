// Joining tensors: cat and stack (ATen's TensorShape.cpp rules). The result is a new contiguous
// tensor of the inputs' promoted dtype, and each input is copied into its slice of it: one
// composition, so a list of any length is one op on every device.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/ops/type_promotion.h"
#include "engine/runtime/backend.h"
#include "engine/tensor/shape_util.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

// torch's cat device check, with its message.
absl::StatusOr<Device> JoinDevice(absl::string_view op, Inputs tensors) {
  const Device device = tensors[0].device();
  for (const Tensor& t : tensors) {
    if (t.device() != device) {
      return RuntimeError(op, absl::StrCat("Expected all tensors to be on the same device, but "
                                           "found at least two devices, ", device.ToString(),
                                           " and ", t.device().ToString(),
                                           "! (when checking argument for argument tensors in "
                                           "method wrapper_cat)"));
    }
  }
  return device;
}

absl::StatusOr<PlannedOp> PlanCat(absl::string_view op, Inputs tensors, int64_t dim) {
  if (tensors.empty()) {
    return RuntimeError(op, "torch.cat(): expected a non-empty list of Tensors");
  }
  TENSORD_ASSIGN_OR_RETURN(const Device device, JoinDevice(op, tensors));
  const DType dtype = ResultType(tensors);
  // The legacy rule: 1-d empty tensors are skipped whatever the others' shapes.
  const auto skipped = [](const Tensor& t) { return t.dim() == 1 && t.sizes()[0] == 0; };
  const Tensor* ref = nullptr;
  size_t ref_index = 0;
  for (size_t i = 0; i < tensors.size() && ref == nullptr; ++i) {
    if (!skipped(tensors[i])) ref = &tensors[i], ref_index = i;
  }
  Composition c(tensors);
  if (ref == nullptr) {
    TENSORD_ASSIGN_OR_RETURN(Tensor out,
                             AllocateTensor(op, TensorMeta::Contiguous(dtype, {0}), device));
    return std::move(c).Finish({out});
  }
  if (ref->dim() == 0) {
    return RuntimeError(op, absl::StrCat("zero-dimensional tensor (at position ", ref_index,
                                         ") cannot be concatenated"));
  }
  TENSORD_ASSIGN_OR_RETURN(const int64_t d, WrapDim(op, dim, ref->dim()));
  DimVector shape(ref->sizes().begin(), ref->sizes().end());
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    if (t.dim() != ref->dim()) {
      return RuntimeError(op, absl::StrCat("Tensors must have same number of dimensions: got ",
                                           ref->dim(), " and ", t.dim()));
    }
    for (int64_t k = 0; k < ref->dim(); ++k) {
      if (k != d && t.sizes()[k] != ref->sizes()[k]) {
        return RuntimeError(op, absl::StrCat("Sizes of tensors must match except in dimension ",
                                             d, ". Expected size ", ref->sizes()[k],
                                             " but got size ", t.sizes()[k], " for tensor number ",
                                             i, " in the list."));
      }
    }
    if (__builtin_add_overflow(total, t.sizes()[d], &total)) {
      return RuntimeError(op, "the joined size overflows int64");
    }
  }
  shape[d] = total;
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta::Contiguous(dtype, shape), device));
  // Contiguous inputs of out's dtype: one kernel copies every row's pieces (Backend::Concat).
  bool plain = true;
  for (const Tensor& t : tensors) {
    if (!skipped(t)) plain = plain && t.dtype() == dtype && t.is_contiguous();
  }
  if (plain) {
    int64_t outer = 1, inner = ItemSize(dtype);
    for (int64_t k = 0; k < d; ++k) outer *= shape[k];  // out's sizes: no overflow
    for (int64_t k = d + 1; k < static_cast<int64_t>(shape.size()); ++k) inner *= shape[k];
    std::vector<Tensor> pieces;
    for (const Tensor& t : tensors) {
      if (!skipped(t) && t.sizes()[d] > 0) pieces.push_back(t);
    }
    TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
    PlannedOp step;
    step.outputs = {out};
    for (const Tensor& t : pieces) step.reads.push_back(t.storage());
    step.writes = {out.storage()};
    step.kernel = [backend, pieces, out, outer, inner, d]() -> absl::Status {
      ConcatCall call;
      call.out = out.data();
      call.outer = outer;
      for (const Tensor& t : pieces) {
        call.inputs.push_back(t.data());
        call.bytes.push_back(t.sizes()[d] * inner);
        call.row_bytes += call.bytes.back();
      }
      if (outer == 0 || call.row_bytes == 0) return absl::OkStatus();
      return backend->Concat(call);
    };
    c.Add(std::move(step));
    return std::move(c).Finish({out});
  }
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    if (skipped(t) || t.sizes()[d] == 0) continue;
    TENSORD_ASSIGN_OR_RETURN(Tensor slice, Narrow(out, d, at, t.sizes()[d]));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCopyInto(slice, t));
    c.Add(std::move(copy));
    at += t.sizes()[d];
  }
  return std::move(c).Finish({out});
}

absl::StatusOr<PlannedOp> PlanStack(Inputs tensors, int64_t dim) {
  constexpr absl::string_view op = "stack";
  if (tensors.empty()) return RuntimeError(op, "stack expects a non-empty TensorList");
  const IntList entry = tensors[0].sizes();
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (!std::equal(entry.begin(), entry.end(), tensors[i].sizes().begin(),
                    tensors[i].sizes().end())) {
      return RuntimeError(op, absl::StrCat("stack expects each tensor to be equal size, but got ",
                                           FormatList(entry), " at entry 0 and ",
                                           FormatList(tensors[i].sizes()), " at entry ", i));
    }
  }
  TENSORD_ASSIGN_OR_RETURN(const int64_t d, WrapDim(op, dim, tensors[0].dim() + 1));
  std::vector<Tensor> unsqueezed;
  unsqueezed.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    TENSORD_ASSIGN_OR_RETURN(Tensor u, Unsqueeze(t, d));
    unsqueezed.push_back(std::move(u));
  }
  return PlanCat(op, unsqueezed, d);
}

}  // namespace

void RegisterJoinOps(std::vector<OpDef>& ops) {
  for (const char* name : {"cat", "concat"}) {
    OpDef def{name, OpKind::kCompute, {"tensors"},
              {Opt("dim", AttrType::kInt, "0")},
              "torch.cat: the tensors joined along dim (sizes equal elsewhere; 1-d empty tensors "
              "skipped), in their promoted dtype.",
              false,
              [name = std::string(name)](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim", 0));
                return PlanCat(name, in, dim);
              }};
    def.variadic = true;
    def.output_format = OutputFormat::kLikeAllInputs;
    ops.push_back(std::move(def));
  }
  OpDef stack{"stack", OpKind::kCompute, {"tensors"},
              {Opt("dim", AttrType::kInt, "0")},
              "torch.stack: tensors of one shape joined along a new dim.", false,
              [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim", 0));
                return PlanStack(in, dim);
              }};
  stack.variadic = true;
  ops.push_back(std::move(stack));
}

}  // namespace tensord::engine
