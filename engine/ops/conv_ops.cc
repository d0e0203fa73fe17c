// Convolution: conv2d (torch.nn.functional.conv2d; conv1d is conv2d over a height of 1 in the
// clients), conv3d (one conv2d over depth planes stacked as channels), conv_transpose2d/3d, and unfold/fold (im2col/col2im). torch's checks and output geometry, then either the device's own kernel
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

// An int or a list of 1 or n ints, as torch's expand_param_if_needed.
absl::StatusOr<std::vector<int64_t>> NParam(AttrReader& a, const char* name, int64_t dflt,
                                            size_t n, absl::string_view op = kOp) {
  if (!a.Has(name)) return std::vector<int64_t>(n, dflt);
  bool was_list = false;
  TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> v, a.IntOrIntList(name, &was_list));
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (v.size() != n) {
    return RuntimeError(op, absl::StrCat("expected ", name, " to be a single integer value or a "
                                         "list of ", n, " values to match the convolution "
                                         "dimensions, but got ", name, "=", FormatList(v)));
  }
  return v;
}

absl::StatusOr<std::vector<int64_t>> PairParam(AttrReader& a, const char* name, int64_t dflt) {
  return NParam(a, name, dflt, 2);
}

// conv2d (`g` of depth 1) on a device without its own kernel: im2col through views and copies,
// then matmul.
absl::StatusOr<Tensor> ComposedConv(Composition& c, const Tensor& x, const Tensor& weight,
                                    const Tensor& bias, const ConvCall& g) {
  const int64_t cg = g.channels / g.groups, og = g.out_channels / g.groups;
  const int64_t h = g.size[1], w = g.size[2], ph = g.padding[1], pw = g.padding[2];
  const int64_t hp = h + 2 * ph, wp = w + 2 * pw;
  Tensor padded = x;
  if (ph != 0 || pw != 0) {
    TENSORD_ASSIGN_OR_RETURN(
        PlannedOp zeros,
        PlanFull({g.batch, g.channels, hp, wp}, Scalar(int64_t{0}), x.dtype(), x.device()));
    padded = c.Add(std::move(zeros)).at(0);
    TENSORD_ASSIGN_OR_RETURN(Tensor rows, Narrow(padded, 2, ph, h));
    TENSORD_ASSIGN_OR_RETURN(Tensor inside, Narrow(rows, 3, pw, w));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCopyInto(inside, x));
    c.Add(std::move(copy));
  }
  const int64_t oh = g.out_size[1], ow = g.out_size[2], kh = g.kernel[1], kw = g.kernel[2];
  // A stride (dilation) matters only past one output (tap), where it lies within the padded
  // input: the view's strides cannot overflow.
  const int64_t sy = oh > 1 ? g.stride[1] : 1, sx = ow > 1 ? g.stride[2] : 1;
  const int64_t dy = kh > 1 ? g.dilation[1] : 1, dx = kw > 1 ? g.dilation[2] : 1;
  TENSORD_ASSIGN_OR_RETURN(
      Tensor windows,
      AsStrided(padded, {g.batch, g.groups, cg, kh, kw, oh, ow},
                {g.channels * hp * wp, cg * hp * wp, hp * wp, dy * wp, dx, sy * wp, sx},
                padded.storage_offset()));
  TENSORD_ASSIGN_OR_RETURN(Tensor cols, c.Contiguous(windows));
  const int64_t k = cg * kh * kw;
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

// The CPU's convolution kernel over contiguous copies of the operands, into a new contiguous
// (batch, out_channels, out_size...) tensor of `out_sizes`; `g` holds the geometry.
absl::StatusOr<Tensor> KernelConv(Composition& c, absl::string_view op, const Tensor& input,
                                  const Tensor& weight, const Tensor& bias, ConvCall g,
                                  DimVector out_sizes, Backend* backend) {
  TENSORD_ASSIGN_OR_RETURN(Tensor x, c.Contiguous(input));
  TENSORD_ASSIGN_OR_RETURN(Tensor w, c.Contiguous(weight));
  TENSORD_ASSIGN_OR_RETURN(Tensor b, c.Contiguous(bias));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor out,
      AllocateTensor(op, TensorMeta::Contiguous(input.dtype(), out_sizes), input.device()));
  PlannedOp conv;
  conv.outputs = {out};
  for (const Tensor& t : {x, w, b}) {
    if (t.defined()) conv.reads.push_back(t.storage());
  }
  conv.writes = {out.storage()};
  g.dtype = input.dtype();
  conv.kernel = [backend, x, w, b, out, g]() mutable -> absl::Status {
    g.input = x.data();
    g.weight = w.data();
    g.bias = b.defined() ? b.data() : nullptr;
    g.out = out.data();
    return backend->Conv(g);
  };
  c.Add(std::move(conv));
  return out;
}

// A convolution's operands (input, weight and the optional bias) with torch's dtype and device
// checks, conv2d's and conv_transpose2d's alike; `kernel` names torch's CPU kernel.
struct ConvOperands {
  std::vector<Tensor> tensors;
  Device device;
};
absl::StatusOr<ConvOperands> CheckConvOperands(absl::string_view op, absl::string_view kernel,
                                               const Tensor& input, const Tensor& weight,
                                               const Tensor& bias) {
  const DType dtype = input.dtype();
  if (weight.dtype() != dtype) {
    return RuntimeError(op, absl::StrCat("expected scalar type ", DTypeLegacyName(dtype),
                                         " but found ", DTypeLegacyName(weight.dtype())));
  }
  if (bias.defined() && bias.dtype() != dtype) {
    return RuntimeError(op, absl::StrCat("Input type (", CppTypeName(dtype), ") and bias type (",
                                         CppTypeName(bias.dtype()), ") should be the same"));
  }
  ConvOperands o;
  o.tensors = {input, weight};
  if (bias.defined()) o.tensors.push_back(bias);
  TENSORD_ASSIGN_OR_RETURN(o.device, CommonDevice(op, o.tensors));
  if (dtype == DType::kBool || (o.device.is_cpu() && dtype == DType::kFloat16)) {
    return KernelNotImplemented(op, kernel, dtype);
  }
  return o;
}

// conv2d's and conv3d's checks of the weight against groups and the input's channels, and of
// the bias, in torch's order and words.
absl::Status CheckConvWeight(absl::string_view op, const Tensor& weight, const Tensor& bias,
                             IntList in, int64_t groups) {
  const std::string wsizes = FormatList(weight.sizes());
  const int64_t o = weight.size(0);
  if (o < groups) {
    return RuntimeError(op, absl::StrCat("Given groups=", groups, ", expected weight to be at "
                                         "least ", groups, " at dimension 0, but got weight "
                                         "of size ", wsizes, " instead"));
  }
  if (o % groups != 0) {
    return RuntimeError(op, absl::StrCat("Given groups=", groups, ", expected weight to be "
                                         "divisible by ", groups, " at dimension 0, but got "
                                         "weight of size [", wsizes, "] instead"));
  }
  const std::optional<int64_t> channels = CheckedMul(weight.size(1), groups);
  if (!channels || in[1] != *channels) {
    return RuntimeError(op, absl::StrCat("Given groups=", groups, ", weight of size ", wsizes,
                                         ", expected input", FormatList(in), " to have ",
                                         channels.value_or(-1), " channels, but got ", in[1],
                                         " channels instead"));
  }
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != o)) {
    return RuntimeError(op, absl::StrCat("Given weight of size ", wsizes, ", expected bias to "
                                         "be 1-dimensional with ", o, " elements, but got bias "
                                         "of size ", FormatList(bias.sizes()), " instead"));
  }
  return absl::OkStatus();
}

