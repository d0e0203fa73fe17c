// Random numbers: counter-based (Philox4x32-10), so the server keeps no generator state. Every
// random op takes `seed` and `offset`: element i draws from counter offset + i under key seed.
// A client reproduces torch.manual_seed by keeping (seed, offset) and advancing offset by the
// numel of each random op; without a seed the server picks one. The streams differ from torch's
// own generator (as any two generators do); their distributions are the same.
#include <cmath>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ops/copy_ops.h"
#include "engine/views/view_ops.h"
#include "engine/kernels/random.h"
#include "engine/runtime/backend.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/tensor/shape_util.h"
#include "engine/core/status_macros.h"

namespace tensord::engine {
namespace {

absl::StatusOr<uint64_t> ReadSeed(AttrReader& a, uint64_t* offset) {
  TENSORD_ASSIGN_OR_RETURN(int64_t off, a.Int("offset", 0));
  if (off < 0) return RuntimeError("random", absl::StrCat("offset must be >= 0, got ", off));
  *offset = static_cast<uint64_t>(off);
  if (!a.Has("seed")) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    return rng();
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t seed, a.Int("seed"));
  return static_cast<uint64_t>(seed);
}

std::vector<AttrSpec> SeedAttrs(std::vector<AttrSpec> attrs) {
  attrs.push_back(Opt("seed", AttrType::kInt, "a fresh random seed", "generator key"));
  attrs.push_back(Opt("offset", AttrType::kInt, "0", "counter of the first element"));
  return attrs;
}

// A plan that fills `target` (contiguous, or a staging buffer copied into it) with draws.
absl::StatusOr<PlannedOp> PlanDraw(absl::string_view op, const Tensor& target, DistArgs d,
                                   const Tensor* probs = nullptr) {
  PlannedOp plan;
  plan.outputs.push_back(target);
  plan.writes.push_back(target.storage());
  if (target.numel() == 0) return plan;
  Tensor staging = target;
  if (!target.is_contiguous()) {
    TENSORD_ASSIGN_OR_RETURN(
        staging, AllocateTensor(op, TensorMeta::Contiguous(target.dtype(), target.sizes()),
                                target.device()));
  }
  Tensor p;
  if (probs != nullptr) {
    plan.reads.push_back(probs->storage());
    TENSORD_ASSIGN_OR_RETURN(
        p, AllocateTensor(op, TensorMeta::Contiguous(DType::kFloat64, target.sizes()),
                          target.device()));
  }
  const Tensor prob_src = probs ? *probs : Tensor();
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(target.device()));
  plan.kernel = [backend, target, staging, d, p, prob_src]() -> absl::Status {
    if (p.defined()) {
      TENSORD_ASSIGN_OR_RETURN(Tensor pe, Expand(prob_src, target.sizes()));
      TENSORD_RETURN_IF_ERROR(
          backend->Copy(target.sizes(), StridedRef::Of(p), StridedRef::Of(pe)));
    }
    TENSORD_RETURN_IF_ERROR(backend->Random(d, StridedRef::Of(staging), staging.numel(),
                                            p.defined() ? p.data_as<double>() : nullptr));
    if (!staging.is_alias_of(target)) {
      TENSORD_RETURN_IF_ERROR(
          backend->Copy(target.sizes(), StridedRef::Of(target), StridedRef::Of(staging)));
    }
    return absl::OkStatus();
  };
  return plan;
}

absl::StatusOr<Tensor> NewFactoryTensor(absl::string_view op, AttrReader& a, DType dflt) {
  TENSORD_ASSIGN_OR_RETURN(auto size, a.IntList("size"));
  TENSORD_RETURN_IF_ERROR(CheckShape(op, size).status());
  TENSORD_ASSIGN_OR_RETURN(auto dtype, a.OptionalDType("dtype"));
  TENSORD_ASSIGN_OR_RETURN(Device device, a.GetDevice("device", kCpu));
  return AllocateTensor(op, TensorMeta::Contiguous(dtype.value_or(dflt), size), device);
}

absl::Status CheckFloat(absl::string_view op, DType d) {
  if (!IsFloating(d)) {
    return KernelNotImplemented(op, op, d);
  }
  return absl::OkStatus();
}

// The kernel torch names when normal draws are asked for in an integer dtype.
const char* NormalKernelName(const Tensor& t) {
  return t.device().is_cpu() ? "normal_kernel_cpu" : "normal_kernel_cuda";
}

