#include "engine/cpu/indexing_kernels.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <type_traits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/core/scalar.h"
#include "engine/cpu/copy_kernel.h"
#include "engine/cpu/scratch.h"
#include "engine/kernels/convert.h"
#include "engine/kernels/element_math.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {
namespace {

int64_t IndexAt(const Tensor& index, int64_t elem_offset) {
  const char* p = index.data() + elem_offset * index.itemsize();
  if (index.dtype() == DType::kInt32) return *reinterpret_cast<const int32_t*>(p);
  return *reinterpret_cast<const int64_t*>(p);
}

// Index i of a 0-d or 1-d index tensor (int32 or int64, any stride), or, with `flat`, element i
// of a contiguous one of any rank: the pointer, step and width taken once, not per element.
class IndexReader {
 public:
  explicit IndexReader(const Tensor& index, bool flat = false)
      : data_(index.data()),
        step_(flat || index.dim() == 0 ? (flat ? 1 : 0) : index.stride(0)),
        narrow_(index.dtype() == DType::kInt32) {}
  int64_t operator()(int64_t i) const {
    return narrow_ ? reinterpret_cast<const int32_t*>(data_)[i * step_]
                   : reinterpret_cast<const int64_t*>(data_)[i * step_];
  }
  // Calls fn(p, step) with the indices' typed pointer and element step, so that a loop over
  // them reads one type with no branch per element (and vectorizes).
  template <typename Fn>
  void Typed(Fn&& fn) const {
    if (narrow_) {
      fn(reinterpret_cast<const int32_t*>(data_), step_);
    } else {
      fn(reinterpret_cast<const int64_t*>(data_), step_);
    }
  }

 private:
  const char* data_;
  int64_t step_;
  bool narrow_;
};

// Whether k lies outside [lo, lo + range), branch-free: k - lo modulo 2^64, so that below lo
// wraps past range.
inline bool Outside(int64_t k, int64_t lo, uint64_t range) {
  return static_cast<uint64_t>(k) - static_cast<uint64_t>(lo) >= range;
}

// The position of the first of indices [0, n) outside [lo, hi), or -1, searched in order (once
// the pool's threads have found that there is one): the one torch's error names.
int64_t FirstInOrderOutside(const IndexReader& pick, int64_t n, int64_t lo, int64_t hi) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = pick(i);
    if (k < lo || k >= hi) return i;
  }
  return -1;
}

// The position of the first of indices [0, n) outside [lo, hi), or -1. The pool's threads look
// for any (a branch-free test the compiler vectorizes); only when one is found is the first
// searched for, in order, so that the error names the one torch names.
int64_t FirstIndexOutside(const IndexReader& pick, int64_t n, int64_t lo, int64_t hi) {
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  std::atomic<bool> any{false};
  pick.Typed([&](const auto* p, int64_t step) {
    ParallelFor(0, n, int64_t{1} << 16, [&](int64_t i0, int64_t i1) {
      bool bad = false;
      if (step == 1) {
        for (int64_t i = i0; i < i1; ++i) bad |= Outside(p[i], lo, range);
      } else {
        for (int64_t i = i0; i < i1; ++i) bad |= Outside(p[i * step], lo, range);
      }
      if (bad) any.store(true, std::memory_order_relaxed);
    });
  });
  return any.load() ? FirstInOrderOutside(pick, n, lo, hi) : -1;
}

// Calls fn(u) with a default U, the unsigned type of `bytes` (1, 2, 4 or 8), so that elements
// move as typed loads and stores; false for other sizes.
template <typename Fn>
bool WithElementBits(int64_t bytes, Fn&& fn) {
  switch (bytes) {
    case 1: fn(uint8_t{}); return true;
    case 2: fn(uint16_t{}); return true;
    case 4: fn(uint32_t{}); return true;
    case 8: fn(uint64_t{}); return true;
    default: return false;
  }
}

// to[i * to_step] = from[k' * from_step] for every k = pick(i), i in [0, n), with each k
// checked against [lo, hi) in the same pass (one read of the indices, not a check and then a
// gather): k' is k, plus `wrap` where k is negative; a bad k gathers element 0 instead. Returns
// the first i whose k is bad, or -1. The caller fails the op on a bad one (its output is new).
template <typename U>
int64_t GatherChecked(const IndexReader& pick, int64_t n, int64_t lo, int64_t hi, int64_t wrap,
                      const U* from, int64_t from_step, U* to, int64_t to_step) {
  if (n == 0) return -1;
  if (hi <= lo) return 0;  // nothing to gather from: every index is bad
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  std::atomic<bool> any{false};
  pick.Typed([&](const auto* p, int64_t step) {
    ParallelFor(0, n, int64_t{1} << 14, [&](int64_t i0, int64_t i1) {
      bool bad = false;
      const auto at = [&](int64_t k) {
        const bool outside = Outside(k, lo, range);
        bad |= outside;
        return outside ? 0 : (k < 0 ? k + wrap : k);
      };
      if (step == 1 && to_step == 1 && from_step == 1) {
        for (int64_t i = i0; i < i1; ++i) to[i] = from[at(p[i])];
      } else {
        for (int64_t i = i0; i < i1; ++i) to[i * to_step] = from[at(p[i * step]) * from_step];
      }
      if (bad) any.store(true, std::memory_order_relaxed);
    });
  });
  return any.load() ? FirstInOrderOutside(pick, n, lo, hi) : -1;
}

