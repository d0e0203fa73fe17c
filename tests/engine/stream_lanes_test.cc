// The stream's retire logic for asynchronous devices, against a fake device lane whose work
// "finishes" only when the test says so. Needs no GPU: it checks the ordering rules that the CUDA
// lanes rely on (engine/runtime/stream.h, engine/runtime/exec_context.h).
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "engine/runtime/allocator.h"
#include "engine/runtime/event.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/executor.h"
#include "engine/tensor/storage.h"
#include "engine/runtime/stream.h"
#include "gtest/gtest.h"

namespace tensord::engine {
namespace {

// Reports of launched work are held until Finish() releases them, as a GPU would later.
class FakeLane final : public DeviceLane {
 public:
  void AfterLaunchedWork(absl::AnyInvocable<void(absl::Status)> done) override {
    absl::MutexLock lock(&mu_);
    reports_.push_back(std::move(done));
  }
  // Runs the reports requested so far (with `lost`: the device lost that work); returns how many.
  int Finish(absl::Status lost = absl::OkStatus()) {
    std::vector<absl::AnyInvocable<void(absl::Status)>> reports;
    {
      absl::MutexLock lock(&mu_);
      reports.swap(reports_);
    }
    for (auto& r : reports) r(lost);
    return static_cast<int>(reports.size());
  }
  KernelError* AcquireErrorSlot(int64_t* handle) override {
    absl::MutexLock lock(&mu_);
    slots_.push_back(KernelError());
    *handle = static_cast<int64_t>(slots_.size()) - 1;
    return &slots_.back();
  }
  KernelError ReleaseErrorSlot(int64_t handle) override {
    absl::MutexLock lock(&mu_);
    return slots_[handle];
  }
  int requested() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(reports_.size());
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<absl::AnyInvocable<void(absl::Status)>> reports_;
  std::deque<KernelError> slots_;  // stable addresses
};

class StreamLanesTest : public testing::Test {
 protected:
  // The running task's lane on the fake device (made on first use), as a backend gets it.
  DeviceLane* LaunchOnFakeDevice() {
    return ExecContext::Current()->Launch(device_key(), [this] {
      auto lane = std::make_unique<FakeLane>();
      lane_ = lane.get();
      return lane;
    });
  }
  // A kernel that "launches" on the fake device and records its position.
  absl::AnyInvocable<absl::Status()> DeviceKernel(int id, absl::Status result = absl::OkStatus()) {
    return [this, id, result]() {
      LaunchOnFakeDevice();
      absl::MutexLock lock(&mu_);
      launched_.push_back(id);
      return result;
    };
  }
  StreamTask Task(std::string label, absl::AnyInvocable<absl::Status()> kernel,
                  std::vector<std::shared_ptr<Storage>> writes = {}) {
    StreamTask t;
    t.label = std::move(label);
    t.kernel = std::move(kernel);
    t.writes = std::move(writes);
    return t;
  }
  StreamTask Done(StreamTask t, int id) {
    t.on_done = [this, id](const absl::Status&) {
      absl::MutexLock lock(&mu_);
      retired_.push_back(id);
    };
    return t;
  }
  std::vector<int> retired() {
    absl::MutexLock lock(&mu_);
    return retired_;
  }
  std::vector<int> launched() {
    absl::MutexLock lock(&mu_);
    return launched_;
  }
  // Waits until `pred` holds (the executor runs on other threads).
  template <typename Pred>
  bool Eventually(Pred pred) {
    for (int i = 0; i < 2000; ++i) {
      if (pred()) return true;
      absl::SleepFor(absl::Milliseconds(1));
    }
    return pred();
  }
  const Backend* device_key() { return reinterpret_cast<const Backend*>(&key_); }

  // A synchronize of the stream, asked for now; its status once `done` is notified.
  struct PendingSync {
    absl::Notification done;
    absl::Status status;
  };
  std::unique_ptr<PendingSync> SynchronizeLater() {
    auto sync = std::make_unique<PendingSync>();
    stream_->Synchronize([s = sync.get()](absl::Status status) {
      s->status = status;
      s->done.Notify();
    });
    return sync;
  }
  // Whether `n` kernels launched and the lane was asked for a report, waiting for both (the
  // enqueues may reach the stream's worker in more than one run).
  bool LaunchedAndAwaitingReport(size_t n) {
    return Eventually([&] { return launched().size() == n; }) && AwaitingReport();
  }
  // Whether the lane was asked for a report, waiting for it.
  bool AwaitingReport() {
    return Eventually([&] { return lane_.load() != nullptr && lane_.load()->requested() > 0; });
  }
  // Lets the device report its work (as lost, with `lost`) until the synchronize returns; its
  // status.
  absl::Status FinishUntilSynchronized(PendingSync& sync, absl::Status lost = absl::OkStatus()) {
    while (!sync.done.HasBeenNotified()) {
      lane_.load()->Finish(lost);
      absl::SleepFor(absl::Milliseconds(1));
    }
    sync.done.WaitForNotification();  // returns at once; orders the callback's writes before ours
    return sync.status;
  }

