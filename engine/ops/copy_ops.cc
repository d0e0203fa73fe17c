#include "engine/ops/copy_ops.h"

#include <algorithm>
#include <bitset>
#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/runtime/backend.h"
#include "engine/core/checked_math.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/tensor/overlap.h"
#include "engine/tensor/shape_util.h"
#include "engine/core/status_macros.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {

TensorMeta PreservedLayout(const TensorMeta& m, DType dtype) {
  if (m.is_non_overlapping_and_dense()) return TensorMeta(dtype, m.sizes(), m.strides(), 0);
  DimVector strides = InferDenseStrides(m.sizes(), m.strides());
  return TensorMeta(dtype, m.sizes(), strides, 0);
}

namespace {

// Scratch memory for a copy between devices: not a storage, charged to no session, returned to
// its allocator when the copy ends.
class Scratch {
 public:
  static absl::StatusOr<Scratch> Allocate(Allocator& allocator, int64_t nbytes) {
    TENSORD_ASSIGN_OR_RETURN(void* p, allocator.Allocate(nbytes));
    return Scratch(&allocator, static_cast<char*>(p), nbytes);
  }
  Scratch(Scratch&& o) noexcept : allocator_(o.allocator_), data_(o.data_), nbytes_(o.nbytes_) {
    o.data_ = nullptr;
  }
  Scratch& operator=(Scratch&& o) noexcept {
    std::swap(allocator_, o.allocator_);
    std::swap(data_, o.data_);
    std::swap(nbytes_, o.nbytes_);
    return *this;
  }
  ~Scratch() {
    if (data_ != nullptr) allocator_->Deallocate(data_, nbytes_);
  }
  char* data() const { return data_; }

 private:
  Scratch(Allocator* allocator, char* data, int64_t nbytes)
      : allocator_(allocator), data_(data), nbytes_(nbytes) {}
  Allocator* allocator_;
  char* data_;
  int64_t nbytes_;
};

bool IsRowMajor(IntList sizes, IntList strides) {
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// Whether the elements of `ref` over `sizes` fill one gap-free block starting at ref.data
// (non-overlapping and dense, every stride non-negative).
bool IsDenseBlock(IntList sizes, const StridedRef& ref) {
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 && ref.strides[d] < 0) return false;
  }
  return TensorMeta(ref.dtype, sizes, ref.strides, 0).is_non_overlapping_and_dense();
}

// dst[i] = convert(src[i]) over `sizes` when dst and src live on different devices. Host memory
// is where the two meet: the source's device yields src's elements as row-major bytes in src's
// dtype, the destination's device takes them and converts and scatters them itself. Operands
// with the same dense layout and dtype move as one block, with no staging.
absl::Status CopyBetweenDevices(IntList sizes, const StridedRef& dst, Device dst_device,
                                const StridedRef& src, Device src_device) {
  TENSORD_ASSIGN_OR_RETURN(Backend * from, BackendFor(src_device));
  TENSORD_ASSIGN_OR_RETURN(Backend * to, BackendFor(dst_device));
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;  // validated shapes: cannot overflow
  if (numel == 0) return absl::OkStatus();
  const int64_t src_bytes = numel * ItemSize(src.dtype);
  const bool same_layout = dst.dtype == src.dtype &&
                           std::equal(dst.strides.begin(), dst.strides.end(),
                                      src.strides.begin(), src.strides.end()) &&
                           IsDenseBlock(sizes, dst);
  if (same_layout && src_device.is_cpu()) return to->CopyFromHost(dst.data, src.data, src_bytes);
  if (same_layout && dst_device.is_cpu()) return from->CopyToHost(dst.data, src.data, src_bytes);

  const TensorMeta rows_meta = TensorMeta::Contiguous(src.dtype, sizes);
  const DimVector row_major(rows_meta.strides().begin(), rows_meta.strides().end());
  // 1. src's elements, row-major, in host memory.
  std::optional<Scratch> host_rows;
  const char* host = nullptr;
  if (src_device.is_cpu() && IsRowMajor(sizes, src.strides)) {
    host = src.data;
  } else {
    TENSORD_ASSIGN_OR_RETURN(Backend * host_backend, BackendFor(kCpu));
    TENSORD_ASSIGN_OR_RETURN(host_rows, Scratch::Allocate(host_backend->allocator(), src_bytes));
    host = host_rows->data();
    if (src_device.is_cpu()) {
      TENSORD_RETURN_IF_ERROR(
          from->Copy(sizes, StridedRef{host_rows->data(), src.dtype, row_major}, src));
    } else if (IsRowMajor(sizes, src.strides)) {
      TENSORD_RETURN_IF_ERROR(from->CopyToHost(host_rows->data(), src.data, src_bytes));
    } else {
      TENSORD_ASSIGN_OR_RETURN(Scratch rows, Scratch::Allocate(from->allocator(), src_bytes));
      TENSORD_RETURN_IF_ERROR(
          from->Copy(sizes, StridedRef{rows.data(), src.dtype, row_major}, src));
      TENSORD_RETURN_IF_ERROR(from->CopyToHost(host_rows->data(), rows.data(), src_bytes));
    }
  }
  // 2. Into dst, converted and scattered by dst's device.
  if (dst_device.is_cpu()) {
    return to->Copy(sizes, dst, StridedRef{const_cast<char*>(host), src.dtype, row_major});
  }
  if (dst.dtype == src.dtype && IsRowMajor(sizes, dst.strides)) {
    return to->CopyFromHost(dst.data, host, src_bytes);
  }
  TENSORD_ASSIGN_OR_RETURN(Scratch rows, Scratch::Allocate(to->allocator(), src_bytes));
  TENSORD_RETURN_IF_ERROR(to->CopyFromHost(rows.data(), host, src_bytes));
  return to->Copy(sizes, dst, StridedRef{rows.data(), src.dtype, row_major});
}

