// Pooling: max_pool2d (values, or values and indices) and avg_pool2d, with torch 1.13's argument
// rules and messages (Pool.h's pooling_output_shape and pool2d_shape_check). Planned as a
// composition: the input padded where a window reaches past it (-inf for max, 0 for avg), every
// window a strided view of it, and one reduction over the window dims; avg_pool2d's divisor per
// output position, and max_pool2d's indices from the argmax inside each window. Every device
// runs them with the kernels it has.
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/checked_math.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/tensor/tensor_meta.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

struct Pool2d {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil_mode;
  int64_t n, c, h, w, oh, ow;  // the input as (n, c, h, w) and the output's spatial sizes
  bool batched;
};

// torch's pooling_output_shape: floor (or ceil) of the span over the stride, plus one; in ceil
// mode the last window must start inside the input or its left padding.
int64_t OutputSize(int64_t size, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                   bool ceil_mode) {
  const int64_t span = size + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= size + pad) --out;
  return out;
}

absl::StatusOr<std::pair<int64_t, int64_t>> Pair(absl::string_view op, absl::string_view name,
                                                 const std::vector<int64_t>& v, bool may_omit,
                                                 int64_t h_default, int64_t w_default) {
  if (v.empty() && may_omit) return std::make_pair(h_default, w_default);
  if (v.size() == 1) return std::make_pair(v[0], v[0]);
  if (v.size() == 2) return std::make_pair(v[0], v[1]);
  return RuntimeError(op, absl::StrCat(op, ": ", name,
                                       may_omit ? " must either be omitted, a single int, or a "
                                                  "tuple of two ints"
                                                : " must either be a single int, or a tuple of "
                                                  "two ints"));
}

absl::StatusOr<Pool2d> Geometry(absl::string_view op, const Tensor& input, AttrReader& a,
                                bool has_dilation) {
  TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, a.IntList("kernel_size"));
  std::vector<int64_t> stride, padding = {0}, dilation = {1};
  if (a.Has("stride")) {
    TENSORD_ASSIGN_OR_RETURN(stride, a.IntList("stride"));
  }
  if (a.Has("padding")) {
    TENSORD_ASSIGN_OR_RETURN(padding, a.IntList("padding"));
  }
  if (has_dilation && a.Has("dilation")) {
    TENSORD_ASSIGN_OR_RETURN(dilation, a.IntList("dilation"));
  }
  Pool2d g;
  TENSORD_ASSIGN_OR_RETURN(g.ceil_mode, a.Bool("ceil_mode", false));
  TENSORD_ASSIGN_OR_RETURN(auto k, Pair(op, "kernel_size", kernel, false, 0, 0));
  TENSORD_ASSIGN_OR_RETURN(auto s, Pair(op, "stride", stride, true, k.first, k.second));
  TENSORD_ASSIGN_OR_RETURN(auto p, Pair(op, "padding", padding, false, 0, 0));
  TENSORD_ASSIGN_OR_RETURN(auto d, Pair(op, "dilation", dilation, false, 1, 1));
  g.kh = k.first, g.kw = k.second, g.sh = s.first, g.sw = s.second;
  g.ph = p.first, g.pw = p.second, g.dh = d.first, g.dw = d.second;
  if (input.dim() != 3 && input.dim() != 4) {
    return RuntimeError(op, "non-empty 3D or 4D (batch mode) tensor expected for input");
  }
  g.batched = input.dim() == 4;
  const IntList sz = input.sizes();
  g.n = g.batched ? sz[0] : 1;
  g.c = sz[sz.size() - 3], g.h = sz[sz.size() - 2], g.w = sz[sz.size() - 1];
  // pooling_output_shape's checks, then pool2d_shape_check's, in torch's order.
  if (g.sh == 0 || g.sw == 0) return RuntimeError(op, "stride should not be zero");
  if (g.ph < 0 || g.pw < 0) {
    return RuntimeError(op, absl::StrCat("pad must be non-negative, but got pad: ",
                                         g.ph < 0 ? g.ph : g.pw));
  }
  for (auto [pad, kern] : {std::make_pair(g.ph, g.kh), std::make_pair(g.pw, g.kw)}) {
    if (pad > kern / 2) {
      return RuntimeError(op, absl::StrCat("pad should be at most half of kernel size, but got "
                                           "pad=", pad, " and kernel_size=", kern));
    }
  }
  if (g.kh <= 0 || g.kw <= 0) {
    return RuntimeError(op, absl::StrCat("kernel size should be greater than zero, but got kH: ",
                                         g.kh, " kW: ", g.kw));
  }
  if (g.sh < 0 || g.sw < 0) {
    return RuntimeError(op, absl::StrCat("stride should be greater than zero, but got dH: ",
                                         g.sh, " dW: ", g.sw));
  }
  if (g.dh <= 0 || g.dw <= 0) {
    return RuntimeError(op, absl::StrCat("dilation should be greater than zero, but got "
                                         "dilationH: ", g.dh, " dilationW: ", g.dw));
  }
  for (int64_t v : {g.kh, g.kw, g.sh, g.sw, g.dh, g.dw}) {
    if (v > (int64_t{1} << 31)) {
      return RuntimeError(op, absl::StrCat("window argument ", v, " is out of range"));
    }
  }
  if (g.c == 0 || g.h == 0 || g.w == 0 || (!g.batched && g.n == 0)) {
    return RuntimeError(op, absl::StrCat("Expected 3D or 4D (batch mode) tensor with optional 0 "
                                         "dim batch size for input, but got:",
                                         FormatList(sz)));
  }
  g.oh = OutputSize(g.h, g.kh, g.ph, g.sh, g.dh, g.ceil_mode);
  g.ow = OutputSize(g.w, g.kw, g.pw, g.sw, g.dw, g.ceil_mode);
  if (g.oh < 1 || g.ow < 1) {
    return RuntimeError(op, absl::StrCat("Given input size: (", g.c, "x", g.h, "x", g.w,
                                         "). Calculated output size: (", g.c, "x", g.oh, "x",
                                         g.ow, "). Output size is too small"));
  }
  return g;
}

