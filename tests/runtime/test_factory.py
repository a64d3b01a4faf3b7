"""SharedInformerFactory (rules H2-H6) over in-memory FakeListerWatchers."""

from __future__ import annotations

import asyncio
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import Field

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.listwatch import ListOptions
from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.api.resource import APIResource, GroupVersionResource
from kubeinformers.runtime.cache import factory as factory_module
from kubeinformers.runtime.cache.factory import (
    CacheSyncTimeoutError,
    GenericInformer,
    NoInformerFoundError,
    SharedInformerFactory,
)
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.cache.listers import GenericLister, NotFoundError
from kubeinformers.runtime.cache.store import NAMESPACE_INDEX, meta_namespace_index_func
from kubeinformers.runtime.cache.transforms import strip_managed_fields
from kubeinformers.runtime.codec.compact import Compactor
from kubeinformers.runtime.codec.lazy import is_lazy
from kubeinformers.testing.fake import FakeListerWatcher
from kubeinformers.testing.local_api_server import LocalApiServer
from tests.support.waiting import eventually

PODS = GroupVersionResource("", "v1", "pods")
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
WIDGETS = GroupVersionResource("demo.kubeinformers.io", "v1", "widgets")

Obj = dict[str, Any]


def obj(ns: str, name: str, **labels: str) -> Obj:
    return {
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": labels,
            "managedFields": [{"manager": "test"}],
        }
    }


class Recorder:
    """A new_informer function that records the resync periods it was called with."""

    def __init__(self, lister_watcher: FakeListerWatcher[Obj]) -> None:
        self.lister_watcher = lister_watcher
        self.calls: list[float] = []

    def __call__(self, resync: float) -> SharedIndexInformer[Obj]:
        self.calls.append(resync)
        return SharedIndexInformer(
            self.lister_watcher, dict, resync, {NAMESPACE_INDEX: meta_namespace_index_func}
        )


@pytest.fixture
def factory() -> Iterator[SharedInformerFactory]:
    f = SharedInformerFactory(None, resync_period=30.0)
    yield f
    f.shutdown(timeout=10)


def test_h2_one_informer_per_gvr_first_creator_wins(factory: SharedInformerFactory) -> None:
    first = Recorder(FakeListerWatcher([obj("a", "x")]))
    second = Recorder(FakeListerWatcher())
    informer = factory.informer_for(PODS, first)
    assert factory.informer_for(PODS, second) is informer
    assert first.calls == [30.0]
    assert second.calls == []
    other = factory.informer_for(DEPLOYMENTS, second)
    assert other is not informer
    assert set(factory.informers()) == {PODS, DEPLOYMENTS}


def test_h2_custom_resync_per_gvr() -> None:
    f = SharedInformerFactory(None, 30.0, custom_resync={PODS: 5.0})
    pods, deployments = Recorder(FakeListerWatcher()), Recorder(FakeListerWatcher())
    f.informer_for(PODS, pods)
    f.informer_for(DEPLOYMENTS, deployments)
    assert pods.calls == [5.0]
    assert deployments.calls == [30.0]
    assert f.resync_period_for(PODS) == 5.0


def test_h2_h6_a_custom_resync_key_no_informer_can_have_is_refused() -> None:
    """A key spelled with the group "core" matched no informer and was silently ignored: the
    resource kept the default period. Refused with the GVR to write, as for_resource says."""
    core_pods = GroupVersionResource("core", "v1", "pods")
    with pytest.raises(ValueError, match=r'the core API group is "".*GroupVersionResource\(""'):
        SharedInformerFactory(None, 30.0, custom_resync={core_pods: 5.0})
    with pytest.raises(ValueError, match="must be >= 0"):
        SharedInformerFactory(None, 30.0, custom_resync={PODS: -1.0})


def test_h2_factory_transform_is_installed_on_new_informers() -> None:
    with SharedInformerFactory(None, transform=strip_managed_fields) as f:
        informer = f.informer_for(PODS, Recorder(FakeListerWatcher([obj("a", "x")])))
        f.start()
        assert f.wait_for_cache_sync(timeout=10) == {PODS: True}
        cached = informer.get_indexer().get_by_key("a/x")
        assert cached is not None
        assert "managedFields" not in cached["metadata"]


