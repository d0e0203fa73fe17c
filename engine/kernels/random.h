// Counter-based random numbers (Philox4x32-10) and the distributions tensord draws from. The
// server keeps no generator state: element i of a draw comes from counter offset + i under key
// seed, on every device alike (the same seed gives the same numbers on the CPU and a GPU).
#ifndef TENSORD_ENGINE_KERNELS_RANDOM_H_
#define TENSORD_ENGINE_KERNELS_RANDOM_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "absl/status/status.h"
#include "engine/core/errors.h"
#include "engine/core/host_device.h"
#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"

namespace tensord::engine {

struct Philox {
  uint32_t out[4];
  TENSORD_HD Philox(uint64_t seed, uint64_t counter) {
    uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
    uint32_t c2 = 0, c3 = 0;
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int r = 0; r < 10; ++r) {
      const uint64_t p0 = uint64_t{0xD2511F53} * c0;
      const uint64_t p1 = uint64_t{0xCD9E8D57} * c2;
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
      const uint32_t n1 = static_cast<uint32_t>(p1);
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
      const uint32_t n3 = static_cast<uint32_t>(p0);
      c0 = n0, c1 = n1, c2 = n2, c3 = n3;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
  }
  // Uniform in [0, 1) with 24 (float) or 53 (double) random bits.
  TENSORD_HD float Float(int i = 0) const {
    return static_cast<float>(out[i] >> 8) * (1.0f / 16777216.0f);
  }
  TENSORD_HD double Double(int i = 0) const {
    const uint64_t bits = (static_cast<uint64_t>(out[i]) << 21) ^ (out[i + 1] >> 11);
    return static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
  }
  TENSORD_HD uint64_t U64() const { return (static_cast<uint64_t>(out[0]) << 32) | out[1]; }
};

enum class Dist {
  kUniform, kNormal, kInt, kBernoulliScalar, kBernoulliTensor, kPoisson,
  kBinomial,  // count per element in p, probability per element in DistArgs::probs
};

// One draw: the distribution, its parameters and the counter range's key and start.
struct DistArgs {
  Dist dist;
  double a = 0, b = 1;     // uniform [a, b); normal mean a, std b; bernoulli p a
                           // (kBernoulliTensor's p and kPoisson's rate: per element)
  int64_t lo = 0, hi = 0;  // randint [lo, hi)
  uint64_t seed = 0, offset = 0;
  const double* probs = nullptr;  // kBinomial: element i's probability (device memory)
};

// a + b * c with each operation rounded on its own: no fused multiply-add on either device, so
// that uniform draws are bit for bit the same on the CPU and a GPU (nvcc contracts a + b * c
// into an FMA by default).
TENSORD_HD inline double AddMulRounded(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, __dmul_rn(b, c));
#else
  return a + b * c;
#endif
}

// The largest C below `bound` toward `toward` (C float or double).
template <typename C>
TENSORD_HD inline C NextToward(C bound, C toward) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>) {
    return nextafterf(bound, toward);
  } else {
    return nextafter(bound, toward);
  }
#else
  return std::nextafter(bound, toward);
#endif
}

// Whether element parameter p is one the draw takes: a probability in [0, 1] (bernoulli), a
// rate >= 0 (poisson); NaN never.
TENSORD_HD inline bool DrawParameterValid(Dist dist, double p) {
  if (dist == Dist::kBinomial) return true;  // any count: see BinomialDraw
  return dist == Dist::kPoisson ? p >= 0 : (p >= 0 && p <= 1);
}