// torch.binomial: count and prob broadcast and widened to float64 buffers, then one draw per
// element (BinomialDraw) into a new contiguous tensor of count's dtype.
absl::StatusOr<PlannedOp> PlanBinomial(const Tensor& count, const Tensor& prob, DistArgs d) {
  constexpr absl::string_view op = "binomial";
  if (count.dtype() != DType::kFloat32 && count.dtype() != DType::kFloat64) {
    return KernelNotImplemented(op, "binomial_cpu", count.dtype());
  }
  if (prob.dtype() != count.dtype()) {
    return RuntimeError(op, absl::StrCat("Found dtype ", DTypeLegacyName(prob.dtype()),
                                         " but expected ", DTypeLegacyName(count.dtype())));
  }
  if (count.device() != prob.device()) {
    return RuntimeError(op, absl::StrCat("Expected all tensors to be on the same device, but "
                                         "found at least two devices, ",
                                         count.device().ToString(), " and ",
                                         prob.device().ToString(), "!"));
  }
  TENSORD_ASSIGN_OR_RETURN(DimVector shape, BroadcastShapes(op, count.sizes(), prob.sizes()));
  const Device device = count.device();
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta::Contiguous(count.dtype(), shape), device));
  PlannedOp plan;
  plan.outputs = {out};
  plan.writes = {out.storage()};
  plan.reads = {count.storage(), prob.storage()};
  if (out.numel() == 0) return plan;
  TENSORD_ASSIGN_OR_RETURN(Tensor counts,
                           AllocateTensor(op, TensorMeta::Contiguous(DType::kFloat64, shape), device));
  TENSORD_ASSIGN_OR_RETURN(Tensor probs,
                           AllocateTensor(op, TensorMeta::Contiguous(DType::kFloat64, shape), device));
  TENSORD_ASSIGN_OR_RETURN(Tensor count_view, Expand(count, shape));
  TENSORD_ASSIGN_OR_RETURN(Tensor prob_view, Expand(prob, shape));
  d.probs = probs.data_as<double>();
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
  plan.kernel = [backend, out, counts, probs, count_view, prob_view, d]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(
        backend->Copy(counts.sizes(), StridedRef::Of(counts), StridedRef::Of(count_view)));
    TENSORD_RETURN_IF_ERROR(
        backend->Copy(probs.sizes(), StridedRef::Of(probs), StridedRef::Of(prob_view)));
    return backend->Random(d, StridedRef::Of(out), out.numel(), counts.data_as<double>());
  };
  return plan;
}

}  // namespace

