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


def test_m12_direct_methods_raise_the_typed_clients_errors(server: LocalApiServer) -> None:
    """A test's `except NotFound` / `retry_on_conflict` works on the direct methods as on the
    client's calls; they raised the test server's internal ApiError."""
    from kubeinformers import AlreadyExists, Conflict, Invalid, NotFound, retry_on_conflict

    created = server.create(configmap("m"))
    server.replace(server.get("v1", "ConfigMap", "m", "default") | {"data": {"k": "2"}})
    with pytest.raises(Conflict, match="the object has been modified") as conflict:
        server.replace(created | {"data": {"k": "stale"}})
    assert conflict.value.code == 409 and conflict.value.reason == "Conflict"
    with pytest.raises(AlreadyExists, match='configmaps "m" already exists'):
        server.create(configmap("m"))
    with pytest.raises(NotFound, match='configmaps "nope" not found') as missing:
        server.get("v1", "ConfigMap", "nope", "default")
    assert missing.value.details is not None and missing.value.details["name"] == "nope"
    with pytest.raises(NotFound):
        server.delete("v1", "ConfigMap", "nope", "default")
    with pytest.raises(NotFound, match='namespaces "elsewhere" not found'):
        server.create(configmap("m") | {"metadata": {"name": "m", "namespace": "elsewhere"}})
    with pytest.raises(Invalid, match=r"metadata\.name"):
        server.create(configmap("m") | {"metadata": {"name": "Bad_Name", "namespace": "default"}})
    with pytest.raises(
        ValueError, match=r"ConfigMap 'n' is namespaced: set its metadata\.namespace"
    ):
        server.create(configmap("m") | {"metadata": {"name": "n"}})

    attempts: list[int] = []

    def bump() -> None:  # a read-modify-write that loses one race, then wins
        current = server.get("v1", "ConfigMap", "m", "default")
        if not attempts:
            server.replace(current | {"data": {"k": "raced"}})
        attempts.append(1)
        server.replace(current | {"data": {"k": "mine"}})

    retry_on_conflict(bump)
    assert len(attempts) == 2
    assert server.get("v1", "ConfigMap", "m", "default")["data"] == {"k": "mine"}
