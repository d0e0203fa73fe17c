// The CUDA index_select / gather fast path's mapping (engine/cuda/row_gather.h), run on the host
// as the kernel runs it (a work item per chunk, 32- and 64-bit positions): its bytes must equal
// the CPU backend's index_select and gather over dtypes, dims and shapes, bad indices must name
// the position the CPU's error names, and the chunk must be the widest one the rows and their
// alignment allow. Needs no GPU: the mapping is host/device code.
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/cuda/row_gather.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry.h"
#include "engine/ops/planned_op.h"
#include "engine/views/view_ops.h"
#include "gtest/gtest.h"
#include "tests/engine/tensor_test_util.h"

namespace tensord::engine::cuda {
namespace {

using V = std::vector<int64_t>;

Tensor Filled(const V& sizes, DType dtype, uint32_t seed) {
  Tensor t = Empty(sizes, dtype).value();
  std::mt19937 rng(seed);
  auto* p = reinterpret_cast<unsigned char*>(t.data());
  for (int64_t i = 0; i < t.numel() * t.itemsize(); ++i) p[i] = static_cast<unsigned char>(rng());
  if (dtype == DType::kBool) {
    for (int64_t i = 0; i < t.numel(); ++i) p[i] &= 1;
  }
  return t;
}

Tensor Indices(const V& sizes, int64_t limit, DType dtype, uint32_t seed, int64_t bad_at = -1) {
  Tensor t = Empty(sizes, dtype).value();
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = i == bad_at ? limit + 3 : static_cast<int64_t>(rng() % limit);
    if (dtype == DType::kInt32) {
      t.data_as<int32_t>()[i] = static_cast<int32_t>(v);
    } else {
      t.data_as<int64_t>()[i] = v;
    }
  }
  return t;
}

// Runs the kernel's loop on the host: the bytes of out, or the smallest bad position.
template <typename Pos>
std::vector<unsigned char> RunMapping(const RowGather& g, const Tensor& self, const Tensor& index,
                                      int64_t out_bytes, int64_t* bad) {
  std::vector<unsigned char> out(static_cast<size_t>(out_bytes), 0);
  *bad = INT64_MAX;
  for (int64_t c = 0; c < g.n; ++c) {
    const RowGather::Item item = g.Locate(static_cast<Pos>(c));
    const int64_t k = g.LoadIndex(index.data(), item.position);
    if (k < 0 || k >= g.self_rows) {
      *bad = std::min(*bad, item.position);
      continue;
    }
    std::memcpy(out.data() + c * g.chunk, self.data() + g.Source(item, k) * g.chunk,
                static_cast<size_t>(g.chunk));
  }
  return out;
}

// `bad_at`: the index position holding an index out of range, or -1.
void Check(const std::string& op, const Tensor& self, int64_t dim, const Tensor& index,
           int expected_chunk, int64_t bad_at = -1) {
  SCOPED_TRACE(absl::StrCat(op, " dim ", dim, " ", DTypeName(self.dtype()), " index ",
                            DTypeName(index.dtype())));
  absl::StatusOr<std::vector<Tensor>> cpu =
      RunNow(PlanOp(op, {self, index}, Attrs().Set("dim", dim)));
  // The output as the CUDA launcher receives it: the planner's contiguous result.
  V out_sizes(self.sizes().begin(), self.sizes().end());
  out_sizes[dim] = op == "gather" ? index.size(dim) : index.numel();
  if (op == "gather") out_sizes = V(index.sizes().begin(), index.sizes().end());
  Tensor out = Empty(out_sizes, self.dtype()).value();
  const std::optional<RowGather> g = MakeRowGather(out, self, dim, index, op == "gather");
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->chunk, expected_chunk);
  EXPECT_EQ(g->n * g->chunk, out.numel() * out.itemsize());
  const int64_t out_bytes = out.numel() * out.itemsize();
  int64_t bad32 = 0, bad64 = 0;
  const std::vector<unsigned char> got32 = RunMapping<uint32_t>(*g, self, index, out_bytes, &bad32);
  const std::vector<unsigned char> got64 = RunMapping<int64_t>(*g, self, index, out_bytes, &bad64);
  EXPECT_EQ(got32, got64);
  EXPECT_EQ(bad32, bad64);
  if (bad_at >= 0) {
    // The CPU fails the op, and the kernel reports the bad index's position (the one its
    // error names).
    EXPECT_FALSE(cpu.ok());
    EXPECT_EQ(bad32, bad_at);
    return;
  }
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  ASSERT_EQ(bad32, INT64_MAX);
  const Tensor want = CloneContiguous((*cpu)[0]).value();
  ASSERT_EQ(want.numel() * want.itemsize(), out_bytes);
  EXPECT_EQ(std::memcmp(got32.data(), want.data(), static_cast<size_t>(out_bytes)), 0);
}

