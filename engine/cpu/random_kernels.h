// CPU random draws (kernels/random.h).
#ifndef TENSORD_ENGINE_CPU_RANDOM_KERNELS_H_
#define TENSORD_ENGINE_CPU_RANDOM_KERNELS_H_

#include "absl/status/status.h"
#include "engine/kernels/random.h"
#include "engine/tensor/strided_ref.h"

namespace tensord::engine::cpu {

// Backend::Random on the CPU.
absl::Status Random(const DistArgs& dist, const StridedRef& out, int64_t n, const double* probs);

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_RANDOM_KERNELS_H_
