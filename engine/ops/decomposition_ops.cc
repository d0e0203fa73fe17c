// torch.linalg's factorizations and what is built on them: lu_factor, lu_solve, lu_unpack, lu,
// geqrf, householder_product, ormqr, solve, inv, det, slogdet, cholesky, qr, svd, svdvals, eigh,
// eigvalsh, pinv, matrix_rank. Each copies its input into a new batch of column-major matrices
// (torch.linalg's output layout and LAPACK's) and factors it in place with the device's kernel
// (Backend::LuFactor, …: LAPACK on the CPU, cuSOLVER on a GPU); det and slogdet are
// compositions of lu_factor with a diagonal and reductions (composition.h).
// float32 and float64, as torch (no low-precision factorizations).
#include <algorithm>
#include <limits>
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
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

// The last two sizes of a tensor of at least 2 dims (of 1 dim for Cols).
int64_t Rows(const Tensor& t) { return t.size(t.dim() - 2); }
int64_t Cols(const Tensor& t) { return t.size(t.dim() - 1); }

absl::Status CheckFloating(absl::string_view op, DType dtype) {
  if (dtype == DType::kFloat32 || dtype == DType::kFloat64) return absl::OkStatus();
  if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {
    return RuntimeError(op, absl::StrCat("Low precision dtypes not supported. Got ",
                                         DTypeLegacyName(dtype)));
  }
  return RuntimeError(op, absl::StrCat("Expected a floating point or complex tensor as input. Got ",
                                       DTypeLegacyName(dtype)));
}

// LAPACK and cuSOLVER index a matrix, and size its workspaces, with 32-bit ints: every matrix
// they are handed (A, B, and the factors U, Vh, Q) stays well inside that.
absl::Status CheckSolverSize(absl::string_view op, int64_t m, int64_t n) {
  constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max() / 8;
  if (m > kMaxElements || n > kMaxElements || (m > 0 && n > kMaxElements / m)) {
    return RuntimeError(op, absl::StrCat("matrices of ", m, " by ", n,
                                         " are too large for the solver (at most ",
                                         kMaxElements, " elements each)"));
  }
  return absl::OkStatus();
}

// A: at least 2-d, float32/float64, of a size the solvers take; square when asked.
absl::Status CheckMatrices(absl::string_view op, const Tensor& a, bool square) {
  if (a.dim() < 2) {
    return RuntimeError(op, "The input tensor A must have at least 2 dimensions.");
  }
  const int64_t m = Rows(a), n = Cols(a);
  if (square && m != n) {
    return RuntimeError(op, absl::StrCat("A must be batches of square matrices, but they are ", m,
                                         " by ", n, " matrices"));
  }
  TENSORD_RETURN_IF_ERROR(CheckFloating(op, a.dtype()));
  return CheckSolverSize(op, m, n);
}

DimVector Concat(IntList batch, std::initializer_list<int64_t> tail) {
  DimVector sizes(batch.begin(), batch.end());
  sizes.insert(sizes.end(), tail.begin(), tail.end());
  return sizes;
}

int64_t Product(IntList sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;  // sizes of an allocated tensor: no overflow
  return n;
}

// Strides of `sizes` with the last two dims column-major and the batch dims contiguous over
// them: torch.linalg's layout for matrix outputs.
DimVector ColumnMajorStrides(IntList sizes) {
  DimVector strides = ContiguousStrides(sizes);
  const int64_t d = static_cast<int64_t>(sizes.size());
  if (d >= 2) {
    strides[d - 2] = 1;
    strides[d - 1] = std::max<int64_t>(1, sizes[d - 2]);
  }
  return strides;
}

absl::StatusOr<Tensor> NewColumnMajor(absl::string_view op, DType dtype, IntList sizes,
                                      Device device) {
  return AllocateTensor(op, TensorMeta(dtype, sizes, ColumnMajorStrides(sizes), 0), device);
}

absl::StatusOr<Tensor> NewContiguous(absl::string_view op, DType dtype, IntList sizes,
                                     Device device) {
  return AllocateTensor(op, TensorMeta::Contiguous(dtype, sizes), device);
}

// The batch of column-major matrices a NewColumnMajor tensor (at least 2-d) holds; empty
// (batch 0) for an undefined tensor.
MatrixBatch BatchOf(const Tensor& t) {
  if (!t.defined()) return MatrixBatch{};
  const int64_t d = t.dim();
  return MatrixBatch{t.data(), t.dtype(), Product(t.sizes().subspan(0, d - 2)), Rows(t),
                     Cols(t)};
}

LinalgErrorSpec Spec(absl::string_view op, LinalgCheck check, const Tensor& a) {
  return LinalgErrorSpec{std::string(op), check, a.dim() > 2};
}

// A fresh column-major copy of `a` (expanded to `sizes`), filled by the kernel before the
// factorization: what LAPACK overwrites.
struct Workspace {
  Tensor tensor;
  Tensor source;
};

absl::StatusOr<Workspace> CopyOf(absl::string_view op, const Tensor& a, IntList sizes) {
  TENSORD_ASSIGN_OR_RETURN(Tensor source, Expand(a, sizes));
  TENSORD_ASSIGN_OR_RETURN(Tensor copy, NewColumnMajor(op, a.dtype(), sizes, a.device()));
  return Workspace{copy, source};
}

absl::Status FillCopy(Backend* backend, const Workspace& w) {
  return backend->Copy(w.tensor.sizes(), StridedRef::Of(w.tensor), StridedRef::Of(w.source));
}

// The *_ex ops' info output: LAPACK's info of every matrix, int32, the batch's shape; the op
// then never fails for its data.
absl::StatusOr<Tensor> NewInfo(absl::string_view op, IntList batch, Device device,
                               LinalgErrorSpec& spec) {
  TENSORD_ASSIGN_OR_RETURN(Tensor info, NewContiguous(op, DType::kInt32, batch, device));
  spec.check = LinalgCheck::kNone;
  spec.infos = reinterpret_cast<int32_t*>(info.data());
  return info;
}

// Zeroes an info output (where defined) before its factorization: the kernels skip empty
// matrices, whose info is 0.
absl::Status ZeroInfo(Backend* backend, const Tensor& info) {
  if (!info.defined()) return absl::OkStatus();
  return backend->Fill(info.sizes(), StridedRef::Of(info), Scalar(int64_t{0}));
}

// ---- lu_factor ----------------------------------------------------------------------------

// (LU, pivots) of A; LU column-major, pivots int32 contiguous (1-based, as LAPACK's).
absl::StatusOr<PlannedOp> PlanLuFactor(absl::string_view op, const Tensor& a, LinalgCheck check,
                                       bool with_info = false) {
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/false));
  const IntList batch = a.sizes().subspan(0, a.dim() - 2);
  const int64_t m = Rows(a), n = Cols(a);
  TENSORD_ASSIGN_OR_RETURN(Workspace lu, CopyOf(op, a, a.sizes()));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor pivots, NewContiguous(op, DType::kInt32, Concat(batch, {std::min(m, n)}), a.device()));
  LinalgErrorSpec spec = Spec(op, check, a);
  Tensor info;
  if (with_info) {
    TENSORD_ASSIGN_OR_RETURN(info, NewInfo(op, batch, a.device(), spec));
  }
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(a.device()));
  PlannedOp plan;
  plan.outputs = {lu.tensor, pivots};
  plan.reads = {a.storage()};
  plan.writes = {lu.tensor.storage(), pivots.storage()};
  if (with_info) {
    plan.outputs.push_back(info);
    plan.writes.push_back(info.storage());
  }
  plan.kernel = [backend, lu, pivots, info, spec]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(ZeroInfo(backend, info));
    TENSORD_RETURN_IF_ERROR(FillCopy(backend, lu));
    return backend->LuFactor(BatchOf(lu.tensor), reinterpret_cast<int32_t*>(pivots.data()), spec);
  };
  return plan;
}

// ---- solve, inv ---------------------------------------------------------------------------

