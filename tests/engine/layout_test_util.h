// Random strided layouts and a reference element-by-element copy, shared by the CPU copy-kernel
// test, the offset-calculator test and the GPU tests.
#ifndef TENSORD_TESTS_ENGINE_LAYOUT_TEST_UTIL_H_
#define TENSORD_TESTS_ENGINE_LAYOUT_TEST_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/kernels/convert.h"

namespace tensord::engine::testing_util {

using V = std::vector<int64_t>;

struct Layout {
  V sizes;
  V strides;      // elements; may be 0 (broadcast) or negative (reversed)
  int64_t offset;  // elements from the start of the buffer to element [0, …]
  int64_t buffer_numel;
};

// A random layout over `sizes`: a permuted dense buffer with gaps (steps), sometimes reversed
// dims, sometimes broadcast dims (when allowed).
inline Layout RandomLayout(std::mt19937& rng, const V& sizes, bool allow_broadcast) {
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

inline std::vector<char> Buffer(std::mt19937& rng, int64_t numel, DType dtype) {
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

inline void ReferenceCopy(const V& sizes, char* dst, DType dst_dtype, const V& dst_strides,
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

}  // namespace tensord::engine::testing_util

#endif  // TENSORD_TESTS_ENGINE_LAYOUT_TEST_UTIL_H_
