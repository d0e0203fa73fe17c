// Indexing ops: index_select, gather, scatter/scatter_add, masked_fill, index_add/index_copy/
// index_fill (scatters along one dim), scatter_reduce and masked_scatter (masked_select and
// nonzero, whose sizes depend on the data, are in data_dependent_ops.cc). Indices out of range
// found while a kernel runs fail it (poisoning its outputs).
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/runtime/backend.h"
#include "engine/ops/elementwise.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/tensor/overlap.h"
#include "engine/tensor/shape_util.h"
#include "engine/core/status_macros.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

// The operands of an indexing op on one device (torch's error otherwise).
absl::Status CheckSameDevice(absl::string_view op, std::initializer_list<Tensor> ts) {
  return CommonDevice(op, ts).status();
}

absl::Status CheckIndexDtype(absl::string_view op, const Tensor& index, bool allow_int32) {
  if (index.dtype() == DType::kInt64 || (allow_int32 && index.dtype() == DType::kInt32)) {
    return absl::OkStatus();
  }
  return RuntimeError(op, absl::StrCat(op, "(): Expected dtype int", allow_int32 ? "32/int" : "",
                                       "64 for index"));
}

absl::StatusOr<PlannedOp> PlanIndexSelect(const Tensor& self, int64_t dim, const Tensor& index) {
  constexpr absl::string_view op = "index_select";
  TENSORD_RETURN_IF_ERROR(CheckSameDevice(op, {self, index}));
  TENSORD_RETURN_IF_ERROR(CheckIndexDtype(op, index, true));
  if (index.dim() > 1) {
    return IndexError(op, "index_select(): Index is supposed to be a vector");
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  if (self.dim() == 0 && index.numel() != 1) {
    // torch 1.13 reads past its index (or leaves the result unset) here; torch 2 refuses.
    return IndexError(op, absl::StrCat("index_select(): Index to scalar can have only 1 value, "
                                       "got ", index.numel(), " value(s)"));
  }
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  if (self.dim() > 0) sizes[d] = index.numel();
  TENSORD_ASSIGN_OR_RETURN(Tensor out, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), sizes), self.device()));
  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.reads = {self.storage(), index.storage()};
  plan.writes = {out.storage()};
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  plan.kernel = [backend, self, index, out, d]() -> absl::Status {
    return backend->IndexSelect(out, self, d, index);
  };
  return plan;
}

// gather / scatter share their shape rules.
absl::Status CheckGatherShapes(absl::string_view op, const Tensor& self, int64_t d,
                               const Tensor& index, const Tensor* src) {
  // Ranks first (a 0-d tensor counts as 1-d, as torch's ensure_nonempty_dim), so that no size
  // below is read past a tensor's rank.
  auto nonempty_dim = [](const Tensor& t) { return std::max<int64_t>(t.dim(), 1); };
  if (nonempty_dim(index) != nonempty_dim(self)) {
    return RuntimeError(op, "Index tensor must have the same number of dimensions as " +
                                std::string(src ? "self tensor" : "input tensor"));
  }
  if (src != nullptr && nonempty_dim(index) != nonempty_dim(*src)) {
    return RuntimeError(op, "Index tensor must have the same number of dimensions as src tensor");
  }
  auto nonempty_size = [](const Tensor& t, int64_t k) { return t.dim() == 0 ? 1 : t.size(k); };
  // Every dim, a 0-d tensor's one included (torch's ensure_nonempty_size).
  for (int64_t k = 0; k < nonempty_dim(index); ++k) {
    const int64_t size = nonempty_size(index, k);
    if (k != d && size > nonempty_size(self, k)) {
      return RuntimeError(op, absl::StrCat("Size does not match at dimension ", k,
                                           " expected index ", FormatList(index.sizes()),
                                           " to be smaller than self ", FormatList(self.sizes()),
                                           " apart from dimension ", d));
    }
    if (src && size > nonempty_size(*src, k)) {
      return RuntimeError(op, absl::StrCat("Expected index ", FormatList(index.sizes()),
                                           " to be smaller than self ", FormatList(self.sizes()),
                                           " apart from dimension ", d,
                                           " and to be smaller size than src ",
                                           FormatList(src->sizes())));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PlannedOp> PlanGather(const Tensor& self, int64_t dim, const Tensor& index) {
  constexpr absl::string_view op = "gather";
  TENSORD_RETURN_IF_ERROR(CheckSameDevice(op, {self, index}));
  if (index.dtype() != DType::kInt64) {
    return RuntimeError(op, "gather(): Expected dtype int64 for index");
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  TENSORD_RETURN_IF_ERROR(CheckGatherShapes(op, self, d, index, nullptr));
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), index.sizes()), self.device()));
  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.reads = {self.storage(), index.storage()};
  plan.writes = {out.storage()};
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  plan.kernel = [backend, self, index, out, d]() -> absl::Status {
    return backend->Gather(out, self, d, index);
  };
  return plan;
}

