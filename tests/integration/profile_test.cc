// OpProfile (the Profile RPC's record) without a server: device times from the marks a lane
// gives around a kernel's launch (a fake lane with a settable device clock stands for a GPU's),
// the limits that drop ops instead of failing them, and the budget it is charged to.
#include "server/profile.h"

#include <atomic>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace tensord::server {
namespace {

using engine::DeviceLane;
using engine::ExecContext;
using engine::KernelError;
using engine::LaneMark;

// A device whose clock the test moves: a mark reads it when made, as a cudaEvent records the
// device's time when the stream reaches it.
std::atomic<int64_t> device_clock{0};

class FakeMark final : public LaneMark {
 public:
  FakeMark(int64_t at, bool readable) : at_(at), readable_(readable) {}
  absl::StatusOr<int64_t> NanosecondsSince(const LaneMark& earlier) const override {
    if (!readable_) return absl::UnavailableError("the device cannot tell");
    return at_ - static_cast<const FakeMark&>(earlier).at_;
  }

 private:
  int64_t at_;
  bool readable_;
};

class TimedLane final : public DeviceLane {
 public:
  explicit TimedLane(bool readable = true) : readable_(readable) {}
  std::unique_ptr<LaneMark> Mark() override {
    return std::make_unique<FakeMark>(device_clock.load(), readable_);
  }
  void AfterLaunchedWork(absl::AnyInvocable<void(absl::Status)> done) override {
    done(absl::OkStatus());
  }
  KernelError* AcquireErrorSlot(int64_t*) override { return nullptr; }
  KernelError ReleaseErrorSlot(int64_t) override { return KernelError(); }

