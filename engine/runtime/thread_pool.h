// A process-wide pool of worker threads for data-parallel kernels.
#ifndef TENSORD_ENGINE_RUNTIME_THREAD_POOL_H_
#define TENSORD_ENGINE_RUNTIME_THREAD_POOL_H_

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace tensord::engine {

// Number of threads ParallelFor may use (the caller included).
int ParallelismDegree();

// Runs fn(chunk_begin, chunk_end) over [begin, end) in chunks of at least `grain` iterations,
// on the calling thread and on idle pool workers. Returns when every chunk has run.
// Safe to call from many threads at once and from inside fn (nested calls run inline when no
// worker is idle): the caller always works on its own job, so it never waits for a busy pool.
//
// Long work is also cut into pieces of bounded size: between the pieces it runs itself, the
// caller yields its thread to other streams' waiting work (Executor::YieldToWaiting), so that a
// long kernel delays another session's small op by about one piece.
void ParallelFor(int64_t begin, int64_t end, int64_t grain,
                 absl::FunctionRef<void(int64_t, int64_t)> fn);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_THREAD_POOL_H_
