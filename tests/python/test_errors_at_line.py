"""Errors surface at the line that made them, never on a line that does not depend on them.

The client plans every op with the engine's own planner before it queues it (tensord._planner),
so a bad view, shape or dtype raises where torch raises it, with torch's exception class, while
the work itself stays pipelined. Errors only the server can find (a byte limit) or only a kernel
can find (an index out of range inside gather) poison the op's outputs and raise where their data
is first needed, or from synchronize() — never from an unrelated line.

Every mistake below is run in torch 1.13 (the oracle) and in tensord, the same source text on
both, with the unrelated lines before and after it compared value for value.
"""
import os
import signal
import threading

import numpy as np
import pytest
import torch

import tensord
import tensord_process

# (name, setup, the mistake): `a` is arange(12).reshape(3, 4) (int64), `f` its float copy.
MISTAKES = [
    ("view-of-transpose", "a.t().view(12)"),
    ("view-bad-numel", "a.view(5, 3)"),
    ("reshape-bad-numel", "a.reshape(7)"),
    ("transpose-dim", "a.transpose(0, 2)"),
    ("narrow-out-of-range", "a.narrow(1, 2, 5)"),
    ("select-index", "a.select(0, 3)"),
    ("basic-index", "a[5]"),
    ("basic-index-2d", "a[1, 7]"),
    ("add-shape-mismatch", "a + torch.ones(5)"),
    ("matmul-shape-mismatch", "f @ f"),
    ("inplace-cast", "a.add_(1.5)"),
    ("inplace-broadcast", "a[0].add_(a)"),
    ("expand-bad", "a.expand(4, 4)"),
    ("permute-dims", "a.permute(0, 0)"),
    ("unsqueeze-dim", "a.unsqueeze(3)"),
    ("sum-dim", "a.sum(2)"),
    ("cat-mismatch", "torch.cat([a, torch.ones(2, 3, dtype=torch.int64)])"),
    ("bitwise-on-float", "f & f"),
    ("mm-rank", "torch.mm(f, f[0])"),
    ("index-select-dim", "a.index_select(2, torch.tensor([0]))"),
    ("split-size", "a.split(0)"),
    ("chunk-zero", "a.chunk(0)"),
    ("squeeze-dim", "a.squeeze(4)"),
    ("flatten-dims", "a.flatten(1, 0)"),
    ("diagonal-dims", "a.diagonal(0, 0, 0)"),
]


def run_program(lib, mistake):
    """Runs the same program on torch or tensord: the lines before the mistake, the mistake in
    try/except, then unrelated lines. Returns (values before, exception class or None, values
    after)."""
    env = {"torch": lib}
    exec("a = torch.arange(12).reshape(3, 4)\nf = a.float()\nb = a * 2", env)
    before = env["b"].tolist()
    caught = None
    try:
        exec(mistake, env)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        caught = type(e)
    exec("c = a.sum()\nd = (f.t() @ f).sum(0)\ne = b[1:, ::2] + 1", env)
    after = [env["c"].tolist(), env["d"].tolist(), env["e"].tolist()]
    return before, caught, after


def torch_class(cls):
    """tensord's OutOfMemoryError is a RuntimeError, as torch's is."""
    return RuntimeError if cls is not None and issubclass(cls, RuntimeError) else cls