// Every window of `x` (n, c, h, w), padded with `fill` where a window reaches past it, as the
// view (n, c, kh, kw, oh, ow).
absl::StatusOr<Tensor> Windows(Composition& c, const Pool2d& g, const Tensor& x,
                               const Scalar& fill) {
  const int64_t need_h = (g.oh - 1) * g.sh + g.dh * (g.kh - 1) + 1;
  const int64_t need_w = (g.ow - 1) * g.sw + g.dw * (g.kw - 1) + 1;
  const int64_t bottom = std::max<int64_t>(need_h - g.h - g.ph, 0);
  const int64_t right = std::max<int64_t>(need_w - g.w - g.pw, 0);
  Tensor p = x;
  if (g.ph > 0 || g.pw > 0 || bottom > 0 || right > 0) {
    TENSORD_ASSIGN_OR_RETURN(
        p, c.Op1("constant_pad_nd", {x},
                 Attrs()
                     .Set("pad", std::vector<int64_t>{g.pw, right, g.ph, bottom})
                     .Set("value", fill)));
  }
  const IntList st = p.strides();
  DimVector strides = {st[0], st[1]};
  for (auto [step, stride] : {std::make_pair(g.dh, st[2]), std::make_pair(g.dw, st[3]),
                              std::make_pair(g.sh, st[2]), std::make_pair(g.sw, st[3])}) {
    const std::optional<int64_t> s = CheckedMul(step, stride);
    if (!s) return RuntimeError("pool", "the window's strides overflow int64");
    strides.push_back(*s);
  }
  return AsStrided(p, {g.n, g.c, g.kh, g.kw, g.oh, g.ow}, strides, p.storage_offset());
}

absl::StatusOr<Tensor> Batched(const Pool2d& g, const Tensor& input) {
  return g.batched ? input : Unsqueeze(input, 0);
}
absl::StatusOr<Tensor> Unbatched(const Pool2d& g, const Tensor& out) {
  return g.batched ? out : SqueezeDim(out, 0);
}

// An arange of n positions times `step` plus `start`, as int64, shaped `shape`.
absl::StatusOr<Tensor> Positions(Composition& c, int64_t n, int64_t step, int64_t start,
                                 IntList shape, const Device& device) {
  TENSORD_ASSIGN_OR_RETURN(Tensor range, c.Arange(Scalar(start), Scalar(start + n * step),
                                                    Scalar(step), DType::kInt64, device));
  return View(range, shape);
}

