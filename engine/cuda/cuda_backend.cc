// The CUDA backend: device discovery, a stream-ordered caching allocator per device and the
// data-movement kernels behind engine/runtime/backend.h.
//
// Inside a stream's task, work is launched on the tensord stream's lane for the device (a
// non-blocking cudaStream_t) and the call returns at once; the stream retires the task when the
// lane's host callback reports the work done (engine/runtime/exec_context.h). Outside a task (the
// synchronous engine API) work goes on the calling thread's per-thread stream and is waited for.
// No RPC thread waits for the GPU except to allocate (a sync of its own, empty, stream).
#include "engine/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "engine/runtime/backend.h"
#include "engine/cpu/strided_loop.h"
#include "engine/cuda/copy_kernels.h"
#include "engine/cuda/cublas.h"
#include "engine/cuda/linalg_kernels.h"
#include "engine/cuda/solver.h"
#include "engine/cuda/gemm_plan.h"
#include "engine/cuda/indexing_kernels.h"
#include "engine/cuda/loss_kernels.h"
#include "engine/cuda/owed_reports.h"
#include "engine/cuda/pool_kernels.h"
#include "engine/cuda/upsample_kernels.h"
#include "engine/cuda/reduce_kernels.h"
#include "engine/cuda/sort_kernels.h"
#include "engine/cuda/elementwise_kernels.h"
#include "engine/cuda/offset_calculator.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/runtime/device_health.h"
#include "engine/runtime/exec_context.h"
#include "engine/kernels/convert.h"

// Returns the CUDA error of `expr` as a Status naming `what` and the backend's device.
#define TENSORD_CUDA_TRY(expr, what)                                    \
  do {                                                                  \
    const cudaError_t tensord_cuda_error = (expr);                      \
    if (tensord_cuda_error != cudaSuccess) {                            \
      return ToStatus(tensord_cuda_error, what, device_);               \
    }                                                                   \
  } while (0)

namespace tensord::engine::cuda {
namespace {

std::string ErrorText(cudaError_t e) {
  return absl::StrCat(cudaGetErrorName(e), " (", cudaGetErrorString(e), ")");
}

// The errors after which CUDA refuses every later call of the process on that device (its
// context is lost): a kernel faulted. tensord's kernels report bad data through error slots
// instead, so one of these is a tensord bug, and only a restart recovers.
bool ContextLost(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

// Why every later call on `device` fails: the tail of each error of a lost context.
std::string LostContext(Device device) {
  return absl::StrCat("kernel on ", device.ToString(),
                      " faulted and CUDA has lost this server's context on it; every later call "
                      "on ", device.ToString(), " fails until the server restarts");
}

absl::Status ToStatus(cudaError_t e, absl::string_view what, Device device) {
  if (e == cudaSuccess) return absl::OkStatus();
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: clear it so the device stays usable
    return absl::ResourceExhaustedError(
        absl::StrCat(what, ": CUDA out of memory on ", device.ToString()));
  }
  if (ContextLost(e)) {
    ReportDeviceLost(device, ErrorText(e));
    return absl::InternalError(absl::StrCat(what, " on ", device.ToString(), " failed: ",
                                            ErrorText(e), ": an earlier ", LostContext(device)));
  }
  return absl::InternalError(
      absl::StrCat(what, " on ", device.ToString(), " failed: ", ErrorText(e)));
}

// Makes `index` the calling thread's current device (cached per thread).
cudaError_t UseDevice(int index) {
  thread_local int current = -1;
  if (current == index) return cudaSuccess;
  const cudaError_t e = cudaSetDevice(index);
  if (e == cudaSuccess) current = index;
  return e;
}

std::string FormatBytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) return absl::StrFormat("%.2f GiB", bytes / 1073741824.0);
  if (bytes >= (int64_t{1} << 20)) return absl::StrFormat("%.2f MiB", bytes / 1048576.0);
  return absl::StrCat(bytes, " bytes");
}

// The error of work a lost device will never finish (delivered to the streams that wait on it).
absl::Status LostWorkError(Device device, absl::string_view reason) {
  return absl::InternalError(absl::StrCat("its work on ", device.ToString(), " was lost: ", reason,
                                          ": a ", LostContext(device)));
}

// One GPU's owed reports (owed_reports.h) and their watch. After a kernel faults, CUDA never runs
// the host functions queued behind the fault, so while a report has been owed for a while a
// thread of the watch probes the device (an event recorded on a stream of its own: one call, no
// wait); a lost context fails that call, and every owed report is delivered with the reason.
// A loss found by any other call (ToStatus) delivers them too, through the device-lost listener.
class DeviceWatch {
 public:
  // The watch of cuda:`index`, made on first use and never destroyed (lanes may report at exit).
  static DeviceWatch& For(int index) {
    static absl::Mutex mu(absl::kConstInit);
    static std::array<DeviceWatch*, kMaxCudaDevices> watches{};
    absl::MutexLock lock(&mu);
    DeviceWatch*& watch = watches[static_cast<size_t>(index) % watches.size()];
    if (watch == nullptr) watch = new DeviceWatch(index);
    return *watch;
  }

  // Registers a report owed from now on; starts the watch's thread on first use.
  OwedReports::Handle Owe(OwedReports::Done done) {
    absl::call_once(started_, [this] { std::thread([this] { Watch(); }).detach(); });
    return reports_.Add(std::move(done), absl::Now());
  }
  bool Deliver(const OwedReports::Handle& report, absl::Status status) {
    return reports_.Deliver(report, std::move(status));
  }
  // The device's context is lost (`e` said so): the listeners are told once (the server stops
  // SERVING), and every report owed now is delivered with the reason (those owed after an
  // earlier report of the loss included).
  void Lost(cudaError_t e) {
    ReportDeviceLost(device_, ErrorText(e));
    reports_.FailAll(LostWorkError(device_, ErrorText(e)));
  }
  Device device() const { return device_; }

 private:
  static constexpr absl::Duration kProbeEvery = absl::Milliseconds(250);

  explicit DeviceWatch(int index) : device_{DeviceType::kCUDA, index} {
    AddDeviceLostListener([this](const LostDevice& lost) {
      if (lost.device == device_) reports_.FailAll(LostWorkError(device_, lost.reason));
    });
  }

  void Watch() {
    cudaStream_t probe = nullptr;
    cudaEvent_t event = nullptr;
    for (;;) {
      reports_.WaitUntilOwed(absl::InfiniteDuration());
      absl::SleepFor(kProbeEvery);
      const std::optional<absl::Time> oldest = reports_.OldestSince();
      if (!oldest || absl::Now() - *oldest < kProbeEvery) continue;
      cudaError_t e = UseDevice(device_.index);
      if (e == cudaSuccess && probe == nullptr) {
        e = cudaStreamCreateWithFlags(&probe, cudaStreamNonBlocking);
      }
      if (e == cudaSuccess && event == nullptr) {
        e = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
      }
      if (e == cudaSuccess) e = cudaEventRecord(event, probe);
      if (e == cudaSuccess) e = cudaEventQuery(event);
      if (e == cudaSuccess || e == cudaErrorNotReady) continue;
      if (ContextLost(e)) {
        Lost(e);
      } else {
        (void)cudaGetLastError();  // not sticky: the device still works
      }
    }
  }

