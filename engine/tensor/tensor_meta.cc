#include "engine/tensor/tensor_meta.h"

#include <algorithm>
#include <cassert>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "engine/core/checked_math.h"
#include "engine/core/errors.h"

namespace tensord::engine {

bool IsContiguousLayout(IntList sizes, IntList strides, int64_t numel) {
  if (numel == 0) return true;
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

TensorMeta::TensorMeta(DType dtype, IntList sizes, IntList strides, int64_t storage_offset)
    : storage_offset_(storage_offset), dtype_(dtype) {
  assert(sizes.size() == strides.size());
  buffer_.reserve(sizes.size() * 2);
  buffer_.insert(buffer_.end(), sizes.begin(), sizes.end());
  buffer_.insert(buffer_.end(), strides.begin(), strides.end());
  // numel: 0 if any size is 0 (even when the others would overflow), -1 if it overflows.
  int64_t product = 1;
  bool ok = true;
  bool has_zero = false;
  for (int64_t s : sizes) {
    has_zero |= s == 0;
    ok &= MulInto(product, s);
  }
  numel_ = has_zero ? 0 : (ok ? product : -1);
  contiguous_ = numel_ >= 0 && IsContiguousLayout(sizes, strides, numel_);
}

TensorMeta TensorMeta::Contiguous(DType dtype, IntList sizes, int64_t storage_offset) {
  DimVector strides = ContiguousStrides(sizes);
  return TensorMeta(dtype, sizes, strides, storage_offset);
}

bool TensorMeta::is_non_overlapping_and_dense() const {
  // As c10::TensorImpl::refresh_contiguous (1.13): contiguous (or, for 4-d/5-d, channels-last
  // contiguous) tensors count as non-overlapping and dense even when size-0 or size-1 dims
  // carry odd strides; otherwise compute_non_overlapping_and_dense decides.
  if (contiguous_) return true;
  const int64_t n = dim();
  IntList sz = sizes();
  IntList st = strides();
  if (n == 4 || n == 5) {
    static constexpr int kOrder4[] = {1, 3, 2, 0};
    static constexpr int kOrder5[] = {1, 4, 3, 2, 0};
    const int* order = n == 4 ? kOrder4 : kOrder5;
    int64_t expected = 1;
    bool channels_last = true;
    for (int i = 0; i < n && channels_last; ++i) {
      const int64_t s = sz[order[i]];
      if (s == 1) continue;
      channels_last = st[order[i]] == expected;
      expected *= s;
    }
    if (channels_last) return true;
  }
  if (n == 1) return sz[0] < 2 || st[0] == 1;
  DimVector perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (sz[a] < 2) return false;
    if (sz[b] < 2) return true;
    return st[a] < st[b];
  });
  int64_t require = 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = sz[perm[i]];
    if (s < 2) return true;
    if (st[perm[i]] != require) return false;
    require *= s;
  }
  return true;
}

std::string TensorMeta::DebugString() const {
  return absl::StrCat("TensorMeta{dtype=", DTypeName(dtype_), ", sizes=", FormatList(sizes()),
                      ", strides=", FormatList(strides()), ", offset=", storage_offset_, "}");
}

DimVector ContiguousStrides(IntList sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    // A shape whose numel overflows saturates here; the validator then refuses its numel, so
    // every caller that allocates it gets an error rather than wrapped strides.
    if (__builtin_mul_overflow(s, std::max<int64_t>(sizes[d], 1), &s)) s = INT64_MAX;
  }
  return strides;
}