// X with A X = B for every matrix (A square, B with A's batch and rows), through an LU
// factorization; a null b solves for A's inverse. Both go into new tensors. `transposed`
// factors A's transpose and solves transposed: torch does for a contiguous A (linalg_solve_ex;
// the same X, torch's rounding and its singular pivot's number).
absl::StatusOr<PlannedOp> PlanLuSolve(absl::string_view op, const Tensor& a, const Tensor* b,
                                      IntList batch, int64_t k, LinalgCheck check,
                                      bool with_info, bool transposed) {
  const int64_t n = Cols(a);
  TENSORD_RETURN_IF_ERROR(CheckSolverSize(op, n, k));
  const DimVector a_sizes = Concat(batch, {n, n});
  Tensor factored = a;
  if (transposed) {
    TENSORD_ASSIGN_OR_RETURN(factored, Transpose(a, -2, -1));
  }
  TENSORD_ASSIGN_OR_RETURN(Workspace lu, CopyOf(op, factored, a_sizes));
  TENSORD_ASSIGN_OR_RETURN(Tensor pivots,
                           NewContiguous(op, DType::kInt32, Concat(batch, {n}), a.device()));
  Workspace x;
  if (b != nullptr) {
    TENSORD_ASSIGN_OR_RETURN(x, CopyOf(op, *b, Concat(batch, {n, k})));
  } else {
    TENSORD_ASSIGN_OR_RETURN(x.tensor, NewColumnMajor(op, a.dtype(), a_sizes, a.device()));
  }
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(a.device()));
  PlannedOp plan;
  plan.outputs = {x.tensor};
  plan.reads = {a.storage()};
  if (b != nullptr) plan.reads.push_back(b->storage());
  plan.writes = {x.tensor.storage()};
  LinalgErrorSpec spec{std::string(op), check, a.dim() > 2};  // as torch: A's batch only
  Tensor info;  // held by the kernel, which writes it through spec.infos
  if (with_info) {
    TENSORD_ASSIGN_OR_RETURN(info, NewInfo(op, batch, a.device(), spec));
    plan.outputs.push_back(info);
    plan.writes.push_back(info.storage());
  }
  plan.kernel = [backend, lu, pivots, x, info, spec, transposed]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(ZeroInfo(backend, info));
    TENSORD_RETURN_IF_ERROR(FillCopy(backend, lu));
    const MatrixBatch factors = BatchOf(lu.tensor);
    int32_t* piv = reinterpret_cast<int32_t*>(pivots.data());
    TENSORD_RETURN_IF_ERROR(backend->LuFactor(factors, piv, spec));
    const MatrixBatch out = BatchOf(x.tensor);
    if (x.source.defined()) {
      TENSORD_RETURN_IF_ERROR(FillCopy(backend, x));
    } else {  // the identity: zeros, then ones down each matrix's diagonal
      TENSORD_RETURN_IF_ERROR(backend->Fill(x.tensor.sizes(), StridedRef::Of(x.tensor),
                                            Scalar(int64_t{0})));
      const DimVector diag_sizes = {out.batch, out.rows};
      const DimVector diag_strides = {out.rows * out.cols, out.rows + 1};
      TENSORD_RETURN_IF_ERROR(backend->Fill(
          diag_sizes, StridedRef{out.data, out.dtype, diag_strides}, Scalar(int64_t{1})));
    }
    return backend->LuSolve(factors, piv, transposed, out);
  };
  return plan;
}

absl::StatusOr<PlannedOp> PlanSolve(const Tensor& a, const Tensor& b, bool left, bool with_info) {
  constexpr absl::string_view op = "linalg.solve";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {a, b}).status());
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/true));
  if (a.dtype() != b.dtype()) {
    return RuntimeError(op, absl::StrCat("Expected A and B to have the same dtype, but found A of "
                                         "type ", DTypeLegacyName(a.dtype()), " and B of type ",
                                         DTypeLegacyName(b.dtype()), " instead"));
  }
  const int64_t n = Cols(a);
  // B is a (batch of) vector(s) when it is 1-d or has A's sizes without the last.
  const IntList a_batch = a.sizes().subspan(0, a.dim() - 2);
  const bool vector =
      b.dim() == 1 || (b.dim() == a.dim() - 1 &&
                       std::equal(b.sizes().begin(), b.sizes().end(), a.sizes().begin()));
  if (b.dim() == 0) {
    return RuntimeError(op, "The input tensor B must have at least 1 dimensions.");
  }
  if (!left) {
    if (vector) {
      // torch 1.13 treats the vector as an n x 1 matrix here.
      return RuntimeError(op, absl::StrCat("Incompatible shapes of A and B for the equation XA = "
                                           "B (", n, "x", n, " and ", Cols(b), "x1)"));
    }
    // X A = B  <=>  A^T X^T = B^T.
    TENSORD_ASSIGN_OR_RETURN(Tensor at, Transpose(a, -2, -1));
    TENSORD_ASSIGN_OR_RETURN(Tensor bt, Transpose(b, -2, -1));
    if (Rows(bt) != n) {
      return RuntimeError(op, absl::StrCat("Incompatible shapes of A and B for the equation XA = "
                                           "B (", n, "x", n, " and ", Rows(b), "x",
                                           Cols(b), ")"));
    }
    TENSORD_ASSIGN_OR_RETURN(DimVector batch,
                             BroadcastShapes(op, a_batch, bt.sizes().subspan(0, bt.dim() - 2)));
    // torch factors A^T (here: at itself) when A is contiguous, else A (at transposed).
    TENSORD_ASSIGN_OR_RETURN(PlannedOp plan,
                             PlanLuSolve(op, at, &bt, batch, Cols(bt), LinalgCheck::kSolveSingular,
                                         with_info, /*transposed=*/!a.is_contiguous()));
    TENSORD_ASSIGN_OR_RETURN(plan.outputs[0], Transpose(plan.outputs[0], -2, -1));
    return plan;
  }
  const int64_t b_rows = vector ? Cols(b) : Rows(b);
  if (b_rows != n) {
    return RuntimeError(op, absl::StrCat("Incompatible shapes of A and B for the equation AX = B (",
                                         n, "x", n, " and ", b_rows, "x",
                                         vector ? 1 : Cols(b), ")"));
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor bm, vector ? Unsqueeze(b, -1) : absl::StatusOr<Tensor>(b));
  TENSORD_ASSIGN_OR_RETURN(DimVector batch,
                           BroadcastShapes(op, a_batch, bm.sizes().subspan(0, bm.dim() - 2)));
  TENSORD_ASSIGN_OR_RETURN(PlannedOp plan,
                           PlanLuSolve(op, a, &bm, batch, Cols(bm), LinalgCheck::kSolveSingular,
                                       with_info, /*transposed=*/a.is_contiguous()));
  if (!vector) return plan;
  // torch lays a vector result out column-major over its own last two dims: one more copy of a
  // batch of vectors.
  const Tensor x = plan.outputs[0];
  TENSORD_ASSIGN_OR_RETURN(Tensor xv, Select(x, -1, 0));
  TENSORD_ASSIGN_OR_RETURN(Tensor result,
                           NewColumnMajor(op, x.dtype(), xv.sizes(), x.device()));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(x.device()));
  plan.kernel = [solve = std::move(plan.kernel), backend, xv, result]() mutable -> absl::Status {
    TENSORD_RETURN_IF_ERROR(solve());
    return backend->Copy(result.sizes(), StridedRef::Of(result), StridedRef::Of(xv));
  };
  plan.outputs[0] = result;
  plan.writes.push_back(result.storage());
  return plan;
}

absl::StatusOr<PlannedOp> PlanInv(const Tensor& a, bool with_info) {
  constexpr absl::string_view op = "linalg.inv";
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/true));
  return PlanLuSolve(op, a, nullptr, a.sizes().subspan(0, a.dim() - 2), Cols(a),
                     LinalgCheck::kInverseSingular, with_info, /*transposed=*/a.is_contiguous());
}

// ---- lu_solve, lu_unpack, lu: from lu_factor's factors ---------------------------------------

