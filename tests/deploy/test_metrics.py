"""The metrics endpoint (--metrics-listen), scraped by a real Prometheus server (Debian's
`prometheus`), and the plaintext health port (--health-listen).

A tensord serves a workload from the Python client (sessions, ops, an op the server refuses, an
upload and a download); Prometheus scrapes it every second; its query API must then show the
sessions, ops by op, op errors by op and code, RPC latency histograms by method, transfer
bytes and tensor bytes by device, with the values the workload implies. The exposition never
carries a session's secret.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

import grpc
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import tensord  # noqa: E402
from tensord.v1 import tensord_pb2 as pb  # noqa: E402
import tensord_process  # noqa: E402

PROMETHEUS = shutil.which("prometheus")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    proc, address = tensord_process.start("--metrics-listen=127.0.0.1:0",
                                          "--health-listen=127.0.0.1:0", "--replica=metrics-0")
    lines = [proc.stdout.readline(), proc.stdout.readline()]
    ports = {}
    for line in lines:
        m = re.search(r"health on (\S+)", line)
        if m:
            ports["health"] = m.group(1)
        m = re.search(r"metrics on (http://\S+)", line)
        if m:
            ports["metrics"] = m.group(1)
    assert set(ports) == {"health", "metrics"}, lines
    yield address, ports["metrics"], ports["health"]
    proc.terminate()
    assert proc.wait(timeout=20) == 0


def scrape(url):
    with urllib.request.urlopen(url, timeout=5) as reply:
        assert reply.status == 200
        assert reply.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return reply.read().decode()


def raw_session(address):
    channel = grpc.insecure_channel(address)
    call = lambda m, req, resp: channel.unary_unary(  # noqa: E731
        "/tensord.v1.Tensord/" + m, request_serializer=lambda x: x.SerializeToString(),
        response_deserializer=resp.FromString)(req, metadata=route[0])
    route = [None]
    opened = call("OpenSession", pb.OpenSessionRequest(client_version=tensord.__version__),
                  pb.OpenSessionResponse)
    route[0] = (("tensord-route", opened.route),)
    return channel, call, opened


def test_prometheus_scrapes_what_the_server_did(server, tmp_path):
    if PROMETHEUS is None:
        pytest.skip("Debian's prometheus is not installed (scripts/install-deps.sh installs it)")
    address, metrics_url, _ = server
    # The workload: 3 sessions opened through raw calls (two closed), 5 adds, 2 refused ops,
    # an upload of 4096 bytes and a download of it.
    channel, call, opened = raw_session(address)
    run = pb.RunOpsRequest(session_id=opened.session_id)
    run.ops.add(op="arange", attrs={"end": pb.AttrValue(f=1024.0)}, outputs=[1])
    for i in range(5):
        run.ops.add(op="add", inputs=[1, 1], outputs=[2 + i])
    reply = call("RunOps", run, pb.RunOpsResponse)
    assert not reply.HasField("error"), reply.error
    bad = pb.RunOpsRequest(session_id=opened.session_id)
    bad.ops.add(op="transpose", inputs=[1], attrs={"dim0": pb.AttrValue(i=0),
                                                   "dim1": pb.AttrValue(i=5)}, outputs=[50])
    for _ in range(2):
        assert call("RunOps", bad, pb.RunOpsResponse).error.kind == "IndexError"
    for _ in range(2):
        _, c, o = raw_session(address)
        c("CloseSession", pb.CloseSessionRequest(session_id=o.session_id),
          pb.CloseSessionResponse)
    with tensord.connect(address):  # an upload of 4096 bytes and their download
        t = tensord.tensor(np.arange(1024, dtype=np.float32))
        assert t.cpu().numpy()[-1] == 1023

    text = scrape(metrics_url)
    secret = opened.session_id.rsplit("/", 1)[1]
    assert secret not in text and opened.route not in text

    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: tensord\n    static_configs:\n"
        f"      - targets: ['{metrics_url.split('/')[2]}']\n")
    port = free_port()
    prom = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))
    try:
        def query(expr):
            url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
            with urllib.request.urlopen(url, timeout=5) as reply:
                body = json.load(reply)
            assert body["status"] == "success", body
            return {json.dumps(r["metric"], sort_keys=True): float(r["value"][1])
                    for r in body["data"]["result"]}

        deadline = time.monotonic() + 30
        while True:
            try:
                up = query('up{job="tensord"}')
                if up and list(up.values())[0] == 1:
                    break
            except (OSError, AssertionError):
                pass
            assert time.monotonic() < deadline, (tmp_path / "prometheus.log").read_text()
            time.sleep(0.3)

        def one(expr):
            values = query(expr)
            assert len(values) == 1, (expr, values)
            return list(values.values())[0]

        assert one('tensord_ops_total{op="add"}') >= 5
        assert one('tensord_ops_total{op="arange"}') >= 1
        # IndexError is OUT_OF_RANGE on the wire.
        assert one('tensord_op_errors_total{op="transpose",code="OUT_OF_RANGE"}') >= 2
        assert one('tensord_sessions') == 1  # the raw one (the client's closed on leaving `with`)
        assert one('tensord_sessions_total{event="opened"}') >= 4
        assert one('tensord_sessions_total{event="closed"}') >= 2
        assert one('tensord_rpc_duration_seconds_count{method="run_ops"}') >= 3
        assert one('tensord_rpc_duration_seconds_bucket{method="run_ops",le="+Inf"}') >= 3
        assert one('tensord_transfer_bytes_total{direction="upload"}') >= 4096
        assert one('tensord_transfer_bytes_total{direction="download"}') >= 4096
        assert one('tensord_tensor_bytes{device="cpu"}') >= 4096
        assert one('tensord_tensors') >= 6
        assert one('tensord_session_limit') > 0
        # The process collector's standard names (load tests read the server's CPU and RSS).
        assert one('process_resident_memory_bytes') > 8 << 20
        assert one('process_cpu_seconds_total') > 0
        assert one('process_threads') >= 2 and one('process_open_fds') >= 3
    finally:
        prom.terminate()
        prom.wait(timeout=20)
        channel.close()


def health_check(address, service=""):
    """grpc.health.v1.Health/Check by hand (HealthCheckRequest: field 1, the service name);
    returns the status number (1 SERVING, 2 NOT_SERVING) or the grpc.RpcError's code."""
    request = b"\x0a" + bytes([len(service)]) + service.encode() if service else b""
    with grpc.insecure_channel(address) as channel:
        try:
            reply = channel.unary_unary("/grpc.health.v1.Health/Check")(request, timeout=5)
        except grpc.RpcError as e:
            return e.code()
    return reply[1] if reply[:1] == b"\x08" else 0