def test_h3_start_runs_each_informer_once_and_is_idempotent(
    factory: SharedInformerFactory,
) -> None:
    lw = FakeListerWatcher([obj("a", "x")])
    informer = factory.informer_for(PODS, Recorder(lw))
    factory.start()
    factory.start()
    assert factory.started() == [PODS]
    assert factory.wait_for_cache_sync(timeout=10) == {PODS: True}
    assert len(lw.list_calls) >= 1
    assert informer.get_indexer().list_keys() == ["a/x"]
    # A second run of the same informer would have logged and returned; one thread only.
    names = [t.name for t in threading.enumerate() if t.name == "informer-pods"]
    assert names == ["informer-pods"]


def test_h3_h5_informers_requested_after_start_are_started_at_once(
    factory: SharedInformerFactory,
) -> None:
    # H3 as documented: client-go waits for another Start (and its WaitForCacheSync skips the
    # late informer, whose lister answers nothing); a running factory here starts it (issue 18).
    factory.informer_for(PODS, Recorder(FakeListerWatcher([obj("a", "x")])))
    factory.start()
    late = factory.informer_for(DEPLOYMENTS, Recorder(FakeListerWatcher([obj("a", "d")])))
    assert sorted(factory.started(), key=str) == sorted([PODS, DEPLOYMENTS], key=str)
    assert factory.wait_for_cache_sync(timeout=10) == {PODS: True, DEPLOYMENTS: True}
    assert late.get_indexer().list_keys() == ["a/d"]
    factory.start()  # nothing left to start: idempotent
    assert [t.name for t in threading.enumerate()].count("informer-deployments.apps") == 1


def test_h3_a_factory_started_before_its_first_informer_starts_the_late_ones_too(
    factory: SharedInformerFactory,
) -> None:
    # H3: "a running factory starts them at once" also when start() found nothing to start;
    # the late informer was left unstarted, wait_for_cache_sync answered {} (all synced, to
    # `all(...)`) and its lister nothing: the silence H3 is there to prevent.
    factory.start()
    late = factory.informer_for(PODS, Recorder(FakeListerWatcher([obj("a", "x")])))
    assert factory.started() == [PODS]
    assert factory.wait_for_cache_sync(timeout=10) == {PODS: True}
    assert late.get_indexer().list_keys() == ["a/x"]


def test_h3_an_informer_requested_inside_async_with_of_an_empty_factory_is_started() -> None:
    async def main() -> dict[GroupVersionResource, bool]:
        f = SharedInformerFactory(None)
        async with f:  # nothing requested yet: starts nothing, syncs at once
            f.informer_for(PODS, Recorder(FakeListerWatcher([obj("a", "x")])))
            return await f.wait_for_cache_sync_async(timeout=10)

    assert asyncio.run(main()) == {PODS: True}


def test_h5_informers_requested_before_any_start_are_not_waited_for(
    factory: SharedInformerFactory,
) -> None:
    factory.informer_for(PODS, Recorder(FakeListerWatcher([obj("a", "x")])))
    assert factory.wait_for_cache_sync(timeout=0.2) == {}


def test_h3_start_is_a_no_op_after_shutdown() -> None:
    f = SharedInformerFactory(None)
    f.shutdown()
    informer = f.informer_for(PODS, Recorder(FakeListerWatcher([obj("a", "x")])))
    f.start()
    assert f.started() == []
    assert f.wait_for_cache_sync(timeout=0.2) == {}
    assert not informer.has_synced()


def test_h4_shutdown_stops_and_joins_every_informer_thread() -> None:
    f = SharedInformerFactory(None)
    informers = [
        f.informer_for(gvr, Recorder(FakeListerWatcher([obj("a", gvr.resource)])))
        for gvr in (PODS, DEPLOYMENTS, WIDGETS)
    ]
    f.start()
    assert all(f.wait_for_cache_sync(timeout=10).values())
    f.shutdown()
    assert all(informer.is_stopped() for informer in informers)
    assert not [t for t in threading.enumerate() if t.name.startswith("informer-")]
    f.shutdown()  # repeated: fine


