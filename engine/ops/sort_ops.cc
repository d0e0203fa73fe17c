// Sorting and selection along a dim: sort, argsort, topk, kthvalue, mode, median, nanmedian,
// and the binary
// searches searchsorted and bucketize. Each device runs them with its Backend::Sort, ::TopK and
// ::SearchSorted; the planners here check the arguments as torch does and lay the outputs out
// as torch does (sort: self's dense layout; the others: contiguous).
#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/runtime/backend.h"
#include "engine/ops/type_promotion.h"
#include "engine/tensor/shape_util.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

// A 0-d tensor counts as one element along dim 0 or -1 (WrapDim accepts those).
int64_t SizeAlong(const Tensor& self, int64_t dim) { return self.dim() == 0 ? 1 : self.size(dim); }

// values and indices of sort: self's sizes, in self's dense layout.
absl::StatusOr<PlannedOp> PlanSort(absl::string_view op, const Tensor& self, int64_t dim,
                                   bool descending, bool stable, bool indices_only) {
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  const TensorMeta& m = self.meta();
  const DimVector strides = InferDenseStrides(m.sizes(), m.strides());
  TENSORD_ASSIGN_OR_RETURN(
      Tensor values, AllocateTensor(op, TensorMeta(self.dtype(), m.sizes(), strides, 0),
                                    self.device()));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor indices, AllocateTensor(op, TensorMeta(DType::kInt64, m.sizes(), strides, 0),
                                     self.device()));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  PlannedOp plan;
  if (!indices_only) plan.outputs.push_back(values);
  plan.outputs.push_back(indices);
  plan.reads = {self.storage()};
  plan.writes = {values.storage(), indices.storage()};
  plan.kernel = [backend, self, d, descending, stable, values, indices]() {
    return backend->Sort(self, d, descending, stable, values, indices);
  };
  return plan;
}

absl::Status CheckTopKDType(absl::string_view op, DType dtype) {
  // torch 1.13's CPU topk (and kthvalue, built on it) has no bool or float16 kernel.
  if (dtype == DType::kBool || dtype == DType::kFloat16) return DTypeNotImplemented(op, dtype);
  return absl::OkStatus();
}

absl::StatusOr<PlannedOp> PlanTopK(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                   bool sorted) {
  constexpr absl::string_view op = "topk";
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  if (k < 0 || k > SizeAlong(self, d)) return RuntimeError(op, "selected index k out of range");
  TENSORD_RETURN_IF_ERROR(CheckTopKDType(op, self.dtype()));
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  if (self.dim() > 0) sizes[d] = k;
  TENSORD_ASSIGN_OR_RETURN(
      Tensor values, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), sizes), self.device()));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor indices, AllocateTensor(op, TensorMeta::Contiguous(DType::kInt64, sizes), self.device()));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  PlannedOp plan;
  plan.outputs = {values, indices};
  plan.reads = {self.storage()};
  plan.writes = {values.storage(), indices.storage()};
  const TopKOrder order = sorted ? TopKOrder::kSorted : TopKOrder::kUnsorted;
  plan.kernel = [backend, self, k, d, largest, order, values, indices]() {
    return backend->TopK(self, k, d, largest, order, values, indices);
  };
  return plan;
}