// Steps failing the op where the kernels run unless every pivot is in [1, rows] (LAPACK would
// read out of bounds): min(pivot - 1, rows - pivot) in int64 must not be negative.
absl::Status CheckPivots(Composition& c, absl::string_view op, const Tensor& pivots,
                         int64_t rows) {
  if (pivots.numel() == 0) return absl::OkStatus();
  TENSORD_ASSIGN_OR_RETURN(const Tensor wide, c.ToDType(pivots, DType::kInt64));
  TENSORD_ASSIGN_OR_RETURN(const Tensor below,
                           c.Op1("sub", {wide}, Attrs().Set("other", Scalar(int64_t{1}))));
  TENSORD_ASSIGN_OR_RETURN(const Tensor negated, c.Op1("neg", {wide}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor above,
                           c.Op1("add", {negated}, Attrs().Set("other", Scalar(rows))));
  TENSORD_ASSIGN_OR_RETURN(const Tensor slack, c.Op1("minimum", {below, above}));
  return c.CheckValues(ValueCheck::kPivotRange, op, slack);
}

absl::Status CheckPivotsDType(absl::string_view op, const Tensor& pivots) {
  if (pivots.dtype() != DType::kInt32) {
    return RuntimeError(op, "pivots should be a Tensor of scalar type torch.int32");
  }
  return absl::OkStatus();
}

// linalg.lu_solve: X with A X = B (A^T X = B with adjoint; X A = B, or X A^T = B, with
// left = false) for A = P L U given as lu_factor's (LU, pivots); batch dims broadcast. LAPACK's
// getrs on a column-major copy of LU expanded to the batch.
absl::StatusOr<PlannedOp> PlanLuSolveFactored(const Tensor& lu, const Tensor& pivots,
                                              const Tensor& b, bool left, bool adjoint) {
  constexpr absl::string_view op = "linalg.lu_solve";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {lu, pivots, b}).status());
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, lu, /*square=*/true));
  if (lu.dtype() != b.dtype()) {
    return RuntimeError(op, absl::StrCat("Expected LU and B to have the same dtype, but found LU "
                                         "of type ", DTypeLegacyName(lu.dtype()), " and B of "
                                         "type ", DTypeLegacyName(b.dtype()), " instead"));
  }
  TENSORD_RETURN_IF_ERROR(CheckPivotsDType(op, pivots));
  const int64_t n = Cols(lu);
  const IntList lu_batch = lu.sizes().subspan(0, lu.dim() - 2);
  if (pivots.dim() != lu.dim() - 1 ||
      !std::equal(lu_batch.begin(), lu_batch.end(), pivots.sizes().begin()) ||
      pivots.size(pivots.dim() - 1) != n) {
    return RuntimeError(op, absl::StrCat("Expected LU.shape[:-1] and pivots.shape to be the same, "
                                         "but got pivots with shape ",
                                         FormatList(pivots.sizes()), " instead"));
  }
  if (b.dim() < 2) {
    return RuntimeError(op, "The input tensor B must have at least 2 dimensions.");
  }
  if ((left ? Rows(b) : Cols(b)) != n) {
    return RuntimeError(op, absl::StrCat("Incompatible shapes of A and B for the equation ",
                                         left ? "AX = B" : "XA = B", " (", n, "x", n, " and ",
                                         Rows(b), "x", Cols(b), ")"));
  }
  // X A = B <=> A^T X^T = B^T: the same solve of B^T with the transpose flag flipped.
  TENSORD_ASSIGN_OR_RETURN(const Tensor rhs, left ? absl::StatusOr<Tensor>(b)
                                                  : Transpose(b, -2, -1));
  const bool transpose = left ? adjoint : !adjoint;
  TENSORD_ASSIGN_OR_RETURN(DimVector batch,
                           BroadcastShapes(op, lu_batch, rhs.sizes().subspan(0, rhs.dim() - 2)));
  const int64_t k = Cols(rhs);
  TENSORD_RETURN_IF_ERROR(CheckSolverSize(op, n, k));
  Composition c({lu, pivots, b});
  TENSORD_RETURN_IF_ERROR(CheckPivots(c, op, pivots, n));
  // getrs follows every pivot: on a GPU the check above fails the op only when it retires, after
  // the solve ran, so the solve reads pivots clamped into [1, n].
  Tensor in_range = pivots;
  if (pivots.numel() > 0) {
    TENSORD_ASSIGN_OR_RETURN(in_range, c.Op1("clamp", {pivots},
                                             Attrs()
                                                 .Set("min", Scalar(int64_t{1}))
                                                 .Set("max", Scalar(std::max<int64_t>(n, 1)))));
  }
  TENSORD_ASSIGN_OR_RETURN(Workspace factors, CopyOf(op, lu, Concat(batch, {n, n})));
  TENSORD_ASSIGN_OR_RETURN(Tensor piv_source, Expand(in_range, Concat(batch, {n})));
  TENSORD_ASSIGN_OR_RETURN(Tensor piv,
                           NewContiguous(op, DType::kInt32, Concat(batch, {n}), lu.device()));
  TENSORD_ASSIGN_OR_RETURN(Workspace x, CopyOf(op, rhs, Concat(batch, {n, k})));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(lu.device()));
  PlannedOp solve;
  solve.outputs = {x.tensor};
  solve.reads = {lu.storage(), pivots.storage(), b.storage()};
  solve.writes = {factors.tensor.storage(), piv.storage(), x.tensor.storage()};
  solve.kernel = [backend, factors, piv_source, piv, x, transpose]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(FillCopy(backend, factors));
    TENSORD_RETURN_IF_ERROR(
        backend->Copy(piv.sizes(), StridedRef::Of(piv), StridedRef::Of(piv_source)));
    TENSORD_RETURN_IF_ERROR(FillCopy(backend, x));
    return backend->LuSolve(BatchOf(factors.tensor), reinterpret_cast<const int32_t*>(piv.data()),
                            transpose, BatchOf(x.tensor));
  };
  Tensor result = c.Add(std::move(solve))[0];
  if (!left) {
    TENSORD_ASSIGN_OR_RETURN(result, Transpose(result, -2, -1));
  }
  return std::move(c).Finish({result});
}

// (P, L, U) of lu_factor's factors: A = P L U with P (m x m) a permutation, L (m x k) lower
// with a unit diagonal, U (k x n) upper, k = min(m, n). Not unpacked: an empty tensor instead.
absl::StatusOr<std::vector<Tensor>> UnpackLu(Composition& c, absl::string_view op,
                                             const Tensor& lu, const Tensor& pivots,
                                             bool unpack_data, bool unpack_pivots) {
  const int64_t m = Rows(lu), n = Cols(lu), k = std::min(m, n);
  const DimVector batch(lu.sizes().begin(), lu.sizes().end() - 2);
  TENSORD_ASSIGN_OR_RETURN(const Tensor none, c.Full({0}, Scalar(int64_t{0}), lu.dtype(),
                                                     lu.device()));
  Tensor p = none, l = none, u = none;
  if (unpack_data) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor left, Narrow(lu, -1, 0, k));
    TENSORD_ASSIGN_OR_RETURN(l, c.Op1("tril", {left}, Attrs().Set("diagonal", int64_t{-1})));
    TENSORD_ASSIGN_OR_RETURN(const Tensor diagonal, Diagonal(l, 0, -2, -1));
    TENSORD_RETURN_IF_ERROR(
        c.Op("fill_", {diagonal}, Attrs().Set("value", Scalar(int64_t{1}))).status());
    TENSORD_ASSIGN_OR_RETURN(const Tensor top, Narrow(lu, -2, 0, k));
    TENSORD_ASSIGN_OR_RETURN(u, c.Op1("triu", {top}));
  }
  if (unpack_pivots) {
    const int64_t swaps = pivots.size(pivots.dim() - 1);
    TENSORD_RETURN_IF_ERROR(CheckPivots(c, op, pivots, m));
    TENSORD_ASSIGN_OR_RETURN(const Tensor perm,
                             NewContiguous(op, DType::kInt64, Concat(batch, {m}), lu.device()));
    TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(lu.device()));
    PlannedOp permute;
    permute.outputs = {perm};
    permute.reads = {pivots.storage()};
    permute.writes = {perm.storage()};
    const int64_t count = Product(batch);
    permute.kernel = [backend, pivots, perm, count, swaps, m]() {
      return backend->LuPermutation(reinterpret_cast<const int32_t*>(pivots.data()), count, swaps,
                                    m, reinterpret_cast<int64_t*>(perm.data()));
    };
    c.Add(std::move(permute));
    // P[perm[i], i] = 1: A's row perm[i] is row i of L U.
    TENSORD_ASSIGN_OR_RETURN(p, c.Full(Concat(batch, {m, m}), Scalar(int64_t{0}), lu.dtype(),
                                       lu.device()));
    if (m > 0 && count > 0) {
      TENSORD_ASSIGN_OR_RETURN(const Tensor index, Unsqueeze(perm, -2));
      TENSORD_RETURN_IF_ERROR(c.Op("scatter_", {p, index},
                                   Attrs().Set("dim", int64_t{-2}).Set("src", Scalar(int64_t{1})))
                                  .status());
    }
  }
  return std::vector<Tensor>{p, l, u};
}

