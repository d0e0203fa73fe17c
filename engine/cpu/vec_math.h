// Math for CPU loops the compiler vectorizes: branch-free, no library calls. Files that use it
// are compiled with -fno-trapping-math (engine/CMakeLists.txt), so that the selects below become
// vector blends instead of branches.
#ifndef TENSORD_ENGINE_CPU_VEC_MATH_H_
#define TENSORD_ENGINE_CPU_VEC_MATH_H_

#include <bit>
#include <cstdint>
#include <limits>

namespace tensord::engine::cpu {

// exp(x) in float32 within 1.5 ulps (Cephes' expf: x = k ln 2 + r with |r| <= ln 2 / 2, a
// degree-7 polynomial for e^r, 2^k from the exponent bits). exp(-inf) = 0, exp(inf) = inf,
// NaN stays NaN; results below the smallest normal float are flushed to 0.
inline float VecExp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  // Above kHigh exp overflows; below kLow it is not a normal float. NaN is replaced before the
  // float-to-int conversion (undefined for NaN) and restored at the end.
  constexpr float kLow = -87.3f, kHigh = 88.3762626647949f;
  float xc = x < kLow ? kLow : x;
  xc = xc > kHigh ? kHigh : xc;
  xc = x != x ? 0.0f : xc;
  const float kf = (xc * kLog2e + kRound) - kRound;
  const float r = (xc - kf * kLn2Hi) - kf * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const float two_k = std::bit_cast<float>((static_cast<int32_t>(kf) + 127) << 23);
  float e = p * two_k;
  e = x < kLow ? 0.0f : e;
  e = x > kHigh ? std::numeric_limits<float>::infinity() : e;
  return x != x ? x : e;
}

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_VEC_MATH_H_
