#!/usr/bin/env python3
"""Measures the two load promises side by side, in one run, as medians of repeats:

1. One caller's small-op throughput through tensord-load against a separate tensord process
   (`make run`'s server) as a share of service_bench's in-process figure for the same call (a
   view op per RunOps, one caller): the promise is at least 80%.
2. The latency knee of small ops in an open-loop rate sweep (4 sessions), then p99 / p50 at half
   the knee rate: the promise is at most 3x.

    bench/load/promises.py [--build build] [--repeats 3]

Prints a table and a verdict per promise; exits 0 whatever the verdict (a report, not a test:
the figures depend on what else the machine runs).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from plot_sweep import knee  # noqa: E402


def start_server(build):
    proc = subprocess.Popen([os.path.join(build, "tensord"), "--listen=127.0.0.1:0",
                             "--device=cpu", "--log-level=warning"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    match = re.search(r"listening on (\S+)", proc.stdout.readline())
    if not match:
        proc.kill()
        sys.exit("tensord did not start")
    return proc, match.group(1)


def load(build, address, *flags):
    """tensord-load's JSON report for one run."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([os.path.join(build, "tensord-load"), f"--address={address}",
                        "--warmup=1s", f"--json={out.name}", *flags],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return json.load(open(out.name))


def service_bench_one_caller(build, address=None):
    """service_bench's one-caller view-op throughput (blocking calls): against its own
    in-process server, or against `address`."""
    flags = [f"--address={address}"] if address else ["--round-trip"]
    out = subprocess.run([os.path.join(build, "bench", "service_bench"), "--quick", *flags],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"one caller\s+(\d+) view ops/s", out).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rates", default="2500,5000,10000,15000,20000,25000,30000,40000")
    args = ap.parse_args()

    proc, address = start_server(args.build)
    try:
        # 1. One caller, alternating the two measurements so that drift hits both alike.
        bench, across, tool = [], [], []
        for _ in range(args.repeats):
            bench.append(service_bench_one_caller(args.build))
            across.append(service_bench_one_caller(args.build, address))
            report = load(args.build, address, "--duration=5s", "--workload=metadata",
                          "--sessions=1", "--outstanding=1")
            tool.append(report["points"][0]["workloads"]["metadata"]["ops_per_s"])
        b, t = statistics.median(bench), statistics.median(tool)
        print(f"1. one caller, a view op per call (medians of {args.repeats}):")
        a = statistics.median(across)
        print(f"   service_bench, in process          {b:8.0f} ops/s   {[round(x) for x in bench]}")
        print(f"   service_bench, across processes    {a:8.0f} ops/s   {[round(x) for x in across]}")
        print(f"   tensord-load, across processes     {t:8.0f} ops/s   {[round(x) for x in tool]}")
        print(f"   share {t / b:.0%} (promise >= 80%: {'kept' if t >= 0.8 * b else 'NOT kept'})")

        # 2. The knee of small ops, then p99/p50 at half its rate.
        sweep = load(args.build, address, "--duration=3s", "--workload=small", "--sessions=4",
                     f"--sweep={args.rates}")
        points = []
        for p in sweep["points"]:
            s = p["workloads"]["small"]
            points.append({"rate": p["rate"], "achieved": s["ops_per_s"],
                           "p50": s["latency_us"]["p50"], "p99": s["latency_us"]["p99"]})
        print("\n2. small ops, open loop, 4 sessions:")
        print("       rate   achieved   p50 us   p99 us")
        for p in points:
            print(f"   {p['rate']:8.0f} {p['achieved']:10.0f} {p['p50']:8.1f} {p['p99']:8.1f}")
        k = knee(points)
        if k is None:
            print("   knee: not reached at these rates")
            return
        half = k["rate"] / 2
        ratios = []
        for _ in range(args.repeats):
            r = load(args.build, address, "--duration=3s", "--workload=small", "--sessions=4",
                     f"--rate={half:.0f}")
            lat = r["points"][0]["workloads"]["small"]["latency_us"]
            ratios.append(lat["p99"] / lat["p50"])
        ratio = statistics.median(ratios)
        print(f"   knee at {k['rate']:.0f}/s; at half of it ({half:.0f}/s) p99/p50 = {ratio:.1f}x "
              f"(median of {[round(x, 1) for x in ratios]}; promise <= 3x: "
              f"{'kept' if ratio <= 3 else 'NOT kept'})")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