TEST(RowGatherTest, IndexSelectCopiesRowsInTheWidestChunk) {
  // (self sizes, dim, index length, dtype, chunk): rows of 8 float32 are two 16-byte chunks,
  // of 6 float32 three 8-byte ones, of 3 float32 single elements; 40-byte rows of int16 are
  // 8-byte chunks; selecting along the last dim copies single elements.
  struct Case {
    V sizes;
    int64_t dim, count;
    DType dtype;
    int chunk;
  };
  const std::vector<Case> cases = {
      {{50, 8}, 0, 70, DType::kFloat32, 16},   {{50, 6}, 0, 70, DType::kFloat32, 8},
      {{50, 3}, 0, 7, DType::kFloat32, 4},     {{4, 9, 5}, 1, 12, DType::kFloat64, 8},
      {{4, 9, 6}, 1, 12, DType::kFloat64, 16}, {{3, 4, 5}, 2, 9, DType::kInt16, 2},
      {{3, 4, 5}, 0, 2, DType::kInt16, 8},     {{3, 4, 8}, 0, 5, DType::kUInt8, 16},
      {{7, 16}, 0, 20, DType::kBool, 16},      {{7, 5}, 1, 20, DType::kBFloat16, 2},
      {{2, 3, 4, 8}, 3, 6, DType::kFloat16, 2}, {{9}, 0, 30, DType::kInt64, 8},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    const Tensor self = Filled(c.sizes, c.dtype, seed++);
    for (DType index_dtype : {DType::kInt64, DType::kInt32}) {
      Check("index_select", self, c.dim, Indices({c.count}, c.sizes[c.dim], index_dtype, seed++),
            c.chunk);
      Check("index_select", self, c.dim,
            Indices({c.count}, c.sizes[c.dim], index_dtype, seed++, /*bad_at=*/c.count / 2),
            c.chunk, c.count / 2);
    }
  }
}

TEST(RowGatherTest, IndexSelectThroughAStridedIndexAndAMisalignedRow) {
  const Tensor self = Filled({40, 8}, DType::kFloat32, 7);
  // Every second element of a longer index: index_stride 2.
  const Tensor wide = Indices({30}, 40, DType::kInt64, 8);
  Check("index_select", self, 0, Slice(wide, 0, 0, 30, 2).value(), 16);
  // A contiguous self starting one float32 into its storage: rows of 32 bytes, base aligned to
  // 4 bytes only.
  const Tensor flat = Filled({1 + 40 * 8}, DType::kFloat32, 9);
  const Tensor shifted = View(Narrow(flat, 0, 1, 40 * 8).value(), V{40, 8}).value();
  Check("index_select", shifted, 0, Indices({11}, 40, DType::kInt64, 10), 4);
  // A 0-d index selects one row.
  const Tensor one = View(Indices({1}, 40, DType::kInt64, 11), V{}).value();
  Check("index_select", self, 0, one, 16);
}

TEST(RowGatherTest, GatherReadsAnIndexPerElement) {
  struct Case {
    V sizes, index_sizes;
    int64_t dim;
    DType dtype;
  };
  const std::vector<Case> cases = {
      {{64, 33}, {64, 20}, 1, DType::kFloat32}, {{64, 33}, {10, 33}, 0, DType::kFloat32},
      {{5, 7, 9}, {5, 3, 9}, 1, DType::kFloat64}, {{5, 7, 9}, {5, 7, 4}, 2, DType::kInt8},
      {{5, 7, 9}, {2, 7, 9}, 0, DType::kBFloat16}, {{100}, {250}, 0, DType::kInt64},
  };
  uint32_t seed = 100;
  for (const Case& c : cases) {
    const Tensor self = Filled(c.sizes, c.dtype, seed++);
    const int itemsize = static_cast<int>(self.itemsize());
    // gather takes int64 indices only, as torch's.
    Check("gather", self, c.dim, Indices(c.index_sizes, c.sizes[c.dim], DType::kInt64, seed++),
          itemsize);
    Check("gather", self, c.dim,
          Indices(c.index_sizes, c.sizes[c.dim], DType::kInt64, seed++, /*bad_at=*/17), itemsize,
          17);
  }
}

TEST(RowGatherTest, OtherLayoutsTakeTheGeneralKernels) {
  const Tensor self = Filled({6, 8}, DType::kFloat32, 1);
  const Tensor out = Empty(V{4, 8}, DType::kFloat32).value();
  const Tensor index = Indices({4}, 6, DType::kInt64, 2);
  EXPECT_TRUE(MakeRowGather(out, self, 0, index, false).has_value());
  // A transposed self, a transposed out, a 2-d index for index_select.
  EXPECT_FALSE(MakeRowGather(out, Transpose(Filled({8, 6}, DType::kFloat32, 3), 0, 1).value(), 0,
                             index, false).has_value());
  EXPECT_FALSE(MakeRowGather(Transpose(Empty(V{8, 4}, DType::kFloat32).value(), 0, 1).value(),
                             self, 0, index, false).has_value());
  EXPECT_FALSE(MakeRowGather(out, self, 0, View(index, V{2, 2}).value(), false).has_value());
  // gather: an index smaller than self in a dim other than dim, or not contiguous.
  const Tensor small = Indices({4, 5}, 6, DType::kInt64, 4);
  EXPECT_FALSE(MakeRowGather(Empty(V{4, 5}, DType::kFloat32).value(), self, 0, small, true)
                   .has_value());
  const Tensor index_t = Transpose(Indices({8, 4}, 6, DType::kInt64, 5), 0, 1).value();
  EXPECT_FALSE(MakeRowGather(out, self, 0, index_t, true).has_value());
  // A 0-d self.
  const Tensor scalar = View(Filled({1}, DType::kFloat32, 6), V{}).value();
  EXPECT_FALSE(MakeRowGather(Empty(V{4}, DType::kFloat32).value(), scalar, 0, index, false)
                   .has_value());
}

}  // namespace
}  // namespace tensord::engine::cuda