// conv_transpose2d's and conv_transpose3d's checks of the weight against groups and the
// input's channels, and of the bias, in torch's order and words; the output channels.
absl::StatusOr<int64_t> CheckConvTransposeWeight(absl::string_view op, const Tensor& weight,
                                                 const Tensor& bias, IntList in, int64_t groups) {
  const std::string wsizes = FormatList(weight.sizes());
  const int64_t cin = weight.size(0);
  if (cin % groups != 0) {
    return RuntimeError(op, absl::StrCat("Given groups=", groups, ", expected weight to be "
                                         "divisible by ", groups, " at dimension 0, but got "
                                         "weight of size [", wsizes, "] instead"));
  }
  if (in[1] != cin) {
    return RuntimeError(op, absl::StrCat("Given transposed=1, weight of size ", wsizes,
                                         ", expected input", FormatList(in), " to have ", cin,
                                         " channels, but got ", in[1], " channels instead"));
  }
  const std::optional<int64_t> cout = CheckedMul(weight.size(1), groups);
  if (!cout) return RuntimeError(op, "the output channels overflow int64");
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != *cout)) {
    return RuntimeError(op, absl::StrCat("Given transposed=1, weight of size ", wsizes,
                                         ", expected bias to be 1-dimensional with ", *cout,
                                         " elements, but got bias of size ",
                                         FormatList(bias.sizes()), " instead"));
  }
  return *cout;
}

// The window geometry of im2col / col2im / conv_transpose2d, per spatial dim.
struct Window {
  int64_t kernel[2], dilation[2], padding[2], stride[2];
};

// torch's im2col_shape_check / col2im_shape_check argument rules.
absl::Status CheckWindow(absl::string_view op, const Window& w) {
  if (w.kernel[0] <= 0 || w.kernel[1] <= 0) {
    return RuntimeError(op, absl::StrCat("kernel size should be greater than zero, but got "
                                         "kernel_height: ", w.kernel[0], " kernel_width: ",
                                         w.kernel[1]));
  }
  if (w.stride[0] <= 0 || w.stride[1] <= 0) {
    return RuntimeError(op, absl::StrCat("stride should be greater than zero, but got "
                                         "stride_height: ", w.stride[0], " stride_width: ",
                                         w.stride[1]));
  }
  if (w.dilation[0] <= 0 || w.dilation[1] <= 0) {
    return RuntimeError(op, absl::StrCat("dilation should be greater than zero, but got "
                                         "dilation_height: ", w.dilation[0], " dilation_width: ",
                                         w.dilation[1]));
  }
  if (w.padding[0] < 0 || w.padding[1] < 0) {
    return RuntimeError(op, absl::StrCat("padding should be non-negative, but got pad_height: ",
                                         w.padding[0], " pad_width: ", w.padding[1]));
  }
  for (int d = 0; d < 2; ++d) {
    for (int64_t v : {w.kernel[d], w.dilation[d], w.padding[d], w.stride[d]}) {
      if (v > (int64_t{1} << 31)) {
        return RuntimeError(op, absl::StrCat("window argument ", v, " is out of range"));
      }
    }
  }
  return absl::OkStatus();
}

// The number of sliding blocks along a dim of `size`: torch's formula, its division rounding
// down (< 1 when none fits); nullopt when the sizes overflow.
std::optional<int64_t> Blocks(int64_t size, const Window& w, int d) {
  // The window arguments are at most 2^31 (CheckWindow): only `size` can overflow.
  const std::optional<int64_t> padded = CheckedAdd(size, 2 * w.padding[d]);
  if (!padded) return std::nullopt;
  const int64_t span = *padded - (w.dilation[d] * (w.kernel[d] - 1) + 1);
  const int64_t q = span / w.stride[d];
  return (span % w.stride[d] != 0 && span < 0 ? q - 1 : q) + 1;
}

// col2im: columns `cols` (n, ch, kh, kw, bh, bw), contiguous, summed into a new (n, ch, oh, ow)
// tensor: block (i, j) of kernel offset (ki, kj) adds at padded position
// (i * sh + ki * dh, j * sw + kj * dw). One in-place add of a strided view per kernel offset,
// or per block where there are fewer blocks (at most sqrt of the columns' size either way).
absl::StatusOr<Tensor> Col2Im(absl::string_view op, Composition& c, const Tensor& cols,
                              int64_t n, int64_t ch, int64_t oh, int64_t ow, int64_t bh,
                              int64_t bw, const Window& w) {
  const std::optional<int64_t> hp = CheckedAdd(oh, 2 * w.padding[0]);
  const std::optional<int64_t> wp = CheckedAdd(ow, 2 * w.padding[1]);
  if (!hp || !wp) return RuntimeError(op, "the padded output size overflows int64");
  TENSORD_ASSIGN_OR_RETURN(PlannedOp zeros, PlanFull({n, ch, *hp, *wp}, Scalar(int64_t{0}),
                                                     cols.dtype(), cols.device()));
  Tensor out = c.Add(std::move(zeros)).at(0);
  // Strides within out's storage (the output fits in int64, the steps may not).
  const std::optional<int64_t> row_step = CheckedMul(w.stride[0], *wp);
  const std::optional<int64_t> row_dilation = CheckedMul(w.dilation[0], *wp);
  if (!row_step || !row_dilation) return RuntimeError(op, "the window steps overflow int64");
  const int64_t plane = *hp * *wp;
  const int64_t kh = w.kernel[0], kw = w.kernel[1];
  if (cols.numel() > 0 && kh * kw <= bh * bw) {
    for (int64_t ki = 0; ki < kh; ++ki) {
      TENSORD_ASSIGN_OR_RETURN(Tensor row, Select(cols, 2, ki));
      for (int64_t kj = 0; kj < kw; ++kj) {
        TENSORD_ASSIGN_OR_RETURN(Tensor src, Select(row, 2, kj));
        TENSORD_ASSIGN_OR_RETURN(
            Tensor dst, AsStrided(out, {n, ch, bh, bw}, {ch * plane, plane, *row_step,
                                                         w.stride[1]},
                                  out.storage_offset() + ki * *row_dilation + kj * w.dilation[1]));
        TENSORD_RETURN_IF_ERROR(c.Op1("add_", {dst, src}).status());
      }
    }
  } else if (cols.numel() > 0) {
    for (int64_t i = 0; i < bh; ++i) {
      TENSORD_ASSIGN_OR_RETURN(Tensor row, Select(cols, 4, i));  // (n, ch, kh, kw, bw)
      for (int64_t j = 0; j < bw; ++j) {
        TENSORD_ASSIGN_OR_RETURN(Tensor src, Select(row, 4, j));
        TENSORD_ASSIGN_OR_RETURN(
            Tensor dst, AsStrided(out, {n, ch, kh, kw}, {ch * plane, plane, *row_dilation,
                                                         w.dilation[1]},
                                  out.storage_offset() + i * *row_step + j * w.stride[1]));
        TENSORD_RETURN_IF_ERROR(c.Op1("add_", {dst, src}).status());
      }
    }
  }
  if (w.padding[0] == 0 && w.padding[1] == 0) return out;
  TENSORD_ASSIGN_OR_RETURN(Tensor rows, Narrow(out, 2, w.padding[0], oh));
  TENSORD_ASSIGN_OR_RETURN(Tensor inside, Narrow(rows, 3, w.padding[1], ow));
  return c.Contiguous(inside);
}

