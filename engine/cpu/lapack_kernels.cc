#include "engine/cpu/lapack_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/runtime/exec_context.h"
#include "engine/runtime/thread_pool.h"

// LAPACK's Fortran entry points (OpenBLAS exports them). Character arguments carry their hidden
// lengths, as gfortran's calling convention has them.
extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info, size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, size_t);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda,
             const float* tau, float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda,
             const double* tau, double* work, const int* lwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info, size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work,
             const int* lwork, int* iwork, int* info, size_t);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
             double* w, double* work, const int* lwork, int* iwork, const int* liwork, int* info,
             size_t, size_t);
}

namespace tensord::engine::cpu {
namespace {

// float and double overloads of the LAPACK routines used here.
struct Lapack {
  static void getrf(int m, int n, float* a, int* ipiv, int* info) { sgetrf_(&m, &n, a, &m, ipiv, info); }
  static void getrf(int m, int n, double* a, int* ipiv, int* info) { dgetrf_(&m, &n, a, &m, ipiv, info); }
  static void getrs(const char* trans, int n, int nrhs, const float* a, const int* ipiv, float* b,
                    int ldb, int* info) {
    sgetrs_(trans, &n, &nrhs, a, &n, ipiv, b, &ldb, info, 1);
  }
  static void getrs(const char* trans, int n, int nrhs, const double* a, const int* ipiv,
                    double* b, int ldb, int* info) {
    dgetrs_(trans, &n, &nrhs, a, &n, ipiv, b, &ldb, info, 1);
  }
  static void potrf(const char* uplo, int n, float* a, int* info) { spotrf_(uplo, &n, a, &n, info, 1); }
  static void potrf(const char* uplo, int n, double* a, int* info) { dpotrf_(uplo, &n, a, &n, info, 1); }
  static void geqrf(int m, int n, float* a, float* tau, float* work, int lwork, int* info) {
    sgeqrf_(&m, &n, a, &m, tau, work, &lwork, info);
  }
  static void geqrf(int m, int n, double* a, double* tau, double* work, int lwork, int* info) {
    dgeqrf_(&m, &n, a, &m, tau, work, &lwork, info);
  }
  static void orgqr(int m, int n, int k, float* a, const float* tau, float* work, int lwork, int* info) {
    sorgqr_(&m, &n, &k, a, &m, tau, work, &lwork, info);
  }
  static void orgqr(int m, int n, int k, double* a, const double* tau, double* work, int lwork, int* info) {
    dorgqr_(&m, &n, &k, a, &m, tau, work, &lwork, info);
  }
  static void gesdd(const char* jobz, int m, int n, float* a, float* s, float* u, int ldu, float* vt,
                    int ldvt, float* work, int lwork, int* iwork, int* info) {
    sgesdd_(jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
  }
  static void gesdd(const char* jobz, int m, int n, double* a, double* s, double* u, int ldu,
                    double* vt, int ldvt, double* work, int lwork, int* iwork, int* info) {
    dgesdd_(jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
  }
  static void syevd(const char* jobz, const char* uplo, int n, float* a, float* w, float* work,
                    int lwork, int* iwork, int liwork, int* info) {
    ssyevd_(jobz, uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, info, 1, 1);
  }
  static void syevd(const char* jobz, const char* uplo, int n, double* a, double* w, double* work,
                    int lwork, int* iwork, int liwork, int* info) {
    dsyevd_(jobz, uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, info, 1, 1);
  }
};

// LAPACK's workspace query answers a size as a floating value (float32 rounds large sizes:
// a little more is asked for).
template <typename T>
int WorkSize(T query) {
  return std::max(1, static_cast<int>(static_cast<double>(query) * (1 + 1e-6)) + 1);
}

template <typename T>
T* Matrix(const MatrixBatch& m, int64_t b) {
  return reinterpret_cast<T*>(m.data) + b * m.rows * m.cols;
}

// Runs one(b) -> info for every matrix, in parallel pieces; the op fails with the first matrix
// (in batch order) whose info is positive, when spec asks for a check. Stops early on cancel.
template <typename One>
absl::Status ForEachMatrix(int64_t batch, const LinalgErrorSpec* spec, One one) {
  std::vector<int> infos(static_cast<size_t>(batch), 0);
  ParallelFor(0, batch, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1 && !ExecContext::CancelRequested(); ++b) infos[b] = one(b);
  });
  if (spec != nullptr && spec->infos != nullptr) {
    std::copy(infos.begin(), infos.end(), spec->infos);
  }
  if (spec == nullptr || spec->check == LinalgCheck::kNone) return absl::OkStatus();
  for (int64_t b = 0; b < batch; ++b) {
    if (infos[b] > 0 || (infos[b] < 0 && spec->check == LinalgCheck::kSvdNoConvergence)) {
      return LinalgFailure(*spec, b, infos[b]);
    }
  }
  return absl::OkStatus();
}

// Sets every matrix of `m` to the identity's first rows x cols block.
template <typename T>
void SetIdentity(const MatrixBatch& m) {
  for (int64_t b = 0; b < m.batch; ++b) {
    T* p = Matrix<T>(m, b);
    std::fill(p, p + m.rows * m.cols, T(0));
    for (int64_t i = 0; i < std::min(m.rows, m.cols); ++i) p[i * m.rows + i] = T(1);
  }
}

template <typename T>
absl::Status LuFactorT(const MatrixBatch& a, int32_t* pivots, const LinalgErrorSpec& spec) {
  const int64_t k = std::min(a.rows, a.cols);
  if (k == 0) return absl::OkStatus();
  return ForEachMatrix(a.batch, &spec, [&](int64_t b) {
    int info = 0;
    Lapack::getrf(static_cast<int>(a.rows), static_cast<int>(a.cols), Matrix<T>(a, b),
                  pivots + b * k, &info);
    return info;
  });
}

template <typename T>
absl::Status LuSolveT(const MatrixBatch& lu, const int32_t* pivots, bool transpose,
                      const MatrixBatch& x) {
  if (lu.rows == 0 || x.cols == 0) return absl::OkStatus();
  // Right-hand sides are independent: each matrix's columns go in panels to the pool's threads
  // (an inverse's n columns, most of its work, run in parallel though BLAS runs single-threaded).
  const int64_t threads = ParallelismDegree();
  const int64_t panels =
      lu.batch >= threads ? 1 : std::max<int64_t>(1, std::min(threads, x.cols / 32));
  const int64_t width = (x.cols + panels - 1) / panels;
  std::vector<int> infos(static_cast<size_t>(lu.batch * panels), 0);
  ParallelFor(0, lu.batch * panels, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1 && !ExecContext::CancelRequested(); ++t) {
      const int64_t b = t / panels, c0 = (t % panels) * width;
      const int64_t cols = std::min(width, x.cols - c0);
      if (cols <= 0) continue;
      Lapack::getrs(transpose ? "T" : "N", static_cast<int>(lu.rows), static_cast<int>(cols),
                    Matrix<T>(lu, b),
                    pivots + b * lu.rows, Matrix<T>(x, b) + c0 * x.rows,
                    static_cast<int>(x.rows), &infos[t]);
    }
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status CholeskyT(const MatrixBatch& a, bool upper, const LinalgErrorSpec& spec) {
  const int64_t n = a.rows;
  if (n == 0) return absl::OkStatus();
  return ForEachMatrix(a.batch, &spec, [&](int64_t b) {
    T* p = Matrix<T>(a, b);
    int info = 0;
    Lapack::potrf(upper ? "U" : "L", static_cast<int>(n), p, &info);
    // Zero the triangle LAPACK left as it was: column j holds rows 0..j-1 above the diagonal.
    for (int64_t j = 0; j < n; ++j) {
      if (upper) {
        std::fill(p + j * n + j + 1, p + (j + 1) * n, T(0));
      } else {
        std::fill(p + j * n, p + j * n + j, T(0));
      }
    }
    return info;
  });
}

template <typename T>
absl::Status QrT(const MatrixBatch& a, const MatrixBatch& r, const MatrixBatch& q) {
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  if (k == 0) {
    for (int64_t b = 0; b < r.batch; ++b) std::fill(Matrix<T>(r, b), Matrix<T>(r, b) + r.matrix_elements(), T(0));
    if (q.batch > 0) SetIdentity<T>(q);
    return absl::OkStatus();
  }
  return ForEachMatrix(a.batch, nullptr, [&](int64_t b) {
    T* p = Matrix<T>(a, b);
    std::vector<T> tau(static_cast<size_t>(k));
    int info = 0;
    T query = 0;
    Lapack::geqrf(static_cast<int>(m), static_cast<int>(n), p, tau.data(), &query, -1, &info);
    std::vector<T> work(static_cast<size_t>(WorkSize(query)));
    Lapack::geqrf(static_cast<int>(m), static_cast<int>(n), p, tau.data(), work.data(),
                  static_cast<int>(work.size()), &info);
    // R: the upper triangle of the first r.rows rows.
    T* rp = Matrix<T>(r, b);
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < r.rows; ++i) rp[j * r.rows + i] = i <= j ? p[j * m + i] : T(0);
    }
    if (q.batch == 0) return info;
    // Q: the reflectors' columns (orgqr makes columns past k unit vectors before applying them).
    T* qp = Matrix<T>(q, b);
    std::memcpy(qp, p, static_cast<size_t>(m * std::min(n, q.cols)) * sizeof(T));
    Lapack::orgqr(static_cast<int>(m), static_cast<int>(q.cols), static_cast<int>(k), qp,
                  tau.data(), &query, -1, &info);
    work.resize(static_cast<size_t>(WorkSize(query)));
    Lapack::orgqr(static_cast<int>(m), static_cast<int>(q.cols), static_cast<int>(k), qp,
                  tau.data(), work.data(), static_cast<int>(work.size()), &info);
    return info;
  });
}

template <typename T>
absl::Status GeqrfT(const MatrixBatch& a, char* tau_bytes) {
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  if (k == 0) return absl::OkStatus();
  T* tau = reinterpret_cast<T*>(tau_bytes);
  return ForEachMatrix(a.batch, nullptr, [&](int64_t b) {
    int info = 0;
    T query = 0;
    T* p = Matrix<T>(a, b);
    Lapack::geqrf(static_cast<int>(m), static_cast<int>(n), p, tau + b * k, &query, -1, &info);
    std::vector<T> work(static_cast<size_t>(WorkSize(query)));
    Lapack::geqrf(static_cast<int>(m), static_cast<int>(n), p, tau + b * k, work.data(),
                  static_cast<int>(work.size()), &info);
    return info;
  });
}

template <typename T>
absl::Status HouseholderProductT(const MatrixBatch& v, const char* tau_bytes,
                                 const MatrixBatch& q) {
  const int64_t m = q.rows, n = q.cols, k = v.cols;
  if (q.batch == 0 || m == 0 || n == 0) return absl::OkStatus();
  const T* tau = reinterpret_cast<const T*>(tau_bytes);
  return ForEachMatrix(q.batch, nullptr, [&](int64_t b) {
    T* qp = Matrix<T>(q, b);
    // The reflectors' columns first; orgqr makes the columns past k unit vectors itself.
    std::memcpy(qp, Matrix<T>(v, b), static_cast<size_t>(m * k) * sizeof(T));
    int info = 0;
    T query = 0;
    Lapack::orgqr(static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), qp, tau + b * k,
                  &query, -1, &info);
    std::vector<T> work(static_cast<size_t>(WorkSize(query)));
    Lapack::orgqr(static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), qp, tau + b * k,
                  work.data(), static_cast<int>(work.size()), &info);
    return info;
  });
}

