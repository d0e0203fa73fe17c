// torch.nn.functional's ops that ATen (or torch/nn/functional.py) composes of others:
// cosine_similarity, pairwise_distance, normalize, glu, softmin, embedding, one_hot and
// dropout (seeded: its mask is a counter-based draw, random_ops.cc). Each is one server op
// planned as its composition (composition.h), so it runs on every device; dtype rules and
// errors are torch 1.13's.
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
#include "engine/ops/type_promotion.h"
#include "engine/tensor/shape_util.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

Attrs DimAttrs(int64_t dim, bool keepdim = false) {
  Attrs a;
  a.Set("dim", std::vector<int64_t>{dim});
  a.Set("keepdim", keepdim);
  return a;
}

// ATen's cosine_similarity (1.13): in the operands' common (floating) dtype, broadcast, each
// operand divided by its norm over dim clamped below at eps, then the products summed:
// sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)). (Not <x1, x2> / max(|x1| |x2|, eps): the
// two differ where a norm is below eps.)
absl::StatusOr<PlannedOp> PlanCosineSimilarity(const Tensor& x1, const Tensor& x2, int64_t dim,
                                               double eps) {
  constexpr absl::string_view op = "cosine_similarity";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {x1, x2}).status());
  const DType common = ResultType({x1, x2});
  if (!IsFloating(common)) {
    return RuntimeError(op, absl::StrCat("expected common dtype to be floating point, yet "
                                         "common dtype is ", DTypeLegacyName(common)));
  }
  TENSORD_ASSIGN_OR_RETURN(const DimVector shape, BroadcastShapes(op, x1.sizes(), x2.sizes()));
  TENSORD_RETURN_IF_ERROR(WrapDim(op, dim, static_cast<int64_t>(shape.size())).status());
  Composition c({x1, x2});
  TENSORD_ASSIGN_OR_RETURN(Tensor a, c.ToDType(x1, common));
  TENSORD_ASSIGN_OR_RETURN(Tensor b, c.ToDType(x2, common));
  TENSORD_ASSIGN_OR_RETURN(a, Expand(a, shape));
  TENSORD_ASSIGN_OR_RETURN(b, Expand(b, shape));
  const Attrs norm = DimAttrs(dim, /*keepdim=*/true).Set("p", Scalar(2.0));
  const Attrs floor = Attrs().Set("min", Scalar(eps));
  TENSORD_ASSIGN_OR_RETURN(Tensor na, c.Op1("norm", {a}, norm));
  TENSORD_ASSIGN_OR_RETURN(na, c.Op1("clamp_min", {na}, floor));
  TENSORD_ASSIGN_OR_RETURN(Tensor nb, c.Op1("norm", {b}, norm));
  TENSORD_ASSIGN_OR_RETURN(nb, c.Op1("clamp_min", {nb}, floor));
  TENSORD_ASSIGN_OR_RETURN(Tensor an, c.Op1("div", {a, na}));
  TENSORD_ASSIGN_OR_RETURN(Tensor bn, c.Op1("div", {b, nb}));
  TENSORD_ASSIGN_OR_RETURN(Tensor ab, c.Op1("mul", {an, bn}));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Op1("sum", {ab}, DimAttrs(dim)));
  return std::move(c).Finish({out});
}

// pairwise_distance: the p-norm of x1 - x2 + eps over the last dim of the broadcast shape.
absl::StatusOr<PlannedOp> PlanPairwiseDistance(const Tensor& x1, const Tensor& x2, double p,
                                               double eps, bool keepdim) {
  constexpr absl::string_view op = "pairwise_distance";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {x1, x2}).status());
  const int64_t rank = std::max(x1.dim(), x2.dim());
  Composition c({x1, x2});
  TENSORD_ASSIGN_OR_RETURN(Tensor d, c.Op1("sub", {x1, x2}));
  TENSORD_ASSIGN_OR_RETURN(d, c.Op1("add", {d}, Attrs().Set("other", Scalar(eps))));
  Attrs norm;
  norm.Set("p", Scalar(p));
  if (rank > 0) norm = DimAttrs(rank - 1, keepdim).Set("p", Scalar(p));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Op1("norm", {d}, norm));
  return std::move(c).Finish({out});
}