absl::StatusOr<PlannedOp> PlanMaxPool2d(absl::string_view op, const Tensor& input, AttrReader& a,
                                        bool with_indices) {
  TENSORD_ASSIGN_OR_RETURN(const Pool2d g, Geometry(op, input, a, true));
  const DType dtype = input.dtype();
  TENSORD_RETURN_IF_ERROR(CheckFloatingKernel(op, "max_pool2d", dtype, input.device()));
  Composition c({input});
  TENSORD_ASSIGN_OR_RETURN(const Tensor x, Batched(g, input));
  TENSORD_ASSIGN_OR_RETURN(
      const Tensor win,
      Windows(c, g, x, Scalar(-std::numeric_limits<double>::infinity())));
  if (!with_indices) {
    TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Op1("amax", {win}, Attrs().Set(
                                                                  "dim", std::vector<int64_t>{2, 3})));
    TENSORD_ASSIGN_OR_RETURN(out, c.Contiguous(out));
    TENSORD_ASSIGN_OR_RETURN(out, Unbatched(g, out));
    return std::move(c).Finish({out});
  }
  // The windows laid out (n, c, oh, ow, kh * kw): the max and where in the window it is.
  TENSORD_ASSIGN_OR_RETURN(Tensor flat, Permute(win, {0, 1, 4, 5, 2, 3}));
  TENSORD_ASSIGN_OR_RETURN(flat, c.Reshape(flat, {g.n, g.c, g.oh, g.ow, g.kh * g.kw}));
  TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> mx,
                           c.Op("max.dim", {flat}, Attrs().Set("dim", int64_t{-1})));
  TENSORD_ASSIGN_OR_RETURN(const Tensor kw, WrapNumber(Scalar(g.kw)));
  TENSORD_ASSIGN_OR_RETURN(Tensor ki, c.Op1("floor_divide", {mx[1], kw}));
  TENSORD_ASSIGN_OR_RETURN(Tensor kj, c.Op1("remainder", {mx[1], kw}));
  // The input row and column of each max: window start plus its offset, dilated.
  TENSORD_ASSIGN_OR_RETURN(const Tensor dh, WrapNumber(Scalar(g.dh)));
  TENSORD_ASSIGN_OR_RETURN(const Tensor dw, WrapNumber(Scalar(g.dw)));
  TENSORD_ASSIGN_OR_RETURN(const Tensor rows0,
                           Positions(c, g.oh, g.sh, -g.ph, {g.oh, 1}, input.device()));
  TENSORD_ASSIGN_OR_RETURN(const Tensor cols0,
                           Positions(c, g.ow, g.sw, -g.pw, {1, g.ow}, input.device()));
  TENSORD_ASSIGN_OR_RETURN(ki, c.Op1("mul", {ki, dh}));
  TENSORD_ASSIGN_OR_RETURN(Tensor rows, c.Op1("add", {ki, rows0}));
  TENSORD_ASSIGN_OR_RETURN(kj, c.Op1("mul", {kj, dw}));
  TENSORD_ASSIGN_OR_RETURN(Tensor cols, c.Op1("add", {kj, cols0}));
  // A window of -inf only: its max is the padding's first -inf; torch names the window's first
  // position inside the input.
  const auto inside = [&](const Tensor& t, int64_t size) {
    return c.Op1("clamp", {t}, Attrs().Set("min", Scalar(int64_t{0})).Set("max",
                                                                         Scalar(size - 1)));
  };
  TENSORD_ASSIGN_OR_RETURN(rows, inside(rows, g.h));
  TENSORD_ASSIGN_OR_RETURN(cols, inside(cols, g.w));
  TENSORD_ASSIGN_OR_RETURN(const Tensor width, WrapNumber(Scalar(g.w)));
  TENSORD_ASSIGN_OR_RETURN(rows, c.Op1("mul", {rows, width}));
  TENSORD_ASSIGN_OR_RETURN(Tensor index, c.Op1("add", {rows, cols}));
  TENSORD_ASSIGN_OR_RETURN(Tensor values, Unbatched(g, mx[0]));
  TENSORD_ASSIGN_OR_RETURN(index, Unbatched(g, index));
  return std::move(c).Finish({values, index});
}