// dst[i] = convert(src[i]) over `sizes`, on whichever devices the two live.
absl::Status CopyAnywhere(IntList sizes, const StridedRef& dst, Device dst_device,
                          const StridedRef& src, Device src_device) {
  if (dst_device != src_device) {
    return CopyBetweenDevices(sizes, dst, dst_device, src, src_device);
  }
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(dst_device));
  return backend->Copy(sizes, dst, src);
}

// Plans a fresh tensor on `device` with `meta`'s layout holding src's elements, read through
// `src_strides` from `src_offset_bytes` past src.data() (negative strides walk backwards).
absl::StatusOr<PlannedOp> PlanCopyToNew(absl::string_view op, const Tensor& src,
                                        const TensorMeta& meta, int64_t src_offset_bytes,
                                        IntList src_strides, Device device) {
  TENSORD_RETURN_IF_ERROR(BackendFor(src.device()).status());
  TENSORD_ASSIGN_OR_RETURN(Tensor out, AllocateTensor(op, meta, device));
  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.reads.push_back(src.storage());
  plan.writes.push_back(out.storage());
  plan.kernel = [out, src, src_offset_bytes,
                 strides = DimVector(src_strides.begin(), src_strides.end())]() {
    return CopyAnywhere(out.sizes(), StridedRef::Of(out), out.device(),
                        StridedRef{src.data() + src_offset_bytes, src.dtype(), strides},
                        src.device());
  };
  return plan;
}

absl::StatusOr<PlannedOp> PlanCopyToNew(absl::string_view op, const Tensor& src,
                                        const TensorMeta& meta, int64_t src_offset_bytes,
                                        IntList src_strides) {
  return PlanCopyToNew(op, src, meta, src_offset_bytes, src_strides, src.device());
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

absl::StatusOr<PlannedOp> PlanTo(const Tensor& self, std::optional<DType> dtype,
                                 std::optional<Device> device) {
  const DType to_dtype = dtype.value_or(self.dtype());
  const Device to_device = device.value_or(self.device());
  if (to_dtype == self.dtype() && to_device == self.device()) return ViewPlan({self});
  return PlanCopyToNew("to", self, PreservedLayout(self.meta(), to_dtype), 0, self.strides(),
                       to_device);
}

absl::StatusOr<PlannedOp> PlanToDType(const Tensor& self, DType dtype) {
  return PlanTo(self, dtype, std::nullopt);
}

absl::StatusOr<PlannedOp> PlanCopyInto(const Tensor& self, const Tensor& src) {
  constexpr absl::string_view op = "copy_";
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  TENSORD_RETURN_IF_ERROR(BackendFor(src.device()).status());
  TENSORD_ASSIGN_OR_RETURN(DimVector shape, BroadcastShapes(op, self.sizes(), src.sizes()));
  if (!std::equal(shape.begin(), shape.end(), self.sizes().begin(), self.sizes().end())) {
    return RuntimeError(op, absl::StrCat("output with shape ", FormatList(self.sizes()),
                                         " doesn't match the broadcast shape ",
                                         FormatList(shape)));
  }
  TENSORD_RETURN_IF_ERROR(CheckNoInternalOverlap(op, self));
  TENSORD_RETURN_IF_ERROR(CheckNoOverlap(op, self, src, /*full_ok=*/true));
  const Overlap overlap = GetOverlap(self, src);
  if (self.numel() == 0 || (overlap == Overlap::kFull && self.dtype() == src.dtype())) {
    return ViewPlan({self});  // nothing to move
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor expanded, Expand(src, self.sizes()));
  // Overlap PyTorch cannot classify: stage the source first, so the result never depends on the
  // order elements are visited in.
  const bool stage = overlap != Overlap::kFull && ExtentsIntersect(self, expanded);
  if (self.device() != src.device()) {  // different memories: no overlap to fear
    PlannedOp plan = InPlacePlan(self, [self, expanded]() {
      return CopyBetweenDevices(self.sizes(), StridedRef::Of(self), self.device(),
                                StridedRef::Of(expanded), expanded.device());
    });
    plan.reads.push_back(src.storage());
    return plan;
  }
  PlannedOp plan = InPlacePlan(self, [backend, self, expanded, stage]() -> absl::Status {
    if (!stage) {
      return backend->Copy(self.sizes(), StridedRef::Of(self), StridedRef::Of(expanded));
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor staged, RunNowSingle(PlanCloneContiguous(expanded)));
    return backend->Copy(self.sizes(), StridedRef::Of(self), StridedRef::Of(staged));
  });
  plan.reads.push_back(src.storage());
  return plan;
}

absl::StatusOr<PlannedOp> PlanFill(const Tensor& self, const Scalar& value) {
  TENSORD_RETURN_IF_ERROR(CheckScalarFits("fill_", value, self.dtype()));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(self.device()));
  return InPlacePlan(self, [backend, self, value]() {
    return backend->Fill(self.sizes(), StridedRef::Of(self), value);
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
  if (out.numel() == 0) {  // nothing to copy (and the strides below could overflow)
    PlannedOp plan;
    plan.outputs.push_back(out);
    plan.writes.push_back(out.storage());
    return plan;
  }
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
    return backend->Copy(sizes, StridedRef{out.data(), out.dtype(), dst_strides},
                         StridedRef{self.data(), self.dtype(), src_strides});
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