absl::StatusOr<PlannedOp> PlanLuUnpack(const Tensor& lu, const Tensor& pivots, bool unpack_data,
                                       bool unpack_pivots) {
  constexpr absl::string_view op = "lu_unpack";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {lu, pivots}).status());
  if (lu.dim() < 2) {
    return RuntimeError(op, absl::StrCat("torch.lu_unpack: Expected tensor with 2 or more "
                                         "dimensions. Got size: ", FormatList(lu.sizes()),
                                         " instead"));
  }
  if (pivots.dtype() != DType::kInt32 || !pivots.is_contiguous()) {
    return RuntimeError(op, "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                            "torch.int32 dtype.\nNote: this function is intended to be used "
                            "with the output produced by torch.linalg.lu_factor");
  }
  const int64_t m = Rows(lu);
  if (unpack_pivots) {
    const IntList batch = lu.sizes().subspan(0, lu.dim() - 2);
    if (pivots.dim() != lu.dim() - 1 ||
        !std::equal(batch.begin(), batch.end(), pivots.sizes().begin()) ||
        pivots.size(pivots.dim() - 1) > m) {
      return RuntimeError(op, absl::StrCat("torch.lu_unpack: expected pivots of shape ",
                                           FormatList(batch), " + [k] with k <= LU.size(-2) = ",
                                           m, ", got ", FormatList(pivots.sizes())));
    }
  }
  Composition c({lu, pivots});
  TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> plu,
                           UnpackLu(c, op, lu, pivots, unpack_data, unpack_pivots));
  return std::move(c).Finish(std::move(plu));
}

// linalg.lu: (P, L, U) of A, an LU factorization with partial pivoting unpacked.
absl::StatusOr<PlannedOp> PlanLu(const Tensor& a) {
  constexpr absl::string_view op = "linalg.lu";
  if (a.dim() < 2) {
    return RuntimeError(op, absl::StrCat("linalg.lu: Expected tensor with 2 or more dimensions. "
                                         "Got size: ", FormatList(a.sizes()), " instead"));
  }
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/false));
  Composition c({a});
  TENSORD_ASSIGN_OR_RETURN(PlannedOp factor, PlanLuFactor(op, a, LinalgCheck::kNone));
  const std::vector<Tensor> factors = c.Add(std::move(factor));
  // LAPACK's pivots are in range: no check needed, but UnpackLu's is cheap next to the factoring.
  TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> plu,
                           UnpackLu(c, op, factors[0], factors[1], true, true));
  return std::move(c).Finish(std::move(plu));
}

// ---- det, slogdet: compositions of lu_factor --------------------------------------------------

Attrs Dim(int64_t dim) { return Attrs().Set("dim", std::vector<int64_t>{dim}); }

// (the LU factors' diagonal, the permutation's sign as an int64 +1/-1) for every matrix.
absl::StatusOr<std::pair<Tensor, Tensor>> PlanLuParts(Composition& c, absl::string_view op,
                                                      const Tensor& a) {
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/true));
  // As torch: a contiguous A is factored as its transpose (the same determinant; column-major
  // already, so LAPACK takes it without a copy), which gives torch's rounding.
  Tensor factored = a;
  if (a.is_contiguous()) {
    TENSORD_ASSIGN_OR_RETURN(factored, Transpose(a, -2, -1));
  }
  TENSORD_ASSIGN_OR_RETURN(PlannedOp lu, PlanLuFactor(op, factored, LinalgCheck::kNone));
  const std::vector<Tensor> factors = c.Add(std::move(lu));
  TENSORD_ASSIGN_OR_RETURN(Tensor diagonal, Diagonal(factors[0], 0, -2, -1));
  // Pivot i (1-based) swapped row i with another when it is not i: the sign flips per swap.
  TENSORD_ASSIGN_OR_RETURN(
      Tensor rows, c.Op1("arange", {},
                         Attrs()
                             .Set("start", Scalar(int64_t{1}))
                             .Set("end", Scalar(Cols(a) + 1))
                             .Set("dtype", DType::kInt32)
                             .Set("device", a.device())));
  TENSORD_ASSIGN_OR_RETURN(Tensor swapped, c.Op1("ne", {factors[1], rows}));
  TENSORD_ASSIGN_OR_RETURN(Tensor swaps, c.Op1("sum", {swapped}, Dim(-1)));
  TENSORD_ASSIGN_OR_RETURN(Tensor odd, c.Op1("remainder", {swaps}, Attrs().Set("other", Scalar(int64_t{2}))));
  TENSORD_ASSIGN_OR_RETURN(Tensor minus, c.Op1("mul", {odd}, Attrs().Set("other", Scalar(int64_t{-2}))));
  TENSORD_ASSIGN_OR_RETURN(Tensor sign, c.Op1("add", {minus}, Attrs().Set("other", Scalar(int64_t{1}))));
  return std::make_pair(diagonal, sign);
}

absl::StatusOr<PlannedOp> PlanDet(const Tensor& a) {
  constexpr absl::string_view op = "linalg.det";
  Composition c({a});
  TENSORD_ASSIGN_OR_RETURN(auto parts, PlanLuParts(c, op, a));
  TENSORD_ASSIGN_OR_RETURN(Tensor product, c.Op1("prod", {parts.first}, Dim(-1)));
  TENSORD_ASSIGN_OR_RETURN(Tensor det, c.Op1("mul", {product, parts.second}));
  return std::move(c).Finish({det});
}

absl::StatusOr<PlannedOp> PlanSlogdet(const Tensor& a) {
  constexpr absl::string_view op = "linalg.slogdet";
  Composition c({a});
  TENSORD_ASSIGN_OR_RETURN(auto parts, PlanLuParts(c, op, a));
  TENSORD_ASSIGN_OR_RETURN(Tensor signs, c.Op1("sign", {parts.first}));
  TENSORD_ASSIGN_OR_RETURN(Tensor sign_product, c.Op1("prod", {signs}, Dim(-1)));
  TENSORD_ASSIGN_OR_RETURN(Tensor sign, c.Op1("mul", {sign_product, parts.second}));
  TENSORD_ASSIGN_OR_RETURN(Tensor magnitudes, c.Op1("abs", {parts.first}));
  TENSORD_ASSIGN_OR_RETURN(Tensor logs, c.Op1("log", {magnitudes}));
  TENSORD_ASSIGN_OR_RETURN(Tensor logabsdet, c.Op1("sum", {logs}, Dim(-1)));
  return std::move(c).Finish({sign, logabsdet});
}

// ---- cholesky, qr, svd, eigh --------------------------------------------------------------

absl::StatusOr<PlannedOp> PlanCholesky(const Tensor& a, bool upper, bool with_info) {
  constexpr absl::string_view op = "linalg.cholesky";
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/true));
  TENSORD_ASSIGN_OR_RETURN(Workspace l, CopyOf(op, a, a.sizes()));
  LinalgErrorSpec spec = Spec(op, LinalgCheck::kNotPositiveDefinite, a);
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(a.device()));
  PlannedOp plan;
  plan.outputs = {l.tensor};
  plan.reads = {a.storage()};
  plan.writes = {l.tensor.storage()};
  Tensor info;  // held by the kernel, which writes it through spec.infos
  if (with_info) {
    TENSORD_ASSIGN_OR_RETURN(info,
                             NewInfo(op, a.sizes().subspan(0, a.dim() - 2), a.device(), spec));
    plan.outputs.push_back(info);
    plan.writes.push_back(info.storage());
  }
  plan.kernel = [backend, l, upper, info, spec]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(ZeroInfo(backend, info));
    TENSORD_RETURN_IF_ERROR(FillCopy(backend, l));
    return backend->Cholesky(BatchOf(l.tensor), upper, spec);
  };
  return plan;
}

