"""Type-checked only (mypy tests/typing): the typed client infers the model of every call
(M6); the rejected uses are in tests/generated/test_client_typing.py."""

from __future__ import annotations

from typing import assert_type

from examples.informers.demo.v1.apply.gadget import GadgetApply
from examples.informers.demo.v1.apply.widget import WidgetApply, WidgetSpecApply
from examples.informers.demo.v1.gadget import Gadget
from examples.informers.demo.v1.widget import Widget, WidgetSpec, WidgetStatus
from kubeinformers.generated.apps.v1 import Deployment
from kubeinformers.generated.apps.v1.apply import DeploymentApply
from kubeinformers.generated.authentication.v1 import (
    TokenRequest,
    TokenRequestSpec,
    TokenReview,
    TokenReviewSpec,
)
from kubeinformers.generated.authorization.v1 import (
    LocalSubjectAccessReview,
    ResourceAttributes,
    SelfSubjectAccessReview,
    SelfSubjectAccessReviewSpec,
)
from kubeinformers.generated.core.v1 import (
    Binding,
    ComponentStatus,
    ConfigMap,
    Node,
    ObjectReference,
    Pod,
)
from kubeinformers.generated.core.v1.apply import ConfigMapApply, ContainerApply, NodeApply
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.generated.meta.v1 import ObjectMeta
from kubeinformers.generated.policy.v1 import Eviction
from kubeinformers.runtime.api.listwatch import ObjectList
from kubeinformers.runtime.api.model import Scale, Status
from kubeinformers.runtime.client.retry import retry_on_conflict, retry_on_conflict_async
from kubeinformers.runtime.client.typed import AsyncClient, Client


def sync_calls(factory: SharedInformerFactory) -> None:
    client = factory.client()
    assert_type(client, Client)
    assert_type(client.get(Pod, "web", namespace="default"), Pod)
    assert_type(client.get(Node, "node-1"), Node)
    assert_type(client.get(Gadget, "g"), Gadget)
    assert_type(client.list(Pod), ObjectList[Pod])
    assert_type(client.list(Widget, namespace="default", label_selector="a=b"), ObjectList[Widget])
    assert_type(client.list(Node, limit=10), ObjectList[Node])
    cm = ConfigMap(metadata=ObjectMeta(name="c", namespace="default"), data={"k": "v"})
    assert_type(client.create(cm), ConfigMap)
    assert_type(client.update(cm), ConfigMap)
    assert_type(client.patch(ConfigMap, "c", {"data": {"k": "w"}}, namespace="default"), ConfigMap)
    assert_type(client.patch(Node, "n", [{"op": "remove", "path": "/x"}], patch_type="json"), Node)
    widget = Widget(
        metadata=ObjectMeta(name="w", namespace="default"), spec=WidgetSpec(size="small")
    )
    assert_type(client.apply(widget, field_manager="me", force=True), Widget)
    widget.status = WidgetStatus(phase="Ready")
    assert_type(client.update_status(widget), Widget)
    assert_type(client.apply_status(widget, field_manager="me"), Widget)
    assert_type(client.delete(Pod, "web", namespace="default"), Pod | Status)
    # M13: kinds served for create only.
    review = TokenReview(spec=TokenReviewSpec(token="t"))
    assert_type(client.create(review), TokenReview)
    access = SelfSubjectAccessReview(
        spec=SelfSubjectAccessReviewSpec(resource_attributes=ResourceAttributes(verb="list"))
    )
    assert_type(client.create(access), SelfSubjectAccessReview)
    local = LocalSubjectAccessReview.model_validate({"metadata": {"namespace": "d"}, "spec": {}})
    assert_type(client.create(local), LocalSubjectAccessReview)
    bind = Binding(metadata=ObjectMeta(name="p"), target=ObjectReference(name="n", kind="Node"))
    assert_type(client.create(bind), Binding)
    # M13: a kind served for get and list but not watch is read.
    assert_type(client.list(ComponentStatus), ObjectList[ComponentStatus])
    assert_type(client.get(ComponentStatus, "etcd-0"), ComponentStatus)
    # M15: parts written as the kind itself.
    sized = client.get(Pod, "web", namespace="default")
    assert_type(client.update(sized, subresource="resize"), Pod)
    resize = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    assert_type(client.patch(Pod, "web", resize, namespace="default", subresource="resize"), Pod)
    # M14: kinds created under an object.
    evict = Eviction(metadata=ObjectMeta(name="web-1", namespace="default"))
    assert_type(client.create(evict), Eviction)
    token = TokenRequest(metadata=ObjectMeta(name="robot"), spec=TokenRequestSpec(audiences=[]))
    assert_type(client.create(token), TokenRequest)
    assert_type(client.delete(Node, "n", propagation_policy="Foreground"), Node | Status)
    assert_type(retry_on_conflict(lambda: client.update(cm)), ConfigMap)
    assert_type(client.scale(Widget, "w", 3, namespace="default"), Scale)
    assert_type(client.get_scale(Widget, "w", namespace="default"), Scale)
    # M16: every write but delete takes the server's field validation.
    assert_type(client.create(cm, field_validation="Strict"), ConfigMap)
    size = {"spec": {"size": "large"}}
    assert_type(
        client.patch(Widget, "w", size, namespace="default", field_validation="Strict"), Widget
    )
    assert_type(client.update(cm, field_validation="Ignore"), ConfigMap)
    assert_type(client.apply(widget, field_manager="me", field_validation="Warn"), Widget)


