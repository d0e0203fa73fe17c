// Backend: the per-device memory and kernels that data ops dispatch to.
#ifndef TENSORD_ENGINE_BACKEND_H_
#define TENSORD_ENGINE_BACKEND_H_

#include "absl/status/statusor.h"
#include "engine/allocator.h"
#include "engine/device.h"
#include "engine/scalar.h"
#include "engine/strided_ref.h"

namespace tensord::engine {

// One per device. The CPU backend always exists; a CUDA backend (engine/cuda/) implements the
// same interface with device kernels. Kernels receive operands that are already validated (shape,
// bounds, overlap); on an asynchronous device they are enqueued on the calling thread's current
// stream and return before they run. Thread-safe.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual Allocator& allocator() = 0;

  // dst[i] = convert(src[i]) over `sizes`.
  virtual void Copy(IntList sizes, const StridedRef& dst, const StridedRef& src) = 0;
  // dst[i] = value over `sizes`.
  virtual void Fill(IntList sizes, const StridedRef& dst, const Scalar& value) = 0;
  // out[i] = start + i * step, contiguous.
  virtual void Arange(char* out, DType dtype, int64_t n, const Scalar& start,
                      const Scalar& step) = 0;
};

Backend& CpuBackend();

// The backend of `device`; FAILED_PRECONDITION when this build or machine has no such device.
absl::StatusOr<Backend*> BackendFor(Device device);

// Registers a backend for a device type (the CUDA backend does so when a GPU is present).
void RegisterBackend(Backend* backend);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_BACKEND_H_
