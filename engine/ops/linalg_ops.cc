// Matrix products: dot, mv, mm, bmm, matmul (every rank case, batch dims broadcast), addmm,
// outer. float32/float64 go to BLAS (OpenBLAS) with transposed operands passed as such, not
// copied; integer and bfloat16 products use a blocked loop. Outputs are contiguous, as torch's.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ops/copy_ops.h"
#include "engine/kernels/convert.h"
#include "engine/kernels/matmul.h"
#include "engine/runtime/backend.h"
#include "engine/ops/elementwise.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
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
