// CPU kernels of the losses that need one of their own beyond the reductions (those live in
// reduce_kernels.h): ctc_loss.
#ifndef TENSORD_ENGINE_CPU_LOSS_KERNELS_H_
#define TENSORD_ENGINE_CPU_LOSS_KERNELS_H_

#include "absl/status/status.h"
#include "engine/kernels/ctc.h"

namespace tensord::engine::cpu {

// ctc_loss's negative log-likelihoods (kernels/ctc.h), one batch element per task; bad lengths
// or labels fail the op (CtcLossFailure) before anything is written.
absl::Status CtcLoss(const CtcLossCall& call);

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_LOSS_KERNELS_H_
