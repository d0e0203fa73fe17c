// Upsampling (torch.nn.functional.interpolate's nearest, nearest-exact, linear, bilinear,
// bicubic and trilinear modes), as torch 1.13's CPU kernels compute it (UpSample.h): each
// output position's source computed in float32 on the device from an arange; the linear and
// cubic modes then run the backend's kernel (kernels/upsample.h: per dim two taps with linear
// weights or four with Keys' cubic convolution weights, A = -0.75, the dims nested as torch's
// kernels nest them), nearest one spatial dim at a time by a gather. The client resolves size
// and scale_factor into output_size and the scales torch passes on.
#include <cmath>
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
#include "engine/runtime/backend.h"
#include "engine/tensor/tensor_meta.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

constexpr absl::string_view kOp = "upsample";

enum class Mode { kNearest, kNearestExact, kLinear, kCubic };

// out[i] = (i + pre) * scale + post in `dtype` (float32, or float64 for float64 inputs' linear
// weights), for i < n, rounded step by step as torch's kernels compute it.
absl::StatusOr<Tensor> Affine(Composition& c, int64_t n, double pre, double scale, double post,
                              DType dtype, const Device& device) {
  if (dtype == DType::kFloat32) scale = static_cast<float>(scale);
  TENSORD_ASSIGN_OR_RETURN(Tensor t, c.Arange(Scalar(int64_t{0}), Scalar(n),
                                               Scalar(int64_t{1}), dtype, device));
  for (const auto& [value, op] : {std::pair<double, const char*>{pre, "add"},
                                  std::pair<double, const char*>{scale, "mul"},
                                  std::pair<double, const char*>{post, "add"}}) {
    if (value == (std::string(op) == "mul" ? 1.0 : 0.0)) continue;
    TENSORD_ASSIGN_OR_RETURN(const Tensor number, WrapNumber(Scalar(value)));
    TENSORD_ASSIGN_OR_RETURN(t, c.Op1(op, {t, number}));
  }
  return t;
}

// torch's compute_scales_value: 1 / the given scale, else in / out.
double Scale(std::optional<double> given, int64_t in, int64_t out) {
  return given.has_value() && *given > 0 ? 1.0 / *given
                                         : static_cast<double>(in) / static_cast<double>(out);
}

absl::StatusOr<Tensor> Clamped(Composition& c, const Tensor& t, int64_t hi) {
  return c.Op1("clamp", {t}, Attrs().Set("min", Scalar(int64_t{0})).Set("max", Scalar(hi)));
}

// Whether a 4-d or 5-d tensor is contiguous in channels-last order (size-1 dims ignored, as
// torch's is_contiguous(memory_format=channels_last)).
bool ChannelsLastContiguous(const Tensor& t) {
  if (t.dim() != 4 && t.dim() != 5) return false;
  DimVector sizes = {t.sizes()[0]}, strides = {t.strides()[0]};
  for (int64_t d = 2; d < t.dim(); ++d) sizes.push_back(t.sizes()[d]);
  for (int64_t d = 2; d < t.dim(); ++d) strides.push_back(t.strides()[d]);
  sizes.push_back(t.sizes()[1]);
  strides.push_back(t.strides()[1]);
  return IsContiguousLayout(sizes, strides, t.numel());
}