absl::StatusOr<Window> ReadWindow(AttrReader& a, bool with_kernel) {
  Window w;
  std::vector<std::tuple<const char*, int64_t, int64_t*>> params = {
      {"dilation", 1, w.dilation}, {"padding", 0, w.padding}, {"stride", 1, w.stride}};
  if (with_kernel) params.insert(params.begin(), {"kernel_size", 1, w.kernel});
  for (const auto& [name, dflt, dst] : params) {
    TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> v, PairParam(a, name, dflt));
    dst[0] = v[0], dst[1] = v[1];
  }
  return w;
}

// torch.nn.functional.unfold (im2col): (N, C, H, W) or (C, H, W) -> (N, C * kh * kw, L), every
// sliding block's elements as a column.
absl::StatusOr<PlannedOp> PlanUnfold(const Tensor& input, const Window& w) {
  constexpr absl::string_view op = "im2col";
  TENSORD_RETURN_IF_ERROR(CheckWindow(op, w));
  const int64_t nd = input.dim();
  const IntList s = input.sizes();
  if ((nd != 3 && nd != 4) || s[nd - 1] == 0 || s[nd - 2] == 0 || s[nd - 3] == 0) {
    return RuntimeError(op, absl::StrCat("Expected 3D or 4D (batch mode) tensor with possibly 0 "
                                         "batch size and other non-zero dimensions for input, "
                                         "but got: ", FormatList(s)));
  }
  const int64_t n = nd == 4 ? s[0] : 1, ch = s[nd - 3], h = s[nd - 2], wd = s[nd - 1];
  const std::optional<int64_t> blocks_h = Blocks(h, w, 0), blocks_w = Blocks(wd, w, 1);
  if (!blocks_h || !blocks_w) return RuntimeError(op, "the padded input size overflows int64");
  const int64_t bh = *blocks_h, bw = *blocks_w;
  if (bh < 1 || bw < 1) {
    // torch 1.13's message names the height twice (its im2col_shape_check prints it so).
    return RuntimeError(op, absl::StrCat("Given input with spatial size (", h, ", ", h,
                                         "), kernel_size=(", w.kernel[0], ", ", w.kernel[1],
                                         "), dilation=(", w.dilation[0], ", ", w.dilation[1],
                                         "), padding=(", w.padding[0], ", ", w.padding[1],
                                         "), calculated shape of the array of sliding blocks as (",
                                         bh, ", ", bw, "), but its components must be at least "
                                         "one."));
  }
  // torch's im2col and col2im take every floating type, float16 on the CPU too.
  if (!IsFloating(input.dtype())) return KernelNotImplemented(op, "im2col_out_cpu", input.dtype());
  Composition c({input});
  TENSORD_ASSIGN_OR_RETURN(Tensor x, View(input, {n, ch, h, wd}));
  if (w.padding[0] > 0 || w.padding[1] > 0) {
    TENSORD_ASSIGN_OR_RETURN(
        x, c.Op1("constant_pad_nd", {x},
                 Attrs().Set("pad", std::vector<int64_t>{w.padding[1], w.padding[1],
                                                         w.padding[0], w.padding[0]})));
  }
  const IntList st = x.strides();
  DimVector strides = {st[0], st[1]};
  for (auto [step, stride] :
       {std::make_pair(w.dilation[0], st[2]), std::make_pair(w.dilation[1], st[3]),
        std::make_pair(w.stride[0], st[2]), std::make_pair(w.stride[1], st[3])}) {
    const std::optional<int64_t> s = CheckedMul(step, stride);
    if (!s) return RuntimeError(op, "the window's strides overflow int64");
    strides.push_back(*s);
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor windows,
                           AsStrided(x, {n, ch, w.kernel[0], w.kernel[1], bh, bw}, strides,
                                     x.storage_offset()));
  TENSORD_ASSIGN_OR_RETURN(Tensor cols, c.Contiguous(windows));
  const std::optional<int64_t> rows = CheckedMul(ch, w.kernel[0] * w.kernel[1]);
  const std::optional<int64_t> length = CheckedMul(bh, bw);
  if (!rows || !length) return RuntimeError(op, "the columns' sizes overflow int64");
  DimVector shape = {*rows, *length};
  if (nd == 4) shape.insert(shape.begin(), n);
  TENSORD_ASSIGN_OR_RETURN(cols, View(cols, shape));
  return std::move(c).Finish({cols});
}

