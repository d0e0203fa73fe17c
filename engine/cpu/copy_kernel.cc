#include "engine/cpu/copy_kernel.h"

#include <immintrin.h>

#include <array>
#include <cstring>

#include "engine/kernels/convert.h"
#include "engine/cpu/strided_loop.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {
namespace {

using RunFn = void (*)(char* dst, int64_t dst_stride, const char* src, int64_t src_stride,
                       int64_t n);

template <typename D, typename S>
void ConvertRun(char* dst, int64_t ds, const char* src, int64_t ss, int64_t n) {
  if (ds == sizeof(D) && ss == sizeof(S)) {
    D* d = reinterpret_cast<D*>(dst);
    const S* s = reinterpret_cast<const S*>(src);
    for (int64_t i = 0; i < n; ++i) d[i] = Convert<D>(LoadElement(s + i));
  } else if (ds == sizeof(D) && ss == 0) {
    D* d = reinterpret_cast<D*>(dst);
    const D v = Convert<D>(LoadElement(reinterpret_cast<const S*>(src)));
    for (int64_t i = 0; i < n; ++i) d[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<D*>(dst + i * ds) =
          Convert<D>(LoadElement(reinterpret_cast<const S*>(src + i * ss)));
    }
  }
}

// Same-type runs move bits: one instantiation per element width.
template <typename W>
void MoveRun(char* dst, int64_t ds, const char* src, int64_t ss, int64_t n) {
  if (ds == sizeof(W) && ss == sizeof(W)) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(W));
  } else {
    ConvertRun<W, W>(dst, ds, src, ss, n);
  }
}

RunFn PickRun(DType dst, DType src) {
  if (CopyMovesBytes(dst, src)) {
    switch (ItemSize(dst)) {
      case 1: return MoveRun<uint8_t>;
      case 2: return MoveRun<uint16_t>;
      case 4: return MoveRun<uint32_t>;
      default: return MoveRun<uint64_t>;
    }
  }
  return DispatchDType(dst, [&](auto d) {
    return DispatchDType(src, [&](auto s) -> RunFn {
      return ConvertRun<decltype(d), decltype(s)>;
    });
  });
}

// ---- Tiled transpose: dst rows are contiguous along one dim, src rows along another. --------
//
// View the copy as D[i][j] = S[j][i], with D rows `dst_ld` bytes apart and S rows `src_ld`
// bytes apart, both contiguous within a row. Tiles of kTile x kTile elements keep both sides in
// L1; inside a tile, 8x8 (4-byte) or 4x4 (8-byte) register transposes when AVX2 is there.

constexpr int64_t kTile = 64;

__attribute__((target("avx2"))) inline void Transpose8x8Avx2(const char* src, int64_t src_ld,
                                                            char* dst, int64_t dst_ld) {
  __m256 r0 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 0 * src_ld));
  __m256 r1 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 1 * src_ld));
  __m256 r2 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 2 * src_ld));
  __m256 r3 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 3 * src_ld));
  __m256 r4 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * src_ld));
  __m256 r5 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 5 * src_ld));
  __m256 r6 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 6 * src_ld));
  __m256 r7 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 7 * src_ld));
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r0 = _mm256_permute2f128_ps(u0, u4, 0x20);
  r1 = _mm256_permute2f128_ps(u1, u5, 0x20);
  r2 = _mm256_permute2f128_ps(u2, u6, 0x20);
  r3 = _mm256_permute2f128_ps(u3, u7, 0x20);
  r4 = _mm256_permute2f128_ps(u0, u4, 0x31);
  r5 = _mm256_permute2f128_ps(u1, u5, 0x31);
  r6 = _mm256_permute2f128_ps(u2, u6, 0x31);
  r7 = _mm256_permute2f128_ps(u3, u7, 0x31);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 0 * dst_ld), r0);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 1 * dst_ld), r1);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 2 * dst_ld), r2);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 3 * dst_ld), r3);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 4 * dst_ld), r4);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 5 * dst_ld), r5);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 6 * dst_ld), r6);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 7 * dst_ld), r7);
}

__attribute__((target("avx2"))) inline void Transpose4x4Avx2(const char* src, int64_t src_ld,
                                                            char* dst, int64_t dst_ld) {
  const __m256d r0 = _mm256_loadu_pd(reinterpret_cast<const double*>(src + 0 * src_ld));
  const __m256d r1 = _mm256_loadu_pd(reinterpret_cast<const double*>(src + 1 * src_ld));
  const __m256d r2 = _mm256_loadu_pd(reinterpret_cast<const double*>(src + 2 * src_ld));
  const __m256d r3 = _mm256_loadu_pd(reinterpret_cast<const double*>(src + 3 * src_ld));
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + 0 * dst_ld), _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + 1 * dst_ld), _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + 2 * dst_ld), _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + 3 * dst_ld), _mm256_permute2f128_pd(t1, t3, 0x31));
}

