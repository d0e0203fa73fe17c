#!/usr/bin/env bash
# Runs tensord's GPU tests on a GPU machine that cannot build tensord.
#
# The development machine builds tensord but has no GPU. The GPU machine has a GPU, the NVIDIA
# driver, the CUDA toolkit (/usr/local/cuda, with compute-sanitizer) and Python 3 with torch,
# grpcio, protobuf, numpy and pytest, but none of tensord's C++ dependencies (gRPC, protobuf,
# abseil, OpenBLAS). So the binaries are built here and packed, with every shared library they
# need that the GPU machine lacks, into one small archive that is replayed there:
#
#   here:                 make build && scripts/gpu-check.sh bundle
#   on the GPU machine:   scripts/gpu-check.sh run        (with .gpu-bundle/ carried along)
#
# `bundle [BUILD_DIR]` writes .gpu-bundle/bundle.tar.xz (BUILD_DIR defaults to build). It holds:
#   bin/        tensord, every ctest test labelled `gpu` that is a compiled program, and the
#               benchmark programs BUILD_DIR/bench/gpu_* and service_bench (run with its
#               sessions on cuda) (all stripped)
#   lib/        the shared libraries they load, except glibc, the NVIDIA driver and the CUDA
#               toolkit's libraries (the GPU machine has its own)
#   client/python/ tests/python/ tests/golden/ scripts/gpu-check.sh   at their paths in the repo
#   MANIFEST    the commit, the date, the files and the gpu tests' ctest commands and environment
#
# `run` unpacks it to a temporary folder and runs, each under a time limit: the C++ gpu tests,
# the Python gpu tests (tests/python/test_cuda.py, `-m gpu`), the gpu_* benchmarks, and last,
# as the slowest, the C++ gpu tests again under compute-sanitizer's memcheck. Logs go to $OUT
# when it is set (at most eight files: setup.log cpp.log python.log failures.log differential.log
# bench.log sanitizer.log summary.txt), else to a temporary folder. It ends with a summary table and exits non-zero when any step failed.
set -euo pipefail

SCRIPT_PATH=$(readlink -f "${BASH_SOURCE[0]}")
SRC_DIR=$(cd "$(dirname "$SCRIPT_PATH")/.." && pwd -P)
BUNDLE_DIR=$SRC_DIR/.gpu-bundle
BUNDLE_FILE=$BUNDLE_DIR/bundle.tar.xz
MAX_BUNDLE_MIB=48              # everything carried to the GPU machine must stay under 64 MiB
CUDA_ROOT=/usr/local/cuda
# Source paths copied into the bundle at the same relative paths.
BUNDLED_SOURCES=(client/python tests/python tests/golden tests/gpu/UNVERIFIED.md scripts/gpu-check.sh)
# Time limits of one step, in seconds.
TEST_TIMEOUT=${GPU_CHECK_TEST_TIMEOUT:-300}
SANITIZER_TIMEOUT=${GPU_CHECK_SANITIZER_TIMEOUT:-600}
BENCH_TIMEOUT=${GPU_CHECK_BENCH_TIMEOUT:-300}

usage() {
  cat <<'EOF'
Usage: scripts/gpu-check.sh COMMAND

Runs tensord's GPU tests on a GPU machine that has CUDA and Python but not tensord's C++
dependencies. Two steps:

  1. On the development machine (no GPU needed), from the repository root:

       make build && scripts/gpu-check.sh bundle

     This writes .gpu-bundle/bundle.tar.xz (git-ignored; at most 48 MiB): tensord, the
     ctest tests labelled `gpu`, the build/bench/gpu_* programs, the shared libraries they
     need (not glibc, the NVIDIA driver or CUDA's), the Python client and tests, a MANIFEST.

  2. On the GPU machine, on a copy of the working tree with .gpu-bundle/ carried along:

       scripts/gpu-check.sh run

     It runs the C++ gpu tests, the gpu_* benchmarks, the Python gpu tests (pytest -m gpu
     tests/python/test_cuda.py) and last the C++ gpu tests under compute-sanitizer (memcheck), each
     with a time limit, with TENSORD_REQUIRE_GPU=1 (a missing GPU fails the tests). Logs go to
     $OUT when set (setup.log, cpp.log, python.log, failures.log, differential.log, bench.log,
     sanitizer.log, summary.txt). It
     prints a summary table (PASS / FAIL / SKIPPED / NOT RUN; exit 77 counts as SKIPPED) and
     exits non-zero when any step failed.

Commands:
  bundle [BUILD_DIR]   pack the bundle from BUILD_DIR (default: build)
  run                  unpack .gpu-bundle/bundle.tar.xz and run the GPU checks
  help                 this text

Environment: GPU_CHECK_TEST_TIMEOUT (300), GPU_CHECK_SANITIZER_TIMEOUT (600) and
GPU_CHECK_BENCH_TIMEOUT (300) seconds per step; GPU_CHECK_PYTEST_WORKERS (8), pytest-xdist
workers where it is installed; GPU_CHECK_SANITIZE_PYTHON (tests/python/test_linalg.py), the
Python test files whose server runs under memcheck, on cuda; GPU_CHECK_SKIP, a regular expression: the steps whose names
(as the summary prints them) match are NOT RUN; GPU_CHECK_DEADLINE, seconds for the whole
`run` (unset: no limit; e.g. 540 under a 10-minute runner: later steps shrink their limits or
are NOT RUN, so the summary is always written); GPU_CHECK_STRIP=0 keeps symbols in the bundled
programs (bigger bundle, named host frames in sanitizer reports); GPU_CHECK_KEEP=1 keeps the
unpacked bundle after `run`.
EOF
}

die() { echo "gpu-check: $*" >&2; exit 1; }
note() { echo "gpu-check: $*" >&2; }
need() { command -v "$1" >/dev/null 2>&1 || die "needs \`$1\`, which is not installed"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
mib() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1048576 }'; }
is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' \n')" = '177ELF' ]; }