// cdist: the p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M),
// batch dims broadcast. For p = 2 torch (and so tensord) uses a matrix product where asked, or
// by default where P or R exceeds 25: |a|² + |b|² - 2 a·b, as one matmul of the rows extended
// by their squared norms and ones, clamped at 0 and rooted. Otherwise the norm of each pair's
// difference.
absl::StatusOr<PlannedOp> PlanCdist(const Tensor& x1, const Tensor& x2, double p,
                                    const std::string& mode) {
  constexpr absl::string_view op = "cdist";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {x1, x2}).status());
  if (x1.dim() < 2) {
    return RuntimeError(op, absl::StrCat("cdist only supports at least 2D tensors, X1 got: ",
                                         x1.dim(), "D"));
  }
  if (x2.dim() < 2) {
    return RuntimeError(op, absl::StrCat("cdist only supports at least 2D tensors, X2 got: ",
                                         x2.dim(), "D"));
  }
  for (const auto& [t, which] : {std::pair<const Tensor&, const char*>{x1, "X1"}, {x2, "X2"}}) {
    if (!IsFloating(t.dtype())) {
      return RuntimeError(op, absl::StrCat("cdist only supports floating-point dtypes, ", which,
                                           " got: ", DTypeLegacyName(t.dtype())));
    }
  }
  if (x1.dtype() != x2.dtype()) {
    return RuntimeError(op, absl::StrCat("expected scalar type ", DTypeLegacyName(x1.dtype()),
                                         " but found ", DTypeLegacyName(x2.dtype())));
  }
  if (x1.dtype() == DType::kFloat16 || x1.dtype() == DType::kBFloat16) {
    return KernelNotImplemented(op, "cdist", x1.dtype());
  }
  if (!(p >= 0)) return RuntimeError(op, "cdist only supports non-negative p values");
  const int64_t m = x1.size(x1.dim() - 1);
  if (x2.size(x2.dim() - 1) != m) {
    return RuntimeError(op, absl::StrCat("X1 and X2 must have the same number of columns. X1: ",
                                         m, " X2: ", x2.size(x2.dim() - 1)));
  }
  int mm;  // 0: never, 1: if P or R > 25, 2: always
  if (mode == "use_mm_for_euclid_dist_if_necessary") mm = 1;
  else if (mode == "use_mm_for_euclid_dist") mm = 2;
  else if (mode == "donot_use_mm_for_euclid_dist") mm = 0;
  else return ValueError(op, absl::StrCat(mode, " is not a valid value for compute_mode"));
  // The batch dims, broadcast.
  TENSORD_ASSIGN_OR_RETURN(
      DimVector batch,
      BroadcastShapes(op, x1.sizes().subspan(0, x1.dim() - 2), x2.sizes().subspan(0, x2.dim() - 2)));
  const int64_t rows1 = x1.size(x1.dim() - 2), rows2 = x2.size(x2.dim() - 2);
  DimVector shape1 = batch, shape2 = batch;
  shape1.insert(shape1.end(), {rows1, m});
  shape2.insert(shape2.end(), {rows2, m});
  TENSORD_ASSIGN_OR_RETURN(const Tensor a, Expand(x1, shape1));
  TENSORD_ASSIGN_OR_RETURN(const Tensor b, Expand(x2, shape2));
  Composition c({x1, x2});
  const int64_t last = static_cast<int64_t>(batch.size()) + 1;
  Tensor out;
  if (p == 2 && (mm == 2 || (mm == 1 && (rows1 > 25 || rows2 > 25))) && m > 0) {
    const Attrs sum_last = Attrs().Set("dim", std::vector<int64_t>{-1}).Set("keepdim", true);
    TENSORD_ASSIGN_OR_RETURN(Tensor na, c.Op1("mul", {a, a}));
    TENSORD_ASSIGN_OR_RETURN(na, c.Op1("sum", {na}, sum_last));
    TENSORD_ASSIGN_OR_RETURN(Tensor nb, c.Op1("mul", {b, b}));
    TENSORD_ASSIGN_OR_RETURN(nb, c.Op1("sum", {nb}, sum_last));
    DimVector ones1 = shape1, ones2 = shape2;
    ones1.back() = 1;
    ones2.back() = 1;
    TENSORD_ASSIGN_OR_RETURN(const Tensor pad1, c.Full(ones1, Scalar(1.0), x1.dtype(), x1.device()));
    TENSORD_ASSIGN_OR_RETURN(const Tensor pad2, c.Full(ones2, Scalar(1.0), x1.dtype(), x1.device()));
    TENSORD_ASSIGN_OR_RETURN(const Tensor scaled, c.Op1("mul", {a}, Attrs().Set("other", Scalar(-2.0))));
    const Attrs along_last = Attrs().Set("dim", int64_t{-1});
    TENSORD_ASSIGN_OR_RETURN(const Tensor left, c.Op1("cat", {scaled, na, pad1}, along_last));
    TENSORD_ASSIGN_OR_RETURN(const Tensor right, c.Op1("cat", {b, pad2, nb}, along_last));
    TENSORD_ASSIGN_OR_RETURN(const Tensor right_t, Transpose(right, -1, -2));
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("matmul", {left, right_t}));
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("clamp_min", {out}, Attrs().Set("min", Scalar(0.0))));
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("sqrt", {out}));
  } else {
    TENSORD_ASSIGN_OR_RETURN(const Tensor wide1, Unsqueeze(a, last));      // (..., P, 1, M)
    TENSORD_ASSIGN_OR_RETURN(const Tensor wide2, Unsqueeze(b, last - 1));  // (..., 1, R, M)
    TENSORD_ASSIGN_OR_RETURN(const Tensor d, c.Op1("sub", {wide1, wide2}));
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("norm", {d}, DimAttrs(-1, false).Set("p", Scalar(p))));
  }
  TENSORD_ASSIGN_OR_RETURN(out, c.Contiguous(out));
  return std::move(c).Finish({out});
}

