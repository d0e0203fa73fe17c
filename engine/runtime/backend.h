// Backend: the per-device memory and kernels that data ops dispatch to.
#ifndef TENSORD_ENGINE_RUNTIME_BACKEND_H_
#define TENSORD_ENGINE_RUNTIME_BACKEND_H_

#include <vector>

#include "absl/status/statusor.h"
#include "engine/runtime/allocator.h"
#include "engine/core/device.h"
#include "engine/kernels/binary_ops.h"
#include "engine/kernels/ctc.h"
#include "engine/kernels/linalg.h"
#include "engine/kernels/matmul.h"
#include "engine/kernels/pool.h"
#include "engine/kernels/upsample.h"
#include "engine/kernels/random.h"
#include "engine/kernels/reduce_ops.h"
#include "engine/kernels/search.h"
#include "engine/kernels/unary_ops.h"
#include "engine/kernels/value_check.h"
#include "engine/core/scalar.h"
#include "engine/tensor/strided_ref.h"
#include "engine/tensor/tensor.h"

namespace tensord::engine {

// cat of contiguous inputs of the output's dtype into the contiguous `out`: each of out's
// `outer` rows (`row_bytes` bytes) is the inputs' rows side by side, input i's `bytes[i]` long.
struct ConcatCall {
  char* out = nullptr;
  int64_t outer = 0;
  int64_t row_bytes = 0;
  std::vector<const char*> inputs;
  std::vector<int64_t> bytes;
};

// How TopK lays out the k it selects. Where elements tie, which of them are taken and in what
// order is the backend's choice; the CPU backend makes torch's (engine/cpu/sort_kernels.cc).
enum class TopKOrder {
  kSorted,    // best first (torch.topk's sorted=True)
  kUnsorted,  // any order (sorted=False)
  kKthLast,   // the k-th best last, the others before it in any order (kthvalue)
};

// One per device. The CPU backend always exists; a CUDA backend (engine/cuda/) implements the
// same interface with device kernels. Kernels receive operands that are already validated (shape,
// bounds, overlap). Inside a stream's task (exec_context.h) an asynchronous device launches the
// work on the stream's lane and returns at once; elsewhere every call returns once its work is
// done. CopyToHost/CopyFromHost always return with the bytes moved. An error is the device's (a
// failed launch, a lost device), not the data's. Thread-safe.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual Allocator& allocator() = 0;

  // dst[i] = convert(src[i]) over `sizes`.
  // Both operands live on this device.
  virtual absl::Status Copy(IntList sizes, const StridedRef& dst, const StridedRef& src) = 0;
  // dst[i] = value over `sizes`.
  virtual absl::Status Fill(IntList sizes, const StridedRef& dst, const Scalar& value) = 0;
  // out[i] = start + i * step, contiguous.
  virtual absl::Status Arange(char* out, DType dtype, int64_t n, const Scalar& start,
                              const Scalar& step) = 0;
  // `nbytes` bytes between this device's memory (`device_ptr`) and host memory.
  virtual absl::Status CopyToHost(void* host_dst, const void* device_src, int64_t nbytes) = 0;
  virtual absl::Status CopyFromHost(void* device_dst, const void* host_src, int64_t nbytes) = 0;
  // out = op(a, b) over `shape` (engine/kernels/binary_ops.h); a and b in the compute dtype.
  virtual absl::Status Binary(BinaryOp op, IntList shape, const StridedRef& out,
                              const StridedRef& a, const StridedRef& b, const Scalar& alpha) = 0;
  // Fails `op` when a value of `values` fails `check` (engine/kernels/value_check.h): an
  // integral divisor's zero, binary_cross_entropy's input outside [0, 1]. On an asynchronous
  // device the check runs there and the op fails when it retires.
  virtual absl::Status CheckValues(ValueCheck check, absl::string_view op, IntList shape,
                                   const StridedRef& values) = 0;
  // out = op(in) (engine/kernels/unary_ops.h); in in the compute dtype.
  virtual absl::Status Unary(UnaryOp op, IntList shape, const StridedRef& out,
                             const StridedRef& in, const UnaryArgs& args) = 0;
  // out = cond ? a : b (cond one byte per element).
  virtual absl::Status Where(IntList shape, const StridedRef& out, const StridedRef& cond,
                             const StridedRef& a, const StridedRef& b) = 0;
  // out = lerp(start, end, weight).
  virtual absl::Status Lerp(IntList shape, const StridedRef& out, const StridedRef& start,
                            const StridedRef& end, const StridedRef& weight) = 0;
  // out = self + value * t1 * t2, or * (t1 / t2) when `divide`.
  virtual absl::Status Addc(bool divide, IntList shape, const StridedRef& out,
                            const StridedRef& self, const StridedRef& t1, const StridedRef& t2,
                            const Scalar& value) = 0;
  // out = clamp(x, lo, hi) with tensor bounds (an absent one passed as x).
  virtual absl::Status ClampTensor(IntList shape, const StridedRef& out, const StridedRef& x,
                                   const StridedRef& lo, const StridedRef& hi, bool has_lo,
                                   bool has_hi) = 0;

