"""What a user sees for the server's refusals, against LocalApiServer and a real kube-apiserver
(issue 13): a resource the server does not serve (404; the real server answers an unknown
group in plain text, "404 page not found") is named with what to check, and the informer
keeps retrying without syncing; an invalid object (422) is refused with its field path and
never reaches an informer's cache, which stays equal to the server.
(401, 403: test_security.py; 410: test_real_faults.py and tests/testing.)"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import kubernetes
import pytest
import yaml
from kubernetes.client.rest import ApiException

from examples.informers.informers import CustomInformers
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.keys import meta_namespace_key, object_resource_version
from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.client.transport import ApiListerWatcher
from kubeinformers.runtime.reflector import reflector as reflector_module
from kubeinformers.runtime.reflector.backoff import Backoff
from kubeinformers.testing.local_api_server import LocalApiServer
from tests.soak.world import WIDGET_CRD
from tests.support.cluster import Cluster, RealCluster

BACKENDS = ["local", pytest.param("real", marks=pytest.mark.real_apiserver)]
THINGS = APIResource("nothere.example.com", "v1", "things", "Thing", True)
_NAMESPACES = itertools.count()


@pytest.fixture(scope="module")
def local_server() -> Iterator[LocalApiServer]:
    with LocalApiServer(tls=True, token="statuses-token") as s:
        s.create(yaml.safe_load(WIDGET_CRD.read_text()))
        yield s


@pytest.fixture(scope="module")
def real_cluster(real_apiserver: Any) -> Iterator[RealCluster]:
    cluster = RealCluster(real_apiserver)
    cluster.ensure(yaml.safe_load(WIDGET_CRD.read_text()))
    yield cluster
    cluster.close()


@pytest.fixture(params=BACKENDS)
def server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Cluster:
    monkeypatch.setattr(
        reflector_module, "Backoff", functools.partial(Backoff, initial=0.05, cap=0.5)
    )
    cluster: Cluster = request.getfixturevalue(
        "local_server" if request.param == "local" else "real_cluster"
    )
    return cluster


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        tick.wait(0.02)


def test_a_resource_the_server_does_not_serve_is_named_with_what_to_check(
    server: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    api = server.api_client()
    errors: list[BaseException] = []
    informer: SharedIndexInformer[Any] = SharedIndexInformer(
        ApiListerWatcher(api, THINGS, dict), dict, name="things"
    )

    def handler(reflector: Any, err: BaseException) -> None:
        errors.append(err)
        reflector_module.default_watch_error_handler(reflector, err)

    informer.set_watch_error_handler(handler)
    stop = threading.Event()
    thread = threading.Thread(target=informer.run, args=(stop,), name="things-informer")
    with caplog.at_level(logging.WARNING, logger="kubeinformers"):
        thread.start()
        try:
            wait_for(lambda: len(errors) >= 2, "two failed attempts (it keeps retrying)")
        finally:
            stop.set()
            thread.join(10)
            api.close()
    assert not thread.is_alive()
    assert not informer.has_synced()
    statuses = [e for e in errors if isinstance(e, ApiStatusError)]
    assert statuses and all(e.code == 404 for e in statuses), errors
    message = str(statuses[-1])
    assert f"cannot list things.nothere.example.com in all namespaces at {server.url}" in message
    assert "does not serve things.nothere.example.com in nothere.example.com/v1" in message
    assert "CustomResourceDefinition is installed" in message
    # visible at default logging (the user must know), as an error
    assert any(
        r.levelno >= logging.ERROR and "does not serve things" in r.getMessage()
        for r in caplog.records
    )


def _bad_widget(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "demo.kubeinformers.io/v1",
        "kind": "Widget",
        "metadata": {"name": "w-bad", "namespace": ns},
        "spec": {"size": "small", "replicas": "many"},
    }


def _bad_pod(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p-bad", "namespace": ns},
        "spec": {"containers": []},
    }


def _good(kind: str, ns: str, name: str) -> dict[str, Any]:
    if kind == "Widget":
        return {**_bad_widget(ns), "metadata": {"name": name, "namespace": ns},
                "spec": {"size": "small", "replicas": 1}}  # fmt: skip
    return {**_bad_pod(ns), "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}  # fmt: skip


def _create(api: Any, obj: dict[str, Any]) -> None:
    ns = obj["metadata"]["namespace"]
    if obj["kind"] == "Widget":
        kubernetes.client.CustomObjectsApi(api).create_namespaced_custom_object(
            "demo.kubeinformers.io", "v1", ns, "widgets", obj
        )
    else:
        kubernetes.client.CoreV1Api(api).create_namespaced_pod(ns, obj)


@pytest.mark.parametrize(
    ("kind", "field"), [("Widget", "spec.replicas"), ("Pod", "spec.containers")]
)
def test_an_invalid_object_is_refused_with_its_field_and_never_cached(
    server: Cluster, kind: str, field: str
) -> None:
    ns = f"statuses-{next(_NAMESPACES)}"
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    api = server.api_client()
    factory = SharedInformerFactory(api, namespace=ns)
    informer = (
        CustomInformers(factory).demo().v1().widgets().informer()
        if kind == "Widget"
        else factory.core().v1().pods().informer()
    )
    api_version = "demo.kubeinformers.io/v1" if kind == "Widget" else "v1"
    try:
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        _create(api, _good(kind, ns, "before"))
        with pytest.raises(ApiException) as refused:
            _create(api, _bad_widget(ns) if kind == "Widget" else _bad_pod(ns))
        assert refused.value.status == 422
        assert field in refused.value.body
        _create(api, _good(kind, ns, "after"))
        expected = {
            f"{ns}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
            for o in server.list(api_version, kind, ns)
        }
        assert set(expected) == {f"{ns}/before", f"{ns}/after"}

        def cached() -> dict[str, str]:
            return {
                meta_namespace_key(o): object_resource_version(o)
                for o in informer.get_indexer().list()
            }

        wait_for(lambda: cached() == expected, "the cache to equal the server")
    finally:
        factory.shutdown(timeout=30)
        api.close()