// Element offset (in elements) of the multi-index `idx` through `t`'s strides.
inline int64_t OffsetOf(const Tensor& t, const int64_t* idx) {
  int64_t off = 0;
  for (int64_t d = 0; d < t.dim(); ++d) off += idx[d] * t.stride(d);
  return off;
}

// Element offset of row-major position k of `t`.
int64_t RowMajorOffset(const Tensor& t, int64_t k) {
  int64_t offset = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    const int64_t size = t.size(d);
    offset += (k % size) * t.stride(d);
    k /= size;
  }
  return offset;
}

// Calls fn(multi_index) for every index of `sizes`, in row-major order, until it returns false.
// A long loop yields its thread to other streams' work now and then (Executor::YieldToWaiting).
template <typename Fn>
void ForEachIndex(IntList sizes, Fn&& fn) {
  constexpr int64_t kPiece = int64_t{1} << 20;
  const int64_t nd = static_cast<int64_t>(sizes.size());
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  if (n == 0) return;
  int64_t idx[kMaxRank] = {};
  for (int64_t i = 0; i < n; ++i) {
    if (!fn(static_cast<const int64_t*>(idx))) return;
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
    if ((i + 1) % kPiece == 0) {
      Executor::YieldToWaiting();
      if (ExecContext::CancelRequested()) return;
    }
  }
}

template <typename T>
bool Nonzero(const char* p) {
  return LoadCalc(reinterpret_cast<const T*>(p)) != Calc<T>(0);
}

bool IsNonzero(DType d, const char* p) {
  return DispatchDType(d, [&](auto t) { return Nonzero<decltype(t)>(p); });
}

// `v` (sizes or strides) without dim `d`.
DimVector Without(IntList v, int64_t d) {
  DimVector out(v.begin(), v.end());
  out.erase(out.begin() + d);
  return out;
}


}  // namespace

absl::Status IndexSelect(const Tensor& out, const Tensor& self, int64_t d, const Tensor& index) {
  const int64_t n = index.numel();
  const int64_t limit = self.dim() == 0 ? 1 : self.size(d);
  const IndexReader pick(index);
  // Every index in [0, limit) (torch 1.13's CPU kernels take no negative one); of bad ones, the
  // first in order is named.
  const auto out_of_range = [&](int64_t bad) {
    return IndexSelectOutOfRange(pick(bad), d, self.dim(), limit);
  };
  if (self.dim() == 0) {
    if (const int64_t bad = FirstIndexOutside(pick, n, 0, limit); bad >= 0) {
      return out_of_range(bad);
    }
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(out.data() + i * self.itemsize(), self.data(),
                  static_cast<size_t>(self.itemsize()));
    }
    return absl::OkStatus();
  }
  const DimVector sizes = Without(self.sizes(), d);
  const DimVector src_strides = Without(self.strides(), d);
  const DimVector dst_strides = Without(out.strides(), d);
  const int64_t w = self.itemsize();
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  const bool slices = IsContiguousLayout(sizes, src_strides, count) &&
                      IsContiguousLayout(sizes, dst_strides, count);
  if (count == 1 && slices) {
    // One element per index (a 1-d self): typed loads and stores, the indices checked as they
    // are read, over the pool's threads.
    int64_t bad = -1;
    if (WithElementBits(w, [&](auto u) {
          using U = decltype(u);
          bad = GatherChecked<U>(pick, n, 0, limit, 0, reinterpret_cast<const U*>(self.data()),
                                 self.stride(d), reinterpret_cast<U*>(out.data()), out.stride(d));
        })) {
      return bad >= 0 ? out_of_range(bad) : absl::OkStatus();
    }
  }
  if (const int64_t bad = FirstIndexOutside(pick, n, 0, limit); bad >= 0) {
    return out_of_range(bad);
  }
  if (count == 0 || n == 0) return absl::OkStatus();  // no element (and maybe no storage)
  if (slices) {
    // Each selected slice is one block of bytes (rows of an embedding table): copied whole, the
    // indices shared by the pool's threads.
    const int64_t bytes = count * w;
    const int64_t to_step = out.stride(d), from_step = self.stride(d);
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(bytes, 1));
    ParallelFor(0, n, grain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        std::memcpy(out.data() + i * to_step * w, self.data() + pick(i) * from_step * w,
                    static_cast<size_t>(bytes));
      }
    });
    return absl::OkStatus();
  }
  if (self.is_contiguous() && out.is_contiguous()) {
    // Both dense: (outer, size_d, inner) -> (outer, n, inner), rows of `inner` elements copied
    // in the output's order (an index along the last dim gathers elements of each row).
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < d; ++a) outer *= self.size(a);
    for (int64_t a = d + 1; a < self.dim(); ++a) inner *= self.size(a);
    const int64_t len = self.size(d);
    std::vector<int64_t> picks(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) picks[i] = pick(i);
    const auto gather = [&](auto u) {
      using U = decltype(u);
      const U* src = reinterpret_cast<const U*>(self.data());
      U* dst = reinterpret_cast<U*>(out.data());
      const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(n * inner, 1));
      ParallelFor(0, outer, grain, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
          const U* from = src + o * len * inner;
          U* to = dst + o * n * inner;
          if (inner == 1) {
            for (int64_t i = 0; i < n; ++i) to[i] = from[picks[i]];
          } else {
            for (int64_t i = 0; i < n; ++i) {
              std::memcpy(to + i * inner, from + picks[i] * inner,
                          static_cast<size_t>(inner) * sizeof(U));
            }
          }
        }
      });
    };
    switch (w) {
      case 1: gather(uint8_t{}); break;
      case 2: gather(uint16_t{}); break;
      case 4: gather(uint32_t{}); break;
      default: gather(uint64_t{}); break;
    }
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = pick(i);
    const StridedRef src{self.data() + k * self.stride(d) * w, self.dtype(), src_strides};
    const StridedRef dst{out.data() + i * out.stride(d) * w, out.dtype(), dst_strides};
    CopyStrided(sizes, dst, src);
    Executor::YieldToWaiting();
    if (ExecContext::CancelRequested()) return absl::OkStatus();  // the stream poisons `out`
  }
  return absl::OkStatus();
}

