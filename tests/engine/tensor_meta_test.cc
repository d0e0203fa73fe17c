#include "engine/tensor/tensor_meta.h"

#include <limits>

#include "engine/tensor/shape_util.h"
#include "gtest/gtest.h"
#include "tests/engine/tensor_test_util.h"
#include "tests/test_util.h"

namespace tensord::engine {
namespace {

using ::tensord::testing::StatusIs;
using test_util::ToVec;

TensorMeta Meta(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset = 0,
                DType dtype = DType::kFloat32) {
  return TensorMeta(dtype, sizes, strides, offset);
}

TEST(TensorMetaTest, ZeroDimIsOneElementAndContiguous) {
  TensorMeta m;
  EXPECT_EQ(m.dim(), 0);
  EXPECT_EQ(m.numel(), 1);
  EXPECT_TRUE(m.is_contiguous());
  EXPECT_TRUE(m.is_non_overlapping_and_dense());
}

TEST(TensorMetaTest, ContiguityFollowsPyTorch) {
  EXPECT_TRUE(Meta({2, 3}, {3, 1}).is_contiguous());
  EXPECT_FALSE(Meta({2, 3}, {1, 2}).is_contiguous());
  // Size-1 dims are ignored, whatever their stride.
  EXPECT_TRUE(Meta({3, 1, 4}, {4, 100, 1}).is_contiguous());
  EXPECT_TRUE(Meta({2, 3, 4, 1}, {12, 4, 1, 24}).is_contiguous());  // seed 000 permute
  EXPECT_FALSE(Meta({1, 3, 4, 2}, {24, 4, 1, 12}).is_contiguous());
  // Every empty tensor is contiguous.
  EXPECT_TRUE(Meta({0, 3}, {100, 7}).is_contiguous());
  // Expanded dims are not.
  EXPECT_FALSE(Meta({2, 2, 3, 4}, {0, 12, 4, 1}).is_contiguous());
}

TEST(TensorMetaTest, NumelAndOverflowSentinel) {
  EXPECT_EQ(Meta({2, 3, 4}, {12, 4, 1}).numel(), 24);
  EXPECT_EQ(Meta({0, int64_t{1} << 62, 4}, {0, 0, 0}).numel(), 0);
  EXPECT_EQ(Meta({int64_t{1} << 62, 4}, {0, 0}).numel(), -1);
}

TEST(TensorMetaTest, NonOverlappingAndDense) {
  EXPECT_TRUE(Meta({3, 4}, {1, 3}).is_non_overlapping_and_dense());   // transposed
  EXPECT_FALSE(Meta({3, 4}, {8, 2}).is_non_overlapping_and_dense());  // gaps
  EXPECT_FALSE(Meta({3, 4}, {0, 1}).is_non_overlapping_and_dense());  // broadcast
  EXPECT_TRUE(Meta({2, 3, 4, 5}, {60, 1, 15, 3}).is_non_overlapping_and_dense());  // NHWC
  // Contiguous implies dense even with odd strides on empty dims (PyTorch's refresh_contiguous).
  EXPECT_TRUE(Meta({0, 3, 3}, {3, 1, 0}).is_non_overlapping_and_dense());
}

TEST(TensorMetaTest, ContiguousStrides) {
  EXPECT_EQ(ToVec(ContiguousStrides(std::vector<int64_t>{2, 3, 4})),
            (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(ToVec(ContiguousStrides(std::vector<int64_t>{2, 0, 3})),
            (std::vector<int64_t>{3, 3, 1}));
  EXPECT_TRUE(ContiguousStrides({}).empty());
}

TEST(ValidatorTest, AcceptsTensorsInsideTheStorage) {
  EXPECT_OK(ValidateMeta("t", Meta({2, 3}, {3, 1}), 24));
  EXPECT_OK(ValidateMeta("t", Meta({3}, {3}, 1), 40));  // last element 7 -> 32 bytes
  EXPECT_OK(ValidateMeta("t", Meta({0, 5}, {100, 100}, 50), 40));  // empty: offset free
  EXPECT_OK(ValidateMeta("t", Meta({3, 3}, {0, 0}, 9), 40));       // overlapping is fine
}

TEST(ValidatorTest, RejectsEverythingOutsideOrOverflowing) {
  constexpr int64_t kBig = int64_t{1} << 62;
  const auto bad = absl::StatusCode::kInvalidArgument;
  // One element past the end (PyTorch's own message).
  EXPECT_THAT(ValidateMeta("as_strided", Meta({3, 3}, {3, 1}, 2), 40),
              ::tensord::testing::StatusIsWith(bad, "requiring a storage size of 44 are out of bounds "
                                         "for storage of size 40"));
  EXPECT_THAT(ValidateMeta("t", Meta({-1}, {1}), 40), StatusIs(bad));
  EXPECT_THAT(ValidateMeta("t", Meta({2}, {-1}, 1), 40), StatusIs(bad));
  EXPECT_THAT(ValidateMeta("t", Meta({2}, {1}, -1), 40), StatusIs(bad));
  EXPECT_THAT(ValidateMeta("t", Meta({kBig, 4}, {1, 1}), 40), StatusIs(bad));   // numel
  EXPECT_THAT(ValidateMeta("t", Meta({3, 3}, {kBig, kBig}), 40), StatusIs(bad));  // extent
  EXPECT_THAT(ValidateMeta("t", Meta({0}, {1}, kBig), 40), StatusIs(bad));  // offset bytes
  EXPECT_THAT(ValidateMeta("t", Meta({0, kBig, kBig}, {0, 0, 0}), 40), StatusIs(bad));
  std::vector<int64_t> ones(kMaxRank + 1, 1);
  EXPECT_THAT(ValidateMeta("t", Meta(ones, ones), 40), StatusIs(bad));
  EXPECT_OK(ValidateMeta("t", Meta(std::vector<int64_t>(kMaxRank, 1),
                                   std::vector<int64_t>(kMaxRank, 1)), 4));
}

TEST(ValidatorTest, MessagesNameTheOp) {
  absl::Status s = ValidateMeta("my_op", Meta({2}, {-1}, 1), 40);
  EXPECT_EQ(s.message().substr(0, 7), "my_op: ");
}

TEST(ShapeUtilTest, InferSizeAndComputeViewStrides) {
  ASSERT_OK_AND_ASSIGN(auto sizes, InferSize("view", std::vector<int64_t>{-1, 4}, 24));
  EXPECT_EQ(ToVec(sizes), (std::vector<int64_t>{6, 4}));
  EXPECT_THAT(InferSize("view", std::vector<int64_t>{-1, -1}, 24),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // PYTORCH_SEMANTICS.md 6.1: a[:, :, :2].view(6, 2) works, .view(12) does not.
  ASSERT_OK_AND_ASSIGN(auto ok, ComputeViewStrides("view", std::vector<int64_t>{2, 3, 2},
                                                    std::vector<int64_t>{12, 4, 1},
                                                    std::vector<int64_t>{6, 2}));
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ToVec(*ok), (std::vector<int64_t>{4, 1}));
  ASSERT_OK_AND_ASSIGN(auto no, ComputeViewStrides("view", std::vector<int64_t>{2, 3, 2},
                                                    std::vector<int64_t>{12, 4, 1},
                                                    std::vector<int64_t>{12}));
  EXPECT_FALSE(no.has_value());
}

TEST(ShapeUtilTest, InferDenseStridesKeepsDimOrder) {
  // A strided (non-dense) transposed tensor clones into transposed dense strides.
  EXPECT_EQ(ToVec(InferDenseStrides(std::vector<int64_t>{3, 4}, std::vector<int64_t>{2, 6})),
            (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(ToVec(InferDenseStrides(std::vector<int64_t>{2, 3}, std::vector<int64_t>{0, 1})),
            (std::vector<int64_t>{3, 1}));
}

TEST(ShapeUtilTest, WrapDim) {
  EXPECT_EQ(*WrapDim("op", -1, 3), 2);
  EXPECT_EQ(*WrapDim("op", 0, 0), 0);   // scalars wrap as 1-d
  EXPECT_EQ(*WrapDim("op", -1, 0), 0);
  EXPECT_THAT(WrapDim("op", 3, 3),
              ::tensord::testing::StatusIsWith(absl::StatusCode::kOutOfRange,
                                    "op: Dimension out of range (expected to be in range of "
                                    "[-3, 2], but got 3)"));
}

}  // namespace
}  // namespace tensord::engine
