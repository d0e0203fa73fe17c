#include "engine/cpu/linalg_kernels.h"

#include <cblas.h>  // OpenBLAS's: openblas_set_num_threads too

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {
namespace {

// One matrix operand: element [i][j] at data + i * rs + j * cs (elements).
struct Mat {
  const char* data;
  int64_t rs, cs;
};

// C[n x m] (contiguous, row stride ldc) = alpha * A[n x k] B[k x m] + beta * C.
template <typename T>
void GemmLoop(int64_t n, int64_t m, int64_t k, Mat a, Mat b, T* c, int64_t ldc, double alpha,
              double beta) {
  using Acc = std::conditional_t<std::is_floating_point_v<Calc<T>>, double, int64_t>;
  const T* A = reinterpret_cast<const T*>(a.data);
  const T* B = reinterpret_cast<const T*>(b.data);
  std::vector<Acc> row(static_cast<size_t>(m));
  for (int64_t i = 0; i < n; ++i) {
    std::fill(row.begin(), row.end(), Acc(0));
    for (int64_t p = 0; p < k; ++p) {
      const Acc av = static_cast<Acc>(static_cast<Calc<T>>(A[i * a.rs + p * a.cs]));
      const T* brow = B + p * b.rs;
      for (int64_t j = 0; j < m; ++j) {
        const Acc bv = static_cast<Acc>(static_cast<Calc<T>>(brow[j * b.cs]));
        if constexpr (std::is_floating_point_v<Acc>) {
          row[j] += av * bv;
        } else {  // integer products wrap around as torch's do
          row[j] = static_cast<Acc>(static_cast<uint64_t>(row[j]) +
                                    static_cast<uint64_t>(av) * static_cast<uint64_t>(bv));
        }
      }
    }
    for (int64_t j = 0; j < m; ++j) {
      Acc v = row[j];
      if constexpr (std::is_floating_point_v<Acc>) {
        v = alpha * v;
        if (beta != 0) v += beta * static_cast<Acc>(static_cast<Calc<T>>(c[i * ldc + j]));
      } else {
        v = static_cast<Acc>(static_cast<uint64_t>(static_cast<Acc>(alpha)) *
                             static_cast<uint64_t>(v));
        if (beta != 0) {
          v = static_cast<Acc>(static_cast<uint64_t>(v) +
                               static_cast<uint64_t>(static_cast<Acc>(beta)) *
                                   static_cast<uint64_t>(static_cast<Acc>(c[i * ldc + j])));
        }
      }
      c[i * ldc + j] = Convert<T>(v);
    }
  }
}

// BLAS wants each operand with unit stride along one dim and a leading dimension at least the
// other's extent.
bool BlasLayout(const Mat& x, int64_t rows, int64_t cols, CBLAS_TRANSPOSE* trans, int64_t* ld) {
  if (x.cs == 1 && (rows == 1 || x.rs >= std::max<int64_t>(1, cols))) {
    *trans = CblasNoTrans;
    *ld = std::max<int64_t>(rows == 1 ? cols : x.rs, std::max<int64_t>(1, cols));
    return true;
  }
  if (x.rs == 1 && (cols == 1 || x.cs >= std::max<int64_t>(1, rows))) {
    *trans = CblasTrans;
    *ld = std::max<int64_t>(cols == 1 ? rows : x.cs, std::max<int64_t>(1, rows));
    return true;
  }
  return false;
}

// C = alpha * A B + beta * C for one matrix; `c` is [n x m] with rows `ldc` elements apart.
void Gemm(DType dtype, int64_t n, int64_t m, int64_t k, Mat a, Mat b, char* c, int64_t ldc,
          double alpha, double beta) {
  if (n == 0 || m == 0) return;
  if (dtype == DType::kFloat32 || dtype == DType::kFloat64) {
    CBLAS_TRANSPOSE ta, tb;
    int64_t lda, ldb;
    // BLAS takes 32-bit sizes: larger problems (possible only through expanded or strided
    // views) take the loop.
    constexpr int64_t kBlasMax = std::numeric_limits<int32_t>::max();
    if (k > 0 && BlasLayout(a, n, k, &ta, &lda) && BlasLayout(b, k, m, &tb, &ldb) &&
        std::max({n, m, k, lda, ldb, ldc}) <= kBlasMax) {
      if (dtype == DType::kFloat32) {
        cblas_sgemm(CblasRowMajor, ta, tb, n, m, k, static_cast<float>(alpha),
                    reinterpret_cast<const float*>(a.data), lda,
                    reinterpret_cast<const float*>(b.data), ldb, static_cast<float>(beta),
                    reinterpret_cast<float*>(c), ldc);
      } else {
        cblas_dgemm(CblasRowMajor, ta, tb, n, m, k, alpha, reinterpret_cast<const double*>(a.data),
                    lda, reinterpret_cast<const double*>(b.data), ldb, beta,
                    reinterpret_cast<double*>(c), ldc);
      }
      return;
    }
  }
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    GemmLoop<T>(n, m, k, a, b, reinterpret_cast<T*>(c), ldc, alpha, beta);
  });
}

// About this many multiply-adds per piece between yields (milliseconds of BLAS).
constexpr int64_t kPieceMacs = int64_t{1} << 27;

