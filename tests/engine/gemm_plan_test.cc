// How the CUDA backend's matrix products become cuBLAS calls (engine/cuda/gemm_plan.h), checked
// without a GPU: every planned call is run here with cuBLAS's column-major semantics and must
// give the row-major product, for random shapes and layouts (transposed, sliced, expanded,
// reversed operands and batch dims).
#include "engine/cuda/gemm_plan.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/engine/layout_test_util.h"

namespace tensord::engine::cuda {
namespace {

using testing_util::Layout;
using testing_util::RandomLayout;
using testing_util::V;

// cuBLAS's gemm (column-major): C[i + j*ldc] = sum_l op(A)(i, l) * op(B)(l, j), count times.
void RunLikeCublas(const GemmCall& g, const double* a, const double* b, double* c) {
  for (int64_t batch = 0; batch < g.count; ++batch) {
    const double* A = a + g.a_offset + batch * g.stride_a;
    const double* B = b + g.b_offset + batch * g.stride_b;
    double* C = c + g.c_offset + batch * g.stride_c;
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          const double x = g.transpose_a ? A[l + i * g.lda] : A[i + l * g.lda];
          const double y = g.transpose_b ? B[j + l * g.ldb] : B[l + j * g.ldb];
          sum += x * y;
        }
        C[i + j * g.ldc] = sum;
      }
    }
  }
}

// Element [idx...] of a layout's buffer.
double At(const std::vector<double>& buf, const Layout& l, const V& idx) {
  int64_t off = l.offset;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * l.strides[d];
  return buf[off];
}

struct Counts {
  int transposed_a = 0, transposed_b = 0, plain = 0, copies = 0, batched = 0, loops = 0,
      broadcast = 0;
};

// a [batch..., n, k] @ b [batch..., k, m] through the planned calls against the definition.
void CheckProduct(const V& batch, int64_t n, int64_t k, int64_t m, Layout la, Layout lb,
                  std::mt19937& rng, Counts& counts) {
  const auto fill = [&rng](const Layout& l) {
    std::vector<double> buf(l.buffer_numel);
    for (double& x : buf) x = static_cast<double>(static_cast<int>(rng() % 17) - 8);
    return buf;
  };
  std::vector<double> a = fill(la), b = fill(lb);
  std::vector<GemmCall> calls = PlanGemmCalls(batch, n, k, m, la.strides, lb.strides);
  // Unusable operands: made contiguous, as the backend does, then planned again.
  const auto contiguous = [](const Layout& l, const std::vector<double>& buf) {
    Layout c{l.sizes, V(l.sizes.size(), 1), 0, 1};
    for (int d = static_cast<int>(l.sizes.size()) - 2; d >= 0; --d) {
      c.strides[d] = c.strides[d + 1] * l.sizes[d + 1];
    }
    for (int64_t s : l.sizes) c.buffer_numel *= s;
    std::vector<double> out(c.buffer_numel);
    V idx(l.sizes.size(), 0);
    for (int64_t it = 0; it < c.buffer_numel; ++it) {
      int64_t rest = it;
      for (int d = static_cast<int>(l.sizes.size()) - 1; d >= 0; --d) {
        idx[d] = rest % l.sizes[d];
        rest /= l.sizes[d];
      }
      out[it] = At(buf, l, idx);
    }
    return std::make_pair(c, out);
  };
  const size_t nb = batch.size();
  if (calls.empty()) {
    ++counts.copies;
    if (!OperandLayout(n, k, la.strides[nb], la.strides[nb + 1]).usable) {
      std::tie(la, a) = contiguous(la, a);
    }
    if (!OperandLayout(k, m, lb.strides[nb], lb.strides[nb + 1]).usable) {
      std::tie(lb, b) = contiguous(lb, b);
    }
    calls = PlanGemmCalls(batch, n, k, m, la.strides, lb.strides);
    ASSERT_FALSE(calls.empty()) << "contiguous operands are always usable";
  }
  int64_t products = 1;
  for (int64_t s : batch) products *= s;
  std::vector<double> out(products * n * m, -12345.0);
  for (const GemmCall& g : calls) {
    RunLikeCublas(g, b.data() + lb.offset, a.data() + la.offset, out.data());
    counts.transposed_a += g.transpose_a;
    counts.transposed_b += g.transpose_b;
    counts.plain += !g.transpose_a && !g.transpose_b;
    counts.batched += g.count > 1;
    counts.broadcast += g.count > 1 && (g.stride_a == 0 || g.stride_b == 0);
  }
  counts.loops += calls.size() > 1;
  V idx(nb + 2, 0);
  for (int64_t p = 0; p < products; ++p) {
    int64_t rest = p;
    for (int d = static_cast<int>(nb) - 1; d >= 0; --d) {
      idx[d] = rest % batch[d];
      rest /= batch[d];
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double expected = 0;
        for (int64_t l = 0; l < k; ++l) {
          idx[nb] = i, idx[nb + 1] = l;
          const double x = At(a, la, idx);
          idx[nb] = l, idx[nb + 1] = j;
          expected += x * At(b, lb, idx);
        }
        ASSERT_EQ(out[(p * n + i) * m + j], expected)
            << "product " << p << " [" << i << ", " << j << "]";
      }
    }
  }
}

