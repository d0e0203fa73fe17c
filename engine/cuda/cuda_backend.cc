// The CUDA backend: device discovery, a stream-ordered caching allocator per device and the
// data-movement kernels behind engine/backend.h.
//
// Each executor thread launches on its own per-thread stream of the device (cudaStreamPerThread)
// and waits for that stream before returning, so a kernel's task completes when its work has.
// No RPC thread ever waits for the GPU except to allocate (an empty-stream sync).
#include "engine/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "engine/backend.h"
#include "engine/cpu/strided_loop.h"
#include "engine/cuda/copy_kernels.h"
#include "engine/cuda/offset_calculator.h"
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

absl::Status ToStatus(cudaError_t e, absl::string_view what, Device device) {
  if (e == cudaSuccess) return absl::OkStatus();
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: clear it so the device stays usable
    return absl::ResourceExhaustedError(
        absl::StrCat(what, ": CUDA out of memory on ", device.ToString()));
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

// Device memory from the device's stream-ordered pool (cudaMallocAsync): freed blocks stay in the
// pool for reuse, ReleaseCached gives them back to the driver. Machines whose driver has no
// memory pools get plain cudaMalloc/cudaFree.
class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(Device device) : device_(device) {
    int supported = 0;
    if (UseDevice(device.index) == cudaSuccess &&
        cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device.index) ==
            cudaSuccess &&
        supported != 0 && cudaDeviceGetDefaultMemPool(&pool_, device.index) == cudaSuccess) {
      // Keep freed memory for reuse between ops; ReleaseCached trims it when the server idles.
      uint64_t keep = UINT64_MAX;
      (void)cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep);
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
    // Every task that used the block has finished (storages outlive their tasks, and tasks
    // wait for their kernels), so the free needs no ordering against other streams.
    (void)UseDevice(device_.index);
    if (pool_ != nullptr) {
      (void)cudaFreeAsync(ptr, cudaStreamPerThread);
    } else {
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
  const Device device_;
  cudaMemPool_t pool_ = nullptr;
  std::atomic<int64_t> live_bytes_{0};
  std::atomic<int64_t> live_allocations_{0};
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(Device device) : device_(device), allocator_(device) {}

  Device device() const override { return device_; }
  Allocator& allocator() override { return allocator_; }

  absl::Status Copy(IntList sizes, const StridedRef& dst, const StridedRef& src) override {
    const cpu::StridedLoop<2> loop(sizes, {dst.strides, src.strides},
                                   {ItemSize(dst.dtype), ItemSize(src.dtype)});
    if (loop.numel() == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "copy");
    return Finish(LaunchCopy(MakeOffsetCalculator<2>(loop), loop.numel(), dst.data, dst.dtype,
                             src.data, src.dtype, cudaStreamPerThread),
                  "copy");
  }

  absl::Status Fill(IntList sizes, const StridedRef& dst, const Scalar& value) override {
    const int64_t itemsize = ItemSize(dst.dtype);
    const cpu::StridedLoop<1> loop(sizes, {dst.strides}, {itemsize});
    if (loop.numel() == 0) return absl::OkStatus();
    // The value converted once, on the host, to dst's bit pattern (as the CPU fill).
    uint64_t pattern = 0;
    DispatchDType(dst.dtype, [&](auto t) {
      using T = decltype(t);
      T v;
      if (value.is_float()) {
        v = Convert<T>(value.to_double());
      } else if (value.is_bool()) {
        v = Convert<T>(value.to_bool());
      } else {
        v = Convert<T>(value.to_int());
      }
      std::memcpy(&pattern, &v, sizeof(T));
    });
    TENSORD_CUDA_TRY(UseDevice(device_.index), "fill");
    return Finish(LaunchFill(MakeOffsetCalculator<1>(loop), loop.numel(), dst.data, itemsize,
                             pattern, cudaStreamPerThread),
                  "fill");
  }

  absl::Status Arange(char* out, DType dtype, int64_t n, const Scalar& start,
                      const Scalar& step) override {
    if (n == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "arange");
    return Finish(LaunchArange(out, dtype, n, IsFloating(dtype), start.to_double(),
                               step.to_double(), start.to_int(), step.to_int(),
                               cudaStreamPerThread),
                  "arange");
  }

  absl::Status CopyToHost(void* host_dst, const void* device_src, int64_t nbytes) override {
    if (nbytes == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "copy to host");
    return Finish(cudaMemcpyAsync(host_dst, device_src, static_cast<size_t>(nbytes),
                                  cudaMemcpyDeviceToHost, cudaStreamPerThread),
                  "copy to host");
  }

  absl::Status CopyFromHost(void* device_dst, const void* host_src, int64_t nbytes) override {
    if (nbytes == 0) return absl::OkStatus();
    TENSORD_CUDA_TRY(UseDevice(device_.index), "copy from host");
    return Finish(cudaMemcpyAsync(device_dst, host_src, static_cast<size_t>(nbytes),
                                  cudaMemcpyHostToDevice, cudaStreamPerThread),
                  "copy from host");
  }

 private:
  // The launch's error, else waits for this thread's stream: the task ends when its work has.
  absl::Status Finish(cudaError_t launched, absl::string_view what) {
    if (launched != cudaSuccess) return ToStatus(launched, what, device_);
    return ToStatus(cudaStreamSynchronize(cudaStreamPerThread), what, device_);
  }

  const Device device_;
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
    for (int i = 0; i < count && i < 16; ++i) {
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
      RegisterBackend(new CudaBackend(info.device));  // lives as long as the process
      devices->push_back(std::move(info));
    }
  }
  if (why != nullptr) *why = *reason;
  return *devices;
}

}  // namespace tensord::engine::cuda
