#include "engine/ops/op_registry.h"

#include <cstdio>
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

// Every op that takes a dim, given dims of 0-d tensors (which have none, though most ops treat
// them as 1-d): a result or a status, never a read past their empty sizes. The sanitizer job runs
// this test under ASan and UBSan (plan_fuzz found roll reading size(0) of a 0-d tensor).
TEST(OpRegistryTest, DimsOfZeroDimTensorsNeverReadPastTheirSizes) {
  const std::set<std::string> dim_like = {"dim",    "dims",   "dim0",      "dim1",
                                          "dim2",   "axis",   "start_dim", "end_dim",
                                          "source", "destination"};
  int ran = 0, refused = 0;
  for (const OpDef& def : OpRegistry::Global().ops()) {
    if (def.variadic || def.inputs.empty() || def.returns_nothing) continue;
    bool takes_dim = false;
    for (const AttrSpec& a : def.attrs) {
      takes_dim |= dim_like.count(a.name) > 0 &&
                   (a.type == AttrType::kInt || a.type == AttrType::kIntList ||
                    a.type == AttrType::kIntOrIntList);
    }
    if (!takes_dim) continue;
    // The inputs after self (if any): float32, then int64 (indices).
    for (const bool int_rest : def.inputs.size() > 1 ? std::vector<bool>{false, true}
                                                     : std::vector<bool>{false}) {
      for (const int64_t d : {0, -1, 1, -2}) {
        std::vector<Tensor> inputs;
        for (size_t i = 0; i < def.inputs.size(); ++i) {
          const DType dtype = i > 0 && int_rest ? DType::kInt64 : DType::kFloat32;
          ASSERT_OK_AND_ASSIGN(Tensor t, Full({}, Scalar(int64_t{0}), dtype, kCpu));
          inputs.push_back(t);
        }
        Attrs attrs;
        for (const AttrSpec& a : def.attrs) {
          const bool is_dim = dim_like.count(a.name) > 0;
          if (!is_dim && !a.required) continue;
          switch (a.type) {
            case AttrType::kInt: attrs.Set(a.name, is_dim ? d : int64_t{1}); break;
            case AttrType::kIntList:
            case AttrType::kIntOrIntList:
              attrs.Set(a.name, std::vector<int64_t>{is_dim ? d : int64_t{1}});
              break;
            case AttrType::kScalar: attrs.Set(a.name, Scalar(1.0)); break;
            case AttrType::kBool: attrs.Set(a.name, false); break;
            default: break;  // left out: the op says it is missing, which is a status too
          }
        }
        absl::StatusOr<std::vector<Tensor>> out = RunNow(PlanOp(def.name, inputs, attrs));
        ++(out.ok() ? ran : refused);
        if (!out.ok()) {
          EXPECT_NE(out.status().code(), absl::StatusCode::kInternal)
              << def.name << " dim " << d << ": " << out.status();
          EXPECT_NE(out.status().code(), absl::StatusCode::kUnknown)
              << def.name << " dim " << d << ": " << out.status();
        }
      }
    }
  }
  std::printf("ops with a dim on 0-d tensors: %d ran, %d refused\n", ran, refused);
  EXPECT_GT(ran, 50);  // the sweep reached the ops (their checks are the sanitizers')
}

}  // namespace
}  // namespace tensord::engine
