// Pooling: max_pool2d/3d (values, or values and indices), avg_pool2d/3d and the adaptive pools,
// with torch 1.13's argument rules and messages (Pool.h's pooling_output_shape,
// pool2d_shape_check and pool3d_shape_check), run by the backend's pooling kernel
// (Backend::Pool: the windows read in place, torch's NaN and index rules and its order of
// additions and divisions); global average pooling is a mean over the spatial dims, as torch's.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/core/checked_math.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/runtime/backend.h"
#include "engine/tensor/tensor_meta.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

// A pool's window geometry over its nd spatial dims (2 or 3): per dim the kernel, stride,
// padding and dilation, the input's and the output's sizes; the input seen as (n, c, *in).
struct Pool {
  int64_t nd = 2;
  DimVector k, s, p, d, in, out;
  bool ceil_mode = false;
  int64_t n = 1, c = 1;
  bool batched = true;
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

// "kT: 1 kH: 2 kW: 3" (or "kH: 2 kW: 3" in 2-d): torch's way of naming a window argument.
std::string PerDim(absl::string_view prefix, IntList v) {
  static constexpr const char* kLetters[] = {"T", "H", "W"};
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    absl::StrAppend(&out, i ? " " : "", prefix, kLetters[3 - v.size() + i], ": ", v[i]);
  }
  return out;
}

// A window argument of one int or nd ints, as nd ints (`dflt` when omitted and allowed);
// else torch's message for `family` (max_pool2d, avg_pool3d, …).
absl::StatusOr<DimVector> PerDimArg(absl::string_view family, int64_t nd, bool avg,
                                    absl::string_view name, const std::vector<int64_t>& v,
                                    bool may_omit, IntList dflt) {
  if (v.empty() && may_omit) return DimVector(dflt.begin(), dflt.end());
  if (v.size() == 1) return DimVector(nd, v[0]);
  if (static_cast<int64_t>(v.size()) == nd) return DimVector(v.begin(), v.end());
  const std::string ints = nd == 2 ? "two" : "three";
  std::string rule;
  if (nd == 2) {
    rule = may_omit ? "must either be omitted, a single int, or a tuple of two ints"
                    : "must either be a single int, or a tuple of two ints";
  } else if (avg) {
    rule = may_omit ? "must be omitted, a single int, or a tuple of three ints"
                    : "must be a single int, or a tuple of three ints";
  } else if (name == "padding") {  // torch 1.13's wording, word for word
    rule = "must be either be a single int, or a tuple of three ints";
  } else if (name == "dilation") {
    rule = "must be either a single int, or a tuple of three ints";
  } else {
    rule = may_omit ? "must either be omitted, a single int, or a tuple of three ints"
                    : "must either be a single int, or a tuple of three ints";
  }
  return RuntimeError(family, absl::StrCat(family, ": ", name, " ", rule));
}

