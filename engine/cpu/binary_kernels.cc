// Binary and ternary elementwise kernels (torch 1.13's CPU semantics, element by element).
#include <atomic>
#include <climits>
#include <cmath>
#include <limits>
#include <type_traits>

#include "engine/cpu/elementwise_kernels.h"
#include "engine/cpu/map.h"
#include "engine/dtype.h"

namespace tensord::engine::cpu {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<Calc<T>>;
template <typename T>
constexpr bool kIsInt = !kIsFloat<T> && !std::is_same_v<T, bool>;

// Rounds a float intermediate to T, as torch's float16/bfloat16 arithmetic does after every
// operation (identity for float and double).
template <typename T>
inline Calc<T> R(Calc<T> v) {
  if constexpr (IsReducedFloat<T>::value) return static_cast<float>(T(v));
  else return v;
}

template <typename T, typename C = Calc<T>>
C DivFloorFloat(C a, C b) {
  if (b == 0) return a / b;
  const C mod = R<T>(std::fmod(a, b));
  C div = R<T>(R<T>(a - mod) / b);
  if (mod != 0 && (b < 0) != (mod < 0)) div = R<T>(div - C(1));
  if (div == 0) return std::copysign(C(0), R<T>(a / b));
  C floordiv = std::floor(div);
  if (R<T>(div - floordiv) > C(0.5)) floordiv = R<T>(floordiv + C(1));
  return floordiv;
}

// Integer division and remainder without the x86 trap on MIN / -1 (the divisor is never 0:
// the planner checks first).
template <typename C>
C DivTruncInt(C a, C b) {
  if (b == C(-1)) return static_cast<C>(C(0) - a);
  return static_cast<C>(a / b);
}
template <typename C>
C ModInt(C a, C b) {
  if (b == C(-1)) return 0;
  return static_cast<C>(a % b);
}
template <typename C>
C DivFloorInt(C a, C b) {
  const C q = DivTruncInt(a, b);
  if ((a < 0) != (b < 0) && ModInt(a, b) != 0) return static_cast<C>(q - 1);
  return q;
}

template <typename C>
C PowIntInt(C base, C exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == C(-1)) return (exp % 2) ? C(-1) : C(1);
    return 0;
  }
  C result = 1;
  while (exp) {
    if (exp & 1) result = static_cast<C>(result * base);
    exp = static_cast<C>(exp / 2);
    base = static_cast<C>(base * base);
  }
  return result;
}

template <typename T>
Calc<T> AlphaAs(const Scalar& s) {
  if constexpr (kIsFloat<T>) return static_cast<Calc<T>>(s.to_double());
  else if constexpr (std::is_same_v<T, bool>) return s.to_bool();
  else return static_cast<T>(s.to_int());
}

