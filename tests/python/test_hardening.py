"""The server's promises under hostile or heavy use, over the raw protobuf/gRPC API.

Each test starts its own tensord with the flags it needs and checks one promise:

  * no gRPC thread waits for a kernel: with 16 sessions blocked in data-dependent ops on long
    kernels, a health check and another session's view op answer within 100 ms;
  * the executor is fair: a small op of one session runs within milliseconds while another
    session's long kernels run, even when every executor thread is inside one long kernel
    (long kernels run in pieces and lend their thread between pieces);
  * every byte held for a session is charged to it (download snapshots, queued WriteStorage
    payloads, the metadata of views), so a 64 MiB session cannot hold more;
  * memory goes back: after 1 GiB of sessions close, RSS returns to within 10% of the idle
    baseline plus the pool's idle floor;
  * SIGTERM with a 20 s kernel running exits 0 within the drain deadline plus one second.
"""
import concurrent.futures
import os
import signal
import sys
import time

import grpc
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))

from tensord.v1 import tensord_pb2 as pb  # noqa: E402
import tensord_process  # noqa: E402

# Latency limits are for the Release server; an instrumented one (scripts/sanitize.sh runs these
# tests on the ASan+UBSan build) handles each call several times slower and scales them.
TIMING_SCALE = float(os.environ.get("TENSORD_TIMING_SCALE", "1"))

SERVICE = "/tensord.v1.Tensord/"
MiB = 1 << 20


class Server:
    """A tensord process with its own flags, and raw stubs on one channel."""

    def __init__(self, *flags):
        self.proc, self.address = tensord_process.start(*flags)
        self.channel = grpc.insecure_channel(
            self.address, options=[("grpc.max_receive_message_length", -1),
                                   ("grpc.max_send_message_length", -1)])
        self.next_id = 1

    def close(self):
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def unary(self, method, response_type):
        return self.channel.unary_unary(SERVICE + method,
                                        request_serializer=lambda m: m.SerializeToString(),
                                        response_deserializer=response_type.FromString)

    def open_session(self):
        return self.unary("OpenSession", pb.OpenSessionResponse)(
            pb.OpenSessionRequest(), timeout=10).session_id

    def close_session(self, sid):
        self.unary("CloseSession", pb.CloseSessionResponse)(
            pb.CloseSessionRequest(session_id=sid), timeout=30)

    def info(self):
        return self.unary("GetServerInfo", pb.GetServerInfoResponse)(
            pb.GetServerInfoRequest(), timeout=10)

    def health(self, timeout=10):
        check = self.channel.unary_unary("/grpc.health.v1.Health/Check",
                                         request_serializer=lambda b: b,
                                         response_deserializer=lambda b: b)
        return check(b"", timeout=timeout)  # HealthCheckRequest{} serializes to no bytes

    def rss_bytes(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def new_id(self):
        self.next_id += 1
        return self.next_id


def op(name, inputs=(), out=None, stream=0, **attrs):
    call = pb.OpCall(op=name, inputs=list(inputs), stream=stream)
    if out is not None:
        call.outputs.append(out)
    for key, value in attrs.items():
        if key == "dtype":
            call.attrs[key].dtype = value
        elif isinstance(value, bool):
            call.attrs[key].b = value
        elif isinstance(value, int):
            call.attrs[key].i = value
        elif isinstance(value, float):
            call.attrs[key].f = value
        else:
            call.attrs[key].ints.values.extend(value)
    return call


def run_ops(server, sid, *calls, timeout=60):
    return server.unary("RunOps", pb.RunOpsResponse)(
        pb.RunOpsRequest(session_id=sid, ops=list(calls)), timeout=timeout)


def download(server, sid, tensor_id, timeout=60):
    call = server.channel.unary_stream(SERVICE + "Download",
                                       request_serializer=lambda m: m.SerializeToString(),
                                       response_deserializer=pb.DownloadResponse.FromString)
    chunks = list(call(pb.DownloadRequest(session_id=sid, id=tensor_id), timeout=timeout))
    return b"".join(c.data for c in chunks[1:])


@pytest.fixture
def servers():
    started = []

    def start(*flags):
        s = Server(*flags)
        started.append(s)
        return s

    yield start
    for s in started:
        s.close()


def test_no_rpc_thread_waits_for_a_kernel(servers):
    server = servers("--session-ttl=120s")
    blocked = 16
    sessions = [server.open_session() for _ in range(blocked)]
    other = server.open_session()
    base = server.new_id()
    assert not run_ops(server, other, op("full", out=base, size=[4, 6], fill_value=1.0)).HasField(
        "error")

    # Each session: x = [0, 1, 0, 1, …]; a 3 s kernel; y = x * 2 queued behind it; nonzero(y),
    # which must wait for y's data.
    def blocked_batch(sid):
        x, y, nz = server.new_id(), server.new_id(), server.new_id()
        response = run_ops(server, sid,
                           op("arange", out=x, end=8),
                           op("remainder", [x], out=x + 1000, other=2),
                           op("_sleep", ms=3000),
                           op("mul", [x + 1000], out=y, other=2),
                           op("nonzero", [y], out=nz))
        return sid, nz, response

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=blocked)
    started = time.monotonic()
    futures = [pool.submit(blocked_batch, sid) for sid in sessions]
    time.sleep(0.5)  # every batch is now waiting for its 3 s kernel
    assert not any(f.done() for f in futures)

    t0 = time.monotonic()
    server.health(timeout=5)
    health_s = time.monotonic() - t0
    t0 = time.monotonic()
    view = run_ops(server, other, op("t", [base], out=server.new_id()), timeout=5)
    view_s = time.monotonic() - t0
    assert not view.HasField("error")
    assert list(view.results[0].outputs[0].sizes) == [6, 4]
    # The same session's later call waits its turn behind the blocked batch, without a thread.
    later = server.unary("Describe", pb.DescribeResponse).future(
        pb.DescribeRequest(session_id=sessions[0], ids=[]), timeout=30)
    assert health_s < 0.1 * TIMING_SCALE, f"health check took {health_s * 1000:.0f} ms"
    assert view_s < 0.1 * TIMING_SCALE, f"another session's view op took {view_s * 1000:.0f} ms"

    for f in futures:
        sid, nz, response = f.result(timeout=30)
        assert not response.HasField("error"), response.error
        info = response.results[-1].outputs[0]
        assert list(info.sizes) == [4, 1]  # 1, 3, 5, 7
        values = download(server, sid, nz)
        assert list(memoryview(values).cast("q")) == [1, 3, 5, 7]
    later.result()
    elapsed = time.monotonic() - started
    assert elapsed < 6, f"16 blocked sessions took {elapsed:.1f} s (the kernels take 3 s)"
    pool.shutdown()


