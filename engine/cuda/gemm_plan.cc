#include "engine/cuda/gemm_plan.h"

#include <algorithm>

namespace tensord::engine::cuda {

GemmOperand OperandLayout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  // Row-major: column-major [cols x rows] with ld = row_stride >= cols (any ld for one row).
  if (col_stride == 1 || cols == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(1, cols) : row_stride;
    if (ld >= std::max<int64_t>(1, cols)) return {true, false, ld};
  }
  // Column-major: column-major [rows x cols] = the transpose, ld = col_stride >= rows.
  if (row_stride == 1 || rows == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(1, rows) : col_stride;
    if (ld >= std::max<int64_t>(1, rows)) return {true, true, ld};
  }
  return {};
}

namespace {

// The batch dims of a product merged for cuBLAS: each call computes `count` products, operand
// pointers advancing by stride_a, stride_b and stride_c elements (stride 0: a broadcast operand);
// the calls themselves loop over `outer` (outermost first), with those dims' strides.
struct GemmBatch {
  int64_t count = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  DimVector outer_sizes, outer_a, outer_b, outer_c;
};

// `batch`: the product's batch sizes; `a_strides` / `b_strides`: the operands' batch strides
// (one per batch dim); each output matrix holds `matrix_elements` (out is contiguous).
GemmBatch MergeBatch(IntList batch, IntList a_strides, IntList b_strides,
                     int64_t matrix_elements) {
  // Output batch strides (contiguous), then merge dims innermost first: a dim joins the one
  // inside it when every operand steps over it as one run (stride = inner stride * inner size).
  const int nb = static_cast<int>(batch.size());
  DimVector c_strides(nb);
  int64_t step = matrix_elements;
  for (int d = nb - 1; d >= 0; --d) {
    c_strides[d] = step;
    step *= batch[d];
  }
  struct Dim {
    int64_t size, a, b, c;
  };
  std::vector<Dim> dims;  // innermost first, size-1 dims dropped
  for (int d = nb - 1; d >= 0; --d) {
    if (batch[d] == 1) continue;
    const Dim dim{batch[d], a_strides[d], b_strides[d], c_strides[d]};
    if (!dims.empty()) {
      Dim& inner = dims.back();
      if (dim.a == inner.a * inner.size && dim.b == inner.b * inner.size &&
          dim.c == inner.c * inner.size) {
        inner.size *= dim.size;
        continue;
      }
    }
    dims.push_back(dim);
  }
  GemmBatch out;
  if (dims.empty()) return out;
  // A reversed innermost dim is walked by the loop, not by cuBLAS's batch stride.
  if (dims[0].a < 0 || dims[0].b < 0) dims.insert(dims.begin(), Dim{1, 0, 0, 0});
  out.count = dims[0].size;
  out.stride_a = dims[0].a, out.stride_b = dims[0].b, out.stride_c = dims[0].c;
  for (size_t i = dims.size(); i-- > 1;) {
    out.outer_sizes.push_back(dims[i].size);
    out.outer_a.push_back(dims[i].a);
    out.outer_b.push_back(dims[i].b);
    out.outer_c.push_back(dims[i].c);
  }
  return out;
}

}  // namespace

std::vector<GemmCall> PlanGemmCalls(IntList batch, int64_t n, int64_t k, int64_t m,
                                    IntList a_strides, IntList b_strides) {
  const size_t nb = batch.size();
  const GemmOperand A = OperandLayout(k, m, b_strides[nb], b_strides[nb + 1]);
  const GemmOperand B = OperandLayout(n, k, a_strides[nb], a_strides[nb + 1]);
  if (!A.usable || !B.usable) return {};
  const GemmBatch merged =
      MergeBatch(batch, a_strides.subspan(0, nb), b_strides.subspan(0, nb), n * m);
  GemmCall call;
  call.transpose_a = A.transpose, call.transpose_b = B.transpose;
  call.m = m, call.n = n, call.k = k;
  call.lda = A.ld, call.stride_a = merged.stride_b;
  call.ldb = B.ld, call.stride_b = merged.stride_a;
  call.ldc = std::max<int64_t>(1, m), call.stride_c = merged.stride_c;
  call.count = merged.count;
  int64_t outer = 1;
  for (int64_t s : merged.outer_sizes) outer *= s;
  std::vector<GemmCall> calls;
  calls.reserve(static_cast<size_t>(outer));
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rest = o;
    call.a_offset = call.b_offset = call.c_offset = 0;
    for (size_t d = merged.outer_sizes.size(); d-- > 0;) {
      const int64_t i = rest % merged.outer_sizes[d];
      rest /= merged.outer_sizes[d];
      call.a_offset += i * merged.outer_b[d];
      call.b_offset += i * merged.outer_a[d];
      call.c_offset += i * merged.outer_c[d];
    }
    calls.push_back(call);
  }
  return calls;
}

}  // namespace tensord::engine::cuda
