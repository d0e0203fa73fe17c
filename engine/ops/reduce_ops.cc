// Reductions (sum, mean, prod, amax/amin, max/min with indices, argmax/argmin, all/any,
// var/std, norm, logsumexp, count_nonzero), scans (cumsum, cumprod, logcumsumexp, cummax,
// cummin) and softmax, with torch
// 1.13's dtype rules and errors. Outputs are contiguous, as torch's.
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ops/copy_ops.h"
#include "engine/kernels/reduce_ops.h"
#include "engine/runtime/backend.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/tensor/shape_util.h"
#include "engine/core/status_macros.h"

namespace tensord::engine {
namespace {

// Which dims a reduction covers: `dims` empty means all of them.
absl::StatusOr<std::vector<bool>> ReducedDims(absl::string_view op, const Tensor& self,
                                              IntList dims) {
  const int64_t nd = self.dim();
  std::vector<bool> reduced(static_cast<size_t>(std::max<int64_t>(nd, 1)), dims.empty());
  for (int64_t d : dims) {
    TENSORD_ASSIGN_OR_RETURN(int64_t w, WrapDim(op, d, nd));
    if (reduced[w] && !dims.empty()) {
      return RuntimeError(op, absl::StrCat("dim ", w, " appears multiple times in the list of dims"));
    }
    reduced[w] = true;
  }
  reduced.resize(static_cast<size_t>(nd));
  return reduced;
}

struct ReducePlanArgs {
  std::string op;
  ReduceOp kind;
  std::vector<int64_t> dims;  // empty: all
  bool keepdim = false;
  DType out_dtype;
  std::optional<DType> input_dtype;  // convert the input first (sum(dtype=…))
  bool with_indices = false;         // max/min with a dim: (values, indices)
  bool needs_nonempty = false;       // amax/argmax/max: no empty reduction
  ReduceArgs args;
  // A dtype the op has no kernel for: reported after the dim checks, and only when there are
  // elements to reduce (torch dispatches no kernel for empty tensors).
  absl::Status dtype_error = absl::OkStatus();
};

absl::StatusOr<PlannedOp> PlanReduce(const Tensor& self, ReducePlanArgs ra) {
  const std::string& op = ra.op;
  TENSORD_ASSIGN_OR_RETURN(std::vector<bool> reduced, ReducedDims(op, self, ra.dims));
  const bool all_dims = ra.dims.empty();
  if (ra.needs_nonempty) {
    if (all_dims && self.numel() == 0) {
      const bool idx = ra.kind == ReduceOp::kArgmax || ra.kind == ReduceOp::kArgmin;
      const std::string msg = absl::StrCat(
          op, "(): Expected reduction dim to be specified for input.numel() == 0.",
          idx ? "" : " Specify the reduction dim with the 'dim' argument.");
      return idx ? IndexError(op, msg) : RuntimeError(op, msg);
    }
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (reduced[d] && self.size(d) == 0) {
        return IndexError(op, absl::StrCat(op, "(): Expected reduction dim ", d,
                                           " to have non-zero size."));
      }
    }
  }
  if (!ra.dtype_error.ok() && self.numel() > 0) return ra.dtype_error;
  DimVector out_sizes;
  ReduceGeometry g;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (reduced[d]) {
      if (ra.keepdim) out_sizes.push_back(1);
      g.red_sizes.push_back(self.size(d));
      g.red_strides.push_back(self.stride(d));
    } else {
      out_sizes.push_back(self.size(d));
      g.kept_sizes.push_back(self.size(d));
      g.kept_strides.push_back(self.stride(d));
    }
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta::Contiguous(ra.out_dtype, out_sizes), self.device()));
  Tensor indices;
  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.writes.push_back(out.storage());
  if (ra.with_indices) {
    TENSORD_ASSIGN_OR_RETURN(indices,
                             AllocateTensor(op, TensorMeta::Contiguous(DType::kInt64, out_sizes), self.device()));
    plan.outputs.push_back(indices);
    plan.writes.push_back(indices.storage());
  }
  plan.reads.push_back(self.storage());
  Tensor converted;
  if (ra.input_dtype && *ra.input_dtype != self.dtype()) {
    TENSORD_ASSIGN_OR_RETURN(converted,
                             AllocateTensor(op, TensorMeta::Contiguous(*ra.input_dtype, self.sizes()), self.device()));
    // The geometry then reads the contiguous copy.
    const DimVector st = ContiguousStrides(self.sizes());
    g.kept_strides.clear();
    g.red_strides.clear();
    for (int64_t d = 0; d < self.dim(); ++d) (reduced[d] ? g.red_strides : g.kept_strides).push_back(st[d]);
  }
  // Merge neighbouring dims that are laid out back to back (logical order kept, so arg
  // reductions still count row-major positions): a contiguous full reduction is one long run.
  const auto coalesce = [](DimVector& sizes, DimVector& strides) {
    DimVector ns, nst;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (!ns.empty() && nst.back() == strides[d] * sizes[d]) {
        ns.back() *= sizes[d];
        nst.back() = strides[d];
      } else {
        ns.push_back(sizes[d]);
        nst.push_back(strides[d]);
      }
    }
    sizes = ns;
    strides = nst;
  };
  coalesce(g.red_sizes, g.red_strides);
  coalesce(g.kept_sizes, g.kept_strides);
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  plan.kernel = [backend, self, converted, out, indices, g, ra]() -> absl::Status {
    StridedRef in = StridedRef::Of(self);
    if (converted.defined()) {
      TENSORD_RETURN_IF_ERROR(backend->Copy(self.sizes(), StridedRef::Of(converted), in));
      in = StridedRef::Of(converted);
    }
    return backend->Reduce(ra.kind, g, in, out.data(), out.dtype(),
                           indices.defined() ? indices.data_as<int64_t>() : nullptr, ra.args);
  };
  return plan;
}

