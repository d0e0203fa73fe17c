// Statistics composed of reductions and elementwise ops, as ATen composes them: nansum,
// nanmean, std_mean, var_mean, aminmax, diff, quantile, nanquantile and histc. Each is one server op planned as its
// composition (composition.h), so it runs on every device and its errors raise at the call.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/runtime/backend.h"
#include "engine/tensor/shape_util.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

// `attrs` without the ones other than dim and keepdim (for the reduction a composition adds).
Attrs DimsOf(const Attrs& attrs) {
  Attrs out;
  for (const char* name : {"dim", "keepdim"}) {
    if (const AttrValue* v = attrs.Find(name)) out.Set(name, *v);
  }
  return out;
}

// self with its NaNs as zeros (floating dtypes; other dtypes have none).
absl::StatusOr<Tensor> NanAsZero(Composition& c, const Tensor& self) {
  if (!IsFloating(self.dtype())) return self;
  TENSORD_ASSIGN_OR_RETURN(const Tensor nan, c.Op1("isnan", {self}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor zero, WrapNumber(Scalar(0.0)));
  return c.Op1("where", {nan, zero, self});
}

absl::StatusOr<PlannedOp> PlanNansum(const Tensor& self, const Attrs& attrs) {
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(const Tensor clean, NanAsZero(c, self));
  TENSORD_ASSIGN_OR_RETURN(const Tensor sum, c.Op1("sum", {clean}, attrs));
  return std::move(c).Finish({sum});
}

absl::StatusOr<PlannedOp> PlanNanmean(const Tensor& self, const Attrs& attrs) {
  if (!IsFloating(self.dtype())) {
    return RuntimeError("nanmean", absl::StrCat("nanmean(): expected input to have floating "
                                                "point dtype but got ",
                                                DTypeLegacyName(self.dtype())));
  }
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(const Tensor clean, NanAsZero(c, self));
  TENSORD_ASSIGN_OR_RETURN(const Tensor sum, c.Op1("sum", {clean}, attrs));
  TENSORD_ASSIGN_OR_RETURN(const Tensor nan, c.Op1("isnan", {self}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor kept, c.Op1("logical_not", {nan}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor count, c.Op1("sum", {kept}, DimsOf(attrs)));
  TENSORD_ASSIGN_OR_RETURN(const Tensor mean, c.Op1("div", {sum, count}));
  return std::move(c).Finish({mean});
}

// std_mean / var_mean: (std or var, mean) over the same dims.
absl::StatusOr<PlannedOp> PlanMoments(const std::string& name, const Tensor& self,
                                      const Attrs& attrs) {
  const std::string op = name + "_mean";
  if (!IsFloating(self.dtype())) {
    return RuntimeError(op, absl::StrCat(op, " only support floating point and complex dtypes"));
  }
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(const Tensor spread, c.Op1(name, {self}, attrs));
  TENSORD_ASSIGN_OR_RETURN(const Tensor mean, c.Op1("mean", {self}, DimsOf(attrs)));
  return std::move(c).Finish({spread, mean});
}

// aminmax: (amin, amax) over one dim or all of them.
absl::StatusOr<PlannedOp> PlanAminmax(const Tensor& self, std::optional<int64_t> dim,
                                      bool keepdim) {
  constexpr absl::string_view op = "aminmax";
  // torch's CPU kernels: no float16, and no bfloat16 along a dim.
  if (self.device().is_cpu() && (self.dtype() == DType::kFloat16 ||
                                 (self.dtype() == DType::kBFloat16 && dim.has_value()))) {
    return KernelNotImplemented(op, "aminmax_cpu", self.dtype());
  }
  Attrs attrs;
  if (dim.has_value()) {
    TENSORD_ASSIGN_OR_RETURN(const int64_t d, WrapDim(op, *dim, self.dim()));
    if (self.dim() > 0 && self.size(d) == 0) {
      return IndexError(op, absl::StrCat("aminmax(): Expected reduction dim ", d,
                                         " to have non-zero size."));
    }
    attrs.Set("dim", *dim);
  } else if (self.numel() == 0) {
    return RuntimeError(op, "aminmax(): cannot compute aminmax over an empty dimension as the "
                            "operation has no identity.");
  }
  attrs.Set("keepdim", keepdim);
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(Tensor lo, c.Op1("amin", {self}, attrs));
  TENSORD_ASSIGN_OR_RETURN(Tensor hi, c.Op1("amax", {self}, attrs));
  return std::move(c).Finish({lo, hi});
}

// diff: the n-th forward difference along dim (x[i+1] - x[i]; != for bool), after prepend and
// append are joined on.
absl::StatusOr<PlannedOp> PlanDiff(const Tensor& self, int64_t n, int64_t dim_in,
                                   const Tensor& prepend, const Tensor& append) {
  constexpr absl::string_view op = "diff";
  if (self.dim() == 0) {
    return RuntimeError(op, "diff expects input to be at least one-dimensional");
  }
  TENSORD_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(op, dim_in, self.dim()));
  std::vector<Tensor> pieces;
  for (const Tensor* t : {&prepend, &self, &append}) {
    if (!t->defined()) continue;
    if (t->dim() != self.dim()) {
      return RuntimeError(op, "diff expects prepend or append to be the same dimension as input");
    }
    pieces.push_back(*t);
  }
  Composition c({self, prepend, append});
  Tensor x = self;
  if (pieces.size() > 1) {
    Attrs at;
    at.Set("dim", dim);
    TENSORD_ASSIGN_OR_RETURN(x, c.Op1("cat", pieces, at));
  }
  if (n <= 0) {
    TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanClone(x));
    return std::move(c).Finish(c.Add(std::move(copy)));
  }
  for (int64_t i = 0; i < n && x.size(dim) > 0; ++i) {
    const int64_t len = x.size(dim) - 1;
    TENSORD_ASSIGN_OR_RETURN(const Tensor later, Narrow(x, dim, 1, len));
    TENSORD_ASSIGN_OR_RETURN(const Tensor earlier, Narrow(x, dim, 0, len));
    TENSORD_ASSIGN_OR_RETURN(
        x, c.Op1(x.dtype() == DType::kBool ? "ne" : "sub", {later, earlier}));
  }
  if (x.storage() == self.storage()) {  // nothing computed (an empty dim): a copy, not a view
    TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanClone(x));
    return std::move(c).Finish(c.Add(std::move(copy)));
  }
  return std::move(c).Finish({x});
}