// The k-th smallest along dim: the smallest k with the k-th last, then it copied out.
absl::StatusOr<PlannedOp> PlanKthValue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  constexpr absl::string_view op = "kthvalue";
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  if (self.dim() > 0 && self.size(d) == 0) {
    return IndexError(op, absl::StrCat("kthvalue(): Expected reduction dim ", d,
                                       " to have non-zero size."));
  }
  if (k < 1 || k > SizeAlong(self, d)) {
    return RuntimeError(op, absl::StrCat("kthvalue(): selected number k out of range for "
                                         "dimension ",
                                         d));
  }
  TENSORD_RETURN_IF_ERROR(CheckTopKDType(op, self.dtype()));
  DimVector part(self.sizes().begin(), self.sizes().end());
  DimVector out_sizes = part;
  if (self.dim() > 0) {
    part[d] = k;
    if (keepdim) {
      out_sizes[d] = 1;
    } else {
      out_sizes.erase(out_sizes.begin() + d);
    }
  }
  const Device device = self.device();
  TENSORD_ASSIGN_OR_RETURN(Tensor part_values,
                           AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), part), device));
  TENSORD_ASSIGN_OR_RETURN(Tensor part_indices,
                           AllocateTensor(op, TensorMeta::Contiguous(DType::kInt64, part), device));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor values, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), out_sizes), device));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor indices, AllocateTensor(op, TensorMeta::Contiguous(DType::kInt64, out_sizes), device));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  PlannedOp plan;
  plan.outputs = {values, indices};
  plan.reads = {self.storage()};
  plan.writes = {values.storage(), indices.storage()};
  plan.kernel = [backend, self, k, d, part_values, part_indices, values, indices]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(backend->TopK(self, k, d, /*largest=*/false, TopKOrder::kKthLast,
                                          part_values, part_indices));
    if (values.numel() == 0) return absl::OkStatus();  // no slices (their storages are null)
    // The k-th of each slice: element k-1 along d of the parts, in the outputs' order.
    DimVector sizes(part_values.sizes().begin(), part_values.sizes().end());
    DimVector from(part_values.strides().begin(), part_values.strides().end());
    const int64_t offset = self.dim() == 0 ? 0 : (k - 1) * part_values.stride(d);
    if (self.dim() > 0) {
      sizes.erase(sizes.begin() + d);
      from.erase(from.begin() + d);
    }
    const DimVector to = ContiguousStrides(sizes);
    const StridedRef v_src{part_values.data() + offset * part_values.itemsize(),
                           part_values.dtype(), from};
    const StridedRef i_src{part_indices.data() + offset * part_indices.itemsize(), DType::kInt64,
                           from};
    TENSORD_RETURN_IF_ERROR(
        backend->Copy(sizes, StridedRef{values.data(), values.dtype(), to}, v_src));
    return backend->Copy(sizes, StridedRef{indices.data(), DType::kInt64, to}, i_src);
  };
  return plan;
}