def test_h4_concurrent_shutdowns_all_return() -> None:
    f = SharedInformerFactory(None)
    f.informer_for(PODS, Recorder(FakeListerWatcher([obj("a", "x")])))
    f.start()
    assert f.wait_for_cache_sync(timeout=10) == {PODS: True}
    done = threading.Barrier(4)
    errors: list[BaseException] = []

    def stop() -> None:
        try:
            f.shutdown(timeout=10)
            done.wait(timeout=10)
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=stop) for _ in range(3)]
    for t in threads:
        t.start()
    done.wait(timeout=10)
    for t in threads:
        t.join(10)
    assert not errors
    assert f.is_shut_down


def test_h5_wait_for_cache_sync_times_out_with_false_for_unsynced(
    factory: SharedInformerFactory,
) -> None:
    failing = FakeListerWatcher([obj("a", "x")])
    failing.fail_next_list(ApiStatusError(500, "InternalError", "boom"), times=10_000)
    factory.informer_for(PODS, Recorder(failing))
    factory.informer_for(DEPLOYMENTS, Recorder(FakeListerWatcher([obj("a", "d")])))
    factory.start()
    assert factory.wait_for_cache_sync(timeout=0.5) == {PODS: False, DEPLOYMENTS: True}


def test_h5_wait_for_cache_sync_returns_when_the_factory_shuts_down() -> None:
    f = SharedInformerFactory(None)
    failing = FakeListerWatcher([obj("a", "x")])
    failing.fail_next_list(ApiStatusError(500, "InternalError", "boom"), times=10_000)
    f.informer_for(PODS, Recorder(failing))
    f.start()
    result: dict[GroupVersionResource, bool] = {}
    waiter = threading.Thread(target=lambda: result.update(f.wait_for_cache_sync()))
    waiter.start()
    f.shutdown(timeout=10)
    waiter.join(10)
    assert not waiter.is_alive()
    assert result == {PODS: False}


def test_wait_for_cache_sync_async_and_coroutine_handlers_in_order() -> None:
    lw = FakeListerWatcher([obj("a", f"p{i}") for i in range(20)])

    async def main() -> list[str]:
        seen: list[str] = []
        all_seen = asyncio.Event()

        async def on_add(o: Obj, is_in_initial_list: bool) -> None:
            await asyncio.sleep(0)
            seen.append(o["metadata"]["name"])
            if len(seen) == 20:
                all_seen.set()

        with SharedInformerFactory(None) as f:
            informer = f.informer_for(PODS, Recorder(lw))
            informer.add_event_handler(on_add=on_add, loop=asyncio.get_running_loop())
            f.start()
            assert await f.wait_for_cache_sync_async(timeout=10) == {PODS: True}
            await asyncio.wait_for(all_seen.wait(), timeout=10)
            # Shut down off the loop: the listener's coroutines need the loop to finish.
            await asyncio.to_thread(f.shutdown, 10)
        return seen

    seen = asyncio.run(main())
    # One at a time and in order: the initial list's order, each exactly once.
    assert seen == [o["metadata"]["name"] for o in lw.list(ListOptions()).items]
    assert sorted(seen) == sorted(f"p{i}" for i in range(20))


def test_wait_for_cache_sync_async_times_out() -> None:
    failing = FakeListerWatcher([obj("a", "x")])
    failing.fail_next_list(ApiStatusError(500, "InternalError", "boom"), times=10_000)

    async def main() -> dict[GroupVersionResource, bool]:
        f = SharedInformerFactory(None)
        f.informer_for(PODS, Recorder(failing))
        f.start()
        try:
            return await f.wait_for_cache_sync_async(timeout=0.3)
        finally:
            await asyncio.to_thread(f.shutdown, 10)

    assert asyncio.run(main()) == {PODS: False}


def test_context_manager_shuts_down() -> None:
    with SharedInformerFactory(None) as f:
        informer = f.informer_for(PODS, Recorder(FakeListerWatcher([obj("a", "x")])))
        f.start()
        assert f.wait_for_cache_sync(timeout=10) == {PODS: True}
    assert f.is_shut_down
    assert informer.is_stopped()