// The geometry of max_pool{2,3}d / avg_pool{2,3}d with torch 1.13's checks in its order:
// pooling_output_shape's per dim, then pool2d_shape_check's or pool3d_shape_check's.
absl::StatusOr<Pool> Geometry(absl::string_view op, int64_t nd, bool avg, const Tensor& input,
                              AttrReader& a) {
  const std::string family = absl::StrCat(avg ? "avg_pool" : "max_pool", nd, "d");
  TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, a.IntList("kernel_size"));
  std::vector<int64_t> stride, padding = {0}, dilation = {1};
  if (a.Has("stride")) {
    TENSORD_ASSIGN_OR_RETURN(stride, a.IntList("stride"));
  }
  if (a.Has("padding")) {
    TENSORD_ASSIGN_OR_RETURN(padding, a.IntList("padding"));
  }
  if (!avg && a.Has("dilation")) {
    TENSORD_ASSIGN_OR_RETURN(dilation, a.IntList("dilation"));
  }
  Pool g;
  g.nd = nd;
  TENSORD_ASSIGN_OR_RETURN(g.ceil_mode, a.Bool("ceil_mode", false));
  TENSORD_ASSIGN_OR_RETURN(g.k, PerDimArg(family, nd, avg, "kernel_size", kernel, false, {}));
  TENSORD_ASSIGN_OR_RETURN(g.s, PerDimArg(family, nd, avg, "stride", stride, true, g.k));
  TENSORD_ASSIGN_OR_RETURN(g.p, PerDimArg(family, nd, avg, "padding", padding, false, {}));
  TENSORD_ASSIGN_OR_RETURN(g.d, PerDimArg(family, nd, avg, "dilation", dilation, false, {}));
  if (input.dim() != nd + 1 && input.dim() != nd + 2) {
    return RuntimeError(op, nd == 2 ? "non-empty 3D or 4D (batch mode) tensor expected for input"
                                    : "non-empty 4D or 5D (batch mode) tensor expected for input");
  }
  if (avg && nd == 3) {
    TENSORD_ASSIGN_OR_RETURN(const std::optional<int64_t> divisor,
                             a.OptionalInt("divisor_override"));
    if (divisor.has_value() && *divisor == 0) {
      return RuntimeError(op, "divisor must be not zero");
    }
  }
  g.batched = input.dim() == nd + 2;
  const IntList sz = input.sizes();
  g.n = g.batched ? sz[0] : 1;
  g.c = sz[sz.size() - nd - 1];
  g.in.assign(sz.end() - nd, sz.end());
  for (int64_t i = 0; i < nd; ++i) {  // pooling_output_shape, dim by dim
    if (g.s[i] == 0) return RuntimeError(op, "stride should not be zero");
    if (g.p[i] < 0) {
      return RuntimeError(op, absl::StrCat("pad must be non-negative, but got pad: ", g.p[i]));
    }
    if (g.p[i] > g.k[i] / 2) {
      return RuntimeError(op, absl::StrCat("pad should be at most half of kernel size, but got "
                                           "pad=", g.p[i], " and kernel_size=", g.k[i]));
    }
  }
  const auto positive = [](IntList v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x > 0; });
  };
  if (!positive(g.k)) {
    return RuntimeError(op, absl::StrCat("kernel size should be greater than zero, but got ",
                                         PerDim("k", g.k)));
  }
  if (!positive(g.s)) {
    return RuntimeError(op, absl::StrCat("stride should be greater than zero, but got ",
                                         PerDim("d", g.s)));
  }
  if (!positive(g.d)) {
    return RuntimeError(op, absl::StrCat("dilation should be greater than zero, but got ",
                                         PerDim("dilation", g.d)));
  }
  for (const DimVector* v : {&g.k, &g.s, &g.d}) {
    for (int64_t x : *v) {
      if (x >= (int64_t{1} << 31)) {  // torch's safe_downcast<int> refuses it
        return RuntimeError(op, absl::StrCat("window argument ", x, " is out of range"));
      }
    }
  }
  if (nd == 2) {
    if (g.c == 0 || g.in[0] == 0 || g.in[1] == 0 || (!g.batched && g.n == 0)) {
      return RuntimeError(op, absl::StrCat("Expected 3D or 4D (batch mode) tensor with optional "
                                           "0 dim batch size for input, but got:",
                                           FormatList(sz)));
    }
  } else {
    for (int64_t i = g.batched ? 1 : 0; i < input.dim(); ++i) {
      if (sz[i] == 0) {
        return RuntimeError(
            op, absl::StrCat(avg ? "avg_pool3d()" : "max_pool3d_with_indices_out_cpu_template()",
                             ": Expected input's non-batch dimensions to have positive length, "
                             "but input has a shape of ", FormatList(sz),
                             " and non-batch dimension 0 has length zero!"));
      }
    }
    if (avg && !(g.in[0] >= g.k[0] && g.in[1] >= g.k[1] && g.in[2] >= g.k[2])) {
      return RuntimeError(op, absl::StrCat("input image (T: ", g.in[0], " H: ", g.in[1],
                                           " W: ", g.in[2], ") smaller than kernel size (",
                                           PerDim("k", g.k), ")"));
    }
  }
  g.out.resize(nd);
  bool too_small = false;
  for (int64_t i = 0; i < nd; ++i) {
    g.out[i] = OutputSize(g.in[i], g.k[i], g.p[i], g.s[i], g.d[i], g.ceil_mode);
    too_small = too_small || g.out[i] < 1;
  }
  if (too_small) {
    return RuntimeError(op, absl::StrCat("Given input size: (", g.c, "x",
                                         absl::StrJoin(g.in, "x"), "). Calculated output size: (",
                                         g.c, "x", absl::StrJoin(g.out, "x"),
                                         "). Output size is too small"));
  }
  return g;
}