// searchsorted: the position of each of `values` in `sequence` (1-d, or a row per leading
// index of values), both in their common dtype, through `sorter` when given; bucketize is the
// 1-d case with its own argument checks.
absl::StatusOr<PlannedOp> PlanSearchSorted(absl::string_view op, const Tensor& sequence,
                                           const Tensor& values, bool out_int32, bool right,
                                           const Tensor& sorter) {
  constexpr absl::string_view where = "torch.searchsorted(): ";
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, {sequence, values}));
  if (sequence.dim() == 0) {
    return RuntimeError(op, absl::StrCat(where, "boundaries tensor should have positive "
                                                "dimension, but got 0 dimension"));
  }
  if (sequence.dim() > 1) {
    bool match = values.dim() == sequence.dim();
    for (int64_t d = 0; match && d + 1 < sequence.dim(); ++d) {
      match = values.size(d) == sequence.size(d);
    }
    if (!match) {
      return RuntimeError(op, absl::StrCat(
          where, "boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                 "boundaries tensor and input value tensor must match, but we got boundaries "
                 "tensor ", FormatList(sequence.sizes()), " and input value tensor ",
          FormatList(values.sizes())));
    }
  }
  if (sorter.defined()) {
    if (sorter.dtype() != DType::kInt64) {
      return RuntimeError(op, absl::StrCat(where, "sorter must be a tensor of long dtype but "
                                                  "got dtype ", DTypeLegacyName(sorter.dtype())));
    }
    if (!std::equal(sorter.sizes().begin(), sorter.sizes().end(), sequence.sizes().begin(),
                    sequence.sizes().end())) {
      return RuntimeError(op, absl::StrCat(where, "boundary and sorter must have the same size, "
                                                  "but got boundary tensor ",
                                           FormatList(sequence.sizes()), "and got sorter tensor ",
                                           FormatList(sorter.sizes())));
    }
  }
  const DType common = ResultType({sequence, values});
  if (common == DType::kBool) {
    return KernelNotImplemented(op, device.is_cpu() ? "searchsorted_out_cpu" : "searchsorted_cuda",
                                common);
  }
  Composition c({sequence, values, sorter});
  Tensor seq = sequence;
  if (sorter.defined()) {
    TENSORD_ASSIGN_OR_RETURN(seq, c.Op1("gather", {sequence, sorter},
                                        Attrs().Set("dim", int64_t{-1})));
  }
  TENSORD_ASSIGN_OR_RETURN(seq, c.ToDType(seq, common));
  TENSORD_ASSIGN_OR_RETURN(seq, c.Contiguous(seq));
  Tensor vals;
  if (values.is_wrapped_number()) {  // a number (a CPU scalar): made on the device
    TENSORD_ASSIGN_OR_RETURN(vals, c.Full({}, ScalarOf(values), common, device));
  } else {
    TENSORD_ASSIGN_OR_RETURN(vals, c.ToDType(values, common));
    TENSORD_ASSIGN_OR_RETURN(vals, c.Contiguous(vals));
  }
  const DType out_dtype = out_int32 ? DType::kInt32 : DType::kInt64;
  TENSORD_ASSIGN_OR_RETURN(
      const Tensor out,
      AllocateTensor(op, TensorMeta::Contiguous(out_dtype, values.sizes()), device));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  SearchSortedCall call{common, nullptr, sequence.size(sequence.dim() - 1), sequence.dim() == 1,
                        nullptr, values.numel(),
                        values.dim() == 0 ? 1 : std::max<int64_t>(values.size(values.dim() - 1), 1),
                        right, nullptr, out_dtype};
  PlannedOp search;
  search.outputs = {out};
  search.reads = {seq.storage(), vals.storage()};
  search.writes = {out.storage()};
  search.kernel = [backend, call, seq, vals, out]() mutable -> absl::Status {
    if (call.count == 0) return absl::OkStatus();
    call.sequence = seq.data();
    call.values = vals.data();
    call.out = out.data();
    return backend->SearchSorted(call);
  };
  return std::move(c).Finish(c.Add(std::move(search)));
}

// A reduction along dim d planned on rows: self with d moved last (a 0-d tensor as one
// element), the shape of those rows with the last dim 1, and the result's shape (d dropped, or
// kept as 1). torch's IndexError for an empty reduction dim.
struct Rows {
  Tensor rows;
  int64_t n = 0;       // the rows' length
  DimVector one;       // rows' shape with the last dim 1
  DimVector kept;      // the result's shape
};

absl::StatusOr<Rows> RowsAlong(absl::string_view op, const Tensor& self, int64_t d,
                               bool keepdim) {
  if (SizeAlong(self, d) == 0) {
    return IndexError(op, absl::StrCat(op, "(): Expected reduction dim ", d,
                                       " to have non-zero size."));
  }
  Rows r;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i != d) r.kept.push_back(self.size(i));
    else if (keepdim) r.kept.push_back(1);
  }
  if (self.dim() == 0) {
    TENSORD_ASSIGN_OR_RETURN(r.rows, View(self, {1}));
  } else {
    TENSORD_ASSIGN_OR_RETURN(r.rows, Movedim(self, {d}, {-1}));
  }
  r.n = r.rows.size(r.rows.dim() - 1);
  r.one.assign(r.rows.sizes().begin(), r.rows.sizes().end());
  r.one.back() = 1;
  return r;
}

