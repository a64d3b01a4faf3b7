"""Dynamic and metadata-only informers (rules J1-J3) against a LocalApiServer."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kubeinformers.generated.meta.v1 import ObjectMeta
from kubeinformers.runtime.api.keys import meta_namespace_key
from kubeinformers.runtime.api.resource import APIResource, GroupVersionResource
from kubeinformers.runtime.cache.dynamic import (
    METADATA_LIST_ACCEPT,
    METADATA_WATCH_ACCEPT,
    DiscoveryError,
    DynamicSharedInformerFactory,
    MetadataSharedInformerFactory,
    PartialObjectMetadata,
)
from kubeinformers.runtime.cache.listers import NotFoundError
from kubeinformers.runtime.cache.transforms import strip_managed_fields
from kubeinformers.testing.local_api_server import LocalApiServer

PODS = GroupVersionResource("", "v1", "pods")
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
NODES = GroupVersionResource("", "v1", "nodes")


def pod(ns: str, name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def deployment(ns: str, name: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def eventually(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until `condition()` holds, re-checking on a short period; fail after `timeout`."""
    waiter = threading.Event()
    deadline = 0.0
    while deadline < timeout:
        if condition():
            return
        waiter.wait(0.01)
        deadline += 0.01
    assert condition(), "condition not reached in time"


@pytest.fixture(scope="module")
def server() -> Iterator[LocalApiServer]:
    with LocalApiServer(token="t0k3n") as s:
        s.create(pod("default", "web-1", app="web"))
        s.create(pod("default", "web-2", app="web"))
        s.create(pod("kube-system", "dns", app="dns"))
        s.create(deployment("default", "web"))
        s.create(node("node-1"))
        yield s


class RequestLog:
    """Records (path, Accept header) of every request an ApiClient makes."""

    def __init__(self, api_client: Any) -> None:
        self.requests: list[tuple[str, str]] = []
        self.watches: list[tuple[str, str]] = []
        pool = api_client.rest_client.pool_manager
        original = pool.request

        def request(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            headers = kwargs.get("headers") or {}
            path, _, query = url.partition("?")
            entry = (path, headers.get("Accept", ""))
            (self.watches if "watch=true" in query else self.requests).append(entry)
            return original(method, url, *args, **kwargs)

        pool.request = request

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]


# --- J1: dynamic informers ----------------------------------------------------------------


def test_j1_dynamic_informer_of_plain_dicts_via_discovery(server: LocalApiServer) -> None:
    with DynamicSharedInformerFactory(server.api_client()) as factory:
        deployments = factory.for_resource(DEPLOYMENTS)
        resource = factory.resolve(DEPLOYMENTS)
        assert (resource.kind, resource.namespaced) == ("Deployment", True)
        factory.start()
        assert factory.wait_for_cache_sync(timeout=10) == {DEPLOYMENTS: True}
        lister = deployments.lister()
        web = lister.by_namespace("default").get("web")
        assert type(web) is dict
        assert web["spec"]["replicas"] == 1
        assert [d["metadata"]["name"] for d in lister.list("app=web")] == ["web"]
        with pytest.raises(NotFoundError, match=r'^deployments\.apps "nope" not found'):
            lister.by_namespace("default").get("nope")


def test_j1_same_gvr_same_informer_and_api_resource_skips_discovery(
    server: LocalApiServer,
) -> None:
    api = server.api_client()
    log = RequestLog(api)
    factory = DynamicSharedInformerFactory(api)
    pods_resource = APIResource("", "v1", "pods", "Pod", namespaced=True)
    first = factory.for_resource(pods_resource)
    assert factory.for_resource(PODS).informer() is first.informer()
    assert factory.for_resource(pods_resource).informer() is first.informer()
    assert log.requests == [] and log.watches == []  # no discovery: the APIResource said it all
    factory.for_resource(NODES)
    factory.for_resource(NODES)
    assert log.paths().count(server.url + "/api/v1") == 1  # discovery answers are cached
    factory.shutdown()


def test_j1_dynamic_informer_follows_creates_updates_and_deletes(server: LocalApiServer) -> None:
    with DynamicSharedInformerFactory(server.api_client()) as factory:
        pods = factory.for_resource(PODS)
        factory.start()
        assert factory.wait_for_cache_sync(timeout=10) == {PODS: True}
        lister = pods.lister().by_namespace("default")
        server.create(pod("default", "late", app="late"))
        eventually(lambda: len(lister.list("app=late")) == 1)
        # (a deep copy: LocalApiServer.get may hand out its stored object)
        current = copy.deepcopy(server.get("v1", "Pod", "late", "default"))
        current["metadata"]["labels"] = {"app": "later"}
        server.replace(current)
        eventually(lambda: lister.get("late")["metadata"]["labels"] == {"app": "later"})
        server.delete("v1", "Pod", "late", "default")
        eventually(lambda: not lister.list("app in (late,later)"))


