// The CUDA backend on a real GPU: every data-movement kernel against the CPU backend on the same
// inputs (bit for bit, whole buffers compared so stray writes are caught), copies between
// devices, factories, device out-of-memory, transfers from 1 KiB to 1 GiB, and the allocator's
// bookkeeping. Reports SKIPPED without a GPU (gpu_test_main.cc).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

#include "engine/core/errors.h"
#include "engine/runtime/backend.h"
#include "engine/ops/copy_ops.h"
#include "engine/cpu/copy_kernel.h"
#include "engine/cuda/cuda_backend.h"
#include "engine/runtime/event.h"
#include "engine/runtime/executor.h"
#include "engine/ops/factory_ops.h"
#include "engine/runtime/memory_budget.h"
#include "engine/ops/op_registry.h"
#include "engine/core/status_macros.h"
#include "engine/runtime/stream.h"
#include "engine/views/view_ops.h"
#include "gtest/gtest.h"
#include "tests/engine/layout_test_util.h"

namespace tensord::engine {
namespace {

using testing_util::Buffer;
using testing_util::Layout;
using testing_util::RandomLayout;
using testing_util::V;

constexpr Device kGpu{DeviceType::kCUDA, 0};

Backend& Gpu() { return *BackendFor(kGpu).value(); }

// Device memory holding `host`'s bytes; freed at scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<char>& host)
      : nbytes_(static_cast<int64_t>(host.size())) {
    data_ = static_cast<char*>(Gpu().allocator().Allocate(nbytes_).value());
    EXPECT_TRUE(Gpu().CopyFromHost(data_, host.data(), nbytes_).ok());
  }
  ~DeviceBuffer() { Gpu().allocator().Deallocate(data_, nbytes_); }
  char* data() const { return data_; }
  std::vector<char> ToHost() const {
    std::vector<char> out(static_cast<size_t>(nbytes_));
    EXPECT_TRUE(Gpu().CopyToHost(out.data(), data_, nbytes_).ok());
    return out;
  }

 private:
  int64_t nbytes_;
  char* data_;
};

// Copies on the GPU and on the CPU over the same random layouts; the whole destination buffers
// must be identical.
void CheckCopy(std::mt19937& rng, const V& sizes, DType dst_dtype, DType src_dtype) {
  const Layout dl = RandomLayout(rng, sizes, /*allow_broadcast=*/false);
  const Layout sl = RandomLayout(rng, sizes, /*allow_broadcast=*/true);
  const std::vector<char> src = Buffer(rng, sl.buffer_numel, src_dtype);
  std::vector<char> expected = Buffer(rng, dl.buffer_numel, dst_dtype);
  DeviceBuffer dsrc(src), ddst(expected);
  const int64_t ds = ItemSize(dst_dtype), ss = ItemSize(src_dtype);
  cpu::CopyStrided(sizes, StridedRef{expected.data() + dl.offset * ds, dst_dtype, dl.strides},
                   StridedRef{const_cast<char*>(src.data()) + sl.offset * ss, src_dtype,
                              sl.strides});
  ASSERT_TRUE(Gpu().Copy(sizes, StridedRef{ddst.data() + dl.offset * ds, dst_dtype, dl.strides},
                         StridedRef{dsrc.data() + sl.offset * ss, src_dtype, sl.strides})
                  .ok());
  const std::vector<char> got = ddst.ToHost();
  ASSERT_EQ(std::memcmp(got.data(), expected.data(), got.size()), 0)
      << DTypeName(src_dtype) << " -> " << DTypeName(dst_dtype) << ", rank " << sizes.size();
}

TEST(CudaBackendTest, RandomLayoutsAllDTypePairsMatchTheCpuKernel) {
  std::mt19937 rng(2024);
  for (int round = 0; round < 2; ++round) {
    for (int a = 0; a < kNumDTypes; ++a) {
      for (int b = 0; b < kNumDTypes; ++b) {
        const int n = 1 + static_cast<int>(rng() % 5);
        V sizes(n);
        for (int64_t& s : sizes) s = 1 + static_cast<int64_t>(rng() % 13);
        CheckCopy(rng, sizes, static_cast<DType>(a), static_cast<DType>(b));
      }
    }
  }
}

TEST(CudaBackendTest, LargeCopiesMatchTheCpuKernel) {
  std::mt19937 rng(3);
  CheckCopy(rng, V{2048, 2049}, DType::kFloat32, DType::kFloat32);
  CheckCopy(rng, V{700, 900}, DType::kFloat64, DType::kFloat16);
  CheckCopy(rng, V{300, 4, 500}, DType::kInt32, DType::kBFloat16);
}

// A tensor's elements as host bytes, row-major.
std::vector<char> RowMajorBytes(const Tensor& t) {
  Tensor host = RunNowSingle(PlanTo(t, std::nullopt, kCpu)).value();
  Tensor rows = CloneContiguous(host).value();
  return std::vector<char>(rows.data(), rows.data() + rows.numel() * rows.itemsize());
}

void ExpectSameTensor(const Tensor& gpu, const Tensor& cpu) {
  EXPECT_EQ(gpu.device(), kGpu);
  EXPECT_EQ(cpu.device(), kCpu);
  EXPECT_EQ(gpu.dtype(), cpu.dtype());
  EXPECT_EQ(V(gpu.sizes().begin(), gpu.sizes().end()), V(cpu.sizes().begin(), cpu.sizes().end()));
  EXPECT_EQ(V(gpu.strides().begin(), gpu.strides().end()),
            V(cpu.strides().begin(), cpu.strides().end()));
  EXPECT_EQ(RowMajorBytes(gpu), RowMajorBytes(cpu));
}

TEST(CudaBackendTest, FactoriesMatchTheCpu) {
  const V sizes = {5, 7};
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    SCOPED_TRACE(DTypeName(dtype));
    for (const Scalar& v : {Scalar(int64_t{3}), Scalar(true), Scalar(int64_t{0})}) {
      ExpectSameTensor(Full(sizes, v, dtype, kGpu).value(), Full(sizes, v, dtype, kCpu).value());
    }
    if (IsFloating(dtype)) {
      ExpectSameTensor(Full(sizes, Scalar(-2.75), dtype, kGpu).value(),
                       Full(sizes, Scalar(-2.75), dtype, kCpu).value());
      ExpectSameTensor(Arange(Scalar(-3.0), Scalar(9.5), Scalar(0.25), dtype, kGpu).value(),
                       Arange(Scalar(-3.0), Scalar(9.5), Scalar(0.25), dtype, kCpu).value());
    } else if (dtype != DType::kBool) {
      ExpectSameTensor(Arange(Scalar(int64_t{2}), Scalar(int64_t{100}), Scalar(int64_t{3}), dtype,
                              kGpu)
                           .value(),
                       Arange(Scalar(int64_t{2}), Scalar(int64_t{100}), Scalar(int64_t{3}), dtype,
                              kCpu)
                           .value());
    }
    // empty_strided zeroes the whole storage, gaps included.
    const V strided = {3, 1};
    Tensor g = EmptyStrided(V{2, 3}, strided, dtype, kGpu).value();
    Tensor c = EmptyStrided(V{2, 3}, strided, dtype, kCpu).value();
    ExpectSameTensor(g, c);
  }
}

TEST(CudaBackendTest, ViewsCopiesAndConversionsAcrossDevices) {
  Tensor cpu = Arange(Scalar(int64_t{-30}), Scalar(int64_t{30}), Scalar(int64_t{1}),
                      DType::kInt64, kCpu)
                   .value();
  cpu = View(cpu, V{3, 4, 5}).value();
  // To the GPU with the layout kept (a transposed view stays transposed, as torch's .to()).
  Tensor t = Transpose(cpu, 0, 2).value();
  Tensor g = RunNowSingle(PlanTo(t, std::nullopt, kGpu)).value();
  ExpectSameTensor(g, Clone(t).value());
  // Converting copies on the device and on the way.
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    SCOPED_TRACE(DTypeName(dtype));
    ExpectSameTensor(RunNowSingle(PlanTo(g, dtype, std::nullopt)).value(),
                     RunNowSingle(PlanTo(t, dtype, std::nullopt)).value());
    Tensor sliced = Slice(cpu, 2, 1, 5, 2).value();
    // Not dense: the copy takes dense strides in the view's dim order (clone()'s rule).
    ExpectSameTensor(RunNowSingle(PlanTo(sliced, dtype, kGpu)).value(),
                     RunNowSingle(PlanTo(Clone(sliced).value(), dtype, std::nullopt)).value());
  }
  // Views of a GPU tensor, then contiguous / flip / repeat on the device.
  Tensor gv = Permute(RunNowSingle(PlanTo(cpu, std::nullopt, kGpu)).value(), V{2, 0, 1}).value();
  Tensor cv = Permute(cpu, V{2, 0, 1}).value();
  ExpectSameTensor(Contiguous(gv).value(), Contiguous(cv).value());
  ExpectSameTensor(Flip(gv, V{0, 2}).value(), Flip(cv, V{0, 2}).value());
  ExpectSameTensor(Repeat(Select(gv, 1, 2).value(), V{2, 1, 3}).value(),
                   Repeat(Select(cv, 1, 2).value(), V{2, 1, 3}).value());
  // copy_ across devices, broadcast and converted, both ways.
  Tensor gdst = Full(V{4, 3, 5}, Scalar(7.5), DType::kFloat32, kGpu).value();
  Tensor cdst = Full(V{4, 3, 5}, Scalar(7.5), DType::kFloat32, kCpu).value();
  Tensor row = Select(cpu, 1, 1).value();  // {3, 5}, strided
  ASSERT_TRUE(CopyInto(Narrow(gdst, 0, 1, 2).value(), row).ok());
  ASSERT_TRUE(CopyInto(Narrow(cdst, 0, 1, 2).value(), row).ok());
  ExpectSameTensor(gdst, cdst);
  Tensor back = Full(V{5, 3}, Scalar(int64_t{0}), DType::kInt16, kCpu).value();
  Tensor expected = Full(V{5, 3}, Scalar(int64_t{0}), DType::kInt16, kCpu).value();
  ASSERT_TRUE(CopyInto(back, T(Select(gdst, 0, 2).value()).value()).ok());
  ASSERT_TRUE(CopyInto(expected, T(Select(cdst, 0, 2).value()).value()).ok());
  EXPECT_EQ(RowMajorBytes(back), RowMajorBytes(expected));
}

