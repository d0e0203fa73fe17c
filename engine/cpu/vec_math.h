// Math for CPU loops the compiler vectorizes: branch-free, no library calls, always inlined (so
// that the AVX2 clones of the loops that call them vectorize them too). Files that use it
// are compiled with -fno-trapping-math (engine/CMakeLists.txt), so that the selects below become
// vector blends instead of branches.
#ifndef TENSORD_ENGINE_CPU_VEC_MATH_H_
#define TENSORD_ENGINE_CPU_VEC_MATH_H_

#include <bit>
#include <cstdint>
#include <limits>

// A function compiled for AVX2/FMA machines and for any x86-64, the copy chosen when the
// program loads: for loops over the functions below (which are inlined into it).
// TENSORD_AVX512_CLONE adds an AVX-512 copy: for the loops that measured faster with it (the
// exponential family's maps, softmax and cross_entropy rows); layer_norm's rows gained nothing.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TENSORD_AVX2_CLONE __attribute__((target_clones("arch=x86-64-v3", "default")))
#define TENSORD_AVX512_CLONE \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TENSORD_AVX2_CLONE
#define TENSORD_AVX512_CLONE
#endif

namespace tensord::engine::cpu {

// c[0] x^(N-1) + c[1] x^(N-2) + ... + c[N-1] by Horner's rule: p = p * x + c[i], step by step.
template <int N>
[[gnu::always_inline]] inline float Horner(float x, const float (&c)[N]) {
  float p = c[0];
  for (int i = 1; i < N; ++i) p = p * x + c[i];
  return p;
}

// exp(x) in float32 within 1.5 ulps (Cephes' expf: x = k ln 2 + r with |r| <= ln 2 / 2, a
// degree-7 polynomial for e^r, 2^k from exponent bits, in two halves so that results near the
// float range's ends, subnormal ones included, come out as libm's). exp(-inf) = 0,
// exp(inf) = inf, NaN stays NaN.
[[gnu::always_inline]] inline float VecExp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  // Below kLow exp is below half the smallest subnormal; above kHigh it overflows (the product
  // below does too). NaN is replaced before the float-to-int conversion (undefined for NaN) and
  // restored at the end.
  constexpr float kLow = -104.0f, kHigh = 89.0f;
  float xc = x < kLow ? kLow : x;
  xc = xc > kHigh ? kHigh : xc;
  xc = x != x ? 0.0f : xc;
  const float kf = (xc * kLog2e + kRound) - kRound;
  const float r = (xc - kf * kLn2Hi) - kf * kLn2Lo;
  float p = Horner(r, {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                       1.6666665459e-1f, 5.0000001201e-1f});
  p = p * r * r + r + 1.0f;
  const int32_t k = static_cast<int32_t>(kf);  // in [-150, 129]: each half a normal power of 2
  const int32_t k1 = k / 2, k2 = k - k1;
  float e = p * std::bit_cast<float>((k1 + 127) << 23) * std::bit_cast<float>((k2 + 127) << 23);
  e = x < kLow ? 0.0f : e;
  e = x > kHigh ? std::numeric_limits<float>::infinity() : e;
  return x != x ? x : e;
}

// tanh(x) in float32 within a few ulps: Cephes' tanhf, an odd polynomial below |x| = 0.625 and
// 1 - 2 / (exp(2|x|) + 1) above (no cancellation there); +-1 beyond exp's range, NaN stays NaN.
[[gnu::always_inline]] inline float VecTanh(float x) {
  const float a = x < 0 ? -x : x;
  const float z = x * x;
  const float p = Horner(z, {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                             1.33314422036e-1f, -3.33332819422e-1f});
  const float small = x + x * z * p;
  const float large = 1.0f - 2.0f / (VecExp(2.0f * a) + 1.0f);
  const float signed_large = x < 0 ? -large : large;
  return a < 0.625f ? small : signed_large;
}

// Abramowitz and Stegun 7.1.26 alone, for every x: absolute error below 1.5e-7 (relative error
// large for tiny x). torch's vectorized erf, which its CPU gelu uses: gelu(x) = x (1 + erf) / 2
// needs only the absolute error, and takes it at half VecErf's cost.
[[gnu::always_inline]] inline float VecErfAbsolute(float x) {
  const float a = x < 0 ? -x : x;
  const float t = 1.0f / (0.3275911f * a + 1.0f);
  const float r =
      Horner(t, {1.061405429f, -1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f});
  const float y = 1.0f - t * r * VecExp(-x * x);
  const float large = x < 0 ? -y : y;
  return x != x ? x : large;
}

// erf(x) in float32: below |x| = 1 Cephes' erff polynomial x * P(x^2) (about an ulp, exact
// for tiny x); above, VecErfAbsolute (torch's formula: 1 - t * P(t) * exp(-x^2) with
// t = 1 / (1 + 0.3275911 |x|), signed as x; its absolute error is small against erf > 0.84
// there). NaN stays NaN.
[[gnu::always_inline]] inline float VecErf(float x) {
  const float z = x * x;
  const float s = Horner(z, {7.853861353153693e-5f, -8.010193625184903e-4f, 5.188327685732524e-3f,
                             -2.685381193529856e-2f, 1.128358514861418e-1f,
                             -3.761262582423300e-1f, 1.128379165726710e+0f});
  const float small = x * s;
  const float a = x < 0 ? -x : x;
  return a < 1.0f ? small : VecErfAbsolute(x);
}

// log(x) in float32 within about an ulp: Cephes' logf, branch-free. x = m 2^e with m in
// [sqrt(1/2), sqrt(2)), a degree-8 polynomial in m - 1, then e ln 2 in two parts. Subnormal
// inputs are scaled by 2^23 first; log(0) = -inf, log(inf) = inf, negative and NaN: NaN.
[[gnu::always_inline]] inline float VecLog(float x) {
  const bool tiny = x < 1.17549435e-38f;  // subnormal (or zero, or negative)
  const float xs = tiny ? x * 8388608.0f : x;
  const int32_t bits = std::bit_cast<int32_t>(xs);
  float e = static_cast<float>(((bits >> 23) & 0xff) - 126) - (tiny ? 23.0f : 0.0f);
  float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f000000);  // in [0.5, 1)
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1.0f : e;
  const float f = low ? m + m - 1.0f : m - 1.0f;
  const float z = f * f;
  const float p = Horner(f, {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f,
                             -1.2420140846e-1f, 1.4249322787e-1f, -1.6668057665e-1f,
                             2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f});
  float y = f * z * p;
  y += -2.12194440e-4f * e;
  y += -0.5f * z;
  float r = f + y;
  r += 0.693359375f * e;
  r = x == 0.0f ? -std::numeric_limits<float>::infinity() : r;
  r = x == std::numeric_limits<float>::infinity() ? x : r;
  return x < 0.0f || x != x ? std::numeric_limits<float>::quiet_NaN() : r;
}

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_VEC_MATH_H_
