// The binary elementwise ops: one functor per op, written once, run by the CPU loops
// (engine/cpu/binary_kernels.cc) and the CUDA kernels (engine/cuda/elementwise_kernels.cu).
// Semantics are torch 1.13's CPU ones. Inputs arrive in the compute dtype T (computed in
// Calc<T>); the planner has checked that the op supports T.
#ifndef TENSORD_ENGINE_KERNELS_BINARY_OPS_H_
#define TENSORD_ENGINE_KERNELS_BINARY_OPS_H_

#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "engine/core/host_device.h"
#include "engine/kernels/element_math.h"
#include "engine/kernels/unary_ops.h"
#include "engine/core/scalar.h"

namespace tensord::engine {

enum class BinaryOp {
  kAdd, kSub, kMul, kDiv, kDivTrunc, kDivFloor, kRemainder, kFmod, kPow, kMaximum, kMinimum,
  kFmax, kFmin, kAtan2, kHypot, kCopysign, kBitAnd, kBitOr, kBitXor, kLshift, kRshift,
  kLogicalAnd, kLogicalOr, kLogicalXor, kEq, kNe, kLt, kLe, kGt, kGe, kXlogy,
  kLogAddExp, kLogAddExp2, kNextafter, kHeaviside, kGcd, kLcm, kIgamma, kIgammac,
  kXlog1py, kZeta,
  // torch.special's orthogonal polynomials of x (self) and the degree n (other).
  kChebyshevT, kChebyshevU, kChebyshevV, kChebyshevW, kShiftedChebyshevT, kShiftedChebyshevU,
  kShiftedChebyshevV, kShiftedChebyshevW, kHermiteH, kHermiteHe, kLaguerreL, kLegendreP,
  // The pointwise losses (engine/ops/loss_ops.cc); smooth_l1's beta and huber's delta ride in
  // alpha.
  kMseLoss, kSmoothL1Loss, kHuberLoss, kBinaryCrossEntropy,
};

namespace binary {

// a + alpha * b and a - alpha * b (alpha 1 is the plain operation).
template <typename T>
struct Add {
  using C = Calc<T>;
  C alpha;
  bool scaled;
  TENSORD_HD C operator()(C x, C y) const {
    if constexpr (std::is_same_v<T, bool>) {
      return scaled ? (x + alpha * y) != 0 : (x + y) != 0;
    } else {
      return scaled ? WrapAdd(x, WrapMul(alpha, y)) : WrapAdd(x, y);
    }
  }
};
template <typename T>
struct Sub {
  using C = Calc<T>;
  C alpha;
  bool scaled;
  TENSORD_HD C operator()(C x, C y) const {
    return scaled ? WrapSub(x, WrapMul(alpha, y)) : WrapSub(x, y);
  }
};
template <typename T>
struct Mul {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    if constexpr (std::is_same_v<T, bool>) return x && y;
    else return WrapMul(x, y);
  }
};

#define TENSORD_BINARY_TO_BOOL(Name, expr)                              \
  template <typename T>                                                 \
  struct Name {                                                         \
    using C = Calc<T>;                                                  \
    TENSORD_HD bool operator()(C x, C y) const { return (expr); }       \
  };
TENSORD_BINARY_TO_BOOL(Eq, x == y)
TENSORD_BINARY_TO_BOOL(Ne, x != y)
TENSORD_BINARY_TO_BOOL(Lt, x < y)
TENSORD_BINARY_TO_BOOL(Le, x <= y)
TENSORD_BINARY_TO_BOOL(Gt, x > y)
TENSORD_BINARY_TO_BOOL(Ge, x >= y)
TENSORD_BINARY_TO_BOOL(LogicalAnd, x != C(0) && y != C(0))
TENSORD_BINARY_TO_BOOL(LogicalOr, x != C(0) || y != C(0))
TENSORD_BINARY_TO_BOOL(LogicalXor, (x != C(0)) != (y != C(0)))
#undef TENSORD_BINARY_TO_BOOL

#define TENSORD_BINARY_SAME(Name, expr)                                 \
  template <typename T>                                                 \
  struct Name {                                                         \
    using C = Calc<T>;                                                  \
    TENSORD_HD C operator()(C x, C y) const { return (expr); }          \
  };
// maximum/minimum propagate NaN; fmax/fmin ignore it.
TENSORD_BINARY_SAME(MaximumFloat, x != x ? x : (y != y ? y : (x > y ? x : y)))
TENSORD_BINARY_SAME(MinimumFloat, x != x ? x : (y != y ? y : (x < y ? x : y)))
TENSORD_BINARY_SAME(Larger, x > y ? x : y)
TENSORD_BINARY_SAME(Smaller, x < y ? x : y)
TENSORD_BINARY_SAME(Fmax, std::fmax(x, y))
TENSORD_BINARY_SAME(Fmin, std::fmin(x, y))
TENSORD_BINARY_SAME(Div, x / y)
TENSORD_BINARY_SAME(DivTruncFloat, std::trunc(R<T>(x / y)))
TENSORD_BINARY_SAME(DivFloorFloatOp, (DivFloorFloat<T>(x, y)))
TENSORD_BINARY_SAME(FmodFloat, std::fmod(x, y))
TENSORD_BINARY_SAME(PowFloat, std::pow(x, y))
TENSORD_BINARY_SAME(Atan2, std::atan2(x, y))
TENSORD_BINARY_SAME(Hypot, std::hypot(x, y))
TENSORD_BINARY_SAME(Copysign, std::copysign(x, y))
TENSORD_BINARY_SAME(DivTruncIntOp, DivTruncInt(x, y))
TENSORD_BINARY_SAME(DivFloorIntOp, DivFloorInt(x, y))
TENSORD_BINARY_SAME(FmodInt, ModInt(x, y))
TENSORD_BINARY_SAME(PowInt, PowIntInt(x, y))
TENSORD_BINARY_SAME(BitAnd, static_cast<C>(x & y))
TENSORD_BINARY_SAME(BitOr, static_cast<C>(x | y))
TENSORD_BINARY_SAME(BitXor, static_cast<C>(x ^ y))
TENSORD_BINARY_SAME(BoolAnd, x && y)
TENSORD_BINARY_SAME(BoolOr, x || y)
TENSORD_BINARY_SAME(BoolXor, x != y)
#undef TENSORD_BINARY_SAME

template <typename T>
struct RemainderFloat {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    C mod = R<T>(std::fmod(x, y));
    if (mod != 0 && (y < 0) != (mod < 0)) mod += y;
    return mod;
  }
};
template <typename T>
struct RemainderInt {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    C r = ModInt(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
    return r;
  }
};

