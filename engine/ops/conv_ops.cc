// Convolution: conv2d (torch.nn.functional.conv2d; conv1d is conv2d over a height of 1 in the
// clients). torch's checks and output geometry, then either the device's own kernel
// (Backend::Conv2d: the CPU's tiled im2col + GEMM) or, on devices without one, a composition:
// the zero-padded input, its windows as a strided view copied into im2col columns, and the
// device's batched product with the weights.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "engine/ops/conv_ops.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/core/checked_math.h"
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

constexpr absl::string_view kOp = "conv2d";

// The C++ element type torch names in its type-mismatch messages.
absl::string_view CppTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float";
    case DType::kFloat64: return "double";
    case DType::kFloat16: return "c10::Half";
    case DType::kBFloat16: return "c10::BFloat16";
    case DType::kInt64: return "long int";
    case DType::kInt32: return "int";
    case DType::kInt16: return "short int";
    case DType::kInt8: return "signed char";
    case DType::kUInt8: return "unsigned char";
    case DType::kBool: return "bool";
  }
  return DTypeName(dtype);
}

// An int or a list of 1 or 2 ints, as torch's expand_param_if_needed.
absl::StatusOr<std::vector<int64_t>> PairParam(AttrReader& a, const char* name, int64_t dflt) {
  if (!a.Has(name)) return std::vector<int64_t>{dflt, dflt};
  bool was_list = false;
  TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> v, a.IntOrIntList(name, &was_list));
  if (v.size() == 1) return std::vector<int64_t>{v[0], v[0]};
  if (v.size() != 2) {
    return RuntimeError(kOp, absl::StrCat("expected ", name, " to be a single integer value or a "
                                          "list of 2 values to match the convolution "
                                          "dimensions, but got ", name, "=",
                                          FormatList(v)));
  }
  return v;
}

// conv2d on a device without its own kernel: im2col through views and copies, then matmul.
absl::StatusOr<Tensor> ComposedConv(Composition& c, const Tensor& x, const Tensor& weight,
                                    const Tensor& bias, const Conv2dCall& g) {
  const int64_t cg = g.channels / g.groups, og = g.out_channels / g.groups;
  const int64_t hp = g.height + 2 * g.padding[0], wp = g.width + 2 * g.padding[1];
  Tensor padded = x;
  if (g.padding[0] != 0 || g.padding[1] != 0) {
    TENSORD_ASSIGN_OR_RETURN(
        PlannedOp zeros,
        PlanFull({g.batch, g.channels, hp, wp}, Scalar(int64_t{0}), x.dtype(), x.device()));
    padded = c.Add(std::move(zeros)).at(0);
    TENSORD_ASSIGN_OR_RETURN(Tensor rows, Narrow(padded, 2, g.padding[0], g.height));
    TENSORD_ASSIGN_OR_RETURN(Tensor inside, Narrow(rows, 3, g.padding[1], g.width));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCopyInto(inside, x));
    c.Add(std::move(copy));
  }
  const int64_t oh = g.out_size[0], ow = g.out_size[1];
  TENSORD_ASSIGN_OR_RETURN(
      Tensor windows,
      AsStrided(padded, {g.batch, g.groups, cg, g.kernel[0], g.kernel[1], oh, ow},
                {g.channels * hp * wp, cg * hp * wp, hp * wp, g.dilation[0] * wp, g.dilation[1],
                 g.stride[0] * wp, g.stride[1]},
                padded.storage_offset()));
  TENSORD_ASSIGN_OR_RETURN(Tensor cols, c.Contiguous(windows));
  const int64_t k = cg * g.kernel[0] * g.kernel[1];
  TENSORD_ASSIGN_OR_RETURN(cols, View(cols, {g.batch, g.groups, k, oh * ow}));
  TENSORD_ASSIGN_OR_RETURN(Tensor wmat, View(weight, {g.groups, og, k}));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Op1("matmul", {wmat, cols}));
  TENSORD_ASSIGN_OR_RETURN(out, View(out, {g.batch, g.out_channels, oh, ow}));
  if (bias.defined()) {
    TENSORD_ASSIGN_OR_RETURN(Tensor b, View(bias, {1, g.out_channels, 1, 1}));
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("add", {out, b}));
  }
  return out;
}

}  // namespace

