// Losses. Classification: cross_entropy (class indices or class probabilities, weights,
// ignore_index, label_smoothing) and nll_loss, each one kernel per device
// (Backend::CrossEntropy) that reads each position's class scores once: log_softmax's max and
// sum, the target's log-probability, the smoothing sum, and the reduction, without the
// log-probabilities ever being written. Shapes, dtypes and errors are torch's (nll_loss_nd's
// rules: (C), (N, C) and (N, C, d1, ...) inputs). Pointwise: mse_loss, l1_loss,
// smooth_l1_loss, huber_loss, soft_margin_loss, binary_cross_entropy(_with_logits) and kl_div,
// each element's loss then the reduction. Sequences: ctc_loss, a kernel per device
// (engine/kernels/ctc.h) for each element's negative log-likelihood, then torch's reduction.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/ops/type_promotion.h"
#include "engine/runtime/backend.h"
#include "engine/tensor/shape_util.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

absl::StatusOr<LossReduction> ParseReduction(absl::string_view op, absl::string_view name) {
  if (name == "none") return LossReduction::kNone;
  if (name == "mean") return LossReduction::kMean;
  if (name == "sum") return LossReduction::kSum;
  return ValueError(op, absl::StrCat(name, " is not a valid value for reduction"));
}


struct LossArgs {
  LossReduction reduction = LossReduction::kMean;
  int64_t ignore_index = -100;
  double label_smoothing = 0;
};

// The kernel's step: `x` (and `probs`) contiguous (outer, classes, inner) of x's dtype, `target`
// contiguous int64 positions or undefined, `weight` contiguous or undefined; `out_sizes` the
// result's sizes with reduction none.
PlannedOp LossStep(bool log_probs, const Tensor& x, const Tensor& target, const Tensor& probs,
                   const Tensor& weight, const Tensor& out, Backend* backend, int64_t outer,
                   int64_t classes, int64_t inner, const LossArgs& args) {
  PlannedOp step;
  step.outputs = {out};
  for (const Tensor& t : {x, target, probs, weight}) {
    if (t.defined()) step.reads.push_back(t.storage());
  }
  step.writes = {out.storage()};
  step.kernel = [=]() -> absl::Status {
    CrossEntropyCall call;
    call.input = x.data();
    call.target = target.defined() ? reinterpret_cast<const int64_t*>(target.data()) : nullptr;
    call.probs = probs.defined() ? probs.data() : nullptr;
    call.has_probs = probs.defined();
    call.weight = weight.defined() ? weight.data() : nullptr;
    call.out = out.data();
    call.dtype = x.dtype();
    call.outer = outer;
    call.classes = classes;
    call.inner = inner;
    call.log_probs = log_probs;
    call.reduction = args.reduction;
    call.ignore_index = args.ignore_index;
    call.label_smoothing = args.label_smoothing;
    return backend->CrossEntropy(call);
  };
  return step;
}