absl::StatusOr<PlannedOp> PlanQr(const Tensor& a, const std::string& mode) {
  constexpr absl::string_view op = "linalg.qr";
  if (mode != "reduced" && mode != "complete" && mode != "r") {
    return RuntimeError(op, absl::StrCat("qr received unrecognized mode '", mode,
                                         "' but expected one of 'reduced' (default), 'r', or "
                                         "'complete'"));
  }
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/false));
  const IntList batch = a.sizes().subspan(0, a.dim() - 2);
  const int64_t m = Rows(a), n = Cols(a), k = std::min(m, n);
  const int64_t kept = mode == "complete" ? m : k;  // Q's columns and R's rows
  TENSORD_RETURN_IF_ERROR(CheckSolverSize(op, m, kept));
  TENSORD_ASSIGN_OR_RETURN(Workspace work, CopyOf(op, a, a.sizes()));
  TENSORD_ASSIGN_OR_RETURN(Tensor r, NewColumnMajor(op, a.dtype(), Concat(batch, {kept, n}),
                                                    a.device()));
  Tensor q;
  if (mode == "r") {  // torch returns an empty Q
    TENSORD_ASSIGN_OR_RETURN(q, NewContiguous(op, a.dtype(), {0}, a.device()));
  } else {
    TENSORD_ASSIGN_OR_RETURN(q, NewColumnMajor(op, a.dtype(), Concat(batch, {m, kept}),
                                               a.device()));
  }
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(a.device()));
  PlannedOp plan;
  plan.outputs = {q, r};
  plan.reads = {a.storage()};
  plan.writes = {q.storage(), r.storage()};
  const bool want_q = mode != "r";
  plan.kernel = [backend, work, q, r, want_q]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(FillCopy(backend, work));
    return backend->Qr(BatchOf(work.tensor), BatchOf(r), want_q ? BatchOf(q) : MatrixBatch{});
  };
  return plan;
}

// ---- geqrf, householder_product (orgqr), ormqr: QR's reflectors -------------------------------

// torch.geqrf: (a, tau), LAPACK's packed QR: R on and above the diagonal of a, the Householder
// reflectors below it, their scales in tau (min(m, n) per matrix).
absl::StatusOr<PlannedOp> PlanGeqrf(const Tensor& a) {
  constexpr absl::string_view op = "geqrf";
  if (a.dim() < 2) return RuntimeError(op, "torch.geqrf: input must have at least 2 dimensions.");
  if (!IsFloating(a.dtype()) || a.dtype() == DType::kFloat16 || a.dtype() == DType::kBFloat16) {
    return KernelNotImplemented(op, "geqrf_cpu", a.dtype());
  }
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/false));
  const int64_t k = std::min(Rows(a), Cols(a));
  TENSORD_ASSIGN_OR_RETURN(Workspace work, CopyOf(op, a, a.sizes()));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor tau, NewContiguous(op, a.dtype(), Concat(a.sizes().subspan(0, a.dim() - 2), {k}),
                                a.device()));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(a.device()));
  PlannedOp plan;
  plan.outputs = {work.tensor, tau};
  plan.reads = {a.storage()};
  plan.writes = {work.tensor.storage(), tau.storage()};
  plan.kernel = [backend, work, tau]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(FillCopy(backend, work));
    return backend->Geqrf(BatchOf(work.tensor), tau.data());
  };
  return plan;
}

// The first n columns of the product of the Householder reflectors H_1 ... H_k held below the
// diagonal of a's first k columns (k = tau's last size), as a new column-major m x n batch.
absl::StatusOr<PlannedOp> PlanHouseholderProductOf(absl::string_view op, const Tensor& a,
                                                   const Tensor& tau, int64_t n) {
  const int64_t m = Rows(a), k = tau.size(tau.dim() - 1);
  const DimVector batch(a.sizes().begin(), a.sizes().end() - 2);
  TENSORD_RETURN_IF_ERROR(CheckSolverSize(op, m, n));
  TENSORD_ASSIGN_OR_RETURN(const Tensor columns, Narrow(a, -1, 0, k));
  TENSORD_ASSIGN_OR_RETURN(Workspace reflectors, CopyOf(op, columns, columns.sizes()));
  Workspace scales;
  scales.source = tau;
  TENSORD_ASSIGN_OR_RETURN(scales.tensor, NewContiguous(op, a.dtype(), tau.sizes(), a.device()));
  TENSORD_ASSIGN_OR_RETURN(Tensor q, NewColumnMajor(op, a.dtype(), Concat(batch, {m, n}),
                                                    a.device()));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(a.device()));
  PlannedOp plan;
  plan.outputs = {q};
  plan.reads = {a.storage(), tau.storage()};
  plan.writes = {reflectors.tensor.storage(), scales.tensor.storage(), q.storage()};
  plan.kernel = [backend, reflectors, scales, q]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(FillCopy(backend, reflectors));
    TENSORD_RETURN_IF_ERROR(backend->Copy(scales.tensor.sizes(), StridedRef::Of(scales.tensor),
                                          StridedRef::Of(scales.source)));
    return backend->HouseholderProduct(BatchOf(reflectors.tensor), scales.tensor.data(),
                                       BatchOf(q));
  };
  return plan;
}

// a (m x n) and tau (k) as householder_product and ormqr take them: the same dtype and batch,
// n <= m (householder_product) and k <= n.
absl::Status CheckReflectors(absl::string_view op, absl::string_view torch_name, const Tensor& a,
                             const Tensor& tau, bool tall) {
  const std::string prefix = absl::StrCat(torch_name, ": ");
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {a, tau}).status());
  if (a.dim() < 2) {
    return RuntimeError(op, absl::StrCat(prefix, "input must have at least 2 dimensions."));
  }
  if (tall && Rows(a) < Cols(a)) {
    return RuntimeError(op, absl::StrCat(prefix, "input.shape[-2] must be greater than or equal "
                                                 "to input.shape[-1]"));
  }
  if (tau.dim() != a.dim() - 1) {
    return RuntimeError(op, absl::StrCat(prefix, "Expected tau to have one dimension less than "
                                                 "input, but got tau.ndim equal to ", tau.dim(),
                                         " and input.ndim is equal to ", a.dim()));
  }
  if (tau.size(tau.dim() - 1) > Cols(a)) {
    return RuntimeError(op, absl::StrCat(prefix, tall ? "input.shape[-1] must be greater than or "
                                                        "equal to tau.shape[-1]"
                                                      : "tau.shape[-1] must be less than or "
                                                        "equal to input.shape[-1]"));
  }
  const IntList batch = a.sizes().subspan(0, a.dim() - 2);
  if (!std::equal(batch.begin(), batch.end(), tau.sizes().begin())) {
    return RuntimeError(op, absl::StrCat(prefix, "Expected batch dimensions of tau to be equal "
                                                 "to input.shape[:-2], but got ",
                                         FormatList(tau.sizes().subspan(0, tau.dim() - 1))));
  }
  if (tau.dtype() != a.dtype()) {
    return RuntimeError(op, absl::StrCat(prefix, "tau dtype ", DTypeLegacyName(tau.dtype()),
                                         " does not match input dtype ",
                                         DTypeLegacyName(a.dtype())));
  }
  return CheckMatrices(op, a, /*square=*/false);
}

absl::StatusOr<PlannedOp> PlanHouseholderProduct(const Tensor& a, const Tensor& tau) {
  constexpr absl::string_view op = "linalg.householder_product";
  TENSORD_RETURN_IF_ERROR(
      CheckReflectors(op, "torch.linalg.householder_product", a, tau, /*tall=*/true));
  return PlanHouseholderProductOf(op, a, tau, Cols(a));
}