// mode: the most frequent value along dim (the smallest of equally frequent ones) and the
// position of its last occurrence in torch's unstable sort (the CPU sort's stable=False order
// of ties; torch's kernel compares with < alone, which orders rows holding NaN apart, so there
// the position may differ). Planned on the sorted rows: runs of equal values
// (a NaN is a run of its own) are numbered by a cumsum of where they start, counted by a
// scatter-add, the first longest chosen by argmax, and its last element gathered.
absl::StatusOr<PlannedOp> PlanMode(const Tensor& self, int64_t dim, bool keepdim) {
  constexpr absl::string_view op = "mode";
  TENSORD_ASSIGN_OR_RETURN(const int64_t d, WrapDim(op, dim, self.dim()));
  TENSORD_ASSIGN_OR_RETURN(const Rows r, RowsAlong(op, self, d, keepdim));
  const Tensor& rows = r.rows;
  const int64_t last_dim = rows.dim() - 1;
  const int64_t n = r.n;
  const DimVector& one_shape = r.one;
  const DimVector& kept = r.kept;
  Composition c({self});
  Tensor values, indices;
  if (rows.numel() == 0) {
    TENSORD_ASSIGN_OR_RETURN(PlannedOp v, PlanEmpty(one_shape, self.dtype(), self.device()));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp i, PlanEmpty(one_shape, DType::kInt64, self.device()));
    values = c.Add(std::move(v)).at(0);
    indices = c.Add(std::move(i)).at(0);
  } else {
    const Attrs along = Attrs().Set("dim", int64_t{-1});
    TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> sorted, c.Op("sort", {rows}, along));
    const Tensor sorted_values = sorted.at(0), order = sorted.at(1);
    // Where each run starts: the first element, and each that differs from the one before.
    TENSORD_ASSIGN_OR_RETURN(Tensor starts, c.Full(one_shape, Scalar(true), DType::kBool, self.device()));
    if (n > 1) {
      TENSORD_ASSIGN_OR_RETURN(const Tensor later, Narrow(sorted_values, last_dim, 1, n - 1));
      TENSORD_ASSIGN_OR_RETURN(const Tensor earlier, Narrow(sorted_values, last_dim, 0, n - 1));
      TENSORD_ASSIGN_OR_RETURN(const Tensor differs, c.Op1("ne", {later, earlier}));
      TENSORD_ASSIGN_OR_RETURN(starts, c.Op1("cat", {starts, differs}, along));
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor run, c.Op1("cumsum", {starts}, along));
    TENSORD_ASSIGN_OR_RETURN(run, c.Op1("sub", {run}, Attrs().Set("other", Scalar(int64_t{1}))));
    TENSORD_ASSIGN_OR_RETURN(const Tensor counts, c.Full(rows.sizes(), Scalar(int64_t{0}), DType::kInt64, self.device()));
    TENSORD_ASSIGN_OR_RETURN(const Tensor one, c.Full(rows.sizes(), Scalar(int64_t{1}), DType::kInt64, self.device()));
    TENSORD_RETURN_IF_ERROR(c.Op("scatter_add_", {counts, run, one}, along).status());
    TENSORD_ASSIGN_OR_RETURN(const Tensor best,
                             c.Op1("argmax", {counts}, Attrs()
                                                           .Set("dim", int64_t{-1})
                                                           .Set("keepdim", true)));
    TENSORD_ASSIGN_OR_RETURN(const Tensor ends, c.Op1("cumsum", {counts}, along));
    TENSORD_ASSIGN_OR_RETURN(Tensor at, c.Op1("gather", {ends, best}, along));
    TENSORD_ASSIGN_OR_RETURN(at, c.Op1("sub", {at}, Attrs().Set("other", Scalar(int64_t{1}))));
    TENSORD_ASSIGN_OR_RETURN(values, c.Op1("gather", {sorted_values, at}, along));
    TENSORD_ASSIGN_OR_RETURN(indices, c.Op1("gather", {order, at}, along));
  }
  // [..., 1] in the kept dims' row-major order: the result's shape, contiguous.
  TENSORD_ASSIGN_OR_RETURN(values, View(values, kept));
  TENSORD_ASSIGN_OR_RETURN(indices, View(indices, kept));
  return std::move(c).Finish({values, indices});
}

