"""TLS, mutual TLS and bearer tokens end to end, with certificates the test makes with the
`openssl` command: a CA, a server certificate for 127.0.0.1 and localhost, a client certificate
from that CA and one from another CA.

Three servers: TLS alone; TLS with a token and a plaintext health port; mutual TLS. Each is
reached with the Python client (tensord.connect's TLS parameters) and with raw gRPC calls, and
every way in that must be refused is.
"""
import gc
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

import grpc
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import tensord  # noqa: E402
from tensord.v1 import tensord_pb2 as pb  # noqa: E402
import tensord_process  # noqa: E402

OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(OPENSSL is None,
                                reason="the openssl command is needed to make certificates")

TOKEN = "tls-test-token-6b1f"
# Every server of this module is killed this long after the first starts: a call that would
# hang fails instead, and the suite stays bounded.
WATCHDOG_SECONDS = 120
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
REFLECTION = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
SERVING = b"\x08\x01"  # HealthCheckResponse{status: SERVING}
LIST_SERVICES = b"\x3a\x00"  # ServerReflectionRequest{list_services: ""}


# ---- certificates ---------------------------------------------------------------------------

def openssl(*args, cwd):
    subprocess.run([OPENSSL, *args], cwd=cwd, check=True, timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
            "-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)


def make_leaf(d, name, ca, serial, extensions):
    with open(os.path.join(d, f"{name}.ext"), "w") as f:
        f.write(extensions)
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-set_serial", str(serial), "-days", "2",
            "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=d)


class Pki:
    def __init__(self, d):
        self.dir = d

    def path(self, name):
        return os.path.join(self.dir, name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pki"))
    make_ca(d, "ca")
    make_ca(d, "other-ca")
    make_leaf(d, "server", "ca", 2, "basicConstraints=CA:FALSE\n"
              "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    client = "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"
    make_leaf(d, "client", "ca", 3, client)
    make_leaf(d, "stranger", "other-ca", 4, client)
    with open(os.path.join(d, "token"), "w") as f:
        f.write(TOKEN + "\n")
    return Pki(d)


CHANNELS = []  # the raw channels a test made, closed when it ends


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    """Tests set $TENSORD_TLS_* themselves: none comes from outside. Raw channels are closed
    at the end of their test (a failed test's traceback would keep them connecting, and a
    server's drain waiting for them)."""
    for name in ("TENSORD_TLS_CA", "TENSORD_TLS_CERT", "TENSORD_TLS_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield
    while CHANNELS:
        CHANNELS.pop().close()


# ---- servers --------------------------------------------------------------------------------

class Servers:
    """The module's servers: killed by the watchdog if the suite hangs, stopped at its end."""

    def __init__(self):
        self.procs = []
        self.timer = threading.Timer(WATCHDOG_SECONDS, self.kill)
        self.timer.daemon = True
        self.timer.start()

    def start(self, *flags, health=False):
        if health:
            flags += ("--health-listen=127.0.0.1:0",)
        proc, address = tensord_process.start(*flags)
        self.procs.append(proc)
        health_address = None
        if health:
            line = proc.stdout.readline()
            m = re.search(r"tensord: health on (\S+)", line)
            assert m, line
            health_address = m.group(1)
        return address, health_address

    def kill(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()

    def stop(self):
        self.timer.cancel()
        codes = []
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                codes.append(proc.wait(timeout=20))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                codes.append("hung")
        return codes


@pytest.fixture(scope="module")
def servers():
    s = Servers()
    yield s
    assert s.stop() == [0] * len(s.procs)


def tls_flags(pki):
    return (f"--tls-cert={pki.path('server.pem')}", f"--tls-key={pki.path('server.key')}")


@pytest.fixture(scope="module")
def tls_server(servers, pki):
    return servers.start(*tls_flags(pki))[0]


@pytest.fixture(scope="module")
def token_server(servers, pki):
    """(address, health address): TLS and a token on the main port, a plaintext health port."""
    return servers.start(*tls_flags(pki), f"--auth-token-file={pki.path('token')}", health=True)


@pytest.fixture(scope="module")
def mtls_server(servers, pki):
    return servers.start(*tls_flags(pki), f"--tls-client-ca={pki.path('ca.pem')}")[0]


# ---- raw gRPC -------------------------------------------------------------------------------

def plain(address):
    CHANNELS.append(grpc.insecure_channel(address))
    return CHANNELS[-1]


def secure(address, pki, root="ca.pem", cert=None, key=None):
    creds = grpc.ssl_channel_credentials(
        root_certificates=pki.read(root) if root else None,
        certificate_chain=pki.read(cert) if cert else None,
        private_key=pki.read(key) if key else None)
    CHANNELS.append(grpc.secure_channel(address, creds))
    return CHANNELS[-1]


def health_check(channel, metadata=None):
    """The raw bytes of a Health/Check reply."""
    return channel.unary_unary(HEALTH_CHECK)(b"", metadata=metadata, timeout=10)


def list_services(channel, metadata=None):
    """The raw bytes of the replies to a reflection list_services request."""
    call = channel.stream_stream(REFLECTION)
    return b"".join(call(iter([LIST_SERVICES]), metadata=metadata, timeout=10))


def get_version(channel, metadata=None):
    return channel.unary_unary(
        "/tensord.v1.Tensord/GetVersion", request_serializer=pb.GetVersionRequest.SerializeToString,
        response_deserializer=pb.GetVersionResponse.FromString)(
            pb.GetVersionRequest(), metadata=metadata, timeout=10)


def rpc_code(fn, *args, **kwargs):
    with pytest.raises(grpc.RpcError) as e:
        fn(*args, **kwargs)
    return e.value.code()


class ClientError:
    def __init__(self, error):
        self.grpc_code = error.grpc_code
        self.text = str(error)

    def __str__(self):
        return self.text


def client_error(**kwargs):
    """The error tensord.connect raises (its code and text: the session it failed to open, and
    that session's channel, are collected at once, not kept by the traceback)."""
    with pytest.raises(RuntimeError) as e:
        tensord.connect(**kwargs).close()
    error = ClientError(e.value)
    del e
    gc.collect()
    return error


def compute(s):
    """A few ops on the server, checked against numpy."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 24)).astype(np.float32)
    b = rng.standard_normal((24, 8)).astype(np.float32)
    ta, tb = tensord.from_numpy(a, session=s), tensord.from_numpy(b, session=s)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((ta.t() * 2 + 1).exp().numpy(), np.exp(a.T * 2 + 1), rtol=1e-5)
    np.testing.assert_allclose(ta.sum(dim=1).numpy(), a.sum(axis=1), rtol=1e-5, atol=1e-5)
    assert tensord.arange(24, session=s).view(2, 3, 4).permute(2, 0, 1).stride() == (1, 12, 4)


# ---- TLS ------------------------------------------------------------------------------------

def test_a_session_over_tls_computes_and_moves_4_mib_each_way(tls_server, pki):
    with tensord.connect(tls_server, root_certificates=pki.path("ca.pem")) as s:
        compute(s)
        big = np.random.default_rng(7).standard_normal(1 << 20).astype(np.float32)  # 4 MiB
        t = tensord.from_numpy(big, session=s)                                       # upload
        back = (t + 1).numpy()                                                       # download
        assert back.nbytes == 4 << 20
        np.testing.assert_array_equal(back, big + np.float32(1))


def test_pem_bytes_environment_and_server_name(tls_server, pki, monkeypatch):
    # The CA as bytes rather than a path.
    with tensord.connect(tls_server, root_certificates=pki.read("ca.pem")) as s:
        assert tensord.ones(3, session=s).sum().item() == 3
    # The CA from $TENSORD_TLS_CA: TLS with no parameter at all.
    monkeypatch.setenv("TENSORD_TLS_CA", pki.path("ca.pem"))
    with tensord.connect(tls_server) as s:
        assert tensord.ones(4, session=s).sum().item() == 4
    # The certificate's other name (DNS:localhost) while dialling 127.0.0.1.
    with tensord.connect(tls_server, server_name="localhost") as s:
        assert tensord.ones(5, session=s).sum().item() == 5
    # A name the certificate does not carry.
    assert client_error(address=tls_server, server_name="elsewhere.invalid").grpc_code == \
        "UNAVAILABLE"
    # tls=False: plaintext despite the environment, which the TLS port refuses.
    assert client_error(address=tls_server, tls=False).grpc_code == "UNAVAILABLE"


def test_a_plaintext_client_is_refused_by_the_tls_port(tls_server):
    assert rpc_code(get_version, plain(tls_server)) == \
        grpc.StatusCode.UNAVAILABLE
    assert rpc_code(health_check, plain(tls_server)) == \
        grpc.StatusCode.UNAVAILABLE
    error = client_error(address=tls_server)
    assert error.grpc_code == "UNAVAILABLE" and "tensord server unavailable" in str(error)


def test_a_client_that_does_not_trust_the_ca_is_refused(tls_server, pki):
    # It trusts another CA.
    assert rpc_code(get_version, secure(tls_server, pki, root="other-ca.pem")) == \
        grpc.StatusCode.UNAVAILABLE
    assert client_error(address=tls_server,
                        root_certificates=pki.path("other-ca.pem")).grpc_code == "UNAVAILABLE"
    # It trusts the system's roots only.
    assert client_error(address=tls_server, tls=True).grpc_code == "UNAVAILABLE"
    # And the same channel trusting the right CA works.
    assert get_version(secure(tls_server, pki)).server_version


# ---- TLS and a token ------------------------------------------------------------------------

def test_the_token_is_required_over_tls(token_server, pki):
    address, _ = token_server
    error = client_error(address=address, root_certificates=pki.path("ca.pem"))
    assert error.grpc_code == "UNAUTHENTICATED"
    assert "authorization: Bearer" in str(error)
    error = client_error(address=address, root_certificates=pki.path("ca.pem"), token="wrong")
    assert error.grpc_code == "UNAUTHENTICATED"
    with tensord.connect(address, token=TOKEN, root_certificates=pki.path("ca.pem")) as s:
        compute(s)
    channel = secure(address, pki)
    assert rpc_code(get_version, channel) == grpc.StatusCode.UNAUTHENTICATED
    assert rpc_code(get_version, channel, (("authorization", "Bearer wrong"),)) == \
        grpc.StatusCode.UNAUTHENTICATED
    assert rpc_code(get_version, channel, (("authorization", TOKEN),)) == \
        grpc.StatusCode.UNAUTHENTICATED  # no "Bearer "
    assert get_version(channel, (("authorization", "Bearer " + TOKEN),)).server_version


def test_health_answers_without_the_token_and_reflection_needs_it(token_server, pki):
    """The main port's grpc.health.v1 answers without a token (standard health checkers carry
    none); server reflection is behind the token, as the API is."""
    address, _ = token_server
    channel = secure(address, pki)
    assert health_check(channel) == SERVING
    assert health_check(channel, (("authorization", "Bearer wrong"),)) == SERVING
    assert rpc_code(list_services, channel) == grpc.StatusCode.UNAUTHENTICATED
    assert rpc_code(list_services, channel, (("authorization", "Bearer wrong"),)) == \
        grpc.StatusCode.UNAUTHENTICATED
    services = list_services(channel, (("authorization", "Bearer " + TOKEN),))
    assert b"tensord.v1.Tensord" in services and b"grpc.health.v1.Health" in services
    # Health over plaintext on the TLS port is still refused: the transport comes first.
    assert rpc_code(health_check, plain(address)) == grpc.StatusCode.UNAVAILABLE


def test_the_health_port_stays_plaintext_and_tokenless(token_server, pki):
    _, health = token_server
    channel = plain(health)
    assert health_check(channel) == SERVING
    # Only health there: no reflection, no tensord service, and no TLS.
    assert rpc_code(list_services, channel) == grpc.StatusCode.UNIMPLEMENTED
    assert rpc_code(get_version, channel, (("authorization", "Bearer " + TOKEN),)) == \
        grpc.StatusCode.UNIMPLEMENTED
    assert rpc_code(health_check, secure(health, pki)) == grpc.StatusCode.UNAVAILABLE


# ---- mutual TLS -----------------------------------------------------------------------------

def test_mtls_accepts_a_certificate_from_its_ca(mtls_server, pki, monkeypatch):
    with tensord.connect(mtls_server, root_certificates=pki.path("ca.pem"),
                         certificate_chain=pki.path("client.pem"),
                         private_key=pki.path("client.key")) as s:
        compute(s)
    assert get_version(secure(mtls_server, pki, cert="client.pem", key="client.key")) \
        .server_version
    # All three from the environment.
    monkeypatch.setenv("TENSORD_TLS_CA", pki.path("ca.pem"))
    monkeypatch.setenv("TENSORD_TLS_CERT", pki.path("client.pem"))
    monkeypatch.setenv("TENSORD_TLS_KEY", pki.path("client.key"))
    with tensord.connect(mtls_server) as s:
        assert tensord.ones(6, session=s).sum().item() == 6


def test_mtls_refuses_a_client_without_a_certificate(mtls_server, pki):
    assert rpc_code(get_version, secure(mtls_server, pki)) == grpc.StatusCode.UNAVAILABLE
    assert rpc_code(health_check, secure(mtls_server, pki)) == grpc.StatusCode.UNAVAILABLE
    assert client_error(address=mtls_server,
                        root_certificates=pki.path("ca.pem")).grpc_code == "UNAVAILABLE"


def test_mtls_refuses_a_certificate_from_another_ca(mtls_server, pki):
    channel = secure(mtls_server, pki, cert="stranger.pem", key="stranger.key")
    assert rpc_code(get_version, channel) == grpc.StatusCode.UNAVAILABLE
    assert client_error(address=mtls_server, root_certificates=pki.path("ca.pem"),
                        certificate_chain=pki.read("stranger.pem"),
                        private_key=pki.read("stranger.key")).grpc_code == "UNAVAILABLE"


# ---- the client's TLS parameters, without a server ------------------------------------------

def test_contradictory_tls_parameters_are_refused(pki):
    address = "127.0.0.1:1"
    with pytest.raises(ValueError, match="both certificate_chain and private_key"):
        tensord.connect(address, certificate_chain=pki.path("client.pem"))
    with pytest.raises(ValueError, match="server_name applies to TLS only"):
        tensord.connect(address, server_name="localhost")
    with pytest.raises(ValueError, match="tls=False"):
        tensord.connect(address, tls=False, root_certificates=pki.path("ca.pem"))
    with pytest.raises(ValueError, match="give them or a channel"):
        tensord.Session(address, channel=plain(address), tls=True)
    with pytest.raises(FileNotFoundError):
        tensord.connect(address, root_certificates=pki.path("missing.pem"))
