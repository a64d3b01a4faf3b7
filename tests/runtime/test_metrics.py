"""Metrics (issue 8): `informer.metrics()`, `queue.metrics()` and the Prometheus export.

Counts are checked against what the fake source actually sent (its RVs, its list calls), the
relist and watch-restart paths of the reflector (D8 relist after 410, D14 re-watch after a
clean close), the per-handler buffer of G1 and the handler latency.
"""

from __future__ import annotations

import functools
import importlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubeinformers.runtime.api.listwatch import ListOptions
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.clock import FakeClock
from kubeinformers.runtime.metrics import (
    HANDLER_LATENCY_BUCKETS,
    HistogramSnapshot,
    InformerMetrics,
    LatencyRecorder,
    live_informers,
    live_queues,
    register_prometheus,
    unregister_prometheus,
)
from kubeinformers.runtime.reflector import reflector as reflector_module
from kubeinformers.runtime.reflector.backoff import Backoff
from kubeinformers.runtime.workqueue.queue import RateLimitingQueue, WorkQueue
from kubeinformers.runtime.workqueue.rate_limiters import ItemExponentialFailureRateLimiter
from kubeinformers.testing import FakeListerWatcher
from kubeinformers.testing.fake import FakeWatch
from tests.runtime._informer_support import WAIT, Pod, Recorder, Runner, pod, wait_for
from tests.support.garbage import collected


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Relists after a 410 come within ~0.05 s instead of ~1 s."""
    monkeypatch.setattr(
        reflector_module, "Backoff", functools.partial(Backoff, initial=0.05, cap=0.5)
    )


class Running:
    """An informer over a fake source, running on its own thread until `stop()`."""

    def __init__(
        self, fake: FakeListerWatcher[Pod], *handlers: Any, name: str = "pods", **kw: Any
    ) -> None:
        self.fake = fake
        self.informer: SharedIndexInformer[Pod] = SharedIndexInformer(fake, Pod, name=name, **kw)
        self.registrations = [self.informer.add_event_handler(h) for h in handlers]
        self.runner = Runner(self.informer.run, name=f"informer-{name}")
        assert wait_for(self.informer.has_synced), "informer did not sync"

    def metrics(self) -> InformerMetrics:
        return self.informer.metrics()

    def wait(self, cond: Any, what: str) -> InformerMetrics:
        assert wait_for(lambda: cond(self.metrics())), f"{what}: {self.metrics()}"
        return self.metrics()

    def stop(self) -> None:
        self.runner.stop()


@pytest.fixture
def fake() -> FakeListerWatcher[Pod]:
    return FakeListerWatcher([pod("a"), pod("b")], model=Pod)


def test_metrics_before_run_are_zero_and_name_the_informer(fake: FakeListerWatcher[Pod]) -> None:
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(fake, Pod, name="idle")
    informer.add_event_handler(Recorder())
    m = informer.metrics()
    assert (m.informer, m.resource, m.has_synced, m.queued_items) == ("idle", "Pod", False, 0)
    assert m.events.by_type() == {
        "ADDED": 0,
        "MODIFIED": 0,
        "DELETED": 0,
        "BOOKMARK": 0,
        "ERROR": 0,
    }
    assert (m.list_calls, m.relists, m.watch_starts, m.last_sync_resource_version) == (0, 0, 0, "")
    (h,) = m.handlers
    assert h.handler == "Recorder#1" and h.delivered == 0 and h.latency.count == 0
    with pytest.raises(AttributeError):
        m.relists = 3  # type: ignore[misc]  # a frozen snapshot


def test_watch_events_and_notifications_by_type_match_what_the_source_sent(
    fake: FakeListerWatcher[Pod],
) -> None:
    rec = Recorder()
    run = Running(fake, rec)
    try:
        fake.add(pod("c"))
        fake.add(pod("d"))
        fake.add(pod("e"))
        fake.modify(pod("a", value=1))
        fake.modify(pod("c", value=1))
        fake.delete(pod("b"))
        # A bookmark goes only to watches open when it is sent (as the API server's do); the
        # writes above reach a watch opened later from its resourceVersion, a bookmark would not.
        assert wait_for(lambda: fake.open_watches() == 1), "the informer opened no watch"
        fake.send_bookmark()
        m = run.wait(lambda m: m.events.bookmark == 1 and m.notifications.delete == 1, "events")
        assert m.events.by_type() == {
            "ADDED": 3,
            "MODIFIED": 2,
            "DELETED": 1,
            "BOOKMARK": 1,
            "ERROR": 0,
        }
        # the initial list (a and b) are adds too, but no watch events
        assert m.notifications.by_type() == {"add": 5, "update": 2, "sync": 0, "delete": 1}
        assert m.list_calls == len(fake.list_calls) == 1
        assert (m.relists, m.expired, m.watch_starts, m.watch_restarts) == (0, 0, 1, 0)
        assert m.last_sync_resource_version == fake.resource_version == "8"
        assert m.has_synced and m.queued_items == 0 and m.skipped_events == 0
        assert m.invalid_objects == 0  # the fake has no decoder
        assert rec.expect(8).wait(WAIT)
        m = run.wait(lambda m: m.handlers[0].delivered == 8, "deliveries")
        assert m.handlers[0].latency.count == 8 and m.handlers[0].errors == 0
    finally:
        run.stop()


def test_d17_watch_list_initial_events_are_counted_as_watch_events_and_one_list() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher(
        [pod("a"), pod("b"), pod("c")], model=Pod, watch_list=True
    )
    run = Running(fake, Recorder(), use_watch_list=True)
    try:
        m = run.metrics()
        assert m.events.added == 3 and m.events.bookmark == 1  # the initial-events-end bookmark
        assert m.list_calls == len(fake.list_calls) == 0
        assert (m.relists, m.watch_starts) == (0, 1)
        assert m.last_sync_resource_version == fake.resource_version
    finally:
        run.stop()


class _CutFirstWatchList(FakeListerWatcher[Pod]):
    """The first watch-list stream ends after its initial ADDEDs, before the end bookmark."""

    cut = 0

    def watch(self, options: ListOptions) -> FakeWatch[Pod]:
        w = super().watch(options)
        if options.send_initial_events and not self.cut:
            self.cut += 1
            w._events.pop()  # the initial-events-end bookmark never comes
            w._finish()
        return w


def test_d19_a_second_full_stream_after_a_cut_watch_list_counts_as_a_relist() -> None:
    """Issue 27: each watch-list stream re-sends the whole state, so the stream that follows
    a cut one is a relist (relists=1), not a watch restart (watch_restarts=0)."""
    fake = _CutFirstWatchList([pod("a"), pod("b")], model=Pod, watch_list=True)
    run = Running(fake, Recorder(), use_watch_list=True)
    try:
        m = run.metrics()
        assert fake.cut == 1 and m.events.added == 4  # both streams' initial events
        assert (m.relists, m.watch_starts, m.watch_restarts, m.list_calls) == (1, 2, 0, 0)
        fake.add(pod("c"))  # an event: the watch is not "very short" (D14)
        run.wait(lambda m: m.events.added == 5, "c")
        fake.drop_watches()  # a re-watch of the running watch is a watch restart
        m = run.wait(lambda m: m.watch_starts == 3, "the re-watch")
        assert (m.relists, m.watch_restarts) == (1, 1)
    finally:
        run.stop()


def test_d8_forced_expiry_counts_the_410s_and_one_relist(fake: FakeListerWatcher[Pod]) -> None:
    run = Running(fake, Recorder())
    try:
        fake.add(pod("c"))
        run.wait(lambda m: m.last_sync_resource_version == fake.resource_version, "c")
        # A change the watch never sees, then a compaction past the informer's RV and a cut
        # watch: the re-watch gets an ERROR 410, the relist at the last RV a 410 too, the D8
        # retry at "" succeeds and the watch from its RV works.
        fake.add(pod("d"), notify=False)
        fake.expire(fake.resource_version)
        fake.drop_watches()
        m = run.wait(lambda m: m.relists == 1 and m.watch_starts == 3, "the relist")
        assert m.expired == 2 and m.events.error == 1 and m.watch_errors == 1
        assert m.list_calls == len(fake.list_calls) == 3
        assert m.watch_restarts == 2
        assert m.last_sync_resource_version == fake.resource_version
        run.wait(lambda m: m.notifications.add == 4, "d, seen only by the relist")
    finally:
        run.stop()


def test_d14_dropped_watch_counts_a_watch_restart_without_relist(
    fake: FakeListerWatcher[Pod],
) -> None:
    run = Running(fake, Recorder())
    try:
        fake.add(pod("c"))  # an event: the watch is not "very short" (D14)
        run.wait(lambda m: m.events.added == 1, "c")
        fake.drop_watches()
        m = run.wait(lambda m: m.watch_restarts == 1, "the re-watch")
        assert (m.relists, m.expired, m.watch_errors, m.list_calls) == (0, 0, 0, 1)
        fake.add(pod("d"))  # the new watch works
        m = run.wait(lambda m: m.notifications.add == 4, "d")
        assert m.last_sync_resource_version == fake.resource_version
    finally:
        run.stop()


class Slow:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def on_add(self, obj: Pod, is_in_initial_list: bool) -> None:
        time.sleep(self.seconds)  # the handler's own work, not a wait for the test

    def on_update(self, old: Pod, new: Pod) -> None:
        pass

    def on_delete(self, obj: object) -> None:
        pass


def test_a_slow_handler_shows_in_its_latency_only(fake: FakeListerWatcher[Pod]) -> None:
    fast = Recorder()
    run = Running(fake, Slow(0.05), fast)
    try:
        m = run.wait(lambda m: all(h.delivered == 2 for h in m.handlers), "initial adds")
        slow_m, fast_m = m.handlers
        assert slow_m.handler == "Slow#1" and fast_m.handler == "Recorder#2"
        assert slow_m.latency.count == 2 and slow_m.latency.max >= 0.05
        assert slow_m.latency.sum >= 0.1 and slow_m.latency.mean >= 0.05
        # every observation is above the 25 ms bucket; the +Inf bucket holds them all
        assert dict(slow_m.latency.buckets)[0.025] == 0
        assert slow_m.latency.buckets[-1] == (float("inf"), 2)
        assert fast_m.latency.count == 2
        assert run.registrations[0].metrics() == slow_m
    finally:
        run.stop()


def test_g1_buffered_notifications_of_a_blocked_handler(fake: FakeListerWatcher[Pod]) -> None:
    release = threading.Event()
    entered = threading.Event()

    def blocking_add(obj: Pod, is_in_initial_list: bool) -> None:
        if not is_in_initial_list:
            entered.set()
            release.wait(WAIT)

    other = Recorder()
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(fake, Pod, name="blocked")
    reg = informer.add_event_handler(on_add=blocking_add)
    informer.add_event_handler(other)
    runner = Runner(informer.run)
    try:
        assert wait_for(informer.has_synced)
        for name in "cdefg":
            fake.add(pod(name))
        assert entered.wait(WAIT)
        assert wait_for(lambda: reg.metrics().buffered == 4)  # c is in flight, d..g wait
        assert other.expect(7).wait(WAIT)
        m = informer.metrics()
        blocked, free = m.handlers
        assert blocked.handler.startswith("test_g1_buffered") and blocked.handler.endswith("#1")
        assert (blocked.buffered, free.buffered, m.buffered_notifications) == (4, 0, 4)
        release.set()
        assert wait_for(lambda: reg.metrics().delivered == 7 and reg.metrics().buffered == 0)
    finally:
        release.set()
        runner.stop()


def test_handler_errors_are_counted(fake: FakeListerWatcher[Pod]) -> None:
    def failing(obj: Pod, is_in_initial_list: bool) -> None:
        raise RuntimeError("boom")

    informer: SharedIndexInformer[Pod] = SharedIndexInformer(fake, Pod, name="failing")
    reg = informer.add_event_handler(on_add=failing)
    runner = Runner(informer.run)
    try:
        assert wait_for(lambda: reg.metrics().delivered == 2)
        h = reg.metrics()
        assert (h.errors, h.latency.count) == (2, 2)
    finally:
        runner.stop()


def test_queued_items_while_the_process_loop_is_held(fake: FakeListerWatcher[Pod]) -> None:
    run = Running(fake, Recorder(), queue="delta")  # one key per pop (RealFIFO pops batches)
    try:
        with run.informer._block_deltas:  # as a handler joining holds it (F8)
            for name in "cdef":
                fake.add(pod(name))
            # one key is popped and waits for the lock; the other three stay queued
            m = run.wait(lambda m: m.queued_items == 3, "queued items")
            assert m.events.added == 4
        m = run.wait(lambda m: m.queued_items == 0 and m.notifications.add == 6, "drained")
    finally:
        run.stop()


def test_stopped_and_collected_informers_leave_the_live_registry(
    fake: FakeListerWatcher[Pod],
) -> None:
    run = Running(fake, name="short-lived")
    assert run.informer in live_informers()
    run.stop()
    assert run.informer not in live_informers()  # stopped: no longer exported
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(fake, Pod, name="collected")
    assert informer in live_informers()
    del informer
    # weakly held: nothing leaks
    assert collected(lambda: all(i.metrics().informer != "collected" for i in live_informers()))


# --------------------------------------------------------------------------- work queue


def test_i_workqueue_metrics_in_process_with_client_go_series() -> None:
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(1.0, 10.0), "in-process", clock=clock
    )
    try:
        q.add("a")
        q.add("a")  # collapsed: one add
        q.add("b")
        m = q.metrics()
        assert (m.name, m.depth, m.adds, m.processing, m.retries) == ("in-process", 2, 2, 0, 0)
        clock.step(2.0)
        item, _ = q.get()
        clock.step(3.0)
        m = q.metrics()
        assert (m.depth, m.processing) == (1, 1)
        assert m.queue_duration.count == 1 and m.queue_duration.sum == 2.0
        assert m.unfinished_work_seconds == 3.0 and m.longest_running_processor_seconds == 3.0
        q.done(item)
        m = q.metrics()
        assert m.work_duration.count == 1 and m.work_duration.max == 3.0
        assert dict(m.work_duration.buckets)[1.0] == 0 and dict(m.work_duration.buckets)[10.0] == 1
        q.add_rate_limited("c")  # waits 1 s on the fake clock
        m = q.metrics()
        assert (m.retries, m.waiting, m.unfinished_work_seconds) == (1, 1, 0.0)
    finally:
        q.shut_down()


def test_unnamed_queues_are_readable_but_not_exported() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("x")
    assert q.metrics().adds == 1 and q.metrics().depth == 1
    assert q not in live_queues()
    named: WorkQueue[str] = WorkQueue("exported")
    assert named in live_queues()
    named.shut_down()
    assert named not in live_queues()


def test_latency_recorder_buckets_are_cumulative_and_le_inclusive() -> None:
    r = LatencyRecorder((0.1, 1.0))
    for v in (0.1, 0.5, 1.0, 2.0):
        r.observe(v)
    snap = r.snapshot()
    assert snap == HistogramSnapshot(4, 3.6, 2.0, ((0.1, 1), (1.0, 3), (float("inf"), 4)))
    assert LatencyRecorder().snapshot().buckets[:-1] == tuple(
        (b, 0) for b in HANDLER_LATENCY_BUCKETS
    )


# --------------------------------------------------------------------------- Prometheus


@pytest.fixture
def registry() -> Iterator[Any]:
    prometheus_client = pytest.importorskip("prometheus_client")
    reg = prometheus_client.CollectorRegistry()
    register_prometheus(reg)
    yield reg
    unregister_prometheus(reg)


def test_prometheus_export_uses_client_go_workqueue_names_and_informer_prefix(
    fake: FakeListerWatcher[Pod], registry: Any
) -> None:
    from prometheus_client import generate_latest

    # Any: this function is untyped in some prometheus_client versions and typed in others.
    openmetrics: Any = importlib.import_module("prometheus_client.openmetrics.exposition")

    assert register_prometheus(registry) is register_prometheus(registry)  # idempotent
    q: RateLimitingQueue[str] = RateLimitingQueue(name="prom-queue")
    run = Running(fake, Slow(0.0), name="prom-pods")
    try:
        q.add("a")
        q.get()
        q.add_after("b", 0)
        fake.add(pod("c"))
        fake.modify(pod("c", value=1))
        run.wait(lambda m: m.handlers[0].delivered == 4, "the update delivered")
        text = generate_latest(registry).decode()
        assert openmetrics.generate_latest(registry).decode().endswith("# EOF\n")
        for name in (
            "workqueue_depth",
            "workqueue_adds_total",
            "workqueue_queue_duration_seconds_bucket",
            "workqueue_work_duration_seconds_count",
            "workqueue_unfinished_work_seconds",
            "workqueue_longest_running_processor_seconds",
            "workqueue_retries_total",
            "kubeinformers_informer_queued_items",
            "kubeinformers_informer_events_total",
            "kubeinformers_informer_notifications_total",
            "kubeinformers_informer_list_calls_total",
            "kubeinformers_informer_relists_total",
            "kubeinformers_informer_watch_restarts_total",
            "kubeinformers_informer_last_sync_resource_version",
            "kubeinformers_informer_last_sync_info",
            "kubeinformers_informer_handler_duration_seconds_bucket",
            "kubeinformers_informer_handler_buffered_notifications",
            "kubeinformers_informer_invalid_objects_total",
        ):
            assert f"\n{name}{{" in text, name
        labels = {"informer": "prom-pods", "resource": "Pod"}
        sample = registry.get_sample_value
        assert sample("workqueue_adds_total", {"name": "prom-queue"}) == 2.0
        assert sample("workqueue_depth", {"name": "prom-queue"}) == 1.0
        assert sample("workqueue_retries_total", {"name": "prom-queue"}) == 1.0
        assert sample("kubeinformers_informer_events_total", {**labels, "type": "ADDED"}) == 1.0
        assert sample("kubeinformers_informer_events_total", {**labels, "type": "MODIFIED"}) == 1
        assert sample("kubeinformers_informer_notifications_total", {**labels, "type": "add"}) == 3
        assert sample("kubeinformers_informer_last_sync_resource_version", labels) == float(
            fake.resource_version
        )
        info = {**labels, "resource_version": fake.resource_version}
        assert sample("kubeinformers_informer_last_sync_info", info) == 1.0
        assert sample("kubeinformers_informer_synced", labels) == 1.0
        handler = {**labels, "handler": "Slow#1"}
        assert sample("kubeinformers_informer_handler_duration_seconds_count", handler) == 4.0
        assert sample("kubeinformers_informer_handler_buffered_notifications", handler) == 0.0
    finally:
        run.stop()
        q.shut_down()
    # stopped informers and shut-down queues are no longer exported
    assert registry.get_sample_value("kubeinformers_informer_synced", labels) is None
    assert registry.get_sample_value("workqueue_depth", {"name": "prom-queue"}) is None


def test_register_prometheus_without_prometheus_client_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    monkeypatch.setitem(sys.modules, "prometheus_client.core", None)
    with pytest.raises(ImportError, match=r"pip install 'kubeinformers\[prometheus\]'"):
        register_prometheus()


def test_importing_kubeinformers_does_not_import_prometheus_client() -> None:
    code = (
        "import sys; import kubeinformers.runtime.metrics, kubeinformers.runtime.cache.informer, "
        "kubeinformers.runtime.workqueue.queue, kubeinformers.runtime.cache.factory; "
        "assert 'prometheus_client' not in sys.modules, 'imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# --------------------------------------------------------------------------- invalid objects


@pytest.mark.parametrize("decode", ["eager", "lazy"])
def test_invalid_objects_reported_by_the_transport_are_counted(decode: str) -> None:
    """Against the local API server, a Widget that does not fit its model (as in
    tests/e2e/test_bad_input.py): eager decoding reports it when it arrives, lazy decoding on
    its first read; either way `invalid_objects` counts the transport's reports."""
    from examples.informers.informers import CustomInformers
    from kubeinformers.generated.informers import SharedInformerFactory
    from kubeinformers.runtime.client.transport import ApiListerWatcher
    from kubeinformers.runtime.codec.drift import InvalidObjectError
    from kubeinformers.testing.local_api_server import LocalApiServer
    from tests.e2e.test_bad_input import NS, loose_widget_crd, widget

    with LocalApiServer(bookmark_interval=0.5) as server:
        server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        server.create(loose_widget_crd())
        server.create(widget("w-good"))
        server.create(widget("w-bad", replicas="many"))
        api = server.api_client()
        factory = SharedInformerFactory(api, decode=decode)  # type: ignore[arg-type]
        widgets = CustomInformers(factory).demo().v1().widgets()
        informer = widgets.informer()
        informer.set_watch_error_handler(lambda reflector, err: None)
        try:
            factory.start()
            assert all(factory.wait_for_cache_sync(timeout=30).values())
            m = informer.metrics()
            assert (m.informer, m.resource) == (informer.name, "demo.kubeinformers.io/v1/widgets")
            assert m.invalid_objects == (1 if decode == "eager" else 0)
            with pytest.raises(InvalidObjectError):
                _ = widgets.lister().widgets(NS).get("w-bad").spec.replicas  # type: ignore[union-attr]
            assert informer.metrics().invalid_objects == 1  # reported once, either way
            server.create(widget("w-bad-2", replicas={"nested": True}))
            server.create(widget("w-good-2"))
            assert wait_for(lambda: informer.metrics().notifications.add == 4, timeout=20)
            if decode == "lazy":
                with pytest.raises(InvalidObjectError):
                    _ = widgets.lister().widgets(NS).get("w-bad-2").spec.replicas  # type: ignore[union-attr]
            m = informer.metrics()
            lw = informer.lister_watcher
            assert isinstance(lw, ApiListerWatcher)
            assert m.invalid_objects == 2 == lw.decode_errors
            assert m.events.added >= 2 and m.skipped_events == 0
        finally:
            factory.shutdown()
            api.close()


