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

// Columns [q0, q1) (output positions, row-major) of the im2col matrix of one image's group of
// channels `image`: row (c, a, i, j) holds what tap (a, i, j) of channel c meets at each
// position, 0 in the padding. Elements are copied as bits (U: an unsigned type of the element's
// size).
template <typename U>
void Im2ColTile(const ConvCall& c, const U* image, int64_t q0, int64_t q1, U* cols) {
  const int64_t cg = c.channels / c.groups, kd = c.kernel[0], kh = c.kernel[1];
  const int64_t kw = c.kernel[2], oh = c.out_size[1], ow = c.out_size[2], len = q1 - q0;
  const int64_t depth = c.size[0], height = c.size[1], width = c.size[2];
  const int64_t sz = c.stride[0], sy = c.stride[1], sx = c.stride[2];
  for (int64_t ch = 0; ch < cg; ++ch) {
    const U* volume = image + ch * depth * height * width;
    for (int64_t a = 0; a < kd; ++a) {
      const int64_t dz = a * c.dilation[0] - c.padding[0];
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t dy = i * c.dilation[1] - c.padding[1];
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t dx = j * c.dilation[2] - c.padding[2];
          // The output columns x whose input column x * sx + dx lies in [0, width).
          const int64_t first = dx >= 0 ? 0 : (-dx - 1) / sx + 1;  // no overflow for any sx
          const int64_t end = width - dx <= 0 ? 0 : (width - dx - 1) / sx + 1;
          U* row = cols + (((ch * kd + a) * kh + i) * kw + j) * len;
          for (int64_t q = q0; q < q1;) {
            const int64_t line = q / ow, x0 = q - line * ow, x1 = std::min(ow, x0 + (q1 - q));
            U* dst = row + (q - q0) - x0;  // dst[x]: output column x of this row
            const int64_t iz = line / oh * sz + dz, iy = line % oh * sy + dy;
            const int64_t lo = std::clamp(first, x0, x1), hi = std::clamp(end, lo, x1);
            if (iz < 0 || iz >= depth || iy < 0 || iy >= height) {
              std::fill(dst + x0, dst + x1, U{0});
            } else {
              const U* src = volume + (iz * height + iy) * width + dx;
              std::fill(dst + x0, dst + lo, U{0});
              if (sx == 1) {
                std::copy(src + lo, src + hi, dst + lo);
              } else {
                for (int64_t x = lo; x < hi; ++x) dst[x] = src[x * sx];
              }
              std::fill(dst + hi, dst + x1, U{0});
            }
            q += x1 - x0;
          }
        }
      }
    }
  }
}

// Bytes of im2col matrix per tile: a tile and the weights stay in a core's L2 while the GEMM
// reads them.
constexpr int64_t kConvTileBytes = 512 << 10;

}  // namespace

void Conv(const ConvCall& c) {
  const int64_t w = ItemSize(c.dtype);
  const int64_t cg = c.channels / c.groups, og = c.out_channels / c.groups;
  const int64_t k = cg * c.kernel[0] * c.kernel[1] * c.kernel[2];
  const int64_t pixels = c.out_size[0] * c.out_size[1] * c.out_size[2];
  if (c.batch == 0 || og == 0 || pixels == 0) return;
  bool direct = true;  // a 1x1(x1) convolution without stride or padding: the image is im2col
  for (int d = 0; d < 3; ++d) {
    direct = direct && c.kernel[d] == 1 && c.stride[d] == 1 && c.padding[d] == 0;
  }
  // Columns per tile: a multiple of 16 that fills kConvTileBytes, or fewer when one column (a
  // weight row's bytes) is that large already, so that a tile never outgrows the weights.
  const int64_t fit = kConvTileBytes / std::max<int64_t>(1, k * w);
  const int64_t tile =
      direct ? pixels : std::min(pixels, fit >= 16 ? fit / 16 * 16 : std::max<int64_t>(1, fit));
  const int64_t tiles = (pixels - 1) / tile + 1;
  const int64_t plane = c.size[0] * c.size[1] * c.size[2];
  ParallelFor(0, c.batch * c.groups * tiles, 1, [&](int64_t t0, int64_t t1) {
    std::vector<char> cols(direct ? 0 : static_cast<size_t>(k * tile * w));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / (c.groups * tiles), g = t / tiles % c.groups;
      const int64_t q0 = t % tiles * tile, len = std::min(tile, pixels - q0);
      const char* image = c.input + (b * c.channels + g * cg) * plane * w;
      Mat weights{c.weight + g * og * k * w, k, 1};
      Mat columns{image + q0 * w, pixels, 1};
      if (!direct) {
        columns = Mat{cols.data(), len, 1};
        const auto build = [&](auto u) {
          using U = decltype(u);
          Im2ColTile<U>(c, reinterpret_cast<const U*>(image), q0, q0 + len,
                        reinterpret_cast<U*>(cols.data()));
        };
        switch (w) {
          case 1: build(uint8_t{}); break;
          case 2: build(uint16_t{}); break;
          case 4: build(uint32_t{}); break;
          default: build(uint64_t{}); break;
        }
      }
      char* out = c.out + ((b * c.out_channels + g * og) * pixels + q0) * w;
      Gemm(c.dtype, og, len, k, weights, columns, out, pixels, 1.0, 0.0);
      if (c.bias != nullptr) {
        DispatchDType(c.dtype, [&](auto e) {
          using T = decltype(e);
          const T* bias = reinterpret_cast<const T*>(c.bias) + g * og;
          for (int64_t o = 0; o < og; ++o) {
            T* row = reinterpret_cast<T*>(out) + o * pixels;
            const Calc<T> add = static_cast<Calc<T>>(bias[o]);
            for (int64_t q = 0; q < len; ++q) {
              row[q] = Convert<T>(static_cast<Calc<T>>(static_cast<Calc<T>>(row[q]) + add));
            }
          }
        });
      }
      if (ExecContext::CancelRequested()) return;
    }
  });
}

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
