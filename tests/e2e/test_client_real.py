"""The typed client (M-rules, issue 28) against a real kube-apiserver: every verb on a built-in
kind (ConfigMap, Pod, Node) and on both demo CRDs (namespaced Widget, cluster-scoped Gadget),
the status subresource, optimistic concurrency, server-side apply's field managers, typed
errors, read-your-writes through a factory for every queue kind, and an update that keeps the
fields a newer server has and our models lack."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from examples.informers.demo.v1.apply.widget import WidgetApply
from examples.informers.demo.v1.gadget import Gadget, GadgetSpec
from examples.informers.demo.v1.widget import Widget, WidgetSpec, WidgetStatus
from examples.informers.demo.v1alpha1.widget import Widget as WidgetV1alpha1
from kubeinformers.generated.apiextensions.v1 import CustomResourceDefinition
from kubeinformers.generated.apps.v1 import Deployment, DeploymentSpec
from kubeinformers.generated.apps.v1.apply import DeploymentApply
from kubeinformers.generated.core.v1 import (
    ConfigMap,
    Container,
    Namespace,
    Node,
    Pod,
    PodSpec,
    PodTemplateSpec,
)
from kubeinformers.generated.core.v1.apply import ConfigMapApply, ContainerApply
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.generated.meta.v1 import FieldsV1, LabelSelector, ObjectMeta
from kubeinformers.runtime.api.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    UnsupportedMediaType,
)
from kubeinformers.runtime.api.listwatch import ListOptions
from kubeinformers.runtime.api.model import ScaleSpec, Status
from kubeinformers.runtime.cache.freshness import ReadYourWritesTimeout
from kubeinformers.runtime.client import server_warnings
from kubeinformers.runtime.client.retry import retry_on_conflict
from kubeinformers.runtime.client.typed import AsyncClient, Client
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.support.cluster import RealCluster
from tests.support.csr import approve_and_deny
from tests.support.field_validation import patch_under_each_mode, said

pytestmark = pytest.mark.real_apiserver

REPO = Path(__file__).resolve().parents[2]
_IDS = itertools.count()


def _crd(name: str) -> dict[str, Any]:
    return yaml.safe_load((REPO / "crds" / name).read_text())  # type: ignore[no-any-return]


@pytest.fixture
def cluster(real_apiserver: RealApiServer) -> RealCluster:
    cluster = RealCluster(real_apiserver)
    cluster.ensure(_crd("demo.kubeinformers.io_widgets.yaml"))
    cluster.ensure(_crd("demo.kubeinformers.io_gadgets.yaml"))
    return cluster


@pytest.fixture
def ns(cluster: RealCluster) -> str:
    return cluster.namespace(f"client-{next(_IDS)}")


@pytest.fixture
def client(real_apiserver: RealApiServer) -> Client:
    return Client(real_apiserver.api_client())


def _widget(name: str, ns: str, size: str = "small", **spec: Any) -> Widget:
    return Widget(metadata=ObjectMeta(name=name, namespace=ns), spec=WidgetSpec(size=size, **spec))


# --- M2: every verb, typed, on built-in kinds and both CRDs -----------------------------------


def test_m2_configmap_create_get_list_update_patch_apply_delete(client: Client, ns: str) -> None:
    created = client.create(
        ConfigMap(
            metadata=ObjectMeta(name="cm", namespace=ns, labels={"app": "a"}), data={"k": "1"}
        )
    )
    assert isinstance(created, ConfigMap) and created.metadata and created.metadata.uid
    got = client.get(ConfigMap, "cm", namespace=ns)
    assert got.data == {"k": "1"}
    client.create(ConfigMap(metadata=ObjectMeta(name="other", namespace=ns)))
    page = client.list(ConfigMap, namespace=ns, label_selector="app=a")
    assert [c.metadata.name for c in page.items if c.metadata] == ["cm"]
    first = client.list(ConfigMap, namespace=ns, limit=1)
    assert len(first.items) == 1 and first.continue_
    rest = client.list(ConfigMap, namespace=ns, limit=1, continue_=first.continue_)
    assert len(rest.items) == 1 and rest.items[0].metadata != first.items[0].metadata

    got.data = {"k": "2"}
    updated = client.update(got)
    assert updated.data == {"k": "2"}
    assert (
        updated.metadata and updated.metadata.resource_version != created.metadata.resource_version
    )
    merged = client.patch(ConfigMap, "cm", {"data": {"m": "3"}}, namespace=ns)
    assert merged.data == {"k": "2", "m": "3"}
    jsoned = client.patch(
        ConfigMap, "cm", [{"op": "remove", "path": "/data/m"}], namespace=ns, patch_type="json"
    )
    assert jsoned.data == {"k": "2"}
    strategic = client.patch(
        ConfigMap, "cm", {"data": {"s": "4"}}, namespace=ns, patch_type="strategic"
    )
    assert strategic.data == {"k": "2", "s": "4"}
    applied = client.apply(
        ConfigMap(metadata=ObjectMeta(name="cm", namespace=ns), data={"a": "5"}),
        field_manager="w2-test",
    )
    assert applied.data is not None and applied.data["a"] == "5"
    gone = client.delete(ConfigMap, "cm", namespace=ns)
    assert isinstance(gone, (ConfigMap, Status))
    with pytest.raises(NotFound) as err:
        client.get(ConfigMap, "cm", namespace=ns)
    assert err.value.status.reason == "NotFound" and 'configmaps "cm"' in str(err.value)


def test_m2_a_dry_run_answers_without_writing(client: Client, ns: str) -> None:
    would_be = client.create(_widget("dry", ns), dry_run=True)
    assert would_be.metadata and would_be.metadata.uid  # the server filled it in
    with pytest.raises(NotFound):
        client.get(Widget, "dry", namespace=ns)
    client.create(_widget("dry", ns))
    client.delete(Widget, "dry", namespace=ns, dry_run=True)
    assert client.get(Widget, "dry", namespace=ns).metadata is not None


def test_m2_cluster_scoped_builtin_node(client: Client) -> None:
    name = f"node-{next(_IDS)}"
    node = client.create(Node(metadata=ObjectMeta(name=name, labels={"role": "w2"})))
    assert isinstance(node, Node)
    assert client.get(Node, name).metadata == node.metadata
    assert name in [
        n.metadata.name for n in client.list(Node, label_selector="role=w2").items if n.metadata
    ]
    patched = client.patch(Node, name, {"metadata": {"labels": {"x": "y"}}})
    assert patched.metadata and patched.metadata.labels == {"role": "w2", "x": "y"}
    client.delete(Node, name)
    with pytest.raises(NotFound):
        client.get(Node, name)


def test_m2_widget_and_gadget_every_verb(client: Client, ns: str) -> None:
    w = client.create(_widget("w", ns, color="red"))
    assert isinstance(w, Widget) and w.spec and w.spec.color == "red"
    assert client.get(Widget, "w", namespace=ns).spec == w.spec
    assert [x.metadata.name for x in client.list(Widget, namespace=ns).items if x.metadata] == ["w"]
    assert w.spec is not None
    w.spec.replicas = 2
    w2 = client.update(w)
    assert w2.spec and w2.spec.replicas == 2
    w3 = client.patch(Widget, "w", {"spec": {"color": "blue"}}, namespace=ns)
    assert w3.spec and w3.spec.color == "blue" and w3.spec.replicas == 2
    with pytest.raises(UnsupportedMediaType) as refused:  # M4: and what to send instead
        client.patch(Widget, "w", {"spec": {}}, namespace=ns, patch_type="strategic")
    assert 'patch_type="merge"' in str(refused.value)
    w4 = client.apply(_widget("w", ns, size="large"), field_manager="w2-test", force=True)
    assert w4.spec and w4.spec.size == "large"
    client.delete(Widget, "w", namespace=ns)
    with pytest.raises(NotFound):
        client.get(Widget, "w", namespace=ns)

    name = f"gadget-{next(_IDS)}"
    g = client.create(Gadget(metadata=ObjectMeta(name=name), spec=GadgetSpec(model="m1")))
    assert isinstance(g, Gadget) and g.spec and g.spec.model == "m1"
    g2 = client.patch(Gadget, name, {"spec": {"serial": "s"}})
    assert g2.spec and g2.spec.serial == "s"
    assert client.get(Gadget, name).spec == g2.spec
    g3 = client.apply(
        Gadget(metadata=ObjectMeta(name=name), spec=GadgetSpec(model="m2")),
        field_manager="w2-test",
        force=True,
    )
    assert g3.spec and g3.spec.model == "m2" and g3.spec.serial == "s"
    client.delete(Gadget, name)


# --- M3: the status subresource -----------------------------------------------------------------


def test_m3_update_status_and_apply_status_change_only_the_status(client: Client, ns: str) -> None:
    w = client.create(_widget("s", ns))
    w.status = WidgetStatus(phase="Ready", ready_replicas=1)
    assert w.spec is not None
    w.spec.color = "ignored"  # the status subresource ignores spec changes
    after = client.update_status(w)
    assert after.status and after.status.phase == "Ready"
    assert after.spec and after.spec.color is None
    applied = client.apply_status(
        Widget(metadata=ObjectMeta(name="s", namespace=ns), status=WidgetStatus(phase="Failed")),
        field_manager="status-writer",
        force=True,
    )
    assert applied.status and applied.status.phase == "Failed"
    patched = client.patch(
        Widget, "s", {"status": {"readyReplicas": 3}}, namespace=ns, subresource="status"
    )
    assert patched.status and patched.status.ready_replicas == 3

    pod = client.create(
        Pod(
            metadata=ObjectMeta(name="p", namespace=ns),
            spec=PodSpec(containers=[Container(name="c", image="busybox")]),
        )
    )
    assert pod.status is not None
    pod.status.message = "from the test"
    assert client.update_status(pod).status.message == "from the test"  # type: ignore[union-attr]


def test_m3_scale_subresource_of_a_crd_and_a_deployment(client: Client, ns: str) -> None:
    client.create(_widget("scaled", ns, replicas=1))
    assert client.get_scale(Widget, "scaled", namespace=ns).spec == ScaleSpec(replicas=1)
    scaled = client.scale(Widget, "scaled", 4, namespace=ns)
    assert scaled.spec and scaled.spec.replicas == 4
    widget = client.get(Widget, "scaled", namespace=ns)
    assert widget.spec and widget.spec.replicas == 4
    labels = {"app": "scaled"}
    client.create(
        Deployment(
            metadata=ObjectMeta(name="scaled", namespace=ns),
            spec=DeploymentSpec(
                selector=LabelSelector(match_labels=labels),
                template=PodTemplateSpec(
                    metadata=ObjectMeta(labels=labels),
                    spec=PodSpec(containers=[Container(name="c", image="busybox")]),
                ),
            ),
        )
    )
    assert client.scale(Deployment, "scaled", 3, namespace=ns).spec == ScaleSpec(replicas=3)
    deployment = client.get(Deployment, "scaled", namespace=ns)
    assert deployment.spec and deployment.spec.replicas == 3
    with pytest.raises(ValueError, match="no scale subresource"):
        client.get_scale(ConfigMap, "x", namespace=ns)


def test_m3_status_write_on_a_kind_without_status_subresource_is_refused(
    client: Client, ns: str
) -> None:
    with pytest.raises(ValueError, match="no status subresource"):
        client.patch(ConfigMap, "x", {}, namespace=ns, subresource="status")


# --- M4: optimistic concurrency, apply conflicts, typed errors ----------------------------------


def test_m4_a_stale_update_is_a_conflict_and_retry_on_conflict_redoes_it(
    client: Client, ns: str
) -> None:
    stale = client.create(_widget("c", ns))
    client.patch(Widget, "c", {"spec": {"replicas": 4}}, namespace=ns)
    assert stale.spec is not None
    stale.spec.color = "green"
    with pytest.raises(Conflict) as err:
        client.update(stale)
    assert err.value.code == 409 and "read it again" in str(err.value)

    attempts = 0

    def bump() -> Widget:
        nonlocal attempts
        attempts += 1
        current = stale if attempts == 1 else client.get(Widget, "c", namespace=ns)
        assert current.spec is not None
        current.spec.color = "green"
        return client.update(current)

    done = retry_on_conflict(bump)
    assert attempts == 2 and done.spec and done.spec.color == "green" and done.spec.replicas == 4


def test_m4_two_field_managers_conflict_and_force_takes_the_field_over(
    client: Client, ns: str
) -> None:
    client.apply(_widget("fm", ns, color="red"), field_manager="alice")
    with pytest.raises(Conflict) as err:
        client.apply(_widget("fm", ns, color="blue"), field_manager="bob")
    assert "force=True" in str(err.value) and err.value.causes
    won = client.apply(_widget("fm", ns, color="blue"), field_manager="bob", force=True)
    assert won.spec and won.spec.color == "blue"
    managers = {m.manager for m in (won.metadata.managed_fields or [])} if won.metadata else set()
    assert "bob" in managers


def test_m4_typed_errors_carry_the_status(
    client: Client, ns: str, real_apiserver: RealApiServer
) -> None:
    client.create(_widget("e", ns))
    with pytest.raises(AlreadyExists):
        client.create(_widget("e", ns))
    with pytest.raises(Invalid) as invalid:
        client.create(ConfigMap(metadata=ObjectMeta(name="Not_A_Name", namespace=ns)))
    assert any(c.field == "metadata.name" for c in invalid.value.causes), invalid.value.causes
    with pytest.raises(Conflict) as precondition:  # a precondition that no longer holds
        client.delete(Widget, "e", namespace=ns, uid="not-the-uid")
    assert "retry_on_conflict" not in str(precondition.value)  # redone, it deletes another
    assert "preconditions name" in str(precondition.value)
    noperms = Client(real_apiserver.api_client(user="noperms"))
    with pytest.raises(Forbidden) as forbidden:
        noperms.get(Widget, "e", namespace=ns)
    assert "RBAC" in str(forbidden.value)


def test_m4_a_resource_the_server_does_not_serve_says_so(client: Client, ns: str) -> None:
    """scheduling.k8s.io/v1alpha1 (generated, not enabled by default) and a CRD not installed:
    the error names the resource and version the server does not serve and what to check, for
    every call, not only the server's "the server could not find the requested resource"."""
    from kubeinformers.generated.scheduling.v1alpha1 import Workload

    with pytest.raises(NotFound) as err:
        client.get(Workload, "w", namespace=ns)
    assert "does not serve workloads.scheduling.k8s.io in scheduling.k8s.io/v1alpha1" in str(
        err.value
    )
    with pytest.raises(NotFound) as err:
        client.delete(Workload, "w", namespace=ns)
    assert "check the API group and version" in str(err.value)
    with pytest.raises(NotFound) as err:  # an object missing is said as the server says it
        client.get(Widget, "absent", namespace=ns)
    assert "does not serve" not in str(err.value)