 private:
  bool readable_;
};

// Stands for a device's backend: only its address is used, as the lanes' key.
const int kFakeDevice = 0;
const auto* const kBackend = reinterpret_cast<const engine::Backend*>(&kFakeDevice);

// A plan whose kernel launches on the fake device, whose work takes `device_ns`.
engine::PlannedOp Launching(int64_t device_ns, bool readable = true) {
  engine::PlannedOp plan;
  plan.kernel = [device_ns, readable]() -> absl::Status {
    ExecContext::Current()->Launch(kBackend, [readable] {
      return std::make_unique<TimedLane>(readable);
    });
    device_clock += device_ns;
    return absl::OkStatus();
  };
  return plan;
}

TEST(OpProfileTest, DeviceTimesComeFromTheMarksAroundEachLaunch) {
  auto profile = std::make_shared<OpProfile>(/*record_shapes=*/false, /*max_ops=*/16, nullptr);
  std::vector<engine::PlannedOp> plans;
  plans.push_back(Launching(7000));
  plans.push_back(Launching(5000));
  plans.push_back(Launching(300));
  engine::PlannedOp view;  // no kernel
  for (size_t i = 0; i < plans.size(); ++i) profile->Add("mm", i + 1, 0, 10 + i, {}, plans[i]);
  profile->Add("t", 0, 0, 20, {}, view);
  engine::DeviceLanes lanes;  // one stream's lanes, made by its first launch
  {
    ExecContext context(&lanes);
    ASSERT_TRUE(plans[0].kernel().ok());  // the lane does not exist before this launch
  }
  for (size_t i = 1; i < plans.size(); ++i) {
    ExecContext context(&lanes);
    ASSERT_TRUE(plans[i].kernel().ok());
  }
  v1::ProfileResponse response;
  profile->Collect(&response);
  ASSERT_EQ(response.ops_size(), 4);
  EXPECT_EQ(response.ops(0).device_ns(), -1);
  EXPECT_EQ(response.ops(1).device_ns(), 5000);
  EXPECT_EQ(response.ops(2).device_ns(), 300);
  EXPECT_EQ(response.ops(3).device_ns(), -1);  // a view
  EXPECT_EQ(response.ops(1).first_output(), 11u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_GE(response.ops(i).start_ns(), response.ops(i).queued_ns());
    EXPECT_GE(response.ops(i).end_ns(), response.ops(i).start_ns());
    EXPECT_FALSE(response.ops(i).failed());
  }
}

TEST(OpProfileTest, AMarkTheDeviceCannotReadLeavesNoDeviceTime) {
  auto profile = std::make_shared<OpProfile>(false, 16, nullptr);
  engine::DeviceLanes lanes;
  lanes[kBackend] = std::make_unique<TimedLane>(/*readable=*/false);
  engine::PlannedOp plan = Launching(100, /*readable=*/false);
  profile->Add("exp", 1, 0, 0, {}, plan);
  {
    ExecContext context(&lanes);
    ASSERT_TRUE(plan.kernel().ok());
  }
  v1::ProfileResponse response;
  profile->Collect(&response);
  ASSERT_EQ(response.ops_size(), 1);
  EXPECT_EQ(response.ops(0).device_ns(), -1);
  EXPECT_GE(response.ops(0).start_ns(), 0);
}

TEST(OpProfileTest, OpsPastTheLimitOrTheBudgetAreDroppedNotRefused) {
  auto limited = std::make_shared<OpProfile>(false, /*max_ops=*/2, nullptr);
  std::vector<engine::PlannedOp> plans(5);
  for (auto& plan : plans) limited->Add("add", 0, 0, 0, {}, plan);
  v1::ProfileResponse response;
  limited->Collect(&response);
  EXPECT_EQ(response.ops_size(), 2);
  EXPECT_EQ(response.dropped(), 3);
  EXPECT_EQ(response.max_ops(), 2);

  // A budget too small for a block of ops: nothing recorded, nothing charged.
  auto small = engine::MemoryBudget::Create("session", kProfiledOpBytes * 10);
  auto starved = std::make_shared<OpProfile>(false, 1000, small);
  starved->Add("add", 0, 0, 0, {}, plans[0]);
  v1::ProfileResponse none;
  starved->Collect(&none);
  EXPECT_EQ(none.ops_size(), 0);
  EXPECT_EQ(none.dropped(), 1);
  EXPECT_EQ(small->used(), 0);

  // A budget with room: charged a block at a time, given back when the profile goes.
  auto roomy = engine::MemoryBudget::Create("session", int64_t{1} << 30);
  {
    auto charged = std::make_shared<OpProfile>(false, 1000, roomy);
    for (int i = 0; i < 3; ++i) charged->Add("add", 0, 0, 0, {}, plans[1]);
    EXPECT_EQ(roomy->used(), kProfiledBytesPerCharge);
  }
  EXPECT_EQ(roomy->used(), 0);
}

TEST(OpProfileTest, AnOpItsStreamRefusedIsForgottenAndTheAnswerFitsItsLimit) {
  auto roomy = engine::MemoryBudget::Create("session", int64_t{1} << 30);
  // Room in the answer for about three ops.
  auto profile = std::make_shared<OpProfile>(false, 1000, roomy, /*max_bytes=*/3 * 90);
  std::vector<engine::PlannedOp> plans(6);
  profile->Add("add", 0, 0, 1, {}, plans[0]);
  profile->Add("mul", 0, 0, 2, {}, plans[1]);
  profile->ForgetLast();  // mul was not queued
  for (int i = 2; i < 6; ++i) profile->Add("sub", 0, 0, 10 + i, {}, plans[i]);
  v1::ProfileResponse response;
  profile->Collect(&response);
  ASSERT_GE(response.ops_size(), 2);
  EXPECT_EQ(response.ops(0).op(), "add");
  EXPECT_EQ(response.ops(1).op(), "sub");
  EXPECT_GT(response.dropped(), 0);
  EXPECT_EQ(response.ops_size() + response.dropped(), 5);
  EXPECT_LE(static_cast<int64_t>(response.ByteSizeLong()), 3 * 90);
}

TEST(OpProfileTest, AKernelThatRunsAfterTheCollectReportsInVain) {
  auto profile = std::make_shared<OpProfile>(false, 16, nullptr);
  engine::PlannedOp plan;
  plan.kernel = [] { return absl::InternalError("boom"); };
  profile->Add("div", 1, 0, 0, {}, plan);
  v1::ProfileResponse response;
  profile->Collect(&response);
  ASSERT_EQ(response.ops_size(), 1);
  EXPECT_EQ(response.ops(0).start_ns(), -1);  // had not run
  EXPECT_FALSE(plan.kernel().ok());           // runs later: its status is still its own
  v1::ProfileResponse again;
  profile->Collect(&again);
  EXPECT_EQ(again.ops_size(), 0);
}

}  // namespace
}  // namespace tensord::server