// median and nanmedian (ignore_nan): the lower median along dim, with its position; flattened
// (value only) without dim. Planned on a stable sort, where NaN sorts last in its own order, so
// the answer is the sorted row's k-th element with
//   median:    k = n - nans where the row holds NaN (its first NaN), else (n - 1) / 2;
//   nanmedian: k = (n - nans - 1) / 2 where a number is left, else (n - 1) / 2 (a NaN);
// torch's nth_element picks the same element and position for these, ties included.
absl::StatusOr<PlannedOp> PlanMedian(absl::string_view op, const Tensor& self,
                                     std::optional<int64_t> dim, bool keepdim, bool ignore_nan) {
  if (self.dtype() == DType::kBool || self.dtype() == DType::kFloat16) {
    return KernelNotImplemented(op, dim ? "median_out" : "median_cpu", self.dtype());
  }
  Composition c({self});
  if (!dim && self.numel() == 0) {
    // torch answers NaN, converted to an integer dtype as x86's conversion does (the "integer
    // indefinite" lowest value of int32 and int64, whose low bits give 0 for the narrower ones).
    Scalar nan(std::numeric_limits<double>::quiet_NaN());
    if (self.dtype() == DType::kInt64) nan = Scalar(std::numeric_limits<int64_t>::min());
    else if (self.dtype() == DType::kInt32) nan = Scalar(int64_t{std::numeric_limits<int32_t>::min()});
    else if (!IsFloating(self.dtype())) nan = Scalar(int64_t{0});
    TENSORD_ASSIGN_OR_RETURN(const Tensor none, c.Full({}, nan, self.dtype(), self.device()));
    return std::move(c).Finish({none});
  }
  Rows r;  // without dim: the flattened tensor as one row, a 0-d result
  if (!dim) {
    TENSORD_ASSIGN_OR_RETURN(r.rows, c.Reshape(self, {self.numel()}));
    r.n = self.numel();
    r.one = {1};
  } else {
    TENSORD_ASSIGN_OR_RETURN(const int64_t d, WrapDim(op, *dim, self.dim()));
    TENSORD_ASSIGN_OR_RETURN(r, RowsAlong(op, self, d, keepdim));
  }
  const Tensor& rows = r.rows;
  const int64_t n = r.n;
  const DimVector& one_shape = r.one;
  const DimVector& kept = r.kept;
  Tensor values, indices;
  if (rows.numel() == 0) {
    TENSORD_ASSIGN_OR_RETURN(values, c.Full(one_shape, Scalar(int64_t{0}), self.dtype(), self.device()));
    TENSORD_ASSIGN_OR_RETURN(indices, c.Full(one_shape, Scalar(int64_t{0}), DType::kInt64, self.device()));
  } else {
    const Attrs along = Attrs().Set("dim", int64_t{-1});
    TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> sorted,
                             c.Op("sort", {rows}, Attrs().Set("dim", int64_t{-1}).Set("stable", true)));
    TENSORD_ASSIGN_OR_RETURN(Tensor k, c.Full(one_shape, Scalar((n - 1) / 2), DType::kInt64, self.device()));
    if (IsFloating(self.dtype())) {
      TENSORD_ASSIGN_OR_RETURN(Tensor nans, c.Op1("isnan", {rows}));
      TENSORD_ASSIGN_OR_RETURN(nans, c.Op1("sum", {nans}, Attrs()
                                                             .Set("dim", std::vector<int64_t>{-1})
                                                             .Set("keepdim", true)));
      TENSORD_ASSIGN_OR_RETURN(Tensor left, c.Op1("neg", {nans}));
      TENSORD_ASSIGN_OR_RETURN(left, c.Op1("add", {left}, Attrs().Set("other", Scalar(n))));
      TENSORD_ASSIGN_OR_RETURN(const Tensor zero, WrapNumber(Scalar(int64_t{0})));
      if (ignore_nan) {  // the numbers' lower median, where any is left
        TENSORD_ASSIGN_OR_RETURN(Tensor mid, c.Op1("sub", {left}, Attrs().Set("other", Scalar(int64_t{1}))));
        TENSORD_ASSIGN_OR_RETURN(mid, c.Op1("floor_divide", {mid}, Attrs().Set("other", Scalar(int64_t{2}))));
        TENSORD_ASSIGN_OR_RETURN(const Tensor some, c.Op1("gt", {left, zero}));
        TENSORD_ASSIGN_OR_RETURN(k, c.Op1("where", {some, mid, k}));
      } else {  // the first NaN, where there is one
        TENSORD_ASSIGN_OR_RETURN(const Tensor any, c.Op1("gt", {nans, zero}));
        TENSORD_ASSIGN_OR_RETURN(k, c.Op1("where", {any, left, k}));
      }
    }
    TENSORD_ASSIGN_OR_RETURN(values, c.Op1("gather", {sorted.at(0), k}, along));
    TENSORD_ASSIGN_OR_RETURN(indices, c.Op1("gather", {sorted.at(1), k}, along));
  }
  TENSORD_ASSIGN_OR_RETURN(values, View(values, kept));
  if (!dim) return std::move(c).Finish({values});
  TENSORD_ASSIGN_OR_RETURN(indices, View(indices, kept));
  return std::move(c).Finish({values, indices});
}