// torch.nn.functional.fold (col2im): (N, C * kh * kw, L) or (C * kh * kw, L) -> (N, C, oh, ow),
// overlapping blocks summed.
absl::StatusOr<PlannedOp> PlanFold(const Tensor& input, const std::vector<int64_t>& out_size,
                                   const Window& w) {
  constexpr absl::string_view op = "col2im";
  if (out_size.size() != 2) {
    return RuntimeError(op, absl::StrCat("It is expected output_size equals to 2, but got size ",
                                         out_size.size()));
  }
  if (out_size[0] <= 0 || out_size[1] <= 0) {
    return RuntimeError(op, absl::StrCat("output_size should be greater than zero, but got "
                                         "output_height: ", out_size[0], " output_width: ",
                                         out_size[1]));
  }
  TENSORD_RETURN_IF_ERROR(CheckWindow(op, w));
  const int64_t nd = input.dim();
  const IntList s = input.sizes();
  if ((nd != 2 && nd != 3) || s[nd - 1] == 0 || s[nd - 2] == 0) {
    return RuntimeError(op, absl::StrCat("Expected 2D or 3D (batch mode) tensor for input with "
                                         "possibly 0 batch size and non-zero dimensions for "
                                         "input, but got: ", FormatList(s)));
  }
  const int64_t kk = w.kernel[0] * w.kernel[1];
  const int64_t n = nd == 3 ? s[0] : 1, rows = s[nd - 2], length = s[nd - 1];
  if (rows % kk != 0) {
    return RuntimeError(op, absl::StrCat("Expected size of input's dimension 1 to be divisible "
                                         "by the product of kernel_size, but got input.size(1)=",
                                         rows, " and kernel_size=(", w.kernel[0], ", ",
                                         w.kernel[1], ")."));
  }
  const std::optional<int64_t> blocks_h = Blocks(out_size[0], w, 0);
  const std::optional<int64_t> blocks_w = Blocks(out_size[1], w, 1);
  if (!blocks_h || !blocks_w) return RuntimeError(op, "the padded output size overflows int64");
  const int64_t bh = *blocks_h, bw = *blocks_w;
  const std::optional<int64_t> blocks =
      bh < 1 || bw < 1 ? std::optional<int64_t>(0) : CheckedMul(bh, bw);
  if (bh < 1 || bw < 1 || blocks != length) {
    return RuntimeError(op, absl::StrCat("Given output_size=(", out_size[0], ", ", out_size[1],
                                         "), kernel_size=(", w.kernel[0], ", ", w.kernel[1],
                                         "), dilation=(", w.dilation[0], ", ", w.dilation[1],
                                         "), padding=(", w.padding[0], ", ", w.padding[1],
                                         "), stride=(", w.stride[0], ", ", w.stride[1],
                                         "), expected size of input's dimension 2 to match the "
                                         "calculated number of sliding blocks ", bh, " * ", bw,
                                         " = ", blocks.value_or(-1),
                                         ", but got input.size(2)=", length,
                                         "."));
  }
  if (!IsFloating(input.dtype())) return KernelNotImplemented(op, "col2im_out_cpu", input.dtype());
  const int64_t ch = rows / kk;
  Composition c({input});
  TENSORD_ASSIGN_OR_RETURN(Tensor cols, c.Contiguous(input));
  TENSORD_ASSIGN_OR_RETURN(cols, View(cols, {n, ch, w.kernel[0], w.kernel[1], bh, bw}));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, Col2Im(op, c, cols, n, ch, out_size[0], out_size[1], bh, bw, w));
  if (nd == 2) {
    TENSORD_ASSIGN_OR_RETURN(out, View(out, {ch, out_size[0], out_size[1]}));
  }
  return std::move(c).Finish({out});
}

// torch.nn.functional.conv_transpose2d: each input position scatters weight * value over its
// window of the output: columns weight^T @ input per group, summed into place by col2im.
absl::StatusOr<PlannedOp> PlanConvTranspose2d(const Tensor& input, const Tensor& weight,
                                              const Tensor& bias, const Window& w,
                                              const int64_t output_padding[2], int64_t groups) {
  constexpr absl::string_view op = "conv_transpose2d";
  if (input.dim() != 3 && input.dim() != 4) {
    return RuntimeError(op, absl::StrCat("Expected 3D (unbatched) or 4D (batched) input to "
                                         "conv_transpose2d, but got input of size: ",
                                         FormatList(input.sizes())));
  }
  if (weight.dim() != 4) {
    return RuntimeError(op, absl::StrCat("expected stride to be a single integer value or a "
                                         "list of ", weight.dim() - 2, " values to match the "
                                         "convolution dimensions, but got stride=",
                                         FormatList({w.stride[0], w.stride[1]})));
  }
  if (groups <= 0) return RuntimeError(op, "non-positive groups is not supported");
  if (w.padding[0] < 0 || w.padding[1] < 0) {
    return RuntimeError(op, "negative padding is not supported");
  }
  if (output_padding[0] < 0 || output_padding[1] < 0) {
    return RuntimeError(op, "negative output_padding is not supported");
  }
  if (w.stride[0] <= 0 || w.stride[1] <= 0) {
    return RuntimeError(op, "non-positive stride is not supported");
  }
  if (w.dilation[0] <= 0 || w.dilation[1] <= 0) {
    return RuntimeError(op, "non-positive dilation is not supported");
  }
  const bool batched = input.dim() == 4;
  DimVector in(input.sizes().begin(), input.sizes().end());
  if (!batched) in.insert(in.begin(), 1);
  const std::string wsizes = FormatList(weight.sizes());
  const int64_t cin = weight.size(0);
  TENSORD_ASSIGN_OR_RETURN(const int64_t cout,
                           CheckConvTransposeWeight(op, weight, bias, in, groups));
  for (int d = 0; d < 2; ++d) {
    if (output_padding[d] >= w.stride[d] && output_padding[d] >= w.dilation[d]) {
      return RuntimeError(op, absl::StrCat("output padding must be smaller than either stride "
                                           "or dilation, but got output_padding_height: ",
                                           output_padding[0], " output_padding_width: ",
                                           output_padding[1], " stride_height: ", w.stride[0],
                                           " stride_width: ", w.stride[1], " dilation_height: ",
                                           w.dilation[0], " dilation_width: ", w.dilation[1]));
    }
  }
  Window g = w;
  g.kernel[0] = weight.size(2), g.kernel[1] = weight.size(3);
  TENSORD_RETURN_IF_ERROR(CheckWindow(op, g));
  int64_t out_hw[2];
  for (int d = 0; d < 2; ++d) {
    // (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1
    const std::optional<int64_t> grown = CheckedMul(in[2 + d] - 1, g.stride[d]);
    const std::optional<int64_t> reach = CheckedMul(g.dilation[d], g.kernel[d] - 1);
    const std::optional<int64_t> sum =
        grown && reach ? CheckedAdd(*grown - 2 * g.padding[d], *reach) : std::nullopt;
    if (!sum) return RuntimeError(op, "the output size overflows int64");
    out_hw[d] = *sum + output_padding[d] + 1;  // output_padding < 2^31 (checked above)
  }
  if (out_hw[0] < 1 || out_hw[1] < 1) {
    return RuntimeError(op, absl::StrCat("Given input size per channel: (", in[2], " x ", in[3],
                                         "). Calculated output size per channel: (", out_hw[0],
                                         " x ", out_hw[1], "). Output size is too small"));
  }
  if (weight.numel() == 0) {
    return RuntimeError(op, absl::StrCat("non-empty 2D or 4D weight tensor expected, but got: ",
                                         wsizes));
  }
  TENSORD_ASSIGN_OR_RETURN(
      const ConvOperands operands,
      CheckConvOperands(op, "slow_conv_transpose2d_out_cpu", input, weight, bias));
  const int64_t n = in[0], h = in[2], wd = in[3], cg = cin / groups, og = weight.size(1);
  const int64_t kk = g.kernel[0] * g.kernel[1];
  Composition c(operands.tensors);
  TENSORD_ASSIGN_OR_RETURN(Tensor x, c.Contiguous(input));
  TENSORD_ASSIGN_OR_RETURN(x, View(x, {n, groups, cg, h * wd}));
  TENSORD_ASSIGN_OR_RETURN(Tensor wt, c.Contiguous(weight));
  TENSORD_ASSIGN_OR_RETURN(wt, View(wt, {groups, cg, og * kk}));
  TENSORD_ASSIGN_OR_RETURN(wt, Transpose(wt, 1, 2));
  TENSORD_ASSIGN_OR_RETURN(Tensor cols, c.Op1("matmul", {wt, x}));  // (n, groups, og*kk, h*w)
  TENSORD_ASSIGN_OR_RETURN(cols, c.Contiguous(cols));
  TENSORD_ASSIGN_OR_RETURN(cols, View(cols, {n, cout, g.kernel[0], g.kernel[1], h, wd}));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, Col2Im(op, c, cols, n, cout, out_hw[0], out_hw[1], h, wd, g));
  if (bias.defined()) {
    TENSORD_ASSIGN_OR_RETURN(Tensor b, View(bias, {1, cout, 1, 1}));
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("add_", {out, b}));
  }
  if (!batched) {
    TENSORD_ASSIGN_OR_RETURN(out, View(out, {cout, out_hw[0], out_hw[1]}));
  }
  return std::move(c).Finish({out});
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
  TENSORD_RETURN_IF_ERROR(CheckConvWeight(kOp, weight, bias, in_sizes, p.groups));
  const int64_t o = weight.size(0);
  ConvCall g;  // depth 1: dims 1 and 2 are the height and width
  g.batch = in_sizes[0], g.channels = in_sizes[1], g.size[1] = in_sizes[2];
  g.size[2] = in_sizes[3], g.out_channels = o, g.groups = p.groups;
  bool fits = true;
  int64_t padded[2], span[2];
  for (int d = 0; d < 2; ++d) {
    g.kernel[1 + d] = weight.size(2 + d), g.stride[1 + d] = p.stride[d];
    g.padding[1 + d] = p.padding[d], g.dilation[1 + d] = p.dilation[d];
    // padded = size + 2 * padding, span = dilation * (kernel - 1) + 1, overflow-checked.
    const std::optional<int64_t> pad2 = CheckedMul(p.padding[d], 2);
    const std::optional<int64_t> pd = pad2 ? CheckedAdd(in_sizes[2 + d], *pad2) : std::nullopt;
    const std::optional<int64_t> reach = CheckedMul(p.dilation[d], weight.size(2 + d) - 1);
    if (!pd || !reach || *reach == INT64_MAX) {
      return RuntimeError(kOp, "padding, dilation and kernel size overflow the input's extent");
    }
    padded[d] = *pd, span[d] = *reach + 1;
    if (padded[d] < span[d]) fits = false;
    g.out_size[1 + d] = fits ? (padded[d] - span[d]) / p.stride[d] + 1 : 0;
  }
  if (!fits) {
    return RuntimeError(kOp, absl::StrCat("Calculated padded input size per channel: (",
                                          padded[0], " x ", padded[1], "). Kernel size: (",
                                          span[0], " x ", span[1], "). Kernel size can't be "
                                          "greater than actual input size"));
  }
  TENSORD_ASSIGN_OR_RETURN(const ConvOperands operands,
                           CheckConvOperands(kOp, "slow_conv2d_cpu", input, weight, bias));
  const Device device = operands.device;
  const int64_t oh = g.out_size[1], ow = g.out_size[2];
  Composition c(operands.tensors);
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  Tensor out;
  if (device.is_cpu() && path == ConvPath::kDeviceDefault) {
    TENSORD_ASSIGN_OR_RETURN(out, KernelConv(c, kOp, input, weight, bias, g,
                                             {g.batch, o, oh, ow}, backend));
  } else {
    TENSORD_ASSIGN_OR_RETURN(Tensor x, c.Contiguous(input));
    TENSORD_ASSIGN_OR_RETURN(Tensor w, c.Contiguous(weight));
    TENSORD_ASSIGN_OR_RETURN(Tensor b, c.Contiguous(bias));
    TENSORD_ASSIGN_OR_RETURN(x, View(x, {g.batch, g.channels, g.size[1], g.size[2]}));
    TENSORD_ASSIGN_OR_RETURN(out, ComposedConv(c, x, w, b, g));
  }
  if (!batched) {
    TENSORD_ASSIGN_OR_RETURN(out, View(out, {o, oh, ow}));
  }
  return std::move(c).Finish({out});
}

