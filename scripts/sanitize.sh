#!/usr/bin/env bash
# The sanitizer job (CI runs it after `make test`; `make sanitize` by hand): one clang build with
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage (build-fuzz/, shared with
# scripts/fuzz.sh), then
#   1. every fuzz target replays its checked-in corpus and fuzzes for FUZZ_SECONDS (15) more;
#   2. a chosen subset of the suites runs against the sanitized engine and server: the engine's
#      unit tests (the pooling and resampling kernels', whose reads follow strides and tables,
#      among them), the integration tests, and the Python suites that attack the server (bad
#      input, hardening, streams, leases, data, seeds, and ctc_loss: its kernels read where
#      the lengths in the data point). The golden and compute suites, whose
#      checks of values are the same code paths at far greater length, run in `make test` only.
#   3. ThreadSanitizer over the engine's own concurrency tests (build-tsan/): streams, lanes and
#      retirement, the executor, the kernel thread pool, storages' read/write ordering. Debian's
#      Abseil and gRPC are not built for TSan; Abseil's Mutex, CondVar and Notification are
#      made visible to it by wrapping their entry points (tests/tsan/absl_sync_for_tsan.cc), and
#      the server's tests, whose threads are gRPC's, are left to ASan (gRPC's own locks would
#      still be invisible there).
# Any sanitizer report fails the job.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
TSAN_DIR=${TSAN_BUILD_DIR:-build-tsan}
JOBS=${JOBS:-$(nproc)}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

FUZZ_JOBS=$JOBS FUZZ_BUILD_DIR=$BUILD_DIR ./scripts/fuzz.sh "${FUZZ_SECONDS:-15}"

unit=(dtype tensor_meta view_ops copy_kernel bad_input allocator thread_pool op_registry
      elementwise offset_calculator stream_lanes memory_budget ctc reduce_accumulate owed_reports
      row_gather pool upsample reduce_sum strided_loop)
integration=(service async bad_input_server seed_examples)
python=(bad_input hardening streams lease data seeds ctc_loss)
targets=(tensord tensord_python_proto)
for t in "${unit[@]}" "${integration[@]}"; do targets+=("${t}_test"); done
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${targets[@]}"

tests=()
for t in "${unit[@]}" "${integration[@]}"; do tests+=("${t}_test"); done
for t in "${python[@]}"; do tests+=("python_${t}_test"); done
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
# halt_on_error: the first report fails the test that triggered it. Leaks are checked in the
# unit tests; the server process exits with _Exit (no leak check), by design (SIGTERM drain).
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The instrumented server answers each call several times slower: latency limits scale.
export TENSORD_TIMING_SCALE=${TENSORD_TIMING_SCALE:-3}
(cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS" -R "$regex")

tsan_tests=(stream_lanes_test owed_reports_test thread_pool_test allocator_test memory_budget_test)
if [ ! -f "$TSAN_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$TSAN_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" -DTENSORD_TSAN=ON -DTENSORD_CUDA=OFF \
    -DTENSORD_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$TSAN_DIR" -j "$JOBS" --target "${tsan_tests[@]}"
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
(cd "$TSAN_DIR" && ctest --output-on-failure -j "$JOBS" -R "^($(IFS='|'; echo "${tsan_tests[*]}"))\$")