def test_m4_a_create_in_a_terminating_namespace_says_so_not_rbac(client: Client) -> None:
    """The server here has no namespace controller: a deleted namespace stays terminating, and
    NamespaceLifecycle refuses new objects in it with a 403 that no RBAC rule causes."""
    name = f"doomed-{next(_IDS)}"
    client.create(Namespace(metadata=ObjectMeta(name=name)))
    client.delete(Namespace, name)
    with pytest.raises(Forbidden) as err:
        client.apply(ConfigMapApply(metadata={"name": "x", "namespace": name}), field_manager="m")
    assert "RBAC" not in str(err.value) and "namespace is being deleted" in str(err.value)


def test_m11_a_field_the_server_drops_is_logged_as_its_warning(
    client: Client, ns: str, caplog: pytest.LogCaptureFixture
) -> None:
    """kube-apiserver drops a field it does not know (default field validation: Warn) and says
    so only in a Warning header, which the client logs."""
    typo = ConfigMap.model_validate({"metadata": {"name": "typo", "namespace": ns}, "dta": {}})
    with caplog.at_level(logging.WARNING, logger="kubeinformers.client"):
        client.create(typo)
    said = [r.getMessage() for r in caplog.records if r.name == "kubeinformers.client"]
    assert any(
        m.startswith(f'create configmaps "typo" in namespace "{ns}" at ')
        and m.endswith('the server warns: unknown field "dta"')
        for m in said
    ), said


