"""Work queues for controllers: client-go's util/workqueue (rules I1-I11), times in seconds.

An item is never handed to two workers at once (dirty/processing sets), re-adds while an
item is processed are deferred until ``done``; the delaying queue holds items in a heap
served by one waiting thread; the rate-limiting queue delays retries per item.

The rules over the items live in `workqueue.core` (QueueCore), which the asyncio face
(`workqueue.async_queue`) shares: this module adds the threads' waiting (a lock and a
condition) and the delaying thread. The clocks (`runtime.clock`), the metrics hooks
(`workqueue.metrics`) and the rate limiters (`workqueue.rate_limiters`) live in their own
modules; import them from there.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator, Hashable
from types import TracebackType
from typing import Generic, Self, TypeVar, cast

from kubeinformers.runtime.clock import Clock, RealClock
from kubeinformers.runtime.metrics import WorkQueueMetrics, track_queue
from kubeinformers.runtime.workqueue.core import QueueBackend, QueueCore
from kubeinformers.runtime.workqueue.delays import Delays
from kubeinformers.runtime.workqueue.metrics import (
    _NOOP_PROVIDER,
    MetricsProvider,
    NoopMetricsProvider,
    _QueueMetrics,
)
from kubeinformers.runtime.workqueue.rate_limiters import (
    RateLimiter,
    default_controller_rate_limiter,
)

__all__ = [
    "DelayingQueue",
    "QueueBackend",
    "RateLimitingQueue",
    "WorkQueue",
    "set_provider",
]

K = TypeVar("K", bound=Hashable)
_log = logging.getLogger("kubeinformers.workqueue")

HEARTBEAT = 10.0  # I7: a delaying queue re-checks its waiting items at least this often
_UNFINISHED_WORK_PERIOD = 0.5  # client-go updates the unfinished-work gauges every 500 ms


# --------------------------------------------------------------------------- metrics provider

_global_provider: MetricsProvider | None = None
_global_provider_lock = threading.Lock()


def set_provider(provider: MetricsProvider) -> None:
    """Set the process-wide metrics provider for named queues (client-go SetProvider: only the
    first call takes effect, and only queues created afterwards use it)."""
    global _global_provider
    with _global_provider_lock:
        if _global_provider is None:
            _global_provider = provider


# --------------------------------------------------------------------------- plain queue


class WorkQueue(Generic[K]):
    """FIFO work queue with client-go's dirty/processing discipline (I1-I6).

    Workers loop ``item, shutting_down = q.get()``; when ``shutting_down`` is True the item is
    ``None`` (client-go's zero value) and the worker should exit; otherwise it must call
    ``q.done(item)`` when finished with it.
    """

    def __init__(
        self,
        name: str = "",
        *,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
        queue: QueueBackend[K] | None = None,
    ) -> None:
        self.name = name
        self._clock: Clock = clock if clock is not None else RealClock()
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._idle_waiters = 0
        provider = metrics_provider if metrics_provider is not None else _global_provider
        # client-go: an unnamed queue or no provider means no provider metrics at all; the
        # in-process ones (`metrics()`) are always kept, at a few dict operations per item.
        self._metrics_stop = threading.Event()
        if name and provider is not None and not isinstance(provider, NoopMetricsProvider):
            self._metrics: _QueueMetrics[K] = _QueueMetrics(name, provider, self._clock)
            threading.Thread(
                target=self._unfinished_work_loop, name=f"workqueue-metrics-{name}", daemon=True
            ).start()
        else:
            self._metrics = _QueueMetrics(name, _NOOP_PROVIDER, self._clock)
        self._core: QueueCore[K] = QueueCore(self._metrics, queue)
        track_queue(self)

    # I2
    def add(self, item: K) -> None:
        with self._lock:
            if self._core.add(item):
                self._cond.notify()

    def __len__(self) -> int:  # I5
        with self._lock:
            return self._core.ready()

    # I3
    def get(self) -> tuple[K, bool]:
        core = self._core
        with self._lock:
            while True:
                while not core.ready() and not core.shutting_down:
                    self._cond.wait()
                if not core.ready():
                    return cast(K, None), True
                item, found = core.take()
                if found:
                    return cast(K, item), False

    # I4
    def done(self, item: K) -> None:
        with self._lock:
            if self._core.done(item):
                self._cond.notify()
            if not self._core.processing or self._idle_waiters:
                self._cond.notify_all()  # wakes shut_down_with_drain, wait_released

    # N10: holding items back (a shard handed off)

    def set_hold(self, hold: Callable[[K], bool] | None, *, readmit: bool = True) -> None:
        """Hold back every item `hold` matches from now on (None: none): a matching add is
        kept aside, a matching queued item is not handed out, a matching item re-added
        while processed is not queued again when done. Held items that `hold` no longer
        matches are queued again, in no particular order (with `readmit=False` they stay
        aside until a later `set_hold`; an add of one queues it). Items being processed are
        not interrupted: `wait_released` waits for them. `hold` runs under the queue's lock:
        quick, and it must not call the queue."""
        with self._lock:
            if self._core.set_hold(hold, readmit):
                self._cond.notify_all()

    def held(self) -> set[K]:
        """The items held back now (a copy)."""
        with self._lock:
            return set(self._core.held)

    def processing_items(self) -> set[K]:
        """The items handed out and not yet done (a copy)."""
        with self._lock:
            return set(self._core.processing)

    def is_held(self, item: K) -> bool:
        with self._lock:
            return item in self._core.held

    def wait_released(self, timeout: float | None) -> bool:
        """Block until no item being processed matches the hold predicate (N10): True, or
        False when `timeout` passes first (or at once with timeout 0)."""
        deadline = None if timeout is None else self._clock.now() + timeout
        with self._lock:
            self._idle_waiters += 1
            try:
                while True:
                    if not self._core.holds_processed():
                        return True
                    if deadline is not None and self._clock.now() >= deadline:
                        return False
                    self._clock.wait_until(self._cond, deadline)
            finally:
                self._idle_waiters -= 1

    # I6
    def shut_down(self) -> None:
        with self._lock:
            self._core.drain = False
            self._core.shutting_down = True
            self._cond.notify_all()
        self._metrics_stop.set()

    def shut_down_with_drain(self) -> None:
        """Stop accepting items and block until every handed-out item is done (I6)."""
        core = self._core
        with self._lock:
            core.drain = True
            core.shutting_down = True
            self._cond.notify_all()
            while core.processing and core.drain:
                self._cond.wait()
        self._metrics_stop.set()

    def shutting_down(self) -> bool:
        with self._lock:
            return self._core.shutting_down

    # Pythonic faces of get/done/shut_down (client-go's names stay the primary API).

    def __iter__(self) -> Generator[K, None, None]:
        """`for item in queue:` — blocks for each item; the item is `done` when the loop body
        finishes (also when it raises or breaks); ends when the queue shuts down (I3, I6)."""
        while True:
            item, shutting_down = self.get()
            if shutting_down:
                return
            try:
                yield item
            finally:
                self.done(item)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Leaving `with queue:` shuts it down (workers' loops end once it is empty)."""
        self.shut_down()

    def update_unfinished_work(self) -> None:
        """Refresh the unfinished-work gauges now (a background thread does it every 0.5 s)."""
        with self._lock:
            self._metrics.update_unfinished_work()

    def _unfinished_work_loop(self) -> None:
        while not self._metrics_stop.wait(_UNFINISHED_WORK_PERIOD):
            self.update_unfinished_work()

    def _retry(self) -> None:
        with self._lock:
            self._metrics.retry()

    def metrics(self) -> WorkQueueMetrics:
        """client-go's workqueue series for this queue, read in-process (named or not)."""
        waiting = self._waiting_count()
        with self._lock:
            return self._metrics.snapshot(
                self.name,
                depth=self._core.ready(),
                processing=len(self._core.processing),
                waiting=waiting,
                held=len(self._core.held),
            )

    def _waiting_count(self) -> int:
        return 0


# --------------------------------------------------------------------------- delaying queue


class DelayingQueue(WorkQueue[K]):
    """A WorkQueue whose ``add_after`` makes an item ready later (I7).

    One waiting thread (started on the first delayed add) sleeps until the earliest ready
    time, a newly earlier item, shutdown, or the 10 s heartbeat; no polling.
    """

    def __init__(
        self,
        name: str = "",
        *,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
        queue: QueueBackend[K] | None = None,
    ) -> None:
        super().__init__(name, metrics_provider=metrics_provider, clock=clock, queue=queue)
        self._wait_lock = threading.Lock()
        self._wait_cond = threading.Condition(self._wait_lock)
        self._delays: Delays[K] = Delays()
        self._stopped = False
        self._waiter: threading.Thread | None = None

    def add_after(self, item: K, delay: float) -> None:
        if self.shutting_down():
            return
        self._retry()
        if delay <= 0:
            self.add(item)
            return
        with self._wait_lock:
            if self._stopped:
                return
            earliest = self._delays.schedule(item, self._clock.now() + delay)
            if self._waiter is None:
                self._waiter = threading.Thread(
                    target=self._waiting_loop,
                    name=f"workqueue-delay-{self.name or id(self)}",
                    daemon=True,
                )
                self._waiter.start()
            elif earliest:
                self._wait_cond.notify()

    def waiting(self) -> int:
        """Number of items waiting for their ready time."""
        with self._wait_lock:
            return len(self._delays)

    def waiting_items(self) -> list[tuple[K, float]]:
        """The items waiting for their ready time, each with the seconds left until then."""
        with self._wait_lock:
            return self._delays.items(self._clock.now())

    def _waiting_count(self) -> int:
        return self.waiting()

    def _waiting_loop(self) -> None:
        with self._wait_lock:
            while not self._stopped:
                now = self._clock.now()
                ready = self._delays.due(now)
                if ready:
                    # Add outside our lock: never hold both locks (no ordering to get wrong).
                    self._wait_lock.release()
                    try:
                        for item in ready:
                            self.add(item)
                    finally:
                        self._wait_lock.acquire()
                    continue
                deadline = now + HEARTBEAT
                next_at = self._delays.next_at()
                if next_at is not None:
                    deadline = min(deadline, next_at)
                self._clock.wait_until(self._wait_cond, deadline)

    def _stop_waiting(self) -> None:
        with self._wait_lock:
            self._stopped = True
            self._delays.clear()
            self._wait_cond.notify_all()

    def shut_down(self) -> None:
        super().shut_down()
        self._stop_waiting()

    def shut_down_with_drain(self) -> None:
        self._stop_waiting()
        super().shut_down_with_drain()


# --------------------------------------------------------------------------- rate-limited queue


class RateLimitingQueue(DelayingQueue[K]):
    """A DelayingQueue that delays each retry by its rate limiter (I8)."""

    def __init__(
        self,
        rate_limiter: RateLimiter[K] | None = None,
        name: str = "",
        *,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
        queue: QueueBackend[K] | None = None,
    ) -> None:
        super().__init__(name, metrics_provider=metrics_provider, clock=clock, queue=queue)
        self.rate_limiter: RateLimiter[K] = (
            rate_limiter
            if rate_limiter is not None
            else default_controller_rate_limiter(clock=clock)
        )

    def add_rate_limited(self, item: K) -> None:
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: K) -> None:
        """Stop tracking the item's failures; does not touch the queue (I8)."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: K) -> int:
        return self.rate_limiter.num_requeues(item)