def test_the_health_port_serves_health_alone_and_goes_not_serving_on_drain(tmp_path):
    # A drain long enough to look at: a call that waits (a Synchronize behind a long kernel)
    # keeps the server draining while the health port answers NOT_SERVING.
    proc, address = tensord_process.start("--health-listen=127.0.0.1:0", "--drain-timeout=60s",
                                          "--auth-token-file=" + str(_token(tmp_path)))
    health = re.search(r"health on (\S+)", proc.stdout.readline()).group(1)
    try:
        assert health_check(health) == 1
        # Tokenless and plaintext, and nothing but health there: the API and reflection are not.
        with grpc.insecure_channel(health) as channel:
            for method in ("/tensord.v1.Tensord/GetVersion",
                           "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"):
                with pytest.raises(grpc.RpcError) as e:
                    if "Reflection" in method:
                        list(channel.stream_stream(method)(iter([b""]), timeout=5))
                    else:
                        channel.unary_unary(method)(b"", timeout=5)
                assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED, method
        # The main port wants the token.
        with grpc.insecure_channel(address) as channel:
            with pytest.raises(grpc.RpcError) as e:
                channel.unary_unary("/tensord.v1.Tensord/GetVersion")(b"", timeout=5)
            assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        # Drain: a long call in flight, SIGTERM, and the health port says NOT_SERVING while the
        # call finishes.
        with tensord.connect(address, token="secret-token") as s:
            x = tensord.ones(2000, 2000)  # 320 GFLOP: seconds of products on two cores
            for _ in range(20):
                x = x @ x / 2000
            s.flush()  # the batch is sent; the server runs it
            # One call in flight until the products are done: a drain lets it finish (new calls
            # are refused once it starts).
            result = []
            reader = threading.Thread(target=lambda: result.append(s.synchronize()))
            reader.start()
            time.sleep(0.3)
            proc.terminate()
            deadline = time.monotonic() + 3
            while health_check(health) != 2:
                assert time.monotonic() < deadline, "the health port never said NOT_SERVING"
                time.sleep(0.02)
            reader.join(timeout=20)
            assert len(result) == 1  # the call in flight finished within the drain
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _token(tmp_path):
    path = tmp_path / "token"
    path.write_text("secret-token\n")
    return path
