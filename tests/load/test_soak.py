"""Sustained mixed load on 64 sessions (tensord-load) while a checking client verifies every
result against values computed locally; after warm-up the server's RSS, threads and open files
must stay flat. Short form (a few seconds per round) under `make test`; scripts/soak.sh runs it
for as long as asked (SOAK_SECONDS) and reports the drift.

Environment: TENSORD_BINARY, TENSORD_LOAD_BINARY; SOAK_SECONDS (total measured load, default
12), SOAK_ROUNDS (default 3).
"""
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import tensord  # noqa: E402

TENSORD = os.environ.get("TENSORD_BINARY", os.path.join(ROOT, "build", "tensord"))
LOAD = os.environ.get("TENSORD_LOAD_BINARY", os.path.join(ROOT, "build", "tensord-load"))
SECONDS = float(os.environ.get("SOAK_SECONDS", "12"))
ROUNDS = int(os.environ.get("SOAK_ROUNDS", "3"))
MIX = "metadata:4,small:4,large:1,upload:65536:1,download:262144:1,churn:1,events:1,nonzero:1"

CPU_BYTES = 'tensord_tensor_bytes{device="cpu"}'

pytestmark = pytest.mark.skipif(not (os.access(TENSORD, os.X_OK) and os.access(LOAD, os.X_OK)),
                                reason="tensord or tensord-load not built")


def scrape(url):
    with urllib.request.urlopen(url, timeout=5) as reply:
        text = reply.read().decode()
    values = {}
    for line in text.splitlines():
        m = re.match(r"^([a-z_]+(?:\{[^}]*\})?) ([0-9.eE+-]+)$", line)
        if m:
            values[m.group(1)] = float(m.group(2))
    return values


def test_sustained_mixed_load_is_right_and_flat():
    server = subprocess.Popen([TENSORD, "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                               "--log-level=warning", "--session-ttl=10s"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = re.search(r"listening on (\S+)", server.stdout.readline()).group(1)
        metrics = re.search(r"metrics on (\S+)", server.stdout.readline()).group(1)
        wrong = []
        checked = [0]
        stop = threading.Event()

        def checker():  # results of real programs, checked against numpy, during the load
            rng = np.random.default_rng(7)
            with tensord.connect(address):
                while not stop.is_set():
                    a = rng.standard_normal((32, 48)).astype(np.float32)
                    b = rng.standard_normal((48, 16)).astype(np.float32)
                    got = ((tensord.tensor(a) @ tensord.tensor(b)).t() * 2 + 1).numpy()
                    want = (a @ b).T * 2 + 1
                    if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                        wrong.append(float(np.abs(got - want).max()))
                    checked[0] += 1

        thread = threading.Thread(target=checker)
        thread.start()
        samples = []
        per_round = max(2.0, SECONDS / ROUNDS)
        try:
            for r in range(ROUNDS + 1):  # round 0 is the warm-up
                run = subprocess.run(
                    [LOAD, f"--address={address}", "--channels=4", "--sessions=16",
                     "--outstanding=2", f"--duration={per_round if r else 2.0}s",
                     "--warmup=0s", f"--workload={MIX}", "--quiet"],
                    capture_output=True, text=True, timeout=per_round + 60)
                assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
                time.sleep(1.0)  # the server's idle trim and the sessions' close settle
                m = scrape(metrics)
                samples.append({k: m[k] for k in ("process_resident_memory_bytes",
                                                  "process_threads", "process_open_fds",
                                                  "tensord_sessions", CPU_BYTES)
                                if k in m})
        finally:
            stop.set()
            thread.join(timeout=60)
        assert not thread.is_alive()
        assert wrong == [] and checked[0] > 0, (wrong, checked[0])
        warm = samples[1:]
        rss = [s["process_resident_memory_bytes"] / 2**20 for s in warm]
        print(f"\nsoak: {ROUNDS} rounds of {per_round:.0f} s, 64 sessions, mixed load; "
              f"{checked[0]} checked programs right; RSS MiB per round {[round(x, 1) for x in rss]}, "
              f"threads {[int(s['process_threads']) for s in warm]}, "
              f"open files {[int(s['process_open_fds']) for s in warm]}, "
              f"sessions {[int(s.get('tensord_sessions', -1)) for s in warm]}, "
              f"tensor bytes {[int(s.get(CPU_BYTES, -1)) for s in warm]}")
        # Flat after warm-up. The allocator's cache settles on the load's peaks over the first
        # rounds (seen: +4% and +6% in round 2 or 3, then flat), so RSS may rise 15% in all; a
        # leak keeps growing, so the second half of the rounds must add under 5% (at least
        # 32 MiB). scripts/soak.sh runs many rounds, where that second half is long. Open files
        # back to within a few.
        assert max(rss) - rss[0] < 0.15 * rss[0], rss
        middle = rss[len(rss) // 2]
        assert max(rss[len(rss) // 2:]) - middle < max(32, 0.05 * middle), rss
        # gRPC's own thread pool may start one more thread under load (a fresh CI clone saw 20
        # then 21); a leak adds threads round after round, which this still catches.
        threads = [s["process_threads"] for s in warm]
        assert max(threads) - min(threads) <= 1, warm
        assert max(s["process_open_fds"] for s in warm) - warm[0]["process_open_fds"] <= 4, warm
    finally:
        server.terminate()
        server.wait(timeout=30)
