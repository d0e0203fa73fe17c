// The reports a GPU's lanes owe their streams (engine/cuda/owed_reports.h): each delivered exactly
// once, by the device's signal or by the watch once the device is lost, whichever comes first.
// Host code: runs without a GPU.
#include "engine/cuda/owed_reports.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace tensord::engine::cuda {
namespace {

TEST(OwedReportsTest, TheDevicesSignalDeliversOkOnce) {
  OwedReports reports;
  std::vector<absl::Status> got;
  auto handle = reports.Add([&](absl::Status s) { got.push_back(s); }, absl::Now());
  EXPECT_EQ(reports.owed(), 1);
  EXPECT_TRUE(reports.Deliver(handle, absl::OkStatus()));
  EXPECT_FALSE(reports.Deliver(handle, absl::OkStatus()));  // a second signal delivers nothing
  EXPECT_EQ(reports.FailAll(absl::InternalError("lost")), 0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].ok());
  EXPECT_EQ(reports.owed(), 0);
  EXPECT_FALSE(reports.OldestSince().has_value());
}

TEST(OwedReportsTest, ALostDeviceDeliversEveryOwedReportWithTheReasonAndLateSignalsNothing) {
  OwedReports reports;
  std::vector<std::string> got;
  const absl::Time t0 = absl::Now();
  auto a = reports.Add([&](absl::Status s) { got.push_back("a:" + std::string(s.message())); },
                       t0 + absl::Seconds(2));
  auto b = reports.Add([&](absl::Status s) { got.push_back("b:" + std::string(s.message())); },
                       t0);
  auto c = reports.Add([&](absl::Status s) { got.push_back("c:" + std::string(s.message())); },
                       t0 + absl::Seconds(1));
  EXPECT_EQ(reports.OldestSince(), t0);
  EXPECT_TRUE(reports.Deliver(c, absl::OkStatus()));
  EXPECT_EQ(reports.FailAll(absl::InternalError("context lost")), 2);
  EXPECT_FALSE(reports.Deliver(a, absl::OkStatus()));  // the host function after all: ignored
  EXPECT_FALSE(reports.Deliver(b, absl::OkStatus()));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"a:context lost", "b:context lost", "c:"}));
  EXPECT_FALSE(reports.WaitUntilOwed(absl::Milliseconds(1)));
}

TEST(OwedReportsTest, SignalAndLossRacingDeliverEachReportExactlyOnce) {
  OwedReports reports;
  constexpr int kReports = 2000;
  std::vector<std::atomic<int>> calls(kReports);
  std::vector<OwedReports::Handle> handles;
  for (int i = 0; i < kReports; ++i) {
    handles.push_back(reports.Add([&calls, i](absl::Status) { ++calls[i]; }, absl::Now()));
  }
  EXPECT_TRUE(reports.WaitUntilOwed(absl::ZeroDuration()));
  std::atomic<int> delivered{0};
  absl::Notification go;  // both start together, so that the loss lands among the signals
  std::thread signals([&] {
    go.WaitForNotification();
    for (auto& h : handles) delivered += reports.Deliver(h, absl::OkStatus()) ? 1 : 0;
  });
  std::thread loss([&] {
    go.WaitForNotification();
    absl::SleepFor(absl::Microseconds(50));
    delivered += reports.FailAll(absl::InternalError("lost"));
  });
  go.Notify();
  signals.join();
  loss.join();
  EXPECT_EQ(delivered.load(), kReports);
  for (int i = 0; i < kReports; ++i) EXPECT_EQ(calls[i].load(), 1) << i;
  EXPECT_EQ(reports.owed(), 0);
}

}  // namespace
}  // namespace tensord::engine::cuda
