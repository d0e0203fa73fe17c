#include "engine/cpu/pool_kernels.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {
namespace {

// One output's window folded element by element (the outputs whose window reaches past the
// row's ends).
template <typename T, bool kIndices>
void MaxPoolOne(const MaxPoolCall& c, const T* base, const PoolSpan& zs, const PoolSpan& ys,
                int64_t x, T* out, int64_t* index) {
  Calc<T> best;
  int64_t at;
  MaxPoolWindow<T>(c, base, zs, ys, MaxPoolSpan(c, 2, x), &best, &at);
  *out = Convert<T>(best);
  if constexpr (kIndices) *index = at;
}

// The outputs [x0, x1) of a row whose windows lie inside the input along W, folded tap by tap
// across the outputs (the same order per output as MaxPoolOne's, so the same max and index),
// in loops without branches that the compiler vectorizes; kStep is the input step between
// neighbouring outputs when W is contiguous (1 or 2), or 0 for any. Indices are kept as I, an
// integer as wide as the compared values (so that a compare's mask selects them), when the
// plane or volume fits it.
template <typename T, bool kIndices, int kStep, typename I>
void MaxPoolInterior(const MaxPoolCall& c, const T* base, const PoolSpan& zs, const PoolSpan& ys,
                     int64_t x0, int64_t x1, Calc<T>* best, I* at) {
  using C = Calc<T>;
  const int64_t sd = c.input_strides[2], sh = c.input_strides[3], sw = c.input_strides[4];
  const int64_t ih = c.in[1], iw = c.in[2], s = c.stride[2];
  const int64_t n = x1 - x0;
  for (int64_t x = 0; x < n; ++x) best[x] = -std::numeric_limits<C>::infinity();
  if constexpr (kIndices) {
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
          const bool take = v > best[x] || v != v;
          best[x] = take ? v : best[x];
          if constexpr (kIndices) at[x] = take ? static_cast<I>(a0 + static_cast<I>(x) * step) : at[x];
        }
      }
    }
  }
}

template <typename T, bool kIndices, typename I>
void MaxPoolRows(const MaxPoolCall& c, int64_t r0, int64_t r1) {
  using C = Calc<T>;
  const int64_t od = c.out_size[0], oh = c.out_size[1], ow = c.out_size[2];
  const int64_t s = c.stride[2], p = c.padding[2];
  const int64_t reach = (c.kernel[2] - 1) * c.dilation[2];
  // The outputs whose windows lie inside [0, W): x * s >= p and x * s - p + reach < W.
  // Adaptive bins differ in length: every output takes MaxPoolOne.
  const int64_t x0 = c.adaptive ? ow : std::min(ow, (p + s - 1) / s);
  const int64_t x1 = c.adaptive ? ow
                                : std::max(x0, std::min(ow, c.in[2] - 1 - reach + p >= 0
                                                                ? (c.in[2] - 1 - reach + p) / s + 1
                                                                : 0));
  const int64_t sw = c.input_strides[4];
  std::vector<C> best(static_cast<size_t>(x1 - x0));
  std::vector<I> at(kIndices ? static_cast<size_t>(x1 - x0) : 0);
  T* out = reinterpret_cast<T*>(c.out);
  for (int64_t r = r0; r < r1; ++r) {
    // Row r is output (plane, z, y, ·); plane = b * c + channel.
    const int64_t y = r % oh, z = r / oh % od, plane = r / (oh * od);
    const T* base = reinterpret_cast<const T*>(c.input) + plane / c.c * c.input_strides[0] +
                    plane % c.c * c.input_strides[1];
    const PoolSpan zs = MaxPoolSpan(c, 0, z), ys = MaxPoolSpan(c, 1, y);
    T* row_out = out + r * ow;
    int64_t* row_index = kIndices ? c.indices + r * ow : nullptr;
    const auto one = [&](int64_t x) {
      MaxPoolOne<T, kIndices>(c, base, zs, ys, x, row_out + x,
                              kIndices ? row_index + x : nullptr);
    };
    for (int64_t x = 0; x < x0; ++x) one(x);
    if (x1 > x0) {
      if (sw == 1 && s == 1) {
        MaxPoolInterior<T, kIndices, 1, I>(c, base, zs, ys, x0, x1, best.data(), at.data());
      } else if (sw == 1 && s == 2) {
        MaxPoolInterior<T, kIndices, 2, I>(c, base, zs, ys, x0, x1, best.data(), at.data());
      } else {
        MaxPoolInterior<T, kIndices, 0, I>(c, base, zs, ys, x0, x1, best.data(), at.data());
      }
      for (int64_t x = x0; x < x1; ++x) {
        row_out[x] = Convert<T>(best[x - x0]);
        if constexpr (kIndices) row_index[x] = static_cast<int64_t>(at[x - x0]);
      }
    }
    for (int64_t x = x1; x < ow; ++x) one(x);
  }
}

}  // namespace

void MaxPool(const MaxPoolCall& c) {
  const int64_t rows = c.n * c.c * c.out_size[0] * c.out_size[1];
  if (rows == 0 || c.out_size[2] == 0) return;
  int64_t window = c.kernel[0] * c.kernel[1] * c.kernel[2];
  if (c.adaptive) {  // the longest bin's bound, saturated
    window = 1;
    for (int d = 0; d < 3; ++d) window = std::min<int64_t>(window * (c.in[d] / c.out_size[d] + 2), 1 << 30);
  }
  const int64_t volume = c.in[0] * c.in[1] * c.in[2];
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, c.out_size[2] * window));
  DispatchDType(c.dtype, [&](auto e) {
    using T = decltype(e);
    if constexpr (std::is_floating_point_v<Calc<T>>) {
      ParallelFor(0, rows, grain, [&](int64_t r0, int64_t r1) {
        if (ExecContext::CancelRequested()) return;
        using Narrow = std::conditional_t<sizeof(Calc<T>) == 4, int32_t, int64_t>;
        if (c.indices == nullptr) {
          MaxPoolRows<T, false, Narrow>(c, r0, r1);
        } else if (volume <= std::numeric_limits<int32_t>::max()) {
          MaxPoolRows<T, true, Narrow>(c, r0, r1);
        } else {
          MaxPoolRows<T, true, int64_t>(c, r0, r1);
        }
      });
    }
  });
}

}  // namespace tensord::engine::cpu
