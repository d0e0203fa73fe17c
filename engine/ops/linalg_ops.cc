// Matrix products: dot, mv, mm, bmm, matmul (every rank case, batch dims broadcast), addmm,
// addmv, baddbmm, addbmm (beta * self + alpha * product, in one BLAS call), addr, outer, inner,
// tensordot, linalg.multi_dot and chain_matmul. float32/float64 go to BLAS (OpenBLAS) with transposed operands passed as such, not
// copied; integer and bfloat16 products use a blocked loop. Outputs are contiguous, as torch's.
#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/kernels/convert.h"
#include "engine/kernels/matmul.h"
#include "engine/runtime/backend.h"
#include "engine/ops/elementwise.h"
#include "engine/core/checked_math.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/ops/type_promotion.h"
#include "engine/tensor/shape_util.h"
#include "engine/core/status_macros.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

absl::Status CheckMatmulDtypes(absl::string_view op, const Tensor& a, const Tensor& b) {
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, {a, b}));
  if (a.dtype() != b.dtype()) {
    return RuntimeError(op, absl::StrCat("expected scalar type ", DTypeLegacyName(a.dtype()),
                                         " but found ", DTypeLegacyName(b.dtype())));
  }
  if (device.is_cpu()) {
    if (a.dtype() == DType::kBool) {
      // torch's CPU products have no bool kernel; its error names the kernel the op reaches.
      const absl::string_view kernel = op == "mv" || op == "addmv" ? "addmv_impl_cpu"
                                       : op == "dot"                ? "dot"
                                       : op == "bmm" || op == "baddbmm" || op == "matmul"
                                           ? (op == "baddbmm" ? "baddbmm" : "bmm")
                                           : "addmm_impl_cpu_";
      return KernelNotImplemented(op, kernel, a.dtype());
    }
    if (a.dtype() == DType::kFloat16 && a.numel() > 0 && b.numel() > 0) {
      return RuntimeError(op, "\"addmm_impl_cpu_\" not implemented for 'Half'");
    }
  } else if (!IsFloating(a.dtype())) {
    // cuBLAS multiplies floating types only (as torch's CUDA products).
    return KernelNotImplemented(op, "addmm_cuda", a.dtype());
  }
  return absl::OkStatus();
}

// The general batched product: a [batch..., n, k] @ b [batch..., k, m] (batch dims already
// broadcast to `batch`), written into a new contiguous [batch..., n, m] tensor, optionally
// alpha * product + beta * init (init broadcast to the result).
absl::StatusOr<PlannedOp> PlanBatchedGemm(absl::string_view op, const Tensor& a, const Tensor& b,
                                          IntList batch, int64_t n, int64_t k, int64_t m,
                                          DimVector out_shape, const Tensor* init = nullptr,
                                          double alpha = 1, double beta = 0) {
  DimVector full(batch.begin(), batch.end());
  full.push_back(n);
  full.push_back(m);
  TENSORD_RETURN_IF_ERROR(CheckShape(op, full).status());
  TENSORD_ASSIGN_OR_RETURN(Tensor out, AllocateTensor(op, TensorMeta::Contiguous(a.dtype(), full), a.device()));
  DimVector ab(batch.begin(), batch.end());
  ab.push_back(n);
  ab.push_back(k);
  DimVector bb(batch.begin(), batch.end());
  bb.push_back(k);
  bb.push_back(m);
  TENSORD_ASSIGN_OR_RETURN(Tensor ae, Expand(a, ab));
  TENSORD_ASSIGN_OR_RETURN(Tensor be, Expand(b, bb));
  Tensor init_e;
  if (init != nullptr && beta != 0) {
    TENSORD_ASSIGN_OR_RETURN(init_e, Expand(*init, full));
  }
  PlannedOp plan;
  TENSORD_ASSIGN_OR_RETURN(Tensor result, Reshape(out, out_shape));
  plan.outputs.push_back(result);
  plan.reads = {a.storage(), b.storage()};
  if (init_e.defined()) plan.reads.push_back(init_e.storage());
  plan.writes.push_back(out.storage());
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(out.device()));
  plan.kernel = [backend, ae, be, out, init_e, n, k, m, alpha, beta]() -> absl::Status {
    if (init_e.defined()) {
      TENSORD_RETURN_IF_ERROR(
          backend->Copy(out.sizes(), StridedRef::Of(out), StridedRef::Of(init_e)));
    } else if (k == 0) {
      TENSORD_RETURN_IF_ERROR(
          backend->Fill(out.sizes(), StridedRef::Of(out), Scalar(int64_t{0})));
      return absl::OkStatus();
    }
    MatmulCall call;
    call.batch = ae.sizes().subspan(0, ae.dim() - 2);
    call.n = n;
    call.k = k;
    call.m = m;
    call.a = StridedRef::Of(ae);
    call.b = StridedRef::Of(be);
    call.out = out.data();
    call.alpha = alpha;
    call.beta = init_e.defined() ? beta : 0;
    return backend->Matmul(call);
  };
  return plan;
}

