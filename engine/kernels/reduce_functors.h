// The element math of every reduction, written once for the CPU loops (engine/cpu/) and the
// CUDA kernels (engine/cuda/): a functor per op with
//   Init()                  the empty reduction's accumulator,
//   Step(acc, x, i)         element x at position i (row-major over the reduced dims),
//   Combine(a, b)           two partial results (any order: ties are broken by position),
//   Store(out, dtype, indices, o, acc)   output o written as `dtype` (and its index).
// Sums and products accumulate in double (floating inputs) or int64 with two's-complement
// wrap-around (integers); float16/bfloat16 are read as float.
#ifndef TENSORD_ENGINE_KERNELS_REDUCE_FUNCTORS_H_
#define TENSORD_ENGINE_KERNELS_REDUCE_FUNCTORS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "engine/core/dtype.h"
#include "engine/core/half.h"
#include "engine/core/host_device.h"
#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"

namespace tensord::engine {

// Writes v into element i of `out`, an array of `dtype`, converted as torch converts.
template <typename V>
TENSORD_HD inline void StoreConverted(char* out, DType dtype, int64_t i, V v) {
  switch (dtype) {
    case DType::kBool: reinterpret_cast<bool*>(out)[i] = Convert<bool>(v); break;
    case DType::kUInt8: reinterpret_cast<uint8_t*>(out)[i] = Convert<uint8_t>(v); break;
    case DType::kInt8: reinterpret_cast<int8_t*>(out)[i] = Convert<int8_t>(v); break;
    case DType::kInt16: reinterpret_cast<int16_t*>(out)[i] = Convert<int16_t>(v); break;
    case DType::kInt32: reinterpret_cast<int32_t*>(out)[i] = Convert<int32_t>(v); break;
    case DType::kInt64: reinterpret_cast<int64_t*>(out)[i] = Convert<int64_t>(v); break;
    case DType::kFloat16: reinterpret_cast<Half*>(out)[i] = Convert<Half>(v); break;
    case DType::kBFloat16: reinterpret_cast<BFloat16*>(out)[i] = Convert<BFloat16>(v); break;
    case DType::kFloat32: reinterpret_cast<float*>(out)[i] = Convert<float>(v); break;
    case DType::kFloat64: reinterpret_cast<double*>(out)[i] = Convert<double>(v); break;
  }
}

// Accumulator of sums and products: double for floating dtypes, int64 for integers.
template <typename T>
using SumAcc = std::conditional_t<kIsFloat<T>, double, int64_t>;

template <typename T>
struct SumOp {
  using Acc = SumAcc<T>;
  bool mean = false;
  int64_t count = 1;
  TENSORD_HD Acc Init() const { return 0; }
  TENSORD_HD Acc Step(Acc a, Calc<T> x, int64_t) const { return WrapAdd(a, static_cast<Acc>(x)); }
  TENSORD_HD Acc Combine(Acc a, Acc b) const { return WrapAdd(a, b); }
  TENSORD_HD void Store(char* out, DType d, int64_t*, int64_t i, Acc a) const {
    if (mean) {
      StoreConverted(out, d, i, static_cast<double>(a) / static_cast<double>(count));
    } else {
      StoreConverted(out, d, i, a);
    }
  }
};

// Accumulator of products: as torch's prod, the element's own precision (float for float32;
// float16/bfloat16, which prod refuses, would take float as torch's CUDA kernel), double for
// float64, int64 for integers. A product has no cancellation to guard against, and a wider
// accumulator would give other values than torch's (a determinant of -1.9999999 where torch
// prints -2). Short or strided products multiply in torch's order, so their bits are torch's;
// torch's CPU multiplies contiguous runs of 32 or more in vector lanes, whose order differs.
template <typename T>
using ProdAcc = std::conditional_t<kIsFloat<T>, std::conditional_t<std::is_same_v<T, double>,
                                                                   double, float>,
                                   int64_t>;

template <typename T>
struct ProdOp {
  using Acc = ProdAcc<T>;
  TENSORD_HD Acc Init() const { return 1; }
  TENSORD_HD Acc Step(Acc a, Calc<T> x, int64_t) const { return WrapMul(a, static_cast<Acc>(x)); }
  TENSORD_HD Acc Combine(Acc a, Acc b) const { return WrapMul(a, b); }
  TENSORD_HD void Store(char* out, DType d, int64_t*, int64_t i, Acc a) const {
    StoreConverted(out, d, i, a);
  }
};

// amax/amin: NaN propagates.
template <typename T, bool kMax>
struct ExtremumOp {
  using C = Calc<T>;
  struct Acc {
    C v;
    bool nan;
  };
  TENSORD_HD Acc Init() const {
    if constexpr (kIsFloat<T>) {
      return {kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity(),
              false};
    } else {
      return {kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max(), false};
    }
  }
  TENSORD_HD static C Pick(C a, C x) { return kMax ? (x > a ? x : a) : (x < a ? x : a); }
  TENSORD_HD Acc Step(Acc a, C x, int64_t) const {
    if constexpr (kIsFloat<T>) a.nan |= x != x;
    a.v = Pick(a.v, x);
    return a;
  }
  TENSORD_HD Acc Combine(Acc a, Acc b) const { return {Pick(a.v, b.v), a.nan || b.nan}; }
  TENSORD_HD void Store(char* out, DType d, int64_t*, int64_t i, Acc a) const {
    if constexpr (kIsFloat<T>) {
      if (a.nan) a.v = std::numeric_limits<C>::quiet_NaN();
    }
    StoreConverted(out, d, i, a.v);
  }
};

// argmax/argmin (and max/min with a dim): the first extreme element; NaN counts as the extreme.
template <typename T, bool kMax>
struct ArgOp {
  using C = Calc<T>;
  struct Acc {
    C v;
    int64_t i;
  };
  bool values = false;  // store the value (and the index into `indices`), not the index
  TENSORD_HD Acc Init() const { return {C(0), -1}; }
  TENSORD_HD static bool Better(C x, C best) {
    if constexpr (kIsFloat<T>) {
      if (best != best) return false;
      if (x != x) return true;
    }
    return kMax ? x > best : x < best;
  }
  TENSORD_HD Acc Step(Acc a, C x, int64_t i) const {
    if (a.i < 0 || Better(x, a.v)) return {x, i};
    return a;
  }
  TENSORD_HD Acc Combine(Acc a, Acc b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    if (Better(b.v, a.v)) return b;
    if (Better(a.v, b.v)) return a;
    return b.i < a.i ? b : a;  // equal (or both NaN): the first position
  }
  TENSORD_HD void Store(char* out, DType d, int64_t* idx, int64_t i, Acc a) const {
    if (values) {
      StoreConverted(out, d, i, a.v);
      if (idx != nullptr) idx[i] = a.i;
    } else {
      reinterpret_cast<int64_t*>(out)[i] = a.i;
    }
  }
};

template <typename T, bool kAll>
struct LogicalOp {
  using Acc = bool;
  TENSORD_HD Acc Init() const { return kAll; }
  TENSORD_HD Acc Step(Acc a, Calc<T> x, int64_t) const {
    return kAll ? (a && x != Calc<T>(0)) : (a || x != Calc<T>(0));
  }
  TENSORD_HD Acc Combine(Acc a, Acc b) const { return kAll ? a && b : a || b; }
  TENSORD_HD void Store(char* out, DType d, int64_t*, int64_t i, Acc a) const {
    StoreConverted(out, d, i, a);
  }
};

template <typename T>
struct CountOp {
  using Acc = int64_t;
  TENSORD_HD Acc Init() const { return 0; }
  TENSORD_HD Acc Step(Acc a, Calc<T> x, int64_t) const { return a + (x != Calc<T>(0)); }
  TENSORD_HD Acc Combine(Acc a, Acc b) const { return a + b; }
  TENSORD_HD void Store(char* out, DType d, int64_t*, int64_t i, Acc a) const {
    StoreConverted(out, d, i, a);
  }
};

// var/std: Welford's running mean and sum of squared deviations, merged with Chan's formula.
template <typename T>
struct VarOp {
  struct Acc {
    double n, mean, m2;
  };
  double correction = 1;
  bool take_sqrt = false;
  TENSORD_HD Acc Init() const { return {0, 0, 0}; }
  TENSORD_HD Acc Step(Acc a, Calc<T> x, int64_t) const {
    const double v = static_cast<double>(x);
    a.n += 1;
    const double delta = v - a.mean;
    a.mean += delta / a.n;
    a.m2 += delta * (v - a.mean);
    return a;
  }
  TENSORD_HD Acc Combine(Acc a, Acc b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = a.n + b.n;
    const double delta = b.mean - a.mean;
    return {n, a.mean + delta * b.n / n, a.m2 + b.m2 + delta * delta * a.n * b.n / n};
  }
  TENSORD_HD void Store(char* out, DType d, int64_t*, int64_t i, Acc a) const {
    const double denom = a.n - correction > 0 ? a.n - correction : 0.0;
    double v = a.m2 / denom;
    if (take_sqrt) v = std::sqrt(v);
    StoreConverted(out, d, i, v);
  }
};

template <typename T>
struct NormOp {
  using Acc = double;
  double p = 2;
  TENSORD_HD Acc Init() const {
    return std::isinf(p) && p < 0 ? std::numeric_limits<double>::infinity() : 0;
  }
  TENSORD_HD Acc Step(Acc a, Calc<T> x, int64_t) const {
    const double v = std::fabs(static_cast<double>(x));
    if (p == 2) return a + v * v;
    if (p == 1) return a + v;
    if (p == 0) return a + (v != 0);
    if (std::isinf(p)) {
      if (v != v) return v;
      return p > 0 ? (v > a ? v : a) : (v < a ? v : a);
    }
    return a + std::pow(v, p);
  }
  TENSORD_HD Acc Combine(Acc a, Acc b) const {
    if (std::isinf(p)) {
      if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
      return p > 0 ? (b > a ? b : a) : (b < a ? b : a);
    }
    return a + b;
  }
  TENSORD_HD void Store(char* out, DType d, int64_t*, int64_t i, Acc a) const {
    double v = a;
    if (p == 2) {
      v = std::sqrt(a);
    } else if (p != 1 && p != 0 && !std::isinf(p)) {
      v = std::pow(a, 1.0 / p);
    }
    StoreConverted(out, d, i, v);
  }
};

// logsumexp: a running maximum and the sum of exp(x - maximum).
template <typename T>
struct LseOp {
  struct Acc {
    double m, s;
  };
  TENSORD_HD Acc Init() const { return {-std::numeric_limits<double>::infinity(), 0}; }
  TENSORD_HD static Acc Merge(Acc a, double m, double s) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    if (m != m || a.m != a.m) return {std::numeric_limits<double>::quiet_NaN(), 1};
    if (m == -kInf) return a;
    if (a.m == -kInf) return {m, s};
    if (std::isinf(m) || std::isinf(a.m)) return {m > a.m ? m : a.m, 1};  // +inf dominates
    if (m > a.m) return {m, a.s * std::exp(a.m - m) + s};
    return {a.m, a.s + s * std::exp(m - a.m)};
  }
  TENSORD_HD Acc Step(Acc a, Calc<T> x, int64_t) const {
    return Merge(a, static_cast<double>(x), 1);
  }
  TENSORD_HD Acc Combine(Acc a, Acc b) const { return Merge(a, b.m, b.s); }
  TENSORD_HD void Store(char* out, DType d, int64_t*, int64_t i, Acc a) const {
    const double v = (std::isinf(a.m) || a.m != a.m) ? a.m : a.m + std::log(a.s);
    StoreConverted(out, d, i, v);
  }
};

