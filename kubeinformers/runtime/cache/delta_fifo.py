"""DeltaFIFO: the informer queue of client-go up to v0.32 (`queue="delta"`) — per-key lists of
deltas, handed out in FIFO order.

client-go counterpart: tools/cache/delta_fifo.go (section C-1 of docs/behaviour.md;
the ≤ v0.32 behaviour, including the legacy ``add_if_not_present`` / ``RequeueError`` shim of
C1.12).

The producer (the reflector) calls add/update/delete/replace/resync; a single consumer (the
controller) calls ``pop``, which runs ``process`` while holding the queue lock (C1.9), so the
consumer's store writes and the queue's knownObjects reads never interleave.
"""

from __future__ import annotations

import builtins
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sized
from enum import StrEnum
from typing import Any, ClassVar, Generic, NamedTuple, Protocol, TypeAlias, TypeVar

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    ObjectKeyError,
    meta_namespace_key,
)
from kubeinformers.runtime.api.listwatch import apply_transform

from .store import Indexer

__all__ = [
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "Deltas",
    "FIFOClosedError",
    "KnownObjects",
    "PopProcessFunc",
    "RequeueError",
]

T = TypeVar("T")


class DeltaType(StrEnum):
    """What happened to an object (C). The last three occur only in atomic RealFIFO mode."""

    ADDED = "Added"
    UPDATED = "Updated"
    DELETED = "Deleted"
    REPLACED = "Replaced"
    SYNC = "Sync"
    REPLACED_ALL = "ReplacedAll"
    SYNC_ALL = "SyncAll"
    BOOKMARK = "Bookmark"


_ADDED = DeltaType.ADDED
_UPDATED = DeltaType.UPDATED
_DELETED = DeltaType.DELETED
_REPLACED = DeltaType.REPLACED
_SYNC = DeltaType.SYNC


class Delta(NamedTuple, Generic[T]):
    """One change: its type and the object (or a tombstone) after it.

    A NamedTuple: immutable and cheap to create, which matters at one per event.
    """

    type: DeltaType
    object: T | DeletedFinalStateUnknown[T]


Deltas: TypeAlias = list[Delta[T]]
"""The deltas of one key, oldest first; never empty when handed out."""

PopProcessFunc: TypeAlias = Callable[[Deltas[T], bool], object]
"""``process(deltas, is_in_initial_list)``; its return value is ignored."""


class FIFOClosedError(Exception):
    """``pop`` on a closed and empty queue (shared by both FIFOs)."""

    def __init__(self, message: str = "DeltaFIFO: manipulating with closed queue") -> None:
        super().__init__(message)


class RequeueError(Exception):
    """Raised by ``process`` to put the popped item back (legacy C1.12 ``ErrRequeue``).

    The item is re-added only if its key has no newer deltas (``add_if_not_present``);
    ``pop`` then raises ``err`` if one was given, else returns the deltas normally.
    """

    def __init__(self, err: BaseException | None = None) -> None:
        super().__init__(str(err) if err is not None else "requeue")
        self.err = err


class KnownObjects(Protocol):
    """What the FIFO needs from the consumer's store (client-go's KeyListerGetter)."""

    def list_keys(self) -> list[str]: ...

    def get_by_key(self, key: str) -> Any | None: ...


def _dedup_deltas(deltas: list[Delta[Any]]) -> None:
    """C1.3: collapse the last two deltas only when both are Deleted, in place.

    The older one survives unless it carries a tombstone; then the newer one does.
    """
    older = deltas[-2]
    if older.type is not _DELETED:
        return
    if isinstance(older.object, DeletedFinalStateUnknown):
        del deltas[-2]
    else:
        del deltas[-1]


CONSUMER_LINGER = 0.001
"""Seconds a queue's consumer (and a handler's delivery thread) keeps polling an emptied buffer
before it sleeps until woken: the most a notification following within that time is delayed,
and what lets a burst be taken in batches (see `BlockingFIFO._wait_locked`)."""