TEST(CudaBackendTest, OutOfMemoryIsResourceExhaustedAndTheDeviceStaysUsable) {
  const auto gpus = cuda::RegisterBackends();
  const int64_t too_much = gpus[0].total_memory * 2;
  absl::StatusOr<Tensor> huge = Empty(V{too_much}, DType::kUInt8, kGpu);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted) << huge.status();
  EXPECT_NE(huge.status().message().find("out of memory"), std::string::npos) << huge.status();
  Tensor small = Full(V{1000}, Scalar(int64_t{5}), DType::kInt32, kGpu).value();
  EXPECT_EQ(RowMajorBytes(small), RowMajorBytes(Full(V{1000}, Scalar(int64_t{5}), DType::kInt32,
                                                     kCpu)
                                                    .value()));
}

TEST(CudaBackendTest, GpuBytesAreChargedToTheDevicesOwnBudget) {
  auto session = DeviceBudgets::Create("session", int64_t{1} << 20, int64_t{8} << 20);
  ScopedMemoryBudget scope(session);
  // 4 MiB on the GPU: over the host's 1 MiB, within the GPU's 8 MiB.
  Tensor a = Empty(V{1 << 20}, DType::kFloat32, kGpu).value();
  EXPECT_EQ(session->For(kGpu)->used(), int64_t{4} << 20);
  EXPECT_EQ(session->For(kCpu)->used(), 0);
  absl::StatusOr<Tensor> b = Empty(V{5 << 20}, DType::kUInt8, kGpu);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(b.status().message().find("on cuda:0"), std::string::npos) << b.status();
  Tensor c = Empty(V{1 << 20}, DType::kUInt8, kGpu).value();
  EXPECT_EQ(session->For(kGpu)->used(), int64_t{5} << 20);
}

TEST(CudaBackendTest, TransfersFromOneKiBToOneGiB) {
  std::mt19937_64 rng(11);
  for (int64_t n : {int64_t{1} << 10, int64_t{1} << 20, int64_t{64} << 20, int64_t{1} << 30}) {
    SCOPED_TRACE(n);
    std::vector<char> host(static_cast<size_t>(n));
    for (size_t i = 0; i + 8 <= host.size(); i += 8) {
      const uint64_t v = rng();
      std::memcpy(host.data() + i, &v, 8);
    }
    Tensor cpu = FromBytes(V{n}, DType::kUInt8, absl::string_view(host.data(), host.size()))
                     .value();
    Tensor gpu = RunNowSingle(PlanTo(cpu, std::nullopt, kGpu)).value();
    Tensor back = RunNowSingle(PlanTo(gpu, std::nullopt, kCpu)).value();
    ASSERT_EQ(std::memcmp(back.data(), host.data(), host.size()), 0);
  }
}

TEST(CudaBackendTest, AllocatorCountsLiveBytesAndReleasesItsCache) {
  Allocator& allocator = Gpu().allocator();
  const int64_t before = allocator.stats().live_bytes;
  {
    Tensor t = Empty(V{1 << 20}, DType::kFloat32, kGpu).value();
    EXPECT_EQ(allocator.stats().live_bytes, before + (int64_t{4} << 20));
  }
  EXPECT_EQ(allocator.stats().live_bytes, before);
  allocator.ReleaseCached();
  EXPECT_EQ(allocator.stats().cached_bytes, 0);
}

// ---- Binary elementwise ops: the GPU against the CPU backend on the same program -------------

// The elements of a tensor as doubles (row-major), via the CPU.
std::vector<double> Values(const Tensor& t) {
  Tensor f64 = RunNowSingle(PlanTo(t, DType::kFloat64, kCpu)).value();
  Tensor rows = CloneContiguous(f64).value();
  return std::vector<double>(rows.data_as<double>(), rows.data_as<double>() + rows.numel());
}

// Inputs with negative, zero, fractional and repeated values; `shift` makes b differ from a.
Tensor Input(DType dtype, double shift, Device device) {
  Tensor v = Arange(Scalar(-9.0 + shift), Scalar(9.0 + shift), Scalar(0.75), DType::kFloat64,
                    kCpu)
                 .value();
  v = View(v, V{4, 6}).value();
  return RunNowSingle(PlanTo(v, dtype, device)).value();
}

// Runs `op` on the CPU and on the GPU with the same inputs (made by `inputs` on each device)
// and compares: the same error, or the same dtype, sizes and strides and values (exactly, or
// within about two units in the last place where `approximate`).
void CompareOnBothDevices(const std::string& label,
                          const std::function<absl::StatusOr<Tensor>(Device)>& run,
                          bool approximate, int* compared) {
  SCOPED_TRACE(label);
  absl::StatusOr<Tensor> cpu = run(kCpu);
  absl::StatusOr<Tensor> gpu = run(kGpu);
  if (!cpu.ok()) {
    ASSERT_FALSE(gpu.ok());
    EXPECT_EQ(gpu.status().code(), cpu.status().code()) << gpu.status();
    EXPECT_EQ(gpu.status().message(), cpu.status().message());
    return;
  }
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_EQ(gpu->device(), kGpu);
  EXPECT_EQ(gpu->dtype(), cpu->dtype());
  EXPECT_EQ(V(gpu->sizes().begin(), gpu->sizes().end()),
            V(cpu->sizes().begin(), cpu->sizes().end()));
  EXPECT_EQ(V(gpu->strides().begin(), gpu->strides().end()),
            V(cpu->strides().begin(), cpu->strides().end()));
  const std::vector<double> g = Values(*gpu), c = Values(*cpu);
  ASSERT_EQ(g.size(), c.size());
  const double rel = gpu->dtype() == DType::kFloat16    ? 2e-3
                     : gpu->dtype() == DType::kBFloat16 ? 1.6e-2
                     : gpu->dtype() == DType::kFloat32  ? 1e-6
                                                        : 1e-14;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(c[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << i;
    } else if (!approximate || std::isinf(c[i]) || !IsFloating(gpu->dtype())) {
      EXPECT_EQ(g[i], c[i]) << i;
    } else {
      EXPECT_NEAR(g[i], c[i], rel * std::max(1.0, std::abs(c[i]))) << i;
    }
  }
  ++*compared;
}

TEST(CudaElementwiseTest, BinaryOpsMatchTheCpuBackend) {
  const std::vector<std::string> names = {
      "add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "maximum",
      "minimum", "fmax", "fmin", "atan2", "copysign", "hypot", "bitwise_and", "bitwise_or",
      "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "logical_and", "logical_or",
      "logical_xor", "eq", "ne", "lt", "le", "gt", "ge"};
  // Transcendental ops: the device's libm rounds differently (and fuses multiply-adds).
  const std::vector<std::string> approximate = {"pow", "atan2", "hypot"};
  int compared = 0;
  for (const std::string& name : names) {
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType dtype = static_cast<DType>(d);
      // Layouts: both contiguous; a transposed with b a broadcast row; b a Python number; an
      // alpha-scaled add/sub; in place.
      for (int layout = 0; layout < 5; ++layout) {
        auto plan = [&](Device device) -> absl::StatusOr<Tensor> {
          Tensor a = Input(dtype, 0, device);
          Tensor b = Input(dtype, 0.5, device);
          Attrs attrs;
          std::vector<Tensor> ins = {a, b};
          std::string op = name;
          if (layout == 1) {
            // a: a transposed {4, 6} view; b: one row of b, broadcast over a's rows.
            ins = {T(Input(dtype, 0, device).WithMeta(TensorMeta::Contiguous(dtype, V{6, 4})))
                       .value(),
                   Select(b, 0, 1).value()};
          } else if (layout == 2) {
            ins = {a};
            attrs.Set("other", dtype == DType::kBool ? Scalar(true)
                               : IsFloating(dtype)   ? Scalar(2.5)
                                                     : Scalar(int64_t{3}));
          } else if (layout == 3) {
            attrs.Set("alpha", IsFloating(dtype) ? Scalar(1.5) : Scalar(int64_t{2}));
          } else if (layout == 4) {
            op = name + "_";
          }
          TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunNow(PlanOp(op, ins, attrs)));
          return out[0];
        };
        if (layout == 3 && name != "add" && name != "sub") continue;
        const bool approx =
            std::find(approximate.begin(), approximate.end(), name) != approximate.end() ||
            layout == 3;  // alpha: the device fuses the multiply-add
        CompareOnBothDevices(name + " " + DTypeName(dtype) + " layout " + std::to_string(layout),
                             plan, approx, &compared);
      }
    }
  }
  EXPECT_GT(compared, 400);
}

