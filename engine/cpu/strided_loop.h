// The strided-iteration core of every CPU kernel: N operands over one shape.
//
// Drops size-1 dims, orders dims so the output (operand 0) is walked in memory order, merges dims
// that are laid out back to back in every operand, then calls a run function on 1-D runs of the
// innermost dim, splitting the outer iterations over the thread pool when the work is large.
// When an input lies across the output's runs (`a + b.t()`), the runs are walked in tiles of
// the two innermost dims (short runs, many rows), so that each of that input's cache lines is
// read once per tile instead of once per element; every element is still visited once.
#ifndef TENSORD_ENGINE_CPU_STRIDED_LOOP_H_
#define TENSORD_ENGINE_CPU_STRIDED_LOOP_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>

#include "absl/container/inlined_vector.h"
#include "engine/tensor/tensor_meta.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {

// Work below this many bytes (touched by all operands) stays on the calling thread.
inline constexpr int64_t kParallelGrainBytes = 256 * 1024;

template <int N>
class StridedLoop {
 public:
  struct Dim {
    int64_t size;
    std::array<int64_t, N> stride;  // NB: bytes, not elements
  };

  // `strides[k]` are operand k's strides in elements for `sizes`; `itemsizes[k]` its element
  // size. Strides may be 0 (broadcast) or negative (flip).
  StridedLoop(IntList sizes, const std::array<IntList, N>& strides,
              const std::array<int64_t, N>& itemsizes) {
    numel_ = 1;
    for (int64_t size : sizes) numel_ *= size;
    // An empty tensor's strides may be anything (torch allows it): nothing is visited, and its
    // byte strides, which may not even fit int64, are never computed.
    if (numel_ == 0) return;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 1) continue;
      Dim dim{sizes[d], {}};
      for (int k = 0; k < N; ++k) dim.stride[k] = strides[k][d] * itemsizes[k];
      dims_.push_back(dim);
    }
    // Innermost first: by |output stride|, ties broken by the inputs' strides. Insertion sort
    // keeps it stable (ranks are small).
    for (size_t i = 1; i < dims_.size(); ++i) {
      for (size_t j = i; j > 0 && Less(dims_[j], dims_[j - 1]); --j) std::swap(dims_[j], dims_[j - 1]);
    }
    // Merge dim i+1 into dim i when it continues it in every operand.
    absl::InlinedVector<Dim, 8> merged;
    for (const Dim& dim : dims_) {
      if (!merged.empty()) {
        Dim& inner = merged.back();
        bool contiguous = true;
        for (int k = 0; k < N; ++k) contiguous &= dim.stride[k] == inner.stride[k] * inner.size;
        if (contiguous) {
          inner.size *= dim.size;
          continue;
        }
      }
      merged.push_back(dim);
    }
    dims_ = std::move(merged);
  }

  int64_t numel() const { return numel_; }
  int ndim() const { return static_cast<int>(dims_.size()); }
  const Dim& dim(int i) const { return dims_[i]; }
  int64_t inner_size() const { return dims_.empty() ? 1 : dims_[0].size; }
  int64_t inner_stride(int k) const { return dims_.empty() ? 0 : dims_[0].stride[k]; }
  int64_t outer_count() const { return numel_ == 0 ? 0 : numel_ / inner_size(); }

  // Calls run(ptrs, inner_strides, n) for every innermost run. `bytes_per_element` (summed over
  // operands) sizes the parallel grain.
  template <typename RunFn>
  void Run(const std::array<char*, N>& base, int64_t bytes_per_element, RunFn&& run) const {
    if (numel_ == 0) return;
    if (ReadsAcrossRuns()) {
      RunTiled(base, bytes_per_element, run);
      return;
    }
    const int64_t outer = outer_count();
    const int64_t inner = inner_size();
    std::array<int64_t, N> inner_strides;
    for (int k = 0; k < N; ++k) inner_strides[k] = inner_stride(k);
    const int64_t run_bytes = std::max<int64_t>(1, inner * bytes_per_element);
    const int64_t threads = ParallelismDegree();
    if (outer < 2 * threads && run_bytes >= 2 * kParallelGrainBytes && threads > 1) {
      // Few long runs (a contiguous tensor is one): split each run into pieces, so every core
      // gets work. Pieces are multiples of 64 elements (whole cache lines, vector widths).
      const int64_t pieces_per_run = std::min<int64_t>(
          (run_bytes + kParallelGrainBytes - 1) / kParallelGrainBytes,
          std::max<int64_t>(1, (4 * threads + outer - 1) / outer));
      const int64_t piece = std::max<int64_t>(64, (inner / pieces_per_run + 63) / 64 * 64);
      const int64_t pieces = (inner + piece - 1) / piece;
      ParallelFor(0, outer * pieces, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t o = t / pieces, p = t % pieces;
          const int64_t start = p * piece, n = std::min(piece, inner - start);
          std::array<char*, N> at = base;
          for (int k = 0; k < N; ++k) at[k] += start * inner_strides[k];
          RunOuter(at, inner_strides, n, o, o + 1, run);
        }
      });
      return;
    }
    const int64_t grain = std::max<int64_t>(1, kParallelGrainBytes / run_bytes);
    ParallelFor(0, outer, grain, [&](int64_t begin, int64_t end) {
      RunOuter(base, inner_strides, inner, begin, end, run);
    });
  }

  // Whether an input is laid out across the output's runs (`a + b.t()`): its elements along
  // the second dim lie closer together than along the innermost one, so that a plain walk
  // would read one element per cache line. Run then walks tiles instead.
  bool ReadsAcrossRuns() const {
    if (dims_.size() < 2 || dims_[0].size < 2 * kTileRun) return false;
    for (int k = 1; k < N; ++k) {
      const int64_t s0 = std::llabs(dims_[0].stride[k]), s1 = std::llabs(dims_[1].stride[k]);
      if (s1 != 0 && s1 < s0 && s0 > kTileLineBytes) return true;
    }
    return false;
  }

 private:
  // A tile: kTileRun elements of the innermost dim by kTileRows of the next, so that an input
  // laid out across the runs reads each of its cache lines (up to kTileLineBytes of elements
  // along the second dim) once per tile instead of once per element. The run is short because
  // that input's kTileRun lines are often a power of two apart (a transposed 1024² or 8192²),
  // which puts them in one set of the L1 cache: 8 lines stay resident where 128 thrash. Add of
  // a 1024² f32 and a transposed one: 2.4 ms walked plainly, 2.4 in 128 x 16 tiles, 0.71 in
  // 16 x 16, 0.65 in 8 x 256; of 8192²: 240 ms, 94 (16 x 16), 57 (8 x 64), 49 (8 x 256).
  static constexpr int64_t kTileRun = 8;
  static constexpr int64_t kTileRows = 256;
  static constexpr int64_t kTileLineBytes = 64;

  // Run over tiles of the two innermost dims (the order of visits differs from the plain walk;
  // every run is still a piece of the innermost dim, so elementwise work gets the same values).
  template <typename RunFn>
  void RunTiled(const std::array<char*, N>& base, int64_t bytes_per_element, RunFn& run) const {
    const int nd = ndim();
    const int64_t n0 = dims_[0].size, n1 = dims_[1].size;
    const int64_t tiles0 = (n0 + kTileRun - 1) / kTileRun;
    const int64_t tiles1 = (n1 + kTileRows - 1) / kTileRows;
    const int64_t outer = numel_ / (n0 * n1);
    std::array<int64_t, N> inner_strides;
    for (int k = 0; k < N; ++k) inner_strides[k] = dims_[0].stride[k];
    const int64_t tile_bytes = std::max<int64_t>(1, kTileRun * kTileRows * bytes_per_element);
    const int64_t grain = std::max<int64_t>(1, kParallelGrainBytes / tile_bytes);
    ParallelFor(0, outer * tiles1 * tiles0, grain, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t t0 = u % tiles0, t1 = (u / tiles0) % tiles1;
        int64_t rest = u / (tiles0 * tiles1);
        std::array<char*, N> at = base;
        for (int d = 2; d < nd; ++d) {
          const int64_t i = rest % dims_[d].size;
          rest /= dims_[d].size;
          for (int k = 0; k < N; ++k) at[k] += i * dims_[d].stride[k];
        }
        const int64_t i0 = t0 * kTileRun, n = std::min(kTileRun, n0 - i0);
        const int64_t j0 = t1 * kTileRows, j1 = std::min(n1, j0 + kTileRows);
        for (int k = 0; k < N; ++k) at[k] += i0 * dims_[0].stride[k] + j0 * dims_[1].stride[k];
        for (int64_t j = j0; j < j1; ++j) {
          run(at, inner_strides, n);
          for (int k = 0; k < N; ++k) at[k] += dims_[1].stride[k];
        }
      }
    });
  }

  static bool Less(const Dim& a, const Dim& b) {
    for (int k = 0; k < N; ++k) {
      const int64_t sa = std::llabs(a.stride[k]);
      const int64_t sb = std::llabs(b.stride[k]);
      if (sa != sb) {
        if (sa == 0 || sb == 0) continue;  // broadcast dims do not decide
        return sa < sb;
      }
    }
    return false;
  }

  template <typename RunFn>
  void RunOuter(const std::array<char*, N>& base, const std::array<int64_t, N>& inner_strides,
                int64_t inner, int64_t begin, int64_t end, RunFn& run) const {
    const int nd = ndim();
    // Multi-index of outer iteration `begin` over dims 1..nd-1.
    std::array<int64_t, kMaxRank> idx{};
    std::array<char*, N> ptr = base;
    int64_t rest = begin;
    for (int d = 1; d < nd; ++d) {
      idx[d] = rest % dims_[d].size;
      rest /= dims_[d].size;
      for (int k = 0; k < N; ++k) ptr[k] += idx[d] * dims_[d].stride[k];
    }
    for (int64_t it = begin; it < end; ++it) {
      run(ptr, inner_strides, inner);
      for (int d = 1; d < nd; ++d) {
        for (int k = 0; k < N; ++k) ptr[k] += dims_[d].stride[k];
        if (++idx[d] < dims_[d].size) break;
        for (int k = 0; k < N; ++k) ptr[k] -= dims_[d].size * dims_[d].stride[k];
        idx[d] = 0;
      }
    }
  }

  absl::InlinedVector<Dim, 8> dims_;
  int64_t numel_ = 0;
};

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_STRIDED_LOOP_H_
