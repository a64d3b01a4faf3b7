"""What the thread-based and the asyncio reconcile loops share: inputs, sync waiting, retries.

`ReconcileLoop` (reconcile/loop.py, threads) and `AsyncReconcileLoop` (reconcile/async_loop.py,
asyncio tasks) are thin faces over `ReconcileCore`: they differ only in their queue (a
`RateLimitingQueue` or an `AsyncRateLimitingQueue`), in how they wait and in how they call
`reconcile(key)`. Everything else is here, once:

* inputs: `watch(informer, key_func, predicate=...)` turns an informer's notifications into
  keys (I2 collapses bursts in the queue), `wait_for(source)` adds a cache to wait for,
  `enqueue(key)` / `enqueue_after(key, delay)` add keys yourself;
* sync waiting: `_sync_waits(first, longest)` yields the pauses between `has_synced()` checks and says,
  every `SYNC_HINT_AFTER` seconds, how many caches are still not synced;
* handing keys off (N10): `release(region)` holds back the keys of a shard (placed by their
  objects' uid or namespace, `_Placer`) or of a predicate, `acquire(region)` gives them
  back once the caches have synced; the faces hold them in their queue (`set_hold`);
* the retry policy of one reconcile (I8, I9): success forgets the key's failures (and a number
  returned looks at the key again after that many seconds); `Requeue` retries with rate
  limiting and one INFO line; any other exception retries with a WARNING and its traceback, up
  to `max_retries` (then an ERROR, and the key is dropped until its next change).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    LeftShard,
    deletion_handling_meta_namespace_key,
    object_namespace,
    object_uid,
)
from kubeinformers.runtime.api.shard import Shard, ShardKey, ShardRange, fnv1a_64
from kubeinformers.runtime.cache.handlers import ResourceEventHandler, ResourceEventHandlerFuncs
from kubeinformers.runtime.workqueue.rate_limiters import RateLimiter

__all__ = [
    "SYNC_HINT_AFTER",
    "KeyMatch",
    "LoopShardStatus",
    "ReconcileCore",
    "Requeue",
    "LoopRetries",
    "RetryQueue",
    "SyncSource",
    "WatchableInformer",
]

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

_log = logging.getLogger("kubeinformers.reconcile")

SYNC_HINT_AFTER = 30.0
"""Seconds between the warnings of a loop still waiting for its caches to sync."""

DRAIN_HINT_AFTER = 30.0
"""Seconds between the warnings of a stopping loop still waiting for its reconciles."""


@runtime_checkable
class SyncSource(Protocol):
    def has_synced(self) -> bool: ...


class WatchableInformer(Protocol[T_co]):
    """What `watch` needs of an informer (SharedIndexInformer has it)."""

    def add_event_handler(self, handler: ResourceEventHandler[T_co]) -> Any: ...

    def has_synced(self) -> bool: ...


class RetryQueue(Protocol[K_contra]):
    """What the retry policy needs of a work queue (both rate-limiting queues have it)."""

    def add_rate_limited(self, item: K_contra) -> None: ...

    def add_after(self, item: K_contra, delay: float) -> None: ...

    def forget(self, item: K_contra) -> None: ...

    def num_requeues(self, item: K_contra) -> int: ...


class LoopRetries(Generic[K]):
    """A loop's retries and re-checks, through its `enqueue_after` (into the running run's
    queue, or kept for the next run), with failure counts kept by its rate limiter: a
    reconcile that ends while its run stops leaves them for the next run (I12)."""

    __slots__ = ("_enqueue_after", "_limiter")

    def __init__(self, enqueue_after: Callable[[K, float], None], limiter: RateLimiter[K]) -> None:
        self._enqueue_after = enqueue_after
        self._limiter = limiter

    def add_rate_limited(self, item: K) -> None:
        self._enqueue_after(item, self._limiter.when(item))

    def add_after(self, item: K, delay: float) -> None:
        self._enqueue_after(item, delay)

    def forget(self, item: K) -> None:
        self._limiter.forget(item)

    def num_requeues(self, item: K) -> int:
        return self._limiter.num_requeues(item)


KeyMatch = Callable[[K], bool]
"""Which keys `release` hands off: a predicate over keys (or a `Shard`, see `release`)."""


@dataclass(frozen=True, slots=True)
class LoopShardStatus:
    """What a reconcile loop has handed off (N10): `released` describes each region it does
    not reconcile now (a shard, or a predicate's name), `held_keys` the keys kept back for
    them, `releases`/`acquires` the calls so far, `timed_out_releases` those whose running
    reconciles did not finish in time, `last_release_seconds` how long the last one waited."""

    released: tuple[str, ...]
    held_keys: int
    releases: int
    acquires: int
    timed_out_releases: int
    last_release_seconds: float | None


class _Placer:
    """Where a key's object lies in the hash space: its uid and namespace, from the cache of
    an informer watched by its own keys (`watch` without key_func: the object cached under a
    key is the key's), or remembered from such an informer's delete notification (the object
    is gone from the cache, but its key may still be queued). `None`: not known. A key_func's
    key is not its notification's object's (an owner's key, from a pod): that object does
    not place it."""

    __slots__ = ("_caches", "_gone", "_lock")

    def __init__(self) -> None:
        self._caches: list[Callable[[str], object | None]] = []
        self._gone: dict[Hashable, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def add_cache(self, get_by_key: Callable[[str], object | None]) -> None:
        self._caches.append(get_by_key)

    def has_caches(self) -> bool:
        return bool(self._caches)

    def gone(self, key: Hashable, obj: object) -> None:
        try:
            identity = (object_uid(obj), object_namespace(obj))
        except Exception:
            return
        with self._lock:
            self._gone[key] = identity

    def mark(self, key: Hashable) -> object:
        """What `key`'s delete notification is now (before a reconcile of it), for `forget`."""
        return self._gone.get(key) if self._gone else None

    def forget(self, key: Hashable, mark: object) -> None:
        """Drop `key`'s delete notification once it has been reconciled: unless a newer one
        came meanwhile (its object deleted during that reconcile: the key is queued again,
        and must still be placed when it comes up)."""
        if self._gone:
            with self._lock:
                if self._gone.get(key) is mark:
                    self._gone.pop(key, None)

    def hash_of(self, key: Hashable, shard_key: ShardKey) -> int | None:
        if isinstance(key, str):
            for get in self._caches:
                try:
                    obj = get(key)
                except Exception:
                    obj = None
                if obj is not None:
                    value = object_uid(obj) if shard_key == "uid" else object_namespace(obj)
                    return fnv1a_64(value)
        with self._lock:
            identity = self._gone.get(key)
        if identity is not None:
            return fnv1a_64(identity[0] if shard_key == "uid" else identity[1])
        if shard_key == "namespace" and isinstance(key, str):
            # "ns/name" names its namespace; "name" is cluster-scoped (namespace "").
            return fnv1a_64(key.split("/", 1)[0] if "/" in key else "")
        return None


def _subtract(ranges: tuple[ShardRange, ...], taken: tuple[ShardRange, ...]) -> list[ShardRange]:
    """`ranges` without the parts `taken` covers."""
    out: list[ShardRange] = []
    for r in ranges:
        pieces = [(r.start, r.end)]
        for t in taken:
            next_pieces = []
            for start, end in pieces:
                if t.end <= start or end <= t.start:
                    next_pieces.append((start, end))
                    continue
                if start < t.start:
                    next_pieces.append((start, t.start))
                if t.end < end:
                    next_pieces.append((t.end, end))
            pieces = next_pieces
        out.extend(ShardRange(start, end) for start, end in pieces)
    return out


class Requeue(Exception):
    """Raised by ``reconcile`` for an expected, transient condition (a 409 Conflict because the
    cache is behind, a dependency not ready yet): the key is retried with rate limiting like a
    failure, but logged as one INFO line with the reason, no traceback."""


class ReconcileCore(Generic[K]):
    """The loop's inputs, sync state and retry policy; a face adds the queue and the workers
    (`enqueue`, `enqueue_after` and running)."""

    def __init__(self, name: str, *, workers: int, max_retries: int | None) -> None:
        if workers < 1:
            raise ValueError(f"reconcile loop {name!r}: workers must be at least 1, got {workers}")
        self.name = name
        self.workers = workers
        self.max_retries = max_retries
        self._sync_sources: list[Callable[[], bool]] = []
        self._log = _log.getChild(name)
        # N10: regions handed off (keys held back), and where keys lie in the hash space.
        self._released: list[Shard | KeyMatch[K]] = []
        self._released_lock = threading.Lock()
        self._placer = _Placer()
        self._unplaceable_said = False
        self._unplaceable_lock = threading.Lock()
        self._releases = 0
        self._acquires = 0
        self._timed_out_releases = 0
        self._last_release_seconds: float | None = None

    # ------------------------------------------------------------------ stopping

    def _still_draining(self, waited: float, in_flight: set[K]) -> None:
        """A stop waits for the reconciles in flight (as client-go's ShutDownWithDrain): say
        every DRAIN_HINT_AFTER seconds which keys it waits for (the queue's items handed out
        and not done), so that a reconcile that never returns does not keep the loop from
        stopping silently."""
        keys = sorted(str(key) for key in in_flight)
        shown = ", ".join(keys[:10]) + (f" and {len(keys) - 10} more" if len(keys) > 10 else "")
        self._log.warning(
            "still stopping after %.0f s: waiting for %d reconcile(s) in flight to return (%s); "
            "a reconcile that does not return keeps the loop from stopping",
            waited,
            len(keys),
            shown or "none left",
        )

    # ------------------------------------------------------------------ inputs

    def enqueue(self, key: K) -> None:
        """Queue `key` now; safe from any thread."""
        raise NotImplementedError

    def enqueue_after(self, key: K, delay: float) -> None:
        """Queue `key` after `delay` seconds (a waiting key only moves earlier, I7)."""
        raise NotImplementedError

    def watch(
        self,
        informer: WatchableInformer[T],
        key_func: Callable[[T | DeletedFinalStateUnknown[T]], K] | None = None,
        *,
        predicate: Callable[[T | DeletedFinalStateUnknown[T]], bool] | None = None,
    ) -> None:
        """Enqueue the key of every object the informer adds, updates (resyncs included) or
        deletes. The default key is ``deletion_handling_meta_namespace_key`` ("ns/name", a
        tombstone's own key), so a loop over ``str`` keys needs no key_func. ``key_func`` may
        map an object to another key (an owner's, say); ``predicate`` filters objects first."""
        keyer = cast(
            Callable[[T | DeletedFinalStateUnknown[T]], K],
            key_func if key_func is not None else deletion_handling_meta_namespace_key,
        )

        placer = self._placer
        own_keys = key_func is None
        if own_keys:
            # N10: the default keys are the cache's: a key's object (its uid) is found there.
            store = getattr(informer, "get_store", None)
            if callable(store):
                placer.add_cache(store().get_by_key)

        def enqueue(obj: T | DeletedFinalStateUnknown[T]) -> None:
            if predicate is not None and not predicate(obj):
                return
            try:
                key = keyer(obj)
            except Exception:
                self._log.exception("cannot compute a key for %r; not enqueued", obj)
                return
            self.enqueue(key)

        def on_add(obj: T, is_in_initial_list: bool) -> None:
            enqueue(obj)

        def on_update(old: T, new: T) -> None:
            enqueue(new)

        def on_delete(obj: T | DeletedFinalStateUnknown[T]) -> None:
            final = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
            if own_keys and final is not None and (predicate is None or predicate(obj)):
                try:
                    key = keyer(obj)
                except Exception:
                    key = None
                # Its key may still be queued (a deletion), or held back (an object that
                # left the shard after its keys were released): remember where it lies.
                if key is not None and (not isinstance(obj, LeftShard) or self._is_held(key)):
                    placer.gone(key, final)
            if isinstance(obj, LeftShard):
                return  # N9: not deleted; the replica whose shard it entered reconciles it
            enqueue(obj)

        registration = informer.add_event_handler(
            ResourceEventHandlerFuncs(on_add=on_add, on_update=on_update, on_delete=on_delete)
        )
        # Prefer the registration's own sync state (late handlers, F8/G6) over the informer's.
        source = registration if isinstance(registration, SyncSource) else informer
        self._sync_sources.append(source.has_synced)

    def wait_for(self, source: SyncSource) -> None:
        """Also wait for another cache (an informer only read through its lister) to sync."""
        self._sync_sources.append(source.has_synced)

    # ------------------------------------------------------------------ syncing

    def has_synced(self) -> bool:
        return all(synced() for synced in self._sync_sources)

    def _sync_waits(self, first: float, longest: float) -> Iterator[float]:
        """The pauses between `has_synced()` checks until it is true: `first`, doubling up to
        `longest`. Every SYNC_HINT_AFTER seconds of waiting it logs how many caches are
        still not synced (once per period, a WARNING)."""
        started = time.monotonic()
        next_hint = started + SYNC_HINT_AFTER
        interval = first
        while not self.has_synced():
            yield interval
            interval = min(interval * 2, longest)
            now = time.monotonic()
            if now >= next_hint:
                pending = sum(1 for synced in self._sync_sources if not synced())
                self._log.warning(
                    "still waiting after %.0f s for %d of %d caches to sync; were the "
                    "informers started (factory.start(), or `async with factory`)?",
                    now - started,
                    pending,
                    len(self._sync_sources),
                )
                next_hint += SYNC_HINT_AFTER

    # ------------------------------------------------------------------ retry policy

    # ------------------------------------------------------------------ handing keys off (N10)

    def _holds(self, key: K) -> bool:
        """Whether `key` lies in a released region (held back). A key whose place in the
        hash space is unknown is held while anything is released: it may be another's."""
        for region in self._released:
            if isinstance(region, Shard):
                h = self._placer.hash_of(key, region.key)
                if h is None:
                    self._unplaceable(key, region.key)
                    return True
                if region.contains_hash(h):
                    return True
            elif region(key):
                return True
        return False

    def _unplaceable(self, key: K, shard_key: ShardKey) -> None:
        """`key` is held because no released shard can place it (N10). A str key whose object
        is only not cached here lies in another replica's shard: held, rightly, in silence.
        A key this loop can place by no means at all (not a str; by uid, with no informer
        watched by its own keys) would be held for as long as anything is released: said
        once at WARNING, naming the loop, the key and what to do. Runs under the queue's
        lock: it only logs."""
        if not isinstance(key, str):
            why = (
                f'only str keys are placed ("namespace/name": by the object cached under '
                f"them, or by their namespace), not {type(key).__name__}"
            )
            fix = 'use str keys "namespace/name"'
        elif shard_key == "uid" and not self._placer.has_caches():
            why = (
                "the loop watches no informer by its own keys (watch() without key_func), so "
                "no cache holds the object of a key"
            )
            fix = (
                "also watch the informer of the keys' objects without key_func (the replica "
                "whose shard holds a key's object reconciles it), or shard by namespace "
                '(key="namespace") with keys "namespace/name"'
            )
        else:
            return
        with self._unplaceable_lock:
            said, self._unplaceable_said = self._unplaceable_said, True
        if said:
            return
        self._log.warning(
            "reconcile loop %r cannot place key %r in the hash space (by %s): %s; it and every "
            "such key is held while a shard is released (in a shard ring: until this replica "
            "holds every bucket) and not reconciled meanwhile; %s (N10)",
            self.name,
            key,
            shard_key,
            why,
            fix,
        )

    def _add_released(self, region: Shard | KeyMatch[K]) -> Callable[[K], bool]:
        if not isinstance(region, Shard) and not callable(region):
            raise TypeError(f"release takes a Shard or a predicate over keys, not {region!r}")
        with self._released_lock:
            if not any(r is region or r == region for r in self._released):
                self._released = [*self._released, region]  # again: only wait again
            self._releases += 1
        self._log.info("releasing %s", _describe_region(region))
        return self._holds

    def _remove_released(self, region: Shard | KeyMatch[K]) -> Callable[[K], bool] | None:
        with self._released_lock:
            kept: list[Shard | KeyMatch[K]] = []
            for r in self._released:
                if isinstance(region, Shard):
                    if isinstance(r, Shard) and r.key == region.key:
                        rest = _subtract(r.ranges, region.ranges)
                        if rest:
                            kept.append(Shard(rest, r.key))
                        continue
                elif r is region or r == region:
                    continue
                kept.append(r)
            self._released = kept
            self._acquires += 1
        self._log.info("acquiring %s", _describe_region(region))
        return self._holds if kept else None

    def _released_in(self, seconds: float, drained: bool, region: Shard | KeyMatch[K]) -> None:
        self._last_release_seconds = seconds
        if drained:
            self._log.info("released %s in %.3f s", _describe_region(region), seconds)
            return
        self._timed_out_releases += 1
        self._log.warning(
            "releasing %s: reconciles of its keys still running after %.3f s; they were not "
            "interrupted (new ones are held back)",
            _describe_region(region),
            seconds,
        )

    def released(self) -> tuple[Shard | KeyMatch[K], ...]:
        """The regions released and not acquired since (N10)."""
        return tuple(self._released)

    def shard_status(self) -> LoopShardStatus:
        """What this loop has handed off (N10); for health pages and the ring's metrics."""
        return LoopShardStatus(
            released=tuple(_describe_region(r) for r in self._released),
            held_keys=self._held_count(),
            releases=self._releases,
            acquires=self._acquires,
            timed_out_releases=self._timed_out_releases,
            last_release_seconds=self._last_release_seconds,
        )

    def _held_count(self) -> int:
        return 0

    def _is_held(self, key: K) -> bool:
        return False

    def _placing(self, key: K) -> object:
        """Before a reconcile of `key`: what places it now, to forget after (`_reconciled`,
        `_failed`) unless it changed meanwhile."""
        return self._placer.mark(key)

    def _reconciled(
        self, queue: RetryQueue[K], key: K, requeue_after: float | None, placed: object
    ) -> None:
        """`reconcile(key)` returned: forget its failures; look again after `requeue_after`."""
        self._placer.forget(key, placed)
        queue.forget(key)
        if requeue_after is not None and requeue_after > 0:
            queue.add_after(key, requeue_after)

    def _failed(self, queue: RetryQueue[K], key: K, err: Exception, placed: object) -> None:
        """`reconcile(key)` raised `err`: retry with rate limiting, or drop after max_retries."""
        if isinstance(err, Requeue):
            self._log.info("requeueing %r with backoff: %s", key, err)
            queue.add_rate_limited(key)
            return
        retries = queue.num_requeues(key)
        if self.max_retries is not None and retries >= self.max_retries:
            self._log.error(
                "reconcile of %r failed %d times, dropping it until it changes again: %s",
                key,
                retries + 1,
                err,
                exc_info=err,
            )
            queue.forget(key)
            self._placer.forget(key, placed)
            return
        self._log.warning(
            "reconcile of %r failed (retry %d), will retry with backoff: %s",
            key,
            retries + 1,
            err,
            exc_info=err,
        )
        queue.add_rate_limited(key)


def _describe_region(region: object) -> str:
    if isinstance(region, Shard):
        return region.describe()
    return f"keys matching {getattr(region, '__qualname__', repr(region))}"
