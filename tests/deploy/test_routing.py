"""The routing of sessions, for real: tensord replicas named as the StatefulSet's pods, the router's
nginx.conf from deploy/k8s/router.yaml, and the Python client's sessions through it.

- Replicas tensord-0 and tensord-1 listen on 127.0.0.10 and 127.0.0.11, both on one free port, so
  that the router's map rule `$pod.tensord-pods.<namespace>.svc.cluster.local:<port>` is used as
  shipped, but for the port. A DNS stand-in plays the cluster's: it names each replica's pod and,
  for `tensord-any` (a ClusterIP Service in Kubernetes, any ready pod), answers every ready
  replica's address. nginx resolves the name per call (grpc_pass names its upstream through a
  variable) and passes the call to the first of the addresses, which its resolver cache hands out
  from a random starting point: sessions opened through the router spread over the replicas as
  the Service would spread them, and the routing rules are the shipped ones.
- 50 sessions through the router: every call of each lands on the replica its route names (each
  replica accepts its own sessions' ids and refuses the other's as "held by replica"; the router's
  access log shows one upstream per route), and both replicas hold a share.
- tensord-1 killed (SIGKILL): its sessions' next call is UNAVAILABLE naming their route; tensord-0's
  go on.
- tensord-2 added: the map needs no change (its pod name resolves once it exists, and a session
  held by it is routed at once); the router reloaded (`nginx -s reload`) so that tensord-any's new
  address is seen before the resolver's `valid=` time, as a ClusterIP would see the new pod at
  once; no surviving session moved, and new sessions land on tensord-2 too.
- The access log holds routes, never a session's secret.

The binary is $TENSORD_BINARY (ctest sets it) or build/tensord. Run with Debian's Python:

    PYTHONPATH=client/python python3 -m pytest -q tests/deploy/test_routing.py
"""
import collections
import json
import os
import re
import signal
import subprocess
import time

import numpy as np
import pytest

from routing_util import NGINX, ROOT, DnsStub, Nginx, free_port, loopback_conf, wait_for_port

grpc = pytest.importorskip("grpc")
# Its replicas die for good, and dozens of sessions find out: a lost connection is not retried
# (clients retry for 30 s by default, for network blips; tests/faults covers that).
os.environ.setdefault("TENSORD_RECONNECT_SECONDS", "0")
tensord = pytest.importorskip("tensord")
from tensord.v1 import tensord_pb2 as pb  # noqa: E402

NAMESPACE = "tensord"
PODS = f"tensord-pods.{NAMESPACE}.svc.cluster.local"
ANY = f"tensord-any.{NAMESPACE}.svc.cluster.local"
HOSTS = {"tensord-0": "127.0.0.10", "tensord-1": "127.0.0.11", "tensord-2": "127.0.0.12"}
SESSIONS = 50
NEW_SESSIONS = 20
MIN_SHARE = 10          # sessions each replica holds at least, of the 50
TIME_LIMIT = 60         # seconds for the whole test (it takes about 7): past it, it fails
SECRET = re.compile(r"[0-9a-f]{32}")

pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (Debian's package "
                                                      "nginx): the router cannot be run")


class Cluster:
    """The replicas, the DNS stand-in and the router; stop() ends every process it started."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.binary = os.environ.get("TENSORD_BINARY", str(ROOT / "build" / "tensord"))
        assert os.access(self.binary, os.X_OK), f"no tensord binary at {self.binary}"
        self.port = free_port(tuple(HOSTS.values()))
        self.replicas = {}  # name -> Popen
        self.dns = None
        self.nginx = None

    def start_replica(self, name):
        host = HOSTS[name]
        log = self.tmp / f"{name}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [self.binary, f"--replica={name}", f"--listen={host}:{self.port}"],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.replicas[name] = proc
        wait_for_port(host, self.port, proc, name)
        assert f"listening on {host}:{self.port}" in log.read_text(errors="replace")
        return proc

    def address(self, name):
        return f"{HOSTS[name]}:{self.port}"

    def start_dns(self, names):
        """The cluster's DNS while `names` are the ready pods."""
        self.dns = DnsStub({f"{n}.{PODS}": HOSTS[n] for n in names})
        self.dns.set(ANY, [HOSTS[n] for n in names])

    def start_router(self):
        listen = free_port()
        conf = loopback_conf(NAMESPACE, f"127.0.0.1:{self.dns.port}", listen, self.port)
        self.nginx = Nginx(self.tmp, conf, listen)
        self.proxy = f"127.0.0.1:{listen}"

    def kill(self, name):
        proc = self.replicas[name]
        proc.kill()
        proc.wait(timeout=10)

    def stop(self):
        if self.nginx is not None:
            self.nginx.stop()
        for proc in self.replicas.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        if self.dns is not None:
            self.dns.close()

    def logs(self):
        return {name: (self.tmp / f"{name}.log").read_text(errors="replace")
                for name in self.replicas}


