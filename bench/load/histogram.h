// A log-linear latency histogram (HdrHistogram's idea): values in nanoseconds, each power of two
// split into 128 linear sub-buckets, so every recorded value is known to within 1/128 (< 0.8%)
// of itself; values below 128 ns are exact. Fixed memory (about 36 KB), O(1) record, mergeable
// by adding counts. Not thread-safe: one owner, or a lock around it.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

namespace tensord::load {

class Histogram {
 public:
  static constexpr int kSubBits = 7;                  // 128 sub-buckets per power of two
  static constexpr int64_t kSub = int64_t{1} << kSubBits;
  static constexpr int kMaxBits = 42;                 // up to 2^42 ns (about 73 minutes)

  Histogram() : counts_(static_cast<size_t>(Index(Clamp(std::numeric_limits<int64_t>::max())) + 1)) {}

  void Record(int64_t ns) {
    ns = Clamp(ns);
    ++counts_[static_cast<size_t>(Index(ns))];
    ++count_;
    sum_ += static_cast<double>(ns);
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
  }

  void Merge(const Histogram& other) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    sum_ += other.sum_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }

  void Reset() { *this = Histogram(); }

  int64_t count() const { return count_; }
  int64_t max() const { return count_ ? max_ : 0; }
  int64_t min() const { return count_ ? min_ : 0; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }

  // The value at quantile q (0..1): the middle of the bucket holding the ceil(q * count)-th
  // value, clamped to the recorded min and max (so p100 is the exact max).
  int64_t Percentile(double q) const {
    if (count_ == 0) return 0;
    if (q >= 1) return max_;
    int64_t rank = static_cast<int64_t>(q * static_cast<double>(count_) + 0.999999999);
    rank = std::clamp<int64_t>(rank, 1, count_);
    int64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) {
        const int64_t lo = Lowest(static_cast<int64_t>(i));
        const int64_t hi = Lowest(static_cast<int64_t>(i) + 1) - 1;
        return std::clamp(lo + (hi - lo) / 2, min_, max_);
      }
    }
    return max_;
  }

 private:
  static int64_t Clamp(int64_t ns) {
    return std::clamp<int64_t>(ns, 0, (int64_t{1} << kMaxBits) - 1);
  }
  // Bucket of a value: values < 128 one bucket each; then 128 buckets per power of two.
  static int64_t Index(int64_t v) {
    if (v < kSub) return v;
    const int e = std::bit_width(static_cast<uint64_t>(v)) - 1;  // >= kSubBits
    const int shift = e - kSubBits;
    return kSub + static_cast<int64_t>(shift) * kSub + ((v >> shift) - kSub);
  }
  // The smallest value of bucket i.
  static int64_t Lowest(int64_t i) {
    if (i < kSub) return i;
    const int64_t shift = (i - kSub) / kSub;
    const int64_t sub = (i - kSub) % kSub;
    return (kSub + sub) << shift;
  }

  std::vector<int64_t> counts_;
  int64_t count_ = 0;
  double sum_ = 0;
  int64_t min_ = std::numeric_limits<int64_t>::max();
  int64_t max_ = 0;
};

}  // namespace tensord::load