  // The families below have a default that reports the kernel missing on this device
  // (UNIMPLEMENTED, naming it): a backend overrides those it runs.

  // Reduces `in` into the contiguous `out` (of `out_dtype`), and for max/min with indices also
  // writes int64 positions into `indices` (may be null). kernels/reduce_ops.h.
  virtual absl::Status Reduce(ReduceOp op, const ReduceGeometry& g, const StridedRef& in,
                              char* out, DType out_dtype, int64_t* indices,
                              const ReduceArgs& args);
  // Cumulative sum/product/logsumexp along `dim`: out (same shape, its own strides) = scan of in.
  virtual absl::Status Scan(ScanOp op, IntList shape, int64_t dim, const StridedRef& in,
                            const StridedRef& out);
  // cummax / cummin along `dim`: values (in's dtype) and int64 indices, both contiguous.
  virtual absl::Status CumExtreme(bool max, IntList shape, int64_t dim, const StridedRef& in,
                                  const StridedRef& values, const StridedRef& indices);
  // softmax / log_softmax along `dim` (floating dtypes; in and out of the same dtype).
  virtual absl::Status Softmax(bool log, IntList shape, int64_t dim, const StridedRef& in,
                               const StridedRef& out);
  // layer_norm (kernels/reduce_ops.h).
  virtual absl::Status LayerNorm(const LayerNormCall& call);
  // out = x * scale + shift per channel (kernels/reduce_ops.h).
  virtual absl::Status ChannelAffine(const ChannelAffineCall& call);
  // cross_entropy / nll_loss (kernels/reduce_ops.h); a target out of range fails the op.
  virtual absl::Status CrossEntropy(const CrossEntropyCall& call);
  // ctc_loss's negative log-likelihoods (kernels/ctc.h); lengths or labels that fail torch's
  // checks fail the op (CtcLossFailure) and nothing is written.
  virtual absl::Status CtcLoss(const CtcLossCall& call);
  // Batched matrix products (kernels/matmul.h).
  virtual absl::Status Matmul(const MatmulCall& call);
  // cat of contiguous pieces (ConcatCall). By default one strided copy per piece; the CPU
  // copies every piece of a row in one parallel pass.
  virtual absl::Status Concat(const ConcatCall& call);
  // A 2-d or 3-d convolution (kernels/matmul.h). Only the CPU has its own kernel: other
  // devices run conv2d's planned composition (im2col by copy, then their batched product), and
  // conv3d as one conv2d.
  virtual absl::Status Conv(const ConvCall& call);
  // max_pool, adaptive_max_pool and avg_pool (kernels/pool.h).
  virtual absl::Status Pool(const PoolCall& call);
  // interpolate's linear, bilinear, trilinear and bicubic modes (kernels/upsample.h).
  virtual absl::Status Upsample(const UpsampleCall& call);
  // Fills the contiguous `out` (`n` elements) with draws (kernels/random.h); bernoulli with a
  // tensor of probabilities reads them from the contiguous float64 `probs` and fails the op
  // (naming `bernoulli`) when one is outside [0, 1].
  virtual absl::Status Random(const DistArgs& dist, const StridedRef& out, int64_t n,
                              const double* probs);

