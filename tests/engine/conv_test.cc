// conv2d and conv3d at the engine level (no server): the CPU's tiled im2col + GEMM kernel and
// the composition other devices run (planned here on the CPU) against a direct loop over the
// definition, over strides, paddings, dilations, groups, biases, dtypes and tile boundaries.
// The differential test against torch is tests/python/test_functional.py's conv2d cases.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "engine/ops/conv_ops.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry.h"
#include "tests/engine/tensor_test_util.h"
#include "tests/test_util.h"

namespace tensord::engine {
namespace {

using test_util::Values;
using V = std::vector<int64_t>;

// A contiguous tensor of `sizes` with small integer values (exact in every float dtype's sums).
Tensor Filled(V sizes, DType dtype, int seed) {
  absl::StatusOr<Tensor> t = Empty(sizes, DType::kFloat64);
  EXPECT_TRUE(t.ok());
  double* p = t->data_as<double>();
  for (int64_t i = 0; i < t->numel(); ++i) {
    p[i] = static_cast<double>((i * 7 + seed * 13) % 9 - 4);
  }
  if (dtype == DType::kFloat64) return *t;
  absl::StatusOr<std::vector<Tensor>> cast = RunNow(PlanToDType(*t, dtype));
  EXPECT_TRUE(cast.ok()) << cast.status();
  return cast->at(0);
}

// conv2d by its definition, on contiguous float64 values.
std::vector<double> Reference(const std::vector<double>& x, V xs, const std::vector<double>& w,
                              V ws, const std::vector<double>* bias, const ConvParams& p,
                              int64_t oh, int64_t ow) {
  const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3];
  const int64_t o = ws[0], cg = ws[1], kh = ws[2], kw = ws[3], og = o / p.groups;
  std::vector<double> out(static_cast<size_t>(n * o * oh * ow));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < o; ++oc) {
      const int64_t g = oc / og;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = bias != nullptr ? (*bias)[oc] : 0;
          for (int64_t ch = 0; ch < cg; ++ch) {
            for (int64_t i = 0; i < kh; ++i) {
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t iy = y * p.stride[0] - p.padding[0] + i * p.dilation[0];
                const int64_t ix = xx * p.stride[1] - p.padding[1] + j * p.dilation[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                acc += w[((oc * cg + ch) * kh + i) * kw + j] *
                       x[((b * c + g * cg + ch) * h + iy) * wd + ix];
              }
            }
          }
          out[((b * o + oc) * oh + y) * ow + xx] = acc;
        }
      }
    }
  }
  return out;
}

struct Case {
  std::string name;
  V input, weight;
  ConvParams params;
  bool bias;
};

ConvParams Params(V stride, V padding, V dilation, int64_t groups) {
  ConvParams p;
  for (int d = 0; d < 2; ++d) {
    p.stride[d] = stride[d], p.padding[d] = padding[d], p.dilation[d] = dilation[d];
  }
  p.groups = groups;
  return p;
}

