#include "engine/cuda/solver.h"

#include <cusolverDn.h>

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/core/dtype.h"
#include "engine/core/status_macros.h"
#include "engine/cuda/toolkit_library.h"

namespace tensord::engine::cuda {
namespace {

// The float (S) or double (D) forms of the routines used here.
template <typename T>
struct Routines {
  cusolverStatus_t (*getrf_size)(cusolverDnHandle_t, int, int, T*, int, int*) = nullptr;
  cusolverStatus_t (*getrf)(cusolverDnHandle_t, int, int, T*, int, T*, int*, int*) = nullptr;
  cusolverStatus_t (*getrs)(cusolverDnHandle_t, cublasOperation_t, int, int, const T*, int,
                            const int*, T*, int, int*) = nullptr;
  cusolverStatus_t (*potrf_size)(cusolverDnHandle_t, cublasFillMode_t, int, T*, int,
                                 int*) = nullptr;
  cusolverStatus_t (*potrf)(cusolverDnHandle_t, cublasFillMode_t, int, T*, int, T*, int,
                            int*) = nullptr;
  cusolverStatus_t (*geqrf_size)(cusolverDnHandle_t, int, int, T*, int, int*) = nullptr;
  cusolverStatus_t (*geqrf)(cusolverDnHandle_t, int, int, T*, int, T*, T*, int, int*) = nullptr;
  cusolverStatus_t (*orgqr_size)(cusolverDnHandle_t, int, int, int, const T*, int, const T*,
                                 int*) = nullptr;
  cusolverStatus_t (*orgqr)(cusolverDnHandle_t, int, int, int, T*, int, const T*, T*, int,
                            int*) = nullptr;
  cusolverStatus_t (*gesvdj_size)(cusolverDnHandle_t, cusolverEigMode_t, int, int, int,
                                  const T*, int, const T*, const T*, int, const T*, int, int*,
                                  gesvdjInfo_t) = nullptr;
  cusolverStatus_t (*gesvdj)(cusolverDnHandle_t, cusolverEigMode_t, int, int, int, T*, int, T*,
                             T*, int, T*, int, T*, int, int*, gesvdjInfo_t) = nullptr;
  cusolverStatus_t (*syevd_size)(cusolverDnHandle_t, cusolverEigMode_t, cublasFillMode_t, int,
                                 const T*, int, const T*, int*) = nullptr;
  cusolverStatus_t (*syevd)(cusolverDnHandle_t, cusolverEigMode_t, cublasFillMode_t, int, T*,
                            int, T*, T*, int, int*) = nullptr;
};

struct SolverApi {
  cusolverStatus_t (*create)(cusolverDnHandle_t*) = nullptr;
  cusolverStatus_t (*destroy)(cusolverDnHandle_t) = nullptr;
  cusolverStatus_t (*set_stream)(cusolverDnHandle_t, cudaStream_t) = nullptr;
  cusolverStatus_t (*create_gesvdj_info)(gesvdjInfo_t*) = nullptr;
  cusolverStatus_t (*destroy_gesvdj_info)(gesvdjInfo_t) = nullptr;
  Routines<float> s;
  Routines<double> d;
  std::string error;  // why it could not be loaded

