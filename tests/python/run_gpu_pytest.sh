#!/usr/bin/env bash
# Runs the Python client's CUDA tests (tests/python/test_cuda.py) from the repository root:
#
#   tests/python/run_gpu_pytest.sh [pytest arguments…]
#
# Environment: PYTHON (default /usr/bin/python3), TENSORD_BINARY (default build/tensord),
# TENSORD_REQUIRE_GPU=1 (a server without a CUDA device fails the gpu tests), TENSORD_BIG=1
# (also the 1 GiB transfer without a CUDA torch).
#
# Exit status: pytest's; but 77 (ctest's SKIP_RETURN_CODE) when every test marked gpu was
# skipped and nothing failed, i.e. the server has no GPU. With TENSORD_REQUIRE_GPU=1 that case
# is a failure (1). The gpu tests are recognised by the `tensord_gpu` property they record in
# the --junitxml report.
set -u

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python="${PYTHON:-/usr/bin/python3}"
report="$(mktemp "${TMPDIR:-/tmp}/tensord-gpu-pytest.XXXXXX")"
trap 'rm -f "$report"' EXIT

cd "$root" || exit 1
"$python" -m pytest -q -p no:cacheprovider \
    -o "markers=gpu: needs a tensord server with a CUDA device" -o junit_family=xunit1 \
    --junitxml="$report" tests/python/test_cuda.py "$@"
status=$?

# gpu_total gpu_skipped gpu_passed failed (failures and errors, any test)
counts="$("$python" - "$report" <<'EOF'
import sys
import xml.etree.ElementTree as ET

try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:  # no report (pytest did not get that far)
    print("-")
    sys.exit(0)
gpu_total = gpu_skipped = gpu_passed = failed = 0
for case in root.iter("testcase"):
    is_gpu = any(p.get("name") == "tensord_gpu" for p in case.iter("property"))
    bad = case.find("failure") is not None or case.find("error") is not None
    skipped = case.find("skipped") is not None
    failed += bad
    if is_gpu:
        gpu_total += 1
        gpu_skipped += skipped and not bad
        gpu_passed += not skipped and not bad
print(gpu_total, gpu_skipped, gpu_passed, failed)
EOF
)"

if [ "$counts" = "-" ] || [ -z "$counts" ]; then
    exit "$status"
fi
read -r gpu_total gpu_skipped gpu_passed failed <<<"$counts"
echo "run_gpu_pytest: gpu tests: ${gpu_total} (passed ${gpu_passed}, skipped ${gpu_skipped}); failed or errors: ${failed}; pytest status ${status}"

if [ "$failed" -eq 0 ] && [ "$gpu_total" -gt 0 ] && [ "$gpu_skipped" -eq "$gpu_total" ] \
        && { [ "$status" -eq 0 ] || [ "$status" -eq 5 ]; }; then
    if [ "${TENSORD_REQUIRE_GPU:-0}" = "1" ]; then
        echo "run_gpu_pytest: every gpu test was skipped but TENSORD_REQUIRE_GPU=1" >&2
        exit 1
    fi
    echo "run_gpu_pytest: every gpu test was skipped (no CUDA device on the server): exit 77"
    exit 77
fi
exit "$status"