absl::StatusOr<PlannedOp> PlanConv3d(const Tensor& input, const Tensor& weight,
                                     const Tensor& bias, const Conv3dParams& p, ConvPath path) {
  constexpr absl::string_view op = "conv3d";
  if (input.dim() != 4 && input.dim() != 5) {
    return RuntimeError(op, absl::StrCat("Expected 4D (unbatched) or 5D (batched) input to "
                                         "conv3d, but got input of size: ",
                                         FormatList(input.sizes())));
  }
  if (weight.dim() != 5) {
    return RuntimeError(op, absl::StrCat("expected stride to be a single integer value or a "
                                         "list of ", weight.dim() - 2, " values to match the "
                                         "convolution dimensions, but got stride=",
                                         FormatList(p.stride)));
  }
  if (p.groups <= 0) return RuntimeError(op, "non-positive groups is not supported");
  const bool batched = input.dim() == 5;
  DimVector in(input.sizes().begin(), input.sizes().end());
  if (!batched) in.insert(in.begin(), 1);
  for (int d = 0; d < 3; ++d) {
    if (p.padding[d] < 0) return RuntimeError(op, "negative padding is not supported");
  }
  for (int d = 0; d < 3; ++d) {
    if (p.stride[d] <= 0) return RuntimeError(op, "non-positive stride is not supported");
  }
  for (int d = 0; d < 3; ++d) {
    if (p.dilation[d] <= 0) return RuntimeError(op, "non-positive dilation is not supported");
  }
  TENSORD_RETURN_IF_ERROR(CheckConvWeight(op, weight, bias, in, p.groups));
  const int64_t o = weight.size(0);
  int64_t padded[3], span[3], out_size[3];
  bool fits = true;
  for (int d = 0; d < 3; ++d) {
    const std::optional<int64_t> pad2 = CheckedMul(p.padding[d], 2);
    const std::optional<int64_t> pd = pad2 ? CheckedAdd(in[2 + d], *pad2) : std::nullopt;
    const std::optional<int64_t> reach = CheckedMul(p.dilation[d], weight.size(2 + d) - 1);
    if (!pd || !reach || *reach == INT64_MAX) {
      return RuntimeError(op, "padding, dilation and kernel size overflow the input's extent");
    }
    padded[d] = *pd, span[d] = *reach + 1;
    if (padded[d] < span[d]) fits = false;
    out_size[d] = fits ? (padded[d] - span[d]) / p.stride[d] + 1 : 0;
  }
  if (!fits) {
    return RuntimeError(op, absl::StrCat("Calculated padded input size per channel: (",
                                         padded[0], " x ", padded[1], " x ", padded[2],
                                         "). Kernel size: (", span[0], " x ", span[1], " x ",
                                         span[2], "). Kernel size can't be greater than actual "
                                         "input size"));
  }
  TENSORD_ASSIGN_OR_RETURN(const ConvOperands operands,
                           CheckConvOperands(op, "compute_columns3d", input, weight, bias));
  const int64_t n = in[0], c_in = in[1], h = in[3], w = in[4];
  const int64_t od = out_size[0], oh = out_size[1], ow = out_size[2];
  DimVector out_shape = {n, o, od, oh, ow};
  TENSORD_ASSIGN_OR_RETURN(const int64_t out_numel, CheckShape(op, out_shape));
  Composition c(operands.tensors);
  if (out_numel == 0) {
    TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Full(out_shape, Scalar(int64_t{0}), input.dtype(),
                                                 operands.device));
    if (!batched) {
      TENSORD_ASSIGN_OR_RETURN(out, View(out, {o, od, oh, ow}));
    }
    return std::move(c).Finish({out});
  }
  if (operands.device.is_cpu() && path == ConvPath::kDeviceDefault) {
    ConvCall g;
    g.batch = n, g.channels = c_in, g.out_channels = o, g.groups = p.groups;
    for (int d = 0; d < 3; ++d) {
      g.size[d] = in[2 + d], g.kernel[d] = weight.size(2 + d), g.stride[d] = p.stride[d];
      g.padding[d] = p.padding[d], g.dilation[d] = p.dilation[d], g.out_size[d] = out_size[d];
    }
    TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(operands.device));
    TENSORD_ASSIGN_OR_RETURN(Tensor out,
                             KernelConv(c, op, input, weight, bias, g, out_shape, backend));
    if (!batched) {
      TENSORD_ASSIGN_OR_RETURN(out, View(out, {o, od, oh, ow}));
    }
    return std::move(c).Finish({out});
  }
  // Other devices: one conv2d over every output depth's planes for every kernel depth offset.
  TENSORD_ASSIGN_OR_RETURN(Tensor x, c.Contiguous(input));
  TENSORD_ASSIGN_OR_RETURN(x, View(x, {n, c_in, in[2], h, w}));
  if (p.padding[0] > 0) {  // depth padded here; height and width by each conv2d
    TENSORD_ASSIGN_OR_RETURN(
        x, c.Op1("constant_pad_nd", {x},
                 Attrs()
                     .Set("pad", std::vector<int64_t>{0, 0, 0, 0, p.padding[0], p.padding[0]})
                     .Set("value", Scalar(int64_t{0}))));
  }
  const Attrs conv2d = Attrs()
                           .Set("stride", std::vector<int64_t>{p.stride[1], p.stride[2]})
                           .Set("padding", std::vector<int64_t>{p.padding[1], p.padding[2]})
                           .Set("dilation", std::vector<int64_t>{p.dilation[1], p.dilation[2]})
                           .Set("groups", p.groups);
  // Every output depth's planes for every kernel depth offset k, stacked on the channels in the
  // weight's order per group: (n * od, groups * kd * C/groups, H, W) with plane
  // k * dilation + t * stride of channel c at (t, (g, k, c)); the weight as
  // (O, kd * C/groups, kh, kw) to match. One conv2d then sums over channels and depths alike.
  const int64_t kd = weight.size(2), cg = c_in / p.groups;
  TENSORD_RETURN_IF_ERROR(CheckShape(op, {n, od, kd, c_in, h, w}).status());
  // A stride (dilation) matters only past one output (kernel) depth, where it lies within the
  // padded input: the view's strides cannot overflow.
  const int64_t step = od > 1 ? p.stride[0] : 1, reach = kd > 1 ? p.dilation[0] : 1;
  const IntList st = x.strides();
  TENSORD_ASSIGN_OR_RETURN(
      Tensor planes,
      AsStrided(x, {n, od, p.groups, kd, cg, h, w},
                {st[0], st[2] * step, st[1] * cg, st[2] * reach, st[1], st[3], st[4]},
                x.storage_offset()));
  TENSORD_ASSIGN_OR_RETURN(planes, c.Reshape(planes, {n * od, p.groups * kd * cg, h, w}));
  TENSORD_ASSIGN_OR_RETURN(Tensor wk, Permute(weight, {0, 2, 1, 3, 4}));
  TENSORD_ASSIGN_OR_RETURN(wk, c.Reshape(wk, {o, kd * cg, weight.size(3), weight.size(4)}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor total, c.Op1("conv2d", {planes, wk, bias}, conv2d));
  // (n * od, O, oh, ow) -> (n, O, od, oh, ow), contiguous.
  TENSORD_ASSIGN_OR_RETURN(Tensor out, View(total, {n, od, o, oh, ow}));
  TENSORD_ASSIGN_OR_RETURN(out, Permute(out, {0, 2, 1, 3, 4}));
  TENSORD_ASSIGN_OR_RETURN(out, c.Contiguous(out));
  if (!batched) {
    TENSORD_ASSIGN_OR_RETURN(out, View(out, {o, od, oh, ow}));
  }
  return std::move(c).Finish({out});
}