  // Indexing. Indices are checked while the kernel runs: one out of range fails the op (torch's
  // error for `op`, IndexError or RuntimeError) before anything is written.
  // out (contiguous, self's sizes with dim replaced by index.numel()) = self's slices along `dim`
  // at the 1-d int64/int32 `index`.
  virtual absl::Status IndexSelect(const Tensor& out, const Tensor& self, int64_t dim,
                                   const Tensor& index);
  // out (contiguous, index's sizes) = self[..., index[i][j], ...] along `dim`.
  virtual absl::Status Gather(const Tensor& out, const Tensor& self, int64_t dim,
                              const Tensor& index);
  // self[..., index[i][j], ...] along `dim` = src[i][j] (or combined with it as `mode` says:
  // kernels/reduce_ops.h) — or src's single `value` (in self's dtype) where one is given (src is
  // then unused).
  virtual absl::Status Scatter(absl::string_view op, const Tensor& self, int64_t dim,
                               const Tensor& index, const Tensor& src, const Scalar* value,
                               ScatterMode mode);
  // Fails (torch's "index k is out of bounds for dimension `dim` with size `size`", naming `op`)
  // when an element of the integer `index` lies outside [-size, size): advanced indexing's
  // per-dim check before its indices are combined into one.
  virtual absl::Status CheckIndexBounds(absl::string_view op, const Tensor& index, int64_t dim,
                                        int64_t size);
  // out (index's sizes) = self.flatten()[index].
  virtual absl::Status Take(const Tensor& out, const Tensor& self, const Tensor& index);
  // self.flatten()[index] = (or += with `accumulate`) source.
  virtual absl::Status Put(const Tensor& self, const Tensor& index, const Tensor& source,
                           bool accumulate);
  // Sorting (engine/ops/sort_ops.cc): values and int64 indices, each with its own strides.
  // Sort: self sorted along `dim`, NaN above every number (last ascending, first descending);
  // stable, or with `stable` false, tied elements in any order (the CPU backend: in the order
  // torch's CPU kernel leaves them, ties.h). TopK: the k largest (or smallest) along `dim`;
  // `values` and `indices` have self's sizes with `dim` of size k; `order` says how they are
  // laid out.
  virtual absl::Status Sort(const Tensor& self, int64_t dim, bool descending, bool stable,
                            const Tensor& values, const Tensor& indices);
  virtual absl::Status TopK(const Tensor& self, int64_t k, int64_t dim, bool largest,
                            TopKOrder order, const Tensor& values, const Tensor& indices);
  // searchsorted / bucketize: the position of every value in its sorted row (kernels/search.h).
  virtual absl::Status SearchSorted(const SearchSortedCall& call);
  // Dense linear algebra (engine/ops/decomposition_ops.cc): column-major batches factored in
  // place (kernels/linalg.h). A matrix whose factorization reports a positive info fails the op
  // with LinalgFailure(spec, …) unless spec.check is kNone.
  // LU with partial pivoting of every matrix of `a`; `pivots` (int32, min(rows, cols) per
  // matrix, contiguous) are LAPACK's 1-based row swaps.
  virtual absl::Status LuFactor(const MatrixBatch& a, int32_t* pivots,
                                const LinalgErrorSpec& spec);
  // b = A^-1 b (A^-T b with `transpose`) for every matrix, from `lu` and `pivots` (LuFactor's,
  // every pivot in [1, rows]); b has lu's batch.
  virtual absl::Status LuSolve(const MatrixBatch& lu, const int32_t* pivots, bool transpose,
                               const MatrixBatch& b);
  // The row permutation of every matrix's pivots (int32, `swaps` per matrix, contiguous): perm
  // (int64, `rows` per matrix, contiguous) starts as 0 .. rows - 1 and row i is swapped with row
  // pivots[i] - 1 in turn, so that A's row perm[i] is row i of L U. A pivot outside [1, rows]
  // is skipped (on a GPU the op's pivot check fails it only when it retires, after this ran).
  virtual absl::Status LuPermutation(const int32_t* pivots, int64_t batch, int64_t swaps,
                                     int64_t rows, int64_t* perm);
  // The Cholesky factor (lower, or upper) of every symmetric positive-definite matrix of `a`,
  // with the other triangle zeroed.
  virtual absl::Status Cholesky(const MatrixBatch& a, bool upper, const LinalgErrorSpec& spec);
  // Householder QR of every matrix of `a` (m x n, overwritten): r (k x n, k = r.rows) = the first
  // k rows of R, zero below the diagonal; q (m x q.cols, may have batch 0: not wanted) = the
  // first q.cols columns of Q.
  virtual absl::Status Qr(const MatrixBatch& a, const MatrixBatch& r, const MatrixBatch& q);
  // LAPACK's geqrf: every matrix of `a` overwritten by R (on and above the diagonal) and the
  // Householder reflectors (below), their scales into tau (min(m, n) per matrix, contiguous).
  virtual absl::Status Geqrf(const MatrixBatch& a, char* tau);
  // LAPACK's orgqr: q (m x n, n <= m) = the first n columns of the product of the k reflectors
  // (k = reflectors.cols <= n) held below the diagonal of `reflectors` (m x k), scaled by tau
  // (k per matrix, contiguous).
  virtual absl::Status HouseholderProduct(const MatrixBatch& reflectors, const char* tau,
                                          const MatrixBatch& q);
  // Singular values of every matrix of `a` (m x n, overwritten) into s (min(m, n) per matrix,
  // descending, contiguous), and where u.batch > 0 the singular vectors: u (m x u.cols) and vh
  // (vh.rows x n), u.cols = vh.rows = m and n with full matrices, else min(m, n).
  virtual absl::Status Svd(const MatrixBatch& a, char* s, const MatrixBatch& u,
                           const MatrixBatch& vh, const LinalgErrorSpec& spec);
  // Eigenvalues (ascending, n per matrix, contiguous, into w) of every symmetric matrix of `a`,
  // read from its lower (or upper) triangle; with `vectors` a is overwritten by the eigenvectors
  // (one per column).
  virtual absl::Status Eigh(const MatrixBatch& a, char* w, bool upper, bool vectors,
                            const LinalgErrorSpec& spec);