// nll_loss_nd's checks and geometry for class-index targets; `log_probs` false plans
// cross_entropy (log_softmax first), true nll_loss.
absl::StatusOr<PlannedOp> PlanIndexLoss(absl::string_view op, bool log_probs, const Tensor& input,
                                        const Tensor& target, const Tensor& weight,
                                        const LossArgs& args) {
  const int64_t nd = input.dim();
  if (!log_probs) {  // log_softmax over the class dim runs first in torch
    TENSORD_RETURN_IF_ERROR(CheckFloatingKernel(
        op, nd <= 2 ? "log_softmax_lastdim_kernel_impl" : "softmax_kernel_impl", input.dtype(),
        input.device()));
  }
  if (nd < 1) return ValueError(op, absl::StrCat("Expected 1 or more dimensions (got ", nd, ")"));
  // torch reads a 0-d target's batch size as 0, and fails on it as an index when that matches.
  const int64_t target_batch = target.dim() == 0 ? 0 : target.size(0);
  if (nd != 1 && target.dim() == 0 && input.size(0) == 0) {
    return IndexError(op, "Dimension specified as 0 but tensor has no dimensions");
  }
  if (nd != 1 && input.size(0) != target_batch) {
    return ValueError(op, absl::StrCat("Expected input batch_size (", input.size(0),
                                       ") to match target batch_size (", target_batch, ")."));
  }
  const int64_t classes = input.size(nd == 1 ? 0 : 1);
  DimVector out_sizes;  // reduction none
  if (nd <= 2) {
    if (target.dim() > 1) {
      return RuntimeError(op, "0D or 1D target tensor expected, multi-target not supported");
    }
    if (!(nd == 1 && target.dim() == 0) && input.size(0) != target.size(0)) {
      return RuntimeError(op, absl::StrCat("size mismatch (got input: ", FormatList(input.sizes()),
                                           ", target: ", FormatList(target.sizes()), ")"));
    }
    if (weight.defined() && (weight.dim() != 1 || weight.numel() != classes)) {
      return RuntimeError(op, absl::StrCat("weight tensor should be defined either for all ",
                                           classes, " classes or no classes but got weight "
                                           "tensor of shape: ", FormatList(weight.sizes())));
    }
    if (nd == 2) out_sizes = {input.size(0)};
  } else {
    out_sizes.assign(input.sizes().begin(), input.sizes().end());
    out_sizes.erase(out_sizes.begin() + 1);
    if (nd == 4) {
      if (target.dim() != 3) {
        return RuntimeError(op, absl::StrCat("only batches of spatial targets supported (3D "
                                             "tensors) but got targets of dimension: ",
                                             target.dim()));
      }
    } else if (!std::equal(target.sizes().begin() + 1, target.sizes().end(),
                           input.sizes().begin() + 2, input.sizes().end())) {
      return RuntimeError(op, absl::StrCat("Expected target size ", FormatList(out_sizes),
                                           ", got ", FormatList(target.sizes())));
    }
    if (weight.defined() && weight.numel() != classes) {
      return RuntimeError(op, "weight tensor should be defined either for all or no classes");
    }
    if (nd == 4 && !std::equal(target.sizes().begin(), target.sizes().end(),
                               out_sizes.begin(), out_sizes.end())) {
      return RuntimeError(op, absl::StrCat("size mismatch (got input: ", FormatList(input.sizes()),
                                           " , target: ", FormatList(target.sizes())));
    }
  }
  if (log_probs) {
    TENSORD_RETURN_IF_ERROR(CheckFloatingKernel(
        op, nd <= 2 ? "nll_loss_out_frame" : "nll_loss2d_forward_out_frame", input.dtype(),
        input.device()));
  }
  const DType dtype = input.dtype();
  if (target.dtype() != DType::kInt64) {
    return RuntimeError(op, absl::StrCat("expected scalar type Long but found ",
                                         DTypeLegacyName(target.dtype())));
  }
  if (weight.defined() && weight.dtype() != dtype) {
    return RuntimeError(op, absl::StrCat("expected scalar type ", DTypeLegacyName(dtype),
                                         " but found ", DTypeLegacyName(weight.dtype())));
  }
  std::vector<Tensor> operands = {input, target};
  if (weight.defined()) operands.push_back(weight);
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, operands));
  LossArgs kernel_args = args;
  if (log_probs || kernel_args.label_smoothing < 0) kernel_args.label_smoothing = 0;
  const int64_t outer = nd == 1 ? 1 : input.size(0);
  int64_t inner = 1;
  for (int64_t d = 2; d < nd; ++d) inner *= input.size(d);  // input's sizes: no overflow
  Composition c(operands);
  TENSORD_ASSIGN_OR_RETURN(Tensor x, c.ToDType(input, dtype));
  TENSORD_ASSIGN_OR_RETURN(x, c.Contiguous(x));
  TENSORD_ASSIGN_OR_RETURN(Tensor t, c.ToDType(target, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(t, c.Contiguous(t));
  TENSORD_ASSIGN_OR_RETURN(Tensor w, c.ToDType(weight, dtype));
  TENSORD_ASSIGN_OR_RETURN(w, c.Contiguous(w));
  const DimVector sizes = args.reduction == LossReduction::kNone ? out_sizes : DimVector{};
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta::Contiguous(dtype, sizes), device));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  c.Add(LossStep(log_probs, x, t, Tensor(), w, out, backend, outer, classes, inner, kernel_args));
  return std::move(c).Finish({out});
}

// cross_entropy with class probabilities (target of input's shape): in torch's promoted dtype.
absl::StatusOr<PlannedOp> PlanProbabilityLoss(absl::string_view op, const Tensor& input,
                                              const Tensor& target, const Tensor& weight,
                                              const LossArgs& args) {
  if (!IsFloating(target.dtype())) {
    return RuntimeError(op, absl::StrCat("Expected floating point type for target with class "
                                         "probabilities, got ", DTypeLegacyName(target.dtype())));
  }
  if (args.ignore_index >= 0) {
    return RuntimeError(op, "ignore_index is not supported for floating point target");
  }
  if (args.label_smoothing > 1) {
    return RuntimeError(op, absl::StrCat("label_smoothing must be between 0.0 and 1.0. Got: ",
                                         args.label_smoothing));
  }
  const int64_t nd = input.dim();
  if (nd == 0) {
    return IndexError(op, "Dimension specified as 1 but tensor has no dimensions");
  }
  TENSORD_RETURN_IF_ERROR(CheckFloatingKernel(
      op, nd <= 2 ? "log_softmax_lastdim_kernel_impl" : "softmax_kernel_impl", input.dtype(),
      input.device()));
  const int64_t classes = input.size(nd == 1 ? 0 : 1);
  if (weight.defined() && (weight.dim() != 1 || weight.numel() != classes)) {
    return RuntimeError(op, absl::StrCat("weight tensor should be defined either for all ",
                                         classes, " classes or no classes but got weight "
                                         "tensor of shape: ", FormatList(weight.sizes())));
  }
  std::vector<Tensor> operands = {input, target};
  if (weight.defined()) operands.push_back(weight);
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, operands));
  const DType dtype = ResultType(operands);
  TENSORD_RETURN_IF_ERROR(CheckFloatingKernel(op, "log_softmax_lastdim_kernel_impl", dtype, device));
  DimVector out_sizes;
  if (nd >= 2) {
    out_sizes.assign(input.sizes().begin(), input.sizes().end());
    out_sizes.erase(out_sizes.begin() + 1);
  }
  const int64_t outer = nd == 1 ? 1 : input.size(0);
  int64_t inner = 1;
  for (int64_t d = 2; d < nd; ++d) inner *= input.size(d);
  Composition c(operands);
  TENSORD_ASSIGN_OR_RETURN(Tensor x, c.ToDType(input, dtype));
  TENSORD_ASSIGN_OR_RETURN(x, c.Contiguous(x));
  TENSORD_ASSIGN_OR_RETURN(Tensor p, c.ToDType(target, dtype));
  TENSORD_ASSIGN_OR_RETURN(p, c.Contiguous(p));
  TENSORD_ASSIGN_OR_RETURN(Tensor w, c.ToDType(weight, dtype));
  TENSORD_ASSIGN_OR_RETURN(w, c.Contiguous(w));
  LossArgs kernel_args = args;
  if (kernel_args.label_smoothing < 0) kernel_args.label_smoothing = 0;
  const DimVector sizes = args.reduction == LossReduction::kNone ? out_sizes : DimVector{};
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta::Contiguous(dtype, sizes), device));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  c.Add(LossStep(false, x, Tensor(), p, w, out, backend, outer, classes, inner, kernel_args));
  return std::move(c).Finish({out});
}

