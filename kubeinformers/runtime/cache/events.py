"""An informer's notifications as an async stream of typed events (`informer.events()`).

    async with informer.events(buffer=100) as events:
        async for event in events:
            match event:
                case Added(obj): ...
                case Updated(old, new): ...
                case Deleted(obj): ...       # obj may be a DeletedFinalStateUnknown tombstone

Each stream is one ordinary event handler on the informer, so it gets what every handler
gets (F8: an `Added(..., is_in_initial_list=True)` per cached object when it joins a running
informer; G2: in order). The handler's delivery thread hands events to the event loop with
`loop.call_soon_threadsafe`; nothing here blocks the loop.

Back-pressure: at most `buffer` events wait on the loop for the consumer. When they are not
consumed, the delivery thread of this stream waits, and further notifications collect in
this handler's own buffer in the informer (G1: unbounded, visible as `buffered` in
`informer.metrics().handlers`), never holding up the informer or other handlers. When the
informer stops, a delivery thread waiting for room gives up (G13): the stream ends after the
events already handed to the loop. A stream
that is closed (`aclose()`, leaving `async with`, or garbage-collected) unregisters itself.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeAlias, TypeVar

from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown
from kubeinformers.runtime.cache.handlers import ResourceEventHandler

__all__ = ["Added", "Deleted", "EventStream", "InformerEvent", "Updated"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
R = TypeVar("R")


class Registration(Protocol):
    """What `add_event_handler` returns, as the stream uses it."""

    def has_synced(self) -> bool: ...


class Subscribable(Protocol[T_co, R]):
    """What a stream needs of an informer (SharedIndexInformer has it)."""

    def add_event_handler(self, handler: ResourceEventHandler[T_co]) -> R: ...

    def remove_event_handler(self, registration: R) -> None: ...

    def on_stopped(self, callback: Callable[[], None]) -> None: ...

    def is_stopped(self) -> bool: ...

    def remove_on_stopped(self, callback: Callable[[], None]) -> None: ...


# How often a delivery thread waiting for buffer room looks whether its stream was closed or
# its informer is stopping.
_CLOSED_CHECK = 0.5


@dataclass(frozen=True, slots=True)
class Added(Generic[T]):
    """An object appeared in the cache; `is_in_initial_list` for the (re)list that brought it."""

    obj: T
    is_in_initial_list: bool = False


@dataclass(frozen=True, slots=True)
class Updated(Generic[T]):
    """An object changed (or was resynced: then `old` and `new` have one resourceVersion)."""

    old: T
    new: T


@dataclass(frozen=True, slots=True)
class Deleted(Generic[T]):
    """An object left the cache. `obj` is its final state, or a `DeletedFinalStateUnknown`
    tombstone (with the last cached state) when only a relist noticed the deletion (A5)."""

    obj: T | DeletedFinalStateUnknown[T]


InformerEvent: TypeAlias = Added[T] | Updated[T] | Deleted[T]


class _Closed:
    """Put on the loop queue when the stream ends."""


_CLOSED = _Closed()


class _Bridge(Generic[T]):
    """The handler registered on the informer: runs on its delivery thread; holds no reference
    to the stream, so an abandoned stream can be collected (and unregistered)."""

    __slots__ = ("_closed", "_room", "_stopped", "_target")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        queue: asyncio.Queue[InformerEvent[T] | _Closed],
        buffer: int,
        stopped: Callable[[], bool],
    ) -> None:
        # The loop and the stream's queue; None once closed, so that a closed bridge the
        # processor still holds a moment (its thread winding down) keeps no event alive.
        self._target: tuple[asyncio.AbstractEventLoop, asyncio.Queue[Any]] | None = (loop, queue)
        self._room = threading.Semaphore(buffer)
        self._closed = threading.Event()
        # The informer's `is_stopped`: true once it stops, before it waits for its handlers.
        self._stopped = stopped

    def _put(self, event: InformerEvent[T]) -> None:
        while not self._room.acquire(timeout=_CLOSED_CHECK):
            # G13: a stopping informer waits for this thread, and the consumer may be waiting
            # for the informer to stop (the end of `async with factory`): give up the event,
            # the stream ends once the informer has stopped.
            if self._closed.is_set() or self._stopped():
                return
        target = self._target
        if target is None:
            return
        try:
            target[0].call_soon_threadsafe(self._deliver, event)
        except RuntimeError:  # the loop has closed
            self.close()

    def _deliver(self, event: InformerEvent[T]) -> None:
        """On the loop: queue `event` for the stream, unless it was closed meanwhile (then
        the event is dropped, not left in a queue nobody reads, G8)."""
        target = self._target
        if target is not None:
            target[1].put_nowait(event)

    def on_add(self, obj: T, is_in_initial_list: bool) -> None:
        self._put(Added(obj, is_in_initial_list))

    def on_update(self, old: T, new: T) -> None:
        self._put(Updated(old, new))

    def on_delete(self, obj: T | DeletedFinalStateUnknown[T]) -> None:
        self._put(Deleted(obj))

    def consumed(self) -> None:
        self._room.release()

    def close(self) -> None:
        self._closed.set()
        self._target = None

    def __repr__(self) -> str:
        return "EventStream"


def _unregister(
    informer: Subscribable[Any, R],
    registration: R,
    bridge: _Bridge[Any],
    closer: Callable[[], None],
) -> None:
    bridge.close()
    informer.remove_event_handler(registration)
    informer.remove_on_stopped(closer)  # it holds the stream's queue and what is buffered


def _closer(
    loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[InformerEvent[T] | _Closed]
) -> Callable[[], None]:
    """Ends the stream when the informer stops (called on the informer's thread)."""

    def close() -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, _CLOSED)
        except RuntimeError:  # the loop has closed
            pass

    return close


class EventStream(Generic[T]):
    """`async for event in stream`: the informer's notifications for one subscriber.

    Create it with `informer.events()` inside a running event loop. Iteration ends when the
    stream is closed or the informer stops (also when its factory shuts down without ever
    having started it).
    """

    def __init__(self, informer: Subscribable[T, Any], buffer: int = 100) -> None:
        if buffer < 1:
            raise ValueError(f"buffer must be at least 1 event, got {buffer}")
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[InformerEvent[T] | _Closed] = asyncio.Queue()
        self._bridge: _Bridge[T] = _Bridge(self._loop, self._queue, buffer, informer.is_stopped)
        self._informer = informer
        self._registration: Registration = informer.add_event_handler(self._bridge)
        closer = _closer(self._loop, self._queue)
        self._finalizer = weakref.finalize(
            self, _unregister, informer, self._registration, self._bridge, closer
        )
        self._done = False
        informer.on_stopped(closer)

    def has_synced(self) -> bool:
        """This subscriber has received every object of the informer's initial list (G6)."""
        return self._registration.has_synced()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> InformerEvent[T]:
        if self._done:
            raise StopAsyncIteration
        item = await self._queue.get()
        if isinstance(item, _Closed):
            self._done = True
            self._finalizer()
            raise StopAsyncIteration
        self._bridge.consumed()
        return item

    async def aclose(self) -> None:
        """Unregister from the informer and let go of the events not read (G8: the stream
        object may live on, still bound to a name); a pending `__anext__` ends the
        iteration."""
        self._done = True
        self._finalizer()
        queue = self._queue
        while not queue.empty():
            queue.get_nowait()
        queue.put_nowait(_CLOSED)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
