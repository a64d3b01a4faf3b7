"""Keyed by type (issue 17 item 1): a generated model knows its lister and resource, so
`factory.informer(Pod)` is the accessor chain's informer (H1, H2: one per resource) and
`factory.lister(Pod)` is a PodLister over it; CRD models alike."""

from __future__ import annotations

import pytest
from kubernetes.client import ApiClient

from examples.informers.demo.v1.widget import Widget, WidgetLister
from examples.informers.informers import CustomInformers
from kubeinformers.generated.core.v1 import Pod, PodLister, PodSpec
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.generator.kind_listers import attach_listers
from kubeinformers.runtime.api.kinds import (
    KindModelError,
    lister_class,
    resource_of,
    served_resource_of,
)


def test_informer_by_model_is_the_accessor_chains_informer() -> None:
    factory = SharedInformerFactory(ApiClient())
    informer = factory.informer(Pod)
    assert informer is factory.core().v1().pods().informer()
    assert resource_of(Pod).gvr.resource == "pods"
    lister = factory.lister(Pod)
    assert type(lister) is PodLister
    assert lister.pods("default").list() == []


def test_crd_models_know_their_lister_too() -> None:
    factory = SharedInformerFactory(ApiClient())
    informer = factory.informer(Widget)
    assert informer is CustomInformers(factory).demo().v1().widgets().informer()
    assert type(factory.lister(Widget)) is WidgetLister


def test_a_model_that_is_not_a_listable_kind_is_refused_clearly() -> None:
    factory = SharedInformerFactory(ApiClient())
    with pytest.raises(KindModelError, match="PodSpec is not the model of a kind"):
        factory.informer(PodSpec)


SOURCE = '''# header

from kubeinformers.runtime.api.model import KubeModel


class Thing(KubeModel):
    """
    A thing.
    """

    name: str


class ThingSpec(KubeModel):
    size: int
'''


def test_generator_attaches_one_lister_line_per_kind_and_leaves_others() -> None:
    block = (
        "class ThingLister(_ClusterLister[Thing]):\n    __slots__ = ()\n\n"
        "Thing.__kube_lister__ = ThingLister\n"
    )
    code = attach_listers(SOURCE, {"Thing": "ThingLister"}, block, {"cluster"})
    namespace: dict[str, object] = {}
    exec(compile(code, "<models>", "exec"), namespace)
    thing, spec = namespace["Thing"], namespace["ThingSpec"]
    assert isinstance(thing, type) and isinstance(spec, type)
    assert vars(thing)["__kube_lister__"] is namespace["ThingLister"]
    assert "__kube_lister__" not in vars(spec)
    assert code.count("__kube_lister__: _ClassVar") == 1
    assert attach_listers(SOURCE, {"Other": "OtherLister"}, block, {"cluster"}) == SOURCE


def test_m13_a_kind_served_without_list_and_watch_carries_its_resource() -> None:
    """M13: the generator gives such a kind's model `__kube_resource__` (no lister, in a module
    that may have no lister at all); the typed client finds it there, an informer refuses it
    saying what the server serves."""
    resource = (
        '_APIResource(group="x.io", version="v1", resource="things", kind="Thing", '
        'namespaced=False, verbs=frozenset({"create"}))'
    )
    code = attach_listers(SOURCE, {}, "", set(), {"Thing": resource})
    namespace: dict[str, object] = {}
    exec(compile(code, "<models>", "exec"), namespace)
    thing, spec = namespace["Thing"], namespace["ThingSpec"]
    assert isinstance(thing, type) and isinstance(spec, type)
    assert served_resource_of(thing).gvr.resource == "things"
    assert "__kube_resource__" not in vars(spec) and "Lister" not in code
    with pytest.raises(KindModelError, match=r"no list and watch of things.x.io \(only create\)"):
        lister_class(thing)
    with pytest.raises(KindModelError, match="ThingSpec is not the model of a kind the server"):
        served_resource_of(spec)

    from kubeinformers.generated.authorization.v1 import SubjectAccessReview
    from kubeinformers.generated.core.v1 import Binding

    assert served_resource_of(SubjectAccessReview).verbs == {"create"}
    # Served for get and list: a ReadableResource, which is what types the client's reads.
    from kubeinformers.generated.core.v1 import ComponentStatus
    from kubeinformers.runtime.api.resource import ReadableResource

    assert isinstance(served_resource_of(ComponentStatus), ReadableResource)
    assert not isinstance(served_resource_of(SubjectAccessReview), ReadableResource)
    assert served_resource_of(Binding).collection_path("ns") == "/api/v1/namespaces/ns/bindings"
    assert served_resource_of(Pod) is resource_of(Pod)


# --- Pythonic rough edges (issue 17 item 5) ---------------------------------------------------


def test_on_add_may_leave_out_is_in_initial_list() -> None:
    """E6 adapter: a one-argument on_add is told apart once, at registration."""
    from kubeinformers.runtime.cache.handlers import ResourceEventHandlerFuncs

    seen: list[object] = []
    both: list[tuple[object, bool]] = []
    simple: ResourceEventHandlerFuncs[str] = ResourceEventHandlerFuncs(on_add=seen.append)
    full: ResourceEventHandlerFuncs[str] = ResourceEventHandlerFuncs(
        on_add=lambda obj, initial: both.append((obj, initial))
    )
    simple.on_add("a", True)
    full.on_add("b", True)
    assert seen == ["a"] and both == [("b", True)]
    with pytest.raises(TypeError, match=r"must take \(obj\) or \(obj, is_in_initial_list\)"):
        ResourceEventHandlerFuncs(on_add=lambda: None)  # type: ignore[arg-type]