absl::StatusOr<PlannedOp> PlanMm(absl::string_view op, const Tensor& a, const Tensor& b) {
  TENSORD_RETURN_IF_ERROR(CheckMatmulDtypes(op, a, b));
  if (a.dim() != 2) return RuntimeError(op, "self must be a matrix");
  if (b.dim() != 2) return RuntimeError(op, "mat2 must be a matrix");
  if (a.size(1) != b.size(0)) {
    return RuntimeError(op, absl::StrCat("mat1 and mat2 shapes cannot be multiplied (", a.size(0),
                                         "x", a.size(1), " and ", b.size(0), "x", b.size(1), ")"));
  }
  return PlanBatchedGemm(op, a, b, {}, a.size(0), a.size(1), b.size(1), {a.size(0), b.size(1)});
}

absl::StatusOr<PlannedOp> PlanMatmul(absl::string_view op, const Tensor& a, const Tensor& b) {
  TENSORD_RETURN_IF_ERROR(CheckMatmulDtypes(op, a, b));
  const int64_t da = a.dim(), db = b.dim();
  if (da == 0 || db == 0) {
    return RuntimeError(op, absl::StrCat("both arguments to matmul need to be at least 1D, but "
                                         "they are ", da, "D and ", db, "D"));
  }
  if (da == 1 && db == 1) {
    if (a.size(0) != b.size(0)) {
      return RuntimeError(op, absl::StrCat("inconsistent tensor size, expected tensor [",
                                           a.size(0), "] and src [", b.size(0),
                                           "] to have the same number of elements, but got ",
                                           a.size(0), " and ", b.size(0), " elements respectively"));
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor av, View(a, {1, a.size(0)}));
    TENSORD_ASSIGN_OR_RETURN(Tensor bv, View(b, {b.size(0), 1}));
    return PlanBatchedGemm(op, av, bv, {}, 1, a.size(0), 1, {});
  }
  // Promote 1-d operands to matrices; remember which result dims to drop.
  TENSORD_ASSIGN_OR_RETURN(Tensor am, da == 1 ? Unsqueeze(a, 0) : absl::StatusOr<Tensor>(a));
  TENSORD_ASSIGN_OR_RETURN(Tensor bm, db == 1 ? Unsqueeze(b, 1) : absl::StatusOr<Tensor>(b));
  const int64_t n = am.size(am.dim() - 2), k = am.size(am.dim() - 1);
  const int64_t k2 = bm.size(bm.dim() - 2), m = bm.size(bm.dim() - 1);
  if (k != k2) {
    if (da == 2 && db == 2) {
      return RuntimeError(op, absl::StrCat("mat1 and mat2 shapes cannot be multiplied (", n, "x",
                                           k, " and ", k2, "x", m, ")"));
    }
    if (da == 2 && db == 1) {
      return RuntimeError(op, absl::StrCat("size mismatch, got input (", n, "), mat (", n, "x", k,
                                           "), vec (", k2, ")"));
    }
    return RuntimeError(op, absl::StrCat("Expected size for first two dimensions of batch2 "
                                         "tensor to be: [", k, ", ", m, "] but got: [", k2, ", ",
                                         m, "]."));
  }
  DimVector batch;
  TENSORD_ASSIGN_OR_RETURN(batch, BroadcastShapes(op, am.sizes().subspan(0, am.dim() - 2),
                                                  bm.sizes().subspan(0, bm.dim() - 2)));
  DimVector out_shape(batch.begin(), batch.end());
  if (da > 1) out_shape.push_back(n);
  if (db > 1) out_shape.push_back(m);
  return PlanBatchedGemm(op, am, bm, batch, n, k, m, out_shape);
}


// beta and alpha of the add* products.
struct Scaling {
  double beta = 1, alpha = 1;
};
absl::StatusOr<Scaling> ReadScaling(AttrReader& a) {
  TENSORD_ASSIGN_OR_RETURN(Scalar beta, a.GetScalar("beta", Scalar(int64_t{1})));
  TENSORD_ASSIGN_OR_RETURN(Scalar alpha, a.GetScalar("alpha", Scalar(int64_t{1})));
  return Scaling{beta.to_double(), alpha.to_double()};
}

