// Ops whose outputs' sizes depend on the data: nonzero, masked_select, unique,
// unique_consecutive, bincount, and repeat_interleave by a tensor of counts; and multinomial,
// whose arguments torch checks on the data before it draws. Each waits for the writes queued to
// its inputs (a host read, as torch synchronises here), runs its steps at once on the inputs'
// device, and brings back to the host only the few numbers that size its outputs or decide its
// errors (a count, a maximum, a flag): the elements themselves never leave the device.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/memory_budget.h"
#include "engine/tensor/shape_util.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

// Runs `fn` once every write queued so far to the tensors' storages is done (a host read, as a
// download's): what data-dependent ops plan with. A poisoned input fails it with its cause.
absl::Status ReadNow(absl::Span<const Tensor> tensors, absl::FunctionRef<absl::Status()> fn) {
  std::vector<std::pair<Storage*, uint64_t>> tickets;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    Storage* s = t.storage().get();
    const uint64_t ticket = s->BeginRead();
    tickets.emplace_back(s, ticket);
    absl::Notification ready;
    s->WhenReadable(ticket, [&ready] { ready.Notify(); });
    ready.WaitForNotification();
  }
  absl::Status status;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    if (auto poison = t.storage()->poison()) {
      status = absl::Status(poison->code(), absl::StrCat("input failed earlier: ",
                                                         poison->message()));
      break;
    }
  }
  if (status.ok()) status = fn();
  for (auto& [s, ticket] : tickets) s->EndRead(ticket);
  return status;
}

// The values of `t` (a few numbers: counts, a maximum) on the host, as int64.
absl::StatusOr<std::vector<int64_t>> HostInts(const Tensor& t) {
  Tensor ints = t;
  if (t.dtype() != DType::kInt64) {
    TENSORD_ASSIGN_OR_RETURN(ints, ToDType(t, DType::kInt64));
  }
  TENSORD_ASSIGN_OR_RETURN(ints, Contiguous(ints));
  std::vector<int64_t> values(static_cast<size_t>(ints.numel()));
  if (values.empty()) return values;
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(ints.device()));
  TENSORD_RETURN_IF_ERROR(backend->CopyToHost(values.data(), ints.data(),
                                              ints.numel() * static_cast<int64_t>(sizeof(int64_t))));
  return values;
}

absl::StatusOr<PlannedOp> PlanNonzero(const Tensor& self) {
  constexpr absl::string_view op = "nonzero";
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  PlannedOp plan;
  TENSORD_RETURN_IF_ERROR(ReadNow({self}, [&]() -> absl::Status {
    // Count first, so the result is allocated (and charged to the session) before it is filled.
    TENSORD_ASSIGN_OR_RETURN(const int64_t count, backend->CountNonzero(self));
    // torch's CPU result is (count, dim) with strides (1, count): a transposed (dim, count).
    TENSORD_ASSIGN_OR_RETURN(
        Tensor t, AllocateTensor(op, TensorMeta::Contiguous(DType::kInt64, {self.dim(), count}),
                                 self.device()));
    TENSORD_RETURN_IF_ERROR(backend->NonzeroIndices(self, t));
    TENSORD_ASSIGN_OR_RETURN(Tensor out, Transpose(t, 0, 1));
    plan.outputs.push_back(out);
    return absl::OkStatus();
  }));
  return plan;
}

// The elements of `self` where `mask` (bool, self's shape) is true, in a new 1-d tensor.
absl::StatusOr<Tensor> SelectWhere(absl::string_view op, Backend* backend, const Tensor& self,
                                   const Tensor& mask) {
  TENSORD_ASSIGN_OR_RETURN(const int64_t count, backend->CountNonzero(mask));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor out, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), {count}), self.device()));
  TENSORD_RETURN_IF_ERROR(backend->MaskedSelect(out, self, mask));
  return out;
}

// The positions (int64, 1-d) where the 1-d bool `flags` is true.
absl::StatusOr<Tensor> PositionsWhere(absl::string_view op, Backend* backend,
                                      const Tensor& flags) {
  TENSORD_ASSIGN_OR_RETURN(const int64_t count, backend->CountNonzero(flags));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor at, AllocateTensor(op, TensorMeta::Contiguous(DType::kInt64, {1, count}),
                                flags.device()));
  TENSORD_RETURN_IF_ERROR(backend->NonzeroIndices(flags, at));
  return View(at, {count});
}

absl::StatusOr<PlannedOp> PlanMaskedSelect(const Tensor& self, const Tensor& mask) {
  constexpr absl::string_view op = "masked_select";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {self, mask}).status());
  if (mask.dtype() != DType::kBool) {
    return RuntimeError(op, absl::StrCat("masked_select: expected BoolTensor for mask"));
  }
  TENSORD_ASSIGN_OR_RETURN(DimVector shape, BroadcastShapes(op, self.sizes(), mask.sizes()));
  TENSORD_ASSIGN_OR_RETURN(Tensor s, Expand(self, shape));
  TENSORD_ASSIGN_OR_RETURN(Tensor m, Expand(mask, shape));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  PlannedOp plan;
  TENSORD_RETURN_IF_ERROR(ReadNow({self, mask}, [&]() -> absl::Status {
    TENSORD_ASSIGN_OR_RETURN(Tensor out, SelectWhere(op, backend, s, m));
    plan.outputs.push_back(out);
    return absl::OkStatus();
  }));
  return plan;
}

// ---- unique, unique_consecutive -------------------------------------------------------------

struct UniqueArgs {
  bool sorted = true;       // unique (sorts first) or unique_consecutive (runs as they stand)
  bool inverse = false;     // return_inverse
  bool counts = false;      // return_counts
  std::optional<int64_t> dim;
  bool hash_order = false;  // unique's sorted=False: torch's CPU order (UniqueInHashOrder)
};

