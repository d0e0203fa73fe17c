#include "engine/cpu/sort_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "engine/core/dtype.h"
#include "engine/cpu/scratch.h"
#include "engine/kernels/element_math.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {
namespace {

template <typename C>
bool IsNan(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

// Strict orders with NaN above every number (NaNs equal among themselves): `Before(a, b)` is
// whether a comes first.
template <typename C>
struct Ascending {
  static constexpr bool kLargestFirst = false;
  bool operator()(C a, C b) const { return !IsNan(a) && (IsNan(b) || a < b); }
};
template <typename C>
struct Descending {
  static constexpr bool kLargestFirst = true;
  bool operator()(C a, C b) const { return !IsNan(b) && (IsNan(a) || a > b); }
};

// The slices along `dim`: their count, and for slice s the element offsets (in elements) of
// its first element in each of the given tensors.
class Slices {
 public:
  Slices(const Tensor& shape_of, int64_t dim) {
    for (int64_t d = 0; d < shape_of.dim(); ++d) {
      if (d != dim) sizes_.push_back(shape_of.size(d));
    }
    dim_ = dim;
  }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t s : sizes_) n *= s;
    return n;
  }
  int64_t Offset(const Tensor& t, int64_t s) const {
    int64_t offset = 0;
    int64_t j = static_cast<int64_t>(sizes_.size()) - 1;
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      if (d == dim_) continue;
      offset += (s % sizes_[j]) * t.stride(d);
      s /= sizes_[j];
      --j;
    }
    return offset;
  }

 private:
  std::vector<int64_t> sizes_;
  int64_t dim_ = 0;
};

int64_t StrideAlong(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.stride(dim); }
int64_t SizeAlong(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.size(dim); }

// Up to this k, topk keeps its best k in a sorted buffer while it reads the slice once: most
// elements are turned away, 16 at a time, by one vector comparison with the k-th best so far.
constexpr int64_t kSmallK = 64;
constexpr int64_t kBlock = 16;

typedef float Floats4 __attribute__((vector_size(16)));
typedef double Doubles2 __attribute__((vector_size(16)));
typedef int32_t Ints4 __attribute__((vector_size(16)));
typedef int64_t Longs2 __attribute__((vector_size(16)));

// Whether any of keys[i..i + kBlock) comes before `kth` (a number, not NaN) under Order.
template <typename Order, typename C>
bool AnyBeats(const C* keys, int64_t i, C kth) {
  if constexpr (std::is_same_v<C, float> || std::is_same_v<C, double>) {
    using V = std::conditional_t<std::is_same_v<C, float>, Floats4, Doubles2>;
    using M = std::conditional_t<std::is_same_v<C, float>, Ints4, Longs2>;
    constexpr int64_t kPer = 16 / sizeof(C);
    M any = {};
    for (int64_t j = 0; j < kBlock; j += kPer) {
      V v;
      std::memcpy(&v, keys + i + j, sizeof v);
      if constexpr (Order::kLargestFirst) {
        any |= ~(v <= kth);  // a NaN comes first too
      } else {
        any |= v < kth;  // a NaN never does
      }
    }
    Longs2 words;
    std::memcpy(&words, &any, sizeof words);
    return (words[0] | words[1]) != 0;
  } else {
    bool any = false;
    for (int64_t j = 0; j < kBlock; ++j) any |= Order()(keys[i + j], kth);
    return any;
  }
}

// first[0..k) = the positions of the first k of keys[0..n) under `order`, ties in position
// order (as by_key in SortSlices), k < n.
template <typename C, typename Order>
void SmallestK(const C* keys, int64_t n, int64_t k, Order order, int64_t* first) {
  int64_t have = 0;
  // A later equal key never displaces an earlier one: only a strictly better key enters.
  const auto offer = [&](int64_t i) {
    const C key = keys[i];
    if (have == k && !order(key, keys[first[k - 1]])) return;
    int64_t p = have == k ? k - 1 : have;
    while (p > 0 && order(key, keys[first[p - 1]])) {
      first[p] = first[p - 1];
      --p;
    }
    first[p] = i;
    if (have < k) ++have;
  };
  int64_t i = 0;
  for (; i < n && have < k; ++i) offer(i);
  for (; i + kBlock <= n; i += kBlock) {
    const C kth = keys[first[k - 1]];
    if (!IsNan(kth) && !AnyBeats<Order>(keys, i, kth)) continue;
    for (int64_t j = i; j < i + kBlock; ++j) offer(j);
  }
  for (; i < n; ++i) offer(i);
}

// The two's-complement bits of a signed integer type's lowest value, sign-extended to 64 bits.
template <typename T>
constexpr uint64_t kLowestBits =
    static_cast<uint64_t>(static_cast<int64_t>(std::numeric_limits<T>::lowest()));

