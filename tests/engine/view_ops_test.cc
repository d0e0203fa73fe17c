// Unit tests for each view op, with expectations from docs (PYTORCH_SEMANTICS.md) and the seed
// articles. The golden test checks thousands more cases against torch itself.
#include "engine/views/view_ops.h"

#include "engine/ops/copy_ops.h"
#include "gtest/gtest.h"
#include "tests/engine/tensor_test_util.h"
#include "tests/test_util.h"

namespace tensord::engine {
namespace {

using ::tensord::testing::StatusIs;
using test_util::ToVec;
using V = std::vector<int64_t>;

Tensor Arange(int64_t n, DType dtype = DType::kFloat32) {
  return *test_util::MakeStrided(dtype, n, V{n}, V{1}, 0);
}

Tensor A() { return *View(Arange(24), V{2, 3, 4}); }  // a = arange(24.).view(2, 3, 4)
Tensor S() { return Arange(10); }                      // s = arange(10.)
Tensor Q() { return *View(Arange(12), V{3, 4}); }      // q = arange(12.).view(3, 4)

void ExpectMeta(const absl::StatusOr<Tensor>& t, V sizes, V strides, int64_t offset,
                bool contiguous) {
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(ToVec(t->sizes()), sizes);
  EXPECT_EQ(ToVec(t->strides()), strides);
  EXPECT_EQ(t->storage_offset(), offset);
  EXPECT_EQ(t->is_contiguous(), contiguous);
}

TEST(ViewTest, ConformanceCase1MergesNonContiguousDims) {
  Tensor sliced = *Slice(A(), 2, 0, 2, 1);
  ExpectMeta(View(sliced, V{6, 2}), V{6, 2}, V{4, 1}, 0, false);
  EXPECT_THAT(View(sliced, V{12}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ViewTest, ConformanceCase2StridedSizeOneDim) {
  Tensor strided = *Slice(Arange(9), 0, {}, {}, 3);
  ExpectMeta(View(strided, V{1, 3}), V{1, 3}, V{9, 3}, 0, false);
}

TEST(ViewTest, InfersMinusOneAndSharesStorage) {
  absl::StatusOr<Tensor> v = View(A(), V{-1, 4});
  ExpectMeta(v, V{6, 4}, V{4, 1}, 0, true);
  Tensor a = A();
  EXPECT_TRUE(View(a, V{24})->is_alias_of(a));
}

TEST(ViewTest, EmptyTensorViews) {
  Tensor e = *View(Arange(0), V{0, 3});
  ExpectMeta(View(*Slice(e, 1, {}, 2, 1), V{2, 0}), V{2, 0}, V{1, 1}, 0, true);
  EXPECT_THAT(View(e, V{-1, 0}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ExpandTest, ConformanceCases) {
  ExpectMeta(Expand(Arange(3), V{2, 1, 3}), V{2, 1, 3}, V{0, 3, 1}, 0, false);
  Tensor col = *View(Arange(3), V{3, 1});
  ExpectMeta(Expand(col, V{3, 4}), V{3, 4}, V{1, 0}, 0, false);
  EXPECT_THAT(Expand(col, V{4, 4}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Expand(col, V{-1, 3, 4}), StatusIs(absl::StatusCode::kInvalidArgument));
  // seed 000: broadcast_to((2, 2, 3, 4)) of a (1, 2, 3, 4) tensor.
  ExpectMeta(BroadcastTo(*View(Arange(24), V{1, 2, 3, 4}), V{2, 2, 3, 4}), V{2, 2, 3, 4},
             V{0, 12, 4, 1}, 0, false);
}

TEST(UnsqueezeTest, ConformanceCase4) {
  ExpectMeta(Unsqueeze(*Slice(S(), 0, 1, {}, 3), 1), V{3, 1}, V{3, 1}, 1, false);
  Tensor expanded = *Expand(*View(Arange(3), V{3, 1}), V{3, 4});
  ExpectMeta(Unsqueeze(expanded, 1), V{3, 1, 4}, V{1, 0, 0}, 0, false);
  ExpectMeta(Unsqueeze(*View(Arange(0), V{0, 3}), 0), V{1, 0, 3}, V{0, 3, 1}, 0, true);
}

TEST(DiagonalTest, ConformanceCase5) {
  ExpectMeta(Diagonal(Q(), 4, 0, 1), V{0}, V{5}, 0, true);
  ExpectMeta(Diagonal(Q(), -1, 0, 1), V{2}, V{5}, 4, false);
  ExpectMeta(Diagonal(A(), 1, 2, 0), V{3, 1}, V{4, 13}, 12, false);
  EXPECT_THAT(Diagonal(Q(), 0, 1, 1), StatusIs(absl::StatusCode::kInvalidArgument));
  // Extreme offsets give empty diagonals, not overflow.
  ExpectMeta(Diagonal(Q(), std::numeric_limits<int64_t>::min(), 0, 1), V{0}, V{5}, 0, true);
  ExpectMeta(Diagonal(Q(), std::numeric_limits<int64_t>::max(), 0, 1), V{0}, V{5}, 0, true);
}

TEST(SliceTest, ConformanceCase6) {
  ExpectMeta(Slice(S(), 0, 7, 3, 1), V{0}, V{1}, 7, true);
  ExpectMeta(Slice(S(), 0, 100, {}, 1), V{0}, V{1}, 10, true);
  EXPECT_THAT(Slice(S(), 0, {}, {}, -1), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Slice(S(), 0, {}, {}, 0), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(AsStridedTest, ConformanceCase10) {
  EXPECT_THAT(AsStrided(S(), V{3, 3}, V{3, 1}, 2),
              ::tensord::testing::StatusIsWith(absl::StatusCode::kInvalidArgument,
                                               "out of bounds for storage of size 40"));
  ExpectMeta(AsStrided(S(), V{0, 5}, V{100, 100}, 50), V{0, 5}, V{100, 100}, 50, true);
  // The default offset is the input's, not 0.
  ExpectMeta(AsStrided(*Slice(S(), 0, 2, {}, 1), V{2}, V{1}, {}), V{2}, V{1}, 2, true);
  // seed 003: as_strided(x, (4, 3), (1, 4)) is a transpose.
  ExpectMeta(AsStrided(Q(), V{4, 3}, V{1, 4}, {}), V{4, 3}, V{1, 4}, 0, false);
}

TEST(TransposeTest, SwapsAndAliases) {
  ExpectMeta(Transpose(Q(), 0, 1), V{4, 3}, V{1, 4}, 0, false);
  ExpectMeta(Transpose(Q(), 1, 1), V{3, 4}, V{4, 1}, 0, true);
  ExpectMeta(T(Q()), V{4, 3}, V{1, 4}, 0, false);
  ExpectMeta(T(S()), V{10}, V{1}, 0, true);
  EXPECT_THAT(T(A()), StatusIs(absl::StatusCode::kInvalidArgument));
  ExpectMeta(NumpyT(A()), V{4, 3, 2}, V{1, 4, 12}, 0, false);
  ExpectMeta(MT(A()), V{2, 4, 3}, V{12, 1, 4}, 0, false);
  EXPECT_THAT(MT(S()), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Transpose(A(), 0, 3), StatusIs(absl::StatusCode::kOutOfRange));
}

TEST(PermuteTest, SeedExamples) {
  Tensor t = *View(Arange(24, DType::kInt64), V{1, 2, 3, 4});
  ExpectMeta(Permute(t, V{1, 2, 3, 0}), V{2, 3, 4, 1}, V{12, 4, 1, 24}, 0, true);
  ExpectMeta(Permute(t, V{0, 2, 3, 1}), V{1, 3, 4, 2}, V{24, 4, 1, 12}, 0, false);
  ExpectMeta(Permute(t, V{1, 0, 3, 2}), V{2, 1, 4, 3}, V{12, 24, 1, 4}, 0, false);
  EXPECT_THAT(Permute(t, V{0, 0, 1, 2}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(MovedimTest, OthersKeepTheirOrder) {
  Tensor t = *View(Arange(120), V{2, 3, 4, 5});
  ExpectMeta(Movedim(t, V{1, 3}, V{0, 1}), V{3, 5, 2, 4}, V{20, 1, 60, 5}, 0, false);
  EXPECT_THAT(Movedim(t, V{0, 1}, V{1, 1}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SqueezeTest, AllOneAndSeveral) {
  Tensor t = *View(Arange(6), V{1, 2, 1, 3, 1});
  ExpectMeta(Squeeze(t), V{2, 3}, V{3, 1}, 0, true);
  ExpectMeta(SqueezeDim(t, 2), V{1, 2, 3, 1}, V{6, 3, 1, 1}, 0, true);
  ExpectMeta(SqueezeDim(t, 1), V{1, 2, 1, 3, 1}, V{6, 3, 3, 1, 1}, 0, true);  // size 2: alias
  ExpectMeta(SqueezeDims(t, V{0, -1}), V{2, 1, 3}, V{3, 3, 1}, 0, true);
  EXPECT_THAT(SqueezeDims(t, V{0, 0}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(NarrowSelectTest, Offsets) {
  ExpectMeta(Narrow(Q(), 1, 1, 2), V{3, 2}, V{4, 1}, 1, false);
  ExpectMeta(Narrow(S(), 0, 10, 0), V{0}, V{1}, 10, true);  // start == size is allowed
  EXPECT_THAT(Narrow(S(), 0, 3, 8), StatusIs(absl::StatusCode::kInvalidArgument));
  ExpectMeta(Select(A(), 1, -1), V{2, 4}, V{12, 1}, 8, false);
  EXPECT_THAT(Select(A(), 1, 3), StatusIs(absl::StatusCode::kOutOfRange));
}

TEST(IndexTest, MixedBasicIndexing) {
  using I = IndexItem;
  // a[1, None, ::2, None, -1] -> (1, 2, 1), (12, 8, 4), 15
  ExpectMeta(Index(A(), {I::Integer(1), I::None(), I::MakeSlice({}, {}, 2), I::None(),
                         I::Integer(-1)}),
             V{1, 2, 1}, V{12, 8, 4}, 15, false);
  // seed 003 on arange(200).reshape(10, 20).
  Tensor x = *View(Arange(200), V{10, 20});
  ExpectMeta(Index(x, {I::Integer(0), I::MakeSlice(1, 9, 3)}), V{3}, V{3}, 1, false);
  ExpectMeta(Index(x, {I::Ellipsis(), I::Integer(1)}), V{10}, V{20}, 1, false);
  ExpectMeta(Index(x, {I::MakeSlice({}, {}), I::None(), I::MakeSlice({}, {})}), V{10, 1, 20},
             V{20, 20, 1}, 0, true);
  ExpectMeta(Index(x, {}), V{10, 20}, V{20, 1}, 0, true);  // a[()] is an alias
  EXPECT_THAT(Index(x, {I::Integer(0), I::Integer(0), I::Integer(0)}),
              StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(Index(x, {I::Integer(10)}), StatusIs(absl::StatusCode::kOutOfRange));
}

TEST(UnfoldTest, Windows) {
  ExpectMeta(Unfold(S(), 0, 3, 2), V{4, 3}, V{2, 1}, 0, false);
  ExpectMeta(Unfold(S(), 0, 0, 1), V{11, 0}, V{1, 1}, 0, true);
  EXPECT_THAT(Unfold(S(), 0, 11, 1), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Unfold(S(), 0, 2, 0), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SplitTest, PiecesAndSizes) {
  ASSERT_OK_AND_ASSIGN(auto pieces, Split(S(), 4, 0));
  ASSERT_EQ(pieces.size(), 3u);
  ExpectMeta(pieces[2], V{2}, V{1}, 8, true);
  ASSERT_OK_AND_ASSIGN(auto chunks, Chunk(Arange(6), 4, 0));
  EXPECT_EQ(chunks.size(), 3u);  // 6 into 4 -> 2, 2, 2
  ASSERT_OK_AND_ASSIGN(auto ts, TensorSplit(Arange(5), 4, 0));
  ASSERT_EQ(ts.size(), 4u);
  EXPECT_EQ(ts[0].size(0), 2);
  EXPECT_EQ(ts[3].size(0), 1);
  ASSERT_OK_AND_ASSIGN(auto ub, Unbind(Q(), 1));
  ASSERT_EQ(ub.size(), 4u);
  ExpectMeta(ub[3], V{3}, V{4}, 3, false);
  EXPECT_THAT(SplitWithSizes(S(), V{2, 3, 4}, 0), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(UnflattenTest, SplitsOneDim) {
  ExpectMeta(Unflatten(A(), 2, V{2, -1}), V{2, 3, 2, 2}, V{12, 4, 2, 1}, 0, true);
  EXPECT_THAT(Unflatten(A(), 1, V{2, 2}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ReshapeTest, ViewWhenPossibleElseCopy) {
  // seed 000: t[:, :, :, 2].reshape(3, 2) is a view with strides (8, 4).
  Tensor t = *View(Arange(24, DType::kInt64), V{1, 2, 3, 4});
  Tensor col = *Index(t, {IndexItem::MakeSlice({}, {}), IndexItem::MakeSlice({}, {}),
                          IndexItem::MakeSlice({}, {}), IndexItem::Integer(2)});
  ExpectMeta(col, V{1, 2, 3}, V{24, 12, 4}, 2, false);
  absl::StatusOr<Tensor> r = Reshape(col, V{3, 2});
  ExpectMeta(r, V{3, 2}, V{8, 4}, 2, false);
  EXPECT_TRUE(r->is_alias_of(t));
  ExpectMeta(Contiguous(*r), V{3, 2}, V{2, 1}, 0, true);
  EXPECT_EQ(test_util::Values(*Contiguous(*r)), (std::vector<double>{2, 6, 10, 14, 18, 22}));
  // seed 002: a transposed tensor cannot be viewed but reshapes into a copy.
  Tensor b = *Transpose(*View(Arange(8), V{2, 4}), 0, 1);
  EXPECT_THAT(View(b, V{2, 4}), StatusIs(absl::StatusCode::kInvalidArgument));
  absl::StatusOr<Tensor> copy = Reshape(b, V{2, 4});
  ExpectMeta(copy, V{2, 4}, V{4, 1}, 0, true);
  EXPECT_FALSE(copy->is_alias_of(b));
  EXPECT_EQ(test_util::Values(*copy), (std::vector<double>{0, 4, 1, 5, 2, 6, 3, 7}));
}

TEST(ContiguousTest, ReturnsSelfWhenContiguous) {
  // PYTORCH_SEMANTICS 6.8: y = ones(12).as_strided((3,1,4), (4,100,1)) is contiguous;
  // y.contiguous() is y (odd strides kept); y.clone() keeps (4, 100, 1).
  Tensor y = *AsStrided(Arange(12), V{3, 1, 4}, V{4, 100, 1}, 0);
  absl::StatusOr<Tensor> same = Contiguous(y);
  ExpectMeta(same, V{3, 1, 4}, V{4, 100, 1}, 0, true);
  EXPECT_EQ(same->storage(), y.storage());
  absl::StatusOr<Tensor> clone = Clone(y);
  ExpectMeta(clone, V{3, 1, 4}, V{4, 100, 1}, 0, true);
  EXPECT_NE(clone->storage(), y.storage());
}

TEST(AliasDetachTest, SameViewSameStorage) {
  Tensor q = Q();
  absl::StatusOr<Tensor> a = Alias(q);
  ExpectMeta(a, V{3, 4}, V{4, 1}, 0, true);
  EXPECT_TRUE(a->is_alias_of(q));
  EXPECT_TRUE(Detach(q)->is_alias_of(q));
}

}  // namespace
}  // namespace tensord::engine
