// Normalization: layer_norm (torch.nn.functional.layer_norm) over trailing dims, one kernel per
// device (Backend::LayerNorm) that reads each row once into cache, two-pass mean and variance,
// and writes the normalized, scaled and shifted row; batch_norm per channel, its statistics
// turned into a scale and shift per channel applied in one pass (Backend::ChannelAffine).
// Operands that are not contiguous are made so first (a composition with contiguous's steps).
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/runtime/backend.h"
#include "engine/tensor/shape_util.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

absl::StatusOr<PlannedOp> PlanLayerNorm(const Tensor& input, const Tensor& weight,
                                        const Tensor& bias, const std::vector<int64_t>& shape,
                                        double eps) {
  constexpr absl::string_view op = "layer_norm";
  if (shape.empty()) {
    return RuntimeError(op, "Expected normalized_shape to be at least 1-dimensional, i.e., "
                            "containing at least one element, but got normalized_shape = []");
  }
  for (const auto& [name, t] : {std::pair<const char*, const Tensor&>{"weight", weight},
                                std::pair<const char*, const Tensor&>{"bias", bias}}) {
    if (t.defined() && !std::equal(t.sizes().begin(), t.sizes().end(), shape.begin(),
                                   shape.end())) {
      return RuntimeError(op, absl::StrCat("Expected ", name, " to be of same shape as "
                                           "normalized_shape, but got ", name, " of shape ",
                                           FormatList(t.sizes()), " and normalized_shape = ",
                                           FormatList(shape)));
    }
  }
  const int64_t nd = input.dim(), ns = static_cast<int64_t>(shape.size());
  if (nd < ns || !std::equal(shape.begin(), shape.end(), input.sizes().end() - ns)) {
    std::string expected;
    for (int64_t s : shape) absl::StrAppend(&expected, ", ", s);
    return RuntimeError(op, absl::StrCat("Given normalized_shape=", FormatList(shape),
                                         ", expected input with shape [*", expected,
                                         "], but got input of size", FormatList(input.sizes())));
  }
  std::vector<Tensor> operands = {input};
  if (weight.defined()) operands.push_back(weight);
  if (bias.defined()) operands.push_back(bias);
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, operands));
  const DType dtype = input.dtype();
  TENSORD_RETURN_IF_ERROR(CheckFloatingKernel(op, "LayerNormKernelImpl", dtype, device));
  for (const Tensor& t : {weight, bias}) {
    if (t.defined() && t.dtype() != dtype) {
      return RuntimeError(op, absl::StrCat("expected scalar type ", DTypeLegacyName(dtype),
                                           " but found ", DTypeLegacyName(t.dtype())));
    }
  }
  int64_t n = 1;
  for (int64_t s : shape) n *= s;  // input's trailing sizes: no overflow
  const int64_t rows = n == 0 ? 0 : input.numel() / n;
  Composition c(operands);
  TENSORD_ASSIGN_OR_RETURN(Tensor x, c.Contiguous(input));
  TENSORD_ASSIGN_OR_RETURN(Tensor w, c.Contiguous(weight));
  TENSORD_ASSIGN_OR_RETURN(Tensor b, c.Contiguous(bias));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor out, AllocateTensor(op, TensorMeta::Contiguous(dtype, input.sizes()), device));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  PlannedOp norm;
  norm.outputs = {out};
  for (const Tensor& t : {x, w, b}) {
    if (t.defined()) norm.reads.push_back(t.storage());
  }
  norm.writes = {out.storage()};
  norm.kernel = [backend, x, w, b, out, rows, n, eps]() -> absl::Status {
    if (rows == 0 || n == 0) return absl::OkStatus();
    LayerNormCall call;
    call.x = x.data();
    call.out = out.data();
    call.weight = w.defined() ? w.data() : nullptr;
    call.bias = b.defined() ? b.data() : nullptr;
    call.dtype = x.dtype();
    call.rows = rows;
    call.n = n;
    call.eps = eps;
    return backend->LayerNorm(call);
  };
  c.Add(std::move(norm));
  return std::move(c).Finish({out});
}

Attrs Number(const char* name, double value) { return Attrs().Set(name, Scalar(value)); }