// ---- Along one dim: scans and softmax ----------------------------------------------------------

// log(exp(x) + exp(acc)) for logcumsumexp's running value, as ATen's _log_add_exp_helper:
// equal infinities stay themselves, a NaN accumulator stays NaN.
template <typename A>
TENSORD_HD inline A LogAddExpStep(A x, A acc) {
  const A lo = acc != acc ? acc : (acc < x ? acc : x);
  const A hi = acc != acc ? acc : (x < acc ? acc : x);
  if (lo != hi || std::isfinite(lo)) return hi + std::log1p(std::exp(lo - hi));
  return x;
}

// One line of cumsum/cumprod/logcumsumexp: at(i) reads element i (as T), put(i, acc) writes
// the running result (an accumulator as SumOp's: double for floating T, as torch's CPU scans).
template <typename T, typename At, typename Put>
TENSORD_HD inline void ScanLine(ScanOp op, int64_t n, At at, Put put) {
  using A = SumAcc<T>;
  if constexpr (kIsFloat<T>) {
    if (op == ScanOp::kLogSumExp) {
      A acc = -std::numeric_limits<A>::infinity();
      for (int64_t i = 0; i < n; ++i) {
        acc = LogAddExpStep<A>(static_cast<A>(at(i)), acc);
        put(i, acc);
      }
      return;
    }
  }
  const bool product = op == ScanOp::kProd;
  A acc = product ? 1 : 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<A>(at(i));
    acc = product ? WrapMul(acc, v) : WrapAdd(acc, v);
    put(i, acc);
  }
}

