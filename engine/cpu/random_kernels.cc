#include "engine/cpu/random_kernels.h"

#include <cmath>
#include <type_traits>

#include "engine/core/errors.h"
#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {

absl::Status Random(const DistArgs& d, const StridedRef& out, int64_t n, const double* p) {
  if (p != nullptr) {
    for (int64_t i = 0; i < n; ++i) {
      if (!(p[i] >= 0 && p[i] <= 1)) {
        return RuntimeError("bernoulli",
                            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
      }
    }
  }
  DispatchDType(out.dtype, [&](auto t) {
    using T = decltype(t);
    T* y = reinterpret_cast<T*>(out.data);
    ParallelFor(0, n, 16384, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const Philox r(d.seed, d.offset + static_cast<uint64_t>(i));
        double v = 0;
        switch (d.dist) {
          case Dist::kUniform:
            v = d.a + (d.b - d.a) * (std::is_same_v<T, double> ? r.Double() : r.Float());
            break;
          case Dist::kNormal: {
            // Box-Muller on two 53-bit uniforms (u1 in (0, 1]).
            const double u1 = 1.0 - r.Double(0), u2 = r.Double(2);
            v = d.a + d.b * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
            break;
          }
          case Dist::kInt: {
            const uint64_t range = static_cast<uint64_t>(d.hi) - static_cast<uint64_t>(d.lo);
            const int64_t k = static_cast<int64_t>(static_cast<uint64_t>(d.lo) + r.U64() % range);
            y[i] = Convert<T>(k);
            continue;
          }
          case Dist::kBernoulliScalar: v = r.Double() < d.a ? 1 : 0; break;
          case Dist::kBernoulliTensor: v = r.Double() < p[i] ? 1 : 0; break;
        }
        if constexpr (std::is_floating_point_v<Calc<T>>) {
          // A draw rounded up to the bound (float32 near 1) stays inside [a, b).
          Calc<T> c = static_cast<Calc<T>>(v);
          if (d.dist == Dist::kUniform && c >= static_cast<Calc<T>>(d.b) && d.b > d.a) {
            c = std::nextafter(static_cast<Calc<T>>(d.b), static_cast<Calc<T>>(d.a));
          }
          y[i] = Convert<T>(c);
        } else {
          y[i] = Convert<T>(static_cast<int64_t>(v));
        }
      }
    });
  });
  return absl::OkStatus();
}

}  // namespace tensord::engine::cpu