// One product in pieces of bounded work, yielding between pieces. BLAS products are cut along
// k (C = A[:, k0:k1] B[k0:k1, :] accumulated, beta = 1 after the first piece): each operand is
// still packed once in all, as BLAS's own k-blocking does. Pieces of k >= 512 (float32) and
// 256 (float64) kept a 4096^2 sgemm at its unsplit speed here (k = 256 cost float32 ~10%, row
// panels of 64 cost ~25%), and a 3072^2 dgemm piece at ~100 ms on 2 cores. Loop products are
// cut into row panels.
// `whole_nm`: n * m of the whole product this one is a panel of, so that the k pieces (whose
// partial sums round into C) are the same for every panel, thread count and batch.
void GemmInPieces(DType dtype, int64_t n, int64_t m, int64_t k, Mat a, Mat b, char* c,
                  int64_t ldc, double alpha, double beta, int64_t whole_nm) {
  const int64_t w = ItemSize(dtype);
  const int64_t nm = std::max<int64_t>(1, whole_nm);
  if ((dtype == DType::kFloat32 || dtype == DType::kFloat64) && k > 0) {
    const int64_t min_k = dtype == DType::kFloat32 ? 512 : 256;
    const int64_t kb = std::max(min_k, kPieceMacs / nm);
    for (int64_t k0 = 0; k0 < k; k0 += kb) {
      const int64_t nk = std::min(kb, k - k0);
      Mat ak{a.data + k0 * a.cs * w, a.rs, a.cs};
      Mat bk{b.data + k0 * b.rs * w, b.rs, b.cs};
      Gemm(dtype, n, m, nk, ak, bk, c, ldc, alpha, k0 == 0 ? beta : 1.0);
      if (k0 + nk < k) Executor::YieldToWaiting();
      if (ExecContext::CancelRequested()) return;
    }
    return;
  }
  const int64_t row_macs = std::max<int64_t>(1, m * std::max<int64_t>(k, 1));
  const int64_t rows = std::max<int64_t>(1, kPieceMacs / row_macs);
  for (int64_t r = 0; r < n; r += rows) {
    const int64_t nr = std::min(rows, n - r);
    Mat ar{a.data + r * a.rs * w, a.rs, a.cs};
    Gemm(dtype, nr, m, k, ar, b, c + r * ldc * w, ldc, alpha, beta);
    if (r + nr < n) Executor::YieldToWaiting();
    if (ExecContext::CancelRequested()) return;
  }
}

}  // namespace

void Matmul(const MatmulCall& call) {
  const int64_t nb = static_cast<int64_t>(call.batch.size());
  int64_t count = 1;
  for (int64_t s : call.batch) count *= s;
  const DType dtype = call.a.dtype;
  const int64_t w = ItemSize(dtype);
  const int64_t n = call.n, k = call.k, m = call.m;
  if (count == 0 || n == 0 || m == 0) return;
  // Every product is cut into panels of C's rows (or columns, when C is wider than tall) so that
  // the pool's threads share a batch of small products or one large one; BLAS runs each panel
  // on one thread (UseOneBlasThread), so that its threads never nest inside the pool's.
  const bool by_rows = n >= m;
  const int64_t extent = by_rows ? n : m;
  const int64_t threads = ParallelismDegree();
  constexpr int64_t kMinPanel = 64;
  const int64_t per_product =
      count >= threads ? 1
                       : std::max<int64_t>(1, std::min((threads + count - 1) / count,
                                                      extent / kMinPanel));
  int64_t panel = (extent + per_product - 1) / per_product;
  if (!by_rows) panel = (panel + 15) / 16 * 16;  // column panels apart by whole cache lines
  const auto piece = [&](int64_t task) {
    const int64_t bi = task / per_product, p0 = (task % per_product) * panel;
    const int64_t len = std::min(panel, extent - p0);
    if (len <= 0) return;
    int64_t rest = bi, ao = 0, bo = 0;
    for (int64_t d = nb - 1; d >= 0; --d) {
      const int64_t idx = rest % call.batch[d];
      rest /= call.batch[d];
      ao += idx * call.a.strides[d];
      bo += idx * call.b.strides[d];
    }
    Mat ma{call.a.data + ao * w, call.a.strides[nb], call.a.strides[nb + 1]};
    Mat mb{call.b.data + bo * w, call.b.strides[nb], call.b.strides[nb + 1]};
    char* c = call.out + bi * n * m * w;
    if (by_rows) {
      ma.data += p0 * ma.rs * w;
      GemmInPieces(dtype, len, m, k, ma, mb, c + p0 * m * w, m, call.alpha, call.beta, n * m);
    } else {
      mb.data += p0 * mb.cs * w;
      GemmInPieces(dtype, n, len, k, ma, mb, c + p0 * w, m, call.alpha, call.beta, n * m);
    }
  };
  const int64_t tasks = count * per_product;
  if (tasks == 1) {
    piece(0);
    return;
  }
  ParallelFor(0, tasks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) piece(t);
  });
}

void UseOneBlasThread() { openblas_set_num_threads(1); }

}  // namespace tensord::engine::cpu