def test_m4_the_hint_of_a_conflict_or_invalid_patch_fits_the_servers_answer(
    client: Client, ns: str
) -> None:
    client.apply(_widget("h", ns), field_manager="alice")
    stale = _widget("h", ns, color="red")
    assert stale.metadata is not None
    stale.metadata.resource_version = "1"  # an apply may carry a resourceVersion: optimistic
    with pytest.raises(Conflict) as err:
        client.apply(stale, field_manager="alice", force=True)
    assert not err.value.causes and "force=True" not in str(err.value)
    assert "leave resourceVersion out of an apply" in str(err.value)
    with pytest.raises(Conflict) as err:  # a field another manager owns: force is the way
        client.apply(_widget("h", ns, size="large"), field_manager="bob")
    assert "FieldManagerConflict" in {c.reason for c in err.value.causes}
    assert "force=True" in str(err.value)
    for op in (
        {"op": "test", "path": "/spec/size", "value": "large"},
        {"op": "remove", "path": "/spec/nope"},
    ):
        with pytest.raises(Invalid) as invalid:
            client.patch(Widget, "h", [op], namespace=ns, patch_type="json")
        assert not invalid.value.causes  # the server says nothing about why
        assert "JSON patch does not apply to the object" in str(invalid.value)


def test_m9_a_name_or_namespace_that_is_no_path_segment_is_refused_before_any_request(
    client: Client, ns: str
) -> None:
    # Sent as they are, an empty name is the collection's path (DELETE: every ConfigMap of the
    # namespace) and ".." the namespace's own (DELETE: the namespace), as the server answers.
    for i in range(2):
        client.create(ConfigMap(metadata=ObjectMeta(name=f"keep-{i}", namespace=ns)))
    calls: list[Callable[[], object]] = [
        lambda: client.delete(ConfigMap, "", namespace=ns),
        lambda: client.delete(ConfigMap, "..", namespace=ns),
        lambda: client.get(ConfigMap, "", namespace=ns),
        lambda: client.get(ConfigMap, "..", namespace=ns),
        lambda: client.get(ConfigMap, "a/b", namespace=ns),
        lambda: client.patch(ConfigMap, "..", {"data": {"a": "b"}}, namespace=ns),
        lambda: client.get_scale(Deployment, "", namespace=ns),
        lambda: client.delete(Node, "."),
        lambda: client.update(ConfigMap(metadata=ObjectMeta(name="..", namespace=ns))),
        lambda: client.get(ConfigMap, "keep-0", namespace=".."),
        lambda: client.list(ConfigMap, namespace=".."),
        lambda: client.create(ConfigMap(metadata=ObjectMeta(name="x", namespace="a/.."))),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"configmaps|deployments\.apps|nodes") as err:
            call()
        assert "may not" in str(err.value), err.value
    names = [c.metadata.name for c in client.list(ConfigMap, namespace=ns).items if c.metadata]
    assert sorted(n for n in names if n and n.startswith("keep-")) == ["keep-0", "keep-1"]
    namespace = client.get(Namespace, ns)
    assert namespace.metadata is not None and namespace.metadata.deletion_timestamp is None

    async def main() -> None:
        aclient = AsyncClient(client.api_client)
        with pytest.raises(ValueError, match="may not be empty"):
            await aclient.delete(ConfigMap, "", namespace=ns)

    asyncio.run(main())


