"""The shard ring wired to real informers and reconcile loops (rule N24), in one process:
replicas share a LocalApiServer that serves sharded lists and watches, and one in-memory
Lease API. Each replica caches exactly its shard and reconciles only its keys; when one
leaves, the other caches and reconciles everything; no key is ever reconciled by two at once.
Threaded (`ShardRing`, `ReconcileLoop`) and asyncio (`AsyncShardRing`, `AsyncReconcileLoop`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from kubeinformers.generated.core.v1.models import ConfigMap
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.api.keys import meta_namespace_key
from kubeinformers.runtime.api.shard import Shard
from kubeinformers.runtime.reconcile.async_loop import AsyncReconcileLoop
from kubeinformers.runtime.reconcile.loop import ReconcileLoop
from kubeinformers.runtime.ring.async_ring import AsyncShardRing
from kubeinformers.runtime.ring.ring import ShardRing
from tests.runtime.test_controller_runner import FakeInformer
from tests.support.leases import FakeLeaseApi, LeaseStore

OBJECTS = 120
WAIT = 30.0
LEASE, RENEW, RETRY = 1.0, 0.6, 0.2


class Work:
    """Who reconciles which key; a key started while another replica runs it is a violation."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.running: dict[str, str] = {}
        self.done: dict[str, set[str]] = defaultdict(set)  # replica -> keys since last reset
        self.violations: list[str] = []

    def start(self, replica: str, key: str) -> None:
        with self.cond:
            other = self.running.get(key)
            if other is not None and other != replica:
                self.violations.append(f"{key}: {replica} started while {other} ran it")
            self.running[key] = replica

    def end(self, replica: str, key: str) -> None:
        with self.cond:
            if self.running.get(key) == replica:
                del self.running[key]
            self.done[replica].add(key)
            self.cond.notify_all()

    def reset(self) -> None:
        with self.cond:
            self.done.clear()

    def wait(self, predicate: Callable[[], bool]) -> None:
        with self.cond:
            assert self.cond.wait_for(predicate, WAIT), dict(self.done)


def populate(server: Any) -> dict[str, str]:
    """uid -> key of OBJECTS ConfigMaps."""
    made = [
        server.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "namespace": "default"},
            }
        )
        for i in range(OBJECTS)
    ]
    return {o["metadata"]["uid"]: f"default/{o['metadata']['name']}" for o in made}


def keys_of(objects: dict[str, str], shard: Shard | None) -> set[str]:
    if shard is None:
        return set()
    return {key for uid, key in objects.items() if shard.contains({"metadata": {"uid": uid}})}


def cached(factory: SharedInformerFactory) -> set[str]:
    return {meta_namespace_key(c) for c in factory.lister(ConfigMap).list()}


class Replica:
    def __init__(self, name: str, server: Any, store: LeaseStore, work: Work) -> None:
        self.name = name
        self.stop = threading.Event()
        self.ring = ShardRing(
            FakeLeaseApi(store),
            "ctl",
            name,
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
        )
        self.ring_thread = threading.Thread(target=self.ring.run, args=(self.stop,), daemon=True)
        self.ring_thread.start()
        shard = self.ring.wait_for_shard(WAIT)
        assert shard is not None
        self.factory = SharedInformerFactory(server.api_client(), shard=shard)
        self.ring.follow(self.factory)

        def reconcile(key: str) -> None:
            work.start(name, key)
            time.sleep(0.002)  # the work, so that two at once would overlap
            work.end(name, key)

        self.loop: ReconcileLoop[str] = ReconcileLoop(f"cms-{name}", reconcile, workers=2)
        self.loop.watch(self.factory.informer(ConfigMap))
        self.ring.admit(self.loop)
        self.factory.start()
        self.loop_thread = threading.Thread(target=self.loop.run, args=(self.stop,), daemon=True)
        self.loop_thread.start()

    def halt(self) -> None:
        self.stop.set()
        self.ring_thread.join(WAIT)
        self.loop_thread.join(WAIT)
        self.factory.shutdown()
        assert not self.ring_thread.is_alive() and not self.loop_thread.is_alive()


def test_n24_threaded_replicas_cache_and_reconcile_only_their_shard_and_take_over(
    local_api_server_factory: Any,
) -> None:
    server = local_api_server_factory(sharded_list_and_watch=True)
    objects = populate(server)
    everything = set(objects.values())
    store, work = LeaseStore(), Work()
    a = Replica("a", server, store, work)
    b = Replica("b", server, store, work)
    try:

        def split() -> bool:
            sa, sb = a.ring.shard(), b.ring.shard()
            return (
                a.ring.health().healthy
                and b.ring.health().healthy
                and cached(a.factory) == keys_of(objects, sa)
                and cached(b.factory) == keys_of(objects, sb)
                and keys_of(objects, sa) | keys_of(objects, sb) == everything
            )

        work.wait(split)
        assert not keys_of(objects, a.ring.shard()) & keys_of(objects, b.ring.shard())
        work.wait(lambda: a.factory.health().healthy and b.factory.health().healthy)
        work.reset()
        for i in range(OBJECTS):  # every object changes: each replica reconciles its own
            server.replace(
                {**server.get("v1", "ConfigMap", f"cm-{i}", "default"), "data": {"v": "1"}}
            )
        work.wait(lambda: work.done["a"] | work.done["b"] == everything)
        assert work.done["a"] <= keys_of(objects, a.ring.shard())
        assert work.done["b"] <= keys_of(objects, b.ring.shard())

        b.halt()  # leaves the ring: a takes everything
        work.wait(lambda: a.ring.health().healthy and cached(a.factory) == everything)
        work.reset()
        for i in range(OBJECTS):
            server.replace(
                {**server.get("v1", "ConfigMap", f"cm-{i}", "default"), "data": {"v": "2"}}
            )
        work.wait(lambda: work.done["a"] == everything)
    finally:
        a.halt()
        if not b.stop.is_set():
            b.halt()
    assert work.violations == []


