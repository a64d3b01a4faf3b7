"""A short fault run against a real kube-apiserver + etcd (issue 13): informers survive what a
cluster does to them, and say so calmly.

A private server (the faults are destructive) serves the demo CRDs; the informers reach it
through a TCP proxy (tests/support/tcp_proxy.py) that can cut their connections or refuse new
ones, while a writer keeps creating, updating and deleting configmaps and widgets. Faults, in
order, mid-stream: every connection reset; the apiserver SIGKILLed and restarted; etcd
compacted and the connections reset (the watch cache still serves the old resourceVersions);
an outage in which objects are deleted, the apiserver is restarted (its new watch cache starts
after the informers' resourceVersion) and etcd compacted: the informer relists (D8, D14) and
reports the deletions it missed as tombstones (A5). Then the 410 itself: after compaction and
a restart, a list or watch from a resourceVersion the server no longer has answers 410 Expired.

End state: every lister equals the server, every handler's replayed view equals it (nothing
lost, nothing phantom). Logging (issue 13 item 6): no ERROR, no urllib3 WARNING; the only
WARNINGs are the one-per-outage lines, and each informer says when the server is back.
"""

from __future__ import annotations

import functools
import itertools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from examples.informers.informers import CustomInformers
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    meta_namespace_key,
    object_resource_version,
)
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.reflector import reflector as reflector_module
from kubeinformers.runtime.reflector.backoff import Backoff
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.soak.world import WIDGET_CRD
from tests.support.cluster import RealCluster
from tests.support.tcp_proxy import TcpProxy
from tests.support.view import View

pytestmark = pytest.mark.real_apiserver

CM = ("v1", "ConfigMap")
WIDGET = ("demo.kubeinformers.io/v1", "Widget")
OUTAGE_LINES = ("the API server is unavailable", "the API server is still unavailable")


@dataclass
class Faulty:
    real: RealApiServer
    cluster: RealCluster
    proxy: TcpProxy

    def proxied_api(self) -> Any:
        """An admin client that reaches the apiserver through the proxy."""
        import kubernetes

        cfg = self.real.configuration()
        cfg.host = self.proxy.url
        return kubernetes.client.ApiClient(cfg)


@pytest.fixture(scope="module")
def faulty(real_apiserver_assets: Any) -> Iterator[Faulty]:
    with RealApiServer(real_apiserver_assets) as real:
        cluster = RealCluster(real)
        cluster.create(yaml.safe_load(WIDGET_CRD.read_text()))
        port = int(real.server.rsplit(":", 1)[1])
        with TcpProxy(("127.0.0.1", port)) as proxy:
            yield Faulty(real, cluster, proxy)
        cluster.close()


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """client-go's backoff shape (factor 2, jitter 1), 16x shorter."""
    monkeypatch.setattr(
        reflector_module, "Backoff", functools.partial(Backoff, initial=0.05, cap=1.0)
    )


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        tick.wait(0.05)


def _manifest(kind: tuple[str, str], name: str, ns: str, gen: int) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": kind[0],
        "kind": kind[1],
        "metadata": {"name": name, "namespace": ns, "labels": {"gen": str(gen)}},
    }
    if kind == CM:
        obj["data"] = {"gen": str(gen)}
    else:
        obj["spec"] = {"size": "small", "replicas": gen % 7}
    return obj


class Writer:
    """Creates, updates and deletes configmaps and widgets in one namespace until stopped."""

    def __init__(self, cluster: RealCluster, ns: str, seed: int) -> None:
        self.cluster, self.ns, self.rng = cluster, ns, random.Random(seed)
        self.live: dict[tuple[str, str], list[str]] = {CM: [], WIDGET: []}
        self.names = itertools.count()
        self.writes = 0
        self.error: BaseException | None = None
        self._go = threading.Event()
        self._idle = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="fault-writer", daemon=True)

    def create(self, kind: tuple[str, str]) -> None:
        name = f"{kind[1].lower()}-{next(self.names)}"
        self.cluster.create(_manifest(kind, name, self.ns, 0))
        self.live[kind].append(name)
        self.writes += 1

    def delete(self, kind: tuple[str, str]) -> None:
        names = self.live[kind]
        name = names.pop(self.rng.randrange(len(names)))
        self.cluster.delete(kind[0], kind[1], name, self.ns)
        self.writes += 1

    def update(self, kind: tuple[str, str]) -> None:
        name = self.rng.choice(self.live[kind])
        obj = self.cluster.get(kind[0], kind[1], name, self.ns)
        gen = int(obj["metadata"]["labels"]["gen"]) + 1
        self.cluster.replace({**obj, **_manifest(kind, name, self.ns, gen), "metadata": {
            **obj["metadata"], "labels": {"gen": str(gen)}}})  # fmt: skip
        self.writes += 1

    def one(self) -> None:
        kind = self.rng.choice((CM, CM, WIDGET))
        roll, count = self.rng.random(), len(self.live[kind])
        if count < 20 or roll < 0.35:
            self.create(kind)
        elif roll < 0.75:
            self.update(kind)
        else:
            self.delete(kind)

    def start(self) -> None:
        self._go.set()
        self._thread.start()

    def pause(self) -> None:
        self._go.clear()
        self._idle.wait(120)

    def resume(self) -> None:
        self._idle.clear()
        self._go.set()

    def stop(self) -> None:
        self._stop.set()
        self._go.set()
        if self._thread.ident is None:
            return  # never started
        self._thread.join(120)
        assert not self._thread.is_alive(), "the writer did not stop"

    def wrote(self, n: int) -> Callable[[], bool]:
        target = self.writes + n
        return lambda: self.writes >= target or self.error is not None

    def _loop(self) -> None:
        while not self._stop.is_set():
            if not self._go.is_set():
                self._idle.set()
                self._go.wait()
                continue
            try:
                self.one()
            except BaseException as err:  # reported by the test
                self.error = err
                self._idle.set()
                return
            self._stop.wait(0.005)


