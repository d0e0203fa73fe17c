// Normalization over trailing dims: layer_norm (torch.nn.functional.layer_norm), one kernel per
// device (Backend::LayerNorm) that reads each row once into cache, two-pass mean and variance,
// and writes the normalized, scaled and shifted row; operands that are not contiguous are made
// so first (a composition with contiguous's steps).
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
#include "engine/tensor/shape_util.h"

namespace tensord::engine {
namespace {

// `t` as a contiguous tensor: itself, or a copy made by the composition's first steps (`t`
// undefined: undefined).
absl::StatusOr<Tensor> Contiguous(Composition& c, const Tensor& t) {
  if (!t.defined()) return t;
  TENSORD_ASSIGN_OR_RETURN(PlannedOp step, PlanContiguous(t));
  return c.Add(std::move(step)).at(0);
}

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
  if (!IsFloating(dtype) || (device.is_cpu() && dtype == DType::kFloat16)) {
    return RuntimeError(op, absl::StrCat("\"LayerNormKernelImpl\" not implemented for '",
                                         DTypeLegacyName(dtype), "'"));
  }
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
  TENSORD_ASSIGN_OR_RETURN(Tensor x, Contiguous(c, input));
  TENSORD_ASSIGN_OR_RETURN(Tensor w, Contiguous(c, weight));
  TENSORD_ASSIGN_OR_RETURN(Tensor b, Contiguous(c, bias));
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta::Contiguous(dtype, input.sizes()), device));
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
}

}  // namespace tensord::engine