TEST(CudaElementwiseTest, UnaryOpsMatchTheCpuBackend) {
  // Exact: ops whose result is exactly defined (IEEE operations, rounding, predicates).
  const std::vector<std::string> exact = {
      "neg", "abs", "sign", "sgn", "relu", "floor", "ceil", "trunc", "round", "frac",
      "reciprocal", "logical_not", "bitwise_not", "isnan", "isinf", "isposinf", "isneginf",
      "isfinite", "signbit", "square", "sqrt"};
  const std::vector<std::string> approximate = {
      "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "rsqrt", "sin", "cos", "tan",
      "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf", "sigmoid", "silu", "gelu"};
  int compared = 0;
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    for (bool approx : {false, true}) {
      for (const std::string& name : approx ? approximate : exact) {
        for (int layout = 0; layout < 3; ++layout) {
          CompareOnBothDevices(
              name + " " + DTypeName(dtype) + " layout " + std::to_string(layout),
              [&](Device device) -> absl::StatusOr<Tensor> {
                Tensor a = Input(dtype, 0, device);
                if (layout == 1) a = T(a).value();  // transposed
                const std::string op = layout == 2 ? name + "_" : name;
                TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunNow(PlanOp(op, {a}, {})));
                return out[0];
              },
              approx, &compared);
        }
      }
    }
    // Ops with arguments.
    const std::vector<std::pair<std::string, Attrs>> with_args = {
        {"clamp", Attrs().Set("min", Scalar(-2.0)).Set("max", Scalar(3.5))},
        {"clamp", Attrs().Set("min", Scalar(int64_t{-1}))},
        {"pow", Attrs().Set("other", Scalar(2.0))},
        {"pow", Attrs().Set("other", Scalar(int64_t{3}))},
        {"pow", Attrs().Set("other", Scalar(-0.5))},
        {"round", Attrs().Set("decimals", int64_t{1})},
        {"leaky_relu", Attrs().Set("negative_slope", Scalar(0.2))},
        {"nan_to_num", Attrs()},
        {"gelu", Attrs().Set("approximate", true)},
    };
    for (const auto& [name, attrs] : with_args) {
      CompareOnBothDevices(name + " with arguments " + DTypeName(dtype),
                           [&](Device device) -> absl::StatusOr<Tensor> {
                             Tensor a = Input(dtype, 0, device);
                             TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                                                      RunNow(PlanOp(name, {a}, attrs)));
                             return out[0];
                           },
                           name == "pow" || name == "gelu", &compared);
    }
  }
  EXPECT_GT(compared, 500);
}

// Counter-based draws on both devices from one seed: uniform, integer and Bernoulli draws are the
// same bits; normal draws within 4 ulps (log, sqrt and cos differ in their last bits).
TEST(CudaRandomTest, ASeedDrawsTheSameNumbersOnBothDevices) {
  const auto draw = [](const std::string& op, Attrs attrs, Device device) {
    attrs.Set("seed", int64_t{99}).Set("offset", int64_t{12345}).Set("device", device);
    return RunNowSingle(PlanOp(op, {}, attrs)).value();
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Attrs rand = Attrs().Set("size", V{3, 1001}).Set("dtype", dtype);
    ExpectSameTensor(draw("rand", rand, kGpu), draw("rand", rand, kCpu));
  }
  for (DType dtype : {DType::kInt64, DType::kInt32, DType::kUInt8, DType::kFloat32}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Attrs randint = Attrs()
                              .Set("size", V{5000})
                              .Set("dtype", dtype)
                              .Set("low", int64_t{-3})
                              .Set("high", int64_t{dtype == DType::kUInt8 ? 250 : 1000000});
    ExpectSameTensor(draw("randint", randint, kGpu), draw("randint", randint, kCpu));
  }
  const Attrs randn = Attrs().Set("size", V{100000}).Set("dtype", DType::kFloat64);
  const std::vector<double> g = Values(draw("randn", randn, kGpu));
  const std::vector<double> c = Values(draw("randn", randn, kCpu));
  ASSERT_EQ(g.size(), c.size());
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_LE(std::abs(g[i] - c[i]), 4 * (std::nextafter(std::abs(c[i]), INFINITY) - std::abs(c[i])))
        << i;
  }
  // In place through a strided view, and Bernoulli with tensor probabilities.
  const auto in_place = [](Device device) {
    Tensor t = Full(V{40, 30}, Scalar(0.0), DType::kFloat32, device).value();
    Tensor view = Transpose(t, 0, 1).value();
    EXPECT_TRUE(RunNow(PlanOp("uniform_", {view},
                              Attrs().Set("seed", int64_t{5}).Set("from", Scalar(-2.0)).Set(
                                  "to", Scalar(3.0))))
                    .ok());
    return t;
  };
  ExpectSameTensor(in_place(kGpu), in_place(kCpu));
  const auto bernoulli = [](Device device) {
    Tensor p = Arange(Scalar(0.0), Scalar(1.0), Scalar(1.0 / 4096), DType::kFloat32, device)
                   .value();
    return RunNowSingle(PlanOp("bernoulli", {p}, Attrs().Set("seed", int64_t{8}))).value();
  };
  ExpectSameTensor(bernoulli(kGpu), bernoulli(kCpu));
}

TEST(CudaRandomTest, ABadProbabilityFailsTheOpWithTheCpusError) {
  for (Device device : {kCpu, kGpu}) {
    Tensor p = Full(V{100}, Scalar(0.5), DType::kFloat64, device).value();
    ASSERT_TRUE(FillInto(Narrow(p, 0, 17, 1).value(), Scalar(1.5)).ok());
    absl::StatusOr<Tensor> drawn = RunNowSingle(PlanOp("bernoulli", {p}, Attrs()));
    ASSERT_FALSE(drawn.ok());
    EXPECT_EQ(drawn.status().message(),
              "bernoulli: Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  }
}

TEST(CudaElementwiseTest, TernaryOpsMatchTheCpuBackend) {
  int compared = 0;
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    const std::string dt = DTypeName(dtype);
    auto run = [&](std::string op, int inputs, Attrs attrs) {
      return [=](Device device) -> absl::StatusOr<Tensor> {
        std::vector<Tensor> ins = {Input(dtype, 0, device), Input(dtype, 0.5, device),
                                   Input(dtype, -0.25, device)};
        ins.resize(inputs);
        TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunNow(PlanOp(op, ins, attrs)));
        return out[0];
      };
    };
    CompareOnBothDevices("lerp " + dt, run("lerp", 3, {}), true, &compared);
    CompareOnBothDevices("addcmul " + dt, run("addcmul", 3, Attrs().Set("value", Scalar(2.0))),
                         true, &compared);
    CompareOnBothDevices("addcdiv " + dt, run("addcdiv", 3, Attrs().Set("value", Scalar(0.5))),
                         true, &compared);
    CompareOnBothDevices("clamp with tensors " + dt, run("clamp", 3, {}), false, &compared);
    CompareOnBothDevices("clamp_min " + dt, run("clamp_min", 2, {}), false, &compared);
    CompareOnBothDevices(
        "where " + dt,
        [&](Device device) -> absl::StatusOr<Tensor> {
          Tensor a = Input(dtype, 0, device), b = Input(dtype, 0.5, device);
          TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> mask,
                                   RunNow(PlanOp("gt", {Input(DType::kFloat32, 0, device)},
                                                 Attrs().Set("other", Scalar(0.3)))));
          TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                                   RunNow(PlanOp("where", {mask[0], a, b}, {})));
          return out[0];
        },
        false, &compared);
    CompareOnBothDevices(
        "masked_fill " + dt,
        [&](Device device) -> absl::StatusOr<Tensor> {
          Tensor a = Input(dtype, 0, device);
          TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> mask,
                                   RunNow(PlanOp("lt", {Input(DType::kFloat32, 0, device)},
                                                 Attrs().Set("other", Scalar(-1.0)))));
          TENSORD_ASSIGN_OR_RETURN(
              std::vector<Tensor> out,
              RunNow(PlanOp("masked_fill", {a, mask[0]}, Attrs().Set("value", Scalar(true)))));
          return out[0];
        },
        false, &compared);
  }
  EXPECT_GE(compared, 45);  // some dtypes are refused by both devices alike
}

// ---- Reductions, scans and softmax ----------------------------------------------------------------

TEST(CudaReduceTest, ReductionsScansAndSoftmaxMatchTheCpuBackend) {
  int compared = 0;
  const std::vector<std::string> reductions = {
      "sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "all", "any",
      "count_nonzero", "var", "std", "norm", "logsumexp", "max", "min"};
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    const std::string dt = DTypeName(dtype);
    // Every output of op on the 4x6 input (transposed: `t`), compared one by one.
    const auto each_output = [&](const std::string& label, const std::string& op, bool t,
                                 Attrs attrs) {
      for (int k = 0; k < 2; ++k) {
        CompareOnBothDevices(
            label + " output " + std::to_string(k),
            [=](Device device) -> absl::StatusOr<Tensor> {
              Tensor x = Input(dtype, 0.5, device);
              if (t) x = Transpose(x, 0, 1).value();
              TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunNow(PlanOp(op, {x}, attrs)));
              if (k >= static_cast<int>(out.size())) return absl::NotFoundError("no output");
              return out[k];
            },
            true, &compared);
      }
    };
    for (const std::string& op : reductions) {
      const bool needs_dim = op == "max" || op == "min";
      if (!needs_dim) each_output(op + " all " + dt, op, false, {});
      for (bool t : {false, true}) {
        for (int64_t dim : {0, 1}) {
          each_output(op + (t ? " transposed" : "") + " dim " + std::to_string(dim) + " " + dt, op,
                      t, Attrs().Set("dim", dim).Set("keepdim", dim == 1));
        }
      }
    }
    for (const std::string op : {"cumsum", "cumprod", "softmax", "log_softmax"}) {
      for (bool t : {false, true}) {
        each_output(op + (t ? " transposed " : " ") + dt, op, t, Attrs().Set("dim", int64_t{1}));
      }
    }
  }
  EXPECT_GE(compared, 300);  // some dtypes are refused by both devices alike
}

