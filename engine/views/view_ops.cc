#include "engine/views/view_ops.h"

#include <algorithm>
#include <bitset>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "engine/core/checked_math.h"
#include "engine/core/errors.h"
#include "engine/tensor/shape_util.h"
#include "engine/core/status_macros.h"

namespace tensord::engine {
namespace {

absl::Status TooManyOutputs(absl::string_view op, int64_t count) {
  return ResourceError(op, absl::StrCat("would return ", count, " tensors, more than the limit of ",
                                        kMaxViewOutputs));
}

// Sizes/strides of `self` with dim `d` removed.
void EraseDim(DimVector& sizes, DimVector& strides, int64_t d) {
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
}

absl::StatusOr<Tensor> PermuteImpl(absl::string_view op, const Tensor& self, IntList dims) {
  const int64_t n = self.dim();
  if (static_cast<int64_t>(dims.size()) != n) {
    return RuntimeError(op, absl::StrCat("number of dimensions in the tensor input does not match "
                                         "the length of the desired ordering of dimensions i.e. "
                                         "input.dim() = ", n, " is not equal to len(dims) = ",
                                         dims.size()));
  }
  DimVector sizes(n), strides(n);
  std::bitset<kMaxRank> seen;
  for (int64_t i = 0; i < n; ++i) {
    TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dims[i], n));
    if (seen[d]) return RuntimeError(op, "duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self.size(d);
    strides[i] = self.stride(d);
  }
  return MakeView(op, self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> ReverseDims(absl::string_view op, const Tensor& self) {
  DimVector dims(self.dim());
  std::iota(dims.rbegin(), dims.rend(), 0);
  return PermuteImpl(op, self, dims);
}

absl::StatusOr<Tensor> TransposeImpl(absl::string_view op, const Tensor& self, int64_t dim0,
                                     int64_t dim1) {
  TENSORD_ASSIGN_OR_RETURN(int64_t d0, WrapDim(op, dim0, self.dim()));
  TENSORD_ASSIGN_OR_RETURN(int64_t d1, WrapDim(op, dim1, self.dim()));
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  if (self.dim() > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  return MakeView(op, self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> ExpandImpl(absl::string_view op, const Tensor& self, IntList target) {
  const int64_t ndim = static_cast<int64_t>(target.size());
  const int64_t tensor_dim = self.dim();
  if (ndim < tensor_dim) {
    return RuntimeError(op, absl::StrCat("the number of sizes provided (", ndim,
                                         ") must be greater or equal to the number of dimensions "
                                         "in the tensor (", tensor_dim, ")"));
  }
  if (ndim > kMaxRank) {
    return RuntimeError(op, absl::StrCat("tensors may have at most ", kMaxRank,
                                         " dimensions, but got ", ndim));
  }
  DimVector sizes(ndim), strides(ndim);
  if (tensor_dim == 0) {
    std::copy(target.begin(), target.end(), sizes.begin());
    std::fill(strides.begin(), strides.end(), 0);
  } else {
    for (int64_t i = ndim - 1; i >= 0; --i) {
      const int64_t offset = ndim - 1 - i;
      const int64_t dim = tensor_dim - 1 - offset;
      int64_t size = dim >= 0 ? self.size(dim) : 1;
      int64_t stride;
      if (dim >= 0) {
        stride = self.stride(dim);
      } else {
        auto s = CheckedMul(sizes[i + 1], strides[i + 1]);
        if (!s) {
          return RuntimeError(op, absl::StrCat("stride of new dimension ", i, " overflows int64"));
        }
        stride = *s;
      }
      int64_t target_size = target[i];
      if (target_size == -1) {
        if (dim < 0) {
          return RuntimeError(op, absl::StrCat("The expanded size of the tensor (-1) isn't "
                                               "allowed in a leading, non-existing dimension ", i));
        }
        target_size = size;
      }
      if (size != target_size) {
        if (size != 1) {
          return RuntimeError(op, absl::StrCat("The expanded size of the tensor (", target_size,
                                               ") must match the existing size (", size,
                                               ") at non-singleton dimension ", i,
                                               ".  Target sizes: ", FormatList(target),
                                               ".  Tensor sizes: ", FormatList(self.sizes())));
        }
        size = target_size;
        stride = 0;
      }
      sizes[i] = size;
      strides[i] = stride;
    }
  }
  return MakeView(op, self, sizes, strides, self.storage_offset());
}

absl::StatusOr<std::vector<Tensor>> SplitImpl(absl::string_view op, const Tensor& self,
                                              int64_t split_size, int64_t dim) {
  if (self.dim() == 0) return RuntimeError(op, "split expects at least a 1-dimensional tensor");
  if (split_size < 0) {
    return RuntimeError(op, absl::StrCat("split expects split_size be non-negative, but got "
                                         "split_size=", split_size));
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  const int64_t dim_size = self.size(d);
  if (split_size == 0 && dim_size != 0) {
    return RuntimeError(op, absl::StrCat("split_size can only be 0 if dimension size is 0, but "
                                         "got dimension size of ", dim_size));
  }
  int64_t num_splits = 1;
  if (split_size != 0) num_splits = std::max<int64_t>(CeilDiv(dim_size, split_size), 1);
  if (num_splits > kMaxViewOutputs) return TooManyOutputs(op, num_splits);
  std::vector<Tensor> out;
  out.reserve(num_splits);
  for (int64_t i = 0; i < num_splits; ++i) {
    const int64_t start = i * split_size;
    const int64_t length =
        i < num_splits - 1 ? split_size : dim_size - split_size * (num_splits - 1);
    TENSORD_ASSIGN_OR_RETURN(Tensor piece, Slice(self, d, start, start + length, 1));
    out.push_back(std::move(piece));
  }
  return out;
}

}  // namespace

absl::StatusOr<Tensor> MakeView(absl::string_view op, const Tensor& self, IntList sizes,
                                IntList strides, int64_t storage_offset) {
  TensorMeta meta(self.dtype(), sizes, strides, storage_offset);
  TENSORD_RETURN_IF_ERROR(ValidateMeta(op, meta, self.storage()->nbytes()));
  return self.WithMeta(std::move(meta));
}

absl::StatusOr<Tensor> View(const Tensor& self, IntList shape) {
  constexpr absl::string_view op = "view";
  TENSORD_ASSIGN_OR_RETURN(DimVector sizes, InferSize(op, shape, self.numel()));
  TENSORD_ASSIGN_OR_RETURN(std::optional<DimVector> strides,
                           ComputeViewStrides(op, self.sizes(), self.strides(), sizes));
  if (!strides) {
    return RuntimeError(op, "view size is not compatible with input tensor's size and stride (at "
                            "least one dimension spans across two contiguous subspaces). Use "
                            ".reshape(...) instead.");
  }
  return MakeView(op, self, sizes, *strides, self.storage_offset());
}

absl::StatusOr<Tensor> ViewDType(const Tensor& self, DType dtype) {
  constexpr absl::string_view op = "view";
  const int64_t from = self.itemsize(), to = ItemSize(dtype);
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  int64_t offset = self.storage_offset();
  const std::string what = absl::StrCat(" to view ", DTypeLegacyName(self.dtype()), " as ",
                                        DTypeLegacyName(dtype), " (different element sizes)");
  if (from != to) {
    if (self.dim() == 0) return RuntimeError(op, absl::StrCat("self.dim() cannot be 0", what));
    const absl::Status not_unit_stride = RuntimeError(
        op, absl::StrCat("self.stride(-1) must be 1", what, ", but got ", strides.back()));
    const int64_t last = self.dim() - 1;
    // Checked in torch's order: a smaller element first needs stride 1; a larger one first
    // needs the last size and the offset to divide.
    if (from > to) {  // smaller elements: more of them
      if (strides.back() != 1) return not_unit_stride;
      const int64_t ratio = from / to;
      bool fits = MulInto(sizes[last], ratio) && MulInto(offset, ratio);
      for (int64_t i = 0; i < last; ++i) fits = fits && MulInto(strides[i], ratio);
      if (!fits) return RuntimeError(op, absl::StrCat("the view", what, " overflows int64"));
    } else {
      const int64_t ratio = to / from;
      if (sizes[last] % ratio) {
        return RuntimeError(op, absl::StrCat("self.size(-1) must be divisible by ", ratio, what,
                                             ", but got ", sizes[last]));
      }
      if (offset % ratio) {
        return RuntimeError(op, absl::StrCat("self.storage_offset() must be divisible by ", ratio,
                                             what, ", but got ", offset));
      }
      if (strides.back() != 1) return not_unit_stride;
      for (int64_t i = 0; i < last; ++i) {
        if (strides[i] % ratio) {
          return RuntimeError(op, absl::StrCat("self.stride(", i, ") must be divisible by ",
                                               ratio, what, ", but got ", strides[i]));
        }
        strides[i] /= ratio;
      }
      sizes[last] /= ratio;
      offset /= ratio;
    }
  }
  TensorMeta meta(dtype, sizes, strides, offset);
  TENSORD_RETURN_IF_ERROR(ValidateMeta(op, meta, self.storage()->nbytes()));
  return self.WithMeta(std::move(meta));
}

absl::StatusOr<Tensor> ViewAs(const Tensor& self, const Tensor& other) {
  return View(self, other.sizes());
}

absl::StatusOr<std::optional<TensorMeta>> ReshapeAsView(const Tensor& self, IntList shape) {
  constexpr absl::string_view op = "reshape";
  TENSORD_ASSIGN_OR_RETURN(DimVector sizes, InferSize(op, shape, self.numel()));
  TENSORD_ASSIGN_OR_RETURN(std::optional<DimVector> strides,
                           ComputeViewStrides(op, self.sizes(), self.strides(), sizes));
  if (!strides) return std::optional<TensorMeta>();
  TensorMeta meta(self.dtype(), sizes, *strides, self.storage_offset());
  TENSORD_RETURN_IF_ERROR(ValidateMeta(op, meta, self.storage()->nbytes()));
  return std::optional<TensorMeta>(std::move(meta));
}

absl::StatusOr<Tensor> AsStrided(const Tensor& self, IntList sizes, IntList strides,
                                 std::optional<int64_t> storage_offset) {
  constexpr absl::string_view op = "as_strided";
  if (sizes.size() != strides.size()) {
    return RuntimeError(op, absl::StrCat("mismatch in length of strides and shape: sizes ",
                                         FormatList(sizes), ", strides ", FormatList(strides)));
  }
  const int64_t offset = storage_offset.value_or(self.storage_offset());
  if (offset < 0) {
    return RuntimeError(op, absl::StrCat("Tensor: invalid storage offset ", offset));
  }
  for (int64_t s : strides) {
    if (s < 0) {
      return RuntimeError(op, absl::StrCat("Negative strides are not supported at the moment, "
                                           "got strides: ", FormatList(strides)));
    }
  }
  return MakeView(op, self, sizes, strides, offset);
}

absl::StatusOr<Tensor> Unflatten(const Tensor& self, int64_t dim, IntList sizes) {
  constexpr absl::string_view op = "unflatten";
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  if (sizes.empty()) return RuntimeError(op, "sizes must be non-empty");
  if (self.dim() == 0) {
    return IndexError(op, "dimension specified as 0 but tensor has no dimensions");
  }
  absl::StatusOr<DimVector> inferred = InferSize(op, sizes, self.size(d));
  if (!inferred.ok()) {
    if (std::count(sizes.begin(), sizes.end(), -1) > 1) return inferred.status();
    return RuntimeError(op, absl::StrCat("Provided sizes ", FormatList(sizes),
                                         " don't multiply up to the size of dim ", dim, " (",
                                         self.size(d), ") in the input tensor"));
  }
  DimVector shape(self.sizes().begin(), self.sizes().end());
  shape.erase(shape.begin() + d);
  shape.insert(shape.begin() + d, inferred->begin(), inferred->end());
  TENSORD_ASSIGN_OR_RETURN(std::optional<DimVector> strides,
                           ComputeViewStrides(op, self.sizes(), self.strides(), shape));
  if (!strides) return RuntimeError(op, "internal error: unflatten produced no view");
  return MakeView(op, self, shape, *strides, self.storage_offset());
}

absl::StatusOr<Tensor> Transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  return TransposeImpl("transpose", self, dim0, dim1);
}

absl::StatusOr<Tensor> T(const Tensor& self) {
  if (self.dim() > 2) {
    return RuntimeError("t", absl::StrCat("t() expects a tensor with <= 2 dimensions, but self is ",
                                          self.dim(), "D"));
  }
  return TransposeImpl("t", self, 0, self.dim() < 2 ? 0 : 1);
}

absl::StatusOr<Tensor> NumpyT(const Tensor& self) { return ReverseDims("T", self); }

absl::StatusOr<Tensor> MatrixH(const Tensor& self) {
  if (self.dim() != 2 && self.dim() != 0) {
    return RuntimeError("H", absl::StrCat("tensor.H is only supported on matrices (2-D tensors). "
                                          "Got ", self.dim(), "-D tensor.",
                                          self.dim() > 2 ? " For batches of matrices, consider "
                                                           "using tensor.mH" : ""));
  }
  return ReverseDims("H", self);
}

absl::StatusOr<Tensor> MT(const Tensor& self) {
  // PyTorch 1.13 accepts 0-d tensors here (they come back unchanged); only 1-d is an error.
  if (self.dim() == 0) return Alias(self);
  if (self.dim() < 2) {
    return RuntimeError("mT", absl::StrCat("tensor.mT is only supported on matrices or batches of "
                                           "matrices. Got ", self.dim(), "-D tensor."));
  }
  return TransposeImpl("mT", self, -2, -1);
}

absl::StatusOr<Tensor> MH(const Tensor& self) {
  // PyTorch 1.13 accepts 0-d tensors here (they come back unchanged); only 1-d is an error.
  if (self.dim() == 0) return Alias(self);
  if (self.dim() < 2) {
    return RuntimeError("mH", absl::StrCat("tensor.mH is only supported on matrices or batches of "
                                           "matrices. Got ", self.dim(), "-D tensor."));
  }
  return TransposeImpl("mH", self, -2, -1);
}

absl::StatusOr<Tensor> Adjoint(const Tensor& self) {
  if (self.dim() == 0) return Alias(self);
  if (self.dim() < 2) {
    return RuntimeError("adjoint", absl::StrCat("tensor.adjoint() is only supported on matrices "
                                                "or batches of matrices. Got ", self.dim(),
                                                "-D tensor."));
  }
  return TransposeImpl("adjoint", self, -2, -1);
}

absl::StatusOr<Tensor> Permute(const Tensor& self, IntList dims) {
  return PermuteImpl("permute", self, dims);
}

absl::StatusOr<Tensor> Movedim(const Tensor& self, IntList source, IntList destination) {
  constexpr absl::string_view op = "movedim";
  if (source.size() != destination.size()) {
    return RuntimeError(op, absl::StrCat("Invalid source or destination dims: source (",
                                         FormatList(source), " dims) should contain the same "
                                         "number of dims as destination (",
                                         FormatList(destination), " dims)"));
  }
  const int64_t n = self.dim();
  DimVector src(source.size()), dst(destination.size());
  for (size_t i = 0; i < source.size(); ++i) {
    TENSORD_ASSIGN_OR_RETURN(src[i], WrapDim(op, source[i], n));
  }
  for (size_t i = 0; i < destination.size(); ++i) {
    TENSORD_ASSIGN_OR_RETURN(dst[i], WrapDim(op, destination[i], n));
  }
  const auto all_unique = [](DimVector dims) {
    std::sort(dims.begin(), dims.end());
    return std::adjacent_find(dims.begin(), dims.end()) == dims.end();
  };
  if (!all_unique(src)) {
    return RuntimeError(op, absl::StrCat("repeated dim in `source` (", FormatList(source), ")"));
  }
  if (!all_unique(dst)) {
    return RuntimeError(op, absl::StrCat("repeated dim in `destination` (",
                                         FormatList(destination), ")"));
  }
  if (n == 0) return MakeView(op, self, {}, {}, self.storage_offset());
  // order[dst[k]] = src[k]; the remaining dims fill the free slots in their original order.
  DimVector order(n, -1);
  std::vector<bool> src_used(n, false);
  for (size_t k = 0; k < src.size(); ++k) {
    order[dst[k]] = src[k];
    src_used[src[k]] = true;
  }
  int64_t next_src = 0;
  for (int64_t slot = 0; slot < n; ++slot) {
    if (order[slot] != -1) continue;
    while (src_used[next_src]) ++next_src;
    order[slot] = next_src++;
  }
  return PermuteImpl(op, self, order);
}

absl::StatusOr<Tensor> Expand(const Tensor& self, IntList sizes) {
  return ExpandImpl("expand", self, sizes);
}

absl::StatusOr<Tensor> ExpandAs(const Tensor& self, const Tensor& other) {
  return ExpandImpl("expand_as", self, other.sizes());
}

absl::StatusOr<Tensor> BroadcastTo(const Tensor& self, IntList sizes) {
  return ExpandImpl("broadcast_to", self, sizes);
}

absl::StatusOr<Tensor> Squeeze(const Tensor& self) {
  DimVector sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.size(d) != 1) {
      sizes.push_back(self.size(d));
      strides.push_back(self.stride(d));
    }
  }
  return MakeView("squeeze", self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> SqueezeDim(const Tensor& self, int64_t dim) {
  constexpr absl::string_view op = "squeeze";
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  if (self.dim() > 0 && sizes[d] == 1) EraseDim(sizes, strides, d);
  return MakeView(op, self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> SqueezeDims(const Tensor& self, IntList dims) {
  constexpr absl::string_view op = "squeeze";
  std::bitset<kMaxRank> mask;
  for (int64_t dim : dims) {
    TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
    if (mask[d]) {
      return RuntimeError(op, absl::StrCat("dim ", d, " appears multiple times in the list of "
                                           "dims"));
    }
    mask[d] = true;
  }
  DimVector sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!(mask[d] && self.size(d) == 1)) {
      sizes.push_back(self.size(d));
      strides.push_back(self.stride(d));
    }
  }
  return MakeView(op, self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> Unsqueeze(const Tensor& self, int64_t dim) {
  constexpr absl::string_view op = "unsqueeze";
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim() + 1));
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  int64_t new_stride = 1;
  if (d < self.dim()) {
    auto s = CheckedMul(sizes[d], strides[d]);
    if (!s) return RuntimeError(op, absl::StrCat("stride of new dimension ", d, " overflows"));
    new_stride = *s;
  }
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, new_stride);
  return MakeView(op, self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> Narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  constexpr absl::string_view op = "narrow";
  if (self.dim() == 0) return RuntimeError(op, "narrow() cannot be applied to a 0-dim tensor.");
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  const int64_t cur_size = self.size(d);
  if (start != cur_size) {
    TENSORD_ASSIGN_OR_RETURN(start, WrapDim(op, start, cur_size));
  }
  if (length < 0 || start > cur_size - length) {
    return RuntimeError(op, absl::StrCat("start (", start, ") + length (", length,
                                         ") exceeds dimension size (", cur_size, ")."));
  }
  return Slice(self, d, start, start + length, 1);
}

absl::StatusOr<Tensor> Select(const Tensor& self, int64_t dim, int64_t index) {
  constexpr absl::string_view op = "select";
  if (self.dim() == 0) return IndexError(op, "select() cannot be applied to a 0-dim tensor.");
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  const int64_t size = self.size(d);
  if (index < -size || index >= size) {
    return IndexError(op, absl::StrCat("select(): index ", index,
                                       " out of range for tensor of size ",
                                       FormatList(self.sizes()), " at dimension ", d));
  }
  if (index < 0) index += size;
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  const int64_t offset = self.storage_offset() + index * strides[d];  // inside the storage
  EraseDim(sizes, strides, d);
  return MakeView(op, self, sizes, strides, offset);
}

absl::StatusOr<Tensor> Slice(const Tensor& self, int64_t dim, std::optional<int64_t> start,
                             std::optional<int64_t> end, int64_t step) {
  constexpr absl::string_view op = "slice";
  if (self.dim() == 0) return IndexError(op, "slice() cannot be applied to a 0-dim tensor.");
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  if (step <= 0) {
    return RuntimeError(op, absl::StrCat("slice step must be positive, got ", step));
  }
  const int64_t size = self.size(d);
  int64_t s = start.value_or(0);
  int64_t e = end.value_or(std::numeric_limits<int64_t>::max());
  if (s < 0) s += size;  // no overflow: size >= 0
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = e < s ? s : std::min(e, size);
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  const int64_t len = e - s;
  sizes[d] = len == 0 ? 0 : (len - 1) / step + 1;
  auto offset = CheckedMul(s, strides[d]);
  if (offset) offset = CheckedAdd(*offset, self.storage_offset());
  auto stride = CheckedMul(strides[d], step);
  if (!offset || !stride) {
    return RuntimeError(op, absl::StrCat("start ", s, " or step ", step, " times stride ",
                                         strides[d], " overflows int64"));
  }
  strides[d] = *stride;
  return MakeView(op, self, sizes, strides, *offset);
}

absl::StatusOr<Tensor> Index(const Tensor& self, absl::Span<const IndexItem> items) {
  constexpr absl::string_view op = "index";
  int64_t specified = 0;
  for (const IndexItem& item : items) {
    if (item.kind == IndexItem::Kind::kInteger || item.kind == IndexItem::Kind::kSlice) {
      ++specified;
    }
  }
  if (specified > self.dim()) {
    return IndexError(op, absl::StrCat("too many indices for tensor of dimension ", self.dim()));
  }
  Tensor result = self;
  int64_t dim = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const IndexItem& item = items[i];
    switch (item.kind) {
      case IndexItem::Kind::kInteger: {
        if (result.dim() == 0) {
          return IndexError(op, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                                "or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a "
                                "number");
        }
        // Every ellipsis stands for the dims no item names, as torch's: a second one can walk
        // past the last dim, where torch reports size 0.
        const int64_t size = dim < result.dim() ? result.size(dim) : 0;
        if (item.integer < -size || item.integer >= size) {
          return IndexError(op, absl::StrCat("index ", item.integer,
                                             " is out of bounds for dimension ", i,
                                             " with size ", size));
        }
        TENSORD_ASSIGN_OR_RETURN(result, Select(result, dim, item.integer));
        break;
      }
      case IndexItem::Kind::kSlice: {
        // Items apply in order, as torch's: an earlier bad integer is reported first.
        if (item.step <= 0) {
          return ValueError(op, item.step == 0 ? "slice step cannot be zero"
                                               : "step must be greater than zero");
        }
        TENSORD_ASSIGN_OR_RETURN(result, Slice(result, dim, item.start, item.stop, item.step));
        ++dim;
        break;
      }
      case IndexItem::Kind::kNone: {
        TENSORD_ASSIGN_OR_RETURN(result, Unsqueeze(result, dim));
        ++dim;
        break;
      }
      case IndexItem::Kind::kEllipsis:
        dim += self.dim() - specified;
        break;
    }
  }
  return MakeView(op, result, result.sizes(), result.strides(), result.storage_offset());
}

absl::StatusOr<Tensor> Diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  constexpr absl::string_view op = "diagonal";
  TENSORD_ASSIGN_OR_RETURN(int64_t d1, WrapDim(op, dim1, self.dim()));
  TENSORD_ASSIGN_OR_RETURN(int64_t d2, WrapDim(op, dim2, self.dim()));
  if (d1 == d2) {
    return RuntimeError(op, absl::StrCat("diagonal dimensions cannot be identical ", dim1, ", ",
                                         dim2));
  }
  const int64_t size1 = self.size(d1);
  const int64_t size2 = self.size(d2);
  // Work in __int128-free checked arithmetic: |offset| may be anything a client sends.
  int64_t diag_size;
  if (offset >= 0) {
    diag_size = offset >= size2 ? 0 : std::min(size1, size2 - offset);
  } else {
    diag_size = offset <= -size1 ? 0 : std::min(size1 + offset, size2);
  }
  diag_size = std::max<int64_t>(diag_size, 0);
  int64_t storage_offset = self.storage_offset();
  if (diag_size > 0) {
    // In bounds: offset < size2 (or -offset < size1), so the product stays inside the storage.
    storage_offset += offset >= 0 ? offset * self.stride(d2) : -offset * self.stride(d1);
  }
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  auto joint = CheckedAdd(self.stride(d1), self.stride(d2));
  if (!joint) return RuntimeError(op, "diagonal stride overflows int64");
  EraseDim(sizes, strides, std::max(d1, d2));
  EraseDim(sizes, strides, std::min(d1, d2));
  sizes.push_back(diag_size);
  strides.push_back(*joint);
  return MakeView(op, self, sizes, strides, storage_offset);
}

absl::StatusOr<Tensor> Unfold(const Tensor& self, int64_t dim, int64_t size, int64_t step) {
  constexpr absl::string_view op = "unfold";
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  const int64_t max_size = self.dim() == 0 ? 1 : self.size(d);
  if (size > max_size) {
    return RuntimeError(op, absl::StrCat("maximum size for tensor at dimension ", d, " is ",
                                         max_size, " but size is ", size));
  }
  if (size < 0) return RuntimeError(op, absl::StrCat("size is ", size, " but must be >= 0"));
  if (step <= 0) return RuntimeError(op, absl::StrCat("step is ", step, " but must be > 0"));
  const int64_t n = self.dim();
  DimVector sizes(n + 1), strides(n + 1);
  sizes[n] = size;
  strides[n] = n == 0 ? 1 : self.stride(d);
  for (int64_t i = 0; i < n; ++i) {
    if (i == d) {
      sizes[i] = (self.size(i) - size) / step + 1;
      auto s = CheckedMul(step, self.stride(i));
      if (!s) return RuntimeError(op, absl::StrCat("step ", step, " times stride overflows"));
      strides[i] = *s;
    } else {
      sizes[i] = self.size(i);
      strides[i] = self.stride(i);
    }
  }
  return MakeView(op, self, sizes, strides, self.storage_offset());
}

absl::StatusOr<std::vector<Tensor>> Split(const Tensor& self, int64_t split_size, int64_t dim) {
  return SplitImpl("split", self, split_size, dim);
}

absl::StatusOr<std::vector<Tensor>> SplitWithSizes(const Tensor& self, IntList split_sizes,
                                                   int64_t dim) {
  constexpr absl::string_view op = "split_with_sizes";
  if (self.dim() == 0) return RuntimeError(op, "split expects at least a 1-dimensional tensor");
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  const int64_t dim_size = self.size(d);
  if (static_cast<int64_t>(split_sizes.size()) > kMaxViewOutputs) {
    return TooManyOutputs(op, split_sizes.size());
  }
  int64_t total = 0;
  bool overflow = false;
  for (int64_t length : split_sizes) {
    if (length < 0) {
      return RuntimeError(op, absl::StrCat("split_with_sizes expects split_sizes have only "
                                           "non-negative entries, but got split_sizes=",
                                           FormatList(split_sizes)));
    }
    overflow |= !AddInto(total, length);
  }
  if (overflow || total != dim_size) {
    return RuntimeError(op, absl::StrCat("split_with_sizes expects split_sizes to sum exactly to ",
                                         dim_size, " (input tensor's size at dimension ", d,
                                         "), but got split_sizes=", FormatList(split_sizes)));
  }
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t length : split_sizes) {
    TENSORD_ASSIGN_OR_RETURN(Tensor piece, Slice(self, d, start, start + length, 1));
    out.push_back(std::move(piece));
    start += length;
  }
  return out;
}

absl::StatusOr<std::vector<Tensor>> TensorSplit(const Tensor& self, int64_t sections,
                                                int64_t dim) {
  constexpr absl::string_view op = "tensor_split";
  if (self.dim() == 0) {
    return RuntimeError(op, "tensor_split expected at least a 1-dimensional tensor, but got a "
                            "tensor with 0 dims");
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  if (sections <= 0) {
    return RuntimeError(op, absl::StrCat("number of sections must be larger than 0, got ",
                                         sections));
  }
  if (sections > kMaxViewOutputs) return TooManyOutputs(op, sections);
  const int64_t dim_size = self.size(d);
  const int64_t min_split = dim_size / sections;
  const int64_t extra = dim_size % sections;
  std::vector<Tensor> out;
  out.reserve(sections);
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t length = i < extra ? min_split + 1 : min_split;
    TENSORD_ASSIGN_OR_RETURN(Tensor piece, Slice(self, d, start, start + length, 1));
    out.push_back(std::move(piece));
    start += length;
  }
  return out;
}

absl::StatusOr<std::vector<Tensor>> TensorSplitIndices(const Tensor& self, IntList indices,
                                                       int64_t dim) {
  constexpr absl::string_view op = "tensor_split";
  if (self.dim() == 0) {
    return RuntimeError(op, "tensor_split expected at least a 1-dimensional tensor, but got a "
                            "tensor with 0 dims");
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  if (static_cast<int64_t>(indices.size()) >= kMaxViewOutputs) {
    return TooManyOutputs(op, indices.size() + 1);
  }
  std::vector<Tensor> out;
  out.reserve(indices.size() + 1);
  int64_t start = 0;
  for (int64_t end : indices) {
    TENSORD_ASSIGN_OR_RETURN(Tensor piece, Slice(self, d, start, end, 1));
    out.push_back(std::move(piece));
    start = end;
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor last, Slice(self, d, start, self.size(d), 1));
  out.push_back(std::move(last));
  return out;
}

absl::StatusOr<std::vector<Tensor>> Chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  constexpr absl::string_view op = "chunk";
  if (self.dim() == 0) return RuntimeError(op, "chunk expects at least a 1-dimensional tensor");
  if (chunks <= 0) {
    return RuntimeError(op, absl::StrCat("chunk expects `chunks` to be greater than 0, got: ",
                                         chunks));
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  const int64_t dim_size = self.size(d);
  const int64_t split_size = CeilDiv(dim_size, chunks);
  if (split_size == 0 && dim_size == 0) {
    if (chunks > kMaxViewOutputs) return TooManyOutputs(op, chunks);
    DimVector sizes(chunks, 0);
    return SplitWithSizes(self, sizes, d);
  }
  return SplitImpl(op, self, split_size, d);
}

absl::StatusOr<std::vector<Tensor>> Unbind(const Tensor& self, int64_t dim) {
  constexpr absl::string_view op = "unbind";
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  if (self.dim() == 0) {
    return IndexError(op, "dimension specified as 0 but tensor has no dimensions");
  }
  const int64_t size = self.size(d);
  if (size > kMaxViewOutputs) return TooManyOutputs(op, size);
  std::vector<Tensor> out;
  out.reserve(size);
  for (int64_t i = 0; i < size; ++i) {
    TENSORD_ASSIGN_OR_RETURN(Tensor piece, Select(self, d, i));
    out.push_back(std::move(piece));
  }
  return out;
}

absl::StatusOr<Tensor> Alias(const Tensor& self) {
  return MakeView("alias", self, self.sizes(), self.strides(), self.storage_offset());
}

absl::StatusOr<Tensor> Detach(const Tensor& self) {
  return MakeView("detach", self, self.sizes(), self.strides(), self.storage_offset());
}

}  // namespace tensord::engine