absl::Status Gather(const Tensor& out, const Tensor& self, int64_t d, const Tensor& index) {
  const int64_t limit = self.dim() == 0 ? 1 : self.size(d);
  const int64_t w = self.itemsize();
  char* dst = out.data();
  int64_t i = 0;
  absl::Status status;
  ForEachIndex(index.sizes(), [&](const int64_t* idx) {
    int64_t k = IndexAt(index, OffsetOf(index, idx));
    if (k < 0 || k >= limit) {  // torch's gather takes no negative indices
      status = IndexOutOfBoundsForDim("gather", k, d, limit);
      return false;
    }
    int64_t off = 0;
    for (int64_t x = 0; x < self.dim(); ++x) off += (x == d ? k : idx[x]) * self.stride(x);
    std::memcpy(dst + (i++) * w, self.data() + off * w, static_cast<size_t>(w));
    return true;
  });
  return status;
}

namespace {

// Calls run(combine) with `mode`'s combination of an old element and a new one, chosen once
// (a template argument) rather than per element.
template <typename T, typename Run>
void WithCombine(ScatterMode mode, Run&& run) {
  using C = Calc<T>;
  const auto combined = [&](auto m) {
    run([](T old, T v) {
      return Convert<T>(ScatterCombine<C>(decltype(m)::value, static_cast<C>(old),
                                          static_cast<C>(v)));
    });
  };
  switch (mode) {
    case ScatterMode::kAssign: run([](T, T v) { return v; }); break;
    case ScatterMode::kAdd: combined(std::integral_constant<ScatterMode, ScatterMode::kAdd>{}); break;
    case ScatterMode::kMultiply:
      combined(std::integral_constant<ScatterMode, ScatterMode::kMultiply>{});
      break;
    case ScatterMode::kMax: combined(std::integral_constant<ScatterMode, ScatterMode::kMax>{}); break;
    case ScatterMode::kMin: combined(std::integral_constant<ScatterMode, ScatterMode::kMin>{}); break;
  }
}

// Whether t's dims after d form one dense row-major block (of `sizes`' extents there).
bool DenseAfter(const Tensor& t, int64_t d, IntList sizes) {
  int64_t expected = 1;
  for (int64_t j = t.dim() - 1; j > d; --j) {
    if (sizes[j] != 1 && t.stride(j) != expected) return false;
    expected *= sizes[j];
  }
  return true;
}

bool ConstantAfter(const Tensor& t, int64_t d, IntList sizes) {
  for (int64_t j = t.dim() - 1; j > d; --j) {
    if (sizes[j] != 1 && t.stride(j) != 0) return false;
  }
  return true;
}

// Whether a scatter with `mode` into T gives the same result whatever the order its elements
// are combined in: max and min always (NaN wins either way; of equal values the first stays,
// and parts combine in order), sums and products of integers and bools (they wrap, and
// commute). Floating sums and products round differently in another order: they stay serial,
// in torch's order.
template <typename T>
bool OrderFree(ScatterMode mode) {
  if (mode == ScatterMode::kMax || mode == ScatterMode::kMin) return true;
  return !kIsFloat<T> && (mode == ScatterMode::kAdd || mode == ScatterMode::kMultiply);
}

// The value that `mode` combines with any v to give v (0, 1, the lowest, the highest).
template <typename T>
T CombineIdentity(ScatterMode mode) {
  using C = Calc<T>;
  switch (mode) {
    case ScatterMode::kMultiply: return Convert<T>(C{1});
    case ScatterMode::kMax:
      if constexpr (std::is_same_v<T, bool>) return false;
      else if constexpr (kIsFloat<T>) return Convert<T>(-std::numeric_limits<C>::infinity());
      else return std::numeric_limits<T>::lowest();
    case ScatterMode::kMin:
      if constexpr (std::is_same_v<T, bool>) return true;
      else if constexpr (kIsFloat<T>) return Convert<T>(std::numeric_limits<C>::infinity());
      else return std::numeric_limits<T>::max();
    default: return Convert<T>(C{0});
  }
}

// A scatter of many elements into few bins (bincount, histograms, scatter_reduce into classes)
// whose mode is order-free (above): each of the pool's threads checks and combines its share
// of the elements into bins of its own, starting from the identity; only when every index was
// in range are the bins combined into self, in order. Self ends exactly as the serial loop
// leaves it. nullopt, with nothing written, where it does not apply or its scratch cannot be
// had; else the op's status (the first bad index's error, nothing written).
template <typename T, typename Combine>
std::optional<absl::Status> CombineIntoFewBins(absl::string_view op, const Combine& combine,
                                               T identity, T* self_data, int64_t self_step,
                                               int64_t limit, const int64_t* ip,
                                               int64_t index_step, const T* from,
                                               int64_t from_step, int64_t count) {
  constexpr int64_t kMinCount = int64_t{1} << 16, kMaxBins = int64_t{1} << 16;
  const int64_t pieces = ParallelismDegree();
  if (count < kMinCount || limit > kMaxBins || pieces < 2) return std::nullopt;
  absl::StatusOr<Scratch<T>> bins = Scratch<T>::Make(pieces * limit);
  if (!bins.ok()) return std::nullopt;
  std::vector<int64_t> first_bad(static_cast<size_t>(pieces), -1);
  ParallelFor(0, pieces, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      T* mine = bins->data() + p * limit;
      std::fill(mine, mine + limit, identity);
      const int64_t i0 = count * p / pieces, i1 = count * (p + 1) / pieces;
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t k = ip[i * index_step];
        if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(limit)) {  // k < 0 or k >= limit
          first_bad[p] = i;
          break;
        }
        mine[k] = combine(mine[k], LoadElement(from + i * from_step));
      }
    }
  });
  for (int64_t p = 0; p < pieces; ++p) {  // the first bad index in order is the one named
    if (first_bad[p] >= 0) {
      return IndexOutOfBoundsForDim(op, ip[first_bad[p] * index_step], 0, limit);
    }
  }
  for (int64_t k = 0; k < limit; ++k) {
    T acc = LoadElement(self_data + k * self_step);
    for (int64_t p = 0; p < pieces; ++p) acc = combine(acc, bins->data()[p * limit + k]);
    self_data[k * self_step] = acc;
  }
  return absl::OkStatus();
}