// self broadcast to `shape` (torch's expand error otherwise).
absl::Status CheckExpandsTo(const Tensor& self, IntList shape) {
  return Expand(self, shape).status();
}

// addmv: beta * self + alpha * (mat @ vec); self is cast to the product's dtype, as torch's CPU
// kernel writes into a result of mat's dtype.
absl::StatusOr<PlannedOp> PlanAddmv(const Tensor& self, const Tensor& mat, const Tensor& vec,
                                    Scaling s) {
  constexpr absl::string_view op = "addmv";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {self, mat, vec}).status());
  if (mat.dim() != 2 || vec.dim() != 1 || self.dim() > 1) {
    return RuntimeError(op, absl::StrCat("vector + matrix @ vector expected, got ", self.dim(),
                                         ", ", mat.dim(), ", ", vec.dim()));
  }
  const int64_t n = mat.size(0), k = mat.size(1);
  if (k != vec.size(0) || (self.dim() == 1 && self.size(0) != n && self.size(0) != 1)) {
    return RuntimeError(op, absl::StrCat("size mismatch, got ", self.dim() == 0 ? 1 : self.size(0),
                                         ", ", n, "x", k, ",", vec.size(0)));
  }
  TENSORD_RETURN_IF_ERROR(CheckMatmulDtypes(op, mat, vec));
  TENSORD_ASSIGN_OR_RETURN(Tensor col, Unsqueeze(vec, 1));
  TENSORD_ASSIGN_OR_RETURN(Tensor init, self.dim() == 1 ? Unsqueeze(self, 1)
                                                        : absl::StatusOr<Tensor>(self));
  return PlanBatchedGemm(op, mat, col, {}, n, k, 1, {n}, &init, s.alpha, s.beta);
}

// baddbmm: beta * self + alpha * bmm(batch1, batch2), self cast to the product's dtype.
absl::StatusOr<PlannedOp> PlanBaddbmm(const Tensor& self, const Tensor& b1, const Tensor& b2,
                                      Scaling s) {
  constexpr absl::string_view op = "baddbmm";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {self, b1, b2}).status());
  if (b1.dim() != 3) return RuntimeError(op, "batch1 must be a 3D tensor");
  if (b2.dim() != 3) return RuntimeError(op, "batch2 must be a 3D tensor");
  if (b1.size(0) != b2.size(0) || b1.size(2) != b2.size(1)) {
    return RuntimeError(op, absl::StrCat(
        "Expected size for first two dimensions of batch2 tensor to be: [", b1.size(0), ", ",
        b1.size(2), "] but got: [", b2.size(0), ", ", b2.size(1), "]."));
  }
  TENSORD_RETURN_IF_ERROR(CheckMatmulDtypes(op, b1, b2));
  const DimVector shape = {b1.size(0), b1.size(1), b2.size(2)};
  TENSORD_RETURN_IF_ERROR(CheckExpandsTo(self, shape));
  return PlanBatchedGemm(op, b1, b2, {b1.size(0)}, b1.size(1), b1.size(2), b2.size(2), shape,
                         &self, s.alpha, s.beta);
}

// addbmm: beta * self + alpha * sum_i batch1[i] @ batch2[i], as one product of batch1's
// matrices side by side [n, b*k] with batch2's stacked [b*k, m].
absl::StatusOr<PlannedOp> PlanAddbmm(const Tensor& self, const Tensor& b1, const Tensor& b2,
                                     Scaling s) {
  constexpr absl::string_view op = "addbmm";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {self, b1, b2}).status());
  if (b1.dim() != 3) return RuntimeError(op, "batch1 must be a 3D tensor");
  if (b2.dim() != 3) return RuntimeError(op, "batch2 must be a 3D tensor");
  if (b1.size(0) != b2.size(0)) {
    return RuntimeError(op, absl::StrCat("batch1 and batch2 must have same number of batches, "
                                         "got ", b1.size(0), " and ", b2.size(0)));
  }
  if (b1.size(2) != b2.size(1)) {
    return RuntimeError(op, absl::StrCat("Incompatible matrix sizes for bmm (", b1.size(1), "x",
                                         b1.size(2), " and ", b2.size(1), "x", b2.size(2), ")"));
  }
  if (self.dtype() != b1.dtype() || b1.dtype() != b2.dtype()) {
    return RuntimeError(op, "self and mat2 must have the same dtype");
  }
  TENSORD_RETURN_IF_ERROR(CheckMatmulDtypes(op, b1, b2));
  const int64_t b = b1.size(0), n = b1.size(1), k = b1.size(2), m = b2.size(2);
  const DimVector shape = {n, m};
  TENSORD_RETURN_IF_ERROR(CheckExpandsTo(self, shape));
  const std::optional<int64_t> bk_or = CheckedMul(b, k);
  if (!bk_or) return RuntimeError(op, "batch1's sizes overflow int64");
  const int64_t bk = *bk_or;
  Composition c({self, b1, b2});
  TENSORD_ASSIGN_OR_RETURN(Tensor side, Permute(b1, {1, 0, 2}));
  TENSORD_ASSIGN_OR_RETURN(side, c.Reshape(side, {n, bk}));
  TENSORD_ASSIGN_OR_RETURN(Tensor stacked, c.Reshape(b2, {bk, m}));
  TENSORD_ASSIGN_OR_RETURN(PlannedOp product, PlanBatchedGemm(op, side, stacked, {}, n, bk, m,
                                                              shape, &self, s.alpha, s.beta));
  return std::move(c).Finish(c.Add(std::move(product)));
}