// Shifts behave as torch 1.13's do on x86: the count is taken modulo the width of the promoted
// operand (int for narrower types), so 1 << 70 is 64 for int64.
template <typename T>
struct Lshift {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    using P = decltype(+x);
    constexpr int kBits = sizeof(P) * CHAR_BIT;
    const int n = static_cast<int>(static_cast<int64_t>(y) & (kBits - 1));
    return static_cast<C>(static_cast<std::make_unsigned_t<P>>(static_cast<P>(x)) << n);
  }
};
template <typename T>
struct Rshift {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    using P = decltype(+x);
    constexpr int kBits = sizeof(P) * CHAR_BIT;
    const int n = static_cast<int>(static_cast<int64_t>(y) & (kBits - 1));
    return static_cast<C>(static_cast<P>(x) >> n);
  }
};

// x * log(y), 0 where x is 0, NaN where y is NaN (torch.xlogy).
template <typename T>
struct Xlogy {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    if (y != y) return y;
    if (x == C(0)) return C(0);
    return x * std::log(y);
  }
};

// x * log1p(y), 0 where x is 0, NaN where y is NaN (torch.special.xlog1py).
template <typename T>
struct Xlog1py {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    if (y != y) return y;
    if (x == C(0)) return C(0);
    return x * std::log1p(y);
  }
};

// The Hurwitz zeta function sum over k of (k + q)^-x (torch.special.zeta), in double.
template <typename T>
struct Zeta {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C q) const {
    return static_cast<C>(HurwitzZeta(static_cast<double>(x), static_cast<double>(q)));
  }
};

// The orthogonal polynomials of special_functions.h at x, of degree n (truncated toward zero;
// NaN and infinite degrees are negative ones, as torch converts them).
#define TENSORD_BINARY_POLYNOMIAL(Name)                                                  \
  template <typename T>                                                                 \
  struct Name##Polynomial {                                                             \
    using C = Calc<T>;                                                                  \
    TENSORD_HD C operator()(C x, C n) const { return Name<C>(x, PolynomialDegree(n)); } \
  };