// normalize: input / max(||input||_p over dim, eps).
absl::StatusOr<PlannedOp> PlanNormalize(const Tensor& self, double p, int64_t dim, double eps) {
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(Tensor norm, c.Op1("norm", {self}, DimAttrs(dim, true).Set("p", Scalar(p))));
  TENSORD_ASSIGN_OR_RETURN(norm, c.Op1("clamp_min", {norm}, Attrs().Set("min", Scalar(eps))));
  TENSORD_ASSIGN_OR_RETURN(norm, Expand(norm, self.sizes()));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Op1("div", {self, norm}));
  return std::move(c).Finish({out});
}

// glu: the first half of dim times the sigmoid of the second.
absl::StatusOr<PlannedOp> PlanGlu(const Tensor& self, int64_t dim_in) {
  constexpr absl::string_view op = "glu";
  if (self.dim() == 0) {
    return RuntimeError(op, "glu does not support scalars because halving size must be even");
  }
  TENSORD_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(op, dim_in, self.dim()));
  if (self.size(dim) % 2 != 0) {
    return RuntimeError(op, absl::StrCat("Halving dimension must be even, but dimension ", dim,
                                         " is size ", self.size(dim)));
  }
  if (!IsFloating(self.dtype()) || (self.device().is_cpu() && self.dtype() == DType::kFloat16)) {
    return KernelNotImplemented(op, self.device().is_cpu() ? "glu_cpu" : "glu_cuda",
                                self.dtype());
  }
  const int64_t half = self.size(dim) / 2;
  TENSORD_ASSIGN_OR_RETURN(const Tensor a, Narrow(self, dim, 0, half));
  TENSORD_ASSIGN_OR_RETURN(const Tensor b, Narrow(self, dim, half, half));
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(const Tensor gate, c.Op1("sigmoid", {b}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor out, c.Op1("mul", {a, gate}));
  return std::move(c).Finish({out});
}

