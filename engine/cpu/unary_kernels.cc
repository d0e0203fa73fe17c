// Unary elementwise kernels (torch 1.13's CPU semantics, element by element).
#include <cmath>
#include <limits>
#include <type_traits>

#include "engine/cpu/elementwise_kernels.h"
#include "engine/cpu/map.h"
#include "engine/dtype.h"

namespace tensord::engine::cpu {
namespace {


template <typename T>
Calc<T> ScalarAs(const Scalar& s) {
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
Calc<T> MaxOf() {
  if constexpr (std::is_same_v<T, Half>) return 65504.0f;
  else if constexpr (std::is_same_v<T, BFloat16>) return 3.38953139e38f;
  else return std::numeric_limits<T>::max();
}

template <typename T>
Calc<T> PowInt(Calc<T> base, int64_t exp) {
  Calc<T> result = 1;
  while (exp) {
    if (exp & 1) result = static_cast<Calc<T>>(result * base);
    exp >>= 1;
    base = static_cast<Calc<T>>(base * base);
  }
  return result;
}

template <typename T>
void UnaryTyped(UnaryOp op, IntList shape, const StridedRef& out, const StridedRef& in,
                const UnaryArgs& args) {
  using C = Calc<T>;
  constexpr bool kFloat = kIsFloat<T>;
  const auto same = [&](auto f) { Map1<T, T>(shape, out, in, f); };
  const auto to_bool = [&](auto f) { Map1<bool, T>(shape, out, in, f); };
  switch (op) {
    case UnaryOp::kNeg:
      if constexpr (!std::is_same_v<T, bool>) same([](C x) { return static_cast<C>(-x); });
      return;
    case UnaryOp::kAbs:
      if constexpr (kFloat) same([](C x) { return std::fabs(x); });
      else if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) same([](C x) { return x; });
      else same([](C x) { return static_cast<C>(x < 0 ? -x : x); });
      return;
    case UnaryOp::kSign:
    case UnaryOp::kSgn:
      if constexpr (std::is_same_v<T, bool>) same([](C x) { return x; });
      else same([](C x) { return static_cast<C>((C(0) < x) - (x < C(0))); });
      return;
    case UnaryOp::kSignbit:
      if constexpr (kFloat) to_bool([](C x) { return std::signbit(x); });
      else if constexpr (std::is_signed_v<T>) to_bool([](C x) { return x < 0; });
      else to_bool([](C) { return false; });
      return;
    case UnaryOp::kRelu:
      if constexpr (!std::is_same_v<T, bool>) {
        if constexpr (kFloat) same([](C x) { return x != x ? x : (x < C(0) ? C(0) : x); });
        else same([](C x) { return x < C(0) ? C(0) : x; });
      }
      return;
    case UnaryOp::kLogicalNot: return to_bool([](C x) { return !(x != C(0)); });
    case UnaryOp::kBitwiseNot:
      if constexpr (std::is_same_v<T, bool>) same([](C x) { return !x; });
      else if constexpr (!kFloat) same([](C x) { return static_cast<C>(~x); });
      return;
    case UnaryOp::kIsnan:
      if constexpr (kFloat) to_bool([](C x) { return x != x; });
      else to_bool([](C) { return false; });
      return;
    case UnaryOp::kIsinf:
      if constexpr (kFloat) to_bool([](C x) { return std::isinf(x); });
      else to_bool([](C) { return false; });
      return;
    case UnaryOp::kIsposinf:
      if constexpr (kFloat) to_bool([](C x) { return std::isinf(x) && x > 0; });
      else to_bool([](C) { return false; });
      return;
    case UnaryOp::kIsneginf:
      if constexpr (kFloat) to_bool([](C x) { return std::isinf(x) && x < 0; });
      else to_bool([](C) { return false; });
      return;
    case UnaryOp::kIsfinite:
      if constexpr (kFloat) to_bool([](C x) { return std::isfinite(x); });
      else to_bool([](C) { return true; });
      return;
    case UnaryOp::kClamp: {
      const bool has_lo = args.has_a, has_hi = args.has_b;
      const C lo = has_lo ? ScalarAs<T>(args.a) : C(0);
      const C hi = has_hi ? ScalarAs<T>(args.b) : C(0);
      if constexpr (kFloat) {
        same([=](C x) {
          if (x != x) return x;
          if (has_lo) x = (lo != lo) ? lo : (x < lo ? lo : x);
          if (has_hi) x = (hi != hi) ? hi : (x > hi ? hi : x);
          return x;
        });
      } else {
        same([=](C x) {
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
        if (e == 2) same([](C x) { return x * x; });
        else if (e == 3) same([](C x) { return x * x * x; });
        else if (e == 0.5) same([](C x) { return std::sqrt(x); });
        else if (e == -0.5) same([](C x) { return C(1) / std::sqrt(x); });
        else if (e == -1) same([](C x) { return C(1) / x; });
        else if (e == -2) same([](C x) { return C(1) / (x * x); });
        else {
          const C ec = static_cast<C>(e);
          same([ec](C x) { return std::pow(x, ec); });
        }
      } else if constexpr (std::is_same_v<T, bool>) {
        const int64_t e = args.a.to_int();
        same([e](C x) { return e == 0 ? true : x; });
      } else {
        const int64_t e = args.a.to_int();
        same([e](C x) { return PowInt<T>(x, e); });
      }
      return;
    }
    case UnaryOp::kFloor:
      if constexpr (kFloat) same([](C x) { return std::floor(x); });
      else same([](C x) { return x; });
      return;
    case UnaryOp::kCeil:
      if constexpr (kFloat) same([](C x) { return std::ceil(x); });
      else same([](C x) { return x; });
      return;
    case UnaryOp::kRound:
      if constexpr (kFloat) same([](C x) { return std::nearbyint(x); });
      else same([](C x) { return x; });
      return;
    case UnaryOp::kTrunc:
      if constexpr (kFloat) same([](C x) { return std::trunc(x); });
      else same([](C x) { return x; });
      return;
    case UnaryOp::kNanToNum:
      if constexpr (kFloat) {
        const C nan = args.has_a ? static_cast<C>(args.a.to_double()) : C(0);
        const C pos = args.has_b ? static_cast<C>(args.b.to_double()) : MaxOf<T>();
        const C neg = args.has_c ? static_cast<C>(args.c.to_double()) : -MaxOf<T>();
        same([=](C x) { return x != x ? nan : (std::isinf(x) ? (x > 0 ? pos : neg) : x); });
      } else {
        same([](C x) { return x; });
      }
      return;
    default: break;
  }
  // Floating-point functions (integer inputs were promoted by the planner).
  if constexpr (kFloat) {
    switch (op) {
      case UnaryOp::kExp: return same([](C x) { return std::exp(x); });
      case UnaryOp::kExp2: return same([](C x) { return std::exp2(x); });
      case UnaryOp::kExpm1: return same([](C x) { return std::expm1(x); });
      case UnaryOp::kLog: return same([](C x) { return std::log(x); });
      case UnaryOp::kLog1p: return same([](C x) { return std::log1p(x); });
      case UnaryOp::kLog2: return same([](C x) { return std::log2(x); });
      case UnaryOp::kLog10: return same([](C x) { return std::log10(x); });
      case UnaryOp::kSqrt: return same([](C x) { return std::sqrt(x); });
      case UnaryOp::kRsqrt: return same([](C x) { return C(1) / std::sqrt(x); });
      case UnaryOp::kSin: return same([](C x) { return std::sin(x); });
      case UnaryOp::kCos: return same([](C x) { return std::cos(x); });
      case UnaryOp::kTan: return same([](C x) { return std::tan(x); });
      case UnaryOp::kAsin: return same([](C x) { return std::asin(x); });
      case UnaryOp::kAcos: return same([](C x) { return std::acos(x); });
      case UnaryOp::kAtan: return same([](C x) { return std::atan(x); });
      case UnaryOp::kSinh: return same([](C x) { return std::sinh(x); });
      case UnaryOp::kCosh: return same([](C x) { return std::cosh(x); });
      case UnaryOp::kTanh: return same([](C x) { return std::tanh(x); });
      case UnaryOp::kErf: return same([](C x) { return std::erf(x); });
      case UnaryOp::kSigmoid: return same([](C x) { return C(1) / (C(1) + std::exp(-x)); });
      case UnaryOp::kSilu: return same([](C x) { return x / (C(1) + std::exp(-x)); });
      case UnaryOp::kGelu:
        return same([](C x) { return C(0.5) * x * (C(1) + std::erf(x * C(M_SQRT1_2))); });
      case UnaryOp::kGeluTanh:
        return same([](C x) {
          const C k = C(M_SQRT2 * M_2_SQRTPI * 0.5);
          return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
        });
      case UnaryOp::kFrac: return same([](C x) { return x - std::trunc(x); });
      case UnaryOp::kReciprocal: return same([](C x) { return C(1) / x; });
      case UnaryOp::kLeakyRelu: {
        const C slope = static_cast<C>(args.a.to_double());
        return same([slope](C x) { return x > C(0) ? x : x * slope; });
      }
      case UnaryOp::kRoundDecimals: {
        const int64_t d = args.a.to_int();
        const bool neg = d < 0;
        const C ten_pow = static_cast<C>(std::pow(10.0, static_cast<double>(neg ? -d : d)));
        if (neg) return same([ten_pow](C x) { return std::nearbyint(x / ten_pow) * ten_pow; });
        return same([ten_pow](C x) { return std::nearbyint(x * ten_pow) / ten_pow; });
      }
      default: break;
    }
  }
}

}  // namespace

void Unary(UnaryOp op, IntList shape, const StridedRef& out, const StridedRef& in,
           const UnaryArgs& args) {
  DispatchDType(in.dtype, [&](auto t) { UnaryTyped<decltype(t)>(op, shape, out, in, args); });
}

}  // namespace tensord::engine::cpu