def test_n24_async_replicas_follow_the_ring_as_the_threaded_ones(
    local_api_server_factory: Any,
) -> None:
    server = local_api_server_factory(sharded_list_and_watch=True)
    objects = populate(server)
    everything = set(objects.values())
    store, work = LeaseStore(), Work()

    async def replica(
        name: str, ready: asyncio.Event, stopped: asyncio.Event
    ) -> tuple[AsyncShardRing, SharedInformerFactory]:
        ring = AsyncShardRing(
            FakeLeaseApi(store),
            "ctl",
            name,
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
        )
        ring_task = asyncio.create_task(ring.run())
        factory = SharedInformerFactory(server.api_client(), shard=await ring.wait_for_shard())
        await ring.follow(factory)

        async def reconcile(key: str) -> None:
            work.start(name, key)
            await asyncio.sleep(0.002)
            work.end(name, key)

        loop: AsyncReconcileLoop[str] = AsyncReconcileLoop(f"cms-{name}", reconcile, workers=2)
        loop.watch(factory.informer(ConfigMap))
        await ring.admit(loop)
        factory.start()
        loop_task = asyncio.create_task(loop.run())
        replicas[name] = (ring, factory)
        ready.set()
        await stopped.wait()
        ring_task.cancel()
        await asyncio.wait({ring_task})
        loop_task.cancel()
        await asyncio.wait({loop_task})
        factory.shutdown()
        return ring, factory

    replicas: dict[str, tuple[AsyncShardRing, SharedInformerFactory]] = {}

    async def main() -> None:
        events = {n: (asyncio.Event(), asyncio.Event()) for n in "ab"}
        tasks = {n: asyncio.create_task(replica(n, *events[n])) for n in "ab"}
        try:
            for ready, _ in events.values():
                await asyncio.wait_for(ready.wait(), WAIT)

            def split() -> bool:
                (ra, fa), (rb, fb) = replicas["a"], replicas["b"]
                return (
                    ra.health().healthy
                    and rb.health().healthy
                    and cached(fa) == keys_of(objects, ra.shard())
                    and cached(fb) == keys_of(objects, rb.shard())
                    and cached(fa) | cached(fb) == everything
                )

            await asyncio.to_thread(work.wait, split)
            events["b"][1].set()  # b stops: a takes everything
            await asyncio.wait({tasks["b"]})
            ra, fa = replicas["a"]
            await asyncio.to_thread(
                work.wait, lambda: ra.health().healthy and cached(fa) == everything
            )
            work.reset()
            for i in range(OBJECTS):
                server.replace(
                    {**server.get("v1", "ConfigMap", f"cm-{i}", "default"), "data": {"v": "1"}}
                )
            await asyncio.to_thread(work.wait, lambda: work.done["a"] == everything)
        finally:
            for _, stopped in events.values():
                stopped.set()
            await asyncio.wait(set(tasks.values()))

    asyncio.run(main())
    assert work.violations == []
    assert store.leases == {}


def test_n24_n10_ring_admit_of_a_loop_that_cannot_place_its_keys_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`ring.admit(loop)` of a loop whose keys come from a key_func only (pods by their
    owner's key) in a ring by uid: every key is held until this replica holds every bucket,
    so with two replicas none is ever reconciled. One WARNING names the loop and the key."""
    caplog.set_level(logging.DEBUG, logger="kubeinformers.reconcile")
    ring = ShardRing(FakeLeaseApi(LeaseStore()), "ctl", "a")
    pods = FakeInformer()
    loop: ReconcileLoop[str] = ReconcileLoop("deployments", lambda key: None)

    def owner(obj: Any) -> str:
        return "default/web"

    loop.watch(pods, owner)
    ring.admit(loop)  # holds nothing yet: every key released
    for i in range(3):
        pods.add({"metadata": {"name": f"web-{i}", "namespace": "default", "uid": f"u{i}"}})
    assert loop.queue.held() == {"default/web"}
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "cannot place key" in r.getMessage()
    ]
    assert len(warnings) == 1, warnings
    assert "reconcile loop 'deployments' cannot place key 'default/web'" in warnings[0]
    loop.queue.shut_down()
