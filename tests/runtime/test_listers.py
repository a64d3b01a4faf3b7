"""Listers over a real Indexer: typed listers (H9) and the generic lister (H10)."""

from __future__ import annotations

import logging
import pickle
from typing import Any

import pytest
from pydantic import Field

from kubeinformers.runtime import labels
from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.runtime.cache import listers
from kubeinformers.runtime.cache.listers import (
    ClusterLister,
    GenericLister,
    Lister,
    NamespacedLister,
    NotFoundError,
    SingleNamespaceLister,
)
from kubeinformers.runtime.cache.store import NAMESPACE_INDEX, Indexer, meta_namespace_index_func

PODS = APIResource("", "v1", "pods", "Pod", namespaced=True, singular="pod")
DEPLOYMENTS = APIResource("apps", "v1", "deployments", "Deployment", namespaced=True)
NODES = APIResource("", "v1", "nodes", "Node", namespaced=False, singular="node")


class Meta(KubeModel):
    name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")


class Obj(KubeModel):
    metadata: Meta | None = None


def pod(ns: str, name: str, **labels_: str) -> Obj:
    return Obj(metadata=Meta(name=name, namespace=ns or None, labels=labels_ or None))


def indexed(*objs: Any, with_namespace_index: bool = True) -> Indexer[Any]:
    indexer: Indexer[Any] = Indexer(
        indexers={NAMESPACE_INDEX: meta_namespace_index_func} if with_namespace_index else None
    )
    for obj in objs:
        indexer.add(obj)
    return indexer


def names(objs: list[Any]) -> list[str]:
    return sorted(f"{o.metadata.namespace or ''}/{o.metadata.name}" for o in objs)


@pytest.fixture
def pod_indexer() -> Indexer[Obj]:
    return indexed(
        pod("default", "web-1", app="web", tier="fe"),
        pod("default", "web-2", app="web", tier="be"),
        pod("default", "db", app="db"),
        pod("kube-system", "dns", app="dns"),
        pod("other", "web-3", app="web", tier="fe", canary="true"),
    )


# --- H9: typed listers ----------------------------------------------------------------------


def test_h9_list_all_namespaces_with_selector(pod_indexer: Indexer[Obj]) -> None:
    lister: NamespacedLister[Obj] = NamespacedLister(pod_indexer, PODS)
    assert names(lister.list("app=web,tier in (fe,be),!canary")) == [
        "default/web-1",
        "default/web-2",
    ]
    assert names(lister.list(labels.parse("app=web"))) == [
        "default/web-1",
        "default/web-2",
        "other/web-3",
    ]
    assert len(lister.list()) == 5
    assert len(lister.list("")) == 5


