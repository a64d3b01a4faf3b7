"""Lazy models read exactly like eagerly validated ones, and cost only their identity up front."""

from __future__ import annotations

import copy
import json
import pickle
import threading
from typing import Any

import pytest
from pydantic import Field

from kubeinformers.generated.core.v1 import Pod as CorePod
from kubeinformers.runtime.api import keys
from kubeinformers.runtime.api.model import KubeModel, Status
from kubeinformers.runtime.codec import lazy as lazy_module
from kubeinformers.runtime.codec.drift import (
    InvalidFieldError,
    InvalidObjectError,
    PartlyInvalidObjectError,
)
from kubeinformers.runtime.codec.lazy import (
    LazyModelBuilder,
    is_lazy,
    materialize,
)
from kubeinformers.runtime.codec.lazy_decoder import LazyDecoder


class ObjectMeta(KubeModel):
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    generation: int | None = None


class Container(KubeModel):
    name: str
    image: str | None = None
    ports: list[int] | None = None


class PodSpec(KubeModel):
    containers: list[Container]
    node_name: str | None = Field(default=None, alias="nodeName")


class Pod(KubeModel):
    api_version: str | None = Field(default=None, alias="apiVersion")
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None


class NoMeta(KubeModel):
    value: int


def pod_json(name: str = "web-1", **extra: object) -> bytes:
    body: dict[str, object] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": "u-1",
            "resourceVersion": "42",
            "labels": {"app": "web"},
            "annotations": {"a": "b"},
            "generation": 3,
            "futureField": {"x": 1},
        },
        "spec": {"containers": [{"name": "app", "image": "nginx", "ports": [80]}]},
        "surprise": [1, 2, 3],
    }
    body.update(extra)
    return json.dumps(body).encode()


def test_identity_is_read_without_building_the_model() -> None:
    pod = LazyModelBuilder(Pod).build(pod_json())
    assert isinstance(pod, Pod)
    assert pod.metadata is not None
    assert (pod.metadata.name, pod.metadata.namespace) == ("web-1", "default")
    assert pod.metadata.resource_version == "42"
    assert pod.metadata.labels == {"app": "web"}
    assert keys.meta_namespace_key(pod) == "default/web-1"
    assert keys.object_resource_version(pod) == "42"
    assert keys.object_uid(pod) == "u-1"
    assert is_lazy(pod) and is_lazy(pod.metadata)


def test_k13_first_access_to_a_field_builds_that_field_alone_then_the_rest_in_place() -> None:
    raw = pod_json()
    pod = LazyModelBuilder(Pod).build(raw)
    spec = pod.spec
    assert spec is not None and spec.containers[0].image == "nginx"
    assert is_lazy(pod) and pod.spec is spec  # built once, kept
    assert pod == Pod.model_validate_json(raw)  # a whole-object read builds the rest
    assert type(pod) is Pod and not is_lazy(pod) and pod.spec is spec


@pytest.mark.parametrize(
    "whole",
    [
        lambda p: p.model_dump(),
        lambda p: copy.deepcopy(p),
        lambda p: pickle.dumps(p),
        lambda p: p.model_fields_set,
        lambda p: setattr(p, "kind", "Pod"),
        lambda p: repr(p),
        lambda p: p.surprise,  # an unknown field: the whole model has it
    ],
)
def test_k13_a_whole_object_read_after_a_field_read_keeps_that_field(whole: Any) -> None:
    raw = pod_json()
    pod = LazyModelBuilder(Pod).build(raw)
    spec = pod.spec
    whole(pod)
    assert type(pod) is Pod and pod.spec is spec
    assert pod.model_dump() == Pod.model_validate_json(raw).model_dump()


def test_metadata_builds_alone_for_fields_beyond_identity() -> None:
    pod = LazyModelBuilder(Pod).build(pod_json())
    assert pod.metadata is not None
    assert pod.metadata.annotations == {"a": "b"}
    assert type(pod.metadata) is ObjectMeta
    assert is_lazy(pod)  # the pod itself is still lazy
    assert pod.metadata.generation == 3