# Whether a library that ldd resolved stays out of the bundle: glibc (it must match the GPU
# machine's own loader), the NVIDIA driver, and the CUDA toolkit (the GPU machine has CUDA 13).
# Prints the reason when it does.
system_library() {
  local name=$1 path=${2:-}
  case "$name" in
    linux-vdso.so* | linux-gate.so* | ld-linux* | ld64.so* | libc.so* | libm.so* | libdl.so* | \
    libpthread.so* | librt.so* | libresolv.so* | libutil.so* | libanl.so* | libnsl.so* | \
    libmvec.so* | libBrokenLocale.so* | libthread_db.so* | libnss_* | libc_malloc_debug.so*)
      echo "glibc"; return 0 ;;
    libcuda.so* | libnvidia-* | libcudadebugger.so*)
      echo "NVIDIA driver"; return 0 ;;
    libcublas* | libcudart* | libnvrtc* | libnvJitLink* | libcufft* | libcurand* | libcusolver* | \
    libcusparse* | libnvToolsExt* | libnvtx* | libcupti* | libnvperf* | libcudnn* | libnccl* | \
    libnpp* | libnvjpeg* | libcufile*)
      echo "CUDA toolkit"; return 0 ;;
  esac
  case "$path" in
    /usr/local/cuda*) echo "CUDA toolkit"; return 0 ;;
  esac
  if [ -n "$path" ] && [ -e "$path" ]; then
    case "$(readlink -f "$path")" in
      /usr/local/cuda*) echo "CUDA toolkit"; return 0 ;;
    esac
  fi
  return 1
}

