"""Work queues for controllers: client-go's util/workqueue (rules I1-I11), times in seconds.

An item is never handed to two workers at once (dirty/processing sets), re-adds while an
item is processed are deferred until ``done``; the delaying queue holds items in a heap
served by one waiting thread; the rate-limiting queue delays retries per item.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar, cast

from kubeinformers.runtime.metrics import (
    WORKQUEUE_DURATION_BUCKETS,
    LatencyRecorder,
    WorkQueueMetrics,
    track_queue,
)

__all__ = [
    "BucketRateLimiter",
    "Clock",
    "CounterMetric",
    "DelayingQueue",
    "FakeClock",
    "GaugeMetric",
    "HistogramMetric",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "NoopMetricsProvider",
    "QueueBackend",
    "RateLimiter",
    "RateLimitingQueue",
    "RealClock",
    "SettableGaugeMetric",
    "WithMaxWaitRateLimiter",
    "WorkQueue",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "set_provider",
]

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)
_log = logging.getLogger("kubeinformers.workqueue")

_HEARTBEAT = 10.0  # I7: the delaying queue re-checks its heap at least this often
_UNFINISHED_WORK_PERIOD = 0.5  # client-go updates the unfinished-work gauges every 500 ms


# --------------------------------------------------------------------------- clocks


class Clock(Protocol):
    """Time source of the queues: ``now()`` in seconds (monotonic) and a timed wait."""

    def now(self) -> float: ...

    def wait_until(self, condition: threading.Condition, deadline: float | None) -> None:
        """Wait on ``condition`` (held by the caller) until notified or this clock reaches
        ``deadline``; may return early, so callers re-check their state in a loop."""
        ...


class RealClock:
    """The process's monotonic clock."""

    def now(self) -> float:
        return time.monotonic()

    def wait_until(self, condition: threading.Condition, deadline: float | None) -> None:
        if deadline is None:
            condition.wait()
        else:
            remaining = deadline - time.monotonic()
            if remaining > 0:
                condition.wait(remaining)


class FakeClock:
    """A clock that only moves when told to (``step``/``set``), so tests never wait in real time.

    Every change of time wakes all waiters, which re-check their deadline (client-go's fake
    clock does the same); ``wait_for_waiters`` lets a test know a background thread has seen
    the latest time and gone back to waiting.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._generation = 0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiters: dict[int, tuple[threading.Condition, int]] = {}
        self._ids = itertools.count()
        self.wait_calls = 0  # how often anyone started waiting: a busy loop shows here

    def now(self) -> float:
        with self._lock:
            return self._now

    def step(self, seconds: float) -> None:
        self.set(self.now() + seconds)

    def set(self, now: float) -> None:
        with self._lock:
            self._now = now
            self._generation += 1
            conditions = [c for c, _ in self._waiters.values()]
        for condition in conditions:
            with condition:
                condition.notify_all()

    def wait_until(self, condition: threading.Condition, deadline: float | None) -> None:
        with self._lock:
            self.wait_calls += 1
            if deadline is not None and self._now >= deadline:
                return
            ident = next(self._ids)
            self._waiters[ident] = (condition, self._generation)
            self._changed.notify_all()
        try:
            # The caller holds ``condition``, so set() cannot notify before we wait: no lost
            # wake-up. The real-time bound only guards tests against their own mistakes.
            condition.wait(1.0)
        finally:
            with self._lock:
                del self._waiters[ident]

    def has_waiters(self) -> bool:
        with self._lock:
            return bool(self._waiters)

    def wait_for_waiters(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Block (real time) until ``count`` threads wait on this clock having seen its
        current time."""

        def ready() -> bool:
            current = [g for _, g in self._waiters.values() if g == self._generation]
            return len(current) >= count

        with self._lock:
            return self._changed.wait_for(ready, timeout)


# --------------------------------------------------------------------------- metrics


class GaugeMetric(Protocol):
    def inc(self) -> None: ...
    def dec(self) -> None: ...


class SettableGaugeMetric(Protocol):
    def set(self, value: float) -> None: ...


class CounterMetric(Protocol):
    def inc(self) -> None: ...


class HistogramMetric(Protocol):
    def observe(self, value: float) -> None: ...


