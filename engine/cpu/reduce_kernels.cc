// Reductions: one driver for every reduce op, with a row form (each output reduces a run of
// elements; split across threads when there are few outputs) and a column form (blocks of
// neighbouring outputs advance together when the kept dim is the one contiguous in memory).
#include "engine/cpu/reduce_kernels.h"

#include <emmintrin.h>
#include <immintrin.h>
#include <xmmintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/kernels/convert.h"
#include "engine/kernels/reduce_functors.h"
#include "engine/cpu/map.h"
#include "engine/cpu/vec_math.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {
namespace {


// float32 runs: 32 float lanes, lane j adding the 8 elements j, j + 32, …, j + 224 of each
// block of 256 in order, in float, then into 32 float64 lanes, summed in lane order at the end.
// Each float partial holds only 8 elements: a float partial of thousands loses digits (4,000
// times 0.1 summed to 400.0009 where torch's cascade gives 400.00003 and the exact sum is
// 400.000006). The loads run in address order, 128 bytes a step, so that the loop runs at the
// memory's speed: 47-50 GB/s from cache on one core here, where 16 lanes of 16-element trees
// (each tree reading 16 cache lines at once) ran at 15-20. SSE on every x86-64 CPU (8
// registers), AVX2 where the CPU has it (4): the same lanes, the same order, the same bits.
inline double SumF32Sse(const float* x, int64_t n) {
  __m128d d[16];
  for (__m128d& v : d) v = _mm_setzero_pd();
  int64_t i = 0;
  constexpr int64_t kBlock = 256;
  for (; i + kBlock <= n; i += kBlock) {
    const float* p = x + i;
    __m128 a[8];
    for (int r = 0; r < 8; ++r) a[r] = _mm_loadu_ps(p + 4 * r);
    for (int k = 1; k < 8; ++k) {
      for (int r = 0; r < 8; ++r) a[r] = _mm_add_ps(a[r], _mm_loadu_ps(p + 32 * k + 4 * r));
    }
    for (int r = 0; r < 8; ++r) {
      d[2 * r] = _mm_add_pd(d[2 * r], _mm_cvtps_pd(a[r]));
      d[2 * r + 1] = _mm_add_pd(d[2 * r + 1], _mm_cvtps_pd(_mm_movehl_ps(a[r], a[r])));
    }
  }
  alignas(16) double lanes[32];
  for (int r = 0; r < 16; ++r) _mm_store_pd(lanes + 2 * r, d[r]);
  double total = 0;
  for (double v : lanes) total += v;
  for (; i < n; ++i) total += x[i];
  return total;
}

__attribute__((target("avx2"))) double SumF32Avx2(const float* x, int64_t n) {
  __m256d d[8];
  for (__m256d& v : d) v = _mm256_setzero_pd();
  int64_t i = 0;
  constexpr int64_t kBlock = 256;
  for (; i + kBlock <= n; i += kBlock) {
    const float* p = x + i;
    __m256 a[4];
    for (int r = 0; r < 4; ++r) a[r] = _mm256_loadu_ps(p + 8 * r);
    for (int k = 1; k < 8; ++k) {
      for (int r = 0; r < 4; ++r) a[r] = _mm256_add_ps(a[r], _mm256_loadu_ps(p + 32 * k + 8 * r));
    }
    for (int r = 0; r < 4; ++r) {
      d[2 * r] = _mm256_add_pd(d[2 * r], _mm256_cvtps_pd(_mm256_castps256_ps128(a[r])));
      d[2 * r + 1] = _mm256_add_pd(d[2 * r + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(a[r], 1)));
    }
  }
  alignas(32) double lanes[32];
  for (int r = 0; r < 8; ++r) _mm256_store_pd(lanes + 4 * r, d[r]);
  double total = 0;
  for (double v : lanes) total += v;
  for (; i < n; ++i) total += x[i];
  return total;
}

// Column sums over `rows` rows `stride` floats apart: acc[j] += float(x0[j] + … + x7[j]) for
// each group of kColumnRows rows, added in float in row order, then into the float64
// accumulator; the last rows (fewer than a group) are added into acc one at a time. Each
// column is its own sum, so the vector width changes no bits: SSE and AVX2 give the same.
inline void AddRowsF32Tail(const float* x, int64_t stride, int64_t rows, int64_t j, int64_t n,
                           double* acc) {
  const int64_t grouped = rows / kColumnRows * kColumnRows;
  for (int64_t g = 0; g < grouped; g += kColumnRows) {
    const float* p = x + g * stride;
    for (int64_t c = j; c < n; ++c) {
      float s = p[c];
      for (int k = 1; k < kColumnRows; ++k) s += p[k * stride + c];
      acc[c] += static_cast<double>(s);
    }
  }
  for (int64_t r = grouped; r < rows; ++r) {
    for (int64_t c = 0; c < n; ++c) acc[c] += static_cast<double>(x[r * stride + c]);
  }
}

inline void AddRowsF32Sse(const float* x, int64_t stride, int64_t rows, int64_t n,
                          double* acc) {
  const int64_t n4 = n / 4 * 4;
  for (int64_t g = 0; g + kColumnRows <= rows; g += kColumnRows) {
    const float* p = x + g * stride;
    for (int64_t j = 0; j < n4; j += 4) {
      __m128 s = _mm_loadu_ps(p + j);
      for (int k = 1; k < kColumnRows; ++k) s = _mm_add_ps(s, _mm_loadu_ps(p + k * stride + j));
      _mm_storeu_pd(acc + j, _mm_add_pd(_mm_loadu_pd(acc + j), _mm_cvtps_pd(s)));
      _mm_storeu_pd(acc + j + 2,
                    _mm_add_pd(_mm_loadu_pd(acc + j + 2), _mm_cvtps_pd(_mm_movehl_ps(s, s))));
    }
  }
  AddRowsF32Tail(x, stride, rows, n4, n, acc);
}

__attribute__((target("avx2"))) void AddRowsF32Avx2(const float* x, int64_t stride,
                                                     int64_t rows, int64_t n, double* acc) {
  const int64_t n8 = n / 8 * 8;
  for (int64_t g = 0; g + kColumnRows <= rows; g += kColumnRows) {
    const float* p = x + g * stride;
    for (int64_t j = 0; j < n8; j += 8) {
      __m256 s = _mm256_loadu_ps(p + j);
      for (int k = 1; k < kColumnRows; ++k) {
        s = _mm256_add_ps(s, _mm256_loadu_ps(p + k * stride + j));
      }
      _mm256_storeu_pd(acc + j, _mm256_add_pd(_mm256_loadu_pd(acc + j),
                                              _mm256_cvtps_pd(_mm256_castps256_ps128(s))));
      _mm256_storeu_pd(acc + j + 4,
                       _mm256_add_pd(_mm256_loadu_pd(acc + j + 4),
                                     _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1))));
    }
  }
  AddRowsF32Tail(x, stride, rows, n8, n, acc);
}

}  // namespace

