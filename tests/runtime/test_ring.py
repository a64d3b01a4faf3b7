"""The shard ring over Leases (rules N21-N23), over an in-memory Lease API with short leases.

Every replica's holder records the buckets it works on; a shared ledger refuses (records a
violation) any bucket started while another replica still works on it: the ring's promise
that no key is reconciled by two replicas at once. Waits are on a condition with timeouts.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from kubernetes.client import ApiClient, Configuration
from prometheus_client import CollectorRegistry

from kubeinformers.runtime.api.shard import Shard
from kubeinformers.runtime.leaderelection.elector import LeaseLock
from kubeinformers.runtime.metrics import register_prometheus, unregister_prometheus
from kubeinformers.runtime.reconcile.async_loop import AsyncReconcileLoop
from kubeinformers.runtime.ring.assignment import BUCKETS, assign, buckets_of_shard
from kubeinformers.runtime.ring.async_ring import AsyncShardRing, RingStoppedError
from kubeinformers.runtime.ring.core import RingConfig, RingCore
from kubeinformers.runtime.ring.members import (
    BUCKETS_ANNOTATION,
    RING_LABEL,
    MemberLeases,
)
from kubeinformers.runtime.ring.ring import ShardRing
from tests.support.leases import FakeLeaseApi, LeaseStore
from tests.support.silent import SilentServer

NS = "default"
RING = "ctl"
LEASE, RENEW, RETRY = 1.0, 0.6, 0.2  # seconds: short, so that handoffs take a second
WAIT = 20.0


def _buckets(shard: Shard | None) -> frozenset[int]:
    return buckets_of_shard(shard) if shard is not None else frozenset()


class Ledger:
    """Which buckets each replica works on; a start of a bucket another works on is a
    violation."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.active: dict[str, frozenset[int]] = {}
        self.violations: list[str] = []

    def set(self, name: str, buckets: frozenset[int], starting: bool) -> None:
        with self.cond:
            if starting:
                new = buckets - self.active.get(name, frozenset())
                for other, theirs in self.active.items():
                    if other != name and new & theirs:
                        self.violations.append(
                            f"{name} started {len(new & theirs)} buckets {other} works on"
                        )
            self.active[name] = buckets
            self.cond.notify_all()

    def wait(self, predicate: Callable[[], bool], timeout: float = WAIT) -> None:
        with self.cond:
            assert self.cond.wait_for(predicate, timeout), f"timed out; active: {self.sizes()}"

    def sizes(self) -> dict[str, int]:
        return {name: len(b) for name, b in self.active.items()}

    def covers(self, names: list[str]) -> bool:
        """The named replicas work on every bucket, each on its rendezvous share."""
        owned = assign(names)
        return all(self.active.get(n) == owned[n] for n in names)


class Holder:
    def __init__(self, name: str, ledger: Ledger) -> None:
        self.name = name
        self.ledger = ledger

    def stop_admitting(self, keep: Shard | None) -> None:
        with self.ledger.cond:
            mine = self.ledger.active.get(self.name, frozenset())
        self.ledger.set(self.name, mine & _buckets(keep), starting=False)

    def narrow(self, keep: Shard | None) -> None:
        with self.ledger.cond:
            mine = self.ledger.active.get(self.name, frozenset())
        assert mine <= _buckets(keep)  # drained before narrowed

    def widen(self, hold: Shard | None) -> None:
        self.ledger.set(self.name, _buckets(hold), starting=True)


class AsyncHolder(Holder):
    async def stop_admitting(self, keep: Shard | None) -> None:  # type: ignore[override]
        Holder.stop_admitting(self, keep)

    async def narrow(self, keep: Shard | None) -> None:  # type: ignore[override]
        Holder.narrow(self, keep)

    async def widen(self, hold: Shard | None) -> None:  # type: ignore[override]
        Holder.widen(self, hold)


