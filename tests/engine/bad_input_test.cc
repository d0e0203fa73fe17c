// Bad input: every case must return a clear status with the expected code, naming the op, and
// must allocate nothing (the CPU allocator sees no allocation at all) and leak nothing.
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/runtime/allocator.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry.h"
#include "engine/views/view_ops.h"
#include "gtest/gtest.h"
#include "tests/engine/tensor_test_util.h"
#include "tests/test_util.h"

namespace tensord::engine {
namespace {

using V = std::vector<int64_t>;
using Code = absl::StatusCode;
constexpr int64_t kBig = int64_t{1} << 62;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Inputs, made once before any case runs.
struct Inputs {
  Tensor a = *View(*test_util::MakeStrided(DType::kFloat32, 24, V{24}, V{1}, 0), V{2, 3, 4});
  Tensor s = *test_util::MakeStrided(DType::kFloat32, 10, V{10}, V{1}, 0);
  Tensor scalar = *test_util::MakeStrided(DType::kFloat32, 1, V{}, V{}, 0);
  Tensor u8 = *test_util::MakeStrided(DType::kUInt8, 4, V{4}, V{1}, 0);
  Tensor big = *test_util::MakeStrided(DType::kUInt8, 100000, V{100000}, V{1}, 0);
  Tensor expanded = *Expand(*View(s, V{10, 1}), V{10, 3});
  Tensor empty = *test_util::MakeStrided(DType::kFloat32, 0, V{0}, V{1}, 0);
  Tensor two_indices = *test_util::MakeStrided(DType::kInt64, 2, V{2}, V{1}, 0);
  Tensor no_index = *test_util::MakeStrided(DType::kInt64, 0, V{0}, V{1}, 0);
};

const Inputs& In() {
  static const Inputs* inputs = new Inputs();
  return *inputs;
}

struct BadCase {
  std::string name;
  Code code;
  std::string op;  // the message must start with it
  std::function<absl::Status()> run;
};

template <typename T>
absl::Status St(const absl::StatusOr<T>& s) {
  return s.status();
}

Attrs With(std::string name, AttrValue v) { return Attrs().Set(std::move(name), std::move(v)); }

std::vector<BadCase> Cases() {
  using I = IndexItem;
  const Code kArg = Code::kInvalidArgument, kRange = Code::kOutOfRange;
  const Code kExhausted = Code::kResourceExhausted;
  return {
      {"TransposeDimTooLarge", kRange, "transpose", [] { return St(Transpose(In().a, 0, 3)); }},
      {"TransposeDimTooNegative", kRange, "transpose",
       [] { return St(Transpose(In().a, -4, 0)); }},
      {"TransposeInt64MinDim", kRange, "transpose",
       [] { return St(Transpose(In().a, kMin, 0)); }},
      {"PermuteDuplicateDims", kArg, "permute", [] { return St(Permute(In().a, V{0, 0, 1})); }},
      {"PermuteWrongLength", kArg, "permute", [] { return St(Permute(In().a, V{0, 1})); }},
      {"PermuteDimOutOfRange", kRange, "permute", [] { return St(Permute(In().a, V{0, 1, 5})); }},
      {"ViewWrongNumel", kArg, "view", [] { return St(View(In().a, V{5, 5})); }},
      {"ViewTwoInferredDims", kArg, "view", [] { return St(View(In().a, V{-1, -1})); }},
      {"ViewNegativeSize", kArg, "view", [] { return St(View(In().a, V{-2, 12})); }},
      {"ViewIncompatibleStrides", kArg, "view",
       [] { return St(View(*Transpose(In().a, 0, 2), V{24})); }},
      {"ViewAmbiguousEmpty", kArg, "view", [] { return St(View(In().empty, V{-1, 0})); }},
      {"ViewProductOverflows", kArg, "view", [] { return St(View(In().a, V{kBig, kBig})); }},
      {"ViewRankAboveLimit", kArg, "view",
       [] { return St(View(In().s, [] { V v(kMaxRank + 1, 1); v[0] = 10; return v; }())); }},
      {"AsStridedOutOfStorage", kArg, "as_strided",
       [] { return St(AsStrided(In().s, V{3, 3}, V{3, 1}, 2)); }},
      {"AsStridedNegativeStride", kArg, "as_strided",
       [] { return St(AsStrided(In().s, V{3}, V{-1}, 5)); }},
      {"AsStridedNegativeOffset", kArg, "as_strided",
       [] { return St(AsStrided(In().s, V{3}, V{1}, -1)); }},
      {"AsStridedNegativeSize", kArg, "as_strided",
       [] { return St(AsStrided(In().s, V{-1}, V{1}, 0)); }},
      {"AsStridedLengthMismatch", kArg, "as_strided",
       [] { return St(AsStrided(In().s, V{3}, V{3, 1}, 0)); }},
      {"AsStridedExtentOverflows", kArg, "as_strided",
       [] { return St(AsStrided(In().s, V{kBig, 3}, V{kBig, kBig}, 0)); }},
      {"AsStridedOffsetBytesOverflow", kArg, "as_strided",
       [] { return St(AsStrided(In().s, V{0}, V{1}, kBig)); }},
      {"AsStridedHugeOffset", kArg, "as_strided",
       [] { return St(AsStrided(In().s, V{1}, V{1}, std::numeric_limits<int64_t>::max())); }},
      {"AsStridedRankAboveLimit", kArg, "as_strided",
       [] { return St(AsStrided(In().s, V(kMaxRank + 1, 1), V(kMaxRank + 1, 1), 0)); }},
      {"ExpandTooFewSizes", kArg, "expand", [] { return St(Expand(In().a, V{4})); }},
      {"ExpandNonSingleton", kArg, "expand", [] { return St(Expand(In().a, V{3, 3, 4})); }},
      {"ExpandLeadingMinusOne", kArg, "expand", [] { return St(Expand(In().a, V{-1, 2, 3, 4})); }},
      {"ExpandNegativeSize", kArg, "expand",
       [] { return St(Expand(*View(In().s, V{10, 1}), V{10, -2})); }},
      {"ExpandRankAboveLimit", kArg, "expand",
       [] { return St(Expand(In().s, [] { V v(kMaxRank + 1, 1); v.back() = 10; return v; }())); }},
      {"UnsqueezeOutOfRange", kRange, "unsqueeze", [] { return St(Unsqueeze(In().a, 4)); }},
      {"SqueezeOutOfRange", kRange, "squeeze", [] { return St(SqueezeDim(In().a, 3)); }},
      {"SqueezeDuplicateDims", kArg, "squeeze", [] { return St(SqueezeDims(In().a, V{1, -2})); }},
      {"NarrowPastTheEnd", kArg, "narrow", [] { return St(Narrow(In().a, 2, 3, 2)); }},
      {"NarrowNegativeLength", kArg, "narrow", [] { return St(Narrow(In().a, 2, 1, -1)); }},
      {"NarrowScalar", kArg, "narrow", [] { return St(Narrow(In().scalar, 0, 0, 1)); }},
      {"NarrowHugeStart", kRange, "narrow", [] { return St(Narrow(In().s, 0, kMin, 1)); }},
      {"SelectOutOfRange", kRange, "select", [] { return St(Select(In().a, 1, 3)); }},
      {"SelectScalar", kRange, "select", [] { return St(Select(In().scalar, 0, 0)); }},
      {"SliceZeroStep", kArg, "slice", [] { return St(Slice(In().s, 0, {}, {}, 0)); }},
      {"SliceNegativeStep", kArg, "slice", [] { return St(Slice(In().s, 0, {}, {}, -1)); }},
      {"SliceStepOverflowsStride", kArg, "slice",
       [] { return St(Slice(*Transpose(In().a, 0, 2), 2, {}, {}, kBig)); }},
      {"IndexTooMany", kRange, "index",
       [] { return St(Index(In().a, {I::Integer(0), I::Integer(0), I::Integer(0), I::Integer(0)})); }},
      {"IndexOutOfBounds", kRange, "index", [] { return St(Index(In().a, {I::Integer(2)})); }},
      {"IndexNegativeStep", kArg, "index",
       [] { return St(Index(In().s, {I::MakeSlice({}, {}, -1)})); }},
      {"IndexScalarWithInt", kRange, "index", [] { return St(Index(In().scalar, {I::Integer(0)})); }},
      {"DiagonalSameDims", kArg, "diagonal", [] { return St(Diagonal(In().a, 0, 1, 1)); }},
      {"DiagonalDimOutOfRange", kRange, "diagonal", [] { return St(Diagonal(In().a, 0, 0, 3)); }},
      {"UnfoldTooLarge", kArg, "unfold", [] { return St(Unfold(In().s, 0, 11, 1)); }},
      {"UnfoldZeroStep", kArg, "unfold", [] { return St(Unfold(In().s, 0, 2, 0)); }},
      {"UnfoldNegativeSize", kArg, "unfold", [] { return St(Unfold(In().s, 0, -1, 1)); }},
      {"UnfoldStepOverflows", kArg, "unfold",
       [] { return St(Unfold(*AsStrided(In().s, V{2}, V{8}, 0), 0, 1, kBig)); }},
      {"SplitNegative", kArg, "split", [] { return St(Split(In().s, -1, 0)); }},
      {"SplitZeroOfNonEmpty", kArg, "split", [] { return St(Split(In().s, 0, 0)); }},
      {"SplitTooManyPieces", kExhausted, "split", [] { return St(Split(In().big, 1, 0)); }},
      {"SplitWithSizesWrongSum", kArg, "split_with_sizes",
       [] { return St(SplitWithSizes(In().s, V{2, 3, 4}, 0)); }},
      {"SplitWithSizesNegative", kArg, "split_with_sizes",
       [] { return St(SplitWithSizes(In().s, V{-1, 11}, 0)); }},
      {"SplitWithSizesSumOverflows", kArg, "split_with_sizes",
       [] { return St(SplitWithSizes(In().s, V{kBig, kBig, kBig, kBig, 10}, 0)); }},
      {"TensorSplitZeroSections", kArg, "tensor_split",
       [] { return St(TensorSplit(In().s, 0, 0)); }},
      {"TensorSplitBillionSections", kExhausted, "tensor_split",
       [] { return St(TensorSplit(In().s, 1000000000, 0)); }},
      {"ChunkZero", kArg, "chunk", [] { return St(Chunk(In().s, 0, 0)); }},
      {"ChunkBillionOfEmpty", kExhausted, "chunk",
       [] { return St(Chunk(In().empty, 1000000000, 0)); }},
      {"UnbindScalar", kRange, "unbind", [] { return St(Unbind(In().scalar, 0)); }},
      {"UnflattenWrongProduct", kArg, "unflatten",
       [] { return St(Unflatten(In().a, 1, V{2, 2})); }},
      {"UnflattenNoSizes", kArg, "unflatten", [] { return St(Unflatten(In().a, 1, V{})); }},
      {"MovedimRepeated", kArg, "movedim", [] { return St(Movedim(In().a, V{0, 1}, V{1, 1})); }},
      {"MovedimLengthMismatch", kArg, "movedim",
       [] { return St(Movedim(In().a, V{0, 1}, V{1})); }},
      {"FlattenStartAfterEnd", kArg, "flatten", [] { return St(Flatten(In().a, 2, 1)); }},
      {"TOfThreeDims", kArg, "t", [] { return St(T(In().a)); }},
      {"MTOfOneDim", kArg, "mT", [] { return St(MT(In().s)); }},
      {"EmptyNegativeDim", kArg, "empty", [] { return St(Empty(V{2, -1}, DType::kFloat32)); }},
      {"EmptyNumelOverflows", kArg, "empty", [] { return St(Empty(V{kBig, 8}, DType::kFloat32)); }},
      {"EmptyBytesOverflow", kArg, "empty", [] { return St(Empty(V{kBig}, DType::kFloat64)); }},
      {"EmptyMoreThanTheMachine", kExhausted, "empty",
       [] { return St(Empty(V{int64_t{1} << 50}, DType::kUInt8)); }},
      {"EmptyStridedNegativeStride", kArg, "empty_strided",
       [] { return St(EmptyStrided(V{2}, V{-1}, DType::kFloat32)); }},
      {"FullValueOverflowsDType", kArg, "full",
       [] { return St(Full(V{2}, Scalar(int64_t{300}), DType::kUInt8)); }},
      {"ArangeZeroStep", kArg, "arange",
       [] { return St(Arange(Scalar(int64_t{0}), Scalar(int64_t{10}), Scalar(int64_t{0}), {})); }},
      {"ArangeWrongSign", kArg, "arange",
       [] { return St(Arange(Scalar(int64_t{0}), Scalar(int64_t{10}), Scalar(int64_t{-1}), {})); }},
      {"ArangeInfinite", kArg, "arange",
       [] { return St(Arange(Scalar(0.0), Scalar(std::numeric_limits<double>::infinity()), Scalar(1.0), {})); }},
      {"ArangeSizeOverflows", kArg, "arange",
       [] { return St(Arange(Scalar(kMin), Scalar(std::numeric_limits<int64_t>::max()), Scalar(int64_t{1}), {})); }},
      {"CopyIntoExpanded", kArg, "copy_", [] { return CopyInto(In().expanded, In().expanded); }},
      {"CopyShapeMismatch", kArg, "copy_", [] { return CopyInto(In().s, In().a); }},
      {"CopyPartialOverlap", kArg, "copy_",
       [] { return CopyInto(*Slice(In().s, 0, 1, {}, 1), *Slice(In().s, 0, 0, 9, 1)); }},
      {"FillOverflow", kArg, "fill_", [] { return FillInto(In().u8, Scalar(int64_t{256})); }},
      {"FlipDuplicateDims", kArg, "flip", [] { return St(Flip(In().a, V{0, -3})); }},
      {"FlipDimOutOfRange", kRange, "flip", [] { return St(Flip(In().a, V{3})); }},
      {"RepeatTooFewDims", kArg, "repeat", [] { return St(Repeat(In().a, V{2, 2})); }},
      {"RepeatNegative", kArg, "repeat", [] { return St(Repeat(In().s, V{-1})); }},
      {"RepeatOverflows", kArg, "repeat", [] { return St(Repeat(In().s, V{kBig})); }},
      {"FromBytesWrongCount", kArg, "from_bytes",
       [] { return St(FromBytes(V{2, 2}, DType::kFloat32, std::string(15, '\0'))); }},
      {"ReshapeInvalid", kArg, "reshape", [] { return St(Reshape(In().a, V{5, 5})); }},
      {"RegistryUnknownOp", Code::kNotFound, "unknown op",
       [] { return St(PlanOp("no_such_op", {In().a}, Attrs())); }},
      {"RegistryWrongInputCount", kArg, "view",
       [] { return St(PlanOp("view", {In().a, In().s}, With("shape", V{24}))); }},
      {"RegistryUnknownAttribute", kArg, "view",
       [] { return St(PlanOp("view", {In().a}, With("shape", V{24}).Set("bogus", int64_t{1}))); }},
      {"RegistryMissingAttribute", kArg, "view", [] { return St(PlanOp("view", {In().a}, Attrs())); }},
      {"RegistryWrongAttributeType", kArg, "view",
       [] { return St(PlanOp("view", {In().a}, With("shape", int64_t{24}))); }},
      {"RegistryUndefinedInput", kArg, "t", [] { return St(PlanOp("t", {Tensor()}, Attrs())); }},
      // A 0-d self has one slot for its result: several (or no) indices would write past it.
      {"IndexSelectScalarWithTwoIndices", kRange, "index_select",
       [] {
         return St(PlanOp("index_select", {In().scalar, In().two_indices}, With("dim", int64_t{0})));
       }},
      {"IndexSelectScalarWithNoIndex", kRange, "index_select",
       [] {
         return St(PlanOp("index_select", {In().scalar, In().no_index}, With("dim", int64_t{0})));
       }},
  };
}

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInputTest, ClearStatusAndNoAllocation) {
  const BadCase& c = GetParam();
  In();  // inputs exist before measuring
  const AllocatorStats before = CpuAllocator().stats();
  const absl::Status status = c.run();
  const AllocatorStats after = CpuAllocator().stats();
  EXPECT_EQ(status.code(), c.code) << status;
  EXPECT_TRUE(absl::StartsWith(status.message(), c.op)) << status;
  EXPECT_EQ(after.pool_hits + after.pool_misses, before.pool_hits + before.pool_misses)
      << "the op allocated memory before failing";
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(after.live_allocations, before.live_allocations);
}

INSTANTIATE_TEST_SUITE_P(Engine, BadInputTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           return info.param.name;
                         });

TEST(BadInputCount, AtLeastForty) { EXPECT_GE(Cases().size(), 40u); }

}  // namespace
}  // namespace tensord::engine
