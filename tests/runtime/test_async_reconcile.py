"""The asyncio work queue (I2-I8 on the loop), AsyncReconcileLoop's retries (I8, I9) and
AsyncLeaderElector, all under asyncio debug mode."""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown
from kubeinformers.runtime.leaderelection.async_elector import AsyncLeaderElector
from kubeinformers.runtime.leaderelection.elector import LeaseLock
from kubeinformers.runtime.reconcile import core as reconcile_core
from kubeinformers.runtime.reconcile.async_loop import AsyncReconcileLoop
from kubeinformers.runtime.reconcile.core import Requeue
from kubeinformers.runtime.reconcile.loop import ReconcileLoop
from kubeinformers.runtime.workqueue.async_queue import AsyncRateLimitingQueue, QueueShutDown
from kubeinformers.runtime.workqueue.rate_limiters import ItemExponentialFailureRateLimiter
from tests.runtime.test_async_api import run_debug
from tests.runtime.test_leaderelection import NAME, NS
from tests.support.leases import FakeLeaseApi, LeaseStore

TIMEOUT = 30.0


def test_async_queue_dedups_defers_and_drains(caplog: pytest.LogCaptureFixture) -> None:
    """I2: a waiting item is queued once; I4: an item added while processed comes back only
    after done; I7: add_after moves only earlier; I6: after shut_down the rest is handed out,
    then get raises QueueShutDown."""

    async def main() -> None:
        queue: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue(name="t")
        queue.add("a")
        queue.add("a")
        queue.add("b")
        assert len(queue) == 2
        first = await queue.get()
        assert first == "a"
        queue.add("a")  # while processing: deferred
        assert len(queue) == 1
        assert await queue.get() == "b"
        queue.done("b")
        queue.done("a")  # now "a" is queued again
        assert len(queue) == 1 and await queue.get() == "a"
        queue.done("a")

        queue.add_after("late", 30.0)
        queue.add_after("late", 0.01)  # earlier wins
        queue.add_after("late", 60.0)  # later is ignored
        assert await asyncio.wait_for(queue.get(), TIMEOUT) == "late"
        queue.done("late")
        assert queue.waiting() == 0

        queue.add("x")
        queue.shut_down()
        queue.add("ignored")
        assert await queue.get() == "x"
        queue.done("x")
        with pytest.raises(QueueShutDown):
            await queue.get()

    run_debug(main, caplog)


def test_async_for_marks_done_also_on_break_and_error(caplog: pytest.LogCaptureFixture) -> None:
    """`async for key in queue`: the body's key is done when the body ends, however."""

    async def main() -> None:
        queue: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue()
        queue.add("a")
        queue.add("b")
        keys = aiter(queue)
        assert await anext(keys) == "a"
        assert queue.processing() == 1
        assert await anext(keys) == "b"  # "a" was done when the body asked for the next
        assert queue.processing() == 1
        with pytest.raises(RuntimeError):
            await keys.athrow(RuntimeError("reconcile failed"))
        assert queue.processing() == 0

        seen: list[str] = []
        queue.add("c")
        queue.shut_down()
        async for key in queue:
            seen.append(key)
        assert seen == ["c"] and queue.processing() == 0

    run_debug(main, caplog)


def test_add_from_another_thread_reaches_the_loop(caplog: pytest.LogCaptureFixture) -> None:
    """Informer handlers run on their own threads: their adds are handed to the loop."""

    async def main() -> None:
        queue: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue()
        thread = threading.Thread(target=queue.add, args=("from-thread",))
        thread.start()
        assert await asyncio.wait_for(queue.get(), TIMEOUT) == "from-thread"
        thread.join()

    run_debug(main, caplog)


class FakeInformer:
    """What `watch` needs: add_event_handler and has_synced; `emit` plays an add."""

    def __init__(self) -> None:
        self.handlers: list[Any] = []

    def add_event_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    def has_synced(self) -> bool:
        return True

    def emit(self, obj: Any) -> None:
        for handler in self.handlers:
            handler.on_add(obj, False)

    def delete(self, obj: Any) -> None:
        for handler in self.handlers:
            handler.on_delete(obj)


