// CPU resampling kernels (kernels/upsample.h).
#ifndef TENSORD_ENGINE_CPU_UPSAMPLE_KERNELS_H_
#define TENSORD_ENGINE_CPU_UPSAMPLE_KERNELS_H_

#include "engine/kernels/upsample.h"

namespace tensord::engine::cpu {

// Runs `call`. Bilinear and bicubic: each input row's values along W are computed once per run
// of output rows that read it (the same numbers as computing them per output), and every
// output row blends its taps' rows in vectorized loops; linear and trilinear: output by output.
void Upsample(const UpsampleCall& call);

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_UPSAMPLE_KERNELS_H_