def test_h27_same_named_informers_and_queues_keep_their_suffix_as_others_are_created(
    registry: Any,
) -> None:
    """Two live informers of one name and resource (two factories watching pods) are exported
    as `twin` and `twin#2` in the order they were created, and stay so: the registry was a
    WeakSet, whose order changes as it grows, so creating other informers could swap the two
    series (a counter of one jumping to the other's value)."""
    first: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a"), pod("b")])
    second: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a")])
    older = SharedIndexInformer(first, Pod, name="twin")
    newer = SharedIndexInformer(second, Pod, name="twin")
    q1: WorkQueue[str] = WorkQueue(name="twin-queue")
    q2: WorkQueue[str] = WorkQueue(name="twin-queue")
    others: list[Any] = []
    runners = [Runner(older.run), Runner(newer.run)]
    try:
        assert wait_for(lambda: older.has_synced() and newer.has_synced())
        q1.add("x")
        sample = registry.get_sample_value
        labels = {"informer": "twin", "resource": "Pod"}
        for n in range(300):  # grow the registry past several resizes
            others.append(SharedIndexInformer(FakeListerWatcher([]), Pod, name=f"other-{n}"))
            others.append(WorkQueue(name=f"other-queue-{n}"))
            if n % 20 == 0:
                assert sample("kubeinformers_informer_cached_objects", labels) == 2.0, n
                twin2 = {**labels, "informer": "twin#2"}
                assert sample("kubeinformers_informer_cached_objects", twin2) == 1.0, n
                assert sample("workqueue_depth", {"name": "twin-queue"}) == 1.0, n
                assert sample("workqueue_depth", {"name": "twin-queue#2"}) == 0.0, n
    finally:
        for runner in runners:
            runner.stop()
        for item in others:
            if isinstance(item, WorkQueue):
                item.shut_down()
        q1.shut_down()
        q2.shut_down()