absl::StatusOr<PlannedOp> PlanCrossEntropy(const Tensor& input, const Tensor& target,
                                           const Tensor& weight, const LossArgs& args) {
  constexpr absl::string_view op = "cross_entropy";
  if (std::equal(input.sizes().begin(), input.sizes().end(), target.sizes().begin(),
                 target.sizes().end())) {
    return PlanProbabilityLoss(op, input, target, weight, args);
  }
  if (args.label_smoothing > 1) {
    return RuntimeError(op, absl::StrCat("label_smoothing must be between 0.0 and 1.0. Got: ",
                                         args.label_smoothing));
  }
  return PlanIndexLoss(op, false, input, target, weight, args);
}

// ---- Pointwise losses: each element's loss from input and target, then the reduction. As
// ATen: mse, smooth_l1, huber and binary_cross_entropy have a kernel of their own (one
// functor, engine/kernels/binary_ops.h); l1_loss, soft_margin_loss,
// binary_cross_entropy_with_logits and kl_div are compositions of elementwise ops, step for
// step ATen's, so that their dtype rules and errors are torch's.

absl::StatusOr<Tensor> Reduced(Composition& c, const Tensor& loss, LossReduction reduction) {
  switch (reduction) {
    case LossReduction::kNone: return loss;
    case LossReduction::kMean: return c.Op1("mean", {loss});
    case LossReduction::kSum: return c.Op1("sum", {loss});
  }
  return loss;
}

// torch's "\"<kernel>_cpu\" not implemented for '<Dtype>'" for the pointwise loss kernels:
// floating dtypes; float16 and bfloat16 on the CPU only where torch has them.
absl::Status CheckPointwiseLossDType(absl::string_view op, absl::string_view kernel, DType dtype,
                                     const Device& device, bool half_on_cpu, bool bf16_on_cpu) {
  const bool missing =
      !IsFloating(dtype) ||
      (device.is_cpu() && ((dtype == DType::kFloat16 && !half_on_cpu) ||
                           (dtype == DType::kBFloat16 && !bf16_on_cpu)));
  if (!missing) return absl::OkStatus();
  return KernelNotImplemented(op, absl::StrCat(kernel, device.is_cpu() ? "_cpu" : "_cuda"),
                              dtype);
}

std::string TorchSize(IntList sizes) {
  return absl::StrCat("torch.Size(", FormatList(sizes), ")");
}

// `kind`'s loss of each element (binary_ops.h), in the inputs' promoted dtype; `param` is
// smooth_l1's beta or huber's delta; `check_input`, a check of input's values first.
absl::StatusOr<Tensor> PointwiseLoss(Composition& c, absl::string_view op, BinaryOp kind,
                                     const Tensor& input, const Tensor& target, DType dtype,
                                     double param,
                                     std::optional<ValueCheck> check_input = std::nullopt) {
  ElementwiseSpec spec{op};
  spec.compute_dtype = dtype;
  const std::string name(op);
  TENSORD_ASSIGN_OR_RETURN(
      PlannedOp step,
      PlanElementwise(spec, {input, target},
                      [kind, param, check_input, name](
                          Backend& backend, IntList shape, const StridedRef& out,
                          absl::Span<const StridedRef> ins) -> absl::Status {
                        if (check_input.has_value()) {
                          TENSORD_RETURN_IF_ERROR(
                              backend.CheckValues(*check_input, name, shape, ins[0]));
                        }
                        return backend.Binary(kind, shape, out, ins[0], ins[1], Scalar(param));
                      }));
  return c.Add(std::move(step)).at(0);
}

