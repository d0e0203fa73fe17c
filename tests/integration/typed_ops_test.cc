// The C++ client's typed op methods (generated from the op registry, client/cpp/codegen) against
// a real server: numbers where torch takes Tensor-or-Scalar, optional attributes left to the
// server's (torch's) defaults, in-place methods, overloads (max and max.dim), factories, and
// the same wire call as the untyped Session::Call. Expected values are torch 1.13's.
#include <vector>

#include "tests/integration/fixture.h"

namespace tensord::testing {
namespace {

using client::Attrs;
using client::DType;
using client::Tensor;
using F = std::vector<float>;
using L = std::vector<int64_t>;

class TypedOpsTest : public ServerTest {
 protected:
  Tensor A() { return session_.arange(6).view({2, 3}); }  // int64 [[0, 1, 2], [3, 4, 5]]
};

TEST_F(TypedOpsTest, TensorOrNumberInputsAndOptionalAttributes) {
  Tensor a = A();
  Tensor b = session_.full({3}, 2.0);
  EXPECT_EQ(*a.add(b).to_vector<float>(), F({2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(*a.add(b, 3).to_vector<float>(), F({6, 7, 8, 9, 10, 11}));  // alpha
  Tensor n = a.add(2);  // an int stays int64, as torch's
  EXPECT_EQ(*n.dtype(), DType::kInt64);
  EXPECT_EQ(*n.to_vector<int64_t>(), L({2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(*a.mul(2.5).to_vector<float>(), F({0, 2.5, 5, 7.5, 10, 12.5}));
  EXPECT_EQ(*a.pow(2).to_vector<int64_t>(), L({0, 1, 4, 9, 16, 25}));
}

TEST_F(TypedOpsTest, ReductionsTakeAnIntOrAListOfDims) {
  Tensor a = A();
  Tensor s = a.sum({1}, true);
  EXPECT_EQ(*s.sizes(), L({2, 1}));
  EXPECT_EQ(*s.to_vector<int64_t>(), L({3, 12}));
  EXPECT_EQ(*a.sum(1).sizes(), L({2}));
  EXPECT_EQ(*a.sum({0, 1}).dim(), 0);
  EXPECT_EQ(*a.sum({0, 1}).to_vector<int64_t>(), L({15}));
  EXPECT_EQ(*a.sum({0}, true).sizes(), L({1, 3}));
  EXPECT_EQ(*a.sum().to_vector<int64_t>(), L({15}));
  EXPECT_EQ(*a.sum().dim(), 0);
  EXPECT_EQ(*a.sum(std::nullopt, std::nullopt, DType::kFloat64).dtype(), DType::kFloat64);
}

TEST_F(TypedOpsTest, MatmulOverloadsAndMultipleOutputs) {
  Tensor m = A().to(DType::kFloat32);
  EXPECT_EQ(*m.matmul(m.t()).to_vector<float>(), F({5, 14, 14, 50}));
  EXPECT_EQ(*m.max().to_vector<float>(), F({5}));
  absl::StatusOr<std::vector<Tensor>> vi = m.max(1);  // max.dim: (values, indices)
  ASSERT_OK(vi.status());
  ASSERT_EQ(vi->size(), 2u);
  EXPECT_EQ(*(*vi)[0].to_vector<float>(), F({2, 5}));
  EXPECT_EQ(*(*vi)[1].to_vector<int64_t>(), L({2, 2}));
}

TEST_F(TypedOpsTest, ListInputsTakeAnyNumberOfTensors) {
  Tensor a = A();
  Tensor f = session_.full({1, 3}, 0.5);
  Tensor c = session_.cat({a, f, a}, 0);  // promoted to float32, as torch.cat([a, f, a])
  EXPECT_EQ(*c.dtype(), DType::kFloat32);
  EXPECT_EQ(*c.sizes(), L({5, 3}));
  EXPECT_EQ(*c.to_vector<float>(), F({0, 1, 2, 3, 4, 5, 0.5, 0.5, 0.5, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(*session_.stack({a, a}, 2).sizes(), L({2, 3, 2}));
  // torch.einsum("ij,kj->ik", a, a) = a @ a.T; "ii" of it is its trace.
  Tensor g = session_.einsum("ij,kj->ik", {a, a});
  EXPECT_EQ(*g.to_vector<int64_t>(), L({5, 14, 14, 50}));
  EXPECT_EQ(*session_.einsum("ii", {g}).to_vector<int64_t>(), L({55}));
  // An empty list is a call: cat's own error, as torch's.
  Tensor none = session_.cat({});
  EXPECT_NE(none.status().message().find("expected a non-empty list of Tensors"),
            std::string::npos)
      << none.status();
}

TEST_F(TypedOpsTest, OpsTheEngineComposesAreMethodsToo) {
  // Compositions planned in the engine (matrix_ops, statistics_ops, functional_ops) are ops of
  // the registry like any other, so this client has them with no code of its own.
  Tensor a = A();  // [[0, 1, 2], [3, 4, 5]]
  EXPECT_EQ(*a.trace().to_vector<int64_t>(), L({4}));
  Tensor k = a.kron(session_.ones({1, 2}, DType::kInt64));
  EXPECT_EQ(*k.sizes(), L({2, 6}));
  EXPECT_EQ(*k.to_vector<int64_t>(), L({0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  EXPECT_EQ(*a.diff().to_vector<int64_t>(), L({1, 1, 1, 1}));
  EXPECT_EQ(*a.gcd(session_.full({3}, 4, DType::kInt64)).to_vector<int64_t>(),
            L({4, 1, 2, 1, 4, 1}));
  Tensor m = a.to(DType::kFloat32);
  EXPECT_EQ(*m.tensordot(m, {1}, {1}).to_vector<float>(), F({5, 14, 14, 50}));
  absl::StatusOr<std::vector<Tensor>> minmax = m.aminmax();
  ASSERT_OK(minmax.status());
  EXPECT_EQ(*(*minmax)[1].to_vector<float>(), F({5}));
  Tensor cos = session_.cosine_similarity(m, m);
  EXPECT_EQ(*cos.sizes(), L({2}));
  // An error is the engine's, from the call that made it.
  Tensor bad = a.to(DType::kFloat32).trace().add(session_.ones({2, 2, 2}).trace());
  EXPECT_NE(bad.status().message().find("expected a matrix"), std::string::npos) << bad.status();
}

TEST_F(TypedOpsTest, DataDependentOpsSizeTheirOutputsFromTheData) {
  absl::StatusOr<Tensor> made = session_.from_vector(std::vector<int64_t>{3, 1, 3, 0, 1, 3}, {6});
  ASSERT_OK(made.status());
  Tensor x = *made;
  absl::StatusOr<std::vector<Tensor>> u = x.unique(true, true, true);
  ASSERT_OK(u.status());
  ASSERT_EQ(u->size(), 3u);
  EXPECT_EQ(*(*u)[0].to_vector<int64_t>(), L({0, 1, 3}));
  EXPECT_EQ(*(*u)[1].to_vector<int64_t>(), L({2, 1, 2, 0, 1, 2}));
  EXPECT_EQ(*(*u)[2].to_vector<int64_t>(), L({1, 2, 3}));
  EXPECT_EQ(*x.bincount().to_vector<int64_t>(), L({1, 2, 0, 3}));
  Tensor twice = x.repeat_interleave(session_.full({1}, 2, DType::kInt64));
  EXPECT_EQ(*twice.sizes(), L({12}));
  // The server sizes the outputs; a bad count is the engine's error, from this call.
  Tensor bad = x.repeat_interleave(session_.full({6}, -1, DType::kInt64));
  EXPECT_NE(bad.status().message().find("repeats"), std::string::npos) << bad.status();
}

TEST_F(TypedOpsTest, OptionalInputsMayBeNumbersTensorsOrAbsent) {
  Tensor f = session_.arange(-2, 3).to(DType::kFloat32);
  EXPECT_EQ(*f.clamp(-1.0, 1.0).to_vector<float>(), F({-1, -1, 0, 1, 1}));
  EXPECT_EQ(*f.clamp(std::nullopt, 0.5).to_vector<float>(), F({-2, -1, 0, 0.5, 0.5}));
  EXPECT_EQ(*f.clamp(session_.zeros({5})).to_vector<float>(), F({0, 0, 0, 1, 2}));
  Tensor a = A();
  EXPECT_EQ(*session_.where(a.gt(2), a, 0).to_vector<int64_t>(), L({0, 0, 0, 3, 4, 5}));
}

TEST_F(TypedOpsTest, InPlaceMethodsWriteThroughAndReturnTheirTensor) {
  Tensor x = session_.zeros({3});
  Tensor same = x.add_(1);
  EXPECT_EQ(same.id(), x.id());
  x.mul_(4).sub_(1);
  EXPECT_EQ(*x.to_vector<float>(), F({3, 3, 3}));
}

TEST_F(TypedOpsTest, IndexingOpsTakeDimFirstAsTorch) {
  Tensor a = A();
  ASSERT_OK_AND_ASSIGN(Tensor idx, session_.from_vector<int64_t>({0, 0, 1, 0}, {2, 2}));
  EXPECT_EQ(*a.gather(1, idx).to_vector<int64_t>(), L({0, 0, 4, 3}));
  ASSERT_OK_AND_ASSIGN(Tensor col, session_.from_vector<int64_t>({0, 2}, {2, 1}));
  EXPECT_EQ(*session_.zeros({2, 3}).scatter(1, col, 7.0).to_vector<float>(),
            F({7, 0, 0, 0, 0, 7}));
  ASSERT_OK_AND_ASSIGN(Tensor pick, session_.from_vector<int64_t>({2, 0}, {2}));
  EXPECT_EQ(*a.index_select(1, pick).to_vector<int64_t>(), L({2, 0, 5, 3}));
}

TEST_F(TypedOpsTest, ARefusedInPlaceOpReturnsItsErrorAndLeavesTheTensorAsItWas) {
  Tensor x = session_.zeros({3});
  Tensor refused = x.add_(session_.ones({4}));  // torch: RuntimeError, x unchanged
  EXPECT_EQ(client::ErrorKind(refused.status()), "RuntimeError");
  EXPECT_NE(refused.status().message().find("must match"), std::string::npos)
      << refused.status();
  Tensor i = session_.arange(3);
  EXPECT_NE(i.add_(1.5).status().message().find("can't be cast"), std::string::npos);
  ASSERT_OK(x.status());
  x.add_(2);
  EXPECT_EQ(*x.to_vector<float>(), F({2, 2, 2}));
  EXPECT_EQ(*i.to_vector<int64_t>(), L({0, 1, 2}));
}

TEST_F(TypedOpsTest, FactoriesMatchTheUntypedCall) {
  Tensor typed = session_.randn({4}, std::nullopt, std::nullopt, 7);
  Tensor untyped = session_.Call("randn", {}, Attrs().Ints("size", {4}).Int("seed", 7));
  EXPECT_EQ(*typed.to_vector<float>(), *untyped.to_vector<float>());
  EXPECT_EQ(*session_.randint({100}, 5, 2, DType::kInt32).dtype(), DType::kInt32);
}

// torch.set_default_dtype(torch.float64) in torch 1.13: ones(2) and arange(0., 1., .5) are
// float64, as are int / int and an int tensor times 2.5; explicit dtypes and float32 tensors
// keep theirs. The planner here and the server's agree (each call carries the default).
TEST_F(TypedOpsTest, TheDefaultDTypeTypesFloatsAndFloatingFactories) {
  ASSERT_OK(session_.SetDefaultDType(DType::kFloat64));
  EXPECT_EQ(*session_.ones({2}).dtype(), DType::kFloat64);
  EXPECT_EQ(*session_.arange(0.0, 1.0, 0.5).dtype(), DType::kFloat64);
  EXPECT_EQ(*session_.ones({2}, DType::kFloat32).dtype(), DType::kFloat32);
  Tensor ints = A();
  Tensor quotient = ints.true_divide(ints.add(1));
  EXPECT_EQ(*quotient.dtype(), DType::kFloat64);
  EXPECT_EQ(*quotient.to_vector<double>(), std::vector<double>({0, 0.5, 2.0 / 3, 0.75, 0.8,
                                                               5.0 / 6}));
  EXPECT_EQ(*ints.mul(2.5).dtype(), DType::kFloat64);
  EXPECT_EQ(*session_.ones({2}, DType::kFloat32).mul(2.5).dtype(), DType::kFloat32);
  // Not a floating dtype: refused, the default unchanged.
  absl::Status refused = session_.SetDefaultDType(DType::kInt64);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("only floating-point types"), std::string::npos) << refused;
  EXPECT_EQ(session_.default_dtype(), DType::kFloat64);
  ASSERT_OK(session_.SetDefaultDType(DType::kFloat32));
  EXPECT_EQ(*session_.ones({2}).dtype(), DType::kFloat32);
  EXPECT_EQ(*ints.sqrt().dtype(), DType::kFloat32);
}

TEST_F(TypedOpsTest, AnOpsErrorIsTorchsAndNamesTheOp) {
  Tensor m = A().to(DType::kFloat32);
  Tensor bad = m.matmul(session_.zeros({4}));
  absl::Status status = bad.status();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(client::ErrorKind(status), "RuntimeError");
  EXPECT_NE(status.message().find("matmul"), std::string::npos) << status;
  EXPECT_NE(status.message().find("size mismatch"), std::string::npos) << status;
}

}  // namespace
}  // namespace tensord::testing
