// The float32 sum of a contiguous run (cpu::SumF32) gives the same bits with AVX2 as with SSE
// (the AVX2 form only widens the registers: the same 32 lanes, each adding its 8 elements of a
// block in the same order), for every
// length around its 256-element blocks and every start alignment; and both stay close to the
// exact sum.
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "engine/cpu/reduce_kernels.h"

namespace tensord::engine::cpu {
namespace {

TEST(ReduceSumTest, Avx2AndSseGiveTheSameBits) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU has no AVX2";
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> data(70000);
  for (size_t i = 0; i < data.size(); ++i) {
    // Magnitudes from 1e-3 to 1e3, both signs: partial sums that round differently by order.
    data[i] = normal(rng) * std::pow(10.0f, static_cast<float>(static_cast<int>(i % 7) - 3));
  }
  std::vector<int64_t> lengths;
  for (int64_t n = 0; n <= 1100; ++n) lengths.push_back(n);
  for (int64_t n : {4095, 4096, 4097, 12544, 65536, 69000}) lengths.push_back(n);
  int64_t compared = 0;
  for (int64_t start = 0; start < 8; ++start) {
    for (int64_t n : lengths) {
      const float* x = data.data() + start;
      const double sse = SumF32(x, n, /*allow_avx2=*/false);
      const double avx2 = SumF32(x, n, /*allow_avx2=*/true);
      ASSERT_EQ(std::bit_cast<uint64_t>(sse), std::bit_cast<uint64_t>(avx2))
          << "n=" << n << " start=" << start << " sse=" << sse << " avx2=" << avx2;
      double exact = 0;
      for (int64_t i = 0; i < n; ++i) exact += static_cast<double>(x[i]);
      double magnitude = 0;
      for (int64_t i = 0; i < n; ++i) magnitude += std::fabs(static_cast<double>(x[i]));
      // Each float lane rounds at most seven times (8 elements) before float64 takes over.
      ASSERT_LE(std::fabs(avx2 - exact), 7 * 6e-8 * magnitude + 1e-12) << "n=" << n;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 8 * static_cast<int64_t>(lengths.size()));
}

}  // namespace
}  // namespace tensord::engine::cpu