TEST(CudaReduceTest, LargeReductionsTakeEveryLaunchPath) {
  // A full reduction of 4M elements (split into parts), rows (a block per output), columns (a
  // thread per output), and softmax over long rows.
  Tensor big = RunNowSingle(PlanTo(Arange(Scalar(0.0), Scalar(4194304.0), Scalar(1.0),
                                          DType::kFloat64, kCpu)
                                       .value(),
                                   DType::kFloat32, kCpu))
                   .value();
  big = RunNowSingle(PlanOp("remainder", {big}, Attrs().Set("other", Scalar(int64_t{97})))).value();
  const Tensor big_gpu = RunNowSingle(PlanTo(big, std::nullopt, kGpu)).value();
  int compared = 0;
  for (const auto& [op, label, sizes, attrs] :
       std::vector<std::tuple<std::string, std::string, V, Attrs>>{
           {"sum", "full sum", V{4194304}, Attrs()},
           {"sum", "row sums", V{4096, 1024}, Attrs().Set("dim", int64_t{1})},
           {"sum", "column sums", V{4096, 1024}, Attrs().Set("dim", int64_t{0})},
           {"argmax", "argmax of columns", V{1024, 4096}, Attrs().Set("dim", int64_t{0})},
           {"log_softmax", "log_softmax of long rows (a block each)", V{1024, 4096},
            Attrs().Set("dim", int64_t{1})},
           // Rows cached in shared memory (up to 32 KiB of them) and rows too long for it, and
           // long strided lines (columns).
           {"softmax", "softmax of rows of 2048", V{2048, 2048}, Attrs().Set("dim", int64_t{1})},
           {"softmax", "softmax of rows of 16384", V{256, 16384}, Attrs().Set("dim", int64_t{1})},
           {"softmax", "softmax of columns of 4096", V{4096, 1024}, Attrs().Set("dim", int64_t{0})}}) {
    CompareOnBothDevices(
        label,
        [&](Device device) -> absl::StatusOr<Tensor> {
          TENSORD_ASSIGN_OR_RETURN(Tensor v, View(device.is_cpu() ? big : big_gpu, sizes));
          return RunNowSingle(PlanOp(op, {v}, attrs));
        },
        true, &compared);
  }
  // Contiguous runs that start off a 16-byte boundary (AccumulateContiguous: a head of single
  // elements, 16-byte pieces, a tail), split into parts that start anywhere: the elements from
  // the 3rd on, and rows of 1,000,001 from the 5th.
  for (const auto& [op, label, start, rows] :
       std::vector<std::tuple<std::string, std::string, int64_t, int64_t>>{
           {"sum", "sum from element 3", 3, 0},
           {"argmax", "argmax from element 3 (ties: the first)", 3, 0},
           {"amin", "amin from element 3", 3, 0},
           {"sum", "sums of rows of 1000001 from element 5", 5, 4},
           {"argmin", "argmin of rows of 1000001 from element 5", 5, 4}}) {
    CompareOnBothDevices(
        label,
        [&](Device device) -> absl::StatusOr<Tensor> {
          const Tensor& all = device.is_cpu() ? big : big_gpu;
          Attrs attrs;
          if (rows == 0) {
            TENSORD_ASSIGN_OR_RETURN(Tensor v, Slice(all, 0, start, 4194304, 1));
            return RunNowSingle(PlanOp(op, {v}, attrs));
          }
          TENSORD_ASSIGN_OR_RETURN(Tensor v, Slice(all, 0, start, start + rows * 1000001, 1));
          TENSORD_ASSIGN_OR_RETURN(v, View(v, V{rows, 1000001}));
          return RunNowSingle(PlanOp(op, {v}, attrs.Set("dim", int64_t{1})));
        },
        true, &compared);
  }
  EXPECT_EQ(compared, 13);
}

// Lines long enough that each thread of a block reads many of their elements, four at a time
// (AccumulateStrided and AccumulateContiguous in engine/kernels/reduce_functors.h), then a tail: rows of 4099 (not a
// multiple of 4), whole tensors of 3 x 4099, every reduction and dtype. Values repeat (ties for
// argmax/argmin: the first wins) and are negative too; floating rows hold a NaN (row 1) and both
// infinities (row 2). Softmax and log_softmax over the same lines, cached in shared memory or
// not by dtype, along the last dim, a middle dim and columns.
TEST(CudaReduceTest, LongLinesRunTheFourAccumulatorLoopForEveryReductionAndDType) {
  constexpr int64_t kLine = 4099;
  Tensor base = Arange(Scalar(0.0), Scalar(3.0 * kLine), Scalar(1.0), DType::kFloat64, kCpu).value();
  base = RunNowSingle(PlanOp("remainder", {base}, Attrs().Set("other", Scalar(int64_t{97}))))
             .value();
  base = RunNowSingle(PlanOp("sub", {base}, Attrs().Set("other", Scalar(int64_t{48})))).value();
  base = View(base, V{3, kLine}).value();
  Tensor special = RunNowSingle(PlanCloneContiguous(base)).value();
  double* p = special.data_as<double>();
  p[1 * kLine + 2000] = std::nan("");
  p[2 * kLine + 10] = -std::numeric_limits<double>::infinity();
  p[2 * kLine + 3000] = std::numeric_limits<double>::infinity();
  const std::vector<std::string> reductions = {
      "sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "all", "any",
      "count_nonzero", "var", "std", "norm", "logsumexp", "max", "min"};
  int compared = 0;
  for (const DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                            DType::kInt32, DType::kInt64, DType::kUInt8, DType::kBool}) {
    const std::string dt = DTypeName(dtype);
    const Tensor& source = IsFloating(dtype) ? special : base;
    const auto input = [&](Device device) { return RunNowSingle(PlanTo(source, dtype, device)); };
    for (const std::string& op : reductions) {
      std::vector<std::pair<std::string, Attrs>> forms = {
          {"rows", Attrs().Set("dim", int64_t{1})}};
      if (op != "max" && op != "min") forms.push_back({"all", Attrs()});
      for (const auto& [form, attrs] : forms) {
        for (int k = 0; k < 2; ++k) {
          CompareOnBothDevices(
              absl::StrCat(op, " ", form, " ", dt, " output ", k),
              [&, k](Device device) -> absl::StatusOr<Tensor> {
                TENSORD_ASSIGN_OR_RETURN(Tensor x, input(device));
                TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                                         RunNow(PlanOp(op, {x}, attrs)));
                if (k >= static_cast<int>(out.size())) return absl::NotFoundError("no output");
                return out[k];
              },
              true, &compared);
        }
      }
    }
    if (!IsFloating(dtype)) continue;
    for (const std::string op : {"softmax", "log_softmax"}) {
      // Rows; the same lines as columns (strided); and along the middle dim of 3 x 4099 x 2.
      CompareOnBothDevices(op + " rows " + dt, [&](Device device) -> absl::StatusOr<Tensor> {
        TENSORD_ASSIGN_OR_RETURN(Tensor x, input(device));
        return RunNowSingle(PlanOp(op, {x}, Attrs().Set("dim", int64_t{1})));
      }, true, &compared);
      CompareOnBothDevices(op + " columns " + dt, [&](Device device) -> absl::StatusOr<Tensor> {
        TENSORD_ASSIGN_OR_RETURN(Tensor x, input(device));
        TENSORD_ASSIGN_OR_RETURN(Tensor t, Transpose(x, 0, 1));
        return RunNowSingle(PlanOp(op, {t}, Attrs().Set("dim", int64_t{0})));
      }, true, &compared);
      CompareOnBothDevices(op + " middle dim " + dt, [&](Device device) -> absl::StatusOr<Tensor> {
        TENSORD_ASSIGN_OR_RETURN(Tensor x, input(device));
        TENSORD_ASSIGN_OR_RETURN(Tensor pair, RunNowSingle(PlanOp("stack", {x, x},
                                                                  Attrs().Set("dim", int64_t{2}))));
        return RunNowSingle(PlanOp(op, {pair}, Attrs().Set("dim", int64_t{1})));
      }, true, &compared);
    }
  }
  EXPECT_GE(compared, 150);  // some dtype and op pairs are refused by both devices alike
}

// ---- Indexing --------------------------------------------------------------------------------------

// An int64 tensor of `values` on `device`, viewed as `sizes`.
Tensor Indices(const V& values, const V& sizes, Device device) {
  Tensor t = Full(V{static_cast<int64_t>(values.size())}, Scalar(int64_t{0}), DType::kInt64, kCpu)
                 .value();
  std::copy(values.begin(), values.end(), t.data_as<int64_t>());
  return RunNowSingle(PlanTo(View(t, sizes).value(), std::nullopt, device)).value();
}

