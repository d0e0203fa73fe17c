// StridedRef: how a kernel sees one operand.
#ifndef TENSORD_ENGINE_TENSOR_STRIDED_REF_H_
#define TENSORD_ENGINE_TENSOR_STRIDED_REF_H_

#include "engine/core/dtype.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

// The address of element [0, 0, …] and strides in elements (0 = broadcast, negative = walking
// backwards, as flip() builds internally). Never escapes a kernel call.
struct StridedRef {
  char* data;
  DType dtype;
  IntList strides;

  static StridedRef Of(const Tensor& t) { return StridedRef{t.data(), t.dtype(), t.strides()}; }
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_TENSOR_STRIDED_REF_H_