@pytest.mark.parametrize("name,mistake", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_mistake_raises_at_its_line(session, name, mistake):
    expected = run_program(torch, mistake)
    assert expected[1] is not None, f"torch accepts {mistake!r}: not a mistake"
    got = run_program(tensord, mistake)
    assert got[1] is not None, f"{mistake!r} raised nothing at its line (torch: {expected[1]})"
    assert torch_class(got[1]) is torch_class(expected[1]), (mistake, got[1], expected[1])
    assert got[0] == expected[0] and got[2] == expected[2]


# Mistakes whose words matter as much as the class: a user reads them (torch 1.13's message
# must appear in tensord's, which may name the op before it).
WORDED_MISTAKES = [
    ("item-of-two", "torch.tensor([1.0, 2.0]).item()"),
    ("float-of-two", "float(torch.tensor([1.0, 2.0]))"),
    ("int-of-empty", "int(torch.tensor([], dtype=torch.int64))"),
    ("ragged-list", "torch.tensor([[1, 2], [3]])"),
    ("ragged-deep", "torch.tensor([[[1], [2, 3]]])"),
    ("number-where-a-list-was", "torch.tensor([[1, 2], 3])"),
    ("list-where-a-number-was", "torch.tensor([1, [2]])"),
    ("a-string", "torch.tensor('abc')"),
    ("int8-overflow", "torch.tensor([1000], dtype=torch.int8)"),
    ("uint8-from-a-float-past-it", "torch.tensor([255.5], dtype=torch.uint8)"),
    ("uint8-below-minus-255", "torch.tensor([-256], dtype=torch.uint8)"),
    ("nan-to-int32", "torch.tensor([float('nan')], dtype=torch.int32)"),
    ("beyond-int64", "torch.tensor([2 ** 63])"),
    ("far-beyond-int64", "torch.tensor(2 ** 70)"),
    ("broadcast-two-mismatches", "torch.ones(2, 3) + torch.ones(3, 2)"),
    ("broadcast-three-dims", "torch.ones(2, 3, 4) * torch.ones(3, 2, 5)"),
]


@pytest.mark.parametrize("name,mistake", WORDED_MISTAKES, ids=[m[0] for m in WORDED_MISTAKES])
def test_a_mistake_raises_torchs_class_and_words(session, name, mistake):
    raised = []
    for lib in (torch, tensord):
        try:
            exec(mistake, {"torch": lib})
            raised.append(None)
        except Exception as e:  # noqa: BLE001 - the class and words are what is compared
            raised.append((type(e), str(e)))
    want, got = raised
    assert want is not None, f"torch accepts {mistake!r}"
    assert got is not None, f"tensord accepts {mistake!r} (torch: {want})"
    assert torch_class(got[0]) is torch_class(want[0]), (got, want)
    assert want[1] in got[1], (got, want)


def test_the_issue_snippet(session, capsys):
    a = tensord.arange(12).reshape(3, 4)
    try:
        a.t().view(12)
    except RuntimeError:
        print("caught")
    print(a.sum())
    assert capsys.readouterr().out == "caught\ntensor(66)\n"


def test_metadata_answers_without_a_round_trip(session):
    """Shapes, strides, storage sharing and data_ptr of planned ops match torch's, and asking
    for them sends nothing (no op is flushed to the server)."""
    t = torch.arange(24.).reshape(2, 3, 4)
    d = tensord.arange(24.).reshape(2, 3, 4)
    session.flush()
    cases = [
        lambda x: x.t() if x.dim() == 2 else x.transpose(0, 2),
        lambda x: x[:, 1:, ::2],
        lambda x: x.permute(2, 0, 1).unsqueeze(1),
        lambda x: x.expand(3, 2, 3, 4),
        lambda x: x.transpose(1, 2) + 1,
        lambda x: x.diagonal(0, 1, 2),
        lambda x: x.unfold(2, 2, 1),
        lambda x: x.sum(1, keepdim=True),
    ]
    for case in cases:
        rt, rd = case(t), case(d)
        sent_before = len(session._pending)
        assert tuple(rd.shape) == tuple(rt.shape)
        assert rd.stride() == rt.stride()
        assert rd.storage_offset() == rt.storage_offset()
        assert rd.is_contiguous() == rt.is_contiguous()
        assert rd.dtype == getattr(tensord, str(rt.dtype).split(".")[1])
        shares_t = rt.storage().data_ptr() == t.storage().data_ptr()
        shares_d = rd._storage_id() == d._storage_id()
        assert shares_d == shares_t
        assert (rd.data_ptr() - d.data_ptr()) * shares_d == (rt.data_ptr() - t.data_ptr()) * shares_t
        assert len(session._pending) == sent_before, "a metadata query flushed the queue"
    session.flush()


def test_the_plan_cache_keeps_storage_sharing_in_its_key(session):
    """The client keeps the planner's answers (a loop plans its op once), keyed by everything
    the planner reads. Two calls whose inputs differ only in sharing a storage or not must not
    share an answer: torch refuses the overlapping copy and accepts the other, in either order."""
    for overlap_first in (False, True):
        a, b = tensord.arange(4.), tensord.arange(4.)
        ta, tb = torch.arange(4.), torch.arange(4.)
        calls = [(lambda: a[1:].copy_(b[:-1]), lambda: ta[1:].copy_(tb[:-1])),
                 (lambda: a[1:].copy_(a[:-1]), lambda: ta[1:].copy_(ta[:-1]))]
        if overlap_first:
            calls.reverse()
        for ours, theirs in calls:
            try:
                theirs()
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match="single memory location"):
                    ours()
                assert "single memory location" in str(e)
            else:
                ours()
        assert a.tolist() == ta.tolist()
    # A repeated op plans once, and every repeat still gets a storage of its own.
    x = tensord.ones(5)
    y = x * 2
    cached = session.planner.cached_plans
    outs = [x * 2 for _ in range(100)]
    assert session.planner.cached_plans == cached
    assert len({o.data_ptr() for o in outs + [y]}) == 101
    assert len({o._storage_id() for o in outs + [y]}) == 101
    assert all(o.tolist() == [2.0] * 5 for o in outs[::33])


