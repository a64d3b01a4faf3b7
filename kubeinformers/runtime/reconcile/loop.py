"""A controller loop over informers and a rate-limited work queue (client-go's sample-controller
pattern, packaged): the thread-based face over `reconcile.core.ReconcileCore`.

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

import threading
import time
from collections.abc import Callable, Hashable
from typing import TypeVar

from kubeinformers.runtime.api.shard import Shard
from kubeinformers.runtime.reconcile.core import (
    DRAIN_HINT_AFTER,
    KeyMatch,
    LoopRetries,
    ReconcileCore,
)
from kubeinformers.runtime.workqueue.metrics import MetricsProvider
from kubeinformers.runtime.workqueue.queue import RateLimitingQueue
from kubeinformers.runtime.workqueue.rate_limiters import (
    RateLimiter,
    default_controller_rate_limiter,
)

__all__ = ["Reconcile", "ReconcileLoop"]

K = TypeVar("K", bound=Hashable)

SYNC_POLL_PERIOD = 0.1  # client-go WaitForCacheSync polls every 100 ms

Reconcile = Callable[[K], float | None]
"""Brings the world in line for one key. Raise to retry with rate limiting; return None when
done, or a number of seconds to look at the key again later (a periodic re-check)."""


class ReconcileLoop(ReconcileCore[K]):
    """N worker threads calling a typed ``reconcile(key)`` for the keys informers enqueue.

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
        super().__init__(name, workers=workers, max_retries=max_retries)
        self.reconcile = reconcile
        # A queue of the loop's own is made anew for each run after the first (a loop runs
        # again after a lost lease); one given here serves one run.
        self._new_queue: Callable[[], RateLimitingQueue[K]] | None = None
        if queue is None:
            limiter = (
                rate_limiter if rate_limiter is not None else default_controller_rate_limiter()
            )

            def new_queue() -> RateLimitingQueue[K]:
                return RateLimitingQueue(limiter, name, metrics_provider=metrics_provider)

            self._new_queue = new_queue
        self.queue: RateLimitingQueue[K] = queue if queue is not None else new_queue()
        self._running = threading.Lock()
        self._swap = threading.Lock()  # keys go to `self.queue` only while it is the current one
        self._draining: list[RateLimitingQueue[K]] = []  # the queues of stopping runs
        self._retries = LoopRetries(self.enqueue_after, self.queue.rate_limiter)
        self._readmit_lock = threading.Lock()
        self._readmitting = False
        self._readmit_wait = threading.Event()  # never set: a pause that is not a sleep

    def enqueue(self, key: K) -> None:
        """Queue `key` now; safe from any thread."""
        self.enqueue_after(key, 0.0)

    def enqueue_after(self, key: K, delay: float) -> None:
        """Queue `key` after `delay` seconds (a waiting key only moves earlier, I7)."""
        with self._swap:  # never into a queue a stopping run has handed over (I12)
            self.queue.add_after(key, delay)

    def release(self, region: Shard | KeyMatch[K], timeout: float | None = None) -> bool:
        """Hand off the keys of `region` (N10): a `Shard` (the keys whose objects hash into
        it, found by uid in the watched informers' caches, or by namespace) or a predicate
        over keys. From this call on no such key is handed to a worker: queued ones and
        those enqueued later (events, retries, re-checks) are held back, not lost. Then
        wait until the reconciles of such keys already running have finished: True, or
        False when `timeout` passed first (they are not interrupted; call again to wait
        more). After it returns True, no key of `region` is reconciled here until
        `acquire`. Safe from any thread."""
        started = time.monotonic()
        hold = self._add_released(region)
        with self._swap:
            # N10: also the queue of a run that is stopping: its workers drain it, and a
            # release must wait for their reconciles (a stopping ring member's release, just
            # before it deletes its Lease) and keep its queued keys from them.
            queues = [self.queue, *self._draining]
        drained = True
        for queue in queues:
            queue.set_hold(hold)
        for queue in queues:
            left = None if timeout is None else max(0.0, started + timeout - time.monotonic())
            drained = queue.wait_released(left) and drained
        self._released_in(time.monotonic() - started, drained, region)
        return drained

    def acquire(self, region: Shard | KeyMatch[K]) -> None:
        """Take the keys of `region` back (N10): a `Shard`'s ranges are taken out of every
        released shard of the same key, a predicate released before is dropped; new keys of
        the region are admitted at once, and the keys held back that are no longer released
        are queued again once every watched cache has synced (after a `set_shard`, when it
        holds the new shard: a reconcile must find its object). Safe from any thread."""
        hold = self._remove_released(region)
        synced = self.has_synced()
        self.queue.set_hold(hold, readmit=synced)
        if not synced:
            with self._readmit_lock:
                if self._readmitting:
                    return
                self._readmitting = True
            threading.Thread(
                target=self._readmit_when_synced,
                name=f"controller-{self.name}-acquire",
                daemon=True,
            ).start()

    def _readmit_when_synced(self) -> None:
        try:
            for pause in self._sync_waits(SYNC_POLL_PERIOD / 20, SYNC_POLL_PERIOD):
                if self.queue.shutting_down():
                    return
                self._readmit_wait.wait(pause)
        finally:
            with self._readmit_lock:
                self._readmitting = False
        self.queue.set_hold(self._holds if self._released else None)

    def _held_count(self) -> int:
        return len(self.queue.held())

    def _is_held(self, key: K) -> bool:
        return self.queue.is_held(key)

    def wait_for_cache_sync(self, stop: threading.Event) -> bool:
        """Poll until every watched cache has synced (True) or stop is set (False)."""
        for pause in self._sync_waits(SYNC_POLL_PERIOD, SYNC_POLL_PERIOD):
            if stop.wait(pause):
                return False
        return True

    def run(self, stop: threading.Event) -> None:
        """Block until ``stop`` is set: wait for the caches, run the workers, then drain."""
        if not self._running.acquire(blocking=False):
            raise RuntimeError(f"reconcile loop {self.name!r} is already running")
        try:
            queue = self.queue
            if queue.shutting_down():
                raise RuntimeError(
                    f"reconcile loop {self.name!r} has run over the queue it was given, which "
                    "that run shut down: give it no queue to run it again"
                )
            self._log.info("waiting for caches to sync")
            if not self.wait_for_cache_sync(stop):
                # The queue keeps its keys for the next run: nothing was handed out.
                self._log.info("stopped before the caches synced; no worker started")
                return
            threads = [
                threading.Thread(
                    target=self._worker,
                    args=(queue,),
                    name=f"controller-{self.name}-{i}",
                    daemon=True,
                )
                for i in range(self.workers)
            ]
            for thread in threads:
                thread.start()
            self._log.info(
                "caches synced; started %d worker%s", self.workers, "" if self.workers == 1 else "s"
            )
            try:
                stop.wait()
            finally:
                # I19: also when the wait ends by an exception (Ctrl-C's KeyboardInterrupt or
                # a signal handler's SystemExit in the thread that runs the loop): the workers
                # drain and end before it is raised, as on a stop.
                self._stop_workers(queue, threads)
        finally:
            self._running.release()

    def _stop_workers(self, queue: RateLimitingQueue[K], threads: list[threading.Thread]) -> None:
        self._log.info("shutting down: waiting for in-flight reconciles")
        drain = threading.Thread(
            target=self._retire(queue).shut_down_with_drain,
            name=f"controller-{self.name}-drain",
            daemon=True,
        )
        drain.start()
        waited = 0.0
        drain.join(DRAIN_HINT_AFTER)
        while drain.is_alive():
            waited += DRAIN_HINT_AFTER
            self._still_draining(waited, queue.processing_items())
            drain.join(DRAIN_HINT_AFTER)
        for thread in threads:
            thread.join()
        with self._swap:
            if queue in self._draining:
                self._draining.remove(queue)
                # Keys a release held back in the stopping run's queue reach the next (I12).
                for key in queue.held():
                    self.queue.add(key)
        self._log.info("stopped")

    def _retire(self, queue: RateLimitingQueue[K]) -> RateLimitingQueue[K]:
        """A run ends: from now on keys go to the next run's queue, which starts with the
        keys of `queue` waiting for a retry or a re-check and those held back (retries of the
        reconciles still running go there too: `process` uses `self.queue`). `queue` is
        returned, to be shut down (its workers drain it). A given queue is kept: it serves
        one run."""
        if self._new_queue is None:
            return queue
        fresh = self._new_queue()
        fresh.set_hold(self._holds if self._released else None)
        with self._swap:  # no key reaches `queue` after this: enqueues and retries go to `fresh`
            self.queue = fresh
            self._draining.append(queue)
            for key, delay in queue.waiting_items():
                fresh.add_after(key, delay)
            for key in queue.held():
                fresh.add(key)
        return queue

    def _worker(self, queue: RateLimitingQueue[K]) -> None:
        while True:
            key, shutting_down = queue.get()
            if shutting_down:
                return
            try:
                self.process(key)
            finally:
                queue.done(key)

    def process(self, key: K) -> None:
        """One reconcile of ``key`` with the retry policy (the worker's body)."""
        placed = self._placing(key)
        try:
            requeue_after = self.reconcile(key)
        except Exception as err:
            self._failed(self._retries, key, err, placed)
            return
        self._reconciled(self._retries, key, requeue_after, placed)
