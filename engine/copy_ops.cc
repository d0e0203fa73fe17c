#include "engine/copy_ops.h"

#include <algorithm>
#include <bitset>

#include "absl/strings/str_cat.h"
#include "engine/backend.h"
#include "engine/checked_math.h"
#include "engine/errors.h"
#include "engine/factory_ops.h"
#include "engine/overlap.h"
#include "engine/shape_util.h"
#include "engine/status_macros.h"
#include "engine/view_ops.h"

namespace tensord::engine {
namespace {


TensorMeta PreservedLayout(const TensorMeta& m, DType dtype) {
  if (m.is_non_overlapping_and_dense()) return TensorMeta(dtype, m.sizes(), m.strides(), 0);
  DimVector strides = InferDenseStrides(m.sizes(), m.strides());
  return TensorMeta(dtype, m.sizes(), strides, 0);
}

// Plans a fresh tensor with `meta`'s layout holding src's elements, read through `src_strides`
// from `src_offset_bytes` past src.data() (negative strides walk backwards).
absl::StatusOr<PlannedOp> PlanCopyToNew(absl::string_view op, const Tensor& src,
                                        const TensorMeta& meta, int64_t src_offset_bytes,
                                        IntList src_strides) {
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(src.device()));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, AllocateTensor(op, meta, src.device()));
  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.reads.push_back(src.storage());
  plan.writes.push_back(out.storage());
  plan.kernel = [backend, out, src, src_offset_bytes,
                 strides = DimVector(src_strides.begin(), src_strides.end())]() {
    backend->Copy(out.sizes(), StridedRef::Of(out),
                  StridedRef{src.data() + src_offset_bytes, src.dtype(), strides});
    return absl::OkStatus();
  };
  return plan;
}

// A plan whose output is `self` after the kernel wrote into it.
PlannedOp InPlacePlan(const Tensor& self, absl::AnyInvocable<absl::Status()> kernel) {
  PlannedOp plan;
  plan.outputs.push_back(self);
  plan.writes.push_back(self.storage());
  plan.kernel = std::move(kernel);
  return plan;
}

}  // namespace

absl::StatusOr<PlannedOp> PlanContiguous(const Tensor& self) {
  if (self.is_contiguous()) return ViewPlan({self});
  return PlanCloneContiguous(self);
}

absl::StatusOr<PlannedOp> PlanCloneContiguous(const Tensor& self) {
  return PlanCopyToNew("contiguous", self, TensorMeta::Contiguous(self.dtype(), self.sizes()), 0,
                       self.strides());
}

absl::StatusOr<PlannedOp> PlanClone(const Tensor& self) {
  return PlanCopyToNew("clone", self, PreservedLayout(self.meta(), self.dtype()), 0,
                       self.strides());
}

absl::StatusOr<PlannedOp> PlanToDType(const Tensor& self, DType dtype) {
  if (self.dtype() == dtype) return ViewPlan({self});
  return PlanCopyToNew("to", self, PreservedLayout(self.meta(), dtype), 0, self.strides());
}

