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
#include "engine/core/scalar.h"

namespace tensord::engine {

enum class UnaryOp {
  kNeg, kAbs, kSign, kSgn, kExp, kExp2, kExpm1, kLog, kLog1p, kLog2, kLog10, kSqrt, kRsqrt,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kTanh, kErf, kSigmoid, kRelu, kGelu,
  kGeluTanh, kSilu, kFloor, kCeil, kRound, kTrunc, kFrac, kReciprocal, kLogicalNot, kBitwiseNot,
  kIsnan, kIsinf, kIsposinf, kIsneginf, kIsfinite, kSignbit, kNanToNum, kClamp, kPowScalar,
  kRoundDecimals, kLeakyRelu,
};

// Extra arguments: clamp (lo/hi, each optional), nan_to_num (nan, posinf, neginf), pow's
// exponent, round's decimals, leaky_relu's slope.
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
    case UnaryOp::kNeg:
      if constexpr (!std::is_same_v<T, bool>) same([] TENSORD_HD (C x) { return WrapSub(C(0), x); });
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
        const double e = args.a.to_double();
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