// unique(sorted=False) of a flat CPU tensor, as torch's CPU kernel orders it (its hash set's):
// Backend::UniqueInHashOrder fills buffers sized for every element distinct; the values and
// counts are copied out of them at their real length.
absl::Status UniqueInHashOrder(absl::string_view op, Backend* backend, const Tensor& self,
                               const UniqueArgs& args, PlannedOp& plan) {
  const int64_t n = self.numel();
  const Device device = self.device();
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(Tensor flat, c.Reshape(self, {n}));
  TENSORD_ASSIGN_OR_RETURN(flat, c.Contiguous(flat));
  TENSORD_ASSIGN_OR_RETURN(flat, RunNowSingle(std::move(c).Finish({flat})));
  const auto int64s = [&]() -> absl::StatusOr<Tensor> {
    return AllocateTensor(op, TensorMeta::Contiguous(DType::kInt64, {n}), device);
  };
  TENSORD_ASSIGN_OR_RETURN(
      const Tensor values, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), {n}), device));
  Tensor inverse, counts;
  if (args.inverse) {
    TENSORD_ASSIGN_OR_RETURN(inverse, int64s());
  }
  if (args.counts) {
    TENSORD_ASSIGN_OR_RETURN(counts, int64s());
  }
  // The kernel's hash set and maps live on the heap, not in storages: charged to the session's
  // host budget while they live (at most about 96 bytes an element: buckets, nodes, the
  // allocator's headers).
  constexpr int64_t kHashBytesPerElement = 96;
  if (n > std::numeric_limits<int64_t>::max() / kHashBytesPerElement) {
    return RuntimeError(op, absl::StrCat("too many elements for a hash set: ", n));
  }
  const int64_t heap_bytes = n * kHashBytesPerElement;
  const std::shared_ptr<MemoryBudget> budget = CurrentMemoryBudget(device);
  if (budget != nullptr) {
    const absl::Status charged = budget->Charge(heap_bytes);
    if (!charged.ok()) {
      return absl::Status(charged.code(), absl::StrCat(op, ": its hash set: ", charged.message()));
    }
  }
  const absl::StatusOr<int64_t> made = backend->UniqueInHashOrder(flat, values, inverse, counts);
  if (budget != nullptr) budget->Release(heap_bytes);
  TENSORD_ASSIGN_OR_RETURN(const int64_t runs, made);
  const auto first_runs = [&](const Tensor& t) -> absl::StatusOr<Tensor> {
    TENSORD_ASSIGN_OR_RETURN(const Tensor part, Narrow(t, 0, 0, runs));
    return RunNowSingle(PlanOp("clone", {part}, Attrs()));
  };
  TENSORD_ASSIGN_OR_RETURN(const Tensor distinct, first_runs(values));
  plan.outputs.push_back(distinct);
  if (args.inverse) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor shaped,
                             View(inverse, DimVector(self.sizes().begin(), self.sizes().end())));
    plan.outputs.push_back(shaped);
  }
  if (args.counts) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor how_often, first_runs(counts));
    plan.outputs.push_back(how_often);
  }
  return absl::OkStatus();
}

// The row order that sorts the rows of the 2-d `rows` (already computed) lexicographically: a
// stable sort by each column, the last first (a radix sort over columns), so equal rows keep
// their order. Each column's steps run at once, so only the order lives between them.
absl::StatusOr<Tensor> LexicographicOrder(const Tensor& rows) {
  const Attrs along0 = Attrs().Set("dim", int64_t{0});
  const Attrs stable_along0 = Attrs().Set("dim", int64_t{0}).Set("stable", true);
  Tensor order;
  for (int64_t j = rows.size(1) - 1; j >= 0; --j) {
    Composition c({rows, order});
    TENSORD_ASSIGN_OR_RETURN(Tensor column, Select(rows, 1, j));
    if (order.defined()) {
      TENSORD_ASSIGN_OR_RETURN(column, c.Op1("index_select", {column, order}, along0));
    }
    TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> sorted, c.Op("sort", {column}, stable_along0));
    Tensor next = sorted.at(1);
    if (order.defined()) {
      TENSORD_ASSIGN_OR_RETURN(next, c.Op1("index_select", {order, next}, along0));
    }
    TENSORD_ASSIGN_OR_RETURN(order, RunNowSingle(std::move(c).Finish({next})));
  }
  return order;
}