template <typename T>
void BinaryTyped(BinaryOp op, IntList shape, const StridedRef& out, const StridedRef& a,
                 const StridedRef& b, const Scalar& alpha) {
  using C = Calc<T>;
  const auto same = [&](auto f) { Map2<T, T, T>(shape, out, a, b, f); };
  const auto to_bool = [&](auto f) { Map2<bool, T, T>(shape, out, a, b, f); };
  switch (op) {
    case BinaryOp::kAdd: {
      if (alpha.to_double() == 1 && !alpha.is_bool()) return same([](C x, C y) { return x + y; });
      const C al = AlphaAs<T>(alpha);
      return same([al](C x, C y) { return x + al * y; });
    }
    case BinaryOp::kSub: {
      if (alpha.to_double() == 1) return same([](C x, C y) { return x - y; });
      const C al = AlphaAs<T>(alpha);
      return same([al](C x, C y) { return x - al * y; });
    }
    case BinaryOp::kMul:
      if constexpr (std::is_same_v<T, bool>) return same([](C x, C y) { return x && y; });
      else return same([](C x, C y) { return x * y; });
    case BinaryOp::kEq: return to_bool([](C x, C y) { return x == y; });
    case BinaryOp::kNe: return to_bool([](C x, C y) { return x != y; });
    case BinaryOp::kLt: return to_bool([](C x, C y) { return x < y; });
    case BinaryOp::kLe: return to_bool([](C x, C y) { return x <= y; });
    case BinaryOp::kGt: return to_bool([](C x, C y) { return x > y; });
    case BinaryOp::kGe: return to_bool([](C x, C y) { return x >= y; });
    case BinaryOp::kLogicalAnd: return to_bool([](C x, C y) { return x != C(0) && y != C(0); });
    case BinaryOp::kLogicalOr: return to_bool([](C x, C y) { return x != C(0) || y != C(0); });
    case BinaryOp::kLogicalXor:
      return to_bool([](C x, C y) { return (x != C(0)) != (y != C(0)); });
    case BinaryOp::kMaximum:
      if constexpr (kIsFloat<T>) {
        return same([](C x, C y) { return x != x ? x : (y != y ? y : (x > y ? x : y)); });
      } else {
        return same([](C x, C y) { return x > y ? x : y; });
      }
    case BinaryOp::kMinimum:
      if constexpr (kIsFloat<T>) {
        return same([](C x, C y) { return x != x ? x : (y != y ? y : (x < y ? x : y)); });
      } else {
        return same([](C x, C y) { return x < y ? x : y; });
      }
    case BinaryOp::kFmax:
      if constexpr (kIsFloat<T>) return same([](C x, C y) { return std::fmax(x, y); });
      else return same([](C x, C y) { return x > y ? x : y; });
    case BinaryOp::kFmin:
      if constexpr (kIsFloat<T>) return same([](C x, C y) { return std::fmin(x, y); });
      else return same([](C x, C y) { return x < y ? x : y; });
    default: break;
  }
  if constexpr (kIsFloat<T>) {
    switch (op) {
      case BinaryOp::kDiv: return same([](C x, C y) { return x / y; });
      case BinaryOp::kDivTrunc: return same([](C x, C y) { return std::trunc(R<T>(x / y)); });
      case BinaryOp::kDivFloor: return same([](C x, C y) { return DivFloorFloat<T>(x, y); });
      case BinaryOp::kRemainder:
        return same([](C x, C y) {
          C mod = R<T>(std::fmod(x, y));
          if (mod != 0 && (y < 0) != (mod < 0)) mod += y;
          return mod;
        });
      case BinaryOp::kFmod: return same([](C x, C y) { return std::fmod(x, y); });
      case BinaryOp::kPow: return same([](C x, C y) { return std::pow(x, y); });
      case BinaryOp::kAtan2: return same([](C x, C y) { return std::atan2(x, y); });
      case BinaryOp::kHypot: return same([](C x, C y) { return std::hypot(x, y); });
      case BinaryOp::kCopysign: return same([](C x, C y) { return std::copysign(x, y); });
      default: return;
    }
  } else if constexpr (kIsInt<T>) {
    switch (op) {
      case BinaryOp::kDivTrunc: return same([](C x, C y) { return DivTruncInt(x, y); });
      case BinaryOp::kDivFloor: return same([](C x, C y) { return DivFloorInt(x, y); });
      case BinaryOp::kRemainder:
        return same([](C x, C y) {
          C r = ModInt(x, y);
          if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
          return r;
        });
      case BinaryOp::kFmod: return same([](C x, C y) { return ModInt(x, y); });
      case BinaryOp::kPow: return same([](C x, C y) { return PowIntInt(x, y); });
      case BinaryOp::kBitAnd: return same([](C x, C y) { return static_cast<C>(x & y); });
      case BinaryOp::kBitOr: return same([](C x, C y) { return static_cast<C>(x | y); });
      case BinaryOp::kBitXor: return same([](C x, C y) { return static_cast<C>(x ^ y); });
      // Shifts behave as torch 1.13's do on x86: the count is taken modulo the width of the
      // promoted operand (int for narrower types), so 1 << 70 is 64 for int64.
      case BinaryOp::kLshift:
        return same([](C x, C y) -> C {
          using P = decltype(+x);
          constexpr int kBits = sizeof(P) * CHAR_BIT;
          const int n = static_cast<int>(static_cast<int64_t>(y) & (kBits - 1));
          return static_cast<C>(static_cast<std::make_unsigned_t<P>>(static_cast<P>(x)) << n);
        });
      case BinaryOp::kRshift:
        return same([](C x, C y) -> C {
          using P = decltype(+x);
          constexpr int kBits = sizeof(P) * CHAR_BIT;
          const int n = static_cast<int>(static_cast<int64_t>(y) & (kBits - 1));
          return static_cast<C>(static_cast<P>(x) >> n);
        });
      default: return;
    }
  } else {  // bool
    switch (op) {
      case BinaryOp::kBitAnd: return same([](C x, C y) { return x && y; });
      case BinaryOp::kBitOr: return same([](C x, C y) { return x || y; });
      case BinaryOp::kBitXor: return same([](C x, C y) { return x != y; });
      default: return;
    }
  }
}