  // Data-dependent: the planner waits for the inputs' writes, counts, allocates the result and
  // fills it, all at once (these return with the work done, on every device).
  // The number of elements of `self` that are not zero.
  virtual absl::StatusOr<int64_t> CountNonzero(const Tensor& self);
  // out (contiguous int64 [self.dim(), count]) = the indices of self's nonzero elements, one
  // column each, in row-major order.
  virtual absl::Status NonzeroIndices(const Tensor& self, const Tensor& out);
  // out (contiguous, 1-d) = self's elements where mask is true, in row-major order (self and
  // mask already broadcast to one shape).
  virtual absl::Status MaskedSelect(const Tensor& out, const Tensor& self, const Tensor& mask);
  // unique(sorted=False) in the order torch's CPU kernel gives, its hash set's: for the n
  // elements of `self` (contiguous, 1-d), values[0..runs) (self's dtype) = the distinct elements
  // in that order, and where defined, inverse[i] = element i's place among them and
  // counts[0..runs) = how often each occurs (both int64, contiguous; torch's map lookups give a
  // NaN, equal to nothing, place 0 and count 0). Returns runs. The CPU backend's alone: other
  // devices answer unique(sorted=False) sorted.
  virtual absl::StatusOr<int64_t> UniqueInHashOrder(const Tensor& self, const Tensor& values,
                                                    const Tensor& inverse, const Tensor& counts);

  // Occupies the device's queue for `ms` milliseconds (torch.cuda._sleep). The _sleep op holds a
  // CPU stream without a kernel instead (PlannedOp::hold); the CPU backend sleeps the caller.
  virtual absl::Status Sleep(int64_t ms) = 0;

 protected:
  // What the families with a default return: `kernel` is missing on this device.
  absl::Status Missing(absl::string_view kernel) const;
};

// The backend of `device`; FAILED_PRECONDITION when this build or machine has no such device.
// Inside a MetadataOnlyScope (meta_backend.h), the device's metadata-only backend.
absl::StatusOr<Backend*> BackendFor(Device device);

// Registers a backend for a device: the CPU's registers itself in every program that links the
// engine (cpu/cpu_backend.h); the CUDA backend does so when a GPU is present.
void RegisterBackend(Backend* backend);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_BACKEND_H_
