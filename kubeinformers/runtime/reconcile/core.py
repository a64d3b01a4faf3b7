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
* the retry policy of one reconcile (I8, I9): success forgets the key's failures (and a number
  returned looks at the key again after that many seconds); `Requeue` retries with rate
  limiting and one INFO line; any other exception retries with a WARNING and its traceback, up
  to `max_retries` (then an ERROR, and the key is dropped until its next change).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
)
from kubeinformers.runtime.cache.handlers import ResourceEventHandler, ResourceEventHandlerFuncs

__all__ = [
    "SYNC_HINT_AFTER",
    "ReconcileCore",
    "Requeue",
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

        registration = informer.add_event_handler(
            ResourceEventHandlerFuncs(on_add=on_add, on_update=on_update, on_delete=enqueue)
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

    def _reconciled(self, queue: RetryQueue[K], key: K, requeue_after: float | None) -> None:
        """`reconcile(key)` returned: forget its failures; look again after `requeue_after`."""
        queue.forget(key)
        if requeue_after is not None and requeue_after > 0:
            queue.add_after(key, requeue_after)

    def _failed(self, queue: RetryQueue[K], key: K, err: Exception) -> None:
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
            return
        self._log.warning(
            "reconcile of %r failed (retry %d), will retry with backoff: %s",
            key,
            retries + 1,
            err,
            exc_info=err,
        )
        queue.add_rate_limited(key)