// addr: beta * self + alpha * outer(vec1, vec2), elementwise in the three operands' promoted
// dtype (torch's addr kernel; integers and bool included); beta 0 ignores self's values.
absl::StatusOr<PlannedOp> PlanAddr(const Tensor& self, const Tensor& v1, const Tensor& v2,
                                   const Scalar& beta, const Scalar& alpha) {
  constexpr absl::string_view op = "addr";
  if (v1.dim() != 1) {
    return RuntimeError(op, absl::StrCat("addr: Expected 1-D argument vec1, but got ", v1.dim(),
                                         "-D"));
  }
  if (v2.dim() != 1) {
    return RuntimeError(op, absl::StrCat("addr: Expected 1-D argument vec2, but got ", v2.dim(),
                                         "-D"));
  }
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {self, v1, v2}).status());
  const DType common = ResultType({self, v1, v2});
  Scalar b = beta, al = alpha;
  if (common == DType::kBool) {
    b = Scalar(beta.to_bool());  // bool results take any beta and alpha as truth values
    al = Scalar(alpha.to_bool());
  } else if (beta.is_bool() || alpha.is_bool()) {
    return RuntimeError(op, absl::StrCat("Boolean ", beta.is_bool() ? "beta" : "alpha",
                                         " only supported for Boolean results."));
  } else if (IsIntegral(common, false) && (beta.is_float() || alpha.is_float())) {
    return RuntimeError(op, absl::StrCat("For integral input tensors, argument ",
                                         beta.is_float() ? "beta" : "alpha",
                                         " must not be a floating point number."));
  }
  const DimVector shape = {v1.size(0), v2.size(0)};
  TENSORD_RETURN_IF_ERROR(CheckExpandsTo(self, shape));
  // The result's layout is self's where self has the result's shape (torch's addr iterates
  // self first), else contiguous.
  Composition c({self, v1, v2});
  TENSORD_ASSIGN_OR_RETURN(Tensor a, c.ToDType(v1, common));
  TENSORD_ASSIGN_OR_RETURN(Tensor bv, c.ToDType(v2, common));
  TENSORD_ASSIGN_OR_RETURN(a, Unsqueeze(a, 1));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Op1("mul", {a, bv}));
  if (al.to_double() != 1) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor s, WrapNumber(al));
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("mul", {out, s}));
  }
  if (b.to_double() != 0) {
    TENSORD_ASSIGN_OR_RETURN(Tensor in, c.ToDType(self, common));
    if (b.to_double() != 1) {
      TENSORD_ASSIGN_OR_RETURN(const Tensor s, WrapNumber(b));
      TENSORD_ASSIGN_OR_RETURN(in, c.Op1("mul", {in, s}));
    }
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("add", {in, out}));
  } else if (std::equal(shape.begin(), shape.end(), self.sizes().begin(), self.sizes().end())) {
    TENSORD_ASSIGN_OR_RETURN(
        Tensor laid, AllocateTensor(op, PreservedLayout(self.meta(), common), self.device()));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCopyInto(laid, out));
    c.Add(std::move(copy));
    out = laid;
  }
  return std::move(c).Finish({out});
}