TEST(CudaIndexingTest, IndexingOpsMatchTheCpuBackend) {
  int compared = 0;
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    const std::string dt = DTypeName(dtype);
    const auto op_on = [&](const std::string& op, std::function<std::vector<Tensor>(Device)> ins,
                           Attrs attrs, int output = 0) {
      return [=](Device device) -> absl::StatusOr<Tensor> {
        TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunNow(PlanOp(op, ins(device), attrs)));
        return out[output];
      };
    };
    const auto x = [&](Device device) { return Input(dtype, 0.5, device); };  // 4 x 6
    const auto xt = [&](Device device) { return Transpose(x(device), 0, 1).value(); };
    CompareOnBothDevices(
        "index_select " + dt,
        op_on("index_select", [&](Device dv) { return std::vector<Tensor>{xt(dv), Indices({3, 0, 3, -0}, {4}, dv)}; },
              Attrs().Set("dim", int64_t{1})),
        false, &compared);
    CompareOnBothDevices(
        "gather " + dt,
        op_on("gather", [&](Device dv) { return std::vector<Tensor>{x(dv), Indices({5, 0, 4, 2, 2, 1}, {2, 3}, dv)}; },
              Attrs().Set("dim", int64_t{1})),
        false, &compared);
    // gather refuses negative indices, as torch's does (index_select and take wrap them).
    CompareOnBothDevices(
        "gather with a negative index " + dt,
        op_on("gather", [&](Device dv) { return std::vector<Tensor>{x(dv), Indices({5, 0, -1, 2, 2, 1}, {2, 3}, dv)}; },
              Attrs().Set("dim", int64_t{1})),
        false, &compared);
    CompareOnBothDevices(
        "gather out of range " + dt,
        op_on("gather", [&](Device dv) { return std::vector<Tensor>{x(dv), Indices({5, 0, 6, 2, 2, 1}, {2, 3}, dv)}; },
              Attrs().Set("dim", int64_t{1})),
        false, &compared);
    // Contiguous operands take the row-copy path (engine/cuda/row_gather.h): whole rows, single
    // elements, an index per element, and a bad index on that path.
    CompareOnBothDevices(
        "index_select rows " + dt,
        op_on("index_select", [&](Device dv) { return std::vector<Tensor>{x(dv), Indices({3, 0, 3, 1, 2}, {5}, dv)}; },
              Attrs().Set("dim", int64_t{0})),
        false, &compared);
    CompareOnBothDevices(
        "index_select columns " + dt,
        op_on("index_select", [&](Device dv) { return std::vector<Tensor>{x(dv), Indices({5, 0, 2}, {3}, dv)}; },
              Attrs().Set("dim", int64_t{1})),
        false, &compared);
    CompareOnBothDevices(
        "gather every row " + dt,
        op_on("gather", [&](Device dv) {
                return std::vector<Tensor>{x(dv), Indices({5, 0, 4, 1, 1, 1, 0, 2, 3, 5, 5, 4}, {4, 3}, dv)};
              },
              Attrs().Set("dim", int64_t{1})),
        false, &compared);
    CompareOnBothDevices(
        "index_select rows with a bad index " + dt,
        op_on("index_select", [&](Device dv) { return std::vector<Tensor>{x(dv), Indices({1, 9, 2, 4}, {4}, dv)}; },
              Attrs().Set("dim", int64_t{0})),
        false, &compared);
    // The row-copy path's other inputs: an int32 index, a strided one (every second element),
    // a 0-d one, and self starting one row into its storage (rows no longer 16-byte aligned).
    const auto as_int32 = [](Tensor t) { return RunNowSingle(PlanTo(t, DType::kInt32, t.device())).value(); };
    CompareOnBothDevices(
        "index_select rows by an int32 index " + dt,
        op_on("index_select", [&](Device dv) { return std::vector<Tensor>{x(dv), as_int32(Indices({3, 0, 3, 1, 2}, {5}, dv))}; },
              Attrs().Set("dim", int64_t{0})),
        false, &compared);
    CompareOnBothDevices(
        "gather every row by an int32 index (refused: int64 only) " + dt,
        op_on("gather", [&](Device dv) {
                return std::vector<Tensor>{x(dv), as_int32(Indices({5, 0, 4, 1, 1, 1, 0, 2, 3, 5, 5, 4}, {4, 3}, dv))};
              },
              Attrs().Set("dim", int64_t{1})),
        false, &compared);
    CompareOnBothDevices(
        "index_select rows by a strided index " + dt,
        op_on("index_select", [&](Device dv) {
                return std::vector<Tensor>{x(dv), Select(Indices({3, 9, 0, 9, 2, 9}, {3, 2}, dv), 1, 0).value()};
              },
              Attrs().Set("dim", int64_t{0})),
        false, &compared);
    CompareOnBothDevices(
        "index_select a row by a 0-d index " + dt,
        op_on("index_select", [&](Device dv) { return std::vector<Tensor>{x(dv), Indices({2}, {}, dv)}; },
              Attrs().Set("dim", int64_t{0})),
        false, &compared);
    CompareOnBothDevices(
        "index_select rows of a narrowed self " + dt,
        op_on("index_select", [&](Device dv) {
                return std::vector<Tensor>{Narrow(x(dv), 0, 1, 3).value(), Indices({2, 0, 1, 1}, {4}, dv)};
              },
              Attrs().Set("dim", int64_t{0})),
        false, &compared);
    CompareOnBothDevices(
        "index_select columns of a narrowed self " + dt,
        op_on("index_select", [&](Device dv) {
                return std::vector<Tensor>{Narrow(View(x(dv), V{24}).value(), 0, 1, 23).value(), Indices({22, 0, 5}, {3}, dv)};
              },
              Attrs().Set("dim", int64_t{0})),
        false, &compared);
    for (const std::string op : {"scatter", "scatter_add"}) {
      CompareOnBothDevices(
          op + " " + dt,
          op_on(op, [&](Device dv) {
                  return std::vector<Tensor>{x(dv), Indices({0, 0, 3, 1, 1, 1}, {2, 3}, dv), xt(dv)};
                },
                Attrs().Set("dim", int64_t{0})),
          false, &compared);
    }
    CompareOnBothDevices(
        "take " + dt,
        op_on("take", [&](Device dv) { return std::vector<Tensor>{xt(dv), Indices({23, 0, -24, 7}, {2, 2}, dv)}; }, {}),
        false, &compared);
    // Several bad indices: the error names the first in row-major order on both devices.
    CompareOnBothDevices(
        "index_select with several bad indices " + dt,
        op_on("index_select", [&](Device dv) { return std::vector<Tensor>{xt(dv), Indices({1, 9, -1, 7}, {4}, dv)}; },
              Attrs().Set("dim", int64_t{1})),
        false, &compared);
    CompareOnBothDevices(
        "take with several bad indices " + dt,
        op_on("take", [&](Device dv) { return std::vector<Tensor>{xt(dv), Indices({3, 30, -40, 99}, {2, 2}, dv)}; }, {}),
        false, &compared);
    CompareOnBothDevices(
        "take out of range " + dt,
        op_on("take", [&](Device dv) { return std::vector<Tensor>{xt(dv), Indices({23, 24}, {2}, dv)}; }, {}),
        false, &compared);
    CompareOnBothDevices(
        "put_ accumulate " + dt,
        [&](Device dv) -> absl::StatusOr<Tensor> {
          Tensor self = CloneContiguous(x(dv)).value();
          Tensor src = Input(dtype, 0.25, dv);
          TENSORD_RETURN_IF_ERROR(RunNow(PlanOp("put_", {self, Indices({1, 1, 1, -1}, {4}, dv),
                                                          Narrow(View(src, V{24}).value(), 0, 0, 4).value()},
                                               Attrs().Set("accumulate", true))).status());
          return self;
        },
        true, &compared);
    CompareOnBothDevices("nonzero " + dt, op_on("nonzero", [&](Device dv) { return std::vector<Tensor>{xt(dv)}; }, {}),
                         false, &compared);
    CompareOnBothDevices(
        "masked_select " + dt,
        [&](Device dv) -> absl::StatusOr<Tensor> {
          TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> mask,
                                   RunNow(PlanOp("gt", {Input(DType::kFloat32, 0, dv)},
                                                 Attrs().Set("other", Scalar(0.3)))));
          return RunNowSingle(PlanOp("masked_select", {x(dv), mask[0]}, {}));
        },
        false, &compared);
  }
  // 16 cases that succeed on both devices, for each of 10 dtypes (gather refuses an int32
  // index on both, as torch does).
  EXPECT_GE(compared, 160);
}

// ---- Sorting: CUB merge sort of positions against the CPU's std::sort ---------------------------

TEST(CudaSortTest, SortTopkAndKthvalueMatchTheCpuBackend) {
  int compared = 0;
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    const std::string dt = DTypeName(dtype);
    const auto x = [&](Device device) { return Input(dtype, 0.5, device); };  // 4 x 6, ties
    const auto xt = [&](Device device) { return Transpose(x(device), 0, 1).value(); };
    for (int output = 0; output < 2; ++output) {  // values, then indices: exact on both
      for (int64_t dim : {0, 1, -1}) {
        for (bool flag : {false, true}) {
          const std::string what = absl::StrCat(" dim ", dim, flag ? " descending/largest" : "",
                                                output ? " indices " : " values ", dt);
          CompareOnBothDevices(
              "sort" + what,
              [&](Device dv) -> absl::StatusOr<Tensor> {
                TENSORD_ASSIGN_OR_RETURN(
                    std::vector<Tensor> out,
                    RunNow(PlanOp("sort", {xt(dv)},
                                  Attrs().Set("dim", dim).Set("descending", flag))));
                return out[output];
              },
              false, &compared);
          if (dtype == DType::kBool || dtype == DType::kFloat16) continue;  // torch has no topk
          CompareOnBothDevices(
              "topk" + what,
              [&](Device dv) -> absl::StatusOr<Tensor> {
                TENSORD_ASSIGN_OR_RETURN(
                    std::vector<Tensor> out,
                    RunNow(PlanOp("topk", {x(dv)},
                                  Attrs().Set("k", int64_t{3}).Set("dim", dim).Set("largest", flag))));
                return out[output];
              },
              false, &compared);
          CompareOnBothDevices(
              "kthvalue" + what,
              [&](Device dv) -> absl::StatusOr<Tensor> {
                TENSORD_ASSIGN_OR_RETURN(
                    std::vector<Tensor> out,
                    RunNow(PlanOp("kthvalue", {xt(dv)},
                                  Attrs().Set("k", int64_t{2}).Set("dim", dim).Set("keepdim", flag))));
                return out[output];
              },
              false, &compared);
        }
      }
    }
  }
  EXPECT_GE(compared, 300);
}

// ---- Factorizations through cuSOLVER (engine/cuda/solver.cc) ------------------------------------

// A well-conditioned [batch, n, n] matrix (random entries plus 2n on the diagonal), symmetric
// positive-definite (diagonally dominant) when `spd`, float64 on the CPU, then `dtype` on `device`.
Tensor Square(DType dtype, int64_t batch, int64_t n, bool spd, Device device) {
  std::mt19937 rng(static_cast<uint32_t>(batch * 31 + n));
  std::normal_distribution<double> normal;
  Tensor t = Empty(V{batch, n, n}, DType::kFloat64, kCpu).value();
  double* p = t.data_as<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = normal(rng);
  for (int64_t b = 0; b < batch; ++b) {
    double* m = p + b * n * n;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; spd && j < i; ++j) m[i * n + j] = m[j * n + i];
    }
    // 2n on the diagonal; a symmetric one is made diagonally dominant with a positive diagonal,
    // so positive-definite (2n alone left a 1 x 1 "matrix" below zero for a draw under -2).
    for (int64_t i = 0; i < n; ++i) {
      double off = 0;
      for (int64_t j = 0; spd && j < n; ++j) off += j == i ? 0.0 : std::abs(m[i * n + j]);
      m[i * n + i] = (spd ? std::abs(m[i * n + i]) + off : m[i * n + i]) + 2.0 * static_cast<double>(n);
    }
  }
  return RunNowSingle(PlanTo(t, dtype, device)).value();
}

