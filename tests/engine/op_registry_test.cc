#include "engine/ops/op_registry.h"

#include <set>

#include "gtest/gtest.h"
#include "tests/engine/tensor_test_util.h"
#include "tests/test_util.h"

namespace tensord::engine {
namespace {

using V = std::vector<int64_t>;

TEST(OpRegistryTest, NamesAreUniqueAndEveryOpIsDescribed) {
  std::set<std::string> names;
  for (const OpDef& op : OpRegistry::Global().ops()) {
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate op " << op.name;
    EXPECT_FALSE(op.doc.empty()) << op.name;
    EXPECT_TRUE(static_cast<bool>(op.plan)) << op.name;
    std::set<std::string> attrs;
    for (const AttrSpec& a : op.attrs) {
      EXPECT_TRUE(attrs.insert(a.name).second) << op.name << "." << a.name;
      if (!a.required) {
        EXPECT_FALSE(a.default_value.empty()) << op.name << "." << a.name;
      }
    }
  }
  for (const char* expected :
       {"view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "as_strided",
        "transpose", "swapaxes", "swapdims", "t", "T", "mT", "adjoint", "permute", "movedim",
        "expand", "expand_as", "broadcast_to", "squeeze", "unsqueeze", "narrow", "select",
        "slice", "index", "diagonal", "unfold", "split", "split_with_sizes", "tensor_split",
        "chunk", "unbind", "alias", "detach", "contiguous", "clone", "copy_", "fill_", "zero_",
        "flip", "repeat", "empty", "zeros", "ones", "full", "arange", "empty_strided"}) {
    EXPECT_TRUE(names.count(expected)) << "missing op " << expected;
  }
}

TEST(OpRegistryTest, ViewOpsHaveNoKernelAndShareStorage) {
  ASSERT_OK_AND_ASSIGN(Tensor t, test_util::MakeStrided(DType::kFloat32, 12, V{3, 4}, V{4, 1}, 0));
  ASSERT_OK_AND_ASSIGN(PlannedOp plan, PlanOp("transpose", {t}, Attrs()
                                                                  .Set("dim0", int64_t{0})
                                                                  .Set("dim1", int64_t{1})));
  EXPECT_FALSE(plan.has_kernel());
  ASSERT_EQ(plan.outputs.size(), 1u);
  EXPECT_TRUE(plan.outputs[0].is_alias_of(t));
}

TEST(OpRegistryTest, ComputeOpsRunOnlyWhenAsked) {
  ASSERT_OK_AND_ASSIGN(Tensor t, test_util::MakeStrided(DType::kFloat32, 12, V{3, 4}, V{4, 1}, 0));
  ASSERT_OK_AND_ASSIGN(PlannedOp plan, PlanOp("fill_", {t}, Attrs().Set("value", Scalar(7.0))));
  ASSERT_TRUE(plan.has_kernel());
  EXPECT_EQ(test_util::Values(t)[0], 0.0);  // planned, not run
  EXPECT_EQ(plan.writes.size(), 1u);
  ASSERT_OK(plan.kernel());
  EXPECT_EQ(test_util::Values(t)[0], 7.0);
}

TEST(OpRegistryTest, FactoryDefaultsFollowTorch) {
  ASSERT_OK_AND_ASSIGN(auto out, RunNow(PlanOp("full", {}, Attrs()
                                                               .Set("size", V{2})
                                                               .Set("fill_value", Scalar(true)))));
  EXPECT_EQ(out[0].dtype(), DType::kBool);
  ASSERT_OK_AND_ASSIGN(auto ar, RunNow(PlanOp("arange", {}, Attrs().Set("end", Scalar(2.5)))));
  EXPECT_EQ(ar[0].dtype(), DType::kFloat32);
  EXPECT_EQ(ar[0].numel(), 3);
  ASSERT_OK_AND_ASSIGN(auto z, RunNow(PlanOp("zeros", {}, Attrs().Set("size", V{2, 2}))));
  EXPECT_EQ(z[0].dtype(), DType::kFloat32);
}

}  // namespace
}  // namespace tensord::engine
