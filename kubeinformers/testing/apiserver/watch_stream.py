"""LocalApiServer's watch streams: a watch plan sent as an HTTP/1.1 chunked response.

Split from the request handler (`http`) because streaming is its own concept: initial
events in ~64 KiB chunks, then the watcher's events one JSON line per chunk, bookmarks
(periodic, before the timeout, initial-events-end), injected line faults, and noticing that
the client went away. `Handler` inherits it.
"""

from __future__ import annotations

import queue
import select
import socket
import ssl
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from kubeinformers.testing.apiserver import api
from kubeinformers.testing.apiserver import render as rendering
from kubeinformers.testing.apiserver.errors import ObjDict
from kubeinformers.testing.apiserver.registry import Served
from kubeinformers.testing.apiserver.state import ServerState, StateHTTPServer
from kubeinformers.testing.apiserver.store import CLOSE_DROP, Event, Store, encode

_BATCH_BYTES = 64 * 1024


class WatchStreamHandler(BaseHTTPRequestHandler):
    """The watch-streaming methods of `Handler` (which sends the headers: `_start`)."""

    server: StateHTTPServer
    _streaming: bool  # set by `Handler._dispatch`: the 200 of a stream is out

    if TYPE_CHECKING:

        def _start(self, code: int, content_type: str, headers: Mapping[str, str]) -> None: ...

    # --- watch streams ----------------------------------------------------------------------------

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _event_line(
        self, typ: str, obj: ObjDict | Event, served: Served, out: rendering.Output
    ) -> bytes:
        if isinstance(obj, Event):
            ck = (typ, served.api.api_version, out.kind, out.version)
            line = obj.lines.get(ck)
            if line is None:
                source = (
                    obj.prev
                    if typ == "DELETED" and obj.type == "MODIFIED" and obj.prev
                    else obj.obj
                )
                if source is obj.prev and source is not None:
                    source = dict(
                        source, metadata=dict(source["metadata"], resourceVersion=str(obj.rv))
                    )
                line = obj.lines[ck] = (
                    encode({"type": typ, "object": rendering.render_as(source, served, out)})
                    + b"\n"
                )
            return line
        state = self.server.state
        body = rendering.encoded(state.store, obj, served, out)
        return b'{"type":"%s","object":%s}\n' % (typ.encode(), body)

    def _stream(self, state: ServerState, plan: api.WatchPlan) -> None:
        self._start(200, "application/json", {"Transfer-Encoding": "chunked"})
        self.end_headers()
        self._streaming = True
        self.log_request(200)
        watcher, served, store = plan.watcher, plan.served, state.store
        try:
            # Initial events go out in ~64 KiB chunks (one write each, not one per event), as a
            # real server's buffered stream does; faulted lines are still sent one by one.
            batch = bytearray()
            for typ, obj in plan.initial:
                self._send_line(state, self._event_line(typ, obj, served, plan.output), batch)
            if batch:
                self._chunk(bytes(batch))
            if plan.error is not None or watcher is None:
                if plan.error is not None:
                    self._chunk(encode({"type": "ERROR", "object": plan.error}) + b"\n")
                self._chunk(b"")
                return
            self._watch_loop(state, plan, watcher, served, store)
        except (_Dropped, BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
            _hard_close(self.connection)
        finally:
            if watcher is not None:
                store.stop_watch(watcher)

    def _watch_loop(
        self,
        state: ServerState,
        plan: api.WatchPlan,
        watcher: Any,
        served: Served,
        store: Store,
    ) -> None:
        now = time.monotonic()
        deadline = now + plan.timeout if plan.timeout else None
        periodic = now + state.bookmark_interval if plan.bookmarks else float("inf")
        pretimeout = [deadline - 2.0, deadline - 1.0] if plan.bookmarks and deadline else []
        pretimeout = [t for t in pretimeout if t > now]
        end_rv = plan.initial_end_rv
        while True:
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                self._chunk(b"")
                return
            if end_rv is not None and not state.faults.stall_initial_events_end:
                self._chunk(
                    encode(
                        {
                            "type": "BOOKMARK",
                            "object": api.bookmark_object(served, end_rv, True, plan.output),
                        }
                    )
                    + b"\n"
                )
                end_rv = None
            due = min([periodic, *pretimeout[:1]])
            if now >= due and end_rv is None:
                if pretimeout and now >= pretimeout[0]:
                    pretimeout.pop(0)
                else:
                    periodic = now + state.bookmark_interval
                self._bookmark(store, watcher, served, plan.output)
                continue
            wait = min(due, deadline or float("inf"), now + 1.0) - now
            if end_rv is not None:
                wait = min(wait, 0.05)
            try:
                item = watcher.queue.get(timeout=max(wait, 0.0))
            except queue.Empty:
                if self._client_gone():
                    raise _Dropped from None
                continue
            if isinstance(item, str):
                if item == CLOSE_DROP:
                    raise _Dropped
                self._chunk(b"")
                return
            typ, ev = item
            self._send_line(state, self._event_line(typ, ev, served, plan.output))

    def _client_gone(self) -> bool:
        """A watch client sends nothing: a readable socket means it closed (or broke protocol)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
        except (OSError, ValueError):
            return True
        if not readable:
            return False
        if isinstance(self.connection, ssl.SSLSocket):
            return True
        try:
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
            return peeked == b""
        except OSError:
            return True

    def _bookmark(self, store: Store, watcher: Any, served: Served, out: rendering.Output) -> None:
        with store.lock:
            rv = store.bookmark_rv(watcher)
            if not watcher.queue.empty() or rv is None:
                return  # events first; none unless the resource moved past the watch
        bookmark = api.bookmark_object(served, rv, output=out)
        self._chunk(encode({"type": "BOOKMARK", "object": bookmark}) + b"\n")

    def _send_line(self, state: ServerState, line: bytes, batch: bytearray | None = None) -> None:
        fault = state.faults.take_line_fault()
        if fault is None and batch is not None:
            batch += line
            if len(batch) >= _BATCH_BYTES:
                self._chunk(bytes(batch))
                batch.clear()
            return
        if batch:
            self._chunk(bytes(batch))
            batch.clear()
        if fault == "corrupt":
            line = line[: len(line) // 2].replace(b"{", b"[") + b"\x00garbage}\n"
        elif fault == "truncate":
            self._chunk(line[: len(line) // 2])
            raise _Dropped
        self._chunk(line)


class _Dropped(Exception):
    """Cut the connection without ending the chunked stream."""


def _hard_close(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
