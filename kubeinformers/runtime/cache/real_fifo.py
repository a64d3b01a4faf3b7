"""RealFIFO: every event is its own queue entry, delivered in arrival order.

client-go counterpart: tools/cache/the_real_fifo.go. Two modes (docs/behaviour.md):

* non-atomic (C-2, the informer queue of client-go v0.33-v0.35), selected by
  ``SharedIndexInformer(..., queue="ordered")``: nothing compacted, deletes of never-seen keys
  delivered, a relist expanded by the queue into tombstones *before* the relisted items;
* atomic (C-3, the informer queue of client-go v0.36), ``queue="atomic"``: a relist is ONE
  ``ReplacedAll`` entry, a resync ONE ``SyncAll`` entry, bookmarks ``Bookmark`` entries; the
  consumer swaps its whole store before any callback of the relist, and the queue lock is
  released while an entry is processed, so the watch is never blocked by a handler write.

It has the DeltaFIFO's consumer interface (``pop(process, timeout)`` handing out one-element
``Deltas``, ``has_synced``, ``close``, ``is_closed``) and producer interface (``add``,
``update``, ``delete``, ``replace``, ``resync``, ``bookmark``, a ``transformer`` attribute),
plus ``pop_batch`` (C2.7).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Generic, TypeAlias, TypeVar, cast

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    ObjectKeyError,
    meta_namespace_key,
)
from kubeinformers.runtime.api.listwatch import apply_transform

from .delta_fifo import (
    BlockingFIFO,
    Delta,
    Deltas,
    DeltaType,
    KnownObjects,
    PopProcessFunc,
    known_items,
)

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "UNLOCK_WHILE_PROCESSING_LIMIT",
    "BookmarkInfo",
    "ProcessBatchFunc",
    "RealFIFO",
    "ReplacedAllInfo",
    "SyncAllInfo",
]

T = TypeVar("T")

DEFAULT_BATCH_SIZE = 1000
"""client-go's ``defaultBatchSize``: the most entries one ``pop_batch`` hands out."""

UNLOCK_WHILE_PROCESSING_LIMIT = 2000
"""C3.7: with more entries queued than this, the lock stays held while one is processed, so
producers wait for the consumer instead of growing the queue without bound."""

ProcessBatchFunc: TypeAlias = Callable[[Deltas[T], bool], object]
"""``process_batch(deltas, is_in_initial_list)`` for a batch of distinct keys."""

_ADDED = DeltaType.ADDED
_UPDATED = DeltaType.UPDATED
_DELETED = DeltaType.DELETED
_REPLACED = DeltaType.REPLACED
_SYNC = DeltaType.SYNC
_REPLACED_ALL = DeltaType.REPLACED_ALL
_SYNC_ALL = DeltaType.SYNC_ALL
_BOOKMARK = DeltaType.BOOKMARK
_BATCHABLE = frozenset({_SYNC, _REPLACED, _ADDED, _UPDATED, _DELETED})


@dataclass(frozen=True, slots=True)
class ReplacedAllInfo(Generic[T]):
    """The object of a ``ReplacedAll`` delta (C3.1): a whole relist, already transformed."""

    resource_version: str
    objects: list[T] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SyncAllInfo:
    """The object of a ``SyncAll`` delta (C3.2): resync everything the consumer's store holds."""


@dataclass(frozen=True, slots=True)
class BookmarkInfo:
    """The object of a ``Bookmark`` delta (C3.3): the watch has seen up to this version."""

    resource_version: str


