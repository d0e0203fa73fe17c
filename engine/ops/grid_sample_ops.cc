// grid_sampler (torch.nn.functional.grid_sample): each output position reads the input at the
// point its grid entry names, in [-1, 1] coordinates, bilinearly (trilinearly for 5-d input),
// at the nearest element, or bicubically (4-d only), with zeros, border or reflection padding —
// torch 1.13's GridSampler.h arithmetic, argument checks and messages.
//
// Planned as a composition, so every device runs it with the kernels it has: the grid's
// coordinates become source positions by elementwise steps; each tap (a corner, or one of the
// 16 bicubic neighbours) is one gather from the input flattened to (N, C, D*H*W), masked where it
// falls outside, times its weight, summed in torch's order.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/checked_math.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/tensor/shape_util.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

constexpr absl::string_view kOp = "grid_sampler";
enum Mode : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// check_grid_sampler_common, then the 2-d or 3-d checks and the kernel's dtype, in torch's order.
absl::Status CheckArgs(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding) {
  if (input.device() != grid.device()) {
    return RuntimeError(kOp, absl::StrCat("grid_sampler(): expected input and grid to be on same "
                                          "device, but input is on ", input.device().ToString(),
                                          " and grid is on ", grid.device().ToString()));
  }
  const std::string sizes = absl::StrCat("input with sizes ", FormatList(input.sizes()),
                                         " and grid with sizes ", FormatList(grid.sizes()));
  if (input.dim() == 0 || grid.dim() == 0 || input.size(0) != grid.size(0)) {
    return RuntimeError(kOp, absl::StrCat("grid_sampler(): expected grid and input to have same "
                                          "batch size, but got ", sizes));
  }
  if (grid.size(grid.dim() - 1) != input.dim() - 2) {
    return RuntimeError(kOp, absl::StrCat("grid_sampler(): expected grid to have size ",
                                          input.dim() - 2, " in last dimension, but got grid "
                                          "with sizes ", FormatList(grid.sizes())));
  }
  for (int64_t i = 2; i < input.dim(); ++i) {
    if (input.size(i) == 0) {
      return RuntimeError(kOp, absl::StrCat("grid_sampler(): expected input to have non-empty "
                                            "spatial dimensions, but input has sizes ",
                                            FormatList(input.sizes()), " with dimension ", i,
                                            " being empty"));
    }
  }
  const bool two_d = input.dim() == 4;
  if (input.dim() != (two_d ? 4 : 5) || grid.dim() != input.dim()) {
    return RuntimeError(kOp, absl::StrCat("grid_sampler(): expected ", two_d ? 4 : 5,
                                          "D input and grid with same number of dimensions, but "
                                          "got ", sizes));
  }
  if (mode < kBilinear || mode > kBicubic) {
    return RuntimeError(kOp, absl::StrCat("grid_sampler(): interpolation_mode must be 0 "
                                          "(bilinear), 1 (nearest) or 2 (bicubic), got ", mode));
  }
  if (padding < kZeros || padding > kReflection) {
    return RuntimeError(kOp, absl::StrCat("grid_sampler(): padding_mode must be 0 (zeros), 1 "
                                          "(border) or 2 (reflection), got ", padding));
  }
  if (!two_d && mode == kBicubic) {
    return RuntimeError(kOp, "grid_sampler(): bicubic interpolation only supports 4D input");
  }
  // torch's kernels: float32 and float64, and float16 on CUDA.
  const DType dtype = input.dtype();
  const bool cpu = input.device().is_cpu();
  if (!IsFloating(dtype) || dtype == DType::kBFloat16 || (cpu && dtype == DType::kFloat16)) {
    return RuntimeError(kOp, absl::StrCat("grid_sampler_", two_d ? "2d" : "3d",
                                          cpu ? "_cpu" : "_cuda", " not implemented for ",
                                          DTypeLegacyName(dtype)));
  }
  if (grid.dtype() != dtype) {
    return RuntimeError(kOp, absl::StrCat("expected scalar type ", DTypeLegacyName(dtype),
                                          " but found ", DTypeLegacyName(grid.dtype())));
  }
  return absl::OkStatus();
}

