// Unary elementwise kernels on the CPU: the shared functions of engine/kernels/unary_ops.h, and
// for float32 the exponential family (exp, log, sigmoid, silu, tanh, erf, gelu) with the
// vectorizable math of cpu/vec_math.h, as torch's CPU kernels do with their vector math.
#include <algorithm>
#include <cmath>

#include "engine/cpu/elementwise_kernels.h"
#include "engine/cpu/map.h"
#include "engine/cpu/vec_math.h"
#include "engine/core/dtype.h"
#include "engine/kernels/unary_ops.h"

namespace tensord::engine::cpu {
namespace {

bool HasVectorF32(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp:
    case UnaryOp::kLog:
    case UnaryOp::kSigmoid:
    case UnaryOp::kSilu:
    case UnaryOp::kTanh:
    case UnaryOp::kErf:
    case UnaryOp::kGelu:
    case UnaryOp::kGeluTanh:
      return true;
    default:
      return false;
  }
}

template <typename F>
[[gnu::always_inline]] inline void Apply(float* __restrict o, const float* __restrict x,
                                         int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
}

// o[i] = op(x[i]) over a contiguous run (op: HasVectorF32). The lambdas are inlined into each
// clone, so that each vectorizes them at its width.
#define TENSORD_INLINE __attribute__((always_inline))
TENSORD_AVX512_CLONE
void VectorRunF32(UnaryOp op, float* o, const float* x, int64_t n) {
  switch (op) {
    case UnaryOp::kExp: return Apply(o, x, n, [](float v) TENSORD_INLINE { return VecExp(v); });
    case UnaryOp::kLog: return Apply(o, x, n, [](float v) TENSORD_INLINE { return VecLog(v); });
    case UnaryOp::kSigmoid:
      return Apply(o, x, n, [](float v) TENSORD_INLINE { return 1.0f / (1.0f + VecExp(-v)); });
    case UnaryOp::kSilu:
      return Apply(o, x, n, [](float v) TENSORD_INLINE { return v / (1.0f + VecExp(-v)); });
    case UnaryOp::kTanh: return Apply(o, x, n, [](float v) TENSORD_INLINE { return VecTanh(v); });
    case UnaryOp::kErf: return Apply(o, x, n, [](float v) TENSORD_INLINE { return VecErf(v); });
    case UnaryOp::kGelu:
      return Apply(o, x, n, [](float v) TENSORD_INLINE {
        return 0.5f * v * (1.0f + VecErfAbsolute(v * static_cast<float>(M_SQRT1_2)));
      });
    case UnaryOp::kGeluTanh:
      return Apply(o, x, n, [](float v) TENSORD_INLINE {
        constexpr float k = static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5);
        return 0.5f * v * (1.0f + VecTanh(k * (v + 0.044715f * v * v * v)));
      });
    default: return;
  }
}

void VectorMapF32(UnaryOp op, IntList shape, const StridedRef& out, const StridedRef& in) {
  StridedLoop<2> loop(shape, {out.strides, in.strides}, {sizeof(float), sizeof(float)});
  loop.Run({out.data, in.data}, 2 * sizeof(float),
           [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
             if (s[0] == sizeof(float) && s[1] == sizeof(float)) {
               VectorRunF32(op, reinterpret_cast<float*>(p[0]),
                            reinterpret_cast<const float*>(p[1]), n);
               return;
             }
             // Strided runs: gathered into a block, mapped, scattered.
             constexpr int64_t kBlock = 256;
             float xs[kBlock], ys[kBlock];
             for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
               const int64_t m = std::min(kBlock, n - i0);
               for (int64_t i = 0; i < m; ++i) {
                 xs[i] = *reinterpret_cast<const float*>(p[1] + (i0 + i) * s[1]);
               }
               VectorRunF32(op, ys, xs, m);
               for (int64_t i = 0; i < m; ++i) {
                 *reinterpret_cast<float*>(p[0] + (i0 + i) * s[0]) = ys[i];
               }
             }
           });
}

}  // namespace

void Unary(UnaryOp op, IntList shape, const StridedRef& out, const StridedRef& in,
           const UnaryArgs& args) {
  if (in.dtype == DType::kFloat32 && out.dtype == DType::kFloat32 && HasVectorF32(op)) {
    VectorMapF32(op, shape, out, in);
    return;
  }
  DispatchDType(in.dtype, [&](auto t) {
    using T = decltype(t);
    VisitUnary<T>(op, args, [&](auto f, auto out_type) {
      Map1<decltype(out_type), T>(shape, out, in, f);
    });
  });
}

}  // namespace tensord::engine::cpu