def test_i21_async_queue_counts_and_is_exported_like_the_threaded_one(registry: Any) -> None:
    """I21: an `AsyncRateLimitingQueue` (an `AsyncReconcileLoop`'s queue) keeps the same
    counts as `RateLimitingQueue` and a named one is exported; it had no `metrics()` and no
    `workqueue_*` series, so an asyncio operator's queues were invisible to Prometheus."""
    import asyncio

    from kubeinformers.runtime.workqueue.async_queue import AsyncRateLimitingQueue

    name = {"name": "async-prom-queue"}

    async def main() -> None:
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue(name="async-prom-queue")
        try:
            q.add("a")
            assert await q.get() == "a"
            q.add_after("b", 0)  # a retry, as client-go counts AddAfter
            q.add_after("c", 60)
            # read from another thread, as a scrape does
            m = await asyncio.to_thread(q.metrics)
            assert (m.name, m.depth, m.adds, m.retries, m.processing, m.waiting) == (
                "async-prom-queue",
                1,
                2,
                2,
                1,
                1,
            )
            assert m.queue_duration.count == 1 and m.work_duration.count == 0
            q.done("a")
            assert q.metrics().work_duration.count == 1
            sample = registry.get_sample_value
            assert sample("workqueue_adds_total", name) == 2.0
            assert sample("workqueue_depth", name) == 1.0
            assert sample("workqueue_retries_total", name) == 2.0
        finally:
            q.shut_down()
        assert registry.get_sample_value("workqueue_depth", name) is None

    asyncio.run(main())


