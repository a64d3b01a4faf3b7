"""Workqueue metrics: client-go's MetricsProvider protocols and the per-queue bookkeeping.

The queues call `_QueueMetrics` under their lock. `kubeinformers.runtime.workqueue.queue`
keeps the process-wide provider (`set_provider`).
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from kubeinformers.runtime.clock import Clock, RealClock
from kubeinformers.runtime.metrics import (
    WORKQUEUE_DURATION_BUCKETS,
    LatencyRecorder,
    WorkQueueMetrics,
)

__all__ = [
    "CounterMetric",
    "GaugeMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetricsProvider",
    "SettableGaugeMetric",
]

K = TypeVar("K", bound=Hashable)


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

    def snapshot(
        self, name: str, *, depth: int, processing: int, waiting: int, held: int
    ) -> WorkQueueMetrics:
        """The queue's `metrics()`: these counts with the series kept here (both faces)."""
        unfinished, longest = self.unfinished_work()
        return WorkQueueMetrics(
            name=name,
            depth=depth,
            adds=self.adds_total,
            retries=self.retries_total,
            processing=processing,
            waiting=waiting,
            queue_duration=self.queue_duration.snapshot(),
            work_duration=self.work_seconds.snapshot(),
            unfinished_work_seconds=unfinished,
            longest_running_processor_seconds=longest,
            held=held,
        )

    def update_unfinished_work(self) -> None:
        total, longest = self.unfinished_work()
        self.unfinished.set(total)
        self.longest.set(longest)