// mse_loss, smooth_l1_loss and huber_loss: input and target broadcast (F.*_loss broadcast them
// first). huber's result has input's dtype (ATen writes into empty_like(input)).
absl::StatusOr<PlannedOp> PlanRegressionLoss(absl::string_view op, const Tensor& input,
                                             const Tensor& target, LossReduction reduction,
                                             double param) {
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, {input, target}));
  TENSORD_RETURN_IF_ERROR(BroadcastShapes(op, input.sizes(), target.sizes()).status());
  const DType common = ResultType({input, target});
  BinaryOp kind = BinaryOp::kMseLoss;
  const char* kernel = "mse";
  bool bf16_on_cpu = false;
  if (op == "smooth_l1_loss") {
    if (param < 0) {
      return RuntimeError(op, "smooth_l1_loss does not support negative values for beta.");
    }
    kind = BinaryOp::kSmoothL1Loss, kernel = "smooth_l1", bf16_on_cpu = true;
  } else if (op == "huber_loss") {
    if (!(param > 0)) {
      return RuntimeError(op, "huber_loss does not support non-positive values for delta.");
    }
    kind = BinaryOp::kHuberLoss, kernel = "huber", bf16_on_cpu = true;
    if (!CanCast(common, input.dtype())) {
      return RuntimeError(op, absl::StrCat("result type ", DTypeLegacyName(common),
                                           " can't be cast to the desired output type ",
                                           DTypeLegacyName(input.dtype())));
    }
  }
  TENSORD_RETURN_IF_ERROR(CheckPointwiseLossDType(op, kernel, common, device, true, bf16_on_cpu));
  Composition c({input, target});
  TENSORD_ASSIGN_OR_RETURN(Tensor loss, PointwiseLoss(c, op, kind, input, target, common, param));
  if (kind == BinaryOp::kHuberLoss) {
    TENSORD_ASSIGN_OR_RETURN(loss, c.ToDType(loss, input.dtype()));
  }
  TENSORD_ASSIGN_OR_RETURN(loss, Reduced(c, loss, reduction));
  return std::move(c).Finish({loss});
}

// l1_loss: |input - target|, reduced (ATen's composition).
absl::StatusOr<PlannedOp> PlanL1Loss(const Tensor& input, const Tensor& target,
                                     LossReduction reduction) {
  Composition c({input, target});
  TENSORD_ASSIGN_OR_RETURN(Tensor diff, c.Op1("sub", {input, target}));
  TENSORD_ASSIGN_OR_RETURN(Tensor loss, c.Op1("abs", {diff}));
  TENSORD_ASSIGN_OR_RETURN(loss, Reduced(c, loss, reduction));
  return std::move(c).Finish({loss});
}

// soft_margin_loss: log(1 + exp(-input * target)) in input's dtype and shape (ATen computes it in
// place in a tensor like input).
absl::StatusOr<PlannedOp> PlanSoftMarginLoss(const Tensor& input, const Tensor& target,
                                             LossReduction reduction) {
  Composition c({input, target});
  TENSORD_ASSIGN_OR_RETURN(Tensor loss, c.Op1("neg", {input}));
  TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("mul_", {loss, target}));
  TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("exp_", {loss}));
  TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("log1p_", {loss}));
  TENSORD_ASSIGN_OR_RETURN(loss, Reduced(c, loss, reduction));
  return std::move(c).Finish({loss});
}

// binary_cross_entropy: probabilities `input` in [0, 1] (checked where the kernel runs: an
// input outside is the op's error, raised at the next synchronize), a target of its shape and
// dtype, and a weight multiplied in place (so that it broadcasts to input's shape).
absl::StatusOr<PlannedOp> PlanBinaryCrossEntropy(const Tensor& input, const Tensor& target,
                                                 const Tensor& weight, LossReduction reduction) {
  constexpr absl::string_view op = "binary_cross_entropy";
  if (!std::equal(input.sizes().begin(), input.sizes().end(), target.sizes().begin(),
                  target.sizes().end())) {
    return ValueError(op, absl::StrCat("Using a target size (", TorchSize(target.sizes()),
                                       ") that is different to the input size (",
                                       TorchSize(input.sizes()), ") is deprecated. Please "
                                       "ensure they have the same size."));
  }
  std::vector<Tensor> operands = {input, target};
  if (weight.defined()) {
    TENSORD_RETURN_IF_ERROR(BroadcastShapes(op, target.sizes(), weight.sizes()).status());
    operands.push_back(weight);
  }
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, operands));
  if (target.dtype() != input.dtype()) {
    return RuntimeError(op, absl::StrCat("Found dtype ", DTypeLegacyName(target.dtype()),
                                         " but expected ", DTypeLegacyName(input.dtype())));
  }
  if (!IsFloating(input.dtype()) ||
      (device.is_cpu() && (input.dtype() == DType::kFloat16 ||
                           input.dtype() == DType::kBFloat16))) {
    return KernelNotImplemented(op, "binary_cross_entropy", input.dtype());
  }
  Composition c(operands);
  TENSORD_ASSIGN_OR_RETURN(
      Tensor loss, PointwiseLoss(c, op, BinaryOp::kBinaryCrossEntropy, input, target,
                                 input.dtype(), 0, ValueCheck::kUnitInterval));
  if (weight.defined()) {
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("mul_", {loss, weight}));
  }
  TENSORD_ASSIGN_OR_RETURN(loss, Reduced(c, loss, reduction));
  return std::move(c).Finish({loss});
}

