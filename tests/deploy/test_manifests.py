"""Checks deploy/: the Compose file and the Kubernetes manifests parse, agree with each other and
with tensord's flags (ports, probes, grace periods, secrets, selectors), and the router's nginx.conf
passes `nginx -t` and routes calls as documented, through a real nginx with stand-in replicas.

Run with Debian's Python (python3-yaml; the checks that need python3-grpcio, nginx, kubectl or
docker-compose are skipped without them):

    python3 -m pytest -q tests/deploy/test_manifests.py
"""
import pathlib
import re
import shutil
import subprocess
from concurrent import futures

import pytest
import yaml

from routing_util import (NGINX, PLACEHOLDERS, DnsStub, Nginx, fill_placeholders, free_port,
                          loopback_conf)

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE = DEPLOY / "compose.yaml"
DEFAULT_DRAIN_SECONDS = 10  # tensord's --drain-timeout default


# ---------------------------------------------------------------------------------------------
# Helpers


def load_docs(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def k8s_files():
    return sorted(p for p in K8S.iterdir() if p.suffix in (".yaml", ".yml"))


def k8s_docs(include_examples=False):
    """Every Kubernetes object under deploy/k8s but the kustomization, as (file name, doc)."""
    out = []
    for path in k8s_files():
        if path.name == "kustomization.yaml":
            continue
        if path.name.endswith(".example.yaml") and not include_examples:
            continue
        out += [(path.name, d) for d in load_docs(path)]
    return out


def one(kind, name, include_examples=False):
    found = [d for _, d in k8s_docs(include_examples)
             if d.get("kind") == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def of_kind(kind):
    return [d for _, d in k8s_docs() if d.get("kind") == kind]


def parse_duration(text):
    """Seconds in a Go/Abseil duration ("20s", "1m30s", "500ms") or a bare number of seconds."""
    text = str(text).strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    units = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)", text)
    assert parts and "".join(n + u for n, u in parts) == text, f"not a duration: {text!r}"
    return sum(float(n) * units[u] for n, u in parts)


def parse_bytes(text):
    """Bytes in a Kubernetes quantity ("24Gi") or a Compose size ("8G", "512m")."""
    text = str(text).strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KkMmGgTt]i?)?[Bb]?", text)
    assert m, f"not a size: {text!r}"
    number, unit = float(m.group(1)), (m.group(2) or "").lower()
    scale = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
    if unit.endswith("i"):  # Kubernetes: binary with i; Compose's letters are binary already
        unit = unit[:-1]
    return number * scale[unit]


def flag(args, name, default=None):
    """The value of --name=VALUE in an argument list (dashes or underscores; the last one wins)."""
    value = default
    for a in args:
        m = re.fullmatch(r"--([\w-]+)=(.*)", a)
        if m and m.group(1).replace("_", "-") == name:
            value = m.group(2)
    return value


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def drain_seconds(args):
    return parse_duration(flag(args, "drain-timeout", f"{DEFAULT_DRAIN_SECONDS}s"))


def statefulset():
    return one("StatefulSet", "tensord")


def tensord_container(pod_spec):
    containers = [c for c in pod_spec["containers"] if c["name"] == "tensord"]
    assert len(containers) == 1, "the pod has one container named tensord"
    return containers[0]


def server_args(container):
    """The container's tensord flags: its command must run tensord itself (so that its args are all
    the flags, not additions to the image's entrypoint)."""
    assert container.get("command") == ["tensord"], container.get("command")
    return container["args"]


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def router_conf():
    return one("ConfigMap", "tensord-router")["data"]["nginx.conf"]


def defined_flags(sources):
    """Flag names (with dashes) defined by ABSL_FLAG in the given source files."""
    names = set()
    for src in sources:
        text = src.read_text(encoding="utf-8")
        names |= {n.replace("_", "-") for n in re.findall(r"ABSL_FLAG\(\s*[\w:<>]+\s*,\s*(\w+)", text)}
    return names


# ---------------------------------------------------------------------------------------------
# Every file


def test_every_file_under_deploy_parses():
    files = sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yaml", ".yml"))
    assert COMPOSE in files and (K8S / "kustomization.yaml") in files
    for path in files:
        assert load_docs(path), f"{path.relative_to(ROOT)} holds no document"


def test_every_k8s_doc_is_named_and_namespace_agnostic():
    docs = k8s_docs(include_examples=True)
    assert docs
    for name, d in docs:
        for key in ("apiVersion", "kind", "metadata"):
            assert d.get(key), f"{name}: a document without {key}"
        assert d["metadata"].get("name"), f"{name}: a {d['kind']} without metadata.name"
        assert "namespace" not in d["metadata"], f"{name}: {d['metadata']['name']} names a namespace"


