"""Helpers shared by the router's tests (test_manifests.py, test_routing.py): the router's
nginx.conf as deploy/k8s/router.yaml ships it, with its placeholders filled and its ports moved to
loopback ones; a DNS server standing in for the cluster's; nginx run in the foreground and stopped
with all its workers."""
import os
import pathlib
import re
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROUTER_YAML = ROOT / "deploy" / "k8s" / "router.yaml"

# The router's placeholders, filled in by its container (envsubst) and here by the tests.
PLACEHOLDERS = ("TENSORD_NAMESPACE", "TENSORD_CLUSTER_DOMAIN", "TENSORD_RESOLVER")
CLUSTER_DOMAIN = "cluster.local"
REPLICA_PORT = 50051  # the port of every tensord pod, and the router's own

NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")


def router_conf():
    """nginx.conf of the ConfigMap tensord-router in deploy/k8s/router.yaml, as shipped."""
    with open(ROUTER_YAML, encoding="utf-8") as f:
        maps = [d for d in yaml.safe_load_all(f)
                if d and d.get("kind") == "ConfigMap" and d["metadata"]["name"] == "tensord-router"]
    assert len(maps) == 1, "router.yaml holds one ConfigMap tensord-router"
    return maps[0]["data"]["nginx.conf"]


def fill_placeholders(conf, namespace="tensord", resolver="127.0.0.1"):
    """The placeholders filled as the router's container fills them (envsubst)."""
    values = {"TENSORD_NAMESPACE": namespace, "TENSORD_CLUSTER_DOMAIN": CLUSTER_DOMAIN,
              "TENSORD_RESOLVER": resolver}
    for name, value in values.items():
        conf = conf.replace("${%s}" % name, value)
    return conf


def loopback_conf(namespace, resolver, listen_port, replica_port, conf=None):
    """The shipped nginx.conf, placeholders filled, changed in its ports only: the router listens
    on 127.0.0.1:listen_port and reaches the replicas (and tensord-any) on replica_port instead
    of 50051. Every routing rule stays as it is."""
    conf = fill_placeholders(router_conf() if conf is None else conf, namespace, resolver)
    conf, n = re.subn(rf"listen {REPLICA_PORT} http2;", f"listen 127.0.0.1:{listen_port} http2;",
                      conf)
    assert n == 1, "the router's listen directive"
    suffix = re.escape(f".svc.{CLUSTER_DOMAIN}:{REPLICA_PORT};")
    conf, n = re.subn(suffix, f".svc.{CLUSTER_DOMAIN}:{replica_port};", conf)
    assert n == 2, "the map's two upstreams (tensord-any and the pods)"
    return conf


class DnsStub:
    """A DNS server on a loopback UDP port answering A queries from a table (a name to one address
    or a list of addresses, all given in the answer), NXDOMAIN for names not in it. The table may
    change while it runs (`set`, `drop`), as the cluster's DNS does when pods come and go."""

    def __init__(self, table, ttl=10):
        self.table = {name: self._list(a) for name, a in table.items()}
        self.ttl = ttl
        self.lock = threading.Lock()
        self.queries = []  # names asked, in order
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @staticmethod
    def _list(addresses):
        return [addresses] if isinstance(addresses, str) else list(addresses)

    def set(self, name, addresses):
        with self.lock:
            self.table[name] = self._list(addresses)

    def drop(self, name):
        with self.lock:
            self.table.pop(name, None)

    def _answer(self, query):
        (qid,) = struct.unpack("!H", query[:2])
        labels, i = [], 12
        while query[i]:
            labels.append(query[i + 1:i + 1 + query[i]].decode().lower())
            i += 1 + query[i]
        question = query[12:i + 5]
        qtype = struct.unpack("!H", query[i + 1:i + 3])[0]
        name = ".".join(labels)
        with self.lock:
            self.queries.append(name)
            known = name in self.table
            addresses = list(self.table.get(name, ())) if qtype == 1 else []
        if not known:
            return struct.pack("!HHHHHH", qid, 0x8183, 1, 0, 0, 0) + question
        answers = b"".join(struct.pack("!HHHLH", 0xC00C, 1, 1, self.ttl, 4) + socket.inet_aton(a)
                           for a in addresses)
        return struct.pack("!HHHHHH", qid, 0x8180, 1, len(addresses), 0, 0) + question + answers

    def _serve(self):
        while not self.stopping:
            try:
                query, peer = self.sock.recvfrom(512)
            except socket.timeout:
                continue
            try:
                self.sock.sendto(self._answer(query), peer)
            except (IndexError, struct.error, UnicodeDecodeError):
                continue  # not a query we understand: no answer

    def close(self):
        self.stopping = True
        self.thread.join()
        self.sock.close()


def free_port(hosts=("127.0.0.1",)):
    """A TCP port free on every one of the loopback addresses `hosts`."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind((hosts[0], 0))
            port = s.getsockname()[1]
        try:
            for host in hosts[1:]:
                with socket.socket() as s:
                    s.bind((host, port))
        except OSError:
            continue
        return port
    raise RuntimeError(f"no port free on all of {hosts}")


def wait_for_port(host, port, proc, what, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            assert proc.poll() is None, f"{what} exited with {proc.returncode}"
            assert time.monotonic() < deadline, f"{what} is not listening on {host}:{port}"
            time.sleep(0.05)


def children(pid):
    """Process ids whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


class Nginx:
    """nginx in the foreground with `conf` written to prefix/nginx.conf (its relative paths land
    under the prefix, as in the pod). stdout and stderr (the access log and the error log) go to
    prefix/out.log. In a process group of its own, so that stop() ends the workers too."""

    def __init__(self, prefix, conf, listen_port):
        self.prefix = pathlib.Path(prefix)
        self.conf_path = self.prefix / "nginx.conf"
        self.conf_path.write_text(conf)
        self.log_path = self.prefix / "out.log"
        self.listen_port = listen_port
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [NGINX, "-c", str(self.conf_path), "-p", f"{self.prefix}/", "-e", "stderr",
                 "-g", "daemon off;"], stdout=log, stderr=log, start_new_session=True)
        try:
            wait_for_port("127.0.0.1", listen_port, self.proc, "nginx")
        except BaseException:
            self.stop()
            raise

    def log(self):
        return self.log_path.read_text(errors="replace")

    def workers(self):
        return set(children(self.proc.pid))

    def reload(self, timeout=10):
        """`nginx -s reload` (SIGHUP to the master): new workers with the same configuration and
        empty DNS caches. Returns once every old worker has exited, so no later call reaches one."""
        old = self.workers()
        self.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + timeout
        while True:
            now = self.workers()
            if now and not now & old:
                return
            assert self.proc.poll() is None, f"nginx exited on reload: {self.log()[-2000:]}"
            assert time.monotonic() < deadline, f"nginx's old workers {old & now} did not exit"
            time.sleep(0.05)

    def stop(self):
        """SIGTERM (nginx's fast shutdown: the master ends its workers, then itself); SIGKILL to
        the whole process group if that takes over 5 s or the master is already gone."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
                return
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