// embedding: the rows of weight at indices, shaped indices' shape + [embedding size].
absl::StatusOr<PlannedOp> PlanEmbedding(const Tensor& weight, const Tensor& indices) {
  constexpr absl::string_view op = "embedding";
  if (indices.dtype() != DType::kInt64 && indices.dtype() != DType::kInt32) {
    return RuntimeError(op, absl::StrCat("Expected tensor for argument #1 'indices' to have one "
                                         "of the following scalar types: Long, Int; but got "
                                         "torch.", DTypeLegacyName(indices.dtype()),
                                         "Tensor instead (while checking arguments for "
                                         "embedding)"));
  }
  if (weight.dim() != 2) return RuntimeError(op, "'weight' must be 2-D");
  DimVector shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(weight.size(1));
  Composition c({weight, indices});
  TENSORD_ASSIGN_OR_RETURN(const Tensor flat, c.Reshape(indices, {indices.numel()}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor rows,
                           c.Op1("index_select", {weight, flat}, Attrs().Set("dim", int64_t{0})));
  TENSORD_ASSIGN_OR_RETURN(const Tensor out, View(rows, shape));
  return std::move(c).Finish({out});
}

// one_hot: int64 zeros of shape + [num_classes] with a 1 scattered at each class (a class out
// of range fails the op where its kernel runs, as an index out of range does).
absl::StatusOr<PlannedOp> PlanOneHot(const Tensor& self, int64_t classes) {
  constexpr absl::string_view op = "one_hot";
  if (self.dtype() != DType::kInt64) {
    return RuntimeError(op, "one_hot is only applicable to index tensor.");
  }
  if (classes < 0) {
    return RuntimeError(op, absl::StrCat("num_classes must be given (>= 0) to the server op, "
                                         "got ", classes));
  }
  DimVector shape(self.sizes().begin(), self.sizes().end());
  shape.push_back(classes);
  TENSORD_RETURN_IF_ERROR(CheckShape(op, shape).status());
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(const Tensor out, c.Full(shape, Scalar(int64_t{0}), DType::kInt64, self.device()));
  if (self.numel() > 0) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor index, Unsqueeze(self, self.dim()));
    Attrs at;
    at.Set("dim", int64_t{-1});
    at.Set("src", Scalar(int64_t{1}));
    TENSORD_RETURN_IF_ERROR(c.Op("scatter_", {out, index}, at).status());
  }
  return std::move(c).Finish({out});
}

// dropout (training): input * bernoulli(1 - p) / (1 - p), the mask drawn per element, or per
// feature map (the first `noise_dims` dims drawn, the rest broadcast: dropout1d/2d/3d);
// p == 1 gives input * 0.
absl::StatusOr<PlannedOp> PlanDropout(const Tensor& self, double p,
                                      std::optional<int64_t> noise_dims, const Attrs& seed) {
  constexpr absl::string_view op = "dropout";
  if (!(p >= 0 && p <= 1)) {
    return ValueError(op, absl::StrCat("dropout probability has to be between 0 and 1, but got ",
                                       p));
  }
  Composition c({self});
  if (p == 1) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor zero, WrapNumber(Scalar(int64_t{0})));
    TENSORD_ASSIGN_OR_RETURN(const Tensor out, c.Op1("mul", {self, zero}));
    return std::move(c).Finish({out});
  }
  DimVector noise_shape(self.sizes().begin(), self.sizes().end());
  if (noise_dims.has_value()) {
    if (*noise_dims < 0 || *noise_dims > self.dim()) {
      return RuntimeError(op, absl::StrCat("noise_dims must be in [0, ", self.dim(), "], got ",
                                           *noise_dims));
    }
    for (int64_t d = *noise_dims; d < self.dim(); ++d) noise_shape[d] = 1;
  }
  TENSORD_ASSIGN_OR_RETURN(
      const Tensor noise,
      AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), noise_shape), self.device()));
  Attrs draw = seed;
  draw.Set("p", Scalar(1 - p));
  TENSORD_RETURN_IF_ERROR(c.Op("bernoulli_", {noise}, draw).status());
  TENSORD_RETURN_IF_ERROR(c.Op("div_", {noise}, Attrs().Set("other", Scalar(1 - p))).status());
  TENSORD_ASSIGN_OR_RETURN(const Tensor out, c.Op1("mul", {self, noise}));
  return std::move(c).Finish({out});
}

}  // namespace