// Whole slices along d (index_put_, index_copy_, index_add_: an int64 index constant across
// every other dim, covering self's dims after d, which are one dense block): one check per
// slice, then one combine loop per block of self and of src (dense, or one value). Returns
// false (nothing done) when the operands are not so laid out.
template <typename T>
bool ScatterSlices(absl::string_view op, const Tensor& self, int64_t d, const Tensor& index,
                   const Tensor& src, const T* fill, ScatterMode mode, absl::Status* status) {
  const int64_t rank = self.dim();
  if (rank == 0 || index.dim() != rank || index.dtype() != DType::kInt64) return false;
  if (index.numel() == 0) return false;  // nothing written and, as torch, nothing checked
  if (fill == nullptr && src.dim() != rank) return false;
  for (int64_t j = 0; j < rank; ++j) {
    if (j != d && index.size(j) != 1 && index.stride(j) != 0) return false;
    if (j > d && index.size(j) != self.size(j)) return false;
  }
  const IntList sizes = index.sizes();
  if (!DenseAfter(self, d, sizes)) return false;
  const bool dense_src = fill == nullptr && DenseAfter(src, d, sizes);
  if (fill == nullptr && !dense_src && !ConstantAfter(src, d, sizes)) return false;
  const int64_t limit = self.size(d), count = index.size(d);
  const int64_t* ip = index.data_as<int64_t>();
  if (rank == 1 && OrderFree<T>(mode)) {
    std::optional<absl::Status> combined;
    WithCombine<T>(mode, [&](auto combine) {
      combined = CombineIntoFewBins<T>(
          op, combine, CombineIdentity<T>(mode), self.data_as<T>(), self.stride(0), limit, ip,
          index.stride(0), fill != nullptr ? fill : src.data_as<T>(),
          fill != nullptr ? 0 : src.stride(0), count);
    });
    if (combined.has_value()) {
      *status = *std::move(combined);
      return true;
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = ip[i * index.stride(d)];
    if (k < 0 || k >= limit) {
      *status = IndexOutOfBoundsForDim(op, k, d, limit);
      return true;
    }
  }
  int64_t block = 1;
  for (int64_t j = d + 1; j < rank; ++j) block *= sizes[j];
  const DimVector before(sizes.begin(), sizes.begin() + d);
  const int64_t vs = dense_src ? 1 : 0;
  // Pointers and strides held in locals: a store through dst may alias any member the loop
  // would otherwise read again for every element (10 ns an element instead of 1).
  T* const self_data = self.data_as<T>();
  const T* const src_data = fill != nullptr ? nullptr : src.data_as<T>();
  const int64_t index_step = index.stride(d), self_step = self.stride(d);
  const int64_t src_step = fill != nullptr ? 0 : src.stride(d);
  const auto run = [&](auto combine) {
    ForEachIndex(before, [&](const int64_t* b) {
      int64_t self_base = 0, src_base = 0;
      for (int64_t j = 0; j < d; ++j) {
        self_base += b[j] * self.stride(j);
        if (fill == nullptr) src_base += b[j] * src.stride(j);
      }
      T* const to = self_data + self_base;
      const T* const from_base = fill != nullptr ? fill : src_data + src_base;
      if (block == 1) {  // one element per slice (histograms, bincount, scatter into bins)
        const int64_t from_step = fill != nullptr ? 0 : src_step;
        for (int64_t i = 0; i < count; ++i) {
          T* dst = to + ip[i * index_step] * self_step;
          *dst = combine(LoadElement(dst), LoadElement(from_base + i * from_step));
        }
        return true;
      }
      for (int64_t i = 0; i < count; ++i) {
        T* dst = to + ip[i * index_step] * self_step;
        const T* from = fill != nullptr ? fill : from_base + i * src_step;
        for (int64_t e = 0; e < block; ++e) {
          dst[e] = combine(LoadElement(dst + e), LoadElement(from + e * vs));
        }
      }
      return true;
    });
  };
  WithCombine<T>(mode, run);
  return true;
}

// The positions of a tensor's dims but one, walked in row-major order from any of them, with
// the element offsets of up to three tensors (self, index, src) kept up to date.
struct OuterWalk {
  int64_t rank = 0;
  int64_t sizes[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {};
  int64_t at[kMaxRank] = {};
  int64_t offset[3] = {};

  // Starts at row-major position `p`.
  void Seek(int64_t p) {
    offset[0] = offset[1] = offset[2] = 0;
    for (int64_t j = rank - 1; j >= 0; --j) {
      at[j] = p % sizes[j];
      p /= sizes[j];
      for (int t = 0; t < 3; ++t) offset[t] += at[j] * strides[t][j];
    }
  }
  void Next() {
    for (int64_t j = rank - 1; j >= 0; --j) {
      for (int t = 0; t < 3; ++t) offset[t] += strides[t][j];
      if (++at[j] < sizes[j]) return;
      for (int t = 0; t < 3; ++t) offset[t] -= at[j] * strides[t][j];
      at[j] = 0;
    }
  }
};

// A scatter along d with an int64 index of self's rank, 2 or more (scatter_add_ of pooling's
// backward, scatter_ along rows): torch's loop, for every position of index's other dims its
// elements along d in order, with those positions split over the pool's threads. Each thread
// writes elements of its own (self is non-overlapping, and two positions differ in a dim other
// than d), so every element of self sees its values combined in torch's order. Every index is checked before anything is written; the first bad one in
// index's row-major order is named. false (nothing done) where the operands do not fit.
template <typename T>
bool ScatterAlongDim(absl::string_view op, const Tensor& self, int64_t d, const Tensor& index,
                     const Tensor& src, const T* fill, ScatterMode mode, absl::Status* status) {
  const int64_t rank = self.dim();
  if (rank < 2 || index.dim() != rank || index.dtype() != DType::kInt64) return false;
  if (fill == nullptr && src.dim() != rank) return false;
  // index_put_ may scatter into an expanded view of self (torch warns and goes on): its
  // elements share memory, so they stay with the serial walk below.
  if (!self.meta().is_non_overlapping_and_dense()) return false;
  OuterWalk start;
  start.rank = rank - 1;
  int64_t outer = 1;
  for (int64_t j = 0, k = 0; j < rank; ++j) {
    if (j == d) continue;
    start.sizes[k] = index.size(j);
    start.strides[0][k] = self.stride(j);
    start.strides[1][k] = index.stride(j);
    start.strides[2][k] = fill != nullptr ? 0 : src.stride(j);
    outer *= index.size(j);
    ++k;
  }
  const int64_t inner = index.size(d), limit = self.size(d);
  if (outer == 0 || inner == 0) {  // nothing written and, as torch, nothing checked
    *status = absl::OkStatus();
    return true;
  }
  const int64_t index_step = index.stride(d), self_step = self.stride(d);
  const int64_t src_step = fill != nullptr ? 0 : src.stride(d);
  const int64_t* const ip = index.data_as<int64_t>();
  T* const self_data = self.data_as<T>();
  const T* const src_data = fill != nullptr ? fill : src.data_as<T>();
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / inner);
  std::atomic<bool> any_bad{false};
  ParallelFor(0, outer, grain, [&](int64_t p0, int64_t p1) {
    OuterWalk w = start;
    w.Seek(p0);
    bool bad = false;
    for (int64_t p = p0; p < p1; ++p, w.Next()) {
      const int64_t* k = ip + w.offset[1];
      for (int64_t j = 0; j < inner; ++j) {
        bad |= static_cast<uint64_t>(k[j * index_step]) >= static_cast<uint64_t>(limit);
      }
    }
    if (bad) any_bad.store(true, std::memory_order_relaxed);
  });
  if (any_bad.load()) {
    ForEachIndex(index.sizes(), [&](const int64_t* idx) {
      const int64_t k = ip[OffsetOf(index, idx)];
      if (k < 0 || k >= limit) {
        *status = IndexOutOfBoundsForDim(op, k, d, limit);
        return false;
      }
      return true;
    });
    return true;
  }
  WithCombine<T>(mode, [&](auto combine) {
    ParallelFor(0, outer, grain, [&](int64_t p0, int64_t p1) {
      OuterWalk w = start;
      w.Seek(p0);
      for (int64_t p = p0; p < p1; ++p, w.Next()) {
        const int64_t* const k = ip + w.offset[1];
        T* const to = self_data + w.offset[0];
        const T* const from = src_data + w.offset[2];
        for (int64_t j = 0; j < inner; ++j) {
          T* const dst = to + k[j * index_step] * self_step;
          *dst = combine(LoadElement(dst), LoadElement(from + j * src_step));
        }
      }
    });
  });
  *status = absl::OkStatus();
  return true;
}

}  // namespace

