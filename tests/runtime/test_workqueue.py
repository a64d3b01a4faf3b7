"""Workqueue behaviour, rule by rule (docs/behaviour.md section I)."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import cast

import pytest

from kubeinformers.runtime.clock import FakeClock
from kubeinformers.runtime.workqueue.async_queue import AsyncRateLimitingQueue, QueueShutDown
from kubeinformers.runtime.workqueue.queue import DelayingQueue, RateLimitingQueue, WorkQueue
from kubeinformers.runtime.workqueue.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
)

TIMEOUT = 5.0


def get_within(q: WorkQueue[str], timeout: float = TIMEOUT) -> tuple[str, bool]:
    """q.get() on a helper thread, failing the test instead of hanging it."""
    result: list[tuple[str, bool]] = []
    got = threading.Event()

    def run() -> None:
        result.append(q.get())
        got.set()

    threading.Thread(target=run, daemon=True).start()
    assert got.wait(timeout), "get() did not return"
    return result[0]


def assert_shut_down(q: WorkQueue[str]) -> None:
    """get() reports shutdown with client-go's zero value (None) as the item."""
    item, shutting_down = q.get()
    assert shutting_down
    assert cast(object, item) is None


def drain_in_background(q: WorkQueue[str]) -> threading.Event:
    drained = threading.Event()

    def run() -> None:
        q.shut_down_with_drain()
        drained.set()

    threading.Thread(target=run, daemon=True).start()
    wait_for(q.shutting_down)  # the drain is waiting (flag and wait happen under one lock)
    return drained