template <typename T>
absl::Status SvdT(const MatrixBatch& a, char* s, const MatrixBatch& u, const MatrixBatch& vh,
                  const LinalgErrorSpec& spec) {
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  const bool vectors = u.batch > 0;
  if (k == 0) {
    if (vectors) {
      SetIdentity<T>(u);
      SetIdentity<T>(vh);
    }
    return absl::OkStatus();
  }
  const char* jobz = !vectors ? "N" : (u.cols == m && vh.rows == n ? "A" : "S");
  return ForEachMatrix(a.batch, &spec, [&](int64_t b) {
    T* up = vectors ? Matrix<T>(u, b) : nullptr;
    T* vp = vectors ? Matrix<T>(vh, b) : nullptr;
    T* sp = reinterpret_cast<T*>(s) + b * k;
    // Non-finite matrices never reach gesdd: with an infinity it can loop forever (torch 1.13
    // hangs on such inputs); torch's results otherwise: a NaN is the "non-finite values" error
    // (LAPACK's info -4), an infinity NaN singular values and finite vectors (permutations in
    // torch, the identity's columns here; so pinv of such a matrix is zeros, as torch's).
    T* ap = Matrix<T>(a, b);
    bool nan = false, inf = false;
    for (int64_t i = 0; i < m * n; ++i) {
      nan |= ap[i] != ap[i];
      inf |= std::isinf(ap[i]);
    }
    if (nan) return -4;
    if (inf) {
      constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();
      std::fill(sp, sp + k, kNaN);
      if (vectors) {  // column-major: element (i, i) at i * (rows + 1)
        std::fill(up, up + m * u.cols, T(0));
        std::fill(vp, vp + vh.rows * n, T(0));
        for (int64_t i = 0; i < std::min(m, u.cols); ++i) up[i * (m + 1)] = T(1);
        for (int64_t i = 0; i < std::min(vh.rows, n); ++i) vp[i * (vh.rows + 1)] = T(1);
      }
      return 0;
    }
    T dummy = 0;
    const int ldu = vectors ? static_cast<int>(m) : 1;
    const int ldvt = vectors ? static_cast<int>(vh.rows) : 1;
    std::vector<int> iwork(static_cast<size_t>(8 * k));
    int info = 0;
    T query = 0;
    Lapack::gesdd(jobz, static_cast<int>(m), static_cast<int>(n), ap, sp,
                  up ? up : &dummy, ldu, vp ? vp : &dummy, ldvt, &query, -1, iwork.data(), &info);
    std::vector<T> work(static_cast<size_t>(WorkSize(query)));
    Lapack::gesdd(jobz, static_cast<int>(m), static_cast<int>(n), ap, sp,
                  up ? up : &dummy, ldu, vp ? vp : &dummy, ldvt, work.data(),
                  static_cast<int>(work.size()), iwork.data(), &info);
    return info;
  });
}