absl::StatusOr<Tensor> Batched(const Pool& g, const Tensor& input) {
  return g.batched ? input : Unsqueeze(input, 0);
}
absl::StatusOr<Tensor> Unbatched(const Pool& g, const Tensor& out) {
  return g.batched ? out : SqueezeDim(out, 0);
}

// The dtypes torch 1.13's pooling kernels take: floating types (float16 off the CPU; 3-d pools
// on the CPU float32 and float64 only), and int64 for avg_pool.
absl::Status CheckPoolDType(absl::string_view op, const Pool& g, bool avg, const Tensor& input) {
  const DType dtype = input.dtype();
  const bool cpu = input.device().is_cpu();
  bool ok = IsFloating(dtype) || (avg && dtype == DType::kInt64);
  if (cpu && dtype == DType::kFloat16) ok = false;
  if (cpu && g.nd == 3 && dtype == DType::kBFloat16) ok = false;
  if (ok) return absl::OkStatus();
  const char* kernel = g.nd == 2 ? (avg ? "avg_pool2d" : "max_pool2d")
                                 : (avg ? "avg_pool3d_out_frame" : "max_pool3d_with_indices_cpu");
  return KernelNotImplemented(op, kernel, dtype);
}

// A pool by the backend's kernel (kernels/pool.h: the windows read in place, torch's rules)
// over x (n, c, *in): `call` holds the kind and the nd spatial dims' geometry at its last nd
// places. The values, and with_indices the max's indices, (n, c, *out), contiguous.
absl::StatusOr<std::vector<Tensor>> PoolByKernel(absl::string_view op, Composition& c,
                                                 const Tensor& x, int64_t nd, PoolCall call,
                                                 bool with_indices) {
  DimVector out_sizes = {x.size(0), x.size(1)};
  for (int64_t i = 0; i < nd; ++i) out_sizes.push_back(call.out_size[3 - nd + i]);
  TENSORD_ASSIGN_OR_RETURN(
      Tensor values, AllocateTensor(op, TensorMeta::Contiguous(x.dtype(), out_sizes),
                                    x.device()));
  Tensor index;
  if (with_indices) {
    TENSORD_ASSIGN_OR_RETURN(
        index, AllocateTensor(op, TensorMeta::Contiguous(DType::kInt64, out_sizes),
                              x.device()));
  }
  call.dtype = x.dtype();
  call.n = x.size(0);
  call.c = x.size(1);
  call.input_strides[0] = x.stride(0);
  call.input_strides[1] = x.stride(1);
  for (int64_t i = 0; i < nd; ++i) call.input_strides[5 - nd + i] = x.stride(2 + i);
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(x.device()));
  PlannedOp pool;
  pool.outputs = {values};
  pool.reads = {x.storage()};
  pool.writes = {values.storage()};
  if (with_indices) {
    pool.outputs.push_back(index);
    pool.writes.push_back(index.storage());
  }
  pool.kernel = [backend, x, values, index, call]() mutable -> absl::Status {
    call.input = x.data();
    call.out = values.data();
    call.indices = index.defined() ? index.data_as<int64_t>() : nullptr;
    return backend->Pool(call);
  };
  return c.Add(std::move(pool));
}

// The kernel's description of max_pool's or avg_pool's windows.
PoolCall WindowCall(PoolKind kind, const Pool& g) {
  PoolCall call;
  call.kind = kind;
  for (int64_t i = 0; i < g.nd; ++i) {
    const int64_t at = 3 - g.nd + i;  // a 2-d pool is a 3-d one of depth 1
    call.in[at] = g.in[i];
    call.out_size[at] = g.out[i];
    call.kernel[at] = g.k[i];
    call.stride[at] = g.s[i];
    call.padding[at] = g.p[i];
    call.dilation[at] = g.d[i];
  }
  return call;
}

