#!/usr/bin/env python3
"""Compute-op benchmark: tensord against torch, side by side, in one run on this machine.

  /usr/bin/python3 bench/compute_bench.py [--build build] [--quick] [--only NAME]

1. Server kernel time (build/bench/kernel_bench: ops planned and run as the server runs them)
   against torch's time for the same op on the same shapes, in this process (issue 17's ops
   among them: sort, topk, bmm (einsum's product), linalg.solve, log_softmax, cross_entropy,
   layer_norm, conv2d, searchsorted, quantile, scatter_reduce, unique, bincount, cdist).
2. End to end through the Python client (op sent, run, synchronized) at 64M elements against
   torch's in-process op.
3. 10,000 small ops queued through the Python client, then one synchronize: µs per op.
4. Metadata planned in the client: `t.t().stride()` per call, against torch's.
5. Autograd's cost per op in the client: views before and after autograd is active, a plain op
   once it is, an op recorded in the graph; torch's plain and recorded op in process.
   3, 4 and 5 measure the client in a process of its own without torch
   (bench/client_ops_bench.py), and again with torch imported.

`--client` runs only 3, 4 and 5.

Ratios are speeds: > 1 means tensord is faster.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))

import torch  # noqa: E402

import tensord  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench"))
import client_ops_bench  # noqa: E402  (one way to time a loop; run as a process of its own too)
from client_ops_bench import best_of  # noqa: E402


def median_time(fn, reps, warmup=1):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2]


def torch_cases(quick):
    """name -> (callable, reps), the same cases kernel_bench runs."""
    cases = {}
    for n, tag in ((1024, "1M"), (8192, "64M")):
        r = 200 if n == 1024 else (3 if quick else 7)
        a, b = torch.rand(n, n), torch.rand(n, n)
        for name, f in (("add", torch.add), ("mul", torch.mul)):
            cases[f"{name}_{tag}_contiguous"] = (lambda f=f, a=a, b=b: f(a, b), r)
            cases[f"{name}_{tag}_transposed"] = (lambda f=f, a=a, b=b: f(a.t(), b.t()), r)
            cases[f"{name}_{tag}_mixed"] = (lambda f=f, a=a, b=b: f(a, b.t()), r)
        if n == 8192:
            cases["sum_64M_all"] = (lambda a=a: a.sum(), r)
            cases["mean_64M_all"] = (lambda a=a: a.mean(), r)
            cases["max_64M_all"] = (lambda a=a: a.max(), r)
            cases["sum_64M_dim0"] = (lambda a=a: a.sum(0), r)
            cases["sum_64M_dim1"] = (lambda a=a: a.sum(1), r)
            cases["mean_64M_dim1"] = (lambda a=a: a.mean(1), r)
            cases["max_64M_dim1"] = (lambda a=a: a.max(1), r)
            cases["max_64M_dim0"] = (lambda a=a: a.max(0), r)
            tall = torch.rand(1 << 20, 64)
            cases["sum_1Mx64_dim0"] = (lambda tall=tall: tall.sum(0), r)
    for n in (1024, 4096):
        a, b = torch.rand(n, n), torch.rand(n, n)
        r = 20 if n == 1024 else 3
        cases[f"matmul_{n}"] = (lambda a=a, b=b: a @ b, r)
        cases[f"matmul_{n}_transposed_a"] = (lambda a=a, b=b: a.t() @ b, r)
    x = torch.rand(4096, 1024)
    for name, f in (("exp", torch.exp), ("sigmoid", torch.sigmoid), ("tanh", torch.tanh),
                    ("erf", torch.erf), ("gelu", torch.nn.functional.gelu),
                    ("silu", torch.nn.functional.silu), ("pow2", lambda t: t ** 2)):
        cases[f"{name}_4M"] = (lambda f=f: f(x), 50)
    # Issue 17's ops (kernel_bench's rows of the same names and shapes).
    rows, flat = torch.rand(1000, 1000), torch.rand(1 << 20)
    cases["sort_1000x1000_rows"] = (lambda: rows.sort(dim=1), 20)
    cases["sort_1M"] = (lambda: flat.sort(), 20)
    cases["topk10_1000x1000_rows"] = (lambda: rows.topk(10, dim=1), 50)
    b1, b2 = torch.rand(64, 128, 128), torch.rand(64, 128, 128)
    cases["bmm_64x128x128"] = (lambda: torch.bmm(b1, b2), 50)
    q, k, w = torch.rand(8, 8, 256, 64), torch.rand(8, 8, 256, 64), torch.rand(8, 8, 256, 256)
    cases["einsum_bhqd_bhkd_8x8x256x64"] = (lambda: torch.einsum("bhqd,bhkd->bhqk", q, k), 20)
    cases["einsum_bhqk_bhkd_to_bqhd"] = (lambda: torch.einsum("bhqk,bhkd->bqhd", w, q), 20)
    cases["cat_4x_1000x1000_dim1"] = (lambda: torch.cat([rows] * 4, 1), 20)
    system, rhs = torch.rand(1024, 1024) + 64 * torch.eye(1024), torch.rand(1024, 64)
    cases["linalg_solve_1024_64rhs"] = (lambda: torch.linalg.solve(system, rhs), 10)
    bounds, where = torch.rand(100000).sort().values, torch.randint(0, 1000, (1 << 20,))
    cases["searchsorted_1M_in_100k"] = (lambda: torch.searchsorted(bounds, flat), 20)
    cases["quantile_1000x1000_rows"] = (lambda: rows.quantile(0.5, dim=1), 20)
    cases["scatter_reduce_amax_1M_to_1000"] = (
        lambda: torch.zeros(1000).scatter_reduce(0, where, flat, "amax"), 20)
    cases["unique_counts_1M_of_1000"] = (lambda: torch.unique(where, return_counts=True), 10)
    cases["bincount_1M_of_1000"] = (lambda: torch.bincount(where), 20)
    table = torch.rand(1000)
    cases["index_select_1M_of_1000"] = (lambda: table.index_select(0, where), 20)
    cases["take_1M_of_1000"] = (lambda: table.take(where), 20)
    points, centers = torch.rand(2048, 64), torch.rand(512, 64)
    cases["cdist_2048x512x64"] = (lambda: torch.cdist(points, centers), 20)
    logits, labels = torch.rand(4096, 1000), torch.randint(0, 1000, (4096,))
    cases["log_softmax_4096x1000"] = (lambda: logits.log_softmax(1), 50)
    cases["cross_entropy_4096x1000"] = (
        lambda: torch.nn.functional.cross_entropy(logits, labels), 50)
    act = torch.rand(4096, 1024)
    cases["layer_norm_4096x1024"] = (lambda: torch.nn.functional.layer_norm(act, (1024,)), 50)
    img, ker = torch.rand(8, 64, 56, 56), torch.rand(64, 64, 3, 3)
    cases["conv2d_8x64x56x56_3x3"] = (
        lambda: torch.nn.functional.conv2d(img, ker, padding=1), 20)
    clip, ker3d = torch.rand(2, 16, 16, 56, 56), torch.rand(32, 16, 3, 3, 3)
    cases["conv3d_2x16x16x56x56_3x3x3"] = (
        lambda: torch.nn.functional.conv3d(clip, ker3d, padding=1), 10)
    maps = torch.rand(8, 64, 112, 112)
    cases["max_pool2d_3_2_1"] = (
        lambda: torch.nn.functional.max_pool2d(maps, 3, 2, 1), 10)
    cases["max_pool2d_with_indices_3_2_1"] = (
        lambda: torch.nn.functional.max_pool2d(maps, 3, 2, 1, return_indices=True), 10)
    cases["adaptive_avg_pool2d_to_1"] = (
        lambda: torch.nn.functional.adaptive_avg_pool2d(maps, 1), 20)
    cases["upsample_bilinear_x2_2x64x112x112"] = (
        lambda: torch.nn.functional.interpolate(maps[:2], size=(224, 224), mode="bilinear"), 10)
    cases["upsample_bicubic_x2_2x64x112x112"] = (
        lambda: torch.nn.functional.interpolate(maps[:2], size=(224, 224), mode="bicubic"), 10)
    grad, mask = torch.rand(32, 16, 32, 32), torch.rand(32, 16, 32, 32) <= 0.5
    cases["relu_backward_where_512K"] = (lambda: torch.where(mask, grad, 0.0), 50)
    plane, at = torch.zeros(32, 16, 1024), torch.randint(0, 1024, (32, 16, 256))
    pooled = torch.rand(32, 16, 256)
    cases["maxpool_backward_scatter_add_128K"] = (lambda: plane.scatter_add_(2, at, pooled), 50)
    return cases


def start_server(build):
    proc = subprocess.Popen([os.path.join(build, "tensord"), "--listen=127.0.0.1:0"],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r"listening on (\S+)", line)
    if not m:
        proc.kill()
        raise SystemExit(f"tensord did not start: {line!r}")
    return proc, m.group(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--quick", action="store_true", help="fewer repetitions of the 64M cases")
    ap.add_argument("--client", action="store_true", help="only the per-op client costs (3, 4)")
    ap.add_argument("--only", default="", help="only the kernel rows (1) whose name contains this")
    args = ap.parse_args()
    # torch at its best: one thread per core (its default here may be lower).
    torch.set_num_threads(os.cpu_count() or 1)
    print(f"compute_bench: torch {torch.__version__} with {torch.get_num_threads()} threads, "
          f"tensord's pool with as many; times are medians, the better of 2 alternating rounds")

    if not args.client:
        kernel_times(args)
    if not args.only:
        client_costs(args)


def kernel_times(args):
    # 1. Kernel times: kernel_bench and torch alternate, twice; each side keeps its better round
    # (this machine's speed drifts between runs).
    cmd = [os.path.join(args.build, "bench", "kernel_bench")] + (["--reps=3"] if args.quick else [])
    if args.only:
        cmd.append("--only=" + args.only)
    ours, theirs = {}, {}
    cases = {k: v for k, v in torch_cases(args.quick).items() if args.only in k}
    for _ in range(2):
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            name, sec = line.split()
            ours[name] = min(float(sec), ours.get(name, 1e30))
        for name, (fn, reps) in cases.items():
            if args.quick and "64M" in name:
                reps = 3
            theirs[name] = min(median_time(fn, reps), theirs.get(name, 1e30))
    print("\n1. server kernel time vs torch (same op, same shapes)")
    print(f"  {'case':32s} {'tensord':>11s} {'torch':>11s}  speed vs torch")
    for name in cases:
        if name not in ours:
            continue
        t = theirs[name]
        extra = ""
        if name.startswith("matmul"):
            n = int(name.split("_")[1])
            flops = 2.0 * n ** 3
            extra = f"   ({flops / ours[name] / 1e9:.1f} vs {flops / t / 1e9:.1f} GFLOP/s)"
        print(f"  {name:32s} {ours[name] * 1e3:9.3f}ms {t * 1e3:9.3f}ms  {t / ours[name]:6.2f}x{extra}")



def client_costs(args):
    # 2, 3 and 4: through the Python client.
    proc, address = start_server(args.build)
    try:
        s = tensord.connect(address)
        tensord.set_default_session(s)
        if args.client:
            per_op(address)
            return
        n = 8192
        print("\n2. end to end through the Python client, 64M float32 (op + synchronize)")
        print(f"  {'case':32s} {'tensord':>11s} {'torch':>11s}  speed vs torch")
        a, b = tensord.rand(n, n), tensord.rand(n, n)
        ta, tb = torch.rand(n, n), torch.rand(n, n)
        reps = 3 if args.quick else 7
        for name, fo, ft in (
                ("add_64M_contiguous", lambda: a + b, lambda: ta + tb),
                ("mul_64M_contiguous", lambda: a * b, lambda: ta * tb),
                ("add_64M_transposed", lambda: a.t() + b.t(), lambda: ta.t() + tb.t()),
                ("sum_64M_all", lambda: a.sum(), lambda: ta.sum())):
            def run():
                r = fo()
                tensord.synchronize()
                return r
            to = median_time(run, reps)
            tt = median_time(ft, reps)
            print(f"  {name:32s} {to * 1e3:9.3f}ms {tt * 1e3:9.3f}ms  {tt / to:6.2f}x")
        del a, b
        per_op(address)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def per_op(address):
    """3 and 4: the client's figures come from bench/client_ops_bench.py, a process without
    torch (as a program written with `import tensord as torch`), and, for comparison, the same
    with torch imported; torch's from this process."""
    figures = {}
    for label, extra in (("", []), (" (torch imported)", ["--import-torch"])):
        out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "client_ops_bench.py"),
                              address] + extra, check=True, capture_output=True, text=True)
        for line in out.stdout.splitlines():
            name, value = line.split()
            figures[name + label] = float(value)
    print("\n3. 10,000 small ops queued, then one synchronize (Python client)")
    for label in ("", " (torch imported)"):
        print(f"  {'x.add_(1) (in place)' + label:44s} {figures['add_' + label]:7.2f} µs/op")
        print(f"  {'y = x * 2 (new tensor each)' + label:44s} "
              f"{figures['mul_new' + label]:7.2f} µs/op")
        print(f"  {'x.add_(1) in torch.profiler.profile()' + label:44s} "
              f"{figures['add_profiled' + label]:7.2f} µs/op  "
              f"({figures['add_profiled' + label] / figures['add_' + label]:.2f}x unprofiled)")
    tx = torch.ones(16)
    plain = best_of(3, 10000, lambda: tx.add_(1))
    print(f"  {'torch x.add_(1), in process':44s} {plain:7.2f} µs/op")
    profiled = best_of(3, 1, client_ops_bench.profiled(torch, lambda: tx.add_(1), [])) / 10000
    print(f"  {'torch x.add_(1) profiled, in process':44s} {profiled:7.2f} µs/op  "
          f"({profiled / plain:.2f}x unprofiled)")

    print("\n4. metadata planned in the client: t.t().stride(), per call")
    for label in ("", " (torch imported)"):
        print(f"  {'tensord' + label:44s} {figures['t_stride' + label]:7.2f} µs/call")
    tt = torch.arange(12.).reshape(3, 4)
    print(f"  {'torch':44s} {best_of(3, 10000, lambda: tt.t().stride()):7.2f} µs/call")

    print("\n5. autograd in the client, per op (10,000 queued, then one synchronize)")
    for label in ("", " (torch imported)"):
        for name, what in (("view", "v[0:8], autograd never used"),
                           ("view_active", "v[0:8], autograd active (view noted)"),
                           ("mul_active", "x * 2, autograd active, x without grad"),
                           ("mul_recording", "w * 2 recorded (w requires grad)")):
            print(f"  {what + label:58s} {figures[name + label]:7.2f} µs/op")
    tw, tx = torch.ones(16, requires_grad=True), torch.ones(16)
    for what, fn in (("torch x * 2, in process", lambda: tx * 2),
                     ("torch w * 2 recorded, in process", lambda: tw * 2)):
        print(f"  {what:58s} {best_of(3, 10000, fn):7.2f} µs/op")


if __name__ == "__main__":
    main()
