"""Changing a running informer's shard (N8, N9) and the factory's (N8, N11), on LocalApiServer
with and without the ShardedListAndWatch behaviour, for every queue kind and both decodings.

Every wait is on an event or a condition with a timeout; nothing sleeps to let things settle.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown, LeftShard
from kubeinformers.runtime.api.shard import HASH_SPACE, Shard, ShardRange
from kubeinformers.runtime.cache.informer import InformerStartedError, SharedIndexInformer
from kubeinformers.runtime.metrics import register_prometheus, unregister_prometheus
from tests.runtime._informer_support import WAIT

LOWER = Shard.static(0, 2)
UPPER = Shard.static(1, 2)
EVERYTHING = Shard.static(0, 1)
# The upper half of the lower half and the lower half of the upper half: half of each.
MIDDLE = Shard([ShardRange(HASH_SPACE // 4, 3 * HASH_SPACE // 4)])


NAMESPACES = ("default", "kube-system", "kube-public")


def _configmaps(server: Any, count: int, prefix: str = "cm") -> list[dict[str, Any]]:
    return [
        server.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{prefix}-{i}", "namespace": NAMESPACES[i % 3]},
            }
        )
        for i in range(count)
    ]


def _uids(objs: list[dict[str, Any]], shard: Shard | None) -> set[str]:
    return {o["metadata"]["uid"] for o in objs if shard is None or shard.contains(o)}


def _cached_uids(informer: SharedIndexInformer[Any]) -> set[str]:
    return {o.metadata.uid for o in informer.get_store().list()}


class Recorder:
    """A handler that records every notification and mirrors the cache from them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.view: dict[str, str] = {}  # key -> uid, as the notifications say
        self.left: list[LeftShard[Any]] = []
        self.deleted: list[object] = []
        self.initial: dict[str, bool] = {}  # uid -> is_in_initial_list of its last add

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        with self.lock:
            self.initial[obj.metadata.uid] = is_in_initial_list
            self._saw(obj)

    def on_update(self, old: Any, new: Any) -> None:
        with self.lock:
            self._saw(new)

    def _saw(self, obj: Any) -> None:
        self.view[f"{obj.metadata.namespace}/{obj.metadata.name}"] = obj.metadata.uid
        self.changed.notify_all()

    def on_delete(self, obj: Any) -> None:
        with self.lock:
            if isinstance(obj, LeftShard):
                self.left.append(obj)
                self.view.pop(obj.key, None)
            else:
                self.deleted.append(obj)
                key = (
                    obj.key
                    if isinstance(obj, DeletedFinalStateUnknown)
                    else f"{obj.metadata.namespace}/{obj.metadata.name}"
                )
                self.view.pop(key, None)
            self.changed.notify_all()

    def wait_for(self, uids: set[str]) -> bool:
        with self.lock:
            return self.changed.wait_for(lambda: set(self.view.values()) == uids, WAIT)


