// The linear resampling kernel (kernels/upsample.h): the CPU loop (engine/cpu/upsample_kernels.cc,
// whose bilinear path computes each input row's values along W once per run of output rows)
// and LinearOutput, the per-output function the CUDA kernel runs, against torch's nesting
// written out here (W innermost: t = x[lo] * w0 + x[hi] * w1, every product and sum rounded to
// the dtype), bit for bit, over random tables (upsampling and downsampling, repeated and
// clamped taps), 1-d, 2-d and 3-d, strided inputs and float32, float64 and bfloat16. Needs no
// GPU: LinearOutput is host/device code.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/half.h"
#include "engine/cpu/upsample_kernels.h"
#include "engine/kernels/upsample.h"
#include "gtest/gtest.h"

namespace tensord::engine {
namespace {

template <typename T>
T Round(double v) {
  return static_cast<T>(static_cast<float>(v));
}

// a * w0 + b * w1 in T's arithmetic: each product and the sum rounded to T.
template <typename T>
T Blend(T a, T w0, T b, T w1) {
  using C = Calc<T>;
  const T p = static_cast<T>(static_cast<C>(a) * static_cast<C>(w0));
  const T q = static_cast<T>(static_cast<C>(b) * static_cast<C>(w1));
  return static_cast<T>(static_cast<C>(p) + static_cast<C>(q));
}

template <typename T>
void CheckRandomResamplings(DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::uniform_real_distribution<double> real(-2, 2), unit(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    const int nd = 1 + trial % 3;
    UpsampleLinearCall c;
    c.dtype = dtype;
    c.n = pick(1, 2);
    c.c = pick(1, 3);
    c.first = 3 - nd;
    int64_t in[3] = {1, 1, 1};
    std::vector<int64_t> lo[3], hi[3];
    std::vector<T> w0[3], w1[3];
    for (int d = c.first; d < 3; ++d) {
      in[d] = pick(1, d == 2 ? 30 : 8);
      c.out_size[d] = pick(1, d == 2 ? 61 : 17);
      for (int64_t o = 0; o < c.out_size[d]; ++o) {
        // Monotone taps as the planner's, sometimes repeated or clamped to the last position.
        const int64_t l = std::min<int64_t>(in[d] - 1, o * in[d] / c.out_size[d]);
        lo[d].push_back(l);
        hi[d].push_back(std::min<int64_t>(in[d] - 1, l + pick(0, 1)));
        const double w = unit(rng);
        w0[d].push_back(Round<T>(1 - w));
        w1[d].push_back(Round<T>(w));
      }
      c.lo[d] = lo[d].data(), c.hi[d] = hi[d].data();
      c.w0[d] = reinterpret_cast<const char*>(w0[d].data());
      c.w1[d] = reinterpret_cast<const char*>(w1[d].data());
    }
    // Strided input: every other element of a buffer twice as long along W, planes padded.
    const int64_t gap = trial % 2 == 0 ? 1 : 2;
    c.input_strides[4] = gap;
    c.input_strides[3] = in[2] * gap + 1;
    c.input_strides[2] = in[1] * c.input_strides[3];
    c.input_strides[1] = in[0] * c.input_strides[2] + 3;
    c.input_strides[0] = c.c * c.input_strides[1];
    std::vector<T> input(static_cast<size_t>(c.n * c.input_strides[0]));
    for (T& v : input) v = Round<T>(real(rng));
    const int64_t outputs = c.n * c.c * c.out_size[0] * c.out_size[1] * c.out_size[2];
    std::vector<T> out(static_cast<size_t>(outputs));
    c.input = reinterpret_cast<const char*>(input.data());
    c.out = reinterpret_cast<char*>(out.data());
    cpu::UpsampleLinear(c);
    const std::string where = absl::StrCat("trial ", trial, ": ", nd, "-d, in ", in[0], "x",
                                           in[1], "x", in[2], " out ", c.out_size[0], "x",
                                           c.out_size[1], "x", c.out_size[2]);
    const int64_t* st = c.input_strides;
    for (int64_t i = 0; i < outputs; ++i) {
      const int64_t x = i % c.out_size[2], y = i / c.out_size[2] % c.out_size[1];
      const int64_t z = i / (c.out_size[2] * c.out_size[1]) % c.out_size[0];
      const int64_t p = i / (c.out_size[2] * c.out_size[1] * c.out_size[0]);
      const T* base = input.data() + p / c.c * st[0] + p % c.c * st[1];
      const auto along_w = [&](int64_t k, int64_t h) {
        const T* row = base + k * st[2] + h * st[3];
        return Blend<T>(row[lo[2][x] * st[4]], w0[2][x], row[hi[2][x] * st[4]], w1[2][x]);
      };
      const auto along_h = [&](int64_t k) {
        if (nd == 1) return along_w(k, 0);
        return Blend<T>(along_w(k, lo[1][y]), w0[1][y], along_w(k, hi[1][y]), w1[1][y]);
      };
      const T want = nd < 3 ? along_h(0)
                            : Blend<T>(along_h(lo[0][z]), w0[0][z], along_h(hi[0][z]), w1[0][z]);
      const T shared = Convert<T>(LinearOutput<T>(c, base, z, y, x));
      ASSERT_EQ(std::memcmp(&out[i], &want, sizeof(T)), 0) << where << " output " << i;
      ASSERT_EQ(std::memcmp(&shared, &want, sizeof(T)), 0) << where << " output " << i;
    }
  }
}

TEST(UpsampleLinearTest, Float32NestsTheDimsAsTorch) {
  CheckRandomResamplings<float>(DType::kFloat32, 1);
}
TEST(UpsampleLinearTest, Float64NestsTheDimsAsTorch) {
  CheckRandomResamplings<double>(DType::kFloat64, 2);
}
TEST(UpsampleLinearTest, BFloat16RoundsEveryStep) {
  CheckRandomResamplings<BFloat16>(DType::kBFloat16, 3);
}

}  // namespace
}  // namespace tensord::engine