absl::Status Scatter(absl::string_view op, const Tensor& self, int64_t d, const Tensor& index,
                     const Tensor& src, const Scalar* value, ScatterMode mode) {
  {
    absl::Status status;
    bool done = false;
    DispatchDType(self.dtype(), [&](auto t) {
      using T = decltype(t);
      T fill{};
      if (value != nullptr) {
        const uint64_t bits = FillPattern(self.dtype(), *value);
        std::memcpy(&fill, &bits, sizeof(T));
      }
      const T* const fill_ptr = value != nullptr ? &fill : nullptr;
      done = ScatterSlices<T>(op, self, d, index, src, fill_ptr, mode, &status) ||
             ScatterAlongDim<T>(op, self, d, index, src, fill_ptr, mode, &status);
    });
    if (done) return status;
  }
  const int64_t limit = self.dim() == 0 ? 1 : self.size(d);
  // Every index is checked before anything is written.
  absl::Status status;
  if (index.dim() == 1 && index.dtype() == DType::kInt64) {
    const int64_t* ip = index.data_as<int64_t>();
    const int64_t n = index.numel(), is = index.stride(0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = ip[i * is];
      if (k < 0 || k >= limit) return IndexOutOfBoundsForDim(op, k, d, limit);
    }
  } else {
    ForEachIndex(index.sizes(), [&](const int64_t* idx) {
      const int64_t k = IndexAt(index, OffsetOf(index, idx));
      if (k < 0 || k >= limit) {  // torch's scatter takes no negative indices
        status = IndexOutOfBoundsForDim(op, k, d, limit);
        return false;
      }
      return true;
    });
  }
  if (!status.ok()) return status;
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    using C = Calc<T>;
    T fill{};
    if (value != nullptr) {
      const uint64_t bits = FillPattern(self.dtype(), *value);
      std::memcpy(&fill, &bits, sizeof(T));
    }
    if (index.dim() == 1 && self.dim() <= 1) {
      // The common 1-d case (histograms, bincount, index_add of vectors, scatter_reduce into
      // bins): plain strided loops, the combination chosen once per piece rather than per
      // element by the general walk below.
      const int64_t n = index.numel(), is = index.stride(0);
      const int64_t ss = self.dim() == 0 ? 0 : self.stride(0);
      const int64_t vs = value != nullptr || src.dim() == 0 ? 0 : src.stride(0);
      T* base = self.data_as<T>();
      const T* from = value != nullptr ? &fill : src.data_as<T>();
      const int64_t* wide = index.dtype() == DType::kInt64 ? index.data_as<int64_t>() : nullptr;
      constexpr int64_t kPiece = int64_t{1} << 20;
      const auto run = [&](auto combine) {
        for (int64_t i0 = 0; i0 < n; i0 += kPiece) {
          const int64_t i1 = std::min(n, i0 + kPiece);
          for (int64_t i = i0; i < i1; ++i) {
            T* dst = base + (wide ? wide[i * is] : IndexAt(index, i * is)) * ss;
            *dst = combine(LoadElement(dst), LoadElement(from + i * vs));
          }
          if (i1 < n) Executor::YieldToWaiting();
        }
      };
      WithCombine<T>(mode, run);
      return;
    }
    ForEachIndex(index.sizes(), [&](const int64_t* idx) {
      const int64_t k = IndexAt(index, OffsetOf(index, idx));
      int64_t off = 0;
      for (int64_t x = 0; x < self.dim(); ++x) off += (x == d ? k : idx[x]) * self.stride(x);
      T* dst = self.data_as<T>() + off;
      const T v = value != nullptr ? fill : LoadElement(src.data_as<T>() + OffsetOf(src, idx));
      *dst = mode == ScatterMode::kAssign
                 ? v
                 : Convert<T>(ScatterCombine<C>(mode, LoadCalc(dst), static_cast<C>(v)));
      return true;
    });
  });
  return absl::OkStatus();
}