// unique and unique_consecutive, of the flattened tensor (`dim` unset: runs of equal elements)
// or of its slices along `dim` (runs of equal slices). Outputs: the first element (slice) of
// each run; with `inverse`, each element's (slice's) run; with `counts`, the runs' lengths.
absl::StatusOr<PlannedOp> PlanUnique(absl::string_view op, const Tensor& self,
                                     const UniqueArgs& args) {
  if (self.dtype() == DType::kFloat16) {
    return KernelNotImplemented(op, args.dim && args.sorted ? "unique_dim" : "unique",
                                self.dtype());
  }
  int64_t d = 0;
  if (args.dim) {
    TENSORD_ASSIGN_OR_RETURN(d, WrapDimNoScalar(op, *args.dim, self.dim()));
  }
  const int64_t n = args.dim ? self.size(d) : self.numel();  // the elements (slices) compared
  const Device device = self.device();
  if (args.dim) {
    if (self.numel() == 0 && n != 0) {
      return RuntimeError(op, "There are 0 sized dimensions, and they aren't selected, so "
                              "unique cannot be applied");
    }
  }
  // The inverse has self's shape (flat) or (n,) (along a dim).
  const DimVector inverse_shape =
      args.dim ? DimVector{n} : DimVector(self.sizes().begin(), self.sizes().end());
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  PlannedOp plan;
  TENSORD_RETURN_IF_ERROR(ReadNow({self}, [&]() -> absl::Status {
    if (n == 0) {  // nothing to compare: empty values and counts, an empty inverse
      DimVector values_shape = {0};
      if (args.dim) values_shape = DimVector(self.sizes().begin(), self.sizes().end());
      TENSORD_ASSIGN_OR_RETURN(Tensor values, Empty(values_shape, self.dtype(), device));
      plan.outputs.push_back(values);
      if (args.inverse) {
        TENSORD_ASSIGN_OR_RETURN(Tensor inverse, Zeros(inverse_shape, DType::kInt64, device));
        plan.outputs.push_back(inverse);
      }
      if (args.counts) {
        TENSORD_ASSIGN_OR_RETURN(Tensor counts, Empty({0}, DType::kInt64, device));
        plan.outputs.push_back(counts);
      }
      return absl::OkStatus();
    }
    if (args.hash_order && !args.dim && device.is_cpu() && self.dtype() != DType::kBool) {
      return UniqueInHashOrder(op, backend, self, args, plan);
    }
    // Step 1: the compared items in order (sorted, or as they stand) as the rows of a 2-d
    // (n, slice) tensor, the order that put them there, and where each run starts.
    const Attrs along0 = Attrs().Set("dim", int64_t{0});
    Composition c({self});
    Tensor rows;
    if (args.dim) {
      // As torch's unique_dim: dim swapped with dim 0, each slice flattened in that order.
      TENSORD_ASSIGN_OR_RETURN(const Tensor swapped, Transpose(self, 0, d));
      TENSORD_ASSIGN_OR_RETURN(rows, c.Reshape(swapped, {n, self.numel() / n}));
    } else {
      TENSORD_ASSIGN_OR_RETURN(rows, c.Reshape(self, {n, 1}));
    }
    const int64_t width = rows.size(1);
    Tensor order;  // undefined: the items stand in their own order
    if (args.sorted && width == 1) {  // one sort, whose values are the items in order
      TENSORD_ASSIGN_OR_RETURN(const Tensor column, Select(rows, 1, 0));
      TENSORD_ASSIGN_OR_RETURN(
          std::vector<Tensor> sorted,
          c.Op("sort", {column}, Attrs().Set("dim", int64_t{0}).Set("stable", true)));
      order = sorted.at(1);
      TENSORD_ASSIGN_OR_RETURN(rows, Unsqueeze(sorted.at(0), 1));
    } else if (args.sorted) {
      TENSORD_ASSIGN_OR_RETURN(rows, RunNowSingle(std::move(c).Finish({rows})));
      TENSORD_ASSIGN_OR_RETURN(order, LexicographicOrder(rows));
      c = Composition({rows, order});
      TENSORD_ASSIGN_OR_RETURN(rows, c.Op1("index_select", {rows, order}, along0));
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor starts, c.Full({1}, Scalar(true), DType::kBool, device));
    if (n > 1) {
      TENSORD_ASSIGN_OR_RETURN(const Tensor later, Narrow(rows, 0, 1, n - 1));
      TENSORD_ASSIGN_OR_RETURN(const Tensor earlier, Narrow(rows, 0, 0, n - 1));
      TENSORD_ASSIGN_OR_RETURN(Tensor differs, c.Op1("ne", {later, earlier}));
      if (width == 1) {
        TENSORD_ASSIGN_OR_RETURN(differs, c.Reshape(differs, {n - 1}));
      } else {
        TENSORD_ASSIGN_OR_RETURN(differs, c.Op1("any", {differs}, Attrs().Set("dim", int64_t{1})));
      }
      TENSORD_ASSIGN_OR_RETURN(starts, c.Op1("cat", {starts, differs}, along0));
    }
    TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> first,
                             RunNow(std::move(c).Finish({rows, starts})));
    rows = first.at(0);
    starts = first.at(1);
    // Step 2: where the runs start (their count sizes every output), and the first items.
    TENSORD_ASSIGN_OR_RETURN(const Tensor at, PositionsWhere(op, backend, starts));
    const int64_t runs = at.numel();
    Tensor values;
    if (args.dim) {
      TENSORD_ASSIGN_OR_RETURN(Tensor picked, RunNowSingle(PlanOp("index_select", {rows, at}, along0)));
      DimVector shape(self.sizes().begin(), self.sizes().end());
      std::swap(shape[0], shape[d]);
      shape[0] = runs;
      TENSORD_ASSIGN_OR_RETURN(picked, View(picked, shape));
      // As torch lays it out: built along dim 0, then swapped back.
      TENSORD_ASSIGN_OR_RETURN(values, Transpose(picked, 0, d));
    } else {
      TENSORD_ASSIGN_OR_RETURN(const Tensor flat, View(rows, {n}));
      TENSORD_ASSIGN_OR_RETURN(values, RunNowSingle(PlanOp("index_select", {flat, at}, along0)));
    }
    plan.outputs.push_back(values);
    // Step 3: the inverse (each item's run, put back in the items' own order) and the counts.
    if (!args.inverse && !args.counts) return absl::OkStatus();
    Composition rest({starts, at});
    if (args.inverse) {
      TENSORD_ASSIGN_OR_RETURN(Tensor run, rest.ToDType(starts, DType::kInt64));
      TENSORD_ASSIGN_OR_RETURN(run, rest.Op1("cumsum", {run}, along0));
      TENSORD_ASSIGN_OR_RETURN(run, rest.Op1("sub", {run}, Attrs().Set("other", Scalar(int64_t{1}))));
      if (order.defined()) {
        TENSORD_ASSIGN_OR_RETURN(Tensor back, rest.Full({n}, Scalar(int64_t{0}), DType::kInt64, device));
        TENSORD_RETURN_IF_ERROR(rest.Op("scatter_", {back, order, run}, along0).status());
        run = back;
      }
      TENSORD_ASSIGN_OR_RETURN(run, View(run, inverse_shape));
      rest.Add(ViewPlan({run}));
      plan.outputs.push_back(run);
    }
    if (args.counts) {
      TENSORD_ASSIGN_OR_RETURN(const Tensor end, rest.Full({1}, Scalar(n), DType::kInt64, device));
      TENSORD_ASSIGN_OR_RETURN(const Tensor later, Narrow(at, 0, 1, runs - 1));
      TENSORD_ASSIGN_OR_RETURN(const Tensor ends, rest.Op1("cat", {later, end}, along0));
      TENSORD_ASSIGN_OR_RETURN(const Tensor counts, rest.Op1("sub", {ends, at}));
      plan.outputs.push_back(counts);
    }
    std::vector<Tensor> made(plan.outputs.begin() + 1, plan.outputs.end());
    return RunNow(std::move(rest).Finish(std::move(made))).status();
  }));
  return plan;
}

// ---- bincount -------------------------------------------------------------------------------

