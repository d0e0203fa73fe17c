// Stream::Cancel on the CPU: queued tasks are dropped with CANCELLED (poisoning their outputs),
// a running kernel stops at its next piece, what the dropped tasks held is freed, and work
// queued afterwards runs as usual (engine/runtime/stream.h).
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "engine/runtime/allocator.h"
#include "engine/runtime/event.h"
#include "engine/runtime/exec_context.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/stream.h"
#include "engine/runtime/thread_pool.h"
#include "engine/tensor/storage.h"
#include "gtest/gtest.h"

namespace tensord::engine {
namespace {

class StreamCancelTest : public testing::Test {
 protected:
  StreamTask Task(std::string label, absl::AnyInvocable<absl::Status()> kernel,
                  std::vector<std::shared_ptr<Storage>> writes = {}) {
    StreamTask t;
    t.label = std::move(label);
    t.kernel = std::move(kernel);
    t.writes = std::move(writes);
    return t;
  }
  // Synchronizes the stream; returns the first error since the last synchronize.
  absl::Status Sync() {
    absl::Notification done;
    absl::Status first = absl::InternalError("synchronize never answered");
    stream_->Synchronize([&](absl::Status s) {
      first = std::move(s);
      done.Notify();
    });
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
    return first;
  }

  // Whether nothing is left queued within a few seconds (the synchronize marker that just
  // answered leaves the queue right after).
  bool Drained() {
    for (int i = 0; i < 5000 && stream_->pending() != 0; ++i) absl::SleepFor(absl::Milliseconds(1));
    return stream_->pending() == 0;
  }

  Executor executor_{2};
  std::shared_ptr<Stream> stream_ = Stream::Create(&executor_, 0, 1000);
};

TEST_F(StreamCancelTest, ARunningKernelStopsAtItsNextPieceAndQueuedOpsNeverRun) {
  auto out = Storage::Create(CpuAllocator(), 64).value();
  auto later = Storage::Create(CpuAllocator(), 64).value();
  constexpr int64_t kPieces = 2000;  // 5 ms each: 10 s if it ran to its end
  std::atomic<int64_t> pieces_run{0};
  absl::Notification started;
  std::atomic<bool> notified{false};
  ASSERT_TRUE(stream_
                  ->Enqueue(Task("op 1 (long)",
                                 [&] {
                                   ParallelFor(0, kPieces, 1, [&](int64_t b, int64_t e) {
                                     if (!notified.exchange(true)) started.Notify();
                                     for (int64_t i = b; i < e; ++i) {
                                       absl::SleepFor(absl::Milliseconds(5));
                                       ++pieces_run;
                                     }
                                   });
                                   return absl::OkStatus();
                                 },
                                 {out}))
                  .ok());
  std::atomic<int> queued_ran{0};
  std::weak_ptr<Storage> held;
  {
    // A queued op holding the only reference to a storage: dropped, the storage is freed.
    auto only_here = Storage::Create(CpuAllocator(), 1 << 20).value();
    held = only_here;
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(stream_
                      ->Enqueue(Task("op " + std::to_string(i + 2) + " (queued)",
                                     [&] {
                                       ++queued_ran;
                                       return absl::OkStatus();
                                     },
                                     {i == 0 ? only_here : later}))
                      .ok());
    }
  }
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  const absl::Time cancelled_at = absl::Now();
  EXPECT_EQ(stream_->Cancel(absl::CancelledError("cancelled by the test")), 4);
  const absl::Status first = Sync();
  EXPECT_LT(absl::Now() - cancelled_at, absl::Seconds(2));  // not the 10 s of the whole kernel
  EXPECT_LT(pieces_run.load(), kPieces);
  EXPECT_EQ(queued_ran.load(), 0);
  EXPECT_TRUE(first.ok()) << first;  // the canceller knows: not an error to report again
  // Outputs poisoned with CANCELLED, each naming its own op.
  ASSERT_NE(out->poison(), nullptr);
  EXPECT_EQ(out->poison()->code(), absl::StatusCode::kCancelled);
  EXPECT_NE(out->poison()->message().find("op 1 (long)"), std::string::npos);
  EXPECT_NE(out->poison()->message().find("cancelled by the test"), std::string::npos);
  ASSERT_NE(later->poison(), nullptr);
  EXPECT_EQ(later->poison()->code(), absl::StatusCode::kCancelled);
  EXPECT_NE(later->poison()->message().find("(queued)"), std::string::npos);
  EXPECT_TRUE(held.expired());
  EXPECT_TRUE(Drained());