double SumF32(const float* x, int64_t n, bool allow_avx2) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2 && allow_avx2 ? SumF32Avx2(x, n) : SumF32Sse(x, n);
}

void AddRowsF32(const float* x, int64_t stride, int64_t rows, int64_t n, double* acc,
                bool allow_avx2) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2 && allow_avx2) {
    AddRowsF32Avx2(x, stride, rows, n, acc);
  } else {
    AddRowsF32Sse(x, stride, rows, n, acc);
  }
}

namespace {

// The largest (kMax) or smallest float32 of x[0, n) with n >= 16, and whether any is NaN.
template <bool kMax>
inline float ExtremumF32(const float* x, int64_t n, bool* nan) {
  __m128 m0 = _mm_loadu_ps(x), m1 = _mm_loadu_ps(x + 4), m2 = _mm_loadu_ps(x + 8),
         m3 = _mm_loadu_ps(x + 12);
  __m128 bad = _mm_or_ps(_mm_or_ps(_mm_cmpunord_ps(m0, m0), _mm_cmpunord_ps(m1, m1)),
                         _mm_or_ps(_mm_cmpunord_ps(m2, m2), _mm_cmpunord_ps(m3, m3)));
  int64_t i = 16;
  for (; i + 16 <= n; i += 16) {
    const __m128 v0 = _mm_loadu_ps(x + i), v1 = _mm_loadu_ps(x + i + 4);
    const __m128 v2 = _mm_loadu_ps(x + i + 8), v3 = _mm_loadu_ps(x + i + 12);
    bad = _mm_or_ps(bad, _mm_or_ps(_mm_or_ps(_mm_cmpunord_ps(v0, v0), _mm_cmpunord_ps(v1, v1)),
                                   _mm_or_ps(_mm_cmpunord_ps(v2, v2), _mm_cmpunord_ps(v3, v3))));
    if constexpr (kMax) {
      m0 = _mm_max_ps(m0, v0), m1 = _mm_max_ps(m1, v1), m2 = _mm_max_ps(m2, v2), m3 = _mm_max_ps(m3, v3);
    } else {
      m0 = _mm_min_ps(m0, v0), m1 = _mm_min_ps(m1, v1), m2 = _mm_min_ps(m2, v2), m3 = _mm_min_ps(m3, v3);
    }
  }
  alignas(16) float lanes[16];
  _mm_store_ps(lanes, m0);
  _mm_store_ps(lanes + 4, m1);
  _mm_store_ps(lanes + 8, m2);
  _mm_store_ps(lanes + 12, m3);
  *nan = _mm_movemask_ps(bad) != 0;
  float best = lanes[0];
  for (float v : lanes) best = kMax ? (v > best ? v : best) : (v < best ? v : best);
  for (; i < n; ++i) {
    *nan |= x[i] != x[i];
    best = kMax ? (x[i] > best ? x[i] : best) : (x[i] < best ? x[i] : best);
  }
  return best;
}

// ---- The shared functors (kernels/reduce_functors.h), with contiguous fast paths ----------
// Run(acc, x, n, base) folds a contiguous run x[0, n) at positions base…; kHasRun says whether
// a functor has one (else the driver steps element by element).

template <typename T>
struct SumF : SumOp<T> {
  using Acc = typename SumOp<T>::Acc;
  static constexpr bool kHasRun =
      std::is_same_v<T, float> || std::is_same_v<T, double> || kIsInt<T>;
  Acc Run(Acc a, const T* x, int64_t n, int64_t /*base*/) const {
    if constexpr (std::is_same_v<T, float>) return a + SumF32(x, n);
    if constexpr (kIsInt<T>) {
      // Eight lanes of two's-complement sums (wrapping, as WrapAdd): any order gives the same
      // int64, so the lanes change nothing but the speed.
      constexpr int kLanes = 8;
      uint64_t lanes[kLanes] = {};
      int64_t i = 0;
      for (; i + kLanes <= n; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
          lanes[j] += static_cast<uint64_t>(static_cast<int64_t>(x[i + j]));
        }
      }
      uint64_t total = static_cast<uint64_t>(a);
      for (int j = 0; j < kLanes; ++j) total += lanes[j];
      for (; i < n; ++i) total += static_cast<uint64_t>(static_cast<int64_t>(x[i]));
      return static_cast<Acc>(total);
    }
    // Blocked partial sums the compiler vectorises.
    constexpr int kLanes = 16;
    int64_t i = 0;
    while (n - i >= kLanes) {
      T lanes[kLanes] = {};
      const int64_t end = i + std::min<int64_t>((n - i) / kLanes * kLanes, 4096);
      for (; i < end; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) lanes[j] += x[i + j];
      }
      double s = 0;
      for (int j = 0; j < kLanes; ++j) s += lanes[j];
      a += s;
    }
    for (; i < n; ++i) a += x[i];
    return a;
  }
};

// amax/amin: vectorised extremum of a run.
template <typename T, bool kMax>
struct ExtremumF : ExtremumOp<T, kMax> {
  using Base = ExtremumOp<T, kMax>;
  using Acc = typename Base::Acc;
  using C = typename Base::C;
  static constexpr bool kHasRun =
      std::is_same_v<T, float> || std::is_same_v<T, double> || kIsInt<T>;
  Acc Run(Acc a, const T* x, int64_t n, int64_t /*base*/) const {
    if constexpr (std::is_same_v<T, float>) {
      if (n >= 16) {
        bool nan = false;
        const float v = ExtremumF32<kMax>(x, n, &nan);
        return this->Combine(a, Acc{v, nan});
      }
    }
    constexpr int kLanes = 64 / sizeof(T);
    int64_t i = 0;
    if (n >= kLanes) {
      C lanes[kLanes];
      int32_t nan[kLanes];
      for (int j = 0; j < kLanes; ++j) lanes[j] = a.v, nan[j] = 0;
      for (; i + kLanes <= n; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
          const C v = x[i + j];
          nan[j] |= v != v;
          lanes[j] = kMax ? (v > lanes[j] ? v : lanes[j]) : (v < lanes[j] ? v : lanes[j]);
        }
      }
      for (int j = 0; j < kLanes; ++j) a = this->Combine(a, Acc{lanes[j], nan[j] != 0});
    }
    for (; i < n; ++i) a = this->Step(a, x[i], 0);
    return a;
  }
};

