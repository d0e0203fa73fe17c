// CPU data-movement kernels: strided copy with dtype conversion, fill, arange.
#ifndef TENSORD_ENGINE_CPU_COPY_KERNEL_H_
#define TENSORD_ENGINE_CPU_COPY_KERNEL_H_

#include <cstdint>

#include "engine/core/dtype.h"
#include "engine/core/scalar.h"
#include "engine/runtime/backend.h"
#include "engine/tensor/strided_ref.h"
#include "engine/tensor/tensor_meta.h"

namespace tensord::engine::cpu {

// dst[i] = convert(src[i]) for every index i of `sizes`. NB: dst must not overlap itself and must
// not partially overlap src (callers check; see copy_ops.cc).
void CopyStrided(IntList sizes, const StridedRef& dst, const StridedRef& src);

// dst[i] = value (converted to dst.dtype) for every index i of `sizes`.
void FillStrided(IntList sizes, const StridedRef& dst, const Scalar& value);

// out[i] = start + i * step for i in [0, n), computed in double for floating dtypes and int64
// for integral ones (as PyTorch), on contiguous `out`.
void ArangeContiguous(char* out, DType dtype, int64_t n, const Scalar& start, const Scalar& step);

// cat of contiguous pieces (runtime/backend.h's ConcatCall), every row in one parallel pass.
void Concat(const ConcatCall& call);

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_COPY_KERNEL_H_
