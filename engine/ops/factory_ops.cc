#include "engine/ops/factory_ops.h"

#include <cmath>
#include <limits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/runtime/backend.h"
#include "engine/core/checked_math.h"
#include "engine/core/errors.h"
#include "engine/tensor/shape_util.h"
#include "engine/core/status_macros.h"

namespace tensord::engine {
namespace {

// A plan whose kernel writes its single output.
PlannedOp OutputPlan(Tensor out, absl::AnyInvocable<absl::Status()> kernel) {
  PlannedOp plan;
  plan.writes.push_back(out.storage());
  plan.outputs.push_back(std::move(out));
  plan.kernel = std::move(kernel);
  return plan;
}

}  // namespace

absl::StatusOr<Tensor> AllocateTensor(absl::string_view op, const TensorMeta& meta,
                                      Device device) {
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  TENSORD_ASSIGN_OR_RETURN(int64_t nbytes, RequiredStorageBytes(op, meta));
  TENSORD_RETURN_IF_ERROR(ValidateMeta(op, meta, nbytes));
  absl::StatusOr<std::shared_ptr<Storage>> storage =
      Storage::Create(backend->allocator(), nbytes, CurrentMemoryBudget(device));
  if (!storage.ok()) {
    // Out of memory (a budget or the device) is RESOURCE_EXHAUSTED; a device that failed
    // otherwise (a lost CUDA context) keeps its own code.
    if (absl::IsResourceExhausted(storage.status())) {
      return ResourceError(op, storage.status().message());
    }
    return WithPayloadsOf(storage.status(),
                          absl::Status(storage.status().code(),
                                       absl::StrCat(op, ": ", storage.status().message())));
  }
  return Tensor(*std::move(storage), meta);
}

namespace {

absl::StatusOr<PlannedOp> PlanZeroedTensor(absl::string_view op, IntList sizes, IntList strides,
                                           DType dtype, Device device) {
  if (sizes.size() != strides.size()) {
    return RuntimeError(op, absl::StrCat("mismatch in length of strides and shape: sizes ",
                                         FormatList(sizes), ", strides ", FormatList(strides)));
  }
  TENSORD_RETURN_IF_ERROR(CheckShape(op, sizes).status());
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta(dtype, sizes, strides, 0), device));
  std::shared_ptr<Storage> storage = out.storage();
  return OutputPlan(std::move(out), [backend, storage]() {
    // Zero the whole storage, the gaps between strided elements included.
    const int64_t n = storage->nbytes();
    const int64_t one = 1;
    return backend->Fill(
        IntList(&n, 1),
        StridedRef{static_cast<char*>(storage->data()), DType::kUInt8, IntList(&one, 1)},
        Scalar(int64_t{0}));
  });
}

}  // namespace

absl::StatusOr<PlannedOp> PlanEmptyStrided(IntList sizes, IntList strides, DType dtype,
                                           Device device) {
  return PlanZeroedTensor("empty_strided", sizes, strides, dtype, device);
}

absl::StatusOr<PlannedOp> PlanEmptyLike(const Tensor& self) {
  const TensorMeta& m = self.meta();
  if (m.is_non_overlapping_and_dense()) {
    return PlanEmptyStrided(m.sizes(), m.strides(), m.dtype(), self.device());
  }
  DimVector strides = InferDenseStrides(m.sizes(), m.strides());
  return PlanEmptyStrided(m.sizes(), strides, m.dtype(), self.device());
}

absl::StatusOr<PlannedOp> PlanFull(IntList sizes, const Scalar& value, std::optional<DType> dtype,
                                   Device device) {
  constexpr absl::string_view op = "full";
  TENSORD_RETURN_IF_ERROR(CheckShape(op, sizes).status());
  const DType dt = dtype.value_or(value.DefaultDType());
  TENSORD_RETURN_IF_ERROR(CheckScalarFits(op, value, dt));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta::Contiguous(dt, sizes), device));
  return OutputPlan(out, [backend, out, value]() {
    return backend->Fill(out.sizes(), StridedRef::Of(out), value);
  });
}

