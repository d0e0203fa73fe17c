#include "engine/cpu/random_kernels.h"

#include "engine/core/errors.h"
#include "engine/kernels/random.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {

absl::Status Random(const DistArgs& d, const StridedRef& out, int64_t n, const double* p) {
  if (p != nullptr) {
    for (int64_t i = 0; i < n; ++i) {
      if (!DrawParameterValid(d.dist, p[i])) return DrawParameterError(d.dist);
    }
  }
  DispatchDType(out.dtype, [&](auto t) {
    using T = decltype(t);
    T* y = reinterpret_cast<T*>(out.data);
    ParallelFor(0, n, 16384, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        y[i] = DrawElement<T>(d, static_cast<uint64_t>(i), p != nullptr ? p[i] : 0.0);
      }
    });
  });
  return absl::OkStatus();
}

}  // namespace tensord::engine::cpu
