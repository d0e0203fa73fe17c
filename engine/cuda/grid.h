// How many blocks a CUDA grid-stride loop launches: enough to fill the GPU, at most 65536 (the
// loops stride over the rest). Plain C++: no CUDA headers.
#ifndef TENSORD_ENGINE_CUDA_GRID_H_
#define TENSORD_ENGINE_CUDA_GRID_H_

#include <cstdint>

namespace tensord::engine::cuda {

// Blocks for `work` items handled `per_block` at a time by each block (threads x unroll).
inline int GridFor(int64_t work, int64_t per_block) {
  const int64_t blocks = (work + per_block - 1) / per_block;
  return static_cast<int>(blocks < 1 ? 1 : blocks < 65536 ? blocks : 65536);
}

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_GRID_H_