absl::StatusOr<PlannedOp> PlanMaxPool(absl::string_view op, int64_t nd, const Tensor& input,
                                      AttrReader& a, bool with_indices) {
  TENSORD_ASSIGN_OR_RETURN(const Pool g, Geometry(op, nd, /*avg=*/false, input, a));
  TENSORD_RETURN_IF_ERROR(CheckPoolDType(op, g, false, input));
  Composition c({input});
  TENSORD_ASSIGN_OR_RETURN(const Tensor x, Batched(g, input));
  TENSORD_ASSIGN_OR_RETURN(
      std::vector<Tensor> outs,
      PoolByKernel(op, c, x, nd, WindowCall(PoolKind::kMax, g), with_indices));
  for (Tensor& t : outs) {
    TENSORD_ASSIGN_OR_RETURN(t, Unbatched(g, t));
  }
  return std::move(c).Finish(outs);
}

absl::StatusOr<PlannedOp> PlanAvgPool(absl::string_view op, int64_t nd, const Tensor& input,
                                      AttrReader& a) {
  TENSORD_ASSIGN_OR_RETURN(const Pool g, Geometry(op, nd, /*avg=*/true, input, a));
  TENSORD_ASSIGN_OR_RETURN(const bool count_include_pad, a.Bool("count_include_pad", true));
  TENSORD_ASSIGN_OR_RETURN(const std::optional<int64_t> divisor,
                           a.OptionalInt("divisor_override"));
  if (divisor.has_value() && *divisor == 0) {
    return RuntimeError(op, "divisor must be not zero");
  }
  TENSORD_RETURN_IF_ERROR(CheckPoolDType(op, g, true, input));
  Composition c({input});
  TENSORD_ASSIGN_OR_RETURN(const Tensor x, Batched(g, input));
  PoolCall call = WindowCall(PoolKind::kAvg, g);
  call.count_include_pad = count_include_pad;
  call.divisor = divisor.value_or(0);
  TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                           PoolByKernel(op, c, x, nd, call, /*with_indices=*/false));
  TENSORD_ASSIGN_OR_RETURN(const Tensor out, Unbatched(g, outs[0]));
  return std::move(c).Finish({out});
}