absl::Status CheckIndexBounds(absl::string_view op, const Tensor& index, int64_t dim,
                              int64_t size) {
  const int64_t n = index.numel();
  // Row-major: the first bad index is the one named.
  if (index.is_contiguous()) {
    const IndexReader at(index, /*flat=*/true);
    if (const int64_t bad = FirstIndexOutside(at, n, -size, size); bad >= 0) {
      return IndexOutOfBoundsForDim(op, at(bad), dim, size);
    }
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = IndexAt(index, RowMajorOffset(index, i));
    if (k < -size || k >= size) return IndexOutOfBoundsForDim(op, k, dim, size);
  }
  return absl::OkStatus();
}

absl::Status Take(const Tensor& out, const Tensor& self, const Tensor& index) {
  const int64_t n = self.numel();
  if (index.numel() > 0 && n == 0) {
    return IndexError("take", "cannot take from an empty tensor");
  }
  const int64_t w = self.itemsize();
  const bool contiguous = self.is_contiguous();
  const auto out_of_range = [&](int64_t k) {
    return IndexError("take", absl::StrCat("out of range: tried to access index ", k,
                                           " on a tensor of ", n, " elements."));
  };
  if (contiguous && index.is_contiguous()) {
    // Flat positions into flat memory: checked, then gathered as typed loads and stores.
    const int64_t count = index.numel();
    const IndexReader at(index, /*flat=*/true);
    int64_t bad = -1;
    if (WithElementBits(w, [&](auto u) {
          using U = decltype(u);
          bad = GatherChecked<U>(at, count, -n, n, n, reinterpret_cast<const U*>(self.data()), 1,
                                 reinterpret_cast<U*>(out.data()), 1);
        })) {
      return bad >= 0 ? out_of_range(at(bad)) : absl::OkStatus();
    }
  }
  char* to = out.data();
  int64_t i = 0;
  absl::Status status;
  ForEachIndex(index.sizes(), [&](const int64_t* idx) {
    int64_t k = IndexAt(index, OffsetOf(index, idx));
    if (k < -n || k >= n) {
      status = out_of_range(k);
      return false;
    }
    if (k < 0) k += n;
    const int64_t off = contiguous ? k : RowMajorOffset(self, k);
    std::memcpy(to + (i++) * w, self.data() + off * w, static_cast<size_t>(w));
    return true;
  });
  return status;
}

