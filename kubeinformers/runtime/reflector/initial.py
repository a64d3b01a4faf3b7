"""The reflector's initial state: the paged LIST and the streaming watch-list.

`Reflector` fills its store in one of two ways before it watches (client-go:
tools/cache/reflector.go, list and watchList): a paged LIST at the relist resourceVersion
(D6-D9) or a watch-list that streams the initial state into a temporary store (D17-D20). Both
live here as a mixin, apart from the run and watch loops, so that reflector.py stays one
concept; `Reflector` inherits `InitialState` and provides everything declared below.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from kubeinformers.runtime.api.errors import is_expired, is_too_large_resource_version
from kubeinformers.runtime.api.listwatch import ListerWatcher, ListOptions, ObjectList
from kubeinformers.runtime.client.pager import DEFAULT_PAGE_SIZE, list_pages
from kubeinformers.runtime.codec.wire import gc_paused
from kubeinformers.runtime.metrics import ReflectorCounters
from kubeinformers.runtime.outage import OutageLog, is_server_unavailable
from kubeinformers.runtime.reflector.backoff import is_watch_error_retriable
from kubeinformers.runtime.reflector.support import (
    CONSISTENCY_DETECTOR_ENV,
    StopRequested,
    TempStore,
    check_watch_list_consistency,
    env_true,
    wrap_list_error,
)
from kubeinformers.runtime.reflector.watch_handler import _Stream, handle_watch

T = TypeVar("T")

logger = logging.getLogger("kubeinformers.reflector")  # the reflector's logger, as before

GC_PAUSE_LIMIT = 30.0  # seconds the collector may stay off during watch-list's initial events


class InitialState(Generic[T]):
    """LIST or watch-list into the store: the mixin half of `Reflector` (see reflector.py)."""

    # Set by Reflector.__init__; declared here for the type checker.
    lister_watcher: ListerWatcher[T]
    counters: ReflectorCounters
    store: Any
    name: str
    type_description: str
    page_size: int
    _clock: Callable[[], float]
    _wait: Callable[[threading.Event, float], bool]
    _lock: threading.Lock
    _rv_unavailable: bool
    _paginated_result: bool
    _interrupt: threading.Event | None
    expected_type: type | None
    expected_gvk: tuple[str, str] | None
    _resync_error: BaseException | None
    outage: OutageLog

    if TYPE_CHECKING:  # provided by Reflector

        def _relist_resource_version(self) -> str: ...
        def _rewatch_resource_version(self) -> str: ...
        def _set_last_sync_rv(self, rv: str) -> None: ...
        def _watch_timeout(self) -> int: ...
        def _backoff_wait(
            self, stop: threading.Event, err: BaseException | None = None
        ) -> bool: ...
        def _open_watch(self, options: ListOptions, stop: threading.Event) -> _Stream[T] | None: ...
        def _close_watch(self, stream: _Stream[T]) -> None: ...

    # ----------------------------------------------------------------------------- streams

    def _handle_watch(
        self,
        start: float,
        events: Iterator[Any],
        store: Any,
        set_rv: Callable[[str], None],
        stop: threading.Event,
        *,
        exit_on_initial_events_end: bool = False,
        started_at_rv: str | None = None,
    ) -> bool:
        """One stream into `store` (watch_handler.handle_watch) with this reflector's settings;
        the watch loop and watch-list both use it."""
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
            clock=self._clock,
            resync_error=lambda: self._resync_error,
            exit_on_initial_events_end=exit_on_initial_events_end,
            started_at_rv=started_at_rv,
            counters=self.counters,
        )

    # ----------------------------------------------------------------------------- list

    def _list(self, stop: threading.Event) -> None:
        """D6-D9: paged LIST at the relist RV, one immediate retry at "" on 410/too-large."""
        rv = self._relist_resource_version()
        options = ListOptions(resource_version=rv)
        # D7: choose the page size once per attempt; the D8 retry reuses it.
        if self.page_size:
            page_size = self.page_size
        elif self._paginated_result:
            page_size = DEFAULT_PAGE_SIZE
        elif rv not in ("", "0"):
            page_size = 0  # let the watch cache serve it
        else:
            page_size = DEFAULT_PAGE_SIZE

        def list_with_retry() -> tuple[ObjectList[T], bool]:
            try:
                return list_pages(self.lister_watcher, options, page_size)
            except Exception as e:
                if not (is_expired(e) or is_too_large_resource_version(e)):
                    raise
                self.counters.expired += 1
                self.counters.list_calls += 1  # the reflector's thread waits meanwhile
                with self._lock:
                    self._rv_unavailable = True
                logger.debug(
                    '%s: list at RV %r unavailable (%s); relisting at ""', self.name, rv, e
                )
                return list_pages(
                    self.lister_watcher,
                    ListOptions(resource_version=self._relist_resource_version()),
                    page_size,
                )

        self.counters.list_calls += 1
        try:
            outcome = self._interruptible(stop, list_with_retry)
        except Exception as e:
            if is_server_unavailable(e):
                self.outage.failed(f"list of {self.type_description}", e)
            else:
                logger.warning("%s: failed to list %s: %s", self.name, self.type_description, e)
            raise wrap_list_error(self.type_description, e) from e
        if outcome is None:
            return  # stop requested
        self.outage.recovered()
        result, paginated = outcome
        if rv == "0" and paginated:
            self._paginated_result = True  # D7: sticky
        with self._lock:
            self._rv_unavailable = False
        try:
            self.store.replace(result.items, result.resource_version)
        except Exception as e:
            raise RuntimeError(f"unable to sync list result: {e}") from e
        self.counters.lists += 1
        self._set_last_sync_rv(result.resource_version)

    def _interruptible(
        self, stop: threading.Event, fn: Callable[[], tuple[ObjectList[T], bool]]
    ) -> tuple[ObjectList[T], bool] | None:
        """Run a (paged) LIST on a helper thread so that `stop` ends the wait at once.

        As client-go's list goroutine: when stop wins, the result is dropped and None returned.
        """
        done = threading.Event()
        box: list[tuple[ObjectList[T], bool] | BaseException] = []

        def target() -> None:
            try:
                box.append(fn())
            except BaseException as e:
                box.append(e)
            finally:
                done.set()

        with self._lock:
            if stop.is_set():
                return None
            self._interrupt = done
        threading.Thread(target=target, name=f"reflector-list:{self.name}", daemon=True).start()
        done.wait()
        with self._lock:
            self._interrupt = None
        if stop.is_set() or not box:
            return None
        value = box[0]
        if isinstance(value, BaseException):
            raise value
        return value

    # ----------------------------------------------------------------------------- watch-list

    def _watch_list(self, stop: threading.Event) -> _Stream[T] | None:
        """D18-D20: stream the initial state; returns the still-open watch, None if stopped."""

        def retriable_with_side_effects(err: BaseException) -> bool:
            self.counters.watch_errors += 1
            if is_watch_error_retriable(err):
                if is_server_unavailable(err):
                    self.outage.failed(f"watch-list of {self.type_description}", err)
                else:
                    logger.info("%s: watch-list failed, backing off: %s", self.name, err)
                self._backoff_wait(stop, err)
                return True
            if is_expired(err) or is_too_large_resource_version(err):
                self.counters.expired += 1
                with self._lock:
                    self._rv_unavailable = True
                return True
            return False

        transform = getattr(self.store, "transformer", None)
        transform = transform if callable(transform) else None
        rv_holder = [""]

        def set_rv(rv: str) -> None:
            rv_holder[0] = rv

        while True:
            if stop.is_set():
                return None
            rv_holder[0] = ""
            last_known_rv = self._rewatch_resource_version()
            temp = TempStore(transform)
            options = ListOptions(
                resource_version=last_known_rv,
                resource_version_match="NotOlderThan",
                allow_watch_bookmarks=True,
                send_initial_events=True,
                timeout_seconds=self._watch_timeout(),
            )
            start = self._clock()
            try:
                w = self._open_watch(options, stop)
            except Exception as e:
                if retriable_with_side_effects(e):
                    continue
                raise
            if w is None:
                return None
            try:
                with gc_paused(max_seconds=GC_PAUSE_LIMIT):  # thousands of survivors: see wire
                    done = self._handle_watch(
                        start,
                        w.events,
                        temp,
                        set_rv,
                        stop,
                        exit_on_initial_events_end=True,
                        started_at_rv=last_known_rv,
                    )
            except StopRequested:
                self._close_watch(w)
                return None
            except Exception as e:
                self._close_watch(w)
                if retriable_with_side_effects(e):
                    continue
                raise
            if done:
                break
            self._close_watch(w)  # closed before the bookmark: ask again
        resource_version = rv_holder[0]
        with self._lock:
            self._rv_unavailable = False
        try:
            if env_true(CONSISTENCY_DETECTOR_ENV):
                check_watch_list_consistency(
                    self.lister_watcher,
                    f"{self.name}: the watch-list result of {self.type_description}",
                    resource_version,
                    temp.list(),
                    transform,
                    lambda: self._wait(stop, 1.0) or stop.is_set(),
                )
            self.store.replace(temp.list(), resource_version)
        except BaseException:
            self._close_watch(w)
            raise
        self.counters.lists += 1
        self._set_last_sync_rv(resource_version)
        self.outage.recovered()
        return w


__all__ = ["GC_PAUSE_LIMIT", "InitialState"]