def wait_for(predicate: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    """Poll a condition that has no event to wait on (e.g. another thread entered a call)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.001)


def drain_now(q: WorkQueue[str]) -> list[str]:
    """Every item queued right now, in order, each marked done."""
    items = []
    while len(q):
        item, shutting_down = q.get()
        assert not shutting_down
        items.append(item)
        q.done(item)
    return items


# ----------------------------------------------------------------------------- I1-I6 plain queue


def test_i1_i4_item_added_while_processing_is_held_back_until_done() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    item, _ = q.get()
    assert item == "a"
    q.add("a")  # dirty, but processing: not queued now (I2)
    assert len(q) == 0
    q.done("a")  # I4: re-queued exactly once
    assert len(q) == 1
    assert q.get() == ("a", False)
    q.done("a")
    assert len(q) == 0


def test_i2_collapse_duplicate_adds_keep_first_position() -> None:
    q: WorkQueue[str] = WorkQueue()
    for item in ["a", "b", "a", "c", "b"]:
        q.add(item)
    assert len(q) == 3
    assert drain_now(q) == ["a", "b", "c"]


def test_i2_collapse_while_processing_yields_one_more_processing() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    item, _ = q.get()
    q.add("a")
    q.add("a")
    q.done(item)
    assert drain_now(q) == ["a"]


def test_i2_add_after_shutdown_is_ignored() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.shut_down()
    q.add("a")
    assert len(q) == 0
    assert_shut_down(q)


class RecordingBackend:
    """A custom queue backend (client-go's pluggable Queue) that records touches."""

    def __init__(self) -> None:
        self.items: deque[str] = deque()
        self.touched: list[str] = []

    def push(self, item: str) -> None:
        self.items.append(item)

    def pop(self) -> str:
        return self.items.popleft()

    def touch(self, item: str) -> None:
        self.touched.append(item)

    def __len__(self) -> int:
        return len(self.items)


def test_i2_custom_backend_is_touched_only_for_queued_not_processing_items() -> None:
    backend = RecordingBackend()
    q: WorkQueue[str] = WorkQueue(queue=backend)
    q.add("a")
    q.add("a")  # dirty and queued: touched
    assert backend.touched == ["a"]
    q.get()
    q.add("a")  # now dirty again while processing: not in the backend, not touched
    q.add("a")
    assert backend.touched == ["a"]
    q.done("a")
    assert list(backend.items) == ["a"]


def test_i3_get_blocks_until_an_item_is_added() -> None:
    q: WorkQueue[str] = WorkQueue()
    got: list[tuple[str, bool]] = []
    returned = threading.Event()

    def worker() -> None:
        got.append(q.get())
        returned.set()

    threading.Thread(target=worker, daemon=True).start()
    assert not returned.wait(0.05)
    q.add("x")
    assert returned.wait(TIMEOUT)
    assert got == [("x", False)]


def test_i3_queued_items_are_still_handed_out_after_shutdown() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("b")
    q.shut_down()
    assert q.get() == ("a", False)
    assert q.get() == ("b", False)
    assert_shut_down(q)


def test_i4_an_item_is_never_processed_by_two_workers_at_once() -> None:
    q: WorkQueue[int] = WorkQueue()
    active: set[int] = set()
    lock = threading.Lock()
    overlaps: list[int] = []
    processed: Counter[int] = Counter()

    def worker() -> None:
        while True:
            item, shutting_down = q.get()
            if shutting_down:
                return
            with lock:
                if item in active:
                    overlaps.append(item)
                active.add(item)
            processed[item] += 1  # only one worker holds a given item
            time.sleep(0.0002)  # hold it a while: re-adds arrive meanwhile
            with lock:
                active.discard(item)
            q.done(item)

    workers = [threading.Thread(target=worker) for _ in range(8)]
    for w in workers:
        w.start()
    for i in range(5_000):
        q.add(i % 10)
        if i % 50 == 0:
            time.sleep(0.0005)  # let workers take items, so adds meet items in processing
    q.shut_down_with_drain()
    for w in workers:
        w.join(TIMEOUT)
    assert overlaps == []
    assert set(processed) == set(range(10))


def test_i4_reinsert_dirty_item_on_done() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("foo")
    item, _ = q.get()
    q.add(item)
    q.done(item)
    assert q.get() == ("foo", False)
    assert len(q) == 0


def test_i5_len_counts_queued_items_once_and_not_processing_ones() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    assert len(q) == 1
    q.add("a")
    assert len(q) == 1
    q.add("b")
    assert len(q) == 2
    q.get()
    assert len(q) == 1


def test_i6_shut_down_wakes_all_blocked_getters() -> None:
    q: WorkQueue[str] = WorkQueue()
    results: list[tuple[str, bool]] = []
    lock = threading.Lock()
    started = threading.Barrier(4)

    def getter() -> None:
        started.wait()
        r = q.get()
        with lock:
            results.append(r)

    threads = [threading.Thread(target=getter) for _ in range(3)]
    for t in threads:
        t.start()
    started.wait()
    assert not q.shutting_down()
    q.shut_down()
    assert q.shutting_down()
    for t in threads:
        t.join(TIMEOUT)
    assert [(cast(object, item), shut) for item, shut in results] == [(None, True)] * 3


def test_i6_shut_down_with_drain_waits_for_in_flight_items() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("b")
    a, _ = q.get()
    drained = drain_in_background(q)
    assert not drained.wait(0.05)
    # never-fetched "b" is still handed out but is not waited for by itself
    assert get_within(q) == ("b", False)
    q.done(a)
    assert not drained.wait(0.05)  # "b" is in flight now
    q.done("b")
    assert drained.wait(TIMEOUT)


def test_i6_drain_hands_out_items_requeued_by_done() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("b")
    a, _ = q.get()
    b, _ = q.get()
    q.add("a")  # dirty while processing
    drained = drain_in_background(q)
    q.done(a)  # re-queued although shutting down
    assert not drained.wait(0.05)  # "b" is still in flight
    q.done(b)
    assert drained.wait(TIMEOUT)  # nothing in flight; the re-queued "a" is not waited for
    assert q.get() == ("a", False)  # ...but it is still handed out
    q.done("a")
    assert_shut_down(q)


def test_i6_shut_down_after_drain_aborts_the_wait() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.get()
    drained = drain_in_background(q)
    assert not drained.wait(0.05)
    q.shut_down()
    assert drained.wait(TIMEOUT)


# ----------------------------------------------------------------------------- I7 delaying queue


def delaying(clock: FakeClock) -> DelayingQueue[str]:
    return DelayingQueue(clock=clock)


def settle(clock: FakeClock) -> None:
    """The waiting thread has seen the clock's current time and is waiting again."""
    assert clock.wait_for_waiters(1, TIMEOUT)


def test_i7_add_after_makes_item_ready_only_at_its_time() -> None:
    clock = FakeClock()
    q = delaying(clock)
    q.add_after("foo", 50e-3)
    settle(clock)
    assert len(q) == 0
    clock.step(49e-3)
    settle(clock)
    assert len(q) == 0
    clock.step(1e-3)
    settle(clock)
    assert len(q) == 1
    assert q.get() == ("foo", False)
    q.shut_down()


def test_i7_non_positive_delay_adds_immediately_and_shutdown_ignores() -> None:
    clock = FakeClock()
    q = delaying(clock)
    q.add_after("now", 0)
    q.add_after("past", -1)
    assert drain_now(q) == ["now", "past"]
    q.shut_down()
    q.add_after("late", 0)
    q.add_after("later", 1)
    assert len(q) == 0
    assert q.waiting() == 0


def test_i7_deduping_keeps_the_earliest_ready_time() -> None:
    clock = FakeClock()
    q = delaying(clock)
    q.add_after("foo", 50e-3)
    q.add_after("foo", 70e-3)  # later: ignored
    assert q.waiting() == 1
    settle(clock)
    clock.step(60e-3)
    settle(clock)
    assert drain_now(q) == ["foo"]
    clock.step(20e-3)
    settle(clock)
    assert len(q) == 0  # it was added only once

    q.add_after("foo", 70e-3)
    q.add_after("foo", 50e-3)  # earlier: moves the ready time
    settle(clock)
    clock.step(60e-3)
    settle(clock)
    assert drain_now(q) == ["foo"]
    clock.step(20e-3)
    settle(clock)
    assert len(q) == 0
    q.shut_down()


def test_i7_add_two_fire_early() -> None:
    clock = FakeClock()
    q = delaying(clock)
    q.add_after("foo", 1.0)
    q.add_after("bar", 0.05)
    settle(clock)
    clock.step(0.06)
    settle(clock)
    assert drain_now(q) == ["bar"]
    q.add_after("foo", 0.02)  # moves foo earlier than its 1 s
    settle(clock)
    clock.step(0.03)
    settle(clock)
    assert drain_now(q) == ["foo"]
    q.shut_down()


def test_i7_copy_shifting_ready_items_come_out_in_ready_time_order() -> None:
    clock = FakeClock()
    q = delaying(clock)
    q.add_after("foo", 3.0)
    q.add_after("bar", 1.0)
    q.add_after("baz", 2.0)
    settle(clock)
    clock.step(4.0)
    settle(clock)
    assert drain_now(q) == ["bar", "baz", "foo"]
    q.shut_down()


def test_i7_waiting_thread_sleeps_on_the_heartbeat_when_nothing_is_due() -> None:
    """No busy loop: with a far-away item the waiter sleeps; each wake is one clock step."""
    clock = FakeClock()
    q = delaying(clock)
    q.add_after("far", 3600.0)
    settle(clock)
    for _ in range(5):
        clock.step(10.0)  # the 10 s heartbeat re-checks and waits again
        settle(clock)
    waits = clock.wait_calls
    assert not threading.Event().wait(0.2)  # a window of real time without clock changes
    assert clock.wait_calls <= waits + 1  # at most the fake clock's 1 s real-time guard
    assert len(q) == 0 and q.waiting() == 1
    q.shut_down()
    assert q.waiting() == 0


def test_i7_real_clock_delay_is_honoured() -> None:
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("x", 0.05)
    assert len(q) == 0
    assert get_within(q) == ("x", False)
    q.shut_down()


# ----------------------------------------------------------------------------- I8 rate-limited queue


def test_i8_add_rate_limited_uses_the_limiter_and_forget_only_resets_it() -> None:
    clock = FakeClock()
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1e-3, 1.0)
    q: RateLimitingQueue[str] = RateLimitingQueue(limiter, clock=clock)
    q.add_rate_limited("one")  # 1 ms
    q.add_rate_limited("one")  # would be 2 ms: later than 1 ms, ignored (I7)
    assert q.num_requeues("one") == 2
    settle(clock)
    clock.step(1e-3)
    settle(clock)
    assert drain_now(q) == ["one"]
    q.add("two")
    q.add_rate_limited("two")
    q.forget("two")  # the limiter forgets; the queue keeps the item
    assert q.num_requeues("two") == 0
    assert len(q) == 1
    q.shut_down()


def test_i8_default_rate_limiting_queue_uses_the_controller_limiter() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue()
    assert isinstance(q.rate_limiter, MaxOfRateLimiter)
    q.add_rate_limited("a")
    assert q.num_requeues("a") == 1
    assert get_within(q) == ("a", False)  # 5 ms later
    q.shut_down()


# ----------------------------------------------------------------------------- I9-I11 limiters


def test_i9_exponential_uses_count_before_the_call() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1e-3, 1.0)
    assert [limiter.when("one") for _ in range(5)] == [1e-3, 2e-3, 4e-3, 8e-3, 16e-3]
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [1e-3, 2e-3]
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 1e-3


