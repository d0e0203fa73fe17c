#include "engine/cpu/cpu_backend.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "engine/core/errors.h"
#include "engine/cpu/copy_kernel.h"
#include "engine/cpu/elementwise_kernels.h"
#include "engine/cpu/indexing_kernels.h"
#include "engine/cpu/lapack_kernels.h"
#include "engine/cpu/sort_kernels.h"
#include "engine/cpu/linalg_kernels.h"
#include "engine/cpu/random_kernels.h"
#include "engine/cpu/loss_kernels.h"
#include "engine/cpu/pool_kernels.h"
#include "engine/cpu/upsample_kernels.h"
#include "engine/cpu/reduce_kernels.h"

namespace tensord::engine {
namespace {

class CpuBackendImpl final : public Backend {
 public:
  Device device() const override { return kCpu; }
  Allocator& allocator() override { return CpuAllocator(); }
  absl::Status Copy(IntList sizes, const StridedRef& dst, const StridedRef& src) override {
    cpu::CopyStrided(sizes, dst, src);
    return absl::OkStatus();
  }
  absl::Status Fill(IntList sizes, const StridedRef& dst, const Scalar& value) override {
    cpu::FillStrided(sizes, dst, value);
    return absl::OkStatus();
  }
  absl::Status Arange(char* out, DType dtype, int64_t n, const Scalar& start,
                      const Scalar& step) override {
    cpu::ArangeContiguous(out, dtype, n, start, step);
    return absl::OkStatus();
  }
  absl::Status CopyToHost(void* host_dst, const void* src, int64_t nbytes) override {
    if (nbytes > 0) std::memcpy(host_dst, src, static_cast<size_t>(nbytes));
    return absl::OkStatus();
  }
  absl::Status CopyFromHost(void* dst, const void* host_src, int64_t nbytes) override {
    if (nbytes > 0) std::memcpy(dst, host_src, static_cast<size_t>(nbytes));
    return absl::OkStatus();
  }
  absl::Status Binary(BinaryOp op, IntList shape, const StridedRef& out, const StridedRef& a,
                      const StridedRef& b, const Scalar& alpha) override {
    cpu::Binary(op, shape, out, a, b, alpha);
    return absl::OkStatus();
  }
  absl::Status CheckValues(ValueCheck check, absl::string_view op, IntList shape,
                           const StridedRef& values) override {
    if (cpu::AnyFails(check, shape, values)) return RuntimeError(op, ValueCheckMessage(check));
    return absl::OkStatus();
  }
  absl::Status Unary(UnaryOp op, IntList shape, const StridedRef& out, const StridedRef& in,
                     const UnaryArgs& args) override {
    cpu::Unary(op, shape, out, in, args);
    return absl::OkStatus();
  }
  absl::Status Where(IntList shape, const StridedRef& out, const StridedRef& cond,
                     const StridedRef& a, const StridedRef& b) override {
    cpu::Where(shape, out, cond, a, b);
    return absl::OkStatus();
  }
  absl::Status Lerp(IntList shape, const StridedRef& out, const StridedRef& start,
                    const StridedRef& end, const StridedRef& weight) override {
    cpu::Lerp(shape, out, start, end, weight);
    return absl::OkStatus();
  }
  absl::Status Addc(bool divide, IntList shape, const StridedRef& out, const StridedRef& self,
                    const StridedRef& t1, const StridedRef& t2, const Scalar& value) override {
    cpu::Addc(divide, shape, out, self, t1, t2, value);
    return absl::OkStatus();
  }
  absl::Status ClampTensor(IntList shape, const StridedRef& out, const StridedRef& x,
                           const StridedRef& lo, const StridedRef& hi, bool has_lo,
                           bool has_hi) override {
    cpu::ClampTensor(shape, out, x, lo, hi, has_lo, has_hi);
    return absl::OkStatus();
  }
  absl::Status Reduce(ReduceOp op, const ReduceGeometry& g, const StridedRef& in, char* out,
                      DType out_dtype, int64_t* indices, const ReduceArgs& args) override {
    cpu::Reduce(op, g, in, out, out_dtype, indices, args);
    return absl::OkStatus();
  }
  absl::Status CumExtreme(bool max, IntList shape, int64_t dim, const StridedRef& in,
                          const StridedRef& values, const StridedRef& indices) override {
    cpu::CumExtreme(max, shape, dim, in, values, indices);
    return absl::OkStatus();
  }
  absl::Status Scan(ScanOp op, IntList shape, int64_t dim, const StridedRef& in,
                    const StridedRef& out) override {
    cpu::Scan(op, shape, dim, in, out);
    return absl::OkStatus();
  }
  absl::Status Softmax(bool log, IntList shape, int64_t dim, const StridedRef& in,
                       const StridedRef& out) override {
    cpu::Softmax(log, shape, dim, in, out);
    return absl::OkStatus();
  }
  absl::Status Conv(const ConvCall& call) override {
    cpu::Conv(call);
    return absl::OkStatus();
  }
  absl::Status Pool(const PoolCall& call) override {
    cpu::Pool(call);
    return absl::OkStatus();
  }
  absl::Status Upsample(const UpsampleCall& call) override {
    cpu::Upsample(call);
    return absl::OkStatus();
  }

  absl::Status ChannelAffine(const ChannelAffineCall& call) override {
    cpu::ChannelAffine(call);
    return absl::OkStatus();
  }

  absl::Status CrossEntropy(const CrossEntropyCall& call) override {
    return cpu::CrossEntropy(call);
  }

