#include "engine/cpu/upsample_kernels.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"
#include "engine/kernels/spatial.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {
namespace {

// The values along W of the input row at `row` for every output column: AlongW's arithmetic,
// its taps and rounding fixed at compile time.
template <typename T, int kTaps, bool kRound>
void RowAlongW(const UpsampleCall& c, const T* row, Calc<T>* dst) {
  using C = Calc<T>;
  const int64_t sw = c.input_strides[4];
  for (int64_t x = 0; x < c.out_size[2]; ++x) {
    C acc = 0;
    for (int t = 0; t < kTaps; ++t) {
      const C v = static_cast<C>(row[c.index[2][t][x] * sw]);
      acc = AddTapAs<T, kRound>(t, acc, v * TapWeightAs<T, kRound>(c, 2, t, x));
    }
    dst[x] = acc;
  }
}

// Output rows [r0, r1) of a 2-d resampling, r = plane * out_h + y: the rows of values along W
// kept in kTaps slots, each tagged with the (plane, input row) it holds.
template <typename T, int kTaps, bool kRound>
void RowsOf2d(const UpsampleCall& c, int64_t r0, int64_t r1) {
  using C = Calc<T>;
  constexpr int taps = kTaps;
  const int64_t oh = c.out_size[1], ow = c.out_size[2], sh = c.input_strides[3];
  std::vector<C> slots(static_cast<size_t>(taps * ow)), acc(static_cast<size_t>(ow));
  int64_t tag_plane[UpsampleCall::kMaxTaps], tag_row[UpsampleCall::kMaxTaps];
  std::fill(tag_plane, tag_plane + taps, int64_t{-1});
  std::fill(tag_row, tag_row + taps, int64_t{-1});
  T* out = reinterpret_cast<T*>(c.out);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t plane = r / oh, y = r % oh;
    const T* base = PlaneInput<T>(c.input, c.input_strides, c.c, plane);
    int slot_of[UpsampleCall::kMaxTaps];
    bool needed[UpsampleCall::kMaxTaps] = {};
    // The taps' rows already held, then the others computed into slots no tap of y needs.
    for (int t = 0; t < taps; ++t) {
      slot_of[t] = -1;
      for (int s = 0; s < taps; ++s) {
        if (tag_plane[s] == plane && tag_row[s] == c.index[1][t][y]) slot_of[t] = s;
      }
      if (slot_of[t] >= 0) needed[slot_of[t]] = true;
    }
    for (int t = 0; t < taps; ++t) {
      if (slot_of[t] >= 0) continue;
      const int64_t h = c.index[1][t][y];
      int s = 0;
      while (needed[s]) ++s;  // taps slots, at most taps rows needed
      for (int u = t + 1; u < taps; ++u) {
        if (c.index[1][u][y] == h) slot_of[u] = s;
      }
      needed[s] = true;
      slot_of[t] = s;
      RowAlongW<T, kTaps, kRound>(c, base + h * sh, slots.data() + s * ow);
      tag_plane[s] = plane, tag_row[s] = h;
    }
    // Blend the rows as Blend does, tap by tap across the row.
    for (int t = 0; t < taps; ++t) {
      const C w = TapWeightAs<T, kRound>(c, 1, t, y);
      const C* src = slots.data() + slot_of[t] * ow;
      if (t == 0) {
        for (int64_t x = 0; x < ow; ++x) acc[x] = AddTapAs<T, kRound>(0, C(0), src[x] * w);
      } else {
        for (int64_t x = 0; x < ow; ++x) acc[x] = AddTapAs<T, kRound>(1, acc[x], src[x] * w);
      }
    }
    T* dst = out + r * ow;
    for (int64_t x = 0; x < ow; ++x) dst[x] = Convert<T>(acc[x]);
  }
}

// Outputs [o0, o1) one by one (linear, trilinear).
template <typename T>
void Outputs(const UpsampleCall& c, int64_t o0, int64_t o1) {
  T* out = reinterpret_cast<T*>(c.out);
  for (int64_t o = o0; o < o1; ++o) {
    const auto [plane, z, y, x] = PositionOf(c.out_size, o);
    out[o] = Convert<T>(
        UpsampleOutput<T>(c, PlaneInput<T>(c.input, c.input_strides, c.c, plane), z, y, x));
  }
}

}  // namespace

void Upsample(const UpsampleCall& c) {
  const int64_t rows = c.n * c.c * c.out_size[0] * c.out_size[1];
  if (rows == 0 || c.out_size[2] == 0) return;
  DispatchDType(c.dtype, [&](auto e) {
    using T = decltype(e);
    if constexpr (std::is_floating_point_v<Calc<T>>) {
      if (c.first == 1) {  // bilinear (2 taps, rounded steps) or bicubic (4)
        const int64_t grain = std::max<int64_t>(1, 32768 / c.out_size[2]);
        ParallelFor(0, rows, grain, [&](int64_t r0, int64_t r1) {
          if (ExecContext::CancelRequested()) return;
          if (RoundsSteps(c)) {
            RowsOf2d<T, 2, true>(c, r0, r1);
          } else {
            RowsOf2d<T, 4, false>(c, r0, r1);
          }
        });
      } else {
        ParallelFor(0, rows * c.out_size[2], 16384, [&](int64_t o0, int64_t o1) {
          if (!ExecContext::CancelRequested()) Outputs<T>(c, o0, o1);
        });
      }
    }
  });
}

}  // namespace tensord::engine::cpu