TEST(CudaLinalgTest, FactorizationsMatchTheCpuBackend) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const double tol = dtype == DType::kFloat32 ? 2e-4 : 1e-10;
    for (int64_t n : {1, 5, 33}) {
      // (op, input, attrs, outputs compared by absolute value: factors unique up to signs).
      struct Case {
        std::string op;
        bool spd;
        Attrs attrs;
        std::vector<int> by_magnitude;
      };
      const std::vector<Case> cases = {
          {"linalg_inv", false, Attrs(), {}},
          {"linalg_det", false, Attrs(), {}},
          {"linalg_slogdet", false, Attrs(), {}},
          {"linalg_lu_factor", false, Attrs(), {}},
          {"linalg_cholesky", true, Attrs(), {}},
          {"linalg_cholesky", true, Attrs().Set("upper", true), {}},
          {"linalg_qr", false, Attrs(), {0, 1}},
          {"linalg_qr", false, Attrs().Set("mode", std::string("complete")), {0, 1}},
          {"linalg_svd", false, Attrs().Set("full_matrices", false), {0, 2}},
          {"linalg_svdvals", false, Attrs(), {}},
          {"linalg_eigh", true, Attrs(), {1}},
          {"linalg_eigvalsh", true, Attrs().Set("UPLO", std::string("U")), {}},
      };
      for (const Case& c : cases) {
        SCOPED_TRACE(absl::StrCat(c.op, " n=", n, " ", DTypeName(dtype)));
        const auto cpu = RunNow(PlanOp(c.op, {Square(dtype, 3, n, c.spd, kCpu)}, c.attrs));
        const auto gpu = RunNow(PlanOp(c.op, {Square(dtype, 3, n, c.spd, kGpu)}, c.attrs));
        ASSERT_TRUE(cpu.ok()) << cpu.status();
        ASSERT_TRUE(gpu.ok()) << gpu.status();
        ASSERT_EQ(cpu->size(), gpu->size());
        for (size_t o = 0; o < cpu->size(); ++o) {
          const Tensor &ct = (*cpu)[o], &gt = (*gpu)[o];
          EXPECT_EQ(gt.device(), kGpu);
          EXPECT_EQ(V(gt.sizes().begin(), gt.sizes().end()), V(ct.sizes().begin(), ct.sizes().end()));
          EXPECT_EQ(V(gt.strides().begin(), gt.strides().end()),
                    V(ct.strides().begin(), ct.strides().end()));
          const bool magnitude =
              std::find(c.by_magnitude.begin(), c.by_magnitude.end(), o) != c.by_magnitude.end();
          const std::vector<double> g = Values(gt), e = Values(ct);
          for (size_t i = 0; i < g.size(); ++i) {
            const double want = magnitude ? std::fabs(e[i]) : e[i];
            const double got = magnitude ? std::fabs(g[i]) : g[i];
            if (std::isinf(want)) {  // a float32 det of 33 x 33 overflows on both devices
              EXPECT_EQ(got, want) << "output " << o << " at " << i;
            } else {
              EXPECT_NEAR(got, want, tol * std::max(1.0, std::fabs(want)) * n) << "output " << o << " at " << i;
            }
          }
        }
      }
    }
  }
}

// Non-square SVDs (gesvdj's U and V of m x k and n x k, and the singular values alone, which
// pass spare U and V): values against the CPU, factors by magnitude (unique up to signs; a full
// U's completion columns are not unique at all, so only S is compared there).
TEST(CudaLinalgTest, RectangularSvdsMatchTheCpuBackend) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const double tol = dtype == DType::kFloat32 ? 2e-4 : 1e-10;
    for (const V& shape : {V{2, 5, 3}, V{2, 3, 5}, V{1, 6, 4}, V{3, 1, 4}}) {
      const auto rect = [&](Device device) {
        std::mt19937 rng(static_cast<uint32_t>(shape[1] * 7 + shape[2]));
        std::normal_distribution<double> normal;
        Tensor t = Empty(shape, DType::kFloat64, kCpu).value();
        for (int64_t i = 0; i < t.numel(); ++i) t.data_as<double>()[i] = normal(rng);
        return RunNowSingle(PlanTo(t, dtype, device)).value();
      };
      struct Case {
        std::string op;
        Attrs attrs;
        std::vector<int> compared, by_magnitude;
      };
      const std::vector<Case> cases = {
          {"linalg_svdvals", Attrs(), {0}, {}},
          {"linalg_svd", Attrs().Set("full_matrices", false), {0, 1, 2}, {0, 2}},
          {"linalg_svd", Attrs().Set("full_matrices", true), {1}, {}},
      };
      for (const Case& c : cases) {
        SCOPED_TRACE(absl::StrCat(c.op, " (case ", &c - cases.data(), ") ", shape[0], "x",
                                  shape[1], "x", shape[2], " ", DTypeName(dtype)));
        const auto cpu = RunNow(PlanOp(c.op, {rect(kCpu)}, c.attrs));
        const auto gpu = RunNow(PlanOp(c.op, {rect(kGpu)}, c.attrs));
        ASSERT_TRUE(cpu.ok()) << cpu.status();
        ASSERT_TRUE(gpu.ok()) << gpu.status();
        ASSERT_EQ(cpu->size(), gpu->size());
        for (size_t o = 0; o < cpu->size(); ++o) {
          const Tensor &ct = (*cpu)[o], &gt = (*gpu)[o];
          EXPECT_EQ(V(gt.sizes().begin(), gt.sizes().end()), V(ct.sizes().begin(), ct.sizes().end()));
          EXPECT_EQ(V(gt.strides().begin(), gt.strides().end()),
                    V(ct.strides().begin(), ct.strides().end()));
          if (std::find(c.compared.begin(), c.compared.end(), static_cast<int>(o)) == c.compared.end()) {
            continue;
          }
          const bool magnitude = std::find(c.by_magnitude.begin(), c.by_magnitude.end(),
                                           static_cast<int>(o)) != c.by_magnitude.end();
          const std::vector<double> g = Values(gt), e = Values(ct);
          ASSERT_EQ(g.size(), e.size());
          for (size_t i = 0; i < g.size(); ++i) {
            const double want = magnitude ? std::fabs(e[i]) : e[i];
            const double got = magnitude ? std::fabs(g[i]) : g[i];
            EXPECT_NEAR(got, want, tol * 10 * std::max(1.0, std::fabs(want))) << "output " << o << " at " << i;
          }
        }
      }
    }
  }
}

TEST(CudaLinalgTest, NonFiniteMatricesGetTheCpuBackendsSvd) {
  // Matrix 0 finite, matrix 1 with an infinity (NaN singular values, identity columns), and
  // with `nan` matrix 2 with a NaN too (the op fails with the CPU's LinAlgError).
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (bool nan : {false, true}) {
      const V shape = nan ? V{3, 4, 3} : V{2, 4, 3};
      const auto make = [&](Device device) {
        Tensor t = Empty(shape, DType::kFloat64, kCpu).value();
        double* x = t.data_as<double>();
        for (int64_t i = 0; i < t.numel(); ++i) x[i] = std::sin(1.0 + i);
        x[12 + 5] = std::numeric_limits<double>::infinity();
        if (nan) x[24 + 7] = std::numeric_limits<double>::quiet_NaN();
        return RunNowSingle(PlanTo(t, dtype, device)).value();
      };
      for (const Attrs& attrs : {Attrs(), Attrs().Set("full_matrices", false),
                                 Attrs().Set("full_matrices", true)}) {
        const std::string op = attrs.values().empty() ? "linalg_svdvals" : "linalg_svd";
        SCOPED_TRACE(absl::StrCat(op, " ", DTypeName(dtype), nan ? " with a NaN" : ""));
        const auto cpu = RunNow(PlanOp(op, {make(kCpu)}, attrs));
        const auto gpu = RunNow(PlanOp(op, {make(kGpu)}, attrs));
        ASSERT_EQ(cpu.ok(), gpu.ok()) << cpu.status() << " / " << gpu.status();
        if (!cpu.ok()) {
          EXPECT_EQ(ErrorKind(gpu.status()), ErrorKind(cpu.status()));
          EXPECT_EQ(gpu.status().message(), cpu.status().message());
          continue;
        }
        ASSERT_EQ(cpu->size(), gpu->size());
        for (size_t o = 0; o < cpu->size(); ++o) {
          const std::vector<double> g = Values((*gpu)[o]), e = Values((*cpu)[o]);
          ASSERT_EQ(g.size(), e.size());
          const size_t half = g.size() / 2;  // matrix 1's outputs: exactly the CPU's
          for (size_t i = half; i < g.size(); ++i) {
            if (std::isnan(e[i])) {
              EXPECT_TRUE(std::isnan(g[i])) << "output " << o << " at " << i;
            } else {
              EXPECT_EQ(g[i], e[i]) << "output " << o << " at " << i;
            }
          }
          if (o == (op == "linalg_svdvals" ? 0u : 1u)) {  // matrix 0's singular values
            for (size_t i = 0; i < half; ++i) {
              EXPECT_NEAR(g[i], e[i], 1e-4 * std::max(1.0, std::fabs(e[i]))) << "at " << i;
            }
          }
        }
      }
    }
  }
}