absl::StatusOr<int64_t> CheckShape(absl::string_view op, IntList sizes) {
  if (static_cast<int64_t>(sizes.size()) > kMaxRank) {
    return RuntimeError(op, absl::StrCat("tensors may have at most ", kMaxRank,
                                         " dimensions, but got ", sizes.size()));
  }
  for (int64_t s : sizes) {
    if (s < 0) {
      return RuntimeError(op, absl::StrCat("Trying to create tensor with negative dimension ", s,
                                           ": ", FormatList(sizes)));
    }
  }
  // The contiguous strides (products of max(size,1)) must fit too, so strides never overflow.
  int64_t product = 1;
  int64_t numel = 1;
  bool ok = true;
  for (int64_t s : sizes) {
    ok &= MulInto(product, std::max<int64_t>(s, 1));
    numel = s == 0 ? 0 : numel;
  }
  if (!ok) {
    return RuntimeError(op, absl::StrCat("the number of elements of a tensor of size ",
                                         FormatList(sizes), " overflows int64"));
  }
  return numel == 0 ? 0 : product;
}

absl::StatusOr<int64_t> RequiredStorageBytes(absl::string_view op, const TensorMeta& meta) {
  const int64_t itemsize = meta.itemsize();
  if (meta.numel() == 0) return 0;
  int64_t last = meta.storage_offset();
  bool ok = true;
  for (int64_t d = 0; d < meta.dim(); ++d) {
    int64_t span = 0;
    ok &= !__builtin_mul_overflow(meta.size(d) - 1, meta.stride(d), &span);
    ok &= AddInto(last, span);
  }
  int64_t bytes = 0;
  ok &= !__builtin_add_overflow(last, 1, &bytes);
  ok &= MulInto(bytes, itemsize);
  if (!ok) {
    return RuntimeError(op, absl::StrCat("Storage size calculation overflowed with sizes=",
                                         FormatList(meta.sizes()),
                                         " and strides=", FormatList(meta.strides())));
  }
  return bytes;
}

absl::Status ValidateMeta(absl::string_view op, const TensorMeta& meta, int64_t storage_nbytes) {
  if (meta.dim() > kMaxRank) {
    return RuntimeError(op, absl::StrCat("tensors may have at most ", kMaxRank,
                                         " dimensions, but the result would have ", meta.dim()));
  }
  for (int64_t s : meta.sizes()) {
    if (s < 0) {
      return RuntimeError(op, absl::StrCat("negative size ", s, " in sizes ",
                                           FormatList(meta.sizes())));
    }
  }
  for (int64_t s : meta.strides()) {
    if (s < 0) {
      return RuntimeError(op, absl::StrCat("Negative strides are not supported, got strides: ",
                                           FormatList(meta.strides())));
    }
  }
  if (meta.storage_offset() < 0) {
    return RuntimeError(op, absl::StrCat("invalid storage offset ", meta.storage_offset()));
  }
  // Stricter than PyTorch: even an empty tensor must have representable contiguous strides
  // (the product of max(size, 1)), so clone/flatten/reshape of any valid tensor cannot overflow.
  int64_t product = 1;
  bool fits = true;
  for (int64_t s : meta.sizes()) fits &= MulInto(product, std::max<int64_t>(s, 1));
  if (!fits || meta.numel() < 0) {
    return RuntimeError(op, absl::StrCat("the number of elements of a tensor of size ",
                                         FormatList(meta.sizes()), " overflows int64"));
  }
  // data_ptr = base + offset * itemsize must be representable even for empty tensors.
  if (!CheckedMul(meta.storage_offset(), meta.itemsize())) {
    return RuntimeError(op, absl::StrCat("storage offset ", meta.storage_offset(),
                                         " overflows when converted to bytes"));
  }
  absl::StatusOr<int64_t> required = RequiredStorageBytes(op, meta);
  if (!required.ok()) return required.status();
  if (*required > storage_nbytes) {
    return RuntimeError(
        op, absl::StrCat("setStorage: sizes ", FormatList(meta.sizes()), ", strides ",
                         FormatList(meta.strides()), ", storage offset ", meta.storage_offset(),
                         ", and itemsize ", meta.itemsize(), " requiring a storage size of ",
                         *required, " are out of bounds for storage of size ", storage_nbytes));
  }
  return absl::OkStatus();
}

}  // namespace tensord::engine