def test_h4_a_factory_that_was_shut_down_cannot_be_entered_again_with_with() -> None:
    """The threaded face of `async with`'s refusal: a second `with factory:` would hand out
    its stopped informers, still reporting synced (so even `wait_for_cache_sync_or_raise`
    passed) while their caches no longer follow the server."""
    lister_watcher = FakeListerWatcher([obj("a", "x")])
    with SharedInformerFactory(None) as f:
        informer = f.informer_for(PODS, Recorder(lister_watcher))
        f.start()
        f.wait_for_cache_sync_or_raise(timeout=10)
    assert informer.is_stopped() and informer.has_synced()
    with pytest.raises(CacheSyncTimeoutError, match="the factory was shut down"):
        with f:
            raise AssertionError("must not be entered")


def test_negative_resync_is_rejected() -> None:
    with pytest.raises(ValueError, match="resync_period"):
        SharedInformerFactory(None, -1)


# --- H6: for_resource ---------------------------------------------------------------------


def test_h6_unknown_resource_raises_no_informer_found(factory: SharedInformerFactory) -> None:
    gvr = GroupVersionResource("nope.example.com", "v1", "things")
    with pytest.raises(NoInformerFoundError, match=r"^no informer found for nope\.example\.com/v1"):
        factory.for_resource(gvr)
    with pytest.raises(LookupError):
        factory.for_resource(gvr)


def test_h6_for_resource_shares_the_informer_and_has_a_generic_lister(
    factory: SharedInformerFactory,
) -> None:
    informer = factory.informer_for(
        DEPLOYMENTS, Recorder(FakeListerWatcher([obj("prod", "web", app="web")]))
    )
    generic = factory.for_resource(DEPLOYMENTS)
    assert isinstance(generic, GenericInformer)
    assert generic.informer() is informer
    assert generic.gvr == DEPLOYMENTS
    factory.start()
    assert factory.wait_for_cache_sync(timeout=10) == {DEPLOYMENTS: True}
    lister = generic.lister()
    assert isinstance(lister, GenericLister)
    assert [o["metadata"]["name"] for o in lister.by_namespace("prod").list("app=web")] == ["web"]
    with pytest.raises(NotFoundError, match=r'^deployments\.apps "db" not found'):
        lister.by_namespace("prod").get("db")


class WidgetMeta(KubeModel):
    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")


class Widget(KubeModel):
    metadata: WidgetMeta | None = None


def _fake_typed(
    sources: dict[GroupVersionResource, FakeListerWatcher[Any]],
    calls: list[tuple[APIResource, type[Any]]],
) -> Callable[..., SharedIndexInformer[Any]]:
    def new_typed_informer(
        resource: APIResource, model: type[Any], resync: float
    ) -> SharedIndexInformer[Any]:
        calls.append((resource, model))
        return SharedIndexInformer(
            sources[resource.gvr], None, resync, {NAMESPACE_INDEX: meta_namespace_index_func}
        )

    return new_typed_informer