TEST(CudaLinalgTest, ASingularMatrixFailsItsOpOnlyWithTheCpusError) {
  for (Device device : {kCpu, kGpu}) {
    Tensor a = Zeros(V{2, 3, 3}, DType::kFloat32, device).value();
    const auto inv = RunNow(PlanOp("linalg_inv", {a}, Attrs()));
    ASSERT_FALSE(inv.ok());
    EXPECT_EQ(ErrorKind(inv.status()), "LinAlgError");
    EXPECT_EQ(inv.status().message(),
              "linalg.inv: (Batch element 0): The diagonal element 1 is zero, the inversion "
              "could not be completed because the input matrix is singular.");
    // The device stays usable.
    const auto fine = RunNow(PlanOp("linalg_det", {Square(DType::kFloat32, 1, 3, false, device)},
                                    Attrs()));
    EXPECT_TRUE(fine.ok()) << fine.status();
  }
}

// ---- Matrix products through cuBLAS --------------------------------------------------------------

// A [sizes] matrix (batch) of multiples of 0.75 (exact products and sums in every float type at
// these sizes), `shift` apart from another.
Tensor Matrix(DType dtype, const V& sizes, double shift, Device device) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  Tensor v = Arange(Scalar(0.0), Scalar(static_cast<double>(numel)), Scalar(1.0), DType::kFloat64,
                    kCpu)
                 .value();
  // Values in [-6, 6) in steps of 0.75.
  v = RunNowSingle(PlanOp("remainder", {v}, Attrs().Set("other", Scalar(int64_t{16})))).value();
  v = RunNowSingle(PlanOp("mul", {v}, Attrs().Set("other", Scalar(0.75)))).value();
  v = RunNowSingle(PlanOp("sub", {v}, Attrs().Set("other", Scalar(6.0 - shift)))).value();
  return RunNowSingle(PlanTo(View(v, sizes).value(), dtype, device)).value();
}

TEST(CudaMatmulTest, ProductsMatchTheCpuBackend) {
  int compared = 0;
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const std::string dt = DTypeName(dtype);
    // op(a, b) on operands made on each device; `ta`/`tb`: pass the last two dims transposed.
    const auto product = [&](std::string op, V sa, V sb, bool ta, bool tb, Attrs attrs = {}) {
      return [=](Device device) -> absl::StatusOr<Tensor> {
        Tensor a = Matrix(dtype, sa, 0, device), b = Matrix(dtype, sb, 0.25, device);
        if (ta) a = Transpose(a, -1, -2).value();
        if (tb) b = Transpose(b, -1, -2).value();
        return RunNowSingle(PlanOp(op, {a, b}, attrs));
      };
    };
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const std::string t = std::string(ta ? " a.t()" : " a") + (tb ? " @ b.t() " : " @ b ");
        CompareOnBothDevices("mm" + t + dt,
                             product("mm", ta ? V{6, 4} : V{4, 6}, tb ? V{5, 6} : V{6, 5}, ta, tb),
                             false, &compared);
        CompareOnBothDevices(
            "bmm" + t + dt,
            product("bmm", ta ? V{3, 6, 4} : V{3, 4, 6}, tb ? V{3, 5, 6} : V{3, 6, 5}, ta, tb),
            false, &compared);
        CompareOnBothDevices("matmul broadcast" + t + dt,
                             product("matmul", ta ? V{2, 1, 6, 4} : V{2, 1, 4, 6},
                                     tb ? V{3, 5, 6} : V{3, 6, 5}, ta, tb),
                             false, &compared);
      }
    }
    CompareOnBothDevices("matmul 1-d @ 3-d " + dt, product("matmul", V{6}, V{2, 6, 5}, false, false),
                         false, &compared);
    CompareOnBothDevices("matmul 3-d @ 1-d " + dt, product("matmul", V{2, 4, 6}, V{6}, false, false),
                         false, &compared);
    CompareOnBothDevices("dot " + dt, product("dot", V{7}, V{7}, false, false), false, &compared);
    CompareOnBothDevices("mv " + dt, product("mv", V{4, 6}, V{6}, false, false), false, &compared);
    CompareOnBothDevices("outer " + dt, product("outer", V{4}, V{5}, false, false), false,
                         &compared);
    CompareOnBothDevices("mm with mismatched shapes " + dt,
                         product("mm", V{4, 6}, V{5, 6}, false, false), false, &compared);
    // A strided slice fits no cuBLAS layout: copied first.
    CompareOnBothDevices(
        "mm of a column slice " + dt,
        [&](Device device) -> absl::StatusOr<Tensor> {
          Tensor a = Matrix(dtype, V{4, 12}, 0, device);
          TENSORD_ASSIGN_OR_RETURN(Tensor every_other, Slice(a, 1, 0, 12, 2));
          return RunNowSingle(PlanOp("mm", {every_other, Matrix(dtype, V{6, 5}, 1, device)}, {}));
        },
        false, &compared);
    CompareOnBothDevices(
        "addmm with alpha and beta " + dt,
        [&](Device device) -> absl::StatusOr<Tensor> {
          return RunNowSingle(PlanOp(
              "addmm",
              {Matrix(dtype, V{5}, 0.5, device), Matrix(dtype, V{4, 6}, 0, device),
               Matrix(dtype, V{6, 5}, 0.25, device)},
              Attrs().Set("beta", Scalar(0.5)).Set("alpha", Scalar(2.0))));
        },
        false, &compared);
  }
  EXPECT_EQ(compared, 2 * 19);  // the mismatched shapes fail alike, not compared
}

TEST(CudaMatmulTest, IntegerProductsAreRefusedAsTorchsCudaRefusesThem) {
  Tensor a = Matrix(DType::kInt64, V{4, 6}, 0, kGpu), b = Matrix(DType::kInt64, V{6, 5}, 0, kGpu);
  absl::StatusOr<PlannedOp> planned = PlanOp("mm", {a, b}, {});
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.status().message(), "mm: \"addmm_cuda\" not implemented for 'Long'");
  // Half products run on the GPU (the CPU refuses them, as torch 1.13's CPU does).
  Tensor h = Matrix(DType::kFloat16, V{4, 6}, 0, kGpu), g = Matrix(DType::kFloat16, V{6, 5}, 0, kGpu);
  absl::StatusOr<Tensor> half = RunNowSingle(PlanOp("mm", {h, g}, {}));
  ASSERT_TRUE(half.ok()) << half.status();
  Tensor f = Matrix(DType::kFloat32, V{4, 6}, 0, kCpu), e = Matrix(DType::kFloat32, V{6, 5}, 0, kCpu);
  EXPECT_EQ(Values(*half), Values(RunNowSingle(PlanOp("mm", {f, e}, {})).value()));
}

// ---- Streams: kernels launched on CUDA streams, retired off the GPU's reports -------------------

absl::Status SynchronizeStream(Stream& stream) {
  absl::Notification done;
  absl::Status status;
  stream.Synchronize([&](absl::Status s) {
    status = s;
    done.Notify();
  });
  if (!done.WaitForNotificationWithTimeout(absl::Seconds(30))) {
    return absl::DeadlineExceededError("synchronize did not return");
  }
  return status;
}

StreamTask SleepTask(int64_t ms) {
  StreamTask task;
  task.label = "_sleep";
  task.kernel = [ms] { return Gpu().Sleep(ms); };
  return task;
}

StreamTask PlanTask(std::string label, absl::StatusOr<PlannedOp> plan) {
  return TaskFromPlan(std::move(label), plan.value());
}

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(CudaStreamTest, KernelsRunAsynchronouslyAndSynchronizeWaits) {
  Executor executor(2);
  auto stream = Stream::Create(&executor, 1, 1000);
  Tensor x = Full(V{1000}, Scalar(int64_t{0}), DType::kFloat32, kGpu).value();
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(stream->Enqueue(SleepTask(400)).ok());
  ASSERT_TRUE(stream->Enqueue(PlanTask("fill_", PlanFill(x, Scalar(1.0)))).ok());
  // The executor launches both at once and moves on: they are in flight, not waited for.
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(stream->pending(), 2);
  ASSERT_TRUE(SynchronizeStream(*stream).ok());
  EXPECT_GE(SecondsSince(start), 0.38);
  EXPECT_EQ(stream->pending(), 0);
  EXPECT_EQ(RowMajorBytes(x),
            RowMajorBytes(Full(V{1000}, Scalar(1.0), DType::kFloat32, kCpu).value()));
}

TEST(CudaStreamTest, ADivisionByZeroFailsItsOpAndWhatDependsOnItNotTheDevice) {
  Executor executor(2);
  auto stream = Stream::Create(&executor, 1, 1000);
  Tensor a = Full(V{1000}, Scalar(int64_t{7}), DType::kInt32, kGpu).value();
  Tensor b = Full(V{1000}, Scalar(int64_t{2}), DType::kInt32, kGpu).value();
  ASSERT_TRUE(FillInto(Narrow(b, 0, 500, 1).value(), Scalar(int64_t{0})).ok());
  // Through a stream: the check runs on the GPU, the op fails when it retires.
  absl::StatusOr<PlannedOp> div = PlanOp("floor_divide", {a, b}, {});
  ASSERT_TRUE(div.ok()) << div.status();
  Tensor quotient = div->outputs[0];
  ASSERT_TRUE(stream->Enqueue(TaskFromPlan("op 1 (floor_divide)", *div)).ok());
  absl::StatusOr<PlannedOp> dependent = PlanOp("mul", {quotient, a}, {});
  Tensor product = dependent->outputs[0];
  ASSERT_TRUE(stream->Enqueue(TaskFromPlan("op 2 (mul)", *dependent)).ok());
  absl::StatusOr<PlannedOp> unrelated = PlanOp("add", {a, a}, {});
  Tensor sum = unrelated->outputs[0];
  ASSERT_TRUE(stream->Enqueue(TaskFromPlan("op 3 (add)", *unrelated)).ok());
  absl::Status first = SynchronizeStream(*stream);
  EXPECT_EQ(first.code(), absl::StatusCode::kInvalidArgument) << first;  // RuntimeError's code
  EXPECT_EQ(first.message(), "op 1 (floor_divide): floor_divide: ZeroDivisionError");
  ASSERT_NE(quotient.storage()->poison(), nullptr);
  ASSERT_NE(product.storage()->poison(), nullptr);
  EXPECT_EQ(sum.storage()->poison(), nullptr);
  // The device is fine: later work runs and gives the right values.
  EXPECT_EQ(Values(sum), std::vector<double>(1000, 14.0));
  ASSERT_TRUE(stream->Enqueue(PlanTask("fill_", PlanFill(b, Scalar(int64_t{2})))).ok());
  absl::StatusOr<PlannedOp> again = PlanOp("floor_divide", {a, b}, {});
  Tensor ok = again->outputs[0];
  ASSERT_TRUE(stream->Enqueue(TaskFromPlan("op 4 (floor_divide)", *again)).ok());
  ASSERT_TRUE(SynchronizeStream(*stream).ok());
  EXPECT_EQ(Values(ok), std::vector<double>(1000, 3.0));
}

