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

template <typename T>
__global__ void FlagNonFiniteKernel(const T* a, int64_t total, int64_t per_matrix, int* flags) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const T x = a[i];
    if (x != x) {
      atomicOr(flags + i / per_matrix, 2);
    } else if (isinf(x)) {
      atomicOr(flags + i / per_matrix, 1);
    }
  }
}

template <typename T>
__global__ void ZeroFlaggedKernel(T* a, int64_t total, int64_t per_matrix, const int* flags) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    if (flags[i / per_matrix] != 0) a[i] = T(0);
  }
}

// Over `span` positions of every matrix: its singular values (k), U's elements, V's elements.
template <typename T>
__global__ void SvdOfNonFiniteKernel(const int* flags, int64_t batch, int64_t span, int64_t k,
                                     T* s, T* u, int64_t u_rows, int64_t u_cols, T* v,
                                     int64_t v_rows, int64_t v_cols, int* infos) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < batch * span;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = i / span, p = i % span;
    const int flag = flags[b];
    if (flag == 0) continue;
    if (flag & 2) {  // a NaN: the op fails, as gesdd's argument check fails it on the CPU
      if (p == 0) infos[b] = -4;
      continue;
    }
    if (p == 0) infos[b] = 0;
    if (p < k) s[b * k + p] = T(NAN);
    if (u != nullptr && p < u_rows * u_cols) {  // column-major: (p % rows, p / rows)
      u[b * u_rows * u_cols + p] = p % u_rows == p / u_rows ? T(1) : T(0);
    }
    if (v != nullptr && p < v_rows * v_cols) {
      v[b * v_rows * v_cols + p] = p % v_rows == p / v_rows ? T(1) : T(0);
    }
  }
}

}  // namespace

cudaError_t LaunchScreenNonFinite(const MatrixBatch& a, int* flags, cudaStream_t stream) {
  const int64_t per_matrix = a.rows * a.cols, total = a.batch * per_matrix;
  if (total == 0) return cudaSuccess;
  const int grid = GridFor(total, kThreads);
  if (a.dtype == DType::kFloat64) {
    double* x = reinterpret_cast<double*>(a.data);
    FlagNonFiniteKernel<<<grid, kThreads, 0, stream>>>(x, total, per_matrix, flags);
    ZeroFlaggedKernel<<<grid, kThreads, 0, stream>>>(x, total, per_matrix, flags);
  } else {
    float* x = reinterpret_cast<float*>(a.data);
    FlagNonFiniteKernel<<<grid, kThreads, 0, stream>>>(x, total, per_matrix, flags);
    ZeroFlaggedKernel<<<grid, kThreads, 0, stream>>>(x, total, per_matrix, flags);
  }
  return cudaGetLastError();
}

cudaError_t LaunchSvdOfNonFinite(const int* flags, const MatrixBatch& a, char* s,
                                 const MatrixBatch& u, const MatrixBatch& v, int* infos,
                                 cudaStream_t stream) {
  const int64_t k = a.rows < a.cols ? a.rows : a.cols;
  if (a.batch == 0 || k == 0) return cudaSuccess;
  const bool vectors = u.batch > 0;
  int64_t span = k;
  if (vectors) {
    span = span > u.rows * u.cols ? span : u.rows * u.cols;
    span = span > v.rows * v.cols ? span : v.rows * v.cols;
  }
  const int grid = GridFor(a.batch * span, kThreads);
  const auto run = [&](auto zero) {
    using T = decltype(zero);
    SvdOfNonFiniteKernel<T><<<grid, kThreads, 0, stream>>>(
        flags, a.batch, span, k, reinterpret_cast<T*>(s),
        vectors ? reinterpret_cast<T*>(u.data) : nullptr, u.rows, u.cols,
        vectors ? reinterpret_cast<T*>(v.data) : nullptr, v.rows, v.cols, infos);
  };
  if (a.dtype == DType::kFloat64) {
    run(double{});
  } else {
    run(float{});
  }
  return cudaGetLastError();
}

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