def test_h6_for_resource_of_a_registered_model(
    factory: SharedInformerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    resource = APIResource("demo.kubeinformers.io", "v1", "widgets", "Widget", namespaced=True)
    calls: list[tuple[APIResource, type[Any]]] = []
    sources = {WIDGETS: FakeListerWatcher([Widget.model_validate(obj("ns", "w1"))])}
    monkeypatch.setattr(factory, "new_typed_informer", _fake_typed(sources, calls))
    factory.register_model(resource, Widget)
    generic = factory.for_resource(WIDGETS)
    assert calls == [(resource, Widget)]
    assert factory.for_resource(WIDGETS).informer() is generic.informer()
    assert calls == [(resource, Widget)]


def test_h6_for_resource_through_the_generated_registry(
    factory: SharedInformerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = APIResource("", "v1", "pods", "Pod", namespaced=True, singular="pod")
    bindings = APIResource(
        "", "v1", "bindings", "Binding", namespaced=True, verbs=frozenset({"create"})
    )
    registry = types.ModuleType("kubeinformers.generated.registry")
    registry.RESOURCES = (pods, bindings)  # type: ignore[attr-defined]
    registry.MODELS = {  # type: ignore[attr-defined]
        pods.gvr: f"{__name__}:Widget",
        bindings.gvr: f"{__name__}:Widget",
        GroupVersionResource("", "v1", "ghosts"): f"{__name__}:Ghost",
    }
    monkeypatch.setitem(sys.modules, "kubeinformers.generated.registry", registry)
    monkeypatch.setattr(factory_module, "_registry_cache", None)
    calls: list[tuple[APIResource, type[Any]]] = []
    sources = {PODS: FakeListerWatcher([Widget.model_validate(obj("ns", "p"))])}
    monkeypatch.setattr(factory, "new_typed_informer", _fake_typed(sources, calls))

    generic = factory.for_resource(PODS)
    assert calls == [(pods, Widget)]
    assert factory.informers()[PODS] is generic.informer()
    with pytest.raises(NoInformerFoundError, match="does not support list and watch"):
        factory.for_resource(bindings.gvr)
    with pytest.raises(NoInformerFoundError, match="no informer found for v1, Resource=ghosts"):
        factory.for_resource(GroupVersionResource("", "v1", "ghosts"))


# --- typed_informer over ApiListerWatcher and the generated models (H6-H8) ------------------


@pytest.fixture(scope="module")
def api_server() -> Iterator[LocalApiServer]:
    with LocalApiServer(token="s3cret") as server:
        server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
        for ns, name, app in (
            ("default", "a", "web"),
            ("default", "b", "db"),
            ("other", "c", "web"),
        ):
            server.create(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                }
            )
        server.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
        yield server


def test_h8_typed_informer_restricts_namespaced_kinds_only(api_server: LocalApiServer) -> None:
    from kubeinformers.generated.core.v1 import Node, Pod
    from kubeinformers.generated.core.v1.listers import NodeLister, PodLister

    with SharedInformerFactory(api_server.api_client(), namespace="default") as f:
        pods = f.typed_informer(PodLister.RESOURCE, Pod)
        nodes = f.typed_informer(NodeLister.RESOURCE, Node)
        assert f.typed_informer(PodLister.RESOURCE, Pod) is pods
        f.start()
        assert f.wait_for_cache_sync(timeout=10) == {
            PodLister.RESOURCE.gvr: True,
            NodeLister.RESOURCE.gvr: True,
        }
        assert sorted(pods.get_indexer().list_keys()) == ["default/a", "default/b"]
        assert nodes.get_indexer().list_keys() == ["n1"]  # H8: namespace ignored
        assert all(isinstance(p, Pod) for p in pods.get_indexer().list())
        # H8: the factory path always has the namespace index, cluster-scoped kinds too.
        by_ns = pods.get_indexer().by_index(NAMESPACE_INDEX, "default")
        assert sorted(p.metadata.name or "" for p in by_ns if p.metadata) == ["a", "b"]
        assert nodes.get_indexer().by_index(NAMESPACE_INDEX, "") != []
        lister = PodLister(pods.get_indexer(), PodLister.RESOURCE)
        got = lister.pods("default").get("a")
        assert got.metadata is not None and got.metadata.labels == {"app": "web"}
        with pytest.raises(NotFoundError, match=r'^pod "c" not found in namespace "default"$'):
            lister.pods("default").get("c")


def test_k6_cache_compression_keeps_the_typed_cache_compressed_and_readable() -> None:
    from kubeinformers.generated.core.v1 import Pod
    from kubeinformers.generated.core.v1.listers import PodLister

    with LocalApiServer() as server:
        for i in range(Compactor.TRAIN_OBJECTS + 4):
            server.create(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"i": str(i)}},
                    "spec": {"containers": [{"name": "c", "image": f"nginx:{i}"}]},
                }
            )
        with SharedInformerFactory(server.api_client(), cache_compression="zlib") as f:
            pods = f.typed_informer(PodLister.RESOURCE, Pod)
            f.start()
            assert f.wait_for_cache_sync(timeout=10) == {PodLister.RESOURCE.gvr: True}
            lister = PodLister(pods.get_indexer(), PodLister.RESOURCE)
            # p9 comes last (by name) in a list and in a watch-list's initial events: after
            # the first 16 objects trained the dictionary, so it is kept compressed.
            got = lister.pods("default").get("p9")
            kept = object.__getattribute__(got, "__pydantic_fields_set__")
            assert is_lazy(got) and b"nginx:9" not in kept
            assert got.metadata is not None and got.metadata.labels == {"i": "9"}
            assert got.spec is not None and got.spec.containers[0].image == "nginx:9"
        with pytest.raises(ValueError, match=r"cache_compression compresses lazy objects.*'eager'"):
            SharedInformerFactory(server.api_client(), decode="eager", cache_compression="zlib")
        with pytest.raises(ValueError, match='cache_compression must be "none" or "zlib"'):
            SharedInformerFactory(server.api_client(), cache_compression="lz4")  # type: ignore[arg-type]