class Replica:
    def __init__(self, store: LeaseStore, name: str, ledger: Ledger) -> None:
        self.api = FakeLeaseApi(store)
        self.ring = ShardRing(
            self.api,
            RING,
            name,
            namespace=NS,
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
        )
        self.ring.hold(Holder(name, ledger))
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.ring.run, args=(self.stop,), daemon=True)

    def start(self) -> Replica:
        self.thread.start()
        return self

    def halt(self) -> None:
        self.stop.set()
        self.thread.join(WAIT)
        assert not self.thread.is_alive()


@contextmanager
def replicas(store: LeaseStore, ledger: Ledger, names: list[str]) -> Iterator[dict[str, Replica]]:
    running = {name: Replica(store, name, ledger).start() for name in names}
    try:
        yield running
    finally:
        for r in running.values():
            r.halt()


def test_n22_live_members_split_the_buckets_by_rendezvous_and_never_overlap() -> None:
    store, ledger = LeaseStore(), Ledger()
    names = ["a", "b", "c"]
    with replicas(store, ledger, names) as running:
        ledger.wait(lambda: ledger.covers(names))
        for name, r in running.items():
            health = r.ring.health()
            assert health.members == tuple(names)
            assert _buckets(r.ring.shard()) == assign(names)[name]
        ledger.wait(lambda: all(r.ring.health().healthy for r in running.values()))
        registry = CollectorRegistry()
        register_prometheus(registry)
        try:
            for name in names:
                labels = {"ring": RING, "identity": name}
                held = registry.get_sample_value("kubeinformers_ring_buckets_held", labels)
                assert held == len(assign(names)[name])
                assert registry.get_sample_value("kubeinformers_ring_members", labels) == 3
                assert registry.get_sample_value("kubeinformers_ring_member", labels) == 1
                assert registry.get_sample_value("kubeinformers_ring_in_transition", labels) == 0
                started = "kubeinformers_ring_buckets_started_total"
                assert (registry.get_sample_value(started, labels) or 0) >= held
                count = "kubeinformers_ring_handoff_duration_seconds_count"
                assert (registry.get_sample_value(count, labels) or 0) >= 1
        finally:
            unregister_prometheus(registry)
    assert ledger.violations == []


def test_n21_each_member_lease_is_labelled_and_records_the_buckets_it_holds() -> None:
    store, ledger = LeaseStore(), Ledger()
    with replicas(store, ledger, ["a", "b"]):
        ledger.wait(lambda: ledger.covers(["a", "b"]))
        with store.lock:
            leases = {k[1]: v for k, v in store.leases.items()}
        assert set(leases) == {"ctl-a", "ctl-b"}
        for name, lease in leases.items():
            assert lease["metadata"]["labels"] == {RING_LABEL: RING}
            assert lease["spec"]["holderIdentity"] == name.removeprefix("ctl-")
            recorded = lease["metadata"]["annotations"][BUCKETS_ANNOTATION]
            assert recorded  # the claim covers the work
    assert store.leases == {}  # each deleted its Lease on stop


def test_n22_a_member_that_leaves_hands_its_buckets_to_the_others_without_overlap() -> None:
    store, ledger = LeaseStore(), Ledger()
    with replicas(store, ledger, ["a", "b", "c"]) as running:
        ledger.wait(lambda: ledger.covers(["a", "b", "c"]))
        running["c"].halt()
        assert ledger.active["c"] == frozenset()
        ledger.wait(lambda: ledger.covers(["a", "b"]))
        moved = running["a"].ring.metrics()
        assert moved.buckets_started > len(assign(["a", "b", "c"])["a"])
        assert moved.handoffs >= 2 and moved.handoff_latency.max > 0
    assert ledger.violations == []


def test_n22_a_member_that_joins_takes_its_share_from_each_without_overlap() -> None:
    store, ledger = LeaseStore(), Ledger()
    with replicas(store, ledger, ["a", "b", "c"]) as running:
        ledger.wait(lambda: ledger.covers(["a", "b", "c"]))
        before = sum(running[n].ring.metrics().buckets_released for n in "abc")
        running["d"] = Replica(store, "d", ledger).start()
        ledger.wait(lambda: ledger.covers(["a", "b", "c", "d"]))
        released = sum(running[n].ring.metrics().buckets_released for n in "abc") - before
        assert released == len(assign("abcd")["d"])  # only the newcomer's share moved
    assert ledger.violations == []