// argmax/argmin of a run: the extreme value first (vectorised), then its first position.
template <typename T, bool kMax>
struct ArgF : ArgOp<T, kMax> {
  using Base = ArgOp<T, kMax>;
  using Acc = typename Base::Acc;
  using C = typename Base::C;
  static constexpr bool kHasRun = std::is_same_v<T, float> || std::is_same_v<T, double>;
  Acc Run(Acc a, const T* x, int64_t n, int64_t base) const {
    if (n == 0) return a;
    const ExtremumF<T, kMax> e;
    const auto best = e.Run(e.Init(), x, n, 0);
    int64_t i = 0;
    if (best.nan) {
      while (x[i] == x[i]) ++i;
    } else {
      while (x[i] != best.v) ++i;
    }
    return this->Combine(a, Acc{static_cast<C>(x[i]), base + i});
  }
};

// The functors without a fast path.
// var/std: a contiguous run is folded in pieces that stay in L1, each by two passes (its mean,
// then its squared deviations) in lanes the compiler vectorizes, merged with Chan's formula:
// Welford's division per element is what makes the stepped form slow.
template <typename T>
struct VarF : VarOp<T> {
  using Acc = typename VarOp<T>::Acc;
  static constexpr bool kHasRun = std::is_same_v<T, float> || std::is_same_v<T, double>;
  Acc Run(Acc a, const T* x, int64_t n, int64_t /*base*/) const {
    constexpr int kLanes = 8;
    constexpr int64_t kPiece = 4096;
    for (int64_t p0 = 0; p0 < n; p0 += kPiece) {
      const int64_t m = std::min(kPiece, n - p0);
      const T* y = x + p0;
      double sums[kLanes] = {};
      int64_t i = 0;
      for (; i + kLanes <= m; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) sums[j] += static_cast<double>(y[i + j]);
      }
      double s = 0;
      for (double l : sums) s += l;
      for (; i < m; ++i) s += static_cast<double>(y[i]);
      const double mean = s / static_cast<double>(m);
      double squares[kLanes] = {};
      for (i = 0; i + kLanes <= m; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
          const double d = static_cast<double>(y[i + j]) - mean;
          squares[j] += d * d;
        }
      }
      double q = 0;
      for (double l : squares) q += l;
      for (; i < m; ++i) {
        const double d = static_cast<double>(y[i]) - mean;
        q += d * d;
      }
      a = this->Combine(a, Acc{static_cast<double>(m), mean, q});
    }
    return a;
  }
};

template <typename Op>
struct Stepped : Op {
  static constexpr bool kHasRun = false;
  template <typename Acc, typename X>
  Acc Run(Acc a, const X*, int64_t, int64_t) const {
    return a;
  }
};

// ---- The driver ----------------------------------------------------------------------------

template <typename T, typename F>
class Reducer {
 public:
  using Acc = typename F::Acc;

  Reducer(const ReduceGeometry& g, const StridedRef& in, const F& f) : g_(g), f_(f) {
    base_ = in.data;
    m_ = 1;
    for (int64_t s : g.kept_sizes) m_ *= s;
    r_ = 1;
    for (int64_t s : g.red_sizes) r_ *= s;
  }