absl::StatusOr<PlannedOp> PlanAvgPool2d(const Tensor& input, AttrReader& a) {
  constexpr absl::string_view op = "avg_pool2d";
  TENSORD_ASSIGN_OR_RETURN(const Pool2d g, Geometry(op, input, a, false));
  TENSORD_ASSIGN_OR_RETURN(const bool count_include_pad, a.Bool("count_include_pad", true));
  TENSORD_ASSIGN_OR_RETURN(const std::optional<int64_t> divisor,
                           a.OptionalInt("divisor_override"));
  if (divisor.has_value() && *divisor == 0) {
    return RuntimeError(op, "divisor must be not zero");
  }
  const DType dtype = input.dtype();
  // torch's kernels: floating types (float16 off the CPU) and int64.
  if ((!IsFloating(dtype) && dtype != DType::kInt64) ||
      (input.device().is_cpu() && dtype == DType::kFloat16)) {
    return KernelNotImplemented(op, "avg_pool2d", dtype);
  }
  Composition c({input});
  TENSORD_ASSIGN_OR_RETURN(const Tensor x, Batched(g, input));
  TENSORD_ASSIGN_OR_RETURN(const Tensor win, Windows(c, g, x, Scalar(int64_t{0})));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor total,
      c.Op1("sum", {win}, Attrs().Set("dim", std::vector<int64_t>{2, 3}).Set("dtype", dtype)));
  // Integers divide as torch's kernel does, truncating; floating types divide exactly.
  Attrs div;
  if (!IsFloating(dtype)) div.Set("rounding_mode", int64_t{1});
  Tensor count;
  if (divisor.has_value() || (count_include_pad && !g.ceil_mode)) {
    TENSORD_ASSIGN_OR_RETURN(count, WrapNumber(Scalar(divisor.value_or(g.kh * g.kw))));
  } else {
    // Each window's extent, clipped to the padded input (and to the input itself when padding
    // does not count).
    const Device device = input.device();
    TENSORD_ASSIGN_OR_RETURN(Tensor hs, Positions(c, g.oh, g.sh, -g.ph, {g.oh}, device));
    TENSORD_ASSIGN_OR_RETURN(Tensor ws, Positions(c, g.ow, g.sw, -g.pw, {g.ow}, device));
    const auto extent = [&](const Tensor& start, int64_t k, int64_t size,
                            int64_t pad) -> absl::StatusOr<Tensor> {
      TENSORD_ASSIGN_OR_RETURN(const Tensor kk, WrapNumber(Scalar(k)));
      TENSORD_ASSIGN_OR_RETURN(Tensor end, c.Op1("add", {start, kk}));
      TENSORD_ASSIGN_OR_RETURN(end, c.Op1("clamp_max", {end}, Attrs().Set("max",
                                                                          Scalar(size + pad))));
      Tensor begin = start;
      if (!count_include_pad) {
        TENSORD_ASSIGN_OR_RETURN(end, c.Op1("clamp_max", {end}, Attrs().Set("max",
                                                                            Scalar(size))));
        TENSORD_ASSIGN_OR_RETURN(begin, c.Op1("clamp_min", {start},
                                              Attrs().Set("min", Scalar(int64_t{0}))));
      }
      return c.Op1("sub", {end, begin});
    };
    TENSORD_ASSIGN_OR_RETURN(Tensor eh, extent(hs, g.kh, g.h, g.ph));
    TENSORD_ASSIGN_OR_RETURN(Tensor ew, extent(ws, g.kw, g.w, g.pw));
    TENSORD_ASSIGN_OR_RETURN(eh, View(eh, {g.oh, 1}));
    TENSORD_ASSIGN_OR_RETURN(count, c.Op1("mul", {eh, ew}));
    TENSORD_ASSIGN_OR_RETURN(count, c.ToDType(count, dtype));
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Op1("div", {total, count}, div));
  TENSORD_ASSIGN_OR_RETURN(out, c.Contiguous(out));
  TENSORD_ASSIGN_OR_RETURN(out, Unbatched(g, out));
  return std::move(c).Finish({out});
}

// ---- Adaptive pooling: output position i of a dim of size L pools the bin
// [floor(i L / o), ceil((i + 1) L / o)). Bins differ in length by at most one element and may
// overlap, so each dim is gathered into (o, K) with K the longest bin, positions past a bin's
// end repeating its last element (which changes no max) and masked out of sums.

struct Bins {
  int64_t in, out, k;  // L, o and the longest bin
  Tensor starts, ends;  // int64 (o, 1)
  Tensor index;         // int64 (o * K): the gathered positions
  Tensor mask;          // bool (o, K): which gathered positions lie in their bin
};