TEST(ConvTest, KernelAndCompositionMatchTheDefinition) {
  const std::vector<Case> cases = {
      {"3x3", {2, 3, 7, 6}, {5, 3, 3, 3}, Params({1, 1}, {0, 0}, {1, 1}, 1), true},
      {"padding", {2, 3, 7, 6}, {5, 3, 3, 3}, Params({1, 1}, {1, 2}, {1, 1}, 1), false},
      {"stride, dilation", {1, 2, 11, 9}, {4, 2, 3, 2}, Params({2, 3}, {1, 0}, {2, 1}, 1), true},
      {"groups", {2, 6, 5, 5}, {4, 3, 2, 2}, Params({1, 1}, {1, 1}, {1, 1}, 2), true},
      {"depthwise", {1, 4, 6, 6}, {4, 1, 3, 3}, Params({2, 2}, {1, 1}, {1, 1}, 4), false},
      {"1x1", {2, 8, 4, 5}, {3, 8, 1, 1}, Params({1, 1}, {0, 0}, {1, 1}, 1), true},
      {"1x1 strided", {2, 8, 5, 5}, {3, 8, 1, 1}, Params({2, 2}, {0, 0}, {1, 1}, 1), false},
      // 64 channels x 9 taps: float64 tiles of 112 pixels end inside the 20-wide rows.
      {"tiles", {2, 64, 9, 20}, {3, 64, 3, 3}, Params({1, 1}, {1, 1}, {1, 1}, 1), true},
      // 512 channels x 9 taps of float64: a column is 36 KiB, so tiles of 14 columns (not a
      // multiple of 16), the last one of 2.
      {"wide columns", {1, 512, 4, 4}, {2, 512, 3, 3}, Params({1, 1}, {1, 1}, {1, 1}, 1), true},
      {"padding beyond a tap", {1, 1, 3, 3}, {2, 1, 2, 2}, Params({1, 1}, {3, 3}, {1, 1}, 1),
       false},
      // One output per dim: the strides never apply (nor may they overflow the im2col's
      // arithmetic: the first column that meets the input past a padding of 2).
      {"huge strides", {1, 2, 5, 5}, {2, 2, 3, 3}, Params({INT64_MAX, INT64_MAX}, {2, 2}, {1, 1}, 1),
       true},
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt64}) {
    for (const Case& k : cases) {
      SCOPED_TRACE(k.name + " " + std::string(DTypeName(dtype)));
      const Tensor x = Filled(k.input, dtype, 1), w = Filled(k.weight, dtype, 2);
      const Tensor b = k.bias ? Filled({k.weight[0]}, dtype, 3) : Tensor();
      const std::vector<double> bias = k.bias ? Values(b) : std::vector<double>{};
      absl::StatusOr<std::vector<Tensor>> kernel = RunNow(PlanConv2d(x, w, b, k.params));
      absl::StatusOr<std::vector<Tensor>> composed =
          RunNow(PlanConv2d(x, w, b, k.params, ConvPath::kComposition));
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      ASSERT_TRUE(composed.ok()) << composed.status();
      const Tensor& out = kernel->at(0);
      ASSERT_EQ(test_util::ToVec(out.sizes()), test_util::ToVec(composed->at(0).sizes()));
      EXPECT_EQ(out.dtype(), dtype);
      const std::vector<double> want =
          Reference(Values(x), k.input, Values(w), k.weight, k.bias ? &bias : nullptr, k.params,
                    out.size(2), out.size(3));
      EXPECT_EQ(Values(out), want);
      EXPECT_EQ(Values(composed->at(0)), want);
    }
  }
}

// conv3d by its definition, on contiguous float64 values.
std::vector<double> Reference3d(const std::vector<double>& x, V xs, const std::vector<double>& w,
                                V ws, const std::vector<double>* bias, const Conv3dParams& p,
                                V os) {
  const int64_t n = xs[0], c = xs[1], o = ws[0], cg = ws[1], og = o / p.groups;
  std::vector<double> out(static_cast<size_t>(n * o * os[0] * os[1] * os[2]));
  size_t at = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < o; ++oc) {
      const int64_t g = oc / og;
      for (int64_t z = 0; z < os[0]; ++z) {
        for (int64_t y = 0; y < os[1]; ++y) {
          for (int64_t xx = 0; xx < os[2]; ++xx) {
            double acc = bias != nullptr ? (*bias)[oc] : 0;
            const int64_t pos[3] = {z, y, xx};
            for (int64_t ch = 0; ch < cg; ++ch) {
              for (int64_t a = 0; a < ws[2]; ++a) {
                for (int64_t i = 0; i < ws[3]; ++i) {
                  for (int64_t j = 0; j < ws[4]; ++j) {
                    const int64_t tap[3] = {a, i, j};
                    int64_t in[3];
                    bool inside = true;
                    for (int d = 0; d < 3; ++d) {
                      in[d] = pos[d] * p.stride[d] - p.padding[d] + tap[d] * p.dilation[d];
                      inside = inside && in[d] >= 0 && in[d] < xs[2 + d];
                    }
                    if (!inside) continue;
                    acc += w[(((oc * cg + ch) * ws[2] + a) * ws[3] + i) * ws[4] + j] *
                           x[(((b * c + g * cg + ch) * xs[2] + in[0]) * xs[3] + in[1]) * xs[4] +
                             in[2]];
                  }
                }
              }
            }
            out[at++] = acc;
          }
        }
      }
    }
  }
  return out;
}

struct Case3d {
  std::string name;
  V input, weight;
  Conv3dParams params;
  bool bias;
};

