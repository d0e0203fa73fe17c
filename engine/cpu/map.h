// Elementwise map loops over strided operands: the inner loops every elementwise kernel uses.
// Contiguous and broadcast-scalar runs get plain indexed loops the compiler vectorises; other
// runs step by byte strides. Reduced floats (float16, bfloat16) are computed in float.
#ifndef TENSORD_ENGINE_CPU_MAP_H_
#define TENSORD_ENGINE_CPU_MAP_H_

#include <array>
#include <cstdint>
#include <type_traits>

#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"
#include "engine/cpu/strided_loop.h"
#include "engine/tensor/strided_ref.h"

namespace tensord::engine::cpu {


// The element at byte address p in its computation type (LoadCalc).
template <typename T>
inline Calc<T> Load(const char* p) {
  return LoadCalc(reinterpret_cast<const T*>(p));
}

// out = f(a)
template <typename Out, typename A, typename F>
void Map1(IntList shape, const StridedRef& out, const StridedRef& a, F f) {
  StridedLoop<2> loop(shape, {out.strides, a.strides}, {sizeof(Out), sizeof(A)});
  loop.Run({out.data, a.data}, sizeof(Out) + sizeof(A),
           [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
             // NB: GCC 12 fails to compile the vectorised form of reduced float -> bool.
             constexpr bool kPlain = !(IsReducedFloat<A>::value && std::is_same_v<Out, bool>);
             if (kPlain && s[0] == sizeof(Out) && s[1] == sizeof(A)) {
               Out* __restrict o = reinterpret_cast<Out*>(p[0]);
               const A* __restrict x = reinterpret_cast<const A*>(p[1]);
               for (int64_t i = 0; i < n; ++i) o[i] = Convert<Out>(f(LoadCalc(x + i)));
             } else {
               for (int64_t i = 0; i < n; ++i) {
                 *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                     Convert<Out>(f(Load<A>(p[1] + i * s[1])));
               }
             }
           });
}

// out = f(a, b)
template <typename Out, typename A, typename B, typename F>
void Map2(IntList shape, const StridedRef& out, const StridedRef& a, const StridedRef& b, F f) {
  StridedLoop<3> loop(shape, {out.strides, a.strides, b.strides},
                      {sizeof(Out), sizeof(A), sizeof(B)});
  loop.Run({out.data, a.data, b.data}, sizeof(Out) + sizeof(A) + sizeof(B),
           [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
             Out* __restrict o = reinterpret_cast<Out*>(p[0]);
             const A* __restrict x = reinterpret_cast<const A*>(p[1]);
             const B* __restrict y = reinterpret_cast<const B*>(p[2]);
             if (s[0] == sizeof(Out) && s[1] == sizeof(A) && s[2] == sizeof(B)) {
               for (int64_t i = 0; i < n; ++i) {
                 o[i] = Convert<Out>(f(LoadCalc(x + i), LoadCalc(y + i)));
               }
             } else if (s[0] == sizeof(Out) && s[1] == sizeof(A) && s[2] == 0) {
               const Calc<B> yv = LoadCalc(y + 0);
               for (int64_t i = 0; i < n; ++i) {
                 o[i] = Convert<Out>(f(LoadCalc(x + i), yv));
               }
             } else if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(B)) {
               const Calc<A> xv = LoadCalc(x + 0);
               for (int64_t i = 0; i < n; ++i) {
                 o[i] = Convert<Out>(f(xv, LoadCalc(y + i)));
               }
             } else {
               for (int64_t i = 0; i < n; ++i) {
                 *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                     Convert<Out>(f(Load<A>(p[1] + i * s[1]), Load<B>(p[2] + i * s[2])));
               }
             }
           });
}

// o[i] = f(a, b, c) over n elements, each input either contiguous or (kOneX, kOneY, kOneZ)
// one value for the whole run: plain indexed loops the compiler vectorises.
template <bool kOneX, bool kOneY, bool kOneZ, typename Out, typename A, typename B, typename C,
          typename F>
inline void Map3Run(Out* __restrict o, const A* __restrict x, const B* __restrict y,
                    const C* __restrict z, int64_t n, F& f) {
  const Calc<A> xv = LoadCalc(x);
  const Calc<B> yv = LoadCalc(y);
  const Calc<C> zv = LoadCalc(z);
  for (int64_t i = 0; i < n; ++i) {
    o[i] = Convert<Out>(f(kOneX ? xv : LoadCalc(x + i), kOneY ? yv : LoadCalc(y + i),
                          kOneZ ? zv : LoadCalc(z + i)));
  }
}

// out = f(a, b, c)
template <typename Out, typename A, typename B, typename C, typename F>
void Map3(IntList shape, const StridedRef& out, const StridedRef& a, const StridedRef& b,
          const StridedRef& c, F f) {
  StridedLoop<4> loop(shape, {out.strides, a.strides, b.strides, c.strides},
                      {sizeof(Out), sizeof(A), sizeof(B), sizeof(C)});
  loop.Run({out.data, a.data, b.data, c.data}, sizeof(Out) + sizeof(A) + sizeof(B) + sizeof(C),
           [&](const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
             Out* const o = reinterpret_cast<Out*>(p[0]);
             const A* const x = reinterpret_cast<const A*>(p[1]);
             const B* const y = reinterpret_cast<const B*>(p[2]);
             const C* const z = reinterpret_cast<const C*>(p[3]);
             const bool dense = s[0] == sizeof(Out) && s[1] == sizeof(A);
             // where(cond, x, 0.0) (ReLU's gradient), where(cond, 1.0, 0.0), a clamp or lerp
             // by one value: the number has stride 0 in every run.
             if (dense && s[2] == sizeof(B) && s[3] == sizeof(C)) {
               Map3Run<false, false, false>(o, x, y, z, n, f);
             } else if (dense && s[2] == sizeof(B) && s[3] == 0) {
               Map3Run<false, false, true>(o, x, y, z, n, f);
             } else if (dense && s[2] == 0 && s[3] == sizeof(C)) {
               Map3Run<false, true, false>(o, x, y, z, n, f);
             } else if (dense && s[2] == 0 && s[3] == 0) {
               Map3Run<false, true, true>(o, x, y, z, n, f);
             } else {
               for (int64_t i = 0; i < n; ++i) {
                 *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                     Convert<Out>(f(Load<A>(p[1] + i * s[1]), Load<B>(p[2] + i * s[2]),
                                    Load<C>(p[3] + i * s[3])));
               }
             }
           });
}

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_MAP_H_