def test_h9_everything_returns_all_without_reading_labels(
    pod_indexer: Indexer[Obj], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(obj: object) -> dict[str, str]:
        raise AssertionError("labels were read")

    monkeypatch.setattr(listers, "object_labels", boom)
    lister: NamespacedLister[Obj] = NamespacedLister(pod_indexer, PODS)
    assert len(lister.list(labels.everything())) == 5
    assert len(lister.by_namespace("default").list()) == 3


def test_h9_nothing_returns_nothing(pod_indexer: Indexer[Obj]) -> None:
    lister: NamespacedLister[Obj] = NamespacedLister(pod_indexer, PODS)
    assert lister.list(labels.nothing()) == []
    assert lister.by_namespace("default").list(labels.nothing()) == []
    assert lister.by_namespace("").list(labels.nothing()) == []


class NoScanIndexer(Indexer[Any]):
    """An indexer whose full scan fails: proves a lister used the namespace index."""

    def list(self) -> list[Any]:
        raise AssertionError("a namespace list must use the namespace index, not scan")


def test_h9_namespace_lister_lists_one_namespace_through_the_index(
    pod_indexer: Indexer[Obj],
) -> None:
    indexer = NoScanIndexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    for obj in pod_indexer.snapshot().values():
        indexer.add(obj)
    ns_lister: SingleNamespaceLister[Any] = NamespacedLister(indexer, PODS).by_namespace("default")
    assert isinstance(ns_lister, SingleNamespaceLister)
    assert names(ns_lister.list()) == ["default/db", "default/web-1", "default/web-2"]
    assert names(ns_lister.list("app=web")) == ["default/web-1", "default/web-2"]
    assert ns_lister.list("app=dns") == []


def test_h9_missing_namespace_index_falls_back_to_scan_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    indexer = indexed(
        pod("default", "a", app="web"),
        pod("default", "b", app="db"),
        pod("other", "c", app="web"),
        with_namespace_index=False,
    )
    ns_lister = NamespacedLister(indexer, PODS).by_namespace("default")
    with caplog.at_level(logging.WARNING, logger="kubeinformers.listers"):
        assert names(ns_lister.list()) == ["default/a", "default/b"]
        assert names(ns_lister.list("app=web")) == ["default/a"]
    warnings = [r for r in caplog.records if "no 'namespace' index" in r.getMessage()]
    assert len(warnings) == 1  # once per indexer, not once per call


def test_h9_every_new_indexer_without_a_namespace_index_is_warned_about() -> None:
    """Once per indexer, also for one created after another was collected: the indexers
    warned about were kept as id()s, so a new indexer reusing a collected one's id scanned
    without a word (40 of 50 fresh informers in a row)."""
    import gc

    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    def warnings_for_a_new_indexer() -> tuple[int, int]:
        indexer = indexed(pod("default", "a"), with_namespace_index=False)
        before = len(said)
        NamespacedLister(indexer, PODS).by_namespace("default").list()
        NamespacedLister(indexer, PODS).by_namespace("default").list()
        return id(indexer), len(said) - before

    log = logging.getLogger("kubeinformers.listers")
    handler = Keep(logging.WARNING)
    log.addHandler(handler)
    try:
        seen: set[int] = set()
        reused = 0
        # Until CPython has handed a collected indexer's id to a new one a few times: usually
        # within a few rounds, later when other threads allocate meanwhile (a busy run).
        for _ in range(1000):
            ident, warned = warnings_for_a_new_indexer()
            gc.collect()
            again = ident in seen
            reused += again
            seen.add(ident)
            assert warned == 1, f"{warned} warnings for a new indexer (its id reused: {again})"
            if reused >= 3:
                break
        assert reused, "no id was reused: this run did not exercise the case"
    finally:
        log.removeHandler(handler)


def test_h9_namespace_lister_with_empty_namespace_covers_all(pod_indexer: Indexer[Obj]) -> None:
    ns_lister = NamespacedLister(pod_indexer, PODS).by_namespace("")
    assert len(ns_lister.list()) == 5
    assert names(ns_lister.list("tier=fe")) == ["default/web-1", "other/web-3"]


def test_h9_namespace_lister_get_looks_up_namespace_slash_name(pod_indexer: Indexer[Obj]) -> None:
    lister: NamespacedLister[Obj] = NamespacedLister(pod_indexer, PODS)
    got = lister.by_namespace("kube-system").get("dns")
    assert got.metadata is not None and got.metadata.name == "dns"
    with pytest.raises(NotFoundError):
        lister.by_namespace("default").get("dns")


def test_h9_empty_namespace_get_looks_up_the_bare_name() -> None:
    indexer = indexed(pod("", "loose"), pod("default", "loose"))
    got = NamespacedLister(indexer, PODS).by_namespace("").get("loose")
    assert got.metadata is not None and got.metadata.namespace is None


def test_h9_not_found_is_a_404_api_error_naming_resource_namespace_and_name(
    pod_indexer: Indexer[Obj],
) -> None:
    with pytest.raises(NotFoundError) as info:
        NamespacedLister(pod_indexer, PODS).by_namespace("default").get("nginx")
    err = info.value
    assert isinstance(err, ApiStatusError)
    assert err.code == 404
    assert err.reason == "NotFound"
    assert err.details == {"group": "", "kind": "pod", "name": "nginx"}
    assert str(err) == 'pod "nginx" not found in namespace "default"'
    assert (err.group, err.resource, err.namespace, err.name) == ("", "pod", "default", "nginx")


def test_h9_not_found_names_the_group_of_non_core_resources() -> None:
    with pytest.raises(NotFoundError) as info:
        NamespacedLister(indexed(), DEPLOYMENTS).by_namespace("prod").get("web")
    assert str(info.value) == 'deployment.apps "web" not found in namespace "prod"'
    assert info.value.details == {"group": "apps", "kind": "deployment", "name": "web"}


def test_h9_cluster_scoped_lister_gets_by_name() -> None:
    indexer = indexed(pod("", "node-1", role="worker"), pod("", "node-2", role="master"))
    lister: ClusterLister[Obj] = ClusterLister(indexer, NODES)
    got = lister.get("node-1")
    assert got.metadata is not None and got.metadata.name == "node-1"
    assert names(lister.list("role=master")) == ["/node-2"]
    with pytest.raises(NotFoundError) as info:
        lister.get("node-3")
    assert str(info.value) == 'node "node-3" not found'


def test_h9_scope_mistakes_are_explained() -> None:
    with pytest.raises(TypeError, match="nodes is cluster-scoped: use a ClusterLister"):
        NamespacedLister(indexed(), NODES)
    with pytest.raises(TypeError, match="pods is namespaced: use a NamespacedLister"):
        ClusterLister(indexed(), PODS)


def test_h9_the_base_lister_lists_but_has_no_get_nor_namespace_step(
    pod_indexer: Indexer[Obj],
) -> None:
    """H9: the scope decides how one object is read, so the common base only lists."""
    lister: Lister[Obj] = Lister(pod_indexer, PODS)
    assert len(lister.list("app=web")) == 3
    assert not hasattr(lister, "get")
    assert not hasattr(lister, "by_namespace")
    assert not hasattr(NamespacedLister(pod_indexer, PODS), "get")
    assert not hasattr(ClusterLister(indexed(), NODES), "by_namespace")
    assert issubclass(NamespacedLister, Lister) and issubclass(ClusterLister, Lister)


def test_h9_listers_work_on_mapping_objects() -> None:
    objs = [
        {"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "web"}}},
        {"metadata": {"name": "b", "namespace": "ns"}},
    ]
    ns_lister = NamespacedLister(indexed(*objs), PODS).by_namespace("ns")
    assert [o["metadata"]["name"] for o in ns_lister.list("app=web")] == ["a"]
    assert [o["metadata"]["name"] for o in ns_lister.list("!app")] == ["b"]


def test_bad_selector_raises_value_error(pod_indexer: Indexer[Obj]) -> None:
    with pytest.raises(ValueError, match="at position"):
        NamespacedLister(pod_indexer, PODS).list("app in web")


def test_not_found_error_pickles() -> None:
    err = NotFoundError("apps", "deployment", "web", "prod")
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err)
    assert again.code == 404


# --- H10: the generic lister ----------------------------------------------------------------


def test_h10_generic_lister_get_looks_up_the_bare_name() -> None:
    indexer = indexed(pod("", "n1"), pod("default", "n1"))
    got = GenericLister(indexer, NODES.gvr).get("n1")
    assert got.metadata.namespace is None


def test_h10_generic_namespace_lister_always_looks_up_ns_slash_name() -> None:
    indexer = indexed(pod("", "n1"), pod("default", "p1"))
    generic: GenericLister[Any] = GenericLister(indexer, PODS.gvr)
    assert generic.by_namespace("default").get("p1").metadata.name == "p1"
    # "" + "/" + name: the bare-name object is not found through by_namespace("").
    with pytest.raises(NotFoundError):
        generic.by_namespace("").get("n1")


def test_h10_generic_not_found_uses_plural_resource_and_group() -> None:
    with pytest.raises(NotFoundError) as info:
        GenericLister(indexed(), PODS.gvr).get("x")
    assert str(info.value) == 'pods "x" not found'
    assert info.value.details == {"group": "", "kind": "pods", "name": "x"}
    with pytest.raises(NotFoundError) as info:
        GenericLister(indexed(), DEPLOYMENTS).by_namespace("prod").get("x")
    assert str(info.value) == 'deployments.apps "x" not found in namespace "prod"'


def test_h10_generic_list_and_namespace_list_as_h9(pod_indexer: Indexer[Obj]) -> None:
    generic: GenericLister[Obj] = GenericLister(pod_indexer, PODS.gvr)
    assert names(generic.list("app=web")) == ["default/web-1", "default/web-2", "other/web-3"]
    assert names(generic.by_namespace("other").list()) == ["other/web-3"]
    assert len(generic.by_namespace("").list()) == 5
    assert generic.list(labels.nothing()) == []


def test_h9_selector_list_reads_labels_of_models_mappings_and_objects_without_metadata() -> None:
    from kubeinformers.runtime.cache.listers import filter_by_selector
    from kubeinformers.runtime.labels import parse

    class Meta(KubeModel):
        labels: dict[str, str] | None = None

    class Thing(KubeModel):
        metadata: Meta | None = None

    typed = [Thing(metadata=Meta(labels={"app": "web"})), Thing(metadata=Meta())]
    mixed: list[object] = [*typed, {"metadata": {"labels": {"app": "web"}}}, Thing()]
    selector = parse("app=web")
    assert filter_by_selector(typed, selector) == typed[:1]
    assert filter_by_selector(iter(mixed), selector) == [mixed[0], mixed[2]]
    assert filter_by_selector(mixed, parse("app!=web")) == [mixed[1], mixed[3]]
