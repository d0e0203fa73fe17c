// Factorizations on the GPU through cuSOLVER's dense API, loaded when the first one runs (dlopen
// of the toolkit's libcusolver), so that tensord starts, and runs everything else, where it is
// missing. Each call factors every matrix of a column-major batch (kernels/linalg.h) in place on
// `stream`, one cuSOLVER call per matrix, and leaves LAPACK's info of matrix b in infos[b]
// (device memory); the caller turns a positive info into the op's error on the device
// (linalg_kernels.h), so nothing here waits for the GPU.
#ifndef TENSORD_ENGINE_CUDA_SOLVER_H_
#define TENSORD_ENGINE_CUDA_SOLVER_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "engine/core/device.h"
#include "engine/kernels/linalg.h"

namespace tensord::engine::cuda {

// Device scratch for a call: `bytes` bytes, freed on the stream after the call's work.
using ScratchFn = std::function<absl::StatusOr<void*>(int64_t bytes)>;

struct SolverCall {
  Device device;
  cudaStream_t stream;
  void*& handle;  // the stream's cuSOLVER handle (made here when null)
  ScratchFn scratch;
  int* infos;  // one per matrix, device memory
};

absl::Status SolverLuFactor(const SolverCall& c, const MatrixBatch& a, int32_t* pivots);
// b = A^-1 b, or A^-T b with `transpose` (cuSOLVER's getrs with CUBLAS_OP_T).
absl::Status SolverLuSolve(const SolverCall& c, const MatrixBatch& lu, const int32_t* pivots,
                           bool transpose, const MatrixBatch& b);
absl::Status SolverCholesky(const SolverCall& c, const MatrixBatch& a, bool upper);
// Householder QR: `a` holds R and the reflectors after, `tau` (min(m, n) per matrix, device)
// their scales.
absl::Status SolverQr(const SolverCall& c, const MatrixBatch& a, char* tau);
// q (m x q.cols) = the first q.cols columns of Q, from SolverQr's a and tau.
absl::Status SolverFormQ(const SolverCall& c, const MatrixBatch& a, const char* tau,
                         const MatrixBatch& q);
// Singular values into s (descending) and, where u.batch > 0, U into u and V (not V^T) into v
// (n x v.cols): Jacobi SVD (gesvdj), any m and n.
absl::Status SolverSvd(const SolverCall& c, const MatrixBatch& a, char* s, const MatrixBatch& u,
                       const MatrixBatch& v);
absl::Status SolverEigh(const SolverCall& c, const MatrixBatch& a, char* w, bool upper,
                        bool vectors);

// Destroys a handle a Solver call created (null: nothing).
void DestroySolverHandle(void* handle);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_SOLVER_H_
