// The elementwise-op engine (PyTorch's TensorIterator is the model): broadcasting, type
// promotion, the output layout rule, in-place and out= checks, and inputs converted to the
// compute dtype before a kernel runs on strided operands of one shape.
#ifndef TENSORD_ENGINE_OPS_ELEMENTWISE_H_
#define TENSORD_ENGINE_OPS_ELEMENTWISE_H_

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/runtime/backend.h"
#include "engine/ops/planned_op.h"
#include "engine/core/scalar.h"
#include "engine/tensor/strided_ref.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

// Writes out[i] = f(ins[0][i], …) for every index i of `shape`. Every operand is strided over
// `shape` (0 strides on broadcast dims); the inputs have the compute dtype, out the result dtype.
// `backend` is the operands' device's.
using ElementwiseKernel =
    std::function<absl::Status(Backend& backend, IntList shape, const StridedRef& out,
                               absl::Span<const StridedRef> ins)>;

struct ElementwiseSpec {
  absl::string_view op;
  // The dtype inputs are converted to; nullopt: the inputs' result type.
  std::optional<DType> compute_dtype = std::nullopt;
  // The dtype the kernel writes; nullopt: the compute dtype.
  std::optional<DType> result_dtype = std::nullopt;
  // Where the result goes: nullptr for a new tensor; else an in-place self or an out= tensor,
  // which must have the broadcast shape and a dtype the result can be cast to.
  const Tensor* out = nullptr;
  // Inputs (by position) that keep their own dtype (where's condition); empty: none.
  std::vector<bool> keep_dtype = {};
  // A new output is contiguous whatever the inputs' layout.
  bool contiguous_output = false;
  // Only the first `layout_operands` inputs decide a new output's layout: the others are numbers
  // that torch passes to the kernel as scalars, not as TensorIterator operands (pow(t, 2),
  // clamp(t, 0, 1), lerp(a, b, 0.5)).
  size_t layout_operands = SIZE_MAX;
  // torch converts self to the compute dtype first (self.to(dtype): its layout rule), and the
  // result takes that tensor's layout (pow(t, number), clamp with number bounds).
  bool convert_self_first = false;
  // An out whose elements overlap (expanded) is accepted (torch's deprecated masked_fill_ case).
  bool allow_internal_overlap = false;
};

// TensorIterator's output strides for a new tensor of `shape` computed from `operands`
// (argument order; undefined ones skipped): the inputs' common layout (a.t() + 1 stays
// transposed), else contiguous.
DimVector ElementwiseOutputStrides(IntList shape, absl::Span<const Tensor> operands);

// torch.can_cast: no floating -> integral, no non-bool -> bool.
bool CanCast(DType from, DType to);

// The device of an op's operands (wrapped numbers aside): as TensorIterator's, the first that is
// not the CPU, else the CPU. Operands on two devices: torch's "Expected all tensors to be on the
// same device, …", naming the common device first.
absl::StatusOr<Device> CommonDevice(absl::string_view op, absl::Span<const Tensor> inputs);

// Plans an elementwise op. Errors (the op named): shapes that do not broadcast, an in-place or
// out= tensor of another shape, a result dtype it cannot take, a written tensor whose elements
// overlap each other or partially overlap an input, devices that differ.
absl::StatusOr<PlannedOp> PlanElementwise(const ElementwiseSpec& spec, std::vector<Tensor> inputs,
                                          ElementwiseKernel kernel);

// a * b with the elementwise rules (for ops built on it, as outer).
absl::StatusOr<PlannedOp> PlanMul(absl::string_view op, const Tensor& a, const Tensor& b);

// where(mask, value, self) with self's dtype: masked_fill, in place when `out` is self.
absl::StatusOr<PlannedOp> PlanMaskedFill(absl::string_view op, const Tensor& self,
                                         const Tensor& mask, const Tensor& value,
                                         const Tensor* out);

// A 0-d CPU tensor holding `value` (bool, int64 or float64), marked as a wrapped number.
absl::StatusOr<Tensor> WrapNumber(const Scalar& value);

// A 0-d tensor's element as a Scalar (synchronous; for wrapped numbers and plan-time values).
Scalar ScalarOf(const Tensor& t);

// torch converts a Python number that a kernel takes as an argument (a fill value, a bound,
// alpha, an exponent) to the kernel's dtype with an overflow check: a wrapped number `t` that
// does not fit `dtype` is that error (CheckScalarFits); anything else passes.
absl::Status CheckNumberFits(absl::string_view op, const Tensor& t, DType dtype);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_ELEMENTWISE_H_
