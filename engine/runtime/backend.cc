#include "engine/runtime/backend.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/cpu/copy_kernel.h"
#include "engine/cpu/elementwise_kernels.h"
#include "engine/core/errors.h"

namespace tensord::engine {
namespace {

class CpuBackendImpl final : public Backend {
 public:
  Device device() const override { return kCpu; }
  Allocator& allocator() override { return CpuAllocator(); }
  absl::Status Copy(IntList sizes, const StridedRef& dst, const StridedRef& src) override {
    cpu::CopyStrided(sizes, dst, src);
    return absl::OkStatus();
  }
  absl::Status Fill(IntList sizes, const StridedRef& dst, const Scalar& value) override {
    cpu::FillStrided(sizes, dst, value);
    return absl::OkStatus();
  }
  absl::Status Arange(char* out, DType dtype, int64_t n, const Scalar& start,
                      const Scalar& step) override {
    cpu::ArangeContiguous(out, dtype, n, start, step);
    return absl::OkStatus();
  }
  absl::Status CopyToHost(void* host_dst, const void* src, int64_t nbytes) override {
    if (nbytes > 0) std::memcpy(host_dst, src, static_cast<size_t>(nbytes));
    return absl::OkStatus();
  }
  absl::Status CopyFromHost(void* dst, const void* host_src, int64_t nbytes) override {
    if (nbytes > 0) std::memcpy(dst, host_src, static_cast<size_t>(nbytes));
    return absl::OkStatus();
  }
  absl::Status Binary(BinaryOp op, IntList shape, const StridedRef& out, const StridedRef& a,
                      const StridedRef& b, const Scalar& alpha) override {
    cpu::Binary(op, shape, out, a, b, alpha);
    return absl::OkStatus();
  }
  absl::Status CheckDivisor(absl::string_view op, IntList shape,
                            const StridedRef& divisor) override {
    if (cpu::AnyZero(shape, divisor)) return RuntimeError(op, "ZeroDivisionError");
    return absl::OkStatus();
  }
  absl::Status Unary(UnaryOp op, IntList shape, const StridedRef& out, const StridedRef& in,
                     const UnaryArgs& args) override {
    cpu::Unary(op, shape, out, in, args);
    return absl::OkStatus();
  }
  absl::Status Where(IntList shape, const StridedRef& out, const StridedRef& cond,
                     const StridedRef& a, const StridedRef& b) override {
    cpu::Where(shape, out, cond, a, b);
    return absl::OkStatus();
  }
  absl::Status Lerp(IntList shape, const StridedRef& out, const StridedRef& start,
                    const StridedRef& end, const StridedRef& weight) override {
    cpu::Lerp(shape, out, start, end, weight);
    return absl::OkStatus();
  }
  absl::Status Addc(bool divide, IntList shape, const StridedRef& out, const StridedRef& self,
                    const StridedRef& t1, const StridedRef& t2, const Scalar& value) override {
    cpu::Addc(divide, shape, out, self, t1, t2, value);
    return absl::OkStatus();
  }
  absl::Status ClampTensor(IntList shape, const StridedRef& out, const StridedRef& x,
                           const StridedRef& lo, const StridedRef& hi, bool has_lo,
                           bool has_hi) override {
    cpu::ClampTensor(shape, out, x, lo, hi, has_lo, has_hi);
    return absl::OkStatus();
  }
  absl::Status Sleep(int64_t ms) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return absl::OkStatus();
  }
};

constexpr int kMaxCudaDevices = 16;
std::atomic<Backend*> cuda_backends[kMaxCudaDevices];
std::atomic<Backend*> cpu_override{nullptr};

}  // namespace

Backend& CpuBackend() {
  static CpuBackendImpl* backend = new CpuBackendImpl();
  return *backend;
}

void RegisterBackend(Backend* backend) {
  const Device d = backend->device();
  if (d.is_cuda() && d.index >= 0 && d.index < kMaxCudaDevices) {
    cuda_backends[d.index].store(backend, std::memory_order_release);
  }
}

void OverrideBackend(Backend* backend) {
  if (backend->device().is_cpu()) {
    cpu_override.store(backend, std::memory_order_release);
  } else {
    RegisterBackend(backend);
  }
}

absl::StatusOr<Backend*> BackendFor(Device device) {
  if (device.is_cpu()) {
    Backend* b = cpu_override.load(std::memory_order_acquire);
    return b != nullptr ? b : &CpuBackend();
  }
  if (device.index >= 0 && device.index < kMaxCudaDevices) {
    if (Backend* b = cuda_backends[device.index].load(std::memory_order_acquire)) return b;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("device ", device.ToString(), " is not available on this server (no CUDA "
                   "device or CUDA support was not built)"));
}

}  // namespace tensord::engine
