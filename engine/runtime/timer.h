// Timers for work that must wait without holding a thread (a stream occupied for a while).
#ifndef TENSORD_ENGINE_RUNTIME_TIMER_H_
#define TENSORD_ENGINE_RUNTIME_TIMER_H_

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"

namespace tensord::engine {

// Calls `fn` once `delay` has passed, on the process-wide timer thread: `fn` must only post or
// wake work, never block or run it.
void RunAfter(absl::Duration delay, absl::AnyInvocable<void()> fn);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_TIMER_H_