def test_i9_exponential_is_capped_at_max_also_on_overflow() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        0.005, 1000.0
    )
    delays = [limiter.when("x") for _ in range(2000)]
    assert delays[:3] == [0.005, 0.01, 0.02]
    assert max(delays) == 1000.0
    assert delays[-1] == 1000.0
    assert all(b >= a for a, b in itertools.pairwise(delays))


def test_i10_bucket_gives_burst_for_free_then_spaces_by_qps() -> None:
    clock = FakeClock()
    limiter: BucketRateLimiter[str] = BucketRateLimiter(qps=10, burst=100, clock=clock)
    assert [limiter.when(f"i{i}") for i in range(100)] == [0.0] * 100
    assert limiter.when("a") == pytest.approx(0.1)
    assert limiter.when("b") == pytest.approx(0.2)
    assert limiter.when("c") == pytest.approx(0.3)
    assert limiter.num_requeues("a") == 0
    limiter.forget("a")  # no-op
    clock.step(0.3)  # the three reserved tokens are paid back
    assert limiter.when("d") == pytest.approx(0.1)
    clock.step(100.0)  # refills only up to burst
    assert [limiter.when("e") for _ in range(100)] == [0.0] * 100
    assert limiter.when("e") == pytest.approx(0.1)


def test_i11_max_of_calls_every_limiter_and_returns_the_largest() -> None:
    fast_slow: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(5e-3, 10.0, 3)
    exponential: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        1e-3, 1.0
    )
    limiter = MaxOfRateLimiter(fast_slow, exponential)
    assert [limiter.when("one") for _ in range(4)] == [5e-3, 5e-3, 5e-3, 10.0]
    assert exponential.num_requeues("one") == 4  # consulted every time
    assert limiter.num_requeues("one") == 4
    exponential.when("one")
    assert limiter.num_requeues("one") == 5  # the max of the two counts
    limiter.forget("one")
    assert fast_slow.num_requeues("one") == 0
    assert exponential.num_requeues("one") == 0


