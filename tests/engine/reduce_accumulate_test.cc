// AccumulateStrided and AccumulateContiguous (engine/kernels/reduce_functors.h), the share of a
// reduction each thread of a CUDA block accumulates with four loads in flight (the second in
// 16-byte pieces after an unaligned head), run on the host as a block runs it: its threads'
// partials, combined, must store what one sequential pass stores, for every reduction functor,
// with ties, NaNs, integer wrap-around, strided rows, part boundaries and every alignment of a
// contiguous run's start and end. Needs no GPU.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/core/half.h"
#include "engine/kernels/reduce_ops.h"  // ScanOp, which reduce_functors.h uses
#include "engine/kernels/reduce_functors.h"
#include "gtest/gtest.h"

namespace tensord::engine {
namespace {

// The stored output (as double) and index of reducing in[base + j * stride], j in [r0, r1):
// sequentially, or by `threads` threads as the kernel splits the part (stride 1: the
// contiguous loop).
template <typename T, typename F>
std::pair<double, int64_t> Reduce(const F& f, const T* in, int64_t base, int64_t stride,
                                  int64_t r0, int64_t r1, int threads) {
  typename F::Acc acc = f.Init();
  if (threads == 0) {
    for (int64_t j = r0; j < r1; ++j) acc = f.Step(acc, LoadCalc(in + base + j * stride), j);
  } else {
    std::vector<typename F::Acc> partial;
    for (int t = 0; t < threads; ++t) {
      partial.push_back(stride == 1
                            ? AccumulateContiguous<T>(f, in, base, r0, r1, t, threads)
                            : AccumulateStrided<T>(f, in, base, stride, r0 + t, r1, threads));
    }
    // The kernel's shared-memory tree: pairs (t, t + s) for s = threads/2, threads/4, ...
    for (int s = threads / 2; s > 0; s /= 2) {
      for (int t = 0; t < s; ++t) partial[t] = f.Combine(partial[t], partial[t + s]);
    }
    acc = partial[0];
  }
  double out = 0;
  int64_t index = -1;
  f.Store(reinterpret_cast<char*>(&out), DType::kFloat64, &index, 0, acc);
  return {out, index};
}

// Checked rows are every kStride-th element of the data from kBase on.
constexpr int64_t kBase = 2, kStride = 3;

// Every stride-th element from `base` on, or (stride 1) contiguous runs starting at each
// element of a 16-byte line and ending anywhere in one.
template <typename T, typename F>
void CheckRows(const F& f, const T* in, int64_t n, int64_t base, int64_t stride, bool exact) {
  const int64_t r = (n - base + stride - 1) / stride;
  // Whole rows and parts of them (the kernel splits long rows into parts).
  for (const auto& [r0, r1] : std::vector<std::pair<int64_t, int64_t>>{
           {0, r}, {0, 1}, {5, 6}, {7, r - 11}, {r / 2, r}, {3, 3}, {1, 40}, {2, r - 1}}) {
    if (r1 > r || r0 > r1) continue;  // a short run
    const auto want = Reduce<T>(f, in, base, stride, r0, r1, 0);
    for (int threads : {1, 2, 4, 32, 256}) {
      SCOPED_TRACE(testing::Message() << "base " << base << ", stride " << stride << ", part ["
                                      << r0 << ", " << r1 << "), " << threads << " threads");
      const auto got = Reduce<T>(f, in, base, stride, r0, r1, threads);
      EXPECT_EQ(got.second, want.second);
      if (std::isnan(want.first)) {
        EXPECT_TRUE(std::isnan(got.first));
      } else if (exact || std::isinf(want.first)) {
        EXPECT_EQ(got.first, want.first);
      } else {
        EXPECT_NEAR(got.first, want.first, 1e-12 * std::max(1.0, std::fabs(want.first)));
      }
    }
  }
}

template <typename T, typename F>
void Check(const std::string& what, const F& f, const std::vector<T>& in, bool exact) {
  SCOPED_TRACE(what);
  const int64_t n = static_cast<int64_t>(in.size());
  CheckRows(f, in.data(), n, kBase, kStride, exact);
  // std::vector's data is 16-byte aligned: bases 0..17 start a run at every place of a line.
  static_assert(alignof(std::max_align_t) >= 16);
  for (int64_t base = 0; base < 18; ++base) CheckRows(f, in.data(), n, base, 1, exact);
}

template <typename T>
std::vector<T> Data(int64_t n, uint32_t seed, int distinct, bool nans) {
  std::mt19937 rng(seed);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) {
    const int k = static_cast<int>(rng() % distinct) - distinct / 2;
    x = static_cast<T>(static_cast<float>(k) * 0.5f);
  }
  if (nans) {
    if constexpr (kIsFloat<T>) {
      // On the checked row, a third and two thirds of the way along it.
      const int64_t row = (n - kBase + kStride - 1) / kStride;
      for (const int64_t j : {row / 3, 2 * row / 3}) {
        v[static_cast<size_t>(kBase + j * kStride)] =
            static_cast<T>(std::numeric_limits<float>::quiet_NaN());
      }
    }
  }
  return v;
}

TEST(ReduceAccumulateTest, EveryFunctorStoresWhatOneSequentialPassStores) {
  for (const int64_t n : {1000, 1003}) {
    SCOPED_TRACE(testing::Message() << n << " elements");
    const auto f = Data<float>(n, 1, 9, false);      // many ties
    const auto fn = Data<float>(n, 2, 9, true);      // ties and two NaNs
    const auto d = Data<double>(n, 3, 1000, false);
    const auto h = Data<Half>(n, 4, 7, true);
    const auto i16 = Data<int16_t>(n, 5, 11, false);
    std::vector<int64_t> big(static_cast<size_t>(n), std::numeric_limits<int64_t>::max() / 3);

    Check("sum float", SumOp<float>{}, f, false);
    Check("sum float with NaN", SumOp<float>{}, fn, false);
    Check("sum int16", SumOp<int16_t>{}, i16, true);
    Check("sum int64 wrapping", SumOp<int64_t>{}, big, true);
    SumOp<double> mean;
    mean.mean = true;
    mean.count = 7;
    Check("mean double", mean, d, false);
    Check("prod int16", ProdOp<int16_t>{}, i16, true);
    Check("amax float with NaN", ExtremumOp<float, true>{}, fn, true);
    Check("amin half with NaN", ExtremumOp<Half, false>{}, h, true);
    Check("amin int16", ExtremumOp<int16_t, false>{}, i16, true);
    ArgOp<float, true> argmax;
    argmax.values = true;
    Check("max float (ties)", argmax, f, true);
    Check("max float with NaN", argmax, fn, true);
    ArgOp<int16_t, false> argmin;
    argmin.values = true;
    Check("min int16 (ties)", argmin, i16, true);
    ArgOp<Half, true> argmax_half;
    argmax_half.values = true;
    Check("max half with NaN", argmax_half, h, true);
    Check("all", LogicalOp<int16_t, true>{}, i16, true);
    Check("any", LogicalOp<float, false>{}, f, true);
    Check("count_nonzero", CountOp<float>{}, f, true);
    VarOp<double> var;
    var.correction = 1;
    Check("var double", var, d, false);
    VarOp<float> stdev;
    stdev.correction = 0;
    stdev.take_sqrt = true;
    Check("std float", stdev, f, false);
    for (double p : {2.0, 1.0, 0.0, 3.5, std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
      NormOp<float> norm;
      norm.p = p;
      Check("norm p=" + std::to_string(p), norm, f, false);
      Check("norm with NaN p=" + std::to_string(p), norm, fn, false);
    }
    Check("logsumexp double", LseOp<double>{}, d, false);
    Check("logsumexp float with NaN", LseOp<float>{}, fn, false);
  }
}

// Bool tensors over bytes other than 0 and 1 (a uint8 storage viewed as bool): the contiguous
// loop reads them in 16-byte pieces of uint8 lanes, nonzero meaning true, as LoadElement does.
TEST(ReduceAccumulateTest, BoolRunsOfAnyBytesCountEveryNonzeroByteAsTrue) {
  alignas(16) uint8_t bytes[1003];
  std::mt19937 rng(7);
  for (uint8_t& b : bytes) b = rng() % 3 == 0 ? 0 : static_cast<uint8_t>(1 + rng() % 255);
  for (int i = 0; i < 40; ++i) bytes[500 + i] = 0;  // a run of false
  const bool* in = reinterpret_cast<const bool*>(bytes);
  for (int64_t base = 0; base < 18; ++base) {
    SCOPED_TRACE(testing::Message() << "base " << base);
    CheckRows(SumOp<bool>{}, in, 1003, base, 1, true);
    CheckRows(CountOp<bool>{}, in, 1003, base, 1, true);
    CheckRows(LogicalOp<bool, true>{}, in, 1003, base, 1, true);
    CheckRows(LogicalOp<bool, false>{}, in + 500, 40, base % 4, 1, true);
    ArgOp<bool, true> argmax;
    CheckRows(argmax, in + 500, 80, base, 1, true);
  }
  // The sum counts the nonzero bytes, whatever their value.
  int64_t nonzero = 0;
  for (uint8_t b : bytes) nonzero += b != 0;
  EXPECT_EQ(Reduce<bool>(SumOp<bool>{}, in, 0, 1, 0, 1003, 32).first, static_cast<double>(nonzero));
}

}  // namespace
}  // namespace tensord::engine
