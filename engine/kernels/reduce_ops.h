// The reductions every backend runs, and how a planner describes one: which elements each
// output reduces (kernels/ is device-neutral; the loops are in cpu/ and cuda/).
#ifndef TENSORD_ENGINE_KERNELS_REDUCE_OPS_H_
#define TENSORD_ENGINE_KERNELS_REDUCE_OPS_H_

#include "engine/core/host_device.h"
#include "engine/kernels/element_math.h"
#include "engine/tensor/tensor_meta.h"

namespace tensord::engine {

enum class ReduceOp {
  kSum, kProd, kMean, kAmax, kAmin, kArgmax, kArgmin, kAll, kAny, kVar, kStd, kNorm, kLogsumexp,
  kCountNonzero,
};

// How a scatter combines a source element with the element it lands on: scatter_ assigns,
// scatter_add_ adds, scatter_reduce_ also multiplies or keeps the larger or smaller (a NaN on
// either side wins, as torch's).
enum class ScatterMode { kAssign, kAdd, kMultiply, kMax, kMin };

template <typename C>
TENSORD_HD inline C ScatterCombine(ScatterMode mode, C old, C v) {
  switch (mode) {
    case ScatterMode::kAssign: return v;
    case ScatterMode::kAdd:
      if constexpr (std::is_same_v<C, bool>) return old || v;
      else return WrapAdd(old, v);
    case ScatterMode::kMultiply:
      if constexpr (std::is_same_v<C, bool>) return old && v;
      else return WrapMul(old, v);
    case ScatterMode::kMax: return v != v ? v : (old < v ? v : old);
    case ScatterMode::kMin: return v != v ? v : (v < old ? v : old);
  }
  return v;
}

// The scans along one dim: cumsum, cumprod and logcumsumexp.
enum class ScanOp { kSum, kProd, kLogSumExp };

// The index spaces of a reduction: outputs over the kept dims, each reducing the elements over
// the reduced dims (logical order, so arg-reductions report row-major positions). Strides are
// the input's, in elements.
struct ReduceGeometry {
  DimVector kept_sizes, kept_strides;
  DimVector red_sizes, red_strides;
};

struct ReduceArgs {
  double correction = 1;  // var/std
  double p = 2;           // norm
};

// layer_norm over `rows` contiguous rows of `n` elements of `dtype` (a floating type):
// out = (x - mean) / sqrt(var + eps) * weight + bias, var biased, accumulated in float32 for
// the 16-bit types; weight and bias (n contiguous elements each) may be null.
struct LayerNormCall {
  const char* x = nullptr;
  char* out = nullptr;
  const char* weight = nullptr;
  const char* bias = nullptr;
  DType dtype = DType::kFloat32;
  int64_t rows = 0;
  int64_t n = 0;
  double eps = 1e-5;
};

// out = x * scale[p % channels] + shift[p % channels] over `planes` contiguous planes p of
// `plane` elements each (x and out contiguous, of `dtype`; scale and shift contiguous, of
// Calc<dtype>: float32 for the 16-bit types): the last pass of batch_norm (planes N * C,
// channels C) and the like.
struct ChannelAffineCall {
  const char* x = nullptr;
  char* out = nullptr;
  const char* scale = nullptr;
  const char* shift = nullptr;
  DType dtype = DType::kFloat32;
  int64_t planes = 0, plane = 0, channels = 1;
};

// cross_entropy (log_softmax over the classes, then nll_loss) or nll_loss alone (`log_probs`:
// the input holds log-probabilities). `input` is contiguous (outer, classes, inner), its class
// dim the middle one; `weight` the classes' contiguous weights or null. The targets are either
// `target`, the contiguous int64 (outer, inner) class indices, or `probs`, class probabilities
// laid out as `input` (then `target` is null). With logp = log_softmax(input)[p, :] and weights
// w (all 1 without `weight`), position p contributes
//   indices:       nll(p) = -w[t] * logp[t],  smooth(p) = -sum_c w[c] * logp[c],
//                  loss(p) = (1 - label_smoothing) * nll(p) + label_smoothing / classes * smooth(p)
//                  (0 and no weight when t is ignore_index);
//   probabilities: loss(p) = -sum_c w[c] * q[c] * logp[c], q = probs * (1 - label_smoothing) +
//                  label_smoothing / classes.
// kNone writes loss(p) to `out` (outer*inner elements of `dtype`); kSum their sum; kMean the
// sum over the sum of the positions' w[t] (torch's weighted mean: NaN when every target is
// ignored), or over the number of positions for probabilities. Accumulated in float32 for the
// 16-bit types (float64 across positions). A target outside [0, classes) that is not
// ignore_index is an IndexError ("Target 7 is out of bounds."): the first in row-major order.
enum class LossReduction { kNone = 0, kMean = 1, kSum = 2 };

struct CrossEntropyCall {
  const char* input = nullptr;
  const int64_t* target = nullptr;
  const char* probs = nullptr;  // class probabilities as targets (null when empty: has_probs)
  bool has_probs = false;
  const char* weight = nullptr;
  char* out = nullptr;
  DType dtype = DType::kFloat32;
  int64_t outer = 0, classes = 0, inner = 1;
  bool log_probs = false;
  LossReduction reduction = LossReduction::kMean;
  int64_t ignore_index = -100;
  double label_smoothing = 0;
};

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_REDUCE_OPS_H_