def test_n22_a_member_that_cannot_renew_stops_all_work_before_others_take_it_over() -> None:
    store, ledger = LeaseStore(), Ledger()
    with replicas(store, ledger, ["a", "b", "c"]) as running:
        ledger.wait(lambda: ledger.covers(["a", "b", "c"]))
        running["c"].api.fail = True  # cut off from the API server
        ledger.wait(lambda: ledger.active["c"] == frozenset())
        ledger.wait(lambda: ledger.covers(["a", "b"]))
        health = running["c"].ring.health()
        assert not health.member and not health.healthy
        assert "not a member" in health.describe() and "holds no range" in health.describe()
        assert running["c"].ring.metrics().lost == 1
        running["c"].api.fail = False  # back: it rejoins and takes its share again
        ledger.wait(lambda: ledger.covers(["a", "b", "c"]))
    assert ledger.violations == []


class TimeoutRecordingLeaseApi(FakeLeaseApi):
    """Records each request's timeout, by verb."""

    def __init__(self, store: LeaseStore) -> None:
        super().__init__(store)
        self.timeouts: list[tuple[str, float]] = []

    def list_namespaced_lease(self, namespace: str, **kwargs: Any) -> Any:
        self.timeouts.append(("list", kwargs["_request_timeout"]))
        return super().list_namespaced_lease(namespace, **kwargs)

    def replace_namespaced_lease(self, name: str, namespace: str, body: Any, **kwargs: Any) -> Any:
        self.timeouts.append(("replace", kwargs["_request_timeout"]))
        return super().replace_namespaced_lease(name, namespace, body, **kwargs)


def test_n22_every_lease_request_of_a_member_ends_by_its_renew_deadline() -> None:
    now = [100.0]
    api = TimeoutRecordingLeaseApi(LeaseStore())
    core = RingCore(
        RingConfig(
            RING,
            "a",
            NS,
            lease_duration=3.0,
            renew_deadline=2.0,
            retry_period=0.5,
            clock=lambda: now[0],
        ),
        MemberLeases(api, NS, RING, "a"),
    )
    assert core.renew()  # sent at 100.0: the deadline is 102.0
    now[0] = 101.5
    assert core.observe() is not None  # a handoff step's list, 0.5 s before the deadline
    assert core.claim(frozenset({1})) == frozenset({1})  # renews (to 103.5), then lists
    timed = [(verb, round(timeout, 3)) for verb, timeout in api.timeouts]
    assert timed[-3:] == [("list", 0.5), ("replace", 0.5), ("list", 2.0)]


def test_n23_health_says_holds_no_range_and_in_transition() -> None:
    store = LeaseStore()
    core = RingCore(
        RingConfig(RING, "a", NS, lease_duration=LEASE, renew_deadline=RENEW, retry_period=RETRY),
        MemberLeases(FakeLeaseApi(store), NS, RING, "a"),
    )
    health = core.health()
    assert not health.healthy and health.holds_no_range and not health.member
    assert core.renew()
    plan = core.observe()
    assert plan is not None and len(plan.free) == BUCKETS
    health = core.health()
    assert health.in_transition and "in transition" in health.describe()
    assert core.claim(plan.free) == frozenset(range(BUCKETS))
    assert (
        core.health().healthy
        and core.health().held == "uid in [0x0000000000000000, 0x10000000000000000)"
    )


def test_n22_a_bucket_another_live_member_claims_is_withdrawn_not_started() -> None:
    store = LeaseStore()
    other = MemberLeases(FakeLeaseApi(store), NS, RING, "b")
    other.write({5, 6}, 10, None)  # b claims buckets 5 and 6
    core = RingCore(
        RingConfig(RING, "a", NS, lease_duration=LEASE, renew_deadline=RENEW, retry_period=RETRY),
        MemberLeases(FakeLeaseApi(store), NS, RING, "a"),
    )
    assert core.renew()
    assert core.claim({4, 5}) == frozenset({4})
    with store.lock:
        recorded = store.leases[(NS, "ctl-a")]["metadata"]["annotations"][BUCKETS_ANNOTATION]
    assert recorded == "4"