// binary_cross_entropy_with_logits, ATen's stable form step for step:
//   m = max(-x, 0); loss = (1 - t) x + lw (log(exp(-m) + exp(-x - m)) + m)
// with lw = 1 + (pos_weight - 1) t (1 without pos_weight), times weight.
absl::StatusOr<PlannedOp> PlanBinaryCrossEntropyWithLogits(const Tensor& input,
                                                           const Tensor& target,
                                                           const Tensor& weight,
                                                           const Tensor& pos_weight,
                                                           LossReduction reduction) {
  constexpr absl::string_view op = "binary_cross_entropy_with_logits";
  if (!std::equal(input.sizes().begin(), input.sizes().end(), target.sizes().begin(),
                  target.sizes().end())) {
    return ValueError(op, absl::StrCat("Target size (", TorchSize(target.sizes()),
                                       ") must be the same as input size (",
                                       TorchSize(input.sizes()), ")"));
  }
  Composition c({input, target, weight, pos_weight});
  TENSORD_ASSIGN_OR_RETURN(const Tensor one, WrapNumber(Scalar(int64_t{1})));
  TENSORD_ASSIGN_OR_RETURN(const Tensor zero, WrapNumber(Scalar(int64_t{0})));
  TENSORD_ASSIGN_OR_RETURN(Tensor max_val, c.Op1("neg", {input}));
  TENSORD_ASSIGN_OR_RETURN(max_val, c.Op1("clamp_min_", {max_val, zero}));
  TENSORD_ASSIGN_OR_RETURN(Tensor loss, c.Op1("sub", {one, target}));
  TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("mul_", {loss, input}));
  // log(exp(-m) + exp(-x - m))
  TENSORD_ASSIGN_OR_RETURN(Tensor log_term, c.Op1("neg", {max_val}));
  TENSORD_ASSIGN_OR_RETURN(log_term, c.Op1("exp_", {log_term}));
  TENSORD_ASSIGN_OR_RETURN(Tensor second, c.Op1("neg", {input}));
  TENSORD_ASSIGN_OR_RETURN(second, c.Op1("sub_", {second, max_val}));
  TENSORD_ASSIGN_OR_RETURN(second, c.Op1("exp_", {second}));
  TENSORD_ASSIGN_OR_RETURN(log_term, c.Op1("add_", {log_term, second}));
  TENSORD_ASSIGN_OR_RETURN(log_term, c.Op1("log_", {log_term}));
  if (pos_weight.defined()) {
    TENSORD_ASSIGN_OR_RETURN(Tensor log_weight, c.Op1("sub", {pos_weight, one}));
    TENSORD_ASSIGN_OR_RETURN(log_weight, c.Op1("mul", {log_weight, target}));
    TENSORD_ASSIGN_OR_RETURN(log_weight, c.Op1("add_", {log_weight, one}));
    TENSORD_ASSIGN_OR_RETURN(log_term, c.Op1("add_", {log_term, max_val}));
    TENSORD_ASSIGN_OR_RETURN(log_weight, c.Op1("mul_", {log_weight, log_term}));
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("add_", {loss, log_weight}));
  } else {
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("add_", {loss, max_val}));
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("add_", {loss, log_term}));
  }
  if (weight.defined()) {
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("mul_", {loss, weight}));
  }
  TENSORD_ASSIGN_OR_RETURN(loss, Reduced(c, loss, reduction));
  return std::move(c).Finish({loss});
}

// kl_div: target (log(target) - input), or exp(target) (target - input) for log-probability
// targets; reduction 'batchmean' divides the sum by the batch size (input's first size).
absl::StatusOr<PlannedOp> PlanKlDiv(const Tensor& input, const Tensor& target,
                                    absl::string_view reduction_name, bool log_target) {
  constexpr absl::string_view op = "kl_div";
  const bool batchmean = reduction_name == "batchmean";
  LossReduction reduction = LossReduction::kSum;
  if (!batchmean) {
    TENSORD_ASSIGN_OR_RETURN(reduction, ParseReduction(op, reduction_name));
  }
  if (IsIntegral(input.dtype(), true) || IsIntegral(target.dtype(), true)) {
    return RuntimeError(op, "kl_div: Integral inputs not supported.");
  }
  Composition c({input, target});
  TENSORD_ASSIGN_OR_RETURN(Tensor diff, c.Op1("sub", {target, input}));
  Tensor loss;
  if (log_target) {
    TENSORD_ASSIGN_OR_RETURN(Tensor p, c.Op1("exp", {target}));
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("mul", {p, diff}));
  } else {
    TENSORD_ASSIGN_OR_RETURN(Tensor entropy, c.Op1("xlogy", {target, target}));
    TENSORD_ASSIGN_OR_RETURN(Tensor cross, c.Op1("mul", {target, input}));
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("sub", {entropy, cross}));
  }
  TENSORD_ASSIGN_OR_RETURN(loss, Reduced(c, loss, reduction));
  if (batchmean && input.dim() != 0) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor batch, WrapNumber(Scalar(input.sizes()[0])));
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("div", {loss, batch}));
  }
  return std::move(c).Finish({loss});
}