absl::StatusOr<PlannedOp> PlanConv2d(const Tensor& input, const Tensor& weight,
                                     const Tensor& bias, const ConvParams& p, ConvPath path) {
  if (input.dim() != 3 && input.dim() != 4) {
    return RuntimeError(kOp, absl::StrCat("Expected 3D (unbatched) or 4D (batched) input to "
                                          "conv2d, but got input of size: ",
                                          FormatList(input.sizes())));
  }
  if (weight.dim() != 4) {  // torch fits its parameters to the weight's dims first
    return RuntimeError(kOp, absl::StrCat("expected stride to be a single integer value or a "
                                          "list of ", weight.dim() - 2, " values to match the "
                                          "convolution dimensions, but got stride=",
                                          FormatList(p.stride)));
  }
  if (p.groups <= 0) return RuntimeError(kOp, "non-positive groups is not supported");
  const bool batched = input.dim() == 4;
  DimVector in_sizes(input.sizes().begin(), input.sizes().end());
  if (!batched) in_sizes.insert(in_sizes.begin(), 1);
  if (p.padding[0] < 0 || p.padding[1] < 0) {
    return RuntimeError(kOp, "negative padding is not supported");
  }
  if (p.stride[0] <= 0 || p.stride[1] <= 0) {
    return RuntimeError(kOp, "non-positive stride is not supported");
  }
  if (p.dilation[0] <= 0 || p.dilation[1] <= 0) {
    return RuntimeError(kOp, "non-positive dilation is not supported");
  }
  const std::string wsizes = FormatList(weight.sizes());
  const int64_t o = weight.size(0);
  if (o < p.groups) {
    return RuntimeError(kOp, absl::StrCat("Given groups=", p.groups, ", expected weight to be at "
                                          "least ", p.groups, " at dimension 0, but got weight "
                                          "of size ", wsizes, " instead"));
  }
  if (o % p.groups != 0) {
    return RuntimeError(kOp, absl::StrCat("Given groups=", p.groups, ", expected weight to be "
                                          "divisible by ", p.groups, " at dimension 0, but got "
                                          "weight of size [", wsizes, "] instead"));
  }
  const std::optional<int64_t> channels = CheckedMul(weight.size(1), p.groups);
  if (!channels || in_sizes[1] != *channels) {
    return RuntimeError(kOp, absl::StrCat("Given groups=", p.groups, ", weight of size ", wsizes,
                                          ", expected input", FormatList(in_sizes), " to have ",
                                          channels.value_or(-1), " channels, but got ",
                                          in_sizes[1], " channels instead"));
  }
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != o)) {
    return RuntimeError(kOp, absl::StrCat("Given weight of size ", wsizes, ", expected bias to "
                                          "be 1-dimensional with ", o, " elements, but got bias "
                                          "of size ", FormatList(bias.sizes()), " instead"));
  }
  Conv2dCall g;
  g.batch = in_sizes[0], g.channels = in_sizes[1], g.height = in_sizes[2], g.width = in_sizes[3];
  g.out_channels = o, g.groups = p.groups;
  bool fits = true;
  int64_t padded[2], span[2];
  for (int d = 0; d < 2; ++d) {
    g.kernel[d] = weight.size(2 + d), g.stride[d] = p.stride[d];
    g.padding[d] = p.padding[d], g.dilation[d] = p.dilation[d];
    // padded = size + 2 * padding, span = dilation * (kernel - 1) + 1, overflow-checked.
    const std::optional<int64_t> pad2 = CheckedMul(p.padding[d], 2);
    const std::optional<int64_t> pd = pad2 ? CheckedAdd(in_sizes[2 + d], *pad2) : std::nullopt;
    const std::optional<int64_t> reach = CheckedMul(p.dilation[d], g.kernel[d] - 1);
    if (!pd || !reach || *reach == INT64_MAX) {
      return RuntimeError(kOp, "padding, dilation and kernel size overflow the input's extent");
    }
    padded[d] = *pd, span[d] = *reach + 1;
    if (padded[d] < span[d]) fits = false;
    g.out_size[d] = fits ? (padded[d] - span[d]) / p.stride[d] + 1 : 0;
  }
  if (!fits) {
    return RuntimeError(kOp, absl::StrCat("Calculated padded input size per channel: (",
                                          padded[0], " x ", padded[1], "). Kernel size: (",
                                          span[0], " x ", span[1], "). Kernel size can't be "
                                          "greater than actual input size"));
  }
  const DType dtype = input.dtype();
  if (weight.dtype() != dtype) {
    return RuntimeError(kOp, absl::StrCat("expected scalar type ", DTypeLegacyName(dtype),
                                          " but found ", DTypeLegacyName(weight.dtype())));
  }
  if (bias.defined() && bias.dtype() != dtype) {
    return RuntimeError(kOp, absl::StrCat("Input type (", CppTypeName(dtype), ") and bias type (",
                                          CppTypeName(bias.dtype()), ") should be the same"));
  }
  std::vector<Tensor> operands = {input, weight};
  if (bias.defined()) operands.push_back(bias);
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(kOp, operands));
  if (dtype == DType::kBool || (device.is_cpu() && dtype == DType::kFloat16)) {
    return RuntimeError(kOp, absl::StrCat("\"slow_conv2d_cpu\" not implemented for '",
                                          DTypeLegacyName(dtype), "'"));
  }
  DimVector out_sizes = {g.batch, o, g.out_size[0], g.out_size[1]};
  Composition c(operands);
  TENSORD_ASSIGN_OR_RETURN(Tensor x, c.Contiguous(input));
  TENSORD_ASSIGN_OR_RETURN(Tensor w, c.Contiguous(weight));
  TENSORD_ASSIGN_OR_RETURN(Tensor b, c.Contiguous(bias));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  Tensor out;
  if (device.is_cpu() && path == ConvPath::kDeviceDefault) {
    TENSORD_ASSIGN_OR_RETURN(out, AllocateTensor(kOp, TensorMeta::Contiguous(dtype, out_sizes),
                                                 device));
    PlannedOp conv;
    conv.outputs = {out};
    for (const Tensor& t : {x, w, b}) {
      if (t.defined()) conv.reads.push_back(t.storage());
    }
    conv.writes = {out.storage()};
    g.dtype = dtype;
    conv.kernel = [backend, x, w, b, out, g]() mutable -> absl::Status {
      g.input = x.data();
      g.weight = w.data();
      g.bias = b.defined() ? b.data() : nullptr;
      g.out = out.data();
      return backend->Conv2d(g);
    };
    c.Add(std::move(conv));
  } else {
    TENSORD_ASSIGN_OR_RETURN(x, View(x, {g.batch, g.channels, g.height, g.width}));
    TENSORD_ASSIGN_OR_RETURN(out, ComposedConv(c, x, w, b, g));
  }
  if (!batched) {
    TENSORD_ASSIGN_OR_RETURN(out, View(out, {o, g.out_size[0], g.out_size[1]}));
  }
  return std::move(c).Finish({out});
}