class MetricsProvider(Protocol):
    """client-go's workqueue MetricsProvider. With a Prometheus adapter the series are
    ``workqueue_depth``, ``workqueue_adds_total``, ``workqueue_queue_duration_seconds``,
    ``workqueue_work_duration_seconds``, ``workqueue_unfinished_work_seconds``,
    ``workqueue_longest_running_processor_seconds`` and ``workqueue_retries_total``,
    each labelled ``name`` = the queue's name. Durations are in seconds."""

    def new_depth_metric(self, name: str) -> GaugeMetric: ...
    def new_adds_metric(self, name: str) -> CounterMetric: ...
    def new_latency_metric(self, name: str) -> HistogramMetric: ...
    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...
    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric: ...
    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric: ...
    def new_retries_metric(self, name: str) -> CounterMetric: ...


class _Noop:
    def inc(self) -> None:
        pass

    def dec(self) -> None:
        pass

    def set(self, value: float) -> None:
        pass

    def observe(self, value: float) -> None:
        pass


_NOOP = _Noop()


class NoopMetricsProvider:
    """The default: metrics cost nothing unless a provider is configured."""

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return _NOOP

    def new_adds_metric(self, name: str) -> CounterMetric:
        return _NOOP

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return _NOOP

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return _NOOP

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _NOOP

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _NOOP

    def new_retries_metric(self, name: str) -> CounterMetric:
        return _NOOP


_NOOP_PROVIDER = NoopMetricsProvider()
_global_provider: MetricsProvider | None = None
_global_provider_lock = threading.Lock()


def set_provider(provider: MetricsProvider) -> None:
    """Set the process-wide metrics provider for named queues (client-go SetProvider: only the
    first call takes effect, and only queues created afterwards use it)."""
    global _global_provider
    with _global_provider_lock:
        if _global_provider is None:
            _global_provider = provider


class _QueueMetrics(Generic[K]):
    """Bookkeeping behind the metric hooks; all calls happen under the queue's lock.

    The in-process counters and histograms (`WorkQueue.metrics()`) are always kept; the
    provider's metrics only for a named queue with a provider (no-ops otherwise).
    """

    def __init__(self, name: str, provider: MetricsProvider, clock: Clock) -> None:
        self.clock = clock
        self.now = time.monotonic if type(clock) is RealClock else clock.now
        # Without a provider the no-op calls are skipped: this runs for every item.
        self.external = not isinstance(provider, NoopMetricsProvider)
        self.adds_total = 0
        self.retries_total = 0
        self.queue_duration = LatencyRecorder(WORKQUEUE_DURATION_BUCKETS)
        self.work_seconds = LatencyRecorder(WORKQUEUE_DURATION_BUCKETS)
        self.depth = provider.new_depth_metric(name)
        self.adds = provider.new_adds_metric(name)
        self.latency = provider.new_latency_metric(name)
        self.work_duration = provider.new_work_duration_metric(name)
        self.unfinished = provider.new_unfinished_work_seconds_metric(name)
        self.longest = provider.new_longest_running_processor_seconds_metric(name)
        self.retries = provider.new_retries_metric(name)
        self.add_times: dict[K, float] = {}
        self.processing_start: dict[K, float] = {}

    def add(self, item: K) -> None:
        self.adds_total += 1
        if self.external:
            self.adds.inc()
            self.depth.inc()
        if item not in self.add_times:
            self.add_times[item] = self.now()

    def get(self, item: K) -> None:
        now = self.now()
        self.processing_start[item] = now
        started = self.add_times.pop(item, None)
        if started is not None:
            self.queue_duration.observe(now - started)
        if self.external:
            self.depth.dec()
            if started is not None:
                self.latency.observe(now - started)

    def done(self, item: K) -> None:
        started = self.processing_start.pop(item, None)
        if started is not None:
            elapsed = self.now() - started
            self.work_seconds.observe(elapsed)
            if self.external:
                self.work_duration.observe(elapsed)

    def retry(self) -> None:
        self.retries_total += 1
        if self.external:
            self.retries.inc()

    def unfinished_work(self) -> tuple[float, float]:
        """(sum of the ages, oldest age) of the items being processed."""
        now = self.clock.now()
        total = 0.0
        longest = 0.0
        for started in self.processing_start.values():
            age = now - started
            total += age
            longest = max(longest, age)
        return total, longest

    def update_unfinished_work(self) -> None:
        total, longest = self.unfinished_work()
        self.unfinished.set(total)
        self.longest.set(longest)


# --------------------------------------------------------------------------- plain queue


class QueueBackend(Protocol[K]):
    """Order in which dirty items are handed out (client-go's pluggable Queue). ``touch`` is
    called when an already queued item is added again (I2)."""

    def push(self, item: K) -> None: ...
    def pop(self) -> K: ...
    def touch(self, item: K) -> None: ...
    def __len__(self) -> int: ...


