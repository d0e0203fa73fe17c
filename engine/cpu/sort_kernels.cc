#include "engine/cpu/sort_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <new>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
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

// HeapSelect passes over blocks of this many elements at a time, none of which enters.
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

// The two's-complement bits of a signed integer type's lowest value, sign-extended to 64 bits.
template <typename T>
constexpr uint64_t kLowestBits =
    static_cast<uint64_t>(static_cast<int64_t>(std::numeric_limits<T>::lowest()));

// An unsigned key whose ascending order is `Order`'s: NaN after every number (before, for a
// descending order), -0 equal to 0, integers by value. Sorting these keys stably sorts the
// slice stably under Order. A signed integer's key is its distance from T's lowest
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

using ByteCounts = int64_t[8][256];

// count[b][v] = how many of the n keys have byte b equal to v.
void CountBytes(const uint64_t* k, int64_t n, ByteCounts& count) {
  for (int b = 0; b < 8; ++b) std::fill(count[b], count[b] + 256, int64_t{0});
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t x = k[i];
    for (int b = 0; b < 8; ++b) ++count[b][(x >> (8 * b)) & 0xFF];
  }
}

// Whether the keys' byte counts leave fewer possible keys than there are keys: then two of
// them are equal (as for most slices of small integers), known before any sorting pass.
bool MustTie(const ByteCounts& count, int64_t n) {
  int64_t possible = 1;
  for (int b = 0; b < 8 && possible < n; ++b) {
    const int64_t seen = std::count_if(count[b], count[b] + 256, [](int64_t m) { return m > 0; });
    possible = std::min(n, possible * seen);  // at most n * 256: no overflow
  }
  return possible < n;
}