// scatter_ / scatter_add_ into `self` (in place); src is a tensor or a 0-d value.
absl::StatusOr<PlannedOp> PlanScatterInto(absl::string_view op, const Tensor& self, int64_t dim,
                                          const Tensor& index, const Tensor& src,
                                          ScatterMode mode) {
  TENSORD_RETURN_IF_ERROR(CheckSameDevice(op, {self, index, src}));
  if (index.dtype() != DType::kInt64) {
    return RuntimeError(op, absl::StrCat(op, "(): Expected dtype int64 for index"));
  }
  const bool value_form = src.is_wrapped_number();
  if (!value_form && src.dtype() != self.dtype()) {
    return RuntimeError(op, absl::StrCat(op, "(): Expected self.dtype to be equal to src.dtype"));
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  TENSORD_RETURN_IF_ERROR(CheckGatherShapes(op, self, d, index, value_form ? nullptr : &src));
  // The kernel reads index (and src) while it writes self: torch refuses any overlap.
  TENSORD_RETURN_IF_ERROR(CheckNoInternalOverlap(op, self));
  TENSORD_RETURN_IF_ERROR(CheckNoOverlap(op, self, index));
  if (!value_form) TENSORD_RETURN_IF_ERROR(CheckNoOverlap(op, self, src));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  const std::optional<Scalar> value =
      value_form ? std::optional<Scalar>(ScalarOf(src)) : std::nullopt;
  PlannedOp plan;
  plan.outputs.push_back(self);
  plan.reads = {index.storage(), src.storage()};
  plan.writes = {self.storage()};
  const std::string name(op);
  plan.kernel = [backend, self, index, src, value, d, mode, name]() -> absl::Status {
    return backend->Scatter(name, self, d, index, src, value ? &*value : nullptr, mode);
  };
  return plan;
}

absl::StatusOr<PlannedOp> PlanScatter(absl::string_view op, const Tensor& self, int64_t dim,
                                      const Tensor& index, const Tensor& src, ScatterMode mode,
                                      bool in_place) {
  TENSORD_RETURN_IF_ERROR(CheckNumberFits(op, src, self.dtype()));
  if (in_place) return PlanScatterInto(op, self, dim, index, src, mode);
  // Out of place: a contiguous copy (torch's structured scatter and scatter_add allocate their
  // output so), then the in-place scatter on it.
  TENSORD_ASSIGN_OR_RETURN(PlannedOp clone, PlanCloneContiguous(self));
  const Tensor copy = clone.outputs[0];
  TENSORD_ASSIGN_OR_RETURN(PlannedOp scatter, PlanScatterInto(op, copy, dim, index, src, mode));
  PlannedOp plan;
  plan.outputs.push_back(copy);
  plan.reads = {self.storage(), index.storage(), src.storage()};
  plan.writes = {copy.storage()};
  plan.kernel = [c = std::move(clone.kernel), s = std::move(scatter.kernel)]() mutable -> absl::Status {
    if (c) TENSORD_RETURN_IF_ERROR(c());
    return s();
  };
  return plan;
}

// index_add_ / index_copy_ / index_fill_: self's slices along dim at a 1-d index updated, as a
// scatter (add or copy) of source, or of one value, whose index is the 1-d index spread over
// source's (or the slices') shape. torch's argument checks first; an index out of range fails
// the scatter where it runs. Out of place: a clone first (index_add and index_copy contiguous,
// index_fill in self's layout, as torch's).
enum class IndexUpdate { kAdd, kCopy, kFill };

absl::StatusOr<PlannedOp> PlanIndexUpdate(IndexUpdate kind, bool in_place, const Tensor& self_in,
                                          int64_t dim_in, const Tensor& index_in,
                                          const Tensor& source, const Scalar& alpha) {
  const std::string op = std::string(kind == IndexUpdate::kAdd    ? "index_add"
                                     : kind == IndexUpdate::kCopy ? "index_copy"
                                                                  : "index_fill") +
                         (in_place ? "_" : "");
  const std::string checks = absl::StrCat(kind == IndexUpdate::kAdd    ? "index_add_"
                                          : kind == IndexUpdate::kCopy ? "index_copy_"
                                                                       : "index_fill_",
                                          "(): ");
  TENSORD_RETURN_IF_ERROR(CheckSameDevice(op, {self_in, index_in, source}));
  TENSORD_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(op, dim_in, self_in.dim()));
  if (kind == IndexUpdate::kFill) {
    if (index_in.dtype() != DType::kInt64) {
      return IndexError(op, checks + "Expected dtype int64 for index.");
    }
    if (index_in.dim() > 1) return RuntimeError(op, "Index has to be a vector/scalar");
    TENSORD_RETURN_IF_ERROR(CheckNumberFits(op, source, self_in.dtype()));
    if (!source.is_wrapped_number() && source.dim() != 0) {
      return RuntimeError(op, absl::StrCat("index_fill_ only supports a 0-dimensional value "
                                           "tensor, but got tensor with ", source.dim(),
                                           " dimension(s)."));
    }
  } else {
    if (index_in.dim() > 1) {
      return IndexError(op, absl::StrCat(checks, "Index is supposed to be a vector, but got dim: ",
                                         index_in.dim(), " with type: ",
                                         DTypeLegacyName(index_in.dtype()), " and size: ",
                                         FormatList(index_in.sizes())));
    }
    if (kind == IndexUpdate::kCopy && index_in.dtype() != DType::kInt64) {
      return RuntimeError(op, absl::StrCat(checks, "Expected a long tensor for index, but got ",
                                           DTypeLegacyName(index_in.dtype())));
    }
    if (index_in.dtype() != DType::kInt64 && index_in.dtype() != DType::kInt32) {
      return RuntimeError(op, absl::StrCat(checks, "Expected dtype int32/int64 for index but got: ",
                                           DTypeLegacyName(index_in.dtype())));
    }
    if (source.dtype() != self_in.dtype()) {
      return RuntimeError(op, kind == IndexUpdate::kAdd
                                  ? absl::StrCat(checks, "self (", DTypeLegacyName(self_in.dtype()),
                                                 ") and source (",
                                                 DTypeLegacyName(source.dtype()),
                                                 ") must have the same scalar type")
                                  : absl::StrCat(checks, "self and source expected to have the "
                                                         "same dtype, but got (self) ",
                                                 DTypeLegacyName(self_in.dtype()),
                                                 " and (source) ",
                                                 DTypeLegacyName(source.dtype())));
    }
    const int64_t along = source.dim() == 0 ? 1 : source.size(dim < source.dim() ? dim : 0);
    if (index_in.numel() != along) {
      const std::string msg = kind == IndexUpdate::kAdd
          ? absl::StrCat(checks, "Number of indices (", index_in.numel(),
                         ") should be equal to source.size(dim): (", along, "), for dim: ", dim)
          : absl::StrCat(checks, "Number of indices (", index_in.numel(),
                         ") should be equal to source.size(dim) (", along, ")");
      return kind == IndexUpdate::kAdd ? RuntimeError(op, msg) : IndexError(op, msg);
    }
    if (source.dim() > 0 && self_in.dim() > 0) {
      if (source.dim() != self_in.dim()) {
        return IndexError(op, absl::StrCat(checks, "When source and destination are not scalars, "
                                                   "their dimensionality must match. Source "
                                                   "dimensionality (", source.dim(),
                                           "), destination dimensionality (", self_in.dim(),
                                           ")"));
      }
      for (int64_t d = 0; d < self_in.dim(); ++d) {
        if (d != dim && source.size(d) != self_in.size(d)) {
          return RuntimeError(op, absl::StrCat("The size of tensor a (", self_in.size(d),
                                               ") must match the size of tensor b (",
                                               source.size(d), ") at non-singleton dimension ",
                                               d));
        }
      }
    }
  }
  Composition c({self_in, index_in, source});
  Tensor self = self_in;
  if (!in_place) {
    TENSORD_ASSIGN_OR_RETURN(PlannedOp clone, kind == IndexUpdate::kFill
                                                  ? PlanClone(self_in)
                                                  : PlanCloneContiguous(self_in));
    self = c.Add(std::move(clone)).at(0);
  }
  if (index_in.numel() == 0) return std::move(c).Finish({self});
  // 0-d operands as one element along dim 0.
  Tensor target = self;
  if (self.dim() == 0) {
    TENSORD_ASSIGN_OR_RETURN(target, AsStrided(self, {1}, {1}, self.storage_offset()));
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor index, c.ToDType(index_in, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(index, c.Reshape(index, {index_in.numel()}));
  if (kind == IndexUpdate::kFill) {  // index_fill counts from the end for negative indices
    TENSORD_ASSIGN_OR_RETURN(const Tensor negative,
                             c.Op1("lt", {index}, Attrs().Set("other", Scalar(int64_t{0}))));
    TENSORD_ASSIGN_OR_RETURN(const Tensor wrapped,
                             c.Op1("add", {index}, Attrs().Set("other", Scalar(target.size(dim)))));
    TENSORD_ASSIGN_OR_RETURN(index, c.Op1("where", {negative, wrapped, index}));
  }
  // The slices' shape: target's, with dim as long as the index.
  DimVector shape(target.sizes().begin(), target.sizes().end());
  shape[dim] = index_in.numel();
  DimVector along(shape.size(), 1);
  along[dim] = index_in.numel();
  TENSORD_ASSIGN_OR_RETURN(Tensor spread, View(index, along));
  TENSORD_ASSIGN_OR_RETURN(spread, Expand(spread, shape));
  Tensor src;
  if (kind == IndexUpdate::kFill) {
    if (source.is_wrapped_number()) {
      src = source;
    } else {
      TENSORD_ASSIGN_OR_RETURN(src, c.ToDType(source, target.dtype()));
      TENSORD_ASSIGN_OR_RETURN(src, Expand(src, shape));
    }
  } else {
    TENSORD_ASSIGN_OR_RETURN(src, source.dim() == 0 ? View(source, {1})
                                                    : absl::StatusOr<Tensor>(source));
    if (kind == IndexUpdate::kAdd && alpha.to_double() != 1) {
      const Scalar a = IsFloating(target.dtype()) ? alpha : Scalar(alpha.to_int());
      TENSORD_ASSIGN_OR_RETURN(const Tensor scale, WrapNumber(a));
      TENSORD_ASSIGN_OR_RETURN(src, c.Op1("mul", {src, scale}));
      TENSORD_ASSIGN_OR_RETURN(src, c.ToDType(src, target.dtype()));
    }
  }
  TENSORD_ASSIGN_OR_RETURN(PlannedOp scatter,
                           PlanScatterInto(op, target, dim, spread, src,
                                           kind == IndexUpdate::kAdd ? ScatterMode::kAdd
                                                                     : ScatterMode::kAssign));
  c.Add(std::move(scatter));
  return std::move(c).Finish({self});
}

// The identity of scatter_reduce's `mode` in `dtype`: where include_self=False resets the
// elements that receive values (0, 1, the lowest or the largest value).
Scalar ReduceIdentity(ScatterMode mode, DType dtype) {
  const bool low = mode == ScatterMode::kMax;
  if (mode == ScatterMode::kAdd) return Scalar(int64_t{0});
  if (mode == ScatterMode::kMultiply) return Scalar(int64_t{1});
  if (IsFloating(dtype)) {
    return Scalar(low ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity());
  }
  switch (dtype) {
    case DType::kBool: return Scalar(!low);
    case DType::kUInt8: return Scalar(int64_t{low ? 0 : 255});
    case DType::kInt8: return Scalar(int64_t{low ? -128 : 127});
    case DType::kInt16: return Scalar(int64_t{low ? -32768 : 32767});
    case DType::kInt32:
      return Scalar(int64_t{low ? std::numeric_limits<int32_t>::min()
                                : std::numeric_limits<int32_t>::max()});
    default:
      return Scalar(low ? std::numeric_limits<int64_t>::min()
                        : std::numeric_limits<int64_t>::max());
  }
}

// scatter_reduce_: src's elements combined into self's along dim at index by sum, prod, mean,
// amax or amin (NaN wins the last two), over self's own values too unless include_self is
// false; mean divides each element by how many values met in it (floor division for
// integers), as torch's. Out of place: a contiguous clone first.
absl::StatusOr<PlannedOp> PlanScatterReduce(bool in_place, const Tensor& self_in, int64_t dim,
                                            const Tensor& index, const Tensor& src,
                                            const std::string& reduce, bool include_self) {
  const std::string op = in_place ? "scatter_reduce_" : "scatter_reduce";
  ScatterMode mode;
  if (reduce == "sum" || reduce == "mean") {
    mode = ScatterMode::kAdd;
  } else if (reduce == "prod") {
    mode = ScatterMode::kMultiply;
  } else if (reduce == "amax") {
    mode = ScatterMode::kMax;
  } else if (reduce == "amin") {
    mode = ScatterMode::kMin;
  } else {
    return RuntimeError(op, absl::StrCat("reduce argument must be either sum, prod, mean, amax "
                                         "or amin, got ", reduce));
  }
  if (src.is_wrapped_number()) {
    return TypeError(op, "scatter_reduce(): argument 'src' must be Tensor, not a number");
  }
  TENSORD_ASSIGN_OR_RETURN(const int64_t d, WrapDim(op, dim, self_in.dim()));
  Composition c({self_in, index, src});
  Tensor self = self_in;
  if (!in_place) {
    TENSORD_ASSIGN_OR_RETURN(PlannedOp clone, PlanCloneContiguous(self_in));
    self = c.Add(std::move(clone)).at(0);
  }
  if (!include_self) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor identity,
                             WrapNumber(ReduceIdentity(mode, self.dtype())));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp reset, PlanScatterInto(op, self, d, index, identity,
                                                              ScatterMode::kAssign));
    c.Add(std::move(reset));
  }
  TENSORD_ASSIGN_OR_RETURN(PlannedOp combine, PlanScatterInto(op, self, d, index, src, mode));
  c.Add(std::move(combine));
  if (reduce == "mean") {
    TENSORD_ASSIGN_OR_RETURN(const Tensor count, c.Full(self.sizes(), Scalar(int64_t{include_self ? 1 : 0}), self.dtype(), self.device()));
    TENSORD_ASSIGN_OR_RETURN(const Tensor one, c.Full(src.sizes(), Scalar(int64_t{1}), self.dtype(), self.device()));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp tally,
                             PlanScatterInto(op, count, d, index, one, ScatterMode::kAdd));
    c.Add(std::move(tally));
    TENSORD_ASSIGN_OR_RETURN(const Tensor none,
                             c.Op1("eq", {count}, Attrs().Set("other", Scalar(int64_t{0}))));
    TENSORD_RETURN_IF_ERROR(
        c.Op("masked_fill_", {count, none}, Attrs().Set("value", Scalar(int64_t{1}))).status());
    Attrs how;
    if (!IsFloating(self.dtype())) how.Set("rounding_mode", int64_t{2});  // floor
    TENSORD_RETURN_IF_ERROR(c.Op("div_", {self, count}, how).status());
  }
  return std::move(c).Finish({self});
}

