"""tensord.cuda's streams and events against torch.cuda's documented semantics.

The test server is a CPU server: its streams are worker queues with CUDA's semantics, so all of
this runs without a GPU. torch 1.13 CPU cannot run CUDA streams, so the assertions follow the
documentation of torch.cuda.Stream / Event / stream() (and of cudaStreamWaitEvent,
cudaEventQuery, cudaEventSynchronize, cudaStreamSynchronize that they wrap). The server's
`_sleep` op makes a stream slow for a known time.
"""
import re
import signal
import subprocess
import threading
import time

import pytest

import tensord
import tensord_process
from tensord import cuda
from tensord._ops import _op
from tensord.v1 import tensord_pb2 as pb


SLEEP_MS = 300
SLEEP = SLEEP_MS / 1000


def _sleep(session, ms=SLEEP_MS):
    """Queues the server's _sleep op on the current stream (nothing is sent yet)."""
    _op(session, "_sleep", [], {"ms": ms}, returns_nothing=True)


def _timed(fn):
    t = time.monotonic()
    value = fn()
    return value, time.monotonic() - t


# ---- identity, repr, current and default streams -------------------------------------------------

def test_default_and_current_stream(session):
    d = cuda.default_stream()
    c = cuda.current_stream()
    assert d == c and hash(d) == hash(c)
    assert d.stream_id == 0 and d.cuda_stream == 0
    assert d.device == session.device
    assert repr(d) == f"<torch.cuda.Stream device={session.device} cuda_stream=0x0>"
    s1, s2 = cuda.Stream(), cuda.Stream()
    assert s1 != s2 and s1 != d and s1 == s1 and s1 != "stream"
    assert len({s1, s2, d, cuda.default_stream()}) == 3
    assert s1.stream_id not in (0, s2.stream_id)
    assert repr(s1) == f"<torch.cuda.Stream device={session.device} cuda_stream={s1.stream_id:#x}>"
    assert cuda.Stream(priority=-1).priority == 0  # one priority level on the server
    assert cuda.Stream.priority_range() == (0, 0)
    assert cuda.Stream(device="cpu").device == tensord.device("cpu")
    with pytest.raises(RuntimeError, match="no device"):
        cuda.Stream(device=7)


def test_stream_context_nests_and_restores(session):
    d = cuda.default_stream()
    s1, s2 = cuda.Stream(), cuda.Stream()
    with cuda.stream(s1) as entered:
        assert entered is None  # torch's StreamContext.__enter__ returns None
        assert cuda.current_stream() == s1
        with cuda.stream(s2):
            assert cuda.current_stream() == s2
            with cuda.stream(None):  # a no-op, as torch's
                assert cuda.current_stream() == s2
            assert cuda.current_stream() == s2
        assert cuda.current_stream() == s1
        with pytest.raises(ZeroDivisionError):
            with cuda.stream(s2):
                1 / 0
        assert cuda.current_stream() == s1  # restored on an exception too
    assert cuda.current_stream() == d == cuda.default_stream()
    cuda.set_stream(s1)
    try:
        assert cuda.current_stream() == s1
        cuda.set_stream(None)  # no-op
        assert cuda.current_stream() == s1
    finally:
        cuda.set_stream(d)
    assert cuda.current_stream() == d


def test_current_stream_is_per_thread(session):
    s = cuda.Stream()
    seen = []
    with cuda.stream(s):
        t = threading.Thread(target=lambda: seen.append(cuda.current_stream()))
        t.start()
        t.join()
        assert cuda.current_stream() == s
    assert seen == [cuda.default_stream()]


# ---- routing ------------------------------------------------------------------------------------

def test_stream_context_routes_ops(session):
    s = cuda.Stream()
    with cuda.stream(s):
        _sleep(session)
        z = tensord.ones(3)  # queued on s, behind the sleep
    # The default stream is not held up by s's sleep (the sleep is sent by this flush).
    values, took = _timed(lambda: tensord.ones(3).tolist())
    assert values == [1.0, 1.0, 1.0]
    assert took < SLEEP / 2
    # z was written on s, behind the sleep: reading it waits for it.
    values, took = _timed(z.tolist)
    assert values == [1.0, 1.0, 1.0]
    assert took > SLEEP / 3
    s.synchronize()


def last_stream(session):
    """The stream of the last queued op (its OpCall, as the client encoded it)."""
    return pb.OpCall.FromString(session._pending[-1].call).stream


def test_ops_outside_contexts_use_stream_0(session):
    s = cuda.Stream()
    with cuda.stream(s):
        pass
    x = tensord.zeros(2) + 1
    assert session._pending and last_stream(session) == 0
    # As in CUDA, s must wait for the default stream's work before reading what it wrote
    # (without it the read races with the write and may see the storage uninitialised).
    s.wait_stream(cuda.default_stream())
    with cuda.stream(s):
        y = x * 2
        assert last_stream(session) == s.stream_id
    z = x * 3
    assert last_stream(session) == 0
    assert y.tolist() == [2.0, 2.0] and z.tolist() == [3.0, 3.0]


