// Unary elementwise kernels on the CPU: the shared functions of engine/kernels/unary_ops.h.
#include "engine/cpu/elementwise_kernels.h"
#include "engine/cpu/map.h"
#include "engine/core/dtype.h"
#include "engine/kernels/unary_ops.h"

namespace tensord::engine::cpu {

void Unary(UnaryOp op, IntList shape, const StridedRef& out, const StridedRef& in,
           const UnaryArgs& args) {
  DispatchDType(in.dtype, [&](auto t) {
    using T = decltype(t);
    VisitUnary<T>(op, args, [&](auto f, auto out_type) {
      Map1<decltype(out_type), T>(shape, out, in, f);
    });
  });
}

}  // namespace tensord::engine::cpu
