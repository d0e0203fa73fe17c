// CPU kernels of the elementwise ops. The planner (engine/ops/elementwise_ops.cc) has already
// checked dtypes and shapes: inputs arrive in the compute dtype, the output in the result dtype.
#ifndef TENSORD_ENGINE_CPU_ELEMENTWISE_KERNELS_H_
#define TENSORD_ENGINE_CPU_ELEMENTWISE_KERNELS_H_

#include <cstdint>

#include "engine/kernels/binary_ops.h"
#include "engine/kernels/unary_ops.h"
#include "engine/kernels/value_check.h"
#include "engine/core/scalar.h"
#include "engine/tensor/strided_ref.h"
#include "engine/tensor/tensor_meta.h"

namespace tensord::engine::cpu {

void Unary(UnaryOp op, IntList shape, const StridedRef& out, const StridedRef& in,
           const UnaryArgs& args);

// `alpha` scales b for add/sub (a + alpha * b).
void Binary(BinaryOp op, IntList shape, const StridedRef& out, const StridedRef& a,
            const StridedRef& b, const Scalar& alpha);

// Whether a value of `t` fails `check` (a zero divisor, a probability outside [0, 1]).
bool AnyFails(ValueCheck check, IntList shape, const StridedRef& t);
// Whether an integral operand holds a negative value (int ** negative int).
bool AnyNegative(IntList shape, const StridedRef& t);

// out = cond ? a : b (cond bool).
void Where(IntList shape, const StridedRef& out, const StridedRef& cond, const StridedRef& a,
           const StridedRef& b);
// out = start + weight * (end - start), torch's two-sided formula.
void Lerp(IntList shape, const StridedRef& out, const StridedRef& start, const StridedRef& end,
          const StridedRef& weight);
// out = self + value * t1 * t2 (addcmul) or self + value * t1 / t2 (addcdiv).
void Addc(bool divide, IntList shape, const StridedRef& out, const StridedRef& self,
          const StridedRef& t1, const StridedRef& t2, const Scalar& value);

// out = clamp(x, lo, hi) with tensor bounds (either may be absent: pass x in its place).
void ClampTensor(IntList shape, const StridedRef& out, const StridedRef& x, const StridedRef& lo,
                 const StridedRef& hi, bool has_lo, bool has_hi);

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_ELEMENTWISE_KERNELS_H_