# ---- events -------------------------------------------------------------------------------------

def test_event_orders_two_streams(session):
    s1, s2 = cuda.Stream(), cuda.Stream()
    x = tensord.zeros(1000)
    y = tensord.zeros(1000)
    session.synchronize()
    with cuda.stream(s1):
        _sleep(session)
        x.fill_(1)
    e = s1.record_event()
    assert isinstance(e, cuda.Event)
    with cuda.stream(s2):
        s2.wait_event(e)  # returns at once: only future work on s2 waits
        y.copy_(x)
    values, took = _timed(y.tolist)
    assert values == [1.0] * 1000
    assert took > SLEEP / 3
    session.synchronize()


def test_streams_without_an_event_are_not_ordered(session):
    """The control for the test above: with no event, s2 does not wait for s1 (CUDA's
    semantics, no implicit ordering of a read after another stream's write), so the copy reads
    x before s1's fill and y stays zeros."""
    s1, s2 = cuda.Stream(), cuda.Stream()
    x = tensord.zeros(1000)
    y = tensord.full((1000,), 5.0)
    session.synchronize()
    with cuda.stream(s1):
        _sleep(session)
        x.fill_(1)
    with cuda.stream(s2):
        y.copy_(x)
    values, took = _timed(y.tolist)
    assert values == [0.0] * 1000
    assert took < SLEEP / 2
    session.synchronize()


def test_event_query_and_synchronize(session):
    s = cuda.Stream()
    e = cuda.Event()
    with cuda.stream(s):
        _sleep(session)  # buffered: record() must send it before the record
        e.record()
    assert e.query() is False
    assert s.query() is False
    _, took = _timed(e.synchronize)
    assert took > SLEEP / 2
    assert e.query() is True
    assert s.query() is True


def test_event_synchronize_waits_for_its_record_only(session):
    """cudaEventSynchronize waits for the work before the record, not for work queued on the
    stream after it (as a synchronize of the stream would)."""
    s = cuda.Stream()
    with cuda.stream(s):
        _sleep(session, 300)
        e = cuda.Event()
        e.record()
        _sleep(session, 900)
    _, took = _timed(e.synchronize)
    assert 0.15 < took < 0.8
    assert e.query() is True
    assert s.query() is False
    s.synchronize()


def test_event_record_again_replaces(session):
    s = cuda.Stream()
    e = cuda.Event()
    e.record(s)
    e.synchronize()
    assert e.query()
    with cuda.stream(s):
        _sleep(session)
    e.record(s)  # the latest record is what query, wait and synchronize see
    assert not e.query()
    e.synchronize()
    assert e.query()


def test_unrecorded_event(session):
    e = cuda.Event(enable_timing=False, blocking=True, interprocess=False)
    assert repr(e) == "<torch.cuda.Event uninitialized>" and e.cuda_event == 0
    assert e.query() is True  # nothing captured: complete, as cudaEventQuery
    e.synchronize()  # no-op
    e.wait()  # no wait, as cudaStreamWaitEvent on a never-recorded event
    cuda.Stream().wait_event(e)
    assert tensord.ones(2).tolist() == [1.0, 1.0]
    e.record()
    assert re.fullmatch(r"<torch\.cuda\.Event 0x[0-9a-f]+>", repr(e)) and e.cuda_event != 0


def test_event_wait_defaults_to_current_stream(session):
    s1, s2 = cuda.Stream(), cuda.Stream()
    x = tensord.zeros(100)
    y = tensord.zeros(100)
    session.synchronize()
    with cuda.stream(s1):
        _sleep(session)
        x.fill_(3)
        e = cuda.Event()
        e.record()  # on the current stream, s1
    with cuda.stream(s2):
        e.wait()  # the current stream, s2, waits
        y.copy_(x)
    assert y.tolist() == [3.0] * 100
    session.synchronize()


def test_wait_event_sends_the_ops_before_it(session):
    """Ops issued on a stream before a wait_event are not held back by the event."""
    s1, s2 = cuda.Stream(), cuda.Stream()
    z = tensord.zeros(10)
    session.synchronize()
    with cuda.stream(s1):
        _sleep(session)
    e = s1.record_event()
    with cuda.stream(s2):
        z.fill_(5)  # buffered when wait_event is called
        s2.wait_event(e)
    values, took = _timed(z.tolist)
    assert values == [5.0] * 10
    assert took < SLEEP / 2
    session.synchronize()


def test_elapsed_time_not_supported(session):
    a, b = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    a.record()
    b.record()
    with pytest.raises(RuntimeError, match="event timing is not supported by this server"):
        a.elapsed_time(b)
    with pytest.raises(RuntimeError):
        a.ipc_handle()


