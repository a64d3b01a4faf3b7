"""Sharded informers (section N): the hash, the selector, static shards, and the client-side
filter that stands in for a server that does not apply the selector.

The server side is checked against a real kube-apiserver in tests/e2e/test_shard_real.py;
here the source is the in-memory FakeListerWatcher (which, as a server without the
ShardedListAndWatch gate, ignores the selector) or a subclass that honours and echoes it."""

from __future__ import annotations

import inspect
import itertools
import logging
import random
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import meta_namespace_key, object_name
from kubeinformers.runtime.api.listwatch import (
    INITIAL_EVENTS_END_ANNOTATION,
    ListOptions,
    ObjectList,
    ServesResource,
    Watch,
    WatchEvent,
)
from kubeinformers.runtime.api.shard import HASH_SPACE, Shard, ShardRange, fnv1a_64
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.client.shard import ShardedListerWatcher
from kubeinformers.runtime.metrics import register_prometheus, unregister_prometheus
from kubeinformers.testing.fake import FakeListerWatcher, FakeWatch
from tests.runtime._informer_support import WAIT

Obj = dict[str, Any]
HALF = Shard.static(0, 2)


def obj(name: str, *, ns: str = "default", uid: str | None = None, value: int = 0) -> Obj:
    return {
        "metadata": {"name": name, "namespace": ns, "uid": uid or str(uuid.uuid4())},
        "value": value,
    }


def uid_in(shard: Shard, inside: bool, rng: random.Random) -> str:
    """A uid whose hash is (or is not) in `shard`."""
    while True:
        uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if shard.contains_hash(fnv1a_64(uid)) == inside:
            return uid


class EchoingSource(FakeListerWatcher[Obj]):
    """A fake API server with the ShardedListAndWatch gate on: it applies the selector to
    lists and watches and echoes it in the list's shardInfo (`filter_watches=False`: one whose
    watches come from a server without it, restarted or behind the same load balancer)."""

    filter_watches = True

    def list(self, options: ListOptions) -> ObjectList[Obj]:
        page = super().list(options)
        if options.shard_selector:
            shard = Shard.parse(options.shard_selector)
            page.items = [o for o in page.items if shard.contains(o)]
            page.shard_selector = options.shard_selector
        return page

    def watch(self, options: ListOptions) -> Watch[Obj]:  # type: ignore[override]
        w = super().watch(options)
        if not options.shard_selector or not self.filter_watches:
            return w
        return _FilteredWatch(w, Shard.parse(options.shard_selector))


class _FilteredWatch:
    """The events of a server-side sharded watch."""

    def __init__(self, inner: FakeWatch[Obj], shard: Shard) -> None:
        self.inner = inner
        self.shard = shard

    def __iter__(self) -> Iterator[WatchEvent[Obj]]:
        for event in self.inner:
            if event.type in ("BOOKMARK", "ERROR") or self.shard.contains(event.object):
                yield event

    def stop(self) -> None:
        self.inner.stop()


def keys(informer: SharedIndexInformer[Obj]) -> set[str]:
    return {meta_namespace_key(o) for o in informer.get_store().list()}


class Running:
    """An informer running on its own thread until the block ends."""

    def __init__(self, informer: SharedIndexInformer[Obj]) -> None:
        self.informer = informer
        self.stop = threading.Event()
        self.thread = threading.Thread(target=informer.run, args=(self.stop,), daemon=True)

    def __enter__(self) -> SharedIndexInformer[Obj]:
        self.thread.start()
        deadline = threading.Event()
        for _ in range(int(WAIT / 0.01)):
            if self.informer.has_synced():
                break
            deadline.wait(0.01)
        assert self.informer.has_synced()
        return self.informer

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(WAIT)
        assert not self.thread.is_alive()


def wait_until(predicate: Any, what: str) -> None:
    pause = threading.Event()
    for _ in range(int(WAIT / 0.01)):
        if predicate():
            return
        pause.wait(0.01)
    raise AssertionError(f"timed out waiting for {what}")


# --------------------------------------------------------------------------- N1: hash, selector


def test_n1_hash_is_fnv1a_64_of_the_utf8_bytes() -> None:
    # The FNV-1a reference vectors, and the namespace hashes a real 1.36 server placed.
    assert fnv1a_64("") == 0xCBF29CE484222325
    assert fnv1a_64("a") == 0xAF63DC4C8601EC8C
    assert fnv1a_64("foobar") == 0x85944171F73967E8
    assert fnv1a_64("dd") < 0x8000000000000000 <= fnv1a_64("kube-system")
    assert fnv1a_64("é") == fnv1a_64("\u00e9")  # UTF-8 bytes, not code points