@pytest.mark.parametrize(
    "read",
    [
        lambda p: p.model_dump(),
        lambda p: p.model_dump_json(),
        lambda p: repr(p),
        lambda p: copy.deepcopy(p).model_dump(),
        lambda p: pickle.loads(pickle.dumps(p)).model_dump(),
        lambda p: dict(p),
        lambda p: p.model_extra,
        lambda p: p.model_fields_set,
    ],
    ids=["dump", "dump_json", "repr", "deepcopy", "pickle", "iter", "extra", "fields_set"],
)
def test_every_read_matches_the_eager_model(read: object) -> None:
    raw = pod_json()
    lazy = LazyModelBuilder(Pod).build(raw)
    eager = Pod.model_validate_json(raw)
    assert read(lazy) == read(eager)  # type: ignore[operator]


def test_unknown_fields_are_kept() -> None:
    pod = LazyModelBuilder(Pod).build(pod_json())
    dumped = json.loads(pod.model_dump_json(exclude_none=True))
    assert dumped["surprise"] == [1, 2, 3]
    assert dumped["metadata"]["futureField"] == {"x": 1}


def test_equality_between_two_lazy_objects() -> None:
    builder = LazyModelBuilder(Pod)
    assert builder.build(pod_json()) == builder.build(pod_json())
    assert builder.build(pod_json("a")) != builder.build(pod_json("b"))


def test_setting_a_field_builds_first_then_sets() -> None:
    pod = LazyModelBuilder(Pod).build(pod_json())
    pod.kind = "Changed"
    assert type(pod) is Pod
    assert pod.kind == "Changed" and pod.spec is not None


def test_k11_only_the_invalid_field_raises_naming_object_field_and_remedy_reported_once() -> None:
    reported: list[InvalidObjectError] = []
    builder = LazyModelBuilder(Pod, on_invalid=reported.append)
    raw = pod_json(spec={"containers": [{"name": "app", "image": "nginx", "ports": ["eighty"]}]})
    pod = builder.build(raw)
    assert keys.meta_namespace_key(pod) == "default/web-1"  # identity still readable
    assert pod.spec is not None and pod.kind == "Pod"  # the rest of the object reads
    container = pod.spec.containers[0]
    assert (container.name, container.image) == ("app", "nginx")
    with pytest.raises(InvalidFieldError) as first:
        _ = container.ports
    message = str(first.value)
    assert "Pod 'default/web-1'" in message and "spec.containers[0].ports" in message
    assert "regenerate the models" in message and first.value.value == ["eighty"]
    with pytest.raises(InvalidFieldError):
        _ = container.ports  # every read raises; the report was once
    assert len(reported) == 1 and isinstance(reported[0], PartlyInvalidObjectError)
    assert [f.path for f in reported[0].fields] == ["spec.containers[0].ports"]
    # The server's value stays in a dump (a read-modify-write keeps it).
    assert pod.model_dump(warnings=False)["spec"]["containers"][0]["ports"] == ["eighty"]
    assert not is_lazy(pod) and isinstance(pod, Pod)


def test_model_without_identity_metadata_is_validated_eagerly() -> None:
    builder = LazyModelBuilder(NoMeta)
    assert not builder.supported
    obj = builder.build(b'{"value": 3}')
    assert type(obj) is NoMeta and obj.value == 3


def test_materialize_builds_now() -> None:
    pod = materialize(LazyModelBuilder(Pod).build(pod_json()))
    assert type(pod) is Pod


def test_cluster_scoped_object_has_no_namespace() -> None:
    raw = json.dumps({"metadata": {"name": "node-1", "resourceVersion": "7"}}).encode()
    node = LazyModelBuilder(Pod).build(raw)
    assert node.metadata is not None and node.metadata.namespace is None
    assert keys.meta_namespace_key(node) == "node-1"


