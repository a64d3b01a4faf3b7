"""LocalApiServer's direct access (create/get/list/replace/delete without HTTP) owns its state:
callers get and give copies, so changing a dict never changes the server or its history."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kubeinformers.testing.local_api_server import LocalApiServer
from tests.testing.conftest import BASIC, configmap, request, watch


@pytest.fixture
def server() -> Iterator[LocalApiServer]:
    with LocalApiServer(resources=BASIC) as srv:
        yield srv


def exact_list(server: LocalApiServer, rv: str) -> list[dict[str, Any]]:
    status, _, body = request(
        server,
        "GET",
        f"/api/v1/namespaces/default/configmaps?resourceVersion={rv}&resourceVersionMatch=Exact",
    )
    assert status == 200, body
    items: list[dict[str, Any]] = body["items"]
    return items


def test_mutating_what_direct_access_returns_changes_nothing_on_the_server(
    server: LocalApiServer,
) -> None:
    mine = configmap("a", team="x")
    created = server.create(mine)
    created_rv = created["metadata"]["resourceVersion"]
    mine["data"]["k"] = "changed by the caller after create"
    created["data"]["k"] = "changed"
    created["metadata"]["labels"]["team"] = "y"
    got = server.get("v1", "ConfigMap", "a", "default")
    assert got["data"] == {"k": "a"} and got["metadata"]["labels"] == {"team": "x"}
    got["data"]["k"] = "changed"
    server.list("v1", "ConfigMap")[0]["metadata"]["labels"]["team"] = "z"
    assert server.resource_version == int(created_rv)  # no write happened

    replaced = server.replace(dict(server.get("v1", "ConfigMap", "a", "default"), data={"k": "2"}))
    replaced["data"]["k"] = "changed"
    deleted = server.delete("v1", "ConfigMap", "a", "default")
    deleted.clear()  # a Status for a ConfigMap; the last state for a pod

    # The history (lists at past versions, watch replays) keeps what was really written.
    assert [o["data"] for o in exact_list(server, created_rv)] == [{"k": "a"}]
    assert [o["metadata"]["labels"] for o in exact_list(server, created_rv)] == [{"team": "x"}]
    assert [o["data"] for o in exact_list(server, replaced["metadata"]["resourceVersion"])] == [
        {"k": "2"}
    ]
    stream = watch(server, "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1")
    events = stream.wait_lines(3)
    assert [(e["type"], e["object"]["data"]) for e in events[-3:]] == [
        ("ADDED", {"k": "a"}),
        ("MODIFIED", {"k": "2"}),
        ("DELETED", {"k": "2"}),
    ]


def test_an_object_changed_after_create_or_replace_is_not_the_stored_one(
    server: LocalApiServer,
) -> None:
    mine = configmap("b")
    server.create(mine)
    mine["metadata"]["labels"]["late"] = "true"
    assert server.get("v1", "ConfigMap", "b", "default")["metadata"]["labels"] == {}
    update = server.get("v1", "ConfigMap", "b", "default")
    server.replace(update)  # unchanged: no write
    update["data"]["k"] = "after replace"
    assert server.get("v1", "ConfigMap", "b", "default")["data"] == {"k": "b"}


def test_objects_json_cannot_carry_are_refused_with_the_objects_name(
    server: LocalApiServer,
) -> None:
    bad = configmap("c")
    bad["data"]["k"] = object()
    with pytest.raises(TypeError, match="ConfigMap 'c'"):
        server.create(bad)
    assert server.list("v1", "ConfigMap") == []