absl::StatusOr<PlannedOp> PlanBincount(const Tensor& self, const Tensor& weights,
                                       int64_t minlength) {
  constexpr absl::string_view op = "bincount";
  if (weights.defined()) TENSORD_RETURN_IF_ERROR(CommonDevice(op, {self, weights}).status());
  // torch's order: the dtype, then minlength, then the shapes.
  if (!IsIntegral(self.dtype(), /*include_bool=*/false)) {
    return KernelNotImplemented(op, "bincount_cpu", self.dtype());
  }
  if (minlength < 0) return RuntimeError(op, "minlength should be >= 0");
  if (self.dim() == 1 && self.numel() == 0) {
    // torch answers int64 zeros here, whatever the weights.
    return PlanFull({minlength}, Scalar(int64_t{0}), DType::kInt64, self.device());
  }
  if (self.dim() != 1) {
    return RuntimeError(op, "bincount only supports 1-d non-negative integral inputs.");
  }
  if (weights.defined() && (weights.dim() != 1 || weights.numel() != self.numel())) {
    return RuntimeError(op, "weights should be 1-d and have the same length as input");
  }
  const DType out_dtype = !weights.defined()                  ? DType::kInt64
                          : weights.dtype() == DType::kFloat32 ? DType::kFloat32
                                                               : DType::kFloat64;
  PlannedOp plan;
  TENSORD_RETURN_IF_ERROR(ReadNow({self, weights}, [&]() -> absl::Status {
    // The smallest and largest values, read back together.
    Composition range({self});
    TENSORD_ASSIGN_OR_RETURN(const std::vector<Tensor> low_high,
                             range.Op("aminmax", {self}, Attrs()));
    TENSORD_ASSIGN_OR_RETURN(const Tensor both,
                             range.Op1("stack", {low_high.at(0), low_high.at(1)},
                                       Attrs().Set("dim", int64_t{0})));
    TENSORD_ASSIGN_OR_RETURN(const Tensor made, RunNowSingle(std::move(range).Finish({both})));
    TENSORD_ASSIGN_OR_RETURN(const std::vector<int64_t> read, HostInts(made));
    const int64_t low = read.at(0), high = read.at(1);
    if (low < 0) {
      return RuntimeError(op, "bincount only supports 1-d non-negative integral inputs.");
    }
    if (high == std::numeric_limits<int64_t>::max()) {
      return RuntimeError(op, absl::StrCat("bincount: ", high, " + 1 bins overflow int64"));
    }
    const int64_t size = std::max(high + 1, minlength);
    Composition c({self, weights});
    TENSORD_ASSIGN_OR_RETURN(const Tensor out, c.Full({size}, Scalar(int64_t{0}), out_dtype, self.device()));
    Tensor counted;
    if (weights.defined()) {
      TENSORD_ASSIGN_OR_RETURN(counted, c.ToDType(weights, out_dtype));
    } else {
      // One 1 seen through a stride of 0: nothing the size of self written to count with.
      TENSORD_ASSIGN_OR_RETURN(const Tensor one,
                               c.Full({1}, Scalar(int64_t{1}), out_dtype, self.device()));
      TENSORD_ASSIGN_OR_RETURN(counted, Expand(one, {self.numel()}));
    }
    TENSORD_ASSIGN_OR_RETURN(const Tensor index, c.ToDType(self, DType::kInt64));
    TENSORD_RETURN_IF_ERROR(
        c.Op("index_add_", {out, index, counted}, Attrs().Set("dim", int64_t{0})).status());
    TENSORD_ASSIGN_OR_RETURN(plan.outputs, RunNow(std::move(c).Finish({out})));
    return absl::OkStatus();
  }));
  return plan;
}

// ---- embedding_bag ---------------------------------------------------------------------------