def test_j1_namespace_restricted_factory_ignores_namespace_for_cluster_scoped(
    server: LocalApiServer,
) -> None:
    with DynamicSharedInformerFactory(server.api_client(), namespace="kube-system") as factory:
        pods, nodes = factory.for_resource(PODS), factory.for_resource(NODES)
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=10).values())
        assert [meta_namespace_key(p) for p in pods.lister().list()] == ["kube-system/dns"]
        assert nodes.lister().get("node-1")["metadata"]["name"] == "node-1"


def test_j1_tweak_list_options_reaches_the_server(server: LocalApiServer) -> None:
    def only_web(options: Any) -> Any:
        return options.copy(label_selector="app=web")

    with DynamicSharedInformerFactory(server.api_client(), tweak_list_options=only_web) as f:
        pods = f.for_resource(PODS)
        f.start()
        assert f.wait_for_cache_sync(timeout=10) == {PODS: True}
        assert sorted(meta_namespace_key(p) for p in pods.lister().list()) == [
            "default/web-1",
            "default/web-2",
        ]


def test_discovery_errors_name_the_resource(server: LocalApiServer) -> None:
    factory = DynamicSharedInformerFactory(server.api_client())
    with pytest.raises(DiscoveryError, match="no resource 'Deployment'"):
        factory.for_resource(GroupVersionResource("apps", "v1", "Deployment"))
    with pytest.raises(DiscoveryError, match=r"does not serve nope\.example\.com/v1"):
        factory.for_resource(GroupVersionResource("nope.example.com", "v1", "things"))
    with pytest.raises(DiscoveryError, match="does not support list and watch"):
        factory.for_resource(GroupVersionResource("", "v1", "bindings"))


# --- J2: metadata-only informers ----------------------------------------------------------


def test_j2_metadata_informer_asks_for_partial_object_metadata(server: LocalApiServer) -> None:
    api = server.api_client()
    log = RequestLog(api)
    with MetadataSharedInformerFactory(api, metadata_model=ObjectMeta) as factory:
        pods = factory.for_resource(APIResource("", "v1", "pods", "Pod", namespaced=True))
        factory.start()
        assert factory.wait_for_cache_sync(timeout=10) == {PODS: True}
        eventually(lambda: bool(log.watches))
    # The first sync may be a watch-list (D17) or a LIST: each request names the right shape.
    lists = {accept for path, accept in log.requests if path.endswith("/api/v1/pods")}
    watches = {accept for path, accept in log.watches if path.endswith("/api/v1/pods")}
    assert lists <= {METADATA_LIST_ACCEPT}
    assert watches == {METADATA_WATCH_ACCEPT}
    assert pods.informer().is_stopped()


def test_j2_metadata_objects_have_typed_object_meta_and_no_spec(server: LocalApiServer) -> None:
    with MetadataSharedInformerFactory(
        server.api_client(), metadata_model=ObjectMeta, transform=strip_managed_fields
    ) as factory:
        pods = factory.for_resource(PODS)
        factory.start()
        assert factory.wait_for_cache_sync(timeout=10) == {PODS: True}
        web = pods.lister().by_namespace("default").get("web-1")
        assert isinstance(web, PartialObjectMetadata)
        assert isinstance(web, factory.object_model)  # lazy objects are subclasses
        assert isinstance(web.metadata, ObjectMeta)
        assert web.metadata.labels == {"app": "web"}
        assert web.metadata.managed_fields is None  # the factory transform ran
        assert web.metadata.uid
        assert "spec" not in web.model_dump()
        assert not web.model_extra
        assert [p.metadata.name for p in pods.lister().list("app=dns") if p.metadata] == ["dns"]


def test_issue5_metadata_informer_holds_the_same_keys_as_a_full_one(
    server: LocalApiServer,
) -> None:
    api = server.api_client()
    with (
        MetadataSharedInformerFactory(api) as metadata,
        DynamicSharedInformerFactory(api) as full,
    ):
        meta_pods, full_pods = metadata.for_resource(PODS), full.for_resource(PODS)
        metadata.start()
        full.start()
        assert metadata.wait_for_cache_sync(timeout=10) == {PODS: True}
        assert full.wait_for_cache_sync(timeout=10) == {PODS: True}
        server.create(pod("default", "extra"))
        eventually(lambda: "default/extra" in meta_pods.informer().get_indexer().list_keys())
        eventually(lambda: "default/extra" in full_pods.informer().get_indexer().list_keys())
        assert sorted(meta_pods.informer().get_indexer().list_keys()) == sorted(
            full_pods.informer().get_indexer().list_keys()
        )
        server.delete("v1", "Pod", "extra", "default")
        eventually(lambda: "default/extra" not in meta_pods.informer().get_indexer().list_keys())
        # default metadata model: a dict in the API's camelCase
        one = meta_pods.lister().by_namespace("default").get("web-1")
        assert isinstance(one.metadata, dict) and one.metadata["resourceVersion"]


