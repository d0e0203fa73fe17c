// PyTorch's type promotion (c10/core/ScalarType.h promoteTypes, ATen's result_type).
#ifndef TENSORD_ENGINE_OPS_TYPE_PROMOTION_H_
#define TENSORD_ENGINE_OPS_TYPE_PROMOTION_H_

#include "absl/types/span.h"
#include "engine/core/dtype.h"
#include "engine/core/scalar.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

// The smallest dtype both `a` and `b` convert to without loss of category (symmetric).
DType PromoteTypes(DType a, DType b);

// torch.result_type over the operands: tensors with dims outrank 0-d tensors, which outrank
// wrapped numbers; a lower-priority operand matters only when its category (bool < integer <
// floating) is higher. A wrapped float counts as the default dtype (DefaultFloatDType()).
DType ResultType(absl::Span<const Tensor> operands);

// The dtype a Python number is wrapped as (bool, int64 or float64; promotion treats the float
// as the default dtype).
DType WrappedNumberDType(const Scalar& value);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_TYPE_PROMOTION_H_
