// Engine benchmark: nanoseconds per view op, and the bandwidth of contiguous() on a transposed
// 4096x4096 float32 tensor side by side with memcpy of the same bytes and with PyTorch's
// x.t().contiguous(), all measured in this one run.
//
//   build/bench/engine_bench [--torch-python=/usr/bin/python3] [--reps=N]
//
// GB/s counts the tensor's bytes once (64 MiB for 4096x4096 float32) for every contender.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/runtime/allocator.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry.h"
#include "engine/runtime/thread_pool.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

using Clock = std::chrono::steady_clock;
using V = std::vector<int64_t>;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename T>
const T& Check(const absl::StatusOr<T>& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s failed: %s\n", what, s.status().ToString().c_str());
    std::exit(1);
  }
  return *s;
}

// ns per call of fn, best of 5 rounds of `iters` calls.
double NsPerCall(int64_t iters, const std::function<void()>& fn) {
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    auto t0 = Clock::now();
    for (int64_t i = 0; i < iters; ++i) fn();
    best = std::min(best, Seconds(t0, Clock::now()) * 1e9 / static_cast<double>(iters));
  }
  return best;
}

void BenchViewOps() {
  Tensor base = Check(Empty(V{8, 16, 32, 4}, DType::kFloat32), "empty");
  Tensor flat = Check(View(base, V{-1}), "view");
  std::vector<IndexItem> index = {IndexItem::Integer(1), IndexItem::MakeSlice(2, 12, 3),
                                  IndexItem::None(), IndexItem::Ellipsis()};
  struct Row {
    const char* name;
    std::function<absl::Status()> fn;
  };
  const std::vector<Row> rows = {
      {"view(16384)", [&] { return View(base, V{16384}).status(); }},
      {"reshape(8,-1) [view]", [&] { return Reshape(base, V{8, -1}).status(); }},
      {"transpose(0,3)", [&] { return Transpose(base, 0, 3).status(); }},
      {"permute(3,1,0,2)", [&] { return Permute(base, V{3, 1, 0, 2}).status(); }},
      {"expand(2,8,16,32,4)", [&] { return Expand(base, V{2, 8, 16, 32, 4}).status(); }},
      {"unsqueeze(1)", [&] { return Unsqueeze(base, 1).status(); }},
      {"squeeze()", [&] { return Squeeze(base).status(); }},
      {"select(1,5)", [&] { return Select(base, 1, 5).status(); }},
      {"slice(2,1,30,2)", [&] { return Slice(base, 2, 1, 30, 2).status(); }},
      {"narrow(0,2,4)", [&] { return Narrow(base, 0, 2, 4).status(); }},
      {"index[1,2:12:3,None,...]", [&] { return Index(base, index).status(); }},
      {"diagonal(0,1,2)", [&] { return Diagonal(base, 0, 1, 2).status(); }},
      {"unfold(0,4,2)", [&] { return Unfold(flat, 0, 4, 2).status(); }},
      {"as_strided", [&] { return AsStrided(base, V{16, 16}, V{1, 16}, 3).status(); }},
      {"movedim(0,-1)", [&] { return Movedim(base, V{0}, V{-1}).status(); }},
      {"chunk(4,1) [4 outputs]", [&] { return Chunk(base, 4, 1).status(); }},
      {"contiguous() [already]", [&] { return Contiguous(base).status(); }},
  };
  std::printf("View ops (engine API, one thread; best of 5 rounds of 200000 calls):\n");
  for (const Row& row : rows) {
    if (absl::Status s = row.fn(); !s.ok()) {
      std::fprintf(stderr, "%s: %s\n", row.name, s.ToString().c_str());
      std::exit(1);
    }
    std::printf("  %-28s %8.1f ns\n", row.name, NsPerCall(200000, [&] { (void)row.fn(); }));
  }
  // Through the registry, as the server dispatches: name lookup + typed attributes.
  Attrs attrs;
  attrs.Set("dim0", int64_t{0}).Set("dim1", int64_t{3});
  const std::vector<Tensor> inputs = {base};
  const double registry_ns = NsPerCall(200000, [&] { (void)PlanOp("transpose", inputs, attrs); });
  std::printf("  %-28s %8.1f ns\n", "transpose via op registry", registry_ns);
}

// Seconds for `python -c script`'s printed median, or a negative value if torch is missing.
double TorchMedianSeconds(const std::string& python, const std::string& script) {
  const std::string cmd = python + " -c '" + script + "' 2>/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return -1;
  double value = -1;
  if (std::fscanf(pipe, "%lf", &value) != 1) value = -1;
  pclose(pipe);
  return value;
}