// torch's embedding_bag (F.embedding_bag's output): the rows of weight at indices, pooled per
// bag by sum (each times its per_sample_weight), mean or max; an empty bag is zeros. Bags are
// the rows of 2-d indices, or the runs of 1-d indices that start at each offset (the last
// offset closing the last bag when include_last_offset). Indices equal to padding_idx count in
// no bag. Data-dependent only for torch's checks of the first and last offset (two numbers read
// back); the pooling is queued as any op: a gather of rows, then an index_add_ (or a
// scatter_reduce for max) into one more bag than there are, where skipped rows go.
absl::StatusOr<PlannedOp> PlanEmbeddingBag(const Tensor& weight, const Tensor& indices,
                                           const Tensor& offsets, const Tensor& per_sample,
                                           absl::string_view mode, bool include_last_offset,
                                           std::optional<int64_t> padding_idx) {
  constexpr absl::string_view op = "embedding_bag";
  std::vector<Tensor> operands = {weight, indices};
  for (const Tensor& t : {offsets, per_sample}) {
    if (t.defined()) operands.push_back(t);
  }
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, operands).status());
  const auto check_type = [&](const Tensor& t, absl::string_view what, int position,
                              bool floating) -> absl::Status {
    const DType d = t.dtype();
    const bool ok = floating ? (d == DType::kFloat16 || d == DType::kFloat32 ||
                                d == DType::kFloat64)
                             : (d == DType::kInt64 || d == DType::kInt32);
    if (ok) return absl::OkStatus();
    return RuntimeError(op, absl::StrCat("Expected tensor for argument #", position, " '", what,
                                         "' to have one of the following scalar types: ",
                                         floating ? "Half, Float, Double" : "Long, Int",
                                         "; but got torch.", DTypeLegacyName(d), "Tensor "
                                         "instead (while checking arguments for embedding_bag)"));
  };
  TENSORD_RETURN_IF_ERROR(check_type(indices, "indices", 1, false));
  if (offsets.defined()) TENSORD_RETURN_IF_ERROR(check_type(offsets, "offsets", 1, false));
  TENSORD_RETURN_IF_ERROR(check_type(weight, "weight", 1, true));
  if (mode != "sum" && mode != "mean" && mode != "max") {
    return RuntimeError(op, absl::StrCat("mode has to be one of sum, mean or max, got '", mode,
                                         "'"));
  }
  if (weight.dim() != 2) {
    return RuntimeError(op, absl::StrCat("weight has to be a 2D Tensor, but got Tensor of "
                                         "dimension ", weight.dim()));
  }
  if (indices.dim() == 2) {
    if (offsets.defined()) {
      return RuntimeError(op, "if input is 2D, then offsets has to be None");
    }
  } else if (indices.dim() != 1 || !offsets.defined() || offsets.dim() != 1) {
    return RuntimeError(op, "input has to be 1D or 2D Tensor, and 1D input needs 1D offsets");
  }
  if (per_sample.defined()) {
    if (mode != "sum") {
      return RuntimeError(op, absl::StrCat("embedding_bag: per_sample_weights was not None. "
                                           "per_sample_weights is only supported for "
                                           "mode='sum' (got mode='", mode, "')."));
    }
    if (per_sample.sizes() != indices.sizes()) {
      return RuntimeError(op, absl::StrCat("embedding_bag: If per_sample_weights (",
                                           FormatList(per_sample.sizes()), ") is not None, then "
                                           "it must have the same shape as the input (",
                                           FormatList(indices.sizes()), ")"));
    }
    if (per_sample.dtype() != weight.dtype()) {
      return RuntimeError(op, absl::StrCat("expected scalar type ",
                                           DTypeLegacyName(weight.dtype()), " but found ",
                                           DTypeLegacyName(per_sample.dtype())));
    }
  }
  const int64_t m = indices.numel(), dim = weight.size(1);
  // torch turns 2-d indices into an offset per row; include_last_offset then makes the last
  // offset the end of the bags before it (the last row in no bag).
  const int64_t given = indices.dim() == 2 ? indices.size(0) : offsets.numel();
  if (include_last_offset && given < 1) {
    return RuntimeError(op, "include_last_offset: number of offset should be at least 1");
  }
  const int64_t bags = given - (include_last_offset ? 1 : 0);
  const Device device = weight.device();
  const DType dtype = weight.dtype();
  // torch's checks of the offsets, on the two numbers they need.
  int64_t end = m;
  if (indices.dim() == 2 && include_last_offset) end = bags * indices.size(1);
  if (offsets.defined() && offsets.numel() > 0) {
    TENSORD_RETURN_IF_ERROR(ReadNow({offsets}, [&]() -> absl::Status {
      Composition ends({offsets});
      TENSORD_ASSIGN_OR_RETURN(const Tensor first, Select(offsets, 0, 0));
      TENSORD_ASSIGN_OR_RETURN(const Tensor last, Select(offsets, 0, offsets.numel() - 1));
      TENSORD_ASSIGN_OR_RETURN(const Tensor both,
                               ends.Op1("stack", {first, last}, Attrs().Set("dim", int64_t{0})));
      TENSORD_ASSIGN_OR_RETURN(const Tensor made, RunNowSingle(std::move(ends).Finish({both})));
      TENSORD_ASSIGN_OR_RETURN(const std::vector<int64_t> read, HostInts(made));
      if (read.at(0) != 0) {
        return RuntimeError(op, absl::StrCat("offsets[0] has to be 0, i.e., the first sequence "
                                             "in the mini-batch has to start from position 0. "
                                             "However, got ", read.at(0)));
      }
      if (read.at(1) > m) {
        return RuntimeError(op, absl::StrCat("offsets[-1] can not be greater than input's "
                                             "length ", m, " but got offsets[-1] of ",
                                             read.at(1)));
      }
      if (include_last_offset) end = read.at(1);
      return absl::OkStatus();
    }));
  }
  Composition c(operands);
  TENSORD_ASSIGN_OR_RETURN(Tensor flat, c.Reshape(indices, {m}));
  TENSORD_ASSIGN_OR_RETURN(flat, c.ToDType(flat, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Full({bags + 1, dim}, Scalar(0.0), dtype, device));
  if (m > 0 && bags > 0) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor pos, c.Arange(Scalar(int64_t{0}), Scalar(m),
                                                        Scalar(int64_t{1}), DType::kInt64, device));
    // Each index's bag; the indices that count in none go to the extra bag `bags`.
    Tensor bag;
    if (indices.dim() == 2) {
      TENSORD_ASSIGN_OR_RETURN(bag, c.Op1("floor_divide", {pos}, Attrs().Set(
                                                                  "other", Scalar(indices.size(1)))));
    } else {
      TENSORD_ASSIGN_OR_RETURN(Tensor starts, Narrow(offsets, 0, 0, bags));
      TENSORD_ASSIGN_OR_RETURN(starts, c.ToDType(starts, DType::kInt64));
      TENSORD_ASSIGN_OR_RETURN(starts, c.Contiguous(starts));
      TENSORD_ASSIGN_OR_RETURN(bag, c.Op1("searchsorted", {starts, pos, Tensor()},
                                          Attrs().Set("right", true)));
      TENSORD_ASSIGN_OR_RETURN(bag, c.Op1("sub", {bag}, Attrs().Set("other", Scalar(int64_t{1}))));
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor skip, c.Op1("ge", {pos}, Attrs().Set("other", Scalar(end))));
    TENSORD_ASSIGN_OR_RETURN(const Tensor before, c.Op1("lt", {bag}, Attrs().Set(
                                                                      "other", Scalar(int64_t{0}))));
    TENSORD_ASSIGN_OR_RETURN(skip, c.Op1("logical_or", {skip, before}));
    if (padding_idx.has_value()) {
      TENSORD_ASSIGN_OR_RETURN(const Tensor pad, c.Op1("eq", {flat}, Attrs().Set(
                                                                     "other", Scalar(*padding_idx))));
      TENSORD_ASSIGN_OR_RETURN(skip, c.Op1("logical_or", {skip, pad}));
    }
    TENSORD_ASSIGN_OR_RETURN(const Tensor spare, WrapNumber(Scalar(bags)));
    TENSORD_ASSIGN_OR_RETURN(bag, c.Op1("where", {skip, spare, bag}));
    TENSORD_ASSIGN_OR_RETURN(Tensor rows, c.Op1("index_select", {weight, flat},
                                                Attrs().Set("dim", int64_t{0})));
    if (per_sample.defined()) {
      TENSORD_ASSIGN_OR_RETURN(Tensor w, c.Reshape(per_sample, {m, 1}));
      TENSORD_ASSIGN_OR_RETURN(rows, c.Op1("mul", {rows, w}));
    }
    if (mode == "max") {
      TENSORD_ASSIGN_OR_RETURN(Tensor at, View(bag, {m, 1}));
      TENSORD_ASSIGN_OR_RETURN(at, Expand(at, {m, dim}));
      TENSORD_RETURN_IF_ERROR(c.Op("scatter_reduce_", {out, at, rows},
                                   Attrs().Set("dim", int64_t{0}).Set("reduce", std::string("amax"))
                                       .Set("include_self", false)).status());
    } else {
      TENSORD_RETURN_IF_ERROR(
          c.Op("index_add_", {out, bag, rows}, Attrs().Set("dim", int64_t{0})).status());
      if (mode == "mean") {
        TENSORD_ASSIGN_OR_RETURN(const Tensor counts, c.Full({bags + 1}, Scalar(0.0), dtype, device));
        TENSORD_ASSIGN_OR_RETURN(const Tensor ones, c.Full({m}, Scalar(1.0), dtype, device));
        TENSORD_RETURN_IF_ERROR(
            c.Op("index_add_", {counts, bag, ones}, Attrs().Set("dim", int64_t{0})).status());
        TENSORD_ASSIGN_OR_RETURN(Tensor divisor, c.Op1("clamp_min", {counts}, Attrs().Set(
                                                                             "min", Scalar(1.0))));
        TENSORD_ASSIGN_OR_RETURN(divisor, View(divisor, {bags + 1, 1}));
        TENSORD_ASSIGN_OR_RETURN(out, c.Op1("div", {out, divisor}));
      }
    }
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor result, Narrow(out, 0, 0, bags));
  TENSORD_ASSIGN_OR_RETURN(result, c.Contiguous(result));
  return std::move(c).Finish({result});
}

