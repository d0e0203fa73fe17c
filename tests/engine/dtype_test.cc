#include "engine/core/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "engine/core/half.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace tensord::engine {
namespace {

TEST(DTypeTest, NamesSizesAndParsing) {
  const struct {
    DType dtype;
    const char* name;
    int64_t itemsize;
  } kTable[] = {{DType::kBool, "bool", 1},       {DType::kUInt8, "uint8", 1},
                {DType::kInt8, "int8", 1},       {DType::kInt16, "int16", 2},
                {DType::kInt32, "int32", 4},     {DType::kInt64, "int64", 8},
                {DType::kFloat16, "float16", 2}, {DType::kBFloat16, "bfloat16", 2},
                {DType::kFloat32, "float32", 4}, {DType::kFloat64, "float64", 8}};
  for (const auto& row : kTable) {
    EXPECT_STREQ(DTypeName(row.dtype), row.name);
    EXPECT_EQ(ItemSize(row.dtype), row.itemsize);
    ASSERT_OK_AND_ASSIGN(DType parsed, ParseDType(row.name));
    EXPECT_EQ(parsed, row.dtype);
    ASSERT_OK_AND_ASSIGN(DType prefixed, ParseDType(std::string("torch.") + row.name));
    EXPECT_EQ(prefixed, row.dtype);
  }
  EXPECT_EQ(*ParseDType("float"), DType::kFloat32);
  EXPECT_EQ(*ParseDType("double"), DType::kFloat64);
  EXPECT_EQ(*ParseDType("half"), DType::kFloat16);
  EXPECT_EQ(*ParseDType("long"), DType::kInt64);
  EXPECT_EQ(*ParseDType("int"), DType::kInt32);
  EXPECT_EQ(*ParseDType("short"), DType::kInt16);
  EXPECT_THAT(ParseDType("complex64"),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(IsFloating(DType::kBFloat16));
  EXPECT_FALSE(IsFloating(DType::kInt64));
  EXPECT_TRUE(IsIntegral(DType::kBool, true));
  EXPECT_FALSE(IsIntegral(DType::kBool, false));
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(HalfTest, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = Half::ToFloat(static_cast<uint16_t>(h));
    const uint16_t back = Half::FromFloat(f);
    const bool is_nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    if (is_nan) {
      EXPECT_TRUE(std::isnan(f));
      EXPECT_EQ(back & 0x7c00u, 0x7c00u);
    } else {
      EXPECT_EQ(back, h) << "half bits " << h;
    }
  }
}

// _Float16 conversions are correctly rounded (round to nearest even) on x86-64 with GCC 12.
// clang 14 has no _Float16 on x86-64 (the sanitizer build): the check runs in the GCC build.
#ifdef __FLT16_MANT_DIG__
TEST(HalfTest, MatchesCompilerFloat16OnRandomFloats) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = bits(rng);
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, 2);
    ASSERT_EQ(Half::FromFloat(f), ref_bits) << "float bits " << u;
  }
}
#endif  // __FLT16_MANT_DIG__

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(Half::FromFloat(1.0f), 0x3c00);
  EXPECT_EQ(Half::FromFloat(-2.0f), 0xc000);
  EXPECT_EQ(Half::FromFloat(65504.0f), 0x7bff);
  EXPECT_EQ(Half::FromFloat(65520.0f), 0x7c00);  // rounds to inf
  EXPECT_EQ(Half::FromFloat(5.960464477539063e-08f), 0x0001);
  EXPECT_EQ(Half::ToFloat(0x3555), 0.333251953125f);
}

TEST(BFloat16Test, RoundsToNearestEven) {
  EXPECT_EQ(BFloat16::FromFloat(1.0f), 0x3f80);
  // 1 + 2^-8 is exactly between two bfloat16 values: ties go to even (1.0).
  EXPECT_EQ(BFloat16::FromFloat(1.00390625f), 0x3f80);
  // 1 + 3 * 2^-8 is a tie between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  EXPECT_EQ(BFloat16::FromFloat(1.01171875f), 0x3f82);
  EXPECT_EQ(BFloat16::FromFloat(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  EXPECT_EQ(BFloat16::ToFloat(0x4049), 3.140625f);
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> dist;
  for (int i = 0; i < 100000; ++i) {
    uint32_t u = dist(rng);
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    // The result is one of the two neighbours, and the nearer one.
    const uint16_t b = BFloat16::FromFloat(f);
    const float lo = BFloat16::ToFloat(static_cast<uint16_t>(u >> 16));
    const float hi = BFloat16::ToFloat(static_cast<uint16_t>((u >> 16) + 1));
    const float got = BFloat16::ToFloat(b);
    if (std::isinf(got) && !std::isinf(f)) continue;  // overflow to inf near FLT_MAX
    ASSERT_TRUE(Bits(got) == Bits(lo) || Bits(got) == Bits(hi)) << u;
    ASSERT_LE(std::abs(static_cast<double>(got) - f),
              std::abs(static_cast<double>(Bits(got) == Bits(lo) ? hi : lo) - f))
        << u;
  }
}

}  // namespace
}  // namespace tensord::engine
