"""Sharded informers against a real kube-apiserver 1.36 (section N).

With the ShardedListAndWatch gate on, the server selects each shard's objects; the client's
own hash (`Shard.contains`) must select exactly the same ones, over thousands of objects and
for both keys, so that a replica behind a server without the gate caches exactly what it
would behind one with it. Then the informers: behind the gated server they cache the
server's selection without hashing (filter "server"), lazily from protobuf and JSON, eagerly,
by watch-list and by LIST+WATCH, and keep to it as objects come and go; behind a server
without the gate (the session's) they select the same objects themselves (filter "client",
one INFO).
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from kubeinformers.generated.core.v1.models import ConfigMap
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.generated.registry import RESOURCES
from kubeinformers.runtime.api.keys import object_namespace, object_uid
from kubeinformers.runtime.api.listwatch import ListOptions
from kubeinformers.runtime.api.shard import HASH_SPACE, Shard, ShardKey, ShardRange
from kubeinformers.runtime.client.pager import list_pages
from kubeinformers.runtime.client.transport import ApiListerWatcher
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.support.cluster import RealCluster

pytestmark = pytest.mark.real_apiserver

GATE = "--feature-gates=ShardedListAndWatch=true"
CONFIGMAPS = next(r for r in RESOURCES if r.resource == "configmaps" and not r.group)
NAMESPACES = 30
PER_NAMESPACE = 100  # 3,000 ConfigMaps behind the gated server
_RUNS = itertools.count()
SYNC = 120.0


def populate(server: RealApiServer, label: str, namespaces: int, per_namespace: int) -> None:
    """`namespaces` namespaces of `per_namespace` ConfigMaps, all labelled `label`.

    The namespaces differ at the start of their names: FNV-1a's top bits hardly depend on a
    name's last bytes, so `x-0`, `x-1`, ... would mostly fall in one shard (docs/guide/scaling.md).
    """
    cluster = RealCluster(server)
    try:
        names = [cluster.namespace(ns_name(label, i)) for i in range(namespaces)]

        def create(pair: tuple[str, int]) -> None:
            ns, i = pair
            cluster.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{i}", "namespace": ns, "labels": {"run": label}},
                    "data": {"i": str(i)},
                }
            )

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(create, [(ns, i) for ns in names for i in range(per_namespace)]))
    finally:
        cluster.close()


def ns_name(label: str, i: int) -> str:
    return f"n{i}-{label}"


def shards(key: ShardKey) -> list[Shard]:
    """Three static shards and one of two ranges (joined with ||)."""
    return [Shard.static(i, 3, key) for i in range(3)] + [
        Shard(
            [ShardRange(0, HASH_SPACE // 8), ShardRange(HASH_SPACE // 2, 3 * HASH_SPACE // 4)],
            key,
        )
    ]


def lister(server: RealApiServer) -> ApiListerWatcher[dict[str, Any]]:
    return ApiListerWatcher(server.api_client(), CONFIGMAPS, dict)


def list_run(server: RealApiServer, label: str, shard: Shard | None = None) -> tuple[Any, ...]:
    """(uids, the echoed selector) of the run's ConfigMaps, the shard's if given."""
    page, _ = list_pages(
        lister(server),
        ListOptions(
            label_selector=f"run={label}",
            shard_selector=shard.selector() if shard is not None else None,
        ),
        500,
    )
    return {object_uid(o) for o in page.items}, page.shard_selector, page.items


@pytest.fixture(scope="module")
def gated(real_apiserver_assets: Path) -> Iterator[tuple[RealApiServer, str]]:
    """A private server with the gate on, holding 3,000 ConfigMaps of one run."""
    with RealApiServer(real_apiserver_assets, extra_apiserver_args=[GATE]) as server:
        label = f"shard{next(_RUNS)}"
        populate(server, label, NAMESPACES, PER_NAMESPACE)
        yield server, label


@pytest.mark.parametrize("key", ["uid", "namespace"])
def test_n1_the_client_hash_selects_exactly_what_the_server_selects(
    gated: tuple[RealApiServer, str], key: ShardKey
) -> None:
    server, label = gated
    everything, echo, items = list_run(server, label)
    assert len(everything) == NAMESPACES * PER_NAMESPACE and echo is None
    union: set[str] = set()
    for shard in shards(key):
        served, echoed, _ = list_run(server, label, shard)
        assert echoed == shard.selector()  # the server applied it
        assert 0 < len(served) < len(everything)
        assert served == {object_uid(o) for o in items if shard.contains(o)}, shard
        if len(shard.ranges) == 1:
            assert not union & served  # the static shards are disjoint...
            union |= served
    assert union == everything  # ...and cover everything
    if key == "namespace":  # a namespace lies whole in one shard
        for shard in shards(key):
            served, _, page = list_run(server, label, shard)
            spread = {object_namespace(o) for o in items if object_uid(o) in served}
            assert all(shard.contains(o) for o in page)
            assert len({object_uid(o) for o in items if object_namespace(o) in spread}) == len(
                served
            )


def cached_uids(factory: SharedInformerFactory) -> set[str]:
    return {object_uid(o) for o in factory.informer(ConfigMap).get_store().list()}


def wait_for(predicate: Any, what: str, timeout: float = 30.0) -> None:
    pause = threading.Event()
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return
        pause.wait(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize(
    ("decode", "wire_format", "watch_list"),
    [
        ("lazy", "protobuf", True),
        ("lazy", "protobuf", False),
        ("lazy", "json", True),
        ("eager", "json", False),
    ],
)
def test_n2_n3_behind_the_gate_the_informer_caches_the_servers_shard(
    gated: tuple[RealApiServer, str], decode: Any, wire_format: Any, watch_list: bool
) -> None:
    server, label = gated
    shard = Shard.static(1, 3)
    with SharedInformerFactory(
        server.api_client(),
        tweak_list_options=lambda o: o.copy(label_selector=f"run={label}"),
        decode=decode,
        wire_format=wire_format,
        use_watch_list=watch_list,
        shard=shard,
    ) as factory:
        factory.informer(ConfigMap)
        factory.start()
        factory.wait_for_cache_sync_or_raise(SYNC)
        served, _, _ = list_run(server, label, shard)
        assert cached_uids(factory) == served
        health = factory.informer(ConfigMap).health()
        assert (health.shard, health.shard_filter) == (shard.describe(), "server")
        # Watch events: new objects land in their shard, deleted ones leave it.
        cluster = RealCluster(server)
        try:
            ns = ns_name(label, 0)
            run = next(_RUNS)
            for i in range(30):
                cluster.create(
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {
                            "name": f"w{run}-{i}",
                            "namespace": ns,
                            "labels": {"run": label},
                        },
                    }
                )
            for i in range(0, 30, 2):
                cluster.delete("v1", "ConfigMap", f"w{run}-{i}", ns)
            served, _, _ = list_run(server, label, shard)
            wait_for(lambda: cached_uids(factory) == served, "the cache to follow the shard")
        finally:
            cluster.close()
        assert factory.informer(ConfigMap).health().shard_filter == "server"


@pytest.mark.parametrize("key", ["uid", "namespace"])
def test_n2_without_the_gate_the_informer_selects_the_same_objects_itself(
    real_apiserver: RealApiServer, key: ShardKey, caplog: pytest.LogCaptureFixture
) -> None:
    server = real_apiserver  # the session's: no ShardedListAndWatch gate
    label = f"noshard{next(_RUNS)}{key}"
    populate(server, label, 12, 50)
    shard = Shard.static(0, 2, key)
    caplog.set_level(logging.INFO, logger="kubeinformers.shard")
    with SharedInformerFactory(
        server.api_client(),
        tweak_list_options=lambda o: o.copy(label_selector=f"run={label}"),
        shard=shard,
    ) as factory:
        factory.informer(ConfigMap)
        factory.start()
        factory.wait_for_cache_sync_or_raise(SYNC)
        everything, echo, items = list_run(server, label, shard)
        assert echo is None and len(everything) == 600  # the server ignored the selector
        expected = {object_uid(o) for o in items if shard.contains(o)}
        assert 0 < len(expected) < 600
        assert cached_uids(factory) == expected
        assert factory.informer(ConfigMap).health().shard_filter == "client"
        cluster = RealCluster(server)
        try:
            for i in range(20):
                cluster.create(
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {
                            "name": f"late-{i}",
                            "namespace": ns_name(label, i % 12),
                            "labels": {"run": label},
                        },
                    }
                )
        finally:
            cluster.close()
        _, _, items = list_run(server, label)
        expected = {object_uid(o) for o in items if shard.contains(o)}
        wait_for(lambda: cached_uids(factory) == expected, "the late objects of the shard")
    told = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert len(told) == 1 and "does not honour shardSelector" in told[0], told


def test_n1_a_malformed_selector_is_refused_with_the_message_local_api_server_gives(
    gated: tuple[RealApiServer, str],
) -> None:
    from kubeinformers.runtime.api.errors import ApiStatusError

    server, _ = gated
    with pytest.raises(ApiStatusError) as err:
        lister(server).list(
            ListOptions(
                shard_selector="shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"
            )
        )
    assert err.value.code == 500
    assert "invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value" in str(
        err.value
    )
    with pytest.raises(ValueError, match="hexStart must be a 0x-prefixed 16-digit hex value"):
        Shard.parse("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')")


@pytest.mark.parametrize("gate", ["on", "off"])
def test_n8_n10_a_shard_moves_on_the_real_server(request: pytest.FixtureRequest, gate: str) -> None:
    """N8-N10 on kube-apiserver 1.36, gate on (the server selects) and off (the client does):
    a replica reconciling one half releases it (no key reconciled after `release` returned
    until `acquire`), moves its informer to the middle half (the cache holds exactly what the
    server selects for it, objects that left come as LeftShard), takes the middle half and
    reconciles all of it; the keys that left stay held back, none is lost."""
    from kubeinformers.runtime.api.keys import LeftShard
    from kubeinformers.runtime.reconcile.loop import ReconcileLoop

    if gate == "on":
        server, label = request.getfixturevalue("gated")
    else:
        server = request.getfixturevalue("real_apiserver")
        label = f"move{next(_RUNS)}"
        populate(server, label, 6, 50)
    first = Shard.static(0, 2)
    middle = Shard([ShardRange(HASH_SPACE // 4, 3 * HASH_SPACE // 4)])
    lock = threading.Condition()
    calls: list[str] = []
    left: list[str] = []

    def reconcile(key: str) -> None:
        with lock:
            calls.append(key)
            lock.notify_all()

    def reconciled(keys: set[str], since: int) -> bool:
        with lock:
            return lock.wait_for(lambda: keys <= set(calls[since:]), SYNC)

    def keys_of(items: list[Any]) -> set[str]:
        return {f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in items}

    with SharedInformerFactory(
        server.api_client(),
        tweak_list_options=lambda o: o.copy(label_selector=f"run={label}"),
        shard=first,
    ) as factory:
        informer = factory.informer(ConfigMap)
        informer.add_event_handler(
            on_delete=lambda obj: left.append(obj.key) if isinstance(obj, LeftShard) else None
        )
        loop: ReconcileLoop[str] = ReconcileLoop("move", reconcile, workers=4)
        loop.watch(informer)
        assert loop.release(Shard.static(0, 1), timeout=0)  # nothing is ours yet
        factory.start()
        factory.wait_for_cache_sync_or_raise(SYNC)
        stop = threading.Event()
        worker = threading.Thread(target=loop.run, args=(stop,))
        worker.start()
        try:
            loop.acquire(first)
            _, _, items = list_run(server, label)
            in_first = keys_of([o for o in items if first.contains(o)])
            in_middle = keys_of([o for o in items if middle.contains(o)])
            assert reconciled(in_first, 0)

            assert loop.release(first, timeout=SYNC)
            with lock:
                released_at = len(calls)
            # Changed while released: held back, reconciled once acquired.
            both = sorted(in_first & in_middle)[:5]
            cluster = RealCluster(server)
            try:
                for key in both:
                    ns, name = key.split("/")
                    current = cluster.get("v1", "ConfigMap", name, ns)
                    cluster.replace({**current, "data": {"moved": "yes"}})
            finally:
                cluster.close()
            wait_for(lambda: set(both) <= loop.queue.held(), "the changed keys to be held")
            factory.set_shard(middle)
            factory.wait_for_cache_sync_or_raise(SYNC)
            _, _, items = list_run(server, label)  # the patches above are newer
            expected = {object_uid(o) for o in items if middle.contains(o)}
            assert cached_uids(factory) == expected
            if gate == "on":
                served, _, _ = list_run(server, label, middle)
                assert served == expected  # the server's selection
            health = informer.health()
            assert health.shard == middle.describe() and not health.resharding
            assert health.shard_filter == ("server" if gate == "on" else "client")
            wait_for(lambda: set(left) == in_first - in_middle, "LeftShard for what left")
            with lock:
                assert calls[released_at:] == []  # nothing reconciled while released
            loop.acquire(middle)
            assert reconciled(in_middle, released_at)
            assert loop.queue.held() <= in_first - in_middle  # what left stays held back
            assert informer.metrics().left_shard == len(in_first - in_middle)
        finally:
            stop.set()
            worker.join(SYNC)
        assert not worker.is_alive()