// The per-channel scale and shift of a normalization (contiguous, in `calc`): scale = rstd *
// weight, shift = bias - mean * scale, from statistics `mean` and `rstd` of the channels' shape
// (weight and bias, of one entry per channel, may be undefined).
struct ScaleShift {
  Tensor scale, shift;
};
absl::StatusOr<ScaleShift> FoldAffine(Composition& c, const Tensor& mean, const Tensor& rstd,
                                      const Tensor& weight, const Tensor& bias, DType calc) {
  Tensor scale = rstd;
  if (weight.defined()) {
    TENSORD_ASSIGN_OR_RETURN(Tensor w, c.ToDType(weight, calc));
    TENSORD_ASSIGN_OR_RETURN(scale, c.Op1("mul", {scale, w}));
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor moved, c.Op1("mul", {mean, scale}));
  Tensor shift;
  if (bias.defined()) {
    TENSORD_ASSIGN_OR_RETURN(Tensor b, c.ToDType(bias, calc));
    TENSORD_ASSIGN_OR_RETURN(shift, c.Op1("sub", {b, moved}));
  } else {
    TENSORD_ASSIGN_OR_RETURN(shift, c.Op1("neg", {moved}));
  }
  TENSORD_ASSIGN_OR_RETURN(scale, c.Contiguous(scale));
  TENSORD_ASSIGN_OR_RETURN(shift, c.Contiguous(shift));
  return ScaleShift{scale, shift};
}

// The composition's last step: out (x's dtype and sizes, contiguous) = x * scale + shift per
// plane (Backend::ChannelAffine: `channels` entries of scale and shift, plane p using p %
// channels).
absl::StatusOr<PlannedOp> AffineStep(Composition c, absl::string_view op, const Tensor& x,
                                     const Tensor& scale, const Tensor& shift, int64_t planes,
                                     int64_t plane, int64_t channels, const Device& device) {
  TENSORD_ASSIGN_OR_RETURN(
      Tensor out, AllocateTensor(op, TensorMeta::Contiguous(x.dtype(), x.sizes()), device));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  PlannedOp affine;
  affine.outputs = {out};
  affine.reads = {x.storage(), scale.storage(), shift.storage()};
  affine.writes = {out.storage()};
  affine.kernel = [backend, x, scale, shift, out, planes, plane, channels]() -> absl::Status {
    ChannelAffineCall call;
    call.x = x.data();
    call.out = out.data();
    call.scale = scale.data();
    call.shift = shift.data();
    call.dtype = x.dtype();
    call.planes = planes;
    call.plane = plane;
    call.channels = channels;
    return backend->ChannelAffine(call);
  };
  c.Add(std::move(affine));
  return std::move(c).Finish({out});
}

// torch.nn.functional.batch_norm: the statistics (the batch's, also folded into the running
// ones, when training) become a scale and a shift per channel, and one pass over the input
// applies them (Backend::ChannelAffine).
absl::StatusOr<PlannedOp> PlanBatchNorm(const Tensor& input, const Tensor& running_mean,
                                        const Tensor& running_var, const Tensor& weight,
                                        const Tensor& bias, bool training, double momentum,
                                        double eps) {
  constexpr absl::string_view op = "batch_norm";
  const int64_t channels = input.dim() > 1 ? input.size(1) : 0;
  for (const auto& [name, t] : {std::pair<const char*, const Tensor&>{"running_mean", running_mean},
                                {"running_var", running_var},
                                {"weight", weight},
                                {"bias", bias}}) {
    if (t.defined() && t.numel() != channels) {
      return RuntimeError(op, absl::StrCat(name, " should contain ", channels, " elements not ",
                                           t.numel()));
    }
  }
  if (!training && !running_mean.defined()) {
    return RuntimeError(op, "running_mean must be defined in evaluation mode");
  }
  if (!training && !running_var.defined()) {
    return RuntimeError(op, "running_var must be defined in evaluation mode");
  }
  if (input.dim() < 2) {
    return ValueError(op, absl::StrCat("Expected 2D or more input (got ", input.dim(),
                                       "D input)"));
  }
  std::vector<Tensor> operands = {input};
  for (const Tensor& t : {running_mean, running_var, weight, bias}) {
    if (t.defined()) operands.push_back(t);
  }
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, operands));
  const DType dtype = input.dtype();
  TENSORD_RETURN_IF_ERROR(CheckFloatingKernel(op, "batch_norm", dtype, device));
  // Statistics and parameters in float32 for the 16-bit types (torch's mixed dtypes), else in
  // the input's dtype.
  const bool reduced = dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  const DType calc = reduced ? DType::kFloat32 : dtype;
  for (const Tensor& t : {running_mean, running_var, weight, bias}) {
    if (t.defined() && t.dtype() != dtype && !(reduced && t.dtype() == calc)) {
      return RuntimeError(op, absl::StrCat("mixed dtype (CPU): expect parameter to have scalar "
                                           "type of ", DTypeLegacyName(calc)));
    }
  }
  const int64_t planes = input.size(0) * channels;  // input's sizes: no overflow
  const int64_t plane = planes == 0 ? 0 : input.numel() / planes;
  Composition c(operands);
  TENSORD_ASSIGN_OR_RETURN(Tensor x, c.Contiguous(input));
  Tensor mean, var;
  if (input.numel() == 0) {  // nothing to normalize; running statistics left as they are
    TENSORD_ASSIGN_OR_RETURN(
        Tensor out, AllocateTensor(op, TensorMeta::Contiguous(dtype, input.sizes()), device));
    PlannedOp empty;
    empty.outputs = {out};
    empty.writes = {out.storage()};
    empty.kernel = []() { return absl::OkStatus(); };
    c.Add(std::move(empty));
    return std::move(c).Finish({out});
  }
  if (training) {
    std::vector<int64_t> dims = {0};
    for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
    TENSORD_ASSIGN_OR_RETURN(Tensor xs, c.ToDType(x, calc));
    TENSORD_ASSIGN_OR_RETURN(mean, c.Op1("mean", {xs}, Attrs().Set("dim", dims)));
    TENSORD_ASSIGN_OR_RETURN(
        var, c.Op1("var", {xs}, Attrs().Set("dim", dims).Set("correction", Scalar(int64_t{0}))));
    const double count = static_cast<double>(input.numel() / std::max<int64_t>(channels, 1));
    // running = (1 - momentum) * running + momentum * the batch's (variance unbiased).
    for (const auto& [running, batch, factor] :
         {std::tuple<const Tensor&, const Tensor&, double>{running_mean, mean, 1.0},
          {running_var, var, count / (count - 1)}}) {
      if (!running.defined()) continue;
      TENSORD_ASSIGN_OR_RETURN(Tensor scaled, c.Op1("mul", {batch}, Number("other", factor)));
      TENSORD_RETURN_IF_ERROR(c.Op("mul_", {running}, Number("other", 1 - momentum)).status());
      TENSORD_RETURN_IF_ERROR(
          c.Op("add_", {running, scaled}, Number("alpha", momentum)).status());
    }
  } else {
    TENSORD_ASSIGN_OR_RETURN(mean, c.ToDType(running_mean, calc));
    TENSORD_ASSIGN_OR_RETURN(var, c.ToDType(running_var, calc));
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor shifted, c.Op1("add", {var}, Number("other", eps)));
  TENSORD_ASSIGN_OR_RETURN(Tensor rstd, c.Op1("rsqrt", {shifted}));
  TENSORD_ASSIGN_OR_RETURN(ScaleShift ss, FoldAffine(c, mean, rstd, weight, bias, calc));
  return AffineStep(std::move(c), op, x, ss.scale, ss.shift, planes, plane, channels, device);
}