class Direct:
    """Plain stubs on a replica's own address: each replica's view of a session."""

    def __init__(self, address):
        self.channel = grpc.insecure_channel(address)

    def call(self, method, request, response_type, metadata=None):
        return self.channel.unary_unary(
            "/tensord.v1.Tensord/" + method, request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response_type.FromString)(request, metadata=metadata, timeout=10)

    def replica(self):
        info = self.call("GetServerInfo", pb.GetServerInfoRequest(), pb.GetServerInfoResponse)
        return info.replica

    def renew(self, session_id, metadata=None):
        """(status code, details) of RenewLease naming the session."""
        try:
            self.call("RenewLease", pb.RenewLeaseRequest(session_id=session_id),
                      pb.RenewLeaseResponse, metadata)
        except grpc.RpcError as e:
            return e.code(), e.details()
        return grpc.StatusCode.OK, ""

    def close(self):
        self.channel.close()


@pytest.fixture
def cluster(tmp_path):
    def too_long(signum, frame):
        raise TimeoutError(f"test_routing ran past {TIME_LIMIT} s")

    previous = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(TIME_LIMIT)
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        c.stop()


def exercise(session, k):
    """A few ops on the session (arange, add, mul, sum) and their values downloaded, against
    numpy's."""
    n = 8 + k % 13
    t = tensord.arange(n, session=session)
    u = (t + k) * 2
    total = u.sum()
    expected = (np.arange(n) + k) * 2
    np.testing.assert_array_equal(u.numpy(), expected)
    assert total.item() == expected.sum()
    x = tensord.arange(n, dtype=tensord.float32, session=session) / 4
    np.testing.assert_allclose(x.numpy(), np.arange(n, dtype=np.float32) / 4)


def holder(session):
    """The replica a session's route names."""
    return session.route.split("/")[0]


def check_held(directs, sessions, live):
    """Each live replica accepts the ids of the sessions it holds and refuses the others', naming
    the holder: every session is where its route says, and only there (a lost session is
    nowhere)."""
    for s in sessions:
        owner = holder(s)
        for name in live:
            code, details = directs[name].renew(s.id)
            if name == owner:
                assert code == grpc.StatusCode.OK, (s.route, name, code, details)
            else:
                assert code == grpc.StatusCode.NOT_FOUND, (s.route, name, code, details)
                assert (f"session {s.route} is held by replica {owner}, and this is replica "
                        f"{name}") in details
                assert s.id.rsplit("/", 1)[1] not in details


def check_lost(session, k):
    with pytest.raises(RuntimeError) as e:
        exercise(session, k)
    assert getattr(e.value, "grpc_code", None) == "UNAVAILABLE", repr(e.value)
    message = str(e.value)
    assert f"tensord replica for route {session.route} is unreachable: its sessions are lost" \
        in message, message


def access_log(nginx):
    lines = [json.loads(line) for line in nginx.log().splitlines() if line.startswith("{")]
    assert lines, "the router logged no call"
    return lines