void RegisterFunctionalOps(std::vector<OpDef>& ops) {
  ops.push_back({"cosine_similarity", OpKind::kCompute, {"x1", "x2"},
                 {Opt("dim", AttrType::kInt, "1"), Opt("eps", AttrType::kScalar, "1e-8")},
                 "torch.nn.functional.cosine_similarity: <x1 / max(|x1|, eps), "
                 "x2 / max(|x2|, eps)> over dim, broadcast, in the common floating dtype.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim", 1));
                   TENSORD_ASSIGN_OR_RETURN(Scalar eps, a.GetScalar("eps", Scalar(1e-8)));
                   return PlanCosineSimilarity(in[0], in[1], dim, eps.to_double());
                 }});
  ops.push_back({"pairwise_distance", OpKind::kCompute, {"x1", "x2"},
                 {Opt("p", AttrType::kScalar, "2.0"), Opt("eps", AttrType::kScalar, "1e-6"),
                  Opt("keepdim", AttrType::kBool, "false")},
                 "torch.nn.functional.pairwise_distance: the p-norm of x1 - x2 + eps over the "
                 "last dim.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Scalar p, a.GetScalar("p", Scalar(2.0)));
                   TENSORD_ASSIGN_OR_RETURN(Scalar eps, a.GetScalar("eps", Scalar(1e-6)));
                   TENSORD_ASSIGN_OR_RETURN(bool keepdim, a.Bool("keepdim", false));
                   return PlanPairwiseDistance(in[0], in[1], p.to_double(), eps.to_double(),
                                               keepdim);
                 }});
  ops.push_back({"cdist", OpKind::kCompute, {"x1", "x2"},
                 {Opt("p", AttrType::kScalar, "2.0"),
                  Opt("compute_mode", AttrType::kString, "use_mm_for_euclid_dist_if_necessary")},
                 "torch.cdist: the p-norm distance between each row of x1 (..., P, M) and each "
                 "row of x2 (..., R, M), batch dims broadcast: (..., P, R).",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Scalar p, a.GetScalar("p", Scalar(2.0)));
                   TENSORD_ASSIGN_OR_RETURN(
                       std::string mode,
                       a.String("compute_mode", "use_mm_for_euclid_dist_if_necessary"));
                   return PlanCdist(in[0], in[1], p.to_double(), mode);
                 }});
  ops.push_back({"normalize", OpKind::kCompute, {"self"},
                 {Opt("p", AttrType::kScalar, "2.0"), Opt("dim", AttrType::kInt, "1"),
                  Opt("eps", AttrType::kScalar, "1e-12")},
                 "torch.nn.functional.normalize: self / max(||self||_p over dim, eps).", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Scalar p, a.GetScalar("p", Scalar(2.0)));
                   TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim", 1));
                   TENSORD_ASSIGN_OR_RETURN(Scalar eps, a.GetScalar("eps", Scalar(1e-12)));
                   return PlanNormalize(in[0], p.to_double(), dim, eps.to_double());
                 }});
  ops.push_back({"glu", OpKind::kCompute, {"self"}, {Opt("dim", AttrType::kInt, "-1")},
                 "torch.nn.functional.glu: a * sigmoid(b) for the halves a, b of dim.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim", -1));
                   return PlanGlu(in[0], dim);
                 }});
  ops.push_back({"softmin", OpKind::kCompute, {"self"},
                 {Req("dim", AttrType::kInt), Opt("dtype", AttrType::kDType, "None")},
                 "torch.nn.functional.softmin: softmax(-self) along dim.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   Composition c(in);
                   TENSORD_ASSIGN_OR_RETURN(const Tensor neg, c.Op1("neg", {in[0]}));
                   TENSORD_ASSIGN_OR_RETURN(const Tensor out, c.Op1("softmax", {neg}, a.attrs()));
                   return std::move(c).Finish({out});
                 }});
  ops.push_back({"embedding", OpKind::kCompute, {"weight", "indices"}, {},
                 "torch.nn.functional.embedding: the rows of weight at indices (int64/int32).",
                 false, [](Inputs in, AttrReader&) { return PlanEmbedding(in[0], in[1]); }});
  ops.push_back({"one_hot", OpKind::kCompute, {"self"},
                 {Req("num_classes", AttrType::kInt, "classes (the client finds -1's maximum)")},
                 "torch.nn.functional.one_hot: int64, a 1 at each element's class in a new last "
                 "dim of num_classes.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t n, a.Int("num_classes"));
                   return PlanOneHot(in[0], n);
                 }});
  ops.push_back({"dropout", OpKind::kCompute, {"self"},
                 {Opt("p", AttrType::kScalar, "0.5"),
                  Opt("noise_dims", AttrType::kInt, "None",
                      "None: a draw per element; k: per slice of the first k dims (dropout2d)"),
                  Opt("seed", AttrType::kInt, "a fresh random seed", "generator key"),
                  Opt("offset", AttrType::kInt, "0", "counter of the first draw")},
                 "torch.nn.functional.dropout in training: self * bernoulli(1 - p) / (1 - p), "
                 "the mask drawn from (seed, offset) as every random op.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Scalar p, a.GetScalar("p", Scalar(0.5)));
                   TENSORD_ASSIGN_OR_RETURN(std::optional<int64_t> noise, a.OptionalInt("noise_dims"));
                   Attrs seed;
                   for (const char* name : {"seed", "offset"}) {
                     if (const AttrValue* v = a.attrs().Find(name)) seed.Set(name, *v);
                   }
                   return PlanDropout(in[0], p.to_double(), noise, seed);
                 }});
}

}  // namespace tensord::engine
