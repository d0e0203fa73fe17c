// CPU kernels of sort, topk and searchsorted (engine/ops/sort_ops.cc plans them;
// Backend::Sort, ::TopK, ::SearchSorted), and of unique(sorted=False)
// (engine/ops/data_dependent_ops.cc; Backend::UniqueInHashOrder).
#ifndef TENSORD_ENGINE_CPU_SORT_KERNELS_H_
#define TENSORD_ENGINE_CPU_SORT_KERNELS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "engine/kernels/search.h"
#include "engine/runtime/backend.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine::cpu {

// values, indices (self's sizes, their own strides) = self sorted along `dim`, NaN above every
// number (last ascending, first descending), as torch.sort: stable, or tied elements where
// torch's CPU kernel leaves them.
absl::Status Sort(const Tensor& self, int64_t dim, bool descending, bool stable,
                  const Tensor& values, const Tensor& indices);
// values, indices (self's sizes with `dim` of size k) = the k largest (or smallest) elements
// along `dim` (NaN counts as the largest), laid out as `order` says, ties where torch's CPU
// topk (kthvalue for kKthLast) leaves them.
absl::Status TopK(const Tensor& self, int64_t k, int64_t dim, bool largest, TopKOrder order,
                  const Tensor& values, const Tensor& indices);
// Backend::UniqueInHashOrder: torch's unique(sorted=False), a std::unordered_set of the elements
// (hashed and compared as torch's: bfloat16 by its bits, equal as floats), run alike.
absl::StatusOr<int64_t> UniqueInHashOrder(const Tensor& self, const Tensor& values,
                                          const Tensor& inverse, const Tensor& counts);
// The positions of call.values in call.sequence (kernels/search.h), in parallel.
void SearchSorted(const SearchSortedCall& call);

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_SORT_KERNELS_H_