def test_n21_a_fractional_lease_duration_is_written_rounded_up() -> None:
    # The others judge a member's Lease by the whole seconds it holds (as leader election's).
    store = LeaseStore()
    core = RingCore(
        RingConfig(RING, "a", NS, lease_duration=1.5, renew_deadline=1.2, retry_period=0.2),
        MemberLeases(FakeLeaseApi(store), NS, RING, "a"),
    )
    assert core.renew()
    assert store.spec(NS, "ctl-a")["leaseDurationSeconds"] == 2


def test_n21_ring_and_identity_must_make_a_lease_name() -> None:
    api = FakeLeaseApi(LeaseStore())
    with pytest.raises(ValueError, match="identity"):
        ShardRing(api, RING, "Pod_1")
    with pytest.raises(ValueError, match="ring name"):
        ShardRing(api, "", "a")
    with pytest.raises(ValueError, match="renew_deadline"):
        ShardRing(api, RING, "a", lease_duration=1, renew_deadline=1)


def test_n22_async_ring_hands_over_as_the_threaded_one() -> None:
    store, ledger = LeaseStore(), Ledger()

    async def main() -> None:
        rings = {
            n: AsyncShardRing(
                FakeLeaseApi(store),
                RING,
                n,
                namespace=NS,
                lease_duration=LEASE,
                renew_deadline=RENEW,
                retry_period=RETRY,
            )
            for n in "ab"
        }
        for n, ring in rings.items():
            ring.hold(AsyncHolder(n, ledger))
        tasks = {n: asyncio.create_task(ring.run()) for n, ring in rings.items()}
        try:
            await asyncio.to_thread(ledger.wait, lambda: ledger.covers(["a", "b"]))
            tasks["b"].cancel()
            await asyncio.wait({tasks["b"]})
            assert ledger.active["b"] == frozenset()
            await asyncio.to_thread(ledger.wait, lambda: ledger.covers(["a"]))
        finally:
            for t in tasks.values():
                t.cancel()
            await asyncio.wait(set(tasks.values()))

    asyncio.run(main())
    assert ledger.violations == []
    assert store.leases == {}


def test_n21_a_lease_left_behind_is_deleted_after_ten_durations_unless_renewed() -> None:
    store = LeaseStore()
    now = [0.0]
    dead = MemberLeases(FakeLeaseApi(store), NS, RING, "dead")
    dead.write({1, 2}, 1, None)  # a replica that crashed: never renewed again
    back = MemberLeases(FakeLeaseApi(store), NS, RING, "back")
    back.write({3}, 1, None)
    config = RingConfig(
        RING,
        "a",
        NS,
        lease_duration=LEASE,
        renew_deadline=RENEW,
        retry_period=RETRY,
        clock=lambda: now[0],
    )
    core = RingCore(config, MemberLeases(FakeLeaseApi(store), NS, RING, "a"))
    assert core.renew()
    assert core.observe() is not None
    assert core.health().members == ("a", "back", "dead")  # live when first seen
    now[0] = 30.0
    core.observe()
    assert (NS, "ctl-dead") in store.leases  # expired, not yet abandoned
    back.write({3}, 1, None)  # the other came back just in time
    now[0] = 61.0
    assert core.renew()
    core.observe()
    assert (NS, "ctl-dead") not in store.leases
    assert (NS, "ctl-back") in store.leases and (NS, "ctl-a") in store.leases


def test_n22_async_ring_cut_off_stops_all_work_and_the_other_takes_over() -> None:
    store, ledger = LeaseStore(), Ledger()
    apis = {n: FakeLeaseApi(store) for n in "ab"}

    async def main() -> None:
        rings = {
            n: AsyncShardRing(
                apis[n],
                RING,
                n,
                namespace=NS,
                lease_duration=LEASE,
                renew_deadline=RENEW,
                retry_period=RETRY,
            )
            for n in "ab"
        }
        for n, ring in rings.items():
            ring.hold(AsyncHolder(n, ledger))
        tasks = [asyncio.create_task(ring.run()) for ring in rings.values()]
        try:
            await asyncio.to_thread(ledger.wait, lambda: ledger.covers(["a", "b"]))
            apis["b"].fail = True
            await asyncio.to_thread(ledger.wait, lambda: ledger.active["b"] == frozenset())
            await asyncio.to_thread(ledger.wait, lambda: ledger.covers(["a"]))
            assert not rings["b"].health().member and rings["b"].metrics().lost == 1
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.wait(set(tasks))

    asyncio.run(main())
    assert ledger.violations == []