// masked_scatter_: self's elements where mask (broadcast to self) is true take source's
// elements in order, as a composition: each true element's rank among the true ones (a cumsum)
// picks its source element (take), and where() keeps the rest. A source with fewer elements
// than the mask's ones fails where the kernels run. Out of place: a contiguous clone of self
// broadcast with mask first.
absl::StatusOr<PlannedOp> PlanMaskedScatter(bool in_place, const Tensor& self_in,
                                            const Tensor& mask, const Tensor& source) {
  const std::string op = in_place ? "masked_scatter_" : "masked_scatter";
  TENSORD_RETURN_IF_ERROR(CheckSameDevice(op, {self_in, mask, source}));
  if (mask.dtype() != DType::kBool && mask.dtype() != DType::kUInt8) {
    return RuntimeError(op, absl::StrCat("masked_scatter_ only supports boolean masks, but got "
                                         "mask with dtype ", DTypeLegacyName(mask.dtype())));
  }
  if (source.dtype() != self_in.dtype()) {
    return RuntimeError(op, absl::StrCat("masked_scatter: expected self and source to have same "
                                         "dtypes but got", DTypeLegacyName(self_in.dtype()),
                                         " and ", DTypeLegacyName(source.dtype())));
  }
  // In place, mask broadcasts to self; out of place, both to their common shape (torch's).
  DimVector shape(self_in.sizes().begin(), self_in.sizes().end());
  if (!in_place) {
    TENSORD_ASSIGN_OR_RETURN(shape, BroadcastShapes(op, self_in.sizes(), mask.sizes()));
  }
  TENSORD_ASSIGN_OR_RETURN(const Tensor spread, Expand(mask, shape));
  Composition c({self_in, mask, source});
  Tensor self = self_in;
  if (!in_place) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor wide, Expand(self_in, shape));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp clone, PlanCloneContiguous(wide));
    self = c.Add(std::move(clone)).at(0);
  }
  if (self.numel() == 0) return std::move(c).Finish({self});
  TENSORD_ASSIGN_OR_RETURN(Tensor flags, c.ToDType(spread, DType::kBool));
  TENSORD_ASSIGN_OR_RETURN(Tensor ranks, c.Reshape(flags, {self.numel()}));
  TENSORD_ASSIGN_OR_RETURN(ranks, c.Op1("cumsum", {ranks}, Attrs().Set("dim", int64_t{0})));
  // The source must cover every true element: source.numel() - ones >= 0, checked where it runs.
  TENSORD_ASSIGN_OR_RETURN(const Tensor ones, Select(ranks, 0, self.numel() - 1));
  TENSORD_ASSIGN_OR_RETURN(Tensor left, c.Op1("neg", {ones}));
  TENSORD_ASSIGN_OR_RETURN(left, c.Op1("add", {left}, Attrs().Set("other", Scalar(source.numel()))));
  TENSORD_RETURN_IF_ERROR(c.CheckValues(ValueCheck::kEnoughSource, op, left));
  if (source.numel() == 0) return std::move(c).Finish({self});  // no true element, then
  TENSORD_ASSIGN_OR_RETURN(ranks, c.Op1("sub", {ranks}, Attrs().Set("other", Scalar(int64_t{1}))));
  TENSORD_ASSIGN_OR_RETURN(ranks, View(ranks, self.sizes()));
  TENSORD_ASSIGN_OR_RETURN(const Tensor zero, WrapNumber(Scalar(int64_t{0})));
  TENSORD_ASSIGN_OR_RETURN(ranks, c.Op1("where", {flags, ranks, zero}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor flat, c.Reshape(source, {source.numel()}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor picked, c.Op1("take", {flat, ranks}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor merged, c.Op1("where", {flags, picked, self}));
  TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCopyInto(self, merged));
  c.Add(std::move(copy));
  return std::move(c).Finish({self});
}

}  // namespace

