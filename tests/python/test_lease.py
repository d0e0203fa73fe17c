"""Session leases: the client renews its session's lease while it lives, and only then.

Each test has its own server with a 2 s session TTL, so that a session nobody renews is gone
within seconds, and GetServerInfo's session count is this test's alone.
"""
import gc
import os
import re
import signal
import subprocess
import sys
import threading
import time
import weakref

import grpc
import numpy as np
import pytest

import tensord
from tensord.v1 import tensord_pb2 as pb

import tensord_process
from conftest import ROOT

TTL = 2.0


@pytest.fixture
def address():
    proc, address = tensord_process.start(f"--session-ttl={TTL:g}s")
    yield address
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


class Raw:
    """Plain stubs on a channel of their own: calls that no client session makes. Only
    GetServerInfo leaves leases alone; any call naming a session renews its lease."""

    def __init__(self, address):
        self.channel = grpc.insecure_channel(address)

    def call(self, method, request, response_type):
        return self.channel.unary_unary(
            "/tensord.v1.Tensord/" + method, request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response_type.FromString)(request, timeout=10)

    def info(self):
        return self.call("GetServerInfo", pb.GetServerInfoRequest(), pb.GetServerInfoResponse)

    def renew_code(self, session_id):
        try:
            self.call("RenewLease", pb.RenewLeaseRequest(session_id=session_id),
                      pb.RenewLeaseResponse)
        except grpc.RpcError as e:
            return e.code()
        return grpc.StatusCode.OK


class CountRenewals(grpc.UnaryUnaryClientInterceptor):
    def __init__(self):
        self.count = 0

    def intercept_unary_unary(self, continuation, details, request):
        if details.method.endswith("/RenewLease"):
            self.count += 1
        return continuation(details, request)


def lease_thread(session, earlier):
    """The session's renewing thread (route names repeat across servers: another server's
    first session in this process, as the suite's own, is vm/1 too, so threads that ran before
    the session opened are left out)."""
    return [t for t in threading.enumerate()
            if t.name == "tensord-lease-" + session.route and t not in earlier]


def test_an_idle_session_keeps_its_tensors(address):
    raw = Raw(address)
    unrenewed = raw.call("OpenSession", pb.OpenSessionRequest(), pb.OpenSessionResponse)
    assert unrenewed.ttl_seconds == TTL
    with tensord.connect(address):
        src = np.arange(10_000, dtype=np.float32)
        t = tensord.from_numpy(src)
        v = (t * 2)[::3]
        time.sleep(3 * TTL)  # the program pauses: no call of its own
        assert np.array_equal(t.numpy(), src)
        assert np.array_equal(v.numpy(), (src * 2)[::3])
    # The TTL did apply: the session nobody renewed is gone.
    assert raw.renew_code(unrenewed.session_id) == grpc.StatusCode.NOT_FOUND


def test_no_renewal_after_close(address):
    counter = CountRenewals()
    earlier = set(threading.enumerate())
    s = tensord.Session(address, channel=grpc.intercept_channel(grpc.insecure_channel(address),
                                                                counter))
    time.sleep(TTL)  # three renewals, at a third of the TTL each
    assert counter.count >= 2
    assert lease_thread(s, earlier)
    s.close()
    assert not lease_thread(s, earlier)  # close() returns once the renewing thread has ended
    renewals = counter.count
    time.sleep(TTL)
    assert counter.count == renewals
    assert Raw(address).info().active_sessions == 0


def test_a_dropped_session_is_collected_and_stops_renewing(address):
    earlier = set(threading.enumerate())
    s = tensord.connect(address)
    thread, = lease_thread(s, earlier)
    ref = weakref.ref(s)
    del s
    gc.collect()
    assert ref() is None  # the renewing thread holds no reference to its session
    assert not thread.is_alive()
    assert Raw(address).info().active_sessions == 0  # the finalizer closed it


CHILD = """
import sys, time
import numpy as np
import tensord
s = tensord.connect(sys.argv[1])
t = tensord.from_numpy(np.ones(1 << 16, dtype=np.float32), session=s)
print(s.id, flush=True)
time.sleep(600)
"""


def test_a_killed_clients_session_is_reaped_within_the_ttl(address):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "client", "python")] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    child = subprocess.Popen([sys.executable, "-c", CHILD, address], stdout=subprocess.PIPE,
                             text=True, env=env)
    try:
        session_id = child.stdout.readline().strip()
        assert re.fullmatch(r"[A-Za-z0-9._-]+/[0-9]+/[0-9a-f]{32}", session_id)
        raw = Raw(address)
        time.sleep(3 * TTL)  # alive: its renewals keep the session
        info = raw.info()
        assert info.active_sessions == 1 and info.bytes_in_use >= 4 << 16
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        killed = time.monotonic()
        while raw.info().active_sessions and time.monotonic() - killed < 3 * TTL:
            time.sleep(0.05)
        # Its last renewal came before the kill; the server's reaper runs every quarter TTL.
        assert time.monotonic() - killed < TTL * 1.5
        assert raw.info().bytes_in_use == 0
        assert raw.renew_code(session_id) == grpc.StatusCode.NOT_FOUND
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
