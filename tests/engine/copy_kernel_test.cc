// Differential test of the CPU strided-copy kernel against a naive element-by-element
// reference, over random layouts (permuted, sliced, broadcast, reversed) and every dtype pair.
// The whole destination storage is compared, so writes outside the view (into sentinel
// values around it) are caught too.
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "engine/cpu/convert.h"
#include "engine/cpu/copy_kernel.h"
#include "engine/dtype.h"
#include "gtest/gtest.h"

namespace tensord::engine::cpu {
namespace {

using V = std::vector<int64_t>;

struct Layout {
  V sizes;
  V strides;      // elements; may be 0 (broadcast) or negative (reversed)
  int64_t offset;  // elements from the start of the buffer to element [0, …]
  int64_t buffer_numel;
};

// A random layout over `sizes`: a permuted dense buffer with gaps (steps), sometimes reversed
// dims, sometimes broadcast dims (when allowed).
Layout RandomLayout(std::mt19937& rng, const V& sizes, bool allow_broadcast) {
  const int n = static_cast<int>(sizes.size());
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  V steps(n);
  for (int d = 0; d < n; ++d) steps[d] = 1 + static_cast<int64_t>(rng() % 3 == 0);
  // Dense strides in `perm` order (innermost last), stretched by the steps.
  V strides(n);
  int64_t s = 1 + static_cast<int64_t>(rng() % 2);  // sometimes a gap between elements
  for (int k = n - 1; k >= 0; --k) {
    const int d = perm[k];
    strides[d] = s;
    s *= sizes[d] * steps[d];
  }
  int64_t numel = s + 3;
  int64_t offset = 2;  // sentinels before the view
  for (int d = 0; d < n; ++d) {
    if (allow_broadcast && rng() % 6 == 0) {
      strides[d] = 0;
    } else if (allow_broadcast && rng() % 5 == 0 && sizes[d] > 0) {
      offset += (sizes[d] - 1) * strides[d];  // walk backwards
      strides[d] = -strides[d];
    }
  }
  return Layout{sizes, strides, offset, numel + offset};
}

std::vector<char> Buffer(std::mt19937& rng, int64_t numel, DType dtype) {
  std::vector<char> buf(static_cast<size_t>(numel * ItemSize(dtype)));
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    T* p = reinterpret_cast<T*>(buf.data());
    for (int64_t i = 0; i < numel; ++i) {
      p[i] = Convert<T>(static_cast<double>(static_cast<int>(rng() % 2001) - 1000) / 8.0);
    }
  });
  return buf;
}

void ReferenceCopy(const V& sizes, char* dst, DType dst_dtype, const V& dst_strides,
                   const char* src, DType src_dtype, const V& src_strides) {
  const int n = static_cast<int>(sizes.size());
  int64_t total = 1;
  for (int64_t s : sizes) total *= s;
  V idx(n, 0);
  for (int64_t it = 0; it < total; ++it) {
    int64_t doff = 0, soff = 0;
    for (int d = 0; d < n; ++d) {
      doff += idx[d] * dst_strides[d];
      soff += idx[d] * src_strides[d];
    }
    DispatchDType(dst_dtype, [&](auto dt) {
      using D = decltype(dt);
      DispatchDType(src_dtype, [&](auto st) {
        using S = decltype(st);
        reinterpret_cast<D*>(dst)[doff] = Convert<D>(reinterpret_cast<const S*>(src)[soff]);
      });
    });
    for (int d = n - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

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

}  // namespace
}  // namespace tensord::engine::cpu