TENSORD_BINARY_POLYNOMIAL(ChebyshevT)
TENSORD_BINARY_POLYNOMIAL(ChebyshevU)
TENSORD_BINARY_POLYNOMIAL(ChebyshevV)
TENSORD_BINARY_POLYNOMIAL(ChebyshevW)
TENSORD_BINARY_POLYNOMIAL(ShiftedChebyshevT)
TENSORD_BINARY_POLYNOMIAL(ShiftedChebyshevU)
TENSORD_BINARY_POLYNOMIAL(ShiftedChebyshevV)
TENSORD_BINARY_POLYNOMIAL(ShiftedChebyshevW)
TENSORD_BINARY_POLYNOMIAL(HermiteH)
TENSORD_BINARY_POLYNOMIAL(HermiteHe)
TENSORD_BINARY_POLYNOMIAL(LaguerreL)
TENSORD_BINARY_POLYNOMIAL(LegendreP)
#undef TENSORD_BINARY_POLYNOMIAL

// log(exp(x) + exp(y)) and log2(2^x + 2^y) without overflow; equal infinities give
// themselves (as torch's logaddexp kernels).
template <typename T>
struct LogAddExp {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    if (std::isinf(x) && x == y) return x;
    const C m = x < y ? y : x;
    return m + std::log1p(std::exp(-std::abs(x - y)));
  }
};
template <typename T>
struct LogAddExp2 {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    if (std::isinf(x) && x == y) return x;
    const C m = x < y ? y : x;
    return m + std::log1p(std::exp2(-std::abs(x - y))) * C(1.4426950408889634);
  }
};
// The next value of T after x towards y; for bfloat16 a step of its own 16 bits (the float
// that carries it holds every bfloat16 exactly).
template <typename T>
struct Nextafter {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    if constexpr (std::is_same_v<T, BFloat16>) {
      if (x != x || y != y) return x + y;
      if (x == y) return y;
      uint32_t bits;
      if (x == C(0)) {
        bits = (detail::FloatBits(y) & 0x80000000u) | 0x10000u;  // the least subnormal
      } else {
        const bool away = (x < y) == (x > C(0));  // away from zero
        bits = away ? detail::FloatBits(x) + 0x10000u : detail::FloatBits(x) - 0x10000u;
      }
      return detail::BitsFloat(bits);
    } else {
      return std::nextafter(x, y);
    }
  }
};
// The regularized incomplete gamma functions P(a, x) = gamma(a, x) / Gamma(a) (igamma) and
// Q(a, x) = 1 - P(a, x) (igammac), in double whatever T, with torch's (SciPy's) values at the
// edges. Inside, for a > 0 and x > 0 finite:
// - a > 1e4 with x within 0.3 a of a: Temme's uniform asymptotic expansion (DLMF 8.12.3 and
//   8.12.4, uniform in x / a) to its second term, whose relative error there is below 1e-10
//   (the series and the fraction would need O(sqrt(a)) terms near a);
// - Q for x <= 1.1 and small a (Q small next to P): the series of Q itself;
// - else x < a + 1: the power series of P (Q = 1 - P);
// - else Legendre's continued fraction of Q by the modified Lentz method (P = 1 - Q).
// Series and fraction stop at 1e-16 relative change or after 10000 terms.
namespace igamma {

constexpr int kMaxTerms = 10000;

// ln Gamma(1 + a), accurate for tiny a too (where 1 + a rounds to 1): -gamma a + zeta(2) a^2 / 2
// below 1e-5 (the next term, zeta(3) a^3 / 3, is below 1e-15 of it there).
TENSORD_HD inline double LogGammaOnePlus(double a) {
  if (std::fabs(a) < 1e-5) {
    constexpr double kEulerGamma = 0.57721566490153286;
    constexpr double kHalfZeta2 = 0.82246703342411321;  // pi^2 / 12
    return a * (-kEulerGamma + a * kHalfZeta2);
  }
  return std::lgamma(1.0 + a);
}

// ln(x^a e^-x / Gamma(a)). Its terms are of size a ln x: for large a they would cancel to a few
// units, losing a ln x ulps, so there Stirling's series is folded in:
// a ln x - x - ln Gamma(a) = a (ln(1 + t) - t) + ln(a / 2 pi) / 2 - S(a), t = (x - a) / a,
// S(a) = 1 / 12a - 1 / 360a^3 + 1 / 1260a^5 - 1 / 1680a^7 (the next term is below 1e-12 at 10).
TENSORD_HD inline double LogPrefix(double a, double x) {
  if (a < 10) return a * std::log(x) - x - std::lgamma(a);
  const double t = (x - a) / a;
  const double ia = 1.0 / a, ia2 = ia * ia;
  const double s =
      ia * (1.0 / 12.0 - ia2 * (1.0 / 360.0 - ia2 * (1.0 / 1260.0 - ia2 * (1.0 / 1680.0))));
  constexpr double kTwoPi = 6.283185307179586;
  return a * (std::log1p(t) - t) + 0.5 * std::log(a / kTwoPi) - s;
}

// x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)) = P(a, x).
TENSORD_HD inline double LowerSeries(double a, double x) {
  double term = 1.0, sum = 1.0;
  for (int n = 1; n < kMaxTerms; ++n) {
    term *= x / (a + n);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  // x^a e^-x / Gamma(a + 1): for small a through ln Gamma(1 + a), exact for tiny a too.
  const double log_prefix =
      a < 10 ? a * std::log(x) - x - LogGammaOnePlus(a) : LogPrefix(a, x) - std::log(a);
  return sum * std::exp(log_prefix);
}

// Q(a, x) for small x where Q is small next to P (1 - P would cancel): from
// gamma(a, x) = x^a sum_n (-x)^n / (n! (a + n)),
// Q = -expm1(a ln x - ln Gamma(a + 1)) - x^a / Gamma(a) sum_{n >= 1} (-x)^n / (n! (a + n)).
TENSORD_HD inline double UpperSeries(double a, double x) {
  double term = 1.0, sum = 0.0;
  for (int n = 1; n < kMaxTerms; ++n) {
    term *= -x / n;
    const double t = term / (a + n);
    sum += t;
    if (std::fabs(t) <= std::fabs(sum) * 1e-17) break;
  }
  const double log_x = std::log(x);
  return -std::expm1(a * log_x - LogGammaOnePlus(a)) - std::exp(a * log_x - std::lgamma(a)) * sum;
}

// x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))) =
// Q(a, x).
TENSORD_HD inline double UpperFraction(double a, double x) {
  constexpr double kTiny = 1e-300;
  double b = x + 1.0 - a;
  double c = 1.0 / kTiny, d = 1.0 / b, h = d;
  for (int i = 1; i < kMaxTerms; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(LogPrefix(a, x)) * h;
}

// Q(a, x) (or P with `lower`) for large a and x near a: with lambda = x / a and
// eta = sign(lambda - 1) sqrt(2 (lambda - 1 - ln lambda)),
// Q = erfc(eta sqrt(a / 2)) / 2 + e^(-a eta^2 / 2) / sqrt(2 pi a) (c0(eta) + c1(eta) / a),
// c0 = 1 / (lambda - 1) - 1 / eta and c1 = 1 / eta^3 - 1 / (lambda - 1)^3 - 1 / (lambda - 1)^2
// - 1 / (12 (lambda - 1)); near eta = 0, where those cancel, their Taylor series in eta.
TENSORD_HD inline double UniformAsymptotic(double a, double x, bool lower) {
  const double lambda = x / a, mu = lambda - 1.0;
  // lambda - 1 - ln(lambda) without cancellation: mu - log1p(mu).
  const double half_eta2 = mu - std::log1p(mu);
  double eta = std::sqrt(2.0 * half_eta2);
  if (mu < 0) eta = -eta;
  double c0, c1;
  if (std::fabs(eta) < 1e-2) {
    c0 = -1.0 / 3.0 + eta * (1.0 / 12.0 + eta * (-2.0 / 135.0 + eta * (1.0 / 864.0)));
    c1 = -1.0 / 540.0 + eta * (-1.0 / 288.0 + eta * (1.0 / 378.0));
  } else {
    c0 = 1.0 / mu - 1.0 / eta;
    c1 = 1.0 / (eta * eta * eta) - 1.0 / (mu * mu * mu) - 1.0 / (mu * mu) - 1.0 / (12.0 * mu);
  }
  constexpr double kSqrt2Pi = 2.5066282746310002;
  const double r = std::exp(-a * half_eta2) / (kSqrt2Pi * std::sqrt(a)) * (c0 + c1 / a);
  const double s = eta * std::sqrt(a / 2.0);
  return lower ? 0.5 * std::erfc(-s) - r : 0.5 * std::erfc(s) + r;
}

// P(a, x) (lower) or Q(a, x).
TENSORD_HD inline double Regularized(double a, double x, bool lower) {
  if (x < 0 || a < 0) return NAN;
  if (a == 0) return x > 0 ? (lower ? 1.0 : 0.0) : NAN;
  if (x == 0) return lower ? 0.0 : 1.0;
  if (std::isinf(a)) return std::isinf(x) ? NAN : (lower ? 0.0 : 1.0);
  if (std::isinf(x)) return lower ? 1.0 : 0.0;
  if (a != a || x != x) return NAN;
  if (a > 1e4 && std::fabs(x - a) < 0.3 * a) return UniformAsymptotic(a, x, lower);
  // Small x and a with Q the small one: its own series (as Cephes decides, by where P < Q).
  if (!lower && x <= 1.1 && (x <= 0.5 ? a <= -0.4 / std::log(x) : a <= 1.1 * x)) {
    return UpperSeries(a, x);
  }
  if (x < a + 1.0) {
    const double p = LowerSeries(a, x);
    return lower ? p : 1.0 - p;
  }
  const double q = UpperFraction(a, x);
  return lower ? 1.0 - q : q;
}

}  // namespace igamma

template <typename T>
struct Igamma {
  using C = Calc<T>;
  TENSORD_HD C operator()(C a, C x) const {
    return static_cast<C>(igamma::Regularized(static_cast<double>(a), static_cast<double>(x),
                                              /*lower=*/true));
  }
};
template <typename T>
struct Igammac {
  using C = Calc<T>;
  TENSORD_HD C operator()(C a, C x) const {
    return static_cast<C>(igamma::Regularized(static_cast<double>(a), static_cast<double>(x),
                                              /*lower=*/false));
  }
};

// 0 for x < 0, y for x == 0, 1 for x > 0 (NaN gives 0, as torch's).
template <typename T>
struct Heaviside {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const { return x == C(0) ? y : static_cast<C>(x > C(0)); }
};
// Greatest common divisor and least common multiple of integers, non-negative (torch's
// calc_gcd; the magnitudes wrap as its int arithmetic does at the type's minimum).
template <typename T>
TENSORD_HD inline Calc<T> GcdOf(Calc<T> a, Calc<T> b) {
  using C = Calc<T>;
  a = a < C(0) ? WrapSub(C(0), a) : a;
  b = b < C(0) ? WrapSub(C(0), b) : b;
  while (a != C(0)) {
    const C c = a;
    a = ModInt(b, a);  // the minimum's magnitude wraps to itself: never MIN % -1's trap
    b = c;
  }
  return b;
}
template <typename T>
struct Gcd {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const { return GcdOf<T>(x, y); }
};
template <typename T>
struct Lcm {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    const C g = GcdOf<T>(x, y);
    if (g == C(0)) return C(0);
    const C v = WrapMul(DivTruncInt(x, g), y);  // g is -1 when a magnitude wrapped
    return v < C(0) ? WrapSub(C(0), v) : v;
  }
};

// The pointwise losses, as ATen's CPU kernels (aten/src/ATen/native/cpu/*Loss*): the loss of
// one element given input x and target y.
template <typename T>
struct MseLoss {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    const C d = x - y;
    return d * d;
  }
};
template <typename T>
struct SmoothL1Loss {
  using C = Calc<T>;
  C beta;
  TENSORD_HD C operator()(C x, C y) const {
    const C z = std::abs(x - y);
    return z < beta ? C(0.5) * z * z / beta : z - C(0.5) * beta;
  }
};
template <typename T>
struct HuberLoss {
  using C = Calc<T>;
  C delta;
  TENSORD_HD C operator()(C x, C y) const {
    const C z = std::abs(x - y);
    return z < delta ? C(0.5) * z * z : delta * (z - C(0.5) * delta);
  }
};
// -(y log(x) + (1 - y) log(1 - x)), each log clamped at -100 so that 0 * log(0) stays finite.
// x outside [0, 1] is refused before the kernel runs (Backend::CheckValues).
template <typename T>
struct BinaryCrossEntropy {
  using C = Calc<T>;
  TENSORD_HD C operator()(C x, C y) const {
    C log_x = std::log(x), log_1mx = std::log1p(-x);
    if (log_x < C(-100)) log_x = C(-100);
    if (log_1mx < C(-100)) log_1mx = C(-100);
    return (y - C(1)) * log_1mx - y * log_x;
  }
};

}  // namespace binary