def test_h8_tweak_list_options_applies_to_typed_informers(api_server: LocalApiServer) -> None:
    from kubeinformers.generated.core.v1 import Pod
    from kubeinformers.generated.core.v1.listers import PodLister

    def only_web(options: ListOptions) -> ListOptions:
        return options.copy(label_selector="app=web")

    with SharedInformerFactory(api_server.api_client(), tweak_list_options=only_web) as f:
        pods = f.typed_informer(PodLister.RESOURCE, Pod)
        f.start()
        assert f.wait_for_cache_sync(timeout=10) == {PodLister.RESOURCE.gvr: True}
        assert sorted(pods.get_indexer().list_keys()) == ["default/a", "other/c"]


def test_h6_for_resource_with_the_real_generated_registry(api_server: LocalApiServer) -> None:
    from kubeinformers.generated.core.v1 import Pod

    with SharedInformerFactory(api_server.api_client()) as f:
        generic = f.for_resource(PODS)
        f.start()
        assert f.wait_for_cache_sync(timeout=10) == {PODS: True}
        found = generic.lister().by_namespace("other").get("c")
        assert isinstance(found, Pod)
        with pytest.raises(NotFoundError, match=r'^pods "zz" not found in namespace "other"$'):
            generic.lister().by_namespace("other").get("zz")


def test_0_2_the_default_queue_is_client_go_v0_36s_atomic_real_fifo(
    api_server: LocalApiServer,
) -> None:
    """0.2: every informer, typed, dynamic or metadata-only, made by a factory or alone, gets
    the queue client-go v0.36's informers get unless `queue=` says otherwise."""
    from kubeinformers.generated.core.v1 import Pod
    from kubeinformers.generated.informers import SharedInformerFactory as Generated
    from kubeinformers.runtime.cache.dynamic import (
        DynamicSharedInformerFactory,
        MetadataSharedInformerFactory,
    )
    from kubeinformers.runtime.cache.real_fifo import RealFIFO

    api = api_server.api_client()
    assert SharedInformerFactory(api).queue == "atomic"
    generated = Generated(api)
    assert generated.queue == "atomic"
    assert generated.core().v1().pods().informer().queue_kind == "atomic"
    assert DynamicSharedInformerFactory(api).for_resource(PODS).informer().queue_kind == "atomic"
    assert MetadataSharedInformerFactory(api).for_resource(PODS).informer().queue_kind == "atomic"
    alone: SharedIndexInformer[Pod] = SharedIndexInformer(FakeListerWatcher(), Pod)
    assert alone.queue_kind == "atomic"
    stop = threading.Event()
    runner = threading.Thread(target=alone.run, args=(stop,), daemon=True)
    runner.start()
    try:
        assert eventually(alone.has_synced)
        queue = alone._queue
        assert isinstance(queue, RealFIFO) and queue.atomic
    finally:
        stop.set()
        runner.join(10)
    assert not runner.is_alive()


@pytest.mark.parametrize("queue", ["delta", "ordered", "atomic"])
def test_factory_queue_option_reaches_every_informer_it_creates(
    api_server: LocalApiServer, queue: Any
) -> None:
    """`queue=` picks the informers' FIFO; with "atomic" (C-3) the typed path works end to end
    and the store tracks the server's resourceVersion (B15)."""
    from kubeinformers.generated.informers import SharedInformerFactory as Generated
    from kubeinformers.runtime.cache.dynamic import (
        DynamicSharedInformerFactory,
        MetadataSharedInformerFactory,
    )

    api = api_server.api_client()
    assert (
        DynamicSharedInformerFactory(api, queue=queue).for_resource(PODS).informer().queue_kind
        == queue
    )
    assert (
        MetadataSharedInformerFactory(api, queue=queue).for_resource(PODS).informer().queue_kind
        == queue
    )
    with pytest.raises(ValueError, match="queue must be"):
        SharedInformerFactory(api, queue="lifo")  # type: ignore[arg-type]

    with Generated(api, queue=queue) as f:
        assert f.queue == queue
        pods = f.core().v1().pods()
        seen: list[tuple[str, str]] = []
        deleted = threading.Event()

        def on_delete(obj: Any) -> None:
            seen.append(("delete", obj.metadata.name))
            deleted.set()

        pods.informer().add_event_handler(
            on_add=lambda obj, _initial: seen.append(("add", obj.metadata.name)),
            on_delete=on_delete,
        )
        assert pods.informer().queue_kind == queue
        f.start()
        assert f.wait_for_cache_sync(timeout=10) == {PODS: True}
        api_server.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "late", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            }
        )
        api_server.delete("v1", "Pod", "late", "default")
        assert deleted.wait(10)
        assert seen[-2:] == [("add", "late"), ("delete", "late")]
        assert pods.lister().pods("default").list() != []
        tracked = pods.informer().get_indexer().last_store_sync_resource_version()
        if queue == "atomic":
            assert tracked == str(api_server.resource_version)
        else:
            assert tracked == ""