def test_n1_selector_is_what_the_server_accepts() -> None:
    assert HALF.selector() == (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
    )
    assert Shard.static(1, 2).selector() == (
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
    )
    two = Shard(
        [ShardRange(0xC << 60, HASH_SPACE), ShardRange(0, 1 << 62)],
        key="namespace",
    )
    assert two.selector() == (
        "shardRange(object.metadata.namespace, '0x0000000000000000', '0x4000000000000000')"
        " || shardRange(object.metadata.namespace, '0xc000000000000000', '0x10000000000000000')"
    )
    assert Shard.parse(two.selector()) == two
    assert two.fraction == 0.5


def test_n1_touching_ranges_merge_and_bad_shards_are_refused() -> None:
    assert Shard([ShardRange(0, 10), ShardRange(10, 20), ShardRange(5, 8)]).ranges == (
        ShardRange(0, 20),
    )
    with pytest.raises(ValueError, match="at least one range"):
        Shard([])
    with pytest.raises(ValueError, match="start < end"):
        ShardRange(5, 5)
    with pytest.raises(ValueError, match="start < end"):
        ShardRange(0, HASH_SPACE + 1)
    with pytest.raises(ValueError, match='"uid" or "namespace"'):
        Shard([ShardRange(0, 1)], key="name")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unsupported shard field path"):
        Shard.parse("shardRange(object.metadata.name, '0x0000000000000000', '0x1000000000000000')")
    with pytest.raises(ValueError, match="one field path throughout"):
        Shard.parse(f"{HALF.selector()} || {Shard.static(1, 2, key='namespace').selector()}")
    with pytest.raises(ValueError, match="not a shard selector"):
        Shard.parse("garbage")
    # Bounds as the API server requires them: 0x and 16 hex digits (it refuses the rest).
    with pytest.raises(ValueError, match="did you mean '0x0000000000000000'"):
        Shard.parse("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')")
    with pytest.raises(ValueError, match="hexEnd must be a 0x-prefixed 16-digit hex value"):
        Shard.parse("shardRange(object.metadata.uid, '0x0000000000000000', '0X8000000000000000')")


def test_n1_contains_hashes_uid_or_namespace() -> None:
    rng = random.Random(1)
    inside = obj("a", uid=uid_in(HALF, True, rng))
    outside = obj("b", uid=uid_in(HALF, False, rng))
    assert HALF.contains(inside) and not HALF.contains(outside)
    by_ns = Shard.static(0, 2, key="namespace")
    assert by_ns.contains(obj("x", ns="dd")) and not by_ns.contains(obj("y", ns="kube-system"))
    # Cluster-scoped objects hash "": all in one shard.
    cluster = {"metadata": {"name": "node-1", "uid": "u"}}
    assert by_ns.hash_of(cluster) == fnv1a_64("")


# --------------------------------------------------------------------------- N4: static shards


@pytest.mark.parametrize("total", [1, 2, 3, 5, 7, 16])
def test_n4_static_shards_partition_every_set(total: int) -> None:
    shards = [Shard.static(i, total) for i in range(total)]
    # The ranges tile [0, 2**64) with no gap and no overlap...
    bounds = [(s.ranges[0].start, s.ranges[0].end) for s in shards]
    assert bounds[0][0] == 0 and bounds[-1][1] == HASH_SPACE
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
    # ...so each of 5,000 objects (and the range edges themselves) is in exactly one shard.
    rng = random.Random(total)
    uids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(5000)]
    for uid in uids:
        assert sum(s.contains({"metadata": {"uid": uid}}) for s in shards) == 1
    for start, _ in bounds:
        for h in (start, start - 1):
            if 0 <= h < HASH_SPACE:
                assert sum(s.contains_hash(h) for s in shards) == 1
    # and evenly: within 15% of the mean for this many objects
    counts = [sum(s.contains({"metadata": {"uid": u}}) for u in uids) for s in shards]
    assert all(abs(c - 5000 / total) <= 0.15 * 5000 / total + 10 for c in counts), counts