// One spatial dim of x resized from `in` to `out` positions by nearest neighbours (the linear
// and cubic modes resample all dims at once: Interpolate). `shortcuts`: torch's channels-last
// nearest kernel (nearest_idx), which copies equal sizes and takes i >> 1 for twice the size
// whatever the scale given; its other kernels always compute floor(i * scale).
absl::StatusOr<Tensor> NearestDim(Composition& c, const Tensor& x, int64_t dim, int64_t in,
                                  int64_t out, Mode mode, std::optional<double> given,
                                  bool shortcuts) {
  // nearest: floor(i * scale); nearest-exact: floor((i + 0.5) * scale); then min(., in - 1).
  const float scale = mode == Mode::kNearest && shortcuts && out == 2 * in
                          ? 0.5f
                          : static_cast<float>(Scale(given, in, out));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor src, Affine(c, out, mode == Mode::kNearestExact ? 0.5 : 0, scale, 0,
                         DType::kFloat32, x.device()));
  TENSORD_ASSIGN_OR_RETURN(src, c.Op1("floor", {src}));
  TENSORD_ASSIGN_OR_RETURN(src, c.ToDType(src, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(src, Clamped(c, src, in - 1));
  return c.Op1("index_select", {x, src}, Attrs().Set("dim", dim));
}

// One dim's taps for the resampling kernel (kernels/upsample.h): per tap, the input positions
// (int64) and weights (the input's dtype) of every output position, contiguous.
struct Taps {
  std::vector<Tensor> index, weight;
};

// The source position of every output position along a dim, in the input's floating type's
// precision (float32 for 16-bit types, as torch's opmath): i * scale with align_corners, else
// (i + 0.5) * scale - 0.5 (clamped at 0 for the linear modes).
absl::StatusOr<Tensor> SourcePositions(Composition& c, int64_t in, int64_t out,
                                       bool align_corners, std::optional<double> given,
                                       bool clamp, DType dtype, const Device& device) {
  const DType calc = dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  if (align_corners) {
    const double scale = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0;
    return Affine(c, out, 0, scale, 0, calc, device);
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor src,
                           Affine(c, out, 0.5, Scale(given, in, out), -0.5, calc, device));
  if (!clamp) return src;
  return c.Op1("clamp_min", {src}, Attrs().Set("min", Scalar(int64_t{0})));
}

absl::StatusOr<Taps> ContiguousTaps(Composition& c, Taps taps) {
  for (std::vector<Tensor>* tables : {&taps.index, &taps.weight}) {
    for (Tensor& t : *tables) {
      TENSORD_ASSIGN_OR_RETURN(t, c.Contiguous(t));
    }
  }
  return taps;
}

// linear: the source's two neighbours lo = min(floor(s), in - 1), hi = min(lo + 1, in - 1), and
// their weights 1 - w and w = clamp(s - lo, 0, 1).
absl::StatusOr<Taps> LinearTaps(Composition& c, int64_t in, int64_t out, bool align_corners,
                                std::optional<double> given, DType dtype, const Device& device) {
  TENSORD_ASSIGN_OR_RETURN(const Tensor src, SourcePositions(c, in, out, align_corners, given,
                                                             /*clamp=*/true, dtype, device));
  TENSORD_ASSIGN_OR_RETURN(Tensor lo, c.Op1("floor", {src}));
  TENSORD_ASSIGN_OR_RETURN(lo, c.ToDType(lo, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(lo, c.Op1("clamp_max", {lo}, Attrs().Set("max", Scalar(in - 1))));
  TENSORD_ASSIGN_OR_RETURN(const Tensor one, WrapNumber(Scalar(int64_t{1})));
  TENSORD_ASSIGN_OR_RETURN(Tensor hi, c.Op1("add", {lo, one}));
  TENSORD_ASSIGN_OR_RETURN(hi, c.Op1("clamp_max", {hi}, Attrs().Set("max", Scalar(in - 1))));
  TENSORD_ASSIGN_OR_RETURN(Tensor w1, c.Op1("sub", {src, lo}));
  TENSORD_ASSIGN_OR_RETURN(w1, Clamped(c, w1, 1));
  TENSORD_ASSIGN_OR_RETURN(Tensor w0, c.Op1("sub", {one, w1}));
  Taps taps;
  taps.index = {lo, hi};
  for (const Tensor& w : {w0, w1}) {
    TENSORD_ASSIGN_OR_RETURN(Tensor stored, c.ToDType(w, dtype));
    taps.weight.push_back(stored);
  }
  return ContiguousTaps(c, std::move(taps));
}

// p(v) = ((k3 * v + k2) * v + k1) * v + k0 for a tensor v (Horner's rule, as torch writes
// the cubic convolution weights).
absl::StatusOr<Tensor> Cubic(Composition& c, const Tensor& v, double k3, double k2, double k1,
                             double k0) {
  TENSORD_ASSIGN_OR_RETURN(const Tensor lead, WrapNumber(Scalar(k3)));
  TENSORD_ASSIGN_OR_RETURN(Tensor acc, c.Op1("mul", {v, lead}));
  for (const double k : {k2, k1}) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor coef, WrapNumber(Scalar(k)));
    TENSORD_ASSIGN_OR_RETURN(acc, c.Op1("add", {acc, coef}));
    TENSORD_ASSIGN_OR_RETURN(acc, c.Op1("mul", {acc, v}));
  }
  TENSORD_ASSIGN_OR_RETURN(const Tensor last, WrapNumber(Scalar(k0)));
  return c.Op1("add", {acc, last});
}

// bicubic along one dim: source s = (i + 0.5) * scale - 0.5 (not clamped) or i * scale with
// align_corners; taps floor(s) - 1 … floor(s) + 2, clamped into the input; weights of
// t = s - floor(s) by torch's get_cubic_upsample_coefficients (A = -0.75):
// W2(t + 1), W1(t), W1(1 - t), W2(2 - t), where W1(v) = ((A + 2) v - (A + 3)) v^2 + 1 and
// W2(v) = ((A v - 5A) v + 8A) v - 4A. The weights stay in the computation type (the kernel
// rounds only its output: RoundsSteps in kernels/upsample.h).
absl::StatusOr<Taps> CubicTaps(Composition& c, int64_t in, int64_t out, bool align_corners,
                               std::optional<double> given, DType dtype, const Device& device) {
  constexpr double kA = -0.75;
  TENSORD_ASSIGN_OR_RETURN(const Tensor src, SourcePositions(c, in, out, align_corners, given,
                                                             /*clamp=*/false, dtype, device));
  TENSORD_ASSIGN_OR_RETURN(const Tensor floor, c.Op1("floor", {src}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor t, c.Op1("sub", {src, floor}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor base, c.ToDType(floor, DType::kInt64));
  Taps taps;
  for (int64_t k = 0; k < 4; ++k) {
    // The tap's distance v from the source: t + 1, t, 1 - t, 2 - t.
    Tensor v = t;
    if (k != 1) {
      TENSORD_ASSIGN_OR_RETURN(const Tensor shift, WrapNumber(Scalar(k == 0 ? 1.0 : k - 1.0)));
      TENSORD_ASSIGN_OR_RETURN(v, k == 0 ? c.Op1("add", {t, shift}) : c.Op1("sub", {shift, t}));
    }
    const bool near = k == 1 || k == 2;
    TENSORD_ASSIGN_OR_RETURN(
        Tensor w, near ? Cubic(c, v, kA + 2, -(kA + 3), 0, 1)
                       : Cubic(c, v, kA, -5 * kA, 8 * kA, -4 * kA));
    TENSORD_ASSIGN_OR_RETURN(const Tensor offset, WrapNumber(Scalar(k - 1)));
    TENSORD_ASSIGN_OR_RETURN(Tensor at, c.Op1("add", {base, offset}));
    TENSORD_ASSIGN_OR_RETURN(at, Clamped(c, at, in - 1));
    taps.index.push_back(at);
    taps.weight.push_back(w);
  }
  return ContiguousTaps(c, std::move(taps));
}

// interpolate's linear or cubic modes over x (n, c, *in) to `size` by the backend's kernel
// (kernels/upsample.h): the taps of every dim, then one pass over the output.
absl::StatusOr<Tensor> Interpolate(Composition& c, const Tensor& x, Mode mode,
                                   const std::vector<int64_t>& size, bool align_corners,
                                   const std::vector<std::optional<double>>& scales) {
  const int64_t nd = static_cast<int64_t>(size.size());
  UpsampleCall call;
  call.dtype = x.dtype();
  call.n = x.size(0);
  call.c = x.size(1);
  call.first = static_cast<int>(3 - nd);
  call.taps = mode == Mode::kCubic ? 4 : 2;
  call.input_strides[0] = x.stride(0);
  call.input_strides[1] = x.stride(1);
  std::vector<Taps> taps;
  DimVector out_sizes = {call.n, call.c};
  for (int64_t d = 0; d < nd; ++d) {
    const std::optional<double> given = scales[static_cast<size_t>(d)];
    TENSORD_ASSIGN_OR_RETURN(
        Taps t, mode == Mode::kCubic
                    ? CubicTaps(c, x.size(2 + d), size[d], align_corners, given, x.dtype(),
                                x.device())
                    : LinearTaps(c, x.size(2 + d), size[d], align_corners, given, x.dtype(),
                                 x.device()));
    taps.push_back(std::move(t));
    call.input_strides[2 + call.first + d] = x.stride(2 + d);
    call.out_size[call.first + d] = size[d];
    out_sizes.push_back(size[d]);
  }
  TENSORD_ASSIGN_OR_RETURN(
      Tensor out, AllocateTensor(kOp, TensorMeta::Contiguous(x.dtype(), out_sizes), x.device()));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(x.device()));
  PlannedOp step;
  step.outputs = {out};
  step.writes = {out.storage()};
  step.reads = {x.storage()};
  for (const Taps& t : taps) {
    for (const std::vector<Tensor>* tables : {&t.index, &t.weight}) {
      for (const Tensor& table : *tables) step.reads.push_back(table.storage());
    }
  }
  step.kernel = [backend, x, out, taps, call]() mutable -> absl::Status {
    call.input = x.data();
    call.out = out.data();
    for (size_t d = 0; d < taps.size(); ++d) {
      const int at = call.first + static_cast<int>(d);
      for (int k = 0; k < call.taps; ++k) {
        call.index[at][k] = taps[d].index[static_cast<size_t>(k)].data_as<int64_t>();
        call.weight[at][k] = taps[d].weight[static_cast<size_t>(k)].data();
      }
    }
    return backend->Upsample(call);
  };
  return c.Add(std::move(step)).at(0);
}

absl::StatusOr<PlannedOp> PlanUpsample(const Tensor& input, const std::vector<int64_t>& size,
                                       absl::string_view mode_name, bool align_corners,
                                       const std::vector<std::optional<double>>& scales) {
  Mode mode;
  std::string kernel = "compute_indices_weights_nearest";
  if (mode_name == "nearest") {
    mode = Mode::kNearest;
  } else if (mode_name == "nearest-exact") {
    mode = Mode::kNearestExact;
  } else if (mode_name == "linear" || mode_name == "bilinear" || mode_name == "trilinear") {
    mode = Mode::kLinear;
    kernel = "compute_indices_weights_linear";
  } else if (mode_name == "bicubic") {
    mode = Mode::kCubic;
    kernel = "compute_indices_weights_cubic";
  } else {
    return NotImplementedError(kOp, absl::StrCat("upsample mode '", mode_name, "' is not "
                                                 "supported (nearest, nearest-exact, linear, "
                                                 "bilinear, bicubic, trilinear are)"));
  }
  const int64_t nd = static_cast<int64_t>(size.size());
  if (mode == Mode::kCubic && nd != 2) {
    return RuntimeError(kOp, absl::StrCat("bicubic mode needs 2 output sizes (H, W), but got ",
                                          nd));
  }
  if (nd < 1 || nd > 3 || input.dim() != nd + 2) {
    return RuntimeError(kOp, absl::StrCat("expected a ", nd + 2, "-d input for ", nd,
                                          " output sizes, but got input of size ",
                                          FormatList(input.sizes())));
  }
  const IntList in = input.sizes().subspan(2);
  bool positive = true;
  for (int64_t d = 0; d < nd; ++d) positive = positive && in[d] > 0 && size[d] > 0;
  if (!positive) {
    static constexpr const char* kNames[3][3] = {{"W"}, {"H", "W"}, {"D", "H", "W"}};
    std::string ins, outs;
    for (int64_t d = 0; d < nd; ++d) {
      absl::StrAppend(&ins, d ? ", " : "", kNames[nd - 1][d], ": ", in[d]);
      absl::StrAppend(&outs, d ? ", " : "", kNames[nd - 1][d], ": ", size[d]);
    }
    return RuntimeError(kOp, absl::StrCat("Input and output sizes should be greater than 0, "
                                          "but got input (", ins, ") output (", outs, ")"));
  }
  for (const std::optional<double>& s : scales) {
    if (s.has_value() && *s > 0 && !std::isfinite(1.0 / *s)) {
      return RuntimeError(kOp, absl::StrCat("scale factor ", *s, " is too small to invert"));
    }
  }
  const DType dtype = input.dtype();
  const bool cpu = input.device().is_cpu();
  bool ok = dtype == DType::kFloat32 || dtype == DType::kFloat64 ||
            (dtype == DType::kBFloat16 && mode != Mode::kNearestExact) ||
            (dtype == DType::kUInt8 && mode != Mode::kLinear && mode != Mode::kCubic) ||
            (!cpu && dtype == DType::kFloat16);
  if (!ok) {
    return KernelNotImplemented(kOp, kernel, dtype);
  }
  Composition c({input});
  if (mode == Mode::kLinear || mode == Mode::kCubic) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor out,
                             Interpolate(c, input, mode, size, align_corners, scales));
    return std::move(c).Finish({out});
  }
  Tensor x = input;
  const bool shortcuts = ChannelsLastContiguous(input);
  for (int64_t d = 0; d < nd; ++d) {
    if (in[d] == size[d] && mode == Mode::kNearest && shortcuts) continue;
    TENSORD_ASSIGN_OR_RETURN(x, NearestDim(c, x, 2 + d, in[d], size[d], mode,
                                           scales[static_cast<size_t>(d)], shortcuts));
  }
  TENSORD_ASSIGN_OR_RETURN(x, c.Contiguous(x));
  if (x.storage() == input.storage()) {  // nothing resized: still a new tensor, as torch's
    TENSORD_ASSIGN_OR_RETURN(PlannedOp clone, PlanCloneContiguous(x));
    x = c.Add(std::move(clone)).at(0);
  }
  return std::move(c).Finish({x});
}

}  // namespace