// torch.nn.functional.group_norm: mean and variance over each (sample, group), turned into a
// scale and shift per (sample, channel) with weight and bias, applied in one pass.
absl::StatusOr<PlannedOp> PlanGroupNorm(const Tensor& input, int64_t groups, const Tensor& weight,
                                        const Tensor& bias, double eps) {
  constexpr absl::string_view op = "group_norm";
  if (input.dim() < 2) return DimOutOfRange(op, 1, input.dim());
  if (groups <= 0) return ValueError(op, absl::StrCat("num_groups must be positive, got ", groups));
  const int64_t n = input.size(0), channels = input.size(1);
  if (channels % groups != 0) {
    return RuntimeError(op, absl::StrCat("Expected number of channels in input to be divisible "
                                         "by num_groups, but got input of shape ",
                                         FormatList(input.sizes()), " and num_groups=", groups));
  }
  for (const auto& [name, t] : {std::pair<const char*, const Tensor&>{"weight", weight},
                                {"bias", bias}}) {
    if (t.defined() && (t.dim() != 1 || t.numel() != channels)) {
      return RuntimeError(op, absl::StrCat("Expected ", name, " to be a vector of size equal to "
                                           "the number of channels in input, but got ", name,
                                           " of shape ", FormatList(t.sizes()),
                                           " and input of shape ", FormatList(input.sizes())));
    }
  }
  std::vector<Tensor> operands = {input};
  for (const Tensor& t : {weight, bias}) {
    if (t.defined()) operands.push_back(t);
  }
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, operands));
  const DType dtype = input.dtype();
  TENSORD_RETURN_IF_ERROR(CheckFloatingKernel(op, "GroupNormKernelImpl", dtype, device));
  for (const Tensor& t : {weight, bias}) {
    if (t.defined() && t.dtype() != dtype) {
      return RuntimeError(op, absl::StrCat("expected scalar type ", DTypeLegacyName(dtype),
                                           " but found ", DTypeLegacyName(t.dtype())));
    }
  }
  const bool reduced = dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  const DType calc = reduced ? DType::kFloat32 : dtype;
  const int64_t planes = n * channels;
  const int64_t plane = planes == 0 ? 0 : input.numel() / planes;
  Composition c(operands);
  TENSORD_ASSIGN_OR_RETURN(Tensor x, c.Contiguous(input));
  TENSORD_ASSIGN_OR_RETURN(Tensor xs, c.ToDType(x, calc));
  TENSORD_ASSIGN_OR_RETURN(Tensor grouped, View(xs, {n, groups, channels / groups * plane}));
  const Attrs last = Attrs().Set("dim", std::vector<int64_t>{2}).Set("keepdim", true);
  TENSORD_ASSIGN_OR_RETURN(Tensor mean, c.Op1("mean", {grouped}, last));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor var, c.Op1("var", {grouped}, Attrs(last).Set("correction", Scalar(int64_t{0}))));
  // Per (sample, channel): scale = weight * rsqrt(var + eps), shift = bias - mean * scale.
  TENSORD_ASSIGN_OR_RETURN(Tensor shifted, c.Op1("add", {var}, Number("other", eps)));
  TENSORD_ASSIGN_OR_RETURN(Tensor rstd, c.Op1("rsqrt", {shifted}));
  TENSORD_ASSIGN_OR_RETURN(rstd, Expand(rstd, {n, groups, channels / groups}));
  TENSORD_ASSIGN_OR_RETURN(mean, Expand(mean, {n, groups, channels / groups}));
  TENSORD_ASSIGN_OR_RETURN(Tensor scale, c.Op1("reshape", {rstd}, Attrs().Set(
                                                  "shape", std::vector<int64_t>{n, channels})));
  TENSORD_ASSIGN_OR_RETURN(Tensor centre, c.Op1("reshape", {mean}, Attrs().Set(
                                                   "shape", std::vector<int64_t>{n, channels})));
  TENSORD_ASSIGN_OR_RETURN(ScaleShift ss, FoldAffine(c, centre, scale, weight, bias, calc));
  return AffineStep(std::move(c), op, x, ss.scale, ss.shift, planes, plane, planes, device);
}

}  // namespace

