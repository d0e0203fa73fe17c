// How a planner describes a matrix product to a backend.
#ifndef TENSORD_ENGINE_KERNELS_MATMUL_H_
#define TENSORD_ENGINE_KERNELS_MATMUL_H_

#include <cstdint>

#include "engine/tensor/strided_ref.h"

namespace tensord::engine {

// For every batch index b: out[b] = alpha * a[b] @ b[b] + beta * out[b], with a[b] [n x k],
// b[b] [k x m] and out contiguous [batch..., n, m]. `a` and `b` are strided views over
// [batch..., n, k] and [batch..., k, m] (batch dims already broadcast: stride 0 where
// expanded), passed as they are (a transposed operand is not copied). beta == 0 ignores what
// out holds. Operands and out share one dtype.
struct MatmulCall {
  IntList batch;
  int64_t n = 0, k = 0, m = 0;
  StridedRef a, b;
  char* out = nullptr;
  double alpha = 1, beta = 0;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_MATMUL_H_
