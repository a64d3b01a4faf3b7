"""Metrics of informers and work queues: cheap counters, immutable snapshots, Prometheus export.

Every informer and work queue counts what it does as it does it: plain int attributes bumped on
the hot path, no lock, no allocation. That is safe because each counter has one writer thread
(the reflector's thread for list/watch counters, the informer's process loop for notifications,
a handler's own delivery thread for its latency, the queue's lock for work-queue counters): an
attribute `+=` is not atomic, but with a single writer no increment is lost, and a reader
(`metrics()`, a Prometheus scrape) sees each value at most one step behind.

`SharedIndexInformer.metrics()` and `WorkQueue.metrics()` return frozen snapshots of those
counters (`InformerMetrics`, `WorkQueueMetrics`). `register_prometheus()` exports every live
informer and named work queue through prometheus_client (the `prometheus` extra) with
client-go's workqueue metric names and `kubeinformers_informer_*` for the informers (client-go
removed its reflector metrics). Importing this module never imports prometheus_client.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# Handler latency buckets (seconds): from 0.5 ms, a fast handler, up to 10 s, a stuck one.
HANDLER_LATENCY_BUCKETS: tuple[float, ...] = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
# client-go's workqueue histograms: prometheus.ExponentialBuckets(10e-9, 10, 10), 10 ns .. 10 s.
WORKQUEUE_DURATION_BUCKETS: tuple[float, ...] = tuple(float(f"1e{e}") for e in range(-8, 2))


# --------------------------------------------------------------------------- recorders (mutable)


class LatencyRecorder:
    """A small histogram: count per bucket, sum and max. One writer thread (see the module)."""

    __slots__ = ("bounds", "counts", "max", "sum")

    def __init__(self, bounds: Sequence[float] = HANDLER_LATENCY_BUCKETS) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)  # the last one is +Inf
        self.sum = 0.0
        self.max = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1  # le: values <= bound
        self.sum += seconds
        if seconds > self.max:
            self.max = seconds

    def snapshot(self) -> HistogramSnapshot:
        counts = list(self.counts)
        cumulative: list[tuple[float, int]] = []
        total = 0
        for bound, n in zip((*self.bounds, float("inf")), counts, strict=True):
            total += n
            cumulative.append((bound, total))
        return HistogramSnapshot(count=total, sum=self.sum, max=self.max, buckets=tuple(cumulative))


class ReflectorCounters:
    """What a reflector did: written by its own thread only (see the module docstring)."""

    __slots__ = (
        "added",
        "bookmarks",
        "deleted",
        "error_events",
        "expired",
        "list_calls",
        "lists",
        "modified",
        "skipped",
        "watch_errors",
        "watch_list_starts",
        "watch_starts",
    )

    def __init__(self) -> None:
        self.list_calls = 0  # LIST attempts (the D8 retry at "" is one more)
        self.lists = 0  # completed LISTs, and watch-list streams the server began sending
        self.expired = 0  # 410 Expired/Gone or "too large resourceVersion" answers (list, watch)
        self.watch_starts = 0  # watch requests the server accepted (watch-list's included)
        self.watch_list_starts = 0  # of which watch-list streams (each one a full initial state)
        self.watch_errors = 0  # watches that failed to open or ended with an error
        self.added = 0  # watch events by type
        self.modified = 0
        self.deleted = 0
        self.bookmarks = 0
        self.error_events = 0
        self.skipped = 0  # events dropped by the reflector: wrong type or kind, no metadata


class NotificationCounters:
    """Notifications an informer handed to its handlers; written by its process loop only."""

    __slots__ = ("add", "delete", "sync", "update")

    def __init__(self) -> None:
        self.add = 0
        self.update = 0
        self.sync = 0  # resync updates: same resourceVersion, only to handlers due (F10)
        self.delete = 0


# --------------------------------------------------------------------------- snapshots (frozen)


@dataclass(frozen=True, slots=True)
class HistogramSnapshot:
    """Observations in seconds; `buckets` are (upper bound, cumulative count), +Inf last."""

    count: int
    sum: float
    max: float
    buckets: tuple[tuple[float, int], ...]

    @property
    def mean(self) -> float:
        return self.sum / self.count if self.count else 0.0


@dataclass(frozen=True, slots=True)
class WatchEventCounts:
    """Watch events received, by type (watch-list's initial events included)."""

    added: int
    modified: int
    deleted: int
    bookmark: int
    error: int

    def by_type(self) -> dict[str, int]:
        return {
            "ADDED": self.added,
            "MODIFIED": self.modified,
            "DELETED": self.deleted,
            "BOOKMARK": self.bookmark,
            "ERROR": self.error,
        }


@dataclass(frozen=True, slots=True)
class NotificationCounts:
    """Notifications distributed to the handlers, by kind (`sync`: a resync's update)."""

    add: int
    update: int
    sync: int
    delete: int

    def by_type(self) -> dict[str, int]:
        return {"add": self.add, "update": self.update, "sync": self.sync, "delete": self.delete}


@dataclass(frozen=True, slots=True)
class HandlerMetrics:
    """One registered handler: `handler` names it uniquely within its informer."""

    handler: str
    buffered: int  # notifications waiting in its buffer (a slow handler grows it)
    delivered: int  # callbacks that returned or raised
    errors: int  # callbacks that raised
    invalid_objects: int  # of those, on an object that failed validation (G9)
    latency: HistogramSnapshot  # time spent in its callbacks
    oldest_buffered_age: float = 0.0  # seconds the oldest buffered notification has waited
    falling_behind: bool = False  # reported as falling behind and not caught up yet (G10)
    coalesced: int = 0  # notifications merged into a buffered one of the same object (G11)
    max_buffer: int | None = None  # its bound (add_event_handler(max_buffer=...)); None: none


@dataclass(frozen=True, slots=True)
class InformerMetrics:
    """A snapshot of one informer (`SharedIndexInformer.metrics()`)."""

    informer: str
    resource: str
    has_synced: bool
    queued_items: int  # keys (DeltaFIFO) or deltas (RealFIFO) waiting to be processed
    events: WatchEventCounts
    notifications: NotificationCounts
    list_calls: int
    relists: int  # full initial states after the first one: LISTs, watch-list streams begun
    expired: int  # 410 answers: each one leads to a relist
    watch_starts: int
    watch_restarts: int  # watches opened after the first one, watch-list streams not counted
    watch_errors: int
    last_sync_resource_version: str
    invalid_objects: int  # objects the transport could not decode or validate (reported)
    skipped_events: int  # events the reflector dropped (wrong type, no metadata)
    handlers: tuple[HandlerMetrics, ...]
    # Section N: who filters a sharded informer's shard ("server", "client", "pending"; None
    # when not sharded) and how many objects the client filter left out.
    shard_filter: str | None = None
    out_of_shard: int = 0
    index_errors: int = 0  # index function failures, each object version and index once (B18)
    unindexed_objects: int = 0  # cached objects left out of an index for now (B18)
    # N8, N9: objects cached (all of the shard once synced), shard changes (`set_shard`),
    # objects that left the cache because the shard changed (LeftShard tombstones), and the
    # seconds from the last change to the cache holding the new shard (None: none yet).
    cached_objects: int = 0
    shard_changes: int = 0
    left_shard: int = 0
    last_reshard_seconds: float | None = None

    @property
    def buffered_notifications(self) -> int:
        return sum(h.buffered for h in self.handlers)


@dataclass(frozen=True, slots=True)
class WorkQueueMetrics:
    """A snapshot of one work queue (`WorkQueue.metrics()`), client-go's series in-process."""

    name: str
    depth: int  # items waiting to be handed out
    adds: int
    retries: int  # add_after / add_rate_limited calls
    processing: int  # items handed out and not yet done
    waiting: int  # delayed items not yet ready (DelayingQueue)
    queue_duration: HistogramSnapshot  # from add to get
    work_duration: HistogramSnapshot  # from get to done
    unfinished_work_seconds: float  # sum of the ages of the items being processed
    longest_running_processor_seconds: float
    held: int = 0  # items held back (N10: their shard was released), not handed out


def build_informer_metrics(
    *,
    informer: str,
    resource: str,
    has_synced: bool,
    queued_items: int,
    reflector: ReflectorCounters,
    notifications: NotificationCounters,
    last_sync_resource_version: str,
    invalid_objects: int,
    handlers: tuple[HandlerMetrics, ...],
    shard_filter: str | None = None,
    out_of_shard: int = 0,
    index_errors: int = 0,
    unindexed_objects: int = 0,
    cached_objects: int = 0,
    shard_changes: int = 0,
    left_shard: int = 0,
    last_reshard_seconds: float | None = None,
) -> InformerMetrics:
    r = reflector
    return InformerMetrics(
        informer=informer,
        resource=resource,
        has_synced=has_synced,
        queued_items=queued_items,
        events=WatchEventCounts(r.added, r.modified, r.deleted, r.bookmarks, r.error_events),
        notifications=NotificationCounts(
            notifications.add, notifications.update, notifications.sync, notifications.delete
        ),
        list_calls=r.list_calls,
        relists=max(r.lists - 1, 0),
        expired=r.expired,
        watch_starts=r.watch_starts,
        # A watch-list stream is a (re)list that becomes the watch: the first one is the first
        # watch, a later one a relist, not a watch restart (issue 27).
        watch_restarts=max(
            r.watch_starts - r.watch_list_starts - (0 if r.watch_list_starts else 1), 0
        ),
        watch_errors=r.watch_errors,
        last_sync_resource_version=last_sync_resource_version,
        invalid_objects=invalid_objects,
        skipped_events=r.skipped,
        handlers=handlers,
        shard_filter=shard_filter,
        out_of_shard=out_of_shard,
        index_errors=index_errors,
        unindexed_objects=unindexed_objects,
        cached_objects=cached_objects,
        shard_changes=shard_changes,
        left_shard=left_shard,
        last_reshard_seconds=last_reshard_seconds,
    )


# --------------------------------------------------------------------------- live registry


class _InformerLike(Protocol):
    def metrics(self) -> InformerMetrics: ...
    def is_stopped(self) -> bool: ...


class _QueueLike(Protocol):
    name: str

    def metrics(self) -> WorkQueueMetrics: ...
    def shutting_down(self) -> bool: ...


_live_lock = threading.Lock()
# In the order they were created (H27): a dict keeps its insertion order, where a WeakSet's
# order changes as it grows, which swapped the `#2` suffixes of two same-named informers.
_informers: weakref.WeakKeyDictionary[Any, None] = weakref.WeakKeyDictionary()
_queues: weakref.WeakKeyDictionary[Any, None] = weakref.WeakKeyDictionary()
_rings: weakref.WeakSet[Any] = weakref.WeakSet()


def track_informer(informer: _InformerLike) -> None:
    """Called by every informer: exported while alive, forgotten when garbage collected."""
    with _live_lock:
        _informers[informer] = None


def track_queue(queue: _QueueLike) -> None:
    """Called by every work queue; only named ones are exported (as in client-go)."""
    with _live_lock:
        _queues[queue] = None


def track_ring(ring: Any) -> None:
    """Called by every shard ring's core (`runtime.ring.core.RingCore`: `config`, `metrics()`,
    `health()`, `running()`): exported while it runs (N23)."""
    with _live_lock:
        _rings.add(ring)


def live_rings() -> list[Any]:
    """Shard rings not yet collected and running."""
    with _live_lock:
        rings = list(_rings)
    return [r for r in rings if r.running()]


def live_informers() -> list[_InformerLike]:
    """Informers not yet collected and not stopped, oldest first (H27)."""
    with _live_lock:
        informers = list(_informers)
    return [i for i in informers if not i.is_stopped()]


def live_queues() -> list[_QueueLike]:
    """Named work queues not yet collected and not shut down, oldest first (H27)."""
    with _live_lock:
        queues = list(_queues)
    return [q for q in queues if q.name and not q.shutting_down()]


# --------------------------------------------------------------------------- Prometheus


def _prometheus() -> Any:
    try:
        import prometheus_client  # optional dependency: imported on demand
        import prometheus_client.core
    except ImportError as e:
        raise ImportError(
            "kubeinformers metrics export needs prometheus_client, which is not installed: "
            "pip install 'kubeinformers[prometheus]'"
        ) from e
    return prometheus_client


def _histogram_buckets(h: HistogramSnapshot) -> list[tuple[str, float]]:
    return [("+Inf" if b == float("inf") else repr(b), float(n)) for b, n in h.buckets]


class KubeinformersCollector:
    """A prometheus_client collector reading the live informers' and queues' snapshots.

    Nothing is stored: every scrape calls `metrics()` on each live informer and named queue.
    """

    def __init__(self) -> None:
        self._core = _prometheus().core

    def collect(self) -> Iterator[Any]:
        yield from self._informer_families()
        yield from self._queue_families()
        yield from self._ring_families()

    def describe(self) -> list[Any]:
        # Families are produced per scrape; describing nothing skips a collect at registration.
        return []

    def _informer_families(self) -> Iterator[Any]:
        core = self._core
        labels = ["informer", "resource"]
        p = "kubeinformers_informer_"

        def gauge(name: str, doc: str, extra: Sequence[str] = ()) -> Any:
            return core.GaugeMetricFamily(p + name, doc, labels=[*labels, *extra])

        def counter(name: str, doc: str, extra: Sequence[str] = ()) -> Any:
            return core.CounterMetricFamily(p + name, doc, labels=[*labels, *extra])

        queued = gauge("queued_items", "Items in the informer's queue waiting to be processed.")
        synced = gauge("synced", "1 once the informer's initial list has been processed.")
        events = counter("events", "Watch events received, by type.", ["type"])
        notes = counter("notifications", "Notifications sent to the handlers, by type.", ["type"])
        list_calls = counter("list_calls", "LIST requests made by the reflector.")
        relists = counter(
            "relists", "Full initial states after the first one (LISTs, watch-list streams)."
        )
        expired = counter("expired", "410 Expired/Gone answers to a list or watch.")
        watch_starts = counter("watch_starts", "Watches opened.")
        restarts = counter("watch_restarts", "Watches opened after the first one.")
        watch_errors = counter("watch_errors", "Watches that failed to open or ended in error.")
        invalid = counter("invalid_objects", "Objects that failed decoding or validation.")
        skipped = counter("skipped_events", "Watch events dropped (wrong type, no metadata).")
        out_of_shard = counter(
            "out_of_shard_objects",
            "Objects outside a sharded informer's shard, dropped by the client's filter.",
        )
        client_filter = gauge(
            "shard_client_filter",
            "1 while the client filters a sharded informer's shard (the API server does not), "
            "0 while the API server does.",
        )
        cached = gauge(
            "cached_objects", "Objects in the informer's cache (its shard's, if sharded)."
        )
        shard_changes = counter("shard_changes", "Changes of a sharded informer's shard.")
        left_shard = counter(
            "left_shard_objects", "Objects dropped from the cache because its shard changed."
        )
        reshard_seconds = gauge(
            "last_reshard_seconds",
            "Seconds from the last shard change to the cache holding the new shard.",
        )
        index_errors = counter(
            "index_errors", "Index function failures (each object version and index once)."
        )
        unindexed = gauge("unindexed_objects", "Cached objects left out of an index for now.")
        rv = gauge("last_sync_resource_version", "Last synced resourceVersion (if numeric).")
        rv_info = core.InfoMetricFamily(  # exposed as kubeinformers_informer_last_sync_info
            p + "last_sync",
            "Last synced resourceVersion, as the server sent it.",
            labels=labels,
        )
        hl = [*labels, "handler"]
        buffered = core.GaugeMetricFamily(
            p + "handler_buffered_notifications", "Notifications buffered per handler.", labels=hl
        )
        handler_errors = core.CounterMetricFamily(
            p + "handler_errors", "Handler callbacks that raised.", labels=hl
        )
        handler_invalid = core.CounterMetricFamily(
            p + "handler_invalid_objects",
            "Handler callbacks that raised on an object failing validation.",
            labels=hl,
        )
        oldest = core.GaugeMetricFamily(
            p + "handler_oldest_buffered_seconds",
            "Age of the oldest notification waiting in a handler's buffer.",
            labels=hl,
        )
        coalesced = core.CounterMetricFamily(
            p + "handler_coalesced_notifications",
            "Notifications merged into a buffered one of the same object (max_buffer).",
            labels=hl,
        )
        duration = core.HistogramMetricFamily(
            p + "handler_duration_seconds", "Time spent in a handler's callbacks.", labels=hl
        )
        seen: set[tuple[str, str]] = set()
        for informer in live_informers():
            m = informer.metrics()
            name = m.informer
            n = 2
            while (name, m.resource) in seen:  # two live informers of one name: keep both
                name = f"{m.informer}#{n}"
                n += 1
            seen.add((name, m.resource))
            lv = [name, m.resource]
            queued.add_metric(lv, m.queued_items)
            synced.add_metric(lv, 1.0 if m.has_synced else 0.0)
            for t, v in m.events.by_type().items():
                events.add_metric([*lv, t], v)
            for t, v in m.notifications.by_type().items():
                notes.add_metric([*lv, t], v)
            list_calls.add_metric(lv, m.list_calls)
            relists.add_metric(lv, m.relists)
            expired.add_metric(lv, m.expired)
            watch_starts.add_metric(lv, m.watch_starts)
            restarts.add_metric(lv, m.watch_restarts)
            watch_errors.add_metric(lv, m.watch_errors)
            invalid.add_metric(lv, m.invalid_objects)
            skipped.add_metric(lv, m.skipped_events)
            if m.shard_filter is not None:
                out_of_shard.add_metric(lv, m.out_of_shard)
                if m.shard_filter != "pending":
                    client_filter.add_metric(lv, 1.0 if m.shard_filter == "client" else 0.0)
            index_errors.add_metric(lv, m.index_errors)
            unindexed.add_metric(lv, m.unindexed_objects)
            cached.add_metric(lv, m.cached_objects)
            if m.shard_filter is not None or m.shard_changes:
                shard_changes.add_metric(lv, m.shard_changes)
                left_shard.add_metric(lv, m.left_shard)
                if m.last_reshard_seconds is not None:
                    reshard_seconds.add_metric(lv, m.last_reshard_seconds)
            rv_info.add_metric(lv, {"resource_version": m.last_sync_resource_version})
            if m.last_sync_resource_version.isdigit():
                rv.add_metric(lv, float(m.last_sync_resource_version))
            for h in m.handlers:
                hv = [*lv, h.handler]
                buffered.add_metric(hv, h.buffered)
                handler_errors.add_metric(hv, h.errors)
                handler_invalid.add_metric(hv, h.invalid_objects)
                oldest.add_metric(hv, h.oldest_buffered_age)
                coalesced.add_metric(hv, h.coalesced)
                duration.add_metric(hv, _histogram_buckets(h.latency), h.latency.sum)
        yield from (queued, synced, events, notes, list_calls, relists, expired, watch_starts)
        yield from (restarts, watch_errors, invalid, skipped, out_of_shard, client_filter)
        yield from (rv, rv_info, buffered)
        yield from (handler_errors, handler_invalid, duration, oldest, coalesced)
        yield from (index_errors, unindexed)
        yield from (cached, shard_changes, left_shard, reshard_seconds)

    def _queue_families(self) -> Iterator[Any]:
        core = self._core
        labels = ["name"]
        depth = core.GaugeMetricFamily(
            "workqueue_depth", "Current depth of workqueue", labels=labels
        )
        adds = core.CounterMetricFamily(
            "workqueue_adds", "Total number of adds handled by workqueue", labels=labels
        )
        latency = core.HistogramMetricFamily(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested.",
            labels=labels,
        )
        work = core.HistogramMetricFamily(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            labels=labels,
        )
        unfinished = core.GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads. One can deduce the number of "
            "stuck threads by observing the rate at which this increases.",
            labels=labels,
        )
        longest = core.GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            labels=labels,
        )
        retries = core.CounterMetricFamily(
            "workqueue_retries", "Total number of retries handled by workqueue", labels=labels
        )
        held = core.GaugeMetricFamily(
            "kubeinformers_workqueue_held_items",
            "Items held back, not handed out, because their shard was released.",
            labels=labels,
        )
        seen: set[str] = set()
        for queue in live_queues():
            m = queue.metrics()
            name, n = m.name, 2
            while name in seen:
                name = f"{m.name}#{n}"
                n += 1
            seen.add(name)
            lv = [name]
            depth.add_metric(lv, m.depth)
            adds.add_metric(lv, m.adds)
            latency.add_metric(lv, _histogram_buckets(m.queue_duration), m.queue_duration.sum)
            work.add_metric(lv, _histogram_buckets(m.work_duration), m.work_duration.sum)
            unfinished.add_metric(lv, m.unfinished_work_seconds)
            longest.add_metric(lv, m.longest_running_processor_seconds)
            retries.add_metric(lv, m.retries)
            held.add_metric(lv, m.held)
        yield from (depth, adds, latency, work, unfinished, longest, retries, held)

    def _ring_families(self) -> Iterator[Any]:
        """Shard rings (N23), labelled by ring and this replica's identity."""
        core = self._core
        labels = ["ring", "identity"]
        p = "kubeinformers_ring_"

        def gauge(name: str, doc: str) -> Any:
            return core.GaugeMetricFamily(p + name, doc, labels=labels)

        def counter(name: str, doc: str) -> Any:
            return core.CounterMetricFamily(p + name, doc, labels=labels)

        member = gauge("member", "1 while this replica renews its member Lease.")
        members = gauge("members", "Live members of the ring, as this replica sees them.")
        held = gauge("buckets_held", "Buckets (of 1024) this replica holds.")
        transition = gauge(
            "in_transition", "1 while buckets are still to be started or released here."
        )
        started = counter("buckets_started", "Buckets started here (moves in).")
        released = counter("buckets_released", "Buckets released here (moves out).")
        handoff = core.HistogramMetricFamily(
            p + "handoff_duration_seconds",
            "From seeing buckets assigned to this replica to starting them.",
            labels=labels,
        )
        renew_failures = counter("renew_failures", "Failed renewals of the member Lease.")
        lost = counter("lost", "Times the member Lease was not renewed within renew_deadline.")
        for ring in live_rings():
            m, h = ring.metrics(), ring.health()
            lv = [h.ring, h.identity]
            member.add_metric(lv, 1 if h.member else 0)
            members.add_metric(lv, m.members)
            held.add_metric(lv, m.buckets_held)
            transition.add_metric(lv, 1 if h.in_transition else 0)
            started.add_metric(lv, m.buckets_started)
            released.add_metric(lv, m.buckets_released)
            latency = m.handoff_latency
            handoff.add_metric(lv, _histogram_buckets(latency), latency.sum)
            renew_failures.add_metric(lv, m.renew_failures)
            lost.add_metric(lv, m.lost)
        yield from (member, members, held, transition, started, released, handoff)
        yield from (renew_failures, lost)


