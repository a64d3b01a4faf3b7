"""Requests a stop ends at once, wherever they wait: connecting, for the answer, or reading it.

Why: client-go cancels a request's context when its informer stops, and the request ends
there and then. urllib3 has no cancellation: a request to a server that accepted the
connection but never answers (a hung kube-apiserver, a load balancer that lost its backend)
waits for its read timeout, minutes for a watch, and the informer's thread with it, so a
`shutdown()` hung as long. Here a source's requests run in a scope (`Cancellation.scope`);
the connections of the pool manager's pools (`make_cancellable`) report to the scope of
their thread the sockets they use, and `Cancellation.cancel()` shuts those sockets down: a
blocked read returns at once and the request fails with `RequestCancelled`.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["Cancellation", "RequestCancelled", "make_cancellable", "pause"]

_current = threading.local()  # .scope: the _Scope of this thread's request, if any


class RequestCancelled(Exception):
    """A request ended (or refused) because its source was stopped (`Cancellation.cancel`)."""


class _Scope:
    """One request's sockets, from its connection to the end of the scope; `owned` are
    duplicates of sockets being connected, closed with the scope."""

    __slots__ = ("owned", "owner", "sockets")

    def __init__(self, owner: Cancellation) -> None:
        self.owner = owner
        self.sockets: list[Any] = []
        self.owned: list[socket.socket] = []

    def track(self, sock: Any, *, owned: bool = False) -> None:
        owner = self.owner
        with owner.lock:
            self.sockets.append(sock)
            if owned:
                self.owned.append(sock)
            cancelled = owner.cancelled
        if cancelled:
            _shut(sock)
            raise RequestCancelled(f"{owner.what}: stopped")

    def close(self) -> None:
        for sock in self.owned:
            sock.close()  # the duplicate only: the connection keeps its own


class Cancellation:
    """The requests of one source (an informer's lister-watcher): `scope()` around each,
    `cancel()` to end those in flight and refuse every later one (the source is done)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.lock = threading.Lock()
        self.cancelled = False
        self._scopes: set[_Scope] = set()
        self._stopped = threading.Event()  # set by cancel(): ends a `pause` at once

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """Run a request (and the reading of its answer) so that `cancel()` ends it;
        RequestCancelled at once when cancelled already."""
        scope = _Scope(self)
        with self.lock:
            if self.cancelled:
                raise RequestCancelled(f"{self.what}: stopped")
            self._scopes.add(scope)
        outer = getattr(_current, "scope", None)
        _current.scope = scope
        try:
            yield
        finally:
            _current.scope = outer
            with self.lock:
                self._scopes.discard(scope)
            scope.close()

    def cancel(self) -> None:
        """End every request in flight (its sockets shut down) and refuse every later one."""
        with self.lock:
            self.cancelled = True
            sockets = [sock for scope in self._scopes for sock in scope.sockets]
        self._stopped.set()
        for sock in sockets:
            _shut(sock)


def pause(seconds: float) -> None:
    """Wait `seconds` (a retry's Retry-After); inside a `Cancellation.scope` a `cancel()` ends
    the wait at once with RequestCancelled, as it ends the scope's requests."""
    scope: _Scope | None = getattr(_current, "scope", None)
    if scope is None:
        time.sleep(seconds)
        return
    if scope.owner._stopped.wait(seconds):
        raise RequestCancelled(f"{scope.owner.what}: stopped")


def _shut(sock: Any) -> None:
    """Shut a socket down: a read blocked on it, in any thread, returns (end of stream)."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError, AttributeError):
        pass  # closed already, or not connected yet


class _CancellableConnection:
    """Mixed into a pool's connection class: the sockets it connects and the requests it
    sends are reported to the scope of the calling thread (`Cancellation.scope`)."""

    sock: Any

    def _new_conn(self) -> Any:
        scope: _Scope | None = getattr(_current, "scope", None)
        if scope is not None and scope.owner.cancelled:
            raise RequestCancelled(f"{scope.owner.what}: stopped")  # no new connection
        sock = super()._new_conn()  # type: ignore[misc]
        if scope is not None:
            # A duplicate: TLS detaches this socket object before its handshake, and a
            # shutdown through the duplicate ends a handshake the server never answers.
            scope.track(sock.dup(), owned=True)
        return sock

    def request(self, *args: Any, **kwargs: Any) -> Any:
        scope: _Scope | None = getattr(_current, "scope", None)
        if scope is not None and self.sock is not None:  # connected: TLS done, or reused
            scope.track(self.sock)
        return super().request(*args, **kwargs)  # type: ignore[misc]


@functools.cache
def _cancellable_pool(pool_cls: type) -> type:
    """`pool_cls` with connections that report their sockets (_CancellableConnection)."""
    if issubclass(pool_cls, _CancellablePool):
        return pool_cls
    conn_cls = pool_cls.ConnectionCls  # type: ignore[attr-defined]
    cancellable_conn = type(conn_cls.__name__, (_CancellableConnection, conn_cls), {})
    return type(
        pool_cls.__name__,
        (_CancellablePool, pool_cls),
        {"ConnectionCls": cancellable_conn, "__module__": __name__},
    )


class _CancellablePool:
    """Marks a pool class made by `_cancellable_pool`."""


def make_cancellable(pool_manager: Any) -> None:
    """Make the requests sent through `pool_manager` (urllib3's, a kubernetes ApiClient's)
    cancellable from a `Cancellation.scope`; once per pool manager. Other requests are not
    changed: a connection reports nothing outside a scope. Pools made before lose their
    idle connections once (`clear()`), so that every connection from now on is one of ours."""
    classes = getattr(pool_manager, "pool_classes_by_scheme", None)
    if not isinstance(classes, dict) or not classes:
        return
    if all(isinstance(cls, type) and issubclass(cls, _CancellablePool) for cls in classes.values()):
        return
    pool_manager.pool_classes_by_scheme = {
        scheme: _cancellable_pool(cls) for scheme, cls in classes.items()
    }
    pools = getattr(pool_manager, "pools", None)
    if pools is not None and len(pools):
        pool_manager.clear()