// tensordot: a's contracted dims moved last and b's first, each flattened into a matrix, one
// product, the free dims unflattened.
absl::StatusOr<PlannedOp> PlanTensordot(absl::string_view op, const Tensor& a, const Tensor& b,
                                        IntList dims_a_in, IntList dims_b_in) {
  if (dims_a_in.size() != dims_b_in.size()) {
    return RuntimeError(op, "both dimension lists should have same length");
  }
  TENSORD_RETURN_IF_ERROR(CheckMatmulDtypes(op, a, b));
  DimVector dims_a, dims_b;
  std::vector<bool> used_a(a.dim()), used_b(b.dim());
  for (size_t i = 0; i < dims_a_in.size(); ++i) {
    if (a.dim() == 0 || b.dim() == 0) {
      return IndexError(op, absl::StrCat("Dimension specified as ",
                                         a.dim() == 0 ? dims_a_in[i] : dims_b_in[i],
                                         " but tensor has no dimensions"));
    }
    TENSORD_ASSIGN_OR_RETURN(const int64_t da, WrapDim(op, dims_a_in[i], a.dim()));
    TENSORD_ASSIGN_OR_RETURN(const int64_t db, WrapDim(op, dims_b_in[i], b.dim()));
    if (a.size(da) != b.size(db)) {
      return RuntimeError(op, absl::StrCat("contracted dimensions need to match, but first has "
                                           "size ", a.size(da), " in dim ", dims_a_in[i],
                                           " and second has size ", b.size(db), " in dim ",
                                           dims_b_in[i]));
    }
    if (used_a[da] || used_b[db]) {
      return RuntimeError(op, absl::StrCat("dim ", used_a[da] ? da : db,
                                           " appears multiple times in the list of dims"));
    }
    used_a[da] = used_b[db] = true;
    dims_a.push_back(da);
    dims_b.push_back(db);
  }
  DimVector perm_a, perm_b = dims_b, shape, free_b;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (!used_a[d]) perm_a.push_back(d), shape.push_back(a.size(d));
  }
  perm_a.insert(perm_a.end(), dims_a.begin(), dims_a.end());
  for (int64_t d = 0; d < b.dim(); ++d) {
    if (!used_b[d]) perm_b.push_back(d), shape.push_back(b.size(d)), free_b.push_back(b.size(d));
  }
  // The matrices' sizes, overflow-checked (a zero-size dim beside huge ones must not wrap).
  const auto size_of = [&](IntList sizes) -> absl::StatusOr<int64_t> {
    int64_t p = 1;
    for (int64_t s : sizes) {
      const std::optional<int64_t> q = CheckedMul(p, s);
      if (!q) return RuntimeError(op, "the operands' sizes overflow int64");
      p = *q;
    }
    return p;
  };
  DimVector contracted;
  for (int64_t d : dims_a) contracted.push_back(a.size(d));
  TENSORD_ASSIGN_OR_RETURN(const int64_t k, size_of(contracted));
  TENSORD_ASSIGN_OR_RETURN(const int64_t n,
                           size_of(IntList(shape).subspan(0, shape.size() - free_b.size())));
  TENSORD_ASSIGN_OR_RETURN(const int64_t m, size_of(free_b));
  TENSORD_RETURN_IF_ERROR(CheckShape(op, shape).status());
  Composition c({a, b});
  TENSORD_ASSIGN_OR_RETURN(Tensor left, Permute(a, perm_a));
  TENSORD_ASSIGN_OR_RETURN(left, c.Reshape(left, {n, k}));
  TENSORD_ASSIGN_OR_RETURN(Tensor right, Permute(b, perm_b));
  TENSORD_ASSIGN_OR_RETURN(right, c.Reshape(right, {k, m}));
  TENSORD_ASSIGN_OR_RETURN(PlannedOp product,
                           PlanBatchedGemm(op, left, right, {}, n, k, m, shape));
  return std::move(c).Finish(c.Add(std::move(product)));
}