// conv_transpose3d: per group, columns weight^T @ input (one product: (C/g, O/g * kd * kh * kw)^T
// by (C/g, D * H * W)), then each kernel offset's columns added into a strided view of the
// unpadded output (col2im in 3-d: kd * kh * kw in-place adds), the padding cropped. torch's
// checks in its order and words (Convolution.cpp's, then slow_conv_transpose3d's).
absl::StatusOr<PlannedOp> PlanConvTranspose3d(const Tensor& input, const Tensor& weight,
                                              const Tensor& bias, const Conv3dParams& p,
                                              const std::vector<int64_t>& output_padding) {
  constexpr absl::string_view op = "conv_transpose3d";
  if (input.dim() != 4 && input.dim() != 5) {
    return RuntimeError(op, absl::StrCat("Expected 4D (unbatched) or 5D (batched) input to "
                                         "conv_transpose3d, but got input of size: ",
                                         FormatList(input.sizes())));
  }
  if (weight.dim() != 5) {
    return RuntimeError(op, absl::StrCat("expected stride to be a single integer value or a "
                                         "list of ", weight.dim() - 2, " values to match the "
                                         "convolution dimensions, but got stride=",
                                         FormatList(p.stride)));
  }
  if (p.groups <= 0) return RuntimeError(op, "non-positive groups is not supported");
  for (int d = 0; d < 3; ++d) {
    if (p.padding[d] < 0) return RuntimeError(op, "negative padding is not supported");
  }
  for (int d = 0; d < 3; ++d) {
    if (output_padding[d] < 0) {
      return RuntimeError(op, "negative output_padding is not supported");
    }
  }
  for (int d = 0; d < 3; ++d) {
    if (p.stride[d] <= 0) return RuntimeError(op, "non-positive stride is not supported");
  }
  const bool batched = input.dim() == 5;
  DimVector in(input.sizes().begin(), input.sizes().end());
  if (!batched) in.insert(in.begin(), 1);
  const std::string wsizes = FormatList(weight.sizes());
  const int64_t cin = weight.size(0);
  TENSORD_ASSIGN_OR_RETURN(const int64_t cout,
                           CheckConvTransposeWeight(op, weight, bias, in, p.groups));
  for (int d = 0; d < 3; ++d) {
    if (p.dilation[d] <= 0) {
      return RuntimeError(op, absl::StrCat("dilation should be greater than zero, but got "
                                           "dilation_depth: ", p.dilation[0],
                                           ", dilation_height: ", p.dilation[1],
                                           ", dilation_width: ", p.dilation[2]));
    }
  }
  for (int d = 0; d < 3; ++d) {
    if (output_padding[d] >= p.stride[d] && output_padding[d] >= p.dilation[d]) {
      return RuntimeError(
          op, absl::StrCat("output padding must be smaller than either stride or dilation, but "
                           "got output_padding_depth: ", output_padding[0],
                           " output_padding_height: ", output_padding[1],
                           " output_padding_width: ", output_padding[2], " stride_depth: ",
                           p.stride[0], " stride_height: ", p.stride[1], " stride_width: ",
                           p.stride[2], " dilation_depth: ", p.dilation[0],
                           " dilation_height: ", p.dilation[1], " dilation_width: ",
                           p.dilation[2]));
    }
  }
  if (weight.numel() == 0) {
    return RuntimeError(op, absl::StrCat("non-empty 5D (n_output_plane x n_input_plane x "
                                         "kernel_depth x kernel_height x kernel_width) tensor "
                                         "expected for weight, but got: ", wsizes));
  }
  // full: the output before the padding is cropped, (size - 1) * stride + dilation *
  // (kernel - 1) + 1 + output_padding; out = full - 2 * padding.
  int64_t full[3], out[3];
  for (int d = 0; d < 3; ++d) {
    const std::optional<int64_t> grown = CheckedMul(in[2 + d] - 1, p.stride[d]);
    const std::optional<int64_t> reach = CheckedMul(p.dilation[d], weight.size(2 + d) - 1);
    const std::optional<int64_t> sum = grown && reach ? CheckedAdd(*grown, *reach) : std::nullopt;
    const std::optional<int64_t> total =
        sum ? CheckedAdd(*sum, output_padding[d] + 1) : std::nullopt;  // padding < stride
    const std::optional<int64_t> pad2 = CheckedMul(p.padding[d], 2);
    if (!total || !pad2) return RuntimeError(op, "the output size overflows int64");
    full[d] = *total;
    out[d] = *total - *pad2;
  }
  if (out[0] < 1 || out[1] < 1 || out[2] < 1) {
    return RuntimeError(op, absl::StrCat("Given input size per channel: (", in[2], " x ", in[3],
                                         " x ", in[4], "). Calculated output size per channel: (",
                                         out[0], " x ", out[1], " x ", out[2],
                                         "). Output size is too small"));
  }
  TENSORD_ASSIGN_OR_RETURN(
      const ConvOperands operands,
      CheckConvOperands(op, "slow_conv_transpose3d_out_cpu", input, weight, bias));
  if (operands.device.is_cpu() && input.dtype() == DType::kBFloat16) {
    // torch 1.13's CPU refuses it too (with a message about channels that does not apply).
    return KernelNotImplemented(op, "slow_conv_transpose3d_out_cpu", input.dtype());
  }
  const int64_t n = in[0], cg = cin / p.groups, og = weight.size(1);
  const int64_t kd = weight.size(2), kh = weight.size(3), kw = weight.size(4);
  const int64_t volume = in[2] * in[3] * in[4];
  DimVector out_shape = {n, cout, out[0], out[1], out[2]};
  TENSORD_RETURN_IF_ERROR(CheckShape(op, out_shape).status());
  TENSORD_RETURN_IF_ERROR(CheckShape(op, {n, cout, full[0], full[1], full[2]}).status());
  TENSORD_RETURN_IF_ERROR(CheckShape(op, {n, cout, kd, kh, kw, volume}).status());
  Composition c(operands.tensors);
  TENSORD_ASSIGN_OR_RETURN(Tensor buffer, c.Full({n, cout, full[0], full[1], full[2]},
                                                 Scalar(int64_t{0}), input.dtype(),
                                                 operands.device));
  if (n > 0 && volume > 0) {
    TENSORD_ASSIGN_OR_RETURN(Tensor x, c.Contiguous(input));
    TENSORD_ASSIGN_OR_RETURN(x, View(x, {n, p.groups, cg, volume}));
    TENSORD_ASSIGN_OR_RETURN(Tensor wt, c.Contiguous(weight));
    TENSORD_ASSIGN_OR_RETURN(wt, View(wt, {p.groups, cg, og * kd * kh * kw}));
    TENSORD_ASSIGN_OR_RETURN(wt, Transpose(wt, 1, 2));
    // (n, groups, og * kd * kh * kw, D * H * W): every kernel offset's contribution.
    TENSORD_ASSIGN_OR_RETURN(Tensor cols, c.Op1("matmul", {wt, x}));
    TENSORD_ASSIGN_OR_RETURN(cols, c.Contiguous(cols));
    TENSORD_ASSIGN_OR_RETURN(cols, View(cols, {n, cout, kd, kh, kw, in[2], in[3], in[4]}));
    const IntList bs = buffer.strides();
    // A stride (dilation) matters only past one input position (kernel offset), where it lies
    // within `full`: the view's strides cannot overflow.
    const int64_t step[3] = {in[2] > 1 ? p.stride[0] : 1, in[3] > 1 ? p.stride[1] : 1,
                             in[4] > 1 ? p.stride[2] : 1};
    for (int64_t a = 0; a < kd; ++a) {
      for (int64_t b = 0; b < kh; ++b) {
        for (int64_t e = 0; e < kw; ++e) {
          const int64_t offset = a * p.dilation[0] * bs[2] + b * p.dilation[1] * bs[3] +
                                 e * p.dilation[2] * bs[4];
          TENSORD_ASSIGN_OR_RETURN(
              const Tensor target,
              AsStrided(buffer, {n, cout, in[2], in[3], in[4]},
                        {bs[0], bs[1], bs[2] * step[0], bs[3] * step[1], bs[4] * step[2]},
                        buffer.storage_offset() + offset));
          TENSORD_ASSIGN_OR_RETURN(Tensor part, Select(cols, 2, a));
          TENSORD_ASSIGN_OR_RETURN(part, Select(part, 2, b));
          TENSORD_ASSIGN_OR_RETURN(part, Select(part, 2, e));
          TENSORD_RETURN_IF_ERROR(c.Op("add_", {target, part}).status());
        }
      }
    }
  }
  TENSORD_ASSIGN_OR_RETURN(
      Tensor result,
      AsStrided(buffer, out_shape, buffer.strides(),
                buffer.storage_offset() + p.padding[0] * buffer.stride(2) +
                    p.padding[1] * buffer.stride(3) + p.padding[2] * buffer.stride(4)));
  TENSORD_ASSIGN_OR_RETURN(result, c.Contiguous(result));
  if (bias.defined()) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor b, View(bias, {1, cout, 1, 1, 1}));
    TENSORD_ASSIGN_OR_RETURN(result, c.Op1("add_", {result, b}));
  }
  if (!batched) {
    TENSORD_ASSIGN_OR_RETURN(result, View(result, {cout, out[0], out[1], out[2]}));
  }
  return std::move(c).Finish({result});
}

