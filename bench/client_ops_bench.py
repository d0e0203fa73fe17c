#!/usr/bin/env python3
"""Per-op costs of the Python client against a running tensord (compute_bench.py runs it).

  /usr/bin/python3 bench/client_ops_bench.py ADDRESS [--import-torch]

Prints, as `name value` lines: µs per op of 10,000 queued `x.add_(1)` then one synchronize,
the same inside a torch.profiler profile (its events built), of 10,000 `y = x * 2`, µs per
call of `t.t().stride()` (planned here, no round trip), and autograd's costs: a view before
and after a tensor required grad, `x * 2` once autograd is active, and `w * 2` recorded in the
graph (w requires grad).

It runs in a process of its own without torch, as a program written with `import tensord as
torch` does: importing torch adds millions of objects to Python's heap, and then the cyclic
garbage collector that the client's per-op allocations trigger costs up to 2x more per op
(`--import-torch` measures that case).
"""
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))

if "--import-torch" in sys.argv:
    import torch  # noqa: F401

import tensord  # noqa: E402


def best_of(rounds, n, body, after=None):
    """µs per call of `body`: the best of `rounds` rounds of n calls (and `after`, once)."""
    best = 1e9
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            body()
        if after is not None:
            after()
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e6


def profiled(m, body, rounds):
    """One round of 10,000 calls of `body` inside m.profiler.profile(), its events built (and
    kept in `rounds`), as one call for best_of."""
    def run():
        with m.profiler.profile() as prof:
            for _ in range(10000):
                body()
        rounds.append(prof.events())
    return run


def main():
    s = tensord.connect(sys.argv[1])
    tensord.set_default_session(s)
    x = tensord.ones(16)
    tensord.synchronize()
    print("add_", f"{best_of(3, 10000, lambda: x.add_(1), tensord.synchronize):.2f}")
    print("mul_new", f"{best_of(3, 10000, lambda: x * 2, tensord.synchronize):.2f}")
    assert x.tolist()[0] == 1 + 30000, "the queued ops all ran"
    # The same add_ inside a profile: the server records and times each op, the client logs
    # it, and the stop builds the events (a profile per round, its start and stop counted).
    rounds = []
    per_round = best_of(3, 1, profiled(tensord, lambda: x.add_(1), rounds))
    print("add_profiled", f"{per_round / 10000:.2f}")
    assert all(sum(e.name == "aten::add_" for e in events) == 10000 for events in rounds), \
        "every op was recorded"
    t = tensord.arange(12.).reshape(3, 4)
    assert t.t().stride() == (1, 4)
    print("t_stride", f"{best_of(3, 10000, lambda: t.t().stride()):.2f}")
    # Autograd: a view before any tensor required grad, then (autograd active for the rest of
    # the process) a plain op, a view (noted, so that in-place recording can refuse it) and
    # an op recorded in the graph.
    v = tensord.ones(64)
    print("view", f"{best_of(3, 10000, lambda: v[0:8], tensord.synchronize):.2f}")
    w = tensord.ones(16, requires_grad=True)
    print("mul_active", f"{best_of(3, 10000, lambda: x * 2, tensord.synchronize):.2f}")
    print("view_active", f"{best_of(3, 10000, lambda: v[0:8], tensord.synchronize):.2f}")
    print("mul_recording", f"{best_of(3, 10000, lambda: w * 2, tensord.synchronize):.2f}")
    s.close()


if __name__ == "__main__":
    main()