class Tombstones:
    def __init__(self) -> None:
        self.keys: list[str] = []

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.keys.append(obj.key)


def server_state(cluster: RealCluster, kind: tuple[str, str], ns: str) -> dict[str, str]:
    return {
        f"{ns}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
        for o in cluster.list(kind[0], kind[1], ns)
    }


def cache_state(informer: SharedIndexInformer[Any]) -> dict[str, str]:
    return {
        meta_namespace_key(o): object_resource_version(o) for o in informer.get_indexer().list()
    }


_NAMESPACES = itertools.count()


@pytest.mark.parametrize("watch_list", [True, False], ids=["watchlist", "list-watch"])
def test_fault_run_ends_with_every_cache_and_view_equal_to_the_server(
    faulty: Faulty,
    fast_backoff: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    watch_list: bool,
) -> None:
    monkeypatch.setenv("KUBE_FEATURE_WatchListClient", "true" if watch_list else "false")
    caplog.set_level(logging.DEBUG, logger="kubeinformers")
    caplog.set_level(logging.INFO, logger="urllib3")
    real, cluster, proxy = faulty.real, faulty.cluster, faulty.proxy
    ns = cluster.namespace(f"faults-{next(_NAMESPACES)}")
    writer = Writer(cluster, ns, seed=13)
    for _ in range(60):
        writer.create(CM)
    for _ in range(20):
        writer.create(WIDGET)

    api = faulty.proxied_api()
    factory = SharedInformerFactory(api, namespace=ns)
    watched: dict[tuple[str, str], SharedIndexInformer[Any]] = {
        CM: factory.core().v1().config_maps().informer(),
        WIDGET: CustomInformers(factory).demo().v1().widgets().informer(),
    }
    views = {kind: View() for kind in watched}
    tombstones = {kind: Tombstones() for kind in watched}
    for kind, informer in watched.items():
        v = views[kind]
        informer.add_event_handler(on_add=v.on_add, on_update=v.on_update, on_delete=v.on_delete)
        informer.add_event_handler(on_delete=tombstones[kind].on_delete)
    outages = 0
    try:
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        writer.start()
        wait_for(writer.wrote(40), "writes before the faults")

        # 1. every connection reset mid-stream: re-watch from the last resourceVersion
        assert proxy.drop_all() >= 2
        wait_for(writer.wrote(40), "writes after the reset")

        # 2. the apiserver crashes (SIGKILL) mid-stream and comes back; writes wait for it
        real.restart_apiserver(kill=True)
        outages += 1
        wait_for(writer.wrote(40), "writes after the crash")

        # 3. etcd compacted, connections reset: the watch cache still has the history
        real.compact_etcd()
        proxy.drop_all()
        wait_for(writer.wrote(40), "writes after the compaction")

        # 4. an outage in which objects are deleted and the history is lost: 410, relist,
        # tombstones for what was deleted meanwhile
        writer.pause()
        relists_before = {k: i.metrics().relists for k, i in watched.items()}
        proxy.refuse(True)
        outages += 1
        missed = []
        for kind in (CM, CM, CM, WIDGET, WIDGET):
            name = writer.live[kind][0]
            cluster.delete(kind[0], kind[1], name, ns)
            writer.live[kind].remove(name)
            missed.append(f"{ns}/{name}")
        real.restart_apiserver()
        real.compact_etcd()
        proxy.refuse(False)
        writer.resume()
        wait_for(writer.wrote(40), "writes after the outage")
        writer.stop()
        assert writer.error is None, f"the writer failed: {writer.error!r}"

        for kind, informer in watched.items():
            expected = server_state(cluster, kind, ns)
            cache_ok = functools.partial(lambda i, e: cache_state(i) == e, informer, expected)
            view_ok = functools.partial(lambda v, e: v.snapshot() == e, views[kind], expected)
            wait_for(cache_ok, f"{kind[1]} cache = server")
            wait_for(view_ok, f"{kind[1]} handler view = server")
            assert informer.metrics().relists > relists_before[kind], "the outage ends in a relist"
        seen = {key for t in tombstones.values() for key in t.keys}
        assert set(missed) <= seen, "deletions missed while away come as tombstones (A5)"
    finally:
        writer.stop()
        factory.shutdown(timeout=30)
        api.close()

    # item 6: a transient outage reads as one calm line per informer, never an ERROR
    loud = [
        f"{r.name} {r.levelname}: {r.getMessage()[:200]}"
        for r in caplog.records
        if r.levelno >= logging.ERROR
        or (r.name.startswith("urllib3") and r.levelno >= logging.WARNING)
    ]
    assert loud == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert all(any(line in w for line in OUTAGE_LINES) for w in warnings), warnings
    for informer in watched.values():
        mine = [w for w in warnings if w.startswith(f"{informer.name}:")]
        assert 1 <= len(mine) <= outages, mine
        back_line = f"{informer.name}: the API server is back"
        back = [
            r
            for r in caplog.records
            if r.levelno == logging.INFO and r.getMessage().startswith(back_line)
        ]
        assert back, f"{informer.name} never said the server was back"