class GridSampler {
 public:
  // `source`: the input as (N, C, D*H*W); `q`: the number of output positions per batch entry
  // (the grid's middle sizes' product).
  // `zero`: 0 as a Python number (the lowest promotion priority, so `where` keeps the other
  // operand's dtype; nothing allocated per tap).
  GridSampler(Composition& c, const Tensor& input, const Tensor& source, const Tensor& zero,
              int64_t q, bool align_corners, int64_t padding)
      : c_(c), input_(input), source_(source), zero_(zero), q_(q), align_(align_corners),
        padding_(padding) {}

  // `t` op number, in the input's dtype (torch's scalar arithmetic).
  absl::StatusOr<Tensor> Num(absl::string_view op, const Tensor& t, double v) {
    return c_.Op1(op, {t}, Attrs().Set("other", Scalar(v)));
  }

  // grid_sampler_unnormalize: [-1, 1] to a position along a dim of `size`.
  absl::StatusOr<Tensor> Unnormalize(const Tensor& g, int64_t size) {
    const double n = static_cast<double>(size);
    if (align_) {
      TENSORD_ASSIGN_OR_RETURN(Tensor x, Num("add", g, 1));
      TENSORD_ASSIGN_OR_RETURN(x, Num("div", x, 2));
      return Num("mul", x, n - 1);
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor x, Num("add", g, 1));
    TENSORD_ASSIGN_OR_RETURN(x, Num("mul", x, n));
    TENSORD_ASSIGN_OR_RETURN(x, Num("sub", x, 1));
    return Num("div", x, 2);
  }

  // compute_coordinates: the position after border or reflection padding.
  absl::StatusOr<Tensor> Pad(const Tensor& x, int64_t size) {
    if (padding_ == kZeros) return x;
    Tensor p = x;
    if (padding_ == kReflection) {
      const int64_t low = align_ ? 0 : -1, high = align_ ? 2 * (size - 1) : 2 * size - 1;
      TENSORD_ASSIGN_OR_RETURN(p, Reflect(x, low, high));
    }
    TENSORD_ASSIGN_OR_RETURN(p, c_.Op1("clamp", {p}, Attrs().Set("min", Scalar(0.0)).Set(
                                                         "max", Scalar(static_cast<double>(size - 1)))));
    // A NaN coordinate clips to 0, as torch's clip_coordinates.
    TENSORD_ASSIGN_OR_RETURN(const Tensor nan, c_.Op1("isnan", {p}));
    return c_.Op1("where", {nan, zero_, p});
  }

  // The value at integer positions `pos` (one per spatial dim, last dim first, as the grid's
  // coordinates), 0 where any lies outside (as torch's kernels, even after border or
  // reflection padding, whose floor + 1 corner may pass the last element): (N, C, Q).
  absl::StatusOr<Tensor> Tap(const std::vector<Tensor>& pos) {
    const int64_t nd = input_.dim() - 2;
    Tensor flat_index, inside;
    int64_t stride = 1;
    for (int64_t k = 0; k < nd; ++k) {
      const int64_t size = input_.size(input_.dim() - 1 - k);
      TENSORD_ASSIGN_OR_RETURN(Tensor ge, Num("ge", pos[k], 0));
      TENSORD_ASSIGN_OR_RETURN(Tensor lt, Num("lt", pos[k], static_cast<double>(size)));
      TENSORD_ASSIGN_OR_RETURN(Tensor ok, c_.Op1("logical_and", {ge, lt}));
      if (inside.defined()) {
        TENSORD_ASSIGN_OR_RETURN(inside, c_.Op1("logical_and", {inside, ok}));
      } else {
        inside = ok;
      }
      // Positions outside (NaN included) read element 0, masked out below.
      TENSORD_ASSIGN_OR_RETURN(Tensor i, c_.Op1("where", {ok, pos[k], zero_}));
      TENSORD_ASSIGN_OR_RETURN(i, c_.ToDType(i, DType::kInt64));
      if (stride != 1) {
        TENSORD_ASSIGN_OR_RETURN(i, c_.Op1("mul", {i}, Attrs().Set("other", Scalar(stride))));
      }
      if (flat_index.defined()) {
        TENSORD_ASSIGN_OR_RETURN(flat_index, c_.Op1("add", {flat_index, i}));
      } else {
        flat_index = i;
      }
      stride *= size;
    }
    // (N, Q) positions, the same for every channel.
    const int64_t n = input_.size(0), ch = input_.size(1), q = q_;
    TENSORD_ASSIGN_OR_RETURN(Tensor index, c_.Reshape(flat_index, {n, 1, q}));
    TENSORD_ASSIGN_OR_RETURN(index, Expand(index, {n, ch, q}));
    TENSORD_ASSIGN_OR_RETURN(Tensor values,
                             c_.Op1("gather", {source_, index}, Attrs().Set("dim", int64_t{2})));
    TENSORD_ASSIGN_OR_RETURN(inside, c_.Reshape(inside, {n, 1, q}));
    return c_.Op1("where", {inside, values, zero_});
  }