TEST(GemmPlanTest, RandomLayoutsGiveTheRowMajorProduct) {
  std::mt19937 rng(2024);
  Counts counts;
  for (int trial = 0; trial < 3000; ++trial) {
    V batch(rng() % 4);
    for (int64_t& s : batch) s = 1 + rng() % 3;
    const int64_t n = 1 + rng() % 5, k = 1 + rng() % 5, m = 1 + rng() % 5;
    V sa = batch, sb = batch;
    sa.push_back(n), sa.push_back(k);
    sb.push_back(k), sb.push_back(m);
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    CheckProduct(batch, n, k, m, RandomLayout(rng, sa, true), RandomLayout(rng, sb, true), rng,
                 counts);
    if (testing::Test::HasFatalFailure()) return;
  }
  // Every path was taken.
  EXPECT_GT(counts.transposed_a, 0);
  EXPECT_GT(counts.transposed_b, 0);
  EXPECT_GT(counts.plain, 0);
  EXPECT_GT(counts.copies, 0);
  EXPECT_GT(counts.batched, 0);
  EXPECT_GT(counts.loops, 0);
  EXPECT_GT(counts.broadcast, 0);
}

TEST(GemmPlanTest, TransposedOperandsArePassedAsTheyLie) {
  // a = x.t() for a contiguous x [k, n]: column-major, so cuBLAS's B is transposed, ld = n.
  const std::vector<GemmCall> at = PlanGemmCalls({}, 4, 6, 5, V{1, 4}, V{5, 1});
  ASSERT_EQ(at.size(), 1u);
  EXPECT_FALSE(at[0].transpose_a);
  EXPECT_TRUE(at[0].transpose_b);
  EXPECT_EQ(at[0].ldb, 4);
  EXPECT_EQ(at[0].lda, 5);
  // b = y.t() for a contiguous y [m, k]: cuBLAS's A transposed, ld = k.
  const std::vector<GemmCall> bt = PlanGemmCalls({}, 4, 6, 5, V{6, 1}, V{1, 6});
  ASSERT_EQ(bt.size(), 1u);
  EXPECT_TRUE(bt[0].transpose_a);
  EXPECT_FALSE(bt[0].transpose_b);
  EXPECT_EQ(bt[0].lda, 6);
  EXPECT_EQ(bt[0].ldc, 5);
  // A row slice x[:, ::2] (column stride 2) fits neither layout: copied.
  EXPECT_TRUE(PlanGemmCalls({}, 4, 6, 5, V{12, 2}, V{5, 1}).empty());
  // A batch of 7 against one broadcast matrix: one call, b's batch stride 0.
  const std::vector<GemmCall> bc = PlanGemmCalls({7}, 4, 6, 5, V{24, 6, 1}, V{0, 5, 1});
  ASSERT_EQ(bc.size(), 1u);
  EXPECT_EQ(bc[0].count, 7);
  EXPECT_EQ(bc[0].stride_a, 0);
  EXPECT_EQ(bc[0].stride_b, 24);
  EXPECT_EQ(bc[0].stride_c, 20);
}

}  // namespace
}  // namespace tensord::engine::cuda