absl::Status Put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  const int64_t n = self.numel();
  const int64_t count = index.numel();
  // Every index is checked before anything is written.
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = IndexAt(index, RowMajorOffset(index, i));
    if (k < -n || k >= n) {
      return IndexError("put_", absl::StrCat("out of range: tried to access index ", k,
                                             " on a tensor of ", n, " elements."));
    }
  }
  const int64_t w = self.itemsize();
  const bool contiguous = self.is_contiguous();
  // The i-th (row-major) index and source element, and where it goes in self.
  const auto target = [&](int64_t i) {
    int64_t k = IndexAt(index, RowMajorOffset(index, i));
    if (k < 0) k += n;
    return contiguous ? k : RowMajorOffset(self, k);
  };
  if (!accumulate) {
    for (int64_t i = 0; i < count; ++i) {
      std::memcpy(self.data() + target(i) * w, source.data() + RowMajorOffset(source, i) * w,
                  static_cast<size_t>(w));
    }
    return absl::OkStatus();
  }
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    using C = Calc<T>;
    for (int64_t i = 0; i < count; ++i) {
      T& d = self.data_as<T>()[target(i)];
      const T v = LoadElement(source.data_as<T>() + RowMajorOffset(source, i));
      d = Convert<T>(LoadCalc(&d) + static_cast<C>(v));
    }
  });
  return absl::OkStatus();
}

