// KernelError: what a kernel that finds bad data (an integer division by zero, an index out of
// range) reports instead of trapping. Device kernels write it into their op's slot in host-mapped
// memory and return; the host turns it into the op's error when the op retires, and poisons
// exactly that op's outputs. The CUDA context stays healthy: no assert, no __trap.
#ifndef TENSORD_ENGINE_KERNELS_KERNEL_ERROR_H_
#define TENSORD_ENGINE_KERNELS_KERNEL_ERROR_H_

#include <cstdint>

#include "engine/core/host_device.h"

namespace tensord::engine {

struct KernelError {
  enum Code : int32_t {
    kNone = 0,
    kBadValue = 1,       // a value that fails a ValueCheck (kernels/value_check.h)
    kIndexOutOfRange = 2,
    kBadProbability = 3,
    kFactorization = 4,  // a = the batch element, b = LAPACK's info (kernels/linalg.h)
    kCtc = 5,            // ctc_loss's lengths or labels; detail says which (kernels/ctc.h)
  };
  int32_t code = kNone;
  int32_t detail = 0;  // which check of the code's family failed (0 where it has one)
  int64_t a = 0;  // e.g. the bad index
  int64_t b = 0;  // e.g. the size it indexes
  // ReportBadIndexAt: the smallest row-major position of a bad index, so that the error names
  // the first bad index, as the CPU's in-order loops do, whichever thread finds one first.
  int64_t position = INT64_MAX;
};

// Records the first error reported into `slot` (later ones are dropped).
TENSORD_HD inline void ReportKernelError(KernelError* slot, int32_t code, int64_t a, int64_t b,
                                         int32_t detail = 0) {
#if defined(__CUDA_ARCH__)
  if (atomicCAS(&slot->code, 0, code) == 0) {
    slot->detail = detail;
    slot->a = a;
    slot->b = b;
    __threadfence_system();
  }
#else
  if (slot->code == KernelError::kNone) {
    slot->code = code;
    slot->detail = detail;
    slot->a = a;
    slot->b = b;
  }
#endif
}

// Records that the index at row-major `position` of an op's index tensor is out of range; the
// smallest position wins. a and b are filled in afterwards from that position (the CUDA
// indexing launchers run a one-thread kernel for it), so they belong to the first bad index.
TENSORD_HD inline void ReportBadIndexAt(KernelError* slot, int64_t position) {
#if defined(__CUDA_ARCH__)
  atomicMin(reinterpret_cast<unsigned long long*>(&slot->position),
            static_cast<unsigned long long>(position));
  atomicCAS(&slot->code, 0, static_cast<int32_t>(KernelError::kIndexOutOfRange));
  __threadfence_system();
#else
  if (position < slot->position) slot->position = position;
  slot->code = KernelError::kIndexOutOfRange;
#endif
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_KERNEL_ERROR_H_