// The common attributes: dim (int or list, optional), keepdim.
absl::Status ReadDims(AttrReader& a, ReducePlanArgs& ra) {
  if (a.Has("dim")) {
    bool was_list = false;
    TENSORD_ASSIGN_OR_RETURN(ra.dims, a.IntOrIntList("dim", &was_list));
    if (was_list && ra.dims.empty()) ra.dims.clear();  // dim=[]: all dims, as torch 1.13
  }
  if (a.Has("keepdim")) {
    TENSORD_ASSIGN_OR_RETURN(ra.keepdim, a.Bool("keepdim"));
  }
  return absl::OkStatus();
}

std::vector<AttrSpec> DimAttrs(bool with_dtype) {
  std::vector<AttrSpec> attrs = {
      Opt("dim", AttrType::kIntOrIntList, "None", "dims to reduce; None: all"),
      Opt("keepdim", AttrType::kBool, "false")};
  if (with_dtype) attrs.push_back(Opt("dtype", AttrType::kDType, "None"));
  return attrs;
}

using Planner = std::function<absl::StatusOr<PlannedOp>(const Tensor&, AttrReader&)>;

void Add(std::vector<OpDef>& ops, std::string name, std::vector<AttrSpec> attrs, std::string doc,
         Planner plan, bool multi = false) {
  ops.push_back({std::move(name), OpKind::kCompute, {"self"}, std::move(attrs), std::move(doc),
                 multi, [plan](Inputs in, AttrReader& a) { return plan(in[0], a); }});
}

bool IsInt(DType d) { return IsIntegral(d, true); }

}  // namespace

