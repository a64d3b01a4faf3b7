"""A watch, from opening it to applying its events to a store (client-go: reflector.go
`handleAnyWatch`, rules D12-D14, D19).

`Watches` opens and closes the reflector's watches, keeping the open one where a stop finds
it. `handle_watch` applies one stream's events to a store — a free function, as in Go, for
the watch loop (store = the informer's queue) and the watch-list (store = the temporary
store); `StreamHandler` holds a reflector's settings for it, so each caller passes only what
varies per stream.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator, Iterator
from typing import Any, Generic, TypeVar

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.keys import (
    meta_namespace_key,
    object_annotations,
    object_resource_version,
)
from kubeinformers.runtime.api.listwatch import (
    INITIAL_EVENTS_END_ANNOTATION,
    ListerWatcher,
    ListOptions,
    Status,
    Watch,
)
from kubeinformers.runtime.clock import Now
from kubeinformers.runtime.metrics import ReflectorCounters
from kubeinformers.runtime.reflector.state import ReflectorState
from kubeinformers.runtime.reflector.support import (
    BookmarkStore,
    ResourceVersionUpdater,
    StopRequested,
    VeryShortWatchError,
    WatchStore,
    error_from_status,
)

logger = logging.getLogger("kubeinformers.reflector")

T = TypeVar("T")

VERY_SHORT_WATCH = 1.0  # D14: seconds
_TABLE_API_VERSIONS = frozenset({"meta.k8s.io/v1", "meta.k8s.io/v1beta1"})
WATCH_LIST_WARNING_PERIOD = 10.0  # D20: seconds between "still waiting for the bookmark" logs


def _key_or_repr(obj: Any) -> str:
    """An event object's key for a log line (its repr, shortened, when it has none)."""
    try:
        return meta_namespace_key(obj)
    except Exception:
        text = repr(obj)
        return text if len(text) <= 100 else text[:97] + "..."


def handle_watch(
    start: float,
    events: Iterator[Any],
    store: WatchStore,
    set_rv: Callable[[str], None],
    stop: threading.Event,
    *,
    name: str,
    expected_type: type | None,
    type_description: str,
    expected_gvk: tuple[str, str] | None = None,
    clock: Now,
    resync_error: Callable[[], BaseException | None] = lambda: None,
    exit_on_initial_events_end: bool = False,
    started_at_rv: str | None = None,
    counters: ReflectorCounters | None = None,
) -> bool:
    """D12-D14: apply events to `store`; True when the initial-events-end bookmark arrived.

    Skipped with a log: objects not of `expected_type`, dicts whose (apiVersion, kind) is not
    `expected_gvk`, Tables, objects without metadata.

    Returns on a clean close (or, with `exit_on_initial_events_end`, at that bookmark). Raises
    the ERROR event's Status as ApiStatusError, VeryShortWatchError, the resync error, or
    StopRequested.

    `counters` (the reflector's metrics) counts events by type and skipped events.
    """
    c = counters if counters is not None else ReflectorCounters()
    add, update, delete = store.add, store.update, store.delete
    bookmark_fn = store.bookmark if isinstance(store, BookmarkStore) else None
    update_rv_fn = (
        store.update_resource_version if isinstance(store, ResourceVersionUpdater) else None
    )
    # D13: a watch from "" or "0" may replay synthetic ADDEDs out of RV order.
    record_rv = started_at_rv not in ("", "0")
    event_count = 0
    initial_events_end = False
    warn_at = clock() + WATCH_LIST_WARNING_PERIOD if exit_on_initial_events_end else None
    for event in events:
        if stop.is_set():
            raise StopRequested
        etype = event.type
        obj = event.object
        if etype == "ERROR":
            c.error_events += 1
            raise (
                error_from_status(obj)
                if isinstance(obj, Status)
                else ApiStatusError(
                    0, "", f"{name}: watch ERROR event with a non-Status object: {obj!r}"
                )
            )
        # D12 compares exact Go types; here a subclass is the model (lazy decoding builds one).
        if expected_type is not None and not isinstance(obj, expected_type):
            logger.error(
                "%s: expected type %s, but watch event object had type %s",
                name,
                type_description,
                type(obj).__qualname__,
            )
            c.skipped += 1
            continue
        if type(obj) is dict:  # the Unstructured case
            gvk = (obj.get("apiVersion"), obj.get("kind"))
            if expected_gvk is not None and gvk != expected_gvk:
                logger.error(
                    "%s: expected gvk %s, but watch event object had gvk %s",
                    name,
                    expected_gvk,
                    gvk,
                )
                c.skipped += 1
                continue
            if gvk[1] == "Table" and gvk[0] in _TABLE_API_VERSIONS:
                logger.error("%s: received a Table in a watch; skipping it", name)
                c.skipped += 1
                continue
        try:
            rv = object_resource_version(obj)
        except Exception:
            logger.error("%s: unable to understand watch event %s %r", name, etype, obj)
            c.skipped += 1
            continue
        try:
            if etype == "ADDED":
                c.added += 1
                add(obj)
            elif etype == "MODIFIED":
                c.modified += 1
                update(obj)
            elif etype == "DELETED":
                c.deleted += 1
                delete(obj)
            elif etype == "BOOKMARK":
                c.bookmarks += 1
                if object_annotations(obj).get(INITIAL_EVENTS_END_ANNOTATION) == "true":
                    initial_events_end = True
                if bookmark_fn is not None:
                    bookmark_fn(rv)
            else:
                c.skipped += 1
                logger.error("%s: unable to understand watch event type %r", name, etype)
        except Exception as e:  # F15: say which object, and why
            logger.error(
                "%s: unable to apply %s event of %s (resourceVersion %s) to the store: %s",
                name,
                etype,
                _key_or_repr(obj),
                rv,
                e,
            )
        if not record_rv and etype != "ADDED":
            record_rv = True
        if record_rv:
            set_rv(rv)
            if update_rv_fn is not None:
                update_rv_fn(rv)
        event_count += 1
        if exit_on_initial_events_end:
            if initial_events_end:
                logger.debug(
                    "%s: initial events of %s ended after %d events",
                    name,
                    type_description,
                    event_count,
                )
                return True
            now = clock()
            if warn_at is not None and now >= warn_at:
                logger.warning(
                    "%s: awaiting the initial-events-end bookmark of %s (%d events so far)",
                    name,
                    type_description,
                    event_count,
                )
                warn_at = now + WATCH_LIST_WARNING_PERIOD
    if stop.is_set():
        raise StopRequested
    resync_err = resync_error()
    if resync_err is not None:
        raise resync_err
    if clock() - start < VERY_SHORT_WATCH and event_count == 0:
        raise VeryShortWatchError(name)
    logger.debug("%s: watch of %s closed after %d events", name, type_description, event_count)
    return initial_events_end


