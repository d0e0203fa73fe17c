// Small CUDA kernels around the cuSOLVER factorizations (solver.h): the check that turns a
// positive info into the op's error (through its error slot: no host wait), and the triangles
// torch's factors keep.
#ifndef TENSORD_ENGINE_CUDA_LINALG_KERNELS_H_
#define TENSORD_ENGINE_CUDA_LINALG_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/kernels/kernel_error.h"
#include "engine/kernels/linalg.h"

namespace tensord::engine::cuda {

// Reports the first matrix (in batch order) whose info is not zero into `slot`
// (KernelError::kFactorization: a = its index, b = the info).
cudaError_t LaunchCheckInfos(const int* infos, int64_t batch, KernelError* slot,
                             cudaStream_t stream);
// Zeroes the triangle strictly below (keep_upper) or above the diagonal of every matrix.
cudaError_t LaunchZeroTriangle(const MatrixBatch& a, bool keep_upper, cudaStream_t stream);
// perm (int64, rows per matrix) = the row permutation of every matrix's pivots (int32, swaps
// per matrix; one outside [1, rows] is skipped: the op's pivot check fails it): Backend::LuPermutation.
cudaError_t LaunchLuPermutation(const int32_t* pivots, int64_t batch, int64_t swaps, int64_t rows,
                                int64_t* perm, cudaStream_t stream);
// r (r.rows x n) = the upper triangle of the first r.rows rows of a (m x n), zeros below.
cudaError_t LaunchTakeUpper(const MatrixBatch& a, const MatrixBatch& r, cudaStream_t stream);

// The SVD of a matrix with a NaN or an infinity, as the CPU backend answers it (LAPACK's gesdd
// can loop forever on an infinity, so neither backend hands one to the solver). Before the
// solver: flags[b] (zeroed by the caller) = 2 where matrix b holds a NaN, else 1 where it holds
// an infinity, and such a matrix is zeroed, so the solver works on zeros. After it: a NaN's
// matrix gets info -4 (the CPU's "non-finite values" LinAlgError), an infinity's NaN singular
// values, identity columns in U (m x u.cols) and V (n x v.cols, where given) and info 0.
cudaError_t LaunchScreenNonFinite(const MatrixBatch& a, int* flags, cudaStream_t stream);
cudaError_t LaunchSvdOfNonFinite(const int* flags, const MatrixBatch& a, char* s,
                                 const MatrixBatch& u, const MatrixBatch& v, int* infos,
                                 cudaStream_t stream);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_LINALG_KERNELS_H_