def _factory(server: Any, shard: Shard | None, queue: str, decode: str) -> Any:
    from kubeinformers.generated.informers import SharedInformerFactory

    return SharedInformerFactory(
        server.api_client(),
        shard=shard,
        queue=queue,  # type: ignore[arg-type]
        decode=decode,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("gate", [True, False], ids=["server-filter", "client-filter"])
@pytest.mark.parametrize(
    ("queue", "decode"),
    [("delta", "lazy"), ("ordered", "eager"), ("atomic", "lazy"), ("delta", "eager")],
)
def test_n8_n9_set_shard_relists_drops_what_left_and_adds_what_entered(
    local_api_server_factory: Any, gate: bool, queue: str, decode: str
) -> None:
    """N8: a running informer given a new shard relists with it: its cache, its listers and
    its handlers' view become the new shard's once `has_synced()` again; N9: the objects
    that left reach on_delete as LeftShard tombstones (never as plain deletions), those that
    entered as adds."""
    from kubeinformers.generated.core.v1 import ConfigMap

    server = local_api_server_factory(sharded_list_and_watch=gate)
    created = _configmaps(server, 80)
    with _factory(server, LOWER, queue, decode) as factory:
        informer = factory.informer(ConfigMap)
        recorder = Recorder()
        informer.add_event_handler(recorder)
        lister = factory.lister(ConfigMap)
        factory.start()
        factory.wait_for_cache_sync_or_raise(WAIT)
        assert _cached_uids(informer) == _uids(created, LOWER)
        assert recorder.wait_for(_uids(created, LOWER))

        factory.set_shard(MIDDLE)
        assert informer.shard == MIDDLE
        factory.wait_for_cache_sync_or_raise(WAIT)
        expected = _uids(created, MIDDLE)
        assert _cached_uids(informer) == expected
        assert {o.metadata.uid for o in lister.list()} == expected
        assert recorder.wait_for(expected)
        left = _uids(created, LOWER) - expected
        with recorder.lock:
            assert {t.obj.metadata.uid for t in recorder.left if t.obj} == left
            assert recorder.deleted == []  # nothing was deleted on the server
            # What entered is the new shard's initial list.
            assert all(recorder.initial[uid] for uid in expected - _uids(created, LOWER))
        health = informer.health()
        assert health.shard == MIDDLE.describe() and not health.resharding
        assert health.shard_filter == ("server" if gate else "client")
        m = informer.metrics()
        assert m.shard_changes == 1 and m.left_shard == len(left)
        assert m.cached_objects == len(expected)
        assert m.last_reshard_seconds is not None and m.last_reshard_seconds >= 0

        # The watch after the relist is the new shard's: a late object lands by its hash.
        late = _configmaps(server, 12, prefix="late")
        expected |= _uids(late, MIDDLE)
        assert recorder.wait_for(expected)
        assert _cached_uids(informer) == expected


def test_n8_widening_to_every_object_and_back(local_api_server_factory: Any) -> None:
    """N8: None (every object) and back to a shard; the informer stays one informer."""
    from kubeinformers.generated.core.v1 import ConfigMap

    server = local_api_server_factory(sharded_list_and_watch=True)
    created = _configmaps(server, 40)
    with _factory(server, UPPER, "delta", "lazy") as factory:
        informer = factory.informer(ConfigMap)
        factory.start()
        factory.wait_for_cache_sync_or_raise(WAIT)
        informer.set_shard(None)
        assert informer.shard is None
        factory.wait_for_cache_sync_or_raise(WAIT)
        assert _cached_uids(informer) == _uids(created, None)
        assert informer.health().shard is None
        informer.set_shard(LOWER)
        factory.wait_for_cache_sync_or_raise(WAIT)
        assert _cached_uids(informer) == _uids(created, LOWER)
        assert informer.metrics().shard_changes == 2


def test_n8_has_synced_is_false_until_the_new_shard_is_cached(
    local_api_server_factory: Any,
) -> None:
    """N8: from set_shard until the new shard's list is processed, has_synced() is False and
    health() says resharding; on_synced callbacks registered meanwhile fire at the new sync."""
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.runtime.client.shard import ShardedListerWatcher

    server = local_api_server_factory(sharded_list_and_watch=False)
    created = _configmaps(server, 30)
    with _factory(server, LOWER, "delta", "lazy") as factory:
        informer = factory.informer(ConfigMap)
        factory.start()
        factory.wait_for_cache_sync_or_raise(WAIT)
        lw = informer.lister_watcher
        assert isinstance(lw, ShardedListerWatcher)
        hook = lw.on_list_start
        assert hook is not None
        listing, proceed = threading.Event(), threading.Event()

        def held_list_start() -> None:  # the relist waits here, before its request
            listing.set()
            assert proceed.wait(WAIT)
            hook()

        lw.on_list_start = held_list_start
        informer.set_shard(UPPER)
        assert not informer.has_synced()
        synced_again = threading.Event()
        informer.on_synced(synced_again.set)
        assert listing.wait(WAIT)
        assert not informer.has_synced() and informer.health().resharding
        assert not informer.health().healthy
        assert not synced_again.is_set()
        proceed.set()
        assert synced_again.wait(WAIT)
        assert informer.has_synced() and not informer.health().resharding
        assert _cached_uids(informer) == _uids(created, UPPER)


def test_n8_the_shard_in_force_again_is_no_change(local_api_server_factory: Any) -> None:
    """N8: set_shard with a shard equal to the one in force (a ring replica given back the
    buckets it still caches) changes nothing: no relist, still synced, not counted; the
    watch goes on."""
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.runtime.client.shard import ShardedListerWatcher

    server = local_api_server_factory(sharded_list_and_watch=True)
    created = _configmaps(server, 30)
    with _factory(server, LOWER, "delta", "lazy") as factory:
        informer = factory.informer(ConfigMap)
        recorder = Recorder()
        informer.add_event_handler(recorder)
        factory.start()
        factory.wait_for_cache_sync_or_raise(WAIT)
        assert recorder.wait_for(_uids(created, LOWER))
        lw = informer.lister_watcher
        assert isinstance(lw, ShardedListerWatcher)
        hook = lw.on_list_start
        assert hook is not None
        relisted = threading.Event()

        def list_start() -> None:
            relisted.set()
            hook()

        lw.on_list_start = list_start
        factory.set_shard(Shard.static(0, 2))  # equal to LOWER, another object
        assert informer.has_synced() and not informer.health().resharding
        assert informer.metrics().shard_changes == 0
        late = _configmaps(server, 12, prefix="late")  # arrive by the same watch
        expected = _uids(created, LOWER) | _uids(late, LOWER)
        assert recorder.wait_for(expected)
        assert not relisted.is_set()
        assert _cached_uids(informer) == expected
        with recorder.lock:
            assert recorder.left == [] and recorder.deleted == []


@pytest.mark.parametrize("kind", ["delta", "ordered", "atomic"])
def test_n8_repopulate_makes_the_next_replace_a_new_initial_population(kind: str) -> None:
    """N8: after repopulate() the queue is not synced until every item of the next Replace
    is popped, whatever arrives before that Replace; then its callback fires, once."""
    from kubeinformers.runtime.api.keys import meta_namespace_key
    from kubeinformers.runtime.cache.delta_fifo import DeltaFIFO
    from kubeinformers.runtime.cache.real_fifo import RealFIFO
    from kubeinformers.runtime.cache.store import Indexer

    def cm(name: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"}}

    fifo: DeltaFIFO[Any] | RealFIFO[Any] = (
        DeltaFIFO(key_func=meta_namespace_key, emit_delta_type_replaced=True)
        if kind == "delta"
        else RealFIFO(
            meta_namespace_key,
            None if kind == "atomic" else Indexer(meta_namespace_key),
            None,
            atomic=kind == "atomic",
        )
    )
    fifo.replace([cm("a")], "1")
    fifo.pop(lambda deltas, initial: None)
    assert fifo.has_synced()
    fired: list[int] = []
    fifo.repopulate(lambda: fired.append(1))
    assert not fifo.has_synced()
    fifo.add(cm("early"))  # an event before the Replace does not end it
    assert not fifo.has_synced()
    fifo.replace([cm("b"), cm("c")], "2")
    assert not fifo.has_synced()
    while not fifo.has_synced():
        assert fired == []
        fifo.pop(lambda deltas, initial: None, timeout=WAIT)
    assert fired == [1]


def test_n8_an_informer_started_without_a_shard_says_how_to_get_one(
    local_api_server_factory: Any,
) -> None:
    """N8: before start, set_shard shards an informer created without one; once running, it
    is refused with what to do instead (a sharded informer can be widened to everything)."""
    from kubeinformers.generated.core.v1 import ConfigMap

    server = local_api_server_factory(sharded_list_and_watch=True)
    created = _configmaps(server, 20)
    with _factory(server, None, "delta", "lazy") as factory:
        informer = factory.informer(ConfigMap)
        informer.set_shard(LOWER)  # not started yet: wraps its source
        factory.start()
        factory.wait_for_cache_sync_or_raise(WAIT)
        assert _cached_uids(informer) == _uids(created, LOWER)
    with _factory(server, None, "delta", "lazy") as factory:
        factory.informer(ConfigMap)
        factory.start()
        factory.wait_for_cache_sync_or_raise(WAIT)
        with pytest.raises(InformerStartedError, match=r"Shard.static\(0, 1\)"):
            factory.set_shard(LOWER)
        assert factory.shard is None


def test_n8_n11_metrics_and_health_report_the_change(local_api_server_factory: Any) -> None:
    """N8: the Prometheus series count shard changes and objects that left; N11: a
    transition or no range set on the factory makes its health not ok, and says why."""
    from prometheus_client import CollectorRegistry

    from kubeinformers.generated.core.v1 import ConfigMap

    server = local_api_server_factory(sharded_list_and_watch=True)
    created = _configmaps(server, 30)
    registry = CollectorRegistry()
    register_prometheus(registry)
    try:
        with _factory(server, EVERYTHING, "delta", "lazy") as factory:
            informer = factory.informer(ConfigMap)
            factory.start()
            factory.wait_for_cache_sync_or_raise(WAIT)
            factory.set_shard(UPPER)
            factory.wait_for_cache_sync_or_raise(WAIT)
            labels = {"informer": informer.name, "resource": informer.metrics().resource}
            left = len(_uids(created, LOWER))

            def sample(name: str) -> float | None:
                return registry.get_sample_value(f"kubeinformers_informer_{name}", labels)

            assert sample("shard_changes_total") == 1
            assert sample("left_shard_objects_total") == left
            assert sample("cached_objects") == len(_uids(created, UPPER))
            assert (sample("last_reshard_seconds") or -1) >= 0

            health = factory.health()
            assert health.healthy and health.shard == UPPER.describe()
            factory.set_shard_state(transition="handing 3 ranges to replica-b")
            health = factory.health()
            assert not health.healthy
            assert "in transition: handing 3 ranges to replica-b" in health.describe()
            factory.set_shard_state(holds_no_range=True)
            assert not factory.health().healthy
            assert "holds no range" in factory.health().describe()
            factory.set_shard_state()
            assert factory.health().healthy
    finally:
        unregister_prometheus(registry)


@pytest.mark.parametrize("watch_list", [True, False], ids=["watch-list", "list-watch"])
def test_n8_n9_shard_changes_in_a_row_end_in_the_last_shard_quietly(
    local_api_server_factory: Any, watch_list: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """N8: shard changes in quick succession (one right after start, before the first sync)
    end with the cache, the listers and every handler's view in the last shard; N9: no
    object is reported deleted, only as having left; nothing above INFO is logged."""
    import logging

    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.generated.informers import SharedInformerFactory

    server = local_api_server_factory(sharded_list_and_watch=True)
    created = _configmaps(server, 60)
    caplog.set_level(logging.INFO)
    with SharedInformerFactory(
        server.api_client(), shard=LOWER, use_watch_list=watch_list
    ) as factory:
        informer = factory.informer(ConfigMap)
        recorder = Recorder()
        informer.add_event_handler(recorder)
        factory.start()
        factory.set_shard(UPPER)  # before the first sync, most likely
        factory.wait_for_cache_sync_or_raise(WAIT)
        assert _cached_uids(informer) == _uids(created, UPPER)
        for shard in (MIDDLE, LOWER, EVERYTHING, MIDDLE):
            factory.set_shard(shard)
        factory.wait_for_cache_sync_or_raise(WAIT)
        assert _cached_uids(informer) == _uids(created, MIDDLE)
        assert recorder.wait_for(_uids(created, MIDDLE))
        with recorder.lock:
            assert recorder.deleted == []
        # A real deletion inside the shard is still a deletion.
        victim = next(o for o in created if MIDDLE.contains(o))
        server.delete(
            "v1", "ConfigMap", victim["metadata"]["name"], victim["metadata"]["namespace"]
        )
        assert recorder.wait_for(_uids(created, MIDDLE) - {victim["metadata"]["uid"]})
        with recorder.lock:
            assert len(recorder.deleted) == 1
    loud = [r.getMessage() for r in caplog.records if r.levelno > logging.INFO]
    assert loud == []


def test_n10_held_keys_come_back_on_acquire_only_once_the_cache_holds_their_objects(
    local_api_server_factory: Any,
) -> None:
    """N10 with N8: a key held back while its object left the cache (LeftShard) is
    reconciled after `acquire` only when the informer holds the widened shard again, so the
    reconcile finds its object (a miss would read as a deletion); new keys flow at once."""
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.runtime.client.shard import ShardedListerWatcher
    from kubeinformers.runtime.reconcile.loop import ReconcileLoop

    server = local_api_server_factory(sharded_list_and_watch=True)
    created = _configmaps(server, 40)
    with _factory(server, EVERYTHING, "delta", "lazy") as factory:
        informer = factory.informer(ConfigMap)
        cond = threading.Condition()
        found: dict[str, bool] = {}

        def reconcile(key: str) -> None:
            with cond:
                found[key] = informer.get_store().get_by_key(key) is not None
                cond.notify_all()

        loop: ReconcileLoop[str] = ReconcileLoop("readmit", reconcile, workers=2)
        loop.watch(informer)
        assert loop.release(UPPER, timeout=WAIT)
        factory.start()
        factory.wait_for_cache_sync_or_raise(WAIT)
        stop = threading.Event()
        worker = threading.Thread(target=loop.run, args=(stop,))
        worker.start()
        try:
            upper = [o for o in created if UPPER.contains(o)]
            keys = {f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in upper}
            with cond:
                assert cond.wait_for(lambda: len(found) == len(created) - len(upper), WAIT)
            assert not keys & set(found)
            assert loop.queue.held() == keys  # the initial adds of the released half

            factory.set_shard(LOWER)  # the upper half leaves the cache, its keys held
            factory.wait_for_cache_sync_or_raise(WAIT)
            lw = informer.lister_watcher
            assert isinstance(lw, ShardedListerWatcher) and lw.on_list_start is not None
            hook, listing, proceed = lw.on_list_start, threading.Event(), threading.Event()

            def held_list_start() -> None:
                listing.set()
                assert proceed.wait(WAIT)
                hook()

            lw.on_list_start = held_list_start
            factory.set_shard(EVERYTHING)
            assert listing.wait(WAIT)
            loop.acquire(UPPER)  # before the cache holds the upper half again
            assert loop.queue.held() == keys and not keys & set(found)
            proceed.set()
            with cond:
                assert cond.wait_for(lambda: keys <= set(found), WAIT)
                assert all(found[key] for key in keys)  # each found its object
        finally:
            stop.set()
            worker.join(WAIT)
        assert not worker.is_alive()
