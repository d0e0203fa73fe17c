// The float32 sum of a contiguous run (cpu::SumF32) gives the same bits with AVX2 as with SSE
// (the AVX2 form only widens the registers: the same 32 lanes, each adding its 8 elements of a
// block in the same order), for every
// length around its 256-element blocks and every start alignment; and both stay close to the
// exact sum. The sums over rows (cpu::AddRowsF32, run by cpu::Reduce for float32 sums and
// means whose outputs lie along a row) give, with AVX2 and with SSE, exactly the order they
// document, for every row count and width around their groups; and cpu::Reduce over leading,
// split and several reduced dims gives that order's sums, close to the exact ones.
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "engine/cpu/reduce_kernels.h"
#include "engine/kernels/reduce_ops.h"

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

std::vector<float> Data(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> data(n);
  for (size_t i = 0; i < n; ++i) {
    data[i] = normal(rng) * std::pow(10.0f, static_cast<float>(static_cast<int>(i % 5) - 2));
  }
  return data;
}

// AddRowsF32's documented order, written out one column at a time.
void AddRowsReference(const float* x, int64_t stride, int64_t rows, int64_t n, double* acc) {
  for (int64_t c = 0; c < n; ++c) {
    int64_t r = 0;
    for (; r + kColumnRows <= rows; r += kColumnRows) {
      float s = x[r * stride + c];
      for (int k = 1; k < kColumnRows; ++k) s += x[(r + k) * stride + c];
      acc[c] += static_cast<double>(s);
    }
    for (; r < rows; ++r) acc[c] += static_cast<double>(x[r * stride + c]);
  }
}

TEST(ReduceSumTest, RowsAddInTheirDocumentedOrderWithAvx2AndSse) {
  const std::vector<float> data = Data(40 * 70, 11);
  int64_t compared = 0;
  for (int64_t rows = 0; rows <= 40; ++rows) {
    for (int64_t n = 0; n <= 37; ++n) {
      for (int64_t stride : {n, int64_t{70}}) {
        if (stride == 0 && rows > 1) continue;
        std::vector<double> want(n, 0.25), sse(n, 0.25), avx2(n, 0.25);
        AddRowsReference(data.data(), stride, rows, n, want.data());
        AddRowsF32(data.data(), stride, rows, n, sse.data(), /*allow_avx2=*/false);
        AddRowsF32(data.data(), stride, rows, n, avx2.data(), /*allow_avx2=*/true);
        for (int64_t c = 0; c < n; ++c) {
          ASSERT_EQ(std::bit_cast<uint64_t>(sse[c]), std::bit_cast<uint64_t>(want[c]))
              << "SSE rows=" << rows << " n=" << n << " stride=" << stride << " column " << c;
          ASSERT_EQ(std::bit_cast<uint64_t>(avx2[c]), std::bit_cast<uint64_t>(want[c]))
              << "AVX2 rows=" << rows << " n=" << n << " stride=" << stride << " column " << c;
        }
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 40 * 37);
}

// Sums of a float32 tensor over `red` dims (sizes and element strides), keeping `kept` dims,
// through cpu::Reduce, against exact float64 sums.
void ExpectReduceSums(const std::vector<float>& data, const ReduceGeometry& g, bool mean) {
  int64_t outputs = 1, count = 1;
  for (int64_t s : g.kept_sizes) outputs *= s;
  for (int64_t s : g.red_sizes) count *= s;
  std::vector<float> out(outputs, -1.0f);
  Reduce(mean ? ReduceOp::kMean : ReduceOp::kSum, g,
         StridedRef{const_cast<char*>(reinterpret_cast<const char*>(data.data())),
                    DType::kFloat32, {}},
         reinterpret_cast<char*>(out.data()), DType::kFloat32, nullptr, ReduceArgs{});
  for (int64_t o = 0; o < outputs; ++o) {
    int64_t base = 0, rest = o;
    for (int d = static_cast<int>(g.kept_sizes.size()) - 1; d >= 0; --d) {
      base += rest % g.kept_sizes[d] * g.kept_strides[d];
      rest /= g.kept_sizes[d];
    }
    double exact = 0, magnitude = 0;
    for (int64_t j = 0; j < count; ++j) {
      int64_t off = base, left = j;
      for (int d = static_cast<int>(g.red_sizes.size()) - 1; d >= 0; --d) {
        off += left % g.red_sizes[d] * g.red_strides[d];
        left /= g.red_sizes[d];
      }
      exact += data[off];
      magnitude += std::fabs(data[off]);
    }
    if (mean) exact /= static_cast<double>(count), magnitude /= static_cast<double>(count);
    // Groups of eight rows round seven times in float; the float32 result once more.
    ASSERT_NEAR(out[o], exact, 7 * 6e-8 * magnitude + 6e-8 * std::fabs(exact) + 1e-30)
        << "output " << o << " of " << outputs << " over " << count;
  }
}

TEST(ReduceSumTest, SumsOverRowsMatchTheExactSums) {
  const std::vector<float> data = Data(1 << 21, 5);
  ReduceGeometry g;
  // A matrix over its rows: one block of outputs, the rows split over the threads.
  g = {{1000}, {1}, {2000}, {1000}};
  ExpectReduceSums(data, g, false);
  ExpectReduceSums(data, g, true);
  // Wider than a block of outputs (4096), with a tail; few rows.
  g = {{5000}, {1}, {13}, {5000}};
  ExpectReduceSums(data, g, false);
  // Narrow and tall: 3 columns of 300,000 rows.
  g = {{3}, {1}, {300000}, {3}};
  ExpectReduceSums(data, g, false);
  // Two reduced dims (a [7, 9, 33, 40] tensor summed over dims 0 and 2), runs of 33 rows.
  g = {{9, 40}, {33 * 40, 1}, {7, 33}, {9 * 33 * 40, 40}};
  ExpectReduceSums(data, g, false);
  ExpectReduceSums(data, g, true);
  // A transposed reduced dim: rows farther apart than their order.
  g = {{64}, {1}, {50, 200}, {64, 64 * 50}};
  ExpectReduceSums(data, g, false);
}

}  // namespace
}  // namespace tensord::engine::cpu
