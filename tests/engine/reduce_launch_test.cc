// The CUDA reductions' launch shape (engine/cuda/reduce_launch.h), chosen on the host from the
// geometry and the device's residency: column reductions take a thread per output; a few
// outputs over many elements are split into parts that fill exactly one wave of the GPU's
// resident blocks, none shorter than kMinPerPart; block sizes follow the reduced length. Needs
// no GPU.
#include "engine/cuda/reduce_launch.h"

#include "gtest/gtest.h"

namespace tensord::engine::cuda {
namespace {

ReduceGeometry Geometry(DimVector kept, DimVector kept_strides, DimVector red,
                        DimVector red_strides) {
  ReduceGeometry g;
  g.kept_sizes = kept;
  g.kept_strides = kept_strides;
  g.red_sizes = red;
  g.red_strides = red_strides;
  return g;
}

constexpr int64_t kH200Resident = 132 * 5;  // 132 SMs, 5 blocks of the sum kernel on each

TEST(ReduceLaunchTest, AFullReductionFillsOneWaveOfResidentBlocks) {
  // sum of all 256M float32: one output, every element reduced.
  const auto all = Geometry({}, {}, {int64_t{1} << 28}, {1});
  const ReduceLaunch how = ChooseReduceLaunch(all, kH200Resident);
  EXPECT_FALSE(how.per_thread);
  EXPECT_EQ(how.threads, kSplitReduceThreads);
  EXPECT_EQ(how.parts, kH200Resident);  // one block per resident slot: no second wave
  EXPECT_EQ(how.scratch_bytes, kH200Resident * 32);
  // Unknown residency (the occupancy query failed): 1,024 parts, as before it was asked.
  EXPECT_EQ(ChooseReduceLaunch(all, 0).parts, 1024);
}

TEST(ReduceLaunchTest, FewOutputsShareTheWaveAndPartsNeverGetShort) {
  // Three rows of 4M: 220 parts each, 660 blocks in all.
  const ReduceLaunch rows = ChooseReduceLaunch(Geometry({3}, {1 << 22}, {1 << 22}, {1}),
                                               kH200Resident);
  EXPECT_EQ(rows.parts, kH200Resident / 3);
  EXPECT_LE(3 * rows.parts, kH200Resident);
  EXPECT_EQ(rows.scratch_bytes, 3 * rows.parts * 32);
  // One output of 100,000 elements: 12 parts of at least 8,192, not 660 tiny ones.
  const ReduceLaunch short_run = ChooseReduceLaunch(Geometry({}, {}, {100000}, {1}),
                                                    kH200Resident);
  EXPECT_EQ(short_run.parts, 100000 / kMinPerPart);
  EXPECT_GE(100000 / short_run.parts, kMinPerPart);
  // Below two parts' worth: one block, no scratch.
  const ReduceLaunch one = ChooseReduceLaunch(Geometry({}, {}, {2 * kMinPerPart - 1}, {1}),
                                              kH200Resident);
  EXPECT_EQ(one.parts, 1);
  EXPECT_EQ(one.scratch_bytes, 0);
  // As many outputs as resident blocks, or more: a block each, never split.
  const ReduceLaunch many = ChooseReduceLaunch(
      Geometry({kH200Resident}, {1 << 20}, {1 << 20}, {1}), kH200Resident);
  EXPECT_EQ(many.parts, 1);
  EXPECT_EQ(many.scratch_bytes, 0);
  // 400 outputs over 660 resident blocks: one part each (two would make 800 blocks).
  EXPECT_EQ(ChooseReduceLaunch(Geometry({400}, {1 << 20}, {1 << 20}, {1}), kH200Resident).parts,
            1);
}

TEST(ReduceLaunchTest, ColumnReductionsTakeAThreadPerOutput) {
  // sum over dim 0 of 8192 x 8192: outputs side by side, reduced elements a row apart.
  const ReduceLaunch cols =
      ChooseReduceLaunch(Geometry({8192}, {1}, {8192}, {8192}), kH200Resident);
  EXPECT_TRUE(cols.per_thread);
  EXPECT_EQ(cols.scratch_bytes, 0);
  // Rows (dim 1) of the same: a block per output.
  const ReduceLaunch rows =
      ChooseReduceLaunch(Geometry({8192}, {8192}, {8192}, {1}), kH200Resident);
  EXPECT_FALSE(rows.per_thread);
  EXPECT_EQ(rows.parts, 1);
  // Few columns: blocks, not 16 lone threads.
  EXPECT_FALSE(ChooseReduceLaunch(Geometry({16}, {1}, {8192}, {16}), kH200Resident).per_thread);
}

TEST(ReduceLaunchTest, BlocksShrinkToShortReductionsAndNothingRunsForNoOutputs) {
  for (const auto& [r, threads] :
       std::vector<std::pair<int64_t, int>>{{1, 32}, {32, 32}, {33, 64}, {100, 128}, {200, 256},
                                            {5000, 256}}) {
    EXPECT_EQ(ChooseReduceLaunch(Geometry({4}, {r}, {r}, {1}), kH200Resident).threads, threads)
        << r;
  }
  const ReduceLaunch none = ChooseReduceLaunch(Geometry({0}, {1}, {1 << 20}, {1}), kH200Resident);
  EXPECT_EQ(none.parts, 1);
  EXPECT_EQ(none.scratch_bytes, 0);
}

}  // namespace
}  // namespace tensord::engine::cuda
