"""The shared informer: one list/watch, one cache, many handlers (section F).

client-go counterpart: tools/cache/shared_informer.go (`sharedIndexInformer`). A reflector feeds
a DeltaFIFO (C-1); the process loop writes each delta to the indexer and turns it into a
notification (F10) that the shared processor hands to every registered handler, each on its
own thread (G). Handlers may join and leave while the informer runs (F8, F9).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar, get_args

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    LeftShard,
    NoMetadataError,
    deletion_handling_meta_namespace_key,
    meta_namespace_key,
    object_resource_version,
)
from kubeinformers.runtime.api.listwatch import CountsDecodeErrors, ListerWatcher, ServesResource
from kubeinformers.runtime.api.shard import Shard
from kubeinformers.runtime.cache.controller import (
    Controller,
    ControllerConfig,
    Queue,
    process_deltas,
    process_deltas_in_batch,
)
from kubeinformers.runtime.cache.delta_fifo import Delta, DeltaFIFO, DeltaType
from kubeinformers.runtime.cache.events import EventStream
from kubeinformers.runtime.cache.freshness import ResourceVersionWatermark
from kubeinformers.runtime.cache.handlers import (
    AddFunc,
    DeleteFunc,
    FilteringResourceEventHandler,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
    SimpleAddFunc,
    UpdateFunc,
    is_coroutine_callback,
)
from kubeinformers.runtime.cache.health import HealthTracker, InformerHealth
from kubeinformers.runtime.cache.index_errors import IndexFailureLog
from kubeinformers.runtime.cache.processor import (
    ADD,
    DELETE,
    LAG_WARNING_AFTER,
    UPDATE,
    ProcessorListener,
    SharedProcessor,
    determine_resync_period,
)
from kubeinformers.runtime.cache.real_fifo import (
    BookmarkInfo,
    RealFIFO,
    ReplacedAllInfo,
    SyncAllInfo,
)
from kubeinformers.runtime.cache.store import Indexer, Indexers
from kubeinformers.runtime.client.shard import ShardedListerWatcher
from kubeinformers.runtime.clock import Now
from kubeinformers.runtime.metrics import (
    HandlerMetrics,
    InformerMetrics,
    NotificationCounters,
    ReflectorCounters,
    build_informer_metrics,
    track_informer,
)
from kubeinformers.runtime.reflector.reflector import Reflector, default_watch_error_handler

T = TypeVar("T")

QueueKind = Literal["delta", "ordered", "atomic"]
"""The informer's queue: DeltaFIFO (C-1), RealFIFO (C-2) or atomic RealFIFO (C-3, the default)."""
QUEUE_KINDS: tuple[QueueKind, ...] = get_args(QueueKind)

TransformFunc = Callable[[Any], Any]
WatchErrorHandler = Callable[[Reflector[Any], BaseException], None]

# F5: a handler never resyncs more often than this (seconds).
MINIMUM_RESYNC_PERIOD = 1.0


_REPLACED = DeltaType.REPLACED
_DELETED = DeltaType.DELETED


class InformerStoppedError(RuntimeError):
    """The informer has stopped: handlers and indexers can no longer be added (F7, F13)."""


class InformerStartedError(RuntimeError):
    """The informer has started: its transform and watch error handler are fixed (F11)."""


class ResourceEventHandlerRegistration(Generic[T]):
    """The handle `add_event_handler` returns: pass it to `remove_event_handler`.

    `has_synced()` is true once the informer has synced and this handler has returned from
    every initial-list `on_add` queued for it (G6).
    """

    __slots__ = ("_informer", "_listener")

    def __init__(self, informer: SharedIndexInformer[T], listener: ProcessorListener[T]) -> None:
        self._informer = informer
        self._listener = listener

    @property
    def handler(self) -> ResourceEventHandler[T]:
        return self._listener.handler

    def has_synced(self) -> bool:
        return self._listener.has_synced()

    def metrics(self) -> HandlerMetrics:
        """This handler's buffered notifications, callbacks and time spent in them."""
        return self._listener.metrics()

    @property
    def resync_period(self) -> float:
        """The effective resync period of this handler (F5, F6); 0 = never resynced."""
        return self._listener.resync_period

    def __repr__(self) -> str:
        return f"ResourceEventHandlerRegistration({self._informer.name}, {self.handler!r})"