// The error of a draw with a parameter DrawParameterValid refuses, in torch's words.
inline absl::Status DrawParameterError(Dist dist) {
  if (dist == Dist::kPoisson) {
    return RuntimeError("poisson", "invalid Poisson rate, expected rate to be non-negative");
  }
  return RuntimeError("bernoulli", "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
}

// The uniforms of one element past its counter's first block: Philox blocks of the same
// counter under keys stepped from the seed, two 53-bit uniforms each, so that an element that
// needs more draws (a rejection sampler) stays on its own counter whatever the others use.
class ElementUniforms {
 public:
  TENSORD_HD ElementUniforms(uint64_t seed, uint64_t counter)
      : seed_(seed), counter_(counter), block_(seed, counter) {}
  // The next uniform in [0, 1).
  TENSORD_HD double Next() {
    if (used_ == 2) {
      ++key_;
      block_ = Philox(seed_ + key_ * uint64_t{0x9E3779B97F4A7C15}, counter_);
      used_ = 0;
    }
    return block_.Double(2 * used_++);
  }

 private:
  uint64_t seed_, counter_;
  uint64_t key_ = 0;
  int used_ = 0;
  Philox block_;
};

// A Poisson(rate) draw: below 10 Knuth's product of uniforms (rate + 1 of them on average),
// else Hormann's transformed rejection with squeeze (PTRS, 1993), which accepts about 9 in 10
// pairs. An infinite rate gives infinity; a rate past what PTRS's arithmetic holds, after 1000
// rejections, its last candidate.
TENSORD_HD inline double PoissonDraw(uint64_t seed, uint64_t counter, double rate) {
  if (rate == 0) return 0;
  if (std::isinf(rate)) return rate;
  ElementUniforms u(seed, counter);
  if (rate < 10) {
    const double limit = exp(-rate);
    double k = 0, product = 1.0 - u.Next();  // in (0, 1]
    while (product > limit) {
      k += 1;
      product *= 1.0 - u.Next();
    }
    return k;
  }
  const double slam = sqrt(rate), log_rate = log(rate);
  const double b = 0.931 + 2.53 * slam;
  const double a = -0.059 + 0.02483 * b;
  const double log_inv_alpha = log(1.1239 + 1.1328 / (b - 3.4));
  const double vr = 0.9277 - 3.6224 / (b - 2);
  double k = 0;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const double uu = u.Next() - 0.5, v = u.Next();
    const double us = 0.5 - fabs(uu);
    k = floor((2 * a / us + b) * uu + rate + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (log(v) + log_inv_alpha - log(a / (us * us) + b) <= -rate + k * log_rate - lgamma(k + 1)) {
      return k;
    }
  }
  return k < 0 ? 0 : k;
}

// A Binomial(count, prob) draw (count rounded down), as torch's: below count * min(p, 1 - p) =
// 10 the count of geometric gaps that fit in count; above, Hormann's BTRS (1993). p > 1/2 draws
// count minus a draw with 1 - p. Parameters torch does not check answer without looping: a count
// or probability at or below 0 gives 0, a probability at or above 1 the count, NaN gives NaN.
TENSORD_HD inline double BinomialDraw(uint64_t seed, uint64_t counter, double count,
                                      double prob) {
  if (count != count || prob != prob) return NAN;
  count = floor(count);
  if (count <= 0 || prob <= 0) return 0;
  if (prob >= 1) return count;
  const bool flip = prob > 0.5;
  const double p = flip ? 1.0 - prob : prob;
  ElementUniforms u(seed, counter);
  double k = 0;
  if (count * p < 10) {
    const double log_q = log1p(-p);
    double sum = 0;
    while (k <= count) {  // at most count + 1 gaps
      sum += ceil(log(1.0 - u.Next()) / log_q);
      if (sum > count) break;
      k += 1;
    }
    k = k > count ? count : k;
  } else {
    const double q = 1.0 - p, spq = sqrt(count * p * q);
    const double b = 1.15 + 2.53 * spq;
    const double a = -0.0873 + 0.0248 * b + 0.01 * p;
    const double c = count * p + 0.5;
    const double vr = 0.92 - 4.2 / b;
    const double alpha = (2.83 + 5.1 / b) * spq;
    const double lpq = log(p / q);
    const double m = floor((count + 1) * p);
    const double h = lgamma(m + 1) + lgamma(count - m + 1);
    for (int attempt = 0; attempt < 1000; ++attempt) {
      const double uu = u.Next() - 0.5;
      double v = u.Next();
      const double us = 0.5 - fabs(uu);
      k = floor((2 * a / us + b) * uu + c);
      if (k < 0 || k > count) continue;
      if (us >= 0.07 && v <= vr) break;
      v = log(v * alpha / (a / (us * us) + b));
      if (v <= h - lgamma(k + 1) - lgamma(count - k + 1) + (k - m) * lpq) break;
    }
    k = k < 0 ? 0 : (k > count ? count : k);
  }
  return flip ? count - k : k;
}

// Element `i` of draw `d` as a T: the one definition of every distribution, run by the CPU
// loop and the CUDA kernel alike. `p`: element i's probability (kBernoulliTensor) or rate
// (kPoisson), checked by the caller (DrawParameterValid). Uniform, integer and Bernoulli draws are exact (the same bits on
// every device); normal draws go through log, sqrt and cos, whose last bit may differ between
// the host's libm and CUDA's (each within 1-2 ulps; the draws within 4 ulps).
template <typename T>
TENSORD_HD inline T DrawElement(const DistArgs& d, uint64_t i, double p) {
  const Philox r(d.seed, d.offset + i);
  double v = 0;
  switch (d.dist) {
    case Dist::kUniform:
      v = AddMulRounded(d.a, d.b - d.a, std::is_same_v<T, double> ? r.Double() : r.Float());
      break;
    case Dist::kNormal: {
      // Box-Muller on two 53-bit uniforms (u1 in (0, 1]).
      const double u1 = 1.0 - r.Double(0), u2 = r.Double(2);
      v = d.a + d.b * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
      break;
    }
    case Dist::kInt: {
      const uint64_t range = static_cast<uint64_t>(d.hi) - static_cast<uint64_t>(d.lo);
      return Convert<T>(static_cast<int64_t>(static_cast<uint64_t>(d.lo) + r.U64() % range));
    }
    case Dist::kBernoulliScalar: v = r.Double() < d.a ? 1 : 0; break;
    case Dist::kBernoulliTensor: v = r.Double() < p ? 1 : 0; break;
    case Dist::kPoisson: v = PoissonDraw(d.seed, d.offset + i, p); break;
    case Dist::kBinomial: v = BinomialDraw(d.seed, d.offset + i, p, d.probs[i]); break;
  }
  if constexpr (std::is_floating_point_v<Calc<T>>) {
    // A draw rounded up to the bound (float32 near 1) stays inside [a, b).
    using C = Calc<T>;
    C c = static_cast<C>(v);
    if (d.dist == Dist::kUniform && c >= static_cast<C>(d.b) && d.b > d.a) {
      c = NextToward(static_cast<C>(d.b), static_cast<C>(d.a));
    }
    return Convert<T>(c);
  } else {
    return Convert<T>(static_cast<int64_t>(v));
  }
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_RANDOM_H_
