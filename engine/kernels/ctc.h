// Connectionist temporal classification (torch.nn.functional.ctc_loss): what the planner
// (engine/ops/loss_ops.cc) hands a backend's CtcLoss kernel, the checks of the lengths and
// labels that only the data can fail, and the forward (alpha) recursion in log space — written
// once, run by the CPU loop and the CUDA kernel alike.
//
// For batch element b with input length L_in and target length L, the extended target l' is
// (blank, l_1, blank, l_2, ..., l_L, blank), 2L + 1 labels. alpha_0(0) = lp_0(blank),
// alpha_0(1) = lp_0(l_1), and for t >= 1
//   alpha_t(s) = logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) where l'_s !=
//                l'_{s-2}) + lp_t(l'_s);
// the loss is -logsumexp(alpha_{L_in-1}(2L), alpha_{L_in-1}(2L-1)): torch's ctc_loss_cpu
// step for step, in the input's dtype. An input length of 0 gives 0 for an empty target and
// infinity otherwise (torch 1.13 reads memory it never wrote there).
#ifndef TENSORD_ENGINE_KERNELS_CTC_H_
#define TENSORD_ENGINE_KERNELS_CTC_H_

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/core/dtype.h"
#include "engine/core/errors.h"
#include "engine/core/host_device.h"
#include "engine/kernels/kernel_error.h"

namespace tensord::engine {

// log_probs is read through its strides (elements); targets and both lengths are contiguous
// int64. Padded targets are a (batch, width) matrix, concatenated ones one row of `width`
// labels holding every element's target after the previous one's. `out` is the contiguous
// (batch) negative log-likelihoods in log_probs' dtype (float32 or float64).
struct CtcLossCall {
  const char* log_probs = nullptr;
  DType dtype = DType::kFloat32;
  int64_t time = 0, batch = 0, classes = 0;
  int64_t stride_t = 0, stride_b = 0, stride_c = 0;
  const int64_t* targets = nullptr;
  bool concatenated = false;
  int64_t width = 0;  // padded: labels per row; concatenated: all labels
  const int64_t* input_lengths = nullptr;
  const int64_t* target_lengths = nullptr;
  int64_t blank = 0;
  bool zero_infinity = false;
  char* out = nullptr;
};

// KernelError::detail of a kCtc error: which check failed (a and b: the values it names).
enum CtcFailure : int32_t {
  kCtcInputLengthTooLong = 1,   // a = the first too long, b = the time steps
  kCtcNegativeInputLength = 2,  // a = the length
  kCtcNegativeTargetLength = 3, // a = the length
  kCtcTargetsTooShort = 4,      // padded: a = the longest target length, b = the width
  kCtcTargetsSizeMismatch = 5,  // concatenated: a = the lengths' sum, b = the labels given
  kCtcLabelOutOfRange = 6,      // a = the label, b = the classes
  kCtcNoTimeSteps = 7,          // log_probs has no time steps (and every length passed)
};

// Where each batch element's target starts in `targets` (offsets[b]; -1 where its lengths are
// bad), after torch's checks of the lengths in torch's order: target lengths (their sum against
// a concatenated target's size, their maximum against a padded target's width), then input
// lengths against the time steps, then the time steps themselves. The first failure goes to
// `error`; elements whose own lengths
// are fine keep their offsets, so a kernel that runs anyway never reads out of bounds. One
// thread: batch sizes are small, and the sum is sequential.
TENSORD_HD inline void CtcTargetOffsets(const CtcLossCall& c, int64_t* offsets,
                                        KernelError* error) {
  int64_t pos = 0, longest = 0;
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t length = c.target_lengths[b];
    if (length < 0) {
      ReportKernelError(error, KernelError::kCtc, length, 0, kCtcNegativeTargetLength);
      offsets[b] = -1;
      continue;
    }
    if (length > longest) longest = length;
    if (c.concatenated) {
      // pos <= width + 1: past the end it stays at width + 1, so nothing overflows.
      const bool fits = length <= c.width - pos;
      offsets[b] = fits ? pos : -1;
      pos = fits ? pos + length : c.width + 1;
    } else {
      offsets[b] = length <= c.width ? b * c.width : -1;
    }
  }
  if (c.concatenated) {
    if (pos != c.width) {
      int64_t sum = 0;  // the exact sum for the message (saturating)
      for (int64_t b = 0; b < c.batch; ++b) {
        const int64_t length = c.target_lengths[b];
        if (length > 0) sum = length > INT64_MAX - sum ? INT64_MAX : sum + length;
      }
      ReportKernelError(error, KernelError::kCtc, sum, c.width, kCtcTargetsSizeMismatch);
    }
  } else if (longest > c.width) {
    ReportKernelError(error, KernelError::kCtc, longest, c.width, kCtcTargetsTooShort);
  }
  for (int64_t b = 0; b < c.batch; ++b) {  // torch names the first bad one
    const int64_t length = c.input_lengths[b];
    if (length < 0 || length > c.time) {
      ReportKernelError(error, KernelError::kCtc, length, c.time,
                        length < 0 ? kCtcNegativeInputLength : kCtcInputLengthTooLong);
      offsets[b] = -1;
    }
  }
  // torch's table of alphas starts with a row it cannot narrow to when there is no time step
  if (c.time == 0) ReportKernelError(error, KernelError::kCtc, 0, 0, kCtcNoTimeSteps);
}

