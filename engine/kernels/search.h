// searchsorted / bucketize: where each value would go in a sorted sequence, by binary search
// with ATen's comparisons (a NaN value goes after every boundary, as in torch). One function,
// run by the CPU loop (engine/cpu/sort_kernels.cc) and the CUDA kernel (engine/cuda/
// sort_kernels.cu) alike.
#ifndef TENSORD_ENGINE_KERNELS_SEARCH_H_
#define TENSORD_ENGINE_KERNELS_SEARCH_H_

#include <cstdint>

#include "engine/core/dtype.h"
#include "engine/core/host_device.h"
#include "engine/kernels/convert.h"

namespace tensord::engine {

// A planned search: `values` (count elements, contiguous) looked up in `sequence` (rows of
// `length` contiguous elements; one row for all values, or a row per `per_row` values), both of
// `dtype`; out (count contiguous elements of `out_dtype`, int64 or int32) gets the positions.
struct SearchSortedCall {
  DType dtype;
  const char* sequence;
  int64_t length;
  bool one_row;
  const char* values;
  int64_t count;
  int64_t per_row;
  bool right;  // upper bound: after equal boundaries
  char* out;
  DType out_dtype;
};

// The position of `v` among bd[0 .. n): the first i with !(bd[i] < v) (lower bound) or with
// bd[i] > v (upper bound), written as ATen writes the tests so NaNs land where torch's do.
template <typename C, typename T>
TENSORD_HD inline int64_t SearchPosition(const T* bd, int64_t n, C v, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    const C b = static_cast<C>(LoadElement(bd + mid));
    const bool before = right ? !(b > v) : !(b >= v);
    if (before) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_SEARCH_H_
