// Backend: the per-device memory and kernels that data ops dispatch to.
#ifndef TENSORD_ENGINE_RUNTIME_BACKEND_H_
#define TENSORD_ENGINE_RUNTIME_BACKEND_H_

#include "absl/status/statusor.h"
#include "engine/runtime/allocator.h"
#include "engine/core/device.h"
#include "engine/kernels/binary_ops.h"
#include "engine/kernels/unary_ops.h"
#include "engine/core/scalar.h"
#include "engine/tensor/strided_ref.h"

namespace tensord::engine {

// One per device. The CPU backend always exists; a CUDA backend (engine/cuda/) implements the
// same interface with device kernels. Kernels receive operands that are already validated (shape,
// bounds, overlap). Inside a stream's task (exec_context.h) an asynchronous device launches the
// work on the stream's lane and returns at once; elsewhere every call returns once its work is
// done. CopyToHost/CopyFromHost always return with the bytes moved. An error is the device's (a
// failed launch, a lost device), not the data's. Thread-safe.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual Allocator& allocator() = 0;

  // dst[i] = convert(src[i]) over `sizes`.
  // Both operands live on this device.
  virtual absl::Status Copy(IntList sizes, const StridedRef& dst, const StridedRef& src) = 0;
  // dst[i] = value over `sizes`.
  virtual absl::Status Fill(IntList sizes, const StridedRef& dst, const Scalar& value) = 0;
  // out[i] = start + i * step, contiguous.
  virtual absl::Status Arange(char* out, DType dtype, int64_t n, const Scalar& start,
                              const Scalar& step) = 0;
  // `nbytes` bytes between this device's memory (`device_ptr`) and host memory.
  virtual absl::Status CopyToHost(void* host_dst, const void* device_src, int64_t nbytes) = 0;
  virtual absl::Status CopyFromHost(void* device_dst, const void* host_src, int64_t nbytes) = 0;
  // out = op(a, b) over `shape` (engine/kernels/binary_ops.h); a and b in the compute dtype.
  virtual absl::Status Binary(BinaryOp op, IntList shape, const StridedRef& out,
                              const StridedRef& a, const StridedRef& b, const Scalar& alpha) = 0;
  // Fails `op` with its ZeroDivisionError when the integral `divisor` holds a zero (integer
  // division and remainder). On an asynchronous device the check runs there and the op fails
  // when it retires.
  virtual absl::Status CheckDivisor(absl::string_view op, IntList shape,
                                    const StridedRef& divisor) = 0;
  // out = op(in) (engine/kernels/unary_ops.h); in in the compute dtype.
  virtual absl::Status Unary(UnaryOp op, IntList shape, const StridedRef& out,
                             const StridedRef& in, const UnaryArgs& args) = 0;
  // out = cond ? a : b (cond one byte per element).
  virtual absl::Status Where(IntList shape, const StridedRef& out, const StridedRef& cond,
                             const StridedRef& a, const StridedRef& b) = 0;
  // out = lerp(start, end, weight).
  virtual absl::Status Lerp(IntList shape, const StridedRef& out, const StridedRef& start,
                            const StridedRef& end, const StridedRef& weight) = 0;
  // out = self + value * t1 * t2, or * (t1 / t2) when `divide`.
  virtual absl::Status Addc(bool divide, IntList shape, const StridedRef& out,
                            const StridedRef& self, const StridedRef& t1, const StridedRef& t2,
                            const Scalar& value) = 0;
  // out = clamp(x, lo, hi) with tensor bounds (an absent one passed as x).
  virtual absl::Status ClampTensor(IntList shape, const StridedRef& out, const StridedRef& x,
                                   const StridedRef& lo, const StridedRef& hi, bool has_lo,
                                   bool has_hi) = 0;
  // Occupies the device's queue for `ms` milliseconds (torch.cuda._sleep). The _sleep op holds a
  // CPU stream without a kernel instead (PlannedOp::hold); the CPU backend sleeps the caller.
  virtual absl::Status Sleep(int64_t ms) = 0;
};

Backend& CpuBackend();

// The backend of `device`; FAILED_PRECONDITION when this build or machine has no such device.
absl::StatusOr<Backend*> BackendFor(Device device);

// Registers a backend for a device type (the CUDA backend does so when a GPU is present).
void RegisterBackend(Backend* backend);
// Makes `backend` (never freed) the one of its device, the CPU's included: for planning on
// metadata alone (meta_backend.h).
void OverrideBackend(Backend* backend);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_BACKEND_H_