void RegisterUpsampleOps(std::vector<OpDef>& ops) {
  ops.push_back(
      {"upsample", OpKind::kCompute, {"self"},
       {Req("output_size", AttrType::kIntList, "the spatial sizes (1 to 3 of them)"),
        Opt("mode", AttrType::kString, "nearest",
            "nearest, nearest-exact, linear, bilinear, bicubic or trilinear"),
        Opt("align_corners", AttrType::kBool, "false", "linear modes: corners to corners"),
        Opt("scales_d", AttrType::kScalar, "None", "the scale factor torch uses for depth"),
        Opt("scales_h", AttrType::kScalar, "None", "... for height"),
        Opt("scales_w", AttrType::kScalar, "None", "... for width")},
       "torch.nn.functional.interpolate's resampling of (N, C, [D, [H,]] W) to output_size.",
       false,
       [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
         TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> size, a.IntList("output_size"));
         TENSORD_ASSIGN_OR_RETURN(std::string mode, a.String("mode", "nearest"));
         TENSORD_ASSIGN_OR_RETURN(bool corners, a.Bool("align_corners", false));
         std::vector<std::optional<double>> given;
         const char* names[3] = {"scales_d", "scales_h", "scales_w"};
         for (size_t k = 3 - std::min<size_t>(size.size(), 3); k < 3; ++k) {
           std::optional<double> v;
           if (a.Has(names[k])) {
             TENSORD_ASSIGN_OR_RETURN(Scalar s, a.GetScalar(names[k]));
             v = s.to_double();
           }
           given.push_back(v);
         }
         return PlanUpsample(in[0], size, mode, corners, given);
       }});
  // torch's bicubic kernel writes contiguous outputs; its others keep the input's format.
  ops.back().output_format = OutputFormat::kLikeInputInModes;
  ops.back().output_format_modes = {"nearest", "nearest-exact", "linear", "bilinear",
                                    "trilinear"};
}

}  // namespace tensord::engine