// One line of cummax (or cummin): the running extreme and its position, as ATen's
// cummax_cummin_helper: the latest of equal elements wins, and a NaN, once met, stays (at the
// latest NaN's position).
template <typename T, typename At, typename Put>
TENSORD_HD inline void CumExtremeLine(bool max, int64_t n, At at, Put put) {
  using C = Calc<T>;
  C best = n > 0 ? at(0) : C{};
  int64_t where = 0;
  for (int64_t i = 0; i < n; ++i) {
    const C x = at(i);
    if (x != x || (best == best && (max ? x >= best : x <= best))) {
      best = x;
      where = i;
    }
    put(i, best, where);
  }
}

// One line of softmax / log_softmax (floating T, computed in Calc<T>): the maximum, the sum of
// exp(x - maximum), then each output.
template <typename T, typename At, typename Put>
TENSORD_HD inline void SoftmaxLine(bool log, int64_t n, At at, Put put) {
  using C = Calc<T>;
  C m = -std::numeric_limits<C>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const C x = at(i);
    m = m < x ? x : m;  // as std::max: a NaN is skipped here and reaches the sum
  }
  C s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(at(i) - m);
  if (log) {
    const C ls = std::log(s);
    for (int64_t i = 0; i < n; ++i) put(i, at(i) - m - ls);
  } else {
    for (int64_t i = 0; i < n; ++i) put(i, std::exp(at(i) - m) / s);
  }
}