@pytest.mark.parametrize("who", ["ring member", "leader election lock"])
def test_n22_a_lease_request_is_sent_once_so_it_ends_by_its_timeout(who: str) -> None:
    """urllib3 would send a timed-out request three more times: a Lease request given the
    time left until the renew deadline would last four times that (N21, N22)."""
    server = SilentServer()
    try:
        configuration = Configuration()
        configuration.host = server.url
        api = ApiClient(configuration)
        t0 = time.monotonic()
        with pytest.raises(Exception):  # noqa: B017 - whatever the client raises
            if who == "ring member":
                MemberLeases(api, NS, RING, "a").list(timeout=0.5)
            else:
                LeaseLock(api, NS, "leader", "a").get(timeout=0.5)
        elapsed = time.monotonic() - t0
    finally:
        server.close()
    assert server.accepted == 1
    assert elapsed < 1.5, f"the request lasted {elapsed:.1f} s for a 0.5 s timeout"


def test_n22_a_ring_step_that_raises_ends_run_and_the_member_leaves() -> None:
    """A member whose ring step fails must not keep renewing a Lease that holds buckets
    nothing follows any more: run() ends, the member leaves, the error is raised."""

    class Failing(Holder):
        def widen(self, hold: Shard | None) -> None:
            raise RuntimeError("cannot take the shard")

    store, ledger = LeaseStore(), Ledger()
    ring = ShardRing(
        FakeLeaseApi(store),
        RING,
        "a",
        namespace=NS,
        lease_duration=LEASE,
        renew_deadline=RENEW,
        retry_period=RETRY,
    )
    ring.hold(Failing("a", ledger))
    raised: list[BaseException] = []

    def run() -> None:
        try:
            ring.run(threading.Event())
        except BaseException as e:
            raised.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(WAIT)
    assert not thread.is_alive(), "run() still waits for its renewer after a step raised"
    assert [str(e) for e in raised] == ["cannot take the shard"]
    assert store.leases == {}  # left: the others may take its buckets at once


def test_n24_wait_for_shard_returns_none_once_run_has_ended_without_a_shard() -> None:
    """A replica told to stop before it held anything (every bucket still claimed by a live
    member: a rollout's old pod) must not leave a program waiting for its shard forever."""
    store, ledger = LeaseStore(), Ledger()
    # A live member (its Lease lasts an hour) that claims every bucket.
    MemberLeases(FakeLeaseApi(store), NS, RING, "old").write(range(BUCKETS), 3600, None)
    newcomer = Replica(store, "new", ledger).start()
    got: list[Shard | None] = []
    waiter = threading.Thread(target=lambda: got.append(newcomer.ring.wait_for_shard()))
    waiter.start()
    newcomer.halt()
    waiter.join(WAIT)
    assert not waiter.is_alive(), "wait_for_shard() still waits after run() ended"
    assert got == [None]


