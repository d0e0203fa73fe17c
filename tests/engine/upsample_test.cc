// The resampling kernel (kernels/upsample.h): the CPU loop (engine/cpu/upsample_kernels.cc,
// whose 2-d path computes each input row's values along W once per run of output rows) and
// UpsampleOutput, the per-output function the CUDA kernel runs, against torch's nesting written
// out here (W innermost; along a dim v = x[i0] * w0, then v += x[i1] * w1, …; every product and
// sum rounded to the dtype for the linear modes, only the output for bicubic, whose weights are
// of the computation type), bit for bit, over random tables (2 taps as the linear modes, 4 as
// bicubic; upsampling and downsampling, repeated and clamped taps), 1-d, 2-d and 3-d, strided
// inputs and float32, float64 and bfloat16. Needs no GPU: UpsampleOutput is host/device code.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
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

template <typename T>
void CheckRandomResamplings(DType dtype, int taps, uint32_t seed) {
  using C = Calc<T>;
  std::mt19937 rng(seed);
  const auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::uniform_real_distribution<double> real(-2, 2), unit(-0.5, 1);
  for (int trial = 0; trial < 150; ++trial) {
    const int nd = taps == 4 ? 2 : 1 + trial % 3;  // bicubic is 2-d only
    UpsampleCall c;
    c.dtype = dtype;
    c.taps = taps;
    c.n = pick(1, 2);
    c.c = pick(1, 3);
    c.first = 3 - nd;
    int64_t in[3] = {1, 1, 1};
    std::vector<int64_t> index[3][4];
    std::vector<T> weight[3][4];
    std::vector<C> wide[3][4];  // bicubic's weights
    for (int d = c.first; d < 3; ++d) {
      in[d] = pick(1, d == 2 ? 30 : 8);
      c.out_size[d] = pick(1, d == 2 ? 61 : 17);
      for (int64_t o = 0; o < c.out_size[d]; ++o) {
        // Monotone taps as the planner's, clamped into the input (so repeated at its ends).
        const int64_t base = o * in[d] / c.out_size[d] - (taps == 4 ? 1 : 0);
        for (int t = 0; t < taps; ++t) {
          index[d][t].push_back(std::clamp<int64_t>(base + t, 0, in[d] - 1));
          weight[d][t].push_back(Round<T>(unit(rng)));
          wide[d][t].push_back(static_cast<C>(unit(rng)));
        }
      }
      for (int t = 0; t < taps; ++t) {
        c.index[d][t] = index[d][t].data();
        c.weight[d][t] = RoundsSteps(c) ? reinterpret_cast<const char*>(weight[d][t].data())
                                       : reinterpret_cast<const char*>(wide[d][t].data());
      }
    }
    // Strided input: every other element along W on odd trials, rows and planes padded.
    const int64_t gap = trial % 2 == 0 ? 1 : 2;
    int64_t* st = c.input_strides;
    st[4] = gap;
    st[3] = in[2] * gap + 1;
    st[2] = in[1] * st[3];
    st[1] = in[0] * st[2] + 3;
    st[0] = c.c * st[1];
    std::vector<T> input(static_cast<size_t>(c.n * st[0]));
    for (T& v : input) v = Round<T>(real(rng));
    const int64_t outputs = c.n * c.c * c.out_size[0] * c.out_size[1] * c.out_size[2];
    std::vector<T> out(static_cast<size_t>(outputs));
    c.input = reinterpret_cast<const char*>(input.data());
    c.out = reinterpret_cast<char*>(out.data());
    cpu::Upsample(c);
    const std::string where = absl::StrCat("trial ", trial, ": ", nd, "-d, ", taps,
                                           " taps, in ", in[0], "x", in[1], "x", in[2], " out ",
                                           c.out_size[0], "x", c.out_size[1], "x", c.out_size[2]);
    for (int64_t i = 0; i < outputs; ++i) {
      const int64_t o[3] = {i / (c.out_size[2] * c.out_size[1]) % c.out_size[0],
                            i / c.out_size[2] % c.out_size[1], i % c.out_size[2]};
      const int64_t p = i / (c.out_size[2] * c.out_size[1] * c.out_size[0]);
      const T* base = input.data() + p / c.c * st[0] + p % c.c * st[1];
      // The value at input offset `at` resampled along dims d, d + 1, …, 2: in T's arithmetic
      // (each step rounded to T) for the linear modes, in C for bicubic.
      std::function<C(int, int64_t)> resample = [&](int d, int64_t at) -> C {
        if (d == 3) return static_cast<C>(base[at]);
        C v = 0;
        for (int t = 0; t < taps; ++t) {
          const C inner = resample(d + 1, at + index[d][t][o[d]] * st[2 + d]);
          if (RoundsSteps(c)) {
            const T product = static_cast<T>(inner * static_cast<C>(weight[d][t][o[d]]));
            v = t == 0 ? static_cast<C>(product)
                       : static_cast<C>(static_cast<T>(v + static_cast<C>(product)));
          } else {
            const C product = inner * wide[d][t][o[d]];
            v = t == 0 ? product : v + product;
          }
        }
        return v;
      };
      const T want = static_cast<T>(resample(c.first, 0));
      const T shared = Convert<T>(UpsampleOutput<T>(c, base, o[0], o[1], o[2]));
      ASSERT_EQ(std::memcmp(&out[i], &want, sizeof(T)), 0) << where << " output " << i;
      ASSERT_EQ(std::memcmp(&shared, &want, sizeof(T)), 0) << where << " output " << i;
    }
  }
}

TEST(UpsampleTest, LinearFloat32NestsTheDimsAsTorch) {
  CheckRandomResamplings<float>(DType::kFloat32, 2, 1);
}
TEST(UpsampleTest, LinearFloat64NestsTheDimsAsTorch) {
  CheckRandomResamplings<double>(DType::kFloat64, 2, 2);
}
TEST(UpsampleTest, LinearBFloat16RoundsEveryStep) {
  CheckRandomResamplings<BFloat16>(DType::kBFloat16, 2, 3);
}
TEST(UpsampleTest, CubicFloat32AddsTheFourTapsInOrder) {
  CheckRandomResamplings<float>(DType::kFloat32, 4, 4);
}
TEST(UpsampleTest, CubicBFloat16RoundsEveryStep) {
  CheckRandomResamplings<BFloat16>(DType::kBFloat16, 4, 5);
}

}  // namespace
}  // namespace tensord::engine