// ---- repeat_interleave ----------------------------------------------------------------------

// self's slices along dim, each repeated by its count in `repeats` (1-d, one per slice, or one
// for all); without dim, self's elements. The output's positions find their slice by a binary
// search in the counts' running sums, on the device.
absl::StatusOr<PlannedOp> PlanRepeatInterleave(const Tensor& self, const Tensor& repeats,
                                               std::optional<int64_t> dim,
                                               std::optional<int64_t> output_size) {
  constexpr absl::string_view op = "repeat_interleave";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {self, repeats}).status());
  if (repeats.dim() > 1) return RuntimeError(op, "repeats must be 0-dim or 1-dim tensor");
  if (repeats.dtype() != DType::kInt64 && repeats.dtype() != DType::kInt32) {
    return KernelNotImplemented(op, "repeat_interleave_cpu", repeats.dtype());
  }
  int64_t d = 0;
  if (dim) {
    if (self.dim() == 0) {
      return IndexError(op, absl::StrCat("Dimension specified as ", *dim,
                                         " but tensor has no dimensions"));
    }
    TENSORD_ASSIGN_OR_RETURN(d, WrapDim(op, *dim, self.dim()));
  }
  const int64_t n = dim ? self.size(d) : self.numel();
  if (repeats.numel() != 1 && repeats.numel() != n) {
    return RuntimeError(op, "repeats must have the same size as input along dim");
  }
  PlannedOp plan;
  TENSORD_RETURN_IF_ERROR(ReadNow({self, repeats}, [&]() -> absl::Status {
    const Attrs along0 = Attrs().Set("dim", int64_t{0});
    // Step 1: the counts' running sums (one per slice), and three numbers read back: the
    // smallest count, the smallest running sum (negative only if the sums overflowed, the
    // counts being non-negative) and the total.
    Composition c({self, repeats});
    Tensor x = self;
    if (!dim) {
      TENSORD_ASSIGN_OR_RETURN(x, c.Reshape(self, {n}));
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor ends, c.ToDType(repeats, DType::kInt64));
    TENSORD_ASSIGN_OR_RETURN(ends, Expand(ends, {n}));
    int64_t total = 0;
    if (n > 0) {
      TENSORD_ASSIGN_OR_RETURN(ends, c.Op1("cumsum", {ends}, along0));
      TENSORD_ASSIGN_OR_RETURN(Tensor low, c.Op1("amin", {repeats}));
      TENSORD_ASSIGN_OR_RETURN(low, c.ToDType(low, DType::kInt64));
      TENSORD_ASSIGN_OR_RETURN(const Tensor low_end, c.Op1("amin", {ends}));
      TENSORD_ASSIGN_OR_RETURN(const Tensor last, Select(ends, 0, n - 1));
      TENSORD_ASSIGN_OR_RETURN(const Tensor facts, c.Op1("stack", {low, low_end, last}, along0));
      TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> made, RunNow(std::move(c).Finish({x, ends, facts})));
      x = made.at(0);
      ends = made.at(1);
      TENSORD_ASSIGN_OR_RETURN(const std::vector<int64_t> read, HostInts(made.at(2)));
      if (read.at(0) < 0) return RuntimeError(op, "repeats can not be negative");
      if (read.at(1) < 0) return RuntimeError(op, "the repeated size overflows int64");
      total = read.at(2);
    } else {
      TENSORD_ASSIGN_OR_RETURN(x, RunNowSingle(std::move(c).Finish({x})));
    }
    if (output_size && *output_size != total) {
      return RuntimeError(op, "allocated size does not match required size");
    }
    // Step 2: each output position's slice, by binary search in the running sums.
    Composition pick({x, ends});
    TENSORD_ASSIGN_OR_RETURN(const Tensor positions,
                             pick.Arange(Scalar(int64_t{0}), Scalar(total), Scalar(int64_t{1}),
                                         DType::kInt64, self.device()));
    TENSORD_ASSIGN_OR_RETURN(const Tensor slice,
                             pick.Op1("searchsorted", {ends, positions, Tensor()},
                                      Attrs().Set("right", true)));
    TENSORD_ASSIGN_OR_RETURN(const Tensor out,
                             pick.Op1("index_select", {x, slice}, Attrs().Set("dim", d)));
    TENSORD_ASSIGN_OR_RETURN(plan.outputs, RunNow(std::move(pick).Finish({out})));
    return absl::OkStatus();
  }));
  return plan;
}

// ---- multinomial ----------------------------------------------------------------------------