class _Distributor(Generic[T]):
    """The informer as `process_deltas` sees it: callbacks become notifications (F10)."""

    __slots__ = ("_counters", "_processor", "left_shard", "sharded")

    def __init__(self, processor: SharedProcessor[T], counters: NotificationCounters) -> None:
        self._processor = processor
        self._counters = counters  # only the process loop calls us: one writer
        self.sharded: ShardedListerWatcher[T] | None = None
        self.left_shard = 0  # N9: LeftShard tombstones sent

    def on_add(self, obj: T, is_in_initial_list: bool) -> None:
        self._counters.add += 1
        self._processor.distribute((ADD, obj, is_in_initial_list), False)

    def on_update(self, old: T, new: T) -> None:
        # F10: an update whose resourceVersion did not change is a sync notification and goes
        # only to the listeners that are due for a resync (G4).
        try:
            is_sync = object_resource_version(old) == object_resource_version(new)
        except NoMetadataError:
            is_sync = False
        if is_sync:
            self._counters.sync += 1
        else:
            self._counters.update += 1
        self._processor.distribute((UPDATE, old, new), is_sync)

    def on_delete(self, obj: T | DeletedFinalStateUnknown[T]) -> None:
        sharded = self.sharded
        if sharded is not None and type(obj) is DeletedFinalStateUnknown and obj.obj is not None:
            # N9: a relist's tombstone of an object outside the shard listed: it left the
            # shard (the shard changed); events outside the shard never reach the queue.
            if sharded.left_shard(obj.obj):
                obj = LeftShard(obj.key, obj.obj)
                self.left_shard += 1
        self._counters.delete += 1
        self._processor.distribute((DELETE, obj, None), False)


def _coroutine_functions(handler: object) -> list[str]:
    """Names of the handler's callbacks that are coroutine functions."""
    if isinstance(handler, FilteringResourceEventHandler):
        return _coroutine_functions(handler.handler)
    if isinstance(handler, ResourceEventHandlerFuncs):
        funcs: list[Any] = list(handler.functions())
    else:
        funcs = [getattr(handler, n, None) for n in ("on_add", "on_update", "on_delete")]
    return [getattr(f, "__qualname__", repr(f)) for f in funcs if is_coroutine_callback(f)]


def _describe_handler(handler: object) -> str:
    """A stable name for metrics: the handler's class, or its first function's qualname."""
    if isinstance(handler, FilteringResourceEventHandler):
        return _describe_handler(handler.handler)
    if isinstance(handler, ResourceEventHandlerFuncs):
        for f in handler.functions():
            return str(getattr(f, "__qualname__", type(f).__qualname__))
    return type(handler).__qualname__


