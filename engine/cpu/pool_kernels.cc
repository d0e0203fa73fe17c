#include "engine/cpu/pool_kernels.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"
#include "engine/kernels/spatial.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {
namespace {

// How a row's outputs are folded: the max with or without where it is, or the sum.
enum class Fold { kMax, kMaxIndex, kSum };

// One output's window by the shared per-output functions (the outputs whose window reaches
// past the row's ends, and every adaptive bin).
template <typename T, Fold kFold>
void PoolOne(const PoolCall& c, const T* base, const PoolSpan& zs, const PoolSpan& ys,
             int64_t z, int64_t y, int64_t x, T* out, int64_t* index) {
  const PoolSpan xs = WindowSpan(c, 2, x);
  if constexpr (kFold == Fold::kSum) {
    const int64_t divisor = c.adaptive ? 1 : AvgPoolDivisor(c, z, y, x);
    *out = Convert<T>(AvgPoolWindow<T>(c, base, zs, ys, xs, divisor));
  } else {
    Calc<T> best;
    int64_t at;
    MaxPoolWindow<T>(c, base, zs, ys, xs, &best, &at);
    *out = Convert<T>(best);
    if constexpr (kFold == Fold::kMaxIndex) *index = at;
  }
}

// The outputs [x0, x1) of a row whose windows lie inside the input along W, folded tap by tap
// across the outputs (the same order per output as PoolOne's, so the same max, index and
// rounded sum), in loops without branches that the compiler vectorizes; kStep is the input
// step between neighbouring outputs when W is contiguous (1 or 2), or 0 for any. Indices are
// kept as I, an integer as wide as the compared values (so that a compare's mask selects
// them), when the plane or volume fits it.
template <typename T, Fold kFold, int kStep, typename I>
void PoolInterior(const PoolCall& c, const T* base, const PoolSpan& zs, const PoolSpan& ys,
                  int64_t x0, int64_t x1, Calc<T>* acc, I* at) {
  using C = Calc<T>;
  const int64_t sd = c.input_strides[2], sh = c.input_strides[3], sw = c.input_strides[4];
  const int64_t ih = c.in[1], iw = c.in[2], s = c.stride[2];
  const int64_t n = x1 - x0;
  const C init = kFold == Fold::kSum ? C(0) : -std::numeric_limits<C>::infinity();
  for (int64_t x = 0; x < n; ++x) acc[x] = init;
  if constexpr (kFold == Fold::kMaxIndex) {
    const int64_t first = (zs.first * ih + ys.first) * iw + x0 * s - c.padding[2];
    for (int64_t x = 0; x < n; ++x) at[x] = static_cast<I>(first + x * s);
  }
  for (int64_t k = zs.first; k < zs.end; k += zs.step) {
    for (int64_t i = ys.first; i < ys.end; i += ys.step) {
      for (int64_t j = 0; j < c.kernel[2]; ++j) {
        const int64_t w0 = x0 * s + j * c.dilation[2] - c.padding[2];  // output x0's tap
        const T* p = base + k * sd + i * sh + w0 * sw;
        const I a0 = static_cast<I>((k * ih + i) * iw + w0), step = static_cast<I>(s);
        for (int64_t x = 0; x < n; ++x) {
          const C v = static_cast<C>(kStep > 0 ? p[x * kStep] : p[x * s * sw]);
          if constexpr (kFold == Fold::kSum) {
            acc[x] = WrapAdd<C>(acc[x], v);
          } else {
            const bool take = v > acc[x] || v != v;
            acc[x] = take ? v : acc[x];
            if constexpr (kFold == Fold::kMaxIndex) {
              at[x] = take ? static_cast<I>(a0 + static_cast<I>(x) * step) : at[x];
            }
          }
        }
      }
    }
  }
}

template <typename T, Fold kFold, typename I>
void PoolRows(const PoolCall& c, int64_t r0, int64_t r1) {
  using C = Calc<T>;
  const int64_t od = c.out_size[0], oh = c.out_size[1], ow = c.out_size[2];
  const int64_t s = c.stride[2], p = c.padding[2];
  const int64_t reach = (c.kernel[2] - 1) * c.dilation[2];
  // The outputs whose windows lie inside [0, W): x * s >= p and x * s - p + reach < W.
  // Adaptive bins differ in length: every output takes PoolOne.
  const int64_t x0 = c.adaptive ? ow : std::min(ow, (p + s - 1) / s);
  const int64_t last = c.in[2] - 1 - reach + p;  // the last window start inside, plus p
  const int64_t x1 = c.adaptive ? ow : std::max(x0, std::min(ow, last >= 0 ? last / s + 1 : 0));
  const int64_t sw = c.input_strides[4];
  std::vector<C> acc(static_cast<size_t>(x1 - x0));
  std::vector<I> at(kFold == Fold::kMaxIndex ? static_cast<size_t>(x1 - x0) : 0);
  T* out = reinterpret_cast<T*>(c.out);
  for (int64_t r = r0; r < r1; ++r) {
    // Row r is output (plane, z, y, ·); plane = b * c + channel.
    const int64_t y = r % oh, z = r / oh % od, plane = r / (oh * od);
    const T* base = PlaneInput<T>(c.input, c.input_strides, c.c, plane);
    const PoolSpan zs = WindowSpan(c, 0, z), ys = WindowSpan(c, 1, y);
    T* row_out = out + r * ow;
    int64_t* row_index = kFold == Fold::kMaxIndex ? c.indices + r * ow : nullptr;
    const auto one = [&](int64_t x) {
      PoolOne<T, kFold>(c, base, zs, ys, z, y, x, row_out + x,
                        kFold == Fold::kMaxIndex ? row_index + x : nullptr);
    };
    for (int64_t x = 0; x < x0; ++x) one(x);
    if (x1 > x0) {
      if (sw == 1 && s == 1) {
        PoolInterior<T, kFold, 1, I>(c, base, zs, ys, x0, x1, acc.data(), at.data());
      } else if (sw == 1 && s == 2) {
        PoolInterior<T, kFold, 2, I>(c, base, zs, ys, x0, x1, acc.data(), at.data());
      } else {
        PoolInterior<T, kFold, 0, I>(c, base, zs, ys, x0, x1, acc.data(), at.data());
      }
      for (int64_t x = x0; x < x1; ++x) {
        if constexpr (kFold == Fold::kSum) {
          // An interior window is never empty: AvgPoolWindow's division.
          const C sum = acc[x - x0];
          const C divisor = static_cast<C>(AvgPoolDivisor(c, z, y, x));
          if constexpr (std::is_integral_v<C>) {
            row_out[x] = Convert<T>(DivTruncInt<C>(sum, divisor));
          } else {
            row_out[x] = Convert<T>(sum / divisor);
          }
        } else {
          row_out[x] = Convert<T>(acc[x - x0]);
          if constexpr (kFold == Fold::kMaxIndex) {
            row_index[x] = static_cast<int64_t>(at[x - x0]);
          }
        }
      }
    }
    for (int64_t x = x1; x < ow; ++x) one(x);
  }
}

}  // namespace

