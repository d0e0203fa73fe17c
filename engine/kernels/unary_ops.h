// The unary elementwise ops: one function per op, written once, run by the CPU loops
// (engine/cpu/unary_kernels.cc) and the CUDA kernels (engine/cuda/elementwise_kernels.cu).
// Semantics are torch 1.13's CPU ones; inputs arrive in the compute dtype T.
#ifndef TENSORD_ENGINE_KERNELS_UNARY_OPS_H_
#define TENSORD_ENGINE_KERNELS_UNARY_OPS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "engine/core/host_device.h"
#include "engine/kernels/element_math.h"
#include "engine/kernels/special_functions.h"
#include "engine/core/scalar.h"

namespace tensord::engine {

enum class UnaryOp {
  kNeg, kAbs, kSign, kSgn, kExp, kExp2, kExpm1, kLog, kLog1p, kLog2, kLog10, kSqrt, kRsqrt,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kTanh, kErf, kSigmoid, kRelu, kGelu,
  kGeluTanh, kSilu, kFloor, kCeil, kRound, kTrunc, kFrac, kReciprocal, kLogicalNot, kBitwiseNot,
  kIsnan, kIsinf, kIsposinf, kIsneginf, kIsfinite, kSignbit, kNanToNum, kClamp, kPowScalar,
  kRoundDecimals, kLeakyRelu,
  // Special functions.
  kAcosh, kAsinh, kAtanh, kErfc, kErfinv, kLgamma, kDigamma, kSinc, kDeg2Rad, kRad2Deg, kLogit,
  kI0, kPolygamma,  // polygamma's order n rides in args.a
  kEntr, kNdtr,     // torch.special
  kI0e, kI1, kI1e, kNdtri, kLogNdtr, kErfcx, kBesselJ0, kBesselJ1, kBesselY0, kBesselY1,
  kModifiedBesselI0, kModifiedBesselI1, kModifiedBesselK0, kModifiedBesselK1,
  kScaledModifiedBesselK0, kScaledModifiedBesselK1, kSphericalBesselJ0, kAiryAi,
  // Activations (nn.functional).
  kSoftplus, kElu, kHardsigmoid, kHardswish, kMish, kLogSigmoid, kHardshrink, kSoftshrink,
};

// Extra arguments: clamp (lo/hi, each optional), nan_to_num (nan, posinf, neginf), pow's
// exponent, round's decimals, leaky_relu's slope, logit's eps (optional), softplus's beta and
// threshold, elu's alpha, scale and input_scale, the shrinks' lambda.
struct UnaryArgs {
  Scalar a, b, c;
  bool has_a = false, has_b = false, has_c = false;
};

template <typename T>
inline Calc<T> UnaryScalarAs(const Scalar& s) {
  if constexpr (kIsFloat<T>) {
    return static_cast<Calc<T>>(s.to_double());
  } else if constexpr (std::is_same_v<T, bool>) {
    return s.to_bool();
  } else {
    return static_cast<T>(s.to_int());
  }
}

// The largest finite value of T (float16/bfloat16 have their own).
template <typename T>
inline Calc<T> MaxFiniteOf() {
  if constexpr (std::is_same_v<T, Half>) return 65504.0f;
  else if constexpr (std::is_same_v<T, BFloat16>) return 3.38953139e38f;
  else return std::numeric_limits<T>::max();
}

// torch's calc_erfinv: a rational first guess, then two Newton steps on erf.
template <typename C>
TENSORD_HD inline C Erfinv(C y) {
  const C y_abs = y < C(0) ? -y : y;
  if (y_abs > C(1)) return std::numeric_limits<C>::quiet_NaN();
  if (y_abs == C(1)) return std::copysign(std::numeric_limits<C>::infinity(), y);
  C x;
  if (y_abs <= C(0.7)) {
    const C z = y * y;
    const C num = ((C(-0.140543331) * z + C(0.914624893)) * z + C(-1.645349621)) * z + C(0.886226899);
    const C dem = (((C(0.012229801) * z + C(-0.329097515)) * z + C(1.442710462)) * z + C(-2.118377725)) * z + C(1);
    x = y * num / dem;
  } else {
    const C z = std::sqrt(-std::log((C(1) - y_abs) / C(2)));
    const C num = ((C(1.641345311) * z + C(3.429567803)) * z + C(-1.624906493)) * z + C(-1.970840454);
    const C dem = (C(1.637067800) * z + C(3.543889200)) * z + C(1);
    x = std::copysign(num, y) / dem;
  }
  const C two_over_sqrt_pi = C(1.128379167095512573896158903121545171688);
  x = x - (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
  x = x - (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
  return x;
}

// torch's calc_digamma for x > 0: the recurrence up to 10, then the asymptotic series.
template <typename C>
TENSORD_HD inline C DigammaPositive(C x) {
  C result = 0;
  while (x < C(10)) {
    result -= C(1) / x;
    x += C(1);
  }
  if (x == C(10)) return result + C(2.25175258906672110764);
  const C z = C(1) / (x * x);
  const C poly = ((((((C(8.33333333333333333333E-2) * z + C(-2.10927960927960927961E-2)) * z +
                      C(7.57575757575757575758E-3)) * z + C(-4.16666666666666666667E-3)) * z +
                    C(3.96825396825396825397E-3)) * z + C(-8.33333333333333333333E-3)) * z +
                  C(8.33333333333333333333E-2)) * z;
  return result + std::log(x) - C(0.5) / x - poly;
}

// torch's calc_digamma: a pole at 0, NaN at the negative integers, and below 0 the reflection
// with tan of pi times the fractional part (exact for large |x|, as torch takes it).
template <typename C>
TENSORD_HD inline C Digamma(C x) {
  if (x == C(0)) return std::copysign(std::numeric_limits<C>::infinity(), -x);
  if (x < C(0)) {
    if (x == std::trunc(x)) return std::numeric_limits<C>::quiet_NaN();
    const C pi = C(3.14159265358979323846);
    return DigammaPositive<C>(C(1) - x) - pi / std::tan(pi * (x - std::trunc(x)));
  }
  return DigammaPositive<C>(x);
}

// torch's calc_trigamma: the reflection below 1/2, six steps of the recurrence, then the
// asymptotic series.
template <typename C>
TENSORD_HD inline C Trigamma(C x) {
  C sign = C(1), result = C(0);
  const C pi = C(3.14159265358979323846);
  if (x < C(0.5)) {
    sign = C(-1);
    const C s = std::sin(pi * x);
    result -= (pi * pi) / (s * s);
    x = C(1) - x;
  }
  for (int i = 0; i < 6; ++i) {
    result += C(1) / (x * x);
    x += C(1);
  }
  const C ixx = C(1) / (x * x);
  result += (C(1) + C(1) / (C(2) * x) +
             ixx * (C(1) / C(6) - ixx * (C(1) / C(30) - ixx * (C(1) / C(42))))) / x;
  return sign * result;
}

// torch's zeta (Cephes): the Hurwitz zeta function sum over k of (k + q)^-x, by direct sum and
// the Euler-Maclaurin tail, in double as torch's CPU kernels compute it.
TENSORD_HD inline double HurwitzZeta(double x, double q) {
  const double machep = 1.11022302462515654042E-16;
  const double a[] = {12.0,
                      -720.0,
                      30240.0,
                      -1209600.0,
                      47900160.0,
                      -1.8924375803183791606e9,
                      7.47242496e10,
                      -2.950130727918164224e12,
                      1.1646782814350067249e14,
                      -4.5979787224074726105e15,
                      1.8152105401943546773e17,
                      -7.1661652561756670113e18};
  if (x == 1) return std::numeric_limits<double>::infinity();
  if (x < 1) return std::numeric_limits<double>::quiet_NaN();
  if (q <= 0) {
    if (q == std::floor(q)) return std::numeric_limits<double>::infinity();
    if (x != std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
    // The direct sum below steps q up to 9 one at a time: a kernel thread would spend |q|
    // steps (torch's does). Far below zero the answer is not worth a server's thread.
    if (q < -1e6) return std::numeric_limits<double>::quiet_NaN();
  }
  double s = std::pow(q, -x), w = q, b = 0;
  int i = 0;
  while (i < 9 || w <= 9.0) {
    i += 1;
    w += 1;
    b = std::pow(w, -x);
    s += b;
    if (-machep * s < b && b < machep * s) return s;
  }
  s += b * w / (x - 1);
  s -= 0.5 * b;
  double f = 1, k = 0;
  for (int j = 0; j < 12; ++j) {
    f *= x + k;
    b /= w;
    double t = f * b / a[j];
    s += t;
    t = std::fabs(t / s);
    if (t < machep) return s;
    k += 1;
    f *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

// torch's polygamma of order n: digamma, trigamma, else (-1)^(n+1) n! zeta(n + 1, x).
template <typename C>
TENSORD_HD inline C Polygamma(int64_t n, C x) {
  if (n == 0) return Digamma<C>(x);
  if (n == 1) return Trigamma<C>(x);
  const C one = C(1);
  return ((n % 2) ? one : -one) * std::exp(std::lgamma(static_cast<C>(n) + one)) *
         static_cast<C>(HurwitzZeta(static_cast<double>(n) + 1.0, static_cast<double>(x)));
}

template <typename T>
TENSORD_HD inline Calc<T> UnaryPowInt(Calc<T> base, int64_t exp) {
  Calc<T> result = 1;
  while (exp) {
    if (exp & 1) result = WrapMul<Calc<T>>(result, base);
    exp >>= 1;
    base = WrapMul<Calc<T>>(base, base);
  }
  return result;
}

// Calls fn(functor, Out{}) with the function of `op` for elements of type T and the output's
// type (T, or bool for the predicates). Ops that T does not support call nothing (the planner
// refuses them first). The functions are __host__ __device__ lambdas under nvcc.
template <typename T, typename Fn>
void VisitUnary(UnaryOp op, const UnaryArgs& args, Fn&& fn) {
  using C = Calc<T>;
  constexpr bool kFloat = kIsFloat<T>;
  const auto same = [&](auto f) { fn(f, T{}); };
  const auto to_bool = [&](auto f) { fn(f, bool{}); };
  switch (op) {
    case UnaryOp::kNeg:  // -x, not 0 - x: the negation of 0.0 is -0.0
      if constexpr (kFloat) same([] TENSORD_HD (C x) { return -x; });
      else if constexpr (!std::is_same_v<T, bool>) same([] TENSORD_HD (C x) { return WrapSub(C(0), x); });
      return;
    case UnaryOp::kAbs:
      if constexpr (kFloat) same([] TENSORD_HD (C x) { return std::fabs(x); });
      else if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) same([] TENSORD_HD (C x) { return x; });
      else same([] TENSORD_HD (C x) { return (x < 0 ? WrapSub(C(0), x) : x); });
      return;
    case UnaryOp::kSign:
    case UnaryOp::kSgn:
      if constexpr (std::is_same_v<T, bool>) same([] TENSORD_HD (C x) { return x; });
      else same([] TENSORD_HD (C x) { return static_cast<C>((C(0) < x) - (x < C(0))); });
      return;
    case UnaryOp::kSignbit:
      if constexpr (kFloat) to_bool([] TENSORD_HD (C x) { return std::signbit(x); });
      else if constexpr (std::is_signed_v<T>) to_bool([] TENSORD_HD (C x) { return x < 0; });
      else to_bool([] TENSORD_HD (C) { return false; });
      return;
    case UnaryOp::kRelu:
      if constexpr (!std::is_same_v<T, bool>) {
        if constexpr (kFloat) same([] TENSORD_HD (C x) { return x != x ? x : (x < C(0) ? C(0) : x); });
        else same([] TENSORD_HD (C x) { return x < C(0) ? C(0) : x; });
      }
      return;
    case UnaryOp::kLogicalNot: return to_bool([] TENSORD_HD (C x) { return !(x != C(0)); });
    case UnaryOp::kBitwiseNot:
      if constexpr (std::is_same_v<T, bool>) same([] TENSORD_HD (C x) { return !x; });
      else if constexpr (!kFloat) same([] TENSORD_HD (C x) { return static_cast<C>(~x); });
      return;
    case UnaryOp::kIsnan:
      if constexpr (kFloat) to_bool([] TENSORD_HD (C x) { return x != x; });
      else to_bool([] TENSORD_HD (C) { return false; });
      return;
    case UnaryOp::kIsinf:
      if constexpr (kFloat) to_bool([] TENSORD_HD (C x) { return std::isinf(x); });
      else to_bool([] TENSORD_HD (C) { return false; });
      return;
    case UnaryOp::kIsposinf:
      if constexpr (kFloat) to_bool([] TENSORD_HD (C x) { return std::isinf(x) && x > 0; });
      else to_bool([] TENSORD_HD (C) { return false; });
      return;
    case UnaryOp::kIsneginf:
      if constexpr (kFloat) to_bool([] TENSORD_HD (C x) { return std::isinf(x) && x < 0; });
      else to_bool([] TENSORD_HD (C) { return false; });
      return;
    case UnaryOp::kIsfinite:
      if constexpr (kFloat) to_bool([] TENSORD_HD (C x) { return std::isfinite(x); });
      else to_bool([] TENSORD_HD (C) { return true; });
      return;
    case UnaryOp::kClamp: {
      const bool has_lo = args.has_a, has_hi = args.has_b;
      const C lo = has_lo ? UnaryScalarAs<T>(args.a) : C(0);
      const C hi = has_hi ? UnaryScalarAs<T>(args.b) : C(0);
      if constexpr (kFloat) {
        same([=] TENSORD_HD (C x) {
          if (x != x) return x;
          if (has_lo) x = (lo != lo) ? lo : (x < lo ? lo : x);
          if (has_hi) x = (hi != hi) ? hi : (x > hi ? hi : x);
          return x;
        });
      } else {
        same([=] TENSORD_HD (C x) {
          if (has_lo && x < lo) x = lo;
          if (has_hi && x > hi) x = hi;
          return x;
        });
      }
      return;
    }
    case UnaryOp::kPowScalar: {
      if constexpr (kFloat) {
        // The exponent in the tensor's dtype first, as torch's pow_tensor_scalar (bfloat16's
        // 2.1 is 2.09375, its 257 is 256).
        double e = args.a.to_double();
        if constexpr (IsReducedFloat<T>::value) {
          e = static_cast<double>(static_cast<float>(T(static_cast<float>(e))));
        }
        if (e == 2) same([] TENSORD_HD (C x) { return x * x; });
        else if (e == 3) same([] TENSORD_HD (C x) { return x * x * x; });
        else if (e == 0.5) same([] TENSORD_HD (C x) { return std::sqrt(x); });
        else if (e == -0.5) same([] TENSORD_HD (C x) { return C(1) / std::sqrt(x); });
        else if (e == -1) same([] TENSORD_HD (C x) { return C(1) / x; });
        else if (e == -2) same([] TENSORD_HD (C x) { return C(1) / (x * x); });
        else {
          const C ec = static_cast<C>(e);
          same([ec] TENSORD_HD (C x) { return std::pow(x, ec); });
        }
      } else if constexpr (std::is_same_v<T, bool>) {
        const int64_t e = args.a.to_int();
        same([e] TENSORD_HD (C x) { return e == 0 ? true : x; });
      } else {
        const int64_t e = args.a.to_int();
        same([e] TENSORD_HD (C x) { return UnaryPowInt<T>(x, e); });
      }
      return;
    }
    case UnaryOp::kFloor:
      if constexpr (kFloat) same([] TENSORD_HD (C x) { return std::floor(x); });
      else same([] TENSORD_HD (C x) { return x; });
      return;
    case UnaryOp::kCeil:
      if constexpr (kFloat) same([] TENSORD_HD (C x) { return std::ceil(x); });
      else same([] TENSORD_HD (C x) { return x; });
      return;
    case UnaryOp::kRound:
      if constexpr (kFloat) same([] TENSORD_HD (C x) { return std::nearbyint(x); });
      else same([] TENSORD_HD (C x) { return x; });
      return;
    case UnaryOp::kTrunc:
      if constexpr (kFloat) same([] TENSORD_HD (C x) { return std::trunc(x); });
      else same([] TENSORD_HD (C x) { return x; });
      return;
    case UnaryOp::kNanToNum:
      if constexpr (kFloat) {
        const C nan = args.has_a ? static_cast<C>(args.a.to_double()) : C(0);
        const C pos = args.has_b ? static_cast<C>(args.b.to_double()) : MaxFiniteOf<T>();
        const C neg = args.has_c ? static_cast<C>(args.c.to_double()) : -MaxFiniteOf<T>();
        same([=] TENSORD_HD (C x) { return x != x ? nan : (std::isinf(x) ? (x > 0 ? pos : neg) : x); });
      } else {
        same([] TENSORD_HD (C x) { return x; });
      }
      return;
    default: break;
  }
  // Floating-point functions (integer inputs were promoted by the planner).
  if constexpr (kFloat) {
    switch (op) {
      case UnaryOp::kExp: return same([] TENSORD_HD (C x) { return std::exp(x); });
      case UnaryOp::kExp2: return same([] TENSORD_HD (C x) { return std::exp2(x); });
      case UnaryOp::kExpm1: return same([] TENSORD_HD (C x) { return std::expm1(x); });
      case UnaryOp::kLog: return same([] TENSORD_HD (C x) { return std::log(x); });
      case UnaryOp::kLog1p: return same([] TENSORD_HD (C x) { return std::log1p(x); });
      case UnaryOp::kLog2: return same([] TENSORD_HD (C x) { return std::log2(x); });
      case UnaryOp::kLog10: return same([] TENSORD_HD (C x) { return std::log10(x); });
      case UnaryOp::kSqrt: return same([] TENSORD_HD (C x) { return std::sqrt(x); });
      case UnaryOp::kRsqrt: return same([] TENSORD_HD (C x) { return C(1) / std::sqrt(x); });
      case UnaryOp::kSin: return same([] TENSORD_HD (C x) { return std::sin(x); });
      case UnaryOp::kCos: return same([] TENSORD_HD (C x) { return std::cos(x); });
      case UnaryOp::kTan: return same([] TENSORD_HD (C x) { return std::tan(x); });
      case UnaryOp::kAsin: return same([] TENSORD_HD (C x) { return std::asin(x); });
      case UnaryOp::kAcos: return same([] TENSORD_HD (C x) { return std::acos(x); });
      case UnaryOp::kAtan: return same([] TENSORD_HD (C x) { return std::atan(x); });
      case UnaryOp::kSinh: return same([] TENSORD_HD (C x) { return std::sinh(x); });
      case UnaryOp::kCosh: return same([] TENSORD_HD (C x) { return std::cosh(x); });
      case UnaryOp::kTanh: return same([] TENSORD_HD (C x) { return std::tanh(x); });
      case UnaryOp::kErf: return same([] TENSORD_HD (C x) { return std::erf(x); });
      case UnaryOp::kSigmoid: return same([] TENSORD_HD (C x) { return C(1) / (C(1) + std::exp(-x)); });
      case UnaryOp::kSilu: return same([] TENSORD_HD (C x) { return x / (C(1) + std::exp(-x)); });
      case UnaryOp::kGelu:
        return same([] TENSORD_HD (C x) { return C(0.5) * x * (C(1) + std::erf(x * C(M_SQRT1_2))); });
      case UnaryOp::kGeluTanh:
        return same([] TENSORD_HD (C x) {
          const C k = C(M_SQRT2 * M_2_SQRTPI * 0.5);
          return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
        });
      case UnaryOp::kFrac: return same([] TENSORD_HD (C x) { return x - std::trunc(x); });
      case UnaryOp::kAcosh: return same([] TENSORD_HD (C x) { return std::acosh(x); });
      case UnaryOp::kAsinh: return same([] TENSORD_HD (C x) { return std::asinh(x); });
      case UnaryOp::kAtanh: return same([] TENSORD_HD (C x) { return std::atanh(x); });
      case UnaryOp::kErfc: return same([] TENSORD_HD (C x) { return std::erfc(x); });
      case UnaryOp::kErfinv: return same([] TENSORD_HD (C x) { return Erfinv<C>(x); });
      case UnaryOp::kLgamma: return same([] TENSORD_HD (C x) { return std::lgamma(x); });
      case UnaryOp::kDigamma: return same([] TENSORD_HD (C x) { return Digamma<C>(x); });
      case UnaryOp::kI0:
      case UnaryOp::kModifiedBesselI0:
        return same([] TENSORD_HD (C x) { return BesselI0<C>(x); });
      case UnaryOp::kI0e: return same([] TENSORD_HD (C x) { return BesselI0e<C>(x); });
      case UnaryOp::kI1:
      case UnaryOp::kModifiedBesselI1:
        return same([] TENSORD_HD (C x) { return BesselI1<C>(x); });
      case UnaryOp::kI1e: return same([] TENSORD_HD (C x) { return BesselI1e<C>(x); });
      case UnaryOp::kNdtri: return same([] TENSORD_HD (C x) { return Ndtri<C>(x); });
      case UnaryOp::kLogNdtr: return same([] TENSORD_HD (C x) { return LogNdtr<C>(x); });
      case UnaryOp::kErfcx: return same([] TENSORD_HD (C x) { return Erfcx<C>(x); });
      case UnaryOp::kBesselJ0: return same([] TENSORD_HD (C x) { return BesselJ0<C>(x); });
      case UnaryOp::kBesselJ1: return same([] TENSORD_HD (C x) { return BesselJ1<C>(x); });
      case UnaryOp::kBesselY0: return same([] TENSORD_HD (C x) { return BesselY0<C>(x); });
      case UnaryOp::kBesselY1: return same([] TENSORD_HD (C x) { return BesselY1<C>(x); });
      case UnaryOp::kModifiedBesselK0:
        return same([] TENSORD_HD (C x) { return BesselK0<C>(x, false); });
      case UnaryOp::kModifiedBesselK1:
        return same([] TENSORD_HD (C x) { return BesselK1<C>(x, false); });
      case UnaryOp::kScaledModifiedBesselK0:
        return same([] TENSORD_HD (C x) { return BesselK0<C>(x, true); });
      case UnaryOp::kScaledModifiedBesselK1:
        return same([] TENSORD_HD (C x) { return BesselK1<C>(x, true); });
      case UnaryOp::kSphericalBesselJ0:
        return same([] TENSORD_HD (C x) { return SphericalBesselJ0<C>(x); });
      case UnaryOp::kAiryAi: return same([] TENSORD_HD (C x) { return AiryAi<C>(x); });
      case UnaryOp::kEntr:  // -x ln x; 0 at 0, -inf below, NaN kept
        return same([] TENSORD_HD (C x) {
          if (x != x) return x;
          if (x > C(0)) return -x * std::log(x);
          return x == C(0) ? C(0) : -std::numeric_limits<C>::infinity();
        });
      case UnaryOp::kNdtr:  // the standard normal's distribution function
        return same([] TENSORD_HD (C x) { return C(0.5) * std::erfc(-x * C(M_SQRT1_2)); });
      case UnaryOp::kPolygamma: {
        const int64_t n = args.a.to_int();
        return same([n] TENSORD_HD (C x) { return Polygamma<C>(n, x); });
      }
      case UnaryOp::kSinc:
        return same([] TENSORD_HD (C x) {
          if (x == C(0)) return C(1);
          const C product = C(3.14159265358979323846) * x;
          return std::sin(product) / product;
        });
      case UnaryOp::kDeg2Rad:
        return same([] TENSORD_HD (C x) { return x * C(0.017453292519943295769236907684886); });
      case UnaryOp::kRad2Deg:
        return same([] TENSORD_HD (C x) { return x * C(57.295779513082320876798154814105); });
      case UnaryOp::kLogit: {
        if (!args.has_a) return same([] TENSORD_HD (C x) { return std::log(x / (C(1) - x)); });
        // The bounds in T, as torch rounds them (bfloat16's 1 - 1e-3 is 1).
        const C lo = static_cast<C>(static_cast<T>(static_cast<C>(args.a.to_double())));
        const C hi = static_cast<C>(static_cast<T>(C(1) - lo));
        return same([lo, hi] TENSORD_HD (C x) {
          const C z = x < lo ? lo : (x > hi ? hi : x);
          return std::log(z / (C(1) - z));
        });
      }
      case UnaryOp::kSoftplus: {
        const C beta = static_cast<C>(args.a.to_double());
        const C threshold = static_cast<C>(args.b.to_double());
        return same([beta, threshold] TENSORD_HD (C x) {
          return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
        });
      }
      case UnaryOp::kElu: {
        const C alpha = static_cast<C>(args.a.to_double());
        const C scale = static_cast<C>(args.b.to_double());
        const C input_scale = static_cast<C>(args.c.to_double());
        const C negcoef = alpha * scale;
        return same([=] TENSORD_HD (C x) {
          return x <= C(0) ? (std::exp(x * input_scale) - C(1)) * negcoef : x * scale;
        });
      }
      case UnaryOp::kHardsigmoid:
        return same([] TENSORD_HD (C x) {
          const C y = x + C(3);
          return (y < C(0) ? C(0) : (y > C(6) ? C(6) : y)) / C(6);
        });
      case UnaryOp::kHardswish:
        return same([] TENSORD_HD (C x) {
          const C y = x + C(3);
          return x * (y < C(0) ? C(0) : (y > C(6) ? C(6) : y)) / C(6);
        });
      case UnaryOp::kMish:
        return same([] TENSORD_HD (C x) { return x * std::tanh(std::log1p(std::exp(x))); });
      case UnaryOp::kLogSigmoid:
        return same([] TENSORD_HD (C x) {
          const C m = x < C(0) ? x : C(0);
          return m - std::log1p(std::exp(-(x < C(0) ? -x : x)));
        });
      case UnaryOp::kHardshrink: {
        const C l = static_cast<C>(args.a.to_double());
        return same([l] TENSORD_HD (C x) { return (x >= -l && x <= l) ? C(0) : x; });
      }
      case UnaryOp::kSoftshrink: {
        const C l = static_cast<C>(args.a.to_double());
        return same([l] TENSORD_HD (C x) { return x > l ? x - l : (x < -l ? x + l : C(0)); });
      }
      case UnaryOp::kReciprocal: return same([] TENSORD_HD (C x) { return C(1) / x; });
      case UnaryOp::kLeakyRelu: {
        const C slope = static_cast<C>(args.a.to_double());
        return same([slope] TENSORD_HD (C x) { return x > C(0) ? x : x * slope; });
      }
      case UnaryOp::kRoundDecimals: {
        const int64_t d = args.a.to_int();
        const bool neg = d < 0;
        const C ten_pow = static_cast<C>(std::pow(10.0, static_cast<double>(neg ? -d : d)));
        if (neg) return same([ten_pow] TENSORD_HD (C x) { return std::nearbyint(x / ten_pow) * ten_pow; });
        return same([ten_pow] TENSORD_HD (C x) { return std::nearbyint(x * ten_pow) / ten_pow; });
      }
      default: break;
    }
  }
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_UNARY_OPS_H_
