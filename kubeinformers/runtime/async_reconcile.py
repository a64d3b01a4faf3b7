"""The controller loop for asyncio: `async def reconcile(key)` over an async rate-limited queue.

The same policy as `reconcile.ReconcileLoop` (the thread-based one): informers' handlers enqueue
keys (I2 collapses bursts), one key is never reconciled by two workers at once (I4), success
forgets the key's failures, an exception retries it with the rate limiter's growing delay
(I8, I9) up to `max_retries`, `Requeue` retries it with one calm log line, and a number
returned is a re-check after that many seconds. Workers are tasks on the running loop.

```python
reconciler = AsyncReconciler("widgets", reconcile, workers=2)
reconciler.watch(widget_informer)
async with factory:
    await reconciler.run()       # until cancelled; in-flight reconciles finish first
```
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar, cast

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
)
from kubeinformers.runtime.cache.handlers import ResourceEventHandlerFuncs
from kubeinformers.runtime.reconcile import Requeue, WatchableInformer
from kubeinformers.runtime.workqueue.async_queue import AsyncRateLimitingQueue
from kubeinformers.runtime.workqueue.rate_limiters import RateLimiter

__all__ = ["AsyncReconcile", "AsyncReconciler"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

_log = logging.getLogger("kubeinformers.async_reconcile")

AsyncReconcile = Callable[[K], Awaitable[float | None]]
"""Brings the world in line for one key; raise to retry with rate limiting, return None when
done or a number of seconds to look at the key again later."""

_SYNC_POLL_FIRST = 0.005
_SYNC_POLL_MAX = 0.1


class AsyncReconciler(Generic[K]):
    """`workers` tasks calling `await reconcile(key)` for the keys the watched informers
    enqueue, with client-go's rate-limited retries (see the module docstring)."""

    def __init__(
        self,
        name: str,
        reconcile: AsyncReconcile[K],
        *,
        workers: int = 1,
        rate_limiter: RateLimiter[K] | None = None,
        max_retries: int | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"reconciler {name!r}: workers must be at least 1, got {workers}")
        self.name = name
        self.reconcile = reconcile
        self.workers = workers
        self.max_retries = max_retries
        self._rate_limiter = rate_limiter
        self._queue: AsyncRateLimitingQueue[K] | None = None
        self._early: list[tuple[K, float]] = []  # keys enqueued before run() made the queue
        self._early_lock = threading.Lock()  # handler threads enqueue while run() starts
        self._sync_sources: list[Callable[[], bool]] = []
        self._log = _log.getChild(name)
        self._running = False

    @property
    def queue(self) -> AsyncRateLimitingQueue[K]:
        """The work queue (exists once `run` has started)."""
        if self._queue is None:
            raise RuntimeError(f"reconciler {self.name!r} is not running: no queue yet")
        return self._queue

    # ------------------------------------------------------------------ inputs

    def watch(
        self,
        informer: WatchableInformer[T],
        key_func: Callable[[T | DeletedFinalStateUnknown[T]], K] | None = None,
        *,
        predicate: Callable[[T | DeletedFinalStateUnknown[T]], bool] | None = None,
    ) -> None:
        """Enqueue the key of every object the informer adds, updates or deletes (default
        key: "ns/name", tombstones included); `key_func` may map to another key (an owner's),
        `predicate` filters objects first. Call before or during `run`."""
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

        registration: Any = informer.add_event_handler(
            ResourceEventHandlerFuncs(on_add=on_add, on_update=on_update, on_delete=enqueue)
        )
        synced = getattr(registration, "has_synced", None)
        self._sync_sources.append(synced if callable(synced) else informer.has_synced)

    def enqueue(self, key: K, delay: float = 0.0) -> None:
        """Queue `key` (after `delay` seconds); safe from any thread, before or during `run`."""
        with self._early_lock:
            queue = self._queue
            if queue is None:
                self._early.append((key, delay))
                return
        queue.add_after(key, delay)

    def has_synced(self) -> bool:
        return all(synced() for synced in self._sync_sources)

    # ------------------------------------------------------------------ running

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Wait for the watched caches, run the workers until `stop` is set or the task is
        cancelled; then let in-flight reconciles finish (the queue drains) and return (or
        re-raise the cancellation)."""
        if self._running:
            raise RuntimeError(f"reconciler {self.name!r} is already running")
        self._running = True
        queue: AsyncRateLimitingQueue[K] = AsyncRateLimitingQueue(self._rate_limiter, self.name)
        with self._early_lock:
            self._queue = queue
            early, self._early = self._early, []
        for key, delay in early:
            queue.add_after(key, delay)
        workers: list[asyncio.Task[None]] = []
        try:
            await self._wait_for_sync()
            workers = [
                asyncio.create_task(self._worker(queue), name=f"reconciler-{self.name}-{i}")
                for i in range(self.workers)
            ]
            self._log.info("caches synced; started %d workers", self.workers)
            if stop is None:
                await asyncio.Future()  # until cancelled
            else:
                await stop.wait()
        finally:
            self._log.info("shutting down: waiting for in-flight reconciles")
            drain = asyncio.ensure_future(queue.shut_down_with_drain())
            try:
                await asyncio.shield(drain)
                await asyncio.shield(asyncio.gather(*workers))
            finally:
                self._running = False

    async def _wait_for_sync(self) -> None:
        interval = _SYNC_POLL_FIRST
        while not self.has_synced():
            await asyncio.sleep(interval)
            interval = min(interval * 2, _SYNC_POLL_MAX)

    async def _worker(self, queue: AsyncRateLimitingQueue[K]) -> None:
        async for key in queue:
            await self.process(key)

    async def process(self, key: K) -> None:
        """One reconcile of `key` with the retry policy (a worker's body)."""
        queue = self.queue
        try:
            requeue_after = await self.reconcile(key)
        except Requeue as why:
            self._log.info("requeueing %r with backoff: %s", key, why)
            queue.add_rate_limited(key)
            return
        except Exception as err:
            retries = queue.num_requeues(key)
            if self.max_retries is not None and retries >= self.max_retries:
                self._log.error(
                    "reconcile of %r failed %d times, dropping it until it changes again: %s",
                    key,
                    retries + 1,
                    err,
                    exc_info=True,
                )
                queue.forget(key)
                return
            self._log.warning(
                "reconcile of %r failed (retry %d), will retry with backoff: %s",
                key,
                retries + 1,
                err,
                exc_info=True,
            )
            queue.add_rate_limited(key)
            return
        queue.forget(key)
        if requeue_after is not None and requeue_after > 0:
            queue.add_after(key, requeue_after)
