// Makes Debian's Abseil synchronization visible to ThreadSanitizer.
//
// The system's libabsl_synchronization is not built with -fsanitize=thread, so TSan cannot see
// that absl::Mutex, absl::CondVar and absl::Notification order memory between threads, and
// would report every access guarded by them as a race. The TSan build links every test with
// `-Wl,--wrap=<symbol>` for the functions below (tests/tsan/CMakeLists.txt): each call from our
// code goes through a wrapper that tells TSan what the real function does (a lock acquires the
// mutex, an unlock releases it, a wait releases and reacquires it, a notification releases
// before it fires and the wait acquires after it) and then calls the real function. Our own
// code (the engine, instrumented) is then checked for real races.
#include <sanitizer/tsan_interface.h>

#include <algorithm>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#define TENSORD_STRINGIFY2(x) #x
#define TENSORD_STRINGIFY(x) TENSORD_STRINGIFY2(x)
static_assert(sizeof(TENSORD_STRINGIFY(ABSL_OPTION_INLINE_NAMESPACE_NAME)) == sizeof("debian3"),
              "the wrapped symbols below are Debian's Abseil (inline namespace debian3)");

using absl::Condition;
using absl::CondVar;
using absl::Duration;
using absl::Mutex;
using absl::Notification;
using absl::Time;

namespace {
void Acquire(const void* addr) { __tsan_acquire(const_cast<void*>(addr)); }
void Release(const void* addr) { __tsan_release(const_cast<void*>(addr)); }
}  // namespace

// Declares __real_<sym> and defines __wrap_<sym>, with `before` and `after` around the call.
#define TENSORD_WRAP(ret, sym, params, args, before, after) \
  extern "C" ret __real_##sym params;                     \
  extern "C" ret __wrap_##sym params {                    \
    before;                                               \
    ret result = __real_##sym args;                       \
    after;                                                \
    return result;                                        \
  }
#define TENSORD_WRAP_VOID(sym, params, args, before, after) \
  extern "C" void __real_##sym params;                     \
  extern "C" void __wrap_##sym params {                    \
    before;                                                \
    __real_##sym args;                                     \
    after;                                                 \
  }

// Mutex
TENSORD_WRAP_VOID(_ZN4absl7debian35Mutex4LockEv, (Mutex * m), (m), , Acquire(m))
TENSORD_WRAP_VOID(_ZN4absl7debian35Mutex10ReaderLockEv, (Mutex * m), (m), , Acquire(m))
TENSORD_WRAP(bool, _ZN4absl7debian35Mutex7TryLockEv, (Mutex * m), (m), , if (result) Acquire(m))
TENSORD_WRAP(bool, _ZN4absl7debian35Mutex13ReaderTryLockEv, (Mutex * m), (m), ,
             if (result) Acquire(m))
TENSORD_WRAP_VOID(_ZN4absl7debian35Mutex6UnlockEv, (Mutex * m), (m), Release(m), )
TENSORD_WRAP_VOID(_ZN4absl7debian35Mutex12ReaderUnlockEv, (Mutex * m), (m), Release(m), )
// Await evaluates its condition inside Abseil, sometimes on the thread that unlocks, at points
// TSan cannot see as holding the mutex. The wrappers wait by polling instead: the condition is
// evaluated here, by the waiter, with the (visible) lock held, and the lock is dropped between
// polls. Slower than Abseil's wake-ups, and just as correct.
namespace {
bool PollUntil(Mutex* m, const Condition& c, Time deadline) {
  absl::Duration pause = absl::Microseconds(1);
  while (!c.Eval()) {
    if (absl::Now() >= deadline) return false;
    m->Unlock();
    absl::SleepFor(pause);
    pause = std::min(pause * 2, absl::Milliseconds(1));
    m->Lock();
  }
  return true;
}
}  // namespace

extern "C" void __wrap__ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE(Mutex* m,
                                                                    const Condition& c) {
  PollUntil(m, c, absl::InfiniteFuture());
}
extern "C" bool __wrap__ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE(
    Mutex* m, const Condition& c, Duration d) {
  return PollUntil(m, c, absl::Now() + d);
}
extern "C" bool __wrap__ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE(
    Mutex* m, const Condition& c, Time t) {
  return PollUntil(m, c, t);
}
extern "C" void __wrap__ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE(Mutex* m,
                                                                       const Condition& c) {
  m->Lock();
  PollUntil(m, c, absl::InfiniteFuture());
}
extern "C" void __wrap__ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE(
    Mutex* m, const Condition& c) {
  m->Lock();
  PollUntil(m, c, absl::InfiniteFuture());
}
extern "C" bool __wrap__ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE(
    Mutex* m, const Condition& c, Duration d) {
  m->Lock();
  return PollUntil(m, c, absl::Now() + d);
}
extern "C" bool __wrap__ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE(
    Mutex* m, const Condition& c, Time t) {
  m->Lock();
  return PollUntil(m, c, t);
}

// CondVar: a wait releases and reacquires its mutex.
TENSORD_WRAP_VOID(_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE, (CondVar * cv, Mutex* m), (cv, m),
                  Release(m), Acquire(m))
TENSORD_WRAP(bool, _ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE,
             (CondVar * cv, Mutex* m, Duration d), (cv, m, d), Release(m), Acquire(m))
TENSORD_WRAP(bool, _ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE,
             (CondVar * cv, Mutex* m, Time t), (cv, m, t), Release(m), Acquire(m))

// Notification: what happens before Notify() happens before a wait that sees it.
TENSORD_WRAP_VOID(_ZN4absl7debian312Notification6NotifyEv, (Notification * n), (n), Release(n), )
TENSORD_WRAP_VOID(_ZNK4absl7debian312Notification19WaitForNotificationEv,
                  (const Notification* n), (n), , Acquire(n))
TENSORD_WRAP(bool,
             _ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE,
             (const Notification* n, Duration d), (n, d), , if (result) Acquire(n))
TENSORD_WRAP(bool,
             _ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_4TimeE,
             (const Notification* n, Time t), (n, t), , if (result) Acquire(n))
