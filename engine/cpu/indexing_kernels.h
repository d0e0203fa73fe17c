// CPU indexing kernels: Backend's index_select, gather, scatter, take, put_, nonzero and
// masked_select on the CPU (runtime/backend.h states their contracts).
#ifndef TENSORD_ENGINE_CPU_INDEXING_KERNELS_H_
#define TENSORD_ENGINE_CPU_INDEXING_KERNELS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/core/scalar.h"
#include "engine/kernels/reduce_ops.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine::cpu {

absl::Status IndexSelect(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);
absl::Status Gather(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);
absl::Status Scatter(absl::string_view op, const Tensor& self, int64_t dim, const Tensor& index,
                     const Tensor& src, const Scalar* value, ScatterMode mode);
absl::Status CheckIndexBounds(absl::string_view op, const Tensor& index, int64_t dim,
                              int64_t size);
absl::Status Take(const Tensor& out, const Tensor& self, const Tensor& index);
absl::Status Put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate);
int64_t CountNonzero(const Tensor& self);
void NonzeroIndices(const Tensor& self, const Tensor& out);
void MaskedSelect(const Tensor& out, const Tensor& self, const Tensor& mask);

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_INDEXING_KERNELS_H_
