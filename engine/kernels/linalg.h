// Dense linear algebra: what the planners of engine/ops/decomposition_ops.cc hand a backend's
// factorization kernels (LAPACK on the CPU, cuSOLVER on a GPU), and the errors a factorization
// reports for its data (a singular matrix, one not positive-definite).
#ifndef TENSORD_ENGINE_KERNELS_LINALG_H_
#define TENSORD_ENGINE_KERNELS_LINALG_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "engine/core/dtype.h"
#include "engine/core/errors.h"

namespace tensord::engine {

// `batch` matrices of rows x cols stored column-major one after another (LAPACK's layout, and the
// layout torch.linalg returns): element (i, j) of matrix b at data[b * rows * cols + j * rows + i].
// float32 or float64.
struct MatrixBatch {
  char* data = nullptr;
  DType dtype = DType::kFloat32;
  int64_t batch = 0;
  int64_t rows = 0;
  int64_t cols = 0;

  int64_t matrix_elements() const { return rows * cols; }
  bool empty() const { return batch == 0 || rows == 0 || cols == 0; }
};

// What a factorization's positive LAPACK `info` means for the op that asked for it, and so which
// error fails the op (kNone: the op does not fail; the factors are what LAPACK left).
enum class LinalgCheck : int32_t {
  kNone,
  kSolveSingular,      // linalg.solve: U[i,i] is zero
  kInverseSingular,    // linalg.inv
  kLuSingular,         // linalg.lu_factor
  kNotPositiveDefinite,  // linalg.cholesky: the leading minor of order `info` is not
  kNoConvergence,      // eigh: the iteration did not converge
  kSvdNoConvergence,   // svd, svdvals
};

struct LinalgErrorSpec {
  std::string op;        // the op the error names
  LinalgCheck check = LinalgCheck::kNone;
  bool batched = false;  // the input had batch dims: the message names the batch element
  // Where not null, LAPACK's info of every matrix is written here (int32, one per matrix, in
  // the op's device memory): the *_ex ops return it instead of failing.
  int32_t* infos = nullptr;
};

// The error of `spec` for matrix `batch_index` with LAPACK's nonzero `info`, in torch's words
// (a negative info is an argument LAPACK refused: for svd, a NaN or infinity in the input);
// its Python class is torch.linalg.LinAlgError (a RuntimeError), but for lu_factor's.
inline absl::Status LinalgFailure(const LinalgErrorSpec& spec, int64_t batch_index,
                                  int64_t info) {
  std::string message =
      spec.batched ? absl::StrCat("(Batch element ", batch_index, "): ") : std::string();
  switch (spec.check) {
    case LinalgCheck::kSolveSingular:
      absl::StrAppend(&message, "The solver failed because the input matrix is singular.");
      break;
    case LinalgCheck::kInverseSingular:
      absl::StrAppend(&message, "The diagonal element ", info,
                      " is zero, the inversion could not be completed because the input matrix "
                      "is singular.");
      break;
    case LinalgCheck::kLuSingular:
      absl::StrAppend(&message, "U[", info, ",", info,
                      "] is zero and using it on lu_solve would result in a division by zero. "
                      "If you still want to perform the factorization, consider calling "
                      "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");
      break;
    case LinalgCheck::kNotPositiveDefinite:
      absl::StrAppend(&message,
                      "The factorization could not be completed because the input is not "
                      "positive-definite (the leading minor of order ",
                      info, " is not positive-definite).");
      break;
    case LinalgCheck::kSvdNoConvergence:
      if (info < 0) {
        absl::StrAppend(&message, "The algorithm failed to converge because the input matrix "
                                  "contained non-finite values.");
        break;
      }
      absl::StrAppend(&message,
                      "The algorithm failed to converge because the input matrix is "
                      "ill-conditioned or has too many repeated singular values (error code: ",
                      info, ").");
      break;
    case LinalgCheck::kNoConvergence:
    case LinalgCheck::kNone:
      absl::StrAppend(&message,
                      "The algorithm failed to converge because the input matrix is "
                      "ill-conditioned or has too many repeated eigenvalues (error code: ",
                      info, ").");
      break;
  }
  absl::Status status = RuntimeError(spec.op, message);
  // torch raises lu_factor's as a plain RuntimeError, the others as LinAlgError.
  if (spec.check != LinalgCheck::kLuSingular) {
    status.SetPayload(kErrorKindUrl, absl::Cord("LinAlgError"));
  }
  return status;
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_LINALG_H_
