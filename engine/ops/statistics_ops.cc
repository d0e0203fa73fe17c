// Statistics composed of reductions and elementwise ops, as ATen composes them: nansum,
// nanmean, std_mean, var_mean, aminmax and diff. Each is one server op planned as its
// composition (composition.h), so it runs on every device and its errors raise at the call.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/op_registry_internal.h"
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
  Composition c({self});
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
}

}  // namespace tensord::engine
