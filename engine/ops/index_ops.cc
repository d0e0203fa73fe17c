#include "engine/ops/index_ops.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/core/checked_math.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/tensor/shape_util.h"
#include "engine/views/view_ops.h"
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

namespace {

// What index.Tensor and index_put_ share: the indexing result's shape, and the view of self's
// storage that one index_select (or scatter) along `dim` at `offsets` reads (or writes).
struct AdvancedIndex {
  DimVector result_shape;    // before + B + after (adjacent dims), or B + the other dims
  Tensor view;               // self's storage as (…, span, …): the span dim at `dim`, stride 1
  int64_t dim = 0;
  Tensor offsets;            // int64 (numel(B)): where each indexed element starts in `view`
  DimVector gathered_shape;  // view's sizes with `dim` of numel(B)
  bool empty = false;        // the result has no elements (nothing is checked or gathered)
};

absl::StatusOr<AdvancedIndex> PlanOffsets(absl::string_view op, Composition& c,
                                          const Tensor& self, absl::Span<const Tensor> indices,
                                          IntList dims) {
  if (indices.empty() || indices.size() != dims.size()) {
    return RuntimeError(op, absl::StrCat("expected one dim per index tensor, but got ",
                                         indices.size(), " index tensors and ", dims.size(),
                                         " dims"));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= self.dim() || (i > 0 && dims[i] <= dims[i - 1])) {
      return IndexError(op, absl::StrCat("too many indices for tensor of dimension ", self.dim(),
                                         " (index dims ", FormatList(dims), ")"));
    }
  }
  std::vector<std::string> shapes;
  DimVector b;
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor& index = indices[i];
    if (index.device() != self.device()) {
      return RuntimeError(op, absl::StrCat("indices should be either on cpu or on the same "
                                           "device as the indexed tensor (",
                                           self.device().ToString(), ")"));
    }
    if (index.dtype() != DType::kInt64) {
      return IndexError(op, "tensors used as indices must be long, byte or bool tensors");
    }
    shapes.push_back(FormatList(index.sizes()));
  }
  b.assign(indices[0].sizes().begin(), indices[0].sizes().end());
  for (size_t i = 1; i < indices.size(); ++i) {
    absl::StatusOr<DimVector> joined = BroadcastShapes(op, b, indices[i].sizes());
    if (!joined.ok()) {
      return IndexError(op, absl::StrCat("shape mismatch: indexing tensors could not be "
                                         "broadcast together with shapes ",
                                         absl::StrJoin(shapes, ", ")));
    }
    b = *std::move(joined);
  }
  TENSORD_ASSIGN_OR_RETURN(const int64_t count, CheckShape(op, b));
  // torch checks the indices only when there is something to gather (its kernel's loop), but
  // refuses any index into a dim of size 0.
  int64_t rest = count;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) rest *= self.size(d) > 0 ? 1 : 0;
  }
  const bool gathers = rest > 0;
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  // Each index within its dim (checked where the kernels run), negative ones wrapped, times
  // its dim's stride: summed, the offset of each indexed element from self's storage offset.
  Tensor offsets;
  int64_t span = 1;
  bool empty_dim = false;
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor& index = indices[i];
    const int64_t size = self.size(dims[i]), stride = self.stride(dims[i]);
    empty_dim = empty_dim || size == 0;
    if (index.numel() > 0 && count > 0 && (gathers || size == 0)) {
      PlannedOp check;
      check.reads = {index.storage()};
      check.kernel = [backend, index, dim = dims[i], size]() -> absl::Status {
        return backend->CheckIndexBounds("index", index, dim, size);
      };
      c.Add(std::move(check));
    }
    TENSORD_ASSIGN_OR_RETURN(const Tensor negative,
                             c.Op1("lt", {index}, Attrs().Set("other", Scalar(int64_t{0}))));
    TENSORD_ASSIGN_OR_RETURN(const Tensor shifted,
                             c.Op1("add", {index}, Attrs().Set("other", Scalar(size))));
    TENSORD_ASSIGN_OR_RETURN(Tensor term, c.Op1("where", {negative, shifted, index}));
    if (stride != 1) {
      TENSORD_ASSIGN_OR_RETURN(term, c.Op1("mul", {term}, Attrs().Set("other", Scalar(stride))));
    }
    if (offsets.defined()) {
      TENSORD_ASSIGN_OR_RETURN(offsets, c.Op1("add", {offsets, term}));
    } else {
      offsets = term;
    }
    if (size > 0 && self.numel() > 0) {  // within the storage self spans: no overflow
      span += (size - 1) * stride;
    }
  }
  if (empty_dim || self.numel() == 0) span = 0;  // nothing to reach (and no overflow)
  TENSORD_ASSIGN_OR_RETURN(offsets, Expand(offsets, b));
  AdvancedIndex ix;
  TENSORD_ASSIGN_OR_RETURN(ix.offsets, c.Reshape(offsets, {count}));
  bool adjacent = true;
  for (size_t i = 1; i < dims.size(); ++i) adjacent = adjacent && dims[i] == dims[i - 1] + 1;
  DimVector sizes, strides;
  const auto indexed = [&](int64_t d) {
    return std::find(dims.begin(), dims.end(), d) != dims.end();
  };
  const auto add_dim = [&](int64_t d) {
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
    ix.result_shape.push_back(self.size(d));
  };
  const auto add_span = [&]() {
    ix.dim = static_cast<int64_t>(sizes.size());
    sizes.push_back(span);
    strides.push_back(1);
    ix.result_shape.insert(ix.result_shape.end(), b.begin(), b.end());
  };
  if (adjacent) {
    for (int64_t d = 0; d < dims.front(); ++d) add_dim(d);
    add_span();
    for (int64_t d = dims.back() + 1; d < self.dim(); ++d) add_dim(d);
  } else {
    add_span();
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!indexed(d)) add_dim(d);
    }
  }
  TENSORD_ASSIGN_OR_RETURN(ix.view, AsStrided(self, sizes, strides, self.storage_offset()));
  ix.empty = !gathers;
  ix.gathered_shape = sizes;
  ix.gathered_shape[ix.dim] = count;
  return ix;
}

}  // namespace