def test_i11_fast_slow_per_item() -> None:
    limiter: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(5e-3, 10.0, 3)
    assert [limiter.when("one") for _ in range(3)] == [5e-3] * 3
    assert [limiter.when("two") for _ in range(2)] == [5e-3] * 2
    assert limiter.when("one") == 10.0
    assert limiter.when("one") == 10.0
    assert limiter.num_requeues("one") == 5
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 5e-3


def test_i11_with_max_wait_caps_the_delay() -> None:
    inner: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1.0, 100.0)
    limiter = WithMaxWaitRateLimiter(inner, 3.0)
    assert [limiter.when("x") for _ in range(4)] == [1.0, 2.0, 3.0, 3.0]
    assert limiter.num_requeues("x") == 4
    limiter.forget("x")
    assert inner.num_requeues("x") == 0


def test_i11_default_controller_rate_limiter_is_exponential_5ms_and_bucket_10qps_100() -> None:
    clock = FakeClock()
    limiter: MaxOfRateLimiter[str] = default_controller_rate_limiter(clock=clock)
    assert [limiter.when("one") for _ in range(3)] == [0.005, 0.01, 0.02]
    # 97 more tokens left in the burst; after that the bucket's 0.1 s spacing dominates
    for i in range(97):
        assert limiter.when(f"other-{i}") == 0.005
    assert limiter.when("fresh") == pytest.approx(0.1)
    for _ in range(30):
        limiter.when("hot")
    assert limiter.when("hot") == 1000.0