// torch.ormqr: op(Q) C (left) or C op(Q), op the transpose or not, Q the mn x mn product of the
// reflectors of geqrf's (a, tau) (mn = C's rows, or columns with left = false): Q made whole by
// householder_product of a padded to mn x mn, then one matmul, into a column-major result.
absl::StatusOr<PlannedOp> PlanOrmqr(const Tensor& a, const Tensor& tau, const Tensor& c,
                                    bool left, bool transpose) {
  constexpr absl::string_view op = "ormqr";
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {a, tau, c}).status());
  TENSORD_RETURN_IF_ERROR(CheckReflectors(op, "torch.ormqr", a, tau, /*tall=*/false));
  if (c.dim() != a.dim()) {
    return RuntimeError(op, absl::StrCat("torch.ormqr: input.dim() must be equal to other.dim(), "
                                         "but got ", a.dim(), " and ", c.dim()));
  }
  const int64_t mn = left ? Rows(c) : Cols(c);
  if (Rows(a) != mn) {
    return RuntimeError(op, absl::StrCat("torch.ormqr: ", left ? "other.shape[-2]"
                                                              : "other.shape[-1]",
                                         " must be equal to input.shape[-2]"));
  }
  const IntList batch = a.sizes().subspan(0, a.dim() - 2);
  if (!std::equal(batch.begin(), batch.end(), c.sizes().begin())) {
    return RuntimeError(op, absl::StrCat("torch.ormqr: Expected batch dimensions of other to be "
                                         "equal to input.shape[:-2], but got ",
                                         FormatList(c.sizes().subspan(0, c.dim() - 2))));
  }
  if (c.dtype() != a.dtype()) {
    return RuntimeError(op, absl::StrCat("torch.ormqr: Expected input and other to have the same "
                                         "dtype, but input has dtype", DTypeLegacyName(a.dtype()),
                                         " and other has dtype ", DTypeLegacyName(c.dtype())));
  }
  Composition comp({a, tau, c});
  // a's reflector columns (as many as tau has) in an mn x mn matrix: the rest are not read.
  Tensor square = a;
  if (Cols(a) != mn) {
    TENSORD_ASSIGN_OR_RETURN(square,
                             comp.Full(Concat(batch, {mn, mn}), Scalar(int64_t{0}), a.dtype(),
                                       a.device()));
    const int64_t k = tau.size(tau.dim() - 1);
    TENSORD_ASSIGN_OR_RETURN(const Tensor into, Narrow(square, -1, 0, k));
    TENSORD_ASSIGN_OR_RETURN(const Tensor from, Narrow(a, -1, 0, k));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCopyInto(into, from));
    comp.Add(std::move(copy));
  }
  TENSORD_ASSIGN_OR_RETURN(PlannedOp householder, PlanHouseholderProductOf(op, square, tau, mn));
  Tensor q = comp.Add(std::move(householder))[0];
  if (transpose) {
    TENSORD_ASSIGN_OR_RETURN(q, Transpose(q, -2, -1));
  }
  TENSORD_ASSIGN_OR_RETURN(const Tensor product,
                           left ? comp.Op1("matmul", {q, c}) : comp.Op1("matmul", {c, q}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor result,
                           NewColumnMajor(op, c.dtype(), c.sizes(), c.device()));
  TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCopyInto(result, product));
  comp.Add(std::move(copy));
  return std::move(comp).Finish({result});
}

// (U, S, Vh), or S alone for svdvals.
absl::StatusOr<PlannedOp> PlanSvd(absl::string_view op, const Tensor& a, bool full_matrices,
                                  bool vectors) {
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/false));
  const IntList batch = a.sizes().subspan(0, a.dim() - 2);
  const int64_t m = Rows(a), n = Cols(a), k = std::min(m, n);
  TENSORD_ASSIGN_OR_RETURN(Workspace work, CopyOf(op, a, a.sizes()));
  if (vectors) {
    TENSORD_RETURN_IF_ERROR(CheckSolverSize(op, m, full_matrices ? m : k));
    TENSORD_RETURN_IF_ERROR(CheckSolverSize(op, full_matrices ? n : k, n));
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor s, NewContiguous(op, a.dtype(), Concat(batch, {k}), a.device()));
  Tensor u, vh;
  if (vectors) {
    TENSORD_ASSIGN_OR_RETURN(u, NewColumnMajor(op, a.dtype(),
                                               Concat(batch, {m, full_matrices ? m : k}),
                                               a.device()));
    TENSORD_ASSIGN_OR_RETURN(vh, NewColumnMajor(op, a.dtype(),
                                                Concat(batch, {full_matrices ? n : k, n}),
                                                a.device()));
  }
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(a.device()));
  PlannedOp plan;
  plan.outputs = vectors ? std::vector<Tensor>{u, s, vh} : std::vector<Tensor>{s};
  plan.reads = {a.storage()};
  for (const Tensor& t : plan.outputs) plan.writes.push_back(t.storage());
  plan.kernel = [backend, work, s, u, vh,
                 spec = Spec(op, LinalgCheck::kSvdNoConvergence, a)]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(FillCopy(backend, work));
    return backend->Svd(BatchOf(work.tensor), s.data(), BatchOf(u), BatchOf(vh), spec);
  };
  return plan;
}

absl::StatusOr<PlannedOp> PlanEigh(absl::string_view op, const Tensor& a, const std::string& uplo,
                                   bool vectors) {
  if (uplo != "L" && uplo != "U" && uplo != "l" && uplo != "u") {
    return RuntimeError(op, absl::StrCat("Expected UPLO argument to be 'L' or 'U', but got ",
                                         uplo));
  }
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/true));
  const IntList batch = a.sizes().subspan(0, a.dim() - 2);
  TENSORD_ASSIGN_OR_RETURN(Workspace work, CopyOf(op, a, a.sizes()));
  TENSORD_ASSIGN_OR_RETURN(Tensor w, NewContiguous(op, a.dtype(), Concat(batch, {Cols(a)}),
                                                   a.device()));
  TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(a.device()));
  PlannedOp plan;
  plan.outputs = vectors ? std::vector<Tensor>{w, work.tensor} : std::vector<Tensor>{w};
  plan.reads = {a.storage()};
  plan.writes = {w.storage(), work.tensor.storage()};
  const bool upper = uplo == "U" || uplo == "u";
  plan.kernel = [backend, work, w, upper, vectors,
                 spec = Spec(op, LinalgCheck::kNoConvergence, a)]() -> absl::Status {
    TENSORD_RETURN_IF_ERROR(FillCopy(backend, work));
    return backend->Eigh(BatchOf(work.tensor), w.data(), upper, vectors, spec);
  };
  return plan;
}

using Plan1 = std::function<absl::StatusOr<PlannedOp>(const Tensor&, AttrReader&)>;

// linalg.matrix_power: A^n by repeated squaring (n < 0: of A's inverse); A^0 the identity and
// A^1 a contiguous copy, as torch's.
absl::StatusOr<PlannedOp> PlanMatrixPower(const Tensor& a, int64_t n) {
  constexpr absl::string_view op = "linalg.matrix_power";
  if (a.dim() < 2) {
    return RuntimeError(op, "linalg.matrix_power: The input tensor A must have at least 2 "
                            "dimensions.");
  }
  if (a.size(a.dim() - 1) != a.size(a.dim() - 2)) {
    return RuntimeError(op, absl::StrCat("linalg.matrix_power: A must be batches of square "
                                         "matrices, but they are ", a.size(a.dim() - 2), " by ",
                                         a.size(a.dim() - 1), " matrices"));
  }
  Composition c({a});
  if (n == 0) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor eye, c.Full(a.sizes(), Scalar(int64_t{0}), a.dtype(), a.device()));
    TENSORD_ASSIGN_OR_RETURN(const Tensor diagonal, Diagonal(eye, 0, -2, -1));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp ones, PlanFill(diagonal, Scalar(int64_t{1})));
    c.Add(std::move(ones));
    return std::move(c).Finish({eye});
  }
  Tensor base = a;
  uint64_t k = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  if (n < 0) {
    TENSORD_ASSIGN_OR_RETURN(PlannedOp inverse, PlanInv(a, false));
    base = c.Add(std::move(inverse)).at(0);
    if (k == 1) return std::move(c).Finish({base});
  }
  Tensor result;
  while (k != 0) {
    if (k & 1) {
      if (!result.defined()) {
        TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCloneContiguous(base));
        result = c.Add(std::move(copy)).at(0);
      } else {
        TENSORD_ASSIGN_OR_RETURN(result, c.Op1("matmul", {result, base}));
      }
    }
    k >>= 1;
    if (k != 0) {
      TENSORD_ASSIGN_OR_RETURN(base, c.Op1("matmul", {base, base}));
    }
  }
  return std::move(c).Finish({result});
}

// ---- pinv and matrix_rank: the singular values (or |eigenvalues|) above a cutoff ----------