// An unsigned key whose ascending order is `Order`'s: NaN after every number (before, for a
// descending order), -0 equal to 0, integers by value. Sorting these keys stably sorts the
// slice as by_key in SortSlices does. A signed integer's key is its distance from T's lowest
// value, so that only T's own bytes vary among keys (sign-extended, an int32's -1 and 1 would
// differ in all eight bytes: eight radix passes instead of four).
template <typename T, typename Order, typename C = Calc<T>>
uint64_t RadixKey(C x) {
  uint64_t u;
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(x)) {
      u = sizeof(C) == 8 ? ~uint64_t{0} : uint64_t{0xFFFFFFFFu};
    } else {
      if (x == 0) x = 0;  // -0 sorts with 0
      if constexpr (sizeof(C) == 8) {
        uint64_t b;
        std::memcpy(&b, &x, sizeof b);
        u = (b >> 63) != 0 ? ~b : (b | (uint64_t{1} << 63));
      } else {
        uint32_t b;
        std::memcpy(&b, &x, sizeof b);
        u = (b >> 31) != 0 ? static_cast<uint32_t>(~b) : (b | 0x80000000u);
      }
    }
  } else if constexpr (std::is_same_v<C, bool>) {
    u = x ? 1 : 0;
  } else if constexpr (std::is_signed_v<C>) {
    u = static_cast<uint64_t>(static_cast<int64_t>(x)) - kLowestBits<T>;
  } else {
    u = static_cast<uint64_t>(x);
  }
  return Order::kLargestFirst ? ~u : u;
}

// RadixKey's inverse where it has one: the value whose key is u, or false for the keys of
// several values (0 and -0; NaNs), whose value the caller reads from the slice itself.
template <typename T, typename Order, typename C = Calc<T>>
bool FromRadixKey(uint64_t u, C* x) {
  if (Order::kLargestFirst) u = ~u;
  if constexpr (std::is_floating_point_v<C>) {
    if constexpr (sizeof(C) == 8) {
      const uint64_t b = (u >> 63) != 0 ? (u & ~(uint64_t{1} << 63)) : ~u;
      std::memcpy(x, &b, sizeof b);
    } else {
      const uint32_t k = static_cast<uint32_t>(u);
      const uint32_t b = (k >> 31) != 0 ? (k & 0x7FFFFFFFu) : ~k;
      std::memcpy(x, &b, sizeof b);
    }
    return *x != 0 && !std::isnan(*x);
  } else if constexpr (std::is_same_v<C, bool>) {
    *x = u != 0;
    return true;
  } else if constexpr (std::is_signed_v<C>) {
    *x = static_cast<C>(static_cast<int64_t>(u + kLowestBits<T>));
    return true;
  } else {
    *x = static_cast<C>(u);
    return true;
  }
}

// A stable LSD radix sort of n (key, position) pairs by key, one pass per byte that varies
// among the keys (two for a million values below 65536): what a full sort of a slice runs,
// rather than a comparison sort through an index (n log n random reads of the keys). One read
// counts every byte's histogram; `key`/`at` end sorted (the buffers swapped as passes run).
void RadixSortPairs(int64_t n, Scratch<uint64_t>& key, Scratch<int64_t>& at,
                    Scratch<uint64_t>& key_tmp, Scratch<int64_t>& at_tmp) {
  int64_t count[8][256] = {};
  const uint64_t* k = key.data();
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t x = k[i];
    for (int b = 0; b < 8; ++b) ++count[b][(x >> (8 * b)) & 0xFF];
  }
  for (int b = 0; b < 8; ++b) {
    const int64_t* c = count[b];
    if (std::any_of(c, c + 256, [n](int64_t m) { return m == n; })) continue;  // one value
    int64_t start[256];
    int64_t sum = 0;
    for (int v = 0; v < 256; ++v) start[v] = sum, sum += c[v];
    const int shift = 8 * b;
    const uint64_t* from_key = key.data();
    const int64_t* from_at = at.data();
    uint64_t* to_key = key_tmp.data();
    int64_t* to_at = at_tmp.data();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t to = start[(from_key[i] >> shift) & 0xFF]++;
      to_key[to] = from_key[i];
      to_at[to] = from_at[i];
    }
    key.swap(key_tmp);
    at.swap(at_tmp);
  }
}

// Below this many elements a slice is sorted by comparisons.
constexpr int64_t kRadixFrom = 256;

