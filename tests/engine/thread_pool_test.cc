#include "engine/runtime/thread_pool.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "engine/runtime/executor.h"
#include "gtest/gtest.h"

namespace tensord::engine {
namespace {

TEST(ParallelForTest, CoversTheRangeExactlyOnce) {
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    for (int64_t grain : {1, 16, 4096}) {
      std::vector<std::atomic<int>> hits(n);
      ParallelFor(0, n, grain, [&](int64_t b, int64_t e) {
        ASSERT_LE(0, b);
        ASSERT_LE(b, e);
        ASSERT_LE(e, n);
        for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << grain;
    }
  }
}

TEST(ParallelForTest, NestedAndConcurrentCallsFinish) {
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      ParallelFor(0, 64, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          ParallelFor(0, 100, 10, [&](int64_t b2, int64_t e2) { total.fetch_add(e2 - b2); });
        }
      });
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 64 * 100);
}

TEST(ParallelForTest, DegreeIsAtLeastOne) { EXPECT_GE(ParallelismDegree(), 1); }

// A long ParallelFor inside a stream task's kernel (AllowYields) on an executor whose only
// thread it holds: a closure posted meanwhile runs between the kernel's pieces, not after it.
// Outside AllowYields (a closure that may hold a lock) it waits for the kernel.
void RunLongKernel(bool allow_yields, std::atomic<bool>* posted_ran,
                   std::atomic<bool>* seen_during, absl::Notification* started) {
  std::optional<Executor::AllowYields> scope;
  if (allow_yields) scope.emplace();
  started->Notify();
  ParallelFor(0, 4000, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (posted_ran->load()) seen_during->store(true);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
}

TEST(ExecutorTest, LongKernelsLendTheirThreadBetweenPieces) {
  for (bool allow : {true, false}) {
    Executor executor(1);
    std::atomic<bool> posted_ran{false}, seen_during{false};
    absl::Notification started, kernel_done, other_done;
    executor.Post([&] {
      RunLongKernel(allow, &posted_ran, &seen_during, &started);
      kernel_done.Notify();
    });
    started.WaitForNotification();
    executor.Post([&] {
      posted_ran.store(true);
      other_done.Notify();
    });
    kernel_done.WaitForNotification();
    other_done.WaitForNotification();
    EXPECT_EQ(seen_during.load(), allow) << (allow ? "in a kernel" : "outside AllowYields");
  }
}

}  // namespace
}  // namespace tensord::engine