// A stable LSD radix sort of n (key, position) pairs by key, one pass per byte that varies
// among the keys (two for a million values below 65536): what a full sort of a slice runs,
// rather than a comparison sort through an index (n log n random reads of the keys). `count`
// is the keys' CountBytes (one read); `key`/`at` end sorted (the buffers swapped as passes run).
void RadixSortPairs(int64_t n, const ByteCounts& count, Scratch<uint64_t>& key,
                    Scratch<int64_t>& at, Scratch<uint64_t>& key_tmp, Scratch<int64_t>& at_tmp) {
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

// ---- Ties where torch's CPU kernels leave them ----
//
// Where elements tie, torch 1.13's indices are wherever its algorithms leave them: sort
// (stable=False) runs std::sort over (value, index) pairs comparing values only; topk
// std::partial_sort when k * 64 <= n, else std::nth_element to the k-th then std::sort of the
// k - 1 before it; kthvalue Sedgewick's median-of-three quickselect. Run here on the same
// pairs with the same comparisons (the orders above are torch's comparators) and the same
// standard library, they leave ties in the same places. A whole-slice sort runs a radix sort
// first: where no two elements tie, every correct sort gives the same answer.

// What a slice's selection must reproduce.
enum class Mode {
  kStable,         // sort(stable=True): ties in index order
  kSort,           // sort(stable=False)
  kTopK,           // topk(sorted=True)
  kTopKUnsorted,   // topk(sorted=False)
  kKthLast,        // kthvalue: the k smallest, the k-th last
};

template <typename C>
struct KeyAt {  // a (value, index) pair, trivially copyable for Scratch
  C key;
  int64_t at;
};

template <typename C, typename Order>
struct ByKey {  // torch's comparators look at values only
  Order order;
  bool operator()(const KeyAt<C>& a, const KeyAt<C>& b) const { return order(a.key, b.key); }
};

// ATen's quick_select_template (Sorting.cpp): p[k] ends where a sort would put it, p[0..k)
// before it. `after(x, y)`: x sorts after y ("gt_or_nan").
template <typename C, typename Order>
void QuickSelect(KeyAt<C>* p, int64_t n, int64_t k, Order order) {
  const auto after = [&](C x, C y) { return order(y, x); };
  int64_t lo = 0;
  int64_t hi = n - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (after(p[lo].key, p[hi].key)) std::swap(p[lo], p[hi]);
      return;
    }
    // The median of three as pivot, at lo; p[lo + 1] <= pivot <= p[hi] bound the scans.
    std::swap(p[(lo + hi) >> 1], p[lo + 1]);
    if (after(p[lo + 1].key, p[hi].key)) std::swap(p[lo + 1], p[hi]);
    if (after(p[lo].key, p[hi].key)) std::swap(p[lo], p[hi]);
    if (after(p[lo + 1].key, p[lo].key)) std::swap(p[lo + 1], p[lo]);
    const C pivot = p[lo].key;
    int64_t i = lo + 1;
    int64_t j = hi;
    while (true) {
      do ++i; while (after(pivot, p[i].key));
      do --j; while (after(p[j].key, pivot));
      if (j < i) break;
      std::swap(p[i], p[j]);
    }
    std::swap(p[lo], p[j]);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

// std::sort as libstdc++ runs it (introsort: the median of three as pivot, Hoare's partition,
// a depth limit of 2 log2 n past which a range is heap sorted, ranges of at most 16 left to one
// last insertion sort), replayed so that the ranges partitions leave apart can be sorted on
// several threads: each is sorted as the one thread would have, so ties end where torch's
// std::sort leaves them. The last insertion sort never moves an element past an equal one nor
// out of its range (the ranges are partitioned), so it is a stable sort of each range: what
// std::sort does to a range of at most 16 elements.
constexpr int64_t kInsertionSortUpTo = 16;  // libstdc++'s _S_threshold
constexpr int64_t kParallelSortFrom = int64_t{1} << 16;

// __unguarded_partition_pivot: the median of first[1], the middle and the last moved to
// first[0], the rest partitioned around it; returns where the second part starts.
template <typename It, typename Comp>
It PartitionAroundMedian(It first, It last, Comp comp) {
  const It a = first + 1;
  const It b = first + (last - first) / 2;
  const It c = last - 1;
  if (comp(*a, *b)) {
    if (comp(*b, *c)) {
      std::iter_swap(first, b);
    } else if (comp(*a, *c)) {
      std::iter_swap(first, c);
    } else {
      std::iter_swap(first, a);
    }
  } else if (comp(*a, *c)) {
    std::iter_swap(first, a);
  } else if (comp(*b, *c)) {
    std::iter_swap(first, c);
  } else {
    std::iter_swap(first, b);
  }
  It lo = first + 1;
  It hi = last;
  while (true) {
    while (comp(*lo, *first)) ++lo;
    --hi;
    while (comp(*first, *hi)) --hi;
    if (!(lo < hi)) return lo;
    std::iter_swap(lo, hi);
    ++lo;
  }
}

// __introsort_loop over [first, last) with `depth` partitions left, then the insertion sort.
template <typename It, typename Comp>
void IntroSort(It first, It last, int64_t depth, Comp comp) {
  while (last - first > kInsertionSortUpTo) {
    if (depth == 0) {
      std::partial_sort(first, last, last, comp);
      return;
    }
    --depth;
    const It cut = PartitionAroundMedian(first, last, comp);
    IntroSort(cut, last, depth, comp);
    last = cut;
  }
  std::sort(first, last, comp);  // at most 16 elements: libstdc++'s insertion sort
}

template <typename E, typename Comp>
void SortLikeStd(E* p, int64_t n, Comp comp) {
  if (n <= 1) return;
  const int64_t depth = 2 * (63 - __builtin_clzll(static_cast<unsigned long long>(n)));
  if (n < kParallelSortFrom || ParallelismDegree() == 1) {
    IntroSort(p, p + n, depth, comp);
    return;
  }
  // The first partitions on this thread, until the ranges are small enough to share out.
  struct Range {
    int64_t begin, end, depth;
  };
  std::vector<Range> ranges;
  std::vector<Range> pending = {{0, n, depth}};
  const int64_t share = std::max<int64_t>(n / (4 * ParallelismDegree()), kInsertionSortUpTo);
  while (!pending.empty()) {
    Range r = pending.back();
    pending.pop_back();
    while (r.end - r.begin > share && r.depth > 0) {
      const int64_t cut = PartitionAroundMedian(p + r.begin, p + r.end, comp) - p;
      --r.depth;
      pending.push_back({cut, r.end, r.depth});
      r.end = cut;
    }
    ranges.push_back(r);
  }
  ParallelFor(0, static_cast<int64_t>(ranges.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      IntroSort(p + ranges[i].begin, p + ranges[i].end, ranges[i].depth, comp);
    }
  });
}