def test_routing_through_the_shipped_router(cluster):
    started = time.monotonic()
    # Two replicas, ready; the router in front of them.
    for name in ("tensord-0", "tensord-1"):
        cluster.start_replica(name)
    cluster.start_dns(["tensord-0", "tensord-1"])
    cluster.start_router()
    directs = {name: Direct(cluster.address(name)) for name in HOSTS}
    for name in ("tensord-0", "tensord-1"):
        assert directs[name].replica() == name

    sessions = []
    try:
        # 50 sessions through the router, each with a few ops and downloads.
        for k in range(SESSIONS):
            s = tensord.Session(cluster.proxy)
            sessions.append(s)
            assert re.fullmatch(r"tensord-[01]/\d+", s.route), s.route
            assert s.id.startswith(s.route + "/") and SECRET.fullmatch(s.id.rsplit("/", 1)[1])
            exercise(s, k)
        for k, s in enumerate(sessions):  # again, after all were opened
            exercise(s, k)
        check_held(directs, sessions, ["tensord-0", "tensord-1"])
        shares = collections.Counter(holder(s) for s in sessions)
        assert min(shares["tensord-0"], shares["tensord-1"]) >= MIN_SHARE, shares

        # Every call of a session went to its replica's address, and only there.
        upstreams = collections.defaultdict(set)
        for line in access_log(cluster.nginx):
            upstreams[line["route"]].add(line["upstream"])
            assert line["grpc_status"] == "0", line
        for s in sessions:
            assert upstreams[s.route] == {cluster.address(holder(s))}, (s.route, upstreams[s.route])
        assert upstreams[""] <= {cluster.address("tensord-0"), cluster.address("tensord-1")}

        # tensord-1 dies: its pod's name and its place behind tensord-any go, as in the cluster.
        cluster.kill("tensord-1")
        cluster.dns.drop(f"tensord-1.{PODS}")
        cluster.dns.set(ANY, [HOSTS["tensord-0"]])
        lost = [s for s in sessions if holder(s) == "tensord-1"]
        kept = [s for s in sessions if holder(s) == "tensord-0"]
        for k, s in enumerate(sessions):
            if s in lost:
                check_lost(s, k)
            else:
                exercise(s, k)
        check_held(directs, sessions, ["tensord-0"])

        # tensord-2 joins. The map needs no change: its pod name resolves from now on, and a
        # session held by it is routed there at once (opened on it directly, used through the
        # router with its route header).
        cluster.start_replica("tensord-2")
        cluster.dns.set(f"tensord-2.{PODS}", HOSTS["tensord-2"])
        assert directs["tensord-2"].replica() == "tensord-2"
        direct = tensord.Session(cluster.address("tensord-2"))
        sessions.append(direct)
        assert holder(direct) == "tensord-2"
        exercise(direct, 7)
        through = Direct(cluster.proxy)
        assert through.renew(direct.id, [("tensord-route", direct.route)]) == \
            (grpc.StatusCode.OK, "")
        through.close()

        # tensord-any gains it (and lost tensord-1 above). In the cluster tensord-any is a
        # ClusterIP Service, one stable address whose endpoints follow the ready pods at once;
        # here it is a name whose answers change, and nginx keeps an answer for the resolver's
        # valid= time (until then a call without a route may still reach tensord-1's old
        # address). A reload (new workers with empty caches, the same configuration) stands in
        # for waiting that out.
        cluster.dns.set(ANY, [HOSTS["tensord-0"], HOSTS["tensord-2"]])
        cluster.nginx.reload()
        for k, s in enumerate(sessions[:SESSIONS]):
            if s in lost:
                check_lost(s, k)  # now its pod's name no longer resolves
            else:
                exercise(s, k)
        check_held(directs, sessions, ["tensord-0", "tensord-2"])

        fresh = []
        for k in range(NEW_SESSIONS):
            s = tensord.Session(cluster.proxy)
            fresh.append(s)
            sessions.append(s)
            exercise(s, k)
        assert {holder(s) for s in fresh} <= {"tensord-0", "tensord-2"}
        check_held(directs, sessions, ["tensord-0", "tensord-2"])
        on_new = sum(holder(s) == "tensord-2" for s in fresh)
        assert on_new >= 2, f"{on_new} of {NEW_SESSIONS} new sessions on tensord-2"
        for k, s in enumerate(kept):  # still on their replica, still working
            exercise(s, k)

        # The access log: routes, never a secret.
        logged = cluster.nginx.log()
        lines = access_log(cluster.nginx)
        routes = {line["route"] for line in lines}
        assert {s.route for s in sessions} <= routes
        for line in lines:  # every call of a live replica's session went to that replica
            name = line["route"].split("/")[0]
            if name in ("tensord-0", "tensord-2"):
                assert line["upstream"] == cluster.address(name), line
        for s in sessions:
            assert s.id.rsplit("/", 1)[1] not in logged
            assert s.id not in logged
        assert not SECRET.search(logged), SECRET.search(logged).group(0)
        # Nor in the replicas' own output.
        for name, text in cluster.logs().items():
            for s in sessions:
                assert s.id.rsplit("/", 1)[1] not in text, name
    finally:
        for s in sessions:
            s.close()
        for d in directs.values():
            d.close()
    print(f"routing test: {time.monotonic() - started:.1f} s; shares {dict(shares)}, "
          f"{on_new} of {NEW_SESSIONS} new sessions on tensord-2")