class SharedIndexInformer(Generic[T]):
    """A shared, indexed informer for one resource (client-go's sharedIndexInformer).

    Nothing runs until `run(stop)`, which blocks until `stop` is set and then joins every
    thread it started. The queue is the RealFIFO in atomic mode, client-go v0.36's (C-3,
    `queue="atomic"`): strict arrival order across keys, nothing compacted, a relist swaps
    the whole store before its first callback, a resync is one entry processed in order,
    bookmarks reach the store (its `last_store_sync_resource_version()`, B15), store writes
    go in batches of distinct keys (E4) and the watch never waits for a handler write.
    `queue="ordered"` selects the non-atomic RealFIFO (C-2: relist tombstones before the
    relisted items); `queue="delta"` the DeltaFIFO (C-1: a key's queued changes handed out
    together).
    Handlers are called on their own threads, one notification at a time, in order;
    coroutine handlers run on the event loop given to `add_event_handler(loop=...)`.
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher[T],
        object_type: type[T] | None,
        resync_period: float = 0.0,
        indexers: Indexers[T] | None = None,
        *,
        name: str | None = None,
        use_watch_list: bool | None = None,
        page_size: int | None = None,
        queue: QueueKind = "atomic",
        clock: Now = time.monotonic,
        transform: TransformFunc | None = None,
        watch_error_handler: WatchErrorHandler | None = None,
        shard: Shard | None = None,
    ) -> None:
        if queue not in QUEUE_KINDS:
            raise ValueError(
                f'queue must be "delta" (DeltaFIFO), "ordered" (RealFIFO) or "atomic" '
                f"(RealFIFO in atomic mode), not {queue!r}"
            )
        self.queue_kind = queue
        self.object_type = object_type
        self.name = name or (object_type.__name__ if object_type is not None else "informer")
        # Section N: only the shard's objects reach the queue (the server's selection where
        # it applies the selector, the client's where it does not).
        self._sharded: ShardedListerWatcher[T] | None = None
        if shard is not None:
            lister_watcher = ShardedListerWatcher(lister_watcher, shard, name=self.name)
        self.lister_watcher = lister_watcher
        self._log = logging.getLogger(f"kubeinformers.informer.{self.name}")
        # F1: the cache is keyed by A2 so tombstones delete the right entry.
        self._indexer: Indexer[T] = Indexer(
            deletion_handling_meta_namespace_key,
            indexers,
            # B15: the store tracks its resourceVersion only with the atomic queue.
            track_resource_version=queue == "atomic",
            # B18: an index function failing on an object never costs its notification.
            index_errors=IndexFailureLog(self.name, self._log),
        )
        self._processor: SharedProcessor[T] = SharedProcessor(
            name=self.name, clock=clock, logger=self._log
        )
        # Metrics (`metrics()`): the reflector's counters outlive its run; see metrics.py.
        self._reflector_counters = ReflectorCounters()
        self._notification_counters = NotificationCounters()
        self._distributor = _Distributor(self._processor, self._notification_counters)
        # N8: shard changes, and the start of the one in progress (until synced again).
        self._shard_changes = 0
        self._reshard_started: float | None = None
        self._last_reshard_seconds: float | None = None
        self._clock = clock
        if isinstance(lister_watcher, ShardedListerWatcher):
            self._adopt(lister_watcher)
        self._queue: Queue[T] | None = None
        self._handler_count = 0
        self._default_event_handler_resync_period = float(resync_period)
        self._resync_check_period = float(resync_period)
        self._use_watch_list = use_watch_list
        self._page_size = page_size
        # Constructor arguments, or set_transform / set_watch_error_handler before run (F11, F12).
        self._transform: TransformFunc | None = transform
        self._watch_error_handler: WatchErrorHandler | None = watch_error_handler
        # Read your own writes (`wait_for_resource_version`) and `health()`, for every queue.
        self._watermark = ResourceVersionWatermark()
        self._rv_processed = -1  # highest resourceVersion processed (published: see _processed)
        self._health = HealthTracker(clock)
        self._stopped_callbacks: list[Callable[[], None]] = []
        self._controller: Controller[T] | None = None
        self._start_lock = threading.Lock()
        # Held while a popped item is processed and while a handler joins or leaves (F8-F10).
        self._block_deltas = threading.Lock()
        self._started = False
        self._stopped = False
        # Called once, right after the first list has been processed (`on_synced`).
        self._synced_callbacks: list[Callable[[], None]] = []
        self._synced_announced = False
        self._synced_lock = threading.Lock()  # taken under the queue lock: never the reverse
        track_informer(self)

    # -- running -----------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """List, watch and notify until `stop` is set; then stop every handler thread (F2)."""
        with self._start_lock:
            if self._started:
                self._log.warning("informer %s has already been started; run() ignored", self.name)
                return
            if self._stopped:
                self._log.warning(
                    "informer %s was shut down before it started (its factory shut down); "
                    "run() ignored",
                    self.name,
                )
                return
            fifo: Queue[T]
            if self.queue_kind == "ordered":
                # C-2: every event its own entry, in arrival order; batches of distinct keys (E4).
                fifo = RealFIFO(meta_namespace_key, self._indexer, self._transform)
            elif self.queue_kind == "atomic":
                # C-3: relists, resyncs and bookmarks as whole-store entries; unlocked processing.
                fifo = RealFIFO(meta_namespace_key, None, self._transform, atomic=True)
            else:
                # C-1, as client-go's informer up to v0.32 configured it.
                fifo = DeltaFIFO(
                    key_func=meta_namespace_key,
                    known_objects=self._indexer,
                    emit_delta_type_replaced=True,
                    transformer=self._transform,
                )
            config: ControllerConfig[T] = ControllerConfig(
                queue=fifo,
                lister_watcher=self.lister_watcher,
                process=self._handle_deltas,
                process_batch=(self._handle_batch_deltas if self.queue_kind != "delta" else None),
                object_type=self.object_type,
                full_resync_period=self._resync_check_period,
                should_resync=self._processor.should_resync,
                watch_error_handler=self._report_watch_error,
                use_watch_list=self._use_watch_list,
                page_size=self._page_size,
                name=self.name,
                # A dynamic informer's objects are dicts: its resource names them, not `dict`.
                type_description=(self.name if self.object_type in (None, dict) else None),
                reflector_counters=self._reflector_counters,
            )
            fifo.on_synced(self._announce_synced)
            self._queue = fifo
            self._controller = Controller(config, logger=self._log)
            self._started = True
        self._processor.start()
        try:
            self._controller.run(stop)
        finally:
            with self._start_lock:
                self._stopped = True
                stopped_callbacks, self._stopped_callbacks = self._stopped_callbacks, []
            self._processor.stop()
            self._processor.join()
            for callback in stopped_callbacks:
                try:
                    callback()
                except Exception:
                    self._log.exception("stop callback of informer %s failed", self.name)

    def _handle_deltas(self, deltas: list[Delta[T]], is_in_initial_list: bool) -> None:
        with self._block_deltas:
            try:
                process_deltas(self._distributor, self._indexer, deltas, is_in_initial_list)
            finally:
                self._processed(deltas)

    def _handle_batch_deltas(self, deltas: list[Delta[T]], is_in_initial_list: bool) -> None:
        with self._block_deltas:
            try:
                process_deltas_in_batch(
                    self._distributor, self._indexer, deltas, is_in_initial_list
                )
            finally:
                self._processed(deltas)

    def _processed(self, deltas: list[Delta[T]]) -> None:
        """Raise the read-your-writes watermark past what was just written to the store.

        RealFIFO ("ordered", "atomic") hands watch events out in arrival order, so everything
        up to the highest resourceVersion processed is in the store. DeltaFIFO hands out keys
        in the order they were first queued (a key popped now may carry a newer event than a
        key still waiting), and a relist's items come in list order: then the watermark moves
        only when the queue is empty, i.e. when every event received has been processed.
        """
        highest = self._rv_processed
        listed = False  # a (re)list's items arrive in list order, not resourceVersion order
        per_object = False  # an object's own delta among them (health), not a whole store's
        atomic = self.queue_kind == "atomic"
        for delta in deltas:
            kind = delta.type
            if kind is _REPLACED:
                listed = True
            obj: Any = delta.object
            if atomic and isinstance(obj, (ReplacedAllInfo, BookmarkInfo, SyncAllInfo)):
                continue  # whole-store entries: their resourceVersion is the store's, below
            per_object = True
            if kind is _DELETED and isinstance(obj, DeletedFinalStateUnknown):
                obj = obj.obj
            try:
                rv = object_resource_version(obj)
            except NoMetadataError:
                continue
            if rv.isdigit():
                value = int(rv)
                if value > highest:
                    highest = value
        if atomic:
            store_rv = self._indexer.last_store_sync_resource_version()  # B15: lists, bookmarks
            if store_rv.isdigit() and int(store_rv) > highest:
                highest = int(store_rv)
        self._rv_processed = highest
        if highest >= 0 and highest > self._watermark.highest:
            queue = self._queue
            unordered = listed or isinstance(queue, DeltaFIFO)
            if not (unordered and isinstance(queue, (DeltaFIFO, RealFIFO)) and len(queue)):
                self._watermark.observe_value(highest)
        self._health.event_processed(self._reflector_counters.watch_errors, per_object)

    def _report_watch_error(self, reflector: Reflector[Any], err: BaseException) -> None:
        """Count the failure for `health()`, then the user's handler or the default (F12)."""
        counters = self._reflector_counters
        self._health.error(err, counters.lists + counters.watch_starts)
        handler = self._watch_error_handler
        (handler or default_watch_error_handler)(reflector, err)

    def on_stopped(self, callback: Callable[[], None]) -> None:
        """Call `callback` once this informer has stopped: `run` returned, or its factory shut
        down without starting it (now if it has stopped already). An `events()` stream uses it
        to end; the callback runs on the stopping thread, so it must be quick."""
        with self._start_lock:
            if not self._stopped:
                self._stopped_callbacks.append(callback)
                return
        callback()

    def remove_on_stopped(self, callback: Callable[[], None]) -> None:
        """Forget a callback given to `on_stopped` (a stream closed before the informer
        stopped: what the callback holds is let go now, not when the informer stops)."""
        with self._start_lock:
            with contextlib.suppress(ValueError):
                self._stopped_callbacks.remove(callback)

    def shut_down_unstarted(self) -> None:
        """Mark an informer that will never run as stopped (its factory shut down before
        starting it) and call the `on_stopped` callbacks, so what waits for it to stop ends (an
        `events()` stream ends instead of waiting forever). No-op once started or stopped."""
        with self._start_lock:
            if self._started or self._stopped:
                return
            self._stopped = True
            stopped_callbacks, self._stopped_callbacks = self._stopped_callbacks, []
        for callback in stopped_callbacks:
            try:
                callback()
            except Exception:
                self._log.exception("stop callback of informer %s failed", self.name)

    def _announce_synced(self) -> None:
        """The queue's sync callback: tell the sync waiters (`on_synced`). Runs under the
        queue lock, once."""
        with self._synced_lock:
            self._synced_announced = True
            callbacks, self._synced_callbacks = self._synced_callbacks, []  # called once: let go
        for callback in callbacks:
            try:
                callback()
            except Exception:
                self._log.exception("sync callback of informer %s failed", self.name)

    def on_synced(self, callback: Callable[[], None]) -> None:
        """Call `callback` (quick: it runs under the queue lock) once the first list has been
        processed, so that a waiter wakes at the sync rather than at its next poll; now if the
        informer has synced already. A stopped informer never syncs: keep a timeout.
        """
        with self._synced_lock:
            if not self._synced_announced:
                self._synced_callbacks.append(callback)
                return
        callback()

    def remove_on_synced(self, callback: Callable[[], None]) -> None:
        """Forget a callback given to `on_synced` (a wait that ended before the sync)."""
        with self._synced_lock:
            with contextlib.suppress(ValueError):
                self._synced_callbacks.remove(callback)

    def has_synced(self) -> bool:
        """The first list has been fully popped and processed into the cache (F3)."""
        controller = self._controller
        if controller is None or not controller.has_synced():
            return False
        sharded = self._sharded
        # N8: after set_shard, not synced until the list of the new shard has begun (the
        # queue then waits for that list to be processed, `repopulate`).
        return sharded is None or sharded.listed_generation == sharded.generation

    def has_synced_nowait(self) -> bool:
        """`has_synced()` without waiting for the queue's lock, which the transform holds while
        it runs (over a whole relist at once) and the "delta" queue while it processes an item:
        for a check that must not wait, such as whether a write has a cache to wait for (M1),
        asked on an event loop too. May lag one change behind."""
        queue = self._queue
        if self._controller is None or not isinstance(queue, (DeltaFIFO, RealFIFO)):
            return False
        if not queue.has_synced_nowait():
            return False
        sharded = self._sharded
        return sharded is None or sharded.listed_generation == sharded.generation

    def last_error(self) -> BaseException | None:
        """The most recent list or watch failure of this informer (None before the first, or
        before `run`): why a cache has not synced (`wait_for_cache_sync_or_raise` names it)."""
        controller = self._controller
        return controller.last_error() if controller is not None else None

    @property
    def resync_check_period(self) -> float:
        """How often the reflector asks whether any handler is due for a resync (F5)."""
        return self._resync_check_period

    def is_stopped(self) -> bool:
        """True once `run` has returned (F14)."""
        with self._start_lock:
            return self._stopped

    def last_sync_resource_version(self) -> str:
        """ "" before `run`, then the reflector's last synced resourceVersion (F14, D21)."""
        controller = self._controller
        return controller.last_sync_resource_version() if controller is not None else ""

    # -- read your own writes ------------------------------------------------------------------

    def last_processed_resource_version(self) -> str:
        """The highest resourceVersion processed into the cache ("" before any), any queue."""
        return self._watermark.value

    def wait_for_resource_version(self, resource_version: str, timeout: float | None) -> bool:
        """Block until the cache has processed an event at or beyond `resource_version` (the
        `metadata.resourceVersion` a write returned): True, or False when `timeout` passes.

        A write the informer never sees (another resource, filtered out by a selector) does
        not raise the watermark; a later event of this resource does. With the default
        "delta" queue the watermark moves when the queue has drained (keys are not handed out
        in resourceVersion order), so under a constant stream of changes it can lag; the
        "ordered" and "atomic" queues move it with every entry. ValueError for a non-numeric
        resourceVersion. After a write of your own that the server just answered, call
        `retry_now()` first: the cache then catches up at once after an outage.
        """
        return self._watermark.wait(resource_version, timeout)

    def wait_for_cache(self, done: Callable[[], bool], timeout: float | None) -> bool:
        """Block until `done()` (a check of the cache, such as "this key is gone") is true:
        checked now and after each batch of events the cache processes; False on timeout."""
        return self._watermark.wait_until(done, timeout)

    async def wait_for_cache_async(self, done: Callable[[], bool], timeout: float | None) -> bool:
        """`wait_for_cache` for coroutines; never blocks the event loop nor holds a thread."""
        return await self._watermark.wait_until_async(done, timeout)

    async def wait_for_resource_version_async(
        self, resource_version: str, timeout: float | None
    ) -> bool:
        """`wait_for_resource_version` for coroutines; never blocks the event loop."""
        return await self._watermark.wait_async(resource_version, timeout)

    def retry_now(self) -> bool:
        """The server has just answered a request (a write): if the reflector is waiting out
        its backoff (D4) after the server was unreachable, or before a relist (its watch
        expired, as after an apiserver restart), it tries again now rather than after up to
        30 s, so the cache catches up with that write (M1; the factory's client calls it for
        each write it waits for). A wait for another reason (a Retry-After, 401/403, a 500)
        is kept. Call it only when the server has answered: each call lets the reflector
        retry after the first delay. True when a wait was cut short."""
        controller = self._controller
        return controller.retry_now() if controller is not None else False

    # -- health and the async stream --------------------------------------------------------

    def health(self) -> InformerHealth:
        """Synced, seconds since the last processed event, last list/watch error and the
        failures in a row: what a readiness probe needs (`InformerHealth.healthy`)."""
        shard = self.shard
        return self._health.snapshot(
            self.name,
            self.has_synced_nowait(),  # a probe never waits for a transform to end
            self.is_stopped(),
            self._reflector_counters.watch_errors,
            self.last_error(),
            shard=shard.describe() if shard is not None else None,
            shard_filter=self._sharded.filter if shard is not None and self._sharded else None,
            resharding=self._reshard_started is not None,
            unindexed=self._indexer.unindexed(),
            handlers_behind=tuple(
                listener.lag_description()
                for listener in self._processor.listeners()
                if listener.falling_behind
            ),
            handlers_unsynced=tuple(
                listener.unsynced_description()
                for listener in self._processor.listeners()
                if listener.failed_initial_add is not None
            ),
            served=self._reflector_counters.lists + self._reflector_counters.watch_starts,
        )

    @property
    def shard(self) -> Shard | None:
        """The shard this informer caches (section N), or None: every object. After
        `set_shard`, the new one (the cache holds it once `has_synced()` again)."""
        sharded = self._sharded
        return sharded.shard if sharded is not None else None

    def set_shard(self, shard: Shard | None) -> None:
        """Cache `shard` from now on (N8; None: every object), also while running.

        A running informer ends its watch and relists with the new selector (or the client's
        filter): objects that entered the shard are added (`on_add`), those that left are
        dropped from the cache and each handler's `on_delete` gets a `LeftShard` tombstone
        (N9: not a deletion; the object lives on in another replica's shard), those in both
        are resync notifications. `has_synced()` is False from this call until the new
        list has been processed; from then on the listers answer for the new shard.
        Thread-safe; quick (the relist runs on the informer's own thread). An informer
        created without `shard=` can take one only before it starts: give a sharded one
        `Shard.static(0, 1)` (every object) to change it later.
        """
        if shard is not None and not isinstance(shard, Shard):
            raise TypeError(f"shard must be a Shard (Shard.static(i, n), ...), not {shard!r}")
        with self._start_lock:
            sharded = self._sharded
            if sharded is None:
                if shard is None:
                    return
                if self._started:
                    raise InformerStartedError(
                        f"informer {self.name} was started without a shard: it cannot take "
                        f"shard {shard.describe()} while it runs; create it (or its factory) "
                        "with shard=... (Shard.static(0, 1) for every object) to change its "
                        "shard later"
                    )
                sharded = ShardedListerWatcher(self.lister_watcher, shard, name=self.name)
                self.lister_watcher = sharded
                self._adopt(sharded)
                return
            before = sharded.shard
            if not sharded.set_shard(shard):
                return
            self._shard_changes += 1
            controller = self._controller
            if controller is None or self._stopped:
                return
            if self._reshard_started is None:
                self._reshard_started = self._clock()
            with self._synced_lock:
                self._synced_announced = False  # on_synced callbacks wait for the new shard
        self._log.info(
            "%s: shard changes from %s to %s; relisting",
            self.name,
            before.describe() if before is not None else "every object",
            shard.describe() if shard is not None else "every object",
        )
        controller.relist()

    def _adopt(self, sharded: ShardedListerWatcher[T]) -> None:
        self._sharded = sharded
        self._distributor.sharded = sharded
        sharded.on_list_start = self._new_shard_listed

    def _new_shard_listed(self) -> None:
        """The reflector begins a list of a new shard (N8): its Replace is a new initial
        population of the queue, `has_synced()` False until it has been processed."""
        queue = self._queue
        if isinstance(queue, (DeltaFIFO, RealFIFO)):
            queue.repopulate(self._reshard_synced)

    def _reshard_synced(self) -> None:
        """The new shard's list is processed (runs under the queue lock: quick)."""
        sharded = self._sharded
        if sharded is not None:
            sharded.settle()
        started, self._reshard_started = self._reshard_started, None
        if started is not None:
            self._last_reshard_seconds = self._clock() - started
        self._log.info("%s: the cache holds shard %s", self.name, self.shard or "(every object)")
        self._announce_synced()  # wakes what waits for the sync again (on_synced)

    def events(self, buffer: int = 100) -> EventStream[T]:
        """An async stream of this informer's notifications as `Added` / `Updated` /
        `Deleted` events; at most `buffer` wait on the event loop (back-pressure: see
        `kubeinformers.runtime.cache.events`). Call it inside the running loop."""
        return EventStream(self, buffer)

    # -- handlers ----------------------------------------------------------------------------

    def add_event_handler(
        self,
        handler: ResourceEventHandler[T] | None = None,
        *,
        on_add: AddFunc[T] | SimpleAddFunc[T] | None = None,
        on_update: UpdateFunc[T] | None = None,
        on_delete: DeleteFunc[T] | None = None,
        resync_period: float | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        max_buffer: int | None = None,
        lag_warning_after: float = LAG_WARNING_AFTER,
    ) -> ResourceEventHandlerRegistration[T]:
        """Register a handler (an object, or the `on_*` functions) and return its handle (F4).

        `resync_period=None` uses the informer's; 0 means this handler never resyncs (F5, F6).
        Coroutine-function callbacks need `loop`: they run there, one at a time, in order.
        On a running informer the handler first gets an `on_add(obj, True)` for every cached
        object (F8).

        The handler's buffer is unbounded (G1) unless `max_buffer` is given: beyond that many
        buffered notifications, a notification for an object that already has one buffered is
        merged into it, so the handler gets the object's newest state without the versions in
        between (G11). A handler whose oldest buffered notification has waited
        `lag_warning_after` seconds is reported once as falling behind, in the log, its
        metrics and `health()`, and once when it has caught up (G10).
        """
        if handler is None:
            if on_add is None and on_update is None and on_delete is None:
                raise TypeError("add_event_handler needs a handler or at least one on_* function")
            handler = ResourceEventHandlerFuncs(on_add, on_update, on_delete)
        elif on_add is not None or on_update is not None or on_delete is not None:
            raise TypeError("add_event_handler takes a handler or on_* functions, not both")
        if loop is None:
            async_names = _coroutine_functions(handler)
            if async_names:
                raise ValueError(
                    f"{', '.join(async_names)} of informer {self.name} are coroutine functions: "
                    "pass loop=<the asyncio event loop to run them on> to add_event_handler"
                )
        period = (
            self._default_event_handler_resync_period if resync_period is None else resync_period
        )
        with self._start_lock:
            if self._stopped:
                raise InformerStoppedError(
                    f"handler {handler!r} was not added to shared informer because it has "
                    "stopped already"
                )
            if period > 0:
                # F5: at least 1 s; a shorter period lowers the check period before start only.
                period = max(period, MINIMUM_RESYNC_PERIOD)
                if period < self._resync_check_period:
                    if self._started:
                        self._log.warning(
                            "resync period %.3fs of handler %r is smaller than the resync check "
                            "period %.3fs of the running informer %s; using the latter",
                            period,
                            handler,
                            self._resync_check_period,
                            self.name,
                        )
                        period = self._resync_check_period
                    else:
                        self._resync_check_period = period
                        self._processor.resync_check_period_changed(period)
            self._handler_count += 1
            listener: ProcessorListener[T] = ProcessorListener(
                handler,
                period,
                determine_resync_period(period, self._resync_check_period),
                self._processor.clock(),
                upstream_has_synced=self.has_synced,
                loop=loop,
                logger=self._log,
                name=f"{_describe_handler(handler)}#{self._handler_count}",
                clock=self._processor.clock,
                max_buffer=max_buffer,
                lag_warning_after=lag_warning_after,
                informer=self.name,
            )
            registration = ResourceEventHandlerRegistration(self, listener)
            if not self._started:
                self._processor.add_listener(listener)
                return registration
            # F8: join under block_deltas so no notification is distributed in between; the
            # synthetic initial adds come before anything else this handler sees.
            with self._block_deltas:
                self._processor.add_listener(listener)
                for obj in self._indexer.list():
                    listener.add((ADD, obj, True))
            return registration

    def remove_event_handler(self, registration: ResourceEventHandlerRegistration[T]) -> None:
        """Unregister a handler (F9). Unknown or already removed handles are ignored; buffered
        notifications are dropped and an in-flight callback may still be running (G8).
        """
        if not isinstance(registration, ResourceEventHandlerRegistration):
            raise TypeError(
                f"{registration!r} is not a ResourceEventHandlerRegistration returned by "
                "add_event_handler"
            )
        with self._start_lock, self._block_deltas:
            if registration._informer is not self:
                return
            self._processor.remove_listener(registration._listener)

    # -- configuration -----------------------------------------------------------------------

    def set_transform(self, transform: TransformFunc | None) -> None:
        """Transform every object before it is queued (F11); only before `run`. Tombstones and
        resynced objects are never transformed; the transform should be idempotent (D19).
        """
        with self._start_lock:
            if self._started:
                raise InformerStartedError("informer has already started")
            self._transform = transform

    def set_watch_error_handler(self, handler: WatchErrorHandler | None) -> None:
        """Called with every error of the reflector's list-and-watch (F12); only before `run`."""
        with self._start_lock:
            if self._started:
                raise InformerStartedError("informer has already started")
            self._watch_error_handler = handler

    def add_indexers(self, indexers: Indexers[T]) -> None:
        """Add indexes, before or after start; they index the current cache at once (F13)."""
        with self._start_lock:
            if self._stopped:
                raise InformerStoppedError("indexer was not added because it has stopped already")
            self._indexer.add_indexers(dict(indexers))

    # -- the cache ---------------------------------------------------------------------------

    def get_store(self) -> Indexer[T]:
        """The live cache (F14). Read-only: writing through it breaks notifications."""
        return self._indexer

    def get_indexer(self) -> Indexer[T]:
        """The same live cache as `get_store()` (F14)."""
        return self._indexer

    # -- metrics -----------------------------------------------------------------------------

    def metrics(self) -> InformerMetrics:
        """A snapshot of this informer's counters: queued items, watch events and notifications
        by type, lists and relists, 410s, watch restarts, the last synced resourceVersion,
        invalid objects, and per handler its buffer and latency. Cheap: no object is walked.
        """
        queue = self._queue
        fifo = queue if isinstance(queue, (DeltaFIFO, RealFIFO)) else None
        source = self.lister_watcher
        if isinstance(source, ServesResource):
            gvr = source.resource.gvr
            resource_label = f"{gvr.group_version}/{gvr.resource}"
        else:
            resource_label = self.object_type.__name__ if self.object_type is not None else ""
        return build_informer_metrics(
            informer=self.name,
            resource=resource_label,
            # Both read without the queue's lock: `pop` holds it while an item is processed.
            has_synced=fifo is not None and fifo.has_synced_nowait(),
            queued_items=len(fifo) if fifo is not None else 0,
            reflector=self._reflector_counters,
            notifications=self._notification_counters,
            last_sync_resource_version=self.last_sync_resource_version(),
            invalid_objects=source.decode_errors if isinstance(source, CountsDecodeErrors) else 0,
            handlers=tuple(listener.metrics() for listener in self._processor.listeners()),
            shard_filter=(
                self._sharded.filter
                if self._sharded is not None and self._sharded.shard is not None
                else None
            ),
            out_of_shard=self._sharded.dropped if self._sharded is not None else 0,
            index_errors=self._indexer.index_errors,
            unindexed_objects=self._indexer.unindexed_count(),
            cached_objects=len(self._indexer),
            shard_changes=self._shard_changes,
            left_shard=self._distributor.left_shard,
            last_reshard_seconds=self._last_reshard_seconds,
        )

    def __repr__(self) -> str:
        return f"SharedIndexInformer({self.name})"


__all__ = [
    "MINIMUM_RESYNC_PERIOD",
    "QUEUE_KINDS",
    "InformerStartedError",
    "InformerStoppedError",
    "QueueKind",
    "ResourceEventHandlerRegistration",
    "SharedIndexInformer",
]
