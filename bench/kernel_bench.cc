// Server-side kernel times of compute ops: each case is planned and run through the op registry
// exactly as the server does (allocation from the buffer pool included), on inputs filled by
// the random ops. Prints one line per case: "<name> <median seconds>". bench/compute_bench.py
// runs it and puts the figures side by side with torch's for the same cases.
//
//   build/bench/kernel_bench [--reps=N] [--only=substring]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/ops/op_registry.h"
#include "engine/ops/planned_op.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

using Clock = std::chrono::steady_clock;

template <typename T>
T Check(absl::StatusOr<T> s, const std::string& what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s failed: %s\n", what.c_str(), s.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(s);
}

Tensor Rand(std::vector<int64_t> size) {
  return Check(RunNowSingle(PlanOp("rand", {}, Attrs().Set("size", size).Set("seed", int64_t{1}))),
               "rand");
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  std::string name;
  std::function<void()> run;
  int reps;
};

}  // namespace
}  // namespace tensord::engine

int main(int argc, char** argv) {
  using namespace tensord::engine;
  int reps = 0;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--reps=", 7) == 0) reps = std::atoi(argv[i] + 7);
    if (std::strncmp(argv[i], "--only=", 7) == 0) only = argv[i] + 7;
  }
  std::vector<Case> cases;
  const auto op = [](const char* name, std::vector<Tensor> in, Attrs attrs = Attrs()) {
    return [name, in = std::move(in), attrs = std::move(attrs)]() {
      Check(RunNow(PlanOp(name, in, attrs)), name);
    };
  };
  for (int64_t n : {1024, 8192}) {
    const std::string tag = n == 1024 ? "1M" : "64M";
    const int r = n == 1024 ? 200 : 7;
    Tensor a = Rand({n, n}), b = Rand({n, n});
    Tensor at = Check(Transpose(a, 0, 1), "t"), bt = Check(Transpose(b, 0, 1), "t");
    for (const char* name : {"add", "mul"}) {
      cases.push_back({std::string(name) + "_" + tag + "_contiguous", op(name, {a, b}), r});
      cases.push_back({std::string(name) + "_" + tag + "_transposed", op(name, {at, bt}), r});
      cases.push_back({std::string(name) + "_" + tag + "_mixed", op(name, {a, bt}), r});
    }
    if (n == 8192) {
      cases.push_back({"sum_64M_all", op("sum", {a}), r});
      cases.push_back({"mean_64M_all", op("mean", {a}), r});
      cases.push_back({"max_64M_all", op("max", {a}), r});
      cases.push_back({"sum_64M_dim0", op("sum", {a}, Attrs().Set("dim", int64_t{0})), r});
      cases.push_back({"sum_64M_dim1", op("sum", {a}, Attrs().Set("dim", int64_t{1})), r});
      cases.push_back({"mean_64M_dim1", op("mean", {a}, Attrs().Set("dim", int64_t{1})), r});
      cases.push_back({"max_64M_dim1", op("max.dim", {a}, Attrs().Set("dim", int64_t{1})), r});
      cases.push_back({"max_64M_dim0", op("max.dim", {a}, Attrs().Set("dim", int64_t{0})), r});
      // A tall matrix summed over its rows: the rows split over the threads.
      Tensor tall = Rand({1 << 20, 64});
      cases.push_back({"sum_1Mx64_dim0", op("sum", {tall}, Attrs().Set("dim", int64_t{0})), r});
    }
  }
  for (int64_t n : {1024, 4096}) {
    Tensor a = Rand({n, n}), b = Rand({n, n});
    cases.push_back({"matmul_" + std::to_string(n), op("matmul", {a, b}), n == 1024 ? 20 : 3});
    Tensor at = Check(Transpose(a, 0, 1), "t");
    cases.push_back({"matmul_" + std::to_string(n) + "_transposed_a", op("matmul", {at, b}),
                     n == 1024 ? 20 : 3});
  }
  {
    // Float32 activations on 4M elements (vectorized math) and pow with a number exponent.
    Tensor x = Rand({4096, 1024});
    for (const char* name : {"exp", "sigmoid", "tanh", "erf", "gelu", "silu"}) {
      cases.push_back({std::string(name) + "_4M", op(name, {x}), 50});
    }
    cases.push_back({"pow2_4M", op("pow", {x}, Attrs().Set("other", int64_t{2})), 50});
  }
  {
    // Issue 17's selection and contraction ops at the sizes bench/api_bench.py uses.
    Tensor rows = Rand({1000, 1000}), flat = Rand({1 << 20});
    cases.push_back({"sort_1000x1000_rows", op("sort", {rows}, Attrs().Set("dim", int64_t{1})),
                     20});
    cases.push_back({"sort_1M", op("sort", {flat}), 20});
    cases.push_back({"topk10_1000x1000_rows",
                     op("topk", {rows}, Attrs().Set("k", int64_t{10}).Set("dim", int64_t{1})),
                     50});
    Tensor b1 = Rand({64, 128, 128}), b2 = Rand({64, 128, 128});
    cases.push_back({"bmm_64x128x128", op("bmm", {b1, b2}), 50});
    // einsum as attention uses it: scores q k^T per head, then the weighted sum of v.
    Tensor q = Rand({8, 8, 256, 64}), k = Rand({8, 8, 256, 64});
    const Attrs scores = Attrs().Set("equation", std::string("bhqd,bhkd->bhqk"));
    cases.push_back({"einsum_bhqd_bhkd_8x8x256x64", op("einsum", {q, k}, scores), 20});
    Tensor w = Rand({8, 8, 256, 256});
    const Attrs mix = Attrs().Set("equation", std::string("bhqk,bhkd->bqhd"));
    cases.push_back({"einsum_bhqk_bhkd_to_bqhd", op("einsum", {w, q}, mix), 20});
    cases.push_back({"cat_4x_1000x1000_dim1", op("cat", {rows, rows, rows, rows},
                                                 Attrs().Set("dim", int64_t{1})), 20});
    // A well-conditioned system: rand + 64 on the diagonal.
    Tensor sys = Rand({1024, 1024}), rhs = Rand({1024, 64});
    Check(RunNow(PlanOp("add_", {Check(Diagonal(sys, 0, 0, 1), "diagonal")},
                        Attrs().Set("other", int64_t{64}))),
          "add_");
    cases.push_back({"linalg_solve_1024_64rhs", op("linalg_solve", {sys, rhs}), 10});
    // Lookups and scattered reductions: a binary search per value, quantiles of rows, and the
    // largest of a million values per one of a thousand bins.
    Tensor bounds = Check(RunNow(PlanOp("sort", {Rand({100000})}, Attrs())), "sort").at(0);
    cases.push_back({"searchsorted_1M_in_100k", op("searchsorted", {bounds, flat, Tensor()}), 20});
    cases.push_back({"quantile_1000x1000_rows",
                     op("quantile", {rows},
                        Attrs().Set("q", Scalar(0.5)).Set("dim", int64_t{1})),
                     20});
    const Attrs bins = Attrs()
                           .Set("low", int64_t{0})
                           .Set("high", int64_t{1000})
                           .Set("size", std::vector<int64_t>{1 << 20})
                           .Set("seed", int64_t{3});
    Tensor where = Check(RunNowSingle(PlanOp("randint", {}, bins)), "randint");
    Tensor into = Check(RunNowSingle(PlanOp("zeros", {}, Attrs().Set(
                                                          "size", std::vector<int64_t>{1000}))),
                        "zeros");
    cases.push_back({"scatter_reduce_amax_1M_to_1000",
                     op("scatter_reduce", {into, where, flat},
                        Attrs().Set("dim", int64_t{0}).Set("reduce", std::string("amax"))),
                     20});
    // Sizes that depend on the data: the distinct values of a million draws from a thousand
    // (sort, runs, counts) and their histogram; and the distances of two point sets.
    cases.push_back({"unique_counts_1M_of_1000",
                     op("unique", {where}, Attrs().Set("return_counts", true)), 10});
    cases.push_back({"bincount_1M_of_1000", op("bincount", {where, Tensor()}), 20});
    // A million picks from a table of a thousand numbers (a lookup table, a palette).
    Tensor table = Rand({1000});
    cases.push_back({"index_select_1M_of_1000",
                     op("index_select", {table, where}, Attrs().Set("dim", int64_t{0})), 20});
    cases.push_back({"take_1M_of_1000", op("take", {table, where}), 20});
    Tensor points = Rand({2048, 64}), centers = Rand({512, 64});
    cases.push_back({"cdist_2048x512x64", op("cdist", {points, centers}), 20});
  }
  {
    // Classification losses against the log_softmax they fuse (4096 rows of 1000 classes).
    Tensor logits = Rand({4096, 1000});
    const Attrs draw = Attrs()
                           .Set("low", int64_t{0})
                           .Set("high", int64_t{1000})
                           .Set("size", std::vector<int64_t>{4096})
                           .Set("seed", int64_t{2});
    Tensor labels = Check(RunNowSingle(PlanOp("randint", {}, draw)), "randint");
    cases.push_back({"log_softmax_4096x1000",
                     op("log_softmax", {logits}, Attrs().Set("dim", int64_t{1})), 50});
    cases.push_back(
        {"cross_entropy_4096x1000", op("cross_entropy", {logits, labels, Tensor()}), 50});
    Tensor act = Rand({4096, 1024});
    cases.push_back({"layer_norm_4096x1024",
                     op("layer_norm", {act, Tensor(), Tensor()},
                        Attrs().Set("normalized_shape", std::vector<int64_t>{1024})),
                     50});
  }
  {
    // A ResNet-style 3x3 convolution (torch uses oneDNN for it).
    Tensor img = Rand({8, 64, 56, 56}), ker = Rand({64, 64, 3, 3});
    cases.push_back({"conv2d_8x64x56x56_3x3",
                     op("conv2d", {img, ker, Tensor()}, Attrs().Set("padding", int64_t{1})), 20});
    // A video clip's 3x3x3 convolution (torch uses oneDNN for it too).
    Tensor clip = Rand({2, 16, 16, 56, 56}), ker3d = Rand({32, 16, 3, 3, 3});
    cases.push_back({"conv3d_2x16x16x56x56_3x3x3",
                     op("conv3d", {clip, ker3d, Tensor()}, Attrs().Set("padding", int64_t{1})),
                     10});
  }
  {
    // Pools and resampling of ResNet-sized maps (8 x 64 x 112 x 112).
    Tensor maps = Rand({8, 64, 112, 112});
    const Attrs window = Attrs()
                             .Set("kernel_size", std::vector<int64_t>{3})
                             .Set("stride", std::vector<int64_t>{2})
                             .Set("padding", std::vector<int64_t>{1});
    cases.push_back({"max_pool2d_3_2_1", op("max_pool2d", {maps}, window), 10});
    cases.push_back(
        {"max_pool2d_with_indices_3_2_1", op("max_pool2d_with_indices", {maps}, window), 10});
    cases.push_back({"adaptive_avg_pool2d_to_1",
                     op("adaptive_avg_pool2d", {maps},
                        Attrs().Set("output_size", std::vector<int64_t>{1})),
                     20});
    Tensor two = Check(Narrow(maps, 0, 0, 2), "narrow");
    cases.push_back({"upsample_bilinear_x2_2x64x112x112",
                     op("upsample", {two},
                        Attrs()
                            .Set("output_size", std::vector<int64_t>{224, 224})
                            .Set("mode", std::string("bilinear"))),
                     10});
    cases.push_back({"upsample_bicubic_x2_2x64x112x112",
                     op("upsample", {two},
                        Attrs()
                            .Set("output_size", std::vector<int64_t>{224, 224})
                            .Set("mode", std::string("bicubic"))),
                     10});
  }
  {
    // Backward pieces of bench/train_bench.py's CNN (batch 32): ReLU's gradient, a where with a
    // number operand, and max_pool2d's, the gradient scattered along each flattened plane.
    Tensor g = Rand({32, 16, 32, 32});
    Tensor mask = Check(RunNowSingle(PlanOp("le", {Rand({32, 16, 32, 32})},
                                            Attrs().Set("other", Scalar(0.5)))),
                        "le");
    cases.push_back({"relu_backward_where_512K",
                     op("where", {mask, g}, Attrs().Set("other", Scalar(0.0))), 50});
    const Attrs positions = Attrs()
                                .Set("low", int64_t{0})
                                .Set("high", int64_t{1024})
                                .Set("size", std::vector<int64_t>{32, 16, 256})
                                .Set("seed", int64_t{5});
    Tensor at = Check(RunNowSingle(PlanOp("randint", {}, positions)), "randint");
    Tensor plane = Check(RunNowSingle(PlanOp("zeros", {}, Attrs().Set(
                                                            "size", std::vector<int64_t>{32, 16, 1024}))),
                         "zeros");
    cases.push_back({"maxpool_backward_scatter_add_128K",
                     op("scatter_add_", {plane, at, Rand({32, 16, 256})},
                        Attrs().Set("dim", int64_t{2})),
                     50});
  }
  {
    // Per-op overhead: add_ of a number on 16 elements, planned and run (no RPC, no stream).
    Tensor x = Rand({16});
    cases.push_back({"small_add_inplace_number", op("add_", {x}, Attrs().Set("other", int64_t{1})),
                     20000});
  }
  for (Case& c : cases) {
    if (!only.empty() && c.name.find(only) == std::string::npos) continue;
    const int n = reps > 0 ? reps : c.reps;
    c.run();  // warm-up (pool buffers, BLAS threads)
    std::vector<double> t;
    for (int i = 0; i < n; ++i) {
      const auto t0 = Clock::now();
      c.run();
      t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::printf("%s %.9f\n", c.name.c_str(), Median(t));
    std::fflush(stdout);
  }
  return 0;
}