def test_i11_default_item_based_rate_limiter_is_exponential_1ms_to_1000s() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = default_item_based_rate_limiter()
    assert (limiter.base_delay, limiter.max_delay) == (0.001, 1000.0)
    assert limiter.when("x") == 0.001


def test_max_of_rate_limiter_needs_a_limiter() -> None:
    with pytest.raises(ValueError, match="at least one"):
        MaxOfRateLimiter[str]()


# ----------------------------------------------------------------------------- metrics


class Recorder:
    def __init__(self, log: list[tuple[str, str, float]], metric: str, name: str) -> None:
        self.log, self.metric, self.name = log, metric, name

    def inc(self) -> None:
        self.log.append((self.metric, "inc", 1))

    def dec(self) -> None:
        self.log.append((self.metric, "dec", 1))

    def set(self, value: float) -> None:
        self.log.append((self.metric, "set", value))

    def observe(self, value: float) -> None:
        self.log.append((self.metric, "observe", value))


class RecordingProvider:
    def __init__(self) -> None:
        self.log: list[tuple[str, str, float]] = []
        self.names: list[str] = []

    def _new(self, metric: str, name: str) -> Recorder:
        self.names.append(name)
        return Recorder(self.log, metric, name)

    def new_depth_metric(self, name: str) -> Recorder:
        return self._new("depth", name)

    def new_adds_metric(self, name: str) -> Recorder:
        return self._new("adds", name)

    def new_latency_metric(self, name: str) -> Recorder:
        return self._new("queue_duration", name)

    def new_work_duration_metric(self, name: str) -> Recorder:
        return self._new("work_duration", name)

    def new_unfinished_work_seconds_metric(self, name: str) -> Recorder:
        return self._new("unfinished_work", name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> Recorder:
        return self._new("longest_running_processor", name)

    def new_retries_metric(self, name: str) -> Recorder:
        return self._new("retries", name)

    def events(self, metric: str) -> list[tuple[str, float]]:
        return [(op, v) for m, op, v in self.log if m == metric]


def test_metrics_depth_adds_latency_work_duration_unfinished_and_retries() -> None:
    clock = FakeClock()
    provider = RecordingProvider()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(1.0, 10.0),
        "test",
        metrics_provider=provider,
        clock=clock,
    )
    assert set(provider.names) == {"test"} and len(provider.names) == 7
    q.add("a")
    q.add("a")  # collapsed: not a second add
    assert provider.events("adds") == [("inc", 1)]
    assert provider.events("depth") == [("inc", 1)]
    clock.step(2.0)
    item, _ = q.get()
    assert provider.events("depth") == [("inc", 1), ("dec", 1)]
    assert provider.events("queue_duration") == [("observe", 2.0)]
    clock.step(3.0)
    q.update_unfinished_work()
    assert provider.events("unfinished_work")[-1] == ("set", 3.0)
    assert provider.events("longest_running_processor")[-1] == ("set", 3.0)
    q.done(item)
    assert provider.events("work_duration") == [("observe", 3.0)]
    q.add_rate_limited("a")
    q.add_after("b", 0)
    assert provider.events("retries") == [("inc", 1), ("inc", 1)]
    q.shut_down()