class _FifoBackend(Generic[K]):
    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: deque[K] = deque()

    def push(self, item: K) -> None:
        self._items.append(item)

    def pop(self) -> K:
        return self._items.popleft()

    def touch(self, item: K) -> None:
        pass

    def __len__(self) -> int:
        return len(self._items)


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
        self._queue: QueueBackend[K] = queue if queue is not None else _FifoBackend()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._shutting_down = False
        self._drain = False
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
        track_queue(self)

    # I2
    def add(self, item: K) -> None:
        with self._lock:
            if self._shutting_down:
                return
            if item in self._dirty:
                # Already waiting: keep its position; a custom backend may re-rank it.
                if item not in self._processing:
                    self._queue.touch(item)
                return
            self._metrics.add(item)
            self._dirty.add(item)
            if item in self._processing:
                return  # I4: queued again by done()
            self._queue.push(item)
            self._cond.notify()

    def __len__(self) -> int:  # I5
        with self._lock:
            return len(self._queue)

    # I3
    def get(self) -> tuple[K, bool]:
        with self._lock:
            while not len(self._queue) and not self._shutting_down:
                self._cond.wait()
            if not len(self._queue):
                return cast(K, None), True
            item = self._queue.pop()
            self._metrics.get(item)
            self._processing.add(item)
            self._dirty.discard(item)
            return item, False

    # I4
    def done(self, item: K) -> None:
        with self._lock:
            self._metrics.done(item)
            self._processing.discard(item)
            if item in self._dirty:
                self._queue.push(item)
                self._cond.notify()
            elif not self._processing:
                self._cond.notify_all()  # wakes shut_down_with_drain

    # I6
    def shut_down(self) -> None:
        with self._lock:
            self._drain = False
            self._shutting_down = True
            self._cond.notify_all()
        self._metrics_stop.set()

    def shut_down_with_drain(self) -> None:
        """Stop accepting items and block until every handed-out item is done (I6)."""
        with self._lock:
            self._drain = True
            self._shutting_down = True
            self._cond.notify_all()
            while self._processing and self._drain:
                self._cond.wait()
        self._metrics_stop.set()

    def shutting_down(self) -> bool:
        with self._lock:
            return self._shutting_down

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
            m = self._metrics
            unfinished, longest = m.unfinished_work()
            return WorkQueueMetrics(
                name=self.name,
                depth=len(self._queue),
                adds=m.adds_total,
                retries=m.retries_total,
                processing=len(self._processing),
                waiting=waiting,
                queue_duration=m.queue_duration.snapshot(),
                work_duration=m.work_seconds.snapshot(),
                unfinished_work_seconds=unfinished,
                longest_running_processor_seconds=longest,
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
        self._heap: list[tuple[float, int, K]] = []
        self._ready_at: dict[K, float] = {}
        self._seq = itertools.count()
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
            ready_at = self._clock.now() + delay
            known = self._ready_at.get(item)
            if known is not None and known <= ready_at:
                return  # I7: a waiting item's ready time only moves earlier
            self._ready_at[item] = ready_at
            # An earlier duplicate entry supersedes the old one; stale heap entries are
            # skipped when popped (their time no longer matches _ready_at).
            heapq.heappush(self._heap, (ready_at, next(self._seq), item))
            if self._waiter is None:
                self._waiter = threading.Thread(
                    target=self._waiting_loop,
                    name=f"workqueue-delay-{self.name or id(self)}",
                    daemon=True,
                )
                self._waiter.start()
            elif self._heap[0][2] == item:
                self._wait_cond.notify()

    def waiting(self) -> int:
        """Number of items waiting for their ready time."""
        with self._wait_lock:
            return len(self._ready_at)

    def _waiting_count(self) -> int:
        return self.waiting()

    def _waiting_loop(self) -> None:
        with self._wait_lock:
            while not self._stopped:
                now = self._clock.now()
                ready: list[K] = []
                while self._heap and self._heap[0][0] <= now:
                    ready_at, _, item = heapq.heappop(self._heap)
                    if self._ready_at.get(item) == ready_at:
                        del self._ready_at[item]
                        ready.append(item)
                if ready:
                    # Add outside our lock: never hold both locks (no ordering to get wrong).
                    self._wait_lock.release()
                    try:
                        for item in ready:
                            self.add(item)
                    finally:
                        self._wait_lock.acquire()
                    continue
                deadline = now + _HEARTBEAT
                if self._heap:
                    deadline = min(deadline, self._heap[0][0])
                self._clock.wait_until(self._wait_cond, deadline)

    def _stop_waiting(self) -> None:
        with self._wait_lock:
            self._stopped = True
            self._heap.clear()
            self._ready_at.clear()
            self._wait_cond.notify_all()

    def shut_down(self) -> None:
        super().shut_down()
        self._stop_waiting()

    def shut_down_with_drain(self) -> None:
        self._stop_waiting()
        super().shut_down_with_drain()


# --------------------------------------------------------------------------- rate limiters


class RateLimiter(Protocol[K_contra]):
    """How long an item waits before its next retry (client-go TypedRateLimiter)."""

    def when(self, item: K_contra) -> float: ...
    def forget(self, item: K_contra) -> None: ...
    def num_requeues(self, item: K_contra) -> int: ...


class ItemExponentialFailureRateLimiter(Generic[K]):
    """``base_delay * 2**failures`` per item, capped at ``max_delay`` (I9)."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[K, int] = {}
        self._lock = threading.Lock()

    def when(self, item: K) -> float:
        with self._lock:
            exp = self._failures.get(item, 0)  # I9: the count *before* this failure
            self._failures[item] = exp + 1
        if exp >= 1000:  # 2**exp would overflow a float; client-go caps on overflow too
            return self.max_delay
        return min(self.base_delay * 2.0**exp, self.max_delay)

    def num_requeues(self, item: K) -> int:
        with self._lock:
            return self._failures.get(item, 0)

    def forget(self, item: K) -> None:
        with self._lock:
            self._failures.pop(item, None)


class ItemFastSlowRateLimiter(Generic[K]):
    """``fast_delay`` for the first ``max_fast_attempts`` retries of an item, then ``slow_delay``."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts
        self._failures: dict[K, int] = {}
        self._lock = threading.Lock()

    def when(self, item: K) -> float:
        with self._lock:
            n = self._failures.get(item, 0) + 1
            self._failures[item] = n
        return self.fast_delay if n <= self.max_fast_attempts else self.slow_delay

    def num_requeues(self, item: K) -> int:
        with self._lock:
            return self._failures.get(item, 0)

    def forget(self, item: K) -> None:
        with self._lock:
            self._failures.pop(item, None)


class BucketRateLimiter(Generic[K]):
    """Overall token bucket (golang.org/x/time/rate semantics): ``burst`` tokens to start,
    refilled at ``qps``; ``when`` reserves a token and returns how long to wait for it (I10)."""

    def __init__(self, qps: float = 10.0, burst: int = 100, *, clock: Clock | None = None) -> None:
        if qps <= 0:
            raise ValueError(f"BucketRateLimiter: qps must be > 0, got {qps}")
        self.qps = qps
        self.burst = burst
        self._clock: Clock = clock if clock is not None else RealClock()
        self._tokens = float(burst)
        self._last = self._clock.now()
        self._lock = threading.Lock()

    def when(self, item: K) -> float:
        with self._lock:
            now = self._clock.now()
            if now > self._last:
                self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
                self._last = now
            self._tokens -= 1.0
            return -self._tokens / self.qps if self._tokens < 0 else 0.0

    def num_requeues(self, item: K) -> int:
        return 0

    def forget(self, item: K) -> None:
        pass


class MaxOfRateLimiter(Generic[K]):
    """The largest delay of several limiters; every limiter is consulted on each call (I11)."""

    def __init__(self, *limiters: RateLimiter[K]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one rate limiter")
        self.limiters = limiters

    def when(self, item: K) -> float:
        return max([limiter.when(item) for limiter in self.limiters])

    def num_requeues(self, item: K) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)

    def forget(self, item: K) -> None:
        for limiter in self.limiters:
            limiter.forget(item)


class WithMaxWaitRateLimiter(Generic[K]):
    """Caps another limiter's delay at ``max_delay`` (I11)."""

    def __init__(self, limiter: RateLimiter[K], max_delay: float) -> None:
        self.limiter = limiter
        self.max_delay = max_delay

    def when(self, item: K) -> float:
        return min(self.limiter.when(item), self.max_delay)

    def num_requeues(self, item: K) -> int:
        return self.limiter.num_requeues(item)

    def forget(self, item: K) -> None:
        self.limiter.forget(item)


def default_controller_rate_limiter(*, clock: Clock | None = None) -> MaxOfRateLimiter[K]:
    """Per-item exponential 5 ms … 1000 s, and overall 10 qps with a burst of 100 (I11)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock=clock),
    )


def default_item_based_rate_limiter() -> ItemExponentialFailureRateLimiter[K]:
    """Per-item exponential 1 ms … 1000 s (I11)."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)


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