# --- M1: read your writes -----------------------------------------------------------------------


@pytest.mark.parametrize("queue", ["delta", "ordered", "atomic"])
def test_m1_a_write_through_the_factory_client_is_in_the_lister_when_it_returns(
    real_apiserver: RealApiServer, ns: str, queue: Any
) -> None:
    with SharedInformerFactory(real_apiserver.api_client(), namespace=ns, queue=queue) as factory:
        lister = factory.lister(Widget)
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        client = factory.client()
        for i in range(5):
            created = client.create(_widget(f"r{i}", ns))
            cached = lister.widgets(ns).get(f"r{i}")
            assert cached.metadata and created.metadata
            assert cached.metadata.resource_version == created.metadata.resource_version
            patched = client.patch(Widget, f"r{i}", {"spec": {"replicas": i}}, namespace=ns)
            cached = lister.widgets(ns).get(f"r{i}")
            assert cached.spec and cached.spec.replicas == i
            assert cached.metadata and patched.metadata
            assert cached.metadata.resource_version == patched.metadata.resource_version
            applied = client.apply(  # an apply configuration (M8) waits the same way
                WidgetApply(metadata={"name": f"r{i}", "namespace": ns}, spec={"color": "teal"}),
                field_manager="ryw",
            )
            cached = lister.widgets(ns).get(f"r{i}")
            assert cached.spec and cached.spec.color == "teal"
            assert cached.metadata and applied.metadata
            assert cached.metadata.resource_version == applied.metadata.resource_version
            client.delete(Widget, f"r{i}", namespace=ns)
            with pytest.raises(NotFound):
                lister.widgets(ns).get(f"r{i}")


def test_m1_a_write_through_another_version_of_a_watched_resource_waits_for_its_informer(
    real_apiserver: RealApiServer, ns: str
) -> None:
    with SharedInformerFactory(real_apiserver.api_client(), namespace=ns) as factory:
        lister = factory.lister(WidgetV1alpha1)  # the factory watches v1alpha1 only
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        client = factory.client()
        for i in range(5):
            created = client.create(_widget(f"v{i}", ns))  # written as v1
            cached = lister.widgets(ns).get(f"v{i}")
            assert cached.metadata and created.metadata
            assert cached.metadata.resource_version == created.metadata.resource_version
            patched = client.patch(Widget, f"v{i}", {"spec": {"color": "red"}}, namespace=ns)
            cached = lister.widgets(ns).get(f"v{i}")
            assert cached.metadata and patched.metadata
            assert cached.metadata.resource_version == patched.metadata.resource_version
            client.delete(Widget, f"v{i}", namespace=ns)
            with pytest.raises(NotFound):
                lister.widgets(ns).get(f"v{i}")


@pytest.mark.parametrize("queue", ["delta", "ordered", "atomic"])
def test_m1_a_write_that_takes_the_object_out_of_the_label_selector_returns_once_it_left(
    real_apiserver: RealApiServer, ns: str, queue: Any
) -> None:
    # The watch tells the informer with a DELETED event; returning before it, the lister
    # answered with the version from before the write (58 times in 100 before the fix).
    def team_a(options: ListOptions) -> ListOptions:
        options.label_selector = "team=a"
        return options

    with SharedInformerFactory(
        real_apiserver.api_client(), namespace=ns, queue=queue, tweak_list_options=team_a
    ) as factory:
        lister = factory.lister(ConfigMap)
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        client = factory.client(read_your_writes_timeout=20)
        for i in range(10):
            name = f"sel-{i}"
            made = client.create(
                ConfigMap(metadata=ObjectMeta(name=name, namespace=ns, labels={"team": "a"}))
            )
            assert made.metadata is not None
            made.metadata.labels = {"team": "b"}
            client.update(made)
            with pytest.raises(NotFound):
                lister.config_maps(ns).get(name)
            back = client.patch(
                ConfigMap, name, {"metadata": {"labels": {"team": "a"}}}, namespace=ns
            )
            cached = lister.config_maps(ns).get(name)
            assert cached.metadata and back.metadata
            assert cached.metadata.resource_version == back.metadata.resource_version
            client.apply(
                ConfigMapApply(metadata={"name": name, "namespace": ns, "labels": {"team": "c"}}),
                field_manager="sel",
                force=True,
            )
            with pytest.raises(NotFound):
                lister.config_maps(ns).get(name)
        # Outside the selector and never cached: nothing to wait for, it returns at once.
        quick = factory.client(read_your_writes_timeout=1)
        other = quick.create(
            ConfigMap(metadata=ObjectMeta(name="sel-b", namespace=ns, labels={"team": "b"}))
        )
        assert other.metadata is not None
        other.data = {"k": "v"}
        quick.update(other)

        async def leave_async() -> None:
            aclient = factory.async_client(read_your_writes_timeout=20)
            await aclient.patch(
                ConfigMap, "sel-0", {"metadata": {"labels": {"team": "a"}}}, namespace=ns
            )
            assert lister.config_maps(ns).get("sel-0")
            await aclient.patch(
                ConfigMap, "sel-0", {"metadata": {"labels": {"team": "b"}}}, namespace=ns
            )
            with pytest.raises(NotFound):
                lister.config_maps(ns).get("sel-0")

        asyncio.run(leave_async())

        # A Scale carries none of the object's labels: the scaled object is waited for as well.
        deployments = factory.lister(Deployment)
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        client.apply(
            DeploymentApply(
                metadata={"name": "sel-d", "namespace": ns, "labels": {"team": "a"}},
                spec={
                    "selector": {"matchLabels": {"app": "d"}},
                    "template": {
                        "metadata": {"labels": {"app": "d"}},
                        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
                    },
                },
            ),
            field_manager="sel",
        )
        for replicas in range(1, 11):
            client.scale(Deployment, "sel-d", replicas, namespace=ns)
            scaled = deployments.deployments(ns).get("sel-d")
            assert scaled.spec is not None and scaled.spec.replicas == replicas


