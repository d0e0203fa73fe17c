"""Connections cut, delayed, blackholed and stalled by a fault-injecting TCP proxy
(fault_proxy.py) between a client and a real tensord: calls fail with deadlines or UNAVAILABLE,
never hang, and a client that stops reading a download does not grow the server's memory
without bound (HTTP/2 flow control holds).
"""
import os
import subprocess
import sys
import time

import grpc
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
sys.path.insert(0, HERE)

import tensord  # noqa: E402
from tensord.v1 import tensord_pb2 as pb  # noqa: E402
import tensord_process  # noqa: E402
from fault_proxy import FaultProxy  # noqa: E402


@pytest.fixture(scope="module")
def server():
    proc, address = tensord_process.start("--session-ttl=30s", stderr=subprocess.DEVNULL)
    yield proc, address
    proc.terminate()
    assert proc.wait(timeout=30) == 0


def rss_bytes(pid):
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Raw:
    """Raw calls on one channel, with the session's route and a deadline on every call."""

    def __init__(self, address):
        self.channel = grpc.insecure_channel(address)
        opened = self.unary("OpenSession", pb.OpenSessionRequest(), pb.OpenSessionResponse)
        self.id, self.route = opened.session_id, opened.route

    def unary(self, method, request, response_type, timeout=5):
        metadata = (("tensord-route", self.route),) if getattr(self, "route", None) else None
        return self.channel.unary_unary(
            "/tensord.v1.Tensord/" + method, request_serializer=type(request).SerializeToString,
            response_deserializer=response_type.FromString)(request, timeout=timeout,
                                                            metadata=metadata)

    def arange(self, tensor_id, n):
        run = pb.RunOpsRequest(session_id=self.id)
        run.ops.add(op="arange", attrs={"end": pb.AttrValue(f=float(n))}, outputs=[tensor_id])
        assert not self.unary("RunOps", run, pb.RunOpsResponse).HasField("error")

    def read(self, tensor_id, timeout=5):
        return self.unary("ReadStorage", pb.ReadStorageRequest(session_id=self.id, id=tensor_id,
                                                              count=-1),
                          pb.ReadStorageResponse, timeout=timeout)


def test_a_dropped_connection_fails_calls_at_once_and_the_session_survives(server):
    _, address = server
    with FaultProxy(address) as proxy:
        raw = Raw(proxy.address)
        raw.arange(1, 100)
        proxy.drop()
        # The next call either reconnects (gRPC redials) and works, or fails UNAVAILABLE: it
        # never hangs, and the session, held by the server, is intact.
        start = time.monotonic()
        try:
            values = np.frombuffer(raw.read(1).data, dtype=np.float32)
            assert values[-1] == 99.0
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNAVAILABLE
        assert time.monotonic() - start < 5
        values = np.frombuffer(raw.read(1).data, dtype=np.float32)
        assert values[-1] == 99.0


def test_delay_slows_calls_and_deadlines_cut_them(server):
    _, address = server
    with FaultProxy(address) as proxy:
        raw = Raw(proxy.address)
        raw.arange(1, 10)
        proxy.set(delay=0.3)
        start = time.monotonic()
        raw.read(1, timeout=5)  # slower, still right
        assert time.monotonic() - start >= 0.3
        with pytest.raises(grpc.RpcError) as e:
            raw.read(1, timeout=0.2)
        assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        proxy.set(delay=0.0)
        assert np.frombuffer(raw.read(1).data, dtype=np.float32)[-1] == 9.0


def test_a_half_open_connection_ends_calls_at_their_deadline(server):
    _, address = server
    with FaultProxy(address) as proxy:
        raw = Raw(proxy.address)
        raw.arange(1, 10)
        proxy.set(blackhole=True)  # nothing passes, nothing is closed
        for timeout in (0.5, 1.0):
            start = time.monotonic()
            with pytest.raises(grpc.RpcError) as e:
                raw.read(1, timeout=timeout)
            assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert time.monotonic() - start < timeout + 2
        # Direct to the server, the session is there and answers at once.
        direct = Raw.__new__(Raw)
        direct.channel, direct.id, direct.route = grpc.insecure_channel(address), raw.id, raw.route
        assert np.frombuffer(direct.read(1).data, dtype=np.float32)[-1] == 9.0


