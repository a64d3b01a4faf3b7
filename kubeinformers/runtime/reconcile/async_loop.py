"""The controller loop for asyncio: `async def reconcile(key)` over an async rate-limited queue;
the asyncio face over `reconcile.core.ReconcileCore`, as `ReconcileLoop` is the thread one.

The same inputs and policy as `ReconcileLoop`: informers' handlers enqueue keys (I2 collapses
bursts), one key is never reconciled by two workers at once (I4), success forgets the key's
failures, an exception retries it with the rate limiter's growing delay (I8, I9) up to
`max_retries`, `Requeue` retries it with one calm log line, and a number returned is a
re-check after that many seconds. Workers are tasks on the running loop.

```python
reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop("widgets", reconcile, workers=2)
reconciler.watch(widget_informer)
async with factory:
    await reconciler.run()       # until cancelled; in-flight reconciles finish first
```
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import TypeVar

from kubeinformers.runtime.api.shard import Shard
from kubeinformers.runtime.reconcile.core import (
    DRAIN_HINT_AFTER,
    KeyMatch,
    LoopRetries,
    ReconcileCore,
)
from kubeinformers.runtime.uncancelled import finish
from kubeinformers.runtime.workqueue.async_queue import AsyncRateLimitingQueue
from kubeinformers.runtime.workqueue.metrics import MetricsProvider
from kubeinformers.runtime.workqueue.rate_limiters import (
    RateLimiter,
    default_controller_rate_limiter,
)

__all__ = ["AsyncReconcile", "AsyncReconcileLoop"]

K = TypeVar("K", bound=Hashable)

AsyncReconcile = Callable[[K], Awaitable[float | None]]
"""Brings the world in line for one key; raise to retry with rate limiting, return None when
done or a number of seconds to look at the key again later."""

_SYNC_POLL_FIRST = 0.005
_SYNC_POLL_MAX = 0.1


class AsyncReconcileLoop(ReconcileCore[K]):
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
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name, workers=workers, max_retries=max_retries)
        self._metrics_provider = metrics_provider
        self.reconcile = reconcile
        # One limiter for every run's queue: a key's failure count (its next delay, and
        # max_retries) survives a run's end (I12), as in the threaded loop.
        self._rate_limiter: RateLimiter[K] = (
            rate_limiter if rate_limiter is not None else default_controller_rate_limiter()
        )
        self._queue: AsyncRateLimitingQueue[K] | None = None
        self._stopping: AsyncRateLimitingQueue[K] | None = None  # a stopping run's, draining
        # The keys kept while no run goes (before the first, between two), for the next run,
        # as a queue would keep them: each once (I2), in order; and those enqueued with a
        # delay, each with the `time.monotonic()` it is due at (I7: only ever earlier), so
        # that the time a key waits runs from its enqueue, not from the next run's start.
        self._early: dict[K, None] = {}
        self._early_due: dict[K, float] = {}
        self._early_lock = threading.Lock()  # handler threads enqueue while run() starts
        self._running = False
        self._readmit_task: asyncio.Future[None] | None = None
        self._retries = LoopRetries(self.enqueue_after, self._rate_limiter)

    @property
    def queue(self) -> AsyncRateLimitingQueue[K]:
        """The work queue (exists once `run` has started)."""
        if self._queue is None:
            raise RuntimeError(f"reconcile loop {self.name!r} is not running: no queue yet")
        return self._queue

    def enqueue(self, key: K) -> None:
        """Queue `key` now; safe from any thread, before or during `run`."""
        self.enqueue_after(key, 0.0)

    def enqueue_after(self, key: K, delay: float) -> None:
        """Queue `key` after `delay` seconds (a waiting key only moves earlier, I7); safe from
        any thread, before or during `run`."""
        with self._early_lock:  # scheduled on the queue's loop before a run's end takes it
            queue = self._queue
            if queue is None:
                self._keep(key, delay)
                return
            queue.add_after(key, delay)

    def _keep(self, key: K, delay: float) -> None:
        """Keep `key` for the next run (under `_early_lock`)."""
        if delay <= 0:
            self._early[key] = None
            return
        due = time.monotonic() + delay
        known = self._early_due.get(key)
        if known is None or due < known:
            self._early_due[key] = due

    async def release(self, region: Shard | KeyMatch[K], timeout: float | None = None) -> bool:
        """Hand off the keys of `region` (N10), as `ReconcileLoop.release`: from this call on
        none is handed to a worker (held back, not lost); then wait until the running
        reconciles of such keys have finished: True, or False when `timeout` passed first.
        Call it on the loop's thread; before `run` it only records the region."""
        started = time.monotonic()
        hold = self._add_released(region)
        # N10: also the queue of a run that is stopping: its workers drain it, and a release
        # must wait for their reconciles (a stopping ring member's release, just before it
        # deletes its Lease) and keep its queued keys from them.
        queues = [q for q in (self._queue, self._stopping) if q is not None]
        for queue in queues:
            queue.set_hold(hold)
        drained = True
        for queue in queues:
            left = None if timeout is None else max(0.0, started + timeout - time.monotonic())
            drained = await queue.wait_released(left) and drained
        self._released_in(time.monotonic() - started, drained, region)
        return drained

    def acquire(self, region: Shard | KeyMatch[K]) -> None:
        """Take the keys of `region` back (N10), as `ReconcileLoop.acquire`: new keys at
        once, the keys held back once every watched cache has synced. Safe from any
        thread."""
        hold = self._remove_released(region)
        queue = self._queue
        if queue is None:
            return
        synced = self.has_synced()
        queue.set_hold(hold, readmit=synced)
        if not synced:  # held keys come back once the caches hold their objects
            queue.loop.call_soon_threadsafe(self._start_readmit, queue)

    def _start_readmit(self, queue: AsyncRateLimitingQueue[K]) -> None:
        task = self._readmit_task
        if task is None or task.done():
            self._readmit_task = asyncio.ensure_future(self._readmit_when_synced(queue))

    async def _readmit_when_synced(self, queue: AsyncRateLimitingQueue[K]) -> None:
        for pause in self._sync_waits(_SYNC_POLL_FIRST, _SYNC_POLL_MAX):
            await asyncio.sleep(pause)
        queue.set_hold(self._holds if self._released else None)

    def _held_count(self) -> int:
        queue = self._queue
        return len(queue.held()) if queue is not None else 0

    def _is_held(self, key: K) -> bool:
        queue = self._queue
        return queue is not None and queue.is_held(key)

    async def wait_for_cache_sync(self, stop: asyncio.Event | None = None) -> bool:
        """Wait until every watched cache has synced (True) or `stop` is set (False), as
        `ReconcileLoop.wait_for_cache_sync(stop)` (I22)."""
        for pause in self._sync_waits(_SYNC_POLL_FIRST, _SYNC_POLL_MAX):
            if stop is None:
                await asyncio.sleep(pause)
                continue
            if stop.is_set():
                return False
            try:
                await asyncio.wait_for(stop.wait(), pause)
            except TimeoutError:
                continue
            return False
        return True

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Wait for the watched caches, run the workers until `stop` is set or the task is
        cancelled; then let in-flight reconciles finish (the queue drains) and return (or
        re-raise the cancellation)."""
        if self._running:
            raise RuntimeError(f"reconcile loop {self.name!r} is already running")
        self._running = True
        queue: AsyncRateLimitingQueue[K] = AsyncRateLimitingQueue(
            self._rate_limiter, self.name, metrics_provider=self._metrics_provider
        )
        if self._released:
            queue.set_hold(self._holds)  # N10: released before run
        with self._early_lock:
            self._queue = queue
            early, self._early = self._early, {}
            due, self._early_due = self._early_due, {}
        for key in early:
            queue.add(key)
        now = time.monotonic()
        for key, at in due.items():
            queue.add_after(key, at - now)
        workers: list[asyncio.Task[None]] = []
        try:
            self._log.info("waiting for caches to sync")
            if not await self.wait_for_cache_sync(stop):
                return  # I22: stopped first; the queue keeps its keys for the next run
            workers = [
                asyncio.create_task(self._worker(queue), name=f"reconciler-{self.name}-{i}")
                for i in range(self.workers)
            ]
            self._log.info(
                "caches synced; started %d worker%s", self.workers, "" if self.workers == 1 else "s"
            )
            if stop is None:
                await asyncio.Future()  # until cancelled
            else:
                await stop.wait()
        finally:
            # I15: to its end however often the task is cancelled meanwhile: a run that ended
            # while its reconciles still ran would let the next run (a lease won back), or
            # another replica once the lease is released, work on the same keys beside them.
            await finish(self._stop_run(queue, workers))

    async def _stop_run(
        self, queue: AsyncRateLimitingQueue[K], workers: list[asyncio.Task[None]]
    ) -> None:
        """The end of a run: keep what the next run must see, let the workers drain."""
        if workers:
            self._log.info("shutting down: waiting for in-flight reconciles")
        try:
            # What the next run must see (a loop runs again after a lost lease): the keys
            # waiting for a retry or a re-check, those held back, every key enqueued from
            # now on, and the retries of the reconciles still running.
            with self._early_lock:
                self._queue = None
                self._stopping = queue
            await asyncio.sleep(0)  # adds other threads scheduled before reach `queue` first
            with self._early_lock:
                if not workers:  # stopped before the caches synced: nothing was handed out
                    for key in queue.queued_items():
                        self._keep(key, 0.0)
                for key, delay in queue.waiting_items():
                    self._keep(key, delay)
                for key in queue.held():
                    self._keep(key, 0.0)
            drain = asyncio.ensure_future(queue.shut_down_with_drain())
            waited = 0.0
            while not (await asyncio.wait({drain}, timeout=DRAIN_HINT_AFTER))[0]:
                waited += DRAIN_HINT_AFTER
                self._still_draining(waited, queue.processing_items())
            await drain
            await asyncio.gather(*workers)
            with self._early_lock:  # keys a release held back while it drained (I12)
                for key in queue.held():
                    self._keep(key, 0.0)
            if workers:
                self._log.info("stopped")
            else:  # the queue keeps its keys for the next run: nothing was handed out
                self._log.info("stopped before the caches synced; no worker started")
        finally:
            self._stopping = None
            self._running = False
            task, self._readmit_task = self._readmit_task, None
            if task is not None and not task.done():
                task.cancel()

    async def _worker(self, queue: AsyncRateLimitingQueue[K]) -> None:
        async for key in queue:
            await self.process(key)

    async def process(self, key: K) -> None:
        """One reconcile of `key` with the retry policy (a worker's body)."""
        placed = self._placing(key)
        try:
            requeue_after = await self.reconcile(key)
        except Exception as err:
            self._failed(self._retries, key, err, placed)
            return
        except asyncio.CancelledError as err:
            task = asyncio.current_task()
            if task is None or task.cancelling():
                raise  # this worker is being cancelled: not the reconcile's failure
            # I13: the reconcile let out the cancellation of something it awaited (a future
            # or task someone else cancelled), not its worker's: a failure like any other.
            # Let through, it would end the worker without a word and the key for good.
            failure = RuntimeError(
                f"reconcile of {key!r} raised CancelledError, but its worker was not "
                "cancelled: something it awaited was cancelled (catch that CancelledError "
                "in reconcile, or raise Requeue)"
            )
            failure.__cause__ = err
            self._failed(self._retries, key, failure, placed)
            return
        self._reconciled(self._retries, key, requeue_after, placed)
