// Classification losses: cross_entropy (class indices or class probabilities, weights,
// ignore_index, label_smoothing) and nll_loss, each one kernel per device
// (Backend::CrossEntropy) that reads each position's class scores once: log_softmax's max and
// sum, the target's log-probability, the smoothing sum, and the reduction, without the
// log-probabilities ever being written. Shapes, dtypes and errors are torch's (nll_loss_nd's
// rules: (C), (N, C) and (N, C, d1, ...) inputs).
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

namespace tensord::engine {
namespace {

absl::StatusOr<LossReduction> ParseReduction(absl::string_view op, absl::string_view name) {
  if (name == "none") return LossReduction::kNone;
  if (name == "mean") return LossReduction::kMean;
  if (name == "sum") return LossReduction::kSum;
  return ValueError(op, absl::StrCat(name, " is not a valid value for reduction"));
}

// A kernel that torch's CPU backend does not have for `dtype` (its name in torch's message).
absl::Status CheckLossDType(absl::string_view op, absl::string_view kernel, DType dtype,
                            const Device& device) {
  if (!IsFloating(dtype) || (device.is_cpu() && dtype == DType::kFloat16)) {
    return RuntimeError(op, absl::StrCat("\"", kernel, "\" not implemented for '",
                                         DTypeLegacyName(dtype), "'"));
  }
  return absl::OkStatus();
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
    TENSORD_RETURN_IF_ERROR(CheckLossDType(
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
    TENSORD_RETURN_IF_ERROR(CheckLossDType(
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
  TENSORD_RETURN_IF_ERROR(CheckLossDType(
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
  TENSORD_RETURN_IF_ERROR(CheckLossDType(op, "log_softmax_lastdim_kernel_impl", dtype, device));
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
}

}  // namespace tensord::engine
