// The reductions every backend runs, and how a planner describes one: which elements each
// output reduces (kernels/ is device-neutral; the loops are in cpu/ and cuda/).
#ifndef TENSORD_ENGINE_KERNELS_REDUCE_OPS_H_
#define TENSORD_ENGINE_KERNELS_REDUCE_OPS_H_

#include "engine/tensor/tensor_meta.h"

namespace tensord::engine {

enum class ReduceOp {
  kSum, kProd, kMean, kAmax, kAmin, kArgmax, kArgmin, kAll, kAny, kVar, kStd, kNorm, kLogsumexp,
  kCountNonzero,
};

// The index spaces of a reduction: outputs over the kept dims, each reducing the elements over
// the reduced dims (logical order, so arg-reductions report row-major positions). Strides are
// the input's, in elements.
struct ReduceGeometry {
  DimVector kept_sizes, kept_strides;
  DimVector red_sizes, red_strides;
};

struct ReduceArgs {
  double correction = 1;  // var/std
  double p = 2;           // norm
};

// layer_norm over `rows` contiguous rows of `n` elements of `dtype` (a floating type):
// out = (x - mean) / sqrt(var + eps) * weight + bias, var biased, accumulated in float32 for
// the 16-bit types; weight and bias (n contiguous elements each) may be null.
struct LayerNormCall {
  const char* x = nullptr;
  char* out = nullptr;
  const char* weight = nullptr;
  const char* bias = nullptr;
  DType dtype = DType::kFloat32;
  int64_t rows = 0;
  int64_t n = 0;
  double eps = 1e-5;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_REDUCE_OPS_H_