# ---- stream synchronize, query, wait_stream -----------------------------------------------------

def test_stream_synchronize_waits(session):
    s = cuda.Stream()
    with cuda.stream(s):
        _sleep(session)
        x = tensord.ones(4)
    assert not s.query()
    _, took = _timed(s.synchronize)
    assert took >= SLEEP * 0.9
    assert s.query()
    assert x.tolist() == [1.0] * 4


def test_stream_synchronize_waits_only_for_its_stream(session):
    s1, s2 = cuda.Stream(), cuda.Stream()
    with cuda.stream(s1):
        _sleep(session, 900)
    with cuda.stream(s2):
        _sleep(session, 300)
    _, took = _timed(s2.synchronize)
    assert 0.25 < took < 0.8
    assert not s1.query()
    s1.synchronize()


def test_wait_stream(session):
    s1, s2 = cuda.Stream(), cuda.Stream()
    x = tensord.zeros(100)
    y = tensord.zeros(100)
    w = tensord.zeros(100)
    session.synchronize()
    with cuda.stream(s1):
        _sleep(session)
        x.fill_(2)
    s2.wait_stream(s1)  # returns at once
    with cuda.stream(s2):
        y.copy_(x)
    values, took = _timed(y.tolist)
    assert values == [2.0] * 100 and took > SLEEP / 3
    # The default stream waiting for a side stream, as torch code does after a side stream block.
    with cuda.stream(s1):
        _sleep(session)
        x.fill_(4)
    cuda.current_stream().wait_stream(s1)
    w.copy_(x)
    assert w.tolist() == [4.0] * 100
    session.synchronize()


# ---- errors -------------------------------------------------------------------------------------

def test_async_error_raised_by_its_streams_synchronize(session):
    s, other = cuda.Stream(), cuda.Stream()
    x = tensord.arange(6.)
    index = tensord.tensor([0, 99])
    session.synchronize()  # x is written before the side streams read it
    with cuda.stream(s):
        bad = x.take(index)  # out of range: found by the kernel, on s
        fine = x + 1
    with cuda.stream(other):
        unrelated = x * 2
    other.synchronize()  # other's synchronize does not raise s's error
    with pytest.raises(IndexError, match="out of range"):
        s.synchronize()
    session.synchronize()  # the error was taken by s's synchronize
    assert fine.tolist() == [1., 2., 3., 4., 5., 6.]
    assert unrelated.tolist() == [0., 2., 4., 6., 8., 10.]
    with pytest.raises(IndexError):
        bad.tolist()


def test_streams_of_another_session(session, server):
    with tensord.connect(server) as other:
        s_other = cuda.Stream(session=other)
        e = cuda.Event()
        e.record(s_other)
        with pytest.raises(RuntimeError, match="another tensord session"):
            e.wait(cuda.Stream(session=session))
        with pytest.raises(RuntimeError, match="different tensord sessions"):
            cuda.Stream(session=session).wait_stream(s_other)
        # Inside `with other:` the module functions, current_stream included, use it.
        assert cuda.current_stream().session is other
        with cuda.stream(s_other):
            assert cuda.current_stream() == s_other
            t = tensord.ones(2) * 3
            # the current stream of the outer session is unchanged
            assert cuda.current_stream(session=session) == cuda.default_stream(session=session)
        assert t.tolist() == [3.0, 3.0]
        e.synchronize()


def test_unpipelined_session(server):
    with tensord.connect(server, pipeline=False) as s:
        side = cuda.Stream()
        x = tensord.zeros(10)
        s.synchronize()
        with cuda.stream(side):
            _sleep(s)
            x.fill_(7)
        e = side.record_event()
        assert not e.query()
        cuda.current_stream().wait_event(e)
        y = x + 1
        assert y.tolist() == [8.0] * 10


# ---- the server's stream limit ------------------------------------------------------------------

@pytest.fixture
def small_server():
    proc, address = tensord_process.start("--max-streams=3", stderr=subprocess.DEVNULL)
    yield address
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


def test_stream_limit_reuses_streams(small_server):
    """Past the server's streams per session, Stream() hands out the session's streams again
    (torch's streams come from a pool too), and Event.synchronize falls back to polling."""
    with tensord.connect(small_server) as s:
        streams = [cuda.Stream() for _ in range(5)]
        ids = [st.stream_id for st in streams]
        assert all(i != 0 for i in ids) and len(set(ids)) == 2
        x = tensord.zeros(10)
        s.synchronize()
        with cuda.stream(streams[0]):
            _sleep(s)
            x.fill_(1)
        e = streams[0].record_event()
        assert not e.query()
        _, took = _timed(e.synchronize)
        assert took > SLEEP / 2 and e.query()
        assert x.tolist() == [1.0] * 10