void RegisterRandomOps(std::vector<OpDef>& ops) {
  const auto factory_attrs = [](std::vector<AttrSpec> extra) {
    extra.insert(extra.begin(), Req("size", AttrType::kIntList));
    extra.push_back(Opt("dtype", AttrType::kDType, "float32 (randint: int64)"));
    extra.push_back(Opt("device", AttrType::kDevice, "the session's device"));
    return SeedAttrs(extra);
  };
  ops.push_back({"rand", OpKind::kFactory, {}, factory_attrs({}),
                 "Uniform draws in [0, 1).", false,
                 [](Inputs, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   DistArgs d{Dist::kUniform};
                   TENSORD_ASSIGN_OR_RETURN(d.seed, ReadSeed(a, &d.offset));
                   TENSORD_ASSIGN_OR_RETURN(Tensor t, NewFactoryTensor("rand", a, DefaultFloatDType()));
                   TENSORD_RETURN_IF_ERROR(CheckFloat("check_uniform_bounds", t.dtype()));
                   return PlanDraw("rand", t, d);
                 }});
  ops.push_back({"randn", OpKind::kFactory, {}, factory_attrs({}),
                 "Standard normal draws.", false,
                 [](Inputs, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   DistArgs d{Dist::kNormal};
                   TENSORD_ASSIGN_OR_RETURN(d.seed, ReadSeed(a, &d.offset));
                   TENSORD_ASSIGN_OR_RETURN(Tensor t, NewFactoryTensor("randn", a, DefaultFloatDType()));
                   TENSORD_RETURN_IF_ERROR(CheckFloat(NormalKernelName(t), t.dtype()));
                   return PlanDraw("randn", t, d);
                 }});
  ops.push_back({"randint", OpKind::kFactory, {},
                 factory_attrs({Opt("low", AttrType::kInt, "0"), Req("high", AttrType::kInt)}),
                 "Integers drawn uniformly from [low, high).", false,
                 [](Inputs, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   DistArgs d{Dist::kInt};
                   TENSORD_ASSIGN_OR_RETURN(d.seed, ReadSeed(a, &d.offset));
                   TENSORD_ASSIGN_OR_RETURN(d.lo, a.Int("low", 0));
                   TENSORD_ASSIGN_OR_RETURN(d.hi, a.Int("high"));
                   if (d.lo >= d.hi) {
                     return RuntimeError("randint", absl::StrCat(
                         "random_ expects 'from' to be less than 'to', but got from=", d.lo,
                         " >= to=", d.hi));
                   }
                   TENSORD_ASSIGN_OR_RETURN(Tensor t, NewFactoryTensor("randint", a, DType::kInt64));
                   return PlanDraw("randint", t, d);
                 }});
  ops.push_back({"uniform_", OpKind::kInPlace, {"self"},
                 SeedAttrs({Opt("from", AttrType::kScalar, "0"), Opt("to", AttrType::kScalar, "1")}),
                 "Fills self with uniform draws in [from, to).", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   DistArgs d{Dist::kUniform};
                   TENSORD_ASSIGN_OR_RETURN(d.seed, ReadSeed(a, &d.offset));
                   TENSORD_ASSIGN_OR_RETURN(Scalar lo, a.GetScalar("from", Scalar(int64_t{0})));
                   TENSORD_ASSIGN_OR_RETURN(Scalar hi, a.GetScalar("to", Scalar(int64_t{1})));
                   d.a = lo.to_double(), d.b = hi.to_double();
                   if (d.a > d.b) {
                     return RuntimeError("uniform_", absl::StrCat(
                         "uniform_ expects to return a [from, to) range, but found from=",
                         lo.ToString(), " > to=", hi.ToString()));
                   }
                   TENSORD_RETURN_IF_ERROR(CheckFloat("check_uniform_bounds", in[0].dtype()));
                   return PlanDraw("uniform_", in[0], d);
                 }});
  ops.push_back({"normal_", OpKind::kInPlace, {"self"},
                 SeedAttrs({Opt("mean", AttrType::kScalar, "0"), Opt("std", AttrType::kScalar, "1")}),
                 "Fills self with normal draws.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   DistArgs d{Dist::kNormal};
                   TENSORD_ASSIGN_OR_RETURN(d.seed, ReadSeed(a, &d.offset));
                   TENSORD_ASSIGN_OR_RETURN(Scalar m, a.GetScalar("mean", Scalar(int64_t{0})));
                   TENSORD_ASSIGN_OR_RETURN(Scalar s, a.GetScalar("std", Scalar(int64_t{1})));
                   d.a = m.to_double(), d.b = s.to_double();
                   if (d.b < 0) {
                     return RuntimeError("normal_", absl::StrCat(
                         "normal expects std >= 0.0, but found std ", s.ToString()));
                   }
                   TENSORD_RETURN_IF_ERROR(CheckFloat(NormalKernelName(in[0]), in[0].dtype()));
                   return PlanDraw("normal_", in[0], d);
                 }});
  ops.push_back({"bernoulli_", OpKind::kInPlace, {"self"},
                 SeedAttrs({Opt("p", AttrType::kScalar, "0.5")}),
                 "Fills self with 1 (probability p) or 0.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   DistArgs d{Dist::kBernoulliScalar};
                   TENSORD_ASSIGN_OR_RETURN(d.seed, ReadSeed(a, &d.offset));
                   TENSORD_ASSIGN_OR_RETURN(Scalar p, a.GetScalar("p", Scalar(0.5)));
                   d.a = p.to_double();
                   if (!(d.a >= 0 && d.a <= 1)) {
                     return RuntimeError("bernoulli_", absl::StrCat(
                         "bernoulli_ expects p to be in [0, 1], but got p=", p.ToString()));
                   }
                   return PlanDraw("bernoulli_", in[0], d);
                 }});
  ops.push_back({"bernoulli", OpKind::kCompute, {"self"}, SeedAttrs({}),
                 "1 with probability self[i] (in [0, 1]), else 0; self's dtype and shape.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   DistArgs d{Dist::kBernoulliTensor};
                   TENSORD_ASSIGN_OR_RETURN(d.seed, ReadSeed(a, &d.offset));
                   TENSORD_RETURN_IF_ERROR(CheckFloat("bernoulli_tensor_cpu_self_", in[0].dtype()));
                   TENSORD_ASSIGN_OR_RETURN(
                       Tensor t, AllocateTensor("bernoulli",
                                                TensorMeta::Contiguous(in[0].dtype(), in[0].sizes()),
                                                in[0].device()));
                   return PlanDraw("bernoulli", t, d, &in[0]);
                 }});
  ops.push_back({"binomial", OpKind::kCompute, {"count", "prob"}, SeedAttrs({}),
                 "A Binomial(count[i], prob[i]) draw per element (count and prob broadcast, one "
                 "floating dtype); count's dtype.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   DistArgs d{Dist::kBinomial};
                   TENSORD_ASSIGN_OR_RETURN(d.seed, ReadSeed(a, &d.offset));
                   return PlanBinomial(in[0], in[1], d);
                 }});
  ops.push_back({"poisson", OpKind::kCompute, {"self"}, SeedAttrs({}),
                 "A Poisson draw with rate self[i] (>= 0) per element; self's dtype (float32, "
                 "float64, bfloat16) and shape.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   DistArgs d{Dist::kPoisson};
                   TENSORD_ASSIGN_OR_RETURN(d.seed, ReadSeed(a, &d.offset));
                   const DType dtype = in[0].dtype();
                   if (dtype != DType::kFloat32 && dtype != DType::kFloat64 &&
                       dtype != DType::kBFloat16) {
                     return KernelNotImplemented("poisson", "poisson_cpu", dtype);
                   }
                   TENSORD_ASSIGN_OR_RETURN(
                       Tensor t, AllocateTensor("poisson",
                                                TensorMeta::Contiguous(dtype, in[0].sizes()),
                                                in[0].device()));
                   return PlanDraw("poisson", t, d, &in[0]);
                 }});
}

}  // namespace tensord::engine