// Category indices drawn per row of `self` (1-d or 2-d weights) from the (seed, offset) stream:
// with replacement by a binary search of uniform draws in the rows' running sums, without by
// the Gumbel-top-k trick (the num_samples largest log-weights plus Gumbel noise, which draws
// without replacement in proportion to the weights). torch's checks of the weights (finite,
// non-negative, a positive sum per row) read two flags back first, so they raise at the call.
absl::StatusOr<PlannedOp> PlanMultinomial(const Tensor& self, int64_t num_samples,
                                          bool replacement, const Attrs& seed) {
  constexpr absl::string_view op = "multinomial";
  if (self.dim() != 1 && self.dim() != 2) return RuntimeError(op, "prob_dist must be 1 or 2 dim");
  if (!IsFloating(self.dtype())) {
    return RuntimeError(op, absl::StrCat("multinomial only supports floating-point dtypes for "
                                         "input, got: ", DTypeLegacyName(self.dtype())));
  }
  if (self.dtype() == DType::kFloat16 && self.device().is_cpu()) {
    return RuntimeError(op, "multinomial is not implemented for half on CPU");
  }
  if (num_samples <= 0) return RuntimeError(op, "cannot sample n_sample <= 0 samples");
  const int64_t n = self.size(self.dim() - 1);
  if (!replacement && num_samples > n) {
    return RuntimeError(op, "cannot sample n_sample > prob_dist.size(-1) samples without "
                            "replacement");
  }
  const int64_t rows = self.dim() == 2 ? self.size(0) : 1;
  int64_t draws = 0;
  if (__builtin_mul_overflow(rows, replacement ? num_samples : n, &draws)) {
    return RuntimeError(op, "multinomial: too many draws");
  }
  const Device device = self.device();
  PlannedOp plan;
  TENSORD_RETURN_IF_ERROR(ReadNow({self}, [&]() -> absl::Status {
    Composition c({self});
    TENSORD_ASSIGN_OR_RETURN(Tensor p, c.ToDType(self, DType::kFloat64));
    TENSORD_ASSIGN_OR_RETURN(p, c.Reshape(p, {rows, n}));
    if (rows > 0 && n > 0) {  // step 1: the weights' checks, two flags read back
      // NaN fails "p >= 0" first (torch's order of checks): not_non_negative covers it.
      TENSORD_ASSIGN_OR_RETURN(Tensor not_finite, c.Op1("isfinite", {p}));
      TENSORD_ASSIGN_OR_RETURN(not_finite, c.Op1("logical_not", {not_finite}));
      TENSORD_ASSIGN_OR_RETURN(not_finite, c.Op1("any", {not_finite}));
      TENSORD_ASSIGN_OR_RETURN(Tensor not_non_negative,
                               c.Op1("ge", {p}, Attrs().Set("other", Scalar(0.0))));
      TENSORD_ASSIGN_OR_RETURN(not_non_negative, c.Op1("logical_not", {not_non_negative}));
      TENSORD_ASSIGN_OR_RETURN(not_non_negative, c.Op1("any", {not_non_negative}));
      TENSORD_ASSIGN_OR_RETURN(Tensor sums, c.Op1("sum", {p}, Attrs().Set("dim", std::vector<int64_t>{1})));
      TENSORD_ASSIGN_OR_RETURN(sums, c.Op1("le", {sums}, Attrs().Set("other", Scalar(0.0))));
      TENSORD_ASSIGN_OR_RETURN(sums, c.Op1("any", {sums}));
      TENSORD_ASSIGN_OR_RETURN(const Tensor flags, c.Op1("stack", {not_non_negative, not_finite, sums},
                                                           Attrs().Set("dim", int64_t{0})));
      TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> made, RunNow(std::move(c).Finish({p, flags})));
      p = made.at(0);
      TENSORD_ASSIGN_OR_RETURN(const std::vector<int64_t> read, HostInts(made.at(1)));
      if (!replacement && (read.at(0) != 0 || read.at(1) != 0)) {
        return RuntimeError(op, "probability tensor contains either `inf`, `nan` or element < 0");
      }
      if (read.at(0) != 0) {
        return RuntimeError(op, "invalid multinomial distribution (encountering probability "
                                "entry < 0)");
      }
      if (read.at(1) != 0) {
        return RuntimeError(op, "invalid multinomial distribution (encountering probability "
                                "entry = infinity or NaN)");
      }
      if (read.at(2) != 0) {
        return RuntimeError(op, "invalid multinomial distribution (sum of probabilities <= 0)");
      }
      c = Composition({p});
    }
    // Step 2: the draws.
    Attrs uniform = seed;
    uniform.Set("dtype", DType::kFloat64).Set("device", device);
    Tensor out;
    if (rows == 0 || n == 0) {
      TENSORD_ASSIGN_OR_RETURN(out, c.Full({rows, num_samples}, Scalar(int64_t{0}), DType::kInt64, device));
    } else if (replacement) {
      const Attrs along1 = Attrs().Set("dim", int64_t{1});
      TENSORD_ASSIGN_OR_RETURN(const Tensor cdf, c.Op1("cumsum", {p}, along1));
      uniform.Set("size", std::vector<int64_t>{rows, num_samples});
      TENSORD_ASSIGN_OR_RETURN(Tensor u, c.Op1("rand", {}, uniform));
      TENSORD_ASSIGN_OR_RETURN(Tensor total, Narrow(cdf, 1, n - 1, 1));
      TENSORD_ASSIGN_OR_RETURN(u, c.Op1("mul", {u, total}));
      TENSORD_ASSIGN_OR_RETURN(out, c.Op1("searchsorted", {cdf, u, Tensor()}, Attrs().Set("right", true)));
      TENSORD_ASSIGN_OR_RETURN(out, c.Op1("clamp_max", {out}, Attrs().Set("max", Scalar(n - 1))));
    } else {
      uniform.Set("size", std::vector<int64_t>{rows, n});
      TENSORD_ASSIGN_OR_RETURN(Tensor u, c.Op1("rand", {}, uniform));
      TENSORD_ASSIGN_OR_RETURN(u, c.Op1("clamp_min", {u}, Attrs().Set("min", Scalar(1e-300))));
      TENSORD_ASSIGN_OR_RETURN(u, c.Op1("log", {u}));
      TENSORD_ASSIGN_OR_RETURN(u, c.Op1("neg", {u}));
      TENSORD_ASSIGN_OR_RETURN(u, c.Op1("log", {u}));
      TENSORD_ASSIGN_OR_RETURN(Tensor keys, c.Op1("log", {p}));
      TENSORD_ASSIGN_OR_RETURN(keys, c.Op1("sub", {keys, u}));
      TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> top,
                               c.Op("topk", {keys}, Attrs().Set("k", num_samples).Set("dim", int64_t{1})));
      out = top.at(1);
    }
    if (self.dim() == 1) {
      TENSORD_ASSIGN_OR_RETURN(out, View(out, {num_samples}));
    }
    TENSORD_ASSIGN_OR_RETURN(plan.outputs, RunNow(std::move(c).Finish({out})));
    return absl::OkStatus();
  }));
  return plan;
}

}  // namespace