_registered: weakref.WeakKeyDictionary[Any, KubeinformersCollector] = weakref.WeakKeyDictionary()
_registered_lock = threading.Lock()


def register_prometheus(registry: Any = None) -> KubeinformersCollector:
    """Export every live informer and named work queue to `registry` (default: the global
    prometheus_client REGISTRY). Registering twice on one registry returns the first collector.

    Raises ImportError naming the extra to install when prometheus_client is missing.
    """
    prometheus_client = _prometheus()
    target = registry if registry is not None else prometheus_client.REGISTRY
    with _registered_lock:
        existing = _registered.get(target)
        if existing is not None:
            return existing
        collector = KubeinformersCollector()
        target.register(collector)
        _registered[target] = collector
        return collector


def unregister_prometheus(registry: Any = None) -> None:
    """Undo `register_prometheus` for `registry` (default: the global REGISTRY)."""
    prometheus_client = _prometheus()
    target = registry if registry is not None else prometheus_client.REGISTRY
    with _registered_lock:
        collector = _registered.pop(target, None)
    if collector is not None:
        target.unregister(collector)


__all__ = [
    "HANDLER_LATENCY_BUCKETS",
    "WORKQUEUE_DURATION_BUCKETS",
    "HandlerMetrics",
    "HistogramSnapshot",
    "InformerMetrics",
    "KubeinformersCollector",
    "LatencyRecorder",
    "NotificationCounters",
    "NotificationCounts",
    "ReflectorCounters",
    "WatchEventCounts",
    "WorkQueueMetrics",
    "build_informer_metrics",
    "live_informers",
    "live_queues",
    "live_rings",
    "register_prometheus",
    "track_informer",
    "track_queue",
    "track_ring",
    "unregister_prometheus",
]
