#!/usr/bin/env python3
"""Speed of issue 17's ops on a tensord CPU server against torch on this machine, side by side
in one run, torch limited to the server's thread count (this machine's cores: the server uses
them all). Each figure is the median of several runs of one call through the service, from the
call to its result being computed (synchronize), so it includes one round trip.

    bench/api_bench.py [--build build] [--repeats 7] [--only conv2d]

Prints a table: torch ms, tensord ms (one call and its round trip), torch/tensord (>= 1 means
tensord is as fast or faster), and the same with ten calls queued per round trip (the server's
time per call); the goals of issue 17 are >= 0.8 (>= 0.5 for conv2d, where torch uses oneDNN).
The linalg rows include the client's wait for the factorization's check (as torch's CUDA
backend waits): one more round trip.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "client", "python"))

import tensord  # noqa: E402
import tensord.nn.functional as TF  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "load"))
from promises import start_server  # noqa: E402  (one way to start a benchmark's server)


rng = np.random.default_rng(0)
DATA = {
    "rows": rng.standard_normal((1000, 1000)).astype(np.float32),
    "flat": rng.standard_normal((1 << 20,)).astype(np.float32),
    "act": rng.standard_normal((4096, 1024)).astype(np.float32),
    "logits": rng.standard_normal((4096, 1000)).astype(np.float32),
    "labels": rng.integers(0, 1000, (4096,)),
    "b1": rng.standard_normal((64, 128, 128)).astype(np.float32),
    "b2": rng.standard_normal((64, 128, 128)).astype(np.float32),
    "img": rng.standard_normal((8, 64, 56, 56)).astype(np.float32),
    "ker": rng.standard_normal((64, 64, 3, 3)).astype(np.float32),
    "sys": (rng.standard_normal((1024, 1024)) + 64 * np.eye(1024)).astype(np.float32),
    "rhs": rng.standard_normal((1024, 64)).astype(np.float32),
    "small": (rng.standard_normal((256, 8, 8)) + 16 * np.eye(8)).astype(np.float64),
    "small_rhs": rng.standard_normal((256, 8, 1)),
    "maps": rng.standard_normal((8, 64, 112, 112)).astype(np.float32),
    "video": rng.standard_normal((2, 16, 16, 56, 56)).astype(np.float32),
    "ker3d": rng.standard_normal((32, 16, 3, 3, 3)).astype(np.float32),
    "table": rng.standard_normal((1 << 20, 64)).astype(np.float32),
    "picks": rng.integers(-(1 << 20), 1 << 20, (1 << 16,)),
    "rates": rng.uniform(0, 20, (1 << 22,)).astype(np.float32),
    "shape_a": rng.uniform(0.1, 50, (1 << 22,)),
    # ctc_loss: 200 steps of 32 sequences over 40 classes, targets of up to 50 labels.
    "ctc_lp": np.log(rng.dirichlet(np.ones(40), (200, 32))).astype(np.float32),
    "ctc_targets": rng.integers(1, 40, (32, 50)),
    "ctc_il": rng.integers(150, 201, (32,)),
    "ctc_tl": rng.integers(30, 51, (32,)),
    "tied": rng.integers(0, 100, (1000, 1000)),
}


def functional(m):
    return F if m is torch else TF


CASES = [
    ("sort 1000x1000 rows", lambda m, d: d["rows"].sort(dim=1).values),
    ("sort 1M", lambda m, d: d["flat"].sort().values),
    ("topk 10 of 1000x1000 rows", lambda m, d: d["rows"].topk(10, dim=1).values),
    # Integers of 100 values: ties everywhere, so the indices are torch's algorithms' own.
    ("sort 1000x1000 rows, ties", lambda m, d: d["tied"].sort(dim=1).indices),
    ("topk 10 of 1000x1000 rows, ties", lambda m, d: d["tied"].topk(10, dim=1).indices),
    ("kthvalue 500 of 1000x1000 rows", lambda m, d: d["rows"].kthvalue(500, dim=1).indices),
    ("layer_norm 4096x1024", lambda m, d: functional(m).layer_norm(d["act"], (1024,))),
    ("cross_entropy 4096x1000", lambda m, d: functional(m).cross_entropy(
        d["logits"], d["labels"])),
    ("einsum bij,bjk->bik 64x128^2", lambda m, d: m.einsum("bij,bjk->bik", d["b1"], d["b2"])),
    ("conv2d 8x64x56x56, 64x3x3", lambda m, d: functional(m).conv2d(
        d["img"], d["ker"], padding=1)),
    ("linalg.solve 1024^2, 64 rhs", lambda m, d: m.linalg.solve(d["sys"], d["rhs"])),
    ("linalg.solve 256 x 8^2 float64", lambda m, d: m.linalg.solve(d["small"], d["small_rhs"])),
    ("linalg.inv 1024^2", lambda m, d: m.linalg.inv(d["sys"])),
    ("linalg.eigh 512^2", lambda m, d: m.linalg.eigh(d["sys"][:512, :512]).eigenvalues),
    # The compositions planned in the engine, on 8x64x112x112 feature maps.
    ("max_pool2d 3/2/1", lambda m, d: functional(m).max_pool2d(d["maps"], 3, 2, 1)),
    ("max_pool2d 3/2/1 with indices", lambda m, d: functional(m).max_pool2d(
        d["maps"], 3, 2, 1, return_indices=True)[1]),
    ("avg_pool2d 2", lambda m, d: functional(m).avg_pool2d(d["maps"], 2)),
    ("adaptive_avg_pool2d to 1", lambda m, d: functional(m).adaptive_avg_pool2d(d["maps"], 1)),
    ("pad reflect 1", lambda m, d: functional(m).pad(d["maps"], (1, 1, 1, 1), mode="reflect")),
    ("pad constant 1", lambda m, d: functional(m).pad(d["maps"], (1, 1, 1, 1))),
    ("interpolate bilinear x2 of 2 maps", lambda m, d: functional(m).interpolate(
        d["maps"][:2], scale_factor=2, mode="bilinear")),
    ("mse_loss", lambda m, d: functional(m).mse_loss(d["maps"], d["maps"] * 0.5)),
    # 3-d ops on a 2x16x16x56x56 clip: conv3d as a conv2d per kernel depth offset.
    ("conv3d 2x16x16x56x56, 32x3x3x3", lambda m, d: functional(m).conv3d(
        d["video"], d["ker3d"], padding=1)),
    ("conv_transpose3d stride 2, 16x16x3x3x3", lambda m, d: functional(m).conv_transpose3d(
        d["video"][:, :, :8, :28, :28], d["ker3d"][:16], stride=2, padding=1,
        output_padding=1)),
    ("max_pool3d 2", lambda m, d: functional(m).max_pool3d(d["video"], 2)),
    ("avg_pool3d 3/2/1", lambda m, d: functional(m).avg_pool3d(d["video"], 3, 2, 1)),
    # Advanced indexing: 64K rows of a 1M x 64 table, read and written.
    ("table[64K indices]", lambda m, d: d["table"][d["picks"]]),
    ("table[64K indices] = 0 (index_put_)", lambda m, d: d["table"].index_put_(
        (d["picks"],), d["table"].new_zeros(()))),
    ("table[table > 3] = 0 (a masked fill)", lambda m, d: _masked_assign(d["table"])),
    # Random draws and special functions over 4M elements.
    ("poisson of 4M rates in [0, 20)", lambda m, d: m.poisson(d["rates"])),
    ("binomial of 4M, count 1000, p in [0, 20)/20", lambda m, d: m.binomial(
        d["rates"] * 0 + 1000, d["rates"] / 20)),
    ("igamma of 4M float64", lambda m, d: m.igamma(d["shape_a"], d["shape_a"] * 1.1)),
    ("tril of 4096x1024", lambda m, d: d["act"].tril()),
    ("ctc_loss 200x32x40, targets <= 50", lambda m, d: functional(m).ctc_loss(
        d["ctc_lp"], d["ctc_targets"], d["ctc_il"], d["ctc_tl"])),
]


def _masked_assign(t):
    t[t > 3] = 0
    return t


def timed(fn, sync, repeats, queued=1):
    """Median seconds per call, `queued` calls issued before each sync (one round trip for all:
    queued > 1 measures the server's time per call without the round trip)."""
    for _ in range(2):
        sync(fn())
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(queued):
            result = fn()
        sync(result)
        times.append((time.perf_counter() - t0) / queued)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", default="", help="run the rows whose name contains this")
    args = ap.parse_args()
    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    proc, address = start_server(args.build)
    try:
        session = tensord.connect(address)
        tensord.set_default_session(session)
        td = {k: tensord.tensor(v) for k, v in DATA.items()}
        tt = {k: torch.tensor(v) for k, v in DATA.items()}
        session.synchronize()
        print(f"{threads} threads for torch; tensord server on this machine; median of "
              f"{args.repeats}\n")
        print(f"{'op':34} {'torch ms':>9} {'tensord ms':>11} {'torch/tensord':>14} "
              f"{'server ms':>10} {'torch/server':>13}")
        for name, fn in (c for c in CASES if args.only in c[0]):
            t_torch = timed(lambda: fn(torch, tt), lambda r: None, args.repeats)
            t_tensord = timed(lambda: fn(tensord, td), lambda r: session.synchronize(),
                              args.repeats)
            # Ten calls queued per synchronize: the server's time per call, the round trip
            # shared (the linalg rows still wait for each call's check).
            t_server = timed(lambda: fn(tensord, td), lambda r: session.synchronize(),
                             args.repeats, queued=10)
            print(f"{name:34} {t_torch * 1e3:9.2f} {t_tensord * 1e3:11.2f} "
                  f"{t_torch / t_tensord:14.2f} {t_server * 1e3:10.2f} "
                  f"{t_torch / t_server:13.2f}")
        session.close()
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
