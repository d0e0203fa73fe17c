// CPU pooling kernels (kernels/pool.h).
#ifndef TENSORD_ENGINE_CPU_POOL_KERNELS_H_
#define TENSORD_ENGINE_CPU_POOL_KERNELS_H_

#include "engine/kernels/pool.h"

namespace tensord::engine::cpu {

// Runs `call`: the output rows (n, c, d, h) shared by the pool's threads, each row's windows
// read in place (no padded copy, no window copies); the outputs whose windows lie inside the
// input along W folded tap by tap across the row, in vectorized loops.
void Pool(const PoolCall& call);

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_POOL_KERNELS_H_