  const Device device_;
  OwedReports reports_;
  absl::once_flag started_;
};

// A tensord stream's queue on one GPU.
// A cudaEvent with timing, recorded on a lane's stream (DeviceLane::Mark).
class CudaMark final : public LaneMark {
 public:
  explicit CudaMark(cudaEvent_t event) : event_(event) {}
  ~CudaMark() override { (void)cudaEventDestroy(event_); }
  CudaMark(const CudaMark&) = delete;
  CudaMark& operator=(const CudaMark&) = delete;

  absl::StatusOr<int64_t> NanosecondsSince(const LaneMark& earlier) const override {
    float ms = 0;
    const cudaError_t e =
        cudaEventElapsedTime(&ms, static_cast<const CudaMark&>(earlier).event_, event_);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return absl::UnavailableError(absl::StrCat("cudaEventElapsedTime: ", cudaGetErrorString(e)));
    }
    return static_cast<int64_t>(static_cast<double>(ms) * 1e6);
  }

 private:
  cudaEvent_t event_;
};

class CudaLane final : public DeviceLane {
 public:
  explicit CudaLane(int device_index)
      : watch_(DeviceWatch::For(device_index)), device_index_(device_index) {
    if (UseDevice(device_index) != cudaSuccess ||
        cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) != cudaSuccess) {
      (void)cudaGetLastError();
      stream_ = cudaStreamPerThread;  // still in order; only less concurrent
      owned_ = false;
    }
  }
  ~CudaLane() override {
    // Work still queued (if any) may write the pinned error slots and use the handles'
    // workspaces: it finishes before they go (cudaStreamDestroy alone would let it run on).
    // Never on CUDA's host-function thread (Stream::RequestLaneReports hands its reference to
    // the executor), where a wait would wait for itself.
    (void)(owned_ ? cudaStreamSynchronize(stream_) : cudaDeviceSynchronize());
    DestroyCublasHandle(cublas_);
    DestroySolverHandle(solver_);
    if (owned_) (void)cudaStreamDestroy(stream_);
    if (slots_ != nullptr) (void)cudaFreeHost(slots_);
  }
  cudaStream_t stream() const { return stream_; }
  // This lane's cuBLAS handle (made on its first product): one per stream, so that products on
  // two lanes never share a handle's workspace.
  void*& cublas_handle() { return cublas_; }
  // Its cuSOLVER handle (made on its first factorization), for the same reason.
  void*& solver_handle() { return solver_; }

  // Error slots live in pinned, mapped host memory: kernels write them directly, the host reads
  // them after the lane's report, with no copy.
  KernelError* AcquireErrorSlot(int64_t* handle) override {
    absl::MutexLock lock(&mu_);
    if (slots_ == nullptr) {
      void* p = nullptr;
      if (cudaHostAlloc(&p, sizeof(KernelError) * kSlots, cudaHostAllocMapped) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
      }
      slots_ = static_cast<KernelError*>(p);
      for (int64_t i = kSlots - 1; i >= 0; --i) free_.push_back(i);
    }
    if (free_.empty()) return nullptr;
    *handle = free_.back();
    free_.pop_back();
    slots_[*handle] = KernelError();
    return &slots_[*handle];  // unified addressing: the host address works on the device
  }

  KernelError ReleaseErrorSlot(int64_t handle) override {
    absl::MutexLock lock(&mu_);
    const KernelError error = slots_[handle];
    free_.push_back(handle);
    return error;
  }

  std::unique_ptr<LaneMark> Mark() override {
    cudaEvent_t event = nullptr;
    if (UseDevice(device_index_) != cudaSuccess || cudaEventCreate(&event) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    if (cudaEventRecord(event, stream_) != cudaSuccess) {
      (void)cudaGetLastError();
      (void)cudaEventDestroy(event);
      return nullptr;
    }
    return std::make_unique<CudaMark>(event);
  }

  void AfterLaunchedWork(absl::AnyInvocable<void(absl::Status)> done) override {
    // The device's signal delivers the report, unless the watch has delivered it already (the
    // device was lost; then CUDA never runs the function, and the token is never freed).
    struct Token {
      DeviceWatch* watch;
      OwedReports::Handle report;
    };
    auto* token = new Token{&watch_, watch_.Owe(std::move(done))};
    const cudaError_t e = cudaLaunchHostFunc(
        stream_,
        [](void* p) {
          std::unique_ptr<Token> t(static_cast<Token*>(p));
          t->watch->Deliver(t->report, absl::OkStatus());
        },
        token);
    if (e != cudaSuccess) {
      std::unique_ptr<Token> t(token);
      cudaError_t failed = e;
      if (!ContextLost(e)) {  // the work itself may be fine: report once the stream drains
        (void)cudaGetLastError();
        failed = cudaStreamSynchronize(stream_);
      }
      if (ContextLost(failed)) {
        watch_.Lost(failed);  // delivers every owed report, this one among them
        return;
      }
      watch_.Deliver(t->report, ToStatus(failed, "waiting for a stream's work", watch_.device()));
    }
  }

 private:
  static constexpr int64_t kSlots = 65536;  // fallible ops in flight on one lane, at most

  DeviceWatch& watch_;
  const int device_index_;
  cudaStream_t stream_ = nullptr;
  bool owned_ = true;
  void* cublas_ = nullptr;
  void* solver_ = nullptr;
  absl::Mutex mu_;
  KernelError* slots_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::vector<int64_t> free_ ABSL_GUARDED_BY(mu_);
};

// Where the calling code launches on `owner`'s device: the running task's lane (asynchronous) or
// this thread's per-thread stream (synchronous: the caller waits).
struct LaunchTarget {
  cudaStream_t stream;
  bool async;
  CudaLane* lane;  // null for the per-thread stream
};

LaunchTarget TargetFor(const Backend* owner, int device_index) {
  if (ExecContext* context = ExecContext::Current()) {
    auto* lane = static_cast<CudaLane*>(context->Launch(
        owner, [device_index] { return std::make_unique<CudaLane>(device_index); }));
    return {lane->stream(), true, lane};
  }
  return {cudaStreamPerThread, false, nullptr};
}

// The cuBLAS handle for work on `to`: its lane's, or the calling thread's for its per-thread
// stream (one per device), so that no two streams share one.
void*& CublasHandleFor(const LaunchTarget& to, int device_index) {
  if (to.lane != nullptr) return to.lane->cublas_handle();
  // Kept for the thread's life (never destroyed at exit, when the CUDA runtime may be gone).
  thread_local std::array<void*, kMaxCudaDevices> handles{};
  return handles[device_index];
}