template <typename T, typename Order>
absl::Status SortSlices(const Tensor& self, int64_t dim, const Tensor& values,
                        const Tensor& indices, int64_t k, Order order) {
  using C = Calc<T>;
  const int64_t n = SizeAlong(self, dim);
  // The outputs have self's sizes but along `dim`: the same slices, each at its own offsets.
  const Slices slices(self, dim);
  const int64_t in_step = StrideAlong(self, dim);
  const int64_t v_step = StrideAlong(values, dim);
  const int64_t i_step = StrideAlong(indices, dim);
  const T* in = reinterpret_cast<const T*>(self.data());
  T* vo = reinterpret_cast<T*>(values.data());
  int64_t* io = reinterpret_cast<int64_t*>(indices.data());
  // Parallel pieces of about 64k elements, each with its own scratch (back to the pool with
  // the piece).
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(n, 1));
  const bool radix = k == n && n >= kRadixFrom;
  absl::Mutex mu;
  absl::Status failed;
  ParallelFor(0, slices.count(), grain, [&](int64_t begin, int64_t end) {
    absl::StatusOr<Scratch<C>> keys = Scratch<C>::Make(radix ? 0 : n);
    absl::StatusOr<Scratch<int64_t>> order_of = Scratch<int64_t>::Make(n);
    absl::StatusOr<Scratch<uint64_t>> ukeys = Scratch<uint64_t>::Make(radix ? n : 0);
    absl::StatusOr<Scratch<uint64_t>> ukeys_tmp = Scratch<uint64_t>::Make(radix ? n : 0);
    absl::StatusOr<Scratch<int64_t>> order_tmp = Scratch<int64_t>::Make(radix ? n : 0);
    for (const absl::Status& s : {keys.status(), order_of.status(), ukeys.status(),
                                  ukeys_tmp.status(), order_tmp.status()}) {
      if (!s.ok()) {
        absl::MutexLock lock(&mu);
        failed.Update(s);
        return;
      }
    }
    const Scratch<C>& key_of = *keys;
    // Equal keys keep their index order (stable for sort; for topk a fixed choice among ties,
    // the same on every device).
    const auto by_key = [&](int64_t a, int64_t b) {
      return order(key_of[a], key_of[b]) || (!order(key_of[b], key_of[a]) && a < b);
    };
    for (int64_t s = begin; s < end; ++s) {
      const T* src = in + slices.Offset(self, s);
      T* v = vo + slices.Offset(values, s);
      int64_t* ix = io + slices.Offset(indices, s);
      if (radix) {
        uint64_t* u = ukeys->data();
        int64_t* at = order_of->data();
        for (int64_t i = 0; i < n; ++i) {
          u[i] = RadixKey<T, Order>(LoadCalc(src + i * in_step));
          at[i] = i;
        }
        RadixSortPairs(n, *ukeys, *order_of, *ukeys_tmp, *order_tmp);
        // The values come back from their keys; only 0 and NaN are read from the slice (at
        // random positions, as a gather through the order would read every one).
        u = ukeys->data();
        at = order_of->data();
        for (int64_t i = 0; i < n; ++i) {
          C x;
          v[i * v_step] =
              FromRadixKey<T, Order>(u[i], &x) ? Convert<T>(x) : LoadElement(src + at[i] * in_step);
          ix[i * i_step] = at[i];
        }
        continue;
      }
      for (int64_t i = 0; i < n; ++i) (*keys)[i] = LoadCalc(src + i * in_step);
      int64_t* first = order_of->data();
      if (k <= kSmallK && k < n) {  // one pass, keeping the best k in order
        SmallestK(key_of.data(), n, k, order, first);
      } else {
        std::iota(first, first + n, int64_t{0});
        if (k < n) {
          std::partial_sort(first, first + k, first + n, by_key);
        } else {
          std::sort(first, first + n, by_key);  // a total order: stable
        }
      }
      for (int64_t i = 0; i < k; ++i) {
        v[i * v_step] = LoadElement(src + first[i] * in_step);
        ix[i * i_step] = first[i];
      }
    }
  });
  return failed;
}

// The first k of every slice in ascending (or descending) order: sort is k = n.
absl::Status FirstK(const Tensor& self, int64_t k, int64_t dim, bool descending,
                    const Tensor& values, const Tensor& indices) {
  if (self.numel() == 0 || k == 0) return absl::OkStatus();
  absl::Status status;
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    using C = Calc<T>;
    status = descending ? SortSlices<T>(self, dim, values, indices, k, Descending<C>())
                        : SortSlices<T>(self, dim, values, indices, k, Ascending<C>());
  });
  return status;
}

}  // namespace

absl::Status Sort(const Tensor& self, int64_t dim, bool descending, const Tensor& values,
                  const Tensor& indices) {
  return FirstK(self, SizeAlong(self, dim), dim, descending, values, indices);
}

absl::Status TopK(const Tensor& self, int64_t k, int64_t dim, bool largest, const Tensor& values,
                  const Tensor& indices) {
  return FirstK(self, k, dim, largest, values, indices);
}

void SearchSorted(const SearchSortedCall& call) {
  DispatchDType(call.dtype, [&](auto t) {
    using T = decltype(t);
    using C = Calc<T>;
    const T* seq = reinterpret_cast<const T*>(call.sequence);
    const T* values = reinterpret_cast<const T*>(call.values);
    ParallelFor(0, call.count, 2048, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T* row = call.one_row ? seq : seq + (i / call.per_row) * call.length;
        const C v = LoadCalc(values + i);
        const int64_t pos = SearchPosition<C>(row, call.length, v, call.right);
        if (call.out_dtype == DType::kInt32) {
          reinterpret_cast<int32_t*>(call.out)[i] = static_cast<int32_t>(pos);
        } else {
          reinterpret_cast<int64_t*>(call.out)[i] = pos;
        }
      }
    });
  });
}

}  // namespace tensord::engine::cpu