class BlockingFIFO(Generic[T]):
    """What DeltaFIFO and RealFIFO share: keys (A7), `add` and `update` (C1.4, C2.3), waiting
    for items under the queue's condition, closing, and the initial-population sync check
    (C1.10, C2.6).

    Subclasses set `_key_func`, `_lock`, `_cond` (over `_lock`), `_closed`, `_waiting`,
    `_populated`, `_initial_population_count`; they queue one change in
    `_queue_action_locked` and return their pending items from `_pending()`.
    """

    KEYS_A_DELTA: ClassVar[bool] = False
    """Whether `key_of` also keys a single `Delta` by its object (RealFIFO, A7)."""

    _key_func: Callable[[Any], str]
    _lock: threading.RLock
    _cond: threading.Condition
    _closed: bool
    _waiting: int
    _populated: bool
    _initial_population_count: int
    _synced_callback: Callable[[], None] | None = None
    _repopulating: bool = False  # N8: the next Replace is a new initial population

    def _pending(self) -> Sized:
        raise NotImplementedError

    def _queue_action_locked(self, action: DeltaType, obj: Any, transform: bool) -> object:
        """Queue one change of `obj` (the caller holds the lock): key it (A7), transform it
        unless `transform` is false or it is a tombstone, append it, wake a waiter."""
        raise NotImplementedError

    # -- keys ------------------------------------------------------------------------

    def key_of(self, obj: Any) -> str:
        """A7: a Deltas list → key of its newest element; a single Delta → its object (when
        KEYS_A_DELTA); a tombstone → its key; else the key function. Failures raise
        ObjectKeyError."""
        if type(obj) is list:
            if not obj:
                raise ObjectKeyError(obj, "0 length Deltas object; can't get key")
            obj = obj[-1].object
        elif self.KEYS_A_DELTA and type(obj) is Delta:
            obj = obj.object
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        try:
            return self._key_func(obj)
        except Exception as e:
            raise ObjectKeyError(obj, e) from e

    # -- producer side ---------------------------------------------------------------

    def add(self, obj: T) -> None:
        """Mark populated and enqueue ``Added`` (C1.4, C2.3)."""
        with self._lock:
            self._populated = True
            self._queue_action_locked(_ADDED, obj, True)

    def update(self, obj: T) -> None:
        """Mark populated and enqueue ``Updated`` (C1.4, C2.3)."""
        with self._lock:
            self._populated = True
            self._queue_action_locked(_UPDATED, obj, True)

    # -- consumer side ---------------------------------------------------------------

    def on_synced(self, callback: Callable[[], None]) -> None:
        """Call `callback` once, as soon as `has_synced()` turns true (now, if it is).

        It runs under the queue lock, so it must be quick (set an Event): sync waiters then
        wake at the sync instead of at their next poll.
        """
        with self._lock:
            self._synced_callback = callback
            self._fire_synced_locked()

    def _fire_synced_locked(self) -> None:
        callback = self._synced_callback
        if (
            callback is not None
            and self._populated
            and self._initial_population_count == 0
            and not self._repopulating
        ):
            self._synced_callback = None
            callback()

    def _wait_locked(self, timeout: float | None) -> bool:
        """Wait until the queue is non-empty; False on timeout. Raises when closed+empty.

        An empty queue is first waited on for at most CONSUMER_LINGER without counting as a
        waiter, so producers skip the notify: in a stream of events the consumer then wakes
        once per linger for all that arrived meanwhile instead of once per event (a condition
        wake-up costs more than processing a delta). Only after a linger that brought nothing
        does it wait as a waiter, woken by the next producer at once.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._pending() and not self._closed:
            self._cond.wait(CONSUMER_LINGER if timeout is None else min(timeout, CONSUMER_LINGER))
        while not self._pending():
            if self._closed:
                raise FIFOClosedError()
            remaining = None
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
            self._waiting += 1
            try:
                self._cond.wait(remaining)
            finally:
                self._waiting -= 1
        return True

    def has_synced(self) -> bool:
        """True once populated and every item of the first Replace was popped (C1.10, C2.6);
        after `repopulate()`, of the next Replace."""
        with self._lock:
            return (
                self._populated and self._initial_population_count == 0 and not self._repopulating
            )

    def has_synced_nowait(self) -> bool:
        """`has_synced()` read without the queue lock, for metrics: never waits for a `pop`
        in progress (its `process` runs under the lock); may lag one change behind."""
        return self._populated and self._initial_population_count == 0 and not self._repopulating

    def repopulate(self, on_synced: Callable[[], None] | None = None) -> None:
        """N8 (the informer's shard changed): the next Replace is a new initial population;
        `has_synced()` is False from now until every item it queued has been popped, and
        then `on_synced` is called (under the queue lock: keep it quick). Adds, updates and
        deletes in between do not end it (unlike before the first Replace)."""
        with self._lock:
            self._repopulating = True
            if on_synced is not None:
                earlier = self._synced_callback
                if earlier is None:
                    self._synced_callback = on_synced
                else:

                    def both() -> None:
                        earlier()
                        on_synced()

                    self._synced_callback = both

    def _begin_population_locked(self) -> bool:
        """A Replace is queued: True when it is an initial population (the first Replace,
        or the first after `repopulate()`); the caller then counts its items."""
        if self._populated and not self._repopulating:
            return False
        self._populated = True
        self._repopulating = False
        return True

    def is_closed(self) -> bool:
        with self._lock:
            return self._closed


class DeltaFIFO(BlockingFIFO[T]):
    """A producer/consumer queue of per-key deltas (client-go's DeltaFIFO, section C-1).

    ``key_func`` keys real objects (default A1; tombstones and Deltas are keyed per A7);
    ``known_objects`` is the consumer's store (normally the informer's Indexer), used for
    delete filtering, relist deletion detection and resync; ``emit_delta_type_replaced``
    makes Replace emit ``Replaced`` instead of ``Sync``; ``transformer`` is applied exactly
    once to every object entering through add/update/delete/replace (never to tombstones,
    never on resync).
    """

    def __init__(
        self,
        key_func: Callable[[Any], str] = meta_namespace_key,
        known_objects: KnownObjects | None = None,
        emit_delta_type_replaced: bool = False,
        transformer: Callable[[Any], Any] | None = None,
    ) -> None:
        self._key_func = key_func
        self._known_objects = known_objects
        self._emit_delta_type_replaced = emit_delta_type_replaced
        self.transformer = transformer
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._items: dict[str, list[Delta[T]]] = {}
        self._queue: deque[str] = deque()
        self._populated = False
        self._initial_population_count = 0
        self._closed = False
        self._waiting = 0  # consumers blocked in pop; lets writers skip notify when none

    # -- producer side (add and update: BlockingFIFO) -----------------------------------

    def delete(self, obj: T | DeletedFinalStateUnknown[T]) -> None:
        """Enqueue ``Deleted`` unless the key is unknown everywhere (C1.5).

        Without known_objects the delete is dropped when the key has no queued deltas; with
        them, only when known_objects says "absent" (without error) and nothing is queued.
        """
        key = self.key_of(obj)
        with self._lock:
            self._populated = True  # C1.5: even when the delete is then ignored
            if key not in self._items:
                known = self._known_objects
                if known is None:
                    return
                try:
                    exists = known.get_by_key(key) is not None
                except Exception:
                    exists = True  # a lookup error keeps the delete (Go: err != nil)
                if not exists:
                    return
            self._queue_action_locked(_DELETED, obj, True)

    def replace(self, objs: Iterable[T], resource_version: str = "") -> None:
        """Replace the queue's view of the world with ``objs`` (C1.6; ``resource_version``
        is ignored). Each object gets ``Sync`` (or ``Replaced``); keys that vanished get a
        tombstone ``Deleted``; the first call sets the initial population count."""
        action = _REPLACED if self._emit_delta_type_replaced else _SYNC
        with self._lock:
            keys: set[str] = set()
            for obj in objs:
                # Key errors abort the call (C1.6 step 1); transform as a Replaced action.
                keys.add(self._queue_action_locked(action, obj, True))

            queued_deletions = 0
            items = self._items
            # Step 2: deletion detection against the queue (new keys above are all in `keys`,
            # so the dict's key set does not change while we iterate a snapshot of it).
            for key in [k for k in items if k not in keys]:
                newest: Any = items[key][-1].object
                if isinstance(newest, DeletedFinalStateUnknown):
                    newest = newest.obj  # A6: tombstones never nest
                queued_deletions += 1
                self._queue_action_locked(_DELETED, DeletedFinalStateUnknown(key, newest), False)

            # Step 3: known objects that are neither listed nor queued.
            known = self._known_objects
            if known is not None:
                for key, value in known_items(known):
                    if key in keys or key in items:
                        continue
                    queued_deletions += 1
                    self._queue_action_locked(_DELETED, DeletedFinalStateUnknown(key, value), False)

            if self._begin_population_locked():  # step 4
                self._initial_population_count = len(keys) + queued_deletions
                self._fire_synced_locked()  # an empty first list syncs right here

    def resync(self) -> None:
        """Enqueue ``Sync`` for every known object whose key has nothing queued (C1.8).

        Not transformed (the known objects already were); never marks the queue populated.
        """
        known = self._known_objects
        if known is None:
            return
        with self._lock:
            items = self._items
            for _, obj in known_items(known):
                if obj is None:
                    continue  # lookup error or absent: skip
                key = self.key_of(obj)
                if key in items:
                    continue  # kubernetes UpdateResyncRace: a queued delta is newer
                self._queue_action_locked(_SYNC, obj, False)

    def add_if_not_present(self, deltas: Deltas[T]) -> None:
        """Legacy (C1.12): mark populated; enqueue ``deltas`` whole under their key only if
        that key has nothing queued."""
        if type(deltas) is not list:
            raise TypeError(f"object must be of type Deltas (a list of Delta), got {deltas!r}")
        key = self.key_of(deltas)
        with self._lock:
            self._add_if_not_present_locked(key, deltas)

    def close(self) -> None:
        """Set the closed flag and wake every blocked ``pop`` (C1.11). Producers may still
        write; consumers drain what is queued, then get FIFOClosedError."""
        with self._lock:
            self._closed = True
            self._cond.notify_all()

    # -- consumer side ---------------------------------------------------------------

    def pop(self, process: PopProcessFunc[T], timeout: float | None = None) -> Deltas[T]:
        """Hand the oldest key's deltas to ``process(deltas, is_in_initial_list)`` (C1.9).

        Blocks while the queue is empty. On a closed, empty queue raises FIFOClosedError
        (items queued before close are still handed out). With ``timeout`` (seconds), when
        nothing arrives in time it returns an empty list without calling ``process``.

        ``process`` runs while the queue lock is held. Its exceptions propagate and the item
        is NOT re-queued (v0.33+), except RequeueError, which re-adds the item if its key
        has nothing newer queued and then raises ``RequeueError.err`` (if any) or returns.
        """
        with self._lock:
            if not self._queue:
                if not self._wait_locked(timeout):
                    return []
            is_in_initial_list = not (self._populated and self._initial_population_count == 0)
            key = self._queue.popleft()
            initial = self._initial_population_count > 0
            if initial:
                self._initial_population_count -= 1
            deltas = self._items.pop(key)
            try:
                process(deltas, is_in_initial_list)
            except RequeueError as e:
                self._add_if_not_present_locked(key, deltas)
                if e.err is not None:
                    raise e.err from e
            finally:
                if initial:  # after processing, as RealFIFO: never mid-processing
                    self._fire_synced_locked()
            return deltas

    def _pending(self) -> Sized:
        return self._queue

    # -- inspection (legacy C1.12) -----------------------------------------------------

    def get(self, obj: Any) -> Deltas[T] | None:
        """A copy of the Deltas queued under ``obj``'s key, or None."""
        return self.get_by_key(self.key_of(obj))

    def get_by_key(self, key: str) -> Deltas[T] | None:
        with self._lock:
            deltas = self._items.get(key)
            return list(deltas) if deltas is not None else None

    def list(self) -> builtins.list[T | DeletedFinalStateUnknown[T]]:
        """The newest object of each queued key, in queue order."""
        with self._lock:
            items = self._items
            return [items[k][-1].object for k in self._queue]

    def list_keys(self) -> builtins.list[str]:
        """Queued keys in queue order."""
        with self._lock:
            return builtins.list(self._queue)

    def __len__(self) -> int:
        return len(self._queue)

    # -- internals -------------------------------------------------------------------

    def _queue_action_locked(self, action: DeltaType, obj: Any, transform: bool) -> str:
        """C1.2: key (A7), transform unless tombstone/resync, append, dedup, wake a waiter."""
        key = self.key_of(obj)
        if transform and self.transformer is not None:
            if not isinstance(obj, DeletedFinalStateUnknown):
                obj = apply_transform(self.transformer, obj)
        deltas = self._items.get(key)
        if deltas is None:
            self._items[key] = [Delta(action, obj)]
            self._queue.append(key)
            if self._waiting:
                self._cond.notify()
        else:
            deltas.append(Delta(action, obj))
            if action is _DELETED:
                _dedup_deltas(deltas)
        return key

    def _add_if_not_present_locked(self, key: str, deltas: Deltas[T]) -> None:
        self._populated = True
        if key in self._items:
            return
        self._items[key] = deltas
        self._queue.append(key)
        if self._waiting:
            self._cond.notify()


def _lookup(known: KnownObjects, key: str) -> Any | None:
    try:
        return known.get_by_key(key)
    except Exception:
        return None


def known_items(known: KnownObjects) -> Iterable[tuple[str, Any | None]]:
    """(key, object or None) for every known key; None when absent or the lookup failed.

    An Indexer is read with one snapshot (one lock acquisition) instead of a lookup per key;
    the result is the same because the FIFO consumer writes the indexer only inside ``pop``,
    under the FIFO lock, which the callers hold.
    """
    if isinstance(known, Indexer):
        return known.snapshot().items()
    return [(key, _lookup(known, key)) for key in known.list_keys()]