def test_k10_every_step_of_a_build_shows_other_threads_a_whole_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """K10, checked at each step that publishes a built model's state (where a thread switch
    can happen): what another thread would read then is the lazy object's identity or the
    whole model, equal to the eagerly validated one, its copy too."""
    raw = pod_json("p1")
    twin = Pod.model_validate_json(raw)
    pod = LazyModelBuilder(Pod).build(raw)
    lazy_class = type(pod)
    publish = lazy_module._publish
    seen: list[str] = []

    def publish_and_look(obj: object, name: str, value: object) -> None:
        publish(obj, name, value)
        if obj is not pod:
            return
        seen.append(name)
        if type(pod) is lazy_class:  # reads that do not wait for the build
            assert pod.metadata is not None and pod.metadata.name == "p1", name
        else:
            assert type(pod) is Pod, name
            assert pod == twin, f"unequal after publishing {name}"
            assert copy.copy(pod) == twin and pickle.loads(pickle.dumps(pod)) == twin, name

    monkeypatch.setattr(lazy_module, "_publish", publish_and_look)
    materialize(pod)
    assert pod.spec is not None and pod.spec.containers[0].name == "app"
    assert seen[-1] == "__class__", seen  # the class is switched last
    assert pod == twin


def test_k10_k13_concurrent_first_reads_all_see_one_built_field_and_lose_none() -> None:
    """Threads reading fields alone (K13) while others read whole objects (==, dumps): every
    reader sees one `spec` per pod, the whole build keeps it, nothing torn, nothing lost."""
    builder = LazyModelBuilder(Pod)
    raws = [pod_json(f"p{i}") for i in range(200)]
    pods = [builder.build(raw) for raw in raws]
    twins = [Pod.model_validate_json(raw) for raw in raws]
    start = threading.Event()
    failures: list[BaseException] = []
    specs: list[list[int]] = []

    def reader(whole: bool) -> None:
        start.wait(5)
        mine: list[int] = []
        try:
            for pod, twin in zip(pods, twins, strict=True):
                if whole:
                    assert pod == twin
                assert pod.spec is not None and pod.spec.containers[0].name == "app"
                mine.append(id(pod.spec))
        except BaseException as exc:  # collected and asserted below
            failures.append(exc)
        specs.append(mine)

    threads = [threading.Thread(target=reader, args=(i % 2 == 0,)) for i in range(8)]
    for t in threads:
        t.start()
    start.set()
    for t in threads:
        t.join(10)
    assert not failures
    assert len(specs) == 8 and all(s == specs[0] for s in specs)  # one spec per pod, seen by all
    assert all(type(p) is Pod for p in pods)  # the whole readers built them
    assert pods == twins and [id(p.spec) for p in pods] == specs[0]


def list_body(*items: bytes, rv: str = "100", cont: str | None = None) -> bytes:
    meta = {"resourceVersion": rv} | ({"continue": cont} if cont else {})
    head = json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": meta})[:-1]
    return (head + ',"items":[' + ",".join(i.decode() for i in items) + "]}").encode()


def test_decoder_splits_a_list_page_into_lazy_items() -> None:
    page = LazyDecoder(Pod).decode_list(list_body(pod_json("a"), pod_json("b"), cont="tok"))
    assert page.resource_version == "100" and page.continue_ == "tok"
    assert [keys.object_name(p) for p in page.items] == ["a", "b"]
    assert all(is_lazy(p) for p in page.items)
    assert page.items[0] == Pod.model_validate_json(pod_json("a"))


