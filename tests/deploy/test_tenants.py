"""Tenants: a token file with one token per tenant (--auth-token-file), each session bound to
the tenant that opened it, and per-tenant limits (--max-tenant-sessions, --max-tenant-bytes).
"""
import os
import subprocess
import sys

import grpc
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import tensord  # noqa: E402
from tensord.v1 import tensord_pb2 as pb  # noqa: E402
import tensord_process  # noqa: E402

BINARY = os.environ.get("TENSORD_BINARY", os.path.join(ROOT, "build", "tensord"))
TOKENS = {"alice": "alice-token-5f1c9a", "bob": "bob-token-77e0d2"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = tmp_path_factory.mktemp("tenants") / "tokens"
    path.write_text("# tenant token\n" + "".join(f"{t} {k}\n" for t, k in TOKENS.items()) +
                    "\n  carol\tcarol-token-0000  \n")
    proc, address = tensord_process.start(f"--auth-token-file={path}",
                                          "--max-tenant-sessions=2",
                                          f"--max-tenant-bytes={1 << 20}")
    yield address
    proc.terminate()
    assert proc.wait(timeout=20) == 0


def raw(address, token, method, request, response_type, route=None):
    metadata = [("authorization", "Bearer " + token)] if token else []
    if route:
        metadata.append(("tensord-route", route))
    with grpc.insecure_channel(address) as channel:
        return channel.unary_unary("/tensord.v1.Tensord/" + method,
                                   request_serializer=type(request).SerializeToString,
                                   response_deserializer=response_type.FromString)(
                                       request, metadata=metadata, timeout=10)


def test_each_tenant_sees_only_its_own_sessions(server):
    with tensord.connect(server, token=TOKENS["alice"]) as alice:
        x = tensord.tensor(np.arange(6, dtype=np.float32))
        assert x.sum().item() == 15.0
        # Bob holds alice's whole session id: for him it does not exist, with the very answer
        # an unknown id gets.
        for method, request, response in [
                ("RenewLease", pb.RenewLeaseRequest(session_id=alice.id), pb.RenewLeaseResponse),
                ("Describe", pb.DescribeRequest(session_id=alice.id, ids=[1]), pb.DescribeResponse),
                ("CloseSession", pb.CloseSessionRequest(session_id=alice.id),
                 pb.CloseSessionResponse)]:
            with pytest.raises(grpc.RpcError) as by_bob:
                raw(server, TOKENS["bob"], method, request, response, alice.route)
            assert by_bob.value.code() == grpc.StatusCode.NOT_FOUND, method
            unknown_id = alice.id[:-1] + ("0" if alice.id[-1] != "0" else "1")
            with pytest.raises(grpc.RpcError) as unknown:
                raw(server, TOKENS["alice"], method,
                    type(request)(session_id=unknown_id), response, alice.route)
            assert by_bob.value.details() == unknown.value.details()
        with pytest.raises(grpc.RpcError) as by_bob:  # a download of alice's tensor
            with grpc.insecure_channel(server) as channel:
                list(channel.unary_stream("/tensord.v1.Tensord/Download",
                                          request_serializer=pb.DownloadRequest.SerializeToString)(
                    pb.DownloadRequest(session_id=alice.id, id=1),
                    metadata=[("authorization", "Bearer " + TOKENS["bob"])], timeout=10))
        assert by_bob.value.code() == grpc.StatusCode.NOT_FOUND
        # Alice's session is untouched, and works.
        assert (x + 1).tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    # A tenant from a line with only spaces and a tab around it works too.
    with tensord.connect(server, token="carol-token-0000"):
        assert tensord.arange(3.0).sum().item() == 3.0


def test_tokens_must_match_exactly(server):
    for token in ["", TOKENS["alice"][:-1], TOKENS["alice"] + "0", TOKENS["alice"].upper(),
                  "alice " + TOKENS["alice"]]:
        with pytest.raises(grpc.RpcError) as e:
            raw(server, token, "GetVersion", pb.GetVersionRequest(), pb.GetVersionResponse)
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED, token


def test_limits_per_tenant(server):
    with tensord.connect(server, token=TOKENS["alice"]), \
            tensord.connect(server, token=TOKENS["alice"]):
        with pytest.raises(RuntimeError) as e:  # a third session of alice's
            tensord.connect(server, token=TOKENS["alice"])
        assert e.value.grpc_code == "RESOURCE_EXHAUSTED" and "alice" in str(e.value)
        with tensord.connect(server, token=TOKENS["bob"]):  # bob's own count
            assert tensord.ones(3).sum().item() == 3.0
    # Bytes: 1 MiB per tenant, whatever the session.
    with tensord.connect(server, token=TOKENS["bob"]) as s:
        keep = tensord.zeros(1 << 17)  # 512 KiB
        s.synchronize()
        with pytest.raises(tensord.OutOfMemoryError) as e:
            with tensord.connect(server, token=TOKENS["bob"]) as s2:
                big = tensord.zeros(1 << 17)  # another 512 KiB: over bob's 1 MiB with metadata
                s2.synchronize()
                del big
        assert e.value.grpc_code == "RESOURCE_EXHAUSTED" and "tenant 'bob'" in str(e.value)
        del keep
    with tensord.connect(server, token=TOKENS["alice"]) as s:  # alice is not bob
        t = tensord.zeros(1 << 17)
        s.synchronize()
        assert t.sum().item() == 0.0


@pytest.mark.parametrize("contents,needle", [
    ("alice tok-AAAA1\nbob tok-AAAA1\n", "line 2"),  # one token, two tenants
    ("alice tok-AAAA1\nalice tok-BBBB2\n", "tenant 'alice' repeats"),
    ("alice tok-AAAA1 tok-BBBB2\n", "line 1"),
    ("# only a comment\n\n", "no token"),
    ("al/ice tok-AAAA1\n", "line 1"),
])
def test_a_bad_token_file_stops_the_server_naming_the_line_not_the_token(tmp_path, contents,
                                                                        needle):
    path = tmp_path / "tokens"
    path.write_text(contents)
    run = subprocess.run([BINARY, "--listen=127.0.0.1:0", f"--auth-token-file={path}"],
                         capture_output=True, text=True, timeout=20)
    assert run.returncode != 0
    assert needle in run.stderr, run.stderr
    assert "tok-AAAA1" not in run.stderr and "tok-BBBB2" not in run.stderr


def test_reflection_is_behind_the_token(server):
    """Server reflection lists the API only to callers that may call it."""
    list_services = b"\x3a\x01*"  # ServerReflectionRequest{list_services: "*"}
    method = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
    with grpc.insecure_channel(server) as channel:
        info = channel.stream_stream(method)
        with pytest.raises(grpc.RpcError) as e:
            list(info(iter([list_services]), timeout=10))
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        replies = list(info(iter([list_services]), timeout=10,
                            metadata=[("authorization", "Bearer " + TOKENS["bob"])]))
        assert len(replies) == 1 and b"tensord.v1.Tensord" in replies[0]
        # A file by symbol, with its dependencies: tensord.v1's descriptor names its messages.
        symbol = b"tensord.v1.Tensord"
        by_symbol = b"\x22" + bytes([len(symbol)]) + symbol
        replies = list(info(iter([by_symbol]), timeout=10,
                            metadata=[("authorization", "Bearer " + TOKENS["bob"])]))
        assert b"tensord/v1/tensord.proto" in replies[0] and b"OpenSessionRequest" in replies[0]
