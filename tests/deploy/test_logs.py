"""The server's log as an operator reads it (--log-format=json): one JSON object per line for
sessions opened and closed (with the peer and byte totals), every error a client receives under
the id the client's exception carries, slow calls and the drain; never a session's secret.
"""
import json
import os
import re
import subprocess
import sys
import time

import grpc
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import tensord  # noqa: E402
from tensord.v1 import tensord_pb2 as pb  # noqa: E402
import tensord_process  # noqa: E402


def read_log(path):
    lines = [line for line in open(path).read().splitlines() if line.startswith("{")]
    return [json.loads(line) for line in lines]


def test_every_error_has_an_id_in_the_log_and_no_secret_is_logged(tmp_path):
    log_path = tmp_path / "tensord.log"
    with open(log_path, "w") as log:
        proc, address = tensord_process.start("--log-format=json", "--replica=logs-0",
                                              "--slow-call-seconds=0.1", stderr=log)
    try:
        with tensord.connect(address) as s:
            sid = s.id
            route = s.route
            x = tensord.tensor(np.arange(12, dtype=np.float32))  # an upload of 48 bytes
            assert x.reshape(3, 4).sum().item() == 66.0           # a download
            # A slow unary call: a Synchronize waits for large products (about 1 s of work).
            y = tensord.ones(1500, 1500)
            for _ in range(6):
                y = y @ y / 1500
            s.synchronize()
            assert y[0, 0].item() == 1.0
            # A kernel's error (an index out of range, found as the op runs), raised when the
            # result is read: the exception carries the id of the log line.
            idx = tensord.tensor(np.array([0, 7, 99], dtype=np.int64))
            with pytest.raises(IndexError) as kernel_error:
                x.index_select(0, idx).tolist()
        with grpc.insecure_channel(address) as channel:
            def call(method, request, response_type, route):
                return channel.unary_unary(
                    "/tensord.v1.Tensord/" + method, request_serializer=type(request).SerializeToString,
                    response_deserializer=response_type.FromString)(
                        request, metadata=(("tensord-route", route),) if route else None)
            # An op the server refuses when it plans it (a batch sent by a raw client).
            other = call("OpenSession", pb.OpenSessionRequest(), pb.OpenSessionResponse, None)
            run = pb.RunOpsRequest(session_id=other.session_id)
            run.ops.add(op="arange", attrs={"end": pb.AttrValue(f=4.0)}, outputs=[1])
            run.ops.add(op="transpose", inputs=[1], attrs={"dim0": pb.AttrValue(i=0),
                                                           "dim1": pb.AttrValue(i=3)}, outputs=[2])
            op_error = call("RunOps", run, pb.RunOpsResponse, other.route).error
            assert op_error.kind == "IndexError" and op_error.op_index == 1
            # An RPC error: a session id that is not (no longer) open.
            with pytest.raises(grpc.RpcError) as rpc_error:
                call("RenewLease", pb.RenewLeaseRequest(session_id=sid), pb.RenewLeaseResponse,
                     route)
        rpc_id = dict(rpc_error.value.trailing_metadata())["tensord-error-id"]
    finally:
        proc.terminate()
        assert proc.wait(timeout=20) == 0

    text = open(log_path).read()
    secret = sid.rsplit("/", 1)[1]
    assert secret not in text
    events = read_log(log_path)
    by_event = {}
    for e in events:
        assert {"time", "level", "event"} <= set(e), e
        by_event.setdefault(e["event"], []).append(e)

    assert by_event["serving"][0]["replica"] == "logs-0"
    opened = [e for e in by_event["session_opened"] if e["session"] == route]
    assert len(opened) == 1 and opened[0]["peer"].startswith(("ipv4:127.0.0.1:", "ipv6:"))
    assert opened[0]["client"].startswith("tensord-python ")
    closed = [e for e in by_event["session_closed"] if e["session"] == route]
    assert len(closed) == 1
    assert closed[0]["uploaded_bytes"] >= 48 + 24 and closed[0]["downloaded_bytes"] >= 4
    assert closed[0]["ops"] >= 5

    # The kernel's error: its id is on the exception and on exactly one log line.
    assert re.fullmatch(r"[0-9a-f]{12}", kernel_error.value.error_id or "")
    lines = [e for e in events if e.get("error_id") == kernel_error.value.error_id]
    assert len(lines) == 1, lines
    assert lines[0]["event"] == "rpc_error" and lines[0]["method"] == "download"
    assert lines[0]["session"] == route and lines[0]["kind"] == "IndexError"
    assert "index_select" in lines[0]["message"]

    # The refused op: its id (OpError.error_id) on one line, with the op and the code.
    lines = [e for e in events if e.get("error_id") == op_error.error_id]
    assert len(lines) == 1 and lines[0]["event"] == "op_error", lines
    assert lines[0]["op"] == "transpose" and lines[0]["code"] == "OUT_OF_RANGE"
    assert lines[0]["session"] == other.route and lines[0]["op_index"] == 1
    assert other.session_id.rsplit("/", 1)[1] not in text

    # The RPC error likewise.
    lines = [e for e in events if e.get("error_id") == rpc_id]
    assert len(lines) == 1 and lines[0]["event"] == "rpc_error", lines
    assert lines[0]["method"] == "renew_lease" and lines[0]["code"] == "NOT_FOUND"
    assert lines[0]["session"] == route

    slow = by_event.get("slow_call", [])
    assert any(e["method"] == "synchronize" and e["seconds"] >= 0.1 for e in slow), slow
    assert by_event["drain_started"] and by_event["drain_finished"][0]["calls_cut"] is False


def run_one_session(tmp_path, *flags):
    log_path = tmp_path / "tensord.log"
    with open(log_path, "w") as log:
        proc, address = tensord_process.start(*flags, stderr=log)
    try:
        with tensord.connect(address) as s:
            assert tensord.arange(4.0).sum().item() == 6.0
            route = s.route
    finally:
        proc.terminate()
        assert proc.wait(timeout=20) == 0
    return open(log_path).read(), route


def test_the_text_format_and_levels(tmp_path):
    text, route = run_one_session(tmp_path)  # the defaults: text, info
    assert re.search(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info session_opened "
                     rf"session={re.escape(route)} peer=\S+", text, re.M), text
    text, route = run_one_session(tmp_path, "--log-level=warning")
    assert "session_opened" not in text and route  # info is below the level
    binary = os.environ.get("TENSORD_BINARY", os.path.join(ROOT, "build", "tensord"))
    for flag in ("--log-level=loud", "--log-format=xml"):
        bad = subprocess.run([binary, "--listen=127.0.0.1:0", flag], capture_output=True,
                             text=True, timeout=20)
        assert bad.returncode != 0 and flag.split("=")[1] in bad.stderr