def test_m1_a_write_that_removes_the_last_finalizer_returns_once_the_object_is_gone(
    real_apiserver: RealApiServer, ns: str
) -> None:
    # The server deletes the object after that write and answers with it as written, at the
    # resourceVersion before the delete: waiting for that version would end too soon.
    with SharedInformerFactory(real_apiserver.api_client(), namespace=ns) as factory:
        lister = factory.lister(ConfigMap)
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        client = factory.client()
        for i, how in enumerate(["merge", "json", "update"] * 3):
            name = f"fin-{i}"
            client.create(
                ConfigMap(metadata=ObjectMeta(name=name, namespace=ns, finalizers=["x.io/f"]))
            )
            kept = client.delete(ConfigMap, name, namespace=ns)  # the finalizer keeps it
            assert not isinstance(kept, Status)
            if how == "merge":
                client.patch(ConfigMap, name, {"metadata": {"finalizers": None}}, namespace=ns)
            elif how == "json":
                patch = [{"op": "remove", "path": "/metadata/finalizers"}]
                client.patch(ConfigMap, name, patch, namespace=ns, patch_type="json")
            else:
                current = client.get(ConfigMap, name, namespace=ns)
                assert current.metadata is not None
                current.metadata.finalizers = None
                client.update(current)
            with pytest.raises(NotFound):
                lister.config_maps(ns).get(name)


def test_m1_async_client_reads_its_writes_without_blocking_the_loop(
    real_apiserver: RealApiServer, ns: str
) -> None:
    async def main() -> None:
        factory = SharedInformerFactory(real_apiserver.api_client(), namespace=ns)
        lister = factory.lister(ConfigMap)
        async with factory:
            client: AsyncClient = factory.async_client()
            made = await client.create(ConfigMap(metadata=ObjectMeta(name="a", namespace=ns)))
            cached = lister.config_maps(ns).get("a")
            assert cached.metadata and made.metadata
            assert cached.metadata.resource_version == made.metadata.resource_version
            await client.delete(ConfigMap, "a", namespace=ns)
            assert lister.config_maps(ns).list() == []

    asyncio.run(main())


def test_m1_a_cache_that_does_not_catch_up_times_out_with_a_typed_error(
    real_apiserver: RealApiServer, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SharedInformerFactory(real_apiserver.api_client(), namespace=ns) as factory:
        informer = factory.informer(ConfigMap)
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        # A stalled watch: the informer runs but its cache never reaches the write.
        stalled = informer.wait_for_resource_version
        monkeypatch.setattr(
            informer, "wait_for_resource_version", lambda rv, timeout: stalled(str(10**15), timeout)
        )
        client = factory.client(read_your_writes_timeout=0.3)
        with pytest.raises(ReadYourWritesTimeout) as err:
            client.create(ConfigMap(metadata=ObjectMeta(name="t", namespace=ns)))
        assert isinstance(err.value.obj, ConfigMap) and "succeeded" in str(err.value)
        assert 'configmaps "t"' in str(err.value)
        opted_out = factory.client(read_your_writes=False)
        assert not opted_out.read_your_writes
        assert isinstance(
            opted_out.create(ConfigMap(metadata=ObjectMeta(name="u", namespace=ns))), ConfigMap
        )


# --- M5: no data lost across versions -----------------------------------------------------------


def test_m5_an_update_from_a_cached_object_keeps_fields_the_model_lacks(
    real_apiserver: RealApiServer, cluster: RealCluster, client: Client, ns: str
) -> None:
    """A server newer than the generated code: the Widget CRD's v1 gains `spec.rating`, which
    the generated Widget model does not have; read-modify-write through the model keeps it."""
    crd = client.get(CustomResourceDefinition, "widgets.demo.kubeinformers.io")
    assert crd.spec is not None
    v1 = next(i for i, v in enumerate(crd.spec.versions or []) if v.name == "v1")
    path = f"/spec/versions/{v1}/schema/openAPIV3Schema/properties/spec/properties/rating"
    client.patch(
        CustomResourceDefinition,
        "widgets.demo.kubeinformers.io",
        [{"op": "add", "path": path, "value": {"type": "integer"}}],
        patch_type="json",
    )
    assert "rating" not in WidgetSpec.model_fields

    def rating_served() -> bool:  # the new schema takes effect shortly after the CRD update
        made = cluster.create(
            {
                "apiVersion": "demo.kubeinformers.io/v1",
                "kind": "Widget",
                "metadata": {"generateName": "probe-", "namespace": ns},
                "spec": {"size": "small", "rating": 5},
            }
        )
        return bool(made["spec"].get("rating") == 5)

    _eventually(rating_served)
    cluster.create(
        {
            "apiVersion": "demo.kubeinformers.io/v1",
            "kind": "Widget",
            "metadata": {"name": "skew", "namespace": ns},
            "spec": {"size": "small", "rating": 7},
        }
    )
    with SharedInformerFactory(real_apiserver.api_client(), namespace=ns) as factory:
        lister = factory.lister(Widget)
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        cached = lister.widgets(ns).get("skew").model_copy(deep=True)
        assert cached.spec is not None
        cached.spec.color = "teal"
        updated = factory.client().update(cached)
    assert updated.spec and updated.spec.color == "teal"
    assert cluster.get("demo.kubeinformers.io/v1", "Widget", "skew", ns)["spec"]["rating"] == 7
    fresh = client.get(Widget, "skew", namespace=ns)
    assert fresh.spec is not None and fresh.spec.model_extra == {"rating": 7}


def _eventually(cond: Any, timeout: float = 30.0) -> None:
    import threading
    import time

    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout} s")
        tick.wait(0.2)


# --- M8: apply configurations (partial objects that type-check) --------------------------------


