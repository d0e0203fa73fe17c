#!/usr/bin/env bash
# The Python client installed as a user installs it: into a virtual environment (Debian's system
# Python refuses a plain `pip install`), from this checkout, then imported from elsewhere with
# every subpackage, and used against a real server.
#   python_install_test.sh TENSORD_BINARY
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BINARY=${1:?usage: python_install_test.sh TENSORD_BINARY}
WORK=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$WORK"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$WORK/venv"
# --no-index: numpy, grpcio and protobuf come from Debian's packages (the venv sees them).
"$WORK/venv/bin/pip" install -q --no-index --no-build-isolation "$ROOT/client/python"
"$BINARY" --listen=127.0.0.1:0 >"$WORK/out" 2>/dev/null &
server=$!
for _ in $(seq 100); do grep -q "listening on" "$WORK/out" && break; sleep 0.1; done
address=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$WORK/out")
cd "$WORK"  # not the checkout: the installed package, not the sources, is imported
TENSORD_ADDRESS=$address "$WORK/venv/bin/python" - "$WORK" <<'PY'
import sys
import tensord, tensord.nn, tensord.v1.tensord_pb2, tensord.cuda  # every subpackage
import tensord.utils.data, tensord.distributions, tensord.run
import tensord.utils.data.dataloader, tensord.utils.data._utils.collate, tensord.random
import tensord.distributions.constraints, tensord.optim.lr_scheduler
assert tensord.__file__.startswith(sys.argv[1]), tensord.__file__
assert tensord.utils.data.__file__.startswith(sys.argv[1]), tensord.utils.data.__file__
t = tensord.arange(6.0).view(2, 3).t()
assert t.stride() == (1, 3) and t.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
print("python client installed in a venv:", tensord.__version__, "ok")
PY
