// Launchers of the CUDA elementwise kernels. The per-element math is engine/kernels/'s, shared
// with the CPU loops. Operands: 0 is the output, then the inputs, all over the merged dims of
// `calc`; inputs are in the compute dtype. Each enqueues on `stream` and returns at once.
#ifndef TENSORD_ENGINE_CUDA_ELEMENTWISE_KERNELS_H_
#define TENSORD_ENGINE_CUDA_ELEMENTWISE_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/cuda/offset_calculator.h"
#include "engine/core/dtype.h"
#include "engine/kernels/binary_ops.h"
#include "engine/kernels/kernel_error.h"
#include "engine/kernels/random.h"
#include "engine/kernels/unary_ops.h"
#include "engine/kernels/value_check.h"
#include "engine/core/scalar.h"

namespace tensord::engine::cuda {

cudaError_t LaunchBinary(BinaryOp op, DType dtype, const Scalar& alpha,
                         const OffsetCalculator<3>& calc, int64_t numel, char* out,
                         const char* a, const char* b, cudaStream_t stream);

// Reports KernelError::kBadValue into `slot` when an element of `values` (over `calc`) fails
// `check`.
cudaError_t LaunchCheckValues(ValueCheck check, DType dtype, const OffsetCalculator<1>& calc,
                              int64_t numel, const char* values, KernelError* slot,
                              cudaStream_t stream);

cudaError_t LaunchUnary(UnaryOp op, DType dtype, const UnaryArgs& args,
                        const OffsetCalculator<2>& calc, int64_t numel, char* out, const char* in,
                        cudaStream_t stream);

enum class TernaryOp { kWhere, kLerp, kAddcmul, kAddcdiv, kClamp };

// `value`: addcmul/addcdiv's; `has_lo`/`has_hi`: clamp's bounds. For kWhere operand 1 is the
// one-byte condition and `dtype` is the values'.
cudaError_t LaunchTernary(TernaryOp op, DType dtype, const Scalar& value, bool has_lo,
                          bool has_hi, const OffsetCalculator<4>& calc, int64_t numel, char* out,
                          const char* a, const char* b, const char* c, cudaStream_t stream);

// Fills the contiguous `out` (`n` elements of `dtype`) with draw `d`. `probs` (device memory, or
// null): kBernoulliTensor's probabilities; one outside [0, 1] reports kBadProbability into
// `slot` (then what the kernel wrote is not to be used).
cudaError_t LaunchRandom(const DistArgs& d, DType dtype, char* out, int64_t n,
                         const double* probs, KernelError* slot, cudaStream_t stream);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_ELEMENTWISE_KERNELS_H_