def _web(name: str, ns: str, image: str = "nginx") -> DeploymentApply:
    """A whole Deployment as one manager's configuration (selector, template, one container)."""
    return DeploymentApply(
        metadata={"name": name, "namespace": ns},
        spec={
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    )


def _managed(obj: Deployment | Widget, manager: str) -> dict[str, Any]:
    """The fields `manager` owns (managedFields' fieldsV1), {} when it owns none."""
    entries = (obj.metadata.managed_fields or []) if obj.metadata else []
    for entry in entries:
        fields = entry.fields_v1
        if entry.manager == manager and fields is not None:
            return fields.model_dump() if isinstance(fields, FieldsV1) else dict(fields)
    return {}


def test_m8_applying_only_replicas_to_an_existing_deployment(
    client: Client, real_apiserver: RealApiServer, ns: str
) -> None:
    client.apply(_web("scaled", ns), field_manager="deployer")
    scaled = client.apply(
        DeploymentApply(metadata={"name": "scaled", "namespace": ns}, spec={"replicas": 5}),
        field_manager="scaler",
    )
    assert isinstance(scaled, Deployment) and scaled.spec and scaled.spec.replicas == 5
    containers = (scaled.spec.template.spec.containers if scaled.spec.template.spec else []) or []
    assert [c.name for c in containers] == ["app"]  # the deployer's fields are untouched
    assert _managed(scaled, "scaler") == {"f:spec": {"f:replicas": {}}}

    async def scale_down() -> Deployment:
        aclient = AsyncClient(real_apiserver.api_client())
        config = DeploymentApply(metadata={"name": "scaled", "namespace": ns}, spec={"replicas": 2})
        return await aclient.apply(config, field_manager="scaler")

    down = asyncio.run(scale_down())
    assert isinstance(down, Deployment) and down.spec and down.spec.replicas == 2


def test_m8_containers_merge_by_their_name_key(client: Client, ns: str) -> None:
    client.apply(_web("merged", ns), field_manager="deployer")
    sidecar: ContainerApply = {"name": "log", "image": "busybox", "ports": [{"containerPort": 9}]}
    injected = client.apply(
        DeploymentApply(
            metadata={"name": "merged", "namespace": ns},
            spec={"template": {"spec": {"containers": [sidecar]}}},
        ),
        field_manager="injector",
    )
    pod = injected.spec.template.spec if injected.spec else None
    assert pod is not None and pod.containers
    assert {c.name: c.image for c in pod.containers} == {"app": "nginx", "log": "busybox"}
    log = next(c for c in pod.containers if c.name == "log")
    assert log.ports and log.ports[0].protocol == "TCP"  # a defaulted key, filled in by the server
    # The injector owns only its container: applying without it removes it, and only it.
    without = client.apply(
        DeploymentApply(metadata={"name": "merged", "namespace": ns}), field_manager="injector"
    )
    assert without.spec and without.spec.template.spec and without.spec.template.spec.containers
    assert [c.name for c in without.spec.template.spec.containers] == ["app"]


def test_m8_status_apply_through_a_configuration(client: Client, ns: str) -> None:
    client.create(_widget("st", ns, color="red"))
    when = datetime(2026, 11, 24, 12, 0, 0, tzinfo=UTC)
    ready = client.apply_status(
        WidgetApply(
            metadata={"name": "st", "namespace": ns},
            status={
                "phase": "Ready",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": when}],
            },
        ),
        field_manager="widget-controller",
    )
    assert isinstance(ready, Widget) and ready.status and ready.status.phase == "Ready"
    assert ready.status.conditions and ready.status.conditions[0].last_transition_time == when
    assert ready.spec and ready.spec.color == "red"  # the status subresource left the spec


def test_m8_two_managers_conflict_on_a_configuration_and_force_takes_the_field(
    client: Client, ns: str
) -> None:
    def color(value: str) -> WidgetApply:
        return WidgetApply(
            metadata={"name": "fm8", "namespace": ns}, spec={"size": "small", "color": value}
        )

    client.apply(color("red"), field_manager="alice")
    with pytest.raises(Conflict) as err:
        client.apply(color("blue"), field_manager="bob")
    assert any("color" in (c.field or "") for c in err.value.causes), err.value.causes
    won = client.apply(color("blue"), field_manager="bob", force=True)
    assert won.spec and won.spec.color == "blue"
    assert "f:color" not in _managed(won, "alice").get("f:spec", {})  # alice lost the field
    assert "f:size" in _managed(won, "alice")["f:spec"]  # the same value stays shared


def test_m13_reviews_are_created_and_come_back_with_the_servers_answer(
    real_apiserver: RealApiServer, client: Client, ns: str
) -> None:
    """M13: kinds the server serves for create only (no list, no watch, so no informer and no
    lister) are written by the typed client as any kind, and the answer is the review with
    the server's status; a factory's client (read your writes) returns at once."""
    from kubeinformers.generated.authentication.v1 import SelfSubjectReview, TokenReview
    from kubeinformers.generated.authentication.v1 import TokenReviewSpec as TokenSpec
    from kubeinformers.generated.authorization.v1 import (
        LocalSubjectAccessReview,
        ResourceAttributes,
        SelfSubjectAccessReview,
        SelfSubjectAccessReviewSpec,
        SubjectAccessReview,
        SubjectAccessReviewSpec,
    )

    me = client.create(SelfSubjectReview())
    assert type(me) is SelfSubjectReview
    assert me.status is not None and me.status.user_info is not None
    assert "system:authenticated" in (me.status.user_info.groups or [])

    token = client.create(TokenReview(spec=TokenSpec(token="not-a-token")))
    assert token.status is not None and not token.status.authenticated
    assert token.status.error  # the server says why

    pods_here = ResourceAttributes(verb="list", resource="pods", namespace=ns)
    mine = client.create(
        SelfSubjectAccessReview(spec=SelfSubjectAccessReviewSpec(resource_attributes=pods_here))
    )
    assert mine.status is not None and mine.status.allowed is True
    nobody = SubjectAccessReviewSpec(user="nobody-at-all", resource_attributes=pods_here)
    theirs = client.create(SubjectAccessReview(spec=nobody))
    assert theirs.status is not None and theirs.status.allowed is False
    local = client.create(LocalSubjectAccessReview(metadata=ObjectMeta(namespace=ns), spec=nobody))
    assert local.status is not None and local.status.allowed is False
    with pytest.raises(ValueError, match=r"localsubjectaccessreviews.* is namespaced"):
        client.create(LocalSubjectAccessReview(spec=nobody))

    async def main() -> None:
        answer = await AsyncClient(client.api_client).create(SelfSubjectReview())
        assert answer.status is not None and answer.status.user_info == me.status.user_info

    asyncio.run(main())

    with SharedInformerFactory(real_apiserver.api_client(), namespace=ns) as factory:
        factory.informer(Pod)
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())
        answer = factory.client(read_your_writes_timeout=5).create(SelfSubjectReview())
        assert answer.status is not None and answer.status.user_info == me.status.user_info