def small_op_latencies(server, sid, count):
    """Seconds each of `count` small ops of session `sid` takes, from its RunOps to its data
    (full, then add 1, then download: the values are checked)."""
    x = server.new_id()
    latencies = []
    for i in range(count):
        t1 = time.monotonic()
        response = run_ops(server, sid, op("full", out=x + i, size=[16], fill_value=float(i)),
                           op("add", [x + i], out=x + 100 + i, other=1.0))
        assert not response.HasField("error")
        data = download(server, sid, x + 100 + i)
        assert list(memoryview(data).cast("f")) == [i + 1.0] * 16
        latencies.append(time.monotonic() - t1)
    return latencies


def test_a_small_op_runs_while_another_session_runs_long_kernels(servers):
    server = servers("--session-ttl=120s")
    busy, small = server.open_session(), server.open_session()
    a = server.new_id()
    n = 1536
    assert not run_ops(server, busy, op("randn", out=a, size=[n, n])).HasField("error")
    # Several seconds of matmuls on the busy session (each output feeds the next).
    calls, prev = [], a
    for _ in range(40):
        nxt = server.new_id()
        calls.append(op("mm", [prev, a], out=nxt))
        calls.append(op("div", [nxt], out=nxt + 500000, other=float(n)))
        prev = nxt + 500000
    t0 = time.monotonic()
    assert not run_ops(server, busy, *calls).HasField("error")
    sync = server.unary("Synchronize", pb.SynchronizeResponse).future(
        pb.SynchronizeRequest(session_id=busy), timeout=120)
    latencies = small_op_latencies(server, small, 10)
    busy_still = not sync.done()
    sync.result()
    busy_s = time.monotonic() - t0
    latencies.sort()
    assert busy_still, f"the long kernels ended ({busy_s:.1f} s) before the small ops were measured"
    assert latencies[len(latencies) // 2] < 0.1 * TIMING_SCALE, f"small op latencies {latencies}"


def test_a_small_op_runs_while_every_thread_is_inside_one_long_kernel(servers):
    # Two executor threads, three sessions each running ONE long kernel (a float64 matmul of
    # about a second or more): every thread is inside a single kernel, a third kernel waits. A
    # small op of a fourth session still starts within one piece of those kernels.
    server = servers("--session-ttl=120s", "--threads=2")
    n = 3072
    busy = []
    for _ in range(3):
        sid = server.open_session()
        a = server.new_id()
        assert not run_ops(server, sid, op("randn", out=a, size=[n, n],
                                           dtype=pb.DTYPE_FLOAT64)).HasField("error")
        busy.append((sid, a))
    syncs = []
    t0 = time.monotonic()
    for sid, a in busy:
        assert not run_ops(server, sid, op("mm", [a, a], out=a + 2)).HasField("error")
        syncs.append(server.unary("Synchronize", pb.SynchronizeResponse).future(
            pb.SynchronizeRequest(session_id=sid), timeout=300))
    time.sleep(0.3)  # the kernels are running
    small = server.open_session()
    latencies = small_op_latencies(server, small, 8)
    busy_still = sum(not s.done() for s in syncs)
    for s in syncs:
        s.result()
    busy_s = time.monotonic() - t0
    # The products are right (each row of a @ a against a few entries computed here).
    sid, a = busy[0]
    row = memoryview(download(server, sid, a)).cast("d")
    prod = memoryview(download(server, sid, a + 2)).cast("d")
    for j in (0, 1, n - 1):
        expect = sum(row[k] * row[k * n + j] for k in range(n))
        assert abs(prod[j] - expect) <= 1e-9 * max(1.0, abs(expect)), (j, prod[j], expect)
    latencies.sort()
    # A piece of these products is about 100 ms of BLAS (engine/cpu/linalg_kernels.cc): a small
    # op waits for at most one piece (median measured here 80-105 ms); without the yields it
    # waits for whole kernels (seconds).
    assert latencies[len(latencies) // 2] < 0.15 * TIMING_SCALE, f"small op latencies {latencies}"
    assert latencies[-1] < 0.5 * TIMING_SCALE, f"small op latencies {latencies}"
    assert busy_still >= 2, f"the long kernels ended ({busy_s:.1f} s) before the small ops ran"


def test_every_byte_held_for_a_session_is_charged(servers):
    server = servers("--session-ttl=120s", f"--max_session_bytes={64 * MiB}")
    sid = server.open_session()

    # A download of a 512 MiB broadcast view needs a 512 MiB snapshot: charged, so refused.
    one, big = server.new_id(), server.new_id()
    assert not run_ops(server, sid, op("full", out=one, size=[1], fill_value=2.0),
                       op("expand", [one], out=big, size=[128 * MiB])).HasField("error")
    with pytest.raises(grpc.RpcError) as e:
        download(server, sid, big)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "download" in e.value.details()
    assert server.info().bytes_in_use < 64 * MiB

    # Queued WriteStorage payloads: the stream is held by a long kernel (long enough for the 40
    # writes on a loaded machine), so writes queue; each 8 MiB payload is charged until it is
    # written, and the session's limit stops them.
    target = server.new_id()
    assert not run_ops(server, sid, op("zeros", out=target, size=[2 * MiB]),
                       op("_sleep", ms=8000)).HasField("error")
    write = server.unary("WriteStorage", pb.WriteStorageResponse)
    payload = bytes(8 * MiB)
    refused = None
    for i in range(40):  # 320 MiB if nothing were charged
        try:
            write(pb.WriteStorageRequest(session_id=sid, id=target, offset=0, data=payload),
                  timeout=30)
        except grpc.RpcError as err:
            refused = (i, err)
            break
    assert refused is not None, "320 MiB of queued payloads were accepted by a 64 MiB session"
    assert refused[1].code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "write_storage" in refused[1].details()
    assert refused[0] <= 7
    assert server.info().bytes_in_use <= 64 * MiB
    server.unary("Synchronize", pb.SynchronizeResponse)(pb.SynchronizeRequest(session_id=sid),
                                                        timeout=30)

    # Views: each named tensor's metadata is charged, so a million views cannot fit.
    base = server.new_id()
    assert not run_ops(server, sid, op("zeros", out=base, size=[4])).HasField("error")
    made, error = 0, None
    while made < 1_000_000 and error is None:
        start = 10_000_000 + made
        response = run_ops(server, sid, *[op("alias", [base], out=start + k) for k in range(10000)])
        made += len(response.results)
        if response.HasField("error"):
            error = response.error
    assert error is not None, "a million views fit in a 64 MiB session"
    assert error.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
    assert "alias" in error.message
    assert made < 64 * MiB // 256
    assert server.info().bytes_in_use <= 64 * MiB
    # Still usable, and releasing the views gives their bytes back.
    server.close_session(sid)
    assert server.info().bytes_in_use == 0


def test_memory_returns_after_sessions_close(servers):
    floor = 256 * MiB
    server = servers("--session-ttl=120s", f"--pool_idle_floor_bytes={floor}")
    warm = server.open_session()
    x = server.new_id()
    run_ops(server, warm, op("zeros", out=x, size=[1024]))
    download(server, warm, x)
    server.close_session(warm)
    time.sleep(3)
    baseline = server.rss_bytes()

    # 8 sessions × 128 MiB (a tensor and its sum with itself): 1 GiB.
    sessions = []
    for _ in range(8):
        sid = server.open_session()
        a, b = server.new_id(), server.new_id()
        response = run_ops(server, sid, op("ones", out=a, size=[16 * MiB]),
                           op("add", [a, a], out=b))
        assert not response.HasField("error")
        sessions.append(sid)
    for sid in sessions:
        server.unary("Synchronize", pb.SynchronizeResponse)(pb.SynchronizeRequest(session_id=sid),
                                                            timeout=60)
    peak = server.rss_bytes()
    assert peak > baseline + 900 * MiB, (baseline, peak)
    for sid in sessions:
        server.close_session(sid)
    limit = baseline * 1.1 + floor
    if os.environ.get("ASAN_OPTIONS"):
        # Under AddressSanitizer (scripts/sanitize.sh) the sanitizer's own allocator keeps part
        # of what the pool frees (seen: 395 MiB after close where the plain build returns to
        # its limit); the plain run in `make test` holds the exact limit, here most of the
        # gigabyte must still come back.
        limit = baseline + floor + (peak - baseline - floor) / 3
    deadline = time.monotonic() + 10
    while server.rss_bytes() > limit and time.monotonic() < deadline:
        time.sleep(0.25)
    rss = server.rss_bytes()
    assert rss <= limit, (f"RSS {rss / MiB:.0f} MiB after close; baseline {baseline / MiB:.0f} "
                          f"MiB, peak {peak / MiB:.0f} MiB, floor {floor / MiB:.0f} MiB")


def test_sigterm_exits_within_the_drain_deadline_while_a_kernel_runs(servers):
    server = servers("--session-ttl=120s", "--drain-timeout=2s")
    sid = server.open_session()
    a = server.new_id()
    # A 20 s kernel on the default stream, real CPU work on a second stream, and a call waiting
    # for the first.
    stream = server.unary("CreateStream", pb.CreateStreamResponse)(
        pb.CreateStreamRequest(session_id=sid), timeout=10).stream
    calls = [op("randn", out=a, size=[1500, 1500], stream=stream)]
    for i in range(200):
        calls.append(op("mm", [a, a], out=a + 1 + i, stream=stream))
    assert not run_ops(server, sid, op("_sleep", ms=20000), *calls).HasField("error")
    waiting = server.unary("Synchronize", pb.SynchronizeResponse).future(
        pb.SynchronizeRequest(session_id=sid), timeout=60)
    time.sleep(0.5)
    t0 = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    code = server.proc.wait(timeout=30)
    elapsed = time.monotonic() - t0
    assert code == 0
    assert elapsed < 2 + 1, f"exit took {elapsed:.1f} s with a 2 s drain deadline"
    with pytest.raises(grpc.RpcError):
        waiting.result(timeout=10)


def test_calls_waiting_behind_a_blocked_batch_are_bounded(servers):
    server = servers("--session-ttl=120s", "--max_queued_calls=4")
    sid = server.open_session()
    x, y, nz = server.new_id(), server.new_id(), server.new_id()
    blocked = server.unary("RunOps", pb.RunOpsResponse).future(
        pb.RunOpsRequest(session_id=sid, ops=[op("ones", out=x, size=[8]), op("_sleep", ms=2000),
                                              op("mul", [x], out=y, other=3),
                                              op("nonzero", [y], out=nz)]), timeout=30)
    time.sleep(0.3)
    describe = server.unary("Describe", pb.DescribeResponse)
    waiting = [describe.future(pb.DescribeRequest(session_id=sid, ids=[nz]), timeout=30)
               for _ in range(10)]
    outcomes = []
    for f in waiting:
        try:
            outcomes.append(list(f.result().tensors[0].sizes))
        except grpc.RpcError as e:
            outcomes.append((e.code(), e.details()))
    assert not blocked.result().HasField("error")
    answered = [o for o in outcomes if o == [8, 1]]
    refused = [o for o in outcomes if o != [8, 1]]
    # The calls that waited saw the batch's outputs (they ran after it, in order).
    assert len(answered) == 4, outcomes
    assert all(code == grpc.StatusCode.RESOURCE_EXHAUSTED and "describe" in details
               for code, details in refused), refused
    assert run_ops(server, sid, op("t", [y], out=server.new_id())).results[0].outputs[0].sizes
