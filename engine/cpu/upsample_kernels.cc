#include "engine/cpu/upsample_kernels.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {
namespace {

const char* Plane(const UpsampleLinearCall& c, int64_t plane, int64_t itemsize) {
  return c.input + (plane / c.c * c.input_strides[0] + plane % c.c * c.input_strides[1]) * itemsize;
}

// Output rows [r0, r1) of a bilinear resampling, r = plane * out_h + y.
template <typename T>
void BilinearRows(const UpsampleLinearCall& c, int64_t r0, int64_t r1) {
  using C = Calc<T>;
  const int64_t oh = c.out_size[1], ow = c.out_size[2], sh = c.input_strides[3];
  // Two rows of values along W, each tagged with the (plane, input row) it holds; a row is
  // computed into the slot other than `keep`'s.
  std::vector<C> rows[2] = {std::vector<C>(static_cast<size_t>(ow)),
                            std::vector<C>(static_cast<size_t>(ow))};
  int64_t tag_plane[2] = {-1, -1}, tag_row[2] = {-1, -1};
  const auto row_for = [&](int64_t plane, const T* base, int64_t h, int keep) -> int {
    for (int s = 0; s < 2; ++s) {
      if (tag_plane[s] == plane && tag_row[s] == h) return s;
    }
    const int s = keep == 0 ? 1 : 0;
    const T* row = base + h * sh;
    C* dst = rows[s].data();
    for (int64_t x = 0; x < ow; ++x) dst[x] = LinearAlongW<T>(c, row, x);
    tag_plane[s] = plane, tag_row[s] = h;
    return s;
  };
  const T* w0 = reinterpret_cast<const T*>(c.w0[1]);
  const T* w1 = reinterpret_cast<const T*>(c.w1[1]);
  T* out = reinterpret_cast<T*>(c.out);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t plane = r / oh, y = r % oh;
    const T* base = reinterpret_cast<const T*>(Plane(c, plane, sizeof(T)));
    const int sa = row_for(plane, base, c.lo[1][y], -1);
    const int sb = row_for(plane, base, c.hi[1][y], sa);
    const C* a = rows[sa].data();
    const C* b = rows[sb].data();
    const C u = static_cast<C>(w0[y]), v = static_cast<C>(w1[y]);
    T* dst = out + r * ow;
    for (int64_t x = 0; x < ow; ++x) dst[x] = Convert<T>(R<T>(R<T>(a[x] * u) + R<T>(b[x] * v)));
  }
}

// Outputs [o0, o1) one by one (linear, trilinear).
template <typename T>
void LinearOutputs(const UpsampleLinearCall& c, int64_t o0, int64_t o1) {
  const int64_t od = c.out_size[0], oh = c.out_size[1], ow = c.out_size[2];
  T* out = reinterpret_cast<T*>(c.out);
  for (int64_t o = o0; o < o1; ++o) {
    const int64_t x = o % ow, y = o / ow % oh, z = o / (ow * oh) % od, plane = o / (ow * oh * od);
    const T* base = reinterpret_cast<const T*>(Plane(c, plane, sizeof(T)));
    out[o] = Convert<T>(LinearOutput<T>(c, base, z, y, x));
  }
}

}  // namespace

void UpsampleLinear(const UpsampleLinearCall& c) {
  const int64_t rows = c.n * c.c * c.out_size[0] * c.out_size[1];
  if (rows == 0 || c.out_size[2] == 0) return;
  DispatchDType(c.dtype, [&](auto e) {
    using T = decltype(e);
    if constexpr (std::is_floating_point_v<Calc<T>>) {
      if (c.first == 1) {
        const int64_t grain = std::max<int64_t>(1, 32768 / c.out_size[2]);
        ParallelFor(0, rows, grain, [&](int64_t r0, int64_t r1) {
          if (!ExecContext::CancelRequested()) BilinearRows<T>(c, r0, r1);
        });
      } else {
        ParallelFor(0, rows * c.out_size[2], 16384, [&](int64_t o0, int64_t o1) {
          if (!ExecContext::CancelRequested()) LinearOutputs<T>(c, o0, o1);
        });
      }
    }
  });
}

}  // namespace tensord::engine::cpu
