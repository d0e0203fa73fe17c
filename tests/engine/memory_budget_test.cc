// Per-device byte budgets: a session's host and GPU bytes are limited separately, each nested in
// the server's budget for the same device.
#include "engine/runtime/memory_budget.h"

#include "gtest/gtest.h"

namespace tensord::engine {
namespace {

constexpr Device kGpu0{DeviceType::kCUDA, 0};
constexpr Device kGpu1{DeviceType::kCUDA, 1};

TEST(DeviceBudgetsTest, EachDeviceHasItsOwnLimitNestedInTheServers) {
  auto server = DeviceBudgets::Create("the server", 1000, 5000);
  auto a = DeviceBudgets::Create("session a", 600, 3000, server);
  auto b = DeviceBudgets::Create("session b", 600, 3000, server);
  EXPECT_TRUE(a->For(kCpu)->Charge(600).ok());
  EXPECT_EQ(a->For(kCpu)->Charge(1).code(), absl::StatusCode::kResourceExhausted);
  // GPU bytes do not count against the host's limit, and each GPU has its own.
  EXPECT_TRUE(a->For(kGpu0)->Charge(3000).ok());
  EXPECT_TRUE(a->For(kGpu1)->Charge(3000).ok());
  absl::Status over = a->For(kGpu0)->Charge(1);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(over.message().find("session a on cuda:0"), std::string::npos) << over;
  // The server's limit per device binds across sessions.
  EXPECT_TRUE(b->For(kGpu0)->Charge(2000).ok());
  absl::Status server_full = b->For(kGpu0)->Charge(1);
  EXPECT_EQ(server_full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(server_full.message().find("the server on cuda:0"), std::string::npos) << server_full;
  EXPECT_EQ(b->For(kGpu0)->used(), 2000);  // nothing charged by the refused request
  EXPECT_EQ(a->used(), 6600);
  EXPECT_EQ(server->used(), 8600);
  a->For(kGpu0)->Release(3000);
  EXPECT_EQ(server->For(kGpu0)->used(), 2000);
  EXPECT_EQ(a->For(kGpu0), a->For(kGpu0));  // one budget per device
}

TEST(DeviceBudgetsTest, TheScopedBudgetsChargeByDevice) {
  auto session = DeviceBudgets::Create("session", 100, 200);
  EXPECT_EQ(CurrentMemoryBudget(kCpu), nullptr);
  {
    ScopedMemoryBudget scope(session);
    EXPECT_EQ(CurrentMemoryBudget(kCpu), session->For(kCpu));
    EXPECT_EQ(CurrentMemoryBudget(kGpu0), session->For(kGpu0));
    EXPECT_EQ(CurrentMemoryBudget(kGpu0)->limit(), 200);
  }
  EXPECT_EQ(CurrentMemoryBudget(kGpu0), nullptr);
}

}  // namespace
}  // namespace tensord::engine