// p[0..n) (index order on entry) rearranged as torch's kernel for `mode` leaves them; the
// answer is p[0..k). A topk that TopKByHeap answers goes to HeapSelect instead.
template <typename C, typename Order>
void AsTorch(KeyAt<C>* p, int64_t n, int64_t k, Mode mode, Order order) {
  const ByKey<C, Order> by_key{order};
  switch (mode) {
    case Mode::kStable:
      std::stable_sort(p, p + n, by_key);
      return;
    case Mode::kSort:
      SortLikeStd(p, n, by_key);
      return;
    case Mode::kTopK:
    case Mode::kTopKUnsorted:  // where !TopKByHeap(k, n)
      std::nth_element(p, p + k - 1, p + n, by_key);
      if (mode == Mode::kTopK) SortLikeStd(p, k - 1, by_key);
      return;
    case Mode::kKthLast:
      QuickSelect(p, n, k - 1, order);
      return;
  }
}

// torch's topk where k * 64 <= n: std::partial_sort, as libstdc++ runs it (__heap_select
// over a heap of the first k, then sort_heap), replayed on the keys: an element that beats the
// heap's top replaces it and sifts down exactly as __pop_heap / __adjust_heap move it, so ties
// end where torch's end; a block of kBlock elements none of which beats the top is passed by
// one vector test, the pairs of elements that never enter never made. heap[0..k) ends sorted.
template <typename C, typename Order>
void HeapSelect(const C* keys, int64_t n, int64_t k, Order order, KeyAt<C>* heap) {
  const ByKey<C, Order> comp{order};
  for (int64_t i = 0; i < k; ++i) heap[i] = {keys[i], i};
  std::make_heap(heap, heap + k, comp);
  const auto enter = [&](int64_t i) {
    const KeyAt<C> value{keys[i], i};
    int64_t hole = 0;
    int64_t child = 0;
    while (child < (k - 1) / 2) {
      child = 2 * (child + 1);
      if (comp(heap[child], heap[child - 1])) --child;
      heap[hole] = heap[child];
      hole = child;
    }
    if ((k & 1) == 0 && child == (k - 2) / 2) {
      child = 2 * (child + 1);
      heap[hole] = heap[child - 1];
      hole = child - 1;
    }
    for (int64_t parent = (hole - 1) / 2; hole > 0 && comp(heap[parent], value);
         parent = (hole - 1) / 2) {
      heap[hole] = heap[parent];
      hole = parent;
    }
    heap[hole] = value;
  };
  int64_t i = k;
  for (; i + kBlock <= n; i += kBlock) {
    const C top = heap[0].key;
    if (!IsNan(top) && !AnyBeats<Order>(keys, i, top)) continue;
    for (int64_t j = i; j < i + kBlock; ++j) {
      if (order(keys[j], heap[0].key)) enter(j);
    }
  }
  for (; i < n; ++i) {
    if (order(keys[i], heap[0].key)) enter(i);
  }
  std::sort_heap(heap, heap + k, comp);
}

// Whether torch's topk runs std::partial_sort (HeapSelect) rather than std::nth_element.
bool TopKByHeap(int64_t k, int64_t n) { return k <= n / 64; }  // k * 64 <= n

// Below this many elements a slice is sorted by comparisons.
constexpr int64_t kRadixFrom = 256;