absl::StatusOr<Bins> MakeBins(absl::string_view op, Composition& c, int64_t in, int64_t out,
                              const Device& device) {
  Bins b;
  b.in = in, b.out = out;
  // A bin spans at most ceil(L / o) + 1 elements (exactly L / o when o divides L); an upper
  // bound is enough: the extra positions are masked.
  b.k = in % out == 0 ? in / out : in / out + 2;
  if (!CheckedMul(out + 1, in) || !CheckedMul(out, b.k)) {
    return RuntimeError(op, absl::StrCat("output_size ", out, " for an input size of ", in,
                                         " overflows int64"));
  }
  TENSORD_ASSIGN_OR_RETURN(const Tensor i, Positions(c, out, 1, 0, {out, 1}, device));
  TENSORD_ASSIGN_OR_RETURN(const Tensor j, Positions(c, b.k, 1, 0, {1, b.k}, device));
  const auto number = [](int64_t v) { return WrapNumber(Scalar(v)); };
  TENSORD_ASSIGN_OR_RETURN(const Tensor len, number(in));
  TENSORD_ASSIGN_OR_RETURN(const Tensor bins, number(out));
  TENSORD_ASSIGN_OR_RETURN(const Tensor one, number(1));
  TENSORD_ASSIGN_OR_RETURN(Tensor scaled, c.Op1("mul", {i, len}));
  TENSORD_ASSIGN_OR_RETURN(b.starts, c.Op1("floor_divide", {scaled, bins}));
  TENSORD_ASSIGN_OR_RETURN(Tensor next, c.Op1("add", {i, one}));
  TENSORD_ASSIGN_OR_RETURN(next, c.Op1("mul", {next, len}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor round_up, number(out - 1));
  TENSORD_ASSIGN_OR_RETURN(next, c.Op1("add", {next, round_up}));
  TENSORD_ASSIGN_OR_RETURN(b.ends, c.Op1("floor_divide", {next, bins}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor at, c.Op1("add", {b.starts, j}));
  TENSORD_ASSIGN_OR_RETURN(b.mask, c.Op1("lt", {at, b.ends}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor last, c.Op1("sub", {b.ends, one}));
  TENSORD_ASSIGN_OR_RETURN(Tensor index, c.Op1("minimum", {at, last}));
  TENSORD_ASSIGN_OR_RETURN(b.index, c.Reshape(index, {out * b.k}));
  return b;
}

// x with dim `dim` (of size bins.in) replaced by (bins.out, bins.k): every bin's elements.
absl::StatusOr<Tensor> Gather(Composition& c, const Tensor& x, int64_t dim, const Bins& bins) {
  TENSORD_ASSIGN_OR_RETURN(Tensor g, c.Op1("index_select", {x, bins.index},
                                           Attrs().Set("dim", dim)));
  return Unflatten(g, dim, {bins.out, bins.k});
}

// The bins' mean along `dim` (gathered (o, K) at dim, dim + 1): masked sum over the length.
absl::StatusOr<Tensor> BinMean(Composition& c, const Tensor& g, int64_t dim, const Bins& bins) {
  DimVector shape(g.dim(), 1);
  shape[dim] = bins.out, shape[dim + 1] = bins.k;
  TENSORD_ASSIGN_OR_RETURN(const Tensor mask, View(bins.mask, shape));
  TENSORD_ASSIGN_OR_RETURN(const Tensor zero, WrapNumber(Scalar(int64_t{0})));
  TENSORD_ASSIGN_OR_RETURN(Tensor kept, c.Op1("where", {mask, g, zero}));
  TENSORD_ASSIGN_OR_RETURN(Tensor sum, c.Op1("sum", {kept}, Attrs().Set("dim", dim + 1)));
  TENSORD_ASSIGN_OR_RETURN(Tensor length, c.Op1("sub", {bins.ends, bins.starts}));
  TENSORD_ASSIGN_OR_RETURN(length, c.ToDType(length, g.dtype()));
  shape.erase(shape.begin() + dim + 1);
  shape[dim] = bins.out;
  TENSORD_ASSIGN_OR_RETURN(length, View(length, shape));
  return c.Op1("div", {sum, length});
}

absl::StatusOr<PlannedOp> PlanAdaptivePool2d(absl::string_view op, const Tensor& input,
                                             AttrReader& a, bool max, bool with_indices) {
  bool was_list = false;
  TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> size, a.IntOrIntList("output_size", &was_list));
  if (size.size() == 1) size.push_back(size[0]);
  if (size.size() != 2) return RuntimeError(op, absl::StrCat(op, ": output_size must be 2"));
  if (size[0] < 0 || size[1] < 0) {
    return RuntimeError(op, absl::StrCat(op, ": elements of output_size must be greater than "
                                             "or equal to 0 but received {", size[0], ", ",
                                         size[1], "}"));
  }
  if (input.dim() != 3 && input.dim() != 4) {
    return RuntimeError(op, absl::StrCat(op, "(): Expected 3D or 4D tensor, but got ",
                                         FormatList(input.sizes())));
  }
  const int64_t nd = input.dim();
  for (int64_t d = 1; d < nd; ++d) {
    if (input.sizes()[d] == 0 && (max || d >= nd - 2)) {
      return RuntimeError(op, absl::StrCat(op, "(): Expected input to have non-zero size for "
                                               "non-batch dimensions, but input has sizes ",
                                           FormatList(input.sizes()), " with dimension ", d,
                                           " being empty"));
    }
  }
  const DType dtype = input.dtype();
  TENSORD_RETURN_IF_ERROR(CheckFloatingKernel(
      op, max ? "adaptive_max_pool2d" : "adaptive_avg_pool2d", dtype, input.device()));
  DimVector out_shape(input.sizes().begin(), input.sizes().end());
  out_shape[nd - 2] = size[0], out_shape[nd - 1] = size[1];
  Composition c({input});
  TENSORD_ASSIGN_OR_RETURN(const int64_t numel, CheckShape(op, out_shape));
  if (numel == 0 || input.numel() == 0) {  // nothing to pool: empty outputs
    TENSORD_ASSIGN_OR_RETURN(
        Tensor values, AllocateTensor(op, TensorMeta::Contiguous(dtype, out_shape),
                                      input.device()));
    std::vector<Tensor> outs = {values};
    if (with_indices) {
      TENSORD_ASSIGN_OR_RETURN(
          Tensor index, AllocateTensor(op, TensorMeta::Contiguous(DType::kInt64, out_shape),
                                       input.device()));
      outs.push_back(index);
    }
    return std::move(c).Finish(outs);
  }
  const int64_t h = input.sizes()[nd - 2], w = input.sizes()[nd - 1];
  if (!max && h % size[0] == 0 && w % size[1] == 0) {
    // Equal bins (global average pooling among them): one mean over (…, oh, h/oh, ow, w/ow).
    DimVector split(input.sizes().begin(), input.sizes().end() - 2);
    for (int64_t v : {size[0], h / size[0], size[1], w / size[1]}) split.push_back(v);
    TENSORD_ASSIGN_OR_RETURN(const Tensor binned, c.Reshape(input, split));
    TENSORD_ASSIGN_OR_RETURN(
        Tensor out, c.Op1("mean", {binned}, Attrs().Set("dim", std::vector<int64_t>{nd - 1,
                                                                                    nd + 1})));
    TENSORD_ASSIGN_OR_RETURN(out, c.Contiguous(out));
    return std::move(c).Finish({out});
  }
  TENSORD_ASSIGN_OR_RETURN(const Bins bh, MakeBins(op, c, h, size[0], input.device()));
  TENSORD_ASSIGN_OR_RETURN(const Bins bw, MakeBins(op, c, w, size[1], input.device()));
  // (…, oh, Kh, W), then (…, oh, Kh, ow, Kw).
  TENSORD_ASSIGN_OR_RETURN(Tensor g, Gather(c, input, nd - 2, bh));
  if (!max) {
    TENSORD_ASSIGN_OR_RETURN(g, BinMean(c, g, nd - 2, bh));           // (…, oh, W)
    TENSORD_ASSIGN_OR_RETURN(g, Gather(c, g, nd - 1, bw));           // (…, oh, ow, Kw)
    TENSORD_ASSIGN_OR_RETURN(Tensor out, BinMean(c, g, nd - 1, bw));  // (…, oh, ow)
    TENSORD_ASSIGN_OR_RETURN(out, c.Contiguous(out));
    return std::move(c).Finish({out});
  }
  TENSORD_ASSIGN_OR_RETURN(g, Gather(c, g, nd, bw));
  // (…, oh, ow, Kh, Kw) flattened to (…, oh, ow, Kh * Kw): the max and where it is.
  DimVector perm;
  for (int64_t d = 0; d < nd - 2; ++d) perm.push_back(d);
  for (int64_t d : {nd - 2, nd, nd - 1, nd + 1}) perm.push_back(d);
  TENSORD_ASSIGN_OR_RETURN(g, Permute(g, perm));
  DimVector flat_shape(out_shape.begin(), out_shape.end());
  flat_shape.push_back(bh.k * bw.k);
  TENSORD_ASSIGN_OR_RETURN(g, c.Reshape(g, flat_shape));
  TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> mx,
                           c.Op("max.dim", {g}, Attrs().Set("dim", int64_t{-1})));
  if (!with_indices) return std::move(c).Finish({mx[0]});
  TENSORD_ASSIGN_OR_RETURN(const Tensor kw, WrapNumber(Scalar(bw.k)));
  TENSORD_ASSIGN_OR_RETURN(Tensor row, c.Op1("floor_divide", {mx[1], kw}));
  TENSORD_ASSIGN_OR_RETURN(Tensor col, c.Op1("remainder", {mx[1], kw}));
  TENSORD_ASSIGN_OR_RETURN(row, c.Op1("add", {row, bh.starts}));  // + (oh, 1)
  TENSORD_ASSIGN_OR_RETURN(const Tensor col0, View(bw.starts, {bw.out}));
  TENSORD_ASSIGN_OR_RETURN(col, c.Op1("add", {col, col0}));        // + (ow)
  TENSORD_ASSIGN_OR_RETURN(const Tensor width, WrapNumber(Scalar(w)));
  TENSORD_ASSIGN_OR_RETURN(row, c.Op1("mul", {row, width}));
  TENSORD_ASSIGN_OR_RETURN(Tensor index, c.Op1("add", {row, col}));
  return std::move(c).Finish({mx[0], index});
}

// max_unpool2d / max_unpool3d: zeros of (N, C, *output_size) with each value of self put at its
// index (a flat position in its output plane or volume, as max_pool's indices): one scatter
// along the flattened plane. An index outside the plane fails the op where its kernel runs.
absl::StatusOr<PlannedOp> PlanMaxUnpool(absl::string_view op, int64_t nd, const Tensor& self,
                                        const Tensor& indices, IntList output_size) {
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {self, indices}).status());
  if (indices.dtype() != DType::kInt64) {
    return RuntimeError(op, absl::StrCat("elements in indices should be type int64 but got: ",
                                         DTypeLegacyName(indices.dtype())));
  }
  if (static_cast<int64_t>(output_size.size()) != nd) {
    return RuntimeError(op, absl::StrCat("There should be exactly ", nd, " elements (",
                                         nd == 2 ? "height, width" : "depth, height, width",
                                         ") in output_size, but got ", output_size.size(),
                                         " elements."));
  }
  if (self.dim() != nd + 1 && self.dim() != nd + 2) {
    return RuntimeError(op, absl::StrCat("Input to ", op, " should be a ", nd + 1, "d or ",
                                         nd + 2, "d Tensor, but got a tensor with ", self.dim(),
                                         " dimensions."));
  }
  if (indices.sizes() != self.sizes()) {
    return RuntimeError(op, absl::StrCat("Expected shape of indices to be same as that of the "
                                         "input tensor (", FormatList(self.sizes()), ") but got "
                                         "indices tensor with shape: ",
                                         FormatList(indices.sizes())));
  }
  for (int64_t i = 1; i < self.dim(); ++i) {
    if (self.size(i) <= 0) {
      return RuntimeError(op, absl::StrCat(op, "(): Expected input to have non-zero size for "
                                           "non-batch dimensions, but got ",
                                           FormatList(self.sizes()), " with dimension ", i,
                                           " being empty."));
    }
  }
  for (int64_t s : output_size) {
    if (s < 0) return RuntimeError(op, absl::StrCat("output_size must be non-negative, got ", s));
  }
  const DType dtype = self.dtype();
  if (!IsFloating(dtype) || (self.device().is_cpu() && dtype == DType::kFloat16)) {
    return KernelNotImplemented(op, std::string(op), dtype);
  }
  const bool batched = self.dim() == nd + 2;
  const int64_t n = batched ? self.size(0) : 1, ch = self.size(batched ? 1 : 0);
  TENSORD_ASSIGN_OR_RETURN(const int64_t plane, CheckShape(op, output_size));
  const int64_t in_plane = self.numel() / std::max<int64_t>(n * ch, 1);
  DimVector out_shape;
  if (batched) out_shape.push_back(n);
  out_shape.push_back(ch);
  for (int64_t s : output_size) out_shape.push_back(s);
  TENSORD_RETURN_IF_ERROR(CheckShape(op, out_shape).status());
  Composition c({self, indices});
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Full({n, ch, plane}, Scalar(0.0), dtype, self.device()));
  if (self.numel() > 0) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor src, c.Reshape(self, {n, ch, in_plane}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor at, c.Reshape(indices, {n, ch, in_plane}));
    TENSORD_RETURN_IF_ERROR(
        c.Op("scatter_", {out, at, src}, Attrs().Set("dim", int64_t{2})).status());
  }
  TENSORD_ASSIGN_OR_RETURN(out, View(out, out_shape));
  return std::move(c).Finish({out});
}