  // Work queued after the cancel runs.
  auto fresh = Storage::Create(CpuAllocator(), 64).value();
  std::atomic<bool> ran{false};
  ASSERT_TRUE(stream_->Enqueue(Task("op 5 (after)", [&] {
                                ran = true;
                                return absl::OkStatus();
                              },
                                    {fresh}))
                  .ok());
  EXPECT_TRUE(Sync().ok());
  EXPECT_TRUE(ran.load());
  EXPECT_EQ(fresh->poison(), nullptr);
}

TEST_F(StreamCancelTest, AWaitForAnotherStreamKeepsItsOrderAndEndsWhenThatStreamIsCancelled) {
  // The other stream holds for a minute, then records the event this stream waits for.
  std::shared_ptr<Stream> other = Stream::Create(&executor_, 1, 1000);
  StreamTask hold = Task("op 1 (holds)", [] { return absl::OkStatus(); });
  hold.hold = absl::Seconds(60);
  ASSERT_TRUE(other->Enqueue(std::move(hold)).ok());
  auto event = std::make_shared<Event>();
  ASSERT_TRUE(other->RecordEvent(event).ok());
  ASSERT_TRUE(stream_->WaitEvent(event).ok());
  auto out = Storage::Create(CpuAllocator(), 64).value();
  std::atomic<bool> ran{false};
  ASSERT_TRUE(stream_->Enqueue(Task("op 2 (behind the wait)", [&] {
                                ran = true;
                                return absl::OkStatus();
                              },
                                    {out}))
                  .ok());
  EXPECT_EQ(stream_->Cancel(absl::CancelledError("cancelled")), 1);  // the wait is a marker
  // The wait stays: work queued here after the cancel must still follow the other stream.
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(stream_->pending(), 2);
  EXPECT_FALSE(ran.load());
  // Cancelling the other stream ends its hold, so the event completes and this stream drains.
  const absl::Time t0 = absl::Now();
  EXPECT_EQ(other->Cancel(absl::CancelledError("cancelled")), 1);
  EXPECT_TRUE(Sync().ok());
  EXPECT_LT(absl::Now() - t0, absl::Seconds(10));
  EXPECT_FALSE(ran.load());
  ASSERT_NE(out->poison(), nullptr);
  EXPECT_EQ(out->poison()->code(), absl::StatusCode::kCancelled);

  // An op queued after the cancel that reads the cancelled output fails, and is reported.
  auto next = Storage::Create(CpuAllocator(), 64).value();
  StreamTask reader = Task("op 3 (reads it)", [] { return absl::OkStatus(); }, {next});
  reader.reads.push_back(out);
  ASSERT_TRUE(stream_->Enqueue(std::move(reader)).ok());
  const absl::Status first = Sync();
  EXPECT_EQ(first.code(), absl::StatusCode::kFailedPrecondition) << first;
  EXPECT_NE(first.message().find("op 3 (reads it) depends on a failed op: op 2 (behind the "
                                 "wait): cancelled"),
            std::string::npos)
      << first;
  EXPECT_TRUE(Drained());
}

TEST(StreamCancelYieldTest, WorkLentACancelledKernelsThreadIsNotCancelled) {
  // One thread: the closure posted while the kernel runs is run on the kernel's thread, between
  // its pieces (Executor::YieldToWaiting), after the kernel's task was cancelled.
  Executor executor(1);
  std::shared_ptr<Stream> stream = Stream::Create(&executor, 0, 1000);
  std::atomic<int64_t> lent_pieces{0};
  std::atomic<bool> lent_saw_a_task{true};
  absl::Notification lent_done;
  StreamTask task;
  task.label = "op 1 (long)";
  task.kernel = [&] {
    ParallelFor(0, 1000, 1, [&](int64_t b, int64_t e) {
      if (b == 0) {
        stream->Cancel(absl::CancelledError("cancelled by the test"));
        executor.Post([&] {
          lent_saw_a_task = ExecContext::Current() != nullptr;
          ParallelFor(0, 64, 1, [&](int64_t b2, int64_t e2) { lent_pieces += e2 - b2; });
          lent_done.Notify();
        });
      }
      absl::SleepFor(absl::Microseconds(100 * (e - b)));
    });
    return absl::OkStatus();
  };
  ASSERT_TRUE(stream->Enqueue(std::move(task)).ok());
  ASSERT_TRUE(lent_done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(lent_saw_a_task.load());
  EXPECT_EQ(lent_pieces.load(), 64);  // every piece: the cancel was not the lent work's
  absl::Notification synced;
  stream->Synchronize([&](absl::Status) { synced.Notify(); });
  EXPECT_TRUE(synced.WaitForNotificationWithTimeout(absl::Seconds(30)));
}

TEST_F(StreamCancelTest, CancellingAnIdleStreamCancelsNothing) {
  EXPECT_EQ(stream_->Cancel(absl::CancelledError("cancelled")), 0);
  std::atomic<bool> ran{false};
  ASSERT_TRUE(stream_->Enqueue(Task("op 1", [&] {
                                ran = true;
                                return absl::OkStatus();
                              }))
                  .ok());
  EXPECT_TRUE(Sync().ok());
  EXPECT_TRUE(ran.load());
}

TEST_F(StreamCancelTest, AnErrorAReadHasRaisedIsNotRaisedAgainBySynchronize) {
  auto out = Storage::Create(CpuAllocator(), 64).value();
  auto derived = Storage::Create(CpuAllocator(), 64).value();
  ASSERT_TRUE(stream_->Enqueue(Task("op 1 (bad)", [] { return absl::OutOfRangeError("bad"); },
                                    {out}))
                  .ok());
  StreamTask uses = Task("op 2 (uses)", [] { return absl::OkStatus(); }, {derived});
  uses.reads = {out};
  ASSERT_TRUE(stream_->Enqueue(std::move(uses)).ok());
  ASSERT_TRUE(Drained());
  // A read of op 2's output met op 1's error (the poison it carries): raised there, forgotten.
  ASSERT_NE(derived->poison(), nullptr);
  EXPECT_EQ(derived->poison()->message(), "op 1 (bad): bad");
  stream_->ForgetError(*derived->poison());
  EXPECT_TRUE(Sync().ok());
  // Not read: Synchronize raises it, once.
  auto out3 = Storage::Create(CpuAllocator(), 64).value();
  auto out4 = Storage::Create(CpuAllocator(), 64).value();
  ASSERT_TRUE(stream_->Enqueue(Task("op 3 (bad)", [] { return absl::OutOfRangeError("bad"); },
                                    {out3}))
                  .ok());
  EXPECT_EQ(Sync().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(Sync().ok());
  // Forgetting another error leaves this one.
  ASSERT_TRUE(stream_->Enqueue(Task("op 4 (bad)", [] { return absl::OutOfRangeError("bad"); },
                                    {out4}))
                  .ok());
  ASSERT_TRUE(Drained());
  stream_->ForgetError(absl::OutOfRangeError("op 3 (bad): bad"));
  EXPECT_EQ(Sync().code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace tensord::engine