template <typename T>
absl::Status EighT(const MatrixBatch& a, char* w, bool upper, bool vectors,
                   const LinalgErrorSpec& spec) {
  const int64_t n = a.rows;
  if (n == 0) return absl::OkStatus();
  const char* jobz = vectors ? "V" : "N";
  const char* uplo = upper ? "U" : "L";
  return ForEachMatrix(a.batch, &spec, [&](int64_t b) {
    T* wp = reinterpret_cast<T*>(w) + b * n;
    int info = 0, iquery = 0;
    T query = 0;
    Lapack::syevd(jobz, uplo, static_cast<int>(n), Matrix<T>(a, b), wp, &query, -1, &iquery, -1,
                  &info);
    std::vector<T> work(static_cast<size_t>(WorkSize(query)));
    std::vector<int> iwork(static_cast<size_t>(std::max(1, iquery)));
    Lapack::syevd(jobz, uplo, static_cast<int>(n), Matrix<T>(a, b), wp, work.data(),
                  static_cast<int>(work.size()), iwork.data(), static_cast<int>(iwork.size()),
                  &info);
    return info;
  });
}

// Calls f.template operator()<T>() with T = float or double for `dtype`.
template <typename F>
absl::Status ByDType(DType dtype, F f) {
  if (dtype == DType::kFloat64) return f(double{});
  return f(float{});
}

}  // namespace

