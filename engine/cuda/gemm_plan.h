// How a matrix product (kernels/matmul.h: row-major operands with any strides) becomes cuBLAS
// calls, which are column-major. The product is computed transposed:
//   out^T (m x n, column-major, ldc = m)  =  b^T (m x k)  @  a^T (k x n)
// so cuBLAS's A is tensord's b and its B is tensord's a. An operand whose row or column stride is
// 1 is passed as it lies in memory, with cuBLAS's transpose flag where it is column-major (a
// transposed view is never copied); only one with neither stride 1 (or an unusable leading
// dimension, e.g. an expanded matrix) needs a contiguous copy first. Batch dims that can be
// walked with one stride per operand become one strided-batched call; the rest are a loop.
//
// Plain C++ (no CUDA headers), so that the layout choice is tested on machines without a GPU
// (tests/engine/gemm_plan_test.cc runs cuBLAS's semantics on the host).
#ifndef TENSORD_ENGINE_CUDA_GEMM_PLAN_H_
#define TENSORD_ENGINE_CUDA_GEMM_PLAN_H_

#include <cstdint>
#include <vector>

#include "engine/tensor/tensor_meta.h"

namespace tensord::engine::cuda {

// One operand as cuBLAS takes it: a column-major matrix op(X) with leading dimension `ld`.
struct GemmOperand {
  bool usable = false;   // false: neither layout fits its strides; copy it contiguous first
  bool transpose = false;  // cuBLAS's CUBLAS_OP_T
  int64_t ld = 1;
};

// The cuBLAS form of a row-major [rows x cols] matrix with strides (row_stride, col_stride) in
// elements, used as cuBLAS's operand of the transposed product: not transposed when it is
// row-major (col_stride 1: in column-major terms it is the [cols x rows] transpose already),
// transposed when it is column-major (row_stride 1).
GemmOperand OperandLayout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride);

// One cuBLAS strided-batched gemm: C = op(A) @ op(B), column-major, `count` times. cuBLAS's A is
// tensord's b and its B is tensord's a; offsets are in elements from each operand's data.
struct GemmCall {
  bool transpose_a = false, transpose_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t a_offset = 0, lda = 1, stride_a = 0;
  int64_t b_offset = 0, ldb = 1, stride_b = 0;
  int64_t c_offset = 0, ldc = 1, stride_c = 0;
  int64_t count = 1;
};

// The cuBLAS calls of out (contiguous [batch..., n, m]) = a [batch..., n, k] @ b [batch..., k,
// m], with a's and b's strides (batch dims first). Empty when an operand is not usable
// (OperandLayout): copy it contiguous and plan again.
std::vector<GemmCall> PlanGemmCalls(IntList batch, int64_t n, int64_t k, int64_t m,
                                    IntList a_strides, IntList b_strides);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_GEMM_PLAN_H_