def test_a_client_that_stops_reading_a_download_holds_no_growing_memory(server):
    proc, address = server
    with tensord.connect(address) as s:
        big = tensord.zeros(64 << 20)  # 256 MiB held by the session
        s.synchronize()
        with FaultProxy(address) as proxy:
            channel = grpc.insecure_channel(proxy.address)
            stream = channel.unary_stream(
                "/tensord.v1.Tensord/Download",
                request_serializer=pb.DownloadRequest.SerializeToString,
                response_deserializer=lambda b: b)(
                    pb.DownloadRequest(session_id=s.id, id=big._id),
                    metadata=(("tensord-route", s.route),), timeout=30)
            next(stream)  # the header: the download has started
            proxy.set(stall_downstream=True)  # the client reads nothing more
            before = rss_bytes(proc.pid)
            samples = []
            for _ in range(20):
                time.sleep(0.1)
                samples.append(rss_bytes(proc.pid))
            grown = max(samples) - before
            print(f"server RSS while the reader is stalled: +{grown / 2**20:.1f} MiB "
                  "(a 256 MiB download)")
            # Flow control holds: the server keeps only windows' worth in flight, not a copy.
            assert grown < 48 << 20, grown
            stream.cancel()
            channel.close()
        assert big.sum().item() == 0.0  # the session is fine


def test_a_numbered_batch_sent_twice_runs_once(server):
    """The server answers a resent batch (the same batch_seq) from what it already did."""
    _, address = server
    raw = Raw(address)
    raw.arange(1, 4)  # [0, 1, 2, 3]
    run = pb.RunOpsRequest(session_id=raw.id, batch_seq=1)
    run.ops.add(op="add_", inputs=[1], attrs={"other": pb.AttrValue(f=10.0)}, outputs=[])
    first = raw.unary("RunOps", run, pb.RunOpsResponse)
    again = raw.unary("RunOps", run, pb.RunOpsResponse)  # as after a lost reply
    assert again == first and not again.HasField("error")
    values = np.frombuffer(raw.read(1).data, dtype=np.float32)
    assert values.tolist() == [10.0, 11.0, 12.0, 13.0]  # once, not twice
    run.batch_seq = 2
    raw.unary("RunOps", run, pb.RunOpsResponse)
    assert np.frombuffer(raw.read(1).data, dtype=np.float32)[0] == 20.0
    run.batch_seq = 1  # an older number: refused, nothing runs
    with pytest.raises(grpc.RpcError) as e:
        raw.unary("RunOps", run, pb.RunOpsResponse)
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert np.frombuffer(raw.read(1).data, dtype=np.float32)[0] == 20.0


def test_a_program_whose_connection_is_cut_again_and_again_finishes_right(server):
    """Reattach: connections dropped every 0.25 s under a program of in-place updates, reads,
    uploads and fresh ops; the client reconnects to its session by itself and resends what was in flight,
    which the server does not run twice. The result is exact."""
    _, address = server
    with FaultProxy(address) as proxy:
        stop = False

        def cutter():
            while not stop:
                time.sleep(0.25)
                proxy.drop()

        import threading
        thread = threading.Thread(target=cutter)
        with tensord.connect(proxy.address) as s:
            x = tensord.zeros(1000)
            want = np.zeros(1000, dtype=np.float32)
            thread.start()
            try:
                start = time.monotonic()
                steps = 0
                while time.monotonic() - start < 3.0:
                    x.add_(1.0)
                    x.mul_(2.0)
                    want = (want + 1) * 2
                    y = tensord.arange(1000.0) + x  # a fresh op that reads the in-place result
                    if steps % 5 == 0:
                        got = y.numpy()
                        assert np.array_equal(got, np.arange(1000, dtype=np.float32) + want)
                        # An upload added in place: resent if cut, never applied twice.
                        x.zero_()  # keep the numbers exact in float32
                        x.add_(tensord.tensor(np.ones(1000, dtype=np.float32)))
                        want[:] = 1
                    steps += 1
                s.synchronize()
                assert np.array_equal(x.numpy(), want)
            finally:
                stop = True
                thread.join()
        print(f"reattach: {steps} steps right through connections cut every 0.25 s")
        assert steps > 10