void RegisterConvOps(std::vector<OpDef>& ops) {
  OpDef def{"conv2d", OpKind::kCompute, {"input", "weight", "bias"},
            {Opt("stride", AttrType::kIntOrIntList, "1", "an int or (sh, sw)"),
             Opt("padding", AttrType::kIntOrIntList, "0", "an int or (ph, pw): zeros each side"),
             Opt("dilation", AttrType::kIntOrIntList, "1", "an int or (dh, dw)"),
             Opt("groups", AttrType::kInt, "1")},
            "torch.nn.functional.conv2d (cross-correlation) of a (N, C, H, W) or (C, H, W) "
            "input with (O, C / groups, kh, kw) weights and an optional (O) bias; the result is "
            "contiguous.",
            false,
            [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
              ConvParams p;
              for (const auto& [name, dflt, dst] :
                   {std::tuple<const char*, int64_t, int64_t*>{"stride", 1, p.stride},
                    {"padding", 0, p.padding},
                    {"dilation", 1, p.dilation}}) {
                TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> v, PairParam(a, name, dflt));
                dst[0] = v[0], dst[1] = v[1];
              }
              TENSORD_ASSIGN_OR_RETURN(p.groups, a.Int("groups", 1));
              return PlanConv2d(in[0], in[1], in[2], p);
            }};
  def.scalar_inputs = {"bias"};
  def.optional_inputs = {"bias"};
  ops.push_back(std::move(def));
}

}  // namespace tensord::engine
