"""A controller loop over informers and a rate-limited work queue (client-go's sample-controller
pattern, packaged).

Informers' handlers enqueue keys, never objects: the queue collapses bursts of changes to one
reconcile per key (I2), never runs one key on two workers at once (I4), and a failed key comes
back later with growing delays (I8, I9). ``reconcile(key)`` reads the current state from a
lister, so it always acts on the latest object, and it must be idempotent.

```python
controller: ReconcileLoop[str] = ReconcileLoop("pods", reconcile, workers=4)
controller.watch(pods.informer())                  # keys "ns/name"; tombstones too
factory.start()
controller.run(stop)                               # waits for sync, then works until stop
```
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
)
from kubeinformers.runtime.cache.handlers import ResourceEventHandler, ResourceEventHandlerFuncs
from kubeinformers.runtime.workqueue.metrics import MetricsProvider
from kubeinformers.runtime.workqueue.queue import RateLimitingQueue
from kubeinformers.runtime.workqueue.rate_limiters import RateLimiter

__all__ = ["Reconcile", "ReconcileLoop", "Requeue", "SyncSource", "WatchableInformer"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

_log = logging.getLogger("kubeinformers.controller_runner")

SYNC_POLL_PERIOD = 0.1  # client-go WaitForCacheSync polls every 100 ms
SYNC_HINT_AFTER = 30.0  # then says so, every 30 s, while caches are still not synced

Reconcile = Callable[[K], float | None]
"""Brings the world in line for one key. Raise to retry with rate limiting; return None when
done, or a number of seconds to look at the key again later (a periodic re-check)."""


@runtime_checkable
class SyncSource(Protocol):
    def has_synced(self) -> bool: ...


class WatchableInformer(Protocol[T_co]):
    """What ``ReconcileLoop.watch`` needs of an informer (SharedIndexInformer has it)."""

    def add_event_handler(self, handler: ResourceEventHandler[T_co]) -> Any: ...

    def has_synced(self) -> bool: ...


class Requeue(Exception):
    """Raised by ``reconcile`` for an expected, transient condition (a 409 Conflict because the
    cache is behind, a dependency not ready yet): the key is retried with rate limiting like a
    failure, but logged as one INFO line with the reason, no traceback."""


class ReconcileLoop(Generic[K]):
    """N workers calling a typed ``reconcile(key)`` for the keys informers enqueue.

    Success forgets the key's failures; an exception is logged with the key and the key is
    re-added with rate limiting (default: exponential 5 ms … 1000 s per key, 10 qps overall),
    up to ``max_retries`` times when set (then it is dropped until its next change).
    Workers start only after every watched informer's handler has synced; on stop the queue
    is shut down with drain, so in-flight reconciles finish before ``run`` returns.
    """

    def __init__(
        self,
        name: str,
        reconcile: Reconcile[K],
        *,
        workers: int = 1,
        rate_limiter: RateLimiter[K] | None = None,
        max_retries: int | None = None,
        metrics_provider: MetricsProvider | None = None,
        queue: RateLimitingQueue[K] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"controller {name!r}: workers must be at least 1, got {workers}")
        self.name = name
        self.reconcile = reconcile
        self.workers = workers
        self.max_retries = max_retries
        self.queue: RateLimitingQueue[K] = (
            queue
            if queue is not None
            else RateLimitingQueue(rate_limiter, name, metrics_provider=metrics_provider)
        )
        self._sync_sources: list[Callable[[], bool]] = []
        self._log = _log.getChild(name)
        self._running = threading.Lock()

    # ------------------------------------------------------------------ inputs

    def watch(
        self,
        informer: WatchableInformer[T],
        key_func: Callable[[T | DeletedFinalStateUnknown[T]], K] | None = None,
        *,
        predicate: Callable[[T | DeletedFinalStateUnknown[T]], bool] | None = None,
    ) -> None:
        """Enqueue the key of every object the informer adds, updates (resyncs included) or
        deletes. The default key is ``deletion_handling_meta_namespace_key`` ("ns/name", a
        tombstone's own key), so a ``ReconcileLoop[str]`` needs no key_func. ``key_func`` may map
        an object to another key (an owner's, say); ``predicate`` filters objects first."""
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
            self.queue.add(key)

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

    def enqueue(self, key: K) -> None:
        self.queue.add(key)

    def enqueue_after(self, key: K, delay: float) -> None:
        self.queue.add_after(key, delay)

    # ------------------------------------------------------------------ running

    def has_synced(self) -> bool:
        return all(synced() for synced in self._sync_sources)

    def wait_for_cache_sync(self, stop: threading.Event) -> bool:
        """Poll until every watched cache has synced (True) or stop is set (False)."""
        started = time.monotonic()
        next_hint = started + SYNC_HINT_AFTER
        while not self.has_synced():
            if stop.wait(SYNC_POLL_PERIOD):
                return False
            if time.monotonic() >= next_hint:
                pending = sum(1 for synced in self._sync_sources if not synced())
                self._log.warning(
                    "still waiting after %.0f s for %d of %d caches to sync; were the "
                    "informers started (factory.start())?",
                    time.monotonic() - started,
                    pending,
                    len(self._sync_sources),
                )
                next_hint += SYNC_HINT_AFTER
        return True

    def run(self, stop: threading.Event) -> None:
        """Block until ``stop`` is set: wait for the caches, run the workers, then drain."""
        if not self._running.acquire(blocking=False):
            raise RuntimeError(f"controller {self.name!r} is already running")
        try:
            self._log.info("waiting for caches to sync")
            if not self.wait_for_cache_sync(stop):
                self._log.info("stopped before the caches synced; no worker started")
                self.queue.shut_down()
                return
            threads = [
                threading.Thread(
                    target=self._worker, name=f"controller-{self.name}-{i}", daemon=True
                )
                for i in range(self.workers)
            ]
            for thread in threads:
                thread.start()
            self._log.info("caches synced; started %d workers", self.workers)
            stop.wait()
            self._log.info("shutting down: waiting for in-flight reconciles")
            self.queue.shut_down_with_drain()
            for thread in threads:
                thread.join()
            self._log.info("stopped")
        finally:
            self._running.release()

    def _worker(self) -> None:
        while True:
            key, shutting_down = self.queue.get()
            if shutting_down:
                return
            try:
                self.process(key)
            finally:
                self.queue.done(key)

    def process(self, key: K) -> None:
        """One reconcile of ``key`` with the retry policy (the worker's body)."""
        try:
            requeue_after = self.reconcile(key)
        except Requeue as why:
            self._log.info("requeueing %r with backoff: %s", key, why)
            self.queue.add_rate_limited(key)
            return
        except Exception as err:
            retries = self.queue.num_requeues(key)
            if self.max_retries is not None and retries >= self.max_retries:
                self._log.error(
                    "reconcile of %r failed %d times, dropping it until it changes again: %s",
                    key,
                    retries + 1,
                    err,
                    exc_info=True,
                )
                self.queue.forget(key)
                return
            self._log.warning(
                "reconcile of %r failed (retry %d), will retry with backoff: %s",
                key,
                retries + 1,
                err,
                exc_info=True,
            )
            self.queue.add_rate_limited(key)
            return
        self.queue.forget(key)
        if requeue_after is not None and requeue_after > 0:
            self.queue.add_after(key, requeue_after)
