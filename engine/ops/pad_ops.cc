// Padding: torch.nn.functional.pad (constant, reflect, replicate, circular) and
// torch.constant_pad_nd, with torch 1.13's rules and messages (PadNd.cpp, ReflectionPad.cpp,
// ReplicationPadding.cpp). Constant padding fills a new tensor and copies the input into its
// middle (negative pads narrow the input first). The other modes gather: each padded dim is one
// index_select by an index computed on the device from an arange (reflect:
// (n-1) - |(n-1) - |i||, replicate: clamp(i, 0, n-1), circular: i mod n), so every device runs
// them with the kernels it has.
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
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

enum class PadMode { kConstant, kReflect, kReplicate, kCircular };

absl::StatusOr<PadMode> ParseMode(absl::string_view op, absl::string_view mode) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "replicate") return PadMode::kReplicate;
  if (mode == "circular") return PadMode::kCircular;
  return NotImplementedError(op, absl::StrCat("Unrecognised padding mode ", mode));
}

// torch.constant_pad_nd: pad[2k], pad[2k + 1] pad dim (ndim - 1 - k) before and after.
// Pads beyond +-2^62 elements cannot be allocated; refusing them keeps every size sum in range.
absl::Status CheckPadRange(absl::string_view op, const std::vector<int64_t>& pad) {
  constexpr int64_t kLimit = int64_t{1} << 62;
  for (int64_t p : pad) {
    if (p <= -kLimit || p >= kLimit) {
      return RuntimeError(op, absl::StrCat("padding ", p, " is out of range"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PlannedOp> PlanConstantPad(absl::string_view op, const Tensor& input,
                                          const std::vector<int64_t>& pad, const Scalar& value) {
  TENSORD_RETURN_IF_ERROR(CheckPadRange(op, pad));
  const int64_t ndim = input.dim();
  const int64_t npad = static_cast<int64_t>(pad.size()) / 2;
  if (pad.size() % 2 != 0) {
    return RuntimeError(op, absl::StrCat("Length of pad must be even but instead it equals ",
                                         pad.size()));
  }
  if (npad > ndim) {
    return RuntimeError(op, absl::StrCat("Length of pad should be no more than twice the "
                                         "number of dimensions of the input. Pad length is ",
                                         pad.size(), " while the input has ", ndim,
                                         " dimensions."));
  }
  Composition c({input});
  Tensor inner = input;
  bool any_positive = false;
  for (int64_t k = 0; k < npad; ++k) {
    const int64_t dim = ndim - 1 - k, before = pad[2 * k], after = pad[2 * k + 1];
    any_positive = any_positive || before > 0 || after > 0;
    if (before < 0) {
      TENSORD_ASSIGN_OR_RETURN(inner, Narrow(inner, dim, -before, inner.sizes()[dim] + before));
    }
    if (after < 0) {
      TENSORD_ASSIGN_OR_RETURN(inner, Narrow(inner, dim, 0, inner.sizes()[dim] + after));
    }
  }
  if (!any_positive) {  // only narrowed: a copy of what is left, as torch's clone
    TENSORD_ASSIGN_OR_RETURN(PlannedOp clone, PlanClone(inner));
    std::vector<Tensor> copied = c.Add(std::move(clone));
    return std::move(c).Finish(std::move(copied));
  }
  DimVector shape(input.sizes().begin(), input.sizes().end());
  for (int64_t k = 0; k < npad; ++k) {
    const int64_t dim = ndim - 1 - k;
    int64_t size = 0;
    if (__builtin_add_overflow(shape[dim], pad[2 * k], &size) ||
        __builtin_add_overflow(size, pad[2 * k + 1], &size)) {
      return RuntimeError(op, absl::StrCat("padding ", FormatList(pad), " overflows int64"));
    }
    if (size <= 0) {
      return RuntimeError(op, absl::StrCat("The input size ", shape[dim], ", plus negative "
                                           "padding ", pad[2 * k], " and ", pad[2 * k + 1],
                                           " resulted in a negative output size, which is "
                                           "invalid. Check dimension ", dim, " of your input."));
    }
    shape[dim] = size;
  }
  TENSORD_ASSIGN_OR_RETURN(
      Tensor out,
      AllocateTensor(op, TensorMeta::Contiguous(input.dtype(), shape), input.device()));
  // The value goes only where the input does not: each padded dim's slabs before and after
  // (corners filled more than once), so every element is written once or a few times.
  for (int64_t k = 0; k < npad; ++k) {
    const int64_t dim = ndim - 1 - k;
    const int64_t before = std::max<int64_t>(pad[2 * k], 0);
    const int64_t after = std::max<int64_t>(pad[2 * k + 1], 0);
    for (const auto& [start, length] : {std::make_pair(int64_t{0}, before),
                                        std::make_pair(shape[dim] - after, after)}) {
      if (length == 0) continue;
      TENSORD_ASSIGN_OR_RETURN(Tensor slab, Narrow(out, dim, start, length));
      TENSORD_ASSIGN_OR_RETURN(PlannedOp fill, PlanFill(slab, value));
      c.Add(std::move(fill));
    }
  }
  Tensor middle = out;
  for (int64_t k = 0; k < npad; ++k) {
    const int64_t dim = ndim - 1 - k;
    TENSORD_ASSIGN_OR_RETURN(middle, Narrow(middle, dim, std::max<int64_t>(pad[2 * k], 0),
                                            inner.sizes()[dim]));
  }
  TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCopyInto(middle, inner));
  c.Add(std::move(copy));
  return std::move(c).Finish({out});
}

// The index of the input element each output position along one dim takes.
absl::StatusOr<Tensor> GatherIndex(Composition& c, PadMode mode, int64_t size, int64_t before,
                                   int64_t after, const Device& device) {
  const std::optional<int64_t> end = CheckedAdd(size, after);
  if (!end) return RuntimeError("pad", "the padded size overflows int64");
  TENSORD_ASSIGN_OR_RETURN(Tensor i, c.Arange(Scalar(-before), Scalar(*end),
                                               Scalar(int64_t{1}), DType::kInt64, device));
  const auto number = [](int64_t v) { return WrapNumber(Scalar(v)); };
  TENSORD_ASSIGN_OR_RETURN(const Tensor last, number(size - 1));
  switch (mode) {
    case PadMode::kReflect: {
      TENSORD_ASSIGN_OR_RETURN(i, c.Op1("abs", {i}));
      TENSORD_ASSIGN_OR_RETURN(i, c.Op1("sub", {last, i}));
      TENSORD_ASSIGN_OR_RETURN(i, c.Op1("abs", {i}));
      return c.Op1("sub", {last, i});
    }
    case PadMode::kReplicate:
      return c.Op1("clamp", {i}, Attrs().Set("min", Scalar(int64_t{0})).Set("max",
                                                                          Scalar(size - 1)));
    case PadMode::kCircular: {
      TENSORD_ASSIGN_OR_RETURN(const Tensor n, number(size));
      return c.Op1("remainder", {i, n});
    }
    case PadMode::kConstant: break;
  }
  return i;
}

// reflect, replicate and circular: torch's rank and size rules, then one gather per dim.
absl::StatusOr<PlannedOp> PlanGatherPad(absl::string_view op, const Tensor& input,
                                        const std::vector<int64_t>& pad, PadMode mode) {
  const int64_t ndim = input.dim();
  const int64_t npad = static_cast<int64_t>(pad.size()) / 2;
  if (npad < 1 || npad > 3 || ndim < npad + 1 || ndim > npad + 2) {
    return NotImplementedError(op, "Only 2D, 3D, 4D, 5D padding with non-constant padding are "
                                   "supported for now");
  }
  if (mode == PadMode::kCircular) {
    if (npad != ndim - 2) {
      return RuntimeError(op, absl::StrCat("Invalid padding size, expected ", 2 * (ndim - 2),
                                           " but got ", pad.size()));
    }
  } else {
    const bool reflect = mode == PadMode::kReflect;
    const DType dtype = input.dtype();
    // torch 1.13's CPU kernels: float32 and float64; reflection_pad3d 16-bit floats too.
    const bool half = dtype == DType::kFloat16 || dtype == DType::kBFloat16;
    if (dtype != DType::kFloat32 && dtype != DType::kFloat64 && !(half && reflect && npad == 3)) {
      const std::string kernel =
          absl::StrCat(reflect ? "reflection_pad" : "replication_pad", npad, "d",
                       (!reflect || npad == 3) ? "_cpu" : "");
      return KernelNotImplemented(op, kernel, dtype);
    }
    for (int64_t d = ndim - npad; d < ndim; ++d) {
      if (input.sizes()[d] == 0 || (ndim == npad + 2 && input.sizes()[1] == 0)) {
        return RuntimeError(op, absl::StrCat("Expected ", npad + 1, "D or ", npad + 2,
                                             "D (batch mode) tensor with possibly 0 batch size "
                                             "and other non-zero dimensions for input, but got: ",
                                             FormatList(input.sizes())));
      }
    }
  }
  DimVector shape(input.sizes().begin(), input.sizes().end());
  for (int64_t k = 0; k < npad; ++k) {
    const int64_t dim = ndim - 1 - k, before = pad[2 * k], after = pad[2 * k + 1];
    const int64_t size = shape[dim];
    if (mode == PadMode::kReflect && (before >= size || after >= size)) {
      // torch's argument number counts F.pad's pad pairs from the last dim: #4, #6, #8.
      const std::string of = npad == 2 ? std::to_string(ndim) : FormatList(input.sizes());
      return RuntimeError(op, absl::StrCat("Argument #", 4 + 2 * k, ": Padding size should be "
                                           "less than the corresponding input dimension, but "
                                           "got: padding (", before, ", ", after,
                                           ") at dimension ", dim, " of input ", of));
    }
    if (mode == PadMode::kCircular && (before > size || after > size)) {
      return RuntimeError(op, "Padding value causes wrapping around more than once.");
    }
    int64_t out = 0;
    if (__builtin_add_overflow(size, before, &out) || __builtin_add_overflow(out, after, &out)) {
      return RuntimeError(op, absl::StrCat("padding ", FormatList(pad), " overflows int64"));
    }
    if (mode == PadMode::kCircular ? out < 0 : out < 1) {
      return RuntimeError(op, mode == PadMode::kCircular
                                  ? std::string("Negative padding value is resulting in an "
                                                "empty dimension.")
                                  : absl::StrCat("input (W: ", size, ") is too small. "
                                                 "Calculated output W: ", out));
    }
  }
  Composition c({input});
  Tensor x = input;
  for (int64_t k = 0; k < npad; ++k) {
    const int64_t dim = ndim - 1 - k;
    int64_t before = pad[2 * k], after = pad[2 * k + 1];
    if (mode == PadMode::kCircular) {
      // torch crops first and wraps around what is left.
      if (before < 0) {
        TENSORD_ASSIGN_OR_RETURN(x, Narrow(x, dim, -before, x.sizes()[dim] + before));
      }
      if (after < 0) {
        TENSORD_ASSIGN_OR_RETURN(x, Narrow(x, dim, 0, x.sizes()[dim] + after));
      }
      before = std::max<int64_t>(before, 0), after = std::max<int64_t>(after, 0);
    }
    if (before == 0 && after == 0) continue;
    TENSORD_ASSIGN_OR_RETURN(Tensor index, GatherIndex(c, mode, x.sizes()[dim], before, after,
                                                       input.device()));
    TENSORD_ASSIGN_OR_RETURN(x, c.Op1("index_select", {x, index},
                                      Attrs().Set("dim", dim)));
  }
  if (x.storage() == input.storage()) {  // nothing padded: a copy, as torch's kernels write one
    TENSORD_ASSIGN_OR_RETURN(PlannedOp clone, PlanCloneContiguous(x));
    x = c.Add(std::move(clone)).at(0);
  }
  return std::move(c).Finish({x});
}

absl::StatusOr<PlannedOp> PlanPad(const Tensor& input, const std::vector<int64_t>& pad,
                                  absl::string_view mode_name, std::optional<Scalar> value) {
  constexpr absl::string_view op = "pad";
  if (pad.size() % 2 != 0) return RuntimeError(op, "Padding length must be divisible by 2");
  if (static_cast<int64_t>(pad.size()) > 2 * input.dim()) {
    return RuntimeError(op, "Padding length too large");
  }
  TENSORD_ASSIGN_OR_RETURN(const PadMode mode, ParseMode(op, mode_name));
  TENSORD_RETURN_IF_ERROR(CheckPadRange(op, pad));
  if (mode == PadMode::kConstant) {
    return PlanConstantPad(op, input, pad, value.value_or(Scalar(0.0)));
  }
  if (value.has_value() && value->to_double() != 0) {
    return RuntimeError(op, absl::StrCat("Padding mode \"", mode_name,
                                         "\" doesn't take in value argument"));
  }
  return PlanGatherPad(op, input, pad, mode);
}

}  // namespace

void RegisterPadOps(std::vector<OpDef>& ops) {
  ops.push_back(
      {"pad", OpKind::kCompute, {"input"},
       {Req("pad", AttrType::kIntList, "(before, after) per dim, from the last dim back"),
        Opt("mode", AttrType::kString, "constant", "constant, reflect, replicate or circular"),
        Opt("value", AttrType::kScalar, "None", "constant mode's fill value (0)")},
       "torch.nn.functional.pad: constant (negative pads crop), reflect, replicate or "
       "circular padding.",
       false,
       [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
         TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> pad, a.IntList("pad"));
         TENSORD_ASSIGN_OR_RETURN(std::string mode, a.String("mode", "constant"));
         std::optional<Scalar> value;
         if (a.Has("value")) {
           TENSORD_ASSIGN_OR_RETURN(value, a.GetScalar("value"));
         }
         return PlanPad(in[0], pad, mode, value);
       }});
  // torch's constant pad keeps the input's memory format; its other modes write contiguous
  // outputs.
  ops.back().output_format = OutputFormat::kLikeInputInModes;
  ops.back().output_format_modes = {"constant"};
  ops.push_back({"constant_pad_nd", OpKind::kCompute, {"input"},
                 {Req("pad", AttrType::kIntList), Opt("value", AttrType::kScalar, "0")},
                 "torch.constant_pad_nd: constant padding (negative pads crop).", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> pad, a.IntList("pad"));
                   TENSORD_ASSIGN_OR_RETURN(Scalar value,
                                            a.GetScalar("value", Scalar(int64_t{0})));
                   return PlanConstantPad("constant_pad_nd", in[0], pad, value);
                 }});
  ops.back().output_format = OutputFormat::kLikeInput;
}

}  // namespace tensord::engine