// linalg.multi_dot (and chain_matmul, its 2-d-only older name): the product of a chain of
// matrices, parenthesised as ATen's multi_dot does (its cost formula for three, the classic
// dynamic programme beyond), so that rounding matches torch's; the first and last may be 1-d
// for multi_dot.
absl::StatusOr<PlannedOp> PlanMultiDot(absl::string_view op, absl::Span<const Tensor> in) {
  const bool chain = op == "chain_matmul";
  const std::string who = chain ? "chain_matmul(): " : "multi_dot(): ";
  const size_t n = in.size();
  if (chain && n == 0) return RuntimeError(op, "chain_matmul(): Expected one or more matrices");
  if (!chain && n < 2) {
    return RuntimeError(op, absl::StrCat(who, "expected at least 2 tensors but got ", n));
  }
  std::vector<Tensor> mats(in.begin(), in.end());
  bool squeeze_first = false, squeeze_last = false;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = in[i];
    const bool end = !chain && (i == 0 || i + 1 == n);
    if (chain && t.dim() != 2) {
      return RuntimeError(op, absl::StrCat("Tensor dimension is ", t.dim(),
                                           ", expected 2 instead."));
    }
    if (!chain && !(t.dim() == 2 || (end && t.dim() == 1))) {
      return RuntimeError(op, end ? absl::StrCat(who, "the ", i == 0 ? "first" : "last",
                                                 " tensor must be 1D or 2D but got ", t.dim(),
                                                 "D")
                                  : absl::StrCat(who, "tensor ", i, " must be 2D but got ",
                                                 t.dim(), "D"));
    }
    if (t.dtype() != in[0].dtype()) {
      return RuntimeError(op, absl::StrCat(who, "all tensors must have be the same dtype but "
                                                "tensor 0 is ", DTypeLegacyName(in[0].dtype()),
                                           " and tensor ", i, " ", DTypeLegacyName(t.dtype())));
    }
  }
  if (!chain && in[0].dim() == 1) {
    TENSORD_ASSIGN_OR_RETURN(mats[0], Unsqueeze(in[0], 0));
    squeeze_first = true;
  }
  if (!chain && in[n - 1].dim() == 1) {
    TENSORD_ASSIGN_OR_RETURN(mats[n - 1], Unsqueeze(in[n - 1], 1));
    squeeze_last = true;
  }
  for (size_t i = 0; i + 1 < n; ++i) {
    if (mats[i].size(1) != mats[i + 1].size(0)) {
      return RuntimeError(op, absl::StrCat(who, "tensors ", i, " and ", i + 1, " with shapes ",
                                           FormatList(in[i].sizes()), " and ",
                                           FormatList(in[i + 1].sizes()),
                                           " cannot be multiplied"));
    }
  }
  if (n == 1) return PlanClone(in[0]);
  TENSORD_RETURN_IF_ERROR(CheckMatmulDtypes(op, mats[0], mats[1]));
  // p[i] x p[i + 1] is matrix i's shape; split[i][j]: where the product of i..j divides.
  std::vector<double> p;
  for (const Tensor& m : mats) p.push_back(static_cast<double>(m.size(0)));
  p.push_back(static_cast<double>(mats[n - 1].size(1)));
  std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
  if (n == 3) {
    const double a = p[0], b = p[1], c = p[2], d = p[3];
    split[0][2] = (a * c) * (b + d) > (b * d) * (a + c) ? 0 : 1;
  } else if (n > 3) {
    std::vector<std::vector<double>> cost(n, std::vector<double>(n, 0));
    for (size_t len = 1; len < n; ++len) {
      for (size_t i = 0; i + len < n; ++i) {
        const size_t j = i + len;
        cost[i][j] = std::numeric_limits<double>::infinity();
        for (size_t k = i; k < j; ++k) {
          const double q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1];
          if (q < cost[i][j]) {
            cost[i][j] = q;
            split[i][j] = k;
          }
        }
      }
    }
  }
  Composition c(in);
  std::function<absl::StatusOr<Tensor>(size_t, size_t)> product =
      [&](size_t i, size_t j) -> absl::StatusOr<Tensor> {
    if (i == j) return mats[i];
    const size_t k = j - i == 1 ? i : split[i][j];
    TENSORD_ASSIGN_OR_RETURN(const Tensor left, product(i, k));
    TENSORD_ASSIGN_OR_RETURN(const Tensor right, product(k + 1, j));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp step, PlanMm(op, left, right));
    return c.Add(std::move(step)).at(0);
  };
  TENSORD_ASSIGN_OR_RETURN(Tensor out, product(0, n - 1));
  if (squeeze_last) {
    TENSORD_ASSIGN_OR_RETURN(out, SqueezeDim(out, 1));
  }
  if (squeeze_first) {
    TENSORD_ASSIGN_OR_RETURN(out, SqueezeDim(out, 0));
  }
  return std::move(c).Finish({out});
}

}  // namespace

