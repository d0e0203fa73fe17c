// The CUDA kernels' offset calculator, run on the host: over random layouts (permuted, gapped,
// broadcast, reversed) it must visit exactly the (destination, source) element pairs that the
// reference copy visits, each once. Needs no GPU: the calculator is host/device code.
#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "engine/cpu/strided_loop.h"
#include "engine/cuda/offset_calculator.h"
#include "gtest/gtest.h"
#include "tests/engine/layout_test_util.h"

namespace tensord::engine::cuda {
namespace {

using testing_util::Layout;
using testing_util::RandomLayout;
using testing_util::V;

std::vector<std::pair<int64_t, int64_t>> ReferencePairs(const V& sizes, const V& a, const V& b) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  int64_t total = 1;
  for (int64_t s : sizes) total *= s;
  V idx(sizes.size(), 0);
  for (int64_t it = 0; it < total; ++it) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      oa += idx[d] * a[d];
      ob += idx[d] * b[d];
    }
    pairs.emplace_back(oa, ob);
    for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return pairs;
}

TEST(OffsetCalculatorTest, VisitsTheReferencePairsOverRandomLayouts) {
  std::mt19937 rng(7);
  for (int round = 0; round < 400; ++round) {
    const int n = 1 + static_cast<int>(rng() % 5);
    V sizes(n);
    for (int64_t& s : sizes) s = 1 + static_cast<int64_t>(rng() % 7);
    const int64_t dsize = 1 << (rng() % 4), ssize = 1 << (rng() % 4);
    const Layout dl = RandomLayout(rng, sizes, /*allow_broadcast=*/false);
    const Layout sl = RandomLayout(rng, sizes, /*allow_broadcast=*/true);
    const cpu::StridedLoop<2> loop(sizes, {dl.strides, sl.strides}, {dsize, ssize});
    const OffsetCalculator<2> calc = MakeOffsetCalculator<2>(loop);
    std::vector<std::pair<int64_t, int64_t>> got;
    for (int64_t i = 0; i < loop.numel(); ++i) {
      int64_t off[2];
      calc.Offsets(i, off);
      ASSERT_EQ(off[0] % dsize, 0);
      ASSERT_EQ(off[1] % ssize, 0);
      got.emplace_back(off[0] / dsize, off[1] / ssize);
    }
    std::vector<std::pair<int64_t, int64_t>> want = ReferencePairs(sizes, dl.strides, sl.strides);
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    ASSERT_EQ(got, want) << "round " << round;
  }
}

TEST(OffsetCalculatorTest, ContiguousOperandsMergeIntoOneRun) {
  const V sizes = {3, 4, 5};
  const V strides = {20, 5, 1};
  const cpu::StridedLoop<2> loop(sizes, {strides, strides}, {4, 2});
  const OffsetCalculator<2> calc = MakeOffsetCalculator<2>(loop);
  EXPECT_EQ(calc.ndim, 1);
  EXPECT_TRUE(calc.IsContiguous({4, 2}));
  const V transposed = {1, 3, 12};
  const cpu::StridedLoop<2> t(sizes, {strides, transposed}, {4, 4});
  EXPECT_FALSE(MakeOffsetCalculator<2>(t).IsContiguous({4, 4}));
}

TEST(OffsetCalculatorTest, EmptyAndZeroDim) {
  const V empty = {3, 0};
  const cpu::StridedLoop<1> loop(empty, {V{1, 1}}, {4});
  EXPECT_EQ(loop.numel(), 0);
  const V scalar = {};
  const cpu::StridedLoop<1> one(scalar, {V{}}, {4});
  const OffsetCalculator<1> calc = MakeOffsetCalculator<1>(one);
  int64_t off[1] = {-1};
  calc.Offsets(0, off);
  EXPECT_EQ(off[0], 0);
  EXPECT_EQ(one.numel(), 1);
}

}  // namespace
}  // namespace tensord::engine::cuda