void RegisterNormOps(std::vector<OpDef>& ops) {
  OpDef def{"layer_norm", OpKind::kCompute, {"input", "weight", "bias"},
            {Req("normalized_shape", AttrType::kIntList), Opt("eps", AttrType::kScalar, "1e-05")},
            "(input - mean) / sqrt(var + eps) * weight + bias over the trailing "
            "normalized_shape dims (biased variance); weight and bias may be None.",
            false,
            [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> shape, a.IntList("normalized_shape"));
              TENSORD_ASSIGN_OR_RETURN(Scalar eps, a.GetScalar("eps", Scalar(1e-5)));
              return PlanLayerNorm(in[0], in[1], in[2], shape, eps.to_double());
            }};
  def.scalar_inputs = {"weight", "bias"};
  def.optional_inputs = {"weight", "bias"};
  ops.push_back(std::move(def));
  OpDef bn{"batch_norm", OpKind::kCompute,
           {"input", "running_mean", "running_var", "weight", "bias"},
           {Opt("training", AttrType::kBool, "false"), Opt("momentum", AttrType::kScalar, "0.1"),
            Opt("eps", AttrType::kScalar, "1e-05")},
           "Normalizes each channel (dim 1) by the running statistics, or when training by the "
           "batch's, folding them into the running ones in place (unbiased variance); then "
           "weight and bias. Any of the four may be None (the running ones only when training).",
           false,
           [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
             TENSORD_ASSIGN_OR_RETURN(bool training, a.Bool("training", false));
             TENSORD_ASSIGN_OR_RETURN(Scalar momentum, a.GetScalar("momentum", Scalar(0.1)));
             TENSORD_ASSIGN_OR_RETURN(Scalar eps, a.GetScalar("eps", Scalar(1e-5)));
             return PlanBatchNorm(in[0], in[1], in[2], in[3], in[4], training,
                                  momentum.to_double(), eps.to_double());
           }};
  bn.scalar_inputs = {"running_mean", "running_var", "weight", "bias"};
  bn.optional_inputs = {"running_mean", "running_var", "weight", "bias"};
  bn.output_format = OutputFormat::kLikeInput;
  ops.push_back(std::move(bn));
  OpDef gn{"group_norm", OpKind::kCompute, {"input", "weight", "bias"},
           {Req("num_groups", AttrType::kInt), Opt("eps", AttrType::kScalar, "1e-05")},
           "Normalizes each group of num_groups channels (dim 1) of each sample by its mean and "
           "biased variance, then weight and bias per channel (either may be None).",
           false,
           [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
             TENSORD_ASSIGN_OR_RETURN(int64_t groups, a.Int("num_groups"));
             TENSORD_ASSIGN_OR_RETURN(Scalar eps, a.GetScalar("eps", Scalar(1e-5)));
             return PlanGroupNorm(in[0], groups, in[1], in[2], eps.to_double());
           }};
  gn.scalar_inputs = {"weight", "bias"};
  gn.optional_inputs = {"weight", "bias"};
  gn.output_format = OutputFormat::kLikeInput;
  ops.push_back(std::move(gn));
}

}  // namespace tensord::engine
