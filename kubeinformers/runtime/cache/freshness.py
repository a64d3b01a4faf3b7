"""Read your own writes: how far the informer's cache has caught up, as a resourceVersion.

After a write the caller knows the object's new resourceVersion; `ResourceVersionWatermark`
lets it wait until the cache has processed an event at or beyond it. The watermark is the
highest resourceVersion the informer has *processed into its store* (objects of watch events,
tombstones, and — with the atomic queue — list and bookmark resourceVersions, B15), for every
queue kind (the informer publishes it only when nothing older can still be queued). resourceVersions are compared as integers, as the API server issues them (client-go
1.36's `CompareResourceVersion`); a non-numeric one is refused with ValueError.

Waiting never polls: threads wait on a condition, coroutines on a future the informer's
thread resolves through `loop.call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

__all__ = ["ReadYourWritesTimeout", "ResourceVersionWatermark", "parse_resource_version"]


class ReadYourWritesTimeout(TimeoutError):
    """A write succeeded on the server, but the informer's cache had not seen it in time.

    `obj` is what the server answered (the written object, or the Status of a delete): the
    write is done and must not be repeated blindly. The informer is usually disconnected or
    far behind; its `health()` says why.
    """

    def __init__(self, message: str, obj: object) -> None:
        super().__init__(message)
        self.obj = obj


def parse_resource_version(resource_version: str) -> int:
    """The integer order of a resourceVersion; ValueError with what was given otherwise."""
    try:
        value = int(resource_version)
    except (TypeError, ValueError):
        raise ValueError(
            f"resourceVersion {resource_version!r} is not a number: only resourceVersions the "
            "API server returned (metadata.resourceVersion of a written object) can be waited for"
        ) from None
    if value < 0:
        raise ValueError(f"resourceVersion {resource_version!r} is negative")
    return value


class ResourceVersionWatermark:
    """The highest resourceVersion processed so far; wakes whoever waits for one at or below."""

    __slots__ = ("_async_waiters", "_cond", "_value")

    def __init__(self) -> None:
        self._value = -1
        self._cond = threading.Condition(threading.Lock())
        # (target, loop, future): resolved from the informer's thread, thread-safely.
        self._async_waiters: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @property
    def value(self) -> str:
        """The watermark as a resourceVersion string ("" before anything was processed)."""
        value = self._value
        return "" if value < 0 else str(value)

    def reached(self, resource_version: str) -> bool:
        return self._value >= parse_resource_version(resource_version)

    @property
    def highest(self) -> int:
        """The watermark as a number (-1 before anything was processed)."""
        return self._value

    def observe(self, resource_version: str) -> None:
        """Raise the watermark to `resource_version` if higher (non-numeric ones are ignored)."""
        try:
            value = int(resource_version)
        except (TypeError, ValueError):
            return
        self.observe_value(value)

    def observe_value(self, value: int) -> None:
        """`observe` for a resourceVersion already parsed."""
        if value <= self._value:
            return
        with self._cond:
            if value <= self._value:
                return
            self._value = value
            self._cond.notify_all()
            if not self._async_waiters:
                return
            due = [w for w in self._async_waiters if w[0] <= value]
            self._async_waiters = [w for w in self._async_waiters if w[0] > value]
        for _, loop, future in due:
            try:
                loop.call_soon_threadsafe(_resolve, future)
            except RuntimeError:  # that loop has closed: nobody waits any more
                pass

    def wait(self, resource_version: str, timeout: float | None) -> bool:
        """Block until the watermark reaches `resource_version` (True) or `timeout` passes."""
        target = parse_resource_version(resource_version)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._value < target:
                if deadline is None:
                    self._cond.wait()
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def wait_until(self, done: Callable[[], bool], timeout: float | None) -> bool:
        """Block until `done()` is true, checked now and each time the watermark rises (the
        informer processed more events), or `timeout` passes (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not done():
                if deadline is None:
                    self._cond.wait()
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    async def wait_until_async(self, done: Callable[[], bool], timeout: float | None) -> bool:
        """`wait_until` for coroutines: never blocks the event loop, and holds no thread, so
        a cancelled wait leaves nothing waiting behind it."""
        return await self._wait_async(done, None, timeout)

    async def wait_async(self, resource_version: str, timeout: float | None) -> bool:
        """`wait` for coroutines: never blocks the event loop."""
        target = parse_resource_version(resource_version)
        return await self._wait_async(lambda: self._value >= target, target, timeout)

    async def _wait_async(
        self, done: Callable[[], bool], wake_at: int | None, timeout: float | None
    ) -> bool:
        """Until `done()`, checked now and whenever the watermark reaches `wake_at` (None: any
        rise), or `timeout` passes (False)."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            with self._cond:
                if done():
                    return True
                future: asyncio.Future[None] = loop.create_future()
                entry = (self._value + 1 if wake_at is None else wake_at, loop, future)
                self._async_waiters.append(entry)
            try:
                remaining = None if deadline is None else deadline - loop.time()
                if remaining is not None and remaining <= 0:
                    return False
                await asyncio.wait_for(future, remaining)
            except TimeoutError:
                return False
            finally:
                with self._cond:
                    if entry in self._async_waiters:
                        self._async_waiters.remove(entry)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