// quantile / nanquantile, as ATen's quantile_compute: each row sorted (NaN last), the ranks
// q * (n - 1) (for nanquantile over the row's non-NaN count; a row with a NaN ranks its last
// element for quantile), rounded as `interpolation` says, and the neighbours gathered and
// interpolated. Rows are laid out as the result keeps them (keepdim's size-1 dims included),
// with q's dim moved first: torch's strides.
absl::StatusOr<PlannedOp> PlanQuantile(absl::string_view op, const Tensor& self, const Tensor& q,
                                       std::optional<int64_t> dim, bool keepdim,
                                       const std::string& interpolation, bool ignore_nan) {
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, {self, q}));
  if (self.numel() == 0) return RuntimeError(op, "quantile() input tensor must be non-empty");
  if (q.dim() > 1) return RuntimeError(op, "quantile() q must be a scalar or 1D tensor");
  if (self.dtype() != DType::kFloat32 && self.dtype() != DType::kFloat64) {
    return RuntimeError(op, "quantile() input tensor must be either float or double dtype");
  }
  if (!q.is_wrapped_number() && q.dtype() != self.dtype()) {
    return RuntimeError(op, "quantile() q tensor must be same dtype as the input tensor");
  }
  double q_number = 0;
  if (q.is_wrapped_number()) {
    q_number = ScalarOf(q).to_double();
    if (!(q_number >= 0 && q_number <= 1)) {
      return RuntimeError(op, absl::StrCat("quantile() q must be in the range [0, 1] but got ",
                                           q_number));
    }
  }
  const std::string& mode = interpolation;
  if (mode != "linear" && mode != "lower" && mode != "higher" && mode != "midpoint" &&
      mode != "nearest") {
    return RuntimeError(op, absl::StrCat("quantile() interpolation must be one of linear, lower, "
                                         "higher, midpoint or nearest, but got ", mode));
  }
  Composition c({self, q});
  // The rows: kept dims (size 1 where keepdim keeps a reduced one), the reduced dim last.
  Tensor rows;
  if (self.dim() == 0) {  // one element, whatever dim and keepdim say: a 0-d result
    TENSORD_ASSIGN_OR_RETURN(const int64_t d, WrapDim(op, dim.value_or(0), 0));
    (void)d;
    TENSORD_ASSIGN_OR_RETURN(rows, View(self, {1}));
  } else if (dim.has_value()) {
    TENSORD_ASSIGN_OR_RETURN(const int64_t d, WrapDim(op, *dim, self.dim()));
    TENSORD_ASSIGN_OR_RETURN(rows, Movedim(self, {d}, {-1}));
    if (keepdim && self.dim() > 0) {
      TENSORD_ASSIGN_OR_RETURN(rows, Unsqueeze(rows, d));
    }
  } else {
    DimVector shape(keepdim ? self.dim() : 0, 1);
    shape.push_back(self.numel());
    TENSORD_ASSIGN_OR_RETURN(rows, c.Reshape(self, shape));
  }
  TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> sorted_pair,
                           c.Op("sort", {rows},
                                Attrs().Set("dim", int64_t{-1}).Set("stable", true)));
  const Tensor sorted = sorted_pair.at(0);
  const int64_t last = sorted.size(sorted.dim() - 1) - 1;
  // q as a tensor of self's dtype, its values checked where the kernels run.
  Tensor qt;
  if (q.is_wrapped_number()) {  // a number: a 0-d tensor of self's dtype, as ATen makes it
    TENSORD_ASSIGN_OR_RETURN(qt, c.Full({}, Scalar(q_number), self.dtype(), device));
  } else {
    qt = q;
    TENSORD_RETURN_IF_ERROR(c.CheckValues(ValueCheck::kUnitInterval, op, qt));
  }
  TENSORD_ASSIGN_OR_RETURN(const Tensor nan, c.Op1("isnan", {sorted}));
  Tensor ranks;
  if (ignore_nan) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor kept, c.Op1("logical_not", {nan}));
    TENSORD_ASSIGN_OR_RETURN(Tensor count,
                             c.Op1("sum", {kept}, Attrs()
                                                      .Set("dim", std::vector<int64_t>{-1})
                                                      .Set("keepdim", true)));
    TENSORD_ASSIGN_OR_RETURN(count, c.Op1("sub", {count}, Attrs().Set("other", Scalar(int64_t{1}))));
    TENSORD_ASSIGN_OR_RETURN(ranks, c.Op1("mul", {qt, count}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor negative,
                             c.Op1("lt", {ranks}, Attrs().Set("other", Scalar(int64_t{0}))));
    TENSORD_ASSIGN_OR_RETURN(ranks, c.Op1("masked_fill", {ranks, negative},
                                          Attrs().Set("value", Scalar(int64_t{0}))));
  } else {
    TENSORD_ASSIGN_OR_RETURN(const Tensor any_nan,
                             c.Op1("any", {nan}, Attrs()
                                                     .Set("dim", std::vector<int64_t>{-1})
                                                     .Set("keepdim", true)));
    TENSORD_ASSIGN_OR_RETURN(ranks, c.Op1("mul", {qt}, Attrs().Set("other", Scalar(last))));
    TENSORD_ASSIGN_OR_RETURN(const DimVector shape,
                             BroadcastShapes(op, ranks.sizes(), any_nan.sizes()));
    TENSORD_ASSIGN_OR_RETURN(ranks, Expand(ranks, shape));
    TENSORD_ASSIGN_OR_RETURN(ranks, c.Op1("masked_fill", {ranks, any_nan},
                                          Attrs().Set("value", Scalar(last))));
  }
  if (mode == "lower" || mode == "higher" || mode == "nearest") {
    TENSORD_ASSIGN_OR_RETURN(
        ranks, c.Op1(mode == "lower" ? "floor" : mode == "higher" ? "ceil" : "round", {ranks}));
  }
  const Attrs along = Attrs().Set("dim", int64_t{-1});
  // A 0-d q ranks one position per row: a last dim of 1, squeezed at the end.
  if (ranks.dim() < sorted.dim()) {
    TENSORD_ASSIGN_OR_RETURN(ranks, Unsqueeze(ranks, ranks.dim()));
    DimVector shape(sorted.sizes().begin(), sorted.sizes().end());
    shape.back() = ranks.size(ranks.dim() - 1);
    TENSORD_ASSIGN_OR_RETURN(ranks, Expand(ranks, shape));
  }
  TENSORD_ASSIGN_OR_RETURN(const Tensor below, c.ToDType(ranks, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(Tensor values, c.Op1("gather", {sorted, below}, along));
  if (mode == "linear" || mode == "midpoint") {
    Tensor weights;
    if (mode == "midpoint") {
      TENSORD_ASSIGN_OR_RETURN(weights, WrapNumber(Scalar(0.5)));
    } else {
      TENSORD_ASSIGN_OR_RETURN(weights, c.Op1("sub", {ranks, below}));
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor above, c.Op1("ceil", {ranks}));
    TENSORD_ASSIGN_OR_RETURN(above, c.ToDType(above, DType::kInt64));
    TENSORD_ASSIGN_OR_RETURN(const Tensor upper, c.Op1("gather", {sorted, above}, along));
    TENSORD_ASSIGN_OR_RETURN(values, c.Op1("lerp", {values, upper, weights}));
  }
  if (q.dim() == 0) {
    TENSORD_ASSIGN_OR_RETURN(values, SqueezeDim(values, values.dim() - 1));
  } else {
    TENSORD_ASSIGN_OR_RETURN(values, Movedim(values, {values.dim() - 1}, {0}));
  }
  return std::move(c).Finish({values});
}

// histc: `bins` equal bins over [min, max] (the data's own range where min == max, widened by
// 1 on each side when that is empty), each element's bin (x - lo) * bins / (hi - lo) as torch's
// histogram kernel computes it, the last edge counted in the last bin, elements outside in
// none (a NaN, which torch does not skip, in the first): a scatter-add of ones. A range that
// is not finite fails where the kernels run.
absl::StatusOr<PlannedOp> PlanHistc(const Tensor& self, int64_t bins, double min, double max) {
  constexpr absl::string_view op = "histc";
  if (bins <= 0) {
    return RuntimeError(op, absl::StrCat("torch.histogram(): bins must be > 0, but got ", bins,
                                         " for dimension 0"));
  }
  if (!IsFloating(self.dtype()) || (self.device().is_cpu() && self.dtype() == DType::kFloat16)) {
    return KernelNotImplemented(op, "histogram_cpu", self.dtype());
  }
  if (min > max) return RuntimeError(op, "torch.histc: max must be larger than min");
  const Device device = self.device();
  const DType dtype = self.dtype();
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(const Tensor x, c.Reshape(self, {self.numel()}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor out, c.Full({bins}, Scalar(0.0), dtype, device));
  if (self.numel() == 0) return std::move(c).Finish({out});
  Tensor lo, hi;
  if (min == max) {
    TENSORD_ASSIGN_OR_RETURN(lo, c.Op1("amin", {x}));
    TENSORD_ASSIGN_OR_RETURN(hi, c.Op1("amax", {x}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor same, c.Op1("eq", {lo, hi}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor lo1, c.Op1("sub", {lo}, Attrs().Set("other", Scalar(int64_t{1}))));
    TENSORD_ASSIGN_OR_RETURN(const Tensor hi1, c.Op1("add", {hi}, Attrs().Set("other", Scalar(int64_t{1}))));
    TENSORD_ASSIGN_OR_RETURN(lo, c.Op1("where", {same, lo1, lo}));
    TENSORD_ASSIGN_OR_RETURN(hi, c.Op1("where", {same, hi1, hi}));
  } else {
    TENSORD_ASSIGN_OR_RETURN(lo, c.Full({}, Scalar(min), dtype, device));
    TENSORD_ASSIGN_OR_RETURN(hi, c.Full({}, Scalar(max), dtype, device));
  }
  for (const Tensor& edge : {lo, hi}) {
    TENSORD_RETURN_IF_ERROR(c.CheckValues(ValueCheck::kFinite, op, edge));
  }
  // torch skips the elements below lo or above hi; a NaN is neither, and its kernel puts it
  // in the first bin.
  TENSORD_ASSIGN_OR_RETURN(const Tensor under, c.Op1("lt", {x, lo}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor over, c.Op1("gt", {x, hi}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor outside, c.Op1("logical_or", {under, over}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor inside, c.Op1("logical_not", {outside}));
  TENSORD_ASSIGN_OR_RETURN(Tensor pos, c.Op1("sub", {x, lo}));
  TENSORD_ASSIGN_OR_RETURN(pos, c.Op1("mul", {pos}, Attrs().Set("other", Scalar(bins))));
  TENSORD_ASSIGN_OR_RETURN(const Tensor width, c.Op1("sub", {hi, lo}));
  TENSORD_ASSIGN_OR_RETURN(pos, c.Op1("div", {pos, width}));
  TENSORD_ASSIGN_OR_RETURN(pos, c.Op1("clamp", {pos}, Attrs()
                                                          .Set("min", Scalar(int64_t{0}))
                                                          .Set("max", Scalar(bins - 1))));
  TENSORD_ASSIGN_OR_RETURN(const Tensor zero, WrapNumber(Scalar(int64_t{0})));
  TENSORD_ASSIGN_OR_RETURN(const Tensor nan, c.Op1("isnan", {pos}));
  TENSORD_ASSIGN_OR_RETURN(pos, c.Op1("where", {nan, zero, pos}));
  TENSORD_ASSIGN_OR_RETURN(pos, c.ToDType(pos, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(const Tensor ones, c.ToDType(inside, dtype));
  TENSORD_RETURN_IF_ERROR(
      c.Op("scatter_add_", {out, pos, ones}, Attrs().Set("dim", int64_t{0})).status());
  return std::move(c).Finish({out});
}

// histogram (torch.histogram, 1-d histogramdd): counts (or summed weights) of self's elements
// in the bins between consecutive edges; edges either given (`edges`, 1-d, self's dtype) or
// `bins` + 1 of them spaced as torch.linspace over `range` (the data's own where none is given,
// widened by 0.5 each side where empty). An element falls in the bin upper_bound(edges) - 1,
// the last edge (and NaN, as torch's kernel) in the last bin; elements outside [first, last]
// edge in none.
// density: divided by the total, then by each bin's width. Returns (hist, bin_edges).
absl::StatusOr<PlannedOp> PlanHistogram(const Tensor& self, int64_t bins, const Tensor& edges_in,
                                        std::optional<std::pair<double, double>> range,
                                        const Tensor& weight, bool density) {
  constexpr absl::string_view op = "histogram";
  // torch's messages name the dtypes by their C types here.
  const auto c_type = [](DType d) -> std::string {
    return d == DType::kFloat32 ? "float" : d == DType::kFloat64 ? "double" : DTypeName(d);
  };
  const DType dtype = self.dtype();
  const Device device = self.device();
  std::vector<Tensor> operands = {self};
  for (const Tensor& t : {edges_in, weight}) {
    if (t.defined()) operands.push_back(t);
  }
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, operands).status());
  // torch's CPU: the data's range is found for float32/float64 only; the counting kernel also
  // takes bfloat16.
  const bool data_range = !edges_in.defined() && !range.has_value();
  if (!IsFloating(dtype) ||
      (device.is_cpu() && (dtype == DType::kFloat16 || dtype == DType::kBFloat16) &&
       data_range)) {
    return KernelNotImplemented(op, "histogramdd", dtype);
  }
  if (device.is_cpu() && dtype == DType::kFloat16) {
    return KernelNotImplemented(op, "histogram_cpu", dtype);
  }
  if (edges_in.defined()) {
    if (edges_in.dim() != 1) {
      return RuntimeError(op, absl::StrCat("torch.histogramdd: bins tensor should have one "
                                           "dimension, but got ", edges_in.dim(), " dimensions "
                                           "in the bins tensor for dimension 0"));
    }
    if (edges_in.dtype() != dtype) {
      return RuntimeError(op, absl::StrCat("torch.histogramdd: input tensor and bins tensors "
                                           "should have the same dtype, but got input with "
                                           "dtype ", c_type(dtype), " and bins for dimension 0 "
                                           "with dtype ", c_type(edges_in.dtype())));
    }
    bins = edges_in.numel() - 1;
  }
  if (bins <= 0) {
    return RuntimeError(op, absl::StrCat("torch.histogram(): bins must be > 0, but got ", bins,
                                         " for dimension 0"));
  }
  if (bins == std::numeric_limits<int64_t>::max()) {
    return RuntimeError(op, absl::StrCat("torch.histogram(): ", bins, " bins' edges overflow "
                                         "int64"));
  }
  if (weight.defined()) {
    // torch flattens both: only the element counts must agree.
    if (weight.numel() != self.numel()) {
      return RuntimeError(op, absl::StrCat("torch.histogramdd: if weight tensor is provided it "
                                           "should have the same shape as the input tensor "
                                           "excluding its innermost dimension, but got input "
                                           "with shape [", self.numel(), ", 1] and weight with "
                                           "shape ", FormatList(weight.sizes())));
    }
    if (weight.dtype() != dtype) {
      return RuntimeError(op, absl::StrCat("torch.histogramdd: if weight tensor is provided, "
                                           "input tensor and weight tensor should have the "
                                           "same dtype, but got input(", c_type(dtype),
                                           "), and weight(", c_type(weight.dtype()), ")"));
    }
  }
  if (range && range->first > range->second) {
    return RuntimeError(op, absl::StrCat("torch.histogramdd: min should not exceed max, but got "
                                         "min ", range->first, " max ", range->second,
                                         " for dimension 0"));
  }
  if (range && !(std::isfinite(range->first) && std::isfinite(range->second))) {
    return RuntimeError(op, absl::StrCat("torch.histogramdd: dimension 0's range [",
                                         range->first, ", ", range->second, "] is not finite"));
  }
  Composition c(operands);
  TENSORD_ASSIGN_OR_RETURN(const Tensor x, c.Reshape(self, {self.numel()}));
  Tensor edges, lo, hi;
  if (edges_in.defined()) {
    // bin_edges is a new contiguous tensor (clone makes a 1-d tensor dense).
    TENSORD_ASSIGN_OR_RETURN(edges, c.Op1("clone", {edges_in}));
    TENSORD_ASSIGN_OR_RETURN(lo, Select(edges, 0, 0));
    TENSORD_ASSIGN_OR_RETURN(hi, Select(edges, 0, bins));
  } else {
    if (range) {
      double a = range->first, b = range->second;
      if (a == b) a -= 0.5, b += 0.5;
      TENSORD_ASSIGN_OR_RETURN(lo, c.Full({}, Scalar(a), dtype, device));
      TENSORD_ASSIGN_OR_RETURN(hi, c.Full({}, Scalar(b), dtype, device));
    } else if (x.numel() == 0) {
      TENSORD_ASSIGN_OR_RETURN(lo, c.Full({}, Scalar(0.0), dtype, device));
      TENSORD_ASSIGN_OR_RETURN(hi, c.Full({}, Scalar(1.0), dtype, device));
    } else {
      TENSORD_ASSIGN_OR_RETURN(lo, c.Op1("amin", {x}));
      TENSORD_ASSIGN_OR_RETURN(hi, c.Op1("amax", {x}));
      for (const Tensor& edge : {lo, hi}) {
        TENSORD_RETURN_IF_ERROR(c.CheckValues(ValueCheck::kFinite, op, edge));
      }
      TENSORD_ASSIGN_OR_RETURN(const Tensor same, c.Op1("eq", {lo, hi}));
      TENSORD_ASSIGN_OR_RETURN(const Tensor lo1, c.Op1("sub", {lo}, Attrs().Set("other", Scalar(0.5))));
      TENSORD_ASSIGN_OR_RETURN(const Tensor hi1, c.Op1("add", {hi}, Attrs().Set("other", Scalar(0.5))));
      TENSORD_ASSIGN_OR_RETURN(lo, c.Op1("where", {same, lo1, lo}));
      TENSORD_ASSIGN_OR_RETURN(hi, c.Op1("where", {same, hi1, hi}));
    }
    // torch.linspace(lo, hi, bins + 1): the first half counted up from lo, the rest down from hi.
    TENSORD_ASSIGN_OR_RETURN(const Tensor i, c.Arange(Scalar(int64_t{0}), Scalar(bins + 1),
                                                      Scalar(int64_t{1}), dtype, device));
    TENSORD_ASSIGN_OR_RETURN(Tensor step, c.Op1("sub", {hi, lo}));
    TENSORD_ASSIGN_OR_RETURN(step, c.Op1("div", {step}, Attrs().Set("other", Scalar(bins))));
    TENSORD_ASSIGN_OR_RETURN(Tensor up, c.Op1("mul", {i, step}));
    TENSORD_ASSIGN_OR_RETURN(up, c.Op1("add", {up, lo}));
    TENSORD_ASSIGN_OR_RETURN(Tensor left, c.Op1("neg", {i}));
    TENSORD_ASSIGN_OR_RETURN(left, c.Op1("add", {left}, Attrs().Set("other", Scalar(bins))));
    TENSORD_ASSIGN_OR_RETURN(Tensor down, c.Op1("mul", {left, step}));
    TENSORD_ASSIGN_OR_RETURN(down, c.Op1("sub", {hi, down}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor first_half,
                             c.Op1("lt", {i}, Attrs().Set("other", Scalar((bins + 1) / 2))));
    TENSORD_ASSIGN_OR_RETURN(edges, c.Op1("where", {first_half, up, down}));
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor hist, c.Full({bins}, Scalar(0.0), dtype, device));
  if (x.numel() > 0) {
    // As torch's kernel: below the first edge or above the last is skipped; NaN is neither
    // and lands in the last bin (upper_bound puts it past every edge).
    TENSORD_ASSIGN_OR_RETURN(const Tensor under, c.Op1("lt", {x, lo}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor over, c.Op1("gt", {x, hi}));
    TENSORD_ASSIGN_OR_RETURN(Tensor inside, c.Op1("logical_or", {under, over}));
    TENSORD_ASSIGN_OR_RETURN(inside, c.Op1("logical_not", {inside}));
    TENSORD_ASSIGN_OR_RETURN(Tensor pos, c.Op1("searchsorted", {edges, x, Tensor()},
                                               Attrs().Set("right", true)));
    TENSORD_ASSIGN_OR_RETURN(pos, c.Op1("clamp", {pos}, Attrs()
                                                            .Set("min", Scalar(int64_t{1}))
                                                            .Set("max", Scalar(bins))));
    TENSORD_ASSIGN_OR_RETURN(pos, c.Op1("sub", {pos}, Attrs().Set("other", Scalar(int64_t{1}))));
    Tensor amount;
    if (weight.defined()) {
      TENSORD_ASSIGN_OR_RETURN(const Tensor w, c.Reshape(weight, {self.numel()}));
      TENSORD_ASSIGN_OR_RETURN(const Tensor zero, c.Full({}, Scalar(0.0), dtype, device));
      TENSORD_ASSIGN_OR_RETURN(amount, c.Op1("where", {inside, w, zero}));
    } else {
      TENSORD_ASSIGN_OR_RETURN(amount, c.ToDType(inside, dtype));
    }
    TENSORD_RETURN_IF_ERROR(
        c.Op("scatter_add_", {hist, pos, amount}, Attrs().Set("dim", int64_t{0})).status());
  }
  if (density) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor total, c.Op1("sum", {hist}));
    TENSORD_ASSIGN_OR_RETURN(hist, c.Op1("div", {hist, total}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor right, Narrow(edges, 0, 1, bins));
    TENSORD_ASSIGN_OR_RETURN(const Tensor left, Narrow(edges, 0, 0, bins));
    TENSORD_ASSIGN_OR_RETURN(const Tensor widths, c.Op1("sub", {right, left}));
    TENSORD_ASSIGN_OR_RETURN(hist, c.Op1("div", {hist, widths}));
  }
  return std::move(c).Finish({hist, edges});
}

std::vector<AttrSpec> ReductionAttrs(bool with_dtype) {
  std::vector<AttrSpec> attrs = {
      Opt("dim", AttrType::kIntOrIntList, "None", "dims to reduce; None: all"),
      Opt("keepdim", AttrType::kBool, "false")};
  if (with_dtype) attrs.push_back(Opt("dtype", AttrType::kDType, "None"));
  return attrs;
}

}  // namespace

void RegisterStatisticsOps(std::vector<OpDef>& ops) {
  ops.push_back({"nansum", OpKind::kCompute, {"self"}, ReductionAttrs(true),
                 "Sum over dims with NaN counted as zero.", false,
                 [](Inputs in, AttrReader& a) { return PlanNansum(in[0], a.attrs()); }});
  ops.push_back({"nanmean", OpKind::kCompute, {"self"}, ReductionAttrs(true),
                 "Mean over dims of the elements that are not NaN (floating dtypes).", false,
                 [](Inputs in, AttrReader& a) { return PlanNanmean(in[0], a.attrs()); }});
  for (const char* n : {"std", "var"}) {
    const std::string name = n;
    std::vector<AttrSpec> attrs = ReductionAttrs(false);
    attrs.push_back(Opt("correction", AttrType::kScalar, "1", "Bessel's correction (unbiased=1)"));
    ops.push_back({name + "_mean", OpKind::kCompute, {"self"}, attrs,
                   "(" + name + ", mean) over the same dims (floating dtypes).", true,
                   [name](Inputs in, AttrReader& a) {
                     return PlanMoments(name, in[0], a.attrs());
                   }});
  }
  ops.push_back({"aminmax", OpKind::kCompute, {"self"},
                 {Opt("dim", AttrType::kInt, "None", "None: all dims"),
                  Opt("keepdim", AttrType::kBool, "false")},
                 "(min, max): the smallest and largest elements over a dim or all.", true,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(std::optional<int64_t> dim, a.OptionalInt("dim"));
                   TENSORD_ASSIGN_OR_RETURN(bool keepdim, a.Bool("keepdim", false));
                   return PlanAminmax(in[0], dim, keepdim);
                 }});
  OpDef diff{"diff", OpKind::kCompute, {"self", "prepend", "append"},
             {Opt("n", AttrType::kInt, "1", "how many times to difference"),
              Opt("dim", AttrType::kInt, "-1")},
             "The n-th forward difference along dim (!= for bool), prepend and append joined "
             "on first.",
             false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
               TENSORD_ASSIGN_OR_RETURN(int64_t n, a.Int("n", 1));
               TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim", -1));
               return PlanDiff(in[0], n, dim, in[1], in[2]);
             }};
  diff.scalar_inputs = {"prepend", "append"};
  diff.optional_inputs = {"prepend", "append"};
  ops.push_back(std::move(diff));
  for (const bool ignore_nan : {false, true}) {
    const std::string name = ignore_nan ? "nanquantile" : "quantile";
    OpDef def{name, OpKind::kCompute, {"self", "q"},
              {Opt("dim", AttrType::kInt, "None", "None: over all elements"),
               Opt("keepdim", AttrType::kBool, "false"),
               Opt("interpolation", AttrType::kString, "linear",
                   "linear, lower, higher, midpoint or nearest")},
              ignore_nan ? "The q-th quantiles over dim, NaN ignored (float32/float64)."
                         : "The q-th quantiles over dim (q a number or a 1-d tensor in [0, 1]); "
                           "a row with a NaN gives NaN.",
              false, [name, ignore_nan](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                TENSORD_ASSIGN_OR_RETURN(std::optional<int64_t> dim, a.OptionalInt("dim"));
                TENSORD_ASSIGN_OR_RETURN(bool keepdim, a.Bool("keepdim", false));
                TENSORD_ASSIGN_OR_RETURN(std::string mode, a.String("interpolation", "linear"));
                return PlanQuantile(name, in[0], in[1], dim, keepdim, mode, ignore_nan);
              }};
    def.scalar_inputs = {"q"};
    ops.push_back(std::move(def));
  }
  const auto histogram = [](bool edges_given) {
    return [edges_given](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
      int64_t bins = 0;
      if (!edges_given) {
        TENSORD_ASSIGN_OR_RETURN(bins, a.Int("bins", 100));
      }
      std::optional<std::pair<double, double>> range;
      if (a.Has("min") || a.Has("max")) {
        TENSORD_ASSIGN_OR_RETURN(Scalar lo, a.GetScalar("min", Scalar(0.0)));
        TENSORD_ASSIGN_OR_RETURN(Scalar hi, a.GetScalar("max", Scalar(0.0)));
        range = std::make_pair(lo.to_double(), hi.to_double());
      }
      TENSORD_ASSIGN_OR_RETURN(bool density, a.Bool("density", false));
      return PlanHistogram(in[0], bins, edges_given ? in[1] : Tensor(), range,
                           in[edges_given ? 2 : 1], density);
    };
  };
  const std::vector<AttrSpec> range_attrs = {
      Opt("min", AttrType::kScalar, "None", "range=(min, max); None: the data's own"),
      Opt("max", AttrType::kScalar, "None"), Opt("density", AttrType::kBool, "false")};
  std::vector<AttrSpec> count_attrs = range_attrs;
  count_attrs.insert(count_attrs.begin(), Opt("bins", AttrType::kInt, "100"));
  ops.push_back({"histogram", OpKind::kCompute, {"self", "weight"}, count_attrs,
                 "torch.histogram: (hist, bin_edges), bins equal bins over range (floating "
                 "dtypes); weight (optional) sums instead of counting; density normalizes.",
                 true, histogram(false), false, {"weight"}, {"weight"}});
  ops.push_back({"histogram.bins_tensor", OpKind::kCompute, {"self", "bins", "weight"},
                 range_attrs,
                 "torch.histogram with the bins' edges given (1-d, increasing, self's dtype).",
                 true, histogram(true), false, {"weight"}, {"weight"}});
  ops.push_back({"histc", OpKind::kCompute, {"self"},
                 {Opt("bins", AttrType::kInt, "100"), Opt("min", AttrType::kScalar, "0"),
                  Opt("max", AttrType::kScalar, "0", "min == max: the data's own range")},
                 "Counts of self's elements in bins equal bins over [min, max] (floating "
                 "dtypes).",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t bins, a.Int("bins", 100));
                   TENSORD_ASSIGN_OR_RETURN(Scalar min, a.GetScalar("min", Scalar(int64_t{0})));
                   TENSORD_ASSIGN_OR_RETURN(Scalar max, a.GetScalar("max", Scalar(int64_t{0})));
                   return PlanHistc(in[0], bins, min.to_double(), max.to_double());
                 }});
}

}  // namespace tensord::engine
