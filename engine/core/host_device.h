// TENSORD_HD marks functions that CPU loops and CUDA kernels share (the per-element math, the
// element conversions, the reduced-float types): __host__ __device__ under nvcc, nothing else.
#ifndef TENSORD_ENGINE_CORE_HOST_DEVICE_H_
#define TENSORD_ENGINE_CORE_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define TENSORD_HD __host__ __device__
#else
#define TENSORD_HD
#endif

#endif  // TENSORD_ENGINE_CORE_HOST_DEVICE_H_
