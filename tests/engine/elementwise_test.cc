// The elementwise engine at the engine level (no server): promotion, output layout, in-place
// rules, overlap checks, reductions' geometry and kernel-time failures. The differential tests
// against torch (tests/python/test_compute.py) cover every op × dtype × layout.
#include "engine/ops/elementwise.h"

#include <limits>

#include "engine/ops/factory_ops.h"

#include "gtest/gtest.h"
#include "engine/ops/op_registry.h"
#include "engine/ops/type_promotion.h"
#include "tests/engine/tensor_test_util.h"
#include "tests/test_util.h"

namespace tensord::engine {
namespace {

using V = std::vector<int64_t>;
using test_util::MakeStrided;
using test_util::Values;


Tensor Wrapped(Scalar s) {
  absl::StatusOr<Tensor> t = WrapNumber(s);
  EXPECT_TRUE(t.ok());
  return *t;
}

TEST(TypePromotionTest, TableFromTheSemanticsDoc) {
  EXPECT_EQ(PromoteTypes(DType::kUInt8, DType::kInt8), DType::kInt16);
  EXPECT_EQ(PromoteTypes(DType::kFloat16, DType::kBFloat16), DType::kFloat32);
  EXPECT_EQ(PromoteTypes(DType::kInt64, DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(PromoteTypes(DType::kBool, DType::kInt32), DType::kInt32);
  EXPECT_EQ(PromoteTypes(DType::kInt32, DType::kFloat64), DType::kFloat64);
}

TEST(TypePromotionTest, PrioritiesOfDimsZeroDimAndNumbers) {
  ASSERT_OK_AND_ASSIGN(Tensor i32, Zeros({3}, DType::kInt32));
  ASSERT_OK_AND_ASSIGN(Tensor u8, Zeros({3}, DType::kUInt8));
  ASSERT_OK_AND_ASSIGN(Tensor f16, Zeros({3}, DType::kFloat16));
  ASSERT_OK_AND_ASSIGN(Tensor zd_i8, Zeros({}, DType::kInt8));
  ASSERT_OK_AND_ASSIGN(Tensor zd_f64, Zeros({}, DType::kFloat64));
  EXPECT_EQ(ResultType({i32, Wrapped(2.5)}), DType::kFloat32);    // i32[t] + 2.5
  EXPECT_EQ(ResultType({f16, Wrapped(2.5)}), DType::kFloat16);    // f16[t] + 2.5
  EXPECT_EQ(ResultType({u8, Wrapped(int64_t{300})}), DType::kUInt8);
  EXPECT_EQ(ResultType({u8, zd_i8}), DType::kUInt8);              // u8[t] + 0-d i8
  EXPECT_EQ(ResultType({i32, zd_f64}), DType::kFloat64);          // i32[t] + 0-d f64
  EXPECT_EQ(ResultType({f16, zd_f64}), DType::kFloat16);
  EXPECT_EQ(ResultType({zd_i8, zd_f64}), DType::kFloat64);        // 0-d + 0-d: the table
}

TEST(ElementwiseLayoutTest, ConformanceCases) {
  // (a.t() + 1).stride() == (1, 4) for a of shape (3, 4).
  ASSERT_OK_AND_ASSIGN(Tensor at, MakeStrided(DType::kFloat32, 12, V{4, 3}, V{1, 4}, 0));
  EXPECT_EQ(ElementwiseOutputStrides(V{4, 3}, {at, Wrapped(int64_t{1})}), (DimVector{1, 4}));
  // contiguous + transposed: the first operand wins.
  ASSERT_OK_AND_ASSIGN(Tensor c, MakeStrided(DType::kFloat32, 12, V{4, 3}, V{3, 1}, 0));
  EXPECT_EQ(ElementwiseOutputStrides(V{4, 3}, {c, at}), (DimVector{3, 1}));
  EXPECT_EQ(ElementwiseOutputStrides(V{4, 3}, {at, c}), (DimVector{1, 4}));
  // y = as_strided((3,1,4),(4,100,1)): y + y gives (4, 4, 1); y + 1 gives (4, 12, 1).
  ASSERT_OK_AND_ASSIGN(Tensor y, MakeStrided(DType::kFloat32, 12, V{3, 1, 4}, V{4, 100, 1}, 0));
  EXPECT_EQ(ElementwiseOutputStrides(V{3, 1, 4}, {y, y}), (DimVector{4, 4, 1}));
  EXPECT_EQ(ElementwiseOutputStrides(V{3, 1, 4}, {y, Wrapped(int64_t{1})}), (DimVector{4, 12, 1}));
  // empty(2,0,3).permute(2,0,1) + 1 -> (1, 0, 3).
  ASSERT_OK_AND_ASSIGN(Tensor e, MakeStrided(DType::kFloat32, 1, V{3, 2, 0}, V{1, 3, 3}, 0));
  EXPECT_EQ(ElementwiseOutputStrides(V{3, 2, 0}, {e, Wrapped(int64_t{1})}), (DimVector{1, 0, 3}));
}

TEST(ElementwiseTest, AddThroughTheRegistryBroadcastsAndPromotes) {
  ASSERT_OK_AND_ASSIGN(Tensor a, MakeStrided(DType::kInt32, 6, V{2, 3}, V{3, 1}, 0));
  ASSERT_OK_AND_ASSIGN(Tensor row, MakeStrided(DType::kFloat64, 3, V{3}, V{1}, 0, 10));
  ASSERT_OK_AND_ASSIGN(auto out, RunNow(PlanOp("add", {a, row}, Attrs().Set("alpha", int64_t{2}))));
  EXPECT_EQ(out[0].dtype(), DType::kFloat64);
  EXPECT_EQ(Values(out[0]), (std::vector<double>{20, 23, 26, 23, 26, 29}));
  ASSERT_OK_AND_ASSIGN(auto half, RunNow(PlanOp("mul", {a}, Attrs().Set("other", Scalar(0.5)))));
  EXPECT_EQ(half[0].dtype(), DType::kFloat32);
  EXPECT_EQ(Values(half[0]), (std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5}));
}

TEST(ElementwiseTest, UnsignedDivisionByTheLargestValueIsOrdinary) {
  // uint8's 255 is C(-1): only signed types need the MIN / -1 special case. Expected values
  // from torch 1.13.
  ASSERT_OK_AND_ASSIGN(Tensor a, FromBytes(V{3}, DType::kUInt8, std::string("\x04\xc8\xff", 3)));
  ASSERT_OK_AND_ASSIGN(Tensor b, FromBytes(V{3}, DType::kUInt8, std::string("\xff\xff\xff", 3)));
  ASSERT_OK_AND_ASSIGN(auto q, RunNow(PlanOp("floor_divide", {a, b}, {})));
  EXPECT_EQ(Values(q[0]), (std::vector<double>{0, 0, 1}));
  ASSERT_OK_AND_ASSIGN(auto f, RunNow(PlanOp("fmod", {a, b}, {})));
  EXPECT_EQ(Values(f[0]), (std::vector<double>{4, 200, 0}));
  ASSERT_OK_AND_ASSIGN(auto r, RunNow(PlanOp("remainder", {a, b}, {})));
  EXPECT_EQ(Values(r[0]), (std::vector<double>{4, 200, 0}));
}

TEST(ElementwiseTest, GcdAndLcmAtTheMinimumWrapInsteadOfTrapping) {
  // gcd(INT_MIN, 5) is -1 in torch 1.13 (the minimum's magnitude wraps to itself); its lcm then
  // divides INT_MIN by -1, which traps torch's process (SIGFPE). tensord wraps, as its other
  // integer ops do at the minimum: INT_MIN, as torch's lcm of INT_MIN and 3 is.
  const int32_t m = std::numeric_limits<int32_t>::min();
  const auto int32s = [](std::vector<int32_t> v) {
    return FromBytes(V{static_cast<int64_t>(v.size())}, DType::kInt32,
                     std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  };
  ASSERT_OK_AND_ASSIGN(Tensor a, int32s({m, 5, m, 6}));
  ASSERT_OK_AND_ASSIGN(Tensor b, int32s({5, m, 3, m}));
  ASSERT_OK_AND_ASSIGN(auto g, RunNow(PlanOp("gcd", {a, b}, {})));
  EXPECT_EQ(Values(g[0]), (std::vector<double>{-1, -1, 1, -2}));  // torch 1.13's
  ASSERT_OK_AND_ASSIGN(auto l, RunNow(PlanOp("lcm", {a, b}, {})));
  EXPECT_EQ(Values(l[0]), (std::vector<double>{m, m, m, m}));
}

TEST(ElementwiseTest, InPlaceRules) {
  ASSERT_OK_AND_ASSIGN(Tensor i, MakeStrided(DType::kInt64, 4, V{4}, V{1}, 0));
  EXPECT_THAT(PlanOp("add_", {i}, Attrs().Set("other", Scalar(1.5))).status(),
              ::tensord::testing::StatusIsWith(absl::StatusCode::kInvalidArgument,
                                  "result type Float can't be cast to the desired output type Long"));
  ASSERT_OK_AND_ASSIGN(Tensor col, MakeStrided(DType::kInt64, 3, V{3, 1}, V{1, 1}, 0));
  ASSERT_OK_AND_ASSIGN(Tensor row4, MakeStrided(DType::kInt64, 4, V{4}, V{1}, 0));
  EXPECT_THAT(PlanOp("add_", {col, row4}, Attrs()).status(),
              ::tensord::testing::StatusIsWith(absl::StatusCode::kInvalidArgument,
                                  "output with shape [3, 1] doesn't match the broadcast shape [3, 4]"));
  ASSERT_OK_AND_ASSIGN(Tensor expanded, MakeStrided(DType::kInt64, 4, V{3, 4}, V{0, 1}, 0));
  EXPECT_THAT(PlanOp("mul_", {expanded}, Attrs().Set("other", int64_t{2})).status(),
              ::tensord::testing::StatusIsWith(absl::StatusCode::kInvalidArgument, "more than one element"));
  // Partial overlap between self and an input: refused.
  ASSERT_OK_AND_ASSIGN(Tensor base, MakeStrided(DType::kInt64, 8, V{8}, V{1}, 0));
  ASSERT_OK_AND_ASSIGN(Tensor lo, Narrow(base, 0, 0, 6));
  ASSERT_OK_AND_ASSIGN(Tensor hi, Narrow(base, 0, 2, 6));
  EXPECT_THAT(PlanOp("add_", {lo, hi}, Attrs()).status(),
              ::tensord::testing::StatusIsWith(absl::StatusCode::kInvalidArgument, "refer to a single memory"));
  // In place through a view writes the shared storage.
  ASSERT_OK(RunNow(PlanOp("add_", {hi}, Attrs().Set("other", int64_t{100}))).status());
  EXPECT_EQ(Values(base), (std::vector<double>{0, 1, 102, 103, 104, 105, 106, 107}));
}

TEST(ElementwiseTest, IntegerDivisionByZeroFailsTheKernel) {
  ASSERT_OK_AND_ASSIGN(Tensor a, MakeStrided(DType::kInt32, 4, V{4}, V{1}, 0));
  ASSERT_OK_AND_ASSIGN(PlannedOp plan, PlanOp("floor_divide", {a}, Attrs().Set("other", int64_t{0})));
  EXPECT_THAT(plan.kernel(), ::tensord::testing::StatusIsWith(absl::StatusCode::kInvalidArgument,
                                                 "ZeroDivisionError"));
}

TEST(ReductionTest, RowsColumnsAndArgIndices) {
  // 300 x 1000 with a known maximum per column and row; transposed and not.
  ASSERT_OK_AND_ASSIGN(Tensor m, MakeStrided(DType::kFloat64, 300000, V{300, 1000}, V{1000, 1}, 0));
  ASSERT_OK_AND_ASSIGN(auto s0, RunNow(PlanOp("sum", {m}, Attrs().Set("dim", int64_t{0}))));
  ASSERT_OK_AND_ASSIGN(auto s1, RunNow(PlanOp("sum", {m}, Attrs().Set("dim", int64_t{1}))));
  const std::vector<double> v0 = Values(s0[0]), v1 = Values(s1[0]);
  ASSERT_EQ(v0.size(), 1000u);
  ASSERT_EQ(v1.size(), 300u);
  for (int j : {0, 1, 999}) EXPECT_DOUBLE_EQ(v0[j], 300.0 * j + 1000.0 * (299 * 300 / 2));
  for (int i : {0, 7, 299}) EXPECT_DOUBLE_EQ(v1[i], 1000.0 * 1000 * i + 999 * 1000 / 2);
  ASSERT_OK_AND_ASSIGN(auto mx, RunNow(PlanOp("max.dim", {m}, Attrs().Set("dim", int64_t{0}))));
  ASSERT_EQ(mx.size(), 2u);
  EXPECT_EQ(Values(mx[1])[5], 299);  // the last row holds each column's maximum
  ASSERT_OK_AND_ASSIGN(auto am, RunNow(PlanOp("argmin", {m}, Attrs())));
  EXPECT_EQ(Values(am[0])[0], 0);
  // Empty reductions: identities, and torch's errors where there is no identity.
  ASSERT_OK_AND_ASSIGN(Tensor e, Zeros({0, 3}, DType::kFloat32));
  ASSERT_OK_AND_ASSIGN(auto es, RunNow(PlanOp("prod", {e}, Attrs().Set("dim", int64_t{0}))));
  EXPECT_EQ(Values(es[0]), (std::vector<double>{1, 1, 1}));
  EXPECT_THAT(PlanOp("amax", {e}, Attrs().Set("dim", int64_t{0})).status(),
              ::tensord::testing::StatusIsWith(absl::StatusCode::kOutOfRange, "to have non-zero size"));
}

}  // namespace
}  // namespace tensord::engine