// Label s of element b's extended target (the blank at even s); `target` is its first label.
TENSORD_HD inline int64_t CtcLabel(const int64_t* target, int64_t s, int64_t blank) {
  return s % 2 == 0 ? blank : target[s / 2];
}

// log(exp(a) + exp(b) + exp(c)) as torch's loop computes it (its max, 0 when all are -inf).
template <typename T>
TENSORD_HD inline T CtcLogSumExp3(T a, T b, T c) {
  T m = b > a ? b : a;  // a NaN a stays the max, as in torch's loop
  m = c > m ? c : m;
  if (m == -INFINITY) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

// alpha_t(s) from the previous row `prev` (2L + 1 entries) and lp_t(l'_s) (`lp`).
template <typename T>
TENSORD_HD inline T CtcAlpha(const T* prev, int64_t s, const int64_t* target, int64_t blank,
                             T lp) {
  const T a1 = prev[s];
  const T a2 = s > 0 ? prev[s - 1] : T(-INFINITY);
  const T a3 = s > 1 && CtcLabel(target, s - 2, blank) != CtcLabel(target, s, blank)
                   ? prev[s - 2]
                   : T(-INFINITY);
  return CtcLogSumExp3(a1, a2, a3) + lp;
}

// The negative log-likelihood from the last row (`zero_infinity`: +inf becomes 0).
template <typename T>
TENSORD_HD inline T CtcNegLogLikelihood(const T* last, int64_t target_length, int64_t input_length,
                            bool zero_infinity) {
  T nll;
  if (input_length == 0) {
    nll = target_length == 0 ? -T(0) : T(INFINITY);
  } else {
    const T l1 = last[2 * target_length];
    const T l2 = target_length > 0 ? last[2 * target_length - 1] : T(-INFINITY);
    T m = l1 > l2 ? l1 : l2;
    if (m == -INFINITY) m = 0;
    nll = -(std::log(std::exp(l1 - m) + std::exp(l2 - m)) + m);
  }
  return zero_infinity && nll == T(INFINITY) ? T(0) : nll;
}

// The error of a kCtc KernelError, in torch's words; `kernel` is "ctc_loss_cpu" or
// "ctc_loss_gpu" (torch's CheckedFrom).
inline absl::Status CtcLossFailure(const KernelError& e, absl::string_view kernel) {
  const std::string from = absl::StrCat(" (while checking arguments for ", kernel, ")");
  switch (e.detail) {
    case kCtcInputLengthTooLong:
      return RuntimeError("ctc_loss", absl::StrCat("Expected input_lengths to have value at most ",
                                                   e.b, ", but got value ", e.a, from));
    case kCtcNegativeInputLength:
      return RuntimeError("ctc_loss", absl::StrCat("Expected input_lengths to have value at "
                                                   "least 0, but got value ", e.a, from));
    case kCtcNegativeTargetLength:
      return RuntimeError("ctc_loss", absl::StrCat("Expected target_lengths to have value at "
                                                   "least 0, but got value ", e.a, from));
    case kCtcTargetsTooShort:
      return RuntimeError("ctc_loss", absl::StrCat("Expected tensor to have size at least ", e.a,
                                                   " at dimension 1, but got size ", e.b,
                                                   " for argument #2 'targets'", from));
    case kCtcTargetsSizeMismatch:
      return RuntimeError("ctc_loss", absl::StrCat("Expected tensor to have size ", e.a,
                                                   " at dimension 0, but got size ", e.b,
                                                   " for argument #2 'targets'", from));
    case kCtcNoTimeSteps:
      return RuntimeError("ctc_loss", "start (0) + length (1) exceeds dimension size (0).");
    case kCtcLabelOutOfRange:
    default:
      return RuntimeError("ctc_loss", absl::StrCat("Expected targets to have values in [0, ", e.b,
                                                   "), but got value ", e.a, from));
  }
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_CTC_H_
