#!/usr/bin/env python3
"""A training step through autograd: tensord against torch, side by side, in one run.

  /usr/bin/python3 bench/train_bench.py [--build build] [--steps N] [--batch B]

The same small CNN (conv 3->16, batch norm, ReLU(inplace), max pool, conv 16->32, batch norm,
ReLU, adaptive average pool, linear 32->10) with the same weights, trained with SGD and
momentum on the same batch of 3x32x32 images, then an MLP (3072-256-10) trained with Adam:
tensord through its Python client against a tensord server started here, torch in this process
with as many threads as the server's machine has cores. Prints ms per step (forward, backward, optimizer step; the loss read each
step, so every step waits for the server) and the speed ratio (> 1: tensord faster), and
checks that both losses agree. The two sides alternate for --rounds rounds and each keeps its
best (torch's time on a shared 2-core machine varies by 2x from round to round).
"""
import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import tensord  # noqa: E402
from compute_bench import start_server  # noqa: E402


def model(m):
    nn = m.nn
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def mlp(m):
    nn = m.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 256), nn.ReLU(), nn.Linear(256, 10))


def run(m, steps, images, labels, kind="cnn"):
    net = model(m) if kind == "cnn" else mlp(m)
    with m.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(m.tensor(np.cos(np.linspace(0, 3 + i, p.numel())).reshape(tuple(p.shape))
                             * 0.2, dtype=m.float32))
    opt = m.optim.SGD(net.parameters(), lr=0.05, momentum=0.9) if kind == "cnn" else \
        m.optim.Adam(net.parameters(), lr=1e-3)
    x, y = m.tensor(images), m.tensor(labels)
    losses = []

    def step():
        opt.zero_grad()
        loss = m.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    step()  # warm-up: first allocations, the server's plans
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps * 1e3, losses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((args.batch, 3, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, args.batch)
    proc, address = start_server(args.build)
    try:
        for kind, title in (("cnn", "CNN (conv, batch norm, pools), SGD with momentum"),
                            ("mlp", "MLP 3072-256-10, Adam")):
            ours = theirs = float("inf")
            for _ in range(args.rounds):
                with tensord.connect(address):
                    ms, our_losses = run(tensord, args.steps, images, labels, kind)
                ours = min(ours, ms)
                ms, their_losses = run(torch, args.steps, images, labels, kind)
                theirs = min(theirs, ms)
            report(args, title, ours, theirs, our_losses, their_losses)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def report(args, title, ours, theirs, our_losses, their_losses):
    print(f"train_bench: {title}, batch {args.batch} of 3x32x32, torch {torch.__version__} "
          f"with {torch.get_num_threads()} threads, best of {args.rounds} alternating rounds")
    print(f"  tensord  {ours:8.2f} ms/step")
    print(f"  torch    {theirs:8.2f} ms/step")
    print(f"  ratio    {theirs / ours:8.2f} (> 1: tensord faster)")
    worst = max(abs(a - b) for a, b in zip(our_losses, their_losses))
    print(f"  losses   first {our_losses[0]:.5f} / {their_losses[0]:.5f}, last "
          f"{our_losses[-1]:.5f} / {their_losses[-1]:.5f}, largest difference {worst:.2e}")
    if worst > 1e-3:
        raise SystemExit("train_bench: tensord's losses differ from torch's")


if __name__ == "__main__":
    main()
