"""LocalApiServer answers `Accept: ...;as=PartialObjectMetadata(List);g=meta.k8s.io;v=v1` as
kube-apiserver does (what client-go's metadata informers, J2, ask for): metadata only, kind
PartialObjectMetadata(List), apiVersion meta.k8s.io/v1, for lists, gets, writes and watches
(BOOKMARKs included); the first acceptable media type of the Accept list wins."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kubeinformers.runtime.cache.dynamic import METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT
from kubeinformers.testing.local_api_server import LocalApiServer
from tests.testing.conftest import BASIC, configmap, request, watch
from tests.testing.test_server_crud import WIDGET_CRD

CM = "/api/v1/namespaces/default/configmaps"
AS_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
AS_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
META = "meta.k8s.io/v1"


@pytest.fixture
def server() -> Iterator[LocalApiServer]:
    with LocalApiServer(resources=BASIC) as srv:
        for name in ("a", "b", "c"):
            srv.create(configmap(name, app=name))
        yield srv
        srv.drop_watches()


def get(server: LocalApiServer, path: str, accept: str) -> tuple[int, Any]:
    status, _, body = request(server, "GET", path, headers={"Accept": accept})
    return status, body


def partial(obj: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": META, "metadata": obj["metadata"]}


def test_j2_list_as_partial_object_metadata_list_has_only_metadata(
    server: LocalApiServer,
) -> None:
    _, full = get(server, CM, "application/json")
    status, body = get(server, CM, AS_LIST)
    assert status == 200
    assert list(body) == ["kind", "apiVersion", "metadata", "items"]
    assert body["kind"] == "PartialObjectMetadataList" and body["apiVersion"] == META
    assert body["metadata"] == {"resourceVersion": full["metadata"]["resourceVersion"]}
    assert body["items"] == [partial(o) for o in full["items"]]
    assert all(list(item) == ["kind", "apiVersion", "metadata"] for item in body["items"])
    assert body["items"][0]["metadata"]["managedFields"]  # the whole ObjectMeta


def test_j2_partial_list_pages_keep_continue_and_remaining_count(server: LocalApiServer) -> None:
    status, first = get(server, f"{CM}?limit=2", AS_LIST)
    assert status == 200 and len(first["items"]) == 2
    assert first["metadata"]["remainingItemCount"] == 1 and first["metadata"]["continue"]
    _, rest = get(server, f"{CM}?limit=2&continue={first['metadata']['continue']}", AS_LIST)
    assert [i["metadata"]["name"] for i in rest["items"]] == ["c"]
    assert rest["metadata"] == {"resourceVersion": first["metadata"]["resourceVersion"]}


def test_j2_get_and_writes_answer_partial_object_metadata(server: LocalApiServer) -> None:
    status, body = get(server, f"{CM}/a", AS_ONE)
    assert status == 200 and body == partial(server.get("v1", "ConfigMap", "a", "default"))
    status, _, created = request(
        server, "POST", CM, configmap("d"), headers={"Accept": METADATA_WATCH_ACCEPT}
    )
    assert status == 201 and created == partial(server.get("v1", "ConfigMap", "d", "default"))


def test_j2_list_asked_as_single_object_and_get_asked_as_list_are_406(
    server: LocalApiServer,
) -> None:
    status, body = get(server, CM, AS_ONE)
    assert status == 406 and body["reason"] == "NotAcceptable"
    assert (
        "you requested PartialObjectMetadata, but the requested object is a list"
        in (body["message"])
    )
    status, body = get(server, f"{CM}/a", AS_LIST)
    assert status == 406 and "is not a list" in body["message"]


@pytest.mark.parametrize(
    ("accept", "kind"),
    [
        (METADATA_LIST_ACCEPT, "PartialObjectMetadataList"),  # what the metadata informer sends
        (f"{AS_LIST},application/json", "PartialObjectMetadataList"),
        (f"application/json,{AS_LIST}", "ConfigMapList"),
        (f"application/json;q=0.5,{AS_LIST}", "PartialObjectMetadataList"),
        ("application/json;as=Unknown;g=meta.k8s.io;v=v1,application/json", "ConfigMapList"),
        (f"application/vnd.kubernetes.protobuf,{AS_LIST}", "PartialObjectMetadataList"),
        ("application/json;as=Table;v=v1;g=meta.k8s.io", "Table"),
        ("*/*", "ConfigMapList"),
        ("", "ConfigMapList"),
    ],
)
def test_first_acceptable_media_type_of_the_accept_list_wins(
    server: LocalApiServer, accept: str, kind: str
) -> None:
    status, body = get(server, CM, accept)
    assert status == 200 and body["kind"] == kind


def test_accept_with_nothing_the_server_can_send_is_406(server: LocalApiServer) -> None:
    status, body = get(server, CM, "application/json;as=Unknown;g=meta.k8s.io;v=v1")
    assert status == 406 and body["reason"] == "NotAcceptable"


def test_j2_watch_events_and_bookmarks_are_partial_object_metadata(
    server: LocalApiServer,
) -> None:
    server.set_bookmark_interval(0.2)
    stream = watch(
        server,
        f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
        "&allowWatchBookmarks=true",
        headers={"Accept": METADATA_WATCH_ACCEPT},
    )
    events = stream.wait_lines(4)
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "ADDED", "BOOKMARK"]
    assert [e["object"] for e in events[:3]] == [
        partial(o) for o in server.list("v1", "ConfigMap", "default")
    ]
    assert events[3]["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": META,
        "metadata": {
            "resourceVersion": str(server.resource_version),
            "annotations": {"k8s.io/initial-events-end": "true"},
        },
    }
    server.replace(dict(server.get("v1", "ConfigMap", "a", "default"), data={"k": "2"}))
    server.delete("v1", "ConfigMap", "b", "default")
    assert stream.wait_for(lambda lines: len(lines) >= 7)
    later = stream.events()[4:]
    changes = [e for e in later if e["type"] != "BOOKMARK"]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in changes] == [
        ("MODIFIED", "a"),
        ("DELETED", "b"),
    ]
    assert all(list(e["object"]) == ["kind", "apiVersion", "metadata"] for e in later)
    periodic = [e["object"] for e in later if e["type"] == "BOOKMARK"]
    assert periodic and periodic[-1] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": META,
        "metadata": {"resourceVersion": str(server.resource_version)},
    }


def test_j2_a_plain_watch_beside_a_metadata_watch_gets_whole_objects(
    server: LocalApiServer,
) -> None:
    """Watch lines are encoded once per event and shape: the two must not mix."""
    start = server.resource_version
    meta = watch(server, f"{CM}?watch=1&resourceVersion={start}", {"Accept": AS_ONE})
    plain = watch(server, f"{CM}?watch=1&resourceVersion={start}")
    server.replace(dict(server.get("v1", "ConfigMap", "c", "default"), data={"k": "3"}))
    assert meta.wait_lines(1)[0]["object"]["kind"] == "PartialObjectMetadata"
    assert plain.wait_lines(1)[0]["object"]["data"] == {"k": "3"}


def test_j2_custom_resources_as_partial_object_metadata(server: LocalApiServer) -> None:
    request(server, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", WIDGET_CRD)
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "labels": {"z": "1", "a": "2"}},
        "spec": {"size": 1},
    }
    server.create(widget)
    status, body = get(server, "/apis/example.com/v1/namespaces/default/widgets", AS_LIST)
    assert status == 200 and body["kind"] == "PartialObjectMetadataList"
    assert "continue" not in body["metadata"]  # typed ListMeta, unlike the unstructured list
    (item,) = body["items"]
    assert item["kind"] == "PartialObjectMetadata" and "spec" not in item
    # typed ObjectMeta field order (name, namespace, uid, ...), not the unstructured sort
    assert list(item["metadata"])[:3] == ["name", "namespace", "uid"]
