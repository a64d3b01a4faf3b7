"""Fan-out of an informer's notifications to its handlers (client-go: shared_informer.go, G1-G8).

Every registered handler gets a `ProcessorListener`: a buffer and one delivery thread, so a
slow handler only grows its own buffer and never holds up the informer or the other handlers
(G1). Notifications of one listener are delivered one at a time, in the order they were
distributed (G2). A handler that raises is logged with the object's key and the listener goes
on with the next notification. A handler whose oldest buffered notification has waited
`lag_warning_after` seconds is reported once as falling behind, and once when it has caught
up (G10). The buffer is unbounded unless `max_buffer` is given; beyond it, a notification for
an object that already has one buffered is merged into it (G11). A listener that lags
buffers lazy twins of not-yet-built objects, so that another handler's read does not inflate
what its buffer holds (G12).
"""

from __future__ import annotations

import asyncio
import bisect
import inspect
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from typing import Any, Generic, TypeVar, cast

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
    object_resource_version,
)
from kubeinformers.runtime.cache.delta_fifo import CONSUMER_LINGER
from kubeinformers.runtime.cache.handlers import ResourceEventHandler
from kubeinformers.runtime.clock import Now
from kubeinformers.runtime.codec.drift import InvalidObjectError
from kubeinformers.runtime.codec.lazy import lazy_twin
from kubeinformers.runtime.metrics import HandlerMetrics, LatencyRecorder

T = TypeVar("T")

_log = logging.getLogger("kubeinformers.processor")

# Notification kinds. A notification is a tuple (kind, a, b):
#   (ADD, obj, is_in_initial_list), (UPDATE, old, new), (DELETE, obj_or_tombstone, None)
ADD = 0
UPDATE = 1
DELETE = 2
Notification = tuple[int, Any, Any]

_KIND_NAMES = {ADD: "add", UPDATE: "update", DELETE: "delete"}

_perf_counter = time.perf_counter
_bisect_left = bisect.bisect_left

# How long a stopping informer waits for one handler thread before logging that it is stuck.
_JOIN_WARN_AFTER = 5.0

LAG_WARNING_AFTER = 10.0
"""G10: a handler whose oldest buffered notification has waited this long (seconds) is
reported as falling behind; it has caught up when the oldest one is younger than half."""

TWIN_AFTER = 16
"""G12: a listener with this many notifications buffered is lagging: the objects it buffers
from then on (but those of initial-list adds) are lazy twins of the informer's (the same raw
bytes, built on their own)."""

# G10: how often (seconds, at most) the processor looks for handlers stuck with old notifications.
WATCHDOG_TICK = 1.0

# A buffered notification: (kind, a, b, buffered at); with max_buffer a list
# [kind, a, b, buffered at, key] that a later notification of the same object may rewrite.
_Entry = tuple[int, Any, Any, float] | list[Any]
_CANCELLED = -1  # a merged-away entry (an add whose object was deleted before delivery)


def determine_resync_period(requested: float, check_period: float) -> float:
    """The effective resync period of a handler (F6)."""
    if requested == 0:
        return 0.0
    if check_period == 0:
        # This informer does not resync: no handler ever does (F6).
        return 0.0
    return max(requested, check_period)


def _key_of(obj: object) -> str:
    try:
        return deletion_handling_meta_namespace_key(obj)
    except Exception:  # an object without metadata still deserves a log line
        return f"<no key: {type(obj).__name__}>"


def _twin_of(known: tuple[str, weakref.ref[Any]] | None, obj: Any) -> Any:
    """G12: `known` (resourceVersion, twin)'s twin if it is of `obj`'s version and still
    alive, else a new lazy twin of `obj` (`obj` itself if it is not lazy)."""
    if known is not None and known[0] != "" and known[0] == object_resource_version(obj):
        twin = known[1]()
        if twin is not None:
            return twin
    return lazy_twin(obj)


