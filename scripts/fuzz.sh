#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang, ASan and UBSan in build-fuzz/, runs each
# for SECONDS seconds on its checked-in corpus, and prints per target: executions, crashes and
# coverage (libFuzzer's cov/ft), then the totals. Exits non-zero if any target crashed.
#
#   scripts/fuzz.sh [SECONDS-PER-TARGET (60)] [TARGET...]   (targets: run_ops plan request upload metadata)
#   make fuzz FUZZ_SECONDS=60
#
# The checked-in corpora (tests/fuzz/corpus/<target>/) are only read: new inputs go to
# fuzz-work/corpus/<target>/, crash reproducers to fuzz-work/artifacts/<target>/, logs to
# fuzz-work/logs/ (git-ignored). Replay a reproducer: build-fuzz/tests/fuzz/<target>_fuzz FILE.
# Environment: FUZZ_BUILD_DIR (build-fuzz), FUZZ_WORK_DIR (fuzz-work), FUZZ_JOBS (1: build jobs),
# FUZZ_SRC_DIR (the checkout), CC/CXX (clang-14/clang++-14), FUZZ_ARGS (more libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

SECONDS_PER_TARGET=${1:-60}
[ $# -gt 0 ] && shift
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(run_ops plan request upload metadata)
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
WORK_DIR=${FUZZ_WORK_DIR:-fuzz-work}
SRC_DIR=${FUZZ_SRC_DIR:-$ROOT}
JOBS=${FUZZ_JOBS:-1}
CC=${CC:-clang-14}
CXX=${CXX:-clang++-14}
case "$CXX" in *clang*) ;; *) CC=clang-14 CXX=clang++-14 ;; esac

if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$SRC_DIR" -B "$BUILD_DIR" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
    -DTENSORD_FUZZ=ON -DTENSORD_SANITIZE=ON -DTENSORD_CUDA=OFF -DTENSORD_BUILD_BENCH=OFF >/dev/null
fi
build_targets=()
for t in "${TARGETS[@]}"; do build_targets+=("${t}_fuzz"); done
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${build_targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$WORK_DIR/logs"
total_runs=0 total_crashes=0 total_cov=0 total_ft=0
report=()
for t in "${TARGETS[@]}"; do
  corpus="$WORK_DIR/corpus/$t" artifacts="$WORK_DIR/artifacts/$t" log="$WORK_DIR/logs/$t.log"
  mkdir -p "$corpus" "$artifacts"
  # Failures are libFuzzer's crash-, leak-, timeout- and oom- reproducers; slow-unit- files
  # (an input that took over 10 s once, e.g. on a busy machine) are reported, not failures.
  failures() { find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l; }
  slow_units() { find "$artifacts" -maxdepth 1 -type f -name 'slow-unit-*' | wc -l; }
  before=$(failures) slow_before=$(slow_units)
  echo "== $t: ${SECONDS_PER_TARGET}s (log: $log)"
  rc=0
  # -entropic=0: with the server's tens of thousands of coverage features, libFuzzer's entropic
  # schedule spent a third of the time in its own bookkeeping (perf); plain scheduling runs the
  # targets about twice as fast (request: 523 -> 1,250 executions/s).
  # -detect_leaks=0: with LeakSanitizer on during fuzzing, libFuzzer scans the whole heap after
  # every input that keeps an allocation (the mutator's store of valid calls does, by design):
  # perf showed 70% of the time there (plan: 250 -> 2,400 executions/s). Leaks are the ASan unit
  # tests' job (scripts/sanitize.sh runs them with detect_leaks=1).
  # shellcheck disable=SC2086
  "$BUILD_DIR/tests/fuzz/${t}_fuzz" "$corpus" "$SRC_DIR/tests/fuzz/corpus/$t" \
    -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 -artifact_prefix="$artifacts/" \
    -timeout=30 -rss_limit_mb=4096 -max_len=16384 -entropic=0 -detect_leaks=0 ${FUZZ_ARGS:-} >"$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [ -z "$runs" ] && runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  crashes=$(( $(failures) - before )) slow=$(( $(slow_units) - slow_before ))
  [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1
  line=$(printf '%-9s executions %9s  (%s/s)  crashes %d  cov %6s  ft %7s' "$t" "${runs:-0}" \
    "${speed:-?}" "$crashes" "${cov:-?}" "${ft:-?}")
  stats=$(grep -h 'fuzz stats:' "$log" | tail -1 || true)
  [ -n "$stats" ] && line="$line"$'\n'"          $stats"
  [ "$slow" -gt 0 ] && line="$line"$'\n'"          $slow slow unit(s) (over 10 s; not failures): $artifacts/"
  if [ "$crashes" -gt 0 ]; then
    line="$line"$'\n'"          CRASH: see $log; reproducers in $artifacts/"
    grep -m3 -E 'ERROR: (AddressSanitizer|libFuzzer|UndefinedBehaviorSanitizer|LeakSanitizer)|runtime error|FUZZ CHECK FAILED' "$log" \
      | sed 's/^/          /' || true
    # The log's end (the stack, the reproducer's name), so that a CI log alone explains it.
    echo "---- $log (last 40 lines)"; tail -n 40 "$log"; echo "----"
  fi
  echo "$line"
  report+=("$line")
  total_runs=$((total_runs + ${runs:-0})) total_crashes=$((total_crashes + crashes))
  total_cov=$((total_cov + ${cov:-0})) total_ft=$((total_ft + ${ft:-0}))
done
echo
echo "== fuzz summary (${SECONDS_PER_TARGET}s per target)"
printf '%s\n' "${report[@]}"
printf '%-9s executions %9s  crashes %d  cov %6s  ft %7s  (cov/ft: sums over the targets)\n' \
  total "$total_runs" "$total_crashes" "$total_cov" "$total_ft"
[ "$total_crashes" -eq 0 ]
