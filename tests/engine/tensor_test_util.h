// Helpers for engine tests: tensors from values, values from tensors.
#ifndef TENSORD_TESTS_ENGINE_TENSOR_TEST_UTIL_H_
#define TENSORD_TESTS_ENGINE_TENSOR_TEST_UTIL_H_

#include <vector>

#include "engine/ops/copy_ops.h"
#include "engine/ops/factory_ops.h"
#include "engine/tensor/tensor.h"
#include "engine/views/view_ops.h"

namespace tensord::engine::test_util {

// A tensor over a fresh storage of `storage_numel` elements of `dtype` whose element i holds
// value i + base, viewed with the given metadata.
inline absl::StatusOr<Tensor> MakeStrided(DType dtype, int64_t storage_numel, IntList sizes,
                                          IntList strides, int64_t offset, double base = 0) {
  absl::StatusOr<Tensor> values =
      Arange(Scalar(base), Scalar(base + static_cast<double>(storage_numel)), Scalar(1.0),
             DType::kFloat64);
  if (!values.ok()) return values.status();
  absl::StatusOr<Tensor> store = ToDType(*values, dtype);
  if (!store.ok()) return store.status();
  return AsStrided(*store, sizes, strides, offset);
}

// The elements of `t` in row-major order, as doubles.
inline std::vector<double> Values(const Tensor& t) {
  absl::StatusOr<Tensor> c = CloneContiguous(t);
  absl::StatusOr<Tensor> d = ToDType(*c, DType::kFloat64);
  const double* p = d->data_as<double>();
  return std::vector<double>(p, p + d->numel());
}

// Every element of t's storage, as doubles.
inline std::vector<double> StorageValues(const Tensor& t) {
  const int64_t n = t.storage()->nbytes() / t.itemsize();
  const int64_t sizes[1] = {n};
  return Values(t.WithMeta(TensorMeta::Contiguous(t.dtype(), sizes)));
}

inline std::vector<int64_t> ToVec(IntList l) { return std::vector<int64_t>(l.begin(), l.end()); }

}  // namespace tensord::engine::test_util

#endif  // TENSORD_TESTS_ENGINE_TENSOR_TEST_UTIL_H_