// ctc_loss (torch.nn.functional.ctc_loss): log_probs (T, N, C), or (T, C) for one unbatched
// element; targets padded (N, S) or concatenated (sum of target_lengths); one length per
// element in input_lengths and target_lengths (any integral dtype and shape). The checks of
// metadata raise here, in torch's order and words; those of the lengths' and labels' values
// where the kernel runs (Backend::CtcLoss). The kernel writes each element's negative
// log-likelihood; the reduction is torch's composition ('mean' divides each by its target
// length, at least 1, then averages).
absl::StatusOr<PlannedOp> PlanCtcLoss(const Tensor& log_probs, const Tensor& targets,
                                      const Tensor& input_lengths, const Tensor& target_lengths,
                                      int64_t blank, LossReduction reduction,
                                      bool zero_infinity) {
  constexpr absl::string_view op = "ctc_loss";
  if (!IsIntegral(input_lengths.dtype(), false)) {
    return RuntimeError(op, "input_lengths must be integral");
  }
  if (!IsIntegral(target_lengths.dtype(), false)) {
    return RuntimeError(op, "target_lengths must be integral");
  }
  TENSORD_ASSIGN_OR_RETURN(const Device device,
                           CommonDevice(op, {log_probs, targets, input_lengths, target_lengths}));
  const bool batched = log_probs.dim() == 3;
  Tensor lp = log_probs;
  if (!batched) {
    TENSORD_ASSIGN_OR_RETURN(lp, Unsqueeze(log_probs, 1));
  }
  const DType dtype = log_probs.dtype();
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    return KernelNotImplemented(op, device.is_cpu() ? "ctc_loss_cpu" : "ctc_loss_cuda", dtype);
  }
  const std::string from = absl::StrCat(" (while checking arguments for ",
                                        device.is_cpu() ? "ctc_loss_cpu" : "ctc_loss_gpu", ")");
  if (lp.dim() != 3) {
    return RuntimeError(op, absl::StrCat("Expected 3-dimensional tensor, but got ", lp.dim(),
                                         "-dimensional tensor for argument #1 'log_probs'", from));
  }
  if (targets.dim() < 1 || targets.dim() > 2) {
    return RuntimeError(op, absl::StrCat("Expected 1 to 2 dimensions, but got ", targets.dim(),
                                         "-dimensional tensor for argument #2 'targets'", from));
  }
  const int64_t time = lp.size(0), batch = lp.size(1), classes = lp.size(2);
  if (blank < 0 || blank >= classes) return RuntimeError(op, "blank must be in label range");
  if (input_lengths.numel() != batch) {
    return RuntimeError(op, "input_lengths must be of size batch_size");
  }
  if (target_lengths.numel() != batch) {
    return RuntimeError(op, "target_lengths must be of size batch_size");
  }
  const bool concatenated = targets.dim() == 1;
  if (!concatenated && targets.size(0) != batch) {
    return RuntimeError(op, absl::StrCat("Expected tensor to have size ", batch,
                                         " at dimension 0, but got size ", targets.size(0),
                                         " for argument #2 'targets'", from));
  }
  Composition c({log_probs, targets, input_lengths, target_lengths});
  TENSORD_ASSIGN_OR_RETURN(Tensor labels, c.ToDType(targets, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(labels, c.Contiguous(labels));
  TENSORD_ASSIGN_OR_RETURN(Tensor in_lengths, c.ToDType(input_lengths, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(in_lengths, c.Contiguous(in_lengths));
  TENSORD_ASSIGN_OR_RETURN(Tensor tg_lengths, c.ToDType(target_lengths, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(tg_lengths, c.Contiguous(tg_lengths));
  TENSORD_ASSIGN_OR_RETURN(Tensor nll,
                           AllocateTensor(op, TensorMeta::Contiguous(dtype, {batch}), device));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  PlannedOp step;
  step.outputs = {nll};
  step.reads = {lp.storage(), labels.storage(), in_lengths.storage(), tg_lengths.storage()};
  step.writes = {nll.storage()};
  step.kernel = [=]() -> absl::Status {
    CtcLossCall call;
    call.log_probs = lp.data();
    call.dtype = dtype;
    call.time = time, call.batch = batch, call.classes = classes;
    call.stride_t = lp.stride(0), call.stride_b = lp.stride(1), call.stride_c = lp.stride(2);
    call.targets = reinterpret_cast<const int64_t*>(labels.data());
    call.concatenated = concatenated;
    call.width = concatenated ? labels.numel() : labels.size(1);
    call.input_lengths = reinterpret_cast<const int64_t*>(in_lengths.data());
    call.target_lengths = reinterpret_cast<const int64_t*>(tg_lengths.data());
    call.blank = blank;
    call.zero_infinity = zero_infinity;
    call.out = nll.data();
    return backend->CtcLoss(call);
  };
  c.Add(std::move(step));
  Tensor loss = nll;
  if (reduction == LossReduction::kMean) {
    const int64_t shape[] = {batch};
    TENSORD_ASSIGN_OR_RETURN(Tensor divisor, c.Reshape(tg_lengths, shape));
    TENSORD_ASSIGN_OR_RETURN(divisor, c.ToDType(divisor, dtype));
    TENSORD_ASSIGN_OR_RETURN(const Tensor one, WrapNumber(Scalar(int64_t{1})));
    TENSORD_ASSIGN_OR_RETURN(divisor, c.Op1("clamp_min", {divisor, one}));
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("div", {nll, divisor}));
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("mean", {loss}));
  } else if (reduction == LossReduction::kSum) {
    TENSORD_ASSIGN_OR_RETURN(loss, c.Op1("sum", {nll}));
  } else if (!batched) {
    TENSORD_ASSIGN_OR_RETURN(loss, c.Reshape(nll, {}));
  }
  return std::move(c).Finish({loss});
}


absl::StatusOr<LossArgs> ReadLossArgs(absl::string_view op, AttrReader& a, bool smoothing) {
  LossArgs args;
  TENSORD_ASSIGN_OR_RETURN(std::string reduction, a.String("reduction", "mean"));
  TENSORD_ASSIGN_OR_RETURN(args.reduction, ParseReduction(op, reduction));
  TENSORD_ASSIGN_OR_RETURN(args.ignore_index, a.Int("ignore_index", -100));
  if (smoothing) {
    TENSORD_ASSIGN_OR_RETURN(Scalar s, a.GetScalar("label_smoothing", Scalar(0.0)));
    args.label_smoothing = s.to_double();
  }
  return args;
}

}  // namespace

void RegisterLossOps(std::vector<OpDef>& ops) {
  const AttrSpec reduction =
      Opt("reduction", AttrType::kString, "mean", "'none', 'mean' (weighted) or 'sum'");
  const AttrSpec ignore_index = Opt("ignore_index", AttrType::kInt, "-100",
                                    "a target value that contributes nothing");
  OpDef ce{"cross_entropy", OpKind::kCompute, {"input", "target", "weight"},
           {reduction, ignore_index,
            Opt("label_smoothing", AttrType::kScalar, "0.0", "in [0, 1]")},
           "torch.nn.functional.cross_entropy: log_softmax over the class dim (dim 1, or 0 for "
           "a 1-d input) and the negative log-likelihood of int64 class indices (any other "
           "target shape) or of class probabilities (a target of input's shape), with "
           "per-class weights; one kernel, the log-probabilities never stored.",
           false,
           [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
             TENSORD_ASSIGN_OR_RETURN(LossArgs args, ReadLossArgs("cross_entropy", a, true));
             return PlanCrossEntropy(in[0], in[1], in[2], args);
           }};
  ce.scalar_inputs = {"weight"};
  ce.optional_inputs = {"weight"};
  ops.push_back(std::move(ce));
  OpDef nll{"nll_loss", OpKind::kCompute, {"input", "target", "weight"},
            {reduction, ignore_index},
            "torch.nn.functional.nll_loss: the negative log-likelihood of int64 class indices "
            "given log-probabilities (class dim 1, or 0 for a 1-d input), with per-class "
            "weights.",
            false,
            [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(LossArgs args, ReadLossArgs("nll_loss", a, false));
              return PlanIndexLoss("nll_loss", true, in[0], in[1], in[2], args);
            }};
  nll.scalar_inputs = {"weight"};
  nll.optional_inputs = {"weight"};
  ops.push_back(std::move(nll));
  // The pointwise losses: (input, target) and a reduction, plus each one's own arguments.
  const auto pointwise = [&](const char* name, std::vector<std::string> inputs,
                             std::vector<AttrSpec> attrs, const char* doc, PlanFn plan,
                             std::vector<std::string> optional = {}) {
    attrs.insert(attrs.begin(), reduction);
    OpDef def{name, OpKind::kCompute, std::move(inputs), std::move(attrs), doc, false,
              std::move(plan)};
    def.scalar_inputs = optional;
    def.optional_inputs = optional;
    ops.push_back(std::move(def));
  };
  const auto read_reduction = [](absl::string_view op,
                                 AttrReader& a) -> absl::StatusOr<LossReduction> {
    TENSORD_ASSIGN_OR_RETURN(std::string name, a.String("reduction", "mean"));
    return ParseReduction(op, name);
  };
  for (const char* name : {"mse_loss", "smooth_l1_loss", "huber_loss"}) {
    const std::string op = name;
    std::vector<AttrSpec> attrs;
    if (op == "smooth_l1_loss") attrs.push_back(Opt("beta", AttrType::kScalar, "1.0", ">= 0"));
    if (op == "huber_loss") attrs.push_back(Opt("delta", AttrType::kScalar, "1.0", "> 0"));
    pointwise(name, {"input", "target"}, attrs,
              op == "mse_loss"         ? "torch.nn.functional.mse_loss: (input - target)^2."
              : op == "smooth_l1_loss" ? "torch.nn.functional.smooth_l1_loss: 0.5 d^2 / beta "
                                         "where d = |input - target| < beta, else d - beta / 2."
                                       : "torch.nn.functional.huber_loss: 0.5 d^2 where d = "
                                         "|input - target| < delta, else delta (d - delta / 2); "
                                         "in input's dtype.",
              [op, read_reduction](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                TENSORD_ASSIGN_OR_RETURN(LossReduction r, read_reduction(op, a));
                double param = 1.0;
                if (op != "mse_loss") {
                  TENSORD_ASSIGN_OR_RETURN(
                      Scalar s, a.GetScalar(op == "huber_loss" ? "delta" : "beta", Scalar(1.0)));
                  param = s.to_double();
                }
                return PlanRegressionLoss(op, in[0], in[1], r, param);
              });
  }
  pointwise("l1_loss", {"input", "target"}, {},
            "torch.nn.functional.l1_loss: |input - target|.",
            [read_reduction](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(LossReduction r, read_reduction("l1_loss", a));
              return PlanL1Loss(in[0], in[1], r);
            });
  pointwise("soft_margin_loss", {"input", "target"}, {},
            "torch.nn.functional.soft_margin_loss: log(1 + exp(-input * target)).",
            [read_reduction](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(LossReduction r, read_reduction("soft_margin_loss", a));
              return PlanSoftMarginLoss(in[0], in[1], r);
            });
  pointwise("binary_cross_entropy", {"input", "target", "weight"}, {},
            "torch.nn.functional.binary_cross_entropy: -w (t log(x) + (1 - t) log(1 - x)), "
            "each log clamped at -100; an input outside [0, 1] fails the op.",
            [read_reduction](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(LossReduction r,
                                       read_reduction("binary_cross_entropy", a));
              return PlanBinaryCrossEntropy(in[0], in[1], in[2], r);
            },
            {"weight"});
  pointwise("binary_cross_entropy_with_logits", {"input", "target", "weight", "pos_weight"}, {},
            "torch.nn.functional.binary_cross_entropy_with_logits: binary_cross_entropy of "
            "sigmoid(input), in the stable form, with positive-class weights.",
            [read_reduction](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(
                  LossReduction r, read_reduction("binary_cross_entropy_with_logits", a));
              return PlanBinaryCrossEntropyWithLogits(in[0], in[1], in[2], in[3], r);
            },
            {"weight", "pos_weight"});
  OpDef kl{"kl_div", OpKind::kCompute, {"input", "target"},
           {Opt("reduction", AttrType::kString, "mean", "'none', 'mean', 'sum' or 'batchmean'"),
            Opt("log_target", AttrType::kBool, "false", "target holds log-probabilities")},
           "torch.nn.functional.kl_div: target (log(target) - input) for log-probabilities "
           "`input`.",
           false,
           [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
             TENSORD_ASSIGN_OR_RETURN(std::string r, a.String("reduction", "mean"));
             TENSORD_ASSIGN_OR_RETURN(bool log_target, a.Bool("log_target", false));
             return PlanKlDiv(in[0], in[1], r, log_target);
           }};
  ops.push_back(std::move(kl));
  ops.push_back(OpDef{
      "ctc_loss", OpKind::kCompute, {"log_probs", "targets", "input_lengths", "target_lengths"},
      {Opt("blank", AttrType::kInt, "0", "the blank label, in [0, classes)"), reduction,
       Opt("zero_infinity", AttrType::kBool, "false", "infinite losses (no alignment) become 0")},
      "torch.nn.functional.ctc_loss: the connectionist temporal classification loss of "
      "log-probabilities (T, N, C) or (T, C) for padded (N, S) or concatenated targets, with "
      "each element's input and target length; lengths or labels that fail torch's checks fail "
      "the op where its kernel runs.",
      false,
      [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
        TENSORD_ASSIGN_OR_RETURN(int64_t blank, a.Int("blank", 0));
        TENSORD_ASSIGN_OR_RETURN(std::string name, a.String("reduction", "mean"));
        TENSORD_ASSIGN_OR_RETURN(LossReduction reduction, ParseReduction("ctc_loss", name));
        TENSORD_ASSIGN_OR_RETURN(bool zero_infinity, a.Bool("zero_infinity", false));
        return PlanCtcLoss(in[0], in[1], in[2], in[3], blank, reduction, zero_infinity);
      }});
}


}  // namespace tensord::engine
