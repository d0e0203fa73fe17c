#!/usr/bin/env bash
# The soak test at length: sustained mixed load on 64 sessions (tensord-load) with a client
# checking every result, for SOAK_SECONDS (default 1800: 30 minutes) in SOAK_ROUNDS rounds
# (default 30); prints the server's RSS, threads and open files per round (the drift) and fails
# if a result is wrong or they grow. The short form runs in `make test` (tests/load/test_soak.py).
#   scripts/soak.sh            # after make build
#   SOAK_SECONDS=300 SOAK_ROUNDS=10 scripts/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export SOAK_SECONDS=${SOAK_SECONDS:-1800} SOAK_ROUNDS=${SOAK_ROUNDS:-30}
export TENSORD_BINARY=${TENSORD_BINARY:-build/tensord}
export TENSORD_LOAD_BINARY=${TENSORD_LOAD_BINARY:-build/tensord-load}
export PYTHONPATH=client/python${PYTHONPATH:+:$PYTHONPATH}
exec /usr/bin/python3 -m pytest -q -s -p no:cacheprovider tests/load/test_soak.py