absl::StatusOr<PlannedOp> PlanIndexTensor(const Tensor& self, absl::Span<const Tensor> indices,
                                          IntList dims) {
  constexpr absl::string_view op = "index";
  std::vector<Tensor> inputs = {self};
  inputs.insert(inputs.end(), indices.begin(), indices.end());
  Composition c(inputs);
  TENSORD_ASSIGN_OR_RETURN(const AdvancedIndex ix, PlanOffsets(op, c, self, indices, dims));
  Tensor out;
  if (ix.empty) {
    TENSORD_ASSIGN_OR_RETURN(
        out, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), ix.result_shape),
                            self.device()));
  } else {
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("index_select", {ix.view, ix.offsets},
                                        Attrs().Set("dim", ix.dim)));
    TENSORD_ASSIGN_OR_RETURN(out, View(out, ix.result_shape));
  }
  return std::move(c).Finish({out});
}

absl::StatusOr<PlannedOp> PlanIndexPut(const Tensor& self, const Tensor& values_in,
                                       absl::Span<const Tensor> indices, IntList dims,
                                       bool accumulate) {
  constexpr absl::string_view op = "index_put_";
  if (values_in.device() != self.device()) {
    return RuntimeError(op, absl::StrCat("expected values on ", self.device().ToString(),
                                         " as self, but got ", values_in.device().ToString()));
  }
  std::vector<Tensor> inputs = {self, values_in};
  inputs.insert(inputs.end(), indices.begin(), indices.end());
  Composition c(inputs);
  TENSORD_ASSIGN_OR_RETURN(const AdvancedIndex ix, PlanOffsets(op, c, self, indices, dims));
  if (values_in.dtype() != self.dtype()) {  // after the indices' checks, as torch
    return RuntimeError(op, absl::StrCat("Index put requires the source and destination dtypes "
                                         "match, got ", DTypeLegacyName(self.dtype()),
                                         " for the destination and ",
                                         DTypeLegacyName(values_in.dtype()), " for the source."));
  }
  absl::StatusOr<DimVector> joined = BroadcastShapes(op, values_in.sizes(), ix.result_shape);
  if (!joined.ok() || IntList(*joined) != IntList(ix.result_shape)) {
    return RuntimeError(op, absl::StrCat("shape mismatch: value tensor of shape ",
                                         FormatList(values_in.sizes()),
                                         " cannot be broadcast to indexing result of shape ",
                                         FormatList(ix.result_shape)));
  }
  // Values read while self is written: torch refuses any overlap.
  TENSORD_RETURN_IF_ERROR(CheckNoOverlap(op, self, values_in));
  TENSORD_ASSIGN_OR_RETURN(Tensor values, Expand(values_in, ix.result_shape));
  TENSORD_ASSIGN_OR_RETURN(const Tensor source, c.Reshape(values, ix.gathered_shape));
  DimVector along(ix.gathered_shape.size(), 1);
  along[ix.dim] = ix.gathered_shape[ix.dim];
  TENSORD_ASSIGN_OR_RETURN(Tensor spread, View(ix.offsets, along));
  TENSORD_ASSIGN_OR_RETURN(spread, Expand(spread, ix.gathered_shape));
  if (!ix.empty) {
    TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
    PlannedOp write;
    write.reads = {spread.storage(), source.storage()};
    write.writes = {self.storage()};
    write.kernel = [backend, view = ix.view, dim = ix.dim, spread, source,
                    accumulate]() -> absl::Status {
      return backend->Scatter("index_put_", view, dim, spread, source, nullptr,
                              accumulate ? ScatterMode::kAdd : ScatterMode::kAssign);
    };
    c.Add(std::move(write));
  }
  return std::move(c).Finish({self});
}

}  // namespace tensord::engine
