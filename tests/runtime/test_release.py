"""Handing keys off (N10): the work queues' hold, and release/acquire on the threaded and the
asyncio reconcile loops, under concurrent reconciles; keys placed in the hash space by the
watched informer's cache (uid), by the namespace, or by a predicate.

Waits are on events and conditions with timeouts; nothing sleeps to let things settle.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown, LeftShard
from kubeinformers.runtime.api.shard import Shard, fnv1a_64
from kubeinformers.runtime.metrics import register_prometheus, unregister_prometheus
from kubeinformers.runtime.reconcile.async_loop import AsyncReconcileLoop
from kubeinformers.runtime.reconcile.loop import ReconcileLoop
from kubeinformers.runtime.workqueue.async_queue import AsyncRateLimitingQueue
from kubeinformers.runtime.workqueue.queue import RateLimitingQueue, WorkQueue
from tests.runtime.test_async_api import run_debug
from tests.runtime.test_controller_runner import FakeInformer, Running

TIMEOUT = 10.0
LOWER = Shard.static(0, 2)
UPPER = Shard.static(1, 2)
LOWER_NS = Shard.static(0, 2, key="namespace")

Obj = dict[str, Any]


def starts_with_a(key: str) -> bool:
    return key.startswith("default/a")


# --------------------------------------------------------------------------- the queues


def test_n10_a_held_item_is_never_handed_out_and_comes_back_when_released() -> None:
    """N10: queued matches are set aside at once, later adds and re-adds while processed are
    held, the rest flows; set_hold(None) queues the held ones again, none lost, none doubled."""
    queue: WorkQueue[str] = WorkQueue()
    for key in ("default/a1", "default/b1", "default/a2"):
        queue.add(key)
    processing, _ = queue.get()
    assert processing == "default/a1"
    queue.set_hold(starts_with_a)
    assert len(queue) == 1  # a2 set aside
    queue.add("default/a3")
    queue.add("default/a1")  # re-added while processed
    queue.done("default/a1")  # ... not queued again: held
    assert queue.get() == ("default/b1", False)
    queue.done("default/b1")
    assert len(queue) == 0
    assert queue.held() == {"default/a1", "default/a2", "default/a3"}
    queue.set_hold(None)
    handed = set()
    for _ in range(3):
        item, _ = queue.get()
        handed.add(item)
        queue.done(item)
    assert handed == {"default/a1", "default/a2", "default/a3"} and len(queue) == 0
    assert queue.held() == set()


def test_n10_wait_released_waits_for_the_running_matches_only() -> None:
    """N10: wait_released is True at once when no running item matches, False at its
    timeout while one runs, and True as soon as that one is done."""
    queue: RateLimitingQueue[str] = RateLimitingQueue()
    queue.add("default/a1")
    queue.add("default/b1")
    a1, _ = queue.get()
    b1, _ = queue.get()
    queue.set_hold(starts_with_a)
    assert not queue.wait_released(0.0)
    finished = threading.Event()

    def finish() -> None:
        queue.done(a1)
        finished.set()

    done = threading.Timer(0.0, finish)
    done.start()
    assert queue.wait_released(TIMEOUT)
    assert finished.is_set()
    done.join()
    queue.done(b1)
    queue.shut_down()


def test_n10_async_queue_holds_and_releases() -> None:
    """N10 on the asyncio queue: as the threaded one."""

    async def main() -> None:
        queue: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue(name="hold")
        for key in ("default/a1", "default/b1", "default/a2"):
            queue.add(key)
        first = await queue.get()
        queue.set_hold(starts_with_a)
        assert len(queue) == 1
        queue.add("default/a1")
        assert not await queue.wait_released(0.01)
        queue.done(first)
        assert await queue.wait_released(TIMEOUT)
        assert await queue.get() == "default/b1"
        queue.done("default/b1")
        assert queue.held() == {"default/a1", "default/a2"}
        queue.set_hold(None)
        got = {await queue.get(), await queue.get()}
        assert got == {"default/a1", "default/a2"}

    asyncio.run(main())


# --------------------------------------------------------------------------- the loops


class Gate:
    """A reconcile that records each call and blocks chosen keys until told to go on."""

    def __init__(self, blocked: Callable[[str], bool]) -> None:
        self.blocked = blocked
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.calls: list[str] = []
        self.running: set[str] = set()
        self.go = threading.Event()

    def __call__(self, key: str) -> None:
        with self.lock:
            self.calls.append(key)
            self.running.add(key)
            self.cond.notify_all()
        try:
            if self.blocked(key):
                assert self.go.wait(TIMEOUT)
        finally:
            with self.lock:
                self.running.discard(key)
                self.cond.notify_all()

    def wait(self, predicate: Callable[[], bool]) -> bool:
        with self.lock:
            return self.cond.wait_for(predicate, TIMEOUT)

    def called(self, key: str) -> bool:
        return key in self.calls


def test_n10_release_waits_for_running_reconciles_and_nothing_matching_runs_after() -> None:
    """N10 (threads): release(predicate) returns False at its timeout while a matching key
    runs, True once it is done; from then on no matching key is reconciled (queued, added,
    retried) until acquire, which reconciles every key held back meanwhile."""
    informer = FakeInformer()
    gate = Gate(starts_with_a)
    loop: ReconcileLoop[str] = ReconcileLoop("release", gate, workers=4)
    loop.watch(informer)
    informer.synced.set()
    running = Running(loop)
    try:
        loop.enqueue("default/a-running")
        assert gate.wait(lambda: "default/a-running" in gate.running)
        assert not loop.release(starts_with_a, timeout=0.0)
        for i in range(20):
            loop.enqueue(f"default/a{i}")
            loop.enqueue(f"default/b{i}")
        gate.go.set()
        assert loop.release(starts_with_a, timeout=TIMEOUT)
        with gate.lock:
            after_release = len(gate.calls)
        loop.enqueue_after("default/a-later", 0.0)
        loop.enqueue("default/b-last")
        assert gate.wait(lambda: gate.called("default/b-last"))
        assert gate.wait(lambda: all(gate.called(f"default/b{i}") for i in range(20)))
        with gate.lock:
            late = [k for k in gate.calls[after_release:] if starts_with_a(k)]
        assert late == []
        status = loop.shard_status()
        assert status.releases == 2 and status.timed_out_releases == 1
        assert status.released == ("keys matching starts_with_a",)  # released once
        held = loop.queue.held()
        assert {f"default/a{i}" for i in range(20)} | {"default/a-later"} <= held
        assert loop.queue.metrics().held == len(held) == status.held_keys
        assert _prometheus_held("release") == len(held)

        loop.acquire(starts_with_a)
        assert loop.shard_status().released == ()
        assert gate.wait(lambda: all(gate.called(k) for k in held))
        assert loop.shard_status().held_keys == 0
    finally:
        gate.go.set()
        running.shutdown()


def _prometheus_held(queue: str) -> float | None:
    prometheus_client = pytest.importorskip("prometheus_client")
    registry = prometheus_client.CollectorRegistry()
    register_prometheus(registry)
    try:
        value: float | None = registry.get_sample_value(
            "kubeinformers_workqueue_held_items", {"name": queue}
        )
        return value
    finally:
        unregister_prometheus(registry)


def _pod(name: str, uid: str, namespace: str = "default") -> Obj:
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid, "resourceVersion": "1"}}


def _uid_in(shard: Shard, inside: bool) -> str:
    while True:
        uid = str(uuid.uuid4())
        if shard.contains_hash(fnv1a_64(uid)) == inside:
            return uid


class CachedInformer(FakeInformer):
    """The fake informer with a cache the loop can look keys up in (get_store)."""

    def __init__(self) -> None:
        super().__init__()
        self.objects: dict[str, Obj] = {}

    def get_store(self) -> CachedInformer:
        return self

    def get_by_key(self, key: str) -> Obj | None:
        return self.objects.get(key)

    def put(self, obj: Obj) -> None:
        self.objects[f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"] = obj
        self.add(obj)

    def remove(self, obj: Obj, *, left: bool = False) -> None:
        key = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
        del self.objects[key]
        self.delete(LeftShard(key, obj) if left else DeletedFinalStateUnknown(key, obj))


def test_n10_release_a_shard_by_uid_keeps_deleted_and_departed_keys_placed() -> None:
    """N10: release(Shard) holds back the keys whose cached object's uid hashes into it; a
    key whose object was deleted (tombstone) or left the shard while held stays placed by
    the uid it had, so acquire of that shard gives it back and nothing else is held; a
    LeftShard never enqueues its key (N9)."""
    informer = CachedInformer()
    gate = Gate(lambda key: False)
    loop: ReconcileLoop[str] = ReconcileLoop("uid", gate, workers=2)
    loop.watch(informer)
    informer.synced.set()
    ins = [_pod(f"in{i}", _uid_in(LOWER, True)) for i in range(10)]
    outs = [_pod(f"out{i}", _uid_in(LOWER, False)) for i in range(10)]
    assert loop.release(LOWER, timeout=TIMEOUT)  # before run: nothing running
    running = Running(loop)
    try:
        for obj in ins + outs:
            informer.put(obj)
        assert gate.wait(lambda: all(gate.called(f"default/out{i}") for i in range(10)))
        informer.remove(ins[0])  # deleted on the server while held
        informer.remove(ins[1], left=True)  # left the cache while held
        informer.remove(outs[0], left=True)  # left: not enqueued, not a deletion
        informer.put(_pod("out-last", _uid_in(LOWER, False)))
        assert gate.wait(lambda: gate.called("default/out-last"))
        assert not any(gate.called(f"default/in{i}") for i in range(10))
        assert gate.calls.count("default/out0") == 1
        assert loop.queue.held() == {f"default/in{i}" for i in range(10)}
        loop.acquire(UPPER)  # not released: nothing changes
        assert len(loop.released()) == 1
        loop.acquire(LOWER)
        assert loop.released() == ()
        assert gate.wait(lambda: all(gate.called(f"default/in{i}") for i in range(10)))
    finally:
        running.shutdown()


def test_n10_partial_acquire_splits_the_released_shard_and_namespace_keys_place_themselves() -> (
    None
):
    """N10: acquire takes its ranges out of the released shard (the rest stays released);
    with key="namespace" a key is placed by its own namespace, cached or not."""
    informer = FakeInformer()  # no cache: namespace keys need none
    gate = Gate(lambda key: False)
    loop: ReconcileLoop[str] = ReconcileLoop("ns", gate, workers=2)
    loop.watch(informer)
    informer.synced.set()
    namespaces = [f"team-{i}" for i in range(40)]
    lower = [ns for ns in namespaces if LOWER_NS.contains_hash(fnv1a_64(ns))]
    upper = [ns for ns in namespaces if ns not in lower]
    assert lower and upper
    everything = Shard.static(0, 1, key="namespace")
    assert loop.release(everything, timeout=TIMEOUT)
    running = Running(loop)
    try:
        for ns in namespaces:
            loop.enqueue(f"{ns}/x")
        loop.acquire(Shard.static(1, 2, key="namespace"))
        assert loop.released() == (LOWER_NS,)
        assert gate.wait(lambda: all(gate.called(f"{ns}/x") for ns in upper))
        assert loop.queue.held() == {f"{ns}/x" for ns in lower}
        assert not any(gate.called(f"{ns}/x") for ns in lower)
    finally:
        running.shutdown()


def test_n10_async_loop_release_and_acquire(caplog: pytest.LogCaptureFixture) -> None:
    """N10 (asyncio): release waits for the running matching reconcile, none starts after
    it returns; acquire reconciles every key held back."""

    async def main() -> None:
        calls: list[str] = []
        started = asyncio.Event()
        go = asyncio.Event()
        changed = asyncio.Condition()

        async def reconcile(key: str) -> None:
            calls.append(key)
            if key == "default/a-running":
                started.set()
                await go.wait()
            async with changed:
                changed.notify_all()

        async def reconciled(keys: set[str]) -> None:
            async with changed:
                await asyncio.wait_for(changed.wait_for(lambda: keys <= set(calls)), TIMEOUT)

        loop: AsyncReconcileLoop[str] = AsyncReconcileLoop("async-release", reconcile, workers=3)
        stop = asyncio.Event()
        runner = asyncio.create_task(loop.run(stop))
        loop.enqueue("default/a-running")
        await asyncio.wait_for(started.wait(), TIMEOUT)
        assert not await loop.release(starts_with_a, timeout=0.01)
        for i in range(10):
            loop.enqueue(f"default/a{i}")
            loop.enqueue(f"default/b{i}")
        go.set()
        assert await loop.release(starts_with_a, timeout=TIMEOUT)
        mark = len(calls)
        await reconciled({f"default/b{i}" for i in range(10)})
        assert [k for k in calls[mark:] if starts_with_a(k)] == []
        loop.acquire(starts_with_a)
        await reconciled({f"default/a{i}" for i in range(10)})
        assert loop.shard_status().held_keys == 0
        stop.set()
        await asyncio.wait_for(runner, TIMEOUT)

    run_debug(main, caplog)


def test_n10_held_keys_wait_for_the_caches_on_acquire_threads_and_asyncio(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """N10: acquire while a watched cache has not synced (it is relisting a new shard)
    admits new keys of the region at once but gives back the keys held only once it has."""
    informer = FakeInformer()
    gate = Gate(lambda key: False)
    loop: ReconcileLoop[str] = ReconcileLoop("readmit-threads", gate, workers=2)
    loop.watch(informer)
    informer.synced.set()
    running = Running(loop)
    try:
        assert loop.release(starts_with_a, timeout=TIMEOUT)
        loop.enqueue("default/a-held")
        informer.synced.clear()  # relisting
        loop.acquire(starts_with_a)
        loop.enqueue("default/a-new")
        assert gate.wait(lambda: gate.called("default/a-new"))
        assert loop.queue.held() == {"default/a-held"}
        informer.synced.set()
        assert gate.wait(lambda: gate.called("default/a-held"))
    finally:
        running.shutdown()

    async def main() -> None:
        calls: list[str] = []
        changed = asyncio.Condition()

        async def reconcile(key: str) -> None:
            calls.append(key)
            async with changed:
                changed.notify_all()

        async def reconciled(key: str) -> None:
            async with changed:
                await asyncio.wait_for(changed.wait_for(lambda: key in calls), TIMEOUT)

        informer = FakeInformer()
        aloop: AsyncReconcileLoop[str] = AsyncReconcileLoop("readmit-async", reconcile)
        aloop.watch(informer)
        informer.synced.set()
        stop = asyncio.Event()
        runner = asyncio.create_task(aloop.run(stop))
        aloop.enqueue("default/b-first")
        await reconciled("default/b-first")  # the workers run
        assert await aloop.release(starts_with_a, timeout=TIMEOUT)
        aloop.enqueue("default/a-held")
        informer.synced.clear()
        aloop.acquire(starts_with_a)
        aloop.enqueue("default/a-new")
        await reconciled("default/a-new")
        assert aloop.queue.held() == {"default/a-held"}
        informer.synced.set()
        await reconciled("default/a-held")
        stop.set()
        await asyncio.wait_for(runner, TIMEOUT)

    run_debug(main, caplog)


# --------------------------------------------------------------------------- keys of a key_func


def _meta(obj: Obj | DeletedFinalStateUnknown[Obj]) -> dict[str, Any]:
    final = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
    assert final is not None
    meta: dict[str, Any] = final["metadata"]
    return meta


def _owner_key(obj: Obj | DeletedFinalStateUnknown[Obj]) -> str:
    """A pod's owner's key (the key_func of a controller that reconciles owners)."""
    meta = _meta(obj)
    return f"{meta['namespace']}/{meta['ownerName']}"


def _owned(name: str, uid: str, owner: str) -> Obj:
    pod = _pod(name, uid)
    pod["metadata"]["ownerName"] = owner
    return pod


def _unplaceable_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name.startswith("kubeinformers.reconcile")
        and r.levelno == logging.WARNING
        and "cannot place key" in r.getMessage()
    ]


def test_n10_keys_no_cache_can_place_by_uid_are_said_once_naming_the_loop_key_and_remedy(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """N10: a loop whose keys come from a key_func only (an owner's key, from pods) has no
    cache to place them by uid: every one is held while a shard is released (a ring of two
    replicas: for ever). Said once at WARNING, naming the loop, the first such key and what
    to do; not once per key."""
    caplog.set_level(logging.DEBUG, logger="kubeinformers.reconcile")
    pods = CachedInformer()
    loop: ReconcileLoop[str] = ReconcileLoop("owners", lambda key: None)
    loop.watch(pods, _owner_key)
    assert loop.release(LOWER, timeout=TIMEOUT)
    for i in range(5):
        pods.put(_owned(f"p{i}", _uid_in(LOWER, False), f"owner{i}"))
    assert loop.queue.held() == {f"default/owner{i}" for i in range(5)}
    warnings = _unplaceable_warnings(caplog)
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    message = warnings[0].getMessage()
    assert "\n" not in message
    assert "reconcile loop 'owners' cannot place key 'default/owner0'" in message
    assert "held while a shard is released" in message
    assert "watch the informer of the keys' objects without key_func" in message
    assert 'key="namespace"' in message
    loop.queue.shut_down()


def test_n10_a_key_that_is_not_a_str_is_said_once_whatever_the_shard_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """N10: only str keys ("namespace/name") can be placed; a loop over other keys (tuples)
    says once at WARNING that they are held while a shard is released, even by namespace."""
    caplog.set_level(logging.DEBUG, logger="kubeinformers.reconcile")
    pods = CachedInformer()
    loop: ReconcileLoop[tuple[str, str]] = ReconcileLoop("tuples", lambda key: None)

    def key_of(obj: Obj | DeletedFinalStateUnknown[Obj]) -> tuple[str, str]:
        meta = _meta(obj)
        return (meta["namespace"], meta["name"])

    loop.watch(pods, key_of)
    assert loop.release(LOWER_NS, timeout=TIMEOUT)
    for i in range(3):
        pods.put(_pod(f"p{i}", str(uuid.uuid4())))
    assert len(loop.queue.held()) == 3
    warnings = _unplaceable_warnings(caplog)
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    message = warnings[0].getMessage()
    assert "reconcile loop 'tuples' cannot place key ('default', 'p0')" in message
    assert "only str keys are placed" in message and "not tuple" in message
    loop.queue.shut_down()


def test_n10_a_key_func_key_is_placed_by_its_object_not_by_the_object_that_enqueued_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """N10: an owner's key from a pod is placed by the owner, cached by an informer the loop
    watches by its own keys: held when the owner lies in a released shard, admitted when it
    lies in a held one, held (silently: another replica's) when it is not cached here. A
    deleted pod does not place its owner's key by the pod's uid: the replica caching the pod
    would reconcile an owner another replica reconciles."""
    caplog.set_level(logging.DEBUG, logger="kubeinformers.reconcile")
    pods, owners = CachedInformer(), CachedInformer()
    loop: ReconcileLoop[str] = ReconcileLoop("owners", lambda key: None)
    loop.watch(owners)
    loop.watch(pods, _owner_key)
    assert loop.release(UPPER, timeout=TIMEOUT)  # this replica holds LOWER
    ours = _pod("ours", _uid_in(LOWER, True))
    theirs = _pod("theirs", _uid_in(UPPER, True))
    for owner in (ours, theirs):
        owners.objects[f"default/{owner['metadata']['name']}"] = owner  # cached, not enqueued
    pods.put(_owned("p-ours", _uid_in(LOWER, True), "ours"))
    pods.put(_owned("p-theirs", _uid_in(LOWER, True), "theirs"))
    pod_of_other = _owned("p-other", _uid_in(LOWER, True), "elsewhere")  # owner not cached
    pods.put(pod_of_other)
    assert loop.queue.held() == {"default/theirs", "default/elsewhere"}
    pods.remove(pod_of_other)  # its uid lies in LOWER, held here: not its owner's place
    assert loop.queue.held() == {"default/theirs", "default/elsewhere"}
    assert _unplaceable_warnings(caplog) == []  # owners are placed by their cache
    loop.queue.shut_down()


def test_n10_an_object_deleted_while_its_key_is_reconciled_is_reconciled_again() -> None:
    """N10: a deletion during the reconcile of its key queues the key again; that reconcile's
    end must not forget the delete notification that places it (the object has left the
    cache), or the key would be held for as long as anything is released, its deletion
    never reconciled."""
    informer = CachedInformer()
    gate = Gate(lambda key: key == "default/doomed")
    loop: ReconcileLoop[str] = ReconcileLoop("deleted", gate, workers=2)
    loop.watch(informer)
    informer.synced.set()
    assert loop.release(UPPER, timeout=TIMEOUT)  # something is released: LOWER is ours
    doomed = _pod("doomed", _uid_in(LOWER, True))
    running = Running(loop)
    try:
        informer.put(doomed)
        assert gate.wait(lambda: "default/doomed" in gate.running)
        informer.remove(doomed)  # deleted while reconciled: queued again
        gate.go.set()
        assert gate.wait(lambda: gate.calls.count("default/doomed") == 2), (
            f"held: {loop.queue.held()}"
        )
    finally:
        gate.go.set()
        running.shutdown()


def test_n10_async_release_while_the_run_stops_waits_for_the_draining_reconciles(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """N10 (asyncio): `release` called while `run` is stopping (an AsyncShardRing member
    cancelled releases everything, then deletes its Lease) waits for the reconciles its
    workers still drain. It returned True at once (the run's queue was already detached)."""

    async def main() -> None:
        entered, go, finished = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def reconcile(key: str) -> None:
            entered.set()
            await go.wait()
            finished.set()

        loop: AsyncReconcileLoop[str] = AsyncReconcileLoop("async-stopping", reconcile)
        stop = asyncio.Event()
        runner = asyncio.create_task(loop.run(stop))
        loop.enqueue("default/a-running")
        await asyncio.wait_for(entered.wait(), TIMEOUT)
        stop.set()
        deadline = asyncio.get_running_loop().time() + TIMEOUT
        while loop._queue is not None:  # the run detaches its queue and drains it
            assert asyncio.get_running_loop().time() < deadline, "run did not begin to stop"
            await asyncio.sleep(0.001)
        assert not await loop.release(starts_with_a, timeout=0.05)  # still running
        assert not finished.is_set()
        go.set()
        assert await loop.release(starts_with_a, timeout=TIMEOUT)
        assert finished.is_set()
        await asyncio.wait_for(runner, TIMEOUT)

    run_debug(main, caplog)