absl::Status LuFactor(const MatrixBatch& a, int32_t* pivots, const LinalgErrorSpec& spec) {
  return ByDType(a.dtype, [&](auto t) { return LuFactorT<decltype(t)>(a, pivots, spec); });
}
absl::Status LuSolve(const MatrixBatch& lu, const int32_t* pivots, bool transpose,
                     const MatrixBatch& b) {
  return ByDType(lu.dtype,
                 [&](auto t) { return LuSolveT<decltype(t)>(lu, pivots, transpose, b); });
}
absl::Status Cholesky(const MatrixBatch& a, bool upper, const LinalgErrorSpec& spec) {
  return ByDType(a.dtype, [&](auto t) { return CholeskyT<decltype(t)>(a, upper, spec); });
}
absl::Status Qr(const MatrixBatch& a, const MatrixBatch& r, const MatrixBatch& q) {
  return ByDType(a.dtype, [&](auto t) { return QrT<decltype(t)>(a, r, q); });
}
absl::Status Geqrf(const MatrixBatch& a, char* tau) {
  return ByDType(a.dtype, [&](auto t) { return GeqrfT<decltype(t)>(a, tau); });
}
absl::Status HouseholderProduct(const MatrixBatch& reflectors, const char* tau,
                                const MatrixBatch& q) {
  return ByDType(q.dtype,
                 [&](auto t) { return HouseholderProductT<decltype(t)>(reflectors, tau, q); });
}
absl::Status Svd(const MatrixBatch& a, char* s, const MatrixBatch& u, const MatrixBatch& vh,
                 const LinalgErrorSpec& spec) {
  return ByDType(a.dtype, [&](auto t) { return SvdT<decltype(t)>(a, s, u, vh, spec); });
}
absl::Status Eigh(const MatrixBatch& a, char* w, bool upper, bool vectors,
                  const LinalgErrorSpec& spec) {
  return ByDType(a.dtype, [&](auto t) { return EighT<decltype(t)>(a, w, upper, vectors, spec); });
}

void LuPermutation(const int32_t* pivots, int64_t batch, int64_t swaps, int64_t rows,
                   int64_t* perm) {
  ParallelFor(0, batch, std::max<int64_t>(1, 4096 / std::max<int64_t>(rows, 1)),
              [&](int64_t b0, int64_t b1) {
                for (int64_t b = b0; b < b1; ++b) {
                  int64_t* p = perm + b * rows;
                  for (int64_t i = 0; i < rows; ++i) p[i] = i;
                  const int32_t* piv = pivots + b * swaps;
                  for (int64_t i = 0; i < swaps; ++i) {
                    const int64_t j = piv[i] - 1;
                    if (j >= 0 && j < rows) std::swap(p[i], p[j]);  // bad ones: see the check
                  }
                }
              });
}

}  // namespace tensord::engine::cpu