 private:
  // reflect_coordinates(x, twice_low, twice_high).
  absl::StatusOr<Tensor> Reflect(const Tensor& x, int64_t twice_low, int64_t twice_high) {
    if (twice_low == twice_high) {  // 0 whatever x is (inf and NaN too)
      return c_.Full(x.sizes(), Scalar(0.0), x.dtype(), x.device());
    }
    const double min = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
    TENSORD_ASSIGN_OR_RETURN(Tensor in, Num("sub", x, min));
    TENSORD_ASSIGN_OR_RETURN(in, c_.Op1("abs", {in}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor extra, Num("fmod", in, span));
    TENSORD_ASSIGN_OR_RETURN(Tensor flips, Num("div", in, span));
    TENSORD_ASSIGN_OR_RETURN(flips, c_.Op1("floor", {flips}));
    TENSORD_ASSIGN_OR_RETURN(flips, Num("remainder", flips, 2));
    TENSORD_ASSIGN_OR_RETURN(const Tensor even, Num("eq", flips, 0));
    TENSORD_ASSIGN_OR_RETURN(const Tensor up, Num("add", extra, min));
    TENSORD_ASSIGN_OR_RETURN(Tensor down, c_.Op1("neg", {extra}));
    TENSORD_ASSIGN_OR_RETURN(down, Num("add", down, span));
    TENSORD_ASSIGN_OR_RETURN(down, Num("add", down, min));
    return c_.Op1("where", {even, up, down});
  }

  Composition& c_;
  const Tensor& input_;
  const Tensor& source_;
  const Tensor& zero_;
  int64_t q_;
  bool align_;
  int64_t padding_;
};

absl::StatusOr<PlannedOp> PlanGridSampler(const Tensor& input, const Tensor& grid, int64_t mode,
                                          int64_t padding, bool align_corners) {
  TENSORD_RETURN_IF_ERROR(CheckArgs(input, grid, mode, padding));
  Composition c({input, grid});
  const int64_t nd = input.dim() - 2;
  const int64_t n = input.size(0), ch = input.size(1);
  DimVector out_shape = {n, ch};
  int64_t q = 1;  // may exceed the grid's element count when its batch is empty
  for (int64_t i = 1; i < grid.dim() - 1; ++i) {
    out_shape.push_back(grid.size(i));
    const std::optional<int64_t> next = CheckedMul(q, grid.size(i));
    if (!next) {
      return RuntimeError(kOp, absl::StrCat("grid_sampler(): the grid's sizes ",
                                            FormatList(grid.sizes()), " overflow int64"));
    }
    q = *next;
  }
  int64_t plane = 1;  // the input's spatial element count: at most its numel
  for (int64_t i = 2; i < input.dim(); ++i) plane *= input.size(i);
  TENSORD_ASSIGN_OR_RETURN(const Tensor source, c.Reshape(input, {n, ch, plane}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor zero, WrapNumber(Scalar(0.0)));
  GridSampler s(c, input, source, zero, q, align_corners, padding);
  // The source position along each spatial dim, last dim first: (N, Q) each.
  std::vector<Tensor> coords;
  for (int64_t k = 0; k < nd; ++k) {
    TENSORD_ASSIGN_OR_RETURN(Tensor g, Select(grid, grid.dim() - 1, k));
    TENSORD_ASSIGN_OR_RETURN(g, c.Reshape(g, {n, q}));
    const int64_t size = input.size(input.dim() - 1 - k);
    TENSORD_ASSIGN_OR_RETURN(Tensor x, s.Unnormalize(g, size));
    if (mode != kBicubic) {
      TENSORD_ASSIGN_OR_RETURN(x, s.Pad(x, size));
    }
    coords.push_back(std::move(x));
  }
  Tensor out;
  const auto accumulate = [&](const Tensor& term) -> absl::Status {
    if (!out.defined()) {
      out = term;
      return absl::OkStatus();
    }
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("add", {out, term}));
    return absl::OkStatus();
  };
  if (mode == kNearest) {
    std::vector<Tensor> pos;
    for (const Tensor& x : coords) {
      TENSORD_ASSIGN_OR_RETURN(Tensor r, c.Op1("round", {x}));
      pos.push_back(std::move(r));
    }
    TENSORD_ASSIGN_OR_RETURN(out, s.Tap(pos));
  } else if (mode == kBilinear) {
    // Corner b takes floor + 1 along dim k where bit k of b is set (x fastest: nw, ne, sw, se),
    // weighted by the product of (x - floor) or (floor + 1 - x).
    std::vector<Tensor> lo, hi, w_lo, w_hi;
    for (const Tensor& x : coords) {
      TENSORD_ASSIGN_OR_RETURN(Tensor f, c.Op1("floor", {x}));
      TENSORD_ASSIGN_OR_RETURN(Tensor f1, s.Num("add", f, 1));
      TENSORD_ASSIGN_OR_RETURN(Tensor wh, c.Op1("sub", {x, f}));
      TENSORD_ASSIGN_OR_RETURN(Tensor wl, c.Op1("sub", {f1, x}));
      lo.push_back(std::move(f)), hi.push_back(std::move(f1));
      w_lo.push_back(std::move(wl)), w_hi.push_back(std::move(wh));
    }
    for (int64_t corner = 0; corner < (int64_t{1} << nd); ++corner) {
      std::vector<Tensor> pos;
      Tensor weight;
      for (int64_t k = 0; k < nd; ++k) {
        const bool up = (corner >> k) & 1;
        pos.push_back(up ? hi[k] : lo[k]);
        const Tensor& w = up ? w_hi[k] : w_lo[k];
        if (weight.defined()) {
          TENSORD_ASSIGN_OR_RETURN(weight, c.Op1("mul", {weight, w}));
        } else {
          weight = w;
        }
      }
      TENSORD_ASSIGN_OR_RETURN(const Tensor values, s.Tap(pos));
      TENSORD_ASSIGN_OR_RETURN(weight, c.Reshape(weight, {n, 1, q}));
      TENSORD_ASSIGN_OR_RETURN(const Tensor term, c.Op1("mul", {values, weight}));
      TENSORD_RETURN_IF_ERROR(accumulate(term));
    }
  } else {
    // Bicubic: the 4 x 4 neighbours of floor(x, y), each padded on its own, rows interpolated
    // along x, then the rows along y.
    std::vector<std::vector<Tensor>> taps(2), coeffs(2);
    for (int64_t k = 0; k < 2; ++k) {
      const int64_t size = input.size(input.dim() - 1 - k);
      TENSORD_ASSIGN_OR_RETURN(const Tensor f, c.Op1("floor", {coords[k]}));
      TENSORD_ASSIGN_OR_RETURN(const Tensor t, c.Op1("sub", {coords[k], f}));
      for (int64_t i = 0; i < 4; ++i) {
        TENSORD_ASSIGN_OR_RETURN(Tensor p, s.Num("add", f, static_cast<double>(i - 1)));
        TENSORD_ASSIGN_OR_RETURN(p, s.Pad(p, size));
        taps[k].push_back(std::move(p));
      }
      // get_cubic_coefficients: cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t).
      constexpr double kA = -0.75;
      const auto cc1 = [&](const Tensor& x) -> absl::StatusOr<Tensor> {
        TENSORD_ASSIGN_OR_RETURN(Tensor y, s.Num("mul", x, kA + 2));
        TENSORD_ASSIGN_OR_RETURN(y, s.Num("sub", y, kA + 3));
        TENSORD_ASSIGN_OR_RETURN(y, c.Op1("mul", {y, x}));
        TENSORD_ASSIGN_OR_RETURN(y, c.Op1("mul", {y, x}));
        return s.Num("add", y, 1);
      };
      const auto cc2 = [&](const Tensor& x) -> absl::StatusOr<Tensor> {
        TENSORD_ASSIGN_OR_RETURN(Tensor y, s.Num("mul", x, kA));
        TENSORD_ASSIGN_OR_RETURN(y, s.Num("sub", y, 5 * kA));
        TENSORD_ASSIGN_OR_RETURN(y, c.Op1("mul", {y, x}));
        TENSORD_ASSIGN_OR_RETURN(y, s.Num("add", y, 8 * kA));
        TENSORD_ASSIGN_OR_RETURN(y, c.Op1("mul", {y, x}));
        return s.Num("sub", y, 4 * kA);
      };
      TENSORD_ASSIGN_OR_RETURN(const Tensor t1, s.Num("add", t, 1));
      TENSORD_ASSIGN_OR_RETURN(Tensor one_minus, c.Op1("neg", {t}));
      TENSORD_ASSIGN_OR_RETURN(one_minus, s.Num("add", one_minus, 1));
      TENSORD_ASSIGN_OR_RETURN(const Tensor two_minus, s.Num("add", one_minus, 1));
      for (const auto& [fn, x] : {std::make_pair(0, t1), std::make_pair(1, t),
                                  std::make_pair(1, one_minus), std::make_pair(0, two_minus)}) {
        TENSORD_ASSIGN_OR_RETURN(Tensor co, fn == 1 ? cc1(x) : cc2(x));
        TENSORD_ASSIGN_OR_RETURN(co, c.Reshape(co, {n, 1, q}));
        coeffs[k].push_back(std::move(co));
      }
    }
    for (int64_t j = 0; j < 4; ++j) {  // rows (y)
      Tensor row;
      for (int64_t i = 0; i < 4; ++i) {  // columns (x)
        TENSORD_ASSIGN_OR_RETURN(const Tensor v, s.Tap({taps[0][i], taps[1][j]}));
        TENSORD_ASSIGN_OR_RETURN(const Tensor term, c.Op1("mul", {v, coeffs[0][i]}));
        if (row.defined()) {
          TENSORD_ASSIGN_OR_RETURN(row, c.Op1("add", {row, term}));
        } else {
          row = term;
        }
      }
      TENSORD_ASSIGN_OR_RETURN(const Tensor term, c.Op1("mul", {row, coeffs[1][j]}));
      TENSORD_RETURN_IF_ERROR(accumulate(term));
    }
  }
  TENSORD_ASSIGN_OR_RETURN(out, c.Contiguous(out));
  TENSORD_ASSIGN_OR_RETURN(out, View(out, out_shape));
  return std::move(c).Finish({out});
}

}  // namespace

void RegisterGridSampleOps(std::vector<OpDef>& ops) {
  ops.push_back({"grid_sampler", OpKind::kCompute, {"input", "grid"},
                 {Opt("interpolation_mode", AttrType::kInt, "0",
                      "0 bilinear (trilinear for 5-d input), 1 nearest, 2 bicubic (4-d only)"),
                  Opt("padding_mode", AttrType::kInt, "0", "0 zeros, 1 border, 2 reflection"),
                  Opt("align_corners", AttrType::kBool, "false")},
                 "torch.grid_sampler (nn.functional.grid_sample): input (N, C, [D,] H, W) read "
                 "at grid (N, [D_out,] H_out, W_out, 2 or 3), coordinates in [-1, 1]: "
                 "(N, C, [D_out,] H_out, W_out).",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t mode, a.Int("interpolation_mode", 0));
                   TENSORD_ASSIGN_OR_RETURN(int64_t padding, a.Int("padding_mode", 0));
                   TENSORD_ASSIGN_OR_RETURN(bool align, a.Bool("align_corners", false));
                   return PlanGridSampler(in[0], in[1], mode, padding, align);
                 }});
}

}  // namespace tensord::engine