void RegisterReductionOps(std::vector<OpDef>& ops) {
  // sum / nansum-free family.
  for (const char* n : {"sum", "mean", "prod"}) {
    const std::string name = n;
    Add(ops, name, DimAttrs(true),
        name == "mean" ? "Mean over dims (floating dtypes)." : "Reduces over dims.",
        [name](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          ReducePlanArgs ra;
          ra.op = name;
          ra.kind = name == "sum" ? ReduceOp::kSum : name == "mean" ? ReduceOp::kMean : ReduceOp::kProd;
          TENSORD_RETURN_IF_ERROR(ReadDims(a, ra));
          TENSORD_ASSIGN_OR_RETURN(auto dtype, a.OptionalDType("dtype"));
          const DType in = dtype.value_or(self.dtype());
          if (name == "mean") {
            if (!IsFloating(in)) {
              return RuntimeError(name, absl::StrCat("mean(): could not infer output dtype. ",
                                                     dtype ? "Optional" : "Input",
                                                     " dtype must be either a floating point or "
                                                     "complex dtype. Got: ",
                                                     DTypeLegacyName(in)));
            }
            ra.out_dtype = in;
          } else {
            if (name == "prod" && (in == DType::kFloat16 || in == DType::kBFloat16)) {
              ra.dtype_error = DTypeNotImplemented(name, in);
            }
            ra.out_dtype = dtype ? *dtype : (IsInt(in) ? DType::kInt64 : in);
          }
          ra.input_dtype = dtype;
          return PlanReduce(self, ra);
        });
  }
  for (const char* n : {"amax", "amin"}) {
    const std::string name = n;
    Add(ops, name, DimAttrs(false), "Largest/smallest element over dims (NaN propagates).",
        [name](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          ReducePlanArgs ra;
          ra.op = name;
          ra.kind = name == "amax" ? ReduceOp::kAmax : ReduceOp::kAmin;
          TENSORD_RETURN_IF_ERROR(ReadDims(a, ra));
          ra.out_dtype = self.dtype();
          ra.needs_nonempty = true;
          return PlanReduce(self, ra);
        });
  }
  for (const char* n : {"max", "min"}) {
    const std::string name = n;
    const bool is_max = name == "max";
    Add(ops, name, {}, "The largest/smallest element (0-d).",
        [name, is_max](const Tensor& self, AttrReader&) -> absl::StatusOr<PlannedOp> {
          ReducePlanArgs ra;
          ra.op = name;
          ra.kind = is_max ? ReduceOp::kAmax : ReduceOp::kAmin;
          ra.out_dtype = self.dtype();
          ra.needs_nonempty = true;
          return PlanReduce(self, ra);
        });
    Add(ops, name + ".dim", {Req("dim", AttrType::kInt), Opt("keepdim", AttrType::kBool, "false")},
        "(values, indices) of the largest/smallest element along dim.",
        [name, is_max](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          ReducePlanArgs ra;
          ra.op = name;
          ra.kind = is_max ? ReduceOp::kArgmax : ReduceOp::kArgmin;
          TENSORD_RETURN_IF_ERROR(ReadDims(a, ra));
          ra.out_dtype = self.dtype();
          ra.with_indices = true;
          ra.needs_nonempty = true;
          return PlanReduce(self, ra);
        },
        /*multi=*/true);
  }
  for (const char* n : {"argmax", "argmin"}) {
    const std::string name = n;
    Add(ops, name, {Opt("dim", AttrType::kInt, "None"), Opt("keepdim", AttrType::kBool, "false")},
        "Position of the first largest/smallest element (over all: in the flattened tensor).",
        [name](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          ReducePlanArgs ra;
          ra.op = name;
          ra.kind = name == "argmax" ? ReduceOp::kArgmax : ReduceOp::kArgmin;
          TENSORD_RETURN_IF_ERROR(ReadDims(a, ra));
          // torch answers a reduction over one dim of size 1 with zeros, without its kernel
          // (so without the kernel's dtype check); bool has no argmax kernel otherwise.
          absl::StatusOr<int64_t> dim = ra.dims.size() == 1 && self.dim() > 0
                                            ? WrapDim(name, ra.dims[0], self.dim())
                                            : absl::StatusOr<int64_t>(-1);
          const bool one_size1_dim = dim.ok() && *dim >= 0 && self.size(*dim) == 1;
          if (self.dtype() == DType::kBool && !one_size1_dim) {
            ra.dtype_error = DTypeNotImplemented(name, self.dtype());
          }
          if (ra.dims.empty() && ra.keepdim) {
            // torch: argmax(keepdim=True) without dim keeps every dim as size 1.
            for (int64_t d = 0; d < self.dim(); ++d) ra.dims.push_back(d);
          }
          ra.out_dtype = DType::kInt64;
          ra.needs_nonempty = true;
          return PlanReduce(self, ra);
        });
  }
  for (const char* n : {"all", "any"}) {
    const std::string name = n;
    Add(ops, name, DimAttrs(false), "Whether all/any elements are nonzero (uint8 in, uint8 out).",
        [name](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          ReducePlanArgs ra;
          ra.op = name;
          ra.kind = name == "all" ? ReduceOp::kAll : ReduceOp::kAny;
          TENSORD_RETURN_IF_ERROR(ReadDims(a, ra));
          ra.out_dtype = self.dtype() == DType::kUInt8 ? DType::kUInt8 : DType::kBool;
          return PlanReduce(self, ra);
        });
  }
  Add(ops, "count_nonzero", {Opt("dim", AttrType::kIntOrIntList, "None")},
      "Number of nonzero elements over dims.",
      [](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
        ReducePlanArgs ra;
        ra.op = "count_nonzero";
        ra.kind = ReduceOp::kCountNonzero;
        TENSORD_RETURN_IF_ERROR(ReadDims(a, ra));
        ra.out_dtype = DType::kInt64;
        return PlanReduce(self, ra);
      });
  for (const char* n : {"var", "std"}) {
    const std::string name = n;
    std::vector<AttrSpec> attrs = DimAttrs(false);
    attrs.push_back(Opt("correction", AttrType::kScalar, "1", "Bessel's correction (unbiased=1)"));
    Add(ops, name, attrs, "Variance / standard deviation over dims (floating dtypes).",
        [name](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          ReducePlanArgs ra;
          ra.op = name;
          ra.kind = name == "var" ? ReduceOp::kVar : ReduceOp::kStd;
          TENSORD_RETURN_IF_ERROR(ReadDims(a, ra));
          TENSORD_ASSIGN_OR_RETURN(Scalar c, a.GetScalar("correction", Scalar(int64_t{1})));
          ra.args.correction = c.to_double();
          if (!IsFloating(self.dtype())) {
            return RuntimeError(name, "std and var only support floating point and complex dtypes");
          }
          ra.out_dtype = self.dtype();
          return PlanReduce(self, ra);
        });
  }
  {
    std::vector<AttrSpec> attrs = DimAttrs(true);
    attrs.insert(attrs.begin(), Opt("p", AttrType::kScalar, "2", "the order; inf and -inf too"));
    Add(ops, "norm", attrs, "Vector p-norm over dims (floating dtypes).",
        [](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          ReducePlanArgs ra;
          ra.op = "norm";
          ra.kind = ReduceOp::kNorm;
          TENSORD_RETURN_IF_ERROR(ReadDims(a, ra));
          TENSORD_ASSIGN_OR_RETURN(Scalar p, a.GetScalar("p", Scalar(int64_t{2})));
          ra.args.p = p.to_double();
          TENSORD_ASSIGN_OR_RETURN(auto dtype, a.OptionalDType("dtype"));
          const DType in = dtype.value_or(self.dtype());
          if (!IsFloating(in)) {
            return RuntimeError("norm", absl::StrCat("norm(): input dtype should be either "
                                                     "floating point or complex. Got ",
                                                     DTypeLegacyName(in), " instead."));
          }
          ra.out_dtype = in;
          ra.input_dtype = dtype;
          return PlanReduce(self, ra);
        });
  }
  Add(ops, "logsumexp", {Req("dim", AttrType::kIntOrIntList), Opt("keepdim", AttrType::kBool, "false")},
      "log(sum(exp(self))) over dims, computed stably (integers give float32).",
      [](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
        ReducePlanArgs ra;
        ra.op = "logsumexp";
        ra.kind = ReduceOp::kLogsumexp;
        TENSORD_RETURN_IF_ERROR(ReadDims(a, ra));
        if (self.dtype() == DType::kFloat16) return DTypeNotImplemented("logsumexp", self.dtype());
        ra.out_dtype = IsFloating(self.dtype()) ? self.dtype() : DefaultFloatDType();
        if (self.numel() == 0 && ra.dims.empty()) ra.dims.clear();
        return PlanReduce(self, ra);
      });

  // Scans and softmax: along one dim, a contiguous output of the same shape.
  for (const char* n : {"cumsum", "cumprod", "logcumsumexp", "softmax", "log_softmax"}) {
    const std::string name = n;
    const bool scan = name.rfind("cum", 0) == 0 || name == "logcumsumexp";
    std::vector<AttrSpec> attrs = {Req("dim", AttrType::kInt)};
    if (name != "logcumsumexp") attrs.push_back(Opt("dtype", AttrType::kDType, "None"));
    Add(ops, name, attrs,
        name == "logcumsumexp"
            ? "log(cumsum(exp(self))) along dim, computed stably (floating dtypes)."
        : scan ? "Cumulative sum/product along dim (integers give int64)."
               : "softmax / log_softmax along dim (floating dtypes).",
        [name, scan](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim"));
          TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(name, dim, self.dim()));
          TENSORD_ASSIGN_OR_RETURN(auto dtype, a.OptionalDType("dtype"));
          const DType in = dtype.value_or(self.dtype());
          DType out_dtype = in;
          // torch runs no kernel for empty tensors (and copies 0-d ones for scans).
          const bool kernel_runs = self.numel() > 0 && !(scan && self.dim() == 0);
          if (name == "logcumsumexp") {
            if (!IsFloating(in) || in == DType::kFloat16) return DTypeNotImplemented(name, in);
          } else if (scan) {
            if (!dtype && IsInt(in)) out_dtype = DType::kInt64;
            if (in == DType::kFloat16 && kernel_runs) return DTypeNotImplemented(name, in);
          } else if ((!IsFloating(in) || in == DType::kFloat16) && self.numel() > 0) {
            return DTypeNotImplemented(name, in);
          }
          TENSORD_ASSIGN_OR_RETURN(
              Tensor out, AllocateTensor(name, TensorMeta::Contiguous(out_dtype, self.sizes()), self.device()));
          PlannedOp plan;
          plan.outputs.push_back(out);
          plan.reads.push_back(self.storage());
          plan.writes.push_back(out.storage());
          if (out.numel() == 0) return plan;
          Tensor converted;
          if (in != self.dtype()) {
            TENSORD_ASSIGN_OR_RETURN(converted,
                                     AllocateTensor(name, TensorMeta::Contiguous(in, self.sizes()), self.device()));
          }
          const ScanOp scan_op = name == "cumprod"        ? ScanOp::kProd
                                 : name == "logcumsumexp" ? ScanOp::kLogSumExp
                                                          : ScanOp::kSum;
          const bool log = name == "log_softmax";
          TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
          plan.kernel = [backend, self, converted, out, d, scan, scan_op,
                         log]() -> absl::Status {
            StridedRef src = StridedRef::Of(self);
            if (converted.defined()) {
              TENSORD_RETURN_IF_ERROR(
                  backend->Copy(self.sizes(), StridedRef::Of(converted), src));
              src = StridedRef::Of(converted);
            }
            if (scan) return backend->Scan(scan_op, self.sizes(), d, src, StridedRef::Of(out));
            return backend->Softmax(log, self.sizes(), d, src, StridedRef::Of(out));
          };
          return plan;
        });
  }
  for (const char* n : {"cummax", "cummin"}) {
    const std::string name = n;
    Add(ops, name, {Req("dim", AttrType::kInt)},
        "(values, indices): the running largest/smallest element along dim and where it is "
        "(the latest of equal ones; NaN, once met, stays).",
        [name](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim"));
          TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(name, dim, self.dim()));
          if (self.device().is_cpu() && self.dtype() == DType::kFloat16) {
            return KernelNotImplemented(name, name + "_cpu", self.dtype());
          }
          TENSORD_ASSIGN_OR_RETURN(
              Tensor values,
              AllocateTensor(name, TensorMeta::Contiguous(self.dtype(), self.sizes()),
                             self.device()));
          TENSORD_ASSIGN_OR_RETURN(
              Tensor indices,
              AllocateTensor(name, TensorMeta::Contiguous(DType::kInt64, self.sizes()),
                             self.device()));
          TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
          PlannedOp plan;
          plan.outputs = {values, indices};
          plan.reads = {self.storage()};
          plan.writes = {values.storage(), indices.storage()};
          const bool max = name == "cummax";
          plan.kernel = [backend, self, values, indices, d, max]() -> absl::Status {
            if (self.numel() == 0) return absl::OkStatus();
            return backend->CumExtreme(max, self.sizes(), d, StridedRef::Of(self),
                                       StridedRef::Of(values), StridedRef::Of(indices));
          };
          return plan;
        },
        /*multi=*/true);
  }
}

}  // namespace tensord::engine
