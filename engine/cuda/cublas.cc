#include "engine/cuda/cublas.h"

#include <cublas_v2.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "engine/core/dtype.h"
#include "engine/cuda/gemm_plan.h"
#include "engine/cuda/toolkit_library.h"

namespace tensord::engine::cuda {
namespace {

// The cuBLAS entry points tensord uses, from the toolkit's shared library.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasGemmStridedBatchedEx_64) gemm = nullptr;
  std::string error;  // why it could not be loaded
};

const CublasApi& Api() {
  static const CublasApi* api = [] {
    auto* a = new CublasApi();
    void* lib = OpenToolkitLibrary("libcublas.so.13", "cuBLAS", &a->error);
    if (lib == nullptr) return a;
    const auto load = [&](auto& fn, const char* symbol) {
      LoadSymbol(lib, symbol, "cuBLAS", fn, &a->error);
    };
    load(a->create, "cublasCreate_v2");
    load(a->destroy, "cublasDestroy_v2");
    load(a->set_stream, "cublasSetStream_v2");
    load(a->set_math_mode, "cublasSetMathMode");
    load(a->gemm, "cublasGemmStridedBatchedEx_64");
    return a;
  }();
  return *api;
}

// Makes `*slot` a handle (once).
absl::Status EnsureHandle(const CublasApi& api, Device device, void*& slot) {
  if (slot != nullptr) return absl::OkStatus();
  cublasHandle_t h = nullptr;
  const cublasStatus_t s = api.create(&h);
  if (s != CUBLAS_STATUS_SUCCESS) {
    return s == CUBLAS_STATUS_ALLOC_FAILED
               ? absl::ResourceExhaustedError(absl::StrCat(
                     "matmul: CUDA out of memory on ", device.ToString(),
                     " (creating a cuBLAS handle)"))
               : absl::InternalError(absl::StrCat("matmul: cublasCreate on ", device.ToString(),
                                                  " failed (status ", static_cast<int>(s), ")"));
  }
  // float32 products in float32 arithmetic, as torch's default (no TF32 tensor cores).
  (void)api.set_math_mode(h, CUBLAS_DEFAULT_MATH);
  slot = h;
  return absl::OkStatus();
}

}  // namespace

void DestroyCublasHandle(void* handle) {
  if (handle != nullptr && Api().destroy != nullptr) {
    (void)Api().destroy(static_cast<cublasHandle_t>(handle));
  }
}

absl::Status CublasMatmul(Device device, cudaStream_t stream, void*& handle_slot,
                          const MatmulCall& call) {
  const CublasApi& api = Api();
  if (!api.error.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("matmul on ", device.ToString(), ": ", api.error));
  }
  cudaDataType type;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (call.a.dtype) {
    case DType::kFloat16: type = CUDA_R_16F; break;
    case DType::kBFloat16: type = CUDA_R_16BF; break;
    case DType::kFloat32: type = CUDA_R_32F; break;
    case DType::kFloat64: type = CUDA_R_64F, compute = CUBLAS_COMPUTE_64F; break;
    default:
      return absl::InternalError(absl::StrCat("matmul: no cuBLAS product for ",
                                              DTypeName(call.a.dtype)));
  }
  if (absl::Status made = EnsureHandle(api, device, handle_slot); !made.ok()) return made;
  const cublasHandle_t handle = static_cast<cublasHandle_t>(handle_slot);
  if (api.set_stream(handle, stream) != CUBLAS_STATUS_SUCCESS) {
    return absl::InternalError("matmul: cublasSetStream failed");
  }
  const std::vector<GemmCall> calls =
      PlanGemmCalls(call.batch, call.n, call.k, call.m, call.a.strides, call.b.strides);
  if (calls.empty()) return absl::InternalError("matmul: operand layout not usable");
  const int64_t item = ItemSize(call.a.dtype);
  const float alpha32 = static_cast<float>(call.alpha), beta32 = static_cast<float>(call.beta);
  const bool f64 = compute == CUBLAS_COMPUTE_64F;
  const void* alpha = f64 ? static_cast<const void*>(&call.alpha) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&call.beta) : &beta32;
  for (const GemmCall& g : calls) {
    const cublasStatus_t s = api.gemm(
        handle, g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
        g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k, alpha,
        call.b.data + g.a_offset * item, type, g.lda, g.stride_a, call.a.data + g.b_offset * item,
        type, g.ldb, g.stride_b, beta, call.out + g.c_offset * item, type, g.ldc, g.stride_c,
        g.count, compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) {
      if (s == CUBLAS_STATUS_ALLOC_FAILED) {
        return absl::ResourceExhaustedError(
            absl::StrCat("matmul: CUDA out of memory on ", device.ToString()));
      }
      return absl::InternalError(absl::StrCat("matmul on ", device.ToString(),
                                              ": cublasGemmStridedBatchedEx failed (status ",
                                              static_cast<int>(s), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace tensord::engine::cuda