class RealFIFO(BlockingFIFO[T]):
    """An ordered queue of single deltas (client-go's RealFIFO, C-2 and C-3).

    Non-atomic (the default): ``known_objects`` (the consumer's store) is required (C2.2): it
    drives relist deletion detection and resync. Atomic (``atomic=True``): ``known_objects``
    is refused, since the consumer computes relist deletions itself (C3.4); bookmarks are
    queued unless ``emit_bookmarks=False`` and the lock is released while an entry is
    processed unless ``unlock_while_processing=False`` (then only ONE thread may pop).
    ``transformer`` is applied once to every object entering through add/update/delete/
    replace, never to tombstones or resync items.
    """

    KEYS_A_DELTA = True  # A7: a single Delta is keyed by its object

    def __init__(
        self,
        key_func: Callable[[Any], str] = meta_namespace_key,
        known_objects: KnownObjects | None = None,
        transformer: Callable[[Any], Any] | None = None,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        atomic: bool = False,
        emit_bookmarks: bool | None = None,
        unlock_while_processing: bool | None = None,
    ) -> None:
        # C2.2: Go panics ("coding error: ...") on each of these combinations.
        if not atomic and known_objects is None:
            raise ValueError(
                "RealFIFO needs known_objects (the consumer's store, e.g. the informer's "
                "Indexer): it is used for relist deletion detection and resync"
            )
        if atomic and known_objects is not None:
            raise ValueError(
                "an atomic RealFIFO takes no known_objects: its consumer computes relist "
                "deletions from its own store (C3.4)"
            )
        if not atomic and (emit_bookmarks or unlock_while_processing):
            raise ValueError("emit_bookmarks and unlock_while_processing need atomic=True (C2.2)")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._key_func = key_func
        self._known_objects = known_objects
        self.transformer = transformer
        self._batch_size = batch_size
        self.atomic = atomic
        self._emit_bookmarks = atomic if emit_bookmarks is None else emit_bookmarks
        self._unlock_while_processing = (
            atomic if unlock_while_processing is None else unlock_while_processing
        )
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._items: deque[Delta[T]] = deque()
        self._populated = False
        self._initial_population_count = 0
        self._closed = False
        self._waiting = 0

    # -- producer side (add and update: BlockingFIFO) -----------------------------------

    def delete(self, obj: T | DeletedFinalStateUnknown[T]) -> None:
        """Mark populated; ALWAYS enqueue ``Deleted``, even for never-seen keys (C2.3)."""
        with self._lock:
            self._populated = True
            self._queue_action_locked(_DELETED, obj, True)

    def replace(self, objs: Iterable[T], resource_version: str = "") -> None:
        """Reconcile a relist (C2.4): tombstone deletes first, then ``Replaced`` items.

        1. every listed key is computed (a key error aborts, nothing enqueued); 2. each key
        queued (in order of first appearance) but not listed gets ``Deleted(tombstone{key,
        its last queued object})`` unless its last entry already is a delete; 3. each known
        key neither listed nor queued gets ``Deleted(tombstone{key, known object or None})``;
        4. every listed object is enqueued as ``Replaced`` (transformed), in list order;
        5. the first call sets the initial population count to the queue length.

        Atomic mode (C3.1): every listed key is computed (a key error aborts), then ONE
        ``ReplacedAll`` entry carries the transformed list and ``resource_version``.
        """
        objs = list(objs)
        if self.atomic:
            self._replace_atomic(objs, resource_version)
            return
        with self._lock:
            key_of = self.key_of
            new_keys = {key_of(obj) for obj in objs}

            last_for_key: dict[str, Delta[T]] = {}  # insertion order = first appearance
            for delta in self._items:
                last_for_key[key_of(delta.object)] = delta

            for key, last in last_for_key.items():
                if key in new_keys or last.type is _DELETED:
                    continue
                self._queue_action_locked(
                    _DELETED, DeletedFinalStateUnknown(key, last.object), False
                )

            for key, value in known_items(self._known()):
                if key in new_keys or key in last_for_key:
                    continue
                self._queue_action_locked(_DELETED, DeletedFinalStateUnknown(key, value), False)

            for obj in objs:
                self._queue_action_locked(_REPLACED, obj, True)

            if self._begin_population_locked():
                self._initial_population_count = len(self._items)
                self._fire_synced_locked()  # an empty first list syncs right here

    def _replace_atomic(self, objs: list[T], resource_version: str) -> None:
        key_of = self.key_of
        for obj in objs:
            key_of(obj)
        transform = self.transformer
        if transform is not None:
            objs = [apply_transform(transform, obj) for obj in objs]
        with self._lock:
            self._append_info_locked(_REPLACED_ALL, ReplacedAllInfo(resource_version, objs))
            if self._begin_population_locked():
                self._initial_population_count = len(self._items)

    def resync(self) -> None:
        """Enqueue ``Sync(known object)`` (untransformed) for every known key that appears
        nowhere in the queue (C2.5). Never marks the queue populated.

        Atomic mode: ONE ``SyncAll`` entry, unconditionally (C3.2); the consumer resyncs
        every object of its store when it gets there, so no queued key is resynced early.
        """
        if self.atomic:
            with self._lock:
                self._append_info_locked(_SYNC_ALL, SyncAllInfo())
            return
        with self._lock:
            key_of = self.key_of
            queued = {key_of(delta.object) for delta in self._items}
            for key, obj in known_items(self._known()):
                if key in queued or obj is None:
                    continue
                self._queue_action_locked(_SYNC, obj, False)

    def bookmark(self, resource_version: str) -> None:
        """Enqueue a ``Bookmark`` entry when bookmarks are emitted (atomic mode), else
        nothing (C3.3). The reflector calls it for every BOOKMARK watch event."""
        if self._emit_bookmarks:
            with self._lock:
                self._append_info_locked(_BOOKMARK, BookmarkInfo(resource_version))

    def close(self) -> None:
        """Set the closed flag and wake every blocked pop; writes are still accepted."""
        with self._lock:
            self._closed = True
            self._cond.notify_all()

    # -- consumer side ---------------------------------------------------------------

    def pop(self, process: PopProcessFunc[T], timeout: float | None = None) -> Deltas[T]:
        """Hand the oldest entry, as a one-element Deltas, to ``process`` (C2.6).

        Same contract as ``DeltaFIFO.pop``: blocks while empty; FIFOClosedError on a closed,
        empty queue; with ``timeout``, returns ``[]`` without calling ``process`` when nothing
        arrives. ``process`` runs under the queue lock (released meanwhile in atomic mode
        while fewer than UNLOCK_WHILE_PROCESSING_LIMIT entries wait, C3.7); the initial
        population count drops only after it returned (so ``has_synced`` never turns true
        mid-processing). Its exceptions propagate; the entry is not re-queued.
        """
        with self._lock:
            if not self._items and not self._wait_locked(timeout):
                return []
            is_in_initial_list = not (self._populated and self._initial_population_count == 0)
            deltas = [self._items.popleft()]
            unlocked = self._unlock_for_processing_locked()
            try:
                process(deltas, is_in_initial_list)
            finally:
                if unlocked:
                    self._lock.acquire()
                if self._initial_population_count > 0:
                    self._initial_population_count -= 1
                    self._fire_synced_locked()
            return deltas

    def pop_batch(
        self,
        process_batch: ProcessBatchFunc[T],
        process_single: PopProcessFunc[T],
        timeout: float | None = None,
    ) -> Deltas[T]:
        """Pop up to ``batch_size`` entries of distinct keys and process them together (C2.7).

        A batch never crosses the end of the initial list, stops before a repeated key or a
        non-batchable entry (which, when first, is processed alone), and includes then stops
        at an entry whose key cannot be computed. One entry goes to ``process_single``,
        several to ``process_batch``. Returns the entries handed out (``[]`` on timeout).
        """
        with self._lock:
            if not self._items and not self._wait_locked(timeout):
                return []
            is_in_initial_list = not (self._populated and self._initial_population_count == 0)
            items = self._items
            limit = min(self._batch_size, len(items))
            if self._initial_population_count > 0:
                limit = min(limit, self._initial_population_count)
            batch: Deltas[T] = []
            seen: set[str] = set()
            for delta in islice(items, limit):
                if delta.type not in _BATCHABLE:
                    if not batch:
                        batch.append(delta)
                    break
                try:
                    key = self.key_of(delta)
                except ObjectKeyError:
                    batch.append(delta)  # Go pops a broken entry and closes the batch
                    break
                if key in seen:
                    break
                seen.add(key)
                batch.append(delta)
            for _ in batch:
                items.popleft()
            unlocked = self._unlock_for_processing_locked()
            try:
                if len(batch) == 1:
                    process_single(batch, is_in_initial_list)
                else:
                    process_batch(batch, is_in_initial_list)
            finally:
                if unlocked:
                    self._lock.acquire()
                if self._initial_population_count > 0:
                    self._initial_population_count -= len(batch)
                    self._fire_synced_locked()
            return batch

    def _pending(self) -> Sized:
        return self._items

    def __len__(self) -> int:
        return len(self._items)

    # -- internals -------------------------------------------------------------------

    def _known(self) -> KnownObjects:
        """The consumer's store; only the non-atomic mode has one (checked at construction)."""
        return cast(KnownObjects, self._known_objects)

    def _unlock_for_processing_locked(self) -> bool:
        """C3.7: release the lock for the consumer's processing when allowed; True if
        released (the caller re-acquires it before touching the queue again)."""
        if self._unlock_while_processing and len(self._items) < UNLOCK_WHILE_PROCESSING_LIMIT:
            self._lock.release()
            return True
        return False

    def _append_info_locked(self, action: DeltaType, info: object) -> None:
        """Queue a whole-queue entry (ReplacedAll, SyncAll, Bookmark): no key, no transform."""
        self._items.append(Delta(action, cast(Any, info)))
        if self._waiting:
            self._cond.notify()

    def _queue_action_locked(self, action: DeltaType, obj: Any, transform: bool) -> None:
        self.key_of(obj)  # an unkeyable object is rejected (ObjectKeyError)
        if transform and self.transformer is not None:
            if not isinstance(obj, DeletedFinalStateUnknown):
                obj = apply_transform(self.transformer, obj)
        self._items.append(Delta(action, obj))
        if self._waiting:
            self._cond.notify()