# ------------------------------------------------------------------------------------------
# bundle: runs on the development machine after the build.
# ------------------------------------------------------------------------------------------
cmd_bundle() {
  local build_arg=${1:-build}
  build_arg=${build_arg#BUILD_DIR=}
  need ctest; need ldd; need python3; need xz; need tar; need od

  # BUILD_DIR is taken relative to the current folder, else to the repository root.
  local build_dir
  if [ -d "$build_arg" ]; then
    build_dir=$(cd "$build_arg" && pwd -P)
  elif [ -d "$SRC_DIR/$build_arg" ]; then
    build_dir=$(cd "$SRC_DIR/$build_arg" && pwd -P)
  else
    die "no build folder '$build_arg': run \`make build\` first"
  fi
  [ -x "$build_dir/tensord" ] || die "no $build_dir/tensord: run \`make build\` first"
  compgen -G "$SRC_DIR/client/python/tensord/v1/*_pb2*.py" >/dev/null ||
    die "no generated client/python/tensord/v1/*_pb2*.py: run \`make build\` first"

  local stage
  stage=$(mktemp -d "${TMPDIR:-/tmp}/gpu-bundle.XXXXXX")
  # shellcheck disable=SC2064  # expand $stage now
  trap "rm -rf '$stage'" EXIT
  local root=$stage/bundle
  mkdir -p "$root/bin" "$root/lib"

  # 1. The ctest tests labelled gpu. A compiled test (an ELF file under BUILD_DIR) goes into
  #    bin/; one run by an interpreter (python, sh) is only recorded, `run` replays it.
  ctest --test-dir "$build_dir" -L '^gpu$' --show-only=json-v1 >"$stage/ctest.json" 2>"$stage/ctest.err" ||
    { cat "$stage/ctest.err" >&2; die "ctest --show-only failed in $build_dir"; }
  python3 - "$stage/ctest.json" "$build_dir" "$stage/exes.txt" "$stage/tests.txt" <<'PY'
import json, os, sys

ctest_json, build, exes_out, tests_out = sys.argv[1:5]
with open(ctest_json) as f:
    data = json.load(f)

def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False

exes, lines = [], []
for t in data.get("tests", []):
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    labels = props.get("LABELS", [])
    if "gpu" not in labels:
        continue
    cmd = t.get("command") or []
    if not cmd:
        sys.exit(f"gpu-check: ctest test {t['name']} has no command (is it built?)")
    real = os.path.realpath(cmd[0])
    under_build = real.startswith(build + os.sep)
    if under_build and not os.path.exists(real):
        sys.exit(f"gpu-check: ctest test {t['name']}: {cmd[0]} does not exist (not built?)")
    kind = "exe" if under_build and is_elf(real) else "script"
    if kind == "exe" and cmd[0] not in exes:
        exes.append(cmd[0])
    env = props.get("ENVIRONMENT", [])
    if isinstance(env, str):
        env = [env]
    mod = props.get("ENVIRONMENT_MODIFICATION", [])
    if isinstance(mod, str):
        mod = [mod]
    entry = {"name": t["name"], "kind": kind, "command": cmd, "environment": env,
             "environment_modification": mod,
             "working_directory": props.get("WORKING_DIRECTORY", ""),
             "disabled": bool(props.get("DISABLED", False))}
    lines.append("test: " + json.dumps(entry))
with open(exes_out, "w") as f:
    f.writelines(e + "\n" for e in exes)
with open(tests_out, "w") as f:
    f.writelines(line + "\n" for line in lines)
PY

  # 2. The programs: tensord, the compiled gpu tests, the gpu_* benchmarks, service_bench.
  local -a binaries=("$build_dir/tensord") benches=()
  local f
  while IFS= read -r f; do binaries+=("$f"); done <"$stage/exes.txt"
  if [ -d "$build_dir/bench" ]; then
    for f in "$build_dir"/bench/gpu_*; do
      if [ -x "$f" ] && is_elf "$f"; then binaries+=("$f"); benches+=("$(basename "$f")"); fi
    done
    # The service benchmark with its sessions on the GPU: small ops through the service and
    # transfers against raw TCP on the GPU machine.
    f=$build_dir/bench/service_bench
    if [ -x "$f" ] && is_elf "$f"; then
      binaries+=("$f")
      benches+=("service_bench --quick --device=cuda")
    fi
  fi

  local -A seen_bin=()
  local -a manifest_files=()
  local name
  for f in "${binaries[@]}"; do
    name=$(basename "$f")
    [ -z "${seen_bin[$name]:-}" ] || die "two programs named $name (${seen_bin[$name]} and $f)"
    seen_bin[$name]=$f
    cp -L "$f" "$root/bin/$name"
    manifest_files+=("binary: bin/$name <= $f")
  done

  # 3. The shared libraries: everything ldd resolves for any program, but system_library ones.
  local -A libs=()
  local -a excluded=()
  local lname arrow lpath reason
  for f in "${binaries[@]}"; do
    while read -r lname arrow lpath _; do
      [ "$arrow" = "=>" ] || continue             # the vdso and the loader line have no "=>"
      [ "$lpath" != "not" ] || lpath=""            # "libx.so => not found"
      if reason=$(system_library "$lname" "$lpath"); then
        excluded+=("$lname ($reason)")
        continue
      fi
      [ -n "$lpath" ] || die "$f needs $lname, which ldd cannot find here"
      case "$lpath" in /*) ;; *) continue ;; esac
      if [ -n "${libs[$lname]:-}" ]; then
        [ "${libs[$lname]}" = "$lpath" ] || note "warning: $lname resolves to ${libs[$lname]} and $lpath; bundling the first"
        continue
      fi
      libs[$lname]=$lpath
    done < <(ldd "$f" 2>/dev/null || true)
  done
  for lname in "${!libs[@]}"; do
    cp -L "${libs[$lname]}" "$root/lib/$lname"
    manifest_files+=("library: lib/$lname <= ${libs[$lname]}")
  done

  # 4. Strip the copies (they are copies: the build is untouched).
  if [ "${GPU_CHECK_STRIP:-1}" != 0 ] && command -v strip >/dev/null 2>&1; then
    chmod -R u+w "$root/bin" "$root/lib"
    for f in "$root"/bin/* "$root"/lib/*; do
      [ -e "$f" ] || continue
      strip --strip-unneeded "$f" 2>/dev/null || note "could not strip $(basename "$f"); bundling it as is"
    done
  fi

  # 5. The Python client (with its generated *_pb2*.py), the Python tests, the golden data, this
  #    script, at their paths in the repository.
  (cd "$SRC_DIR" && tar --exclude=__pycache__ --exclude='*.pyc' --exclude='*.egg-info' \
      --exclude=client/python/build -cf - "${BUNDLED_SOURCES[@]}") | tar -C "$root" -xf -

  # 6. Paths compiled into the programs (a test that runs $BUILD_DIR/tensord, or reads a file of
  #    the source tree): `run` warns when they do not exist on the GPU machine.
  python3 - "$SRC_DIR" "$build_dir" "$root/bin" >"$stage/embedded.txt" <<'PY'
import os, re, sys

src, build, bindir = sys.argv[1:4]
source_ext = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".inc", ".proto"}
prefixes = sorted({src, build}, key=len, reverse=True)
pattern = re.compile(b"(?:" + b"|".join(re.escape(p.encode()) for p in prefixes) +
                     b")(?:/[A-Za-z0-9_.+-]+)*")
for name in sorted(os.listdir(bindir)):
    with open(os.path.join(bindir, name), "rb") as f:
        data = f.read()
    found = set()
    for m in pattern.finditer(data):
        path = m.group().decode(errors="replace")
        # Source files named by __FILE__ (assertion messages) are harmless; report the rest
        # that name something real: programs, data files, folders.
        if os.path.splitext(path)[1] in source_ext or not os.path.exists(path):
            continue
        found.add(path)
    for path in sorted(found):
        print(f"embedded_path: bin/{name} {path}")
PY

  # 7. The MANIFEST.
  local commit="unknown"
  if command -v git >/dev/null 2>&1 && git -C "$SRC_DIR" rev-parse HEAD >/dev/null 2>&1; then
    commit=$(git -C "$SRC_DIR" rev-parse HEAD)
    [ -z "$(git -C "$SRC_DIR" --no-optional-locks status --porcelain 2>/dev/null)" ] || commit+="-dirty"
  fi
  local ntests ntests_exe nscripts
  ntests=$(wc -l <"$stage/tests.txt")
  ntests_exe=$(grep -c '"kind": "exe"' "$stage/tests.txt" || true)
  nscripts=$((ntests - ntests_exe))
  {
    echo "# tensord GPU bundle, written by scripts/gpu-check.sh bundle; read by scripts/gpu-check.sh run."
    echo "# One 'key: value' a line; a test line holds the ctest test as JSON (paths as on the build machine)."
    echo "commit: $commit"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "built_on: $(uname -srm)"
    echo "source_dir: $SRC_DIR"
    echo "build_dir: $build_dir"
    if [ "$ntests" -eq 0 ]; then
      echo "gpu_tests: 0 (no ctest test is labelled gpu)"
    else
      echo "gpu_tests: $ntests ($ntests_exe compiled, $nscripts run by an interpreter)"
    fi
    cat "$stage/tests.txt"
    for f in "${benches[@]}"; do echo "bench: bin/$f"; done
    printf '%s\n' "${manifest_files[@]}" | sort
    if [ ${#excluded[@]} -gt 0 ]; then printf 'system_library: %s\n' "${excluded[@]}" | sort -u; fi
    cat "$stage/embedded.txt"
  } >"$root/MANIFEST"

  # 8. Pack.
  rm -rf "$BUNDLE_DIR"
  mkdir -p "$BUNDLE_DIR"
  tar -C "$root" --owner=0 --group=0 --numeric-owner -cf - . | xz -T1 --lzma2=preset=6,dict=256MiB -c >"$BUNDLE_FILE.tmp"
  mv "$BUNDLE_FILE.tmp" "$BUNDLE_FILE"
  cp "$root/MANIFEST" "$BUNDLE_DIR/MANIFEST"

  local size
  size=$(stat -c %s "$BUNDLE_FILE")
  echo "gpu-check: commit $commit"
  if [ "$ntests" -eq 0 ]; then
    echo "gpu-check: no ctest test is labelled gpu yet: the bundle holds tensord, the Python tests and ${#benches[@]} gpu_* benchmark(s)"
  else
    echo "gpu-check: $ntests gpu test(s): $ntests_exe compiled, $nscripts run by an interpreter"
  fi
  echo "gpu-check: ${#binaries[@]} program(s), ${#libs[@]} librar(y/ies); unpacked $(mib "$(du -sb "$root" | cut -f1)") MiB"
  if [ -s "$stage/embedded.txt" ]; then
    note "warning: programs with build-machine paths compiled in (they must not depend on them):"
    sed 's/^embedded_path: /  /' "$stage/embedded.txt" >&2
  fi
  echo "gpu-check: ${BUNDLE_FILE#"$SRC_DIR"/} is $(mib "$size") MiB (limit $MAX_BUNDLE_MIB MiB)"
  if [ "$size" -gt $((MAX_BUNDLE_MIB * 1024 * 1024)) ]; then
    note "the bundle is too big; its largest files:"
    (cd "$root" && find . -type f -printf '%s %p\n' | sort -rn | head -15 |
      awk '{ printf "  %8.1f MiB  %s\n", $1 / 1048576, $2 }') >&2
    rm -rf "$BUNDLE_DIR"
    die "bundle over $MAX_BUNDLE_MIB MiB; removed it"
  fi
  echo "gpu-check: next, on the GPU machine: scripts/gpu-check.sh run   (carry .gpu-bundle)"
}

# ------------------------------------------------------------------------------------------
# run: runs on the GPU machine, from a copy of the repository with .gpu-bundle/ carried.
# ------------------------------------------------------------------------------------------
RESULT_NAMES=() RESULT_STATUS=() RESULT_SECS=() RESULT_NOTES=()
RUN_START=$(date +%s)
STEP_ENV=() STEP_WD=.

record() { RESULT_NAMES+=("$1"); RESULT_STATUS+=("$2"); RESULT_SECS+=("$3"); RESULT_NOTES+=("${4:-}"); }

# run_step LOG NAME LIMIT MODE COMMAND...: runs COMMAND in $STEP_WD with the variables of
# $STEP_ENV added, under `timeout LIMIT`, its output shown and appended to LOG, and records the
# result. Exit 0 is PASS, 77 SKIPPED, anything else FAIL; MODE pytest also counts pytest's 5
# (no test collected) as SKIPPED.
run_step() {
  local log=$1 name=$2 limit=$3 mode=$4
  shift 4
  if [ -n "${GPU_CHECK_SKIP:-}" ] && [[ "$name" =~ $GPU_CHECK_SKIP ]]; then
    printf '\n===== %s: NOT RUN, skipped (GPU_CHECK_SKIP=%s) =====\n' "$name" "$GPU_CHECK_SKIP" | tee -a "$log"
    record "$name" "NOT RUN" 0 "skipped (GPU_CHECK_SKIP)"
    return 0
  fi
  if [ -n "${GPU_CHECK_DEADLINE:-}" ]; then
    # Whatever the step's own limit, end 20 s before the deadline to leave time for the summary.
    local left=$((GPU_CHECK_DEADLINE - ($(date +%s) - RUN_START) - 20))
    if [ "$left" -lt 5 ]; then
      printf '\n===== %s: NOT RUN, out of time (GPU_CHECK_DEADLINE=%s) =====\n' "$name" "$GPU_CHECK_DEADLINE" | tee -a "$log"
      record "$name" "NOT RUN" 0 "out of time (GPU_CHECK_DEADLINE)"
      return 0
    fi
    [ "$left" -ge "$limit" ] || limit=$left
  fi
  {
    printf '\n===== %s =====\n$ ' "$name"
    printf '%q ' "$@"
    printf '\n'
    if [ ${#STEP_ENV[@]} -gt 0 ]; then printf '  with %s\n' "${STEP_ENV[@]}"; fi
    [ "$STEP_WD" = . ] || printf '  in %s\n' "$STEP_WD"
  } | tee -a "$log"
  local t0 t1 rc status note=""
  t0=$(now)
  set +e
  (cd "$STEP_WD" && exec timeout -k 30 "$limit" env "${STEP_ENV[@]}" "$@") </dev/null 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  set -e
  t1=$(now)
  case "$rc" in
    0) status=PASS ;;
    77) status=SKIPPED; note="exit 77" ;;
    124) status=FAIL; note="timed out after ${limit}s" ;;
    137) status=FAIL; note="killed (timed out after ${limit}s?)" ;;
    5) if [ "$mode" = pytest ]; then status=SKIPPED; note="no test collected"
       else status=FAIL; note="exit 5"; fi ;;
    *) status=FAIL; note="exit $rc" ;;
  esac
  printf -- '----- %s: %s%s (%ss)\n' "$name" "$status" "${note:+, $note}" "$(elapsed "$t0" "$t1")" | tee -a "$log"
  record "$name" "$status" "$(elapsed "$t0" "$t1")" "$note"
}

# Keeps a log under the 16 MiB that come back from $OUT: over 15 MiB, its first and last 7 MiB.
cap_log() {
  local log=$1 max=$((15 * 1024 * 1024)) keep=$((7 * 1024 * 1024))
  [ -f "$log" ] || return 0
  [ "$(stat -c %s "$log")" -gt "$max" ] || return 0
  { head -c "$keep" "$log"; printf '\n\n[... gpu-check: log cut to its first and last 7 MiB ...]\n\n'
    tail -c "$keep" "$log"; } >"$log.cut"
  mv "$log.cut" "$log"
}

print_summary() {
  local out=$1 commit=$2 date=$3 i pass=0 fail=0 skip=0 notrun=0 overall=PASS
  for i in "${!RESULT_STATUS[@]}"; do
    case "${RESULT_STATUS[$i]}" in
      PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;;
      SKIPPED) skip=$((skip + 1)) ;; *) notrun=$((notrun + 1)) ;;
    esac
  done
  [ "$fail" -eq 0 ] || overall=FAIL
  {
    echo
    echo "==== tensord GPU check: commit $commit, bundle of $date ===="
    printf '%-52s %-8s %8s  %s\n' STEP RESULT SECONDS NOTE
    for i in "${!RESULT_NAMES[@]}"; do
      printf '%-52s %-8s %8s  %s\n' "${RESULT_NAMES[$i]}" "${RESULT_STATUS[$i]}" \
        "${RESULT_SECS[$i]}" "${RESULT_NOTES[$i]}"
    done
    echo "overall: $overall ($pass passed, $fail failed, $skip skipped, $notrun not run)"
    [ "$pass" -gt 0 ] || [ "$fail" -gt 0 ] || echo "warning: no GPU step ran to a pass: nothing was tested"
    if [ -n "${B:-}" ] && [ -f "$B/tests/gpu/UNVERIFIED.md" ]; then
      echo
      echo "Checklist: written without a GPU, first run here (tests/gpu/UNVERIFIED.md):"
      grep -E '^(-|  )' "$B/tests/gpu/UNVERIFIED.md" || true
    fi
  } | tee "$out"
  [ "$fail" -eq 0 ]
}

# run_job LOG LIMIT LABEL JOBFILE [WRAPPER...] -- [EXTRA_ARG...]: run_step for one ctest test of
# the plan, its command prefixed by WRAPPER (compute-sanitizer) and followed by EXTRA_ARGs.
run_job() {
  local log=$1 limit=$2 label=$3 jobfile=$4
  shift 4
  local -a wrapper=() extra=() jf=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do wrapper+=("$1"); shift; done
  [ $# -eq 0 ] || shift
  extra=("$@")
  mapfile -d '' -t jf <"$jobfile"
  local n=${jf[3]} mode=plain
  local -a cmd=("${jf[@]:$((4 + n))}")
  case " ${cmd[*]} " in *pytest*) mode=pytest ;; esac
  STEP_WD=${jf[2]}
  STEP_ENV=("${jf[@]:4:$n}")
  run_step "$log" "$label${jf[1]}" "$limit" "$mode" "${wrapper[@]}" "${cmd[@]}" "${extra[@]}"
  STEP_ENV=()
  STEP_WD=.
}

cmd_run() {
  need python3; need timeout; need tar; need xz; need ldd
  [[ "${GPU_CHECK_DEADLINE:-0}" =~ ^[0-9]+$ ]] || die "GPU_CHECK_DEADLINE must be a number of seconds"
  [ -f "$BUNDLE_FILE" ] ||
    die "no ${BUNDLE_FILE#"$SRC_DIR"/}: on the development machine run \`make build && scripts/gpu-check.sh bundle\`, and carry .gpu-bundle to this machine"

  local work log_dir
  work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
  if [ "${GPU_CHECK_KEEP:-0}" = 1 ]; then
    echo "gpu-check: keeping $work"
  else
    # shellcheck disable=SC2064  # expand $work now
    trap "rm -rf '$work'" EXIT
  fi
  if [ -n "${OUT:-}" ]; then
    log_dir=$OUT
  else
    log_dir=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-logs.XXXXXX")
  fi
  mkdir -p "$log_dir"
  local setup_log=$log_dir/setup.log cpp_log=$log_dir/cpp.log san_log=$log_dir/sanitizer.log
  local py_log=$log_dir/python.log bench_log=$log_dir/bench.log summary=$log_dir/summary.txt
  : >"$setup_log"

  local B=$work/bundle
  mkdir -p "$B"
  tar -C "$B" -xJf "$BUNDLE_FILE"
  [ -f "$B/MANIFEST" ] || die "the bundle has no MANIFEST"
  local commit date
  commit=$(sed -n 's/^commit: //p' "$B/MANIFEST")
  date=$(sed -n 's/^date: //p' "$B/MANIFEST")
  {
    echo "gpu-check: bundle of commit $commit, made $date, unpacked in $B"
    grep '^gpu_tests: ' "$B/MANIFEST" || true
    echo "gpu-check: logs in $log_dir"
  } | tee -a "$setup_log"

  # Libraries. A bundled library whose soname this machine also has, in a version that defines
  # every symbol version the bundled one does (libstdc++, libgcc_s, libssl, libz, ...), gives
  # way to the system's: Python and torch, which share LD_LIBRARY_PATH, may need the newer one.
  python3 - "$B/lib" <<'PY' 2>&1 | tee -a "$setup_log" || note "warning: could not compare the bundled libraries with this machine's"
import os, shutil, struct, subprocess, sys

libdir = sys.argv[1]

def verdefs(path):
    """The symbol versions an ELF64 shared library defines (its .gnu.version_d), or None."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] != b"\x7fELF" or data[4] != 2:
            return None
        end = "<" if data[5] == 1 else ">"
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
        secs = [struct.unpack_from(end + "IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
        names = set()
        for _, typ, _, _, off, _, link, info, _, _ in secs:
            if typ != 0x6FFFFFFD:          # SHT_GNU_verdef
                continue
            stroff, p = secs[link][4], off
            for _ in range(info):
                _, flags, _, cnt, _, aux, nxt = struct.unpack_from(end + "HHHHIII", data, p)
                if not flags & 1 and cnt:  # not the VER_FLG_BASE entry (the soname)
                    n, = struct.unpack_from(end + "I", data, p + aux)
                    s = stroff + n
                    names.add(data[s:data.index(b"\0", s)].decode(errors="replace"))
                if not nxt:
                    break
                p += nxt
        return names
    except (OSError, struct.error, IndexError, ValueError):
        return None

ldconfig = shutil.which("ldconfig") or next(
    (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)
system = {}
if ldconfig:
    try:
        out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout
    except OSError:
        out = ""
    for line in out.splitlines():
        if "=>" not in line or "x86-64" not in line:
            continue
        name = line.strip().split(" ", 1)[0]
        system.setdefault(name, line.split("=>", 1)[1].strip())
for name in sorted(os.listdir(libdir)):
    mine = verdefs(os.path.join(libdir, name))
    theirs = verdefs(system[name]) if name in system else None
    if mine and theirs is not None and mine <= theirs:
        os.remove(os.path.join(libdir, name))
        print(f"gpu-check: using this machine's {name} ({system[name]}), not the bundled one")
PY

  # LD_LIBRARY_PATH: the bundle's libraries, the CUDA toolkit's, and those of torch's nvidia
  # wheels (cuBLAS, the CUDA runtime) when they are installed.
  local nv_dirs
  nv_dirs=$(python3 - <<'PY' 2>/dev/null || true
import glob, os
try:
    import nvidia
except Exception:
    raise SystemExit(0)
dirs = []
for base in list(getattr(nvidia, "__path__", [])):
    for d in sorted(glob.glob(os.path.join(base, "*", "lib"))):
        if glob.glob(os.path.join(d, "libcublas*")) or glob.glob(os.path.join(d, "libcudart*")):
            dirs.append(d)
print(":".join(dirs))
PY
)
  export LD_LIBRARY_PATH="$B/lib:$CUDA_ROOT/lib64${nv_dirs:+:$nv_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tee -a "$setup_log"

  # Fail fast when a program or library cannot load.
  local f missing=""
  for f in "$B"/bin/* "$B"/lib/*; do
    [ -e "$f" ] || continue
    local m
    m=$(ldd "$f" 2>&1 | grep 'not found' || true)
    [ -z "$m" ] || missing+="${f#"$B"/}:"$'\n'"$m"$'\n'
  done
  if [ -n "$missing" ]; then
    { echo "gpu-check: shared libraries not found:"; printf '%s' "$missing"; } | tee -a "$setup_log"
    record "shared libraries (ldd)" FAIL 0 "not found: see setup.log"
    print_summary "$summary" "$commit" "$date" || true
    exit 1
  fi
  echo "gpu-check: every bundled program and library loads (ldd)" | tee -a "$setup_log"

  # The machine.
  {
    echo
    if command -v nvidia-smi >/dev/null 2>&1; then
      nvidia-smi 2>&1 || echo "nvidia-smi failed (exit $?)"
    else
      echo "nvidia-smi: not installed (no NVIDIA driver?)"
    fi
    echo
    python3 - <<'PY' 2>&1 || echo "python3: failed (exit $?)"
import importlib, sys
print("python3", sys.version.split()[0], sys.executable)
for mod in ("torch", "grpc", "google.protobuf", "numpy", "pytest"):
    try:
        m = importlib.import_module(mod)
        print(f"{mod} {getattr(m, '__version__', '?')}")
    except Exception as e:
        print(f"{mod}: NOT importable: {e}")
try:
    import torch
    print("torch.version.cuda", torch.version.cuda, "| cuda available:", torch.cuda.is_available(),
          "| devices:", torch.cuda.device_count())
except Exception:
    pass
PY
    if [ -x "$CUDA_ROOT/bin/nvcc" ]; then "$CUDA_ROOT/bin/nvcc" --version | tail -n 2; fi
  } 2>&1 | tee -a "$setup_log"

  # What the tests see.
  export TENSORD_REQUIRE_GPU=1
  export TENSORD_BINARY="$B/bin/tensord"
  export PYTHONPATH="$B/client/python"
  export TENSORD_GPU_LOG_DIR="$log_dir"   # test_cuda.py writes the differential matrix's report there
  export TENSORD_FAILURE_LOG="$log_dir/failures.log"   # conftest.py: each failure as it happens
  : >"$TENSORD_FAILURE_LOG"

  # The ctest gpu tests with their paths moved from the build machine to the bundle (programs to
  # bin/, the bundled sources to theirs, other source paths to this repository), one file each of
  # NUL-separated fields: kind, name, working folder, number of variables, variables, command.
  local plan=$work/plan
  mkdir -p "$plan"
  python3 - "$B" "$SRC_DIR" "$plan" <<'PY' 2>&1 | tee -a "$setup_log" || die "could not read the bundle's MANIFEST"
import json, os, re, shutil, sys

bundle, repo, plan = sys.argv[1:4]
meta, tests, binaries, embedded = {}, [], {}, []
with open(os.path.join(bundle, "MANIFEST")) as f:
    for line in f:
        key, _, value = line.rstrip("\n").partition(": ")
        if key == "test":
            tests.append(json.loads(value))
        elif key == "binary":
            rel, _, orig = value.partition(" <= ")
            binaries[orig] = os.path.join(bundle, rel)
        elif key == "embedded_path":
            embedded.append(value.split(" ", 1))
        elif not key.startswith("#"):
            meta[key] = value
src, build = meta["source_dir"], meta["build_dir"]
bundled = ["client/python", "tests/python", "tests/golden", "scripts/gpu-check.sh"]

def sub_path(s, old, new):
    return re.sub(re.escape(old) + r"(?![A-Za-z0-9_.+-])", lambda m: new, s)

def rewrite(s):
    for orig in sorted(binaries, key=len, reverse=True):
        s = sub_path(s, orig, binaries[orig])
    if re.search(re.escape(build) + r"(?![A-Za-z0-9_.+-])", s):
        print(f"gpu-check: warning: {s!r} names the build folder, which is not in the bundle")
    for rel in bundled:
        s = sub_path(s, f"{src}/{rel}", os.path.join(bundle, rel))
    return sub_path(s, src, repo)

for name, path in embedded:
    if not os.path.exists(path):
        print(f"gpu-check: warning: {name} has {path} compiled in, which does not exist here")

PYTHON_RE = r"(?:/\S*/bin/)?python(?:3(?:\.\d+)?)?"    # /usr/bin/python3, python3.11, python
THIS_PYTHON = shutil.which("python3") or "python3"

def environment(t):
    env = {}
    for kv in t.get("environment", []):
        k, _, v = kv.partition("=")
        # An interpreter of the build machine (PYTHON=/usr/bin/python3): this machine's python3.
        env[k] = THIS_PYTHON if re.fullmatch(PYTHON_RE, v) else rewrite(v)
    for mod in t.get("environment_modification", []):
        k, _, rest = mod.partition("=")
        op, _, v = rest.partition(":")
        v, cur = rewrite(v), env.get(k, os.environ.get(k, ""))
        if op in ("set", "reset"):
            env[k] = v
        elif op == "unset":
            env[k] = ""
        elif op == "string_append":
            env[k] = cur + v
        elif op == "string_prepend":
            env[k] = v + cur
        elif op in ("path_list_append", "cmake_list_append"):
            sep = ":" if op.startswith("path") else ";"
            env[k] = cur + sep + v if cur else v
        elif op in ("path_list_prepend", "cmake_list_prepend"):
            sep = ":" if op.startswith("path") else ";"
            env[k] = v + sep + cur if cur else v
        else:
            print(f"gpu-check: warning: {t['name']}: ENVIRONMENT_MODIFICATION {mod!r} not replayed")
    return [f"{k}={v}" for k, v in env.items()]

def covers_test_cuda(cmd):
    """Whether an interpreter-run test runs test_cuda.py, itself or through a bundled script."""
    for c in cmd:
        if "test_cuda.py" in c:
            return True
        if c.startswith(bundle + "/") and os.path.isfile(c):
            with open(c, "rb") as f:
                if b"test_cuda.py" in f.read():
                    return True
    return False

# Compiled tests: one run per program (gtest_discover_tests makes one ctest test per case).
jobs, groups = [], {}
for t in tests:
    if t.get("disabled"):
        print(f"gpu-check: {t['name']} is DISABLED in ctest; not run")
        continue
    cmd = [rewrite(c) for c in t["command"]]
    env = environment(t)
    # ctest's default working folder is the test's build folder: the bundle stands for it.
    wd = t.get("working_directory") or build
    wd = bundle if wd == build or wd.startswith(build + "/") else rewrite(wd)
    if not os.path.isdir(wd):
        print(f"gpu-check: warning: {t['name']}: no folder {wd}; running in the bundle")
        wd = bundle
    if t["kind"] == "exe":
        args = [a for a in cmd[1:] if not a.startswith("--gtest_filter=")
                and a != "--gtest_also_run_disabled_tests"]
        key = (cmd[0], tuple(env), wd, tuple(args))
        if key in groups:
            groups[key]["count"] += 1
            continue
        groups[key] = job = {"kind": "exe", "name": t["name"], "wd": wd, "env": env,
                             "cmd": cmd, "args": args, "count": 1}
        jobs.append(job)
    elif covers_test_cuda(cmd):
        # The same tests as the pytest step, which takes this test's environment.
        print(f"gpu-check: {t['name']} runs tests/python/test_cuda.py: the pytest step stands for it")
        jobs.append({"kind": "test_cuda", "name": t["name"], "wd": wd, "env": env, "cmd": cmd})
    else:
        # Another interpreter-run test: this machine's python3 for a python; others as they are.
        if re.fullmatch(PYTHON_RE, cmd[0]):
            cmd[0] = THIS_PYTHON
        kind = "script" if shutil.which(cmd[0]) else "missing"
        jobs.append({"kind": kind, "name": t["name"], "wd": wd, "env": env, "cmd": cmd})
for i, job in enumerate(jobs):
    if job["kind"] == "exe" and job["count"] > 1:
        job["name"] = f"{os.path.basename(job['cmd'][0])} ({job['count']} ctest tests)"
        job["cmd"] = job["cmd"][:1] + job["args"]
    fields = [job["kind"], job["name"], job["wd"], str(len(job["env"]))] + job["env"] + job["cmd"]
    with open(os.path.join(plan, f"{i:04d}"), "w") as f:
        f.write("\0".join(fields) + "\0")
PY

  # Read the plan back.
  local -a exe_jobs=() script_jobs=() cuda_env=()
  local job kind
  local -a fields
  for job in "$plan"/*; do
    [ -e "$job" ] || continue
    mapfile -d '' -t fields <"$job"
    kind=${fields[0]}
    case "$kind" in
      exe) exe_jobs+=("$job") ;;
      test_cuda) [ ${#cuda_env[@]} -gt 0 ] || cuda_env=("${fields[@]:4:${fields[3]}}") ;;
      *) script_jobs+=("$job") ;;
    esac
  done

  # 1. The C++ gpu tests.
  : >"$cpp_log"
  if [ ${#exe_jobs[@]} -eq 0 ]; then
    echo "gpu-check: no compiled ctest test is labelled gpu" | tee -a "$cpp_log"
    record "C++ gpu tests" "NOT RUN" 0 "none in the bundle"
  else
    for job in "${exe_jobs[@]}"; do
      run_job "$cpp_log" "$TEST_TIMEOUT" "" "$job" -- --gtest_color=no
    done
  fi
  cap_log "$cpp_log"


  # 2. The gpu_* benchmarks (minutes; the figures issues 13 and 14 ask for).
  : >"$bench_log"
  local -a benches=()
  mapfile -t benches < <(sed -n 's/^bench: //p' "$B/MANIFEST")
  if [ ${#benches[@]} -eq 0 ]; then
    echo "gpu-check: no gpu_* benchmark in the bundle" | tee -a "$bench_log"
    record "gpu_* benchmarks" "NOT RUN" 0 "none in the bundle"
  else
    local -a words
    for f in "${benches[@]}"; do
      read -ra words <<<"$f"  # the program, then its arguments
      STEP_WD=$B
      run_step "$bench_log" "bench: $(basename "$f")" "$BENCH_TIMEOUT" plain "$B/${words[0]}" \
        "${words[@]:1}"
      STEP_WD=.
    done
  fi
  cap_log "$bench_log"

  # 3. The Python gpu tests, then any other interpreter-run gpu test from ctest (the longest
  #    step: after the benchmarks, so that a deadline leaves their figures measured).
  : >"$py_log"
  if [ -f "$B/tests/python/test_cuda.py" ]; then
    STEP_WD=$B
    STEP_ENV=("${cuda_env[@]}")
    # pytest-xdist, where installed, spreads the tests over workers, each with its own server.
    local -a xdist=()
    if python3 -c 'import xdist' 2>/dev/null; then xdist=(-n "${GPU_CHECK_PYTEST_WORKERS:-8}"); fi
    run_step "$py_log" "pytest -m gpu tests/python/test_cuda.py" "$TEST_TIMEOUT" pytest \
      python3 -m pytest -q -p no:cacheprovider -rf --durations=15 "${xdist[@]}" -m gpu \
      "$B/tests/python/test_cuda.py"
    STEP_ENV=()
    STEP_WD=.
  else
    echo "gpu-check: no tests/python/test_cuda.py in the bundle" | tee -a "$py_log"
    record "pytest -m gpu tests/python/test_cuda.py" "NOT RUN" 0 "no test_cuda.py"
  fi
  for job in "${script_jobs[@]}"; do
    mapfile -d '' -t fields <"$job"
    if [ "${fields[0]}" = missing ]; then
      echo "gpu-check: ${fields[1]}: its interpreter is not on this machine" | tee -a "$py_log"
      record "${fields[1]}" "NOT RUN" 0 "interpreter not found"
    else
      run_job "$py_log" "$TEST_TIMEOUT" "" "$job" --
    fi
  done
  cap_log "$py_log"

  # 4. Last, as the slowest: the C++ gpu tests again under compute-sanitizer's memcheck (it follows the tensord processes the tests
  #    start: its --target-processes is `all` by default).
  : >"$san_log"
  local sanitizer=""
  if [ -x "$CUDA_ROOT/bin/compute-sanitizer" ]; then
    sanitizer=$CUDA_ROOT/bin/compute-sanitizer
  elif command -v compute-sanitizer >/dev/null 2>&1; then
    sanitizer=$(command -v compute-sanitizer)
  fi
  if [ ${#exe_jobs[@]} -eq 0 ]; then
    echo "gpu-check: no compiled ctest test is labelled gpu" | tee -a "$san_log"
    record "compute-sanitizer memcheck" "NOT RUN" 0 "no C++ gpu tests"
  elif [ -z "$sanitizer" ]; then
    echo "gpu-check: compute-sanitizer not found in $CUDA_ROOT/bin or PATH" | tee -a "$san_log"
    record "compute-sanitizer memcheck" "NOT RUN" 0 "compute-sanitizer not found"
  else
    "$sanitizer" --version 2>&1 | tee -a "$san_log" || true
    for job in "${exe_jobs[@]}"; do
      # A test that faults on purpose (cuda_fault_test) is the error memcheck reports: not run.
      mapfile -d '' -t fields <"$job"
      if printf '%s\n' "${fields[@]:4:${fields[3]}}" | grep -qx 'TENSORD_GPU_FAULT_TEST=1'; then
        record "memcheck: ${fields[1]}" "NOT RUN" 0 "faults on purpose"
        continue
      fi
      run_job "$san_log" "$SANITIZER_TIMEOUT" "memcheck: " "$job" \
        "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 1 -- --gtest_color=no
    done
  fi
  # The server under memcheck while differential tests run on cuda (it follows the tensord the
  # tests start): names the kernel and the host frames of a fault that a Python test only sees
  # as a lost CUDA context later.
  local py_file
  if [ -n "$sanitizer" ]; then
    for py_file in ${GPU_CHECK_SANITIZE_PYTHON:-tests/python/test_linalg.py}; do
      if [ ! -f "$B/$py_file" ]; then
        record "memcheck: $py_file on cuda" "NOT RUN" 0 "not in the bundle"
        continue
      fi
      STEP_WD=$B
      STEP_ENV=("${cuda_env[@]}" TENSORD_TEST_DEVICE=cuda)
      run_step "$san_log" "memcheck: $py_file on cuda" "$SANITIZER_TIMEOUT" pytest \
        "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 1 \
        --target-processes all python3 -m pytest -v -p no:cacheprovider -p no:xdist -x "$B/$py_file"
      STEP_ENV=()
      STEP_WD=.
    done
  fi
  cap_log "$san_log"

  print_summary "$summary" "$commit" "$date"
}

case "${1:-help}" in
  bundle) shift; [ $# -le 1 ] || die "usage: scripts/gpu-check.sh bundle [BUILD_DIR]"; cmd_bundle "$@" ;;
  run) shift; [ $# -eq 0 ] || die "usage: scripts/gpu-check.sh run"; cmd_run ;;
  help | -h | --help) usage ;;
  *) usage >&2; exit 2 ;;
esac
