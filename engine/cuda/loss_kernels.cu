#include "engine/cuda/loss_kernels.h"

#include <algorithm>

namespace tensord::engine::cuda {
namespace {

__global__ void CtcOffsetsKernel(CtcLossCall c, int64_t* offsets, KernelError* slot) {
  CtcTargetOffsets(c, offsets, slot);
}

template <typename T>
__global__ void CtcAlphaKernel(CtcLossCall c, const int64_t* offsets, T* rows,
                               KernelError* slot) {
  const int64_t b = blockIdx.x;
  const int64_t offset = offsets[b];
  if (offset < 0) return;  // its lengths failed a check (reported): nothing safe to read
  const int64_t input_length = c.input_lengths[b], target_length = c.target_lengths[b];
  const int64_t* target = c.targets + offset;
  bool bad = false;
  for (int64_t i = threadIdx.x; i < target_length; i += blockDim.x) {
    const int64_t label = target[i];
    if (label < 0 || label >= c.classes) {
      bad = true;
      // The smallest position wins, as the CPU's in-order loop; CtcBadLabel reads its value.
      atomicMin(reinterpret_cast<unsigned long long*>(&slot->position),
                static_cast<unsigned long long>(offset + i));
      if (atomicCAS(&slot->code, 0, static_cast<int32_t>(KernelError::kCtc)) == 0) {
        slot->detail = kCtcLabelOutOfRange;
      }
      __threadfence_system();
    }
  }
  if (__syncthreads_or(bad)) return;
  T* out = reinterpret_cast<T*>(c.out);
  if (input_length == 0) {
    if (threadIdx.x == 0) {
      out[b] = CtcNegLogLikelihood<T>(nullptr, target_length, 0, c.zero_infinity);
    }
    return;
  }
  const T* lp = reinterpret_cast<const T*>(c.log_probs) + b * c.stride_b;
  const int64_t extended = 2 * target_length + 1;
  T* prev = rows + 2 * (2 * offset + b);  // CtcLaunch's layout
  T* cur = prev + extended;
  for (int64_t s = threadIdx.x; s < extended; s += blockDim.x) {
    prev[s] = s == 0   ? lp[c.stride_c * c.blank]
              : s == 1 ? lp[c.stride_c * target[0]]
                       : T(-INFINITY);
  }
  __syncthreads();
  for (int64_t t = 1; t < input_length; ++t) {
    const T* lp_t = lp + t * c.stride_t;
    for (int64_t s = threadIdx.x; s < extended; s += blockDim.x) {
      const T lp_s = lp_t[c.stride_c * CtcLabel(target, s, c.blank)];
      cur[s] = CtcAlpha(prev, s, target, c.blank, lp_s);
    }
    __syncthreads();
    T* swap = prev;
    prev = cur;
    cur = swap;
  }
  if (threadIdx.x == 0) {
    out[b] = CtcNegLogLikelihood(prev, target_length, input_length, c.zero_infinity);
  }
}

// The value and the classes of the first bad label, once every block has reported.
__global__ void CtcBadLabel(const int64_t* targets, int64_t classes, KernelError* slot) {
  if (slot->code == KernelError::kCtc && slot->detail == kCtcLabelOutOfRange) {
    slot->a = targets[slot->position];
    slot->b = classes;
    __threadfence_system();
  }
}

}  // namespace

CtcLaunch ChooseCtcLaunch(const CtcLossCall& c) {
  CtcLaunch how;
  const int64_t item = c.dtype == DType::kFloat64 ? 8 : 4;
  const int64_t labels = c.concatenated ? c.width : c.batch * c.width;  // the targets' numel
  // the longest extended target, up to a block's 256 threads (a padded width may be anything
  // when the batch is empty)
  const int64_t longest = c.width >= 128 ? 256 : 2 * c.width + 1;
  how.threads = static_cast<int>((longest + 31) / 32 * 32);
  how.offsets_bytes = (c.batch * 8 + 255) / 256 * 256;
  how.scratch_bytes = std::max<int64_t>(how.offsets_bytes + 2 * (2 * labels + c.batch) * item, 256);
  return how;
}

cudaError_t LaunchCtcLoss(const CtcLossCall& c, const CtcLaunch& how, void* scratch,
                          KernelError* slot, cudaStream_t stream) {
  auto* offsets = static_cast<int64_t*>(scratch);
  void* rows = static_cast<char*>(scratch) + how.offsets_bytes;
  CtcOffsetsKernel<<<1, 1, 0, stream>>>(c, offsets, slot);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess || c.batch == 0) return e;
  const auto blocks = static_cast<unsigned>(c.batch);  // batch <= 2^31 - 1: checked by the caller
  if (c.dtype == DType::kFloat64) {
    CtcAlphaKernel<double><<<blocks, how.threads, 0, stream>>>(c, offsets,
                                                              static_cast<double*>(rows), slot);
  } else {
    CtcAlphaKernel<float><<<blocks, how.threads, 0, stream>>>(c, offsets,
                                                             static_cast<float*>(rows), slot);
  }
  e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  CtcBadLabel<<<1, 1, 0, stream>>>(c.targets, c.classes, slot);
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda
