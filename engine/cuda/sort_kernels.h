// CUDA kernels of sort and topk (Backend::Sort, ::TopK): every slice along a dim sorted at once
// by CUB's merge sort of element positions, under an order that compares slices first, then
// values (NaN above every number), then positions, so that it is total: stable for sort, and
// for topk the same choice among equal elements as the CPU kernel.
#ifndef TENSORD_ENGINE_CUDA_SORT_KERNELS_H_
#define TENSORD_ENGINE_CUDA_SORT_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "engine/kernels/search.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine::cuda {

// Device scratch bytes that LaunchSortSlices needs for `self` (not empty).
size_t SortScratchBytes(const Tensor& self);

// values, indices (their own strides; `dim` of size k) = the first k of each slice of `self`
// along `dim` in ascending (or `descending`) order. `scratch` holds SortScratchBytes bytes;
// self is not empty and has at most kMaxIndexDims dims (indexing_kernels.h).
cudaError_t LaunchSortSlices(const Tensor& self, int64_t dim, int64_t k, bool descending,
                             const Tensor& values, const Tensor& indices, void* scratch,
                             size_t scratch_bytes, cudaStream_t stream);

// The positions of call.values in call.sequence (kernels/search.h), a thread per value.
cudaError_t LaunchSearchSorted(const SearchSortedCall& call, cudaStream_t stream);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_SORT_KERNELS_H_
