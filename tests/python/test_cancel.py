"""Cancellation: Session.cancel / tensord.cancel, and Ctrl-C in a program waiting for its work.

Cancelling drops the session's queued ops (their outputs raise CANCELLED's message when read),
stops a running op at its next piece, frees what only the dropped ops held, and leaves ops
issued afterwards, and other streams when one stream is cancelled, untouched. Each test has its
own session, so that what it cancels is only its own.
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tensord
from tensord import cuda
from tensord._ops import _op
from tensord.v1 import tensord_pb2 as pb

MiB = 1 << 20


def _sleep(session, ms):
    """Queues the server's _sleep op on the current stream: the stream is busy for `ms`."""
    _op(session, "_sleep", [], {"ms": ms}, returns_nothing=True)


@pytest.fixture
def own(server):
    s = tensord.connect(server)
    yield s
    s.close()


def _bytes_in_use(session):
    """Tensor bytes the server holds now (Session.server_info() is read once and kept)."""
    return session._call("GetServerInfo", pb.GetServerInfoRequest(),
                         pb.GetServerInfoResponse).bytes_in_use


def _raises_cancelled(tensor):
    with pytest.raises(RuntimeError, match="cancelled by the client") as info:
        tensor.tolist()
    return info.value


def test_cancel_drops_queued_ops_and_frees_what_only_they_held(own):
    a = tensord.ones(1024, 1024, session=own)  # 4 MiB
    own.synchronize()
    base = _bytes_in_use(own)
    _sleep(own, 60_000)  # the stream is busy for a minute: everything behind it waits
    y = None
    for i in range(10):
        # An uploaded 4 MiB input whose only holder, once the client lets it go, is its op.
        x = tensord.tensor(np.full((1024, 1024), i, dtype=np.float32), session=own)
        y = a + x
        del x
    z = y * 2
    own.flush()
    assert _bytes_in_use(own) >= base + 10 * 4 * MiB

    t = time.monotonic()
    dropped = own.cancel()
    own.synchronize()  # the canceller knows: no error, and no minute of waiting
    assert time.monotonic() - t < 5
    assert dropped == 12  # the sleep, ten additions, one multiplication
    # The inputs are freed, but for the last one or two: the client still names them (y keeps
    # its inputs until its error is known; releases go with the next batch).
    assert _bytes_in_use(own) <= base + 2 * 4 * MiB + MiB
    _raises_cancelled(y)
    _raises_cancelled(z)

    # Ops issued afterwards run; the inputs of the cancelled ops are intact.
    assert (a + 1).sum().item() == 2 * 1024 * 1024
    assert own.cancel() == 0  # nothing queued: nothing dropped
    own.synchronize()


def test_closing_a_session_drops_its_queued_work(server, own):
    other = tensord.connect(server)
    _sleep(other, 60_000)
    inputs = [tensord.tensor(np.ones((1024, 1024), dtype=np.float32), session=other)
              for _ in range(4)]
    outputs = [x + 1 for x in inputs]
    other.flush()
    del inputs
    base = _bytes_in_use(own)
    assert base >= 4 * 4 * MiB
    other.close()
    deadline = time.monotonic() + 5
    while _bytes_in_use(own) > base - 4 * 4 * MiB and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _bytes_in_use(own) <= base - 4 * 4 * MiB
    del outputs


def test_a_running_op_stops_at_its_next_piece(own):
    # About 4 s of float64 matrix product on two cores, in pieces of a fraction of a second.
    a = tensord.ones(6144, 6144, dtype=tensord.float64, session=own)
    own.synchronize()
    b = a @ a
    own.flush()
    time.sleep(0.5)  # it is running now
    t = time.monotonic()
    assert own.cancel() == 1
    own.synchronize()
    stopped_after = time.monotonic() - t
    assert stopped_after < 1.5, f"the running product took {stopped_after:.2f} s to stop"
    _raises_cancelled(b)
    c = a[:2, :2] @ a[:2, :2]
    assert c.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_cancelling_one_stream_leaves_the_others(own):
    with own:
        a = tensord.arange(6.0)
        side = cuda.Stream()
        with cuda.stream(side):
            _sleep(own, 60_000)
            dropped = a + 1
        kept = a * 2  # the default stream
        own.flush()
        assert own.cancel(stream=side.stream_id) == 2
        assert kept.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        side.synchronize()
        _raises_cancelled(dropped)


def test_cancel_names_an_unknown_stream(own):
    with pytest.raises(RuntimeError, match="cancel.*stream 12345"):
        own.cancel(stream=12345)


CTRL_C_PROGRAM = textwrap.dedent("""
    import os, signal, threading, time
    import tensord as torch
    a = torch.ones(2048, 2048)
    for i in range(60):            # about a minute of products on two cores
        a = a @ a * 1e-3
    torch.current_session().flush()
    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    t = time.monotonic()
    try:
        torch.synchronize()
        print("finished")
    except KeyboardInterrupt:
        print(f"interrupted {time.monotonic() - t:.2f}")
    try:
        a.sum().item()
    except RuntimeError as e:
        print("read:", e)
    print("after:", (torch.ones(3) * 2).tolist())
    print("bytes:", torch.current_session().server_info().bytes_in_use)  # read once: now
""")


def test_ctrl_c_while_waiting_drops_the_work(server):
    env = dict(os.environ, TENSORD_ADDRESS=server)
    proc = subprocess.run([sys.executable, "-c", CTRL_C_PROGRAM], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    interrupted = [line for line in lines if line.startswith("interrupted")]
    assert interrupted, proc.stdout
    # SIGINT came 1 s in; the wait ends within a poll of gRPC and one piece of a product.
    assert float(interrupted[0].split()[1]) < 3.0, proc.stdout
    assert any(line.startswith("read:") and "cancelled by the client" in line
               for line in lines), proc.stdout
    assert "after: [2.0, 2.0, 2.0]" in lines, proc.stdout
    # What the dropped products held is freed (this test's server runs nothing else now).
    held = int([line for line in lines if line.startswith("bytes:")][0].split()[1])
    assert held < 64 * MiB, proc.stdout
