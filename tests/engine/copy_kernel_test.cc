// Differential test of the CPU strided-copy kernel against a naive element-by-element
// reference, over random layouts (permuted, sliced, broadcast, reversed) and every dtype pair.
// The whole destination storage is compared, so writes outside the view (into sentinel
// values around it) are caught too.
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "engine/kernels/convert.h"
#include "engine/cpu/copy_kernel.h"
#include "engine/core/dtype.h"
#include "engine/runtime/backend.h"
#include "gtest/gtest.h"
#include "tests/engine/layout_test_util.h"

namespace tensord::engine::cpu {
namespace {

using testing_util::Buffer;
using testing_util::Layout;
using testing_util::RandomLayout;
using testing_util::ReferenceCopy;
using testing_util::V;

void CheckOneCopy(std::mt19937& rng, const V& sizes, DType dst_dtype, DType src_dtype) {
  const Layout dl = RandomLayout(rng, sizes, /*allow_broadcast=*/false);
  const Layout sl = RandomLayout(rng, sizes, /*allow_broadcast=*/true);
  std::vector<char> src = Buffer(rng, sl.buffer_numel, src_dtype);
  std::vector<char> dst = Buffer(rng, dl.buffer_numel, dst_dtype);
  std::vector<char> expected = dst;
  const int64_t ds = ItemSize(dst_dtype), ss = ItemSize(src_dtype);
  ReferenceCopy(sizes, expected.data() + dl.offset * ds, dst_dtype, dl.strides,
                src.data() + sl.offset * ss, src_dtype, sl.strides);
  CopyStrided(sizes, StridedRef{dst.data() + dl.offset * ds, dst_dtype, dl.strides},
              StridedRef{src.data() + sl.offset * ss, src_dtype, sl.strides});
  ASSERT_EQ(std::memcmp(dst.data(), expected.data(), dst.size()), 0)
      << DTypeName(src_dtype) << " -> " << DTypeName(dst_dtype) << " sizes " << sizes.size();
}

TEST(CopyKernelTest, RandomLayoutsAllDTypePairs) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 3; ++round) {
    for (int a = 0; a < kNumDTypes; ++a) {
      for (int b = 0; b < kNumDTypes; ++b) {
        const int n = 1 + static_cast<int>(rng() % 4);
        V sizes(n);
        for (int64_t& s : sizes) s = 1 + static_cast<int64_t>(rng() % 12);
        CheckOneCopy(rng, sizes, static_cast<DType>(a), static_cast<DType>(b));
      }
    }
  }
}

TEST(CopyKernelTest, TransposeTilesWithRemainders) {
  // Sizes straddle the 64-element tiles and the 8x8 / 4x4 register blocks.
  std::mt19937 rng(99);
  for (DType dtype : {DType::kUInt8, DType::kInt16, DType::kFloat32, DType::kFloat64,
                      DType::kFloat16, DType::kInt64}) {
    for (V sizes : {V{67, 131}, V{8, 8}, V{9, 70}, V{64, 64}, V{3, 65, 17}, V{130, 5, 66},
                    V{2, 3, 40, 41}}) {
      for (int rep = 0; rep < 4; ++rep) CheckOneCopy(rng, sizes, dtype, dtype);
    }
  }
}

TEST(CopyKernelTest, LargeTransposeAndBroadcastParallelPaths) {
  std::mt19937 rng(5);
  CheckOneCopy(rng, V{1024, 1023}, DType::kFloat32, DType::kFloat32);
  CheckOneCopy(rng, V{700, 900}, DType::kFloat64, DType::kFloat32);
  CheckOneCopy(rng, V{300, 4, 500}, DType::kInt32, DType::kInt32);
}

TEST(FillKernelTest, WritesOnlyTheView) {
  std::mt19937 rng(11);
  for (int a = 0; a < kNumDTypes; ++a) {
    const DType dtype = static_cast<DType>(a);
    const V sizes = {5, 7, 3};
    const Layout l = RandomLayout(rng, sizes, false);
    std::vector<char> buf = Buffer(rng, l.buffer_numel, dtype);
    std::vector<char> expected = buf;
    std::vector<char> one = Buffer(rng, 1, dtype);
    DispatchDType(dtype, [&](auto t) {
      using T = decltype(t);
      const T v = Convert<T>(2.5);
      std::memcpy(one.data(), &v, sizeof(T));
    });
    const V zero_strides(3, 0);
    const int64_t is = ItemSize(dtype);
    ReferenceCopy(sizes, expected.data() + l.offset * is, dtype, l.strides, one.data(), dtype,
                  zero_strides);
    FillStrided(sizes, StridedRef{buf.data() + l.offset * is, dtype, l.strides}, Scalar(2.5));
    ASSERT_EQ(std::memcmp(buf.data(), expected.data(), buf.size()), 0) << DTypeName(dtype);
  }
}

TEST(ArangeKernelTest, IntegersAndFloats) {
  std::vector<int64_t> ints(5);
  ArangeContiguous(reinterpret_cast<char*>(ints.data()), DType::kInt64, 5, Scalar(int64_t{10}),
                   Scalar(int64_t{-3}));
  EXPECT_EQ(ints, (std::vector<int64_t>{10, 7, 4, 1, -2}));
  std::vector<double> d(4);
  ArangeContiguous(reinterpret_cast<char*>(d.data()), DType::kFloat64, 4, Scalar(0.5),
                   Scalar(0.25));
  EXPECT_EQ(d, (std::vector<double>{0.5, 0.75, 1.0, 1.25}));
}

// cat's kernel (Concat) and the Backend default that other devices run (one strided copy per
// piece) lay out every shape of rows and pieces as the reference does: rows many or few (the
// CPU's two ways to split the work), pieces empty, short or long.
TEST(CopyKernelTest, ConcatMatchesTheDefaultAndTheReference) {
  std::mt19937 rng(99);
  absl::StatusOr<Backend*> backend = BackendFor(kCpu);
  ASSERT_TRUE(backend.ok());
  const std::vector<std::pair<int64_t, std::vector<int64_t>>> shapes = {
      {1000, {16, 0, 4000, 12}}, {1, {3 << 20, 5, 1 << 20}}, {3, {600000, 600001}},
      {7, {1, 2, 3}}, {0, {8, 8}}};
  for (const auto& [outer, bytes] : shapes) {
    std::vector<std::vector<char>> inputs;
    ConcatCall call;
    call.outer = outer;
    for (int64_t n : bytes) {
      std::vector<char> in(static_cast<size_t>(outer * n));
      for (char& c : in) c = static_cast<char>(rng());
      inputs.push_back(std::move(in));
      call.bytes.push_back(n);
      call.row_bytes += n;
    }
    for (const auto& in : inputs) call.inputs.push_back(in.data());
    std::vector<char> expected;
    for (int64_t r = 0; r < outer; ++r) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        const char* row = inputs[i].data() + r * bytes[i];
        expected.insert(expected.end(), row, row + bytes[i]);
      }
    }
    std::vector<char> kernel(expected.size() + 1, 7), fallback(expected.size() + 1, 7);
    call.out = kernel.data();
    Concat(call);
    call.out = fallback.data();
    ASSERT_TRUE((*backend)->Backend::Concat(call).ok());
    expected.push_back(7);  // nothing written past the end
    EXPECT_TRUE(kernel == expected) << "outer " << outer;
    EXPECT_TRUE(fallback == expected) << "outer " << outer;
  }
}

}  // namespace
}  // namespace tensord::engine::cpu