void RegisterConvOps(std::vector<OpDef>& ops) {
  OpDef def{"conv2d", OpKind::kCompute, {"input", "weight", "bias"},
            {Opt("stride", AttrType::kIntOrIntList, "1", "an int or (sh, sw)"),
             Opt("padding", AttrType::kIntOrIntList, "0", "an int or (ph, pw): zeros each side"),
             Opt("dilation", AttrType::kIntOrIntList, "1", "an int or (dh, dw)"),
             Opt("groups", AttrType::kInt, "1")},
            "torch.nn.functional.conv2d (cross-correlation) of a (N, C, H, W) or (C, H, W) "
            "input with (O, C / groups, kh, kw) weights and an optional (O) bias; the result is "
            "channels_last where the input or the weight suggests it, else contiguous.",
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
  def.output_format = OutputFormat::kChannelsLastLikeInputOrWeight;
  ops.push_back(std::move(def));
  OpDef conv3d{"conv3d", OpKind::kCompute, {"input", "weight", "bias"},
               {Opt("stride", AttrType::kIntOrIntList, "1", "an int or (sd, sh, sw)"),
                Opt("padding", AttrType::kIntOrIntList, "0", "an int or (pd, ph, pw)"),
                Opt("dilation", AttrType::kIntOrIntList, "1", "an int or (dd, dh, dw)"),
                Opt("groups", AttrType::kInt, "1")},
               "torch.nn.functional.conv3d of a (N, C, D, H, W) or (C, D, H, W) input with "
               "(O, C / groups, kd, kh, kw) weights and an optional (O) bias (the CPU's "
               "convolution kernel; elsewhere one conv2d over the output depths as a batch and "
               "the kernel's depths as channels); contiguous.",
               false,
               [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                 Conv3dParams p;
                 TENSORD_ASSIGN_OR_RETURN(p.stride, NParam(a, "stride", 1, 3, "conv3d"));
                 TENSORD_ASSIGN_OR_RETURN(p.padding, NParam(a, "padding", 0, 3, "conv3d"));
                 TENSORD_ASSIGN_OR_RETURN(p.dilation, NParam(a, "dilation", 1, 3, "conv3d"));
                 TENSORD_ASSIGN_OR_RETURN(p.groups, a.Int("groups", 1));
                 return PlanConv3d(in[0], in[1], in[2], p);
               }};
  conv3d.scalar_inputs = {"bias"};
  conv3d.optional_inputs = {"bias"};
  ops.push_back(std::move(conv3d));
  OpDef transposed3d{
      "conv_transpose3d", OpKind::kCompute, {"input", "weight", "bias"},
      {Opt("stride", AttrType::kIntOrIntList, "1", "an int or (sd, sh, sw)"),
       Opt("padding", AttrType::kIntOrIntList, "0", "an int or (pd, ph, pw)"),
       Opt("output_padding", AttrType::kIntOrIntList, "0", "an int or three"),
       Opt("groups", AttrType::kInt, "1"),
       Opt("dilation", AttrType::kIntOrIntList, "1", "an int or (dd, dh, dw)")},
      "torch.nn.functional.conv_transpose3d of a (N, C, D, H, W) or (C, D, H, W) input with "
      "(C, O / groups, kd, kh, kw) weights and an optional (O) bias; the result is contiguous.",
      false,
      [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
        constexpr absl::string_view name = "conv_transpose3d";
        Conv3dParams p;
        TENSORD_ASSIGN_OR_RETURN(p.stride, NParam(a, "stride", 1, 3, name));
        TENSORD_ASSIGN_OR_RETURN(p.padding, NParam(a, "padding", 0, 3, name));
        TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> output_padding,
                                 NParam(a, "output_padding", 0, 3, name));
        TENSORD_ASSIGN_OR_RETURN(p.dilation, NParam(a, "dilation", 1, 3, name));
        TENSORD_ASSIGN_OR_RETURN(p.groups, a.Int("groups", 1));
        return PlanConvTranspose3d(in[0], in[1], in[2], p, output_padding);
      }};
  transposed3d.scalar_inputs = {"bias"};
  transposed3d.optional_inputs = {"bias"};
  ops.push_back(std::move(transposed3d));

  const AttrSpec dilation = Opt("dilation", AttrType::kIntOrIntList, "1", "an int or (dh, dw)");
  const AttrSpec padding = Opt("padding", AttrType::kIntOrIntList, "0", "an int or (ph, pw)");
  const AttrSpec stride = Opt("stride", AttrType::kIntOrIntList, "1", "an int or (sh, sw)");
  const AttrSpec kernel = Req("kernel_size", AttrType::kIntOrIntList, "an int or (kh, kw)");
  ops.push_back({"im2col", OpKind::kCompute, {"self"}, {kernel, dilation, padding, stride},
                 "torch.nn.functional.unfold: every sliding block of (N, C, H, W) or (C, H, W) "
                 "as a column of (N, C * kh * kw, L).",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Window w, ReadWindow(a, true));
                   return PlanUnfold(in[0], w);
                 }});
  ops.push_back({"col2im", OpKind::kCompute, {"self"},
                 {Req("output_size", AttrType::kIntOrIntList, "(oh, ow)"), kernel, dilation,
                  padding, stride},
                 "torch.nn.functional.fold: columns (N, C * kh * kw, L) summed into their "
                 "sliding blocks of (N, C, oh, ow).",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Window w, ReadWindow(a, true));
                   bool was_list = false;
                   TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> size,
                                            a.IntOrIntList("output_size", &was_list));
                   if (size.size() == 1) size.push_back(size[0]);
                   return PlanFold(in[0], size, w);
                 }});
  OpDef transposed{
      "conv_transpose2d", OpKind::kCompute, {"input", "weight", "bias"},
      {stride, padding, Opt("output_padding", AttrType::kIntOrIntList, "0", "an int or two"),
       Opt("groups", AttrType::kInt, "1"), dilation},
      "torch.nn.functional.conv_transpose2d of a (N, C, H, W) or (C, H, W) input with "
      "(C, O / groups, kh, kw) weights and an optional (O) bias; the result is contiguous.",
      false,
      [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
        TENSORD_ASSIGN_OR_RETURN(Window w, ReadWindow(a, false));
        TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> op, PairParam(a, "output_padding", 0));
        TENSORD_ASSIGN_OR_RETURN(int64_t groups, a.Int("groups", 1));
        const int64_t output_padding[2] = {op[0], op[1]};
        return PlanConvTranspose2d(in[0], in[1], in[2], w, output_padding, groups);
      }};
  transposed.scalar_inputs = {"bias"};
  transposed.optional_inputs = {"bias"};
  ops.push_back(std::move(transposed));
}

}  // namespace tensord::engine