// Scalar transpose of a rows x cols block: D[i][j] = S[j][i], i < rows, j < cols.
template <typename W>
inline void TransposeScalar(const char* src, int64_t src_ld, char* dst, int64_t dst_ld,
                            int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    W* d = reinterpret_cast<W*>(dst + i * dst_ld);
    const char* s = src + i * static_cast<int64_t>(sizeof(W));
    for (int64_t j = 0; j < cols; ++j) d[j] = *reinterpret_cast<const W*>(s + j * src_ld);
  }
}

template <typename W, int kBlock, void (*kKernel)(const char*, int64_t, char*, int64_t)>
__attribute__((target("avx2"))) void TransposeTileAvx2(const char* src, int64_t src_ld, char* dst,
                                                       int64_t dst_ld, int64_t rows,
                                                       int64_t cols) {
  constexpr int64_t w = sizeof(W);
  const int64_t rows_b = rows / kBlock * kBlock;
  const int64_t cols_b = cols / kBlock * kBlock;
  for (int64_t i = 0; i < rows_b; i += kBlock) {
    for (int64_t j = 0; j < cols_b; j += kBlock) {
      kKernel(src + j * src_ld + i * w, src_ld, dst + i * dst_ld + j * w, dst_ld);
    }
  }
  if (cols_b < cols) {
    TransposeScalar<W>(src + cols_b * src_ld, src_ld, dst + cols_b * w, dst_ld, rows_b,
                       cols - cols_b);
  }
  if (rows_b < rows) {
    TransposeScalar<W>(src + rows_b * w, src_ld, dst + rows_b * dst_ld, dst_ld, rows - rows_b,
                       cols);
  }
}

using TileFn = void (*)(const char*, int64_t, char*, int64_t, int64_t, int64_t);

TileFn PickTile(int64_t itemsize) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  switch (itemsize) {
    case 1: return TransposeScalar<uint8_t>;
    case 2: return TransposeScalar<uint16_t>;
    case 4: return avx2 ? TransposeTileAvx2<uint32_t, 8, Transpose8x8Avx2> : TransposeScalar<uint32_t>;
    default: return avx2 ? TransposeTileAvx2<uint64_t, 4, Transpose4x4Avx2> : TransposeScalar<uint64_t>;
  }
}

// The transpose path applies when the output's innermost dim is contiguous, the input's is not,
// and some other dim is contiguous in the input. Returns false when it does not apply.
bool TryTransposeCopy(const StridedLoop<2>& loop, char* dst, const char* src, int64_t itemsize) {
  if (loop.ndim() < 2) return false;
  const auto& inner = loop.dim(0);
  if (inner.stride[0] != itemsize || inner.stride[1] == itemsize) return false;
  int k = -1;
  for (int d = 1; d < loop.ndim(); ++d) {
    if (loop.dim(d).stride[1] == itemsize) {
      k = d;
      break;
    }
  }
  if (k < 0 || loop.dim(k).size < 8 || inner.size < 8 || inner.stride[1] <= 0 ||
      loop.dim(k).stride[0] <= 0) {
    return false;
  }
  const TileFn tile = PickTile(itemsize);
  const int64_t rows = loop.dim(k).size;  // i: contiguous in src
  const int64_t cols = inner.size;        // j: contiguous in dst
  const int64_t dst_ld = loop.dim(k).stride[0];
  const int64_t src_ld = inner.stride[1];
  // The remaining dims, iterated as an outer odometer.
  absl::InlinedVector<StridedLoop<2>::Dim, 8> outer_dims;
  for (int d = 1; d < loop.ndim(); ++d) {
    if (d != k) outer_dims.push_back(loop.dim(d));
  }
  int64_t outer = 1;
  for (const auto& d : outer_dims) outer *= d.size;
  const int64_t tiles_i = (rows + kTile - 1) / kTile;
  const int64_t tiles_j = (cols + kTile - 1) / kTile;
  const int64_t tiles = outer * tiles_i * tiles_j;
  const int64_t tile_bytes = kTile * kTile * itemsize * 2;
  ParallelFor(0, tiles, std::max<int64_t>(1, kParallelGrainBytes / tile_bytes),
              [&](int64_t begin, int64_t end) {
                for (int64_t t = begin; t < end; ++t) {
                  const int64_t tj = t % tiles_j;
                  const int64_t ti = (t / tiles_j) % tiles_i;
                  int64_t o = t / (tiles_j * tiles_i);
                  int64_t dst_off = 0, src_off = 0;
                  for (const auto& d : outer_dims) {
                    const int64_t idx = o % d.size;
                    o /= d.size;
                    dst_off += idx * d.stride[0];
                    src_off += idx * d.stride[1];
                  }
                  const int64_t i0 = ti * kTile, j0 = tj * kTile;
                  tile(src + src_off + j0 * src_ld + i0 * itemsize, src_ld,
                       dst + dst_off + i0 * dst_ld + j0 * itemsize, dst_ld,
                       std::min(kTile, rows - i0), std::min(kTile, cols - j0));
                }
              });
  return true;
}

}  // namespace

