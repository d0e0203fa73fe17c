// Binary and ternary elementwise kernels (torch 1.13's CPU semantics, element by element).
#include <atomic>
#include <climits>
#include <cmath>
#include <limits>
#include <type_traits>

#include "engine/cpu/elementwise_kernels.h"
#include "engine/cpu/map.h"
#include "engine/core/dtype.h"
#include "engine/kernels/binary_ops.h"
#include "engine/kernels/ternary_ops.h"

namespace tensord::engine::cpu {
namespace {

template <typename T, typename Pred>
bool AnyTyped(IntList shape, const StridedRef& t, Pred fails) {
  std::atomic<bool> found{false};
  StridedLoop<1> loop(shape, {t.strides}, {sizeof(T)});
  loop.Run({t.data}, sizeof(T), [&](const std::array<char*, 1>& p,
                                    const std::array<int64_t, 1>& s, int64_t n) {
    if (found.load(std::memory_order_relaxed)) return;
    for (int64_t i = 0; i < n; ++i) {
      const T v = *reinterpret_cast<const T*>(p[0] + i * s[0]);
      if (fails(v)) {
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
  DispatchDType(a.dtype, [&](auto t) {
    using T = decltype(t);
    VisitBinary<T>(op, BinaryAlpha<T>(alpha), BinaryAlphaIsOne(op, alpha), [&](auto f, auto out_type) {
      Map2<decltype(out_type), T, T>(shape, out, a, b, f);
    });
  });
}

bool AnyFails(ValueCheck check, IntList shape, const StridedRef& t) {
  return DispatchDType(t.dtype, [&](auto v) -> bool {
    using T = decltype(v);
    if (check == ValueCheck::kNonzero || check == ValueCheck::kEnoughSource ||
        check == ValueCheck::kPivotRange) {  // kPivotRange's predicate is kEnoughSource's
      if constexpr (ValueCheckApplies<T>(ValueCheck::kNonzero)) {
        return check == ValueCheck::kNonzero
                   ? AnyTyped<T>(shape, t, ValueFails<ValueCheck::kNonzero, T>)
                   : AnyTyped<T>(shape, t, ValueFails<ValueCheck::kEnoughSource, T>);
      }
    } else if constexpr (ValueCheckApplies<T>(ValueCheck::kUnitInterval)) {
      if (check == ValueCheck::kFinite) {
        return AnyTyped<T>(shape, t, ValueFails<ValueCheck::kFinite, T>);
      }
      return AnyTyped<T>(shape, t, ValueFails<ValueCheck::kUnitInterval, T>);
    }
    return false;
  });
}

bool AnyNegative(IntList shape, const StridedRef& t) {
  return DispatchDType(t.dtype, [&](auto v) -> bool {
    using T = decltype(v);
    if constexpr (kIsInt<T> && std::is_signed_v<T>) {
      return AnyTyped<T>(shape, t, [](T x) { return x < T(0); });
    } else {
      return false;
    }
  });
}

void Where(IntList shape, const StridedRef& out, const StridedRef& cond, const StridedRef& a,
           const StridedRef& b) {
  DispatchDType(a.dtype, [&](auto v) {
    using T = decltype(v);
    VisitWhere<T>([&](auto f) { Map3<T, uint8_t, T, T>(shape, out, cond, a, b, f); });
  });
}

void Lerp(IntList shape, const StridedRef& out, const StridedRef& start, const StridedRef& end,
          const StridedRef& weight) {
  DispatchDType(start.dtype, [&](auto v) {
    using T = decltype(v);
    VisitLerp<T>([&](auto f) { Map3<T, T, T, T>(shape, out, start, end, weight, f); });
  });
}

void Addc(bool divide, IntList shape, const StridedRef& out, const StridedRef& self,
          const StridedRef& t1, const StridedRef& t2, const Scalar& value) {
  DispatchDType(self.dtype, [&](auto v) {
    using T = decltype(v);
    VisitAddc<T>(divide, value, [&](auto f) { Map3<T, T, T, T>(shape, out, self, t1, t2, f); });
  });
}

void ClampTensor(IntList shape, const StridedRef& out, const StridedRef& x, const StridedRef& lo,
                 const StridedRef& hi, bool has_lo, bool has_hi) {
  DispatchDType(x.dtype, [&](auto v) {
    using T = decltype(v);
    VisitClampTensor<T>(has_lo, has_hi,
                        [&](auto f) { Map3<T, T, T, T>(shape, out, x, lo, hi, f); });
  });
}

}  // namespace tensord::engine::cpu