void Add(std::vector<OpDef>& ops, std::string name, std::vector<AttrSpec> attrs, std::string doc,
         std::function<absl::StatusOr<PlannedOp>(const Tensor&, AttrReader&)> plan,
         bool two_outputs = true) {
  ops.push_back({std::move(name), OpKind::kCompute, {"self"}, std::move(attrs), std::move(doc),
                 two_outputs,
                 [plan](Inputs in, AttrReader& a) { return plan(in[0], a); }});
}

}  // namespace

void RegisterSortOps(std::vector<OpDef>& ops) {
  for (const bool indices_only : {false, true}) {
    const std::string name = indices_only ? "argsort" : "sort";
    Add(ops, name,
        {Opt("dim", AttrType::kInt, "-1"), Opt("descending", AttrType::kBool, "false"),
         Opt("stable", AttrType::kBool, "false",
             "false: tied elements in any order (on the CPU, where torch's CPU sort leaves them)")},
        indices_only ? "The indices that sort self along dim (sort's second output)."
                     : "(values, indices) sorted along dim; NaN sorts above every number.",
        [name, indices_only](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim", -1));
          TENSORD_ASSIGN_OR_RETURN(bool descending, a.Bool("descending", false));
          TENSORD_ASSIGN_OR_RETURN(bool stable, a.Bool("stable", false));
          return PlanSort(name, self, dim, descending, stable, indices_only);
        },
        /*two_outputs=*/!indices_only);
  }
  Add(ops, "topk",
      {Req("k", AttrType::kInt), Opt("dim", AttrType::kInt, "-1"),
       Opt("largest", AttrType::kBool, "true"),
       Opt("sorted", AttrType::kBool, "true", "false: the k in any order")},
      "(values, indices) of the k largest (or smallest) elements along dim, best first.",
      [](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
        TENSORD_ASSIGN_OR_RETURN(int64_t k, a.Int("k"));
        TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim", -1));
        TENSORD_ASSIGN_OR_RETURN(bool largest, a.Bool("largest", true));
        TENSORD_ASSIGN_OR_RETURN(bool sorted, a.Bool("sorted", true));
        return PlanTopK(self, k, dim, largest, sorted);
      });
  Add(ops, "kthvalue",
      {Req("k", AttrType::kInt), Opt("dim", AttrType::kInt, "-1"),
       Opt("keepdim", AttrType::kBool, "false")},
      "(values, indices) of the k-th smallest element along dim.",
      [](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
        TENSORD_ASSIGN_OR_RETURN(int64_t k, a.Int("k"));
        TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim", -1));
        TENSORD_ASSIGN_OR_RETURN(bool keepdim, a.Bool("keepdim", false));
        return PlanKthValue(self, k, dim, keepdim);
      });
  Add(ops, "mode", {Opt("dim", AttrType::kInt, "-1"), Opt("keepdim", AttrType::kBool, "false")},
      "(values, indices): the most frequent value along dim (the smallest of equally frequent "
      "ones) and where it last occurs.",
      [](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
        TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim", -1));
        TENSORD_ASSIGN_OR_RETURN(bool keepdim, a.Bool("keepdim", false));
        return PlanMode(self, dim, keepdim);
      });
  for (const bool ignore_nan : {false, true}) {
    const std::string name = ignore_nan ? "nanmedian" : "median";
    Add(ops, name, {Opt("dim", AttrType::kInt, "None"), Opt("keepdim", AttrType::kBool, "false")},
        ignore_nan ? "(values, indices): the lower median along dim of the numbers (NaN where "
                     "a row holds none), and its position; without dim, the flattened tensor's "
                     "(value only)."
                   : "(values, indices): the lower median along dim (NaN, and the first NaN's "
                     "position, where a row holds NaN); without dim, the flattened tensor's "
                     "(value only).",
        [name, ignore_nan](const Tensor& self, AttrReader& a) -> absl::StatusOr<PlannedOp> {
          TENSORD_ASSIGN_OR_RETURN(std::optional<int64_t> dim, a.OptionalInt("dim"));
          TENSORD_ASSIGN_OR_RETURN(bool keepdim, a.Bool("keepdim", false));
          return PlanMedian(name, self, dim, keepdim, ignore_nan);
        });
  }
  OpDef search{"searchsorted", OpKind::kCompute, {"sorted_sequence", "self", "sorter"},
               {Opt("out_int32", AttrType::kBool, "false"), Opt("right", AttrType::kBool, "false"),
                Opt("side", AttrType::kString, "None", "'left' or 'right' (right's other name)")},
               "The position of each value of self in sorted_sequence's row (1-d, or one per "
               "leading index), by binary search; sorter orders an unsorted sequence.",
               false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                 constexpr absl::string_view op = "searchsorted";
                 TENSORD_ASSIGN_OR_RETURN(bool out_int32, a.Bool("out_int32", false));
                 TENSORD_ASSIGN_OR_RETURN(bool right, a.Bool("right", false));
                 if (a.Has("side")) {
                   TENSORD_ASSIGN_OR_RETURN(std::string side, a.String("side"));
                   if (side != "left" && side != "right") {
                     return RuntimeError(op, absl::StrCat("torch.searchsorted(): side can only "
                                                          "be 'left' or 'right' but got ", side));
                   }
                   if (side == "left" && right) {
                     return RuntimeError(op, "torch.searchsorted(): side and right can't be set "
                                             "to opposites, got side of left while right was "
                                             "True");
                   }
                   right = side == "right";
                 }
                 return PlanSearchSorted(op, in[0], in[1], out_int32, right, in[2]);
               }};
  search.scalar_inputs = {"self", "sorter"};
  search.optional_inputs = {"sorter"};
  ops.push_back(std::move(search));
  OpDef bucketize{"bucketize", OpKind::kCompute, {"self", "boundaries"},
                  {Opt("out_int32", AttrType::kBool, "false"),
                   Opt("right", AttrType::kBool, "false")},
                  "The bucket of each value of self among the 1-d sorted boundaries.", false,
                  [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                    TENSORD_ASSIGN_OR_RETURN(bool out_int32, a.Bool("out_int32", false));
                    TENSORD_ASSIGN_OR_RETURN(bool right, a.Bool("right", false));
                    if (in[1].dim() != 1) {
                      return RuntimeError("bucketize", absl::StrCat(
                          "boundaries tensor must be 1 dimension, but got dim(", in[1].dim(),
                          ")"));
                    }
                    return PlanSearchSorted("bucketize", in[1], in[0], out_int32, right, Tensor());
                  }};
  bucketize.scalar_inputs = {"self"};
  ops.push_back(std::move(bucketize));
}

}  // namespace tensord::engine