def test_kustomization_lists_every_manifest_but_the_example_secret():
    kustomization = load_docs(K8S / "kustomization.yaml")[0]
    listed = kustomization.get("resources", [])
    assert len(listed) == len(set(listed)), "a resource is listed twice"
    manifests = {p.name for p in k8s_files()} - {"kustomization.yaml"}
    examples = {n for n in manifests if n.endswith(".example.yaml")}
    assert "secret.example.yaml" in examples
    # The example Secret holds a placeholder token: `kubectl apply -k` must never deploy it.
    assert set(listed) == manifests - examples


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl")
def test_kustomize_builds():
    out = subprocess.run(["kubectl", "kustomize", str(K8S)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    built = {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(out.stdout) if d}
    assert built == {(d["kind"], d["metadata"]["name"]) for _, d in k8s_docs()}


def test_flags_are_tensords():
    """Every flag the manifests give tensord (or tensord-health) is one the binary defines: a
    misspelt flag stops the server at start-up."""
    probe = ROOT / "server" / "health_probe.cc"
    tensord_flags = defined_flags(p for p in (ROOT / "server").glob("*.cc") if p != probe)
    health_flags = defined_flags([probe])
    args = list(server_args(tensord_container(statefulset()["spec"]["template"]["spec"])))
    compose = load_docs(COMPOSE)[0]
    health_args = []
    for service in compose["services"].values():
        args += service["command"]
        health_args += service["healthcheck"]["test"][2:]
    used = {re.match(r"--([\w-]+)", a).group(1).replace("_", "-") for a in args}
    assert not used - tensord_flags, f"flags tensord does not define: {sorted(used - tensord_flags)}"
    used = {re.match(r"--([\w-]+)", a).group(1).replace("_", "-") for a in health_args}
    assert not used - health_flags, f"flags tensord-health does not define: {sorted(used - health_flags)}"


# ---------------------------------------------------------------------------------------------
# The StatefulSet and its Services


def test_statefulset_is_served_by_the_headless_service():
    spec = statefulset()["spec"]
    headless = one("Service", spec["serviceName"])
    assert headless["spec"].get("clusterIP") == "None"
    assert headless["spec"].get("publishNotReadyAddresses") is False
    assert spec["podManagementPolicy"] == "Parallel"
    assert spec["replicas"] >= 2


def test_selectors_match_pod_labels():
    sts = statefulset()
    server_labels = sts["spec"]["template"]["metadata"]["labels"]
    assert selects(sts["spec"]["selector"]["matchLabels"], server_labels)
    router = one("Deployment", "tensord-router")
    router_labels = router["spec"]["template"]["metadata"]["labels"]
    assert selects(router["spec"]["selector"]["matchLabels"], router_labels)
    for name in (sts["spec"]["serviceName"], "tensord-any"):
        selector = one("Service", name)["spec"]["selector"]
        assert selects(selector, server_labels), f"Service {name} misses the tensord pods"
        assert not selects(selector, router_labels), f"Service {name} selects the routers"
    selector = one("Service", "tensord")["spec"]["selector"]
    assert selects(selector, router_labels), "Service tensord misses the routers"
    assert not selects(selector, server_labels), "Service tensord bypasses the routers"
    pdbs = of_kind("PodDisruptionBudget")
    assert len(pdbs) == 1 and pdbs[0]["spec"]["maxUnavailable"] == 1
    assert selects(pdbs[0]["spec"]["selector"]["matchLabels"], server_labels)
    assert not selects(pdbs[0]["spec"]["selector"]["matchLabels"], router_labels)


def test_service_ports_reach_container_ports():
    pods = {
        "server": tensord_container(statefulset()["spec"]["template"]["spec"]),
        "router": one("Deployment", "tensord-router")["spec"]["template"]["spec"]["containers"][0],
    }
    for name, pod in (("tensord-pods", "server"), ("tensord-any", "server"), ("tensord", "router")):
        ports = one("Service", name)["spec"]["ports"]
        named = {p["name"]: p["containerPort"] for p in pods[pod]["ports"]}
        for p in ports:
            assert p["port"] == 50051, f"Service {name} is not on 50051"
            target = p.get("targetPort", p["port"])
            assert target in named or target in named.values(), f"Service {name}: no port {target}"
            if target in named:
                assert named[target] == 50051


def test_probes_are_grpc_on_the_health_port():
    container = tensord_container(statefulset()["spec"]["template"]["spec"])
    health = port_of(flag(server_args(container), "health-listen"))
    assert health != port_of(flag(server_args(container), "listen"))
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["grpc"]["port"] == health, probe
        assert set(container[probe]) & {"httpGet", "tcpSocket", "exec"} == set(), probe


def test_grace_period_outlasts_the_drain():
    pod = statefulset()["spec"]["template"]["spec"]
    args = server_args(tensord_container(pod))
    assert flag(args, "drain-timeout") is not None, "the drain is stated, not left to a default"
    assert pod["terminationGracePeriodSeconds"] > drain_seconds(args)


def test_one_gpu_per_pod_and_memory_above_the_server_limit():
    container = tensord_container(statefulset()["spec"]["template"]["spec"])
    resources = container["resources"]
    assert int(resources["limits"]["nvidia.com/gpu"]) == 1
    for part in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(resources[part]), part
    assert flag(server_args(container), "device") in ("auto", "cuda")
    server_bytes = int(flag(server_args(container), "max-server-bytes"))
    assert server_bytes < parse_bytes(resources["limits"]["memory"])


def test_pods_run_as_non_root_on_a_read_only_root():
    for workload in (statefulset(), one("Deployment", "tensord-router")):
        pod = workload["spec"]["template"]["spec"]
        name = workload["metadata"]["name"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        # The image's USER is a name, which the kubelet cannot check: the pod gives a number.
        assert int(pod["securityContext"]["runAsUser"]) > 0, name
        for c in pod["containers"]:
            sc = c["securityContext"]
            assert sc.get("runAsNonRoot", True) is True and sc.get("runAsUser", 1) != 0, name
            assert sc["allowPrivilegeEscalation"] is False, name
            assert sc["readOnlyRootFilesystem"] is True, name


def test_the_token_secret_is_mounted_read_only():
    pod = statefulset()["spec"]["template"]["spec"]
    container = tensord_container(pod)
    token_file = pathlib.PurePosixPath(flag(server_args(container), "auth-token-file"))
    mounts = [m for m in container["volumeMounts"]
              if token_file.parent == pathlib.PurePosixPath(m["mountPath"])]
    assert len(mounts) == 1, f"nothing mounted at {token_file.parent}"
    assert mounts[0]["readOnly"] is True
    volume = [v for v in pod["volumes"] if v["name"] == mounts[0]["name"]][0]
    secret = one("Secret", volume["secret"]["secretName"], include_examples=True)
    keys = set(secret.get("stringData", {})) | set(secret.get("data", {}))
    assert token_file.name in keys
    # The file format: one `<tenant> <token>` (or `<token>`) per line.
    for line in secret["stringData"][token_file.name].splitlines():
        assert 1 <= len(line.split()) <= 2, f"not a token line: {line!r}"


def test_container_ports_cover_the_listen_flags():
    template = statefulset()["spec"]["template"]
    container = tensord_container(template["spec"])
    args = server_args(container)
    ports = {p["containerPort"] for p in container["ports"]}
    for name in ("listen", "health-listen", "metrics-listen"):
        address = flag(args, name)
        assert address and address.startswith("0.0.0.0:"), f"--{name} must listen on every address"
        assert port_of(address) in ports, f"--{name}'s port is not a container port"
    annotations = template["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == port_of(flag(args, "metrics-listen"))


# ---------------------------------------------------------------------------------------------
# The router


def test_router_maps_the_route_header_without_hashing():
    conf = router_conf()
    directives = [line.split("#", 1)[0].strip() for line in conf.splitlines()]
    assert any(d.startswith("map $http_tensord_route $tensord_upstream") for d in directives)
    assert any(re.fullmatch(r"grpc_pass grpc://\$tensord_upstream;", d) for d in directives)
    assert any(re.fullmatch(r"listen \S*50051 http2;", d) for d in directives)
    assert any(d.startswith("resolver ") for d in directives), "grpc_pass with variables needs one"
    assert any(re.fullmatch(r"client_max_body_size 0;", d) for d in directives)
    assert any(re.fullmatch(r"grpc_next_upstream off;", d) for d in directives)
    for d in directives:
        assert not re.match(r"(hash|ip_hash|sticky|random|least_conn)\b", d), f"balancing: {d}"
        assert "$request_body" not in d and "$http_authorization" not in d, f"logs a secret: {d}"
    # Unreachable replicas answer gRPC UNAVAILABLE (14).
    assert any(re.fullmatch(r"error_page 502 504 = @tensord_lost;", d) for d in directives)
    assert any(re.fullmatch(r"add_header grpc-status 14 always;", d) for d in directives)
    # The pod names the map accepts are the StatefulSet's, at the headless Service's names.
    pattern = re.search(r'"~\^\(\?<pod>([^)]*)\)/"\s+\$pod\.(\S+?)\.', conf)
    assert pattern, "the map's pod rule"
    sts = statefulset()
    for ordinal in (0, 1, 9, 10, 123):  # however far the StatefulSet is scaled
        assert re.fullmatch(pattern.group(1), f"{sts['metadata']['name']}-{ordinal}"), ordinal
    assert not re.fullmatch(pattern.group(1), f"{sts['metadata']['name']}-x")
    assert pattern.group(2) == sts["spec"]["serviceName"]
    assert re.search(r"default (\S+?)\.\$\{TENSORD_NAMESPACE\}", conf).group(1) == "tensord-any"
    one("Service", "tensord-any")


def test_router_fills_every_placeholder():
    conf = router_conf()
    assert set(re.findall(r"\$\{(\w+)\}", conf)) == set(PLACEHOLDERS)
    router = one("Deployment", "tensord-router")
    pod = router["spec"]["template"]["spec"]
    container = pod["containers"][0]
    script = " ".join(container["command"] + container["args"])
    assert "envsubst '" + " ".join("${%s}" % p for p in PLACEHOLDERS) + "'" in script
    env = {e["name"]: e for e in container["env"]}
    assert env["TENSORD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    assert "TENSORD_RESOLVER=" in script and "TENSORD_CLUSTER_DOMAIN" in env
    # The ConfigMap is mounted where the script reads it.
    volume = [v for v in pod["volumes"] if "configMap" in v][0]
    assert volume["configMap"]["name"] == "tensord-router"
    mount = [m for m in container["volumeMounts"] if m["name"] == volume["name"]][0]
    assert f"< {mount['mountPath']}/nginx.conf" in script
    assert router["spec"]["replicas"] == 2


def filled_conf(namespace="tensord", resolver="127.0.0.1"):
    return fill_placeholders(router_conf(), namespace, resolver)


@pytest.mark.skipif(NGINX is None, reason="no nginx")
def test_router_conf_passes_nginx_t(tmp_path):
    # The manifest's text with its placeholders filled: its relative paths (pid, temp folders)
    # land under the prefix, as in the pod.
    path = tmp_path / "nginx.conf"
    path.write_text(filled_conf())
    out = subprocess.run([NGINX, "-t", "-c", str(path), "-p", f"{tmp_path}/", "-e", "stderr"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "syntax is ok" in out.stderr


def stand_in_replicas(grpc, names_and_hosts):
    """One gRPC server per (name, host), all on one port; each answers every call with
    FAILED_PRECONDITION "<name> <tensord-route header>", so the test sees where a call landed."""

    class Handler(grpc.GenericRpcHandler):
        def __init__(self, name):
            self.name = name

        def service(self, details):
            route = dict(details.invocation_metadata).get("tensord-route", "-")

            def answer(request, context):
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"{self.name} {route}")

            return grpc.unary_unary_rpc_method_handler(answer)

    servers, port = [], 0
    for name, host in names_and_hosts:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers((Handler(name),))
        bound = server.add_insecure_port(f"{host}:{port}")
        if bound == 0:
            for s in servers:
                s.stop(None)
            pytest.skip(f"cannot bind {host}:{port}")
        port = bound
        server.start()
        servers.append(server)
    return servers, port


@pytest.mark.skipif(NGINX is None, reason="no nginx")
def test_router_routes_by_session_and_names_lost_routes(tmp_path):
    """The manifest's nginx.conf, run for real: its listen address and the replicas' port moved to
    free loopback ones, the cluster's DNS played by a stub naming three stand-in replicas."""
    grpc = pytest.importorskip("grpc")
    ns = "tensord"
    pods = f"tensord-pods.{ns}.svc.cluster.local"
    hosts = {"tensord-0": "127.0.0.2", "tensord-10": "127.0.0.3", "any": "127.0.0.4"}
    servers, replica_port = stand_in_replicas(grpc, hosts.items())
    dns = DnsStub({f"tensord-0.{pods}": hosts["tensord-0"], f"tensord-10.{pods}": hosts["tensord-10"],
                   f"tensord-any.{ns}.svc.cluster.local": hosts["any"]})
    listen = free_port()
    nginx = None
    try:
        nginx = Nginx(tmp_path, loopback_conf(ns, f"127.0.0.1:{dns.port}", listen, replica_port),
                      listen)
        channel = grpc.insecure_channel(f"127.0.0.1:{listen}")
        call = channel.unary_unary("/tensord.v1.Tensord/RunOps")

        def landed(route):
            metadata = [("authorization", "Bearer token-that-must-not-be-logged")]
            if route is not None:
                metadata.append(("tensord-route", route))
            with pytest.raises(grpc.RpcError) as e:
                call(b"", metadata=metadata, timeout=20)
            return e.value.code(), e.value.details()

        where = grpc.StatusCode.FAILED_PRECONDITION
        for _ in range(3):
            assert landed("tensord-0/5") == (where, "tensord-0 tensord-0/5")
            assert landed("tensord-10/12") == (where, "tensord-10 tensord-10/12")
        assert landed(None) == (where, "any -")
        assert landed("elsewhere/3") == (where, "any elsewhere/3")
        # A replica whose name no longer resolves (its pod is gone): UNAVAILABLE naming the route.
        code, details = landed("tensord-7/4")
        assert code == grpc.StatusCode.UNAVAILABLE
        assert "tensord-7/4" in details and "lost" in details
        channel.close()
    finally:
        if nginx is not None:
            nginx.stop()
        dns.close()
        for s in servers:
            s.stop(None)
    logged = nginx.log()
    assert '"route":"tensord-0/5"' in logged
    assert "token-that-must-not-be-logged" not in logged


# ---------------------------------------------------------------------------------------------
# Compose


def compose():
    return load_docs(COMPOSE)[0]


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="no docker-compose")
def test_compose_file_passes_the_compose_schema():
    """docker-compose (Debian's, 1.29) validates the file against the Compose schema."""
    out = subprocess.run(["docker-compose", "-f", str(COMPOSE), "--profile", "gpu", "config",
                          "--services"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert set(out.stdout.split()) == {"tensord", "tensord-gpu"}


def test_compose_builds_the_image_from_the_dockerfile():
    doc = compose()
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    build_args = set(re.findall(r"^ARG (\w+)", dockerfile, re.M))
    for name in ("tensord", "tensord-gpu"):
        build = doc["services"][name]["build"]
        context = (COMPOSE.parent / build["context"]).resolve()
        assert context == ROOT and (context / build.get("dockerfile", "Dockerfile")).is_file()
        assert set(build.get("args", {})) <= build_args, f"{name}: unknown build arguments"
        assert doc["services"][name]["entrypoint"] == ["tensord"]
    assert doc["services"]["tensord-gpu"]["build"]["args"]["TENSORD_CUDA"] == "ON"


def test_compose_service_is_health_checked_limited_and_drained():
    doc = compose()
    for name in ("tensord", "tensord-gpu"):
        service = doc["services"][name]
        args = service["command"]
        test = service["healthcheck"]["test"]
        assert test[:2] == ["CMD", "tensord-health"], name
        assert port_of(flag(test[2:], "address")) == port_of(flag(args, "health-listen")), name
        limits = service["deploy"]["resources"]["limits"]
        assert float(limits["cpus"]) > 0, name
        assert parse_bytes(limits["memory"]) > int(flag(args, "max-server-bytes")), name
        assert flag(args, "drain-timeout") is not None, name
        assert parse_duration(service["stop_grace_period"]) > drain_seconds(args), name
        assert flag(args, "listen").startswith("0.0.0.0:"), name
        published = {int(p.split(":")[-1]) for p in service["ports"]}
        assert {port_of(flag(args, "listen")), port_of(flag(args, "metrics-listen"))} <= published


def test_compose_token_secret():
    doc = compose()
    assert doc["secrets"]["tensord-token"]["file"] == "./secrets/tensord-token"
    for name in ("tensord", "tensord-gpu"):
        service = doc["services"][name]
        assert "tensord-token" in service["secrets"], name
        assert flag(service["command"], "auth-token-file") == "/run/secrets/tensord-token", name


def test_compose_gpu_service_reserves_an_nvidia_gpu():
    doc = compose()
    gpu = doc["services"]["tensord-gpu"]
    assert gpu["profiles"] == ["gpu"]
    assert "profiles" not in doc["services"]["tensord"]
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert any(d["driver"] == "nvidia" and "gpu" in d["capabilities"] and int(d["count"]) >= 1
               for d in devices)
    assert flag(gpu["command"], "device") in ("auto", "cuda")
    assert flag(doc["services"]["tensord"]["command"], "device") == "cpu"


def test_compose_host_ports_do_not_collide():
    host_ports = [p.split(":")[0] for s in compose()["services"].values() for p in s["ports"]]
    assert len(host_ports) == len(set(host_ports)), host_ports