def test_metrics_unnamed_queue_creates_no_metrics() -> None:
    provider = RecordingProvider()
    q: WorkQueue[str] = WorkQueue(metrics_provider=provider)
    q.add("a")
    assert provider.names == [] and provider.log == []


def test_metrics_unfinished_work_gauge_is_refreshed_in_the_background() -> None:
    provider = RecordingProvider()
    updated = threading.Event()
    original: Callable[[float], None]

    q: WorkQueue[str] = WorkQueue("bg", metrics_provider=provider)
    gauge = q._metrics.unfinished if q._metrics else None
    assert isinstance(gauge, Recorder)
    original = gauge.set

    def record(value: float) -> None:
        original(value)
        updated.set()

    gauge.set = record  # type: ignore[method-assign]
    q.add("a")
    q.get()
    assert updated.wait(TIMEOUT)
    q.shut_down()


def test_metrics_set_provider_first_call_wins_for_named_queues(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import kubeinformers.runtime.workqueue.queue as wq

    monkeypatch.setattr(wq, "_global_provider", None)
    first, second = RecordingProvider(), RecordingProvider()
    wq.set_provider(first)
    wq.set_provider(second)  # ignored, as in client-go
    named: WorkQueue[str] = WorkQueue("global")
    unnamed: WorkQueue[str] = WorkQueue()
    named.add("a")
    unnamed.add("a")
    assert first.events("adds") == [("inc", 1)]
    assert second.log == []
    named.shut_down()


def test_i21_async_reconcile_loop_queue_reports_to_its_metrics_provider() -> None:
    """I21: `AsyncReconcileLoop(metrics_provider=...)` (as `ReconcileLoop`'s) reaches its
    queue, which feeds client-go's series, the unfinished-work gauges on a loop timer."""
    import asyncio

    from kubeinformers.runtime.reconcile.async_loop import AsyncReconcileLoop

    refreshed = threading.Event()

    class Gauge(Recorder):
        def set(self, value: float) -> None:
            super().set(value)
            refreshed.set()

    class Provider(RecordingProvider):
        def new_longest_running_processor_seconds_metric(self, name: str) -> Recorder:
            self.names.append(name)
            return Gauge(self.log, "longest_running_processor", name)

    provider = Provider()

    async def main() -> None:
        reconciled = asyncio.Event()
        release = asyncio.Event()

        async def reconcile(key: str) -> None:
            reconciled.set()
            await release.wait()

        loop: AsyncReconcileLoop[str] = AsyncReconcileLoop(
            "async-provided", reconcile, metrics_provider=provider
        )
        loop.enqueue("a")
        task = asyncio.create_task(loop.run())
        await asyncio.wait_for(reconciled.wait(), 10)
        assert set(provider.names) == {"async-provided"} and len(provider.names) == 7
        assert provider.events("adds") == [("inc", 1)]
        # the gauges of the reconcile in flight are refreshed every 0.5 s on the loop
        assert await asyncio.to_thread(refreshed.wait, 10), "no unfinished-work refresh"
        release.set()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(provider.events("work_duration")) == 1

    asyncio.run(main())


# ----------------------------------------------------------------------------- the asyncio face


class LastInFirstOut(RecordingBackend):
    def pop(self) -> str:
        return self.items.pop()


def test_i7_the_async_queue_waits_on_its_clock_as_the_threaded_one() -> None:
    """I7 on the asyncio face with a FakeClock: an item is ready only at its time, a later
    ready time is ignored and an earlier one moves it, due items come in ready-time order,
    and the clock's waiting thread ends with the queue."""

    async def main() -> None:
        clock = FakeClock()
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue(clock=clock)
        q.add_after("foo", 3.0)
        q.add_after("bar", 1.0)
        q.add_after("baz", 2.0)
        q.add_after("baz", 5.0)  # later: ignored
        q.add_after("qux", 9.0)
        q.add_after("qux", 0.5)  # earlier: moves it
        assert q.waiting() == 4
        settle(clock)
        clock.step(0.4)
        settle(clock)
        await asyncio.sleep(0)  # what the waiting thread handed to the loop has run
        assert len(q) == 0 and q.waiting() == 4
        clock.step(3.6)
        settle(clock)
        got = [await asyncio.wait_for(q.get(), TIMEOUT) for _ in range(4)]
        assert got == ["qux", "bar", "baz", "foo"]
        assert q.waiting() == 0
        waiters = [t for t in threading.enumerate() if t.name.startswith("workqueue-delay-")]
        assert len(waiters) == 1
        q.shut_down()
        waiters[0].join(TIMEOUT)
        assert not waiters[0].is_alive()

    asyncio.run(main())


def test_i7_the_async_queue_on_the_real_clock_needs_no_thread() -> None:
    async def main() -> None:
        before = threading.active_count()
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue()
        q.add_after("later", 0.2)
        q.add_after("soon", 0.05)
        assert threading.active_count() == before  # loop timers only
        assert await asyncio.wait_for(q.get(), TIMEOUT) == "soon"
        assert await asyncio.wait_for(q.get(), TIMEOUT) == "later"
        q.shut_down()

    asyncio.run(main())


def test_i8_i21_the_async_queue_times_its_metrics_and_rate_limits_on_its_clock() -> None:
    async def main() -> None:
        clock = FakeClock()
        limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
            1.0, 60.0
        )
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue(limiter, clock=clock)
        q.add("a")
        clock.step(2.0)
        assert await asyncio.wait_for(q.get(), TIMEOUT) == "a"
        clock.step(5.0)
        snapshot = q.metrics()
        assert snapshot.queue_duration.sum == pytest.approx(2.0)
        assert snapshot.unfinished_work_seconds == pytest.approx(5.0)
        q.done("a")
        q.add_rate_limited("a")  # 1 s of the clock
        settle(clock)
        clock.step(1.0)
        assert await asyncio.wait_for(q.get(), TIMEOUT) == "a"
        q.shut_down()

    asyncio.run(main())


