"""A server that accepts connections and never answers: a hung API server (D24, N21, N22)."""

from __future__ import annotations

import socket
import threading


class SilentServer:
    """Accepts connections and reads what comes, but never answers: a hung API server (or a
    load balancer that lost its backend). Counts the connections it accepted."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted = 0
        self.received = threading.Event()  # some bytes of a request (or a TLS hello) came
        self._conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self._conns.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        try:
            while conn.recv(65536):
                self.received.set()
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()
        for conn in self._conns:
            conn.close()
