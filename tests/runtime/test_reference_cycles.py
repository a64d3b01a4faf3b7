"""K9: cached objects form no reference cycles, so dropping one frees it by reference counting
alone, and a cache frozen with `gc.freeze()` after its sync (the performance guide's advice
for big eager caches) leaks nothing when its objects are later replaced or deleted."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import pytest

from kubeinformers.generated.core.v1 import Pod as GeneratedPod
from kubeinformers.runtime.codec.compact import Compactor
from kubeinformers.runtime.codec.lazy import materialize
from kubeinformers.runtime.codec.lazy_decoder import LazyDecoder
from kubeinformers.runtime.codec.protobuf.decoder import ProtobufLazyDecoder
from kubeinformers.runtime.codec.wire import JsonDecoder
from tests.runtime.test_lazy import Pod, list_body, pod_json
from tests.runtime.test_protobuf_codec import WIDGET, Widget, _widget
from tests.support.garbage import cyclic_garbage_left_by
from tests.support.protobuf import MESSAGES, unknown, watch_frame
from tests.support.protobuf import list_body as protobuf_list_body

N = 40


def _full_pod(i: int) -> bytes:
    """A pod with what the server writes: managedFields, containers, status, conditions."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"web-{i}",
                "namespace": "default",
                "uid": f"uid-{i}",
                "resourceVersion": str(100 + i),
                "labels": {"app": "web"},
                "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs"}
                ],
                "managedFields": [
                    {
                        "manager": "kubectl",
                        "operation": "Update",
                        "apiVersion": "v1",
                        "time": "2026-11-24T05:07:21Z",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
                    }
                ],
            },
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx",
                        "ports": [{"containerPort": 80}],
                        "resources": {"requests": {"cpu": "100m"}},
                    }
                ],
                "tolerations": [{"key": "k", "operator": "Exists"}],
            },
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [
                    {
                        "name": "app",
                        "ready": True,
                        "restartCount": 0,
                        "image": "nginx",
                        "imageID": "",
                        "state": {"running": {"startedAt": "2026-11-24T05:07:21Z"}},
                    }
                ],
            },
        }
    ).encode()


def _event(raw: bytes) -> bytes:
    return b'{"type":"ADDED","object":' + raw + b"}\n"


def _read_in_full(objects: list[Any]) -> list[Any]:
    """Every object's model built, as a handler reading any non-identity field does."""
    for obj in objects:
        materialize(obj)
    return objects


def _eager() -> Callable[[], list[Any]]:
    decoder = JsonDecoder(GeneratedPod)

    def build() -> list[Any]:
        page = decoder.decode_list(list_body(*(_full_pod(i) for i in range(N))))
        events = [decoder.decode_event(_event(_full_pod(N + i))).object for i in range(N)]
        return [*page.items, *events]

    return build


def _lazy_json(read: bool, compact: bool) -> Callable[[], list[Any]]:
    decoder = LazyDecoder(Pod, compactor=Compactor() if compact else None)

    def build() -> list[Any]:
        page = decoder.decode_list(list_body(*(pod_json(f"p{i}") for i in range(N))))
        events = [decoder.decode_event(_event(pod_json(f"e{i}"))).object for i in range(N)]
        objects = [*page.items, *events]
        return _read_in_full(objects) if read else objects

    return build


def _lazy_protobuf(read: bool, compact: bool) -> Callable[[], list[Any]]:
    decoder = ProtobufLazyDecoder(
        Widget, message=WIDGET, messages=MESSAGES, compactor=Compactor() if compact else None
    )

    def build() -> list[Any]:
        items = [_widget(f"w{i}", str(i), app="web") for i in range(N)]
        page = decoder.decode_list(protobuf_list_body("example.test/v1", "WidgetList", items))
        events = [
            decoder.decode_event(
                watch_frame("ADDED", unknown("example.test/v1", "Widget", _widget(f"e{i}")))
            ).object
            for i in range(N)
        ]
        objects = [*page.items, *events]
        return _read_in_full(objects) if read else objects

    return build


def _cyclic_garbage_left_by(build: Callable[[], list[Any]]) -> int:
    """Objects decoded by one decoder (an informer's, which lives as long as the informer),
    then dropped: how many of them reference counting could not free."""

    def checked() -> list[Any]:
        objects = build()
        assert len(objects) == 2 * N
        return objects

    return cyclic_garbage_left_by(checked)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(_eager, id="eager"),
        pytest.param(functools.partial(_lazy_json, read=False, compact=False), id="lazy-json"),
        pytest.param(
            functools.partial(_lazy_json, read=True, compact=False), id="lazy-json-read-in-full"
        ),
        pytest.param(
            functools.partial(_lazy_json, read=True, compact=True), id="compact-json-read-in-full"
        ),
        pytest.param(
            functools.partial(_lazy_protobuf, read=False, compact=False), id="lazy-protobuf"
        ),
        pytest.param(
            functools.partial(_lazy_protobuf, read=True, compact=False),
            id="lazy-protobuf-read-in-full",
        ),
        pytest.param(
            functools.partial(_lazy_protobuf, read=True, compact=True),
            id="compact-protobuf-read-in-full",
        ),
    ],
)
def test_k9_dropped_objects_leave_no_cyclic_garbage(
    make: Callable[[], Callable[[], list[Any]]],
) -> None:
    assert _cyclic_garbage_left_by(make()) == 0


def test_k9_the_check_sees_a_cycle_when_there_is_one() -> None:
    """The measure above can fail: objects that refer to themselves are found."""

    def cyclic() -> list[Any]:
        objects: list[Any] = [{} for _ in range(2 * N)]
        for obj in objects:
            obj["self"] = obj
        return objects

    assert _cyclic_garbage_left_by(cyclic) >= 2 * N