template <typename T, typename Order>
absl::Status SortSlices(const Tensor& self, int64_t dim, const Tensor& values,
                        const Tensor& indices, int64_t k, Mode mode, Order order) {
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
  // A whole slice is radix sorted (then, where keys tie and the order of ties is torch's, sorted
  // again as torch sorts); a topk that torch answers with partial_sort goes to HeapSelect; the
  // rest (short slices, kthvalue, an nth_element topk) to AsTorch.
  const bool radix = (mode == Mode::kStable || mode == Mode::kSort) && n >= kRadixFrom;
  const bool heap = (mode == Mode::kTopK || mode == Mode::kTopKUnsorted) && k < n &&
                    TopKByHeap(k, n);
  // HeapSelect reads the keys in place where the slice is them already.
  const bool keys_in_place = in_step == 1 && std::is_same_v<T, C>;
  absl::Mutex mu;
  absl::Status failed;
  ParallelFor(0, slices.count(), grain, [&](int64_t begin, int64_t end) {
    absl::StatusOr<Scratch<C>> keys = Scratch<C>::Make(heap && !keys_in_place ? n : 0);
    absl::StatusOr<Scratch<int64_t>> order_of = Scratch<int64_t>::Make(radix ? n : 0);
    absl::StatusOr<Scratch<KeyAt<C>>> pairs = Scratch<KeyAt<C>>::Make(heap ? k : n);
    absl::StatusOr<Scratch<uint64_t>> ukeys = Scratch<uint64_t>::Make(radix ? n : 0);
    absl::StatusOr<Scratch<uint64_t>> ukeys_tmp = Scratch<uint64_t>::Make(radix ? n : 0);
    absl::StatusOr<Scratch<int64_t>> order_tmp = Scratch<int64_t>::Make(radix ? n : 0);
    for (const absl::Status& s : {keys.status(), order_of.status(), pairs.status(),
                                  ukeys.status(), ukeys_tmp.status(), order_tmp.status()}) {
      if (!s.ok()) {
        absl::MutexLock lock(&mu);
        failed.Update(s);
        return;
      }
    }
    for (int64_t s = begin; s < end; ++s) {
      const T* src = in + slices.Offset(self, s);
      T* v = vo + slices.Offset(values, s);
      int64_t* ix = io + slices.Offset(indices, s);
      if (radix) {
        uint64_t* u = ukeys->data();
        int64_t* at = order_of->data();
        uint64_t low = ~uint64_t{0};
        uint64_t high = 0;
        for (int64_t i = 0; i < n; ++i) {
          u[i] = RadixKey<T, Order>(LoadCalc(src + i * in_step));
          at[i] = i;
          low = std::min(low, u[i]);
          high = std::max(high, u[i]);
        }
        // Ties are certain where fewer keys fit between the least and the greatest than there
        // are keys (small integers), or than the bytes that vary can make (MustTie).
        bool ties = mode != Mode::kStable && high - low < static_cast<uint64_t>(n - 1);
        ByteCounts count;
        if (!ties) {
          CountBytes(u, n, count);
          ties = mode != Mode::kStable && MustTie(count, n);
        }
        if (!ties) {
          RadixSortPairs(n, count, *ukeys, *order_of, *ukeys_tmp, *order_tmp);
          u = ukeys->data();
          at = order_of->data();
          if (mode != Mode::kStable) {
            for (int64_t i = 1; i < n && !ties; ++i) ties = u[i] == u[i - 1];
          }
        }
        if (!ties) {
          // The values come back from their keys; only 0 and NaN are read from the slice (at
          // random positions, as a gather through the order would read every one).
          for (int64_t i = 0; i < n; ++i) {
            C x;
            v[i * v_step] = FromRadixKey<T, Order>(u[i], &x) ? Convert<T>(x)
                                                             : LoadElement(src + at[i] * in_step);
            ix[i * i_step] = at[i];
          }
          continue;
        }
      }
      KeyAt<C>* p = pairs->data();
      if (heap) {
        const C* key = reinterpret_cast<const C*>(src);
        if (!keys_in_place) {
          for (int64_t i = 0; i < n; ++i) (*keys)[i] = LoadCalc(src + i * in_step);
          key = keys->data();
        }
        HeapSelect(key, n, k, order, p);
      } else {
        for (int64_t i = 0; i < n; ++i) p[i] = {LoadCalc(src + i * in_step), i};
        AsTorch(p, n, k, mode, order);
      }
      for (int64_t i = 0; i < k; ++i) {
        v[i * v_step] = LoadElement(src + p[i].at * in_step);
        ix[i * i_step] = p[i].at;
      }
    }
  });
  return failed;
}