// The cuSOLVER handle for work on `to`, as CublasHandleFor.
void*& SolverHandleFor(const LaunchTarget& to, int device_index) {
  if (to.lane != nullptr) return to.lane->solver_handle();
  thread_local std::array<void*, kMaxCudaDevices> handles{};
  return handles[device_index];
}

// Device memory from the device's stream-ordered pool (cudaMallocAsync): freed blocks stay in the
// pool for reuse, ReleaseCached gives them back to the driver. Machines whose driver has no
// memory pools get plain cudaMalloc/cudaFree.
class CudaAllocator final : public Allocator {
 public:
  CudaAllocator(const Backend* owner, Device device) : owner_(owner), device_(device) {
    int supported = 0;
    if (UseDevice(device.index) == cudaSuccess &&
        cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device.index) ==
            cudaSuccess &&
        supported != 0 && cudaDeviceGetDefaultMemPool(&pool_, device.index) == cudaSuccess) {
      // Keep freed memory for reuse between ops; ReleaseCached trims it when the server idles.
      uint64_t keep = UINT64_MAX;
      (void)cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep);
      // A block freed on a lane is reused by an allocation only once the lane's work is done,
      // never by making the allocating thread wait for that lane.
      int no = 0;
      (void)cudaMemPoolSetAttribute(pool_, cudaMemPoolReuseAllowInternalDependencies, &no);
    } else {
      pool_ = nullptr;
      (void)cudaGetLastError();
    }
  }

  Device device() const override { return device_; }

  absl::StatusOr<void*> Allocate(int64_t nbytes) override {
    if (nbytes == 0) return nullptr;
    if (nbytes < 0) return absl::InvalidArgumentError("negative allocation size");
    cudaError_t e = UseDevice(device_.index);
    void* ptr = nullptr;
    if (e == cudaSuccess) {
      if (pool_ != nullptr) {
        e = cudaMallocFromPoolAsync(&ptr, static_cast<size_t>(nbytes), pool_,
                                    cudaStreamPerThread);
        // The block may be used on any stream next: order it before everything by waiting for
        // this thread's (empty) stream.
        if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamPerThread);
      } else {
        e = cudaMalloc(&ptr, static_cast<size_t>(nbytes));
      }
    }
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      size_t free_bytes = 0, total_bytes = 0;
      (void)cudaMemGetInfo(&free_bytes, &total_bytes);
      return absl::ResourceExhaustedError(absl::StrCat(
          "CUDA out of memory. Tried to allocate ", FormatBytes(nbytes), " on ",
          device_.ToString(), " (", FormatBytes(static_cast<int64_t>(total_bytes)),
          " total capacity; ", FormatBytes(static_cast<int64_t>(free_bytes)), " free; ",
          FormatBytes(live_bytes_.load()), " allocated by tensord)"));
    }
    if (e != cudaSuccess) return ToStatus(e, "allocate", device_);
    live_bytes_ += nbytes;
    live_allocations_ += 1;
    return ptr;
  }

  void Deallocate(void* ptr, int64_t nbytes) override {
    if (ptr == nullptr) return;
    // A storage is freed after every task that used it has retired, so its free needs no
    // ordering. Scratch memory freed inside a task is freed on the task's lane, after the work
    // launched there that uses it.
    (void)UseDevice(device_.index);
    DeviceLane* lane =
        ExecContext::Current() != nullptr ? ExecContext::Current()->Launched(owner_) : nullptr;
    if (pool_ != nullptr) {
      (void)cudaFreeAsync(ptr, lane != nullptr ? static_cast<CudaLane*>(lane)->stream()
                                               : cudaStreamPerThread);
    } else {
      if (lane != nullptr) (void)cudaStreamSynchronize(static_cast<CudaLane*>(lane)->stream());
      (void)cudaFree(ptr);
    }
    live_bytes_ -= nbytes;
    live_allocations_ -= 1;
  }

  AllocatorStats stats() const override {
    AllocatorStats s;
    s.live_bytes = live_bytes_.load();
    s.live_allocations = live_allocations_.load();
    if (pool_ != nullptr) {
      uint64_t reserved = 0, used = 0;
      if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved) ==
              cudaSuccess &&
          cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess) {
        s.cached_bytes = static_cast<int64_t>(reserved - used);
      }
    }
    return s;
  }

  void ReleaseCached() override {
    if (pool_ == nullptr) return;
    (void)UseDevice(device_.index);
    (void)cudaStreamSynchronize(cudaStreamPerThread);
    (void)cudaMemPoolTrimTo(pool_, 0);
  }

 private:
  const Backend* const owner_;
  const Device device_;
  cudaMemPool_t pool_ = nullptr;
  std::atomic<int64_t> live_bytes_{0};
  std::atomic<int64_t> live_allocations_{0};
};

class CudaBackend final : public Backend {
 public:
  CudaBackend(Device device, int multiprocessors)
      : device_(device), multiprocessors_(multiprocessors), allocator_(this, device) {}

  Device device() const override { return device_; }
  Allocator& allocator() override { return allocator_; }