// Adaptive pooling: output position i of a dim of size L pools the bin
// [floor(i L / o), ceil((i + 1) L / o)), walked by the pooling kernel.
absl::StatusOr<PlannedOp> PlanAdaptivePool(absl::string_view op, int64_t nd,
                                           const Tensor& input, AttrReader& a, bool max,
                                           bool with_indices) {
  bool was_list = false;
  TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> size, a.IntOrIntList("output_size", &was_list));
  if (size.size() == 1) size.assign(nd, size[0]);
  if (static_cast<int64_t>(size.size()) != nd) {
    return RuntimeError(op, nd == 3 && max
                                ? "adaptive_max_pool3d(): internal error: output_size.size() "
                                  "must be 3"
                                : absl::StrCat(op, ": output_size must be ", nd));
  }
  const bool negative = std::any_of(size.begin(), size.end(), [](int64_t s) { return s < 0; });
  if (negative && !(max && nd == 3)) {
    // torch 1.13's words, its 3-d pool naming the 2-d one.
    return RuntimeError(
        op, nd == 2 ? absl::StrCat(op, ": elements of output_size must be greater than or "
                                       "equal to 0 but received {", size[0], ", ", size[1], "}")
                    : absl::StrCat("adaptive_avg_pool2d: elements of output_size must be "
                                   "greater than or equal to 0 but received {", size[0], ", ",
                                   size[1], ",", size[2], "}"));
  }
  if (input.dim() != nd + 1 && input.dim() != nd + 2) {
    return RuntimeError(op, absl::StrCat(op, "(): Expected ", nd + 1, "D or ", nd + 2,
                                         "D tensor, but got", nd == 3 && max ? ": " : " ",
                                         FormatList(input.sizes())));
  }
  const int64_t rank = input.dim();
  for (int64_t d = 1; d < rank; ++d) {
    if (input.sizes()[d] == 0 && (max || nd == 3 || d >= rank - 2)) {
      return RuntimeError(op, absl::StrCat(op, "(): Expected input to have non-zero size for "
                                               "non-batch dimensions, but input has sizes ",
                                           FormatList(input.sizes()), " with dimension ", d,
                                           " being empty"));
    }
  }
  const DType dtype = input.dtype();
  const bool cpu = input.device().is_cpu();
  const std::string kernel = nd == 2 ? std::string(op) : absl::StrCat(op, "_cpu");
  // torch 1.13's CPU kernels: adaptive_max_pool3d float32/float64 only, adaptive_avg_pool3d
  // float16 but not bfloat16; on other devices every floating type.
  if (cpu && nd == 3 && (dtype == DType::kBFloat16 || (max && dtype == DType::kFloat16))) {
    return KernelNotImplemented(op, kernel, dtype);
  }
  if (!(cpu && nd == 3 && !max && dtype == DType::kFloat16)) {
    TENSORD_RETURN_IF_ERROR(CheckFloatingKernel(op, kernel, dtype, input.device()));
  } else if (!IsFloating(dtype)) {
    return KernelNotImplemented(op, kernel, dtype);
  }
  DimVector out_shape(input.sizes().begin(), input.sizes().end());
  for (int64_t i = 0; i < nd; ++i) out_shape[rank - nd + i] = size[i];
  if (negative) {
    return RuntimeError(op, absl::StrCat("Trying to create tensor with negative dimension ",
                                         *std::min_element(size.begin(), size.end()), ": ",
                                         FormatList(out_shape)));
  }
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
  const IntList in = input.sizes().subspan(rank - nd);
  if (!max && std::all_of(size.begin(), size.end(), [](int64_t s) { return s == 1; })) {
    // Global average pooling: torch 1.13 takes the mean over the spatial dims.
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < nd; ++i) dims.push_back(rank - nd + i);
    TENSORD_ASSIGN_OR_RETURN(
        Tensor out, c.Op1("mean", {input}, Attrs().Set("dim", dims).Set("keepdim", true)));
    TENSORD_ASSIGN_OR_RETURN(out, c.Contiguous(out));
    return std::move(c).Finish({out});
  }
  PoolCall call;
  call.kind = max ? PoolKind::kMax : PoolKind::kAvg;
  call.adaptive = true;
  for (int64_t i = 0; i < nd; ++i) {
    if (!CheckedMul(size[i] + 1, in[i])) {
      return RuntimeError(op, absl::StrCat("output_size ", size[i], " for an input size of ",
                                           in[i], " overflows int64"));
    }
    call.in[3 - nd + i] = in[i];
    call.out_size[3 - nd + i] = size[i];
  }
  const bool batched = rank == nd + 2;
  TENSORD_ASSIGN_OR_RETURN(const Tensor x, batched ? input : Unsqueeze(input, 0));
  TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                           PoolByKernel(op, c, x, nd, call, with_indices));
  for (Tensor& t : outs) {
    if (!batched) {
      TENSORD_ASSIGN_OR_RETURN(t, SqueezeDim(t, 0));
    }
  }
  return std::move(c).Finish(outs);
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

std::vector<AttrSpec> PoolAttrs(int64_t nd, bool max) {
  const bool two = nd == 2;
  std::vector<AttrSpec> attrs = {
      Req("kernel_size", AttrType::kIntList, two ? "one int or (kH, kW)" : "one int or (kD, kH, kW)"),
      Opt("stride", AttrType::kIntList, "kernel_size", two ? "one int or (sH, sW)" : "one int or three"),
      Opt("padding", AttrType::kIntList, "0", two ? "one int or (pH, pW), at most half the kernel"
                                              : "one int or three, at most half the kernel"),
      Opt("ceil_mode", AttrType::kBool, "false", "ceil instead of floor for the output size")};
  if (max) {
    attrs.insert(attrs.begin() + 3,
                 Opt("dilation", AttrType::kIntList, "1", two ? "one int or two" : "one int or three"));
  } else {
    attrs.push_back(Opt("count_include_pad", AttrType::kBool, "true"));
    attrs.push_back(Opt("divisor_override", AttrType::kInt, "None"));
  }
  return attrs;
}

}  // namespace