absl::StatusOr<PlannedOp> PlanCopyInto(const Tensor& self, const Tensor& src) {
  constexpr absl::string_view op = "copy_";
  if (self.device() != src.device()) {
    return RuntimeError(op, absl::StrCat("copies between devices (", src.device().ToString(),
                                         " to ", self.device().ToString(),
                                         ") are not supported by this backend"));
  }
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  TENSORD_ASSIGN_OR_RETURN(DimVector shape, BroadcastShapes(op, self.sizes(), src.sizes()));
  if (!std::equal(shape.begin(), shape.end(), self.sizes().begin(), self.sizes().end())) {
    return RuntimeError(op, absl::StrCat("output with shape ", FormatList(self.sizes()),
                                         " doesn't match the broadcast shape ",
                                         FormatList(shape)));
  }
  if (HasInternalOverlap(self)) {
    return RuntimeError(op, "unsupported operation: more than one element of the written-to "
                            "tensor refers to a single memory location. Please clone() the tensor "
                            "before performing the operation.");
  }
  const Overlap overlap = GetOverlap(self, src);
  if (overlap == Overlap::kPartial) {
    return RuntimeError(op, "unsupported operation: some elements of the input tensor and the "
                            "written-to tensor refer to a single memory location. Please clone() "
                            "the tensor before performing the operation.");
  }
  if (self.numel() == 0 || (overlap == Overlap::kFull && self.dtype() == src.dtype())) {
    return ViewPlan({self});  // nothing to move
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor expanded, Expand(src, self.sizes()));
  // Overlap PyTorch cannot classify: stage the source first, so the result never depends on the
  // order elements are visited in.
  const bool stage = overlap != Overlap::kFull && ExtentsIntersect(self, expanded);
  PlannedOp plan = InPlacePlan(self, [backend, self, expanded, stage]() -> absl::Status {
    if (!stage) {
      backend->Copy(self.sizes(), StridedRef::Of(self), StridedRef::Of(expanded));
      return absl::OkStatus();
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor staged, RunNowSingle(PlanCloneContiguous(expanded)));
    backend->Copy(self.sizes(), StridedRef::Of(self), StridedRef::Of(staged));
    return absl::OkStatus();
  });
  plan.reads.push_back(src.storage());
  return plan;
}

absl::StatusOr<PlannedOp> PlanFill(const Tensor& self, const Scalar& value) {
  TENSORD_RETURN_IF_ERROR(CheckScalarFits("fill_", value, self.dtype()));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  return InPlacePlan(self, [backend, self, value]() {
    backend->Fill(self.sizes(), StridedRef::Of(self), value);
    return absl::OkStatus();
  });
}

absl::StatusOr<PlannedOp> PlanFlip(const Tensor& self, IntList dims) {
  constexpr absl::string_view op = "flip";
  std::bitset<kMaxRank> flip;
  for (int64_t dim : dims) {
    TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
    if (flip[d]) {
      return RuntimeError(op, absl::StrCat("dim ", d, " appears multiple times in the list of "
                                           "dims"));
    }
    flip[d] = true;
  }
  // Read backwards along flipped dims: start at the last element, negate the stride.
  DimVector strides(self.strides().begin(), self.strides().end());
  int64_t offset_bytes = 0;
  if (self.numel() > 0) {
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!flip[d]) continue;
      offset_bytes += (self.size(d) - 1) * self.stride(d) * self.itemsize();
      strides[d] = -strides[d];
    }
  }
  return PlanCopyToNew(op, self, PreservedLayout(self.meta(), self.dtype()), offset_bytes,
                       strides);
}

absl::StatusOr<PlannedOp> PlanRepeat(const Tensor& self, IntList repeats) {
  constexpr absl::string_view op = "repeat";
  const int64_t n = static_cast<int64_t>(repeats.size());
  if (n < self.dim()) {
    return RuntimeError(op, "Number of dimensions of repeat dims can not be smaller than number "
                            "of dimensions of tensor");
  }
  if (n > kMaxRank) {
    return RuntimeError(op, absl::StrCat("tensors may have at most ", kMaxRank,
                                         " dimensions, but got ", n));
  }
  const int64_t pad = n - self.dim();
  DimVector target(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t size = i < pad ? 1 : self.size(i - pad);
    auto t = CheckedMul(size, repeats[i]);
    if (!t) {
      return RuntimeError(op, absl::StrCat("repeats ", FormatList(repeats),
                                           " of a tensor of size ", FormatList(self.sizes()),
                                           " overflow int64"));
    }
    target[i] = *t;
  }
  TENSORD_RETURN_IF_ERROR(CheckShape(op, target).status());
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor out, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), target), self.device()));
  // View the output as [r0, s0, r1, s1, …] and copy the input broadcast over the r's.
  DimVector sizes(2 * n), dst_strides(2 * n), src_strides(2 * n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t size = i < pad ? 1 : self.size(i - pad);
    sizes[2 * i] = repeats[i];
    sizes[2 * i + 1] = size;
    dst_strides[2 * i] = size * out.stride(i);
    dst_strides[2 * i + 1] = out.stride(i);
    src_strides[2 * i] = 0;
    src_strides[2 * i + 1] = i < pad ? 0 : self.stride(i - pad);
  }
  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.reads.push_back(self.storage());
  plan.writes.push_back(out.storage());
  plan.kernel = [backend, out, self, sizes, dst_strides, src_strides]() {
    if (out.numel() == 0) return absl::OkStatus();
    backend->Copy(sizes, StridedRef{out.data(), out.dtype(), dst_strides},
                  StridedRef{self.data(), self.dtype(), src_strides});
    return absl::OkStatus();
  };
  return plan;
}