# G9: a listener remembers this many (key, resourceVersion) pairs it reported as invalid;
# beyond that a new one is still counted, and logged at DEBUG.
MAX_REPORTED_INVALID = 10_000


def _invalid_object_error(exc: BaseException) -> InvalidObjectError | None:
    """The InvalidObjectError `exc` is or was raised from (a handler may wrap it), else None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, InvalidObjectError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


async def _await(awaitable: Awaitable[None]) -> None:
    await awaitable


class ProcessorListener(Generic[T]):
    """One handler's buffer and delivery thread (G1, G2), its resync clock (G4, G5) and its
    sync tracking (G6).
    """

    def __init__(
        self,
        handler: ResourceEventHandler[T],
        requested_resync_period: float,
        resync_period: float,
        now: float,
        *,
        upstream_has_synced: Callable[[], bool],
        loop: asyncio.AbstractEventLoop | None = None,
        logger: logging.Logger | None = None,
        name: str = "",
        clock: Now = time.monotonic,
        max_buffer: int | None = None,
        lag_warning_after: float = LAG_WARNING_AFTER,
        informer: str = "",
    ) -> None:
        if max_buffer is not None and max_buffer < 1:
            raise ValueError(
                f"max_buffer must be at least 1 (or None: unbounded), not {max_buffer}"
            )
        if lag_warning_after <= 0:
            raise ValueError(f"lag_warning_after must be > 0 seconds, not {lag_warning_after}")
        self.handler = handler
        self.name = name or repr(handler)  # the `handler` label of its metrics
        self.informer = informer
        self.clock = clock
        self.max_buffer = max_buffer
        self.lag_warning_after = lag_warning_after
        self.requested_resync_period = requested_resync_period
        self.resync_period = resync_period
        self.next_resync = now + resync_period  # G5
        self.loop = loop
        self._upstream_has_synced = upstream_has_synced
        self._log = logger or _log
        self._buffer: deque[_Entry] = deque()
        # max_buffer (G11): key -> its newest buffered entry, while that entry is buffered.
        self._newest: dict[str, list[Any]] = {}
        self._cancelled = 0  # entries merged away but still in the buffer
        # G12, while lagging: key -> (resourceVersion, a weak reference to the twin) of the
        # object's newest twin buffered, so that its next update's old object is that twin
        # (written by `add` only). Weak: a twin delivered and dropped is not kept alive.
        self._twins: dict[str, tuple[str, weakref.ref[Any]]] = {}
        self.coalesced = 0  # notifications merged into a buffered one (written under _cond)
        # G10: reported as falling behind (transitions under _cond) and since when.
        self.falling_behind = False
        self._behind_since = 0.0
        self._cond = threading.Condition(threading.Lock())
        self._idle = False  # the delivery thread waits for a notification (set under _cond)
        self._closed = False
        # G6: initial-list adds queued for this listener, and those whose on_add returned. Each
        # counter has one writer (the producer, the delivery thread), so neither needs a lock.
        self._initial_queued = 0
        self._initial_done = 0
        # G7: the key of the first initial-list add whose callback raised (written by the
        # delivery thread): this registration will never report synced; health() says so.
        self.failed_initial_add: str | None = None
        self._thread: threading.Thread | None = None
        # Metrics, written by the delivery thread only (see metrics.py).
        self.latency = LatencyRecorder()
        self.errors = 0
        self.invalid_objects = 0  # G9: callbacks that raised on an object failing validation
        self._reported_invalid: set[tuple[str, str]] = set()
        self._said_loop_closed = False  # G14: the closed loop was said once

    # -- fed by the processor ------------------------------------------------------------------

    def add(self, notification: Notification, now: float | None = None) -> None:
        """Queue a notification (`now`: the clock when it was distributed); never blocks (G1).
        Dropped once the listener is closed (G8).

        Lock-free unless the delivery thread is idle or the buffer is bounded: the append is
        published before `_idle` is read, and the delivery thread sets `_idle` before it looks
        at the buffer under the lock, so either it sees the notification or we see it idle
        and wake it.
        """
        if self._closed:
            return
        if notification[0] == ADD and notification[2]:
            self._initial_queued += 1
        if now is None:
            now = self.clock()
        buffer = self._buffer
        if len(buffer) >= TWIN_AFTER:
            # Not an initial-list add: the cache keeps that object, a twin would cost twice.
            if notification[0] != ADD or not notification[2]:
                notification = self._twinned(notification)
        elif self._twins:
            self._twins.clear()  # caught up: the twins it remembers are delivered
        if self.max_buffer is None:
            buffer.append((*notification, now))
        else:
            self._add_bounded(notification[0], notification[1], notification[2], now)
        if not self.falling_behind:
            try:
                if now - buffer[0][3] >= self.lag_warning_after:
                    self._report_behind(now)
            except IndexError:  # emptied by the delivery thread meanwhile
                pass
        if self._idle:
            with self._cond:
                self._cond.notify()

    def _twinned(self, notification: Notification) -> Notification:
        """G12: the notification with a lazy twin in place of each lazy object it carries, so
        that no other handler's read inflates what this buffer holds. An object whose version
        has a twin buffered already (an update's old object, a resync) gets that twin."""
        kind, a, b = notification
        obj = b if kind == UPDATE else a
        key = _key_of(obj)
        twins = self._twins
        known = twins.pop(key, None)
        if isinstance(obj, DeletedFinalStateUnknown):
            # A relist's tombstone (or LeftShard): no metadata of its own to match a twin by,
            # and rare; buffered as it is (its twin, if any, forgotten with the object).
            return notification
        twin = _twin_of(known, obj)
        if kind != DELETE and twin is not obj:
            try:
                twins[key] = (object_resource_version(obj), weakref.ref(twin))
            except TypeError:  # a model without weak references: its old objects are twins
                pass
        if kind != UPDATE:
            return (kind, twin, b)
        if a is b:  # a resync: the same object twice
            return (kind, twin, twin)
        return (kind, _twin_of(known, a), twin)

    def _add_bounded(self, kind: int, a: Any, b: Any, now: float) -> None:
        """G11: within `max_buffer`, buffer as usual; beyond it, merge into the object's
        buffered notification if it has one (its newest state wins), else buffer it."""
        key = _key_of(b if kind == UPDATE else a)
        with self._cond:
            if self._closed:
                return
            newest = self._newest
            if len(self._buffer) - self._cancelled >= cast(int, self.max_buffer):
                entry = newest.get(key)
                if entry is not None and self._merge(entry, kind, a, b):
                    self.coalesced += 1
                    if entry[0] == _CANCELLED:
                        del newest[key]
                    return
            entry = [kind, a, b, now, key]
            self._buffer.append(entry)
            newest[key] = entry

    def _merge(self, entry: list[Any], kind: int, a: Any, b: Any) -> bool:
        """Fold a notification into the object's buffered `entry`; False if it cannot be
        (after a delete, an add is a new object and is buffered on its own)."""
        buffered = entry[0]
        if buffered == ADD:
            if kind == UPDATE:
                entry[1] = b  # added, then changed: the handler gets the add of the new state
                return True
            if kind == DELETE:
                # Added and deleted before the handler saw it: neither is delivered.
                if entry[2]:
                    self._initial_queued -= 1  # G6: that initial add will never be handed out
                entry[0] = _CANCELLED
                entry[1] = entry[2] = None
                self._cancelled += 1
                return True
            return False
        if buffered == UPDATE:
            if kind == UPDATE:
                entry[2] = b  # from the old state the handler knows to the newest
                return True
            if kind == DELETE:
                entry[0], entry[1], entry[2] = DELETE, a, None
                return True
        return False

    def _take(self) -> _Entry | None:
        """The next buffered entry to deliver (None: none, or a merged-away one)."""
        if self.max_buffer is None:
            try:
                return self._buffer.popleft()
            except IndexError:  # cleared by close() since
                return None
        with self._cond:
            try:
                entry = cast(list[Any], self._buffer.popleft())
            except IndexError:
                return None
            key = entry[4]
            if self._newest.get(key) is entry:
                del self._newest[key]
            if entry[0] == _CANCELLED:
                self._cancelled -= 1
                return None
            return entry

    # -- falling behind (G10) -------------------------------------------------------------------

    def _oldest_age(self, now: float) -> float:
        try:
            return max(0.0, now - self._buffer[0][3])
        except IndexError:
            return 0.0

    def unsynced_description(self) -> str:
        """G7: why this registration will never report synced (for health())."""
        return (
            f"{self.name} will never report synced: its on_add raised on the initial add of "
            f"{self.failed_initial_add}"
        )

    def lag_description(self) -> str:
        """`<name>: <n> notifications buffered, the oldest <s> s old` (for health())."""
        return (
            f"{self.name} is falling behind: {self.pending()} notifications buffered, the "
            f"oldest {self._oldest_age(self.clock()):.1f} s old"
        )

    def _report_behind(self, now: float) -> None:
        with self._cond:
            if self.falling_behind or self._closed:
                return
            self.falling_behind = True
            self._behind_since = now
            depth = len(self._buffer) - self._cancelled
            age = self._oldest_age(now)
        self._log.warning(
            "%sevent handler %s is falling behind: %d notifications buffered, the oldest "
            "waiting for %.1f s (it is handed notifications faster than it handles them; the "
            "informer and the other handlers are not held up%s)",
            f"{self.informer}: " if self.informer else "",
            self.name,
            depth,
            age,
            ""
            if self.max_buffer is None
            else f"; beyond max_buffer={self.max_buffer} notifications of one object are merged",
        )

    def _check_caught_up(self) -> None:
        now = self.clock()
        if self._oldest_age(now) >= self.lag_warning_after / 2:
            return
        with self._cond:
            if not self.falling_behind:
                return
            self.falling_behind = False
            behind_for = now - self._behind_since
            depth = len(self._buffer) - self._cancelled
        self._log.info(
            "%sevent handler %s has caught up (%d notifications buffered); it was behind for "
            "%.1f s",
            f"{self.informer}: " if self.informer else "",
            self.name,
            depth,
            behind_for,
        )

    def start(self, thread_name: str) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop delivering: buffered notifications are dropped, an in-flight callback finishes (G8)."""
        with self._cond:
            self._closed = True
            self._buffer.clear()
            self._newest.clear()
            self._twins = {}
            self._cancelled = 0
            self._cond.notify_all()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the delivery thread; True if it has ended (or never started)."""
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        return not thread.is_alive()

    @property
    def closed(self) -> bool:
        return self._closed

    def pending(self) -> int:
        """Notifications buffered and not yet handed to the handler."""
        with self._cond:
            return len(self._buffer) - self._cancelled

    def metrics(self) -> HandlerMetrics:
        """Buffered notifications, callbacks delivered and failed, time spent in them, the age
        of the oldest buffered one, whether it is falling behind, merged notifications."""
        latency = self.latency.snapshot()
        return HandlerMetrics(
            self.name,
            self.pending(),
            latency.count,
            self.errors,
            self.invalid_objects,
            latency,
            oldest_buffered_age=self._oldest_age(self.clock()),
            falling_behind=self.falling_behind,
            coalesced=self.coalesced,
            max_buffer=self.max_buffer,
        )

    # -- resync (G4, G5) -----------------------------------------------------------------------

    def should_resync(self, now: float) -> bool:
        return self.resync_period != 0 and now >= self.next_resync

    def determine_next_resync(self, now: float) -> None:
        self.next_resync = now + self.resync_period

    # -- sync tracking (G6) --------------------------------------------------------------------

    def has_synced(self) -> bool:
        """The informer has synced and every initial-list add queued here has returned (G6).

        An initial add whose handler raised never counts as returned (G7), as in client-go.
        """
        if not self._upstream_has_synced():
            return False
        with self._cond:
            return self._initial_queued == self._initial_done

    # -- delivery thread -----------------------------------------------------------------------

    def _run(self) -> None:
        # The lock is taken only to wait: while notifications are buffered, each is taken with
        # one atomic popleft (see `add` for the hand-over). An emptied buffer is polled once
        # after CONSUMER_LINGER before the thread goes idle: `add` wakes only an idle thread,
        # so a stream of notifications costs one wake-up per linger, not one per notification.
        buffer = self._buffer
        cond = self._cond
        bounded = self.max_buffer is not None
        entry: _Entry | None
        while True:
            if not buffer:
                with cond:
                    if not self._closed:
                        cond.wait(CONSUMER_LINGER)
                    if not buffer:
                        self._idle = True
                        while not buffer and not self._closed:
                            cond.wait()
                        self._idle = False
            if self._closed:
                return
            if bounded:
                entry = self._take()
                if entry is None:
                    continue
            else:
                try:
                    entry = buffer.popleft()
                except IndexError:  # cleared by close() since
                    continue
            self._deliver(entry)
            if self.falling_behind:
                self._check_caught_up()

    def _deliver(self, entry: _Entry) -> None:
        kind, a, b = entry[0], entry[1], entry[2]
        handler = self.handler
        started = _perf_counter()
        try:
            if kind == ADD:
                result = handler.on_add(a, b)
            elif kind == UPDATE:
                result = handler.on_update(a, b)
            else:
                result = handler.on_delete(a)
            if result is not None and inspect.isawaitable(result):
                self._run_on_loop(result)
        except Exception as exc:
            self.latency.observe(_perf_counter() - started)
            self.errors += 1
            obj = b if kind == UPDATE else a
            initial = kind == ADD and b
            if initial and self.failed_initial_add is None:
                self.failed_initial_add = _key_of(obj)
            invalid = _invalid_object_error(exc)
            if invalid is not None:
                self._report_invalid(invalid, kind, obj)
                return  # G7, G9
            if isinstance(exc, _LoopClosed):
                # G14: the same for every notification from now on: said once, no traceback.
                said = self._said_loop_closed
                self._said_loop_closed = True
                self._log.log(
                    logging.DEBUG if said else logging.ERROR,
                    "event handler %r dropped the %s of %s: %s%s",
                    handler,
                    _KIND_NAMES[kind],
                    _key_of(obj),
                    exc,
                    " (said before)" if said else "; its later notifications are dropped too",
                )
                return
            self._log.exception(
                "event handler %r failed on %s of %s; going on with the next notification%s",
                handler,
                _KIND_NAMES[kind],
                _key_of(obj),
                "; this handler's registration will never report synced (an initial add "
                "that raised is never counted as handled)"
                if initial
                else "",
            )
            return  # G7: a failed initial add is never counted as finished
        # LatencyRecorder.observe, inlined: this runs once per notification and handler.
        elapsed = _perf_counter() - started
        latency = self.latency
        latency.counts[_bisect_left(latency.bounds, elapsed)] += 1
        latency.sum += elapsed
        if elapsed > latency.max:
            latency.max = elapsed
        if kind == ADD and b:
            self._initial_done += 1

    def _report_invalid(self, err: InvalidObjectError, kind: int, obj: object) -> None:
        """G9: a handler read an object that does not validate against its model. Said once per
        object and change (key and resourceVersion) at WARNING, without a traceback (the
        object's own ERROR came from the decoder that found it); every occurrence is counted."""
        self.invalid_objects += 1
        key = err.key or _key_of(obj)
        rv = object_resource_version(obj)
        marker = (key, rv)
        first = marker not in self._reported_invalid
        if first and len(self._reported_invalid) < MAX_REPORTED_INVALID:
            self._reported_invalid.add(marker)
        path = getattr(err, "path", None)  # InvalidFieldError: the one field read (K11)
        self._log.log(
            logging.WARNING if first else logging.DEBUG,
            "event handler %s skipped the %s of %s %r (resourceVersion %s): %s does not validate "
            "against %s.%s; regenerate the models from this cluster's API (kubeinformers "
            "generate --cluster) to read it. The handler gets the object's next version%s",
            self.name,
            _KIND_NAMES[kind],
            err.model.__name__,
            key,
            rv or "unknown",
            f"its field {path}" if path else "it",
            err.model.__module__,
            err.model.__qualname__,
            "; this version is reported once." if first else " (reported before).",
        )

    def _run_on_loop(self, awaitable: Awaitable[None]) -> None:
        """Run a coroutine handler's result on the registration's loop and wait for it, so the
        listener's callbacks stay one at a time and in order (G2).
        """
        coro: Coroutine[Any, Any, None] = (
            awaitable if inspect.iscoroutine(awaitable) else _await(awaitable)
        )
        loop = self.loop
        if loop is None:
            coro.close()
            raise RuntimeError(
                "handler returned a coroutine but was registered without an event loop; "
                "pass loop=... to add_event_handler"
            )
        try:
            if loop.is_closed():
                raise RuntimeError("Event loop is closed")
            future: Future[None] = asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:
            coro.close()  # G14: never run, and said so below, not as "never awaited"
            raise _LoopClosed(
                "the event loop this coroutine handler was registered with (loop=...) has "
                "closed, so the notification is dropped: remove the handler "
                "(informer.remove_event_handler) or shut the factory down before that loop "
                "ends (leave `async with factory` inside it)"
            ) from None

        def wake(_: Future[None]) -> None:
            with self._cond:
                self._cond.notify_all()

        future.add_done_callback(wake)
        with self._cond:
            while not future.done() and not self._closed:
                self._cond.wait()
        if not future.done():  # closed while the coroutine runs: do not wait for it (G8)
            future.cancel()
            return
        future.result()  # re-raises the coroutine's exception for logging


class _LoopClosed(RuntimeError):
    """A coroutine handler's event loop has closed (G14)."""


class SharedProcessor(Generic[T]):
    """Holds the listeners of one informer and distributes notifications to them (G1-G8)."""

    def __init__(
        self,
        *,
        name: str = "",
        clock: Now = time.monotonic,
        logger: logging.Logger | None = None,
    ) -> None:
        self.name = name
        self.clock = clock
        self._log = logger or _log
        self._lock = threading.Lock()
        # listener -> "syncing" flag (G4); every listener starts flagged.
        self._listeners: dict[ProcessorListener[T], bool] = {}
        # Every listener whose thread we started, so stop() can join even removed ones.
        self._started_listeners: list[ProcessorListener[T]] = []
        self._counter = 0
        self._watchdog: threading.Thread | None = None  # G10 for stuck handlers
        self._watchdog_stop = threading.Event()
        self._started = False
        self._stopped = False

    @property
    def started(self) -> bool:
        return self._started

    def listeners(self) -> list[ProcessorListener[T]]:
        with self._lock:
            return list(self._listeners)

    def has_listener(self, listener: ProcessorListener[T]) -> bool:
        with self._lock:
            return listener in self._listeners

    def add_listener(self, listener: ProcessorListener[T]) -> None:
        with self._lock:
            self._listeners[listener] = True
            if self._started and not self._stopped:
                self._start_listener(listener)

    def remove_listener(self, listener: ProcessorListener[T]) -> bool:
        """Unregister a listener and, if running, close it (G8). False if it was not registered."""
        with self._lock:
            if listener not in self._listeners:
                return False
            del self._listeners[listener]
        listener.close()
        return True

    def distribute(self, notification: Notification, sync: bool) -> None:
        """Give a notification to every listener, or only to the syncing ones for a sync (F10).

        Before start the listeners buffer it and deliver once started (G3); after stop nothing
        is delivered.
        """
        with self._lock:
            if self._stopped:
                return
            now = self.clock()
            for listener, syncing in self._listeners.items():
                if sync and not syncing:
                    continue
                try:
                    listener.add(notification, now)
                except Exception:
                    # A bug of ours in one listener's buffering must not cost the others
                    # this notification, nor the informer the rest of a relist (G2).
                    self._log.exception(
                        "could not buffer a notification of %s for handler %r; the other "
                        "handlers still get it",
                        _key_of(notification[2] if notification[0] == UPDATE else notification[1]),
                        listener.handler,
                    )

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
            for listener in self._listeners:
                self._start_listener(listener)
            self._watchdog = threading.Thread(
                target=self._watch_lag,
                name=f"kubeinformers-lag-{self.name or 'informer'}",
                daemon=True,
            )
            self._watchdog.start()

    def _watch_lag(self) -> None:
        """G10 for a handler stuck while nothing new arrives (a new notification checks its
        listener itself): every second (or half the smallest `lag_warning_after`), report
        the listeners whose oldest buffered notification has waited too long."""
        while True:
            with self._lock:
                listeners = list(self._listeners)
            tick = min([WATCHDOG_TICK] + [lst.lag_warning_after / 2 for lst in listeners])
            if self._watchdog_stop.wait(tick):
                return
            now = self.clock()
            for listener in listeners:
                if (
                    not listener.falling_behind
                    and listener._oldest_age(now) >= listener.lag_warning_after
                ):
                    listener._report_behind(now)

    def _start_listener(self, listener: ProcessorListener[T]) -> None:
        self._counter += 1
        self._started_listeners = [
            lst for lst in self._started_listeners if lst._thread and lst._thread.is_alive()
        ]
        self._started_listeners.append(listener)
        listener.start(f"kubeinformers-handler-{self.name or 'informer'}-{self._counter}")

    def stop(self) -> None:
        """Close every listener (G8) and forget them; join with `join()`."""
        self._watchdog_stop.set()
        with self._lock:
            self._stopped = True
            listeners = list(self._listeners)
            self._listeners.clear()
        for listener in listeners:
            listener.close()

    def join(self) -> None:
        """Wait for every delivery thread started by this processor (after `stop()`)."""
        with self._lock:
            started = list(self._started_listeners)
            watchdog = self._watchdog
        if watchdog is not None and watchdog is not threading.current_thread():
            watchdog.join()
        for listener in started:
            listener.close()
            while not listener.join(_JOIN_WARN_AFTER):
                self._log.warning(
                    "event handler %r is still running %.0f s after the informer stopped",
                    listener.handler,
                    _JOIN_WARN_AFTER,
                )

    def should_resync(self) -> bool:
        """Recompute every listener's syncing flag; True iff any listener is due (G4)."""
        with self._lock:
            now = self.clock()
            needed = False
            for listener in self._listeners:
                due = listener.should_resync(now)
                self._listeners[listener] = due
                if due:
                    needed = True
                    listener.determine_next_resync(now)
            return needed

    def resync_check_period_changed(self, check_period: float) -> None:
        """Recompute each listener's effective period against a new check period (F5)."""
        with self._lock:
            for listener in self._listeners:
                listener.resync_period = determine_resync_period(
                    listener.requested_resync_period, check_period
                )


__all__ = [
    "ADD",
    "LAG_WARNING_AFTER",
    "DELETE",
    "UPDATE",
    "Notification",
    "ProcessorListener",
    "SharedProcessor",
    "TWIN_AFTER",
    "determine_resync_period",
]
