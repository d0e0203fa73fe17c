// Launchers of the CUDA indexing kernels. Indices are checked on the device: one out of range
// reports KernelError::kIndexOutOfRange (a = the index, b = the size it indexes) into `slot` and
// nothing is written (the writing kernels of scatter and put_ run after the check on the same
// stream and stop when the slot holds an error). The error names the first bad index in
// row-major order, as the CPU backend's loops do.
#ifndef TENSORD_ENGINE_CUDA_INDEXING_KERNELS_H_
#define TENSORD_ENGINE_CUDA_INDEXING_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/core/scalar.h"
#include "engine/kernels/kernel_error.h"
#include "engine/kernels/reduce_ops.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine::cuda {

// Tensors of up to this many dims (torch's CUDA indexing has the same limit, 25).
inline constexpr int kMaxIndexDims = 25;

cudaError_t LaunchIndexSelect(const Tensor& out, const Tensor& self, int64_t dim,
                              const Tensor& index, KernelError* slot, cudaStream_t stream);
cudaError_t LaunchGather(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                         KernelError* slot, cudaStream_t stream);
// `value`: the fill value's bit pattern in self's dtype when there is no src tensor.
cudaError_t LaunchScatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                          const uint64_t* value, ScatterMode mode, KernelError* slot,
                          cudaStream_t stream);
// Reports (for the op's message) the first element of `index` outside [-limit, limit).
cudaError_t LaunchCheckIndexBounds(const Tensor& index, int64_t limit, KernelError* slot,
                                   cudaStream_t stream);
cudaError_t LaunchTake(const Tensor& out, const Tensor& self, const Tensor& index,
                       KernelError* slot, cudaStream_t stream);
cudaError_t LaunchPut(const Tensor& self, const Tensor& index, const Tensor& source,
                      bool accumulate, KernelError* slot, cudaStream_t stream);

// Data-dependent selection in row-major order, in two passes over blocks of kSelectBlock
// positions: CountSelected writes each block's count of selected positions (nonzero elements of
// `self`, or true elements of `mask` when given) into `block_counts`; WriteSelected, given each
// block's first output position (`block_starts`, an exclusive prefix sum the host makes), writes
// the selected positions' indices ([self.dim(), count] row-major into `indices`) or `self`'s
// selected elements (into `values`).
inline constexpr int kSelectBlock = 256;
int64_t SelectBlocks(int64_t numel);
cudaError_t LaunchCountSelected(const Tensor& self, const Tensor* mask, int64_t* block_counts,
                                cudaStream_t stream);
cudaError_t LaunchWriteSelected(const Tensor& self, const Tensor* mask,
                                const int64_t* block_starts, int64_t count, int64_t* indices,
                                char* values, cudaStream_t stream);

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_INDEXING_KERNELS_H_