def apply_configurations(client: Client) -> None:
    """Apply configurations (M8): only what the manager owns, typed by the kind."""
    replicas_only = DeploymentApply(
        metadata={"name": "web", "namespace": "default"}, spec={"replicas": 3}
    )
    assert_type(client.apply(replicas_only, field_manager="scaler"), Deployment)
    sidecar: ContainerApply = {"name": "log", "image": "busybox", "ports": [{"containerPort": 80}]}
    containers = DeploymentApply(
        metadata={"name": "web", "namespace": "default", "labels": {"app": "web"}},
        spec={"template": {"spec": {"containers": [sidecar, {"name": "app", "image": "nginx"}]}}},
    )
    assert_type(client.apply(containers, field_manager="injector", force=True), Deployment)
    assert_type(client.apply(NodeApply(metadata={"name": "n"}, spec={"unschedulable": True})), Node)
    assert_type(
        client.apply(ConfigMapApply(metadata={"name": "c", "namespace": "d"}, data={"a": "b"})),
        ConfigMap,
    )
    spec: WidgetSpecApply = {"replicas": 2, "parts": [{"name": "bolt", "count": 4}]}
    assert_type(
        client.apply(WidgetApply(metadata={"name": "w", "namespace": "d"}, spec=spec)), Widget
    )
    status = WidgetApply(metadata={"name": "w", "namespace": "d"}, status={"phase": "Ready"})
    assert_type(client.apply_status(status, field_manager="widget-controller"), Widget)
    assert_type(client.apply(GadgetApply(metadata={"name": "g"})), Gadget)


async def async_calls(factory: SharedInformerFactory) -> None:
    client = factory.async_client()
    assert_type(client, AsyncClient)
    assert_type(await client.get(Pod, "web", namespace="default"), Pod)
    assert_type(await client.get(Node, "node-1"), Node)
    assert_type(await client.list(Gadget), ObjectList[Gadget])
    cm = ConfigMap(metadata=ObjectMeta(name="c", namespace="default"))
    assert_type(await client.apply(cm, field_manager="me"), ConfigMap)
    scale = DeploymentApply(metadata={"name": "web", "namespace": "d"}, spec={"replicas": 1})
    assert_type(await client.apply(scale, field_manager="me"), Deployment)
    ready = WidgetApply(metadata={"name": "w", "namespace": "d"}, status={"phase": "Ready"})
    assert_type(await client.apply_status(ready, field_manager="me"), Widget)
    assert_type(await client.delete(ConfigMap, "c", namespace="default"), ConfigMap | Status)
    assert_type(await client.create(TokenReview(spec=TokenReviewSpec())), TokenReview)
    assert_type(await client.list(ComponentStatus), ObjectList[ComponentStatus])
    assert_type(await client.patch(Node, "n", {}, field_validation="Strict"), Node)
    assert_type(await client.create(cm, field_validation=None), ConfigMap)

    async def bump() -> ConfigMap:
        return await client.update(cm)

    assert_type(await retry_on_conflict_async(bump), ConfigMap)
