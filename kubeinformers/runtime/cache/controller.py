"""The low-level controller: a reflector fills a queue, a process loop drains it (section E).

client-go counterpart: tools/cache/controller.go (`controller`, `processDeltas`,
`NewInformerWithOptions`). The shared informer builds one of these; `new_informer` builds a
non-shared one whose single handler is called synchronously from the process loop (E5).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
    meta_namespace_key,
)
from kubeinformers.runtime.api.listwatch import ListerWatcher
from kubeinformers.runtime.cache.delta_fifo import Delta, DeltaFIFO, DeltaType, FIFOClosedError
from kubeinformers.runtime.cache.handlers import HandlerResult, ResourceEventHandler
from kubeinformers.runtime.cache.index_errors import IndexFailureLog
from kubeinformers.runtime.cache.real_fifo import BookmarkInfo, ReplacedAllInfo
from kubeinformers.runtime.cache.store import (
    Indexer,
    Indexers,
    Transaction,
    TransactionError,
    TransactionType,
)
from kubeinformers.runtime.metrics import ReflectorCounters
from kubeinformers.runtime.reflector.reflector import Reflector

T = TypeVar("T")

_log = logging.getLogger("kubeinformers.controller")

_DELETED = DeltaType.DELETED
_REPLACED_ALL = DeltaType.REPLACED_ALL
_SYNC_ALL = DeltaType.SYNC_ALL
_WHOLE_STORE = frozenset({DeltaType.REPLACED_ALL, DeltaType.SYNC_ALL, DeltaType.BOOKMARK})

ProcessFunc = Callable[[list[Delta[T]], bool], None]
WatchErrorHandler = Callable[[Reflector[Any], BaseException], None]
TransformFunc = Callable[[Any], Any]


class Queue(Protocol[T]):
    """What the controller needs of its queue: the reflector's store side plus pop/close.

    The informer gives it the atomic RealFIFO (C-3) unless told otherwise; any FIFO with the
    same methods fits.
    """

    def add(self, obj: T) -> None: ...
    def update(self, obj: T) -> None: ...
    def delete(self, obj: T) -> None: ...
    def replace(self, objs: Iterable[T], resource_version: str) -> None: ...
    def resync(self) -> None: ...
    def pop(
        self, process: Callable[[list[Delta[T]], bool], None], timeout: float | None = None
    ) -> list[Delta[T]]: ...
    def close(self) -> None: ...
    def has_synced(self) -> bool: ...


@runtime_checkable
class BatchQueue(Queue[T], Protocol[T]):
    """A queue that can also hand out batches of distinct keys (RealFIFO, C2.7)."""

    def pop_batch(
        self,
        process_batch: Callable[[list[Delta[T]], bool], object],
        process_single: Callable[[list[Delta[T]], bool], None],
        timeout: float | None = None,
    ) -> list[Delta[T]]: ...


class Store(Protocol[T]):
    """The store side `process_deltas` writes to (an `Indexer`)."""

    def upsert(self, obj: T) -> T | None: ...
    def delete(self, obj: T | DeletedFinalStateUnknown[T]) -> None: ...
    def get(self, obj: T) -> T | None: ...
    def transaction(self, *txns: Transaction) -> None: ...
    # The atomic queue's whole-store entries (C3.4-C3.6):
    def key_of(self, obj: Any) -> str: ...
    def snapshot(self) -> dict[str, T]: ...
    def list(self) -> list[T]: ...
    def replace(self, objs: Iterable[T], resource_version: str = "") -> None: ...
    def bookmark(self, resource_version: str) -> None: ...


@dataclass
class ControllerConfig(Generic[T]):
    """Everything a `Controller` needs (client-go's `Config`)."""

    queue: Queue[T]
    lister_watcher: ListerWatcher[T]
    process: ProcessFunc[T]
    # E4: used instead of `process` for batches when the queue has `pop_batch`.
    process_batch: ProcessFunc[T] | None = None
    object_type: type[T] | None = None
    full_resync_period: float = 0.0
    should_resync: Callable[[], bool] | None = None
    watch_error_handler: WatchErrorHandler | None = None
    use_watch_list: bool | None = None
    page_size: int | None = None
    name: str | None = None
    # What the reflector's messages call the objects (D1); None: from object_type.
    type_description: str | None = None
    # The reflector's metrics counters, kept by the owner (the informer) across runs.
    reflector_counters: ReflectorCounters | None = None


class Controller(Generic[T]):
    """Runs a reflector into the queue and pops the queue into `config.process` (E1, E2)."""

    def __init__(
        self, config: ControllerConfig[T], *, logger: logging.Logger | None = None
    ) -> None:
        self.config = config
        self._log = logger or _log
        self._reflector: Reflector[T] | None = None
        self._lock = threading.Lock()

    def run(self, stop: threading.Event) -> None:
        """Block until `stop` is set; then close the queue and wait for the reflector (E1)."""
        cfg = self.config
        name = cfg.name or "controller"
        reflector = Reflector(
            cfg.lister_watcher,
            cfg.object_type,
            cfg.queue,
            cfg.full_resync_period,
            name=cfg.name,
            type_description=cfg.type_description,
            should_resync=cfg.should_resync,
            watch_error_handler=cfg.watch_error_handler,
            use_watch_list=cfg.use_watch_list,
            page_size=cfg.page_size,
            counters=cfg.reflector_counters,
        )
        with self._lock:
            self._reflector = reflector

        def run_reflector() -> None:
            try:
                reflector.run(stop)
            except Exception:
                self._log.exception("reflector of %s ended with an error", name)
            finally:
                # E1: on stop the queue is closed, which ends a pop blocked on an empty queue.
                cfg.queue.close()

        thread = threading.Thread(
            target=run_reflector, name=f"kubeinformers-reflector-{name}", daemon=True
        )
        thread.start()
        try:
            self._process_loop(stop)
            stop.wait()
        finally:
            if stop.is_set():
                thread.join()

    def _process_loop(self, stop: threading.Event) -> None:
        """E2: pop and process until stopped; processing errors are logged and discarded."""
        queue = self.config.queue
        process = self.config.process
        process_batch = self.config.process_batch
        pop: Callable[[], object]
        if process_batch is not None and isinstance(queue, BatchQueue):
            pop = functools.partial(queue.pop_batch, process_batch, process)
        else:
            pop = functools.partial(queue.pop, process)
        while not stop.is_set():
            try:
                pop()
            except FIFOClosedError:
                return
            except Exception:
                # E2: no retry (since client-go v0.33); the next item is processed.
                self._log.exception("error processing an item of %s; dropped", self.config.name)

    def relist(self) -> None:
        """Ask the running reflector to end its watch and list again (N8); before `run`,
        nothing to do (the first list is still to come)."""
        with self._lock:
            reflector = self._reflector
        if reflector is not None:
            reflector.relist()

    def retry_now(self) -> bool:
        """Cut short the running reflector's backoff wait for an unreachable server (D4, M1:
        the server just answered a write); False when it is not in one."""
        with self._lock:
            reflector = self._reflector
        return reflector.retry_now() if reflector is not None else False

    def has_synced(self) -> bool:
        """Delegates to the queue (E5): the initial list has been popped and processed."""
        return self.config.queue.has_synced()

    def last_error(self) -> BaseException | None:
        """The reflector's most recent list or watch failure; None before `run` or the first."""
        with self._lock:
            reflector = self._reflector
        return reflector.last_error() if reflector is not None else None

    def last_sync_resource_version(self) -> str:
        """The reflector's (D21); "" before `run` (E5)."""
        with self._lock:
            reflector = self._reflector
        return reflector.last_sync_resource_version() if reflector is not None else ""


def process_deltas(
    handler: ResourceEventHandler[T],
    store: Store[T],
    deltas: Iterable[Delta[T]],
    is_in_initial_list: bool,
) -> None:
    """Apply deltas oldest to newest, writing the store before each callback (E3).

    Add vs update is decided by whether the key is in the store, never by the delta type;
    a Deleted delta always reaches `on_delete`, even for a key the store did not hold. The
    atomic queue's ReplacedAll, SyncAll and Bookmark deltas act on the whole store (C3.4-C3.6).
    """
    for delta in deltas:
        obj = delta.object
        kind = delta.type
        if kind is _DELETED:
            store.delete(obj)
            handler.on_delete(obj)
            continue
        if kind in _WHOLE_STORE:
            if kind is _REPLACED_ALL:
                _process_replaced_all(
                    handler, store, cast(ReplacedAllInfo[T], obj), is_in_initial_list
                )
            elif kind is _SYNC_ALL:
                for current in store.list():  # C3.5
                    handler.on_update(current, current)
            else:
                store.bookmark(cast(BookmarkInfo, obj).resource_version)  # C3.6
            continue
        # Sync, Replaced, Added, Updated: the object is never a tombstone here. One upsert
        # both writes and tells whether the key was present (and with what).
        new = cast(T, obj)
        old = store.upsert(new)
        if old is not None:
            handler.on_update(old, new)
        else:
            handler.on_add(new, is_in_initial_list)


def _process_replaced_all(
    handler: ResourceEventHandler[T],
    store: Store[T],
    info: ReplacedAllInfo[T],
    is_in_initial_list: bool,
) -> None:
    """C3.4: the store is swapped for the new list first; then every key it no longer has
    is deleted (as a tombstone holding the last stored object), then each listed object is
    an update of what was stored under its key, or an add. Every callback sees the new store.
    """
    before = store.snapshot()
    key_of = store.key_of
    listed = [(key_of(obj), obj) for obj in info.objects]
    listed_keys = {key for key, _ in listed}
    deletions = [
        DeletedFinalStateUnknown(key, old) for key, old in before.items() if key not in listed_keys
    ]
    store.replace(info.objects, info.resource_version)
    for tombstone in deletions:
        handler.on_delete(tombstone)
    for key, new in listed:
        old = before.get(key)
        if old is not None:
            handler.on_update(old, new)
        else:
            handler.on_add(new, is_in_initial_list)


class BatchProcessingError(Exception):
    """Some store writes of a batch failed; only the others were notified (E4)."""


def process_deltas_in_batch(
    handler: ResourceEventHandler[T],
    store: Store[T],
    deltas: list[Delta[T]],
    is_in_initial_list: bool,
) -> None:
    """E4: like `process_deltas` for a batch of distinct keys, with all store writes in one
    transaction first and the callbacks after it, in batch order; when some writes fail only
    the successful items are notified and BatchProcessingError is raised.
    """
    txns: list[Transaction] = []
    callbacks: list[Callable[[], object]] = []
    for delta in deltas:
        obj = delta.object
        if delta.type is DeltaType.DELETED:
            txns.append(Transaction(TransactionType.DELETE, obj))
            callbacks.append(partial(handler.on_delete, obj))
            continue
        new = cast(T, obj)
        try:
            old = store.get(new)
        except KeyError:  # no key: the transaction reports it
            old = None
        if old is not None:
            txns.append(Transaction(TransactionType.UPDATE, new))
            callbacks.append(partial(handler.on_update, old, new))
        else:
            txns.append(Transaction(TransactionType.ADD, new))
            callbacks.append(partial(handler.on_add, new, is_in_initial_list))
    try:
        store.transaction(*txns)
    except TransactionError as e:
        for i in e.successful_indices:
            callbacks[i]()
        raise BatchProcessingError(f"not all items in the batch successfully processed: {e}") from e
    for callback in callbacks:
        callback()


class _LoggingHandler(Generic[T]):
    """Calls a non-shared informer's handler and logs (with the key) what it raises."""

    def __init__(self, handler: ResourceEventHandler[T], logger: logging.Logger) -> None:
        self.handler = handler
        self._log = logger

    def _call(self, what: str, key_obj: object, fn: Callable[[], HandlerResult]) -> None:
        try:
            result = fn()
        except Exception:
            self._log.exception(
                "event handler %r failed on %s of %s", self.handler, what, _key(key_obj)
            )
            return
        if result is not None:
            if isinstance(result, Coroutine):  # never awaited: close it, so no warning follows
                result.close()
            self._log.error(
                "event handler %r returned an awaitable; a non-shared informer calls handlers "
                "synchronously: use a SharedIndexInformer with loop=... for coroutines",
                self.handler,
            )

    def on_add(self, obj: T, is_in_initial_list: bool) -> None:
        self._call("add", obj, lambda: self.handler.on_add(obj, is_in_initial_list))

    def on_update(self, old: T, new: T) -> None:
        self._call("update", new, lambda: self.handler.on_update(old, new))

    def on_delete(self, obj: T | DeletedFinalStateUnknown[T]) -> None:
        self._call("delete", obj, lambda: self.handler.on_delete(obj))


def _key(obj: object) -> str:
    try:
        return deletion_handling_meta_namespace_key(obj)
    except Exception:
        return f"<no key: {type(obj).__name__}>"


def new_informer(
    lister_watcher: ListerWatcher[T],
    object_type: type[T] | None,
    resync_period: float,
    handler: ResourceEventHandler[T],
    *,
    indexers: Indexers[T] | None = None,
    transform: TransformFunc | None = None,
    name: str | None = None,
) -> tuple[Indexer[T], Controller[T]]:
    """A non-shared informer (E5): its handler is called synchronously by the process loop.

    Returns the store (keyed by A2) and the controller to `run(stop)`. A handler that raises
    is logged with the object's key; the store keeps the object and processing goes on.
    """
    logger = logging.getLogger(f"kubeinformers.informer.{name}") if name else _log
    store: Indexer[T] = Indexer(
        deletion_handling_meta_namespace_key,
        indexers,
        index_errors=IndexFailureLog(name or "informer", logger),  # B18
    )
    fifo: DeltaFIFO[T] = DeltaFIFO(
        key_func=meta_namespace_key,
        known_objects=store,
        emit_delta_type_replaced=True,
        transformer=transform,
    )
    safe = _LoggingHandler(handler, logger)

    def process(deltas: list[Delta[T]], is_in_initial_list: bool) -> None:
        process_deltas(safe, store, deltas, is_in_initial_list)

    config = ControllerConfig(
        queue=fifo,
        lister_watcher=lister_watcher,
        process=process,
        object_type=object_type,
        full_resync_period=resync_period,
        name=name,
    )
    return store, Controller(config, logger=logger)


__all__ = [
    "BatchProcessingError",
    "BatchQueue",
    "Controller",
    "ControllerConfig",
    "ProcessFunc",
    "Queue",
    "Store",
    "new_informer",
    "process_deltas",
    "process_deltas_in_batch",
]