  absl::Status Copy(IntList sizes, const StridedRef& dst, const StridedRef& src) override {
    const cpu::StridedLoop<2> loop(sizes, {dst.strides, src.strides},
                                   {ItemSize(dst.dtype), ItemSize(src.dtype)});
    if (loop.numel() == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "copy");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchCopy(MakeOffsetCalculator<2>(loop), loop.numel(), dst.data, dst.dtype,
                             src.data, src.dtype, to.stream),
                  to, "copy");
  }

  absl::Status Fill(IntList sizes, const StridedRef& dst, const Scalar& value) override {
    const int64_t itemsize = ItemSize(dst.dtype);
    const cpu::StridedLoop<1> loop(sizes, {dst.strides}, {itemsize});
    if (loop.numel() == 0) return absl::OkStatus();
    // The value converted once, on the host, to dst's bit pattern (as the CPU fill).
    const uint64_t pattern = FillPattern(dst.dtype, value);
    TENSORD_CUDA_TRY(UseDevice(device_.index), "fill");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchFill(MakeOffsetCalculator<1>(loop), loop.numel(), dst.data, itemsize,
                             pattern, to.stream),
                  to, "fill");
  }

  absl::Status Arange(char* out, DType dtype, int64_t n, const Scalar& start,
                      const Scalar& step) override {
    if (n == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "arange");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchArange(out, dtype, n, IsFloating(dtype), start.to_double(),
                               step.to_double(), start.to_int(), step.to_int(), to.stream),
                  to, "arange");
  }

  absl::Status CopyToHost(void* host_dst, const void* device_src, int64_t nbytes) override {
    if (nbytes == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "copy to host");
    // After the work queued before it on the lane; the host bytes are needed now.
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(cudaMemcpyAsync(host_dst, device_src, static_cast<size_t>(nbytes),
                                  cudaMemcpyDeviceToHost, to.stream),
                  LaunchTarget{to.stream, false, to.lane}, "copy to host");
  }

  absl::Status CopyFromHost(void* device_dst, const void* host_src, int64_t nbytes) override {
    if (nbytes == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "copy from host");
    // Waited for: the host bytes may go away when this returns.
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(cudaMemcpyAsync(device_dst, host_src, static_cast<size_t>(nbytes),
                                  cudaMemcpyHostToDevice, to.stream),
                  LaunchTarget{to.stream, false, to.lane}, "copy from host");
  }

  absl::Status Binary(BinaryOp op, IntList shape, const StridedRef& out, const StridedRef& a,
                      const StridedRef& b, const Scalar& alpha) override {
    const cpu::StridedLoop<3> loop(shape, {out.strides, a.strides, b.strides},
                                   {ItemSize(out.dtype), ItemSize(a.dtype), ItemSize(b.dtype)});
    if (loop.numel() == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "binary op");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchBinary(op, a.dtype, alpha, MakeOffsetCalculator<3>(loop), loop.numel(),
                               out.data, a.data, b.data, to.stream),
                  to, "binary op");
  }

  absl::Status CheckValues(ValueCheck check, absl::string_view op, IntList shape,
                           const StridedRef& values) override {
    const cpu::StridedLoop<1> loop(shape, {values.strides}, {ItemSize(values.dtype)});
    if (loop.numel() == 0) return absl::OkStatus();
    return LaunchChecked(
        op,
        [op = std::string(op), check](const KernelError&) {
          return RuntimeError(op, ValueCheckMessage(check));
        },
        [&](KernelError* slot, cudaStream_t stream) {
          return LaunchCheckValues(check, values.dtype, MakeOffsetCalculator<1>(loop),
                                   loop.numel(), values.data, slot, stream);
        });
  }

  absl::Status Random(const DistArgs& dist, const StridedRef& out, int64_t n,
                      const double* probs) override {
    if (n == 0) return absl::OkStatus();
    if (probs == nullptr) {  // nothing to check: no error slot
      TENSORD_CUDA_TRY(UseDevice(device_.index), "random");
      const LaunchTarget to = TargetFor(this, device_.index);
      return Finish(LaunchRandom(dist, out.dtype, out.data, n, nullptr, nullptr, to.stream), to,
                    "random");
    }
    return LaunchChecked(
        dist.dist == Dist::kPoisson    ? "poisson"
        : dist.dist == Dist::kBinomial ? "binomial"
                                       : "bernoulli",
        [dist](const KernelError&) { return DrawParameterError(dist.dist); },
        [&](KernelError* slot, cudaStream_t stream) {
          return LaunchRandom(dist, out.dtype, out.data, n, probs, slot, stream);
        });
  }

  absl::Status Unary(UnaryOp op, IntList shape, const StridedRef& out, const StridedRef& in,
                     const UnaryArgs& args) override {
    const cpu::StridedLoop<2> loop(shape, {out.strides, in.strides},
                                   {ItemSize(out.dtype), ItemSize(in.dtype)});
    if (loop.numel() == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "unary op");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchUnary(op, in.dtype, args, MakeOffsetCalculator<2>(loop), loop.numel(),
                              out.data, in.data, to.stream),
                  to, "unary op");
  }
  absl::Status Where(IntList shape, const StridedRef& out, const StridedRef& cond,
                     const StridedRef& a, const StridedRef& b) override {
    return Ternary(TernaryOp::kWhere, shape, out, cond, a, b, Scalar(), false, false, a.dtype);
  }
  absl::Status Lerp(IntList shape, const StridedRef& out, const StridedRef& start,
                    const StridedRef& end, const StridedRef& weight) override {
    return Ternary(TernaryOp::kLerp, shape, out, start, end, weight, Scalar(), false, false,
                   start.dtype);
  }
  absl::Status Addc(bool divide, IntList shape, const StridedRef& out, const StridedRef& self,
                    const StridedRef& t1, const StridedRef& t2, const Scalar& value) override {
    return Ternary(divide ? TernaryOp::kAddcdiv : TernaryOp::kAddcmul, shape, out, self, t1, t2,
                   value, false, false, self.dtype);
  }
  absl::Status ClampTensor(IntList shape, const StridedRef& out, const StridedRef& x,
                           const StridedRef& lo, const StridedRef& hi, bool has_lo,
                           bool has_hi) override {
    return Ternary(TernaryOp::kClamp, shape, out, x, lo, hi, Scalar(), has_lo, has_hi, x.dtype);
  }

  absl::Status Reduce(ReduceOp op, const ReduceGeometry& g, const StridedRef& in, char* out,
                      DType out_dtype, int64_t* indices, const ReduceArgs& args) override {
    TENSORD_CUDA_TRY(UseDevice(device_.index), "reduce");
    const LaunchTarget to = TargetFor(this, device_.index);
    const ReduceLaunch how = ChooseReduceLaunch(
        g, static_cast<int64_t>(multiprocessors_) * ReduceBlocksPerSm(op, in.dtype));
    void* scratch = nullptr;
    if (how.scratch_bytes > 0) {
      TENSORD_ASSIGN_OR_RETURN(scratch, allocator_.Allocate(how.scratch_bytes));
    }
    absl::Status status = Finish(
        LaunchReduce(op, g, in, out, out_dtype, indices, args, how, scratch, to.stream), to,
        "reduce");
    // Freed on the stream, after the kernels that use it.
    if (scratch != nullptr) allocator_.Deallocate(scratch, how.scratch_bytes);
    return status;
  }

  absl::Status CumExtreme(bool max, IntList shape, int64_t dim, const StridedRef& in,
                          const StridedRef& values, const StridedRef& indices) override {
    TENSORD_CUDA_TRY(UseDevice(device_.index), "cummax");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchCumExtreme(max, shape, dim, in, values, indices, to.stream), to, "cummax");
  }
  absl::Status Scan(ScanOp op, IntList shape, int64_t dim, const StridedRef& in,
                    const StridedRef& out) override {
    TENSORD_CUDA_TRY(UseDevice(device_.index), "scan");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchScan(op, shape, dim, in, out, to.stream), to, "scan");
  }

  absl::Status Softmax(bool log, IntList shape, int64_t dim, const StridedRef& in,
                       const StridedRef& out) override {
    TENSORD_CUDA_TRY(UseDevice(device_.index), "softmax");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchSoftmax(log, shape, dim, in, out, to.stream), to, "softmax");
  }

  absl::Status ChannelAffine(const ChannelAffineCall& call) override {
    TENSORD_CUDA_TRY(UseDevice(device_.index), "batch_norm");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchChannelAffine(call, to.stream), to, "batch_norm");
  }

  absl::Status CrossEntropy(const CrossEntropyCall& call) override {
    const char* op = call.log_probs ? "nll_loss" : "cross_entropy";
    const int64_t bytes = CrossEntropyScratchBytes(call);
    void* scratch = nullptr;
    if (bytes > 0) {
      TENSORD_ASSIGN_OR_RETURN(scratch, allocator_.Allocate(bytes));
    }
    absl::Status status = LaunchChecked(
        op,
        [op](const KernelError& e) {
          return IndexError(op, absl::StrCat("Target ", e.a, " is out of bounds."));
        },
        [&](KernelError* slot, cudaStream_t stream) {
          return LaunchCrossEntropy(call, scratch, slot, stream);
        });
    // Freed on the stream, after the kernels that use it.
    if (scratch != nullptr) allocator_.Deallocate(scratch, bytes);
    return status;
  }

  absl::Status CtcLoss(const CtcLossCall& call) override {
    if (call.batch > INT32_MAX) {  // a block per element
      return absl::InvalidArgumentError(absl::StrCat(
          "ctc_loss: a batch of ", call.batch, " is more than the GPU kernel takes (", INT32_MAX,
          ")"));
    }
    const CtcLaunch how = ChooseCtcLaunch(call);
    TENSORD_ASSIGN_OR_RETURN(void* scratch, allocator_.Allocate(how.scratch_bytes));
    absl::Status status = LaunchChecked(
        "ctc_loss", [](const KernelError& e) { return CtcLossFailure(e, "ctc_loss_gpu"); },
        [&](KernelError* slot, cudaStream_t stream) {
          return LaunchCtcLoss(call, how, scratch, slot, stream);
        });
    allocator_.Deallocate(scratch, how.scratch_bytes);  // on the stream, after the kernels
    return status;
  }

  absl::Status Pool(const PoolCall& call) override {
    TENSORD_CUDA_TRY(UseDevice(device_.index), "pool");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchPool(call, to.stream), to, "pool");
  }

  absl::Status Upsample(const UpsampleCall& call) override {
    TENSORD_CUDA_TRY(UseDevice(device_.index), "upsample");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchUpsample(call, to.stream), to, "upsample");
  }

  absl::Status LayerNorm(const LayerNormCall& call) override {
    TENSORD_CUDA_TRY(UseDevice(device_.index), "layer_norm");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchLayerNorm(call, to.stream), to, "layer_norm");
  }

  absl::Status Matmul(const MatmulCall& call) override {
    int64_t products = 1;
    for (int64_t s : call.batch) products *= s;
    if (products == 0 || call.n == 0 || call.m == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "matmul");
    const LaunchTarget to = TargetFor(this, device_.index);
    // An operand cuBLAS cannot take as it lies (neither matrix stride 1) goes through a
    // contiguous copy on the device, freed on the stream after the product.
    MatmulCall c = call;
    const int nb = static_cast<int>(call.batch.size());
    DimVector strides_a, strides_b;
    struct Scratch {
      void* data;
      int64_t nbytes;
    };
    std::vector<Scratch> scratch;
    const auto usable = [&](StridedRef& x, int64_t rows, int64_t cols,
                            DimVector& strides) -> absl::Status {
      if (OperandLayout(rows, cols, x.strides[nb], x.strides[nb + 1]).usable) {
        return absl::OkStatus();
      }
      DimVector sizes(call.batch.begin(), call.batch.end());
      sizes.push_back(rows);
      sizes.push_back(cols);
      strides = ContiguousStrides(sizes);  // an empty dim still gets a usable stride
      int64_t numel = 1;
      for (int64_t s : sizes) numel *= s;
      const int64_t nbytes = numel * ItemSize(x.dtype);
      TENSORD_ASSIGN_OR_RETURN(void* data, allocator_.Allocate(nbytes));
      scratch.push_back({data, nbytes});
      const StridedRef dst{static_cast<char*>(data), x.dtype, strides};
      TENSORD_RETURN_IF_ERROR(Copy(sizes, dst, x));
      x = dst;
      return absl::OkStatus();
    };
    absl::Status status = usable(c.a, call.n, call.k, strides_a);
    if (status.ok()) status = usable(c.b, call.k, call.m, strides_b);
    if (status.ok()) {
      status = CublasMatmul(device_, to.stream, CublasHandleFor(to, device_.index), c);
    }
    if (status.ok()) status = Finish(cudaGetLastError(), to, "matmul");
    for (const Scratch& s : scratch) allocator_.Deallocate(s.data, s.nbytes);
    return status;
  }

  // ---- Indexing: indices checked on the device, into the op's error slot ----

  absl::Status IndexSelect(const Tensor& out, const Tensor& self, int64_t dim,
                           const Tensor& index) override {
    TENSORD_RETURN_IF_ERROR(CheckIndexDims("index_select", {&out, &self, &index}));
    return LaunchChecked(
        "index_select",
        [dim, ndim = self.dim()](const KernelError& e) {
          return IndexSelectOutOfRange(e.a, dim, ndim, e.b);
        },
        [&](KernelError* slot, cudaStream_t stream) {
          return LaunchIndexSelect(out, self, dim, index, slot, stream);
        });
  }

  // ---- Sorting: every slice at once (sort_kernels.h) ----

  // Always stable, the k always sorted: a valid answer for every `stable` and TopKOrder.
  absl::Status Sort(const Tensor& self, int64_t dim, bool descending, bool /*stable*/,
                    const Tensor& values, const Tensor& indices) override {
    const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
    return SortSlices("sort", self, dim, n, descending, values, indices);
  }
  absl::Status TopK(const Tensor& self, int64_t k, int64_t dim, bool largest,
                    TopKOrder /*order*/, const Tensor& values, const Tensor& indices) override {
    return SortSlices("topk", self, dim, k, largest, values, indices);
  }
  absl::Status SearchSorted(const SearchSortedCall& call) override {
    if (call.count == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "searchsorted");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchSearchSorted(call, to.stream), to, "searchsorted");
  }
  absl::Status SortSlices(const char* what, const Tensor& self, int64_t dim, int64_t k,
                          bool descending, const Tensor& values, const Tensor& indices) {
    if (self.numel() == 0 || k == 0) return absl::OkStatus();
    TENSORD_RETURN_IF_ERROR(CheckIndexDims(what, {&self, &values, &indices}));
    TENSORD_CUDA_TRY(UseDevice(device_.index), what);
    const LaunchTarget to = TargetFor(this, device_.index);
    const size_t bytes = SortScratchBytes(self);
    TENSORD_ASSIGN_OR_RETURN(void* scratch, allocator_.Allocate(static_cast<int64_t>(bytes)));
    absl::Status status = Finish(LaunchSortSlices(self, dim, k, descending, values, indices,
                                                  scratch, bytes, to.stream),
                                 to, what);
    // Freed on the stream, after the kernels that use it.
    allocator_.Deallocate(scratch, static_cast<int64_t>(bytes));
    return status;
  }

  absl::Status Gather(const Tensor& out, const Tensor& self, int64_t dim,
                      const Tensor& index) override {
    TENSORD_RETURN_IF_ERROR(CheckIndexDims("gather", {&out, &self, &index}));
    return LaunchChecked("gather", OutOfBoundsForDim("gather", dim),
                         [&](KernelError* slot, cudaStream_t stream) {
                           return LaunchGather(out, self, dim, index, slot, stream);
                         });
  }

  absl::Status Scatter(absl::string_view op, const Tensor& self, int64_t dim,
                       const Tensor& index, const Tensor& src, const Scalar* value,
                       ScatterMode mode) override {
    TENSORD_RETURN_IF_ERROR(CheckIndexDims(op, {&self, &index, &src}));
    const uint64_t pattern = value != nullptr ? FillPattern(self.dtype(), *value) : 0;
    return LaunchChecked(op, OutOfBoundsForDim(std::string(op), dim),
                         [&](KernelError* slot, cudaStream_t stream) {
                           return LaunchScatter(self, dim, index, src,
                                                value != nullptr ? &pattern : nullptr, mode,
                                                slot, stream);
                         });
  }

  absl::Status CheckIndexBounds(absl::string_view op, const Tensor& index, int64_t dim,
                                int64_t size) override {
    TENSORD_RETURN_IF_ERROR(CheckIndexDims(op, {&index}));
    return LaunchChecked(op, OutOfBoundsForDim(std::string(op), dim),
                         [&](KernelError* slot, cudaStream_t stream) {
                           return LaunchCheckIndexBounds(index, size, slot, stream);
                         });
  }

  absl::Status Take(const Tensor& out, const Tensor& self, const Tensor& index) override {
    if (index.numel() > 0 && self.numel() == 0) {
      return IndexError("take", "cannot take from an empty tensor");
    }
    TENSORD_RETURN_IF_ERROR(CheckIndexDims("take", {&out, &self, &index}));
    return LaunchChecked("take", OutOfRangeOfElements("take"),
                         [&](KernelError* slot, cudaStream_t stream) {
                           return LaunchTake(out, self, index, slot, stream);
                         });
  }

  absl::Status Put(const Tensor& self, const Tensor& index, const Tensor& source,
                   bool accumulate) override {
    TENSORD_RETURN_IF_ERROR(CheckIndexDims("put_", {&self, &index, &source}));
    return LaunchChecked("put_", OutOfRangeOfElements("put_"),
                         [&](KernelError* slot, cudaStream_t stream) {
                           return LaunchPut(self, index, source, accumulate, slot, stream);
                         });
  }

  // ---- Factorizations: cuSOLVER on the stream (solver.h), info checked on the device ----

  absl::Status LuFactor(const MatrixBatch& a, int32_t* pivots,
                        const LinalgErrorSpec& spec) override {
    if (a.empty()) return absl::OkStatus();
    return Factor("lu_factor", a.batch, spec, [&](const SolverCall& c) {
      return SolverLuFactor(c, a, pivots);
    });
  }
  absl::Status LuSolve(const MatrixBatch& lu, const int32_t* pivots, bool transpose,
                       const MatrixBatch& b) override {
    if (lu.empty() || b.empty()) return absl::OkStatus();
    return Factor("lu_solve", lu.batch, LinalgErrorSpec{}, [&](const SolverCall& c) {
      return SolverLuSolve(c, lu, pivots, transpose, b);
    });
  }
  absl::Status LuPermutation(const int32_t* pivots, int64_t batch, int64_t swaps, int64_t rows,
                             int64_t* perm) override {
    if (batch == 0 || rows == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "lu_unpack");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchLuPermutation(pivots, batch, swaps, rows, perm, to.stream), to,
                  "lu_unpack");
  }
  absl::Status Cholesky(const MatrixBatch& a, bool upper, const LinalgErrorSpec& spec) override {
    if (a.empty()) return absl::OkStatus();
    return Factor("cholesky", a.batch, spec, [&](const SolverCall& c) -> absl::Status {
      TENSORD_RETURN_IF_ERROR(SolverCholesky(c, a, upper));
      TENSORD_CUDA_TRY(LaunchZeroTriangle(a, /*keep_upper=*/upper, c.stream), "cholesky");
      return absl::OkStatus();
    });
  }
  absl::Status Geqrf(const MatrixBatch& a, char* tau) override {
    if (a.empty()) return absl::OkStatus();
    return Factor("geqrf", a.batch, LinalgErrorSpec{},
                  [&](const SolverCall& c) { return SolverQr(c, a, tau); });
  }
  absl::Status HouseholderProduct(const MatrixBatch& reflectors, const char* tau,
                                  const MatrixBatch& q) override {
    if (q.empty()) return absl::OkStatus();
    // No reflectors (tau of length 0): the product of none is the identity; orgqr is not given
    // null reflectors and tau.
    if (reflectors.cols == 0) return FillMatrices(q, /*identity=*/true);
    // SolverFormQ copies the reflectors' columns into q and runs orgqr with k = their count.
    return Factor("householder_product", q.batch, LinalgErrorSpec{},
                  [&](const SolverCall& c) { return SolverFormQ(c, reflectors, tau, q); });
  }
  absl::Status Qr(const MatrixBatch& a, const MatrixBatch& r, const MatrixBatch& q) override {
    const int64_t k = std::min(a.rows, a.cols);
    if (a.batch == 0) return absl::OkStatus();
    if (k == 0) {  // R is all zeros, Q the identity
      TENSORD_RETURN_IF_ERROR(FillMatrices(r, /*identity=*/false));
      return q.batch > 0 ? FillMatrices(q, /*identity=*/true) : absl::OkStatus();
    }
    return Factor("qr", a.batch, LinalgErrorSpec{}, [&](const SolverCall& c) -> absl::Status {
      TENSORD_ASSIGN_OR_RETURN(void* tau, c.scratch(a.batch * k * ItemSize(a.dtype)));
      TENSORD_RETURN_IF_ERROR(SolverQr(c, a, static_cast<char*>(tau)));
      TENSORD_CUDA_TRY(LaunchTakeUpper(a, r, c.stream), "qr");
      if (q.batch == 0) return absl::OkStatus();
      return SolverFormQ(c, a, static_cast<const char*>(tau), q);
    });
  }
  absl::Status Svd(const MatrixBatch& a, char* s, const MatrixBatch& u, const MatrixBatch& vh,
                   const LinalgErrorSpec& spec) override {
    const int64_t k = std::min(a.rows, a.cols);
    if (a.batch == 0) return absl::OkStatus();
    const bool vectors = u.batch > 0;
    if (k == 0) {
      if (!vectors) return absl::OkStatus();
      TENSORD_RETURN_IF_ERROR(FillMatrices(u, /*identity=*/true));
      return FillMatrices(vh, /*identity=*/true);
    }
    return Factor("svd", a.batch, spec, [&](const SolverCall& c) -> absl::Status {
      // Matrices with a NaN or an infinity reach the solver as zeros, then get the CPU
      // backend's answer (linalg_kernels.h).
      TENSORD_ASSIGN_OR_RETURN(void* flag_bytes,
                               c.scratch(a.batch * static_cast<int64_t>(sizeof(int))));
      int* flags = static_cast<int*>(flag_bytes);
      TENSORD_CUDA_TRY(cudaMemsetAsync(flags, 0, a.batch * sizeof(int), c.stream), "svd");
      TENSORD_CUDA_TRY(LaunchScreenNonFinite(a, flags, c.stream), "svd");
      if (!vectors) {
        TENSORD_RETURN_IF_ERROR(SolverSvd(c, a, s, MatrixBatch{}, MatrixBatch{}));
        TENSORD_CUDA_TRY(LaunchSvdOfNonFinite(flags, a, s, MatrixBatch{}, MatrixBatch{},
                                              c.infos, c.stream),
                         "svd");
        return absl::OkStatus();
      }
      // gesvdj gives V (n x vh.rows); torch wants Vh = V^T, written column-major.
      MatrixBatch v{nullptr, a.dtype, a.batch, a.cols, vh.rows};
      TENSORD_ASSIGN_OR_RETURN(void* vdata,
                               c.scratch(v.batch * v.rows * v.cols * ItemSize(a.dtype)));
      v.data = static_cast<char*>(vdata);
      TENSORD_RETURN_IF_ERROR(SolverSvd(c, a, s, u, v));
      TENSORD_CUDA_TRY(LaunchSvdOfNonFinite(flags, a, s, u, v, c.infos, c.stream), "svd");
      const DimVector sizes = {vh.batch, vh.rows, vh.cols};
      const DimVector to = {vh.rows * vh.cols, 1, vh.rows};
      const DimVector from = {v.rows * v.cols, v.rows, 1};
      return Copy(sizes, StridedRef{vh.data, vh.dtype, to}, StridedRef{v.data, v.dtype, from});
    });
  }
  absl::Status Eigh(const MatrixBatch& a, char* w, bool upper, bool vectors,
                    const LinalgErrorSpec& spec) override {
    if (a.empty()) return absl::OkStatus();
    return Factor("eigh", a.batch, spec, [&](const SolverCall& c) {
      return SolverEigh(c, a, w, upper, vectors);
    });
  }

  // Data-dependent ops run synchronously: they return with the work done.
  absl::StatusOr<int64_t> CountNonzero(const Tensor& self) override {
    TENSORD_RETURN_IF_ERROR(CheckIndexDims("nonzero", {&self}));
    TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> counts, BlockCounts(self));
    int64_t total = 0;
    for (int64_t c : counts) total += c;
    return total;
  }

  absl::Status NonzeroIndices(const Tensor& self, const Tensor& out) override {
    const int64_t count = out.dim() == 2 ? out.size(1) : 0;
    return WriteSelected(self, nullptr, self, count, out.data_as<int64_t>(), nullptr);
  }

  absl::Status MaskedSelect(const Tensor& out, const Tensor& self, const Tensor& mask) override {
    TENSORD_RETURN_IF_ERROR(CheckIndexDims("masked_select", {&out, &self, &mask}));
    return WriteSelected(self, &mask, mask, out.numel(), nullptr, out.data());
  }

  absl::Status Sleep(int64_t ms) override {
    TENSORD_CUDA_TRY(UseDevice(device_.index), "_sleep");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchSleep(ms, to.stream), to, "_sleep");
  }

 private:
  absl::Status Ternary(TernaryOp op, IntList shape, const StridedRef& out, const StridedRef& a,
                       const StridedRef& b, const StridedRef& c, const Scalar& value, bool has_lo,
                       bool has_hi, DType dtype) {
    const cpu::StridedLoop<4> loop(
        shape, {out.strides, a.strides, b.strides, c.strides},
        {ItemSize(out.dtype), ItemSize(a.dtype), ItemSize(b.dtype), ItemSize(c.dtype)});
    if (loop.numel() == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "ternary op");
    const LaunchTarget to = TargetFor(this, device_.index);
    return Finish(LaunchTernary(op, dtype, value, has_lo, has_hi, MakeOffsetCalculator<4>(loop),
                                loop.numel(), out.data, a.data, b.data, c.data, to.stream),
                  to, "ternary op");
  }

  static absl::Status CheckIndexDims(absl::string_view op,
                                     std::initializer_list<const Tensor*> tensors) {
    for (const Tensor* t : tensors) {
      if (t->dim() > kMaxIndexDims) {
        return absl::UnimplementedError(absl::StrCat(
            op, ": tensors of more than ", kMaxIndexDims, " dims are not indexed on a GPU"));
      }
    }
    return absl::OkStatus();
  }

  static KernelErrorDecoder OutOfBoundsForDim(std::string op, int64_t dim) {
    return [op = std::move(op), dim](const KernelError& e) {
      return IndexOutOfBoundsForDim(op, e.a, dim, e.b);
    };
  }

  static KernelErrorDecoder OutOfRangeOfElements(std::string op) {
    return [op = std::move(op)](const KernelError& e) {
      return IndexError(op, absl::StrCat("out of range: tried to access index ", e.a,
                                         " on a tensor of ", e.b, " elements."));
    };
  }

  // Per block of kSelectBlock row-major positions, how many `t` selects (its nonzero elements),
  // read back to the host.
  absl::StatusOr<std::vector<int64_t>> BlockCounts(const Tensor& t) {
    const int64_t blocks = SelectBlocks(t.numel());
    std::vector<int64_t> counts(static_cast<size_t>(blocks));
    if (blocks == 0) return counts;
    TENSORD_CUDA_TRY(UseDevice(device_.index), "nonzero");
    const LaunchTarget to = TargetFor(this, device_.index);
    const int64_t nbytes = blocks * 8;
    TENSORD_ASSIGN_OR_RETURN(void* device_counts, allocator_.Allocate(nbytes));
    cudaError_t e = LaunchCountSelected(t, nullptr, static_cast<int64_t*>(device_counts),
                                        to.stream);
    if (e == cudaSuccess) {
      e = cudaMemcpyAsync(counts.data(), device_counts, static_cast<size_t>(nbytes),
                          cudaMemcpyDeviceToHost, to.stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(to.stream);
    allocator_.Deallocate(device_counts, nbytes);
    if (e != cudaSuccess) return ToStatus(e, "nonzero", device_);
    return counts;
  }

  // Writes the positions `selector` selects (its nonzero elements), `count` of them, as indices
  // of `self` or as `self`'s elements under `mask`; waits for the work.
  absl::Status WriteSelected(const Tensor& self, const Tensor* mask, const Tensor& selector,
                             int64_t count, int64_t* indices, char* values) {
    if (count == 0) return absl::OkStatus();
    TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> starts, BlockCounts(selector));
    int64_t total = 0;
    for (int64_t& c : starts) {
      const int64_t here = c;
      c = total;
      total += here;
    }
    if (total != count) {
      return absl::InternalError(absl::StrCat("nonzero: counted ", total, " then ", count));
    }
    const LaunchTarget to = TargetFor(this, device_.index);
    const int64_t nbytes = static_cast<int64_t>(starts.size()) * 8;
    TENSORD_ASSIGN_OR_RETURN(void* device_starts, allocator_.Allocate(nbytes));
    cudaError_t e = cudaMemcpyAsync(device_starts, starts.data(), static_cast<size_t>(nbytes),
                                    cudaMemcpyHostToDevice, to.stream);
    if (e == cudaSuccess) {
      e = LaunchWriteSelected(self, mask, static_cast<const int64_t*>(device_starts), count,
                              indices, values, to.stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(to.stream);
    allocator_.Deallocate(device_starts, nbytes);
    return ToStatus(e, "nonzero", device_);
  }

  // Launches work that may find bad data (`launch(slot, stream)`), with an error slot that
  // `decode` turns into the op's error: inside a stream's task the op fails when it retires;
  // outside one the caller waits and gets the error now.
  template <typename Launch>
  absl::Status LaunchChecked(absl::string_view op, KernelErrorDecoder decode, Launch launch) {
    TENSORD_CUDA_TRY(UseDevice(device_.index), op);
    const LaunchTarget to = TargetFor(this, device_.index);
    if (to.async) {
      ExecContext* context = ExecContext::Current();
      KernelError* slot = context->ErrorSlot(context->Launched(this), std::move(decode));
      if (slot == nullptr) {
        return absl::ResourceExhaustedError(absl::StrCat(
            op, ": too many checked ops in flight on this stream; synchronize and retry"));
      }
      return Finish(launch(slot, to.stream), to, op);
    }
    void* p = nullptr;
    TENSORD_CUDA_TRY(cudaHostAlloc(&p, sizeof(KernelError), cudaHostAllocMapped), op);
    auto* slot = new (p) KernelError();
    absl::Status status = Finish(launch(slot, to.stream), to, op);
    const KernelError found = *slot;
    (void)cudaFreeHost(p);
    if (!status.ok()) return status;
    return found.code == KernelError::kNone ? absl::OkStatus() : decode(found);
  }

  // Runs `run` (cuSOLVER calls on the stream, solver.h) with a device info per matrix and scratch
  // freed on the stream afterwards; where spec asks, a positive info fails the op through its
  // error slot (LinalgFailure: the CPU backend's words).
  template <typename Run>
  absl::Status Factor(const char* what, int64_t batch, const LinalgErrorSpec& spec, Run run) {
    TENSORD_CUDA_TRY(UseDevice(device_.index), what);
    const LaunchTarget to = TargetFor(this, device_.index);
    std::vector<std::pair<void*, int64_t>> scratch;
    ScratchFn allocate = [&](int64_t bytes) -> absl::StatusOr<void*> {
      absl::StatusOr<void*> p = allocator_.Allocate(std::max<int64_t>(bytes, 1));
      if (p.ok()) scratch.emplace_back(*p, std::max<int64_t>(bytes, 1));
      return p;
    };
    absl::Status status;
    absl::StatusOr<void*> infos = allocate(batch * static_cast<int64_t>(sizeof(int)));
    if (!infos.ok()) {
      status = infos.status();
    } else {
      SolverCall call{device_, to.stream, SolverHandleFor(to, device_.index), allocate,
                      static_cast<int*>(*infos)};
      status = run(call);
      if (status.ok() && spec.infos != nullptr) {
        status = Finish(cudaMemcpyAsync(spec.infos, *infos, static_cast<size_t>(batch) * sizeof(int),
                                        cudaMemcpyDeviceToDevice, to.stream),
                        to, what);
      }
      if (status.ok() && spec.check != LinalgCheck::kNone) {
        const int* device_infos = static_cast<const int*>(*infos);
        status = LaunchChecked(
            spec.op, [spec](const KernelError& e) { return LinalgFailure(spec, e.a, e.b); },
            [&](KernelError* slot, cudaStream_t stream) {
              return LaunchCheckInfos(device_infos, batch, slot, stream);
            });
      } else if (status.ok()) {
        status = Finish(cudaGetLastError(), to, what);
      }
    }
    for (const auto& [p, bytes] : scratch) allocator_.Deallocate(p, bytes);  // stream-ordered
    return status;
  }

  // Every matrix of m set to zeros, or to the identity's first rows x cols block.
  absl::Status FillMatrices(const MatrixBatch& m, bool identity) {
    const DimVector sizes = {m.batch, m.rows, m.cols};
    const DimVector strides = {m.rows * m.cols, 1, m.rows};
    TENSORD_RETURN_IF_ERROR(Fill(sizes, StridedRef{m.data, m.dtype, strides}, Scalar(int64_t{0})));
    if (!identity) return absl::OkStatus();
    const DimVector diagonal = {m.batch, std::min(m.rows, m.cols)};
    const DimVector steps = {m.rows * m.cols, m.rows + 1};
    return Fill(diagonal, StridedRef{m.data, m.dtype, steps}, Scalar(int64_t{1}));
  }

  // The launch's error; else, for a synchronous target, waits for its stream.
  absl::Status Finish(cudaError_t launched, LaunchTarget to, absl::string_view what) {
    if (launched != cudaSuccess) return ToStatus(launched, what, device_);
    if (to.async) return absl::OkStatus();
    return ToStatus(cudaStreamSynchronize(to.stream), what, device_);
  }

  const Device device_;
  const int multiprocessors_;  // its SMs: how many blocks of a kernel run at once
  CudaAllocator allocator_;
};

}  // namespace

bool Built() { return true; }

std::vector<DeviceInfo> RegisterBackends(std::string* why) {
  static absl::Mutex mu;
  static bool done = false;
  static std::vector<DeviceInfo>* devices = new std::vector<DeviceInfo>();
  static std::string* reason = new std::string();
  absl::MutexLock lock(&mu);
  if (!done) {
    done = true;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      *reason = absl::StrCat("no usable CUDA device: ", ErrorText(e));
      count = 0;
    } else if (count == 0) {
      *reason = "no CUDA device on this machine";
    }
    for (int i = 0; i < count && i < kMaxCudaDevices; ++i) {
      cudaDeviceProp prop;
      if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
        (void)cudaGetLastError();
        continue;
      }
      DeviceInfo info;
      info.device = Device{DeviceType::kCUDA, i};
      info.name = prop.name;
      info.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
      info.major = prop.major;
      info.minor = prop.minor;
      info.multiprocessors = prop.multiProcessorCount;
      // Lives as long as the process.
      RegisterBackend(new CudaBackend(info.device, info.multiprocessors));
      devices->push_back(std::move(info));
    }
  }
  if (why != nullptr) *why = *reason;
  return *devices;
}

}  // namespace tensord::engine::cuda