def test_h4_shutdown_from_an_event_handler_does_not_deadlock() -> None:
    f = SharedInformerFactory(None)
    informer = f.informer_for(PODS, Recorder(FakeListerWatcher([obj("a", "x")])))
    returned = threading.Event()

    def on_add(o: Obj, is_in_initial_list: bool) -> None:
        f.shutdown()
        returned.set()

    informer.add_event_handler(on_add=on_add)
    f.start()
    assert returned.wait(10), "shutdown() from a handler never returned"
    f.shutdown(timeout=10)  # from the test thread: waits for the informer
    assert informer.is_stopped()


def test_h5_wait_for_cache_sync_wakes_at_the_sync_not_at_the_next_poll(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With a ten-minute poll, only the informers' sync callback can end the wait in time.
    monkeypatch.setattr(factory_module, "_POLL_FIRST", 600.0)
    monkeypatch.setattr(factory_module, "_POLL_MAX", 600.0)
    f = SharedInformerFactory(None)
    try:
        f.informer_for(PODS, Recorder(FakeListerWatcher([obj("a", f"p{i}") for i in range(50)])))
        f.informer_for(DEPLOYMENTS, Recorder(FakeListerWatcher([])))  # an empty first list
        result: dict[GroupVersionResource, bool] = {}
        waiter = threading.Thread(target=lambda: result.update(f.wait_for_cache_sync()))
        f.start()
        waiter.start()
        waiter.join(30)
        assert not waiter.is_alive(), "wait_for_cache_sync slept until its next poll"
        assert result == {PODS: True, DEPLOYMENTS: True}
    finally:
        f.shutdown(timeout=10)


def test_h5_wait_for_cache_sync_async_wakes_at_the_sync_not_at_the_next_poll(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(factory_module, "_POLL_FIRST", 600.0)
    monkeypatch.setattr(factory_module, "_POLL_MAX", 600.0)

    async def main() -> dict[GroupVersionResource, bool]:
        f = SharedInformerFactory(None)
        lw = FakeListerWatcher([obj("a", f"p{i}") for i in range(50)])
        f.informer_for(PODS, Recorder(lw))
        f.start()
        try:
            # Only the sync callback can end this wait before the ten-minute poll.
            return await asyncio.wait_for(f.wait_for_cache_sync_async(), timeout=30)
        finally:
            await asyncio.to_thread(f.shutdown, 10)

    assert asyncio.run(main()) == {PODS: True}


@pytest.mark.parametrize("factory_class", ["typed", "dynamic", "metadata"])
def test_h1_use_watch_list_false_gets_the_initial_state_by_list_and_watch(
    factory_class: str,
) -> None:
    """A server whose watch-list never ends its initial events: the gate's watch-list cannot
    sync, a factory made with use_watch_list=False lists instead and syncs."""
    from kubeinformers.generated.core.v1 import Pod
    from kubeinformers.generated.core.v1.listers import PodLister
    from kubeinformers.runtime.cache.dynamic import (
        DynamicSharedInformerFactory,
        MetadataSharedInformerFactory,
    )

    with LocalApiServer() as server:
        server.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "a", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            }
        )
        server.stall_initial_events_end()

        def synced(use_watch_list: bool | None, timeout: float) -> bool:
            api = server.api_client()
            factory: SharedInformerFactory
            if factory_class == "typed":
                factory = SharedInformerFactory(api, use_watch_list=use_watch_list)
                factory.typed_informer(PodLister.RESOURCE, Pod)
            elif factory_class == "dynamic":
                factory = DynamicSharedInformerFactory(api, use_watch_list=use_watch_list)
                factory.for_resource(PodLister.RESOURCE)
            else:
                factory = MetadataSharedInformerFactory(api, use_watch_list=use_watch_list)
                factory.for_resource(PodLister.RESOURCE)
            with factory:
                assert factory.use_watch_list is use_watch_list
                factory.start()
                return all(factory.wait_for_cache_sync(timeout=timeout).values())

        assert synced(False, timeout=30)
        assert not synced(True, timeout=1)