void RegisterDataDependentOps(std::vector<OpDef>& ops) {
  ops.push_back({"embedding_bag", OpKind::kDataDependent,
                 {"weight", "indices", "offsets", "per_sample_weights"},
                 {Opt("mode", AttrType::kString, "mean", "sum, mean or max"),
                  Opt("include_last_offset", AttrType::kBool, "false"),
                  Opt("padding_idx", AttrType::kInt, "None")},
                 "torch.nn.functional.embedding_bag: weight's rows at indices pooled per bag "
                 "(the rows of 2-d indices, or the runs of 1-d indices from each offset). "
                 "Data-dependent: reads the first and last offset to check them, as torch.",
                 false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(std::string mode, a.String("mode", "mean"));
                   TENSORD_ASSIGN_OR_RETURN(bool last, a.Bool("include_last_offset", false));
                   TENSORD_ASSIGN_OR_RETURN(std::optional<int64_t> padding,
                                            a.OptionalInt("padding_idx"));
                   return PlanEmbeddingBag(in[0], in[1], in[2], in[3], mode, last, padding);
                 },
                 false, {"offsets", "per_sample_weights"}, {"offsets", "per_sample_weights"}});
  ops.push_back({"masked_select", OpKind::kDataDependent, {"self", "mask"}, {},
                 "The elements of self where mask is true, as a 1-d tensor. Data-dependent: "
                 "waits for its inputs first.",
                 false, [](Inputs in, AttrReader&) { return PlanMaskedSelect(in[0], in[1]); }});
  ops.push_back({"nonzero", OpKind::kDataDependent, {"self"}, {},
                 "Indices of the nonzero elements, shape (count, dim). Data-dependent: waits for "
                 "its input first.",
                 false, [](Inputs in, AttrReader&) { return PlanNonzero(in[0]); }});
  for (const bool sorted : {true, false}) {
    const std::string name = sorted ? "unique" : "unique_consecutive";
    std::vector<AttrSpec> attrs = {Opt("return_inverse", AttrType::kBool, "false"),
                                   Opt("return_counts", AttrType::kBool, "false"),
                                   Opt("dim", AttrType::kInt, "None")};
    if (sorted) {
      attrs.insert(attrs.begin(), Opt("sorted", AttrType::kBool, "true",
                                      "false: on the CPU, in the order of torch's CPU kernel "
                                      "(its hash set's; sorted with dim, as torch's); "
                                      "elsewhere sorted"));
    }
    ops.push_back(
        {name, OpKind::kDataDependent, {"self"}, std::move(attrs),
         sorted ? "The distinct elements (or slices along dim), sorted; then on request each "
                  "element's position among them (return_inverse) and how often each occurs "
                  "(return_counts). Data-dependent: waits for its input first."
                : "The first element (or slice along dim) of each run of equal neighbours; "
                  "then on request each element's run (return_inverse) and the runs' lengths "
                  "(return_counts). Data-dependent: waits for its input first.",
         /*multi_output=*/true,
         [name, sorted](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
           UniqueArgs args;
           args.sorted = sorted;
           if (sorted) {
             TENSORD_ASSIGN_OR_RETURN(const bool sorted_values, a.Bool("sorted", true));
             args.hash_order = !sorted_values;
           }
           TENSORD_ASSIGN_OR_RETURN(args.inverse, a.Bool("return_inverse", false));
           TENSORD_ASSIGN_OR_RETURN(args.counts, a.Bool("return_counts", false));
           TENSORD_ASSIGN_OR_RETURN(args.dim, a.OptionalInt("dim"));
           return PlanUnique(name, in[0], args);
         }});
  }
  ops.push_back({"bincount", OpKind::kDataDependent, {"self", "weights"},
                 {Opt("minlength", AttrType::kInt, "0")},
                 "How often each value of the 1-d non-negative integer self occurs (or the sum "
                 "of its weights), over max(self) + 1 or minlength bins. Data-dependent: waits "
                 "for its inputs first.",
                 false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t minlength, a.Int("minlength", 0));
                   return PlanBincount(in[0], in[1], minlength);
                 },
                 false, {"weights"}, {"weights"}});
  ops.push_back({"repeat_interleave", OpKind::kDataDependent, {"self", "repeats"},
                 {Opt("dim", AttrType::kInt, "None"), Opt("output_size", AttrType::kInt, "None")},
                 "self's slices along dim (or its elements, without dim) each repeated by its "
                 "count in the int tensor repeats. Data-dependent: waits for its inputs first.",
                 false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(std::optional<int64_t> dim, a.OptionalInt("dim"));
                   TENSORD_ASSIGN_OR_RETURN(std::optional<int64_t> output_size,
                                            a.OptionalInt("output_size"));
                   return PlanRepeatInterleave(in[0], in[1], dim, output_size);
                 }});
  ops.push_back({"multinomial", OpKind::kDataDependent, {"self"},
                 {Req("num_samples", AttrType::kInt), Opt("replacement", AttrType::kBool, "false"),
                  Opt("seed", AttrType::kInt, "a fresh random seed", "generator key"),
                  Opt("offset", AttrType::kInt, "0", "counter of the first draw")},
                 "Category indices drawn by weight per row of self (1-d or 2-d), with or "
                 "without replacement, from (seed, offset) as every random op. Waits for its "
                 "input first: torch checks the weights before it draws.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t num_samples, a.Int("num_samples"));
                   TENSORD_ASSIGN_OR_RETURN(bool replacement, a.Bool("replacement", false));
                   Attrs seed;
                   for (const char* name : {"seed", "offset"}) {
                     if (const AttrValue* v = a.attrs().Find(name)) seed.Set(name, *v);
                   }
                   return PlanMultinomial(in[0], num_samples, replacement, seed);
                 }});
}

}  // namespace tensord::engine