__all__ = ["VERY_SHORT_WATCH", "WATCH_LIST_WARNING_PERIOD", "handle_watch"]


class _Stream(Generic[T]):
    """An open watch and its one event iterator (a watch-list hands both on to the watch loop)."""

    __slots__ = ("events", "watch")

    def __init__(self, watch: Watch[T]) -> None:
        self.watch = watch
        self.events: Iterator[Any] = iter(watch)


class StreamHandler:
    """A reflector's settings for `handle_watch`, fixed at construction."""

    __slots__ = (
        "clock",
        "counters",
        "expected_gvk",
        "expected_type",
        "name",
        "resync_error",
        "type_description",
    )

    def __init__(
        self,
        *,
        name: str,
        expected_type: type | None,
        type_description: str,
        expected_gvk: tuple[str, str] | None,
        clock: Now,
        resync_error: Callable[[], BaseException | None],
        counters: ReflectorCounters,
    ) -> None:
        self.name = name
        self.expected_type = expected_type
        self.type_description = type_description
        self.expected_gvk = expected_gvk
        self.clock = clock
        self.resync_error = resync_error
        self.counters = counters

    def handle(
        self,
        start: float,
        events: Iterator[Any],
        store: WatchStore,
        set_rv: Callable[[str], None],
        stop: threading.Event,
        *,
        exit_on_initial_events_end: bool = False,
        started_at_rv: str | None = None,
    ) -> bool:
        """`handle_watch` of one stream into `store` with these settings."""
        return handle_watch(
            start,
            events,
            store,
            set_rv,
            stop,
            name=self.name,
            expected_type=self.expected_type,
            type_description=self.type_description,
            expected_gvk=self.expected_gvk,
            clock=self.clock,
            resync_error=self.resync_error,
            exit_on_initial_events_end=exit_on_initial_events_end,
            started_at_rv=started_at_rv,
            counters=self.counters,
        )


class Watches(Generic[T]):
    """Opens and closes a reflector's watches; the open one is `state.current_watch`, where
    the reflector's stop helper (and a failed resync) find it to end it."""

    __slots__ = ("counters", "lister_watcher", "state")

    def __init__(
        self, lister_watcher: ListerWatcher[T], state: ReflectorState, counters: ReflectorCounters
    ) -> None:
        self.lister_watcher = lister_watcher
        self.state = state
        self.counters = counters

    def open(self, options: ListOptions, stop: threading.Event) -> _Stream[T] | None:
        """Start a watch and register it so `stop` can end it; None if stop was already set."""
        w = self.lister_watcher.watch(options)
        self.counters.watch_starts += 1
        with self.state.lock:
            self.state.current_watch = w
        if stop.is_set():
            w.stop()
            return None
        if self.state.resync_error is not None:
            w.stop()  # the resync timer failed meanwhile: end at once so the handler reports it
        return _Stream(w)

    def close(self, stream: _Stream[T]) -> None:
        """Stop the watch and close its iterator (a generator releases its connection then)."""
        w = stream.watch
        with self.state.lock:
            if self.state.current_watch is w:
                self.state.current_watch = None
        w.stop()
        events = stream.events
        if isinstance(events, Generator):  # what __iter__ of a watch returns
            try:
                events.close()
            except ValueError:  # still running in another thread: it ends by itself
                pass
