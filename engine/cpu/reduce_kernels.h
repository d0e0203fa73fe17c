// CPU reduction, scan and softmax kernels.
#ifndef TENSORD_ENGINE_CPU_REDUCE_KERNELS_H_
#define TENSORD_ENGINE_CPU_REDUCE_KERNELS_H_

#include <cstdint>

#include "absl/status/status.h"

#include "engine/core/dtype.h"
#include "engine/tensor/strided_ref.h"
#include "engine/kernels/reduce_ops.h"
#include "engine/tensor/tensor_meta.h"

namespace tensord::engine::cpu {

// Reduces `in` into the contiguous output `out` (out.dtype: the result's), and for max/min with
// indices also writes int64 positions into `indices` (may be null).
void Reduce(ReduceOp op, const ReduceGeometry& g, const StridedRef& in, char* out, DType out_dtype,
            int64_t* indices, const ReduceArgs& args);

// The sum of x[0, n) as the float32 sum and mean reductions add a contiguous run (32 float
// lanes of 8 elements per 256-element block, accumulated in float64 lanes): with AVX2 where the
// CPU has it and `allow_avx2`, else SSE; both give the same bits.
double SumF32(const float* x, int64_t n, bool allow_avx2 = true);

// The float32 sum and mean reductions over rows (neighbouring outputs along a row) add `rows`
// rows `stride` floats apart into acc[0, n): kColumnRows rows at a time added in float in row
// order, then into the float64 accumulator; the last rows (fewer than a group) one at a time.
// AVX2 or SSE as SumF32, the same bits.
inline constexpr int kColumnRows = 8;
void AddRowsF32(const float* x, int64_t stride, int64_t rows, int64_t n, double* acc,
                bool allow_avx2 = true);

// Cumulative sum/product/logsumexp along `dim`: out (same shape, its own strides) = scan of in.
void Scan(ScanOp op, IntList shape, int64_t dim, const StridedRef& in, const StridedRef& out);

// cummax / cummin along `dim`: values and int64 indices, both contiguous of in's shape.
void CumExtreme(bool max, IntList shape, int64_t dim, const StridedRef& in,
                const StridedRef& values, const StridedRef& indices);

// softmax / log_softmax along `dim` (floating dtypes; in and out of the same dtype).
void Softmax(bool log, IntList shape, int64_t dim, const StridedRef& in, const StridedRef& out);
// layer_norm over contiguous rows (kernels/reduce_ops.h).
void LayerNorm(const LayerNormCall& call);
// out = x * scale + shift per channel (kernels/reduce_ops.h).
void ChannelAffine(const ChannelAffineCall& call);
// cross_entropy / nll_loss (kernels/reduce_ops.h): IndexError for a target out of range.
absl::Status CrossEntropy(const CrossEntropyCall& call);

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_REDUCE_KERNELS_H_
