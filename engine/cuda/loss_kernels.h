// Launchers of the CUDA loss kernels beyond the reductions (those are in reduce_kernels.h):
// ctc_loss. The recursion and the checks are the CPU's (engine/kernels/ctc.h).
#ifndef TENSORD_ENGINE_CUDA_LOSS_KERNELS_H_
#define TENSORD_ENGINE_CUDA_LOSS_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/kernels/ctc.h"
#include "engine/kernels/kernel_error.h"

namespace tensord::engine::cuda {

// ctc_loss's scratch: the elements' target offsets, then two alpha rows per element, element
// b's at 2 (2 offsets[b] + b) entries (2 L_b + 1 each): 2 (2 labels + batch) entries in all, in
// proportion to the targets however their lengths fall.
struct CtcLaunch {
  int threads = 32;
  int64_t offsets_bytes = 0;  // the offsets' part of the scratch (the rows follow)
  int64_t scratch_bytes = 0;
};
CtcLaunch ChooseCtcLaunch(const CtcLossCall& call);

// ctc_loss's negative log-likelihoods (kernels/ctc.h): one thread computes the offsets and checks
// the lengths, then a block per element runs the recursion over time (threads over the extended
// target). An empty batch launches the checks alone (torch fails one without time steps).
// Bad lengths or labels are reported into `slot` (kCtc, CtcLossFailure's words: the first bad
// label in order, as the CPU's loop finds it); an element with bad data writes nothing and
// reads nothing out of bounds.
cudaError_t LaunchCtcLoss(const CtcLossCall& call, const CtcLaunch& how, void* scratch,
                          KernelError* slot, cudaStream_t stream);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_LOSS_KERNELS_H_