  template <typename T>
  const Routines<T>& For() const {
    if constexpr (std::is_same_v<T, float>) {
      return s;
    } else {
      return d;
    }
  }
};

template <typename T>
void LoadRoutines(void* lib, const char* p, Routines<T>& r, std::string& error) {
  const auto load = [&](auto& fn, const char* name) {
    const std::string symbol = absl::StrCat("cusolverDn", p, name);
    LoadSymbol(lib, symbol.c_str(), "cuSOLVER", fn, &error);
  };
  load(r.getrf_size, "getrf_bufferSize");
  load(r.getrf, "getrf");
  load(r.getrs, "getrs");
  load(r.potrf_size, "potrf_bufferSize");
  load(r.potrf, "potrf");
  load(r.geqrf_size, "geqrf_bufferSize");
  load(r.geqrf, "geqrf");
  load(r.orgqr_size, "orgqr_bufferSize");
  load(r.orgqr, "orgqr");
  load(r.gesvdj_size, "gesvdj_bufferSize");
  load(r.gesvdj, "gesvdj");
  load(r.syevd_size, "syevd_bufferSize");
  load(r.syevd, "syevd");
}

const SolverApi& Api() {
  static const SolverApi* api = [] {
    auto* a = new SolverApi();
    void* lib = OpenToolkitLibrary("libcusolver.so.12", "cuSOLVER", &a->error);
    if (lib == nullptr) return a;
    const auto load = [&](auto& fn, const char* symbol) {
      LoadSymbol(lib, symbol, "cuSOLVER", fn, &a->error);
    };
    load(a->create, "cusolverDnCreate");
    load(a->destroy, "cusolverDnDestroy");
    load(a->set_stream, "cusolverDnSetStream");
    load(a->create_gesvdj_info, "cusolverDnCreateGesvdjInfo");
    load(a->destroy_gesvdj_info, "cusolverDnDestroyGesvdjInfo");
    LoadRoutines(lib, "S", a->s, a->error);
    LoadRoutines(lib, "D", a->d, a->error);
    return a;
  }();
  return *api;
}

absl::Status Failed(const char* what, const SolverCall& c, cusolverStatus_t s) {
  if (s == CUSOLVER_STATUS_ALLOC_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat(what, ": CUDA out of memory on ", c.device.ToString()));
  }
  return absl::InternalError(absl::StrCat(what, " on ", c.device.ToString(), ": cuSOLVER status ",
                                          static_cast<int>(s)));
}

#define TENSORD_SOLVER_TRY(what, call)                          \
  do {                                                          \
    const cusolverStatus_t solver_status_ = (call);             \
    if (solver_status_ != CUSOLVER_STATUS_SUCCESS) {            \
      return Failed(what, c, solver_status_);                   \
    }                                                           \
  } while (0)

// A stream's cuSOLVER state: its handle, and the Jacobi SVD's parameters (which the queued
// calls may still read after the call returns, so they live as long as the handle).
struct Handle {
  cusolverDnHandle_t solver = nullptr;
  gesvdjInfo_t svd_params = nullptr;
};

// The API and the stream's handle, bound to `c.stream`.
absl::StatusOr<Handle*> Bind(const char* what, const SolverCall& c) {
  const SolverApi& api = Api();
  if (!api.error.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " on ", c.device.ToString(), ": ", api.error));
  }
  if (c.handle == nullptr) {
    auto made = std::make_unique<Handle>();
    TENSORD_SOLVER_TRY(what, api.create(&made->solver));
    if (const cusolverStatus_t s = api.create_gesvdj_info(&made->svd_params);
        s != CUSOLVER_STATUS_SUCCESS) {
      (void)api.destroy(made->solver);
      return Failed(what, c, s);
    }
    c.handle = made.release();
  }
  auto* handle = static_cast<Handle*>(c.handle);
  TENSORD_SOLVER_TRY(what, api.set_stream(handle->solver, c.stream));
  return handle;
}

template <typename T>
T* Matrix(const MatrixBatch& m, int64_t b) {
  return reinterpret_cast<T*>(m.data) + b * m.rows * m.cols;
}

template <typename T>
absl::StatusOr<T*> Work(const SolverCall& c, int64_t lwork) {
  auto p = c.scratch(std::max<int64_t>(1, lwork) * static_cast<int64_t>(sizeof(T)));
  if (!p.ok()) return p.status();
  return static_cast<T*>(*p);
}