  void Run(char* out, DType out_dtype, int64_t* idx) {
    if (m_ == 0) return;
    const int nk = static_cast<int>(g_.kept_sizes.size());
    const int nr = static_cast<int>(g_.red_sizes.size());
    if (nk > 0 && nr > 0 && g_.kept_sizes[nk - 1] > 1 && r_ > 1 &&
        std::llabs(g_.kept_strides[nk - 1]) < std::llabs(g_.red_strides[nr - 1])) {
      RunColumns(out, out_dtype, idx);
      return;
    }
    const int threads = ParallelismDegree();
    const int64_t kMinPart = 16384;
    int64_t parts = 1;
    if (m_ < 2 * threads && r_ >= 2 * kMinPart) {
      parts = std::min<int64_t>((4 * threads + m_ - 1) / m_, r_ / kMinPart);
    }
    if (r_ == 0) {  // empty reductions: the identity (sum 0, prod 1, all true, …)
      for (int64_t o = 0; o < m_; ++o) f_.Store(out, out_dtype, idx, o, f_.Init());
      return;
    }
    if (r_ <= kSmallReduction) {
      RunSmall(out, out_dtype, idx);
      return;
    }
    if (parts <= 1) {
      const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(r_, 1));
      ParallelFor(0, m_, grain, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
          f_.Store(out, out_dtype, idx, o, ReduceRange(OutputBase(o), 0, r_, f_.Init()));
        }
      });
      return;
    }
    std::vector<Acc> partial(static_cast<size_t>(m_ * parts));
    const int64_t per = (r_ + parts - 1) / parts;
    ParallelFor(0, m_ * parts, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t o = t / parts, part = t % parts;
        const int64_t r0 = part * per, r1 = std::min(r_, r0 + per);
        partial[t] = r0 < r1 ? ReduceRange(OutputBase(o), r0, r1, f_.Init()) : f_.Init();
      }
    });
    for (int64_t o = 0; o < m_; ++o) {
      Acc acc = partial[o * parts];
      for (int64_t p = 1; p < parts; ++p) acc = f_.Combine(acc, partial[o * parts + p]);
      f_.Store(out, out_dtype, idx, o, acc);
    }
  }

 private:
  // Reductions of at most this many elements each (pooling windows, short last dims) take
  // RunSmall.
  static constexpr int64_t kSmallReduction = 64;

  // Many short reductions: the reduced elements' offsets computed once, the outputs walked in
  // row-major order with their offset carried along (no divisions per output).
  void RunSmall(char* out, DType out_dtype, int64_t* idx_out) {
    const int nk = static_cast<int>(g_.kept_sizes.size());
    const int nr = static_cast<int>(g_.red_sizes.size());
    int64_t offsets[kSmallReduction];
    {
      int64_t idx[kMaxRank] = {};
      int64_t off = 0;
      for (int64_t j = 0; j < r_; ++j) {
        offsets[j] = off;
        for (int d = nr - 1; d >= 0; --d) {
          off += g_.red_strides[d];
          if (++idx[d] < g_.red_sizes[d]) break;
          off -= idx[d] * g_.red_strides[d];
          idx[d] = 0;
        }
      }
    }
    const int64_t grain = std::max<int64_t>(1, 32768 / r_);
    ParallelFor(0, m_, grain, [&](int64_t o0, int64_t o1) {
      int64_t idx[kMaxRank] = {};
      int64_t rest = o0;
      for (int d = nk - 1; d >= 0; --d) {
        idx[d] = rest % g_.kept_sizes[d];
        rest /= g_.kept_sizes[d];
      }
      int64_t off = OutputOffset(o0);
      for (int64_t o = o0; o < o1; ++o) {
        const T* p = reinterpret_cast<const T*>(base_) + off;
        Acc acc = f_.Init();
        for (int64_t j = 0; j < r_; ++j) {
          acc = f_.Step(acc, LoadCalc(p + offsets[j]), j);
        }
        f_.Store(out, out_dtype, idx_out, o, acc);
        for (int d = nk - 1; d >= 0; --d) {
          off += g_.kept_strides[d];
          if (++idx[d] < g_.kept_sizes[d]) break;
          off -= idx[d] * g_.kept_strides[d];
          idx[d] = 0;
        }
      }
    });
  }

  // Element offset of output o's first input element.
  int64_t OutputOffset(int64_t o) const {
    int64_t off = 0;
    for (int d = static_cast<int>(g_.kept_sizes.size()) - 1; d >= 0; --d) {
      off += (o % g_.kept_sizes[d]) * g_.kept_strides[d];
      o /= g_.kept_sizes[d];
    }
    return off;
  }
  const char* OutputBase(int64_t o) const {
    return base_ + OutputOffset(o) * static_cast<int64_t>(sizeof(T));
  }

  // Folds reduced positions [r0, r1) (row-major over the reduced dims) into acc.
  Acc ReduceRange(const char* base, int64_t r0, int64_t r1, Acc acc) const {
    const int nr = static_cast<int>(g_.red_sizes.size());
    if (nr == 0) return f_.Step(acc, Load<T>(base), 0);
    int64_t idx[kMaxRank];
    int64_t rest = r0;
    const char* p = base;
    for (int d = nr - 1; d >= 0; --d) {
      idx[d] = rest % g_.red_sizes[d];
      rest /= g_.red_sizes[d];
      p += idx[d] * g_.red_strides[d] * static_cast<int64_t>(sizeof(T));
    }
    const int64_t inner = g_.red_sizes[nr - 1];
    const int64_t stride = g_.red_strides[nr - 1] * static_cast<int64_t>(sizeof(T));
    int64_t r = r0;
    while (r < r1) {
      const int64_t n = std::min(inner - idx[nr - 1], r1 - r);
      if constexpr (F::kHasRun) {
        if (stride == sizeof(T)) {
          acc = f_.Run(acc, reinterpret_cast<const T*>(p), n, r);
        } else {
          for (int64_t i = 0; i < n; ++i) acc = f_.Step(acc, Load<T>(p + i * stride), r + i);
        }
      } else {
        for (int64_t i = 0; i < n; ++i) acc = f_.Step(acc, Load<T>(p + i * stride), r + i);
      }
      r += n;
      if (r >= r1) break;
      // Advance the multi-index past the run.
      p += n * stride;
      idx[nr - 1] += n;
      for (int d = nr - 1; d > 0 && idx[d] == g_.red_sizes[d]; --d) {
        p -= idx[d] * g_.red_strides[d] * static_cast<int64_t>(sizeof(T));
        idx[d] = 0;
        ++idx[d - 1];
        p += g_.red_strides[d - 1] * static_cast<int64_t>(sizeof(T));
      }
    }
    return acc;
  }

  // Blocks of outputs along the innermost kept dim advance together over the reduced elements.
  // When there are fewer blocks than threads (a tall matrix summed over its rows), the rows are
  // split too: each part folds its rows into its own accumulators, combined in order after.
  void RunColumns(char* out, DType out_dtype, int64_t* idx_out) {
    constexpr int64_t kBlock = 4096;  // 16 KiB of float32 per row: long runs to prefetch
    constexpr int64_t kMinRows = 64;
    const int nk = static_cast<int>(g_.kept_sizes.size());
    const int64_t k = g_.kept_sizes[nk - 1];
    const int64_t outer = m_ / k;
    const int64_t blocks = (k + kBlock - 1) / kBlock;
    const int64_t tasks = outer * blocks;
    const int threads = ParallelismDegree();
    int64_t parts = 1;
    if (tasks < 2 * threads && r_ >= 2 * kMinRows) {
      parts = std::min<int64_t>((4 * threads + tasks - 1) / tasks, r_ / kMinRows);
    }
    const auto block_of = [&](int64_t t, int64_t* o0, int64_t* nj) {
      const int64_t ob = t / blocks, j0 = (t % blocks) * kBlock;
      *nj = std::min(kBlock, k - j0);
      *o0 = ob * k + j0;
    };
    if (parts == 1) {
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(r_ * kBlock, 1));
      ParallelFor(0, tasks, grain, [&](int64_t t0, int64_t t1) {
        // Not a vector: vector<bool> (all/any's accumulators) has no data().
        const auto acc = std::make_unique<Acc[]>(kBlock);
        for (int64_t t = t0; t < t1; ++t) {
          int64_t o0, nj;
          block_of(t, &o0, &nj);
          for (int64_t j = 0; j < nj; ++j) acc[j] = f_.Init();
          FoldColumns(OutputBase(o0), nj, 0, r_, acc.get());
          for (int64_t j = 0; j < nj; ++j) f_.Store(out, out_dtype, idx_out, o0 + j, acc[j]);
        }
      });
      return;
    }
    const int64_t per = (r_ + parts - 1) / parts;
    const auto partial = std::make_unique<Acc[]>(static_cast<size_t>(tasks * parts * kBlock));
    ParallelFor(0, tasks * parts, 1, [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t t = u / parts, r0 = (u % parts) * per, r1 = std::min(r_, r0 + per);
        int64_t o0, nj;
        block_of(t, &o0, &nj);
        Acc* acc = partial.get() + u * kBlock;
        for (int64_t j = 0; j < nj; ++j) acc[j] = f_.Init();
        if (r0 < r1) FoldColumns(OutputBase(o0), nj, r0, r1, acc);
      }
    });
    for (int64_t t = 0; t < tasks; ++t) {
      int64_t o0, nj;
      block_of(t, &o0, &nj);
      const Acc* first = partial.get() + t * parts * kBlock;
      for (int64_t j = 0; j < nj; ++j) {
        Acc acc = first[j];
        for (int64_t part = 1; part < parts; ++part) acc = f_.Combine(acc, first[part * kBlock + j]);
        f_.Store(out, out_dtype, idx_out, o0 + j, acc);
      }
    }
  }

  // Folds reduced rows [r0, r1) (row-major over the reduced dims) of the nj neighbouring
  // outputs whose first input element is at `base` into acc[0, nj).
  void FoldColumns(const char* base, int64_t nj, int64_t r0, int64_t r1, Acc* acc) const {
    const int nk = static_cast<int>(g_.kept_sizes.size());
    const int nr = static_cast<int>(g_.red_sizes.size());
    const int64_t ks = g_.kept_strides[nk - 1] * static_cast<int64_t>(sizeof(T));
    int64_t idx[kMaxRank];
    const char* p = base;
    int64_t left = r0;  // r0's position in each reduced dim, the last the fastest
    for (int d = nr - 1; d >= 0; --d) {
      idx[d] = left % g_.red_sizes[d];
      left /= g_.red_sizes[d];
      p += idx[d] * g_.red_strides[d] * static_cast<int64_t>(sizeof(T));
    }
    const auto next_row = [&] {
      for (int d = nr - 1; d >= 0; --d) {
        p += g_.red_strides[d] * static_cast<int64_t>(sizeof(T));
        if (++idx[d] < g_.red_sizes[d]) break;
        p -= idx[d] * g_.red_strides[d] * static_cast<int64_t>(sizeof(T));
        idx[d] = 0;
      }
    };
    int64_t r = r0;
    if constexpr (std::is_same_v<F, SumF<float>>) {
      // float32 sums of neighbouring columns: each run of the innermost reduced dim by
      // AddRowsF32 (eight rows at a time added in float, then into the float64 accumulators).
      if (ks == sizeof(float)) {
        const int64_t inner = g_.red_sizes[nr - 1];
        const int64_t stride = g_.red_strides[nr - 1];
        while (r < r1) {
          const int64_t run = std::min(inner - idx[nr - 1], r1 - r);
          AddRowsF32(reinterpret_cast<const float*>(p), stride, run, nj, acc);
          r += run;
          if (r == r1) return;
          p += run * stride * static_cast<int64_t>(sizeof(float));
          idx[nr - 1] += run;
          for (int d = nr - 1; d > 0 && idx[d] == g_.red_sizes[d]; --d) {
            p -= idx[d] * g_.red_strides[d] * static_cast<int64_t>(sizeof(float));
            idx[d] = 0;
            ++idx[d - 1];
            p += g_.red_strides[d - 1] * static_cast<int64_t>(sizeof(float));
          }
        }
        return;
      }
    }
    for (; r < r1; ++r) {
      if (ks == sizeof(T)) {
        const T* x = reinterpret_cast<const T*>(p);
        for (int64_t j = 0; j < nj; ++j) acc[j] = f_.Step(acc[j], LoadCalc(x + j), r);
      } else {
        for (int64_t j = 0; j < nj; ++j) acc[j] = f_.Step(acc[j], Load<T>(p + j * ks), r);
      }
      next_row();
    }
  }

  const ReduceGeometry& g_;
  F f_;
  const char* base_;
  int64_t m_, r_;
};

