// Checks of an operand's values that an op makes before its kernel runs, where torch's kernel
// raises: integer division by zero, binary_cross_entropy's input outside [0, 1]. One predicate
// per check, run by the CPU loop and the CUDA kernel alike (Backend::CheckValues).
#ifndef TENSORD_ENGINE_KERNELS_VALUE_CHECK_H_
#define TENSORD_ENGINE_KERNELS_VALUE_CHECK_H_

#include <type_traits>

#include "engine/core/host_device.h"
#include "engine/kernels/element_math.h"

namespace tensord::engine {

enum class ValueCheck {
  kNonzero,       // integral divisors: a zero fails ("ZeroDivisionError")
  kUnitInterval,  // floating: a value outside [0, 1], NaN included, fails
  kFinite,        // floating: an infinity or NaN fails (histc's range)
  kEnoughSource,  // integral: a negative count fails (masked_scatter's source size - mask's ones)
  kPivotRange,    // integral: a negative slack fails (lu_solve's and lu_unpack's pivots, as
                  // min(pivot - 1, rows - pivot)); the predicate is kEnoughSource's
};

// The error's message (the op's name leads it).
inline const char* ValueCheckMessage(ValueCheck check) {
  switch (check) {
    case ValueCheck::kNonzero: return "ZeroDivisionError";
    case ValueCheck::kUnitInterval: return "all elements of input should be between 0 and 1";
    case ValueCheck::kFinite: return "range is not finite";
    case ValueCheck::kEnoughSource: return "Number of elements of source < number of ones in mask";
    case ValueCheck::kPivotRange:
      return "pivots must be between 1 and LU.size(-2) inclusive. Did you properly pass the "
             "result of lu_factor?";
  }
  return "bad value";
}

// Whether `check` applies to dtype T at all (a float divisor is never refused).
template <typename T>
constexpr bool ValueCheckApplies(ValueCheck check) {
  return check == ValueCheck::kNonzero || check == ValueCheck::kEnoughSource ||
                 check == ValueCheck::kPivotRange
             ? kIsInt<T>
                                                                             : kIsFloat<T>;
}

// Whether v fails kCheck (T one the check applies to).
template <ValueCheck kCheck, typename T>
TENSORD_HD bool ValueFails(T v) {
  if constexpr (kCheck == ValueCheck::kNonzero) {
    return v == T(0);
  } else if constexpr (kCheck == ValueCheck::kEnoughSource || kCheck == ValueCheck::kPivotRange) {
    return v < T(0);
  } else if constexpr (kCheck == ValueCheck::kFinite) {
    const Calc<T> c = static_cast<Calc<T>>(v);
    return !(c - c == Calc<T>(0));  // inf - inf and NaN - NaN are NaN
  } else {
    const Calc<T> c = static_cast<Calc<T>>(v);
    return !(c >= Calc<T>(0) && c <= Calc<T>(1));
  }
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_VALUE_CHECK_H_
