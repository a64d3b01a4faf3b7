"""The Reflector: keeps a store in step with the server by list (or watch-list), then watch.

Section D of docs/behaviour.md, rule for rule (client-go: tools/cache/reflector.go):
the run loop with backoff (D3/D4), the paged initial list at resourceVersion "0" and the
relist rules (D6-D9), the watch with bookmarks and a random timeout (D10-D14), the resync
timer (D15), the default watch error handler (D16) and the streaming watch-list (D17-D20).

Threads: `run()` runs on the caller's thread. One helper thread per `run()` waits for the stop
event, ends the requests in flight (a source that `CancelsRequests`) and stops the current
watch (or abandons a running LIST) so `run()` returns promptly;
each LIST runs on a short-lived helper thread; one more runs the resync timer while a watch is
open when `resync_period > 0`. Its parts, each given what it needs at construction: state.py
(the shared resourceVersion bookkeeping and what a stop must end), list.py (the paged LIST),
watch_list.py (the streaming initial state), watch.py (opening a watch, applying its events to
a store), backoff.py (delays and retry decisions), support.py (errors, gates, the watch-list
temporary store and consistency detector); paging is client.pager.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from kubeinformers.runtime.api.errors import ApiStatusError, is_expired, is_too_many_requests
from kubeinformers.runtime.api.listwatch import (
    CancelsRequests,
    ListerWatcher,
    ListOptions,
    RefreshesCredentials,
    ReportsDecodeErrors,
    watch_list_semantics_unsupported,
)
from kubeinformers.runtime.client.pager import DEFAULT_PAGE_SIZE
from kubeinformers.runtime.clock import Now
from kubeinformers.runtime.codec.drift import InvalidObjectError
from kubeinformers.runtime.codec.heap_trim import trim_heap
from kubeinformers.runtime.codec.wire import ObjectDecodeError
from kubeinformers.runtime.metrics import ReflectorCounters
from kubeinformers.runtime.reflector.backoff import (
    Backoff,
    RetryWithDeadline,
    is_connection_refused,
    is_internal_error,
    is_watch_error_retriable,
)
from kubeinformers.runtime.reflector.list import PagedList
from kubeinformers.runtime.reflector.outage import OutageLog, is_server_unavailable
from kubeinformers.runtime.reflector.state import ReflectorState
from kubeinformers.runtime.reflector.support import (
    ReflectorStore,
    StopRequested,
    VeryShortWatchError,
    WatchListInconsistencyError,
    caller_name,
    error_from_status,
    forget_frame_locals,
    watch_list_gate_enabled,
)
from kubeinformers.runtime.reflector.watch import StreamHandler, Watches, _Stream
from kubeinformers.runtime.reflector.watch_list import GC_PAUSE_LIMIT as GC_PAUSE_LIMIT
from kubeinformers.runtime.reflector.watch_list import WatchList

T = TypeVar("T")

logger = logging.getLogger("kubeinformers.reflector")

# After retry_now() (the server answered a write), backoff waits for an unreachable server or
# a relist last only the first delay for this long (D4, M1).
ANSWERED_LATELY = 30.0

MIN_WATCH_TIMEOUT = 300.0  # D2/D10: 5 minutes; the maximum is twice the minimum
INTERNAL_ERROR_RESET_PERIOD = 60.0  # D14: the internal-error window restarts after 1 min quiet


def default_watch_error_handler(reflector: Reflector[Any], err: BaseException) -> None:
    """D16: expired/gone are routine, a clean EOF is silent, everything else is an error.

    401/403 get their own wording: nothing will change until the credentials or RBAC do.
    """
    name = reflector.name
    if is_server_unavailable(err):
        # an apiserver restart: reported once per outage, not once per failed request
        reflector.outage.failed(f"watch of {reflector.type_description}", err)
    elif is_expired(err):
        logger.debug("%s: watch of %s closed: %s", name, reflector.type_description, err)
    elif isinstance(err, (EOFError, ObjectDecodeError, InvalidObjectError)):
        # A bad object was already logged once (with its key and field path) by the
        # transport that found it: logging it here again would repeat it on every relist.
        return
    elif isinstance(err, ApiStatusError) and err.code in (401, 403):
        logger.log(
            logging.DEBUG
            if err.reported  # a refused credential: said once by the transport (D23)
            else reflector.outage.condition_level(logging.ERROR, err, "error"),
            "%s: access to %s denied (HTTP %d %s): %s; retrying with backoff",
            name,
            reflector.type_description,
            err.code,
            err.reason or ("Unauthorized" if err.code == 401 else "Forbidden"),
            err.message,
        )
    else:
        logger.log(
            reflector.outage.condition_level(logging.ERROR, err, "error"),
            "%s: Failed to watch %s: %s",
            name,
            reflector.type_description,
            err,
        )


def _gvk_string(gvk: tuple[str, str]) -> str:
    """`apps/v1, Kind=Deployment`, `/v1, Kind=Pod`: schema.GroupVersionKind.String()."""
    api_version, kind = gvk
    group_version = api_version if "/" in api_version else f"/{api_version}"
    return f"{group_version}, Kind={kind}"


class Reflector(Generic[T]):
    """Lists and watches one resource through a ListerWatcher, writing every change to `store`."""

    def __init__(
        self,
        lister_watcher: ListerWatcher[T],
        expected_type: type | None,
        store: Any,
        resync_period: float = 0,
        *,
        name: str | None = None,
        should_resync: Callable[[], bool] | None = None,
        watch_error_handler: Callable[[Reflector[Any], BaseException], None] | None = None,
        use_watch_list: bool | None = None,
        page_size: int | None = None,
        type_description: str | None = None,
        expected_gvk: tuple[str, str] | None = None,
        min_watch_timeout: float | None = None,
        max_internal_error_retry_duration: float = 0.0,
        backoff: Backoff | None = None,
        clock: Now = time.monotonic,
        wait: Callable[[threading.Event, float], bool] | None = None,
        rand: Callable[[], float] = random.random,
        counters: ReflectorCounters | None = None,
    ) -> None:
        self.lister_watcher = lister_watcher
        # Metrics (list calls, relists, 410s, watches, events by type): bumped on this
        # reflector's thread only; the informer reads them for `metrics()`.
        self.counters = counters if counters is not None else ReflectorCounters()
        self.store = store
        self.resync_period = resync_period
        self.should_resync = should_resync
        self.name = name or caller_name()
        # D1: for dicts (Unstructured) an (apiVersion, kind) may be expected as well.
        self.expected_gvk = expected_gvk
        # D1: the given description, else the GVK string, "<unspecified>" without a type, else
        # the type's name.
        self.type_description = type_description or (
            _gvk_string(expected_gvk)
            if expected_gvk is not None
            else f"{expected_type.__module__}.{expected_type.__qualname__}"
            if expected_type is not None
            else "<unspecified>"
        )
        self.watch_error_handler = watch_error_handler or default_watch_error_handler
        self._last_error: BaseException | None = None
        self.outage = OutageLog(self.name, logger, on_failure=self._note_failure)
        # D17: decided once, at construction.
        enabled = watch_list_gate_enabled() if use_watch_list is None else use_watch_list
        self.use_watch_list = enabled and not watch_list_semantics_unsupported(lister_watcher)
        self.page_size = page_size or 0
        # D2: only a minimum above 5 minutes is honoured.
        self.min_watch_timeout = (
            min_watch_timeout
            if min_watch_timeout is not None and min_watch_timeout > MIN_WATCH_TIMEOUT
            else MIN_WATCH_TIMEOUT
        )
        self.max_internal_error_retry_duration = max_internal_error_retry_duration
        self._clock = clock
        self._rand = rand
        self._backoff = backoff or Backoff(clock=clock, rand=rand)
        self._wait: Callable[[threading.Event, float], bool] = wait or (
            lambda event, seconds: event.wait(seconds)
        )
        self._state = ReflectorState()
        # D4, M1: a backoff wait ends when this is set: by the stop, or by `retry_now()` while
        # `_cuttable` (the wait is for a server that was unreachable, or before a relist).
        self._wake = threading.Event()
        self._wake_lock = threading.Lock()
        self._cuttable = False
        self._answered_at: float | None = None  # when retry_now() was last called
        # N8: set by `relist()`: end the watch and list again (cleared when a list begins).
        self._relist = threading.Event()
        self._watches: Watches[T] = Watches(lister_watcher, self._state, self.counters)
        self._stream = StreamHandler(
            name=self.name,
            expected_type=expected_type,
            type_description=self.type_description,
            expected_gvk=expected_gvk,
            clock=clock,
            resync_error=lambda: self._state.resync_error,
            counters=self.counters,
        )
        self._paged_list: PagedList[T] = PagedList(
            lister_watcher,
            store,
            self._state,
            self.counters,
            name=self.name,
            type_description=self.type_description,
            page_size=self.page_size,
            outage=self.outage,
        )
        self._streamed_list: WatchList[T] = WatchList(
            lister_watcher,
            store,
            self._state,
            self.counters,
            self._stream,
            self._watches,
            name=self.name,
            type_description=self.type_description,
            backoff_wait=self._backoff_wait,
            watch_timeout=self._watch_timeout,
            clock=clock,
            wait=self._wait,
            outage=self.outage,
            note_failure=self._note_failure,
        )
        # A transport that can report undecodable objects hands them to the error handler.
        if isinstance(lister_watcher, ReportsDecodeErrors):
            lister_watcher.set_decode_error_handler(self._report_decode_error)

    # ----------------------------------------------------------------------------- state

    @property
    def expected_type(self) -> type | None:
        """D1: the type every watched object must have (None: any); settable."""
        return self._stream.expected_type

    @expected_type.setter
    def expected_type(self, value: type | None) -> None:
        self._stream.expected_type = value

    def last_sync_resource_version(self) -> str:
        """D21: the RV of the last list, watch-list or event processed; not synced with the store."""
        return self._state.last_sync_rv

    def _relist_resource_version(self) -> str:
        return self._state.relist_resource_version()

    def _rewatch_resource_version(self) -> str:
        return self._state.rewatch_resource_version()

    def _list(self, stop: threading.Event) -> None:
        """D6-D9: the paged LIST (list.py)."""
        self._paged_list.run(stop)

    def _watch_list(self, stop: threading.Event) -> _Stream[T] | None:
        """D17-D20: the watch-list (watch_list.py); the open watch, or None if stopped."""
        return self._streamed_list.run(stop)

    def _report_decode_error(self, err: BaseException) -> None:
        self._call_error_handler(err)

    def _note_failure(self, err: BaseException) -> None:
        """Every failure, also those retried here without the error handler (for health()).
        Kept without the local variables of the frames it went through (forget_frame_locals):
        what the failed call held (a socket, a page's decoded items) is not kept with it."""
        forget_frame_locals(err)
        self._last_error = err

    def last_error(self) -> BaseException | None:
        """The most recent list or watch failure (None before the first); kept after a success,
        so that a cache that never synced can say why (`wait_for_cache_sync_or_raise`)."""
        return self._last_error

    def _call_error_handler(self, err: BaseException) -> None:
        self._note_failure(err)
        try:
            self.watch_error_handler(self, err)
        except Exception:
            logger.exception("%s: the watch error handler raised", self.name)

    def _watch_timeout(self) -> int:
        """D10: integer seconds in [min, 2*min)."""
        return int(self.min_watch_timeout * (self._rand() + 1.0))

    def _backoff_wait(self, stop: threading.Event, err: BaseException | None = None) -> bool:
        """Wait one backoff delay (D4), at least the server's Retry-After; True if stopped."""
        delay = self._backoff.next_delay()
        retry_after = err.retry_after if isinstance(err, ApiStatusError) else None
        if retry_after is not None and retry_after > delay:
            delay = float(retry_after)
        source = self.lister_watcher
        if (
            isinstance(err, ApiStatusError)
            and err.code == 401
            and isinstance(source, RefreshesCredentials)
        ):
            # Credentials refused: try again as soon as the token file changes (issue 27).
            source.wait_for_new_credentials(stop, delay)
            return stop.is_set()
        # Cut short by `retry_now()` only when another answer of the server can end what the
        # wait is for: the server away, or a relist due (list-and-watch ended without an error:
        # a watch that expired, 410, as after an apiserver restart; or a list that did), and
        # the server did not ask for the wait (Retry-After). Not for 401/403, a 500 or a bad
        # object: a write that succeeds says nothing of those.
        cuttable = (err is None or is_server_unavailable(err) or is_expired(err)) and not (
            isinstance(err, ApiStatusError) and err.retry_after is not None
        )
        began = self._clock()
        with self._wake_lock:
            if not stop.is_set():
                self._wake.clear()  # the stop sets it after setting `stop`: never lost
            self._cuttable = cuttable
            answered = self._answered_at
        if cuttable and answered is not None and began - answered < ANSWERED_LATELY:
            # The server answered another request a moment ago (a write waiting for this
            # cache): the failure that follows the retry it caused (a watch that expired
            # after an apiserver restart, then the relist) is retried after the first delay.
            delay = min(delay, self._backoff.initial)
        try:
            self._wait(self._wake, delay)
        finally:
            with self._wake_lock:
                cut, self._cuttable = cuttable and not self._cuttable, False
        if cut and not stop.is_set():
            # Cut short by retry_now(): still no sooner than the first delay after the failure,
            # however many writes ask (a server that answers writes but fails the watch).
            rest = min(delay, self._backoff.initial) - (self._clock() - began)
            if rest > 0:
                self._wait(stop, rest)
        return stop.is_set()

    def retry_now(self) -> bool:
        """The server has just answered (a write through the typed client reached it, M1): a
        backoff wait (D4) that began because the server was unreachable, or before a relist
        (a watch that expired), ends now, and those that begin in the next ANSWERED_LATELY
        seconds last only the first delay, so that the cache catches up with that write at
        once instead of after a delay of up to 30 s; the next attempt still comes no sooner
        than the first delay (0.8 s) after the failure. A wait for another reason (a
        Retry-After, 401/403, a 500, a bad list) is kept. Returns whether a wait was cut
        short. Safe from any thread."""
        with self._wake_lock:
            self._answered_at = self._clock()
            if not self._cuttable:
                return False
            self._cuttable = False
            self._wake.set()
        logger.debug("%s: the server answered another request; retrying now", self.name)
        return True

    # ----------------------------------------------------------------------------- run loop

    def run(self, stop: threading.Event) -> None:
        """D3: list-and-watch until `stop` is set, with a backoff delay between attempts."""
        logger.debug("%s: starting reflector for %s", self.name, self.type_description)
        threading.Thread(
            target=self._stop_current_watch_on,
            args=(stop,),
            name=f"reflector-stop:{self.name}",
            daemon=True,
        ).start()
        while not stop.is_set():
            err: BaseException | None = None
            try:
                self.list_and_watch(stop)
            except Exception as e:
                if stop.is_set():
                    break  # what the stop ended (a request cancelled): nothing to report
                err = e
                self._call_error_handler(e)
            if stop.is_set():
                break
            if err is None and self._relist.is_set():
                continue  # N8: relist now, no backoff
            self._backoff_wait(stop, err)
        logger.debug("%s: stopping reflector for %s", self.name, self.type_description)

    def relist(self) -> None:
        """Ask for a fresh list (N8: the informer's shard changed): the open watch ends, the
        store is replaced by a new list (or watch-list) at once, with no backoff, and the
        watch resumes after it. A list already running finishes first; the next begins
        right after it. Safe from any thread."""
        self._relist.set()
        with self._state.lock:
            w = self._state.current_watch
        if w is not None:
            w.stop()

    def _stop_current_watch_on(self, stop: threading.Event) -> None:
        stop.wait()
        with self._wake_lock:  # after `_backoff_wait`'s clear, if that saw no stop
            self._wake.set()  # a backoff wait ends
        source = self.lister_watcher
        if isinstance(source, CancelsRequests):
            source.cancel_requests()  # a request waiting on the server ends now
        with self._state.lock:
            w = self._state.current_watch
            interrupt = self._state.interrupt
        if w is not None:
            w.stop()
        if interrupt is not None:
            interrupt.set()

    def list_and_watch(self, stop: threading.Event) -> None:
        """D5: watch-list (or LIST on its failure), then watch with the resync timer.

        Raises only when the LIST fails, the store's replace fails, or a watch request fails
        with a non-retriable error.
        """
        w: _Stream[T] | None = None
        self._state.resync_error = None
        self._relist.clear()  # a request from now on lists again after this list
        try:
            fallback = not self.use_watch_list
            if self.use_watch_list:
                try:
                    w = self._watch_list(stop)
                except Exception as e:
                    if stop.is_set():
                        raise  # what the stop ended: `run` reports nothing
                    if self._relist.is_set():
                        # N8: ended by `relist()` (a new shard) while it streamed: not a
                        # failure of the server, no fallback; `run` lists again at once.
                        logger.debug(
                            "%s: watch-list of %s ended for a relist: %s",
                            self.name,
                            self.type_description,
                            e,
                        )
                        return
                    if is_server_unavailable(e):
                        self.outage.failed(f"watch-list of {self.type_description}", e)
                    else:
                        # D22: once per cause until the watch works again; the LIST
                        # that follows reports its own failure.
                        logger.log(
                            self.outage.condition_level(
                                logging.WARNING if self.outage.served else logging.INFO,
                                e,
                                "watch-list fallback",
                            ),
                            "%s: the watch-list request for %s ended with an error, falling "
                            "back to LIST/WATCH: %s",
                            self.name,
                            self.type_description,
                            e,
                        )
                    fallback = True
                    w = None
                else:
                    if w is None:  # stop requested
                        return
            if fallback:
                self._list(stop)
            logger.debug("%s: caches populated for %s", self.name, self.type_description)
            trim_heap()  # the list's response bytes are freed: their pages back to the OS (K23)
            self._watch_with_resync(w, stop)
            w = None
        finally:
            if w is not None:
                self._watches.close(w)

    # ----------------------------------------------------------------------------- watch

    def _watch_with_resync(self, w: _Stream[T] | None, stop: threading.Event) -> None:
        cancel = threading.Event()
        if self.resync_period > 0:
            threading.Thread(
                target=self._resync_loop,
                args=(cancel,),
                name=f"reflector-resync:{self.name}",
                daemon=True,
            ).start()
        try:
            self._watch(w, stop)
        finally:
            cancel.set()

    def _resync_loop(self, cancel: threading.Event) -> None:
        """D15: every period ask should_resync (None = yes) and resync; an error ends the watch."""
        while not cancel.wait(self.resync_period):
            if self.should_resync is None or self.should_resync():
                logger.debug("%s: forcing resync of %s", self.name, self.type_description)
                try:
                    self.store.resync()
                except Exception as e:
                    if cancel.is_set():
                        return  # this watch is over; don't fail the next one
                    self._state.resync_error = e
                    with self._state.lock:
                        w = self._state.current_watch
                    if w is not None:
                        w.stop()
                    return

    def _watch(self, w: _Stream[T] | None, stop: threading.Event) -> None:
        """D10-D14: watch from the last RV; re-watch on a clean close; return to relist otherwise."""
        retry = RetryWithDeadline(
            self.max_internal_error_retry_duration, INTERNAL_ERROR_RESET_PERIOD, self._clock
        )
        # A watch handed over by watch-list is past its initial events: record every RV.
        state = self._state
        watch_rv = state.last_sync_rv
        try:
            while True:
                if stop.is_set() or self._relist.is_set():
                    return
                start = self._clock()
                if w is None:
                    watch_rv = state.last_sync_rv
                    options = ListOptions(
                        resource_version=watch_rv,
                        timeout_seconds=self._watch_timeout(),
                        allow_watch_bookmarks=True,
                    )
                    try:
                        w = self._watches.open(options, stop)
                    except Exception as e:
                        self.counters.watch_errors += 1
                        self._note_failure(e)
                        if is_watch_error_retriable(e):
                            if is_server_unavailable(e):
                                self.outage.failed(f"watch of {self.type_description}", e)
                            else:
                                logger.debug("%s: watch failed, backing off: %s", self.name, e)
                            if self._backoff_wait(stop, e):
                                return
                            continue
                        raise
                    if w is None:
                        return
                    if self._relist.is_set():  # asked while it opened (relist() saw no watch)
                        w.watch.stop()
                    self.outage.recovered()
                    self.outage.watching()
                err: BaseException | None = None
                try:
                    self._stream.handle(
                        start,
                        w.events,
                        self.store,
                        state.set_last_sync_rv,
                        stop,
                        started_at_rv=watch_rv,
                    )
                except Exception as e:
                    err = e
                finally:
                    self._watches.close(w)
                    w = None
                if self._relist.is_set() and not isinstance(err, StopRequested):
                    continue  # N8: ended for a relist (a very short watch, maybe): not an error
                retry.after(err)
                if err is None:
                    continue  # D14: clean close -> re-watch at once, no relist
                if isinstance(err, StopRequested):
                    return
                self.counters.watch_errors += 1
                self._note_failure(err)
                if is_expired(err):
                    self.counters.expired += 1
                    # Relist at the last RV (not ""): D8 handles a second 410.
                    logger.debug(
                        "%s: watch of %s closed: %s", self.name, self.type_description, err
                    )
                elif is_too_many_requests(err):
                    logger.info("%s: watch returned 429, backing off", self.name)
                    if self._backoff_wait(stop, err):
                        return
                    continue
                elif is_internal_error(err) and retry.should_retry():
                    logger.info("%s: retrying watch after internal error: %s", self.name, err)
                    continue
                elif is_server_unavailable(err):
                    self.outage.failed(f"watch of {self.type_description}", err)
                else:
                    logger.log(
                        self.outage.condition_level(logging.WARNING, err, "watch ended"),
                        "%s: watch of %s ended with error: %s",
                        self.name,
                        self.type_description,
                        err,
                    )
                return
        finally:
            if w is not None:
                self._watches.close(w)


__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MIN_WATCH_TIMEOUT",
    "Reflector",
    "ReflectorStore",
    "VeryShortWatchError",
    "WatchListInconsistencyError",
    "default_watch_error_handler",
    "error_from_status",
    "is_connection_refused",
    "is_internal_error",
    "is_watch_error_retriable",
]