template <typename T, typename F>
void RunWith(const ReduceGeometry& g, const StridedRef& in, char* out, DType od, int64_t* idx,
             const F& f) {
  Reducer<T, F>(g, in, f).Run(out, od, idx);
}

template <typename T>
void ReduceTyped(ReduceOp op, const ReduceGeometry& g, const StridedRef& in, char* out, DType od,
                 int64_t* idx, const ReduceArgs& args) {
  int64_t r = 1;
  for (int64_t s : g.red_sizes) r *= s;
  switch (op) {
    case ReduceOp::kSum: return RunWith<T>(g, in, out, od, idx, SumF<T>{});
    case ReduceOp::kMean: {
      SumF<T> f;
      f.mean = true;
      f.count = r;
      return RunWith<T>(g, in, out, od, idx, f);
    }
    case ReduceOp::kProd: return RunWith<T>(g, in, out, od, idx, Stepped<ProdOp<T>>{});
    case ReduceOp::kAmax: return RunWith<T>(g, in, out, od, idx, ExtremumF<T, true>{});
    case ReduceOp::kAmin: return RunWith<T>(g, in, out, od, idx, ExtremumF<T, false>{});
    case ReduceOp::kArgmax: {
      ArgF<T, true> f;
      f.values = idx != nullptr;
      return RunWith<T>(g, in, out, od, idx, f);
    }
    case ReduceOp::kArgmin: {
      ArgF<T, false> f;
      f.values = idx != nullptr;
      return RunWith<T>(g, in, out, od, idx, f);
    }
    case ReduceOp::kAll: return RunWith<T>(g, in, out, od, idx, Stepped<LogicalOp<T, true>>{});
    case ReduceOp::kAny: return RunWith<T>(g, in, out, od, idx, Stepped<LogicalOp<T, false>>{});
    case ReduceOp::kCountNonzero: return RunWith<T>(g, in, out, od, idx, Stepped<CountOp<T>>{});
    case ReduceOp::kVar:
    case ReduceOp::kStd: {
      VarF<T> f;
      f.correction = args.correction;
      f.take_sqrt = op == ReduceOp::kStd;
      return RunWith<T>(g, in, out, od, idx, f);
    }
    case ReduceOp::kNorm: {
      Stepped<NormOp<T>> f;
      f.p = args.p;
      return RunWith<T>(g, in, out, od, idx, f);
    }
    case ReduceOp::kLogsumexp: return RunWith<T>(g, in, out, od, idx, Stepped<LseOp<T>>{});
  }
}

