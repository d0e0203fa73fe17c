// GPU data-movement benchmark: the CUDA backend's copy kernels and host transfers, side by side
// in one run with the device's own copy engine (cudaMemcpy device to device, pinned host
// transfers) and with PyTorch on the same GPU (python3 with torch CUDA, when present).
//
//   build/bench/gpu_bench [--torch-python=python3] [--reps=N]
//
// GB/s counts bytes read plus bytes written for device-side copies (as the device bandwidth is
// quoted), and bytes moved once for host transfers. Medians of N timed repeats after a warm-up.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "engine/runtime/backend.h"
#include "engine/ops/copy_ops.h"
#include "engine/runtime/executor.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry.h"
#include "engine/runtime/stream.h"
#include "engine/cuda/cuda_backend.h"

namespace tensord::engine {
namespace {

using Clock = std::chrono::steady_clock;
using V = std::vector<int64_t>;
constexpr Device kGpu{DeviceType::kCUDA, 0};

double MedianSeconds(int reps, const std::function<void()>& fn) {
  fn();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, std::string(s.message()).c_str());
    std::exit(1);
  }
}

void CheckCuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// GB/s of torch's `body` (with x, y prepared by `setup`) counting `bytes`; negative if no torch.
double TorchGBs(const std::string& python, const std::string& setup, const std::string& body,
                double bytes, int reps) {
  const std::string script =
      "import torch,time\n"
      "if not torch.cuda.is_available(): raise SystemExit(1)\n" +
      setup + "\n" + body + "\ntorch.cuda.synchronize()\nts=[]\nfor _ in range(" +
      std::to_string(reps) + "):\n  a=time.perf_counter()\n  " + body +
      "\n  torch.cuda.synchronize()\n  ts.append(time.perf_counter()-a)\n"
      "ts.sort()\nprint(ts[len(ts)//2])\n";
  const std::string path = "/tmp/tensord_gpu_bench_torch.py";
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return -1;
  std::fputs(script.c_str(), f);
  std::fclose(f);
  FILE* pipe = popen((python + " " + path + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return -1;
  double seconds = -1;
  if (std::fscanf(pipe, "%lf", &seconds) != 1) seconds = -1;
  if (pclose(pipe) != 0 || seconds <= 0) return -1;
  return bytes / seconds / 1e9;
}

void Row(const char* what, double gbs, double baseline_gbs, const char* baseline,
         double torch_gbs) {
  std::printf("  %-46s %8.1f GB/s  %5.2fx %s", what, gbs, gbs / baseline_gbs, baseline);
  if (torch_gbs > 0) {
    std::printf("  %5.2fx torch (%.1f GB/s)", gbs / torch_gbs, torch_gbs);
  } else {
    std::printf("  (no torch figure)");
  }
  std::printf("\n");
}

int Main(int argc, char** argv) {
  std::string python = "python3";
  int reps = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--torch-python=", 0) == 0) python = a.substr(15);
    if (a.rfind("--reps=", 0) == 0) reps = std::max(1, std::atoi(a.c_str() + 7));
  }
  std::string why;
  const auto gpus = cuda::RegisterBackends(&why);
  if (gpus.empty()) {
    std::printf("gpu_bench: no GPU (%s): nothing measured\n", why.c_str());
    return 77;
  }
  std::printf("gpu_bench on %s (%s), median of %d\n", gpus[0].device.ToString().c_str(),
              gpus[0].name.c_str(), reps);
  Backend& gpu = *BackendFor(kGpu).value();
  const int64_t n = int64_t{1} << 28;  // 256M float32 = 1 GiB
  const int64_t bytes = n * 4;
  char* a = static_cast<char*>(gpu.allocator().Allocate(bytes).value());
  char* b = static_cast<char*>(gpu.allocator().Allocate(bytes).value());
  Check(gpu.Fill(V{n}, StridedRef{a, DType::kFloat32, V{1}}, Scalar(1.5)), "fill");

  // 1. Contiguous copy vs the device's memcpy.
  const double memcpy_s = MedianSeconds(reps, [&] {
    CheckCuda(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "memcpy");
    CheckCuda(cudaDeviceSynchronize(), "sync");
  });
  const double memcpy_gbs = 2.0 * bytes / memcpy_s / 1e9;
  std::printf("  %-46s %8.1f GB/s\n", "cudaMemcpy device to device, 1 GiB", memcpy_gbs);
  const V contiguous = {1};
  const double copy_s = MedianSeconds(reps, [&] {
    Check(gpu.Copy(V{n}, StridedRef{b, DType::kFloat32, contiguous},
                   StridedRef{a, DType::kFloat32, contiguous}),
          "copy");
  });
  const std::string setup_1d = "x=torch.ones(1<<28,device='cuda');y=torch.empty_like(x)";
  Row("copy_ 256M f32, contiguous", 2.0 * bytes / copy_s / 1e9, memcpy_gbs, "memcpy",
      TorchGBs(python, setup_1d, "y.copy_(x)", 2.0 * bytes, reps));

  // 2. contiguous() of a transposed 16384^2 float32.
  const int64_t side = 1 << 14;
  const double t_s = MedianSeconds(reps, [&] {
    Check(gpu.Copy(V{side, side}, StridedRef{b, DType::kFloat32, V{side, 1}},
                   StridedRef{a, DType::kFloat32, V{1, side}}),
          "transpose");
  });
  Row("contiguous() of transposed 16384^2 f32", 2.0 * bytes / t_s / 1e9, memcpy_gbs, "memcpy",
      TorchGBs(python, "x=torch.ones(16384,16384,device='cuda')", "y=x.t().contiguous()",
               2.0 * bytes, reps));

  // 3. float32 -> float16 conversion (reads 4 bytes, writes 2 per element).
  const double h_s = MedianSeconds(reps, [&] {
    Check(gpu.Copy(V{n}, StridedRef{b, DType::kFloat16, contiguous},
                   StridedRef{a, DType::kFloat32, contiguous}),
          "convert");
  });
  Row("to(float16) of 256M f32", 1.5 * bytes / h_s / 1e9, memcpy_gbs, "memcpy",
      TorchGBs(python, setup_1d, "z=x.half()", 1.5 * bytes, reps));

  // 3b. add of two 256M float32 tensors into a third (reads 8 bytes, writes 4 per element).
  char* c = static_cast<char*>(gpu.allocator().Allocate(bytes).value());
  const double add_s = MedianSeconds(reps, [&] {
    Check(gpu.Binary(BinaryOp::kAdd, V{n}, StridedRef{c, DType::kFloat32, contiguous},
                     StridedRef{a, DType::kFloat32, contiguous},
                     StridedRef{b, DType::kFloat32, contiguous}, Scalar(int64_t{1})),
          "add");
  });
  Row("add 256M f32 + 256M f32", 3.0 * bytes / add_s / 1e9, memcpy_gbs, "memcpy",
      TorchGBs(python, setup_1d + ";z=torch.empty_like(x)", "torch.add(x,y,out=z)", 3.0 * bytes,
               reps));
  const double adds_s = MedianSeconds(reps, [&] {
    const V zero = {0};
    Check(gpu.Binary(BinaryOp::kMul, V{n}, StridedRef{c, DType::kFloat32, contiguous},
                     StridedRef{a, DType::kFloat32, contiguous},
                     StridedRef{b, DType::kFloat32, zero}, Scalar(int64_t{1})),
          "mul");
  });
  Row("mul 256M f32 by a broadcast element", 2.0 * bytes / adds_s / 1e9, memcpy_gbs, "memcpy",
      TorchGBs(python, setup_1d + ";z=torch.empty_like(x)", "torch.mul(x,2.5,out=z)", 2.0 * bytes,
               reps));
  gpu.allocator().Deallocate(c, bytes);

  // 4. Host transfers of 1 GiB: tensord's (pageable host memory, as the server's buffers)
  //    against the copy engine from pinned memory.
  std::vector<char> host(static_cast<size_t>(bytes), 1);
  void* pinned = nullptr;
  CheckCuda(cudaMallocHost(&pinned, bytes), "pinned");
  const double pinned_h2d = MedianSeconds(reps, [&] {
    CheckCuda(cudaMemcpy(a, pinned, bytes, cudaMemcpyHostToDevice), "h2d");
  });
  const double pinned_d2h = MedianSeconds(reps, [&] {
    CheckCuda(cudaMemcpy(pinned, a, bytes, cudaMemcpyDeviceToHost), "d2h");
  });
  const double h2d = MedianSeconds(reps, [&] { Check(gpu.CopyFromHost(a, host.data(), bytes), "h2d"); });
  const double d2h = MedianSeconds(reps, [&] { Check(gpu.CopyToHost(host.data(), a, bytes), "d2h"); });
  const std::string setup_host = "x=torch.ones(1<<28);g=torch.ones(1<<28,device='cuda')";
  Row("host to device, 1 GiB (pageable)", bytes / h2d / 1e9, bytes / pinned_h2d / 1e9,
      "pinned memcpy", TorchGBs(python, setup_host, "y=x.to('cuda')", bytes, reps));
  Row("device to host, 1 GiB (pageable)", bytes / d2h / 1e9, bytes / pinned_d2h / 1e9,
      "pinned memcpy", TorchGBs(python, setup_host, "y=g.cpu()", bytes, reps));
  cudaFreeHost(pinned);

  // 5. 10,000 small ops queued on a stream, then one synchronize: the cost of a launch and its
  //    retirement per op, on the GPU and, side by side, on the CPU backend.
  auto queued_us_per_op = [&](Device device) {
    Executor executor(2);
    auto stream = Stream::Create(&executor, 1, 100000);
    Tensor x = Full(V{256}, Scalar(int64_t{0}), DType::kFloat32, device).value();
    return MedianSeconds(std::max(3, reps / 3), [&] {
             for (int i = 0; i < 10000; ++i) {
               PlannedOp plan = PlanFill(x, Scalar(1.0)).value();
               (void)stream->Enqueue(TaskFromPlan("fill_", plan), i % 64 == 63);
             }
             stream->Wake();
             absl::Notification done;
             stream->Synchronize([&](absl::Status) { done.Notify(); });
             done.WaitForNotification();
           }) * 1e6 / 10000;
  };
  const double gpu_us = queued_us_per_op(kGpu), cpu_us = queued_us_per_op(kCpu);
  std::printf("  %-46s %8.2f us/op  (CPU backend %.2f us/op)\n",
              "10,000 queued fill_ of 256 f32, then sync", gpu_us, cpu_us);
  gpu.allocator().Deallocate(a, bytes);
  gpu.allocator().Deallocate(b, bytes);

  // 6. Compute ops (planned and run as the server runs them, each call waited for), side by side
  //    with torch's same op on the same GPU.
  const auto run = [](const std::string& op, std::vector<Tensor> in, Attrs attrs = {}) {
    absl::StatusOr<Tensor> out = RunNowSingle(PlanOp(op, in, attrs));
    Check(out.status(), op.c_str());
    return *out;
  };
  const auto draw = [&](const V& sizes, DType dtype) {
    return run("randn", {}, Attrs().Set("size", sizes).Set("dtype", dtype).Set("device", kGpu));
  };
  {  // matmul 8192^2: TFLOP/s
    const int64_t m = 8192;
    const double flops = 2.0 * m * m * m;
    for (const auto& [dtype, name] : std::vector<std::pair<DType, std::string>>{
             {DType::kFloat16, "float16"}, {DType::kBFloat16, "bfloat16"},
             {DType::kFloat32, "float32"}}) {
      const Tensor x = draw(V{m, m}, dtype), y = draw(V{m, m}, dtype);
      const double s = MedianSeconds(reps, [&] { run("mm", {x, y}); });
      const double torch_per_s =  // calls per second
          TorchGBs(python, "x=torch.randn(8192,8192,device='cuda',dtype=torch." + name +
                               ");y=torch.randn(8192,8192,device='cuda',dtype=torch." + name + ")",
                   "z=x@y", 1e9, reps);
      std::printf("  %-46s %8.1f TFLOP/s", ("matmul 8192^2 " + name).c_str(), flops / s / 1e12);
      if (torch_per_s > 0) {
        const double torch_tflops = flops * torch_per_s / 1e12;
        std::printf("  %5.2fx torch (%.1f TFLOP/s)", (flops / s / 1e12) / torch_tflops,
                    torch_tflops);
      } else {
        std::printf("  (no torch figure)");
      }
      std::printf("\n");
    }
  }
  {  // sum over all of 256M float32: GB/s read, against memcpy's read half
    const Tensor x = draw(V{n}, DType::kFloat32);
    const double s = MedianSeconds(reps, [&] { run("sum", {x}); });
    Row("sum of all 256M f32 (bytes read)", bytes / s / 1e9, memcpy_gbs / 2, "memcpy read",
        TorchGBs(python, "x=torch.randn(1<<28,device='cuda')", "y=x.sum()", bytes, reps));
  }
  {  // softmax over the rows of 8192^2 float32
    const Tensor x = draw(V{8192, 8192}, DType::kFloat32);
    const double moved = 2.0 * 8192 * 8192 * 4;
    const double s = MedianSeconds(reps, [&] { run("softmax", {x}, Attrs().Set("dim", int64_t{1})); });
    Row("softmax over rows of 8192^2 f32", moved / s / 1e9, memcpy_gbs, "memcpy",
        TorchGBs(python, "x=torch.randn(8192,8192,device='cuda')", "y=x.softmax(1)", moved, reps));
  }
  {  // index_select and gather of 64M elements
    const Tensor x = draw(V{65536, 1024}, DType::kFloat32);
    const Tensor rows = run("randint", {}, Attrs().Set("size", V{65536}).Set("high", int64_t{65536})
                                               .Set("device", kGpu));
    const double moved = 2.0 * 65536 * 1024 * 4;
    const double sel_s = MedianSeconds(reps, [&] {
      run("index_select", {x, rows}, Attrs().Set("dim", int64_t{0}));
    });
    Row("index_select of 64M f32 (rows)", moved / sel_s / 1e9, memcpy_gbs, "memcpy",
        TorchGBs(python, "x=torch.randn(65536,1024,device='cuda');"
                         "i=torch.randint(0,65536,(65536,),device='cuda')",
                 "y=x.index_select(0,i)", moved, reps));
    const Tensor cols = run("randint", {}, Attrs().Set("size", V{65536, 1024}).Set("high", int64_t{1024})
                                               .Set("device", kGpu));
    const double gathered = moved + 65536.0 * 1024 * 8;  // and the int64 indices
    const double g_s = MedianSeconds(reps, [&] {
      run("gather", {x, cols}, Attrs().Set("dim", int64_t{1}));
    });
    Row("gather of 64M f32 (along rows)", gathered / g_s / 1e9, memcpy_gbs, "memcpy",
        TorchGBs(python, "x=torch.randn(65536,1024,device='cuda');"
                         "i=torch.randint(0,1024,(65536,1024),device='cuda')",
                 "y=x.gather(1,i)", gathered, reps));
  }
  return 0;
}

}  // namespace
}  // namespace tensord::engine

int main(int argc, char** argv) { return tensord::engine::Main(argc, argv); }
