// A GPU whose CUDA context is lost (a kernel faulted): every stream with work in flight on it gets
// an error within a second or so, never waits forever for the host functions that CUDA no longer
// runs, and the loss reaches the device-lost listeners (the server then stops SERVING).
//
// Runs only as its own ctest test, cuda_fault_test (TENSORD_GPU_FAULT_TEST=1): the fault ends the
// process's context on the device, so no test may run after it in the same process.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/notification.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/copy_ops.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/device_health.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/stream.h"
#include "gtest/gtest.h"

namespace tensord::engine::cuda::testing {
cudaError_t LaunchFault(cudaStream_t stream);
}  // namespace tensord::engine::cuda::testing

namespace tensord::engine {
namespace {

constexpr Device kGpu{DeviceType::kCUDA, 0};

absl::Status SynchronizeWithin(Stream& stream, absl::Duration limit) {
  absl::Notification done;
  auto status = std::make_shared<absl::Status>();
  stream.Synchronize([&done, status](absl::Status s) {
    *status = s;
    done.Notify();
  });
  if (!done.WaitForNotificationWithTimeout(limit)) {
    return absl::DeadlineExceededError("synchronize did not return");
  }
  return *status;
}

TEST(CudaFaultTest, ALostContextFailsTheWorkInFlightInsteadOfHangingAndIsReported) {
  const char* enabled = std::getenv("TENSORD_GPU_FAULT_TEST");
  if (enabled == nullptr || std::string(enabled) != "1") {
    GTEST_SKIP() << "ends the process's CUDA context: runs only as ctest's cuda_fault_test";
  }
  absl::Notification told;
  std::string reason;
  const int listener = AddDeviceLostListener([&](const LostDevice& lost) {
    if (lost.device != kGpu || told.HasBeenNotified()) return;
    reason = lost.reason;
    told.Notify();
  });
  absl::Cleanup remove_listener = [listener] { RemoveDeviceLostListener(listener); };

  Executor executor(2);
  auto stream = Stream::Create(&executor, 1, 1000);
  Backend& gpu = *BackendFor(kGpu).value();
  Tensor x = Full({1 << 20}, Scalar(1.0), DType::kFloat32, kGpu).value();
  Tensor z = Full({16}, Scalar(1.0), DType::kFloat32, kGpu).value();  // untouched by the loss
  // In flight on the stream's lane: a two-second kernel, then a fill; the lane's report of them
  // is queued behind them on the device.
  StreamTask sleep;
  sleep.label = "op 1 (_sleep)";
  sleep.kernel = [&gpu] { return gpu.Sleep(2000); };
  ASSERT_TRUE(stream->Enqueue(std::move(sleep)).ok());
  absl::StatusOr<PlannedOp> fill = PlanFill(x, Scalar(2.0));
  ASSERT_TRUE(fill.ok()) << fill.status();
  ASSERT_TRUE(stream->Enqueue(TaskFromPlan("op 2 (fill_)", *fill)).ok());
  absl::SleepFor(absl::Milliseconds(100));
  ASSERT_EQ(stream->pending(), 2);

  // Another stream of the same device faults: the whole context goes.
  cudaStream_t other = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cuda::testing::LaunchFault(other), cudaSuccess);

  const auto start = std::chrono::steady_clock::now();
  const absl::Status first = SynchronizeWithin(*stream, absl::Seconds(20));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(first.code(), absl::StatusCode::kInternal) << first;
  EXPECT_NE(first.message().find("op 1 (_sleep): its work on cuda:0 was lost"), std::string::npos)
      << first;
  EXPECT_NE(first.message().find("until the server restarts"), std::string::npos) << first;
  EXPECT_LT(seconds, 5.0) << "the lost work was reported late";
  EXPECT_EQ(stream->pending(), 0);
  ASSERT_NE(x.storage()->poison(), nullptr);  // op 2's output: never read as if written

  EXPECT_TRUE(told.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_NE(reason.find("cudaError"), std::string::npos) << reason;
  bool listed = false;
  for (const LostDevice& lost : LostDevices()) listed |= lost.device == kGpu;
  EXPECT_TRUE(listed);

  // Work queued after the loss, on a storage no lost op wrote, fails at its launch with the
  // same words, and does not hang either.
  absl::StatusOr<PlannedOp> later = PlanFill(z, Scalar(3.0));
  ASSERT_TRUE(later.ok()) << later.status();
  ASSERT_TRUE(stream->Enqueue(TaskFromPlan("op 3 (fill_)", *later)).ok());
  const absl::Status after = SynchronizeWithin(*stream, absl::Seconds(20));
  EXPECT_EQ(after.code(), absl::StatusCode::kInternal) << after;
  EXPECT_NE(after.message().find("until the server restarts"), std::string::npos) << after;
}

}  // namespace
}  // namespace tensord::engine