def test_n24_wait_for_shard_just_after_a_new_run_began_waits_for_that_run() -> None:
    """`Thread(target=ring.run).start(); ring.wait_for_shard()` after an earlier run had
    ended: the new thread may not have entered `run` when the wait begins (held here at a
    gate until the waiter waits). It waits for that run's shard; it returned None at once,
    reading the earlier run's end. Ended again, with no run begun, the wait is None once
    `retry_period` has passed without a run beginning."""
    retry = 2.0  # the wait for a run to begin: ample for the gate below, even under load
    ring = ShardRing(FakeLeaseApi(LeaseStore()), RING, "one", namespace=NS, retry_period=retry)
    ring.hold(Holder("one", Ledger()))
    for attempt in ("first", "second"):
        gate, stop = threading.Event(), threading.Event()

        def run(gate: threading.Event = gate, stop: threading.Event = stop) -> None:
            gate.wait(WAIT)
            ring.run(stop)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()  # started: its run() has not begun
        got: list[Shard | None] = []
        waiter = threading.Thread(target=lambda got=got: got.append(ring.wait_for_shard(WAIT)))
        waiter.start()
        waiter.join(retry / 20)  # the wait is under way (or, wrongly, already over)
        gate.set()
        waiter.join(WAIT)
        assert not waiter.is_alive()
        assert got != [None], f"the {attempt} run: wait_for_shard() read an earlier run's end"
        assert got == [ring.shard()]
        stop.set()
        thread.join(WAIT)
        assert not thread.is_alive()
    assert ring.wait_for_shard(WAIT) is None  # ended, and no run begins


def test_n24_async_wait_for_shard_raises_once_run_has_ended_without_a_shard() -> None:
    """The asyncio face of the test above: a cancelled `run` (a TaskGroup does not cancel its
    other tasks for it) must not leave `await ring.wait_for_shard()` waiting forever. Its
    result is a Shard, so it raises RingStoppedError instead of returning None."""

    async def main() -> None:
        store = LeaseStore()
        MemberLeases(FakeLeaseApi(store), NS, RING, "old").write(range(BUCKETS), 3600, None)
        ring = AsyncShardRing(
            FakeLeaseApi(store),
            RING,
            "new",
            namespace=NS,
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
        )
        run = asyncio.create_task(ring.run())
        waiting = asyncio.create_task(ring.wait_for_shard())
        done, _ = await asyncio.wait({waiting}, timeout=3 * RETRY)
        assert not done  # "old" claims every bucket: still waiting
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        with pytest.raises(RingStoppedError, match="ended before new held a shard"):
            await asyncio.wait_for(waiting, WAIT)
        with pytest.raises(RingStoppedError):  # after run ended: at once
            await asyncio.wait_for(ring.wait_for_shard(), WAIT)
        assert store.leases.keys() == {(NS, "ctl-old")}  # it left

    asyncio.run(main())


class DrainProbe:
    """An async reconcile loop admitted by a ring, whose reconcile of one key blocks until
    told to finish; it records whether the ring's `run` ended while that reconcile ran and
    whether the member Lease was still there then."""

    def __init__(self, store: LeaseStore) -> None:
        self.store = store
        self.reconciling = asyncio.Event()
        self.finish = asyncio.Event()
        self.reconciled = asyncio.Event()
        self.draining = asyncio.Event()  # the ring waits for the reconcile to end
        self.seen_at_end: list[tuple[bool, bool]] = []
        probe = self

        async def reconcile(key: str) -> None:
            probe.reconciling.set()
            await probe.finish.wait()
            probe.reconciled.set()

        class Loop(AsyncReconcileLoop[str]):
            async def release(self, region: Any, timeout: float | None = None) -> bool:
                if probe.reconciling.is_set():
                    probe.draining.set()
                return await super().release(region, timeout)

        self.loop = Loop("drain", reconcile)

    def watch_end(self, run: asyncio.Task[None]) -> None:
        def ended(_: asyncio.Task[None]) -> None:
            with self.store.lock:
                lease_left = bool(self.store.leases)
            self.seen_at_end.append((self.reconciled.is_set(), lease_left))

        run.add_done_callback(ended)

    async def start(self, ring: AsyncShardRing) -> tuple[asyncio.Task[None], asyncio.Task[None]]:
        await ring.admit(self.loop)
        run = asyncio.create_task(ring.run())
        self.watch_end(run)
        loop_task = asyncio.create_task(self.loop.run())
        await asyncio.wait_for(ring.wait_for_shard(), WAIT)
        self.loop.enqueue("default/busy")
        await asyncio.wait_for(self.reconciling.wait(), WAIT)
        return run, loop_task