void RegisterLinalgOps(std::vector<OpDef>& ops) {
  const std::vector<std::string> ab = {"self", "other"};
  ops.push_back({"matmul", OpKind::kCompute, ab, {},
                 "Matrix product with torch.matmul's rank rules (1-d operands, broadcast batch "
                 "dims).",
                 false, [](Inputs in, AttrReader&) { return PlanMatmul("matmul", in[0], in[1]); }});
  ops.push_back({"mm", OpKind::kCompute, {"self", "mat2"}, {}, "Matrix product of 2-d tensors.",
                 false, [](Inputs in, AttrReader&) { return PlanMm("mm", in[0], in[1]); }});
  ops.push_back({"dot", OpKind::kCompute, {"self", "tensor"}, {}, "Inner product of 1-d tensors.",
                 false, [](Inputs in, AttrReader&) -> absl::StatusOr<PlannedOp> {
                   if (in[0].dim() != 1 || in[1].dim() != 1) {
                     return RuntimeError("dot", absl::StrCat("1D tensors expected, but got ",
                                                             in[0].dim(), "D and ", in[1].dim(),
                                                             "D tensors"));
                   }
                   if (in[0].dtype() != in[1].dtype()) {
                     return RuntimeError("dot", absl::StrCat(
                         "dot : expected both vectors to have same dtype, but found ",
                         DTypeLegacyName(in[0].dtype()), " and ", DTypeLegacyName(in[1].dtype())));
                   }
                   return PlanMatmul("dot", in[0], in[1]);
                 }});
  ops.push_back({"mv", OpKind::kCompute, {"self", "vec"}, {}, "Matrix-vector product.", false,
                 [](Inputs in, AttrReader&) -> absl::StatusOr<PlannedOp> {
                   if (in[0].dim() != 2 || in[1].dim() != 1) {
                     return RuntimeError("mv", absl::StrCat("vector + matrix @ vector expected, "
                                                            "got 1, ", in[0].dim(), ", ",
                                                            in[1].dim()));
                   }
                   return PlanMatmul("mv", in[0], in[1]);
                 }});
  ops.push_back({"bmm", OpKind::kCompute, {"self", "mat2"}, {},
                 "Batched matrix product of 3-d tensors (same batch size).", false,
                 [](Inputs in, AttrReader&) -> absl::StatusOr<PlannedOp> {
                   const Tensor &a = in[0], &b = in[1];
                   TENSORD_RETURN_IF_ERROR(CheckMatmulDtypes("bmm", a, b));
                   if (a.dim() != 3) return RuntimeError("bmm", "batch1 must be a 3D tensor");
                   if (b.dim() != 3) return RuntimeError("bmm", "batch2 must be a 3D tensor");
                   if (a.size(0) != b.size(0) || a.size(2) != b.size(1)) {
                     return RuntimeError("bmm", absl::StrCat(
                         "Expected size for first two dimensions of batch2 tensor to be: [",
                         a.size(0), ", ", a.size(2), "] but got: [", b.size(0), ", ", b.size(1),
                         "]."));
                   }
                   return PlanBatchedGemm("bmm", a, b, {a.size(0)}, a.size(1), a.size(2),
                                          b.size(2), {a.size(0), a.size(1), b.size(2)});
                 }});
  ops.push_back({"addmm", OpKind::kCompute, {"self", "mat1", "mat2"},
                 {Opt("beta", AttrType::kScalar, "1"), Opt("alpha", AttrType::kScalar, "1")},
                 "beta * self + alpha * (mat1 @ mat2); self broadcasts to the product's shape.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Scalar beta, a.GetScalar("beta", Scalar(int64_t{1})));
                   TENSORD_ASSIGN_OR_RETURN(Scalar alpha, a.GetScalar("alpha", Scalar(int64_t{1})));
                   const Tensor &self = in[0], &m1 = in[1], &m2 = in[2];
                   TENSORD_RETURN_IF_ERROR(CheckMatmulDtypes("addmm", m1, m2));
                   TENSORD_RETURN_IF_ERROR(CheckMatmulDtypes("addmm", self, m1));
                   if (m1.dim() != 2) return RuntimeError("addmm", "mat1 must be a matrix, got " + std::to_string(m1.dim()) + "-D tensor");
                   if (m2.dim() != 2) return RuntimeError("addmm", "mat2 must be a matrix, got " + std::to_string(m2.dim()) + "-D tensor");
                   if (m1.size(1) != m2.size(0)) {
                     return RuntimeError("addmm", absl::StrCat(
                         "mat1 and mat2 shapes cannot be multiplied (", m1.size(0), "x",
                         m1.size(1), " and ", m2.size(0), "x", m2.size(1), ")"));
                   }
                   const DimVector shape = {m1.size(0), m2.size(1)};
                   TENSORD_ASSIGN_OR_RETURN(DimVector b, BroadcastShapes("addmm", self.sizes(), shape));
                   if (!std::equal(b.begin(), b.end(), shape.begin(), shape.end())) {
                     return RuntimeError("addmm", absl::StrCat("The expanded size of the tensor (",
                                                               shape[1], ") must match the existing size (",
                                                               self.size(self.dim() - 1), ")"));
                   }
                   return PlanBatchedGemm("addmm", m1, m2, {}, shape[0], m1.size(1), shape[1],
                                          shape, &self, alpha.to_double(), beta.to_double());
                 }});
  ops.push_back({"addmv", OpKind::kCompute, {"self", "mat", "vec"},
                 {Opt("beta", AttrType::kScalar, "1"), Opt("alpha", AttrType::kScalar, "1")},
                 "beta * self + alpha * (mat @ vec); self broadcasts to the product's shape.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Scaling s, ReadScaling(a));
                   return PlanAddmv(in[0], in[1], in[2], s);
                 }});
  ops.push_back({"baddbmm", OpKind::kCompute, {"self", "batch1", "batch2"},
                 {Opt("beta", AttrType::kScalar, "1"), Opt("alpha", AttrType::kScalar, "1")},
                 "beta * self + alpha * bmm(batch1, batch2).", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Scaling s, ReadScaling(a));
                   return PlanBaddbmm(in[0], in[1], in[2], s);
                 }});
  ops.push_back({"addbmm", OpKind::kCompute, {"self", "batch1", "batch2"},
                 {Opt("beta", AttrType::kScalar, "1"), Opt("alpha", AttrType::kScalar, "1")},
                 "beta * self + alpha * the sum over the batch of batch1[i] @ batch2[i].", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Scaling s, ReadScaling(a));
                   return PlanAddbmm(in[0], in[1], in[2], s);
                 }});
  ops.push_back({"addr", OpKind::kCompute, {"self", "vec1", "vec2"},
                 {Opt("beta", AttrType::kScalar, "1"), Opt("alpha", AttrType::kScalar, "1")},
                 "beta * self + alpha * outer(vec1, vec2), in the promoted dtype.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(Scalar beta, a.GetScalar("beta", Scalar(int64_t{1})));
                   TENSORD_ASSIGN_OR_RETURN(Scalar alpha, a.GetScalar("alpha", Scalar(int64_t{1})));
                   return PlanAddr(in[0], in[1], in[2], beta, alpha);
                 }});
  ops.push_back({"tensordot", OpKind::kCompute, ab,
                 {Req("dims_self", AttrType::kIntList, "self's contracted dims"),
                  Req("dims_other", AttrType::kIntList, "other's, in the same order")},
                 "Sum of products over the given dims of self and other (one matrix product).",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> da, a.IntList("dims_self"));
                   TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> db, a.IntList("dims_other"));
                   return PlanTensordot("tensordot", in[0], in[1], da, db);
                 }});
  ops.push_back({"inner", OpKind::kCompute, ab, {},
                 "Sum of products over the last dims (a product with a 0-d operand).", false,
                 [](Inputs in, AttrReader&) -> absl::StatusOr<PlannedOp> {
                   const Tensor &a = in[0], &b = in[1];
                   if (a.dim() == 0 || b.dim() == 0) return PlanMul("inner", a, b);
                   if (a.size(a.dim() - 1) != b.size(b.dim() - 1)) {
                     return RuntimeError("inner", absl::StrCat(
                         "inner() the last dimension must match on both input tensors but got "
                         "shapes ", FormatList(a.sizes()), " and ", FormatList(b.sizes())));
                   }
                   return PlanTensordot("inner", a, b, {-1}, {-1});
                 }});
  OpDef chain{"chain_matmul", OpKind::kCompute, {"matrices"}, {},
              "The product of a list of matrices, in the order of fewest multiplications "
              "(linalg.multi_dot's).",
              false, [](Inputs in, AttrReader&) { return PlanMultiDot("chain_matmul", in); }};
  chain.variadic = true;
  ops.push_back(std::move(chain));
  OpDef multi{"linalg_multi_dot", OpKind::kCompute, {"tensors"}, {},
              "torch.linalg.multi_dot: the product of matrices (the first and last may be "
              "vectors), in the order of fewest multiplications.",
              false, [](Inputs in, AttrReader&) { return PlanMultiDot("linalg_multi_dot", in); }};
  multi.variadic = true;
  ops.push_back(std::move(multi));
  ops.push_back({"outer", OpKind::kCompute, {"self", "vec2"}, {},
                 "Outer product of 1-d tensors (self[:, None] * vec2).", false,
                 [](Inputs in, AttrReader&) -> absl::StatusOr<PlannedOp> {
                   if (in[0].dim() != 1 || in[1].dim() != 1) {
                     return RuntimeError("outer", "outer: Expected 1-D argument self, but got " +
                                                      std::to_string(in[0].dim()) + "-D");
                   }
                   TENSORD_ASSIGN_OR_RETURN(Tensor col, Unsqueeze(in[0], 1));
                   return PlanMul("outer", col, in[1]);
                 }});
}

}  // namespace tensord::engine