def test_cached_objects_share_one_copy_of_their_namespace_and_label_values() -> None:
    decoder = LazyDecoder(Pod)
    page = decoder.decode_list(list_body(pod_json("a"), pod_json("b")))
    event = decoder.decode_event(b'{"type":"ADDED","object":' + pod_json("c") + b"}")
    assert isinstance(event.object, Pod)
    metas = [p.metadata for p in [*page.items, event.object]]
    namespaces = {id(m.namespace) for m in metas if m is not None}
    app_labels = {id(m.labels["app"]) for m in metas if m is not None and m.labels}
    assert len(namespaces) == 1 and len(app_labels) == 1  # one string each, not one per object
    assert [keys.object_namespace(p) for p in page.items] == ["default", "default"]
    assert all(is_lazy(p) for p in page.items)  # reading identity built nothing


def test_decoder_rejects_a_table_d9() -> None:
    with pytest.raises(ValueError, match="Table"):
        LazyDecoder(Pod).decode_list(b'{"kind":"Table","metadata":{},"rows":[]}')


def test_decoder_events_error_becomes_status_and_bookmark_keeps_resource_version() -> None:
    decoder = LazyDecoder(Pod)
    added = decoder.decode_event(b'{"type":"ADDED","object":' + pod_json("x") + b"}")
    assert added.type == "ADDED" and keys.object_name(added.object) == "x"
    error = decoder.decode_event(
        b'{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}}'
    )
    assert isinstance(error.object, Status) and error.object.code == 410
    bookmark = decoder.decode_event(
        b'{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"77",'
        b'"annotations":{"k8s.io/initial-events-end":"true"}}}}'
    )
    assert keys.object_resource_version(bookmark.object) == "77"
    assert keys.object_annotations(bookmark.object) == {"k8s.io/initial-events-end": "true"}


def test_decoder_falls_back_to_eager_for_models_without_identity() -> None:
    page = LazyDecoder(NoMeta).decode_list(
        b'{"metadata":{"resourceVersion":"1"},"items":[{"value":1}]}'
    )
    assert [type(i) for i in page.items] == [NoMeta]


CANONICAL = b'{"type":"MODIFIED","object":' + pod_json("x") + b"}\n"


@pytest.mark.parametrize(
    "line",
    [
        CANONICAL,  # as kube-apiserver writes it: the one-parse path
        b'{"object":' + pod_json("x") + b',"type":"MODIFIED"}',  # keys in another order
        b'{ "type": "MODIFIED", "object": ' + pod_json("x") + b" }",  # spaced
        b'{"type":"MODIFIE\\u0044","object":' + pod_json("x") + b"}",  # an escaped type
        b'{"type":"MODIFIED","object":' + pod_json("x") + b',"extra":{"k":1}}',  # another key
        b'{"type":"MODIFIED","object":' + pod_json("x") + b"}\r\n  ",  # trailing whitespace
    ],
)
def test_every_form_of_a_watch_event_decodes_to_the_same_object(line: bytes) -> None:
    decoder = LazyDecoder(Pod)
    one_parse = decoder._decode_canonical(line)
    canonical = line.startswith(b'{"type":"MODIFIED","object":') and b"extra" not in line
    assert (one_parse is not None) == canonical
    event = decoder.decode_event(line)
    assert event.type == "MODIFIED"
    assert is_lazy(event.object)
    assert keys.meta_namespace_key(event.object) == "default/x"
    assert keys.object_resource_version(event.object) == "42"
    assert keys.object_labels(event.object) == {"app": "web"}
    assert event.object == Pod.model_validate_json(pod_json("x"))


def test_a_canonical_event_with_a_null_or_metadata_free_object() -> None:
    decoder = LazyDecoder(Pod)
    no_meta = decoder.decode_event(b'{"type":"ADDED","object":{"kind":"Pod"}}')
    assert keys.object_name(no_meta.object) == "" and no_meta.object == Pod(kind="Pod")
    with pytest.raises(ValueError):
        decoder.decode_event(b'{"type":"ADDED","object":null')  # truncated: not JSON