template <typename T>
absl::Status LuFactorT(const SolverCall& c, const MatrixBatch& a, int32_t* pivots) {
  const char* what = "lu_factor";
  TENSORD_ASSIGN_OR_RETURN(Handle * bound, Bind(what, c));
  cusolverDnHandle_t h = bound->solver;
  const Routines<T>& r = Api().For<T>();
  const int m = static_cast<int>(a.rows), n = static_cast<int>(a.cols);
  int lwork = 0;
  TENSORD_SOLVER_TRY(what, r.getrf_size(h, m, n, Matrix<T>(a, 0), m, &lwork));
  TENSORD_ASSIGN_OR_RETURN(T* work, Work<T>(c, lwork));
  const int64_t k = std::min(a.rows, a.cols);
  for (int64_t b = 0; b < a.batch; ++b) {
    TENSORD_SOLVER_TRY(what, r.getrf(h, m, n, Matrix<T>(a, b), m, work, pivots + b * k,
                                     c.infos + b));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status LuSolveT(const SolverCall& c, const MatrixBatch& lu, const int32_t* pivots,
                      bool transpose, const MatrixBatch& x) {
  const char* what = "lu_solve";
  TENSORD_ASSIGN_OR_RETURN(Handle * bound, Bind(what, c));
  cusolverDnHandle_t h = bound->solver;
  const Routines<T>& r = Api().For<T>();
  const int n = static_cast<int>(lu.rows);
  for (int64_t b = 0; b < lu.batch; ++b) {
    TENSORD_SOLVER_TRY(what, r.getrs(h, transpose ? CUBLAS_OP_T : CUBLAS_OP_N, n, static_cast<int>(x.cols),
                                     Matrix<T>(lu, b), n, pivots + b * lu.rows, Matrix<T>(x, b),
                                     static_cast<int>(x.rows), c.infos + b));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status CholeskyT(const SolverCall& c, const MatrixBatch& a, bool upper) {
  const char* what = "cholesky";
  TENSORD_ASSIGN_OR_RETURN(Handle * bound, Bind(what, c));
  cusolverDnHandle_t h = bound->solver;
  const Routines<T>& r = Api().For<T>();
  const int n = static_cast<int>(a.rows);
  const cublasFillMode_t fill = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  int lwork = 0;
  TENSORD_SOLVER_TRY(what, r.potrf_size(h, fill, n, Matrix<T>(a, 0), n, &lwork));
  TENSORD_ASSIGN_OR_RETURN(T* work, Work<T>(c, lwork));
  for (int64_t b = 0; b < a.batch; ++b) {
    TENSORD_SOLVER_TRY(what, r.potrf(h, fill, n, Matrix<T>(a, b), n, work, lwork, c.infos + b));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status QrT(const SolverCall& c, const MatrixBatch& a, char* tau_bytes) {
  const char* what = "qr";
  TENSORD_ASSIGN_OR_RETURN(Handle * bound, Bind(what, c));
  cusolverDnHandle_t h = bound->solver;
  const Routines<T>& r = Api().For<T>();
  const int m = static_cast<int>(a.rows), n = static_cast<int>(a.cols);
  const int k = std::min(m, n);
  T* tau = reinterpret_cast<T*>(tau_bytes);
  int lwork = 0;
  TENSORD_SOLVER_TRY(what, r.geqrf_size(h, m, n, Matrix<T>(a, 0), m, &lwork));
  TENSORD_ASSIGN_OR_RETURN(T* work, Work<T>(c, lwork));
  for (int64_t b = 0; b < a.batch; ++b) {
    TENSORD_SOLVER_TRY(what, r.geqrf(h, m, n, Matrix<T>(a, b), m, tau + b * k, work, lwork,
                                     c.infos + b));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status FormQT(const SolverCall& c, const MatrixBatch& a, const char* tau_bytes,
                    const MatrixBatch& q) {
  const char* what = "qr";
  TENSORD_ASSIGN_OR_RETURN(Handle * bound, Bind(what, c));
  cusolverDnHandle_t h = bound->solver;
  const Routines<T>& r = Api().For<T>();
  const int m = static_cast<int>(a.rows), n = static_cast<int>(a.cols);
  const int k = std::min(m, n);
  const T* tau = reinterpret_cast<const T*>(tau_bytes);
  // Q's first columns hold the reflectors (orgqr makes the columns past k unit vectors first).
  const size_t item = sizeof(T);
  const cudaError_t e = cudaMemcpy2DAsync(
      q.data, static_cast<size_t>(m) * q.cols * item, a.data, static_cast<size_t>(m) * n * item,
      static_cast<size_t>(m) * std::min<int64_t>(n, q.cols) * item, static_cast<size_t>(a.batch),
      cudaMemcpyDeviceToDevice, c.stream);
  if (e != cudaSuccess) {
    return absl::InternalError(absl::StrCat("qr: copy on ", c.device.ToString(), " failed: ",
                                            cudaGetErrorString(e)));
  }
  int lwork = 0;
  TENSORD_SOLVER_TRY(what, r.orgqr_size(h, m, static_cast<int>(q.cols), k, Matrix<T>(q, 0), m,
                                        tau, &lwork));
  TENSORD_ASSIGN_OR_RETURN(T* work, Work<T>(c, lwork));
  for (int64_t b = 0; b < a.batch; ++b) {
    TENSORD_SOLVER_TRY(what, r.orgqr(h, m, static_cast<int>(q.cols), k, Matrix<T>(q, b), m,
                                     tau + b * k, work, lwork, c.infos + b));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status SvdT(const SolverCall& c, const MatrixBatch& a, char* s_bytes, const MatrixBatch& u,
                  const MatrixBatch& v) {
  const char* what = "svd";
  TENSORD_ASSIGN_OR_RETURN(Handle * bound, Bind(what, c));
  cusolverDnHandle_t h = bound->solver;
  const Routines<T>& r = Api().For<T>();
  const int m = static_cast<int>(a.rows), n = static_cast<int>(a.cols);
  const int k = std::min(m, n);
  const bool vectors = u.batch > 0;
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  // Thin factors (U m x k, V n x k) unless either is asked for whole; singular values alone
  // still pass U and V of scratch, shared by the batch: gesvdj is not documented to leave null
  // ones unread, and torch passes allocated ones ("otherwise it fails"). The scratch is square
  // (m x m, n x n) up to 2048 rows, as torch's (whose small matrices take gesvdjBatched with
  // whole factors): whether economy mode uses only the thin part of a factor it does not
  // return is not documented either; thin beyond that, as torch's gesvdj of large matrices.
  const int econ = !vectors || (u.cols == k && v.cols == k) ? 1 : 0;
  T* s = reinterpret_cast<T*>(s_bytes);
  gesvdjInfo_t params = bound->svd_params;
  T* spare_u = nullptr;
  T* spare_v = nullptr;
  if (!vectors) {
    constexpr int kSquareSpare = 2048;
    TENSORD_ASSIGN_OR_RETURN(spare_u, Work<T>(c, int64_t{m} * (m <= kSquareSpare ? m : k)));
    TENSORD_ASSIGN_OR_RETURN(spare_v, Work<T>(c, int64_t{n} * (n <= kSquareSpare ? n : k)));
  }
  const auto u_of = [&](int64_t b) { return vectors ? Matrix<T>(u, b) : spare_u; };
  const auto v_of = [&](int64_t b) { return vectors ? Matrix<T>(v, b) : spare_v; };
  int lwork = 0;
  TENSORD_SOLVER_TRY(what, r.gesvdj_size(h, jobz, econ, m, n, Matrix<T>(a, 0), m, s, u_of(0), m,
                                         v_of(0), n, &lwork, params));
  TENSORD_ASSIGN_OR_RETURN(T* work, Work<T>(c, lwork));
  for (int64_t b = 0; b < a.batch; ++b) {
    TENSORD_SOLVER_TRY(what, r.gesvdj(h, jobz, econ, m, n, Matrix<T>(a, b), m, s + b * k, u_of(b),
                                      m, v_of(b), n, work, lwork, c.infos + b, params));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status EighT(const SolverCall& c, const MatrixBatch& a, char* w_bytes, bool upper,
                   bool vectors) {
  const char* what = "eigh";
  TENSORD_ASSIGN_OR_RETURN(Handle * bound, Bind(what, c));
  cusolverDnHandle_t h = bound->solver;
  const Routines<T>& r = Api().For<T>();
  const int n = static_cast<int>(a.rows);
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const cublasFillMode_t fill = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  T* w = reinterpret_cast<T*>(w_bytes);
  int lwork = 0;
  TENSORD_SOLVER_TRY(what, r.syevd_size(h, jobz, fill, n, Matrix<T>(a, 0), n, w, &lwork));
  TENSORD_ASSIGN_OR_RETURN(T* work, Work<T>(c, lwork));
  for (int64_t b = 0; b < a.batch; ++b) {
    TENSORD_SOLVER_TRY(what, r.syevd(h, jobz, fill, n, Matrix<T>(a, b), n, w + b * n, work, lwork,
                                     c.infos + b));
  }
  return absl::OkStatus();
}

template <typename F>
absl::Status ByDType(DType dtype, F f) {
  if (dtype == DType::kFloat64) return f(double{});
  return f(float{});
}

}  // namespace

absl::Status SolverLuFactor(const SolverCall& c, const MatrixBatch& a, int32_t* pivots) {
  return ByDType(a.dtype, [&](auto t) { return LuFactorT<decltype(t)>(c, a, pivots); });
}
absl::Status SolverLuSolve(const SolverCall& c, const MatrixBatch& lu, const int32_t* pivots,
                           bool transpose, const MatrixBatch& b) {
  return ByDType(lu.dtype,
                 [&](auto t) { return LuSolveT<decltype(t)>(c, lu, pivots, transpose, b); });
}
absl::Status SolverCholesky(const SolverCall& c, const MatrixBatch& a, bool upper) {
  return ByDType(a.dtype, [&](auto t) { return CholeskyT<decltype(t)>(c, a, upper); });
}
absl::Status SolverQr(const SolverCall& c, const MatrixBatch& a, char* tau) {
  return ByDType(a.dtype, [&](auto t) { return QrT<decltype(t)>(c, a, tau); });
}
absl::Status SolverFormQ(const SolverCall& c, const MatrixBatch& a, const char* tau,
                         const MatrixBatch& q) {
  return ByDType(a.dtype, [&](auto t) { return FormQT<decltype(t)>(c, a, tau, q); });
}
absl::Status SolverSvd(const SolverCall& c, const MatrixBatch& a, char* s, const MatrixBatch& u,
                       const MatrixBatch& v) {
  return ByDType(a.dtype, [&](auto t) { return SvdT<decltype(t)>(c, a, s, u, v); });
}
absl::Status SolverEigh(const SolverCall& c, const MatrixBatch& a, char* w, bool upper,
                        bool vectors) {
  return ByDType(a.dtype, [&](auto t) { return EighT<decltype(t)>(c, a, w, upper, vectors); });
}

void DestroySolverHandle(void* handle) {
  if (handle == nullptr) return;
  std::unique_ptr<Handle> owned(static_cast<Handle*>(handle));
  (void)Api().destroy_gesvdj_info(owned->svd_params);
  (void)Api().destroy(owned->solver);
}

}  // namespace tensord::engine::cuda