void BenchContiguous(const std::string& python, int reps) {
  constexpr int64_t kN = 4096;
  const double bytes = static_cast<double>(kN * kN * 4);
  Tensor x = Check(Arange(Scalar(0.0), Scalar(double(kN * kN)), Scalar(1.0), DType::kFloat32),
                   "arange");
  Tensor xt = Check(Transpose(Check(View(x, V{kN, kN}), "view"), 0, 1), "transpose");

  // First call: the output's pages are fresh from the operating system.
  auto c0 = Clock::now();
  {
    Tensor first = Check(Contiguous(xt), "contiguous");
  }
  const double cold = Seconds(c0, Clock::now());

  std::vector<double> ours;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    Tensor out = Check(Contiguous(xt), "contiguous");
    ours.push_back(Seconds(t0, Clock::now()));
  }
  // Spot-check the result once: out[i][j] == x[j][i].
  Tensor out = Check(Contiguous(xt), "contiguous");
  const float* o = out.data_as<float>();
  for (int64_t i : {int64_t{0}, int64_t{17}, kN - 1}) {
    for (int64_t j : {int64_t{0}, int64_t{5}, kN - 1}) {
      if (o[i * kN + j] != static_cast<float>(j * kN + i)) {
        std::fprintf(stderr, "contiguous() produced a wrong element at %ld,%ld\n", long(i),
                     long(j));
        std::exit(1);
      }
    }
  }

  std::vector<char> src(static_cast<size_t>(bytes)), dst(static_cast<size_t>(bytes));
  std::memset(src.data(), 1, src.size());
  std::memset(dst.data(), 2, dst.size());  // fault the destination in, as the pool has
  std::vector<double> copies;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    std::memcpy(dst.data(), src.data(), src.size());
    copies.push_back(Seconds(t0, Clock::now()));
  }

  const std::string timing = "import torch,time\n"
                             "x=torch.arange(4096*4096,dtype=torch.float32).view(4096,4096)\n"
                             "ts=[]\n"
                             "for i in range(" + std::to_string(reps + 2) + "):\n"
                             "  t0=time.perf_counter(); y=BODY; ts.append(time.perf_counter()-t0)\n"
                             "ts=sorted(ts[2:]); print(ts[len(ts)//2])\n";
  auto with_body = [&](const std::string& body) {
    std::string s = timing;
    s.replace(s.find("BODY"), 4, body);
    return s;
  };
  const double torch_t = TorchMedianSeconds(python, with_body("x.t().contiguous()"));
  std::string prealloc = with_body("out.copy_(x.t())");
  prealloc.insert(prealloc.find("ts=[]"), "out=torch.empty(4096,4096)\nout.copy_(x)\n");
  const double torch_copy = TorchMedianSeconds(python, prealloc);

  const double ours_gbs = bytes / Median(ours) / 1e9;
  const double memcpy_gbs = bytes / Median(copies) / 1e9;
  std::printf("\ncontiguous() of a transposed 4096x4096 float32 (64 MiB), median of %d, "
              "%d threads:\n", reps, ParallelismDegree());
  std::printf("  %-44s %8.2f GB/s\n", "memcpy, same bytes (1 thread)", memcpy_gbs);
  std::printf("  %-44s %8.2f GB/s  = %5.1f%% of memcpy\n", "tensord contiguous() (pooled output)",
              ours_gbs, 100 * ours_gbs / memcpy_gbs);
  std::printf("  %-44s %8.2f GB/s  = %5.1f%% of memcpy\n",
              "tensord contiguous(), first call (fresh pages)", bytes / cold / 1e9,
              100 * bytes / cold / 1e9 / memcpy_gbs);
  if (torch_t > 0) {
    const double torch_gbs = bytes / torch_t / 1e9;
    std::printf("  %-44s %8.2f GB/s  = %5.1f%% of memcpy; tensord is %.1fx torch\n",
                "torch x.t().contiguous()", torch_gbs, 100 * torch_gbs / memcpy_gbs,
                ours_gbs / torch_gbs);
  } else {
    std::printf("  torch not found at %s: no torch figures\n", python.c_str());
  }
  if (torch_copy > 0) {
    const double g = bytes / torch_copy / 1e9;
    std::printf("  %-44s %8.2f GB/s  = %5.1f%% of memcpy; tensord is %.1fx torch\n",
                "torch out.copy_(x.t()) (preallocated out)", g, 100 * g / memcpy_gbs,
                ours_gbs / g);
  }
}

}  // namespace
}  // namespace tensord::engine

int main(int argc, char** argv) {
  std::string python = "/usr/bin/python3";
  int reps = 15;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--torch-python=", 0) == 0) python = arg.substr(15);
    if (arg.rfind("--reps=", 0) == 0) reps = std::max(3, std::atoi(arg.c_str() + 7));
  }
  tensord::engine::BenchViewOps();
  tensord::engine::BenchContiguous(python, reps);
  return 0;
}
