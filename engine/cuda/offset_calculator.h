// OffsetCalculator: the byte offsets of N operands at a linear element index, over the merged
// dims that cpu::StridedLoop computes on the host (the same dim order and merging as every CPU
// loop). Plain data: it is passed by value as a kernel argument.
#ifndef TENSORD_ENGINE_CUDA_OFFSET_CALCULATOR_H_
#define TENSORD_ENGINE_CUDA_OFFSET_CALCULATOR_H_

#include <array>
#include <cstdint>

#include "engine/core/host_device.h"
#include "engine/tensor/tensor_meta.h"

namespace tensord::engine::cuda {

template <int N>
struct OffsetCalculator {
  int ndim = 0;                               // dims[0] is the innermost
  int64_t sizes[kMaxRank];
  int64_t strides[kMaxRank][N];               // bytes, may be 0 or negative

  // Byte offsets of element `linear` (row-major over the merged dims, innermost fastest).
  TENSORD_HD void Offsets(int64_t linear, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    for (int d = 0; d < ndim; ++d) {
      const int64_t size = sizes[d];
      const int64_t i = linear % size;
      linear /= size;
      for (int k = 0; k < N; ++k) out[k] += i * strides[d][k];
    }
  }

  // The same with 32-bit index arithmetic (far cheaper division on a GPU), for iteration spaces
  // of fewer than 2^31 elements (then every size fits too).
  TENSORD_HD void Offsets32(uint32_t linear, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    for (int d = 0; d < ndim; ++d) {
      const uint32_t size = static_cast<uint32_t>(sizes[d]);
      const uint32_t i = linear % size;
      linear /= size;
      for (int k = 0; k < N; ++k) out[k] += static_cast<int64_t>(i) * strides[d][k];
    }
  }

  // Whether every operand is one gap-free run of `itemsizes[k]`-byte elements.
  bool IsContiguous(const std::array<int64_t, N>& itemsizes) const {
    if (ndim > 1) return false;
    if (ndim == 0) return true;
    for (int k = 0; k < N; ++k) {
      if (strides[0][k] != itemsizes[k]) return false;
    }
    return true;
  }
};

// Builds the calculator from a cpu::StridedLoop<N> (host only).
template <int N, typename Loop>
OffsetCalculator<N> MakeOffsetCalculator(const Loop& loop) {
  OffsetCalculator<N> calc;
  calc.ndim = loop.ndim();
  for (int d = 0; d < calc.ndim; ++d) {
    calc.sizes[d] = loop.dim(d).size;
    for (int k = 0; k < N; ++k) calc.strides[d][k] = loop.dim(d).stride[k];
  }
  return calc;
}

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_OFFSET_CALCULATOR_H_
