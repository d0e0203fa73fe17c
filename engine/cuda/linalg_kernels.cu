#include "engine/cuda/linalg_kernels.h"

#include "engine/cuda/grid.h"

namespace tensord::engine::cuda {
namespace {

constexpr int kThreads = 256;

// One thread: batches of factorizations are small next to the work they report on.
__global__ void CheckInfosKernel(const int* infos, int64_t batch, KernelError* slot) {
  for (int64_t b = 0; b < batch; ++b) {
    if (infos[b] != 0) {  // negative: an argument refused (svd: a NaN in the input)
      ReportKernelError(slot, KernelError::kFactorization, b, infos[b]);
      return;
    }
  }
}

template <typename T>
__global__ void ZeroTriangleKernel(T* a, int64_t total, int64_t rows, int64_t cols,
                                   bool keep_upper) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t in_matrix = i % (rows * cols);
    const int64_t row = in_matrix % rows, col = in_matrix / rows;  // column-major
    if (keep_upper ? row > col : row < col) a[i] = T(0);
  }
}

template <typename T>
__global__ void TakeUpperKernel(const T* a, T* r, int64_t total, int64_t m, int64_t n,
                                int64_t r_rows) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = i / (r_rows * n), in_matrix = i % (r_rows * n);
    const int64_t row = in_matrix % r_rows, col = in_matrix / r_rows;
    r[i] = row <= col ? a[b * m * n + col * m + row] : T(0);
  }
}

// One thread per matrix: the swaps run in order (each may move a row an earlier one moved).
__global__ void LuPermutationKernel(const int32_t* pivots, int64_t batch, int64_t swaps,
                                    int64_t rows, int64_t* perm) {
  for (int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; b < batch;
       b += int64_t{gridDim.x} * blockDim.x) {
    int64_t* p = perm + b * rows;
    for (int64_t i = 0; i < rows; ++i) p[i] = i;
    const int32_t* piv = pivots + b * swaps;
    for (int64_t i = 0; i < swaps; ++i) {
      const int64_t j = piv[i] - 1;
      // The op's pivot check fails it when it retires, after this kernel ran: a bad pivot is
      // skipped, never followed out of the matrix.
      if (j < 0 || j >= rows) continue;
      const int64_t t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
  }
}

}  // namespace

cudaError_t LaunchLuPermutation(const int32_t* pivots, int64_t batch, int64_t swaps, int64_t rows,
                                int64_t* perm, cudaStream_t stream) {
  if (batch == 0 || rows == 0) return cudaSuccess;
  LuPermutationKernel<<<GridFor(batch, kThreads), kThreads, 0, stream>>>(pivots, batch, swaps,
                                                                          rows, perm);
  return cudaGetLastError();
}

cudaError_t LaunchCheckInfos(const int* infos, int64_t batch, KernelError* slot,
                             cudaStream_t stream) {
  if (batch == 0) return cudaSuccess;
  CheckInfosKernel<<<1, 1, 0, stream>>>(infos, batch, slot);
  return cudaGetLastError();
}

cudaError_t LaunchZeroTriangle(const MatrixBatch& a, bool keep_upper, cudaStream_t stream) {
  const int64_t total = a.batch * a.rows * a.cols;
  if (total == 0) return cudaSuccess;
  const int grid = GridFor(total, kThreads);
  if (a.dtype == DType::kFloat64) {
    ZeroTriangleKernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<double*>(a.data), total,
                                                      a.rows, a.cols, keep_upper);
  } else {
    ZeroTriangleKernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<float*>(a.data), total,
                                                      a.rows, a.cols, keep_upper);
  }
  return cudaGetLastError();
}

cudaError_t LaunchTakeUpper(const MatrixBatch& a, const MatrixBatch& r, cudaStream_t stream) {
  const int64_t total = r.batch * r.rows * r.cols;
  if (total == 0) return cudaSuccess;
  const int grid = GridFor(total, kThreads);
  if (a.dtype == DType::kFloat64) {
    TakeUpperKernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const double*>(a.data),
                                                   reinterpret_cast<double*>(r.data), total,
                                                   a.rows, a.cols, r.rows);
  } else {
    TakeUpperKernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const float*>(a.data),
                                                   reinterpret_cast<float*>(r.data), total,
                                                   a.rows, a.cols, r.rows);
  }
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
