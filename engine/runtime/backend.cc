#include "engine/runtime/backend.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/runtime/meta_backend.h"

namespace tensord::engine {
namespace {

std::atomic<Backend*> cuda_backends[kMaxCudaDevices];
std::atomic<Backend*> cpu_backend{nullptr};

}  // namespace

absl::Status Backend::Missing(absl::string_view kernel) const {
  return absl::UnimplementedError(absl::StrCat(kernel, " is not implemented on ",
                                               device().ToString(), " yet"));
}
absl::Status Backend::Reduce(ReduceOp, const ReduceGeometry&, const StridedRef&, char*, DType,
                             int64_t*, const ReduceArgs&) {
  return Missing("reductions");
}
absl::Status Backend::CumExtreme(bool, IntList, int64_t, const StridedRef&, const StridedRef&,
                                const StridedRef&) {
  return Missing("cummax");
}
absl::Status Backend::Scan(ScanOp, IntList, int64_t, const StridedRef&, const StridedRef&) {
  return Missing("cumsum/cumprod");
}
absl::Status Backend::Softmax(bool, IntList, int64_t, const StridedRef&, const StridedRef&) {
  return Missing("softmax");
}
absl::Status Backend::LayerNorm(const LayerNormCall&) { return Missing("layer_norm"); }
absl::Status Backend::Conv(const ConvCall&) { return Missing("convolution"); }
absl::Status Backend::Pool(const PoolCall&) { return Missing("pooling"); }
absl::Status Backend::Upsample(const UpsampleCall&) { return Missing("resampling"); }
absl::Status Backend::ChannelAffine(const ChannelAffineCall&) { return Missing("batch_norm"); }
absl::Status Backend::CrossEntropy(const CrossEntropyCall& call) {
  return Missing(call.log_probs ? "nll_loss" : "cross_entropy");
}
absl::Status Backend::CtcLoss(const CtcLossCall&) { return Missing("ctc_loss"); }
absl::Status Backend::Matmul(const MatmulCall&) { return Missing("matmul"); }
absl::Status Backend::Concat(const ConcatCall& call) {
  int64_t at = 0;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const int64_t n = call.bytes[i];
    const int64_t dst_strides[] = {call.row_bytes, 1};
    const int64_t src_strides[] = {n, 1};
    const int64_t sizes[] = {call.outer, n};
    TENSORD_RETURN_IF_ERROR(Copy(sizes, StridedRef{call.out + at, DType::kUInt8, dst_strides},
                                 StridedRef{const_cast<char*>(call.inputs[i]), DType::kUInt8,
                                            src_strides}));
    at += n;
  }
  return absl::OkStatus();
}
absl::Status Backend::Random(const DistArgs&, const StridedRef&, int64_t, const double*) {
  return Missing("random sampling");
}
absl::Status Backend::IndexSelect(const Tensor&, const Tensor&, int64_t, const Tensor&) {
  return Missing("index_select");
}
absl::Status Backend::Sort(const Tensor&, int64_t, bool, bool, const Tensor&, const Tensor&) {
  return Missing("sort");
}
absl::Status Backend::TopK(const Tensor&, int64_t, int64_t, bool, TopKOrder, const Tensor&,
                             const Tensor&) {
  return Missing("topk");
}
absl::Status Backend::SearchSorted(const SearchSortedCall&) { return Missing("searchsorted"); }
absl::Status Backend::Gather(const Tensor&, const Tensor&, int64_t, const Tensor&) {
  return Missing("gather");
}
absl::Status Backend::Scatter(absl::string_view op, const Tensor&, int64_t, const Tensor&,
                              const Tensor&, const Scalar*, ScatterMode) {
  return Missing(op);
}
absl::Status Backend::CheckIndexBounds(absl::string_view op, const Tensor&, int64_t, int64_t) {
  return Missing(op);
}
absl::Status Backend::Take(const Tensor&, const Tensor&, const Tensor&) { return Missing("take"); }
absl::Status Backend::Put(const Tensor&, const Tensor&, const Tensor&, bool) {
  return Missing("put_");
}
absl::Status Backend::LuFactor(const MatrixBatch&, int32_t*, const LinalgErrorSpec&) {
  return Missing("lu_factor");
}
absl::Status Backend::LuSolve(const MatrixBatch&, const int32_t*, bool, const MatrixBatch&) {
  return Missing("lu_solve");
}
absl::Status Backend::LuPermutation(const int32_t*, int64_t, int64_t, int64_t, int64_t*) {
  return Missing("lu_unpack");
}
absl::Status Backend::Cholesky(const MatrixBatch&, bool, const LinalgErrorSpec&) {
  return Missing("cholesky");
}
absl::Status Backend::Qr(const MatrixBatch&, const MatrixBatch&, const MatrixBatch&) {
  return Missing("qr");
}
absl::Status Backend::Geqrf(const MatrixBatch&, char*) { return Missing("geqrf"); }
absl::Status Backend::HouseholderProduct(const MatrixBatch&, const char*, const MatrixBatch&) {
  return Missing("householder_product");
}
absl::Status Backend::Svd(const MatrixBatch&, char*, const MatrixBatch&, const MatrixBatch&,
                          const LinalgErrorSpec&) {
  return Missing("svd");
}
absl::Status Backend::Eigh(const MatrixBatch&, char*, bool, bool, const LinalgErrorSpec&) {
  return Missing("eigh");
}
absl::StatusOr<int64_t> Backend::CountNonzero(const Tensor&) { return Missing("nonzero"); }
absl::StatusOr<int64_t> Backend::UniqueInHashOrder(const Tensor&, const Tensor&, const Tensor&,
                                                   const Tensor&) {
  return Missing("unique in hash order");
}
absl::Status Backend::NonzeroIndices(const Tensor&, const Tensor&) { return Missing("nonzero"); }
absl::Status Backend::MaskedSelect(const Tensor&, const Tensor&, const Tensor&) {
  return Missing("masked_select");
}

void RegisterBackend(Backend* backend) {
  const Device d = backend->device();
  if (d.is_cpu()) cpu_backend.store(backend, std::memory_order_release);
  if (d.is_cuda() && d.index >= 0 && d.index < kMaxCudaDevices) {
    cuda_backends[d.index].store(backend, std::memory_order_release);
  }
}

absl::StatusOr<Backend*> BackendFor(Device device) {
  if (InMetadataOnlyScope()) {
    if (Backend* b = MetadataOnlyBackend(device)) return b;
  } else if (device.is_cpu()) {
    if (Backend* b = cpu_backend.load(std::memory_order_acquire)) return b;
    return absl::FailedPreconditionError(
        "no CPU backend: this program links the planning library alone (tensord_plan) without "
        "the engine's kernels (tensord_engine); plan inside a MetadataOnlyScope");
  }
  if (device.index >= 0 && device.index < kMaxCudaDevices) {
    if (Backend* b = cuda_backends[device.index].load(std::memory_order_acquire)) return b;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("device ", device.ToString(), " is not available on this server (no CUDA "
                   "device or CUDA support was not built)"));
}

}  // namespace tensord::engine