// Calls fn(line_in, line_out) for every line along `dim` (in parallel).
template <typename Fn>
void ForEachLine(IntList shape, int64_t dim, const StridedRef& in, const StridedRef& out,
                 Fn&& fn) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  int64_t lines = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (d != dim) lines *= shape[d];
  }
  const int64_t n = nd == 0 ? 1 : shape[dim];
  if (lines == 0 || n == 0) return;
  const int64_t ii = ItemSize(in.dtype), oi = ItemSize(out.dtype);
  const int64_t grain = std::max<int64_t>(1, 16384 / n);
  ParallelFor(0, lines, grain, [&](int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l) {
      int64_t rest = l, ioff = 0, ooff = 0;
      for (int64_t d = nd - 1; d >= 0; --d) {
        if (d == dim) continue;
        const int64_t k = rest % shape[d];
        rest /= shape[d];
        ioff += k * in.strides[d];
        ooff += k * out.strides[d];
      }
      fn(in.data + ioff * ii, out.data + ooff * oi);
    }
  });
}

// softmax / log_softmax of one contiguous line, in lanes the compiler vectorizes: the max, then
// exp(x - max) summed (and for softmax stored, then scaled once), so one exp per element. The
// same NaN and infinity rules as SoftmaxLine (a NaN is skipped by the max and reaches the sum).
// float32 gets AVX2/FMA and AVX-512 clones on machines that have them, chosen when the program
// loads. 16 lanes: two AVX2 registers or one AVX-512 one (8 left half of an AVX-512 machine's
// width unused: 1.5x slower).
constexpr int kLanes = 16;

template <typename T, typename Exp>
[[gnu::always_inline]] inline void SoftmaxRow(bool log, int64_t n, const T* x, T* y, Exp exp) {
  T lanes[kLanes];
  for (T& l : lanes) l = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] = lanes[j] < x[i + j] ? x[i + j] : lanes[j];
  }
  T m = -std::numeric_limits<T>::infinity();
  for (T l : lanes) m = m < l ? l : m;
  for (; i < n; ++i) m = m < x[i] ? x[i] : m;
  T sums[kLanes] = {};
  for (i = 0; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const T e = exp(x[i + j] - m);
      if (!log) y[i + j] = e;
      sums[j] += e;
    }
  }
  T s = 0;
  for (T l : sums) s += l;
  for (; i < n; ++i) {
    const T e = exp(x[i] - m);
    if (!log) y[i] = e;
    s += e;
  }
  if (log) {
    const T shift = m + std::log(s);
    for (i = 0; i < n; ++i) y[i] = x[i] - shift;
  } else {
    const T scale = T(1) / s;
    for (i = 0; i < n; ++i) y[i] *= scale;
  }
}

TENSORD_AVX512_CLONE
void SoftmaxRowF32(bool log, int64_t n, const float* x, float* y) {
  SoftmaxRow<float>(log, n, x, y, [](float v) __attribute__((always_inline)) { return VecExp(v); });
}

void SoftmaxRowF64(bool log, int64_t n, const double* x, double* y) {
  SoftmaxRow<double>(log, n, x, y, [](double v) { return std::exp(v); });
}

// One row of layer_norm, in lanes (always inlined, so that the float32 clones vectorize it with
// AVX2 where the machine has it): the mean, then the mean squared deviation (two passes over a
// row in cache: exact where one-pass formulas cancel), then the normalized row.
template <typename T>
[[gnu::always_inline]] inline void LayerNormRow(const T* x, T* y, const T* w, const T* b,
                                                int64_t n, double eps) {
  using C = Calc<T>;
  const auto at = [x](int64_t i) { return Load<T>(reinterpret_cast<const char*>(x + i)); };
  C sums[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) sums[j] += at(i + j);
  }
  C s = 0;
  for (C l : sums) s += l;
  for (; i < n; ++i) s += at(i);
  const C mean = s / static_cast<C>(n);
  C squares[kLanes] = {};
  for (i = 0; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const C d = at(i + j) - mean;
      squares[j] += d * d;
    }
  }
  C q = 0;
  for (C l : squares) q += l;
  for (; i < n; ++i) {
    const C d = at(i) - mean;
    q += d * d;
  }
  const C rstd = C(1) / std::sqrt(q / static_cast<C>(n) + static_cast<C>(eps));
  for (i = 0; i < n; ++i) {
    C v = (at(i) - mean) * rstd;
    if (w != nullptr) v *= Load<T>(reinterpret_cast<const char*>(w + i));
    if (b != nullptr) v += Load<T>(reinterpret_cast<const char*>(b + i));
    y[i] = Convert<T>(v);
  }
}

TENSORD_AVX2_CLONE
void LayerNormRowsF32(const LayerNormCall& c, int64_t r0, int64_t r1) {
  const auto* x = reinterpret_cast<const float*>(c.x);
  auto* y = reinterpret_cast<float*>(c.out);
  for (int64_t r = r0; r < r1; ++r) {
    LayerNormRow<float>(x + r * c.n, y + r * c.n, reinterpret_cast<const float*>(c.weight),
                        reinterpret_cast<const float*>(c.bias), c.n, c.eps);
  }
}