def test_h16_two_versions_of_one_resource_are_two_health_entries() -> None:
    """A failing version of a resource must not hide behind a healthy one of the same name."""
    from kubeinformers.generated.apps.v1 import Deployment

    served = APIResource("apps", "v1", "deployments", "Deployment", namespaced=True)
    gone = APIResource("apps", "v9", "deployments", "Deployment", namespaced=True)  # 404
    with LocalApiServer() as server:
        factory = SharedInformerFactory(server.api_client())
        good = factory.typed_informer(served, Deployment)
        bad = factory.typed_informer(gone, Deployment)
        factory.start()
        try:
            assert eventually(lambda: good.has_synced() and bad.health().consecutive_failures > 0)
            health = factory.health()
            assert set(health.informers) == {
                "deployments.apps (apps/v1)",
                "deployments.apps (apps/v9)",
            }
            assert health.informers["deployments.apps (apps/v1)"].healthy
            assert not health.informers["deployments.apps (apps/v9)"].healthy
            assert not health.healthy
            # Each entry names its version, so the unhealthy one can be told apart (the typed
            # informers' own names are the same: "deployments.apps").
            assert [h.name for h in health.unhealthy()] == ["deployments.apps (apps/v9)"]
            assert "deployments.apps (apps/v9): NOT OK" in health.describe()
        finally:
            factory.shutdown()


def test_h16_two_versions_of_one_resource_are_two_metrics_series() -> None:
    """The metrics exporter labels each informer by its name and its resource with the
    version (`apps/v1/deployments`): two versions of one resource are two series, not one."""
    prometheus_client = pytest.importorskip("prometheus_client")
    from kubeinformers.generated.apps.v1 import Deployment
    from kubeinformers.runtime.metrics import register_prometheus, unregister_prometheus

    served = APIResource("apps", "v1", "deployments", "Deployment", namespaced=True)
    gone = APIResource("apps", "v9", "deployments", "Deployment", namespaced=True)  # 404
    registry = prometheus_client.CollectorRegistry()
    register_prometheus(registry)
    with LocalApiServer() as server:
        factory = SharedInformerFactory(server.api_client())
        good = factory.typed_informer(served, Deployment)
        factory.typed_informer(gone, Deployment)
        factory.start()
        try:
            assert eventually(good.has_synced)
            synced = {
                sample.labels["resource"]: sample.value
                for family in registry.collect()
                if family.name == "kubeinformers_informer_synced"
                for sample in family.samples
                if sample.labels["informer"] == "deployments.apps"
            }
            assert synced == {"apps/v1/deployments": 1.0, "apps/v9/deployments": 0.0}
        finally:
            factory.shutdown()
            unregister_prometheus(registry)


def test_h6_the_runtime_base_says_where_the_typed_accessors_are() -> None:
    """`from kubeinformers import SharedInformerFactory` is the runtime base: `factory.core()`
    on it was a bare AttributeError; it says which factory has the typed accessors."""
    from kubernetes.client import ApiClient

    import kubeinformers
    from kubeinformers.generated.informers import SharedInformerFactory as Generated

    base = kubeinformers.SharedInformerFactory(ApiClient())
    with pytest.raises(AttributeError, match=r"kubeinformers\.generated\.informers") as info:
        base.core()  # type: ignore[attr-defined]
    assert info.value.name == "core"
    typed = Generated(ApiClient())
    with pytest.raises(AttributeError) as plain:
        typed.no_such_group()  # type: ignore[attr-defined]
    assert "generated.informers" not in str(plain.value)
    assert hasattr(typed, "core") and not hasattr(base, "core")