def test_m13_a_binding_sets_the_pods_node_and_comes_back_as_sent(client: Client, ns: str) -> None:
    """M13: the server keeps no Binding (it sets the pod's spec.nodeName) and answers its
    create with Status Success; the client gives back a copy of the Binding sent."""
    from kubeinformers.generated.core.v1 import Binding, ObjectReference

    client.create(
        Pod(
            metadata=ObjectMeta(name="unbound", namespace=ns),
            spec=PodSpec(containers=[Container(name="c", image="nginx")]),
        )
    )
    binding = Binding(
        metadata=ObjectMeta(name="unbound", namespace=ns),
        target=ObjectReference(kind="Node", name="node-m13"),
    )
    answer = client.create(binding)
    assert answer == binding and answer is not binding
    pod = client.get(Pod, "unbound", namespace=ns)
    assert pod.spec is not None and pod.spec.node_name == "node-m13"


def test_m13_what_such_a_kind_is_not_served_for_is_refused_before_any_request(
    real_apiserver: RealApiServer,
) -> None:
    """M13: a verb the server does not serve for such a kind (a get of a TokenReview) and an
    informer of it are refused with what the server does serve, before any request."""
    from kubeinformers.generated.authentication.v1 import TokenReview, TokenReviewSpec
    from kubeinformers.runtime.api.kinds import KindModelError

    client = Client(real_apiserver.api_client())
    untyped: Any = client
    with pytest.raises(KindModelError, match=r"tokenreviews.* for create only.*no get"):
        untyped.get(TokenReview, "t")
    with pytest.raises(KindModelError, match=r"for create only.*no list"):
        untyped.list(TokenReview)
    with pytest.raises(KindModelError, match=r"for create only.*no update"):
        untyped.update(TokenReview(metadata=ObjectMeta(name="t"), spec=TokenReviewSpec()))
    with pytest.raises(KindModelError, match=r"no list and watch.*typed client"):
        SharedInformerFactory(real_apiserver.api_client()).informer(TokenReview)


def test_m13_a_kind_served_for_get_and_list_without_watch_is_read(client: Client) -> None:
    """M13: ComponentStatus (get and list, no watch: no informer) is listed and got by the
    typed client, typed; a create of it is refused before any request."""
    from kubeinformers.generated.core.v1 import ComponentStatus
    from kubeinformers.runtime.api.kinds import KindModelError

    listed = client.list(ComponentStatus)
    names = [c.metadata.name for c in listed.items if c.metadata is not None]
    assert names and all(isinstance(c, ComponentStatus) for c in listed.items)
    first = client.get(ComponentStatus, str(names[0]))
    assert first.metadata is not None and first.metadata.name == names[0]
    with pytest.raises(KindModelError, match=r"componentstatuses .* for get, list only"):
        client.create(ComponentStatus(metadata=ObjectMeta(name="x")))


def test_m14_an_eviction_deletes_the_pod_and_a_budget_that_allows_none_refuses_it_at_once(
    client: Client, ns: str
) -> None:
    """M14: an Eviction is created as pods/<name>/eviction (its metadata names the pod); a
    pod no budget protects is deleted. One whose PodDisruptionBudget allows no disruption is
    refused with a 429 without Retry-After: raised at once (M4), saying the budget decides."""
    from kubeinformers.generated.core.v1 import (
        Binding,
        ObjectReference,
        PodCondition,
        PodStatus,
    )
    from kubeinformers.generated.policy.v1 import (
        Eviction,
        PodDisruptionBudget,
        PodDisruptionBudgetSpec,
        PodDisruptionBudgetStatus,
    )
    from kubeinformers.runtime.api.errors import TooManyRequests

    def pod(name: str) -> Pod:
        return client.create(
            Pod(
                metadata=ObjectMeta(name=name, namespace=ns, labels={"app": "m14"}),
                spec=PodSpec(containers=[Container(name="c", image="nginx")]),
            )
        )

    pod("free")
    eviction = Eviction(metadata=ObjectMeta(name="free", namespace=ns))
    assert client.create(eviction) == eviction
    with pytest.raises(NotFound):
        client.get(Pod, "free", namespace=ns)
    with pytest.raises(NotFound, match=r'create Eviction for pods "gone"'):
        client.create(Eviction(metadata=ObjectMeta(name="gone", namespace=ns)))

    # A running, ready pod (bound, its status written: no kubelet here) under a budget that
    # allows none.
    pod("kept")
    client.create(
        Binding(
            metadata=ObjectMeta(name="kept", namespace=ns),
            target=ObjectReference(kind="Node", name="node-m14"),
        )
    )
    running = client.get(Pod, "kept", namespace=ns)
    running.status = PodStatus(  # a ready pod counts against the budget
        phase="Running", conditions=[PodCondition(type="Ready", status="True")]
    )
    client.update_status(running)
    budget = client.create(
        PodDisruptionBudget(
            metadata=ObjectMeta(name="m14", namespace=ns),
            spec=PodDisruptionBudgetSpec(
                min_available=1, selector=LabelSelector(match_labels={"app": "m14"})
            ),
        )
    )
    assert budget.metadata is not None
    budget.status = PodDisruptionBudgetStatus(  # what the disruption controller would write
        observed_generation=budget.metadata.generation,
        disruptions_allowed=0,
        current_healthy=1,
        desired_healthy=1,
        expected_pods=1,
    )
    client.update_status(budget)
    started = time.monotonic()
    with pytest.raises(TooManyRequests, match="PodDisruptionBudget allows no disruption") as err:
        client.create(Eviction(metadata=ObjectMeta(name="kept", namespace=ns)))
    assert time.monotonic() - started < 5  # not sent again: no Retry-After
    assert [c.reason for c in err.value.causes] == ["DisruptionBudget"]
    assert client.get(Pod, "kept", namespace=ns).metadata is not None


def test_m14_a_token_request_returns_a_token_the_server_takes(
    real_apiserver: RealApiServer, client: Client, ns: str
) -> None:
    """M14: a TokenRequest is created as serviceaccounts/<name>/token and comes back with the
    token, which authenticates as the service account."""
    from kubeinformers.generated.authentication.v1 import (
        SelfSubjectReview,
        TokenRequest,
        TokenRequestSpec,
    )
    from kubeinformers.generated.core.v1 import ServiceAccount

    client.create(ServiceAccount(metadata=ObjectMeta(name="robot", namespace=ns)))
    request = TokenRequest(
        metadata=ObjectMeta(name="robot", namespace=ns),
        spec=TokenRequestSpec(audiences=[], expiration_seconds=600),
    )
    issued = client.create(request)
    assert type(issued) is TokenRequest and issued.status is not None
    assert issued.status.token and issued.status.expiration_timestamp is not None
    config = real_apiserver.api_client().configuration
    config.api_key = {"authorization": issued.status.token}
    config.api_key_prefix = {"authorization": "Bearer"}
    from kubernetes.client import ApiClient

    me = Client(ApiClient(config)).create(SelfSubjectReview())
    assert me.status is not None and me.status.user_info is not None
    assert me.status.user_info.username == f"system:serviceaccount:{ns}:robot"


