#include "engine/runtime/meta_backend.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/runtime/backend.h"

namespace tensord::engine {
namespace {

// Bytes a 0-d tensor of any dtype needs: the planners' wrapped numbers live in them.
constexpr int64_t kScalarBytes = 16;

class MetaAllocator final : public Allocator {
 public:
  explicit MetaAllocator(Device device) : device_(device) {}
  Device device() const override { return device_; }
  absl::StatusOr<void*> Allocate(int64_t nbytes) override {
    if (nbytes <= 0 || nbytes > kScalarBytes) return nullptr;
    return std::calloc(1, kScalarBytes);
  }
  void Deallocate(void* ptr, int64_t) override { std::free(ptr); }
  AllocatorStats stats() const override { return {}; }
  void ReleaseCached() override {}

 private:
  Device device_;
};

class MetaBackend final : public Backend {
 public:
  explicit MetaBackend(Device device) : device_(device), allocator_(device) {}
  Device device() const override { return device_; }
  Allocator& allocator() override { return allocator_; }
  absl::Status Copy(IntList, const StridedRef&, const StridedRef&) override { return NoData(); }
  absl::Status Fill(IntList, const StridedRef&, const Scalar&) override { return NoData(); }
  absl::Status Arange(char*, DType, int64_t, const Scalar&, const Scalar&) override {
    return NoData();
  }
  absl::Status CopyToHost(void*, const void*, int64_t) override { return NoData(); }
  absl::Status CopyFromHost(void*, const void*, int64_t) override { return NoData(); }
  absl::Status Binary(BinaryOp, IntList, const StridedRef&, const StridedRef&, const StridedRef&,
                      const Scalar&) override {
    return NoData();
  }
  absl::Status CheckValues(ValueCheck, absl::string_view, IntList, const StridedRef&) override {
    return NoData();
  }
  absl::Status Unary(UnaryOp, IntList, const StridedRef&, const StridedRef&,
                     const UnaryArgs&) override {
    return NoData();
  }
  absl::Status Where(IntList, const StridedRef&, const StridedRef&, const StridedRef&,
                     const StridedRef&) override {
    return NoData();
  }
  absl::Status Lerp(IntList, const StridedRef&, const StridedRef&, const StridedRef&,
                    const StridedRef&) override {
    return NoData();
  }
  absl::Status Addc(bool, IntList, const StridedRef&, const StridedRef&, const StridedRef&,
                    const StridedRef&, const Scalar&) override {
    return NoData();
  }
  absl::Status ClampTensor(IntList, const StridedRef&, const StridedRef&, const StridedRef&,
                           const StridedRef&, bool, bool) override {
    return NoData();
  }
  absl::Status Sleep(int64_t) override { return NoData(); }

 private:
  absl::Status NoData() const {
    return absl::FailedPreconditionError(
        absl::StrCat("tensors on ", device_.ToString(), " are metadata only here: no kernel runs"));
  }
  Device device_;
  MetaAllocator allocator_;
};

}  // namespace

namespace {
thread_local bool metadata_only = false;
}  // namespace

MetadataOnlyScope::MetadataOnlyScope() : previous_(metadata_only) { metadata_only = true; }
MetadataOnlyScope::~MetadataOnlyScope() { metadata_only = previous_; }

bool InMetadataOnlyScope() { return metadata_only; }

Backend* MetadataOnlyBackend(Device device) {
  static MetaBackend* const cpu = new MetaBackend(kCpu);
  static MetaBackend* const* const cuda = [] {
    auto** backends = new MetaBackend*[kMaxCudaDevices];
    for (int i = 0; i < kMaxCudaDevices; ++i) {
      backends[i] = new MetaBackend(Device{DeviceType::kCUDA, i});
    }
    return backends;
  }();
  if (device.is_cpu()) return cpu;
  if (device.index >= 0 && device.index < kMaxCudaDevices) return cuda[device.index];
  return nullptr;
}

}  // namespace tensord::engine