def test_a_too_old_resource_version_after_compaction_is_410_expired(faulty: Faulty) -> None:
    """D8/D14 on the real server: once etcd is compacted and the apiserver's watch cache
    starts after it (a restart), a list or watch from an older resourceVersion is 410 Expired
    (the list as an HTTP 410, the watch as an ERROR event), and the reflector's test for it
    (`is_expired`) recognises both."""
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.generated.core.v1.informers import ConfigMapInformer
    from kubeinformers.runtime.api.errors import ApiStatusError, is_expired
    from kubeinformers.runtime.api.listwatch import ListOptions
    from kubeinformers.runtime.client.transport import ApiListerWatcher

    real, cluster = faulty.real, faulty.cluster
    ns = cluster.namespace(f"expired-{next(_NAMESPACES)}")
    old = cluster.create(_manifest(CM, "old", ns, 0))["metadata"]["resourceVersion"]
    for i in range(3):
        cluster.create(_manifest(CM, f"newer-{i}", ns, 0))
    real.compact_etcd()
    real.restart_apiserver(kill=True)

    api = real.api_client()
    try:
        lw = ApiListerWatcher(api, ConfigMapInformer.RESOURCE, ConfigMap, namespace=ns)
        with pytest.raises(ApiStatusError) as listed:
            lw.list(ListOptions(resource_version=old, resource_version_match="Exact"))
        assert listed.value.code == 410 and is_expired(listed.value)
        assert "too old" in str(listed.value)

        watch = lw.watch(ListOptions(resource_version=old, timeout_seconds=5))
        try:
            event = next(iter(watch))
        finally:
            watch.stop()
        assert event.type == "ERROR"
        assert (event.object.code, event.object.reason) == (410, "Expired"), event.object
    finally:
        api.close()


_backing_off = threading.Event()


class _TenMinuteBackoff(Backoff):
    """Every reflector delay 10 minutes: an informer waits out the outage's backoff."""

    def next_delay(self) -> float:
        _backing_off.set()
        return 600.0


def test_m1_d4_the_first_write_after_an_apiserver_crash_returns_once_cached(
    faulty: Faulty, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server away (its connections refused), its apiserver restarted meanwhile, then
    back. The informer waits out its backoff (here 10 minutes per delay); a watch it reopens
    then may find its resourceVersion expired (the restarted watch cache begins after it:
    410), and a relist is due after another backoff delay. The first write through the
    factory's client ends the first wait and shortens the next: the write returns with the
    cache holding it. Before, it waited out the backoff (up to 30 s by default) and raised
    ReadYourWritesTimeout after 10 s."""
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.generated.meta.v1 import ObjectMeta

    monkeypatch.setattr(reflector_module, "Backoff", _TenMinuteBackoff)
    real, cluster, proxy = faulty.real, faulty.cluster, faulty.proxy
    ns = cluster.namespace(f"ryw-{next(_NAMESPACES)}")
    api = faulty.proxied_api()
    factory = SharedInformerFactory(api, namespace=ns)
    try:
        lister = factory.core().v1().config_maps().lister().config_maps(ns)
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        # A write the informer does not watch: the restarted watch cache begins after the
        # informer's resourceVersion, so its watch is 410 Expired and it must relist.
        cluster.create(_manifest(CM, "elsewhere", cluster.namespace(f"{ns}-other"), 0))
        _backing_off.clear()
        proxy.refuse(True)
        wait_for(_backing_off.is_set, "the informer to wait out its backoff")
        real.restart_apiserver(kill=True)
        proxy.refuse(False)
        client = factory.client(read_your_writes_timeout=60)
        mine = ConfigMap(metadata=ObjectMeta(name="after-the-crash", namespace=ns))
        written = client.create(mine)
        cached = lister.get("after-the-crash").metadata
        assert written.metadata is not None and cached is not None
        assert cached.resource_version == written.metadata.resource_version
    finally:
        factory.shutdown(timeout=30)
        api.close()