void CopyStrided(IntList sizes, const StridedRef& dst, const StridedRef& src) {
  const int64_t dsize = ItemSize(dst.dtype);
  const int64_t ssize = ItemSize(src.dtype);
  StridedLoop<2> loop(sizes, {dst.strides, src.strides}, {dsize, ssize});
  if (loop.numel() == 0) return;
  if (CopyMovesBytes(dst.dtype, src.dtype) && TryTransposeCopy(loop, dst.data, src.data, dsize)) {
    return;
  }
  const RunFn run = PickRun(dst.dtype, src.dtype);
  loop.Run({dst.data, src.data}, dsize + ssize,
           [run](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
             run(p[0], s[0], p[1], s[1], n);
           });
}

void FillStrided(IntList sizes, const StridedRef& dst, const Scalar& value) {
  const int64_t itemsize = ItemSize(dst.dtype);
  // The value converted once to dst's bit pattern.
  alignas(8) char pattern[8] = {};
  const uint64_t bits = FillPattern(dst.dtype, value);
  std::memcpy(pattern, &bits, sizeof(bits));
  bool all_zero = true;
  for (int64_t i = 0; i < itemsize; ++i) all_zero &= pattern[i] == 0;
  StridedLoop<1> loop(sizes, {dst.strides}, {itemsize});
  loop.Run({dst.data}, itemsize,
           [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
             if (s[0] == itemsize && all_zero) {
               std::memset(p[0], 0, static_cast<size_t>(n * itemsize));
               return;
             }
             // Stride 0 never occurs for an output; a run is written element by element.
             switch (itemsize) {
               case 1: {
                 if (s[0] == 1) {
                   std::memset(p[0], pattern[0], static_cast<size_t>(n));
                 } else {
                   for (int64_t i = 0; i < n; ++i) p[0][i * s[0]] = pattern[0];
                 }
                 break;
               }
               case 2: {
                 uint16_t v;
                 std::memcpy(&v, pattern, 2);
                 for (int64_t i = 0; i < n; ++i) *reinterpret_cast<uint16_t*>(p[0] + i * s[0]) = v;
                 break;
               }
               case 4: {
                 uint32_t v;
                 std::memcpy(&v, pattern, 4);
                 for (int64_t i = 0; i < n; ++i) *reinterpret_cast<uint32_t*>(p[0] + i * s[0]) = v;
                 break;
               }
               default: {
                 uint64_t v;
                 std::memcpy(&v, pattern, 8);
                 for (int64_t i = 0; i < n; ++i) *reinterpret_cast<uint64_t*>(p[0] + i * s[0]) = v;
                 break;
               }
             }
           });
}

void ArangeContiguous(char* out, DType dtype, int64_t n, const Scalar& start, const Scalar& step) {
  DispatchDType(dtype, [&](auto t) {
    using T = decltype(t);
    T* o = reinterpret_cast<T*>(out);
    if (IsFloating(dtype)) {
      const double a = start.to_double(), s = step.to_double();
      ParallelFor(0, n, 1 << 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = Convert<T>(a + s * static_cast<double>(i));
      });
    } else {
      const int64_t a = start.to_int(), s = step.to_int();
      ParallelFor(0, n, 1 << 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          // Wrapping arithmetic (in uint64) is what the range check in arange allows for.
          o[i] = Convert<T>(static_cast<int64_t>(static_cast<uint64_t>(a) +
                                                 static_cast<uint64_t>(s) * static_cast<uint64_t>(i)));
        }
      });
    }
  });
}

void Concat(const ConcatCall& call) {
  const auto copy_rows = [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      char* dst = call.out + r * call.row_bytes;
      for (size_t i = 0; i < call.inputs.size(); ++i) {
        const int64_t n = call.bytes[i];
        if (n > 0) std::memcpy(dst, call.inputs[i] + r * n, static_cast<size_t>(n));
        dst += n;
      }
    }
  };
  if (call.outer >= 2 * ParallelismDegree() || call.row_bytes < 2 * kParallelGrainBytes) {
    const int64_t grain = std::max<int64_t>(1, kParallelGrainBytes / std::max<int64_t>(
                                                                         call.row_bytes, 1));
    ParallelFor(0, call.outer, grain, copy_rows);
    return;
  }
  // A few long rows (cat along dim 0): each piece split in parallel.
  for (int64_t r = 0; r < call.outer; ++r) {
    char* dst = call.out + r * call.row_bytes;
    for (size_t i = 0; i < call.inputs.size(); ++i) {
      const int64_t n = call.bytes[i];
      const char* src = call.inputs[i] + r * n;
      ParallelFor(0, n, kParallelGrainBytes, [&](int64_t begin, int64_t end) {
        std::memcpy(dst + begin, src + begin, static_cast<size_t>(end - begin));
      });
      dst += n;
    }
  }
}

}  // namespace tensord::engine::cpu
