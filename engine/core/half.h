// float16 and bfloat16 storage types with PyTorch's conversions (round to nearest even).
#ifndef TENSORD_ENGINE_CORE_HALF_H_
#define TENSORD_ENGINE_CORE_HALF_H_

#include <cstdint>
#include <cstring>

#include "engine/core/host_device.h"

namespace tensord::engine {

namespace detail {
TENSORD_HD inline uint32_t FloatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
TENSORD_HD inline float BitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
}  // namespace detail

// IEEE 754 binary16. Layout-compatible with uint16_t.
struct Half {
  uint16_t bits = 0;

  Half() = default;
  TENSORD_HD explicit Half(float f) : bits(FromFloat(f)) {}
  TENSORD_HD operator float() const { return ToFloat(bits); }

  TENSORD_HD static uint16_t FromFloat(float f) {
    // Round to nearest even, as c10::detail::fp16_ieee_from_fp32_value: the float unit does the
    // rounding by adding a bias that aligns the half's last mantissa bit.
    const float scale_to_inf = detail::BitsFloat(0x77800000u);
    const float scale_to_zero = detail::BitsFloat(0x08800000u);
    float base = ((f < 0 ? -f : f) * scale_to_inf) * scale_to_zero;
    const uint32_t w = detail::FloatBits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xff000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = detail::BitsFloat((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = detail::FloatBits(base);
    const uint32_t exp_bits = (bits >> 13) & 0x00007c00u;
    const uint32_t mantissa_bits = bits & 0x00000fffu;
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xff000000u ? 0x7e00u : nonsign));
  }

  TENSORD_HD static float ToFloat(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
      if (mant == 0) return detail::BitsFloat(sign);
      // Subnormal: value = mant * 2^-24.
      float v = static_cast<float>(mant) * 5.9604644775390625e-08f;
      return sign ? -v : v;
    }
    if (exp == 0x1f) return detail::BitsFloat(sign | 0x7f800000u | (mant << 13));
    return detail::BitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

// bfloat16: the upper half of a float32.
struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  TENSORD_HD explicit BFloat16(float f) : bits(FromFloat(f)) {}
  TENSORD_HD operator float() const { return ToFloat(bits); }

  TENSORD_HD static uint16_t FromFloat(float f) {
    // As c10::detail::round_to_nearest_even.
    if (f != f) return 0x7fc0u;
    const uint32_t u = detail::FloatBits(f);
    const uint32_t rounding_bias = ((u >> 16) & 1u) + 0x7fffu;
    return static_cast<uint16_t>((u + rounding_bias) >> 16);
  }
  TENSORD_HD static float ToFloat(uint16_t b) { return detail::BitsFloat(static_cast<uint32_t>(b) << 16); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_CORE_HALF_H_