def test_i2_the_async_queue_hands_out_in_its_backends_order() -> None:
    """A custom backend (`queue=`) orders what the asyncio face hands out, as it does the
    threaded one's, and is told of a re-add of a queued item."""

    async def main() -> None:
        backend = LastInFirstOut()
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue(queue=backend)
        for item in ("a", "b", "c"):
            q.add(item)
        q.add("a")  # queued already: the backend is told
        assert backend.touched == ["a"]
        assert sorted(q.queued_items()) == ["a", "b", "c"]  # left in place
        assert [await q.get() for _ in range(3)] == ["c", "b", "a"]
        fifo: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue()
        for item in ("x", "y", "z"):
            fifo.add(item)
        assert fifo.queued_items() == ["x", "y", "z"]  # the default's order: as they come
        q.shut_down()

    asyncio.run(main())


def test_i6_the_async_queue_shut_down_from_another_thread_ends_its_getters() -> None:
    async def main() -> None:
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue()
        getter = asyncio.ensure_future(q.get())
        await asyncio.sleep(0)
        await asyncio.to_thread(q.shut_down)
        with pytest.raises(QueueShutDown):
            await asyncio.wait_for(getter, TIMEOUT)
        q.add("late")  # refused after shutdown
        assert len(q) == 0

    asyncio.run(main())