def test_n4_static_is_kube_state_metrics_shard_of_total() -> None:
    assert Shard.static(2, 5).ranges == (ShardRange(2 * HASH_SPACE // 5, 3 * HASH_SPACE // 5),)
    assert Shard.static(0, 1).fraction == 1.0
    for bad in [(5, 5), (-1, 5), (0, 0), (True, 2)]:
        with pytest.raises(ValueError):
            Shard.static(*bad)


# --------------------------------------------------------------------------- N2, N3: filtering


def prometheus_sample(name: str) -> float | None:
    prometheus_client = pytest.importorskip("prometheus_client")
    registry = prometheus_client.CollectorRegistry()
    register_prometheus(registry)
    try:
        value: float | None = registry.get_sample_value(
            name, {"informer": "pods", "resource": "dict"}
        )
        return value
    finally:
        unregister_prometheus(registry)


def test_n2_n5_a_server_that_ignores_the_selector_is_filtered_on_the_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rng = random.Random(2)
    mine = [obj(f"in-{i}", uid=uid_in(HALF, True, rng)) for i in range(20)]
    others = [obj(f"out-{i}", uid=uid_in(HALF, False, rng)) for i in range(20)]
    source = FakeListerWatcher(mine + others)
    informer: SharedIndexInformer[Obj] = SharedIndexInformer(source, dict, name="pods", shard=HALF)
    caplog.set_level(logging.INFO, logger="kubeinformers.shard")
    with Running(informer):
        assert keys(informer) == {f"default/in-{i}" for i in range(20)}
        # The selector went out with the list and the watch.
        assert source.list_calls[0].shard_selector == HALF.selector()
        wait_until(lambda: source.watch_calls, "the watch")
        assert source.watch_calls[0].shard_selector == HALF.selector()
        health = informer.health()
        assert (health.shard, health.shard_filter) == (HALF.describe(), "client")
        assert informer.shard == HALF
        metrics = informer.metrics()
        assert (metrics.shard_filter, metrics.out_of_shard) == ("client", 20)
        assert prometheus_sample("kubeinformers_informer_out_of_shard_objects_total") == 20
        assert prometheus_sample("kubeinformers_informer_shard_client_filter") == 1
    told = [r for r in caplog.records if r.levelno == logging.INFO]
    assert len(told) == 1, [r.getMessage() for r in told]
    assert "pods: the API server does not honour shardSelector" in told[0].getMessage()
    assert "selecting shard uid in [0x0000000000000000, 0x8000000000000000)" in (
        told[0].getMessage()
    )


def test_n3_watch_events_outside_the_shard_never_reach_the_cache() -> None:
    rng = random.Random(3)
    source = FakeListerWatcher[Obj]()
    informer: SharedIndexInformer[Obj] = SharedIndexInformer(source, dict, name="pods", shard=HALF)
    seen: list[tuple[str, str]] = []
    done = threading.Event()

    def record(kind: str) -> Any:
        def f(o: Any, *rest: Any) -> None:
            target = rest[0] if kind == "update" else o
            seen.append((kind, meta_namespace_key(target)))
            if meta_namespace_key(target) == "default/last":
                done.set()

        return f

    informer.add_event_handler(
        on_add=record("add"), on_update=record("update"), on_delete=record("delete")
    )
    with Running(informer):
        wait_until(lambda: source.open_watches() == 1, "the watch")
        outside = source.add(obj("out", uid=uid_in(HALF, False, rng)))
        inside = source.add(obj("in", uid=uid_in(HALF, True, rng)))
        source.modify({**outside, "value": 1})
        source.modify({**inside, "value": 1})
        source.delete(outside)
        source.delete(inside)
        source.add(obj("last", uid=uid_in(HALF, True, rng)))
        assert done.wait(WAIT)
        assert keys(informer) == {"default/last"}
    assert seen == [
        ("add", "default/in"),
        ("update", "default/in"),
        ("delete", "default/in"),
        ("add", "default/last"),
    ]
    assert isinstance(informer.lister_watcher, ShardedListerWatcher)
    assert informer.lister_watcher.dropped == 3


def test_n2_a_server_that_echoes_the_selector_is_trusted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rng = random.Random(4)
    source = EchoingSource(
        [obj(f"in-{i}", uid=uid_in(HALF, True, rng)) for i in range(5)]
        + [obj(f"out-{i}", uid=uid_in(HALF, False, rng)) for i in range(5)]
    )
    informer: SharedIndexInformer[Obj] = SharedIndexInformer(source, dict, name="pods", shard=HALF)
    caplog.set_level(logging.INFO, logger="kubeinformers.shard")
    with Running(informer):
        assert keys(informer) == {f"default/in-{i}" for i in range(5)}
        assert informer.health().shard_filter == "server"
        assert informer.metrics().out_of_shard == 0
        assert prometheus_sample("kubeinformers_informer_shard_client_filter") == 0
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]


def test_n3_an_object_outside_the_shard_from_a_filtering_server_turns_the_client_filter_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The server echoed the selector on the list, then (restarted without the gate) streams
    everything: the stray object is dropped and the client takes over, said once at INFO."""
    rng = random.Random(5)
    source = EchoingSource([obj("in-0", uid=uid_in(HALF, True, rng))])
    source.filter_watches = False
    informer: SharedIndexInformer[Obj] = SharedIndexInformer(source, dict, name="pods", shard=HALF)
    caplog.set_level(logging.INFO, logger="kubeinformers.shard")
    with Running(informer):
        assert informer.health().shard_filter == "server"
        wait_until(lambda: source.open_watches() == 1, "the watch")
        source.add(obj("stray", uid=uid_in(HALF, False, rng)))
        source.add(obj("in-1", uid=uid_in(HALF, True, rng)))
        wait_until(lambda: "default/in-1" in keys(informer), "in-1")
        assert keys(informer) == {"default/in-0", "default/in-1"}
        assert informer.health().shard_filter == "client"
    told = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert len(told) == 1 and "sent an object outside the shard" in told[0], told


@pytest.mark.parametrize("echo", [True, False])
def test_n3_watch_list_initial_events_are_hashed_unless_the_probe_saw_the_echo(
    echo: bool,
) -> None:
    rng = random.Random(6)
    objects = [obj(f"in-{i}", uid=uid_in(HALF, True, rng)) for i in range(3)] + [
        obj(f"out-{i}", uid=uid_in(HALF, False, rng)) for i in range(3)
    ]
    source: FakeListerWatcher[Obj] = (
        EchoingSource(objects, watch_list=True)
        if echo
        else FakeListerWatcher(objects, watch_list=True)
    )
    informer: SharedIndexInformer[Obj] = SharedIndexInformer(
        source, dict, name="pods", shard=HALF, use_watch_list=True
    )
    with Running(informer):
        assert keys(informer) == {f"default/in-{i}" for i in range(3)}
        # No LIST of the state: one probe of one item, then the watch-list.
        assert [(o.limit, o.shard_selector) for o in source.list_calls] == [(1, HALF.selector())]
        assert source.watch_calls[0].send_initial_events
        assert informer.health().shard_filter == ("server" if echo else "client")
        lw = informer.lister_watcher
        assert isinstance(lw, ShardedListerWatcher)
        assert lw.dropped == (0 if echo else 3)


def test_n3_trusted_initial_events_end_at_the_bookmark() -> None:
    """After the initial-events-end bookmark a trusted watch-list checks every event again."""
    rng = random.Random(7)
    source = FakeListerWatcher[Obj]()
    lw = ShardedListerWatcher(source, HALF)
    events = [
        WatchEvent("ADDED", obj("trusted", uid=uid_in(HALF, False, rng))),
        WatchEvent(
            "BOOKMARK",
            {
                "metadata": {
                    "resourceVersion": "1",
                    "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"},
                }
            },
        ),
        WatchEvent("ADDED", obj("checked", uid=uid_in(HALF, False, rng))),
        WatchEvent("ADDED", obj("kept", uid=uid_in(HALF, True, rng))),
    ]

    class Stream:
        def __iter__(self) -> Iterator[WatchEvent[Obj]]:
            return iter(events)

        def stop(self) -> None:
            pass

    from kubeinformers.runtime.client.shard import _ShardedWatch

    got = list(_ShardedWatch(Stream(), lw, trust_initial=True))
    names = [e.object["metadata"].get("name") for e in got if isinstance(e.object, dict)]
    assert names == ["trusted", None, "kept"]


def test_n6_the_wrapper_passes_on_the_sources_capabilities() -> None:
    source = FakeListerWatcher[Obj]()
    lw = ShardedListerWatcher(source, HALF)
    assert lw.is_watch_list_semantics_unsupported() is True
    assert not hasattr(lw, "resource")  # the fake serves no APIResource
    with pytest.raises(TypeError, match="must be a Shard"):
        ShardedListerWatcher(source, "0 of 2")  # type: ignore[arg-type]


class _FullSource(FakeListerWatcher[Obj]):
    """A source with every capability the informer asks a source about."""

    def __init__(self) -> None:
        super().__init__()
        from kubeinformers.runtime.api.resource import APIResource

        self.resource = APIResource(
            group="", version="v1", resource="pods", kind="Pod", namespaced=True
        )
        self.decode_errors = 3
        self.waited: list[float] = []

    def wait_for_new_credentials(self, stop: threading.Event, timeout: float) -> bool:
        self.waited.append(timeout)
        return True


def _has_statically(obj: object, name: str) -> bool:
    """What Python 3.12+ protocol checks see: attributes found without calling anything."""
    try:
        inspect.getattr_static(obj, name)
    except AttributeError:
        return False
    return True


@pytest.mark.parametrize("source", [FakeListerWatcher[Obj](), _FullSource()], ids=["bare", "full"])
def test_n6_the_wrapper_offers_what_its_source_does_to_the_protocol_checks_of_every_python(
    source: FakeListerWatcher[Obj],
) -> None:
    """Since Python 3.12 a runtime protocol check sees only the attributes an object has of
    its own or its class's: a property that raises still matches, `__getattr__` delegation
    does not. The sharded source's `resource` is there exactly when its source serves one
    (a property raising AttributeError matched every source on 3.12+, and a sharded
    informer's metrics() failed on a source without one); the credential wait and the count
    of undecodable objects are passed on (3.12+ saw neither through `__getattr__`)."""
    lw = ShardedListerWatcher(source, HALF)
    assert _has_statically(lw, "resource") == _has_statically(source, "resource")
    assert isinstance(lw, ServesResource) == isinstance(source, ServesResource)
    for name in ("decode_errors", "wait_for_new_credentials", "cancel_requests"):
        assert _has_statically(lw, name)
    assert lw.decode_errors == getattr(source, "decode_errors", 0)
    stop = threading.Event()
    stop.set()
    assert lw.wait_for_new_credentials(stop, 5.0) is isinstance(source, _FullSource)
    informer: SharedIndexInformer[Obj] = SharedIndexInformer(source, dict, shard=HALF)
    metrics = informer.metrics()  # raised AttributeError on 3.12+ for the bare source
    assert metrics.resource == ("v1/pods" if isinstance(source, _FullSource) else "dict")
    assert metrics.invalid_objects == getattr(source, "decode_errors", 0)


def test_n6_every_factory_shards_every_informer_it_creates() -> None:
    from kubernetes.client import ApiClient, Configuration

    from kubeinformers.runtime.api.resource import APIResource
    from kubeinformers.runtime.cache.dynamic import (
        DynamicSharedInformerFactory,
        MetadataSharedInformerFactory,
    )
    from kubeinformers.runtime.cache.factory import SharedInformerFactory

    config = Configuration()
    config.host = "https://127.0.0.1:1"  # never contacted: nothing is started
    api = ApiClient(config)
    widgets = APIResource("example.com", "v1", "widgets", "Widget", True)
    typed = SharedInformerFactory(api, shard=HALF)
    assert typed.shard == HALF
    assert typed.typed_informer(widgets, dict).shard == HALF
    for factory in (
        DynamicSharedInformerFactory(api, shard=HALF),
        MetadataSharedInformerFactory(api, shard=HALF),
    ):
        informer = factory.for_resource(widgets).informer()
        assert informer.shard == HALF
        lw = informer.lister_watcher
        assert isinstance(lw, ShardedListerWatcher)
        assert lw.resource == widgets  # metrics still label the resource
    assert SharedInformerFactory(api).typed_informer(widgets, dict).shard is None
    with pytest.raises(TypeError, match="must be a Shard"):
        SharedInformerFactory(api, shard="1/2")  # type: ignore[arg-type]


def test_n5_factory_health_describes_the_shard_and_its_filter() -> None:
    from kubeinformers.runtime.cache.health import FactoryHealth, InformerHealth

    line = FactoryHealth(
        {
            "pods": InformerHealth(
                "pods", True, 0.5, None, 0, shard=HALF.describe(), shard_filter="server"
            ),
            "nodes": InformerHealth("nodes", True, 0.5, None, 0),
        }
    ).describe()
    assert "pods: ok synced=True" in line
    assert f"shard={HALF.describe()} filter=server" in line
    assert "nodes: ok" in line and line.count("shard=") == 1


# --------------------------------------------------------------------------- LocalApiServer


def _configmaps(server: Any, count: int) -> list[dict[str, Any]]:
    return [
        server.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "namespace": "default"},
            }
        )
        for i in range(count)
    ]


@pytest.mark.parametrize("gate", [True, False])
def test_n7_local_api_server_serves_shards_as_kube_apiserver_does(
    local_api_server_factory: Any, gate: bool
) -> None:
    """LocalApiServer(sharded_list_and_watch=True) applies and echoes the selector as the real
    server with the gate does (tests/e2e/test_shard_real.py); without it, it ignores it."""
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.generated.informers import SharedInformerFactory

    server = local_api_server_factory(sharded_list_and_watch=gate)
    created = _configmaps(server, 60)
    with SharedInformerFactory(server.api_client(), shard=HALF) as factory:
        informer = factory.informer(ConfigMap)
        factory.start()
        factory.wait_for_cache_sync_or_raise(WAIT)
        expected = {o["metadata"]["uid"] for o in created if HALF.contains(o)}
        assert 0 < len(expected) < 60
        cached = {o.metadata.uid for o in informer.get_store().list() if o.metadata}
        assert cached == expected
        assert informer.health().shard_filter == ("server" if gate else "client")
        late = _configmaps_named(server, ["late-a", "late-b", "late-c", "late-d"])
        expected |= {o["metadata"]["uid"] for o in late if HALF.contains(o)}
        wait_until(
            lambda: {o.metadata.uid for o in informer.get_store().list() if o.metadata} == expected,
            "the late ConfigMaps of the shard",
        )
        lw = informer.lister_watcher
        assert isinstance(lw, ShardedListerWatcher)
        assert (lw.dropped == 0) == gate


def _configmaps_named(server: Any, names: list[str]) -> list[dict[str, Any]]:
    return [
        server.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": n, "namespace": "default"},
            }
        )
        for n in names
    ]


@pytest.mark.parametrize("gate", [True, False])
def test_m1_n3_a_write_of_another_shards_object_does_not_wait_for_the_cache(
    local_api_server_factory: Any, gate: bool
) -> None:
    """M1: a sharded factory's informer never sees an object of another shard, so a write of
    one through `factory.client()` has nothing to wait for. It waited for the informer until
    `read_your_writes_timeout` and raised ReadYourWritesTimeout (found against kube-apiserver
    1.36: about half of the creates of a `Shard.static(0, 2)` factory's client)."""
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.generated.informers import SharedInformerFactory
    from kubeinformers.generated.meta.v1 import ObjectMeta

    server = local_api_server_factory(sharded_list_and_watch=gate)
    with SharedInformerFactory(server.api_client(), shard=HALF) as factory:
        lister = factory.lister(ConfigMap)
        factory.start()
        factory.wait_for_cache_sync_or_raise(WAIT)
        client = factory.client(read_your_writes_timeout=5.0)  # the old code timed out
        outside = 0
        for i in range(20):
            made = client.create(ConfigMap(metadata=ObjectMeta(name=f"w{i}", namespace="default")))
            cached = {object_name(o) for o in lister.config_maps("default").list()}
            assert (f"w{i}" in cached) == HALF.contains(made)  # read your writes in the shard
            outside += not HALF.contains(made)
            client.delete(ConfigMap, f"w{i}", namespace="default")
        assert 0 < outside < 20  # both kinds written (20 random uids: all on one side, 2e-6)


def test_n7_local_api_server_refuses_a_malformed_selector_as_kube_apiserver_does(
    local_api_server_factory: Any,
) -> None:
    from kubeinformers.generated.registry import RESOURCES
    from kubeinformers.runtime.api.errors import ApiStatusError
    from kubeinformers.runtime.client.transport import ApiListerWatcher

    server = local_api_server_factory(sharded_list_and_watch=True)
    configmaps = next(r for r in RESOURCES if r.resource == "configmaps" and not r.group)
    lw = ApiListerWatcher(server.api_client(), configmaps, dict)
    bad = "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"
    with pytest.raises(ApiStatusError) as err:
        lw.list(ListOptions(shard_selector=bad))
    assert err.value.code == 500
    assert "invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value" in str(
        err.value
    )
