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

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_REDUCE_OPS_H_