class HeldReconcile:
    """A reconcile that says when it began and returns only once released."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.finished: list[str] = []

    async def __call__(self, key: str) -> None:
        self.entered.set()
        await self.release.wait()
        self.finished.append(key)


def obj(name: str) -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": name}}


def test_reconciler_retries_with_growing_delays_then_succeeds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I8/I9: a key that fails is retried after 20, 40, 80 ms (the rate limiter's delays) and
    its failures are forgotten once it succeeds; max_retries drops a key that keeps failing;
    Requeue retries calmly; a tombstone's key is enqueued too."""

    async def main() -> None:
        attempts: dict[str, list[float]] = {}
        done = asyncio.Event()
        loop = asyncio.get_running_loop()

        expected = {"ns/flaky": 4, "ns/broken": 4, "ns/waiting": 2, "ns/gone": 1}

        async def reconcile(key: str) -> float | None:
            attempts.setdefault(key, []).append(loop.time())
            if {k: len(v) for k, v in attempts.items()} == expected:
                done.set()
            if key == "ns/flaky" and len(attempts[key]) <= 3:
                raise RuntimeError("injected failure")
            if key == "ns/broken":
                raise RuntimeError("always fails")
            if key == "ns/waiting" and len(attempts[key]) == 1:
                raise Requeue("dependency not ready")
            return None

        limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
            0.02, 10.0
        )
        reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop(
            "test", reconcile, workers=2, rate_limiter=limiter, max_retries=3
        )
        informer = FakeInformer()
        reconciler.watch(informer)
        informer.emit(obj("flaky"))  # before run: kept and queued when run starts
        stop = asyncio.Event()
        runner = asyncio.create_task(reconciler.run(stop))
        informer.emit(obj("broken"))
        informer.emit(obj("waiting"))
        informer.delete(DeletedFinalStateUnknown("ns/gone", obj("gone")))
        await asyncio.wait_for(done.wait(), TIMEOUT)
        stop.set()
        await asyncio.wait_for(runner, TIMEOUT)

        flaky = attempts["ns/flaky"]
        gaps = [b - a for a, b in itertools.pairwise(flaky)]
        assert [g >= d * 0.9 for g, d in zip(gaps, (0.02, 0.04, 0.08), strict=True)] == [True] * 3
        assert limiter.num_requeues("ns/flaky") == 0  # forgotten after success
        assert len(attempts["ns/broken"]) == 4  # first try + max_retries, then dropped
        assert len(attempts["ns/gone"]) == 1

    run_debug(main, caplog)