// ---- One thread's share of a block's reduction -------------------------------------------------

// The elements j = first, first + step, ... below `end` of a reduced row whose element j is
// in[base + j * stride], accumulated by f, with four accumulators in flight (their loads do not
// wait on each other's arithmetic), combined at the end. Positions j reach Step as they are, so
// ties break as in one sequential pass. The CUDA reduction runs it per thread
// (engine/cuda/reduce_kernels.cu); tests/engine/reduce_accumulate_test.cc on the host.
template <typename T, typename F>
TENSORD_HD typename F::Acc AccumulateStrided(const F& f, const T* in, int64_t base,
                                             int64_t stride, int64_t first, int64_t end,
                                             int64_t step) {
  using Acc = typename F::Acc;
  Acc a0 = f.Init(), a1 = f.Init(), a2 = f.Init(), a3 = f.Init();
  int64_t j = first;
  for (; j + 3 * step < end; j += 4 * step) {
    const Calc<T> x0 = LoadCalc(in + base + j * stride);
    const Calc<T> x1 = LoadCalc(in + base + (j + step) * stride);
    const Calc<T> x2 = LoadCalc(in + base + (j + 2 * step) * stride);
    const Calc<T> x3 = LoadCalc(in + base + (j + 3 * step) * stride);
    a0 = f.Step(a0, x0, j);
    a1 = f.Step(a1, x1, j + step);
    a2 = f.Step(a2, x2, j + 2 * step);
    a3 = f.Step(a3, x3, j + 3 * step);
  }
  for (; j < end; j += step) a0 = f.Step(a0, LoadCalc(in + base + j * stride), j);
  return f.Combine(f.Combine(a0, a1), f.Combine(a2, a3));
}

