// ctc_loss's shared pieces (engine/kernels/ctc.h) and the CPU kernel, on the host: the loss
// against its definition (the sum over every path of T labels that collapses to the target),
// and the length checks, which the CUDA kernel shares, against what they must guarantee (no
// offset lets a kernel read past the targets, torch's order of errors).
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/cpu/loss_kernels.h"
#include "engine/kernels/ctc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tensord::engine {
namespace {

// The probability of `target` by definition: every path over `classes` labels of length
// `steps`, collapsed (repeats merged, then blanks dropped), summed where it equals target.
double DefinitionProbability(const std::vector<double>& probs, int steps, int classes,
                             int blank, const std::vector<int64_t>& target) {
  double total = 0;
  std::vector<int> path(static_cast<size_t>(steps), 0);
  while (true) {
    std::vector<int64_t> collapsed;
    int last = -1;
    for (int label : path) {
      if (label != last && label != blank) collapsed.push_back(label);
      last = label;
    }
    if (collapsed == target) {
      double p = 1;
      for (int t = 0; t < steps; ++t) p *= probs[static_cast<size_t>(t * classes + path[t])];
      total += p;
    }
    int i = 0;  // next path, as an odometer
    while (i < steps && ++path[static_cast<size_t>(i)] == classes) path[static_cast<size_t>(i++)] = 0;
    if (i == steps) break;
  }
  return total;
}

TEST(CtcTest, CpuLossIsTheDefinitionsNegativeLogProbability) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 60; ++round) {
    const int steps = 1 + static_cast<int>(rng() % 5), classes = 2 + static_cast<int>(rng() % 2);
    const int blank = static_cast<int>(rng() % classes);
    const int64_t length = static_cast<int64_t>(rng() % 4);
    std::vector<int64_t> target;
    for (int64_t i = 0; i < length; ++i) {
      int64_t label = static_cast<int64_t>(rng() % (classes - 1));
      target.push_back(label >= blank ? label + 1 : label);
    }
    std::vector<double> probs, log_probs;
    for (int t = 0; t < steps; ++t) {
      double sum = 0;
      std::vector<double> row;
      for (int c = 0; c < classes; ++c) row.push_back(0.1 + std::uniform_real_distribution<>(0, 1)(rng));
      for (double v : row) sum += v;
      for (double v : row) probs.push_back(v / sum), log_probs.push_back(std::log(v / sum));
    }
    const int64_t input_length = steps, padded = std::max<int64_t>(length, 1);
    std::vector<int64_t> targets(static_cast<size_t>(padded), 0);
    std::copy(target.begin(), target.end(), targets.begin());
    double nll = 0;
    CtcLossCall call;
    call.log_probs = reinterpret_cast<const char*>(log_probs.data());
    call.dtype = DType::kFloat64;
    call.time = steps, call.batch = 1, call.classes = classes;
    call.stride_t = classes, call.stride_b = 0, call.stride_c = 1;
    call.targets = targets.data();
    call.width = padded;
    call.input_lengths = &input_length;
    call.target_lengths = &length;
    call.blank = blank;
    call.out = reinterpret_cast<char*>(&nll);
    ASSERT_TRUE(cpu::CtcLoss(call).ok());
    const double want = DefinitionProbability(probs, steps, classes, blank, target);
    if (want == 0) {
      EXPECT_EQ(nll, INFINITY) << "round " << round;
    } else {
      EXPECT_NEAR(nll, -std::log(want), 1e-12) << "round " << round;
    }
  }
}

TEST(CtcTest, OffsetsNeverLetAKernelReadPastTheTargets) {
  std::mt19937_64 rng(11);
  const int64_t extremes[] = {0, 1, 3, -1, INT64_MAX, INT64_MIN, INT64_MAX / 2 + 1};
  for (int round = 0; round < 4000; ++round) {
    CtcLossCall c;
    c.batch = 1 + static_cast<int64_t>(rng() % 6);
    c.time = static_cast<int64_t>(rng() % 5);
    c.concatenated = rng() % 2 == 0;
    c.width = static_cast<int64_t>(rng() % 12);
    std::vector<int64_t> il, tl;
    for (int64_t b = 0; b < c.batch; ++b) {
      const bool extreme = rng() % 8 == 0;
      il.push_back(extreme ? extremes[rng() % 7] : static_cast<int64_t>(rng() % 6));
      tl.push_back(extreme ? extremes[rng() % 7] : static_cast<int64_t>(rng() % 5));
    }
    c.input_lengths = il.data();
    c.target_lengths = tl.data();
    std::vector<int64_t> offsets(static_cast<size_t>(c.batch));
    KernelError error;
    CtcTargetOffsets(c, offsets.data(), &error);
    int64_t sum = 0;
    bool fine = true;
    for (int64_t b = 0; b < c.batch; ++b) {
      if (offsets[b] >= 0) {
        EXPECT_GE(tl[b], 0);
        // every label read lies inside the targets (padded: inside the element's own row)
        const int64_t labels = c.concatenated ? c.width : c.batch * c.width;
        EXPECT_LE(tl[b], labels - offsets[b]) << "round " << round;
        if (!c.concatenated) EXPECT_LE(tl[b], c.width) << "round " << round;
        EXPECT_GE(il[b], 0);
        EXPECT_LE(il[b], c.time);
      } else {
        fine = false;
      }
      if (tl[b] < 0 || tl[b] > c.width || il[b] < 0 || il[b] > c.time) fine = false;
      if (fine) sum += tl[b];
    }
    if (error.code == KernelError::kNone) {
      EXPECT_TRUE(fine) << "round " << round;
      if (c.concatenated) EXPECT_EQ(sum, c.width) << "round " << round;
    } else {
      EXPECT_EQ(error.code, KernelError::kCtc);
    }
  }
}

TEST(CtcTest, ErrorsComeInTorchsOrderWithTorchsWords) {
  CtcLossCall c;
  c.batch = 3, c.time = 5, c.width = 4;
  std::vector<int64_t> il = {6, 5, 7}, tl = {2, 6, 5}, offsets(3);
  c.input_lengths = il.data();
  c.target_lengths = tl.data();
  KernelError error;
  CtcTargetOffsets(c, offsets.data(), &error);  // padded: the longest target first
  EXPECT_EQ(CtcLossFailure(error, "ctc_loss_cpu").message(),
            "ctc_loss: Expected tensor to have size at least 6 at dimension 1, but got size 4 "
            "for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
  tl = {2, 1, 1};
  error = KernelError();
  CtcTargetOffsets(c, offsets.data(), &error);  // then the first input length too long
  EXPECT_EQ(CtcLossFailure(error, "ctc_loss_gpu").message(),
            "ctc_loss: Expected input_lengths to have value at most 5, but got value 6 (while "
            "checking arguments for ctc_loss_gpu)");
  EXPECT_THAT(offsets, ::testing::ElementsAre(-1, 4, -1));
  c.concatenated = true;
  tl = {2, 1, 2};
  il = {1, 1, 1};
  error = KernelError();
  CtcTargetOffsets(c, offsets.data(), &error);
  EXPECT_EQ(CtcLossFailure(error, "ctc_loss_cpu").message(),
            "ctc_loss: Expected tensor to have size 5 at dimension 0, but got size 4 for "
            "argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
  EXPECT_THAT(offsets, ::testing::ElementsAre(0, 2, -1));
}

}  // namespace
}  // namespace tensord::engine