  Executor executor_{2};
  std::shared_ptr<Stream> stream_ = Stream::Create(&executor_, 0, 1000);
  // Set on the stream's thread, read by the test's: atomic (ThreadSanitizer found the race).
  std::atomic<FakeLane*> lane_{nullptr};
  int key_ = 0;
  absl::Mutex mu_;
  std::vector<int> launched_, retired_;
};

TEST_F(StreamLanesTest, LaunchesRunAheadAndRetireInOrderWhenTheDeviceReports) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(stream_->Enqueue(Done(Task("op", DeviceKernel(i)), i)).ok());
  // A host-only task behind them retires after them, though it ran at once.
  std::atomic<bool> host_ran{false};
  ASSERT_TRUE(stream_->Enqueue(Done(Task("host", [&] {
                                      host_ran = true;
                                      return absl::OkStatus();
                                    }),
                                    3))
                  .ok());
  ASSERT_TRUE(Eventually([&] { return host_ran.load(); }));
  EXPECT_EQ(launched(), (std::vector<int>{0, 1, 2}));  // all launched, nothing waited
  EXPECT_TRUE(retired().empty());
  EXPECT_EQ(stream_->pending(), 4);
  ASSERT_TRUE(AwaitingReport());
  lane_.load()->Finish();
  ASSERT_TRUE(Eventually([&] { return retired().size() == 4; }));
  EXPECT_EQ(retired(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(stream_->pending(), 0);
}

TEST_F(StreamLanesTest, SynchronizeEventsAndHostReadsWaitForTheDevice) {
  auto storage = Storage::Create(CpuAllocator(), 64).value();
  auto event = std::make_shared<Event>();
  ASSERT_TRUE(stream_->Enqueue(Task("write", DeviceKernel(0), {storage})).ok());
  ASSERT_TRUE(stream_->RecordEvent(event).ok());
  auto sync = SynchronizeLater();
  absl::Notification read;
  const uint64_t ticket = storage->BeginRead();
  storage->WhenReadable(ticket, [&] { read.Notify(); });
  ASSERT_TRUE(AwaitingReport());
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(sync->done.HasBeenNotified());
  EXPECT_FALSE(read.HasBeenNotified());
  EXPECT_FALSE(event->Query());
  lane_.load()->Finish();
  EXPECT_TRUE(sync->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_TRUE(read.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_TRUE(sync->status.ok()) << sync->status;
  EXPECT_TRUE(event->Query());
  storage->EndRead(ticket);
}

TEST_F(StreamLanesTest, AFailedLaunchPoisonsAtOnceAndIsReportedInOrder) {
  auto a = Storage::Create(CpuAllocator(), 8).value();
  auto b = Storage::Create(CpuAllocator(), 8).value();
  ASSERT_TRUE(stream_->Enqueue(Done(Task("ok", DeviceKernel(0), {b}), 0)).ok());
  ASSERT_TRUE(stream_->Enqueue(
      Done(Task("bad", DeviceKernel(1, absl::InternalError("launch failed")), {a}), 1)).ok());
  // Reads the poisoned storage: does not run, fails naming the root cause.
  StreamTask dependent = Done(Task("dependent", DeviceKernel(2)), 2);
  dependent.reads.push_back(a);
  ASSERT_TRUE(stream_->Enqueue(std::move(dependent)).ok());
  auto sync = SynchronizeLater();
  ASSERT_TRUE(LaunchedAndAwaitingReport(2));
  ASSERT_TRUE(Eventually([&] { return a->poison() != nullptr; }));
  EXPECT_EQ(launched(), (std::vector<int>{0, 1}));  // the dependent never launched
  ASSERT_NE(a->poison(), nullptr);
  EXPECT_EQ(b->poison(), nullptr);
  const absl::Status first = FinishUntilSynchronized(*sync);
  EXPECT_EQ(retired(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(first.code(), absl::StatusCode::kInternal) << first;
  EXPECT_NE(first.message().find("launch failed"), std::string::npos);
}

TEST_F(StreamLanesTest, AKernelsReportFailsItAtRetireAndPoisonsWhatDependsOnIt) {
  auto out = Storage::Create(CpuAllocator(), 8).value();
  auto later = Storage::Create(CpuAllocator(), 8).value();
  auto unrelated = Storage::Create(CpuAllocator(), 8).value();
  // The "device" finds bad data while it runs: it writes the op's slot and carries on.
  StreamTask bad = Task("op 1 (floor_divide)", [this]() {
    KernelError* slot = ExecContext::Current()->ErrorSlot(LaunchOnFakeDevice(), [](const KernelError& e) {
      return absl::InvalidArgumentError(absl::StrCat("ZeroDivisionError at element ", e.a));
    });
    ReportKernelError(slot, KernelError::kBadValue, 5, 0);
    return absl::OkStatus();
  }, {out});
  ASSERT_TRUE(stream_->Enqueue(Done(std::move(bad), 1)).ok());
  // Launched before the failure is known: it reads `out`.
  StreamTask reader = Done(Task("op 2 (mul)", DeviceKernel(2), {later}), 2);
  reader.reads.push_back(out);
  ASSERT_TRUE(stream_->Enqueue(std::move(reader)).ok());
  ASSERT_TRUE(stream_->Enqueue(Done(Task("op 3 (add)", DeviceKernel(3), {unrelated}), 3)).ok());
  auto sync = SynchronizeLater();
  ASSERT_TRUE(LaunchedAndAwaitingReport(2));
  EXPECT_EQ(launched(), (std::vector<int>{2, 3}));  // all launched before anything retired
  EXPECT_EQ(out->poison(), nullptr);                // not known until the work is done
  const absl::Status first = FinishUntilSynchronized(*sync);
  EXPECT_EQ(first.code(), absl::StatusCode::kInvalidArgument) << first;
  EXPECT_EQ(first.message(), "op 1 (floor_divide): ZeroDivisionError at element 5");
  ASSERT_NE(out->poison(), nullptr);
  ASSERT_NE(later->poison(), nullptr);  // computed from the failed op's output
  EXPECT_NE(later->poison()->message().find("ZeroDivisionError"), std::string::npos);
  EXPECT_EQ(unrelated->poison(), nullptr);
}

TEST_F(StreamLanesTest, StoragesLiveUntilTheTaskRetires) {
  std::weak_ptr<Storage> weak;
  {
    auto storage = Storage::Create(CpuAllocator(), 8).value();
    weak = storage;
    ASSERT_TRUE(stream_->Enqueue(Task("write", DeviceKernel(0), {storage})).ok());
  }
  ASSERT_TRUE(AwaitingReport());
  EXPECT_FALSE(weak.expired());  // the device may still be writing it
  lane_.load()->Finish();
  EXPECT_TRUE(Eventually([&] { return weak.expired(); }));
}

TEST_F(StreamLanesTest, OneReportPerRunOfTasks) {
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(stream_->Enqueue(Task("op", DeviceKernel(i)), false).ok());
  stream_->Wake();
  ASSERT_TRUE(LaunchedAndAwaitingReport(50));
  absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(lane_.load()->requested(), 1);  // one host callback for the whole batch
  lane_.load()->Finish();
  EXPECT_TRUE(Eventually([&] { return stream_->pending() == 0; }));
}

TEST_F(StreamLanesTest, WorkTheDeviceLostFailsItsTasksAndWhatDependsOnThem) {
  std::weak_ptr<Storage> weak_out;
  auto later = Storage::Create(CpuAllocator(), 8).value();
  auto host_out = Storage::Create(CpuAllocator(), 8).value();
  {
    auto out = Storage::Create(CpuAllocator(), 8).value();
    weak_out = out;
    ASSERT_TRUE(stream_->Enqueue(Done(Task("op 1 (mul)", DeviceKernel(1), {out}), 1)).ok());
    // Launched before the loss is known: reads op 1's output.
    StreamTask reader = Done(Task("op 2 (add)", DeviceKernel(2), {later}), 2);
    reader.reads.push_back(out);
    ASSERT_TRUE(stream_->Enqueue(std::move(reader)).ok());
  }
  // A host-only task behind them: its own work is done, but it retires after theirs.
  ASSERT_TRUE(stream_->Enqueue(Done(Task("op 3 (host)", [] { return absl::OkStatus(); },
                                         {host_out}),
                                    3))
                  .ok());
  auto sync = SynchronizeLater();
  ASSERT_TRUE(LaunchedAndAwaitingReport(2));
  EXPECT_FALSE(sync->done.HasBeenNotified());
  // The device's context is lost: the lane reports its work lost instead of done.
  const absl::Status lost = absl::InternalError("its work on cuda:0 was lost: illegal address");
  const absl::Status first = FinishUntilSynchronized(*sync, lost);
  EXPECT_EQ(retired(), (std::vector<int>{1, 2, 3}));  // still in order, none waits forever
  EXPECT_EQ(first.code(), absl::StatusCode::kInternal) << first;
  EXPECT_EQ(first.message(), "op 1 (mul): its work on cuda:0 was lost: illegal address");
  ASSERT_NE(later->poison(), nullptr);
  EXPECT_NE(later->poison()->message().find("was lost"), std::string::npos);
  EXPECT_EQ(host_out->poison(), nullptr);  // ran on the host, read nothing lost
  EXPECT_TRUE(Eventually([&] { return weak_out.expired(); }));  // freed once retired
  EXPECT_EQ(stream_->pending(), 0);
}

}  // namespace
}  // namespace tensord::engine