def test_cancelling_the_reconciler_lets_the_inflight_reconcile_finish(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Cancellation drains: the reconcile in progress completes before run() re-raises."""

    async def main() -> None:
        reconcile = HeldReconcile()
        entered, release, finished = reconcile.entered, reconcile.release, reconcile.finished
        reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop("drain", reconcile)
        reconciler.enqueue("ns/a")
        runner = asyncio.create_task(reconciler.run())
        await asyncio.wait_for(entered.wait(), TIMEOUT)
        runner.cancel()
        await asyncio.sleep(0)
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(runner, TIMEOUT)
        assert finished == ["ns/a"]

    run_debug(main, caplog)


def test_async_stop_waiting_for_a_reconcile_says_so_naming_its_key(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("kubeinformers.runtime.reconcile.async_loop.DRAIN_HINT_AFTER", 0.05)

    async def main() -> None:
        reconcile = HeldReconcile()
        entered, release = reconcile.entered, reconcile.release
        reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop("stuck", reconcile)
        reconciler.enqueue("ns/a")
        stop = asyncio.Event()
        runner = asyncio.create_task(reconciler.run(stop))
        await asyncio.wait_for(entered.wait(), TIMEOUT)
        warned = asyncio.Event()
        handler = _Warned(warned)
        logging.getLogger("kubeinformers.reconcile").addHandler(handler)
        try:
            stop.set()
            await asyncio.wait_for(warned.wait(), TIMEOUT)
        finally:
            logging.getLogger("kubeinformers.reconcile").removeHandler(handler)
        release.set()
        await asyncio.wait_for(runner, TIMEOUT)

    run_debug(main, caplog)
    texts = [r.getMessage() for r in caplog.records if "still stopping" in r.getMessage()]
    assert texts and "waiting for 1 reconcile(s) in flight to return (ns/a)" in texts[0]


class _Warned(logging.Handler):
    """Sets `event` at the first WARNING of the reconcile loops (logged on the loop's thread)."""

    def __init__(self, event: asyncio.Event) -> None:
        super().__init__(logging.WARNING)
        self.event = event

    def emit(self, record: logging.LogRecord) -> None:
        self.event.set()


def test_the_async_loop_has_the_thread_loops_inputs_and_says_it_waits_for_sync(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both loops are faces over one ReconcileCore: the same inputs (`enqueue`,
    `enqueue_after`, `wait_for`), and the same warning while a cache has not synced (every
    SYNC_HINT_AFTER seconds); no key is reconciled before the caches synced."""
    monkeypatch.setattr(reconcile_core, "SYNC_HINT_AFTER", 0.05)
    assert issubclass(AsyncReconcileLoop, reconcile_core.ReconcileCore)
    assert issubclass(ReconcileLoop, reconcile_core.ReconcileCore)

    class Cache:
        synced = False

        def has_synced(self) -> bool:
            return self.synced

    async def main() -> None:
        reconciled: list[str] = []
        both = asyncio.Event()

        async def reconcile(key: str) -> None:
            reconciled.append(key)
            if len(reconciled) == 2:
                both.set()

        reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop("inputs", reconcile)
        cache = Cache()
        reconciler.wait_for(cache)
        reconciler.enqueue_after("ns/later", 0.05)  # before run: kept until the queue exists
        reconciler.enqueue("ns/now")
        warned = asyncio.Event()
        handler = _Warned(warned)
        logger = logging.getLogger("kubeinformers.reconcile")
        logger.addHandler(handler)
        try:
            stop = asyncio.Event()
            runner = asyncio.create_task(reconciler.run(stop))
            await asyncio.wait_for(warned.wait(), TIMEOUT)
            assert reconciled == []
            cache.synced = True
            await asyncio.wait_for(both.wait(), TIMEOUT)
            stop.set()
            await asyncio.wait_for(runner, TIMEOUT)
        finally:
            logger.removeHandler(handler)
        assert reconciled == ["ns/now", "ns/later"]
        assert any("1 of 1 caches to sync" in r.getMessage() for r in caplog.records)

    with caplog.at_level(logging.WARNING, logger="kubeinformers.reconcile"):
        run_debug(main, caplog)


def test_async_leader_election_one_leads_then_hands_over(caplog: pytest.LogCaptureFixture) -> None:
    """Exactly one candidate leads; cancelling it (release_on_cancel) releases the lease and
    the other takes over; a leader whose lease API fails stops leading (lead() cancelled)."""
    store = LeaseStore()

    def elector(identity: str, api: FakeLeaseApi) -> AsyncLeaderElector:
        return AsyncLeaderElector(
            LeaseLock(api, NS, NAME, identity),
            lease_duration=1.0,
            renew_deadline=0.5,
            retry_period=0.1,
            release_on_cancel=True,
            name=identity,
        )

    async def main() -> None:
        api_a, api_b = FakeLeaseApi(store), FakeLeaseApi(store)
        a, b = elector("a", api_a), elector("b", api_b)
        leading: list[str] = []
        lead_a, lead_b = asyncio.Event(), asyncio.Event()

        def work(name: str, flag: asyncio.Event) -> Any:
            async def lead() -> None:
                leading.append(name)
                flag.set()
                await asyncio.Future()

            return lead

        task_a = asyncio.create_task(a.run(work("a", lead_a)))
        await asyncio.wait_for(lead_a.wait(), TIMEOUT)
        task_b = asyncio.create_task(b.run(work("b", lead_b)))
        await asyncio.sleep(0.3)  # b retries meanwhile and must not lead
        assert leading == ["a"] and a.is_leader() and b.get_leader() == "a"

        task_a.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task_a
        # a released the lease (b may already have taken it since: it retries every 0.1 s)
        released = store.first_written_after("a")
        assert released is not None and not released.get("holderIdentity"), store.written
        await asyncio.wait_for(lead_b.wait(), TIMEOUT)
        assert leading == ["a", "b"]
        assert store.spec(NS, NAME)["holderIdentity"] == "b"

        api_b.fail = True  # b can no longer renew: it stops leading by itself
        assert await asyncio.wait_for(task_b, TIMEOUT) is False

    run_debug(main, caplog)


def test_async_on_new_leader_may_be_a_coroutine_function(caplog: pytest.LogCaptureFixture) -> None:
    """on_new_leader is told every new holder, the first included: an `async def` one is
    awaited on the loop, a plain function is called. b (async) sees "a" then itself once a
    releases; a (plain), campaigning again, sees "b"."""
    store = LeaseStore()
    seen_by_a: list[str] = []
    seen_by_b: list[str] = []

    async def main() -> None:
        b_saw_a, b_saw_b, a_saw_b = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def tell_b(holder: str) -> None:
            await asyncio.sleep(0)  # a real coroutine: it suspends
            seen_by_b.append(holder)
            (b_saw_b if holder == "b" else b_saw_a).set()

        def tell_a(holder: str) -> None:
            seen_by_a.append(holder)
            if holder == "b":
                a_saw_b.set()

        def elector(identity: str, on_new_leader: Any) -> AsyncLeaderElector:
            return AsyncLeaderElector(
                LeaseLock(FakeLeaseApi(store), NS, NAME, identity),
                lease_duration=1.0,
                renew_deadline=0.5,
                retry_period=0.1,
                release_on_cancel=True,
                name=identity,
                on_new_leader=on_new_leader,
            )

        a, b = elector("a", tell_a), elector("b", tell_b)
        a_leads = asyncio.Event()

        async def lead_a() -> None:
            a_leads.set()
            await asyncio.Future()

        async def lead_b() -> None:
            await asyncio.Future()

        task_a = asyncio.create_task(a.run(lead_a))
        await asyncio.wait_for(a_leads.wait(), TIMEOUT)
        task_b = asyncio.create_task(b.run(lead_b))
        await asyncio.wait_for(b_saw_a.wait(), TIMEOUT)
        task_a.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task_a
        await asyncio.wait_for(b_saw_b.wait(), TIMEOUT)
        task_a = asyncio.create_task(a.run(lead_a))  # campaigns again; b holds the lease
        await asyncio.wait_for(a_saw_b.wait(), TIMEOUT)
        for task in (task_a, task_b):
            task.cancel()
        await asyncio.gather(task_a, task_b, return_exceptions=True)

    run_debug(main, caplog)
    assert seen_by_b == ["a", "b"]
    assert seen_by_a == ["a", "b"]


def test_i12_a_loop_runs_again_and_loses_nothing_meanwhile(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The re-campaign pattern (`while True: await elector.run(reconciler.run)`): what a run
    left waiting (a retry, a re-check), what the informers and `enqueue` brought while no
    run was going, all reach the next run."""

    async def main() -> None:
        seen: list[str] = []
        failures = {"ns/retry": 1}

        async def reconcile(key: str) -> float | None:
            seen.append(key)
            if failures.get(key):
                failures[key] -= 1
                raise RuntimeError("transient")
            if key == "ns/recheck" and seen.count(key) == 1:
                return 0.3  # look again in 0.3 s
            return None

        async def until(condition: Any) -> None:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + TIMEOUT
            while not condition():
                assert loop.time() < deadline, f"timed out; seen {seen}"
                await asyncio.sleep(0.01)

        limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
            0.3, 1.0
        )
        reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop(
            "again", reconcile, rate_limiter=limiter
        )
        informer = FakeInformer()
        reconciler.watch(informer)
        stop = asyncio.Event()
        runner = asyncio.create_task(reconciler.run(stop))
        informer.emit(obj("retry"))
        informer.emit(obj("recheck"))
        await until(lambda: {"ns/retry", "ns/recheck"} <= set(seen))
        stop.set()  # the lease is lost: a retry and a re-check are waiting
        await asyncio.wait_for(runner, TIMEOUT)
        informer.emit(obj("meanwhile"))
        reconciler.enqueue("ns/manual")
        seen.clear()
        stop = asyncio.Event()
        runner = asyncio.create_task(reconciler.run(stop))
        await until(lambda: {"ns/retry", "ns/recheck", "ns/meanwhile", "ns/manual"} <= set(seen))
        stop.set()
        await asyncio.wait_for(runner, TIMEOUT)

    run_debug(main, caplog)


class _Said(logging.Handler):
    """Calls `then()` once a record of `logger` contains `text` (on the logging thread)."""

    def __init__(self, text: str, then: Any) -> None:
        super().__init__(logging.DEBUG)
        self.text = text
        self.then = then

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.then()


def test_i12_i9_failure_counts_outlive_a_run_with_the_default_rate_limiter(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`max_retries` counts a key's failures over runs, also with the default rate limiter:
    each run used to make a limiter of its own, so a key that kept failing across lost
    leases started from 0 each time (its delays too) and was never dropped."""

    async def main() -> None:
        attempts = 0
        stop = asyncio.Event()

        async def reconcile(key: str) -> None:
            nonlocal attempts
            attempts += 1
            if attempts == 2:
                stop.set()  # the lease is lost while the key backs off
            raise RuntimeError("keeps failing")

        reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop("counts", reconcile, max_retries=2)
        reconciler.enqueue("ns/broken")
        await asyncio.wait_for(reconciler.run(stop), TIMEOUT)
        assert attempts == 2
        dropped = asyncio.Event()
        said = _Said("dropping it", dropped.set)  # logged on the loop's thread
        reconcile_core._log.addHandler(said)
        try:
            stop = asyncio.Event()
            runner = asyncio.create_task(reconciler.run(stop))
            await asyncio.wait_for(dropped.wait(), TIMEOUT)
            stop.set()
            await asyncio.wait_for(runner, TIMEOUT)
        finally:
            reconcile_core._log.removeHandler(said)
        assert attempts == 3  # max_retries + 1 over both runs, not per run

    run_debug(main, caplog)


def test_i12_i2_keys_enqueued_while_no_run_goes_are_kept_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A standby replica's informers run while its loop does not (before its first run,
    between two): what is kept for the next run holds each key once, as a queue would (I2),
    not one entry per notification (it grew with every event for as long as the replica
    waited), and the next run gets each key, in order."""

    async def main() -> None:
        seen: list[str] = []
        all_seen = asyncio.Event()

        async def reconcile(key: str) -> None:
            seen.append(key)
            if len(seen) == 3:
                all_seen.set()

        reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop("standby", reconcile)
        informer = FakeInformer()
        reconciler.watch(informer)
        for _ in range(1000):
            informer.emit(obj("a"))
            informer.emit(obj("b"))
            reconciler.enqueue("ns/manual")
            reconciler.enqueue_after("ns/later", 600.0)
        assert len(reconciler._early) + len(reconciler._early_due) == 4
        stop = asyncio.Event()
        runner = asyncio.create_task(reconciler.run(stop))
        await asyncio.wait_for(all_seen.wait(), TIMEOUT)
        assert seen == ["ns/a", "ns/b", "ns/manual"]
        [(key, left)] = reconciler.queue.waiting_items()
        assert key == "ns/later" and 590.0 < left <= 600.0
        stop.set()
        await asyncio.wait_for(runner, TIMEOUT)
        assert seen == ["ns/a", "ns/b", "ns/manual"]

    run_debug(main, caplog)


def test_i12_i7_a_delay_asked_while_no_run_goes_counts_from_the_ask(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`enqueue_after(key, 1)` while no run goes means one second from the call, as it does
    during a run and in the threaded loop: a run starting later reconciles the key as soon
    as the second has passed (the delay used to start again with the next run)."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        reconciled_at: list[float] = []
        reconciled = asyncio.Event()

        async def reconcile(key: str) -> None:
            reconciled_at.append(loop.time())
            reconciled.set()

        reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop("due", reconcile)
        asked = loop.time()
        reconciler.enqueue_after("ns/later", 1.0)
        # The scenario: a second passes with no run going (the wait ends early only if the
        # key were reconciled without a run, which must not happen).
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(reconciled.wait(), 1.0)
        stop = asyncio.Event()
        runner = asyncio.create_task(reconciler.run(stop))
        await asyncio.wait_for(reconciled.wait(), TIMEOUT)
        stop.set()
        await asyncio.wait_for(runner, TIMEOUT)
        # Due 1 s after the ask; the old behaviour reconciled it 1 s after the run began (2 s).
        assert 1.0 <= reconciled_at[0] - asked < 1.8

    run_debug(main, caplog)


def test_i12_cancelling_the_campaign_while_a_lost_lease_drains_stops_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The documented re-campaign loop, cancelled (the operator is told to stop) while the
    reconcile loop of a lost lease is still draining: `elector.run` used to swallow that
    cancellation and return False, so the loop campaigned again instead of ending."""
    store = LeaseStore()

    async def main() -> None:
        api = FakeLeaseApi(store)
        elector = AsyncLeaderElector(
            LeaseLock(api, NS, NAME, "a"),
            lease_duration=1.0,
            renew_deadline=0.5,
            retry_period=0.1,
            name="a",
        )
        leading, draining, drained = asyncio.Event(), asyncio.Event(), asyncio.Event()
        campaigns = 0

        async def lead() -> None:
            leading.set()
            try:
                await asyncio.Future()
            finally:  # as a reconcile loop's run: the reconciles in flight finish first
                draining.set()
                await asyncio.shield(drained.wait())

        async def campaign() -> None:
            nonlocal campaigns
            while True:
                campaigns += 1
                await elector.run(lead)

        task = asyncio.create_task(campaign())
        await asyncio.wait_for(leading.wait(), TIMEOUT)
        api.fail = True  # the lease can no longer be renewed: lost
        await asyncio.wait_for(draining.wait(), TIMEOUT)
        task.cancel()
        drained.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, TIMEOUT)
        assert campaigns == 1

    run_debug(main, caplog)


def test_i13_a_cancelled_error_out_of_reconcile_is_retried_and_the_worker_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I13: a reconcile that lets out the CancelledError of a future it awaited (cancelled by
    someone else, not its worker) fails like any exception: logged naming its key, retried;
    the one worker goes on with the next key, and `run(stop)` returns instead of raising
    CancelledError. Before, the worker ended without a word: the key was never retried and
    no later key was ever reconciled."""

    async def main() -> None:
        calls: list[str] = []
        both = asyncio.Event()

        async def reconcile(key: str) -> None:
            calls.append(key)
            if key == "ns/a" and calls.count("ns/a") == 1:
                inner: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                inner.cancel()  # an operation the reconcile awaits, cancelled elsewhere
                await inner
            if "ns/b" in calls and calls.count("ns/a") == 2:
                both.set()

        limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
            0.01, 1.0
        )
        reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop(
            "inner-cancel", reconcile, workers=1, rate_limiter=limiter
        )
        reconciler.enqueue("ns/a")
        reconciler.enqueue("ns/b")
        stop = asyncio.Event()
        runner = asyncio.create_task(reconciler.run(stop))
        await asyncio.wait_for(both.wait(), TIMEOUT)
        stop.set()
        await asyncio.wait_for(runner, TIMEOUT)  # returns: no CancelledError
        assert calls.count("ns/a") == 2 and "ns/b" in calls

    with caplog.at_level(logging.WARNING, logger="kubeinformers.reconcile"):
        run_debug(main, caplog)
    failed = [r.getMessage() for r in caplog.records if "failed (retry 1)" in r.getMessage()]
    assert len(failed) == 1 and "'ns/a'" in failed[0] and "CancelledError" in failed[0], failed


class _GatedLeaseApi(FakeLeaseApi):
    """A Lease API whose create waits for `gate`: a request in flight when `run` is
    cancelled. `entered` is set on the loop once a create has begun, `created` once it
    has written."""

    def __init__(self, store: LeaseStore, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(store)
        self.loop = loop
        self.entered = asyncio.Event()
        self.gate = threading.Event()
        self.created = threading.Event()

    def create_namespaced_lease(self, namespace: str, body: Any, **kwargs: Any) -> Any:
        self.loop.call_soon_threadsafe(self.entered.set)
        self.gate.wait(TIMEOUT)
        try:
            return super().create_namespaced_lease(namespace, body, **kwargs)
        finally:
            self.created.set()


def test_i14_cancelling_run_before_it_leads_releases_the_lease_its_request_took(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I14: `run` cancelled while its first attempt's request is in flight. That request
    takes the Lease after the cancellation; `run` waits for it and, with
    release_on_cancel, gives the Lease up: the others need not wait a whole lease duration,
    and the stopped elector does not say it leads. Before, the cancellation left the request
    behind in its thread: the Lease stayed held by a candidate nobody runs."""
    store = LeaseStore()

    async def main() -> None:
        api = _GatedLeaseApi(store, asyncio.get_running_loop())
        elector = AsyncLeaderElector(
            LeaseLock(api, NS, NAME, "a"),
            lease_duration=15.0,
            renew_deadline=10.0,
            retry_period=2.0,
            release_on_cancel=True,
            name="a",
        )
        led: list[str] = []

        async def lead() -> None:
            led.append("a")

        runner = asyncio.create_task(elector.run(lead))
        await asyncio.wait_for(api.entered.wait(), TIMEOUT)
        runner.cancel()
        await asyncio.sleep(0)
        api.gate.set()  # the request in flight takes the Lease now
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(runner, TIMEOUT)
        assert await asyncio.to_thread(api.created.wait, TIMEOUT)
        assert led == []
        assert store.spec(NS, NAME)["holderIdentity"] == "", store.written
        assert not elector.is_leader()

    run_debug(main, caplog)


def test_i15_a_loop_cancelled_twice_ends_only_after_its_reconciles(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I15: `run` cancelled, then cancelled again while its reconcile is still in flight. It
    used to end at the second cancellation, its worker still reconciling: the next run could
    reconcile the same key beside it. Now it ends (raising the cancellation) only once the
    reconcile has returned and the worker has ended."""

    async def main() -> None:
        reconcile = HeldReconcile()
        entered, release, finished = reconcile.entered, reconcile.release, reconcile.finished
        reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop("twice", reconcile)
        reconciler.enqueue("ns/a")
        runner = asyncio.create_task(reconciler.run())
        at_end: list[list[str]] = []
        runner.add_done_callback(lambda _: at_end.append(list(finished)))
        await asyncio.wait_for(entered.wait(), TIMEOUT)
        runner.cancel()
        await asyncio.sleep(0)
        runner.cancel()  # told again while it drains
        done, _ = await asyncio.wait({runner}, timeout=0.5)
        assert not done, "run ended while its reconcile was still running"
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(runner, TIMEOUT)
        assert at_end == [["ns/a"]]
        current = asyncio.current_task()
        assert [t for t in asyncio.all_tasks() if t is not current] == []

    run_debug(main, caplog)


def test_i15_the_elector_releases_the_lease_only_after_lead_ended_however_often_cancelled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I15: `AsyncLeaderElector.run` (release_on_cancel) cancelled twice while `lead()` is
    still stopping (a reconcile loop draining): the Lease is released, and `run` ends, only
    once `lead()` has returned. It used to release at the second cancellation, handing the
    Lease to another replica while this one's reconciles still ran."""
    store = LeaseStore()

    async def main() -> None:
        api = FakeLeaseApi(store)
        elector = AsyncLeaderElector(
            LeaseLock(api, NS, NAME, "a"),
            lease_duration=15.0,
            renew_deadline=10.0,
            retry_period=2.0,
            release_on_cancel=True,
            name="a",
        )
        leading, stopping, stopped = asyncio.Event(), asyncio.Event(), asyncio.Event()
        holder_when_lead_ended: list[str] = []

        async def lead() -> None:
            leading.set()
            try:
                await asyncio.Future()
            finally:  # as a reconcile loop's run: the reconciles in flight finish first
                stopping.set()
                await asyncio.shield(stopped.wait())
                holder_when_lead_ended.append(store.spec(NS, NAME)["holderIdentity"])

        runner = asyncio.create_task(elector.run(lead))
        await asyncio.wait_for(leading.wait(), TIMEOUT)
        runner.cancel()
        await asyncio.wait_for(stopping.wait(), TIMEOUT)
        runner.cancel()  # told again while lead() stops
        done, _ = await asyncio.wait({runner}, timeout=0.5)
        assert not done, "run ended while lead() was still stopping"
        assert store.spec(NS, NAME)["holderIdentity"] == "a"  # not released yet
        stopped.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(runner, TIMEOUT)
        assert holder_when_lead_ended == ["a"]
        assert store.spec(NS, NAME)["holderIdentity"] == ""  # released after lead() ended

    run_debug(main, caplog)


def test_i16_a_second_concurrent_run_of_one_elector_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I16: `run` called again while a run leads: it raised nothing, found the Lease its
    own and ran a second `lead()` beside the first. Now it raises at once, naming the
    Lease; once the first run has ended a new one may start."""
    store = LeaseStore()

    async def main() -> None:
        elector = AsyncLeaderElector(
            LeaseLock(FakeLeaseApi(store), NS, NAME, "a"),
            lease_duration=1.0,
            renew_deadline=0.5,
            retry_period=0.1,
            name="a",
        )
        leading = asyncio.Event()
        leads = 0

        async def lead() -> None:
            nonlocal leads
            leads += 1
            leading.set()
            await asyncio.Future()

        first = asyncio.create_task(elector.run(lead))
        await asyncio.wait_for(leading.wait(), TIMEOUT)
        with pytest.raises(RuntimeError, match=f"lease {NS}/{NAME} is already running"):
            await asyncio.wait_for(elector.run(lead), TIMEOUT)
        assert leads == 1
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        leading.clear()
        again = asyncio.create_task(elector.run(lead))  # the re-campaign
        await asyncio.wait_for(leading.wait(), TIMEOUT)
        assert leads == 2
        again.cancel()
        with pytest.raises(asyncio.CancelledError):
            await again

    run_debug(main, caplog)


def _elector_telling(on_new_leader: Any, store: LeaseStore) -> AsyncLeaderElector:
    return AsyncLeaderElector(
        LeaseLock(FakeLeaseApi(store), NS, NAME, "a"),
        lease_duration=1.0,
        renew_deadline=0.5,
        retry_period=0.1,
        release_on_cancel=True,
        name="a",
        on_new_leader=on_new_leader,
    )


def test_i17_an_async_on_new_leader_ends_before_run_returns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I17: a notification still running when `lead()` returns is awaited by `run` (within
    the renew deadline), so nothing of the elector's is left for `asyncio.run` to cancel."""
    store = LeaseStore()
    told: list[str] = []

    async def main() -> None:
        entered = asyncio.Event()
        go_on = asyncio.Event()

        async def tell(holder: str) -> None:
            entered.set()
            await go_on.wait()
            told.append(holder)

        async def lead() -> None:
            await entered.wait()
            asyncio.get_running_loop().call_later(0.05, go_on.set)

        elector = _elector_telling(tell, store)
        assert await asyncio.wait_for(elector.run(lead), TIMEOUT) is True
        assert told == ["a"]  # ended before run returned
        assert asyncio.all_tasks() == {asyncio.current_task()}

    run_debug(main, caplog)


@pytest.mark.parametrize("end", ["lead-returns", "run-cancelled"])
def test_i17_a_notification_that_outlives_run_is_cancelled_and_ended(
    caplog: pytest.LogCaptureFixture, end: str
) -> None:
    """I17: a hung `async def on_new_leader` is cancelled when `run` ends (after the renew
    deadline when `lead()` returned, with one WARNING; at once when `run` is cancelled) and
    has ended when `run` returns or raises. Before, it was left running on the loop."""
    store = LeaseStore()
    ended: list[str] = []

    async def main() -> None:
        entered = asyncio.Event()

        async def tell(holder: str) -> None:
            entered.set()
            try:
                await asyncio.Future()  # never returns
            finally:
                ended.append(holder)

        async def lead() -> None:
            await entered.wait()
            if end == "run-cancelled":
                await asyncio.Future()

        elector = _elector_telling(tell, store)
        runner = asyncio.create_task(elector.run(lead))
        await asyncio.wait_for(entered.wait(), TIMEOUT)
        if end == "run-cancelled":
            runner.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(runner, TIMEOUT)
        else:
            assert await asyncio.wait_for(runner, TIMEOUT) is True
        assert ended == ["a"]
        assert asyncio.all_tasks() == {asyncio.current_task()}

    with caplog.at_level(logging.WARNING, logger="kubeinformers.leaderelection"):
        run_debug(main, caplog)
    warned = [r for r in caplog.records if "on_new_leader still running" in r.getMessage()]
    assert len(warned) == (1 if end == "lead-returns" else 0)


def test_i15_an_async_loop_says_it_has_stopped_once_drained_as_the_threaded_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The run's INFO lines, as ReconcileLoop's: waiting for the caches, started, shutting
    down, then "stopped" once the drain is over; a run stopped before the caches synced says
    so instead (it handed nothing out)."""

    async def main() -> None:
        done = asyncio.Event()

        async def reconcile(key: str) -> None:
            done.set()

        loop: AsyncReconcileLoop[str] = AsyncReconcileLoop("said", reconcile)
        loop.enqueue("ns/a")
        stop = asyncio.Event()
        runner = asyncio.create_task(loop.run(stop))
        await asyncio.wait_for(done.wait(), TIMEOUT)
        stop.set()
        await asyncio.wait_for(runner, TIMEOUT)

        class _NeverSynced:
            def has_synced(self) -> bool:
                return False

        unsynced: AsyncReconcileLoop[str] = AsyncReconcileLoop("unsynced", reconcile)
        unsynced.wait_for(_NeverSynced())
        runner = asyncio.create_task(unsynced.run())
        while not any("unsynced" in r.name for r in caplog.records):
            await asyncio.sleep(0.01)  # the run has begun waiting for the caches
        runner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(runner, TIMEOUT)

    with caplog.at_level(logging.INFO, logger="kubeinformers.reconcile"):
        run_debug(main, caplog)
    said = [(r.name.rsplit(".", 1)[-1], r.getMessage()) for r in caplog.records]
    assert [m for name, m in said if name == "said"] == [
        "waiting for caches to sync",
        "caches synced; started 1 worker",
        "shutting down: waiting for in-flight reconciles",
        "stopped",
    ]
    assert [m for name, m in said if name == "unsynced"] == [
        "waiting for caches to sync",
        "stopped before the caches synced; no worker started",
    ]


def test_i22_setting_stop_while_the_caches_have_not_synced_ends_run_as_the_threaded_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I22: `run(stop)` returns once `stop` is set, also while it still waits for a cache
    that never syncs (a 403 on the list, a factory never started), handing nothing out and
    keeping the queued key for the next run; `wait_for_cache_sync(stop)` answers False, as
    `ReconcileLoop`'s. It waited for the caches whatever `stop` said: only a cancellation
    ended it."""

    class NeverSynced:
        def has_synced(self) -> bool:
            return False

    async def main() -> None:
        async def reconcile(key: str) -> None:
            raise AssertionError("nothing may be reconciled before the caches synced")

        loop: AsyncReconcileLoop[str] = AsyncReconcileLoop("stopped-unsynced", reconcile)
        loop.wait_for(NeverSynced())
        loop.enqueue("ns/a")
        stop = asyncio.Event()
        runner = asyncio.create_task(loop.run(stop))
        await asyncio.sleep(0)  # one step: run has begun waiting for the caches
        stop.set()
        # ends within a poll (at most 0.1 s); 10 s of headroom
        await asyncio.wait_for(runner, 10)
        assert loop._early == {"ns/a": None}  # kept for the next run (I12)
        assert await asyncio.wait_for(loop.wait_for_cache_sync(stop), 10) is False

    with caplog.at_level(logging.INFO, logger="kubeinformers.reconcile"):
        run_debug(main, caplog)
    said = [r.getMessage() for r in caplog.records if r.name.endswith("stopped-unsynced")]
    assert said == [
        "waiting for caches to sync",
        "stopped before the caches synced; no worker started",
    ]
