// The pooling kernels (kernels/pool.h): the CPU loop (engine/cpu/pool_kernels.cc, whose
// interior outputs are folded tap by tap across a row) and MaxPoolWindow / AvgPoolWindow, the
// per-output functions the CUDA kernel runs, against definitions written here from torch's
// kernels (max: the last NaN wins; avg: a sum in row-major order in the computation type, the
// divisor with or without the padding, or given; an adaptive bin's sum divided by its length
// along each dim in turn), over
// random geometries (kernel, stride, padding up to half the kernel, dilation, 2-d and 3-d;
// adaptive bins [floor(o * in / out), ceil((o + 1) * in / out))),
// layouts (contiguous, channels-last, transposed) and data with ties, NaNs and -inf. Needs no
// GPU: the per-output functions are host/device code.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/half.h"
#include "engine/cpu/pool_kernels.h"
#include "engine/kernels/pool.h"
#include "gtest/gtest.h"

namespace tensord::engine {
namespace {

// The input's strides for `layout`: 0 contiguous, 1 channels-last, 2 H and W transposed.
void SetLayout(int layout, PoolCall* c) {
  const int64_t plane = c->in[0] * c->in[1] * c->in[2];
  int64_t* st = c->input_strides;
  if (layout == 1) {
    st[1] = 1, st[4] = c->c, st[3] = c->c * c->in[2], st[2] = c->c * c->in[2] * c->in[1];
    st[0] = c->c * plane;
  } else {
    st[0] = c->c * plane, st[1] = plane, st[2] = c->in[1] * c->in[2];
    st[3] = layout == 2 ? 1 : c->in[2];
    st[4] = layout == 2 ? c->in[1] : 1;
  }
}

// torch's rule, written out: along each dim the taps o * stride - padding + t * dilation for t
// in [0, kernel) that fall inside the input; a NaN or a larger value takes the max's place; with
// no such value the index is the window's first tap at or past 0.
template <typename T>
void Reference(const PoolCall& c, const T* input, std::vector<double>* values,
               std::vector<int64_t>* indices) {
  for (int64_t plane = 0; plane < c.n * c.c; ++plane) {
    const T* base = input + plane / c.c * c.input_strides[0] + plane % c.c * c.input_strides[1];
    for (int64_t z = 0; z < c.out_size[0]; ++z) {
      for (int64_t y = 0; y < c.out_size[1]; ++y) {
        for (int64_t x = 0; x < c.out_size[2]; ++x) {
          const int64_t o[3] = {z, y, x};
          // Per dim: the taps start[d] + t * step[d] for t < taps[d].
          int64_t first[3], start[3], step[3], taps[3];
          for (int d = 0; d < 3; ++d) {
            if (c.adaptive) {
              start[d] = o[d] * c.in[d] / c.out_size[d];
              const int64_t end = (o[d] + 1) * c.in[d] / c.out_size[d] +
                                  ((o[d] + 1) * c.in[d] % c.out_size[d] != 0 ? 1 : 0);
              step[d] = 1, taps[d] = end - start[d];
            } else {
              start[d] = o[d] * c.stride[d] - c.padding[d];
              step[d] = c.dilation[d], taps[d] = c.kernel[d];
            }
            first[d] = start[d];
            while (first[d] < 0) first[d] += step[d];
          }
          double best = -std::numeric_limits<double>::infinity();
          int64_t at = (first[0] * c.in[1] + first[1]) * c.in[2] + first[2];
          for (int64_t a = 0; a < taps[0]; ++a) {
            for (int64_t b = 0; b < taps[1]; ++b) {
              for (int64_t e = 0; e < taps[2]; ++e) {
                const int64_t p[3] = {start[0] + a * step[0], start[1] + b * step[1],
                                      start[2] + e * step[2]};
                bool inside = true;
                for (int d = 0; d < 3; ++d) inside = inside && p[d] >= 0 && p[d] < c.in[d];
                if (!inside) continue;
                const double v = static_cast<double>(
                    static_cast<float>(base[p[0] * c.input_strides[2] + p[1] * c.input_strides[3] +
                                            p[2] * c.input_strides[4]]));
                if (v > best || std::isnan(v)) {
                  best = v;
                  at = (p[0] * c.in[1] + p[1]) * c.in[2] + p[2];
                }
              }
            }
          }
          values->push_back(best);
          indices->push_back(at);
        }
      }
    }
  }
}

bool Same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

template <typename T>
void CheckRandomPools(DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 300; ++trial) {
    PoolCall c;
    c.dtype = dtype;
    c.n = pick(1, 2);
    c.c = pick(1, 3);
    const int nd = trial % 3 == 0 ? 3 : 2;
    c.adaptive = trial % 5 == 4;
    for (int d = 3 - nd; d < 3; ++d) {
      if (c.adaptive) {
        c.in[d] = pick(1, d == 2 ? 40 : 9);
        c.out_size[d] = pick(1, 2 * c.in[d] + 1);  // bins longer and shorter than one element
        continue;
      }
      c.kernel[d] = pick(1, 4);
      c.stride[d] = pick(1, 3);
      c.padding[d] = pick(0, c.kernel[d] / 2);
      c.dilation[d] = pick(1, 3);
      c.in[d] = pick(1, d == 2 ? 40 : 7);
      const int64_t span = c.dilation[d] * (c.kernel[d] - 1) + 1;
      const int64_t room = c.in[d] + 2 * c.padding[d] - span;
      if (room < 0) c.in[d] += -room;  // the planner refuses windows larger than the input
      c.out_size[d] = (c.in[d] + 2 * c.padding[d] - span) / c.stride[d] + 1;
    }
    const int layout = trial % 4 == 1 ? 1 : trial % 4 == 2 ? 2 : 0;
    SetLayout(layout, &c);
    const int64_t plane = c.in[0] * c.in[1] * c.in[2];
    const int64_t* st = c.input_strides;
    std::vector<T> input(static_cast<size_t>(c.n * c.c * plane));
    for (T& v : input) {
      const int64_t r = pick(0, 19);
      const double value = r == 0   ? std::nan("")
                           : r == 1 ? -std::numeric_limits<double>::infinity()
                                    : static_cast<double>(pick(-3, 3));  // ties
      v = static_cast<T>(static_cast<float>(value));
    }
    const int64_t outputs = c.n * c.c * c.out_size[0] * c.out_size[1] * c.out_size[2];
    std::vector<T> out(static_cast<size_t>(outputs)), out_plain(static_cast<size_t>(outputs));
    std::vector<int64_t> index(static_cast<size_t>(outputs));
    c.input = reinterpret_cast<const char*>(input.data());
    c.out = reinterpret_cast<char*>(out.data());
    c.indices = index.data();
    cpu::Pool(c);
    PoolCall plain = c;  // values only: the loop without indices
    plain.out = reinterpret_cast<char*>(out_plain.data());
    plain.indices = nullptr;
    cpu::Pool(plain);
    std::vector<double> want;
    std::vector<int64_t> want_index;
    Reference(c, input.data(), &want, &want_index);
    const std::string where =
        absl::StrCat("trial ", trial, c.adaptive ? " adaptive" : "", ": in ", c.in[0], "x", c.in[1], "x", c.in[2], " kernel ",
                     c.kernel[0], "x", c.kernel[1], "x", c.kernel[2], " stride ", c.stride[0],
                     "x", c.stride[1], "x", c.stride[2], " padding ", c.padding[0], "x",
                     c.padding[1], "x", c.padding[2], " dilation ", c.dilation[0], "x",
                     c.dilation[1], "x", c.dilation[2], " layout ", layout);
    for (int64_t i = 0; i < outputs; ++i) {
      ASSERT_TRUE(Same(static_cast<float>(out[i]), want[i])) << where << " output " << i;
      ASSERT_TRUE(Same(static_cast<float>(out_plain[i]), want[i])) << where << " output " << i;
      ASSERT_EQ(index[i], want_index[i]) << where << " output " << i;
    }
    // MaxPoolWindow, output by output as the CUDA kernel calls it.
    for (int64_t i = 0; i < outputs; ++i) {
      const int64_t x = i % c.out_size[2], y = i / c.out_size[2] % c.out_size[1];
      const int64_t z = i / (c.out_size[2] * c.out_size[1]) % c.out_size[0];
      const int64_t p = i / (c.out_size[2] * c.out_size[1] * c.out_size[0]);
      const T* base = input.data() + p / c.c * st[0] + p % c.c * st[1];
      Calc<T> best;
      int64_t at;
      MaxPoolWindow<T>(c, base, WindowSpan(c, 0, z), WindowSpan(c, 1, y), WindowSpan(c, 2, x),
                       &best, &at);
      ASSERT_TRUE(Same(static_cast<float>(best), want[i])) << where << " output " << i;
      ASSERT_EQ(at, want_index[i]) << where << " output " << i;
    }
  }
}

// avg_pool as torch's kernels compute it: per dim start = o * stride - padding, end =
// min(start + kernel, in + padding), the padded size (end - start) multiplied over the dims,
// then both clipped to the input; the clipped window's elements added in row-major order in
// Calc<T> (integers wrapping), divided by the override, the padded size or the clipped one
// (integers truncating); an empty window gives 0. An adaptive bin [floor(o * in / out),
// ceil((o + 1) * in / out)) divides its sum by its length along each dim in turn.
template <typename T>
Calc<T> AvgReference(const PoolCall& c, const T* base, int64_t z, int64_t y, int64_t x) {
  using C = Calc<T>;
  const int64_t o[3] = {z, y, x};
  int64_t lo[3], hi[3], size = 1, inside = 1;
  for (int d = 0; d < 3; ++d) {
    if (c.adaptive) {
      lo[d] = o[d] * c.in[d] / c.out_size[d];
      hi[d] = ((o[d] + 1) * c.in[d] + c.out_size[d] - 1) / c.out_size[d];
      continue;
    }
    lo[d] = o[d] * c.stride[d] - c.padding[d];
    hi[d] = std::min(lo[d] + c.kernel[d], c.in[d] + c.padding[d]);
    size *= hi[d] - lo[d];
    lo[d] = std::max<int64_t>(lo[d], 0);
    hi[d] = std::min(hi[d], c.in[d]);
    if (lo[d] >= hi[d]) return C(0);
    inside *= hi[d] - lo[d];
  }
  C sum = 0;
  for (int64_t a = lo[0]; a < hi[0]; ++a) {
    for (int64_t b = lo[1]; b < hi[1]; ++b) {
      for (int64_t e = lo[2]; e < hi[2]; ++e) {
        const C v = static_cast<C>(base[a * c.input_strides[2] + b * c.input_strides[3] +
                                        e * c.input_strides[4]]);
        if constexpr (std::is_integral_v<C>) {
          sum = static_cast<C>(static_cast<uint64_t>(sum) + static_cast<uint64_t>(v));
        } else {
          sum += v;
        }
      }
    }
  }
  if constexpr (!std::is_integral_v<C>) {
    if (c.adaptive) {
      for (int d = 0; d < 3; ++d) sum /= static_cast<C>(hi[d] - lo[d]);
      return sum;
    }
  }
  const int64_t divisor = c.divisor != 0 ? c.divisor : c.count_include_pad ? size : inside;
  return sum / static_cast<C>(divisor);
}

template <typename T>
void CheckRandomAvgPools(DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 300; ++trial) {
    PoolCall c;
    c.kind = PoolKind::kAvg;
    c.dtype = dtype;
    c.n = pick(1, 2);
    c.c = pick(1, 3);
    c.count_include_pad = trial % 2 == 0;
    c.divisor = trial % 7 == 3 ? pick(-5, 5) : 0;
    if (c.divisor == 0 && trial % 7 == 3) c.divisor = 3;
    const int nd = trial % 3 == 0 ? 3 : 2;
    const bool ceil_mode = trial % 4 >= 2;
    c.adaptive = !std::is_same_v<T, int64_t> && trial % 5 == 4;  // torch's are floating only
    for (int d = 3 - nd; d < 3; ++d) {
      if (c.adaptive) {
        c.in[d] = pick(1, d == 2 ? 40 : 9);
        c.out_size[d] = pick(1, 2 * c.in[d] + 1);
        continue;
      }
      c.kernel[d] = pick(1, 5);
      c.stride[d] = pick(1, 3);
      c.padding[d] = pick(0, c.kernel[d] / 2);
      c.in[d] = std::max<int64_t>(pick(1, d == 2 ? 40 : 7), c.kernel[d] - 2 * c.padding[d]);
      const int64_t span = c.in[d] + 2 * c.padding[d] - c.kernel[d];
      int64_t out = (span + (ceil_mode ? c.stride[d] - 1 : 0)) / c.stride[d] + 1;
      if (ceil_mode && (out - 1) * c.stride[d] >= c.in[d] + c.padding[d]) --out;
      c.out_size[d] = out;
    }
    const int layout = trial % 4 == 1 ? 1 : trial % 4 == 2 ? 2 : 0;
    SetLayout(layout, &c);
    const int64_t plane = c.in[0] * c.in[1] * c.in[2];
    const int64_t* st = c.input_strides;
    std::vector<T> input(static_cast<size_t>(c.n * c.c * plane));
    std::uniform_real_distribution<double> real(-3, 3);
    for (T& v : input) {
      if constexpr (std::is_same_v<T, int64_t>) {
        v = trial % 5 == 0 ? static_cast<int64_t>(uint64_t{rng()} << 31)  // sums wrap too
                            : pick(-100, 100);
      } else {
        v = static_cast<T>(static_cast<float>(real(rng)));
      }
    }
    const int64_t outputs = c.n * c.c * c.out_size[0] * c.out_size[1] * c.out_size[2];
    std::vector<T> out(static_cast<size_t>(outputs));
    c.input = reinterpret_cast<const char*>(input.data());
    c.out = reinterpret_cast<char*>(out.data());
    cpu::Pool(c);
    const std::string where = absl::StrCat(
        "trial ", trial, c.adaptive ? " adaptive" : "", ": in ", c.in[0], "x", c.in[1], "x", c.in[2], " kernel ", c.kernel[0],
        "x", c.kernel[1], "x", c.kernel[2], " stride ", c.stride[0], "x", c.stride[1], "x",
        c.stride[2], " padding ", c.padding[0], "x", c.padding[1], "x", c.padding[2],
        " count_include_pad ", c.count_include_pad, " divisor ", c.divisor, " layout ", layout);
    for (int64_t i = 0; i < outputs; ++i) {
      const int64_t x = i % c.out_size[2], y = i / c.out_size[2] % c.out_size[1];
      const int64_t z = i / (c.out_size[2] * c.out_size[1]) % c.out_size[0];
      const int64_t p = i / (c.out_size[2] * c.out_size[1] * c.out_size[0]);
      const T* base = input.data() + p / c.c * st[0] + p % c.c * st[1];
      const T want = Convert<T>(AvgReference<T>(c, base, z, y, x));
      const T shared = Convert<T>(AvgPoolWindow<T>(c, base, WindowSpan(c, 0, z),
                                                   WindowSpan(c, 1, y), WindowSpan(c, 2, x),
                                                   c.adaptive ? 1 : AvgPoolDivisor(c, z, y, x)));
      // Compared as bits: the same additions in the same order round the same.
      ASSERT_EQ(std::memcmp(&out[i], &want, sizeof(T)), 0) << where << " output " << i;
      ASSERT_EQ(std::memcmp(&shared, &want, sizeof(T)), 0) << where << " output " << i;
    }
  }
}

TEST(AvgPoolTest, Float32AddsInTorchsOrderOverGeometriesAndLayouts) {
  CheckRandomAvgPools<float>(DType::kFloat32, 11);
}
TEST(AvgPoolTest, Float64AddsInTorchsOrder) { CheckRandomAvgPools<double>(DType::kFloat64, 12); }
TEST(AvgPoolTest, BFloat16AddsInFloat) { CheckRandomAvgPools<BFloat16>(DType::kBFloat16, 13); }
TEST(AvgPoolTest, Int64WrapsAndTruncates) { CheckRandomAvgPools<int64_t>(DType::kInt64, 14); }

TEST(MaxPoolTest, Float32MatchesTorchsRuleOverGeometriesAndLayouts) {
  CheckRandomPools<float>(DType::kFloat32, 1);
}
TEST(MaxPoolTest, Float64MatchesTorchsRule) { CheckRandomPools<double>(DType::kFloat64, 2); }
TEST(MaxPoolTest, BFloat16MatchesTorchsRule) { CheckRandomPools<BFloat16>(DType::kBFloat16, 3); }

}  // namespace
}  // namespace tensord::engine