def _async_ring(api: FakeLeaseApi) -> AsyncShardRing:
    return AsyncShardRing(
        api,
        RING,
        "a",
        namespace=NS,
        lease_duration=LEASE,
        renew_deadline=RENEW,
        retry_period=RETRY,
    )


def test_n24_async_wait_for_shard_just_after_a_new_run_began_waits_for_that_run() -> None:
    """`task = create_task(ring.run()); await ring.wait_for_shard()` after an earlier run had
    ended: the new run has not started when the wait begins (awaited directly, or through
    Python 3.12's `asyncio.wait_for`, which no longer runs it in a task of its own). It waits
    for that run's shard; it raised RingStoppedError, reading the earlier run's end."""

    async def main() -> None:
        ring = _async_ring(FakeLeaseApi(LeaseStore()))
        first = asyncio.create_task(ring.run())
        async with asyncio.timeout(WAIT):
            await ring.wait_for_shard()
        first.cancel()
        await asyncio.wait({first})
        again = asyncio.create_task(ring.run())
        async with asyncio.timeout(WAIT):
            shard = await ring.wait_for_shard()
        assert shard == ring.shard()
        again.cancel()
        await asyncio.wait({again})
        with pytest.raises(RingStoppedError):  # ended, and no run begun: at once
            await ring.wait_for_shard()

    asyncio.run(main())


def test_n22_async_run_cancelled_again_while_it_drains_still_drains_and_leaves_first() -> None:
    """A second cancellation while a stopping member drains (a TaskGroup cancelling, then a
    timeout) must not end `run` before the reconciles of its buckets have ended and its Lease
    is deleted: the drain and the leave are finished, then CancelledError is raised. Ended
    early, the reconcile would run on while another replica takes the buckets, or while this
    replica's next `run` (started again at once, below) takes them again."""

    async def main() -> None:
        store = LeaseStore()
        ring = _async_ring(FakeLeaseApi(store))
        probe = DrainProbe(store)
        run, loop_task = await probe.start(ring)
        run.cancel()
        await asyncio.wait_for(probe.draining.wait(), WAIT)
        run.cancel()  # again, while it drains
        done, _ = await asyncio.wait({run}, timeout=3 * RETRY)
        assert not done, "run() ended while the reconcile of a bucket it gave away still ran"
        probe.finish.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(run, WAIT)
        assert probe.seen_at_end == [(True, False)]  # drained, then left
        # Started again: it holds the ring again and reconciles the key once more.
        probe.reconciling.clear()
        again = asyncio.create_task(ring.run())
        await asyncio.wait_for(ring.wait_for_shard(), WAIT)
        probe.loop.enqueue("default/busy")
        await asyncio.wait_for(probe.reconciling.wait(), WAIT)
        again.cancel()
        loop_task.cancel()
        await asyncio.wait({again, loop_task})
        assert store.leases == {}

    asyncio.run(main())


def test_n22_async_member_cut_off_while_draining_and_cancelled_ends_after_the_drain() -> None:
    """A member that cannot renew stops all work at its renew deadline (its renewer drains
    the loops); cancelling `run` then, once or twice, must not cut that drain short: `run`
    ends only after the running reconcile has ended (the renewer was cancelled mid-drain,
    and the final drain found nothing left to wait for)."""

    async def main() -> None:
        store = LeaseStore()
        api = FakeLeaseApi(store)
        ring = _async_ring(api)
        probe = DrainProbe(store)
        run, loop_task = await probe.start(ring)
        api.fail = True  # cut off: at the renew deadline the renewer drains the loop
        await asyncio.wait_for(probe.draining.wait(), WAIT)
        run.cancel()
        done, _ = await asyncio.wait({run}, timeout=3 * RETRY)
        assert not done, "run() ended while the lost member's drain still waited"
        run.cancel()
        done, _ = await asyncio.wait({run}, timeout=3 * RETRY)
        assert not done, "run() ended while the lost member's drain still waited"
        probe.finish.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(run, WAIT)
        assert [reconciled for reconciled, _ in probe.seen_at_end] == [True]
        assert not ring.health().member
        loop_task.cancel()
        await asyncio.wait({loop_task})

    asyncio.run(main())