std::vector<AttrSpec> PoolAttrs(bool max) {
  std::vector<AttrSpec> attrs = {
      Req("kernel_size", AttrType::kIntList, "one int or (kH, kW)"),
      Opt("stride", AttrType::kIntList, "kernel_size", "one int or (sH, sW)"),
      Opt("padding", AttrType::kIntList, "0", "one int or (pH, pW), at most half the kernel"),
      Opt("ceil_mode", AttrType::kBool, "false", "ceil instead of floor for the output size")};
  if (max) {
    attrs.insert(attrs.begin() + 3, Opt("dilation", AttrType::kIntList, "1", "one int or two"));
  } else {
    attrs.push_back(Opt("count_include_pad", AttrType::kBool, "true"));
    attrs.push_back(Opt("divisor_override", AttrType::kInt, "None"));
  }
  return attrs;
}

}  // namespace

void RegisterPoolOps(std::vector<OpDef>& ops) {
  ops.push_back({"max_pool2d", OpKind::kCompute, {"self"}, PoolAttrs(true),
                 "torch.nn.functional.max_pool2d: the max of every window of (C, H, W) or "
                 "(N, C, H, W).",
                 false,
                 [](Inputs in, AttrReader& a) {
                   return PlanMaxPool2d("max_pool2d", in[0], a, false);
                 }});
  ops.push_back({"max_pool2d_with_indices", OpKind::kCompute, {"self"}, PoolAttrs(true),
                 "max_pool2d and each max's flat index in its input plane (h * W + w).", true,
                 [](Inputs in, AttrReader& a) {
                   return PlanMaxPool2d("max_pool2d_with_indices", in[0], a, true);
                 }});
  ops.push_back({"avg_pool2d", OpKind::kCompute, {"self"}, PoolAttrs(false),
                 "torch.nn.functional.avg_pool2d: the mean of every window (the padding "
                 "counted or not, or a fixed divisor).",
                 false, [](Inputs in, AttrReader& a) { return PlanAvgPool2d(in[0], a); }});
  for (int64_t nd : {2, 3}) {
    const std::string name = absl::StrCat("max_unpool", nd, "d");
    ops.push_back({name, OpKind::kCompute, {"self", "indices"},
                   {Req("output_size", AttrType::kIntList,
                        nd == 2 ? "(oH, oW)" : "(oD, oH, oW)")},
                   absl::StrCat("torch's max_unpool", nd, "d: zeros of (N, C, *output_size) with "
                                "self's values put at indices (flat positions in each output ",
                                nd == 2 ? "plane" : "volume", ", as max_pool's)."),
                   false, [nd, name](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                     TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> size, a.IntList("output_size"));
                     return PlanMaxUnpool(name, nd, in[0], in[1], size);
                   }});
  }
  const AttrSpec output_size =
      Req("output_size", AttrType::kIntOrIntList, "one int or (oH, oW)");
  ops.push_back({"adaptive_avg_pool2d", OpKind::kCompute, {"self"}, {output_size},
                 "torch.nn.functional.adaptive_avg_pool2d: the mean of each of oH x oW bins.",
                 false, [](Inputs in, AttrReader& a) {
                   return PlanAdaptivePool2d("adaptive_avg_pool2d", in[0], a, false, false);
                 }});
  ops.push_back({"adaptive_max_pool2d", OpKind::kCompute, {"self"}, {output_size},
                 "torch.nn.functional.adaptive_max_pool2d: the max of each bin and its flat "
                 "index in its input plane.",
                 true, [](Inputs in, AttrReader& a) {
                   return PlanAdaptivePool2d("adaptive_max_pool2d", in[0], a, true, true);
                 }});
}

}  // namespace tensord::engine