template <typename T>
bool AnyTyped(IntList shape, const StridedRef& t, bool zero) {
  std::atomic<bool> found{false};
  StridedLoop<1> loop(shape, {t.strides}, {sizeof(T)});
  loop.Run({t.data}, sizeof(T), [&](const std::array<char*, 1>& p,
                                    const std::array<int64_t, 1>& s, int64_t n) {
    if (found.load(std::memory_order_relaxed)) return;
    for (int64_t i = 0; i < n; ++i) {
      const T v = *reinterpret_cast<const T*>(p[0] + i * s[0]);
      if (zero ? v == T(0) : v < T(0)) {
        found.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  return found.load();
}

}  // namespace

void Binary(BinaryOp op, IntList shape, const StridedRef& out, const StridedRef& a,
            const StridedRef& b, const Scalar& alpha) {
  DispatchDType(a.dtype, [&](auto t) { BinaryTyped<decltype(t)>(op, shape, out, a, b, alpha); });
}

bool AnyZero(IntList shape, const StridedRef& t) {
  return DispatchDType(t.dtype, [&](auto v) -> bool {
    using T = decltype(v);
    if constexpr (kIsInt<T>) return AnyTyped<T>(shape, t, true);
    else return false;
  });
}

bool AnyNegative(IntList shape, const StridedRef& t) {
  return DispatchDType(t.dtype, [&](auto v) -> bool {
    using T = decltype(v);
    if constexpr (kIsInt<T> && std::is_signed_v<T>) return AnyTyped<T>(shape, t, false);
    else return false;
  });
}

void Where(IntList shape, const StridedRef& out, const StridedRef& cond, const StridedRef& a,
           const StridedRef& b) {
  DispatchDType(a.dtype, [&](auto v) {
    using T = decltype(v);
    using C = Calc<T>;
    // The condition is bool or (deprecated in torch) uint8: either way one byte, nonzero true.
    Map3<T, uint8_t, T, T>(shape, out, cond, a, b, [](uint8_t c, C x, C y) { return c ? x : y; });
  });
}

void Lerp(IntList shape, const StridedRef& out, const StridedRef& start, const StridedRef& end,
          const StridedRef& weight) {
  DispatchDType(start.dtype, [&](auto v) {
    using T = decltype(v);
    using C = Calc<T>;
    if constexpr (kIsFloat<T>) {
      Map3<T, T, T, T>(shape, out, start, end, weight, [](C s, C e, C w) {
        return std::abs(w) < C(0.5) ? s + w * (e - s) : e - (e - s) * (C(1) - w);
      });
    }
  });
}

void Addc(bool divide, IntList shape, const StridedRef& out, const StridedRef& self,
          const StridedRef& t1, const StridedRef& t2, const Scalar& value) {
  DispatchDType(self.dtype, [&](auto v) {
    using T = decltype(v);
    using C = Calc<T>;
    const C val = AlphaAs<T>(value);
    if (divide) {
      if constexpr (kIsFloat<T>) {
        Map3<T, T, T, T>(shape, out, self, t1, t2, [val](C s, C x, C y) { return s + val * (x / y); });
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      Map3<T, T, T, T>(shape, out, self, t1, t2,
                       [val](C s, C x, C y) { return s || (val && x && y); });
    } else {
      Map3<T, T, T, T>(shape, out, self, t1, t2, [val](C s, C x, C y) { return s + val * x * y; });
    }
  });
}

}  // namespace tensord::engine::cpu

namespace tensord::engine::cpu {

void ClampTensor(IntList shape, const StridedRef& out, const StridedRef& x, const StridedRef& lo,
                 const StridedRef& hi, bool has_lo, bool has_hi) {
  DispatchDType(x.dtype, [&](auto v) {
    using T = decltype(v);
    using C = Calc<T>;
    Map3<T, T, T, T>(shape, out, x, lo, hi, [has_lo, has_hi](C a, C l, C h) {
      if constexpr (kIsFloat<T>) {
        if (a != a) return a;
        if (has_lo) a = (l != l) ? l : (a < l ? l : a);
        if (has_hi) a = (h != h) ? h : (a > h ? h : a);
      } else {
        if (has_lo && a < l) a = l;
        if (has_hi && a > h) a = h;
      }
      return a;
    });
  });
}

}  // namespace tensord::engine::cpu