def test_i21_n10_an_async_queue_reports_its_held_items() -> None:
    """I21, N10: `metrics().held` counts the async queue's held items too."""
    import asyncio

    from kubeinformers.runtime.workqueue.async_queue import AsyncRateLimitingQueue

    async def main() -> None:
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue(name="async-held")
        try:
            q.set_hold(lambda key: key.startswith("b"))
            q.add("a")
            q.add("b1")
            q.add("b2")
            m = q.metrics()
            assert (m.depth, m.held, m.adds) == (1, 2, 1)
            q.set_hold(None)
            m = q.metrics()
            assert (m.depth, m.held, m.adds) == (3, 0, 3)
        finally:
            q.shut_down()

    asyncio.run(main())


def test_health_failures_are_not_ended_by_a_whole_store_entry_processed_late() -> None:
    """health(): the atomic queue's whole-store entries (a relist swapped in at once, a
    resync, a bookmark) that it hands out after a later watch failure do not end the
    failures in a row (the list or watch that delivered them ended those before them); an
    object's own event does. (Under load the process loop can reach the initial list after
    the first re-watch has failed: counted, then cleared, the failure was never seen.)"""
    from kubeinformers.runtime.cache.delta_fifo import Delta, DeltaType
    from kubeinformers.runtime.cache.real_fifo import BookmarkInfo, ReplacedAllInfo, SyncAllInfo

    informer: SharedIndexInformer[Pod] = SharedIndexInformer(
        FakeListerWatcher(), Pod, queue="atomic", name="late-list"
    )
    informer._health.error(RuntimeError("watch refused"), served=1)
    for delta in (
        Delta(DeltaType.REPLACED_ALL, ReplacedAllInfo("5", [pod("a")])),
        Delta(DeltaType.SYNC_ALL, SyncAllInfo()),
        Delta(DeltaType.BOOKMARK, BookmarkInfo("6")),
    ):
        informer._processed([delta])
        health = informer.health()
        assert health.consecutive_failures == 1, delta.type
        assert health.last_event_age is not None  # processed all the same
    informer._processed([Delta(DeltaType.UPDATED, pod("a", value=1))])
    assert informer.health().consecutive_failures == 0