void RegisterIndexingOps(std::vector<OpDef>& ops) {
  ops.push_back({"index_select", OpKind::kCompute, {"self", "index"},
                 {Req("dim", AttrType::kInt)},
                 "The slices of self along dim at the (1-d, int64/int32) index.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim"));
                   return PlanIndexSelect(in[0], dim, in[1]);
                 }});
  ops.push_back({"gather", OpKind::kCompute, {"self", "index"}, {Req("dim", AttrType::kInt)},
                 "out[i][j] = self[index[i][j]][j] (dim 0), shaped as index.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim"));
                   return PlanGather(in[0], dim, in[1]);
                 }});
  for (const char* n : {"scatter", "scatter_", "scatter_add", "scatter_add_"}) {
    const std::string name = n;
    const bool in_place = name.back() == '_';
    const bool add = name.find("add") != std::string::npos;
    ops.push_back({name, in_place ? OpKind::kInPlace : OpKind::kCompute,
                   {"self", "index", "src"}, {Req("dim", AttrType::kInt)},
                   add ? "self[index[i][j]][j] += src[i][j] (dim 0)."
                       : "self[index[i][j]][j] = src[i][j] (dim 0); src may be a number.",
                   false,
                   [name, in_place, add](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                     TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim"));
                     return PlanScatter(name, in[0], dim, in[1], in[2],
                                        add ? ScatterMode::kAdd : ScatterMode::kAssign, in_place);
                   },
                   false, add ? std::vector<std::string>{} : std::vector<std::string>{"src"}});
  }
  for (const char* n : {"masked_fill", "masked_fill_"}) {
    const std::string name = n;
    const bool in_place = name.back() == '_';
    ops.push_back({name, in_place ? OpKind::kInPlace : OpKind::kCompute, {"self", "mask", "value"},
                   {}, "value where mask (bool, broadcast) is true, else self.", false,
                   [name, in_place](Inputs in, AttrReader&) -> absl::StatusOr<PlannedOp> {
                     return PlanMaskedFill(name, in[0], in[1], in[2], in_place ? &in[0] : nullptr);
                   },
                   false, {"value"}});
  }
  for (const IndexUpdate kind : {IndexUpdate::kAdd, IndexUpdate::kCopy, IndexUpdate::kFill}) {
    for (const bool in_place : {true, false}) {
      const std::string base = kind == IndexUpdate::kAdd    ? "index_add"
                               : kind == IndexUpdate::kCopy ? "index_copy"
                                                            : "index_fill";
      const std::string name = base + (in_place ? "_" : "");
      std::vector<AttrSpec> attrs = {Req("dim", AttrType::kInt)};
      if (kind == IndexUpdate::kAdd) attrs.push_back(Opt("alpha", AttrType::kScalar, "1"));
      OpDef def{name, in_place ? OpKind::kInPlace : OpKind::kCompute,
                {"self", "index", kind == IndexUpdate::kFill ? "value" : "source"}, attrs,
                kind == IndexUpdate::kAdd    ? "self's slices along dim at index += alpha * source's."
                : kind == IndexUpdate::kCopy ? "self's slices along dim at index = source's."
                                             : "self's slices along dim at index = value.",
                false,
                [kind, in_place](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                  TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim"));
                  TENSORD_ASSIGN_OR_RETURN(Scalar alpha, a.GetScalar("alpha", Scalar(int64_t{1})));
                  return PlanIndexUpdate(kind, in_place, in[0], dim, in[1], in[2], alpha);
                }};
      if (kind == IndexUpdate::kFill) def.scalar_inputs = {"value"};
      ops.push_back(std::move(def));
    }
  }
  for (const bool in_place : {true, false}) {
    const std::string name = in_place ? "masked_scatter_" : "masked_scatter";
    ops.push_back({name, in_place ? OpKind::kInPlace : OpKind::kCompute,
                   {"self", "mask", "source"}, {},
                   "self's elements where mask (broadcast) is true take source's elements, in "
                   "order.",
                   false, [in_place](Inputs in, AttrReader&) {
                     return PlanMaskedScatter(in_place, in[0], in[1], in[2]);
                   }});
  }
  for (const bool in_place : {true, false}) {
    const std::string name = in_place ? "scatter_reduce_" : "scatter_reduce";
    ops.push_back({name, in_place ? OpKind::kInPlace : OpKind::kCompute,
                   {"self", "index", "src"},
                   {Req("dim", AttrType::kInt),
                    Req("reduce", AttrType::kString, "sum, prod, mean, amax or amin"),
                    Opt("include_self", AttrType::kBool, "true")},
                   "src's elements combined into self's along dim at index by the reduction "
                   "(self's own values included unless include_self is false).",
                   false, [in_place](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                     TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim"));
                     TENSORD_ASSIGN_OR_RETURN(std::string reduce, a.String("reduce"));
                     TENSORD_ASSIGN_OR_RETURN(bool include_self, a.Bool("include_self", true));
                     return PlanScatterReduce(in_place, in[0], dim, in[1], in[2], reduce,
                                              include_self);
                   }});
  }
}

}  // namespace tensord::engine