void Pool(const PoolCall& c) {
  const int64_t rows = c.n * c.c * c.out_size[0] * c.out_size[1];
  if (rows == 0 || c.out_size[2] == 0) return;
  int64_t window = c.kernel[0] * c.kernel[1] * c.kernel[2];
  if (c.adaptive) {  // the longest bin's bound, saturated
    window = 1;
    for (int d = 0; d < 3; ++d) {
      window = std::min<int64_t>(window * (c.in[d] / c.out_size[d] + 2), int64_t{1} << 30);
    }
  }
  const int64_t volume = c.in[0] * c.in[1] * c.in[2];
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, c.out_size[2] * window));
  DispatchDType(c.dtype, [&](auto e) {
    using T = decltype(e);
    using C = Calc<T>;
    if constexpr (std::is_floating_point_v<C> || std::is_same_v<T, int64_t>) {
      ParallelFor(0, rows, grain, [&](int64_t r0, int64_t r1) {
        if (ExecContext::CancelRequested()) return;
        using Narrow = std::conditional_t<sizeof(C) == 4, int32_t, int64_t>;
        if (c.kind == PoolKind::kAvg) {
          PoolRows<T, Fold::kSum, Narrow>(c, r0, r1);
        } else if constexpr (std::is_floating_point_v<C>) {
          if (c.indices == nullptr) {
            PoolRows<T, Fold::kMax, Narrow>(c, r0, r1);
          } else if (volume <= std::numeric_limits<int32_t>::max()) {
            PoolRows<T, Fold::kMaxIndex, Narrow>(c, r0, r1);
          } else {
            PoolRows<T, Fold::kMaxIndex, int64_t>(c, r0, r1);
          }
        }
      });
    }
  });
}

}  // namespace tensord::engine::cpu