  absl::Status CtcLoss(const CtcLossCall& call) override { return cpu::CtcLoss(call); }

  absl::Status LayerNorm(const LayerNormCall& call) override {
    cpu::LayerNorm(call);
    return absl::OkStatus();
  }
  absl::Status Matmul(const MatmulCall& call) override {
    cpu::Matmul(call);
    return absl::OkStatus();
  }
  absl::Status Concat(const ConcatCall& call) override {
    cpu::Concat(call);
    return absl::OkStatus();
  }
  absl::Status Random(const DistArgs& dist, const StridedRef& out, int64_t n,
                      const double* probs) override {
    return cpu::Random(dist, out, n, probs);
  }
  absl::Status IndexSelect(const Tensor& out, const Tensor& self, int64_t dim,
                           const Tensor& index) override {
    return cpu::IndexSelect(out, self, dim, index);
  }
  absl::Status Sort(const Tensor& self, int64_t dim, bool descending, bool stable,
                    const Tensor& values, const Tensor& indices) override {
    return cpu::Sort(self, dim, descending, stable, values, indices);
  }
  absl::Status SearchSorted(const SearchSortedCall& call) override {
    cpu::SearchSorted(call);
    return absl::OkStatus();
  }
  absl::Status TopK(const Tensor& self, int64_t k, int64_t dim, bool largest, TopKOrder order,
                    const Tensor& values, const Tensor& indices) override {
    return cpu::TopK(self, k, dim, largest, order, values, indices);
  }
  absl::Status LuFactor(const MatrixBatch& a, int32_t* pivots,
                        const LinalgErrorSpec& spec) override {
    return cpu::LuFactor(a, pivots, spec);
  }
  absl::Status LuSolve(const MatrixBatch& lu, const int32_t* pivots, bool transpose,
                       const MatrixBatch& b) override {
    return cpu::LuSolve(lu, pivots, transpose, b);
  }
  absl::Status LuPermutation(const int32_t* pivots, int64_t batch, int64_t swaps, int64_t rows,
                             int64_t* perm) override {
    cpu::LuPermutation(pivots, batch, swaps, rows, perm);
    return absl::OkStatus();
  }
  absl::Status Cholesky(const MatrixBatch& a, bool upper, const LinalgErrorSpec& spec) override {
    return cpu::Cholesky(a, upper, spec);
  }
  absl::Status Geqrf(const MatrixBatch& a, char* tau) override { return cpu::Geqrf(a, tau); }
  absl::Status HouseholderProduct(const MatrixBatch& reflectors, const char* tau,
                                  const MatrixBatch& q) override {
    return cpu::HouseholderProduct(reflectors, tau, q);
  }
  absl::Status Qr(const MatrixBatch& a, const MatrixBatch& r, const MatrixBatch& q) override {
    return cpu::Qr(a, r, q);
  }
  absl::Status Svd(const MatrixBatch& a, char* s, const MatrixBatch& u, const MatrixBatch& vh,
                   const LinalgErrorSpec& spec) override {
    return cpu::Svd(a, s, u, vh, spec);
  }
  absl::Status Eigh(const MatrixBatch& a, char* w, bool upper, bool vectors,
                    const LinalgErrorSpec& spec) override {
    return cpu::Eigh(a, w, upper, vectors, spec);
  }
  absl::Status Gather(const Tensor& out, const Tensor& self, int64_t dim,
                      const Tensor& index) override {
    return cpu::Gather(out, self, dim, index);
  }
  absl::Status Scatter(absl::string_view op, const Tensor& self, int64_t dim, const Tensor& index,
                       const Tensor& src, const Scalar* value, ScatterMode mode) override {
    return cpu::Scatter(op, self, dim, index, src, value, mode);
  }
  absl::Status CheckIndexBounds(absl::string_view op, const Tensor& index, int64_t dim,
                                int64_t size) override {
    return cpu::CheckIndexBounds(op, index, dim, size);
  }
  absl::Status Take(const Tensor& out, const Tensor& self, const Tensor& index) override {
    return cpu::Take(out, self, index);
  }
  absl::Status Put(const Tensor& self, const Tensor& index, const Tensor& source,
                   bool accumulate) override {
    return cpu::Put(self, index, source, accumulate);
  }
  absl::StatusOr<int64_t> UniqueInHashOrder(const Tensor& self, const Tensor& values,
                                            const Tensor& inverse, const Tensor& counts) override {
    return cpu::UniqueInHashOrder(self, values, inverse, counts);
  }
  absl::StatusOr<int64_t> CountNonzero(const Tensor& self) override {
    return cpu::CountNonzero(self);
  }
  absl::Status NonzeroIndices(const Tensor& self, const Tensor& out) override {
    cpu::NonzeroIndices(self, out);
    return absl::OkStatus();
  }
  absl::Status MaskedSelect(const Tensor& out, const Tensor& self, const Tensor& mask) override {
    cpu::MaskedSelect(out, self, mask);
    return absl::OkStatus();
  }
  absl::Status Sleep(int64_t ms) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return absl::OkStatus();
  }
};

}  // namespace

Backend& CpuBackend() {
  static CpuBackendImpl* backend = [] {
    cpu::UseOneBlasThread();  // the pool runs the products' panels (cpu::Matmul)
    return new CpuBackendImpl();
  }();
  return *backend;
}

}  // namespace tensord::engine

// Every program linking the engine runs this (CMake links this object into each of them).
namespace {
const bool kCpuBackendRegistered = [] {
  tensord::engine::RegisterBackend(&tensord::engine::CpuBackend());
  return true;
}();
}  // namespace
