#include "engine/ops/index_ops.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/ops/copy_ops.h"
#include "engine/cpu/map.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/core/status_macros.h"

namespace tensord::engine {

namespace {

// What take and put_ both require of their index (and, for put_, source).
absl::Status CheckLinearIndex(absl::string_view op, const Tensor& self, const Tensor& index,
                              const Tensor* source) {
  if (index.dtype() != DType::kInt64) {
    return RuntimeError(op, absl::StrCat(op, "(): Expected a long tensor for index, but got ",
                                         DTypeLegacyName(index.dtype())));
  }
  if (self.device() != index.device() || (source && self.device() != source->device())) {
    return RuntimeError(op, "expected all tensors on the same device");
  }
  if (!self.device().is_cpu()) {
    return absl::UnimplementedError(absl::StrCat(op, ": only CPU tensors so far"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PlannedOp> PlanTake(const Tensor& self, const Tensor& index) {
  constexpr absl::string_view op = "take";
  TENSORD_RETURN_IF_ERROR(CheckLinearIndex(op, self, index, nullptr));
  TENSORD_ASSIGN_OR_RETURN(
      Tensor out, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), index.sizes()),
                                 self.device()));
  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.reads = {self.storage(), index.storage()};
  plan.writes = {out.storage()};
  plan.kernel = [self, index, out]() -> absl::Status {
    const int64_t n = self.numel();
    if (index.numel() > 0 && n == 0) {
      return IndexError("take", "cannot take from an empty tensor");
    }
    // Both sides contiguous first (self in row-major order, as take() reads it).
    TENSORD_ASSIGN_OR_RETURN(Tensor src, Contiguous(self));
    TENSORD_ASSIGN_OR_RETURN(Tensor idx, Contiguous(index));
    const int64_t* ids = idx.data_as<int64_t>();
    const int64_t w = self.itemsize();
    const char* from = src.data();
    char* to = out.data();
    for (int64_t i = 0; i < idx.numel(); ++i) {
      int64_t k = ids[i];
      if (k < -n || k >= n) {
        return IndexError("take", absl::StrCat("out of range: tried to access index ", k,
                                               " on a tensor of ", n, " elements."));
      }
      if (k < 0) k += n;
      std::memcpy(to + i * w, from + k * w, static_cast<size_t>(w));
    }
    return absl::OkStatus();
  };
  return plan;
}

absl::StatusOr<PlannedOp> PlanPut(const Tensor& self, const Tensor& index, const Tensor& source,
                                  bool accumulate) {
  constexpr absl::string_view op = "put_";
  TENSORD_RETURN_IF_ERROR(CheckLinearIndex(op, self, index, &source));
  if (self.dtype() != source.dtype()) {
    return RuntimeError(op, absl::StrCat("put_(): self and source expected to have the same "
                                         "dtype, but got self.dtype = ",
                                         DTypeLegacyName(self.dtype()), " and source.dtype = ",
                                         DTypeLegacyName(source.dtype())));
  }
  if (index.numel() != source.numel()) {
    return IndexError(op, absl::StrCat("put_(): Expected source and index to have the same "
                                         "number of elements, but got source.numel() = ",
                                         source.numel(), ", index.numel() = ", index.numel()));
  }
  PlannedOp plan;
  plan.outputs.push_back(self);
  plan.reads = {index.storage(), source.storage()};
  plan.writes = {self.storage()};
  plan.kernel = [self, index, source, accumulate]() -> absl::Status {
    const int64_t n = self.numel();
    TENSORD_ASSIGN_OR_RETURN(Tensor idx, Contiguous(index));
    TENSORD_ASSIGN_OR_RETURN(Tensor src, Contiguous(source));
    const int64_t* ids = idx.data_as<int64_t>();
    const int64_t count = idx.numel();
    // Every index is checked before anything is written.
    for (int64_t i = 0; i < count; ++i) {
      if (ids[i] < -n || ids[i] >= n) {
        return IndexError("put_", absl::StrCat("out of range: tried to access index ", ids[i],
                                               " on a tensor of ", n, " elements."));
      }
    }
    const int64_t w = self.itemsize();
    const int64_t dim = self.dim();
    const bool contiguous = self.is_contiguous();
    char* base = self.data();
    const char* from = src.data();
    // Row-major position k to the element's offset through self's strides.
    const auto offset_of = [&](int64_t k) {
      if (contiguous) return k;
      int64_t offset = 0;
      for (int64_t d = dim - 1; d >= 0; --d) {
        const int64_t size = self.size(d);
        offset += (k % size) * self.stride(d);
        k /= size;
      }
      return offset;
    };
    const auto position = [&](int64_t i) { return offset_of(ids[i] < 0 ? ids[i] + n : ids[i]); };
    if (!accumulate) {
      for (int64_t i = 0; i < count; ++i) {
        std::memcpy(base + position(i) * w, from + i * w, static_cast<size_t>(w));
      }
      return absl::OkStatus();
    }
    DispatchDType(self.dtype(), [&](auto t) {
      using T = decltype(t);
      using C = Calc<T>;
      T* dst = reinterpret_cast<T*>(base);
      const T* v = reinterpret_cast<const T*>(from);
      for (int64_t i = 0; i < count; ++i) {
        T& d = dst[position(i)];
        d = Convert<T>(static_cast<C>(d) + static_cast<C>(v[i]));
      }
    });
    return absl::OkStatus();
  };
  return plan;
}

}  // namespace tensord::engine
