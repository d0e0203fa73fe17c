// CPU factorizations through LAPACK (OpenBLAS's): the Backend's LuFactor, LuSolve, Cholesky, Qr,
// Svd and Eigh (runtime/backend.h, kernels/linalg.h). Batches run one matrix per parallel piece;
// a failing matrix fails the op with the first failing batch element's error, as torch's.
#ifndef TENSORD_ENGINE_CPU_LAPACK_KERNELS_H_
#define TENSORD_ENGINE_CPU_LAPACK_KERNELS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "engine/kernels/linalg.h"

namespace tensord::engine::cpu {

absl::Status LuFactor(const MatrixBatch& a, int32_t* pivots, const LinalgErrorSpec& spec);
absl::Status LuSolve(const MatrixBatch& lu, const int32_t* pivots, bool transpose,
                     const MatrixBatch& b);
void LuPermutation(const int32_t* pivots, int64_t batch, int64_t swaps, int64_t rows,
                   int64_t* perm);
absl::Status Cholesky(const MatrixBatch& a, bool upper, const LinalgErrorSpec& spec);
absl::Status Qr(const MatrixBatch& a, const MatrixBatch& r, const MatrixBatch& q);
absl::Status Geqrf(const MatrixBatch& a, char* tau);
absl::Status HouseholderProduct(const MatrixBatch& reflectors, const char* tau,
                                const MatrixBatch& q);
absl::Status Svd(const MatrixBatch& a, char* s, const MatrixBatch& u, const MatrixBatch& vh,
                 const LinalgErrorSpec& spec);
absl::Status Eigh(const MatrixBatch& a, char* w, bool upper, bool vectors,
                  const LinalgErrorSpec& spec);

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_LAPACK_KERNELS_H_
