"""Metadata-only informers (J2) against a real kube-apiserver (issue 13): the server answers
`PartialObjectMetadataList` / `PartialObjectMetadata` for the informer's Accept header, in a
LIST and in watch-list's initial events, and the cache equals the server's objects by key and
resourceVersion through creates, updates and deletes, with a handler's view equal to it too."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import meta_namespace_key, object_resource_version
from kubeinformers.runtime.api.resource import GroupVersionResource
from kubeinformers.runtime.cache.dynamic import MetadataSharedInformerFactory
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.support.cluster import RealCluster
from tests.support.view import View

pytestmark = pytest.mark.real_apiserver

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
_NAMESPACES = itertools.count()


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        tick.wait(0.02)


def _configmap(name: str, ns: str, gen: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"gen": str(gen)}},
        "data": {"blob": "x" * 500},
    }


@pytest.mark.parametrize("watch_list", [True, False], ids=["watchlist", "list-watch"])
def test_metadata_informer_mirrors_the_real_server(
    real_apiserver: RealApiServer, monkeypatch: pytest.MonkeyPatch, watch_list: bool
) -> None:
    monkeypatch.setenv("KUBE_FEATURE_WatchListClient", "true" if watch_list else "false")
    cluster = RealCluster(real_apiserver)
    ns = cluster.namespace(f"metadata-{next(_NAMESPACES)}")
    for i in range(30):
        cluster.create(_configmap(f"cm-{i}", ns, 0))
    api = real_apiserver.api_client()
    factory = MetadataSharedInformerFactory(api, namespace=ns)
    informer = factory.for_resource(CONFIGMAPS).informer()
    view = View()
    informer.add_event_handler(
        on_add=view.on_add, on_update=view.on_update, on_delete=view.on_delete
    )

    def server() -> dict[str, str]:
        return {
            f"{ns}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
            for o in cluster.list("v1", "ConfigMap", ns)
        }

    def cache() -> dict[str, str]:
        return {
            meta_namespace_key(o): object_resource_version(o) for o in informer.get_indexer().list()
        }

    try:
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        assert cache() == server()
        some = informer.get_indexer().list()[0]
        assert type(some).__name__.startswith("PartialObjectMetadata")
        assert some.kind == "PartialObjectMetadata"  # the server's answer, not the full object
        for i in range(0, 30, 3):
            obj = cluster.get("v1", "ConfigMap", f"cm-{i}", ns)
            obj["metadata"]["labels"] = {"gen": "1"}
            cluster.replace(obj)
        for i in range(1, 30, 5):
            cluster.delete("v1", "ConfigMap", f"cm-{i}", ns)
        for i in range(30, 40):
            cluster.create(_configmap(f"cm-{i}", ns, 0))
        expected = server()
        wait_for(lambda: cache() == expected, "the cache to equal the server")
        wait_for(lambda: view.snapshot() == expected, "the handler's view to equal the server")
        labels = {
            meta_namespace_key(o): o.metadata["labels"]["gen"]
            for o in informer.get_indexer().list()
        }
        assert labels[f"{ns}/cm-0"] == "1" and labels[f"{ns}/cm-2"] == "0"
    finally:
        factory.shutdown(timeout=30)
        api.close()
        cluster.close()
