// How a CUDA reduction is spread over the GPU, chosen on the host from its geometry. Plain C++
// (no CUDA headers), so that the host tests (tests/engine/reduce_launch_test.cc) check the very
// choice the backend makes.
#ifndef TENSORD_ENGINE_CUDA_REDUCE_LAUNCH_H_
#define TENSORD_ENGINE_CUDA_REDUCE_LAUNCH_H_

#include <cstdint>

#include "engine/kernels/reduce_ops.h"

namespace tensord::engine::cuda {

// - one thread per output, when the outputs lie side by side in memory and are many (column
//   reductions: neighbouring threads read neighbouring elements);
// - else one block per output (its threads stride over the reduced elements, then combine in
//   shared memory), and when outputs are fewer than the blocks the GPU holds at once, `parts`
//   blocks per output whose partial results a second kernel combines (scratch: `scratch_bytes`
//   of device memory, 32 bytes per partial).
struct ReduceLaunch {
  bool per_thread = false;
  int threads = 256;
  int64_t parts = 1;
  int64_t scratch_bytes = 0;
};

// Threads per block of a split reduction: the block size whose residency the backend asks for.
constexpr int kSplitReduceThreads = 256;
// Elements a part reduces at the least (fewer would cost more in launches than they save).
constexpr int64_t kMinPerPart = 8192;

// `resident_blocks`: how many blocks of the reduction's kernel, kSplitReduceThreads threads
// each, the device runs at once (its SMs times the kernel's occupancy), 0 where unknown. A split
// reduction launches at most that many, so that all of its blocks run in one wave: with more,
// the last wave runs on a fraction of the SMs while the rest idle (1,024 parts where 660 blocks
// fit, 5 on each of 132 SMs, run as a full wave and a 55% one).
inline ReduceLaunch ChooseReduceLaunch(const ReduceGeometry& g, int64_t resident_blocks) {
  ReduceLaunch how;
  int64_t m = 1, r = 1;
  for (int64_t s : g.kept_sizes) m *= s;
  for (int64_t s : g.red_sizes) r *= s;
  if (m == 0) return how;  // no outputs: nothing runs
  const size_t nk = g.kept_sizes.size(), nr = g.red_sizes.size();
  const auto mag = [](int64_t s) { return s < 0 ? -s : s; };
  if (nk > 0 && nr > 0 && m >= 1024 &&
      mag(g.kept_strides[nk - 1]) < mag(g.red_strides[nr - 1])) {
    how.per_thread = true;
    return how;
  }
  how.threads = 32;
  while (how.threads < kSplitReduceThreads && how.threads < r) how.threads *= 2;
  // Few outputs over many elements: split each so that the GPU's SMs all work.
  const int64_t want = resident_blocks > 0 ? resident_blocks : 1024;
  if (m < want && r >= 2 * kMinPerPart) {
    const int64_t by_blocks = want / m, by_size = r / kMinPerPart;
    how.parts = by_blocks < by_size ? by_blocks : by_size;
    if (how.parts > 1) {
      how.scratch_bytes = m * how.parts * 32;
    } else {
      how.parts = 1;
    }
  }
  return how;
}

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_REDUCE_LAUNCH_H_
