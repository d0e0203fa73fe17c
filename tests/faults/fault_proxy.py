"""A small fault-injecting TCP proxy for tests: forwards 127.0.0.1:<port> to a target and, on
command, delays what it forwards, drops every connection, stops forwarding without closing
(half-open: a blackhole) or stops reading from one side (a slow reader, so TCP's and HTTP/2's
flow control push back).

    with FaultProxy("127.0.0.1:50051") as proxy:
        channel = grpc.insecure_channel(proxy.address)
        proxy.set(delay=0.2)          # every chunk waits 200 ms
        proxy.drop()                  # closes every connection now
        proxy.set(blackhole=True)     # connections stay open; nothing passes
        proxy.set(stall_downstream=True)  # stops reading what the server sends
"""
import select
import socket
import threading
import time


class FaultProxy:
    def __init__(self, target):
        host, port = target.rsplit(":", 1)
        self._target = (host, int(port))
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._lock = threading.Lock()
        self._conns = []  # (client socket, server socket)
        self._stopping = False
        self.delay = 0.0
        self.blackhole = False
        self.stall_downstream = False  # stop reading the server's side (a slow reader)
        self.stall_upstream = False    # stop reading the client's side
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def set(self, **faults):
        with self._lock:
            for name, value in faults.items():
                if not hasattr(self, name) or name.startswith("_"):
                    raise AttributeError(name)
                setattr(self, name, value)

    def drop(self):
        """Closes every open connection at once (both sides see a reset or EOF)."""
        with self._lock:
            conns, self._conns = self._conns, []
        for pair in conns:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def close(self):
        self._stopping = True
        self._listener.close()
        self.drop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _accept(self):
        while not self._stopping:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self._target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._conns.append((client, server))
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, client, server):
        """Forwards both ways in one thread, honouring the faults set meanwhile."""
        try:
            while not self._stopping:
                with self._lock:
                    watch = []
                    if not self.stall_upstream and not self.blackhole:
                        watch.append(client)
                    if not self.stall_downstream and not self.blackhole:
                        watch.append(server)
                    delay = self.delay
                ready, _, _ = select.select(watch, [], [], 0.05) if watch else ([], [], [])
                if not watch:
                    time.sleep(0.05)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    if delay:
                        time.sleep(delay)
                    (server if s is client else client).sendall(data)
        except (OSError, ValueError):  # dropped meanwhile (a closed socket's descriptor is -1)
            pass
        finally:
            for s in (client, server):
                try:
                    s.close()
                except OSError:
                    pass