void RegisterPoolOps(std::vector<OpDef>& ops) {
  for (int64_t nd : {2, 3}) {
    const size_t first = ops.size();
    const std::string max = absl::StrCat("max_pool", nd, "d");
    const std::string with_indices = max + "_with_indices";
    const std::string avg = absl::StrCat("avg_pool", nd, "d");
    const char* layout = nd == 2 ? "(C, H, W) or (N, C, H, W)" : "(C, D, H, W) or (N, C, D, H, W)";
    ops.push_back({max, OpKind::kCompute, {"self"}, PoolAttrs(nd, true),
                   absl::StrCat("torch.nn.functional.", max, ": the max of every window of ",
                                layout, "."),
                   false, [nd, max](Inputs in, AttrReader& a) {
                     return PlanMaxPool(max, nd, in[0], a, false);
                   }});
    ops.push_back({with_indices, OpKind::kCompute, {"self"}, PoolAttrs(nd, true),
                   absl::StrCat(max, " and each max's flat index in its input ",
                                nd == 2 ? "plane (h * W + w)." : "volume ((d * H + h) * W + w)."),
                   true, [nd, with_indices](Inputs in, AttrReader& a) {
                     return PlanMaxPool(with_indices, nd, in[0], a, true);
                   }});
    ops.push_back({avg, OpKind::kCompute, {"self"}, PoolAttrs(nd, false),
                   absl::StrCat("torch.nn.functional.", avg, ": the mean of every window of ",
                                layout, " (the padding counted or not, or a fixed divisor)."),
                   false, [nd, avg](Inputs in, AttrReader& a) {
                     return PlanAvgPool(avg, nd, in[0], a);
                   }});
    const std::string unpool = absl::StrCat("max_unpool", nd, "d");
    ops.push_back({unpool, OpKind::kCompute, {"self", "indices"},
                   {Req("output_size", AttrType::kIntList,
                        nd == 2 ? "(oH, oW)" : "(oD, oH, oW)")},
                   absl::StrCat("torch's max_unpool", nd, "d: zeros of (N, C, *output_size) with "
                                "self's values put at indices (flat positions in each output ",
                                nd == 2 ? "plane" : "volume", ", as max_pool's)."),
                   false, [nd, unpool](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                     TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> size, a.IntList("output_size"));
                     return PlanMaxUnpool(unpool, nd, in[0], in[1], size);
                   }});
    const AttrSpec output_size =
        Req("output_size", AttrType::kIntOrIntList, nd == 2 ? "one int or (oH, oW)"
                                                            : "one int or (oD, oH, oW)");
    const std::string adaptive_avg = absl::StrCat("adaptive_avg_pool", nd, "d");
    const std::string adaptive_max = absl::StrCat("adaptive_max_pool", nd, "d");
    ops.push_back({adaptive_avg, OpKind::kCompute, {"self"}, {output_size},
                   absl::StrCat("torch.nn.functional.", adaptive_avg,
                                ": the mean of each of the output_size bins."),
                   false, [nd, adaptive_avg](Inputs in, AttrReader& a) {
                     return PlanAdaptivePool(adaptive_avg, nd, in[0], a, false, false);
                   }});
    ops.push_back({adaptive_max, OpKind::kCompute, {"self"}, {output_size},
                   absl::StrCat("torch.nn.functional.", adaptive_max,
                                ": the max of each bin and its flat index in its input ",
                                nd == 2 ? "plane." : "volume."),
                   true, [nd, adaptive_max](Inputs in, AttrReader& a) {
                     return PlanAdaptivePool(adaptive_max, nd, in[0], a, true, true);
                   }});
    // torch's 2-d pooling kernels write channels_last outputs for channels_last inputs; its
    // 3-d ones write contiguous outputs.
    if (nd == 2) {
      for (size_t i = first; i < ops.size(); ++i) {
        ops[i].output_format = OutputFormat::kChannelsLastLikeInput;
      }
    }
  }
}

}  // namespace tensord::engine
