"""tensord-load against a real tensord: its JSON report is complete and consistent, its open loop
holds the rate it is given, and the errors a server answers are counted, not hidden.

Binaries: $TENSORD_BINARY (default build/tensord) and $TENSORD_LOAD_BINARY (build/tensord-load).
Every case is bounded (a few seconds of load each); every server is killed at teardown.
"""
import json
import os
import re
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TENSORD = os.environ.get("TENSORD_BINARY", os.path.join(ROOT, "build", "tensord"))
LOAD = os.environ.get("TENSORD_LOAD_BINARY", os.path.join(ROOT, "build", "tensord-load"))

pytestmark = pytest.mark.skipif(not (os.access(TENSORD, os.X_OK) and os.access(LOAD, os.X_OK)),
                                reason="tensord or tensord-load not built")

MIX = ["metadata", "small", "large", "upload:65536", "download:1048576", "churn", "events",
       "nonzero"]


class Server:
    def __init__(self, *flags):
        self.proc = subprocess.Popen(
            [TENSORD, "--listen=127.0.0.1:0", "--device=cpu", "--metrics-listen=127.0.0.1:0",
             "--log-level=warning", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.address = self.metrics = None
        for _ in range(2):
            line = self.proc.stdout.readline()
            m = re.search(r"listening on (\S+)", line)
            if m:
                self.address = m.group(1)
            m = re.search(r"metrics on (http://\S+)", line)
            if m:
                self.metrics = m.group(1)
        if not self.address:
            self.stop()
            raise RuntimeError("tensord did not start")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


@pytest.fixture
def servers():
    started = []

    def start(*flags):
        started.append(Server(*flags))
        return started[-1]

    yield start
    for s in started:
        s.stop()


def run_load(address, tmp_path, *flags, timeout=30):
    out = tmp_path / "report.json"
    proc = subprocess.run([LOAD, f"--address={address}", f"--json={out}", "--quiet", *flags],
                          capture_output=True, text=True, timeout=timeout)
    report = json.loads(out.read_text()) if out.exists() else None
    return proc, report


def check_latency(stats):
    lat = stats["latency_us"]
    assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"], lat


def test_closed_loop_mixed(servers, tmp_path):
    server = servers()
    proc, report = run_load(server.address, tmp_path, "--duration=3s", "--warmup=0.5s",
                            "--sessions=2", "--outstanding=2", "--workload=" + ",".join(MIX),
                            f"--metrics-url={server.metrics}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["setup_errors"] == {}
    [point] = report["points"]
    assert point["mode"] == "closed"
    assert sorted(point["workloads"]) == sorted(MIX)
    for name, stats in point["workloads"].items():
        assert stats["ops"] > 0, name
        assert stats["error_count"] == 0, (name, stats["errors"], stats.get("first_error"))
        assert stats["ops_per_s"] > 0, name
        check_latency(stats)
    assert point["workloads"]["download:1048576"]["bytes"] >= \
        point["workloads"]["download:1048576"]["ops"] * 1048576
    assert point["workloads"]["upload:65536"]["bytes"] >= \
        point["workloads"]["upload:65536"]["ops"] * 65536
    total = point["total"]
    assert total["ops"] == sum(s["ops"] for s in point["workloads"].values())
    check_latency(total)
    # The server's own view, from its metrics endpoint.
    assert report["server"]["tensord_ops_total_delta"] > 0
    assert "workload" in proc.stdout and "p99" in proc.stdout


def test_open_loop_holds_a_low_rate(servers, tmp_path):
    server = servers()
    rate = 200
    proc, report = run_load(server.address, tmp_path, f"--rate={rate}", "--duration=3s",
                            "--warmup=0.5s", "--workload=small:3,metadata:1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [point] = report["points"]
    assert point["mode"] == "open" and point["rate"] == rate
    achieved = point["total"]["ops_per_s"]
    assert abs(achieved - rate) <= 0.2 * rate, achieved
    assert point["total"]["unsent"] == 0
    check_latency(point["total"])


def test_sweep_writes_every_point(servers, tmp_path):
    server = servers()
    proc, report = run_load(server.address, tmp_path, "--sweep=100,300", "--duration=1s",
                            "--warmup=0.2s", "--workload=small")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["sweep"] is True
    assert [p["rate"] for p in report["points"]] == [100, 300]
    for p in report["points"]:
        assert abs(p["total"]["ops_per_s"] - p["rate"]) <= 0.2 * p["rate"], p["total"]
    # The plot script reads it (its own SVG when neither matplotlib nor gnuplot is there).
    svg = tmp_path / "sweep.svg"
    plot = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "load", "plot_sweep.py"),
                           str(tmp_path / "report.json"), "-o", str(svg)],
                          capture_output=True, text=True, timeout=60)
    assert plot.returncode == 0, plot.stderr
    assert svg.exists() and "<svg" in svg.read_text()[:2000]


def test_resource_exhausted_is_counted(servers, tmp_path):
    server = servers("--max-sessions=1")
    proc, report = run_load(server.address, tmp_path, "--sessions=4", "--duration=1s",
                            "--warmup=0s", "--workload=small")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert report["setup_errors"] == {"RESOURCE_EXHAUSTED": 3}
    assert "RESOURCE_EXHAUSTED" in proc.stdout
    # The one session that opened was measured.
    assert report["points"][0]["workloads"]["small"]["ops"] > 0
    # Churn opens more sessions during the run: each refusal is an op error, by code.
    proc, report = run_load(server.address, tmp_path, "--sessions=1", "--duration=1s",
                            "--warmup=0s", "--workload=churn")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    churn = report["points"][0]["workloads"]["churn"]
    assert churn["errors"].get("RESOURCE_EXHAUSTED", 0) > 0, churn
    assert churn["ops"] == 0


def test_bad_address_fails_fast(tmp_path):
    proc = subprocess.run([LOAD, "--address=127.0.0.1:1", "--duration=1s", "--timeout=2s"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "cannot reach" in proc.stderr
