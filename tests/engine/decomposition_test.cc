// torch.linalg's factorizations at the engine level (no server): the ops' values on small
// matrices with known answers, torch's layouts (column-major matrices), the errors of singular
// and indefinite inputs, and the composition that plans det and slogdet. The differential test
// against torch over dtypes and batches is tests/python/test_linalg.py.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "engine/core/errors.h"
#include "engine/ops/composition.h"
#include "engine/ops/op_registry.h"
#include "tests/engine/tensor_test_util.h"
#include "tests/test_util.h"

namespace tensord::engine {
namespace {

using test_util::Values;
using V = std::vector<int64_t>;

// A row-major float64 tensor of `sizes` holding `values`.
Tensor Matrix(V sizes, std::vector<double> values) {
  absl::StatusOr<Tensor> t = Empty(sizes, DType::kFloat64);
  EXPECT_TRUE(t.ok());
  std::copy(values.begin(), values.end(), t->data_as<double>());
  return *t;
}

std::vector<Tensor> RunOp(absl::string_view op, std::vector<Tensor> inputs, Attrs attrs = {}) {
  absl::StatusOr<std::vector<Tensor>> out = RunNow(PlanOp(op, inputs, attrs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "at " << i;
}

TEST(DecompositionTest, SolveInverseAndDeterminant) {
  const Tensor a = Matrix({2, 2}, {4, 3, 6, 3});  // det -6
  const Tensor b = Matrix({2}, {10, 12});
  ExpectNear(Values(RunOp("linalg_solve", {a, b})[0]), {1, 2});
  const Tensor inv = RunOp("linalg_inv", {a})[0];
  ExpectNear(Values(inv), {-0.5, 0.5, 1, -2.0 / 3});
  EXPECT_EQ(test_util::ToVec(inv.strides()), (V{1, 2}));  // column-major, as torch's
  ExpectNear(Values(RunOp("linalg_det", {a})[0]), {-6});
  const std::vector<Tensor> slogdet = RunOp("linalg_slogdet", {a});
  ExpectNear(Values(slogdet[0]), {-1});
  ExpectNear(Values(slogdet[1]), {std::log(6.0)});
}

TEST(DecompositionTest, DeterminantOfABatchWithRowSwapsAndASingularMatrix) {
  // [[0, 1], [1, 0]] (one swap: -1), [[2, 0], [0, 3]] (6), singular [[1, 2], [2, 4]] (0).
  const Tensor a = Matrix({3, 2, 2}, {0, 1, 1, 0, 2, 0, 0, 3, 1, 2, 2, 4});
  ExpectNear(Values(RunOp("linalg_det", {a})[0]), {-1, 6, 0});
  const std::vector<Tensor> slogdet = RunOp("linalg_slogdet", {a});
  ExpectNear(Values(slogdet[0]), {-1, 1, 0});
  EXPECT_EQ(Values(slogdet[1])[2], -INFINITY);
}

TEST(DecompositionTest, SingularAndIndefiniteInputsFailWithLinAlgError) {
  const Tensor batch = Matrix({2, 2, 2}, {1, 0, 0, 1, 1, 2, 2, 4});
  absl::StatusOr<std::vector<Tensor>> inv = RunNow(PlanOp("linalg_inv", {batch}, Attrs()));
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(ErrorKind(inv.status()), "LinAlgError");
  EXPECT_NE(inv.status().message().find("(Batch element 1): The diagonal element 2 is zero"),
            std::string::npos)
      << inv.status();
  const Tensor indefinite = Matrix({2, 2}, {1, 2, 2, 1});
  absl::StatusOr<std::vector<Tensor>> chol =
      RunNow(PlanOp("linalg_cholesky", {indefinite}, Attrs()));
  ASSERT_FALSE(chol.ok());
  EXPECT_NE(chol.status().message().find("the leading minor of order 2 is not positive-definite"),
            std::string::npos)
      << chol.status();
}

TEST(DecompositionTest, FactorsRebuildTheirMatrix) {
  const Tensor spd = Matrix({2, 2}, {4, 2, 2, 3});
  const Tensor l = RunOp("linalg_cholesky", {spd})[0];
  const std::vector<double> lv = Values(l);  // [[2, 0], [1, sqrt 2]]
  ExpectNear(lv, {2, 0, 1, std::sqrt(2.0)});
  const std::vector<Tensor> qr = RunOp("linalg_qr", {Matrix({3, 2}, {1, 2, 3, 4, 5, 6})},
                                     Attrs().Set("mode", std::string("complete")));
  EXPECT_EQ(test_util::ToVec(qr[0].sizes()), (V{3, 3}));
  EXPECT_EQ(test_util::ToVec(qr[1].sizes()), (V{3, 2}));
  const std::vector<double> r = Values(qr[1]);
  EXPECT_EQ(r[2], 0);  // below the diagonal
  EXPECT_EQ(r[4], 0);
  EXPECT_NEAR(std::fabs(r[0]), std::sqrt(35.0), 1e-12);
  const std::vector<Tensor> svd = RunOp("linalg_svd", {Matrix({2, 2}, {3, 0, 0, -4})});
  ExpectNear(Values(svd[1]), {4, 3});
  const std::vector<Tensor> eigh = RunOp("linalg_eigh", {Matrix({2, 2}, {2, 1, 1, 2})});
  ExpectNear(Values(eigh[0]), {1, 3});
}

TEST(DecompositionTest, BadArgumentsAreErrorsAtPlanTime) {
  absl::StatusOr<PlannedOp> qr = PlanOp("linalg_qr", {Matrix({2, 2}, {1, 0, 0, 1})},
                                        Attrs().Set("mode", std::string("x")));
  ASSERT_FALSE(qr.ok());
  EXPECT_NE(qr.status().message().find("unrecognized mode 'x'"), std::string::npos);
  absl::StatusOr<Tensor> ints = Zeros({3, 3}, DType::kInt64);
  ASSERT_TRUE(ints.ok());
  EXPECT_FALSE(PlanOp("linalg_det", {*ints}, Attrs()).ok());
  EXPECT_FALSE(PlanOp("linalg_inv", {Matrix({2, 3}, {1, 2, 3, 4, 5, 6})}, Attrs()).ok());
}

}  // namespace
}  // namespace tensord::engine