def test_m14_a_kind_created_under_an_object_is_only_created(
    real_apiserver: RealApiServer, client: Client
) -> None:
    """M14: anything but a create of such a kind, an informer of it, or one without the name
    of the object it is for, is refused before any request, saying where it is created."""
    from kubeinformers.generated.policy.v1 import Eviction
    from kubeinformers.runtime.api.kinds import KindModelError

    untyped: Any = client
    with pytest.raises(KindModelError, match=r"Eviction is created only as pods/eviction"):
        untyped.get(Eviction, "p", namespace="default")
    with pytest.raises(KindModelError, match=r"created only as pods/eviction"):
        SharedInformerFactory(real_apiserver.api_client()).informer(Eviction)
    with pytest.raises(ValueError, match="name of the pod it is for"):
        client.create(Eviction(metadata=ObjectMeta(namespace="default")))


def test_m15_a_pod_is_resized_and_debugged_and_a_namespace_finalized_through_subresources(
    client: Client, ns: str
) -> None:
    """M15: subresources written as the kind itself: the server takes only their part of the
    object (a resize keeps the image it was sent, an ephemeral container is added, a
    namespace's finalizers are set through `finalize`)."""
    from kubeinformers.generated.core.v1 import EphemeralContainer, ResourceRequirements

    client.create(
        Pod(
            metadata=ObjectMeta(name="sized", namespace=ns),
            spec=PodSpec(
                containers=[
                    Container(
                        name="c",
                        image="nginx",
                        resources=ResourceRequirements(
                            requests={"cpu": "100m"}, limits={"cpu": "200m"}
                        ),
                    )
                ]
            ),
        )
    )
    resized = client.patch(
        Pod,
        "sized",
        {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "150m"}}}]}},
        namespace=ns,
        patch_type="strategic",
        subresource="resize",
    )
    assert resized.spec is not None and resized.spec.containers[0].resources is not None
    assert resized.spec.containers[0].resources.requests == {"cpu": "150m"}
    pod = client.get(Pod, "sized", namespace=ns)
    assert pod.spec is not None
    pod.spec.containers[0].image = "httpd"  # not the resize's part: kept as it was
    assert pod.spec.containers[0].resources is not None
    pod.spec.containers[0].resources.requests = {"cpu": "120m"}
    updated = client.update(pod, subresource="resize")
    assert updated.spec is not None and updated.spec.containers[0].image == "nginx"
    assert updated.spec.containers[0].resources is not None
    assert updated.spec.containers[0].resources.requests == {"cpu": "120m"}

    updated.spec.ephemeral_containers = [EphemeralContainer(name="debug", image="busybox")]
    debugged = client.update(updated, subresource="ephemeralcontainers")
    assert debugged.spec is not None and debugged.spec.ephemeral_containers is not None
    assert [e.name for e in debugged.spec.ephemeral_containers] == ["debug"]

    namespace = client.get(Namespace, ns)
    assert namespace.spec is not None and namespace.spec.finalizers == ["kubernetes"]
    namespace.spec.finalizers = ["kubernetes", "example.com/hold"]
    finalized = client.update(namespace, subresource="finalize")
    assert finalized.spec is not None
    assert finalized.spec.finalizers == ["kubernetes", "example.com/hold"]
    with pytest.raises(ValueError, match=r"configmaps has no resize subresource"):
        client.patch(ConfigMap, "c", {}, namespace=ns, subresource="resize")


def test_m15_a_certificate_request_is_approved_and_denied_through_approval(
    client: Client, ns: str
) -> None:
    """M15: a CertificateSigningRequest's approval conditions are written through its
    `approval` subresource (update and patch), which takes only them: the request and the
    rest of what is sent stay as the server has them, and the server stamps the conditions'
    times."""
    approve_and_deny(client, ns)


# --- M16: field validation ----------------------------------------------------------------------


def test_m16_field_validation_on_the_real_server(
    client: Client, ns: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M16: `field_validation=` is kube-apiserver's `fieldValidation`. Strict refuses a field
    the CRD's schema does not know and writes nothing: a patch as Invalid (422, its cause on
    `patch`), a create or an update as BadRequest (400). Warn and None (the server's default)
    drop it and its warning is logged once; Ignore drops it and nothing is said. A value that
    is none of the three is refused before any request."""
    monkeypatch.setattr(server_warnings, "_said", OrderedDict())  # nothing said before here
    created = client.create(_widget("fv", ns), field_validation="Strict")
    assert created.metadata is not None

    with caplog.at_level(logging.DEBUG, logger="kubeinformers.client"):
        ignored = patch_under_each_mode(client, created, caplog)

        bogus = Widget.model_validate(
            {"metadata": {"name": "bogus", "namespace": ns}, "spec": {"size": "small", "bogus": 1}}
        )
        refused = (
            'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
            'unknown field "spec.bogus"'
        )
        with pytest.raises(BadRequest) as err:
            client.create(bogus, field_validation="Strict")
        assert refused in str(err.value)
        with pytest.raises(NotFound):
            client.get(Widget, "bogus", namespace=ns)
        typo = ignored.model_dump(mode="json", by_alias=True, exclude_none=True)
        typo["spec"]["bogus"] = 1
        with pytest.raises(BadRequest) as err:
            client.update(Widget.model_validate(typo), field_validation="Strict")
        assert refused in str(err.value)
        with pytest.raises(ValueError, match='"Ignore", "Warn", "Strict" or None'):
            client.create(bogus, field_validation=cast(Any, "Bogus"))

        async def on_the_async_face() -> Widget:
            ours = AsyncClient(client.api_client)
            with pytest.raises(BadRequest, match=r'unknown field "spec\.bogus"'):
                await ours.create(bogus, field_validation="Strict")
            return await ours.create(bogus, field_validation="Ignore")

        made = asyncio.run(on_the_async_face())
        assert made.spec is not None and "bogus" not in (made.spec.model_extra or {})
        assert not said(caplog, "spec.bogus")
    last = client.get(Widget, "fv", namespace=ns)  # the refused update wrote nothing
    assert last.metadata is not None and ignored.metadata is not None
    assert last.metadata.resource_version == ignored.metadata.resource_version