// torch's cutoff for singular values `s` (last dim descending, or |eigenvalues|), as its
// get_atol_rtol: max(atol, rtol * the largest), atol 0 when not given, rtol when not given
// eps * max(m, n) where atol is not above 0 and 0 where it is. atol and rtol: undefined, wrapped
// numbers or tensors (one per matrix of the batch).
absl::StatusOr<Tensor> Cutoff(Composition& c, const Tensor& s, const Tensor& atol,
                              const Tensor& rtol, int64_t m, int64_t n, DType dtype) {
  Attrs last = Dim(-1);
  last.Set("keepdim", true);
  TENSORD_ASSIGN_OR_RETURN(const Tensor smax,
                           c.Op1(s.size(s.dim() - 1) > 0 ? "amax" : "sum", {s}, last));
  const double eps = dtype == DType::kFloat64 ? std::numeric_limits<double>::epsilon()
                                              : std::numeric_limits<float>::epsilon();
  const double default_rtol = eps * static_cast<double>(std::max(m, n));
  Tensor r = rtol;
  if (!r.defined() && (!atol.defined() || atol.is_wrapped_number())) {
    const bool atol_positive = atol.defined() && ScalarOf(atol).to_double() > 0.0;
    TENSORD_ASSIGN_OR_RETURN(r, WrapNumber(Scalar(atol_positive ? 0.0 : default_rtol)));
  } else if (!r.defined()) {  // per matrix: 0 where atol > 0
    TENSORD_ASSIGN_OR_RETURN(const Tensor positive,
                             c.Op1("gt", {atol}, Attrs().Set("other", Scalar(0.0))));
    TENSORD_ASSIGN_OR_RETURN(const Tensor zero, WrapNumber(Scalar(0.0)));
    TENSORD_ASSIGN_OR_RETURN(const Tensor dflt, WrapNumber(Scalar(default_rtol)));
    TENSORD_ASSIGN_OR_RETURN(r, c.Op1("where", {positive, zero, dflt}));
    TENSORD_ASSIGN_OR_RETURN(r, Unsqueeze(r, -1));
  } else if (!r.is_wrapped_number()) {
    TENSORD_ASSIGN_OR_RETURN(r, Unsqueeze(r, -1));
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor tol, c.Op1("mul", {smax, r}));
  if (!atol.defined() || atol.is_wrapped_number()) {
    const Scalar floor = atol.defined() ? ScalarOf(atol) : Scalar(0.0);
    return c.Op1("clamp_min", {tol}, Attrs().Set("min", floor));
  }
  TENSORD_ASSIGN_OR_RETURN(const Tensor a, Unsqueeze(atol, -1));
  return c.Op1("maximum", {tol, a});
}

absl::Status CheckTolerance(absl::string_view op, const Tensor& a, const Tensor& t) {
  if (!t.defined() || t.is_wrapped_number()) return absl::OkStatus();
  if (t.device() != a.device()) {
    return RuntimeError(op, absl::StrCat("Expected all tensors to be on the same device, but "
                                         "found at least two devices, ", a.device().ToString(),
                                         " and ", t.device().ToString(), "!"));
  }
  return absl::OkStatus();
}