def test_workqueue_iterates_and_marks_done_and_shuts_down_on_exit() -> None:
    """I3/I4/I6 through `for item in queue` and `with queue`."""
    from kubeinformers.runtime.workqueue.queue import WorkQueue

    queue: WorkQueue[str] = WorkQueue()
    with queue:
        queue.add("a")
        queue.add("b")
        items = iter(queue)
        assert next(items) == "a"
        assert next(items) == "b"  # "a" is done once the body asks for the next
        queue.add("a")
        assert len(queue) == 1  # not processing any more: queued again at once
        items.close()  # "b" is done when the loop is left
        queue.add("b")
        assert len(queue) == 2
    assert queue.shutting_down()
    assert list(queue) == ["a", "b"]  # what was queued is still handed out, then it ends


def test_transform_and_error_handler_as_constructor_arguments() -> None:
    """F11/F12 without setters: the constructor takes them; the setters still work."""
    from kubeinformers.runtime.cache.informer import SharedIndexInformer
    from kubeinformers.runtime.cache.transforms import strip_managed_fields

    errors: list[BaseException] = []
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(
        None,  # type: ignore[arg-type]  # never run here
        Pod,
        transform=strip_managed_fields,
        watch_error_handler=lambda reflector, err: errors.append(err),
    )
    assert informer._transform is strip_managed_fields
    assert informer._watch_error_handler is not None
    informer.set_transform(None)
    assert informer._transform is None


def test_m14_a_kind_created_under_an_object_is_found_and_carries_where() -> None:
    """M14: the generator finds kinds created as a subresource of another object (a `post`
    on `<plural>/{name}/<sub>` whose kind is not the parent's) and gives their model
    `__kube_subresource__`; status and scale (the parent's own kind) are not such kinds."""
    from kubeinformers.generated.policy.v1 import Eviction
    from kubeinformers.generator.load import SubresourceKind as Found
    from kubeinformers.generator.load import _subresource_kinds_from_paths
    from kubeinformers.runtime.api.kinds import created_under

    def op(action: str, group: str, version: str, kind: str) -> dict[str, object]:
        gvk = {"group": group, "version": version, "kind": kind}
        return {"x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk}

    paths = {
        "/api/v1/namespaces/{namespace}/pods/{name}": {"get": op("get", "", "v1", "Pod")},
        "/api/v1/namespaces/{namespace}/pods/{name}/eviction": {
            "post": op("post", "policy", "v1", "Eviction")
        },
        "/api/v1/namespaces/{namespace}/pods/{name}/status": {"put": op("put", "", "v1", "Pod")},
        "/apis/x.io/v1/things/{name}/scale": {"post": op("post", "x.io", "v1", "Thing")},
    }
    assert _subresource_kinds_from_paths(paths) == [
        Found("policy", "v1", "Eviction", "", "v1", "pods", "eviction")
    ]

    code = attach_listers(
        SOURCE,
        {},
        "",
        set(),
        subresources={
            "Thing": '_SubresourceKind(_APIResource(group="", version="v1", resource="pods", '
            'kind="Pod", namespaced=True), "eviction", "x.io/v1", "Thing")'
        },
    )
    namespace: dict[str, object] = {}
    exec(compile(code, "<models>", "exec"), namespace)
    thing = namespace["Thing"]
    assert isinstance(thing, type)
    under = created_under(thing)
    assert (
        under is not None and under.path("web", "ns") == "/api/v1/namespaces/ns/pods/web/eviction"
    )
    with pytest.raises(KindModelError, match="created only as pods/eviction"):
        served_resource_of(thing)

    generated = created_under(Eviction)
    assert generated is not None and (generated.api_version, generated.kind) == (
        "policy/v1",
        "Eviction",
    )
    assert generated.describe() == "pods/eviction"


def test_m15_subresources_written_as_the_kind_are_writable_ones() -> None:
    """M15: a `put`/`patch` on `<plural>/{name}/<sub>` whose kind is the parent's makes <sub>
    one of the resource's writable subresources; one with another kind (an eviction) or
    only `get` (a log) does not."""
    from kubeinformers.generated.core.v1 import PodLister
    from kubeinformers.generator.load import Source, _resources_from_paths

    def op(action: str, kind: str, group: str = "") -> dict[str, object]:
        gvk = {"group": group, "version": "v1", "kind": kind}
        return {"x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk}

    base = "/api/v1/namespaces/{namespace}/pods"
    paths = {
        base: {"get": op("list", "Pod"), "post": op("post", "Pod")},
        f"{base}/{{name}}": {"get": op("get", "Pod"), "put": op("put", "Pod")},
        f"{base}/{{name}}/status": {"put": op("put", "Pod")},
        f"{base}/{{name}}/resize": {"patch": op("patch", "Pod"), "get": op("get", "Pod")},
        f"{base}/{{name}}/eviction": {"post": op("post", "Eviction", "policy")},
        f"{base}/{{name}}/log": {"get": op("get", "Pod")},
    }
    (pods,) = _resources_from_paths(paths, Source("test"))
    assert pods.subresources == {"status", "resize"}
    assert {"ephemeralcontainers", "resize", "status"} <= PodLister.RESOURCE.subresources