// A contiguous bool tensor (a mask, the usual input of these three): its bytes, read in order.
const uint8_t* ContiguousFlags(const Tensor& t) {
  return t.dtype() == DType::kBool && t.is_contiguous()
             ? reinterpret_cast<const uint8_t*>(t.data())
             : nullptr;
}

// Runs fn(begin, end) over [0, n) in pieces of ForEachIndex's size, yielding between them as
// it does; stops early when fn returns false or the stream is cancelled.
template <typename Fn>
void InPieces(int64_t n, Fn&& fn) {
  constexpr int64_t kPiece = int64_t{1} << 20;
  for (int64_t begin = 0; begin < n; begin += kPiece) {
    const int64_t end = std::min(n, begin + kPiece);
    if (!fn(begin, end)) return;
    if (end < n) {
      Executor::YieldToWaiting();
      if (ExecContext::CancelRequested()) return;
    }
  }
}

int64_t CountNonzero(const Tensor& self) {
  if (const uint8_t* flags = ContiguousFlags(self)) {
    int64_t count = 0;
    InPieces(self.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) count += flags[i] != 0;
      return true;
    });
    return count;
  }
  int64_t count = 0;
  ForEachIndex(self.sizes(), [&](const int64_t* idx) {
    count += IsNonzero(self.dtype(), self.data() + OffsetOf(self, idx) * self.itemsize());
    return true;
  });
  return count;
}

void NonzeroIndices(const Tensor& self, const Tensor& out) {
  const int64_t nd = self.dim();
  const int64_t count = out.dim() == 2 ? out.size(1) : 0;
  int64_t* o = out.data_as<int64_t>();
  int64_t i = 0;
  if (const uint8_t* flags = ContiguousFlags(self)) {
    InPieces(self.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t at = begin; at < end && i < count; ++at) {
        if (flags[at] == 0) continue;
        int64_t rest = at;  // the row-major multi-index of `at`
        for (int64_t d = nd - 1; d >= 0; --d) {
          o[d * count + i] = rest % self.size(d);
          rest /= self.size(d);
        }
        ++i;
      }
      return i < count;
    });
    return;
  }
  ForEachIndex(self.sizes(), [&](const int64_t* idx) {
    if (IsNonzero(self.dtype(), self.data() + OffsetOf(self, idx) * self.itemsize())) {
      for (int64_t d = 0; d < nd; ++d) o[d * count + i] = idx[d];
      ++i;
    }
    return i < count;
  });
}

void MaskedSelect(const Tensor& out, const Tensor& self, const Tensor& mask) {
  const int64_t w = self.itemsize();
  const int64_t count = out.numel();
  int64_t i = 0;
  const uint8_t* flags = ContiguousFlags(mask);
  if (flags != nullptr && self.is_contiguous()) {
    const char* from = self.data();
    char* to = out.data();
    InPieces(mask.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t at = begin; at < end && i < count; ++at) {
        if (flags[at] != 0) std::memcpy(to + (i++) * w, from + at * w, static_cast<size_t>(w));
      }
      return i < count;
    });
    return;
  }
  ForEachIndex(mask.sizes(), [&](const int64_t* idx) {
    if (LoadElement(reinterpret_cast<const bool*>(mask.data()) + OffsetOf(mask, idx))) {
      std::memcpy(out.data() + (i++) * w, self.data() + OffsetOf(self, idx) * w,
                  static_cast<size_t>(w));
    }
    return i < count;
  });
}

}  // namespace tensord::engine::cpu
