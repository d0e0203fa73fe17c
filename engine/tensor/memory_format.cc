#include "engine/tensor/memory_format.h"

#include <algorithm>

namespace tensord::engine {
namespace {

// Dims from the innermost out: channels, then the spatial dims from the last, then the batch.
constexpr int kOrder4[] = {1, 3, 2, 0};
constexpr int kOrder5[] = {1, 4, 3, 2, 0};

bool StridesLikeChannelsLast(IntList sizes, IntList strides, const int* order, int rank) {
  if (static_cast<int>(sizes.size()) != rank || strides[1] == 0) return false;
  int64_t low = 0;
  for (int i = 0; i < rank; ++i) {
    const int d = order[i];
    if (sizes[d] == 0 || strides[d] < low) return false;
    if (d == 0 && low == strides[1]) return false;  // N111-like: read as contiguous
    low = strides[d];
    if (sizes[d] > 1) low *= sizes[d];
  }
  return true;
}

}  // namespace

MemoryFormat SuggestMemoryFormat(IntList sizes, IntList strides) {
  if (StridesLikeChannelsLast(sizes, strides, kOrder4, 4)) return MemoryFormat::kChannelsLast;
  if (StridesLikeChannelsLast(sizes, strides, kOrder5, 5)) return MemoryFormat::kChannelsLast3d;
  return MemoryFormat::kContiguous;
}

DimVector MemoryFormatStrides(IntList sizes, MemoryFormat format) {
  if (format == MemoryFormat::kContiguous) return ContiguousStrides(sizes);
  const int* order = format == MemoryFormat::kChannelsLast ? kOrder4 : kOrder5;
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    strides[order[i]] = s;
    if (__builtin_mul_overflow(s, std::max<int64_t>(sizes[order[i]], 1), &s)) s = INT64_MAX;
  }
  return strides;
}

}  // namespace tensord::engine
