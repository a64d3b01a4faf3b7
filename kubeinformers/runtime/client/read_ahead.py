"""Read one page ahead in a paged LIST (D22; client-go: tools/pager ListPager.PageBufferSize).

Why: fetched one after another, a page's server time (etcd, encoding, the network) and its
client time (decoding) add up. Once a page's body is read, its continue token is known (the
list metadata comes before the items), so the next page is asked for on a helper thread while
this one is decoded; socket reads release the GIL. Requests, options and errors are the same as
without it: a read-ahead is taken only by a call with exactly the options it was sent for, and
its error is raised by that call.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

import urllib3

from kubeinformers.runtime.api.listwatch import ListOptions, ObjectList
from kubeinformers.runtime.client.pager import ListStopped

T = TypeVar("T")

logger = logging.getLogger("kubeinformers.transport")

# A waiting pager looks at its stop event this often (a thread cannot wait on two events).
STOP_POLL_SECONDS = 0.05


class PageSource(Protocol[T]):
    """The transport's steps of one LIST request (ApiListerWatcher has them)."""

    def describe(self) -> str: ...

    def list_options(self, options: ListOptions) -> ListOptions: ...

    def open_list(self, options: ListOptions) -> urllib3.BaseHTTPResponse: ...

    def read_list(self, resp: urllib3.BaseHTTPResponse) -> bytes: ...

    def list_continue(self, resp: urllib3.BaseHTTPResponse, data: bytes) -> str: ...

    def decode_list_page(self, resp: urllib3.BaseHTTPResponse, data: bytes) -> ObjectList[T]: ...


class _PageFetch:
    """One page requested and read on a helper thread; `result` hands it (or its error) over."""

    def __init__(self, source: PageSource[Any], options: ListOptions) -> None:
        self.options = options  # the pager's options, before the tweak function (the key)
        self._source: PageSource[Any] = source
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._cancelled = False
        self._resp: urllib3.BaseHTTPResponse | None = None
        self._data = b""
        self._error: BaseException | None = None
        self.thread: threading.Thread | None = None
        try:
            sent = source.list_options(options)  # H8: the tweak runs on the pager's thread
        except Exception as e:
            self._error = e  # raised where the request would have been made
            self._done.set()
            return
        self.thread = threading.Thread(
            target=self._run,
            args=(sent,),
            name=f"list-read-ahead:{source.describe()}",
            daemon=True,
        )
        self.thread.start()

    def _run(self, sent: ListOptions) -> None:
        try:
            resp = self._source.open_list(sent)
            with self._lock:
                cancelled = self._cancelled
                self._resp = resp
            if cancelled:
                _abandon(resp)
                return
            self._data = self._source.read_list(resp)  # gives the connection back
        except BaseException as e:
            self._error = e
        finally:
            self._done.set()

    def result(self, stop: threading.Event | None) -> tuple[urllib3.BaseHTTPResponse, bytes]:
        """The response and its body, or the error the request or the read raised."""
        if stop is None:
            self._done.wait()
        else:
            while not self._done.wait(STOP_POLL_SECONDS):
                if stop.is_set():
                    self.cancel()
                    raise ListStopped(f"the list of {self._source.describe()} was stopped")
        if self._error is not None:
            raise self._error
        assert self._resp is not None
        return self._resp, self._data

    def cancel(self) -> None:
        """Nobody will take this page: end its read now; its connection is closed and given
        back by the helper (a request still waiting for the server's headers ends when they
        come or at the read timeout)."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            resp = self._resp
        if resp is not None and not self._done.is_set():
            try:
                resp.shutdown()  # unblocks the helper's read, which then closes and releases
            except Exception:
                try:
                    resp.close()
                except Exception:
                    pass


def _abandon(resp: urllib3.BaseHTTPResponse) -> None:
    try:
        resp.close()
    finally:
        resp.release_conn()


class PageReadAhead(Generic[T]):
    """One paged LIST over a PageSource, reading one page ahead (the PageReader of D22)."""

    def __init__(self, source: PageSource[T], stop: threading.Event | None = None) -> None:
        self._source = source
        self._stop = stop
        self._pending: _PageFetch | None = None
        self._closed = False

    def list(
        self, options: ListOptions, next_options: Callable[[str], ListOptions]
    ) -> ObjectList[T]:
        source = self._source
        pending, self._pending = self._pending, None
        if pending is not None and pending.options != options:
            pending.cancel()  # not the page the read-ahead guessed: ask for this one
            pending = None
        if pending is not None:
            resp, data = pending.result(self._stop)
        else:
            resp = source.open_list(source.list_options(options))
            data = source.read_list(resp)
        token = source.list_continue(resp, data)
        if token and not self._closed:
            self._pending = _PageFetch(source, next_options(token))
        return source.decode_list_page(resp, data)

    def close(self) -> None:
        """End a read-ahead nobody took; idempotent."""
        self._closed = True
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.cancel()


__all__ = ["STOP_POLL_SECONDS", "PageReadAhead", "PageSource"]
