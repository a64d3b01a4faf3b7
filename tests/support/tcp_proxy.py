"""A small TCP proxy on loopback that can cut every connection, refuse new ones, or slow them.

Faults a real kube-apiserver cannot be asked for: a watch dropped mid-stream (the client sees a
reset, possibly in the middle of a chunk or a line), a network outage (connections refused,
then accepted again) and latency. TLS passes through untouched (the serving certificate names
127.0.0.1, so clients verify it through the proxy as they would directly).
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable
from types import TracebackType


def _reset(sock: socket.socket) -> None:
    """Close with RST (SO_LINGER 0): what a dropped connection looks like to the peer.

    shutdown(SHUT_RD) first wakes our own thread blocked in recv() on it (close alone does not
    on Linux) without sending a FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class TcpProxy:
    """127.0.0.1:`port` → `target` (host, port); a context manager.

    `drop_all()` resets every open connection; `refuse(True)` resets new connections as
    soon as they are accepted (an outage) until `refuse(False)`; `latency` delays each chunk
    relayed from the server. `stop()` closes everything and joins every thread it started.
    """

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.latency = 0.0
        self._refusing = False
        self._listener: socket.socket | None = None
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()
        self.dropped = 0

    @property
    def port(self) -> int:
        assert self._listener is not None, "TcpProxy is not started"
        return int(self._listener.getsockname()[1])

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self) -> TcpProxy:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        listener.settimeout(0.2)
        self._listener = listener
        self._spawn(self._accept_loop, "tcp-proxy-accept")
        return self

    def __enter__(self) -> TcpProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopped.set()
        self.drop_all()
        for thread in self._threads:
            thread.join(10)
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        self._threads = [t for t in self._threads if t.is_alive()]
        assert not self._threads, f"proxy threads left running: {self._threads}"

    # --- faults -------------------------------------------------------------------------------

    def drop_all(self) -> int:
        """Reset every open connection (both sides); returns how many client connections."""
        with self._lock:
            conns, self._conns = self._conns, set()
        for sock in conns:
            _reset(sock)
        dropped = len(conns) // 2
        self.dropped += dropped
        return dropped

    def refuse(self, refusing: bool) -> None:
        """While refusing, every new connection is reset at once (the server looks down)."""
        self._refusing = refusing
        if refusing:
            self.drop_all()

    def open_connections(self) -> int:
        with self._lock:
            return len(self._conns) // 2

    # --- relaying -----------------------------------------------------------------------------

    def _spawn(self, target: Callable[..., None], name: str, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        assert self._listener is not None
        listener = self._listener
        while not self._stopped.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._refusing:
                _reset(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _reset(client)  # the server is down: so is the proxy, to the client
                continue
            upstream.settimeout(None)
            client.settimeout(None)
            with self._lock:
                self._conns.update((client, upstream))
            self._spawn(self._pump, "tcp-proxy-up", client, upstream, False)
            self._spawn(self._pump, "tcp-proxy-down", upstream, client, True)

    def _pump(self, src: socket.socket, dst: socket.socket, delayed: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if delayed and self.latency > 0:
                    time.sleep(self.latency)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                mine = src in self._conns
                self._conns.discard(src)
                self._conns.discard(dst)
            if mine:
                _reset(src)
                _reset(dst)