def test_a_kernel_error_poisons_only_what_depends_on_it(session):
    """An index out of range inside gather is found by the kernel: the line runs, unrelated
    lines run, and the error raises where the gathered values are first needed."""
    a = tensord.arange(12.).reshape(3, 4)
    bad = tensord.tensor([[0, 9]])
    g = a.gather(1, bad)  # torch on a CPU raises here; CUDA, as tensord, later
    h = g * 2
    ok = (a + 1).sum()
    assert ok.item() == 78.0
    with pytest.raises(RuntimeError, match="gather"):
        h.tolist()
    session.synchronize()  # raised once, where it was met: not again here
    assert (a * 3).sum().item() == 198.0  # the session goes on


def test_an_error_raises_once(session):
    """An error met where its data is read is not raised again by a later synchronize (nor by
    an op that synchronizes, as linalg's do); one never read is raised by synchronize, once."""
    logits = tensord.zeros(2, 3)
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        tensord.nn.functional.cross_entropy(logits, tensord.tensor([5, 0])).item()
    assert tensord.linalg.inv(tensord.eye(2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    tensord.synchronize()
    unread = tensord.arange(4.).gather(0, tensord.tensor([7]))
    with pytest.raises(RuntimeError, match="gather"):
        tensord.synchronize()
    tensord.synchronize()
    with pytest.raises(RuntimeError, match="gather"):
        unread.tolist()  # its data stays poisoned
    tensord.synchronize()


def test_a_server_limit_poisons_only_what_depends_on_it():
    proc, address = tensord_process.start("--max-session-bytes=1048576")
    try:
        with tensord.connect(address) as s:
            big = tensord.zeros(1 << 20)  # 4 MiB: planned here, refused by the server
            small = tensord.ones(3) * 2
            assert small.tolist() == [2.0, 2.0, 2.0]  # unrelated: runs
            assert tuple(big.shape) == (1 << 20,)     # metadata is the client's
            total = big.sum()
            with pytest.raises(tensord.OutOfMemoryError):
                total.item()
            s.synchronize()  # raised once, where it was met
            refused = tensord.zeros(1 << 20) + 1
            with pytest.raises(tensord.OutOfMemoryError):
                s.synchronize()  # never read: raised here
            with pytest.raises(tensord.OutOfMemoryError):
                refused.sum().item()
            assert (small + 1).tolist() == [3.0, 3.0, 3.0]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0


def test_mistakes_in_a_batch_across_sessions_and_threads(server):
    """Several threads, each with its own session, make mistakes between queued ops: each
    mistake raises in its own thread at its own line, and every other line's value is right."""
    failures = []

    def worker(k):
        try:
            with tensord.connect(server) as s:
                x = tensord.arange(12.).reshape(3, 4) + k
                for i in range(50):
                    x = x + 1
                    try:
                        x.view(5, 5) if i % 7 == k % 7 else x.t().view(12)
                    except RuntimeError:
                        pass
                    else:
                        failures.append((k, i, "no error at the line"))
                want = (np.arange(12.).reshape(3, 4) + k + 50).tolist()
                if x.tolist() != want:
                    failures.append((k, "values", x.tolist()))
                s.synchronize()
        except Exception as e:  # noqa: BLE001 - any stray error is a failure
            failures.append((k, repr(e)))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_without_the_extension_errors_still_raise_at_their_line(server):
    """Where the planning extension is not used (TENSORD_LOCAL_PLANNING=0, as with another
    Python or a registry mismatch), the server plans each op at once: same errors, same lines."""
    old = os.environ.get("TENSORD_LOCAL_PLANNING")
    os.environ["TENSORD_LOCAL_PLANNING"] = "0"
    try:
        with tensord.connect(server) as s:
            assert s.planner is None
            a = tensord.arange(12).reshape(3, 4)
            with pytest.raises(RuntimeError):
                a.t().view(12)
            with pytest.raises(IndexError):
                a.select(0, 3)
            assert a.sum().item() == 66
    finally:
        if old is None:
            del os.environ["TENSORD_LOCAL_PLANNING"]
        else:
            os.environ["TENSORD_LOCAL_PLANNING"] = old
