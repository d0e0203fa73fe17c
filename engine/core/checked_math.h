// Overflow-checked int64 arithmetic. Every size/stride/offset computation that a request can
// influence goes through these, so a hostile shape yields an error status, never wraparound.
#ifndef TENSORD_ENGINE_CORE_CHECKED_MATH_H_
#define TENSORD_ENGINE_CORE_CHECKED_MATH_H_

#include <cstdint>
#include <optional>

namespace tensord::engine {

inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Accumulating form: `ok &= MulInto(acc, x)` keeps going but remembers an overflow.
inline bool MulInto(int64_t& acc, int64_t x) { return !__builtin_mul_overflow(acc, x, &acc); }
inline bool AddInto(int64_t& acc, int64_t x) { return !__builtin_add_overflow(acc, x, &acc); }

// Ceiling division for b > 0, without overflow for any a and b.
inline int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a > 0 && a % b != 0 ? 1 : 0); }

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_CORE_CHECKED_MATH_H_