// 1 / v where v > tol, else 0.
absl::StatusOr<Tensor> InvertAbove(Composition& c, const Tensor& v, const Tensor& magnitude,
                                   const Tensor& tol) {
  TENSORD_ASSIGN_OR_RETURN(const Tensor keep, c.Op1("gt", {magnitude, tol}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor inverse, c.Op1("reciprocal", {v}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor zero, WrapNumber(Scalar(int64_t{0})));
  return c.Op1("where", {keep, inverse, zero});
}

// linalg.pinv: V diag(1/s) U^T over the singular values above the cutoff (hermitian: from
// eigh, V diag(1/w) V^T over |w| above it).
absl::StatusOr<PlannedOp> PlanPinv(const Tensor& a, const Tensor& atol, const Tensor& rtol,
                                   bool hermitian) {
  constexpr absl::string_view op = "linalg.pinv";
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/false));
  TENSORD_RETURN_IF_ERROR(CheckTolerance(op, a, atol));
  TENSORD_RETURN_IF_ERROR(CheckTolerance(op, a, rtol));
  const int64_t m = Rows(a), n = Cols(a);
  Composition c({a, atol, rtol});
  if (hermitian) {
    TENSORD_ASSIGN_OR_RETURN(PlannedOp eigh, PlanEigh("linalg.eigh", a, "L", true));
    const std::vector<Tensor> wv = c.Add(std::move(eigh));
    TENSORD_ASSIGN_OR_RETURN(const Tensor magnitude, c.Op1("abs", {wv[0]}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor tol, Cutoff(c, magnitude, atol, rtol, m, n,
                                                      a.dtype()));
    TENSORD_ASSIGN_OR_RETURN(Tensor w_inv, InvertAbove(c, wv[0], magnitude, tol));
    TENSORD_ASSIGN_OR_RETURN(w_inv, Unsqueeze(w_inv, -2));
    TENSORD_ASSIGN_OR_RETURN(const Tensor scaled, c.Op1("mul", {wv[1], w_inv}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor vt, Transpose(wv[1], -2, -1));
    TENSORD_ASSIGN_OR_RETURN(const Tensor out, c.Op1("matmul", {scaled, vt}));
    return std::move(c).Finish({out});
  }
  TENSORD_ASSIGN_OR_RETURN(PlannedOp svd, PlanSvd("linalg.svd", a, false, /*vectors=*/true));
  const std::vector<Tensor> usv = c.Add(std::move(svd));
  TENSORD_ASSIGN_OR_RETURN(const Tensor tol, Cutoff(c, usv[1], atol, rtol, m, n, a.dtype()));
  TENSORD_ASSIGN_OR_RETURN(Tensor s_inv, InvertAbove(c, usv[1], usv[1], tol));
  TENSORD_ASSIGN_OR_RETURN(s_inv, Unsqueeze(s_inv, -2));
  TENSORD_ASSIGN_OR_RETURN(const Tensor v, Transpose(usv[2], -2, -1));
  TENSORD_ASSIGN_OR_RETURN(const Tensor scaled, c.Op1("mul", {v, s_inv}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor ut, Transpose(usv[0], -2, -1));
  TENSORD_ASSIGN_OR_RETURN(const Tensor out, c.Op1("matmul", {scaled, ut}));
  return std::move(c).Finish({out});
}

// linalg.matrix_rank: how many singular values (hermitian: |eigenvalues|) lie above the cutoff.
absl::StatusOr<PlannedOp> PlanMatrixRank(const Tensor& a, const Tensor& atol, const Tensor& rtol,
                                         bool hermitian) {
  constexpr absl::string_view op = "linalg.matrix_rank";
  TENSORD_RETURN_IF_ERROR(CheckMatrices(op, a, /*square=*/false));
  TENSORD_RETURN_IF_ERROR(CheckTolerance(op, a, atol));
  TENSORD_RETURN_IF_ERROR(CheckTolerance(op, a, rtol));
  Composition c({a, atol, rtol});
  Tensor s;
  if (hermitian) {
    TENSORD_ASSIGN_OR_RETURN(PlannedOp eig, PlanEigh("linalg.eigvalsh", a, "L", false));
    TENSORD_ASSIGN_OR_RETURN(s, c.Op1("abs", {c.Add(std::move(eig)).at(0)}));
  } else {
    TENSORD_ASSIGN_OR_RETURN(PlannedOp sv, PlanSvd("linalg.svdvals", a, false, false));
    s = c.Add(std::move(sv)).at(0);
  }
  TENSORD_ASSIGN_OR_RETURN(const Tensor tol, Cutoff(c, s, atol, rtol, Rows(a), Cols(a),
                                                    a.dtype()));
  TENSORD_ASSIGN_OR_RETURN(const Tensor above, c.Op1("gt", {s, tol}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor rank, c.Op1("sum", {above}, Dim(-1)));
  return std::move(c).Finish({rank});
}

void Add(std::vector<OpDef>& ops, std::string name, std::vector<AttrSpec> attrs, std::string doc,
         bool multi_output, Plan1 plan) {
  ops.push_back({std::move(name), OpKind::kCompute, {"A"}, std::move(attrs), std::move(doc),
                 multi_output, [plan](Inputs in, AttrReader& a) { return plan(in[0], a); }});
}

}  // namespace

void RegisterDecompositionOps(std::vector<OpDef>& ops) {
  // Each of these has an _ex form that returns LAPACK's info per matrix (int32) as its last
  // output instead of failing for a singular or indefinite matrix, as torch's.
  for (const bool ex : {false, true}) {
    const std::string suffix = ex ? "_ex" : "";
    Add(ops, "linalg_lu_factor" + suffix, {},
        ex ? "(LU, pivots, info): lu_factor that reports instead of failing."
           : "(LU, pivots): LU factorization with partial pivoting; pivots int32, 1-based.",
        true, [ex](const Tensor& a, AttrReader&) {
          return PlanLuFactor("linalg.lu_factor", a, LinalgCheck::kLuSingular, ex);
        });
    ops.push_back({"linalg_solve" + suffix, OpKind::kCompute, {"A", "B"},
                   {Opt("left", AttrType::kBool, "true", "false: solve X A = B")},
                   ex ? "(result, info): solve that reports instead of failing."
                      : "X with A X = B (or X A = B); B a matrix or a (batch of) vector(s).",
                   ex, [ex](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                     TENSORD_ASSIGN_OR_RETURN(bool left, a.Bool("left", true));
                     return PlanSolve(in[0], in[1], left, ex);
                   }});
    Add(ops, "linalg_inv" + suffix, {},
        ex ? "(inverse, info): inv that reports instead of failing."
           : "The inverse of every square matrix of A.",
        ex, [ex](const Tensor& a, AttrReader&) { return PlanInv(a, ex); });
    Add(ops, "linalg_cholesky" + suffix, {Opt("upper", AttrType::kBool, "false")},
        ex ? "(L, info): cholesky that reports instead of failing."
           : "The Cholesky factor L (or U) of every symmetric positive-definite matrix of A.",
        ex, [ex](const Tensor& a, AttrReader& r) -> absl::StatusOr<PlannedOp> {
          TENSORD_ASSIGN_OR_RETURN(bool upper, r.Bool("upper", false));
          return PlanCholesky(a, upper, ex);
        });
  }
  for (const bool rank : {false, true}) {
    OpDef def{rank ? "linalg_matrix_rank" : "linalg_pinv", OpKind::kCompute,
              {"A", "atol", "rtol"},
              {Opt("hermitian", AttrType::kBool, "false", "A symmetric: eigenvalues, not SVD")},
              rank ? "The number of singular values of every matrix of A above max(atol, rtol * "
                     "the largest) (int64)."
                   : "The pseudo-inverse of every matrix of A from its singular values above "
                     "max(atol, rtol * the largest).",
              false, [rank](Inputs in, AttrReader& r) -> absl::StatusOr<PlannedOp> {
                TENSORD_ASSIGN_OR_RETURN(bool hermitian, r.Bool("hermitian", false));
                return rank ? PlanMatrixRank(in[0], in[1], in[2], hermitian)
                            : PlanPinv(in[0], in[1], in[2], hermitian);
              }};
    def.scalar_inputs = {"atol", "rtol"};
    def.optional_inputs = {"atol", "rtol"};
    ops.push_back(std::move(def));
  }
  ops.push_back({"linalg_matrix_power", OpKind::kCompute, {"A"}, {Req("n", AttrType::kInt)},
                 "A^n for every square matrix of A, by repeated squaring (n < 0: of the "
                 "inverse; n = 0: the identity).",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t n, a.Int("n"));
                   return PlanMatrixPower(in[0], n);
                 }});
  ops.push_back({"linalg_lu_solve", OpKind::kCompute, {"LU", "pivots", "B"},
                 {Opt("left", AttrType::kBool, "true", "false: solve X A = B"),
                  Opt("adjoint", AttrType::kBool, "false", "solve with A's transpose")},
                 "X with A X = B for A = P L U given as lu_factor's (LU, pivots); batch dims "
                 "broadcast.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(bool left, a.Bool("left", true));
                   TENSORD_ASSIGN_OR_RETURN(bool adjoint, a.Bool("adjoint", false));
                   return PlanLuSolveFactored(in[0], in[1], in[2], left, adjoint);
                 }});
  ops.push_back({"lu_unpack", OpKind::kCompute, {"LU_data", "LU_pivots"},
                 {Opt("unpack_data", AttrType::kBool, "true"),
                  Opt("unpack_pivots", AttrType::kBool, "true")},
                 "(P, L, U) of lu_factor's factors, A = P L U; what is not unpacked is an empty "
                 "tensor.",
                 true, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(bool data, a.Bool("unpack_data", true));
                   TENSORD_ASSIGN_OR_RETURN(bool pivots, a.Bool("unpack_pivots", true));
                   return PlanLuUnpack(in[0], in[1], data, pivots);
                 }});
  Add(ops, "linalg_lu", {}, "(P, L, U) with A = P L U: LU with partial pivoting, unpacked.", true,
      [](const Tensor& a, AttrReader&) { return PlanLu(a); });
  Add(ops, "geqrf", {}, "(a, tau): LAPACK's packed QR of every matrix of A.", true,
      [](const Tensor& a, AttrReader&) { return PlanGeqrf(a); });
  ops.push_back({"linalg_householder_product", OpKind::kCompute, {"A", "tau"}, {},
                 "The first n columns of the product of the Householder reflectors of A (m x n) "
                 "scaled by tau (geqrf's).",
                 false, [](Inputs in, AttrReader&) {
                   return PlanHouseholderProduct(in[0], in[1]);
                 }});
  ops.push_back({"ormqr", OpKind::kCompute, {"A", "tau", "other"},
                 {Opt("left", AttrType::kBool, "true"), Opt("transpose", AttrType::kBool, "false")},
                 "op(Q) other (or other op(Q)), Q the product of geqrf's reflectors (A, tau).",
                 false, [](Inputs in, AttrReader& r) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(bool left, r.Bool("left", true));
                   TENSORD_ASSIGN_OR_RETURN(bool transpose, r.Bool("transpose", false));
                   return PlanOrmqr(in[0], in[1], in[2], left, transpose);
                 }});
  Add(ops, "linalg_det", {}, "The determinant of every square matrix of A (from its LU).", false,
      [](const Tensor& a, AttrReader&) { return PlanDet(a); });
  Add(ops, "linalg_slogdet", {}, "(sign, logabsdet) of the determinant of every matrix of A.",
      true, [](const Tensor& a, AttrReader&) { return PlanSlogdet(a); });
  Add(ops, "linalg_qr",
      {Opt("mode", AttrType::kString, "reduced", "'reduced', 'complete' or 'r'")},
      "(Q, R) of every matrix of A.", true,
      [](const Tensor& a, AttrReader& r) -> absl::StatusOr<PlannedOp> {
        TENSORD_ASSIGN_OR_RETURN(std::string mode, r.String("mode", "reduced"));
        return PlanQr(a, mode);
      });
  Add(ops, "linalg_svd", {Opt("full_matrices", AttrType::kBool, "true")},
      "(U, S, Vh) of every matrix of A; S descending.", true,
      [](const Tensor& a, AttrReader& r) -> absl::StatusOr<PlannedOp> {
        TENSORD_ASSIGN_OR_RETURN(bool full, r.Bool("full_matrices", true));
        return PlanSvd("linalg.svd", a, full, /*vectors=*/true);
      });
  Add(ops, "linalg_svdvals", {}, "The singular values of every matrix of A, descending.", false,
      [](const Tensor& a, AttrReader&) {
        return PlanSvd("linalg.svdvals", a, false, /*vectors=*/false);
      });
  for (const bool vectors : {true, false}) {
    const std::string name = vectors ? "linalg_eigh" : "linalg_eigvalsh";
    Add(ops, name,
        {Opt("UPLO", AttrType::kString, "L", "'L' or 'U': the triangle read")},
        vectors ? "(eigenvalues ascending, eigenvectors as columns) of every symmetric matrix."
                : "The eigenvalues (ascending) of every symmetric matrix of A.",
        vectors, [vectors](const Tensor& a, AttrReader& r) -> absl::StatusOr<PlannedOp> {
          TENSORD_ASSIGN_OR_RETURN(std::string uplo, r.String("UPLO", "L"));
          return PlanEigh(vectors ? "linalg.eigh" : "linalg.eigvalsh", a, uplo, vectors);
        });
  }
}

}  // namespace tensord::engine