TEST(ConvTest, Conv3dKernelAndCompositionMatchTheDefinition) {
  const std::vector<Case3d> cases = {
      {"3x3x3", {2, 3, 5, 6, 4}, {4, 3, 3, 3, 3}, {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1}, true},
      {"padding", {1, 2, 4, 5, 6}, {3, 2, 3, 2, 3}, {{1, 1, 1}, {1, 2, 1}, {1, 1, 1}, 1}, false},
      {"stride, dilation", {1, 2, 9, 8, 7}, {2, 2, 2, 3, 2}, {{2, 1, 3}, {1, 0, 2},
       {3, 2, 1}, 1}, true},
      {"groups", {2, 4, 4, 4, 4}, {6, 2, 2, 2, 2}, {{1, 2, 1}, {1, 1, 0}, {1, 1, 1}, 2}, true},
      {"1x1x1", {2, 5, 3, 4, 2}, {3, 5, 1, 1, 1}, {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1}, true},
      {"padding beyond a tap", {1, 1, 2, 2, 2}, {1, 1, 2, 2, 2},
       {{1, 1, 1}, {2, 3, 2}, {1, 1, 1}, 1}, false},
      // 32 channels x 27 taps: tiles of 64 (float64) or 144 (float32) positions of 7 x 9
      // planes cross planes; the float64 ones end inside rows.
      {"tiles", {1, 32, 5, 7, 9}, {2, 32, 3, 3, 3}, {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1}, true},
      // Strided in depth and width across tiles of 7 x 7 planes (245 positions): both tile
      // sizes end inside rows and cross planes.
      {"strided tiles", {1, 32, 9, 7, 13}, {3, 32, 3, 3, 3}, {{2, 1, 2}, {1, 1, 1}, {1, 1, 1}, 1},
       true},
      {"huge strides", {1, 2, 3, 4, 5}, {2, 2, 3, 2, 3}, {{INT64_MAX, 1, INT64_MAX}, {2, 0, 2},
       {1, 1, 1}, 1}, false},
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const Case3d& k : cases) {
      SCOPED_TRACE(k.name + " " + std::string(DTypeName(dtype)));
      const Tensor x = Filled(k.input, dtype, 1), w = Filled(k.weight, dtype, 2);
      const Tensor b = k.bias ? Filled({k.weight[0]}, dtype, 3) : Tensor();
      const std::vector<double> bias = k.bias ? Values(b) : std::vector<double>{};
      absl::StatusOr<std::vector<Tensor>> kernel = RunNow(PlanConv3d(x, w, b, k.params));
      absl::StatusOr<std::vector<Tensor>> composed =
          RunNow(PlanConv3d(x, w, b, k.params, ConvPath::kComposition));
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      ASSERT_TRUE(composed.ok()) << composed.status();
      const Tensor& out = kernel->at(0);
      ASSERT_EQ(out.dim(), 5);
      ASSERT_EQ(test_util::ToVec(out.sizes()), test_util::ToVec(composed->at(0).sizes()));
      EXPECT_TRUE(out.is_contiguous());
      EXPECT_EQ(out.dtype(), dtype);
      const std::vector<double> want =
          Reference3d(Values(x), k.input, Values(w), k.weight, k.bias ? &bias : nullptr,
                      k.params, {out.size(2), out.size(3), out.size(4)});
      EXPECT_EQ(Values(out), want);
      EXPECT_EQ(Values(composed->at(0)), want);
    }
  }
}

TEST(ConvTest, UnbatchedInputGivesAnUnbatchedResult) {
  const Tensor x = Filled({3, 5, 5}, DType::kFloat32, 1);
  const Tensor w = Filled({2, 3, 3, 3}, DType::kFloat32, 2);
  for (ConvPath path : {ConvPath::kDeviceDefault, ConvPath::kComposition}) {
    absl::StatusOr<std::vector<Tensor>> out =
        RunNow(PlanConv2d(x, w, Tensor(), ConvParams(), path));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(test_util::ToVec(out->at(0).sizes()), (V{2, 3, 3}));
  }
  const Tensor volume = Filled({3, 4, 5, 5}, DType::kFloat32, 1);
  const Tensor w3 = Filled({2, 3, 2, 3, 3}, DType::kFloat32, 2);
  const Conv3dParams p{{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1};
  for (ConvPath path : {ConvPath::kDeviceDefault, ConvPath::kComposition}) {
    absl::StatusOr<std::vector<Tensor>> out = RunNow(PlanConv3d(volume, w3, Tensor(), p, path));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(test_util::ToVec(out->at(0).sizes()), (V{2, 3, 3, 3}));
  }
}

TEST(ConvTest, OverflowingPaddingIsAnErrorNotAWrap) {
  const Tensor x = Filled({1, 1, 3, 3}, DType::kFloat32, 1);
  const Tensor w = Filled({1, 1, 2, 2}, DType::kFloat32, 2);
  ConvParams p;
  p.padding[0] = INT64_MAX / 2 + 1;
  absl::StatusOr<PlannedOp> plan = PlanConv2d(x, w, Tensor(), p);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("conv2d"), std::string::npos) << plan.status();
  p = ConvParams();
  p.dilation[1] = INT64_MAX;
  plan = PlanConv2d(x, w, Tensor(), p);
  ASSERT_FALSE(plan.ok());
}

}  // namespace
}  // namespace tensord::engine
