// cpu::StridedLoop::Run, the walk under every CPU elementwise kernel: over random layouts
// (permuted, gapped, broadcast, reversed), and over layouts where an input lies across the
// output's runs (`a + b.t()`, which Run walks in tiles), it calls its run function on pieces
// that cover exactly the (output, input) element pairs of the reference walk, each once.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

#include "engine/cpu/strided_loop.h"
#include "gtest/gtest.h"
#include "tests/engine/layout_test_util.h"

namespace tensord::engine::cpu {
namespace {

using testing_util::Layout;
using testing_util::RandomLayout;
using testing_util::V;

using Pair = std::pair<int64_t, int64_t>;

std::vector<Pair> ReferencePairs(const V& sizes, const V& a, const V& b) {
  std::vector<Pair> pairs;
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

// The (output, input) element offsets Run visits (from 0, in elements of 4 and 2 bytes).
std::vector<Pair> RunPairs(const StridedLoop<2>& loop) {
  // Never dereferenced: the run function only subtracts it from the pointers it is given.
  char* const base = reinterpret_cast<char*>(uintptr_t{1} << 40);
  std::vector<Pair> got;
  std::mutex mu;
  loop.Run({base, base}, 6,
           [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
             std::vector<Pair> piece;
             for (int64_t i = 0; i < n; ++i) {
               piece.emplace_back((p[0] - base + i * s[0]) / 4, (p[1] - base + i * s[1]) / 2);
             }
             std::lock_guard<std::mutex> lock(mu);
             got.insert(got.end(), piece.begin(), piece.end());
           });
  std::sort(got.begin(), got.end());
  return got;
}

TEST(StridedLoopTest, RunVisitsTheReferencePairsOverRandomLayouts) {
  std::mt19937 rng(3);
  int tiled = 0;
  for (int round = 0; round < 400; ++round) {
    const int n = 1 + static_cast<int>(rng() % 4);
    V sizes(n);
    // Some long dims (up to 300: tiled when an input lies across the runs), else short ones.
    for (int64_t& s : sizes) s = 1 + static_cast<int64_t>(rng() % (round % 2 && n <= 3 ? 300 : 9));
    if (n == 3 && round % 2) sizes[0] = 1 + sizes[0] % 3;
    const Layout out = RandomLayout(rng, sizes, /*allow_broadcast=*/false);
    const Layout in = RandomLayout(rng, sizes, /*allow_broadcast=*/true);
    const StridedLoop<2> loop(sizes, {out.strides, in.strides}, {4, 2});
    tiled += loop.ReadsAcrossRuns();
    std::vector<Pair> want = ReferencePairs(sizes, out.strides, in.strides);
    std::sort(want.begin(), want.end());
    ASSERT_EQ(RunPairs(loop), want) << "round " << round;
  }
  EXPECT_GE(tiled, 20);
}

TEST(StridedLoopTest, AnInputAcrossTheRunsIsWalkedInTilesThatCoverEveryPairOnce) {
  int tiled = 0;
  // Rows and columns around the tiles' sizes, an outer dim, transposed and reversed inputs.
  for (const V& sizes : {V{300, 700}, V{3, 257, 17}, V{2, 40, 1000}, V{513, 9}, V{16, 16}}) {
    const int n = static_cast<int>(sizes.size());
    V out(n), across(n);
    int64_t s = 1;
    for (int d = n - 1; d >= 0; --d) out[d] = s, s *= sizes[d];
    // The input: the last two dims swapped in memory (a transposed contiguous tensor).
    across = out;
    across[n - 1] = sizes[n - 2];
    across[n - 2] = 1;
    for (bool reversed : {false, true}) {
      V in = across;
      if (reversed) in[n - 1] = -in[n - 1];
      const StridedLoop<2> loop(sizes, {out, in}, {4, 2});
      tiled += loop.ReadsAcrossRuns();
      std::vector<Pair> want = ReferencePairs(sizes, out, in);
      std::sort(want.begin(), want.end());
      ASSERT_EQ(RunPairs(loop), want) << "sizes " << sizes[0] << "x" << sizes[1];
    }
  }
  EXPECT_GE(tiled, 6);  // the [513, 9] and [16, 16] layouts' runs are too short to tile
  // Layouts that read along the runs are not tiled: contiguous, broadcast rows.
  EXPECT_FALSE(StridedLoop<2>(V{300, 700}, {V{700, 1}, V{700, 1}}, {4, 4}).ReadsAcrossRuns());
  EXPECT_FALSE(StridedLoop<2>(V{300, 700}, {V{700, 1}, V{0, 1}}, {4, 4}).ReadsAcrossRuns());
  EXPECT_FALSE(StridedLoop<2>(V{300, 700}, {V{700, 1}, V{1, 0}}, {4, 4}).ReadsAcrossRuns());
}

}  // namespace
}  // namespace tensord::engine::cpu