// cross_entropy at one position: its class scores x[0], x[s], ... x[(classes - 1) * s] and its
// target t (checked), into `nll` and `smooth` (kernels/reduce_ops.h), in lanes the compiler
// vectorizes when the classes are contiguous (kUnit). log_softmax's max, then the sum of
// exp(x - max): one exp per class, as SoftmaxRow.
template <typename T, bool kUnit, typename Exp>
[[gnu::always_inline]] inline void CrossEntropyAt(const CrossEntropyCall& c, const T* x,
                                                  int64_t stride, int64_t t, Exp exp,
                                                  Calc<T>* nll, Calc<T>* smooth) {
  using C = Calc<T>;
  const int64_t n = c.classes, s = kUnit ? 1 : stride;
  const auto at = [x, s](int64_t k) { return Load<T>(reinterpret_cast<const char*>(x + k * s)); };
  const T* w = reinterpret_cast<const T*>(c.weight);
  const auto weight = [w](int64_t k) {
    return w == nullptr ? C(1) : Load<T>(reinterpret_cast<const char*>(w + k));
  };
  C lse = 0;
  if (!c.log_probs) {
    C lanes[kLanes];
    for (C& l : lanes) l = -std::numeric_limits<C>::infinity();
    int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes) {
      for (int j = 0; j < kLanes; ++j) lanes[j] = lanes[j] < at(k + j) ? at(k + j) : lanes[j];
    }
    C m = -std::numeric_limits<C>::infinity();
    for (C l : lanes) m = m < l ? l : m;
    for (; k < n; ++k) m = m < at(k) ? at(k) : m;
    C sums[kLanes] = {};
    for (k = 0; k + kLanes <= n; k += kLanes) {
      for (int j = 0; j < kLanes; ++j) sums[j] += exp(at(k + j) - m);
    }
    C total = 0;
    for (C l : sums) total += l;
    for (; k < n; ++k) total += exp(at(k) - m);
    lse = m + std::log(total);
  }
  if (c.has_probs) {  // class probabilities, laid out as the scores
    const T* q = reinterpret_cast<const T*>(c.probs) + (x - reinterpret_cast<const T*>(c.input));
    const C keep = static_cast<C>(1 - c.label_smoothing);
    const C spread = static_cast<C>(c.label_smoothing / static_cast<double>(n));
    const auto prob = [q, s, keep, spread](int64_t k) {
      return Load<T>(reinterpret_cast<const char*>(q + k * s)) * keep + spread;
    };
    C sums[kLanes] = {};
    int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes) {
      for (int j = 0; j < kLanes; ++j) sums[j] += weight(k + j) * prob(k + j) * (at(k + j) - lse);
    }
    C total = 0;
    for (C l : sums) total += l;
    for (; k < n; ++k) total += weight(k) * prob(k) * (at(k) - lse);
    *nll = -total;
    return;
  }
  *nll = -weight(t) * (at(t) - lse);
  if (c.label_smoothing > 0) {
    C sums[kLanes] = {};
    int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes) {
      for (int j = 0; j < kLanes; ++j) sums[j] += weight(k + j) * (at(k + j) - lse);
    }
    C total = 0;
    for (C l : sums) total += l;
    for (; k < n; ++k) total += weight(k) * (at(k) - lse);
    *smooth = -total;
  }
}

// What a block of positions adds to a reduced loss, and the first bad target it met.
struct LossBlock {
  double nll = 0, smooth = 0, weight = 0;
  int64_t bad = -1;  // the position of its first target out of range
};

// Positions [p0, p1) of cross_entropy: kNone writes each loss, the reductions add into `sums`.
// Inlined into its callers, so that the float32 clones get their own AVX2 copy.
template <typename T, typename Exp>
[[gnu::always_inline]] inline void CrossEntropyBlock(const CrossEntropyCall& c, int64_t p0,
                                                     int64_t p1, Exp exp, LossBlock* sums) {
  using C = Calc<T>;
  const T* x = reinterpret_cast<const T*>(c.input);
  const T* w = reinterpret_cast<const T*>(c.weight);
  T* out = reinterpret_cast<T*>(c.out);
  const C keep = static_cast<C>(1 - c.label_smoothing);
  const C spread = static_cast<C>(c.label_smoothing / static_cast<double>(c.classes));
  const bool apart = !c.has_probs && c.label_smoothing > 0;  // smooth(p) kept apart
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t t = !c.has_probs ? c.target[p] : 0;
    if (!c.has_probs && t == c.ignore_index) {
      if (c.reduction == LossReduction::kNone) out[p] = Convert<T>(C(0));
      continue;
    }
    if (!c.has_probs && (t < 0 || t >= c.classes)) {
      sums->bad = p;
      return;
    }
    const int64_t o = p / c.inner, i = p - o * c.inner;
    const T* row = x + o * c.classes * c.inner + i;
    C nll = 0, smooth = 0;
    if (c.inner == 1) {
      CrossEntropyAt<T, true>(c, row, 1, t, exp, &nll, &smooth);
    } else {
      CrossEntropyAt<T, false>(c, row, c.inner, t, exp, &nll, &smooth);
    }
    if (c.reduction == LossReduction::kNone) {
      out[p] = Convert<T>(apart ? keep * nll + spread * smooth : nll);
    } else {
      sums->nll += nll;
      sums->smooth += smooth;
      // Probabilities: the mean is over positions (none with no classes, as torch's 0 / 0).
      sums->weight += c.has_probs ? (c.classes > 0 ? 1.0 : 0.0)
                      : w == nullptr     ? 1.0
                                         : static_cast<double>(Load<T>(
                                               reinterpret_cast<const char*>(w + t)));
    }
  }
}

TENSORD_AVX512_CLONE
void CrossEntropyBlockF32(const CrossEntropyCall& c, int64_t p0, int64_t p1, LossBlock* sums) {
  CrossEntropyBlock<float>(c, p0, p1, [](float v) { return VecExp(v); }, sums);
}

}  // namespace

absl::Status CrossEntropy(const CrossEntropyCall& c) {
  const int64_t positions = c.outer * c.inner;
  // Fixed blocks, summed in order afterwards: the same result on any number of threads.
  const int64_t block = std::max<int64_t>(1, 8192 / std::max<int64_t>(c.classes, 1));
  const int64_t blocks = positions == 0 ? 0 : (positions - 1) / block + 1;
  std::vector<LossBlock> sums(static_cast<size_t>(blocks));
  ParallelFor(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t p0 = b * block, p1 = std::min(positions, p0 + block);
      if (c.dtype == DType::kFloat32) {
        CrossEntropyBlockF32(c, p0, p1, &sums[b]);
        continue;
      }
      DispatchDType(c.dtype, [&](auto t) {
        using T = decltype(t);
        if constexpr (kIsFloat<T>) {
          CrossEntropyBlock<T>(c, p0, p1, [](Calc<T> v) { return std::exp(v); }, &sums[b]);
        }
      });
    }
  });
  LossBlock total;
  for (const LossBlock& s : sums) {
    if (s.bad >= 0) {
      return IndexError(c.log_probs ? "nll_loss" : "cross_entropy",
                        absl::StrCat("Target ", c.target[s.bad], " is out of bounds."));
    }
    total.nll += s.nll;
    total.smooth += s.smooth;
    total.weight += s.weight;
  }
  if (c.reduction == LossReduction::kNone) return absl::OkStatus();
  double loss = total.nll, smooth = total.smooth;
  if (c.reduction == LossReduction::kMean) {
    loss /= total.weight;
    smooth /= total.weight;
  }
  if (!c.has_probs && c.label_smoothing > 0) {
    loss = (1 - c.label_smoothing) * loss +
           c.label_smoothing / static_cast<double>(c.classes) * smooth;
  }
  DispatchDType(c.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsFloat<T>) *reinterpret_cast<T*>(c.out) = Convert<T>(loss);
  });
  return absl::OkStatus();
}