// add/sub's alpha in the compute type of T.
template <typename T>
Calc<T> BinaryAlpha(const Scalar& s) {
  if constexpr (kIsFloat<T>) return static_cast<Calc<T>>(s.to_double());
  else if constexpr (std::is_same_v<T, bool>) return s.to_bool();
  else return static_cast<T>(s.to_int());
}

// Whether add/sub's alpha leaves b unscaled (torch's fast path; a bool alpha scales add).
inline bool BinaryAlphaIsOne(BinaryOp op, const Scalar& alpha) {
  return alpha.to_double() == 1 && !(op == BinaryOp::kAdd && alpha.is_bool());
}

// Calls fn(functor, Out{}) with the functor of `op` for inputs of type T and the output's type
// (T, or bool for comparisons and logical ops). Ops that T does not support call nothing (the
// planner refuses them first). `alpha` scales b for add and sub; `alpha_value` is it in Calc<T>.
template <typename T, typename Fn>
void VisitBinary(BinaryOp op, Calc<T> alpha_value, bool alpha_is_one, Fn&& fn) {
  using namespace binary;  // NOLINT: the functors of this header
  switch (op) {
    case BinaryOp::kAdd: return fn(Add<T>{alpha_value, !alpha_is_one}, T{});
    case BinaryOp::kSub:
      if constexpr (!std::is_same_v<T, bool>) return fn(Sub<T>{alpha_value, !alpha_is_one}, T{});
      else return;
    case BinaryOp::kMul: return fn(Mul<T>{}, T{});
    case BinaryOp::kEq: return fn(Eq<T>{}, bool{});
    case BinaryOp::kNe: return fn(Ne<T>{}, bool{});
    case BinaryOp::kLt: return fn(Lt<T>{}, bool{});
    case BinaryOp::kLe: return fn(Le<T>{}, bool{});
    case BinaryOp::kGt: return fn(Gt<T>{}, bool{});
    case BinaryOp::kGe: return fn(Ge<T>{}, bool{});
    case BinaryOp::kLogicalAnd: return fn(LogicalAnd<T>{}, bool{});
    case BinaryOp::kLogicalOr: return fn(LogicalOr<T>{}, bool{});
    case BinaryOp::kLogicalXor: return fn(LogicalXor<T>{}, bool{});
    case BinaryOp::kMaximum:
      if constexpr (kIsFloat<T>) return fn(MaximumFloat<T>{}, T{});
      else return fn(Larger<T>{}, T{});
    case BinaryOp::kMinimum:
      if constexpr (kIsFloat<T>) return fn(MinimumFloat<T>{}, T{});
      else return fn(Smaller<T>{}, T{});
    case BinaryOp::kFmax:
      if constexpr (kIsFloat<T>) return fn(Fmax<T>{}, T{});
      else return fn(Larger<T>{}, T{});
    case BinaryOp::kFmin:
      if constexpr (kIsFloat<T>) return fn(Fmin<T>{}, T{});
      else return fn(Smaller<T>{}, T{});
    default: break;
  }
  if constexpr (kIsFloat<T>) {
    switch (op) {
      case BinaryOp::kDiv: return fn(Div<T>{}, T{});
      case BinaryOp::kDivTrunc: return fn(DivTruncFloat<T>{}, T{});
      case BinaryOp::kDivFloor: return fn(DivFloorFloatOp<T>{}, T{});
      case BinaryOp::kRemainder: return fn(RemainderFloat<T>{}, T{});
      case BinaryOp::kFmod: return fn(FmodFloat<T>{}, T{});
      case BinaryOp::kPow: return fn(PowFloat<T>{}, T{});
      case BinaryOp::kAtan2: return fn(Atan2<T>{}, T{});
      case BinaryOp::kHypot: return fn(Hypot<T>{}, T{});
      case BinaryOp::kCopysign: return fn(Copysign<T>{}, T{});
      case BinaryOp::kXlogy: return fn(Xlogy<T>{}, T{});
      case BinaryOp::kLogAddExp: return fn(LogAddExp<T>{}, T{});
      case BinaryOp::kLogAddExp2: return fn(LogAddExp2<T>{}, T{});
      case BinaryOp::kNextafter: return fn(Nextafter<T>{}, T{});
      case BinaryOp::kIgamma: return fn(Igamma<T>{}, T{});
      case BinaryOp::kIgammac: return fn(Igammac<T>{}, T{});
      case BinaryOp::kXlog1py: return fn(Xlog1py<T>{}, T{});
      case BinaryOp::kZeta: return fn(Zeta<T>{}, T{});
      case BinaryOp::kChebyshevT: return fn(ChebyshevTPolynomial<T>{}, T{});
      case BinaryOp::kChebyshevU: return fn(ChebyshevUPolynomial<T>{}, T{});
      case BinaryOp::kChebyshevV: return fn(ChebyshevVPolynomial<T>{}, T{});
      case BinaryOp::kChebyshevW: return fn(ChebyshevWPolynomial<T>{}, T{});
      case BinaryOp::kShiftedChebyshevT: return fn(ShiftedChebyshevTPolynomial<T>{}, T{});
      case BinaryOp::kShiftedChebyshevU: return fn(ShiftedChebyshevUPolynomial<T>{}, T{});
      case BinaryOp::kShiftedChebyshevV: return fn(ShiftedChebyshevVPolynomial<T>{}, T{});
      case BinaryOp::kShiftedChebyshevW: return fn(ShiftedChebyshevWPolynomial<T>{}, T{});
      case BinaryOp::kHermiteH: return fn(HermiteHPolynomial<T>{}, T{});
      case BinaryOp::kHermiteHe: return fn(HermiteHePolynomial<T>{}, T{});
      case BinaryOp::kLaguerreL: return fn(LaguerreLPolynomial<T>{}, T{});
      case BinaryOp::kLegendreP: return fn(LegendrePPolynomial<T>{}, T{});
      case BinaryOp::kHeaviside: return fn(Heaviside<T>{}, T{});
      case BinaryOp::kMseLoss: return fn(MseLoss<T>{}, T{});
      case BinaryOp::kSmoothL1Loss: return fn(SmoothL1Loss<T>{alpha_value}, T{});
      case BinaryOp::kHuberLoss: return fn(HuberLoss<T>{alpha_value}, T{});
      case BinaryOp::kBinaryCrossEntropy: return fn(BinaryCrossEntropy<T>{}, T{});
      default: return;
    }
  } else if constexpr (kIsInt<T>) {
    switch (op) {
      case BinaryOp::kDivTrunc: return fn(DivTruncIntOp<T>{}, T{});
      case BinaryOp::kDivFloor: return fn(DivFloorIntOp<T>{}, T{});
      case BinaryOp::kRemainder: return fn(RemainderInt<T>{}, T{});
      case BinaryOp::kFmod: return fn(FmodInt<T>{}, T{});
      case BinaryOp::kPow: return fn(PowInt<T>{}, T{});
      case BinaryOp::kBitAnd: return fn(BitAnd<T>{}, T{});
      case BinaryOp::kBitOr: return fn(BitOr<T>{}, T{});
      case BinaryOp::kBitXor: return fn(BitXor<T>{}, T{});
      case BinaryOp::kLshift: return fn(Lshift<T>{}, T{});
      case BinaryOp::kRshift: return fn(Rshift<T>{}, T{});
      case BinaryOp::kGcd: return fn(Gcd<T>{}, T{});
      case BinaryOp::kLcm: return fn(Lcm<T>{}, T{});
      case BinaryOp::kHeaviside: return fn(Heaviside<T>{}, T{});
      default: return;
    }
  } else {  // bool
    switch (op) {
      case BinaryOp::kBitAnd: return fn(BoolAnd<T>{}, T{});
      case BinaryOp::kBitOr: return fn(BoolOr<T>{}, T{});
      case BinaryOp::kBitXor: return fn(BoolXor<T>{}, T{});
      case BinaryOp::kHeaviside: return fn(Heaviside<T>{}, T{});
      default: return;
    }
  }
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_BINARY_OPS_H_
