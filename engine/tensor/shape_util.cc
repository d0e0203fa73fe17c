#include "engine/tensor/shape_util.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "engine/core/checked_math.h"
#include "engine/core/errors.h"

namespace tensord::engine {

absl::StatusOr<int64_t> WrapDim(absl::string_view op, int64_t dim, int64_t ndim) {
  if (ndim <= 0) ndim = 1;
  if (dim < -ndim || dim >= ndim) return DimOutOfRange(op, dim, ndim);
  return dim < 0 ? dim + ndim : dim;
}

absl::StatusOr<int64_t> WrapDimNoScalar(absl::string_view op, int64_t dim, int64_t ndim) {
  if (ndim == 0) {
    return IndexError(op, absl::StrCat("Dimension specified as ", dim,
                                       " but tensor has no dimensions"));
  }
  return WrapDim(op, dim, ndim);
}

absl::StatusOr<DimVector> InferSize(absl::string_view op, IntList shape, int64_t numel) {
  if (static_cast<int64_t>(shape.size()) > kMaxRank) {
    return RuntimeError(op, absl::StrCat("tensors may have at most ", kMaxRank,
                                         " dimensions, but got ", shape.size()));
  }
  int64_t newsize = 1;
  bool overflow = false;
  std::optional<int64_t> infer_dim;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (shape[d] == -1) {
      if (infer_dim) return RuntimeError(op, "only one dimension can be inferred");
      infer_dim = d;
    } else if (shape[d] >= 0) {
      overflow |= !MulInto(newsize, shape[d]);
    } else {
      return RuntimeError(op, absl::StrCat("invalid shape dimension ", shape[d]));
    }
  }
  // A product that overflows can only be wrong: but if some size is 0 the true product is 0.
  if (overflow) {
    bool has_zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
    if (!has_zero) {
      return RuntimeError(op, absl::StrCat("shape '", FormatList(shape),
                                           "' is invalid for input of size ", numel));
    }
    newsize = 0;
  }
  DimVector result(shape.begin(), shape.end());
  if (numel == newsize || (infer_dim && newsize > 0 && numel % newsize == 0)) {
    if (infer_dim) {
      if (newsize == 0) {
        return RuntimeError(op, absl::StrCat("cannot reshape tensor of 0 elements into shape ",
                                             FormatList(shape),
                                             " because the unspecified dimension size -1 can be "
                                             "any value and is ambiguous"));
      }
      result[*infer_dim] = numel / newsize;
    }
    // Contiguous strides of the result must be representable too.
    absl::StatusOr<int64_t> checked = CheckShape(op, result);
    if (!checked.ok()) return checked.status();
    return result;
  }
  return RuntimeError(op, absl::StrCat("shape '", FormatList(shape),
                                       "' is invalid for input of size ", numel));
}

absl::StatusOr<std::optional<DimVector>> ComputeViewStrides(absl::string_view op,
                                                            IntList old_sizes,
                                                            IntList old_strides,
                                                            IntList new_sizes) {
  const int64_t new_dim = static_cast<int64_t>(new_sizes.size());
  if (old_sizes.empty()) return DimVector(new_dim, 1);

  int64_t numel = 1;
  for (int64_t s : old_sizes) {
    if (s == 0) {
      numel = 0;
      break;
    }
    numel *= s;  // validated tensors never overflow
  }
  if (numel == 0 && std::equal(old_sizes.begin(), old_sizes.end(), new_sizes.begin(),
                               new_sizes.end())) {
    return DimVector(old_strides.begin(), old_strides.end());
  }

  DimVector new_strides(new_dim);
  const auto overflow = [&] {
    return RuntimeError(op, absl::StrCat("strides for shape ", FormatList(new_sizes),
                                         " overflow int64"));
  };
  if (numel == 0) {
    for (int64_t d = new_dim - 1; d >= 0; --d) {
      if (d == new_dim - 1) {
        new_strides[d] = 1;
      } else {
        auto s = CheckedMul(std::max<int64_t>(new_sizes[d + 1], 1), new_strides[d + 1]);
        if (!s) return overflow();
        new_strides[d] = *s;
      }
    }
    return std::optional<DimVector>(std::move(new_strides));
  }

  int64_t view_d = new_dim - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0;
       --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    // A chunk ends where the next-outer dim is not laid out right after this one.
    bool chunk_ends = tensor_d == 0;
    if (!chunk_ends && old_sizes[tensor_d - 1] != 1) {
      auto expected = CheckedMul(tensor_numel, chunk_base_stride);
      chunk_ends = !expected || old_strides[tensor_d - 1] != *expected;
    }
    if (chunk_ends) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        auto s = CheckedMul(view_numel, chunk_base_stride);
        if (!s) return overflow();
        new_strides[view_d] = *s;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::optional<DimVector>();
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::optional<DimVector>();
  return std::optional<DimVector>(std::move(new_strides));
}

absl::StatusOr<DimVector> BroadcastShapes(absl::string_view op, IntList a, IntList b) {
  const size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  // From the last dim, as torch's infer_size: of several mismatches, the rightmost is named.
  for (size_t i = n; i-- > 0;) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      return RuntimeError(op, absl::StrCat("The size of tensor a (", da,
                                           ") must match the size of tensor b (", db,
                                           ") at non-singleton dimension ", i));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DimVector StrideOrder(IntList sizes, absl::Span<const DimVector> operand_strides) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  DimVector perm(n);
  std::iota(perm.rbegin(), perm.rend(), 0);  // n-1, …, 0: a row-major tensor's order
  // 1: d0 goes after d1; -1: before; 0: ambiguous (the next operand decides, else stay).
  const auto should_swap = [&](int64_t d0, int64_t d1) {
    for (const DimVector& strides : operand_strides) {
      const int64_t s0 = strides[d0], s1 = strides[d1];
      if (s0 == 0 || s1 == 0) continue;  // broadcast in one of them: says nothing
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (sizes[d0] > sizes[d1]) return 1;
    }
    return 0;
  };
  // Insertion sort that leaves ambiguous pairs in place (TensorIterator::reorder_dimensions).
  for (int64_t i = 1; i < n; ++i) {
    int64_t dim1 = i;
    for (int64_t dim0 = i - 1; dim0 >= 0; --dim0) {
      const int c = should_swap(perm[dim0], perm[dim1]);
      if (c > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
  return perm;
}

DimVector InferDenseStrides(IntList sizes, IntList strides) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  if (n == 0) return {};
  if (n == 1) return DimVector{1};
  const DimVector one[] = {DimVector(strides.begin(), strides.end())};
  const DimVector perm = StrideOrder(sizes, one);
  DimVector out(n);
  int64_t s = 1;
  for (int64_t d : perm) {
    out[d] = s;
    if (sizes[d] > 1) s *= sizes[d];
  }
  return out;
}

}  // namespace tensord::engine