absl::StatusOr<PlannedOp> PlanArange(const Scalar& start, const Scalar& end, const Scalar& step,
                                     std::optional<DType> dtype, Device device) {
  constexpr absl::string_view op = "arange";
  const bool any_float = start.is_float() || end.is_float() || step.is_float();
  const DType dt = dtype.value_or(any_float ? DefaultFloatDType() : DType::kInt64);
  if (dt == DType::kBool) return RuntimeError(op, "\"arange_cpu\" not implemented for 'Bool'");
  int64_t size;
  Scalar first = start, delta = step;
  if (IsFloating(dt)) {
    const double xstart = start.to_double(), xend = end.to_double(), xstep = step.to_double();
    if (!(xstep > 0 || xstep < 0)) return RuntimeError(op, "step must be nonzero");
    if (!std::isfinite(xstart) || !std::isfinite(xend)) {
      return RuntimeError(op, absl::StrCat("unsupported range: ", start.ToString(), " -> ",
                                           end.ToString()));
    }
    if (!((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart))) {
      return RuntimeError(op, "upper bound and larger bound inconsistent with step sign");
    }
    const double size_d = std::ceil((xend - xstart) / xstep);
    if (!(size_d >= 0 && size_d < 9.2233720368547758e18)) {  // 2^63 does not fit
      return RuntimeError(op, "invalid size, possible overflow?");
    }
    size = static_cast<int64_t>(size_d);
    first = Scalar(xstart);
    delta = Scalar(xstep);
  } else {
    // Integral dtypes compute in int64 (floats truncate toward zero, as Scalar::to<int64_t>).
    for (const Scalar* s : {&start, &end, &step}) {
      TENSORD_RETURN_IF_ERROR(CheckScalarFits(op, *s, DType::kInt64));
    }
    const int64_t xstart = start.to_int(), xend = end.to_int(), xstep = step.to_int();
    if (xstep == 0) return RuntimeError(op, "step must be nonzero");
    if (!((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart))) {
      return RuntimeError(op, "upper bound and larger bound inconsistent with step sign");
    }
    if (dt == DType::kInt64) {
      const int64_t sgn = xstep > 0 ? 1 : -1;
      auto span = CheckedSub(xend, xstart);
      if (span) span = CheckedAdd(*span, xstep - sgn);
      // 2^63 elements (span INT64_MIN, step -1) do not fit either: the quotient overflows.
      if (!span || (*span == std::numeric_limits<int64_t>::min() && xstep == -1)) {
        return RuntimeError(op, "invalid size, possible overflow?");
      }
      size = *span / xstep;  // an exact ceil: span already includes step - sign
    } else {
      const double size_d = std::ceil((end.to_double() - start.to_double()) / step.to_double());
      if (!(size_d >= 0 && size_d < 9.2233720368547758e18)) {  // 2^63 does not fit
        return RuntimeError(op, "invalid size, possible overflow?");
      }
      size = static_cast<int64_t>(size_d);
    }
    first = Scalar(xstart);
    delta = Scalar(xstep);
  }
  const int64_t sizes[1] = {size};
  TENSORD_RETURN_IF_ERROR(CheckShape(op, sizes).status());
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta::Contiguous(dt, sizes), device));
  return OutputPlan(out, [backend, out, first, delta]() {
    return backend->Arange(out.data(), out.dtype(), out.numel(), first, delta);
  });
}

absl::StatusOr<PlannedOp> PlanEmpty(IntList sizes, DType dtype, Device device) {
  TENSORD_RETURN_IF_ERROR(CheckShape("empty", sizes).status());
  DimVector strides = ContiguousStrides(sizes);
  return PlanZeroedTensor("empty", sizes, strides, dtype, device);
}

absl::StatusOr<Tensor> Empty(IntList sizes, DType dtype, Device device) {
  return RunNowSingle(PlanEmpty(sizes, dtype, device));
}
absl::StatusOr<Tensor> EmptyStrided(IntList sizes, IntList strides, DType dtype, Device device) {
  return RunNowSingle(PlanEmptyStrided(sizes, strides, dtype, device));
}
absl::StatusOr<Tensor> EmptyLike(const Tensor& self) { return RunNowSingle(PlanEmptyLike(self)); }
absl::StatusOr<Tensor> Zeros(IntList sizes, DType dtype, Device device) {
  return RunNowSingle(PlanFull(sizes, Scalar(int64_t{0}), dtype, device));
}
absl::StatusOr<Tensor> Ones(IntList sizes, DType dtype, Device device) {
  return RunNowSingle(PlanFull(sizes, Scalar(int64_t{1}), dtype, device));
}
absl::StatusOr<Tensor> Full(IntList sizes, const Scalar& value, std::optional<DType> dtype,
                            Device device) {
  return RunNowSingle(PlanFull(sizes, value, dtype, device));
}
absl::StatusOr<Tensor> Arange(const Scalar& start, const Scalar& end, const Scalar& step,
                              std::optional<DType> dtype, Device device) {
  return RunNowSingle(PlanArange(start, end, step, dtype, device));
}

absl::StatusOr<Tensor> FromBytes(IntList sizes, DType dtype, absl::string_view bytes) {
  constexpr absl::string_view op = "from_bytes";
  TENSORD_ASSIGN_OR_RETURN(int64_t numel, CheckShape(op, sizes));
  auto expected = CheckedMul(numel, ItemSize(dtype));
  if (!expected || *expected != static_cast<int64_t>(bytes.size())) {
    return RuntimeError(op, absl::StrCat("a ", DTypeName(dtype), " tensor of size ",
                                         FormatList(sizes), " needs ",
                                         expected ? absl::StrCat(*expected) : "too many",
                                         " bytes, but ", bytes.size(), " were given"));
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor out, AllocateTensor(op, TensorMeta::Contiguous(dtype, sizes)));
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace tensord::engine