absl::StatusOr<PlannedOp> PlanReshape(const Tensor& self, IntList shape) {
  TENSORD_ASSIGN_OR_RETURN(std::optional<TensorMeta> view, ReshapeAsView(self, shape));
  if (view) return ViewPlan({self.WithMeta(*std::move(view))});
  TENSORD_ASSIGN_OR_RETURN(DimVector sizes, InferSize("reshape", shape, self.numel()));
  TENSORD_ASSIGN_OR_RETURN(PlannedOp plan, PlanCloneContiguous(self));
  // The copy is contiguous, so any shape of the same numel views it with contiguous strides.
  plan.outputs[0] = plan.outputs[0].WithMeta(TensorMeta::Contiguous(self.dtype(), sizes));
  return plan;
}

absl::StatusOr<PlannedOp> PlanFlatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  constexpr absl::string_view op = "flatten";
  TENSORD_ASSIGN_OR_RETURN(int64_t s, WrapDim(op, start_dim, self.dim()));
  TENSORD_ASSIGN_OR_RETURN(int64_t e, WrapDim(op, end_dim, self.dim()));
  if (s > e) {
    return RuntimeError(op, "flatten() has invalid args: start_dim cannot come after end_dim");
  }
  if (self.dim() == 0) {
    const int64_t one[1] = {1};
    return PlanReshape(self, one);
  }
  if (s == e) return ViewPlan({self});
  DimVector shape;
  for (int64_t i = 0; i < s; ++i) shape.push_back(self.size(i));
  int64_t merged = 1;
  for (int64_t i = s; i <= e; ++i) merged *= self.size(i);  // validated: cannot overflow
  shape.push_back(merged);
  for (int64_t i = e + 1; i < self.dim(); ++i) shape.push_back(self.size(i));
  return PlanReshape(self, shape);
}

absl::StatusOr<Tensor> Contiguous(const Tensor& self) { return RunNowSingle(PlanContiguous(self)); }
absl::StatusOr<Tensor> Clone(const Tensor& self) { return RunNowSingle(PlanClone(self)); }
absl::StatusOr<Tensor> CloneContiguous(const Tensor& self) {
  return RunNowSingle(PlanCloneContiguous(self));
}
absl::StatusOr<Tensor> ToDType(const Tensor& self, DType dtype) {
  return RunNowSingle(PlanToDType(self, dtype));
}
absl::Status CopyInto(const Tensor& self, const Tensor& src) {
  return RunNow(PlanCopyInto(self, src)).status();
}
absl::Status FillInto(const Tensor& self, const Scalar& value) {
  return RunNow(PlanFill(self, value)).status();
}
absl::Status ZeroInto(const Tensor& self) { return FillInto(self, Scalar(int64_t{0})); }
absl::StatusOr<Tensor> Flip(const Tensor& self, IntList dims) {
  return RunNowSingle(PlanFlip(self, dims));
}
absl::StatusOr<Tensor> Repeat(const Tensor& self, IntList repeats) {
  return RunNowSingle(PlanRepeat(self, repeats));
}
absl::StatusOr<Tensor> Reshape(const Tensor& self, IntList shape) {
  return RunNowSingle(PlanReshape(self, shape));
}
absl::StatusOr<Tensor> ReshapeAs(const Tensor& self, const Tensor& other) {
  return Reshape(self, other.sizes());
}
absl::StatusOr<Tensor> Flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  return RunNowSingle(PlanFlatten(self, start_dim, end_dim));
}

}  // namespace tensord::engine