TEST(CudaStreamTest, EventsOrderTwoStreams) {
  Executor executor(2);
  auto a = Stream::Create(&executor, 1, 1000);
  auto b = Stream::Create(&executor, 2, 1000);
  Tensor x = Full(V{4096}, Scalar(int64_t{0}), DType::kInt32, kGpu).value();
  Tensor y = Full(V{4096}, Scalar(int64_t{0}), DType::kInt32, kGpu).value();
  auto event = std::make_shared<Event>();
  ASSERT_TRUE(a->Enqueue(SleepTask(300)).ok());
  ASSERT_TRUE(a->Enqueue(PlanTask("fill_", PlanFill(x, Scalar(int64_t{7})))).ok());
  ASSERT_TRUE(a->RecordEvent(event).ok());
  ASSERT_TRUE(b->WaitEvent(event).ok());
  ASSERT_TRUE(b->Enqueue(PlanTask("copy_", PlanCopyInto(y, x))).ok());
  ASSERT_TRUE(SynchronizeStream(*b).ok());
  EXPECT_TRUE(event->Query());
  EXPECT_EQ(RowMajorBytes(y),
            RowMajorBytes(Full(V{4096}, Scalar(int64_t{7}), DType::kInt32, kCpu).value()));
}

TEST(CudaStreamTest, ManyQueuedOpsAndACopyToTheHostKeepStreamOrder) {
  Executor executor(2);
  auto stream = Stream::Create(&executor, 1, 100000);
  Tensor x = Full(V{1 << 20}, Scalar(int64_t{0}), DType::kFloat32, kGpu).value();
  Tensor y = Full(V{1 << 20}, Scalar(int64_t{0}), DType::kFloat32, kGpu).value();
  Tensor host = Full(V{1 << 20}, Scalar(int64_t{-1}), DType::kFloat32, kCpu).value();
  for (int i = 1; i <= 500; ++i) {
    ASSERT_TRUE(stream->Enqueue(PlanTask("fill_", PlanFill(x, Scalar(int64_t{i}))), false).ok());
    ASSERT_TRUE(stream->Enqueue(PlanTask("copy_", PlanCopyInto(y, x)), false).ok());
  }
  // A copy to host memory behind them sees the last write (the lane orders it).
  ASSERT_TRUE(stream->Enqueue(PlanTask("copy_", PlanCopyInto(host, y)), false).ok());
  stream->Wake();
  ASSERT_TRUE(SynchronizeStream(*stream).ok());
  EXPECT_EQ(RowMajorBytes(host),
            RowMajorBytes(Full(V{1 << 20}, Scalar(int64_t{500}), DType::kFloat32, kCpu).value()));
}

TEST(CudaIndexingTest, ABadIndexFailsItsOpWithTheCpusErrorAndWritesNothing) {
  Executor executor(2);
  auto stream = Stream::Create(&executor, 1, 1000);
  Tensor self = Full(V{4, 6}, Scalar(1.0), DType::kFloat32, kGpu).value();
  Tensor src = Full(V{4, 6}, Scalar(5.0), DType::kFloat32, kGpu).value();
  absl::StatusOr<PlannedOp> bad =
      PlanOp("scatter_", {self, Indices({0, 9, 1}, {1, 3}, kGpu), src}, Attrs().Set("dim", int64_t{0}));
  ASSERT_TRUE(bad.ok()) << bad.status();
  ASSERT_TRUE(stream->Enqueue(TaskFromPlan("op 1 (scatter_)", *bad)).ok());
  const absl::Status status = SynchronizeStream(*stream);
  EXPECT_EQ(status.message(),
            "op 1 (scatter_): scatter_: index 9 is out of bounds for dimension 0 with size 4");
  // Nothing was written before the failure was found.
  EXPECT_EQ(Values(CloneContiguous(RunNowSingle(PlanTo(self, std::nullopt, kCpu)).value()).value()),
            std::vector<double>(24, 1.0));
}


// ---- ctc_loss (engine/cuda/loss_kernels.cu) --------------------------------------------------

// A tensor of `values` (as float64 on the CPU), viewed as `sizes`, in `dtype` on `device`.
Tensor Numbers(const std::vector<double>& values, const V& sizes, DType dtype, Device device) {
  Tensor t = Full(V{static_cast<int64_t>(values.size())}, Scalar(0.0), DType::kFloat64, kCpu)
                 .value();
  std::copy(values.begin(), values.end(), t.data_as<double>());
  return RunNowSingle(PlanTo(View(t, sizes).value(), dtype, device)).value();
}

TEST(CudaLossTest, CtcLossMatchesTheCpuBackend) {
  std::mt19937 rng(17);
  std::normal_distribution<double> normal;
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (bool concatenated : {false, true}) {
      for (int64_t batch : {1, 5, 300}) {
        const int64_t time = 40, classes = 7, width = 12;
        std::vector<double> logits;
        for (int64_t i = 0; i < time * batch * classes; ++i) logits.push_back(normal(rng));
        V labels, concat, in_lengths, tg_lengths;
        for (int64_t b = 0; b < batch; ++b) {
          in_lengths.push_back(1 + static_cast<int64_t>(rng() % time));
          tg_lengths.push_back(static_cast<int64_t>(rng() % (width + 1)));
          for (int64_t s = 0; s < width; ++s) {
            labels.push_back(1 + static_cast<int64_t>(rng() % (classes - 1)));
            if (s < tg_lengths.back()) concat.push_back(labels.back());
          }
        }
        for (const std::string reduction : {"none", "mean"}) {
          SCOPED_TRACE(absl::StrCat(DTypeName(dtype), concatenated ? " concatenated" : " padded",
                                    " batch ", batch, " ", reduction));
          const auto run = [&](Device device) {
            Tensor lp = RunNowSingle(PlanOp(
                "log_softmax", {Numbers(logits, V{time, batch, classes}, dtype, device)},
                Attrs().Set("dim", int64_t{2}))).value();
            Tensor targets = concatenated
                ? Indices(concat, V{static_cast<int64_t>(concat.size())}, device)
                : Indices(labels, V{batch, width}, device);
            return RunNowSingle(PlanOp(
                "ctc_loss", {lp, targets, Indices(in_lengths, V{batch}, device),
                             Indices(tg_lengths, V{batch}, device)},
                Attrs().Set("reduction", reduction).Set("zero_infinity", true)));
          };
          const absl::StatusOr<Tensor> cpu = run(kCpu), gpu = run(kGpu);
          ASSERT_TRUE(cpu.ok()) << cpu.status();
          ASSERT_TRUE(gpu.ok()) << gpu.status();
          EXPECT_EQ(gpu->device(), kGpu);
          EXPECT_EQ(V(gpu->sizes().begin(), gpu->sizes().end()),
                    V(cpu->sizes().begin(), cpu->sizes().end()));
          const std::vector<double> g = Values(*gpu), c = Values(*cpu);
          // float32: the CPU's rows use vectorized exp and log, the GPU's libdevice's
          const double rel = dtype == DType::kFloat32 ? 1e-4 : 1e-12;
          for (size_t i = 0; i < g.size(); ++i) {
            EXPECT_NEAR(g[i], c[i], rel * std::max(1.0, std::fabs(c[i]))) << i;
          }
        }
      }
    }
  }
}

TEST(CudaLossTest, CtcLossFailsOnBadLengthsAndLabelsWithTheCpusWords) {
  const auto run = [](Device device, const V& labels, const V& in_lengths) {
    Tensor lp = RunNowSingle(PlanOp("log_softmax", {Input(DType::kFloat32, 0.5, device)},
                                    Attrs().Set("dim", int64_t{1})))
                    .value();  // (4, 6): T = 4, unbatched, 6 classes
    return RunNow(PlanOp("ctc_loss", {lp, Indices(labels, V{3}, device),
                                      Indices(in_lengths, V{}, device),
                                      Indices({3}, V{}, device)},
                         Attrs()));
  };
  for (const auto& [labels, in_lengths] : std::vector<std::pair<V, V>>{
           {{1, 2, 3}, {5}}, {{1, 9, -2}, {4}}, {{1, 2, 3}, {-1}}}) {
    const auto cpu = run(kCpu, labels, in_lengths);
    const auto gpu = run(kGpu, labels, in_lengths);
    ASSERT_FALSE(cpu.ok());
    ASSERT_FALSE(gpu.ok());
    std::string words(cpu.status().message());
    words.replace(words.find("ctc_loss_cpu"), 12, "ctc_loss_gpu");
    EXPECT_EQ(gpu.status().message(), words);
    EXPECT_EQ(gpu.status().code(), cpu.status().code());
  }
  // The device goes on.
  EXPECT_TRUE(run(kGpu, {1, 2, 3}, {4}).ok());
}

}  // namespace
}  // namespace tensord::engine