def test_k11_a_canonical_event_with_an_invalid_object_is_still_lazy_and_reports_on_read() -> None:
    reported: list[InvalidObjectError] = []
    decoder = LazyDecoder(Pod, on_invalid=reported.append)
    bad = pod_json("x", spec={"containers": [{"image": "no-name"}]})
    event = decoder.decode_event(b'{"type":"ADDED","object":' + bad + b"}")
    assert keys.meta_namespace_key(event.object) == "default/x" and is_lazy(event.object)
    container = event.object.spec.containers[0]  # type: ignore[union-attr]
    assert container.image == "no-name"
    with pytest.raises(InvalidFieldError, match=r"default/x.*spec\.containers\[0\]\.name.*missing"):
        _ = container.name
    assert len(reported) == 1


def test_k13_the_metadata_handed_out_stays_the_items_after_the_whole_build() -> None:
    raw = pod_json()
    pod = LazyModelBuilder(Pod).build(raw)
    meta = pod.metadata
    assert meta is not None and is_lazy(meta)
    assert pod == Pod.model_validate_json(raw)
    assert pod.metadata is meta and not is_lazy(meta) and type(meta) is ObjectMeta
    assert meta.annotations == {"a": "b"} and meta.generation == 3


def test_k13_a_transform_that_changed_the_metadata_keeps_its_change_after_the_whole_build() -> None:
    raw = pod_json()
    pod = LazyModelBuilder(Pod).build(raw)
    assert pod.metadata is not None
    pod.metadata.generation = 42  # builds the metadata alone, then changes it
    assert pod.spec is not None and pod.model_dump()["metadata"]["generation"] == 42
    assert pod.model_dump()["metadata"]["annotations"] == {"a": "b"}
    assert pod.metadata.generation == 42 and type(pod) is Pod


def _numbered_pod(i: int) -> bytes:
    """A pod whose every value a reconcile reads says which pod it is; its container is big
    enough to come as a nested lazy object of its own (K20)."""
    container = {
        "name": "app",
        "image": f"registry.example/app:{i}",
        "command": ["sh", "-c", "x" * 240],
        "env": [{"name": "POD", "value": f"p{i}"}],
    }
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
            "spec": {"containers": [container], "nodeName": f"node-{i}"},
            "status": {
                "phase": f"Phase{i}",
                "conditions": [{"type": "Ready", "status": "True", "reason": f"r{i}"}],
            },
        }
    ).encode()


def test_k13_k19_first_reads_interleaved_over_many_items_each_read_their_own_values() -> None:
    # A reconcile reads spec, containers and status of one pod after another; handlers read
    # them in any order. Whatever was split or built for one object never answers another's.
    builder = LazyModelBuilder(CorePod)
    pods = [builder.build(_numbered_pod(i)) for i in range(7)]
    specs = [pod.spec for pod in pods]
    for i in reversed(range(7)):
        spec = specs[i]
        assert spec is not None and spec.containers[0].image == f"registry.example/app:{i}"
    for i in (3, 0, 6, 1, 5, 2, 4):
        spec, status = specs[i], pods[i].status
        assert spec is not None and status is not None and status.conditions
        assert (status.phase, status.conditions[0].reason) == (f"Phase{i}", f"r{i}")
        env = spec.containers[0].env
        assert env is not None and env[0].value == f"p{i}" and spec.node_name == f"node-{i}"
    for i, pod in enumerate(pods):
        assert is_lazy(pod) and pod == CorePod.model_validate_json(_numbered_pod(i))


def test_k13_a_field_is_no_attribute_of_a_lazy_class_as_of_the_models() -> None:
    pod = LazyModelBuilder(CorePod).build(_numbered_pod(1))
    with pytest.raises(AttributeError):
        CorePod.spec  # noqa: B018
    with pytest.raises(AttributeError):
        type(pod).spec  # noqa: B018
    assert pod.spec is not None and pod.spec.node_name == "node-1"
