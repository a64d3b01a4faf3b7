"""The reflector's watch-list: the initial state streamed by a watch into a temporary
store, swapped into the store at the initial-events-end bookmark; the watch then goes on
as the reflector's watch (client-go: tools/cache/reflector.go `watchList`, rules D17-D20).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import closing
from typing import Any, Generic, TypeVar

from kubeinformers.runtime.api.errors import is_expired, is_too_large_resource_version
from kubeinformers.runtime.api.listwatch import ListerWatcher, ListOptions
from kubeinformers.runtime.clock import Now
from kubeinformers.runtime.codec.gc_pause import paused_over
from kubeinformers.runtime.metrics import ReflectorCounters
from kubeinformers.runtime.reflector.backoff import is_watch_error_retriable
from kubeinformers.runtime.reflector.outage import OutageLog, is_server_unavailable
from kubeinformers.runtime.reflector.state import ReflectorState
from kubeinformers.runtime.reflector.support import (
    CONSISTENCY_DETECTOR_ENV,
    StopRequested,
    TempStore,
    TransformingStore,
    check_watch_list_consistency,
    env_true,
)
from kubeinformers.runtime.reflector.watch import StreamHandler, Watches, _Stream

T = TypeVar("T")

logger = logging.getLogger("kubeinformers.reflector")  # the reflector's logger

GC_PAUSE_LIMIT = 30.0  # a stall of watch-list's initial events this long turns the collector on


class WatchList(Generic[T]):
    """D18-D20: one watch-list per `run`; returns the still-open watch for the watch loop."""

    def __init__(
        self,
        lister_watcher: ListerWatcher[T],
        store: Any,
        state: ReflectorState,
        counters: ReflectorCounters,
        stream: StreamHandler,
        watches: Watches[T],
        *,
        name: str,
        type_description: str,
        backoff_wait: Callable[[threading.Event, BaseException | None], bool],
        watch_timeout: Callable[[], int],
        clock: Now,
        wait: Callable[[threading.Event, float], bool],
        outage: OutageLog,
        note_failure: Callable[[BaseException], None],
    ) -> None:
        self.lister_watcher = lister_watcher
        self.store = store
        self.state = state
        self.counters = counters
        self.stream = stream
        self.watches = watches
        self.name = name
        self.type_description = type_description
        self.backoff_wait = backoff_wait
        self.watch_timeout = watch_timeout
        self.clock = clock
        self.wait = wait
        self.outage = outage
        self.note_failure = note_failure  # the reflector's last_error()

    def run(self, stop: threading.Event) -> _Stream[T] | None:
        """D18-D20: stream the initial state; returns the still-open watch, None if stopped."""

        def retriable_with_side_effects(err: BaseException) -> bool:
            self.counters.watch_errors += 1
            self.note_failure(err)
            if is_watch_error_retriable(err):
                if is_server_unavailable(err):
                    self.outage.failed(f"watch-list of {self.type_description}", err)
                else:
                    logger.log(
                        self.outage.condition_level(logging.INFO, err, "watch-list retry"),
                        "%s: watch-list failed, backing off: %s",
                        self.name,
                        err,
                    )
                self.backoff_wait(stop, err)
                return True
            if is_expired(err) or is_too_large_resource_version(err):
                self.counters.expired += 1
                with self.state.lock:
                    self.state.rv_unavailable = True
                return True
            return False

        store = self.store
        transform = store.transformer if isinstance(store, TransformingStore) else None
        transform = transform if callable(transform) else None
        rv_holder = [""]

        def set_rv(rv: str) -> None:
            rv_holder[0] = rv

        while True:
            if stop.is_set():
                return None
            rv_holder[0] = ""
            last_known_rv = self.state.rewatch_resource_version()
            temp = TempStore(transform)
            options = ListOptions(
                resource_version=last_known_rv,
                resource_version_match="NotOlderThan",
                allow_watch_bookmarks=True,
                send_initial_events=True,
                timeout_seconds=self.watch_timeout(),
            )
            start = self.clock()
            try:
                w = self.watches.open(options, stop)
            except Exception as e:
                if retriable_with_side_effects(e):
                    continue
                raise
            if w is None:
                return None
            # Every stream the server begins re-sends the whole state: a cut one followed by
            # another is a relist (metrics: relists), not a watch restart.
            self.counters.watch_list_starts += 1
            self.counters.lists += 1
            try:
                # Thousands of survivors (see wire), for as long as the events keep coming.
                with closing(paused_over(w.events, GC_PAUSE_LIMIT)) as events:
                    done = self.stream.handle(
                        start,
                        events,
                        temp,
                        set_rv,
                        stop,
                        exit_on_initial_events_end=True,
                        started_at_rv=last_known_rv,
                    )
            except StopRequested:
                self.watches.close(w)
                return None
            except Exception as e:
                self.watches.close(w)
                if retriable_with_side_effects(e):
                    continue
                raise
            if done:
                break
            self.watches.close(w)  # closed before the bookmark: ask again
        resource_version = rv_holder[0]
        with self.state.lock:
            self.state.rv_unavailable = False
        try:
            if env_true(CONSISTENCY_DETECTOR_ENV):
                check_watch_list_consistency(
                    self.lister_watcher,
                    f"{self.name}: the watch-list result of {self.type_description}",
                    resource_version,
                    temp.list(),
                    transform,
                    lambda: self.wait(stop, 1.0) or stop.is_set(),
                )
            self.store.replace(temp.list(), resource_version)
        except BaseException:
            self.watches.close(w)
            raise
        self.state.set_last_sync_rv(resource_version)
        self.outage.recovered()
        self.outage.watching()
        return w


__all__ = ["GC_PAUSE_LIMIT", "WatchList"]