def test_partial_object_metadata_decodes_a_real_server_list_item() -> None:
    model = PartialObjectMetadata[ObjectMeta]
    item = model.model_validate_json(
        b'{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",'
        b'"metadata":{"name":"p","namespace":"ns","resourceVersion":"7","labels":{"a":"b"}},'
        b'"spec":{"ignored":true}}'
    )
    assert item.kind == "PartialObjectMetadata"
    assert item.metadata is not None and item.metadata.resource_version == "7"
    assert meta_namespace_key(item) == "ns/p"
    assert not item.model_extra


# --- J1, J2: every cached object has its apiVersion and kind, listed or watched -----------------


@pytest.mark.parametrize("use_watch_list", [False, True], ids=["list", "watch-list"])
def test_j1_listed_objects_get_the_lists_api_version_and_kind_as_watched_ones_have_them(
    server: LocalApiServer, use_watch_list: bool
) -> None:
    """kube-apiserver leaves apiVersion and kind out of a built-in kind's list items (a
    PodList's) and sends them with every watched object; client-go's unstructured list decoding
    gives each item the list's apiVersion and its kind minus "List". Before, a dynamic cache
    synced by LIST held both shapes, and `obj["kind"]` raised KeyError on the listed ones."""
    name = f"typed-{'wl' if use_watch_list else 'list'}"
    with DynamicSharedInformerFactory(server.api_client(), use_watch_list=use_watch_list) as f:
        pods, deployments = f.for_resource(PODS), f.for_resource(DEPLOYMENTS)
        f.start()
        assert all(f.wait_for_cache_sync(timeout=10).values())
        server.create(pod("default", name))
        lister = pods.lister()
        eventually(lambda: any(p["metadata"]["name"] == name for p in lister.list()))
        assert {(p["apiVersion"], p["kind"]) for p in lister.list()} == {("v1", "Pod")}
        assert {(d["apiVersion"], d["kind"]) for d in deployments.lister().list()} == {
            ("apps/v1", "Deployment")
        }
        server.delete("v1", "Pod", name, "default")


@pytest.mark.parametrize("use_watch_list", [False, True], ids=["list", "watch-list"])
def test_j2_metadata_objects_listed_and_watched_are_partial_object_metadata_alike(
    server: LocalApiServer, use_watch_list: bool
) -> None:
    """The metadata informer needs no such help: asked for PartialObjectMetadataList (JSON,
    never protobuf), the server types every item `meta.k8s.io/v1` `PartialObjectMetadata`, as
    it does every watched object (checked on kube-apiserver 1.36)."""
    name = f"meta-{'wl' if use_watch_list else 'list'}"
    with MetadataSharedInformerFactory(server.api_client(), use_watch_list=use_watch_list) as f:
        pods = f.for_resource(PODS)
        f.start()
        assert f.wait_for_cache_sync(timeout=10) == {PODS: True}
        server.create(pod("default", name))
        lister = pods.lister()
        eventually(lambda: any(p.metadata and p.metadata["name"] == name for p in lister.list()))
        assert {(p.api_version, p.kind) for p in lister.list()} == {
            ("meta.k8s.io/v1", "PartialObjectMetadata")
        }
        server.delete("v1", "Pod", name, "default")


def test_h6_a_core_group_spelled_core_is_answered_with_its_real_name(
    server: LocalApiServer,
) -> None:
    """GroupVersionResource("core", "v1", "pods") is a common slip (kubectl prints `core/v1`
    in places); the errors said only that core/v1 is not served."""
    from kubeinformers import NoInformerFoundError
    from kubeinformers.generated.informers import SharedInformerFactory

    hint = 'the core API group is "": GroupVersionResource("", "v1", "pods")'
    wrong = GroupVersionResource("core", "v1", "pods")
    with pytest.raises(DiscoveryError, match="does not serve core/v1") as dynamic:
        DynamicSharedInformerFactory(server.api_client()).for_resource(wrong)
    assert hint in str(dynamic.value)
    with pytest.raises(NoInformerFoundError) as typed:
        SharedInformerFactory(server.api_client()).for_resource(wrong)
    assert hint in str(typed.value)