// The first k of every slice in ascending (or descending) order: sort is k = n.
absl::Status FirstK(const Tensor& self, int64_t k, int64_t dim, bool descending, Mode mode,
                    const Tensor& values, const Tensor& indices) {
  if (self.numel() == 0 || k == 0) return absl::OkStatus();
  absl::Status status;
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    using C = Calc<T>;
    status = descending
                 ? SortSlices<T>(self, dim, values, indices, k, mode, Descending<C>())
                 : SortSlices<T>(self, dim, values, indices, k, mode, Ascending<C>());
  });
  return status;
}

}  // namespace

absl::Status Sort(const Tensor& self, int64_t dim, bool descending, bool stable,
                  const Tensor& values, const Tensor& indices) {
  return FirstK(self, SizeAlong(self, dim), dim, descending, stable ? Mode::kStable : Mode::kSort,
                values, indices);
}

absl::Status TopK(const Tensor& self, int64_t k, int64_t dim, bool largest, TopKOrder order,
                  const Tensor& values, const Tensor& indices) {
  const Mode mode = order == TopKOrder::kSorted     ? Mode::kTopK
                    : order == TopKOrder::kUnsorted ? Mode::kTopKUnsorted
                                                    : Mode::kKthLast;
  return FirstK(self, k, dim, largest, mode, values, indices);
}

namespace {

// The hash and equality of torch's std::unordered_set<scalar_t>: the standard library's for
// numbers; c10::BFloat16's hash is its bits', its == a comparison as floats.
template <typename T>
struct TorchHash {
  size_t operator()(T x) const { return std::hash<T>()(x); }
};
template <>
struct TorchHash<BFloat16> {
  size_t operator()(BFloat16 x) const { return std::hash<uint16_t>()(x.bits); }
};
template <typename T>
struct TorchEqual {
  bool operator()(T a, T b) const { return static_cast<Calc<T>>(a) == static_cast<Calc<T>>(b); }
};

// ATen's unique_cpu_template (1.13) for sorted=False, step for step: the set made from the
// elements in one go (its buckets sized for all of them), its iteration order the values', and
// the inverse and counts read through maps keyed by value.
template <typename T>
int64_t UniqueSlice(const T* in, int64_t n, T* values, int64_t* inverse, int64_t* counts) {
  using Set = std::unordered_set<T, TorchHash<T>, TorchEqual<T>>;
  using Map = std::unordered_map<T, int64_t, TorchHash<T>, TorchEqual<T>>;
  const Set set(in, in + n);
  int64_t runs = 0;
  for (const T& v : set) values[runs++] = v;
  if (inverse != nullptr) {
    Map place;
    place.reserve(runs);
    for (int64_t i = 0; i < runs; ++i) place[values[i]] = i;
    for (int64_t i = 0; i < n; ++i) inverse[i] = place[in[i]];
  }
  if (counts != nullptr) {
    Map seen;
    seen.reserve(runs);
    for (int64_t i = 0; i < runs; ++i) seen[values[i]] = 0;
    for (int64_t i = 0; i < n; ++i) seen[in[i]] += 1;
    for (int64_t i = 0; i < runs; ++i) counts[i] = seen[values[i]];
  }
  return runs;
}

}  // namespace

absl::StatusOr<int64_t> UniqueInHashOrder(const Tensor& self, const Tensor& values,
                                          const Tensor& inverse, const Tensor& counts) {
  int64_t runs = 0;
  absl::Status status;
  DispatchDType(self.dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Half>) {
      status = absl::InvalidArgumentError("unique in hash order: not for bool or float16");
    } else {
      int64_t* inv = inverse.defined() ? reinterpret_cast<int64_t*>(inverse.data()) : nullptr;
      int64_t* cnt = counts.defined() ? reinterpret_cast<int64_t*>(counts.data()) : nullptr;
      try {  // the sets' nodes come from the heap: a failed allocation fails the op
        runs = UniqueSlice(reinterpret_cast<const T*>(self.data()), self.numel(),
                           reinterpret_cast<T*>(values.data()), inv, cnt);
      } catch (const std::bad_alloc&) {
        status = absl::ResourceExhaustedError("unique: out of host memory for its hash set");
      }
    }
  });
  if (!status.ok()) return status;
  return runs;
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