// 16 bytes of a contiguous run, loaded as one (on a GPU, one 128-bit load). A bool's bytes
// travel as uint8, read as LoadElement reads them (nonzero is true).
template <typename T>
struct alignas(16) Piece16 {
  using Lane = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
  static constexpr int kCount = 16 / sizeof(T);
  Lane v[kCount];
  TENSORD_HD Calc<T> At(int e) const {
    if constexpr (std::is_same_v<T, bool>) {
      return v[e] != 0;
    } else {
      return static_cast<Calc<T>>(v[e]);
    }
  }
};

// The share of lane `lane` of `lanes` threads in reducing in[base + j], j in [r0, r1), a
// contiguous run: what AccumulateStrided computes with stride 1, with the loads of a GPU's
// bandwidth. From the first 16-byte boundary on, the run is read in 16-byte pieces, each lane
// taking every lanes-th piece, four pieces in flight (four times the bytes per load of
// AccumulateStrided); the elements before that boundary and after the last whole piece go one
// per lane. Each accumulator meets ascending positions, as Step requires; a0 takes the head,
// its share of the pieces and the tail, in that order.
template <typename T, typename F>
TENSORD_HD typename F::Acc AccumulateContiguous(const F& f, const T* in, int64_t base,
                                                int64_t r0, int64_t r1, int64_t lane,
                                                int64_t lanes) {
  using Acc = typename F::Acc;
  using Piece = Piece16<T>;
  constexpr int64_t kPer = Piece::kCount;
  const T* row = in + base;
  const uintptr_t at = reinterpret_cast<uintptr_t>(row + r0);
  if (at % sizeof(T) != 0) return AccumulateStrided<T>(f, in, base, 1, r0 + lane, r1, lanes);
  const int64_t skip = static_cast<int64_t>((16 - at % 16) % 16 / sizeof(T));
  const int64_t head_end = r0 + skip < r1 ? r0 + skip : r1;
  const int64_t pieces = (r1 - head_end) / kPer;
  const int64_t tail = head_end + pieces * kPer;
  const Piece* p = reinterpret_cast<const Piece*>(row + head_end);
  Acc a0 = f.Init(), a1 = f.Init(), a2 = f.Init(), a3 = f.Init();
  for (int64_t j = r0 + lane; j < head_end; j += lanes) a0 = f.Step(a0, LoadCalc(row + j), j);
  int64_t v = lane;
  for (; v + 3 * lanes < pieces; v += 4 * lanes) {
    const Piece x0 = p[v], x1 = p[v + lanes], x2 = p[v + 2 * lanes], x3 = p[v + 3 * lanes];
    const int64_t j0 = head_end + v * kPer, jl = lanes * kPer;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int e = 0; e < kPer; ++e) {
      a0 = f.Step(a0, x0.At(e), j0 + e);
      a1 = f.Step(a1, x1.At(e), j0 + jl + e);
      a2 = f.Step(a2, x2.At(e), j0 + 2 * jl + e);
      a3 = f.Step(a3, x3.At(e), j0 + 3 * jl + e);
    }
  }
  for (; v < pieces; v += lanes) {
    const Piece x = p[v];
    for (int e = 0; e < kPer; ++e) a0 = f.Step(a0, x.At(e), head_end + v * kPer + e);
  }
  for (int64_t j = tail + lane; j < r1; j += lanes) a0 = f.Step(a0, LoadCalc(row + j), j);
  return f.Combine(f.Combine(a0, a1), f.Combine(a2, a3));
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_REDUCE_FUNCTORS_H_