void Reduce(ReduceOp op, const ReduceGeometry& g, const StridedRef& in, char* out, DType out_dtype,
            int64_t* indices, const ReduceArgs& args) {
  DispatchDType(in.dtype, [&](auto t) {
    ReduceTyped<decltype(t)>(op, g, in, out, out_dtype, indices, args);
  });
}

void Scan(ScanOp op, IntList shape, int64_t dim, const StridedRef& in, const StridedRef& out) {
  const int64_t n = shape.empty() ? 1 : shape[dim];
  const int64_t is = shape.empty() ? 0 : in.strides[dim];
  const int64_t os = shape.empty() ? 0 : out.strides[dim];
  DispatchDType(in.dtype, [&](auto t) {
    using T = decltype(t);
    DispatchDType(out.dtype, [&](auto o) {
      using O = decltype(o);
      if constexpr (std::is_same_v<O, T> || std::is_same_v<O, int64_t>) {
        ForEachLine(shape, dim, in, out, [&](const char* x, char* y) {
          ScanLine<T>(
              op, n, [&](int64_t i) { return Load<T>(x + i * is * sizeof(T)); },
              [&](int64_t i, SumAcc<T> acc) {
                *reinterpret_cast<O*>(y + i * os * sizeof(O)) = Convert<O>(acc);
              });
        });
      }
    });
  });
}

void CumExtreme(bool max, IntList shape, int64_t dim, const StridedRef& in,
                const StridedRef& values, const StridedRef& indices) {
  const int64_t n = shape.empty() ? 1 : shape[dim];
  const int64_t is = shape.empty() ? 0 : in.strides[dim];
  const int64_t os = shape.empty() ? 0 : values.strides[dim];
  DispatchDType(in.dtype, [&](auto t) {
    using T = decltype(t);
    // values and indices are contiguous of one shape: a line's element offset is the same in
    // both.
    ForEachLine(shape, dim, in, values, [&](const char* x, char* y) {
      const int64_t first = (y - values.data) / static_cast<int64_t>(sizeof(T));
      int64_t* where = reinterpret_cast<int64_t*>(indices.data) + first;
      CumExtremeLine<T>(
          max, n, [&](int64_t i) { return static_cast<Calc<T>>(Load<T>(x + i * is * sizeof(T))); },
          [&](int64_t i, Calc<T> v, int64_t k) {
            *reinterpret_cast<T*>(y + i * os * sizeof(T)) = Convert<T>(v);
            where[i * os] = k;
          });
    });
  });
}

void LayerNorm(const LayerNormCall& c) {
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(c.n, 1));
  ParallelFor(0, c.rows, grain, [&](int64_t r0, int64_t r1) {
    if (c.dtype == DType::kFloat32) {
      LayerNormRowsF32(c, r0, r1);
      return;
    }
    DispatchDType(c.dtype, [&](auto t) {
      using T = decltype(t);
      if constexpr (kIsFloat<T>) {
        const auto* x = reinterpret_cast<const T*>(c.x);
        auto* y = reinterpret_cast<T*>(c.out);
        for (int64_t r = r0; r < r1; ++r) {
          LayerNormRow<T>(x + r * c.n, y + r * c.n, reinterpret_cast<const T*>(c.weight),
                          reinterpret_cast<const T*>(c.bias), c.n, c.eps);
        }
      }
    });
  });
}

void ChannelAffine(const ChannelAffineCall& c) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(c.plane, 1));
  DispatchDType(c.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsFloat<T>) {
      using C = Calc<T>;
      const T* x = reinterpret_cast<const T*>(c.x);
      T* out = reinterpret_cast<T*>(c.out);
      const C* scale = reinterpret_cast<const C*>(c.scale);
      const C* shift = reinterpret_cast<const C*>(c.shift);
      ParallelFor(0, c.planes, grain, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const C a = scale[p % c.channels], b = shift[p % c.channels];
          const T* __restrict xp = x + p * c.plane;
          T* __restrict op = out + p * c.plane;
          for (int64_t i = 0; i < c.plane; ++i) {
            op[i] = Convert<T>(static_cast<C>(static_cast<C>(xp[i]) * a + b));
          }
        }
      });
    }
  });
}

void Softmax(bool log, IntList shape, int64_t dim, const StridedRef& in, const StridedRef& out) {
  const int64_t n = shape.empty() ? 1 : shape[dim];
  const int64_t is = shape.empty() ? 0 : in.strides[dim];
  const int64_t os = shape.empty() ? 0 : out.strides[dim];
  DispatchDType(in.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (is == 1 && os == 1) {
        ForEachLine(shape, dim, in, out, [&](const char* x, char* y) {
          if constexpr (std::is_same_v<T, float>) {
            SoftmaxRowF32(log, n, reinterpret_cast<const float*>(x), reinterpret_cast<float*>(y));
          } else {
            SoftmaxRowF64(log, n, reinterpret_cast<const double*>(x),
                          reinterpret_cast<double*>(y));
          }
        });
        return;
      }
    }
    if constexpr (kIsFloat<T>) {
      ForEachLine(shape, dim, in, out, [&](const char* x, char* y) {
        T* yp = reinterpret_cast<T*>(y);
        SoftmaxLine<T>(
            log, n, [&](int64_t i) { return Load<T>(x + i * is * sizeof(T)); },
            [&](int64_t i, Calc<T> v) { yp[i * os] = Convert<T>(v); });
      });
    }
  });
}

}  // namespace tensord::engine::cpu
