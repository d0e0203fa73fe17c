// torch's memory formats of 4-d and 5-d tensors: which one a tensor's strides suggest, and the
// strides of a dense tensor laid out in one.
#ifndef TENSORD_ENGINE_TENSOR_MEMORY_FORMAT_H_
#define TENSORD_ENGINE_TENSOR_MEMORY_FORMAT_H_

#include "engine/tensor/tensor_meta.h"

namespace tensord::engine {

enum class MemoryFormat {
  kContiguous,      // row-major (NCHW)
  kChannelsLast,    // 4-d, channels innermost (NHWC)
  kChannelsLast3d,  // 5-d, channels innermost (NDHWC)
};

// torch's Tensor.suggest_memory_format(): channels_last (channels_last_3d) when the strides of a
// 4-d (5-d) tensor read as channels-last by c10's is_channels_last_strides_2d_s4 / _3d_s5
// (ambiguous N111-like layouts and tensors with a size-0 dim read as contiguous).
MemoryFormat SuggestMemoryFormat(IntList sizes, IntList strides);

// The strides of a dense tensor of `sizes` in `format` (which must fit the rank).
DimVector MemoryFormatStrides(IntList sizes, MemoryFormat format);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_TENSOR_MEMORY_FORMAT_H_
