#include "engine/ops/elementwise.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "engine/core/checked_math.h"
#include "engine/ops/copy_ops.h"
#include "engine/core/errors.h"
#include "engine/kernels/convert.h"
#include "engine/ops/factory_ops.h"
#include "engine/tensor/memory_format.h"
#include "engine/tensor/overlap.h"
#include "engine/tensor/shape_util.h"
#include "engine/core/status_macros.h"
#include "engine/ops/type_promotion.h"

namespace tensord::engine {
namespace {

// Operand strides over `shape` in elements, 0 where the operand is broadcast.
DimVector BroadcastStrides(const Tensor& t, IntList shape) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  const int64_t off = nd - t.dim();
  DimVector st(nd, 0);
  for (int64_t d = 0; d < t.dim(); ++d) {
    st[off + d] = (t.size(d) == 1 && shape[off + d] != 1) ? 0 : t.stride(d);
  }
  return st;
}

bool SameShape(absl::Span<const Tensor> ts) {
  const Tensor* first = nullptr;
  for (const Tensor& t : ts) {
    if (!t.defined()) continue;
    if (first == nullptr) {
      first = &t;
    } else if (!std::equal(t.sizes().begin(), t.sizes().end(), first->sizes().begin(),
                           first->sizes().end())) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool CanCast(DType from, DType to) {
  if (IsFloating(from) && IsIntegral(to, /*include_bool=*/true)) return false;
  if (from != DType::kBool && to == DType::kBool) return false;
  return true;
}

namespace {

// torch's channels-last order of a 4-d (NCHW) tensor, from the innermost dim (C) out.
// TensorIterator's fast path knows channels_last only, not channels_last_3d.
constexpr int64_t kChannelsLast[] = {1, 3, 2, 0};

// torch's is_contiguous(memory_format=torch.channels_last): size-1 dims are ignored.
bool IsChannelsLastContiguous(const Tensor& t) {
  if (t.dim() != 4) return false;
  int64_t expected = 1;
  for (int64_t d : kChannelsLast) {
    if (t.size(d) == 1) continue;
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

}  // namespace

DimVector ElementwiseOutputStrides(IntList shape, absl::Span<const Tensor> operands) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  // Fast paths (TensorIterator's fast_set_up), when every operand has the result's shape: all
  // contiguous; else all channels-last contiguous (4-d); else all non-overlapping and
  // dense with the same strides.
  if (SameShape(operands)) {
    bool all_contiguous = true, all_channels_last = nd == 4, all_dense_same = true;
    const Tensor* first = nullptr;
    for (const Tensor& t : operands) {
      if (!t.defined()) continue;
      all_contiguous &= t.is_contiguous();
      all_channels_last = all_channels_last && IsChannelsLastContiguous(t);
      if (first == nullptr) {
        first = &t;
        all_dense_same &= t.meta().is_non_overlapping_and_dense();
      } else {
        all_dense_same &= t.meta().is_non_overlapping_and_dense() &&
                          std::equal(t.strides().begin(), t.strides().end(),
                                     first->strides().begin(), first->strides().end());
      }
    }
    if (first == nullptr || all_contiguous) return ContiguousStrides(shape);
    if (all_channels_last) return MemoryFormatStrides(shape, MemoryFormat::kChannelsLast);
    if (all_dense_same) return DimVector(first->strides().begin(), first->strides().end());
  }
  // Reorder dims by the operands' strides (TensorIterator::reorder_dimensions).
  std::vector<DimVector> strides;
  for (const Tensor& t : operands) {
    if (!t.defined()) continue;
    DimVector st = BroadcastStrides(t, shape);
    // In bytes, as torch orders them; a stride too large for bytes (a size-1 dim may have any
    // stride) saturates: only the order matters.
    for (int64_t& s : st) {
      s = CheckedMul(s, t.itemsize()).value_or(std::numeric_limits<int64_t>::max());
    }
    strides.push_back(std::move(st));
  }
  const DimVector perm = StrideOrder(shape, strides);
  bool identity = true;
  for (int64_t i = 0; i < nd; ++i) identity &= perm[i] == nd - 1 - i;
  if (identity) return ContiguousStrides(shape);
  DimVector out(nd);
  int64_t s = 1;
  for (int64_t d : perm) {
    out[d] = s;
    s *= shape[d];
  }
  return out;
}

absl::StatusOr<Tensor> WrapNumber(const Scalar& value) {
  const DType dtype = WrappedNumberDType(value);
  TENSORD_ASSIGN_OR_RETURN(Tensor t, AllocateTensor("wrap", TensorMeta::Contiguous(dtype, {})));
  switch (dtype) {
    case DType::kBool: *t.data_as<bool>() = value.to_bool(); break;
    case DType::kInt64: *t.data_as<int64_t>() = value.to_int(); break;
    default: *t.data_as<double>() = value.to_double(); break;
  }
  t.set_wrapped_number(true);
  return t;
}

absl::Status CheckNumberFits(absl::string_view op, const Tensor& t, DType dtype) {
  if (!t.defined() || !t.is_wrapped_number()) return absl::OkStatus();
  return CheckScalarFits(op, ScalarOf(t), dtype);
}

Scalar ScalarOf(const Tensor& t) {
  switch (t.dtype()) {
    case DType::kBool: return Scalar(LoadElement(t.data_as<bool>()));
    case DType::kUInt8: return Scalar(int64_t{*t.data_as<uint8_t>()});
    case DType::kInt8: return Scalar(int64_t{*t.data_as<int8_t>()});
    case DType::kInt16: return Scalar(int64_t{*t.data_as<int16_t>()});
    case DType::kInt32: return Scalar(int64_t{*t.data_as<int32_t>()});
    case DType::kInt64: return Scalar(*t.data_as<int64_t>());
    case DType::kFloat16: return Scalar(double{static_cast<float>(*t.data_as<Half>())});
    case DType::kBFloat16: return Scalar(double{static_cast<float>(*t.data_as<BFloat16>())});
    case DType::kFloat32: return Scalar(double{*t.data_as<float>()});
    case DType::kFloat64: break;
  }
  return Scalar(*t.data_as<double>());
}

absl::StatusOr<Device> CommonDevice(absl::string_view op, absl::Span<const Tensor> inputs) {
  Device device = kCpu;
  for (const Tensor& t : inputs) {
    if (!t.is_wrapped_number() && device.is_cpu()) device = t.device();
  }
  for (const Tensor& t : inputs) {
    if (t.is_wrapped_number() || t.device() == device) continue;
    return RuntimeError(op, absl::StrCat("Expected all tensors to be on the same device, but "
                                         "found at least two devices, ",
                                         device.ToString(), " and ", t.device().ToString(), "!"));
  }
  return device;
}

absl::StatusOr<PlannedOp> PlanElementwise(const ElementwiseSpec& spec, std::vector<Tensor> inputs,
                                          ElementwiseKernel kernel) {
  const absl::string_view op = spec.op;
  const Tensor* out_arg = spec.out;
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, inputs));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  // Shape.
  DimVector shape;
  for (const Tensor& t : inputs) {
    TENSORD_ASSIGN_OR_RETURN(shape, BroadcastShapes(op, shape, t.sizes()));
  }
  // Dtypes.
  const DType compute = spec.compute_dtype.value_or(ResultType(inputs));
  const DType result = spec.result_dtype.value_or(compute);

  Tensor out;
  if (out_arg != nullptr) {
    if (out_arg->device() != device) {
      return RuntimeError(op, absl::StrCat("Expected out tensor to have device ",
                                           device.ToString(), ", but got ",
                                           out_arg->device().ToString(), " instead"));
    }
    out = *out_arg;
    if (!std::equal(shape.begin(), shape.end(), out.sizes().begin(), out.sizes().end())) {
      return RuntimeError(op, absl::StrCat("output with shape ", FormatList(out.sizes()),
                                           " doesn't match the broadcast shape ",
                                           FormatList(shape)));
    }
    if (!CanCast(result, out.dtype())) {
      return RuntimeError(op, absl::StrCat("result type ", DTypeLegacyName(result),
                                           " can't be cast to the desired output type ",
                                           DTypeLegacyName(out.dtype())));
    }
    if (!spec.allow_internal_overlap) TENSORD_RETURN_IF_ERROR(CheckNoInternalOverlap(op, out));
    for (const Tensor& t : inputs) {
      TENSORD_RETURN_IF_ERROR(CheckNoOverlap(op, out, t, /*full_ok=*/true));
    }
  } else {
    TENSORD_RETURN_IF_ERROR(CheckShape(op, shape).status());
    // The operands torch's TensorIterator sees: the first `layout_operands` inputs, self
    // already converted to the compute dtype where torch converts it first.
    std::vector<Tensor> layout(inputs.begin(),
                               inputs.begin() + std::min<size_t>(spec.layout_operands,
                                                                 inputs.size()));
    if (spec.convert_self_first && !layout.empty() && layout[0].dtype() != compute) {
      layout[0] = layout[0].WithMeta(PreservedLayout(layout[0].meta(), compute));
    }
    const DimVector strides = spec.contiguous_output ? ContiguousStrides(shape)
                                                     : ElementwiseOutputStrides(shape, layout);
    TENSORD_ASSIGN_OR_RETURN(out,
                             AllocateTensor(op, TensorMeta(result, shape, strides, 0), device));
  }

  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.writes.push_back(out.storage());
  if (out.numel() == 0) return plan;  // nothing to compute (the output exists)

  // Inputs in the compute dtype: wrapped numbers are converted now (on another device than the
  // CPU, the kernel writes them into device memory first); tensors get a buffer that the kernel
  // fills first.
  std::vector<Tensor> converted(inputs.size());
  std::vector<std::optional<Scalar>> number_fills(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!device.is_cpu() && t.is_wrapped_number()) {
      const DType dtype =
          i < spec.keep_dtype.size() && spec.keep_dtype[i] ? t.dtype() : compute;
      TENSORD_ASSIGN_OR_RETURN(converted[i],
                               AllocateTensor(op, TensorMeta::Contiguous(dtype, {}), device));
      number_fills[i] = ScalarOf(t);
      continue;
    }
    if (t.dtype() == compute || (i < spec.keep_dtype.size() && spec.keep_dtype[i])) continue;
    TENSORD_ASSIGN_OR_RETURN(
        converted[i], AllocateTensor(op, TensorMeta::Contiguous(compute, t.sizes()), device));
    if (t.is_wrapped_number()) {
      // A wrapped number lives in host memory: converted here, at plan time, without a kernel.
      const uint64_t bits = FillPattern(compute, ScalarOf(t));
      std::memcpy(converted[i].data(), &bits, static_cast<size_t>(converted[i].itemsize()));
      converted[i].set_wrapped_number(true);
      inputs[i] = converted[i];
      converted[i] = Tensor();
    }
  }
  // A result of another dtype than `out`'s, or an out that may alias an input in a way the
  // kernel cannot handle element by element, goes through a staging buffer.
  Tensor staging;
  bool needs_staging = result != out.dtype();
  if (out_arg != nullptr && !needs_staging) {
    for (const Tensor& t : inputs) {
      const Overlap o = GetOverlap(out, t);
      if (o == Overlap::kTooHard && ExtentsIntersect(out, t)) needs_staging = true;
    }
  }
  if (needs_staging) {
    TENSORD_ASSIGN_OR_RETURN(staging,
                             AllocateTensor(op, TensorMeta::Contiguous(result, shape), device));
  }
  std::vector<DimVector> in_strides;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // Wrapped numbers are private to this op and never written: nothing to order them by.
    if (!inputs[i].is_wrapped_number()) plan.reads.push_back(inputs[i].storage());
    const Tensor& t = converted[i].defined() ? converted[i] : inputs[i];
    in_strides.push_back(BroadcastStrides(t, shape));
  }
  plan.kernel = [backend, shape, inputs = std::move(inputs), converted = std::move(converted),
                 number_fills = std::move(number_fills), in_strides = std::move(in_strides), out,
                 staging, kernel = std::move(kernel)]() -> absl::Status {
    std::vector<StridedRef> refs;
    refs.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor* t = &inputs[i];
      if (number_fills[i]) {
        TENSORD_RETURN_IF_ERROR(backend->Fill({}, StridedRef::Of(converted[i]), *number_fills[i]));
        t = &converted[i];
      } else if (converted[i].defined()) {
        TENSORD_RETURN_IF_ERROR(backend->Copy(inputs[i].sizes(), StridedRef::Of(converted[i]),
                                              StridedRef::Of(inputs[i])));
        t = &converted[i];
      }
      refs.push_back(StridedRef{t->data(), t->dtype(), in_strides[i]});
    }
    if (!staging.defined()) return kernel(*backend, shape, StridedRef::Of(out), refs);
    TENSORD_RETURN_IF_ERROR(kernel(*backend, shape, StridedRef::Of(staging), refs));
    return backend->Copy(shape, StridedRef::Of(out), StridedRef::Of(staging));
  };
  return plan;
}

}  // namespace tensord::engine
