#include "engine/cpu/loss_kernels.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/cpu/vec_math.h"
#include "engine/runtime/thread_pool.h"

namespace tensord::engine::cpu {
namespace {

// One element's buffers, reused across the elements of a task: the extended target's labels
// (as offsets into a row of log_probs), which s may take alpha(s - 2), two alpha rows with two
// leading -inf entries (so that s - 1 and s - 2 need no test) and the row's log-probabilities.
template <typename T>
struct CtcRows {
  std::vector<int64_t> label_at;
  std::vector<uint8_t> skip_ok;
  std::vector<T> rows;
  std::vector<T> lp;
};

// float32: the same sum over every s at once on vectorized exp and log (cpu/vec_math.h, within
// an ulp or two of libm's; the alphas' own rounding, at their magnitude, is far larger). A term
// below e^-87 (next to the max's 1) is taken as 0 without computing it: its subnormal
// intermediates would cost a microcode assist each, and it cannot change the sum.
[[gnu::always_inline]] inline float SmallExp(float x) {
  constexpr float kSmallest = -87.0f;
  const float e = VecExp(x < kSmallest ? kSmallest : x);
  return x < kSmallest ? 0.0f : e;
}

TENSORD_AVX2_CLONE
void FloatRow(const float* __restrict__ prev, const uint8_t* __restrict__ skip_ok,
              const float* __restrict__ lp, int64_t n, float* __restrict__ cur) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t s = 0; s < n; ++s) {
    const float a1 = prev[s + 2], a2 = prev[s + 1], a3 = skip_ok[s] ? prev[s] : kNegInf;
    // torch's max (a NaN a1 stays the max), 0 when no path reaches s: then the sum is 0 and
    // log(0) + lp is -inf, or NaN for a NaN or +inf lp, as torch's
    float m = a2 > a1 ? a2 : a1;
    m = a3 > m ? a3 : m;
    m = m == kNegInf ? 0.0f : m;
    const float sum = SmallExp(a1 - m) + SmallExp(a2 - m) + SmallExp(a3 - m);
    cur[s + 2] = VecLog(sum) + m + lp[s];
  }
}

template <typename T>
T CtcElement(const CtcLossCall& c, int64_t b, int64_t offset, CtcRows<T>& w) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  const T* lp = reinterpret_cast<const T*>(c.log_probs) + b * c.stride_b;
  const int64_t input_length = c.input_lengths[b], target_length = c.target_lengths[b];
  if (input_length == 0) {
    return CtcNegLogLikelihood<T>(nullptr, target_length, 0, c.zero_infinity);
  }
  const int64_t n = 2 * target_length + 1;
  const int64_t* target = c.targets + offset;
  w.label_at.resize(static_cast<size_t>(n));
  w.skip_ok.resize(static_cast<size_t>(n));
  for (int64_t s = 0; s < n; ++s) {
    w.label_at[s] = c.stride_c * CtcLabel(target, s, c.blank);
    w.skip_ok[s] = s > 1 && CtcLabel(target, s - 2, c.blank) != CtcLabel(target, s, c.blank);
  }
  w.rows.assign(static_cast<size_t>(2 * (n + 2)), kNegInf);
  w.lp.resize(static_cast<size_t>(n));
  T* prev = w.rows.data();
  T* cur = prev + n + 2;
  prev[2] = lp[c.stride_c * c.blank];
  if (target_length > 0) prev[3] = lp[w.label_at[1]];
  for (int64_t t = 1; t < input_length; ++t) {
    const T* lp_t = lp + t * c.stride_t;
    for (int64_t s = 0; s < n; ++s) w.lp[s] = lp_t[w.label_at[s]];  // a gather
    if constexpr (std::is_same_v<T, float>) {
      FloatRow(prev, w.skip_ok.data(), w.lp.data(), n, cur);
    } else {
      // float64: torch's loop itself (the shared recursion, std::exp and std::log)
      for (int64_t s = 0; s < n; ++s) {
        cur[s + 2] = CtcAlpha(prev + 2, s, target, c.blank, w.lp[s]);
      }
    }
    std::swap(prev, cur);
  }
  return CtcNegLogLikelihood(prev + 2, target_length, input_length, c.zero_infinity);
}

template <typename T>
void CtcLossOf(const CtcLossCall& c, const std::vector<int64_t>& offsets) {
  T* out = reinterpret_cast<T*>(c.out);
  ParallelFor(0, c.batch, 1, [&](int64_t b0, int64_t b1) {
    CtcRows<T> work;
    for (int64_t b = b0; b < b1; ++b) out[b] = CtcElement<T>(c, b, offsets[b], work);
  });
}

}  // namespace

absl::Status CtcLoss(const CtcLossCall& c) {
  std::vector<int64_t> offsets(static_cast<size_t>(c.batch));
  KernelError error;
  CtcTargetOffsets(c, offsets.data(), &error);
  // Every label read must name a class: the first bad one in order fails the op.
  for (int64_t b = 0; b < c.batch && error.code == KernelError::kNone; ++b) {
    for (int64_t i = 0; i < c.target_lengths[b]; ++i) {
      const int64_t label = c.targets[offsets[b] + i];
      if (label < 0 || label >= c.classes) {
        ReportKernelError(&error, KernelError::kCtc, label, c.classes, kCtcLabelOutOfRange);
        break;
      }
    }
  }
  if (error.code != KernelError::kNone) return CtcLossFailure(error, "ctc_loss_cpu");
  if (c.dtype == DType::kFloat64) {
    CtcLossOf<double>(c, offsets);
  } else {
    CtcLossOf<float>(c, offsets);
  }
  return absl::OkStatus();
}

}  // namespace tensord::engine::cpu
