"""LocalApiServer lists: resourceVersion / resourceVersionMatch semantics, paging with continue
tokens (snapshot at the first page's RV, 410 once compacted), label and field selectors, Table.
Rule IDs are client-go's section D (what the reflector relies on)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeinformers.testing.local_api_server import LocalApiServer
from tests.testing.conftest import BASIC, configmap, pod, request

CM = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def server() -> Any:
    with LocalApiServer(resources=BASIC, too_large_rv_wait=0.1) as s:
        for i in range(7):
            s.create(configmap(f"cm-{i}", tier="fe" if i % 2 else "be", idx=str(i)))
        yield s


def names(body: dict[str, Any]) -> list[str]:
    return [i["metadata"]["name"] for i in body["items"]]


def test_d7_paging_follows_continue_at_the_first_pages_snapshot(server: LocalApiServer) -> None:
    core = client.CoreV1Api(server.api_client())
    first = core.list_namespaced_config_map("default", limit=3)
    assert [c.metadata.name for c in first.items] == ["cm-0", "cm-1", "cm-2"]
    assert first.metadata.remaining_item_count == 4 and first.metadata._continue
    token = json.loads(base64.urlsafe_b64decode(first.metadata._continue + "=="))
    assert token == {
        "v": "meta.k8s.io/v1",
        "rv": int(first.metadata.resource_version),
        "start": "/cm-2\x00",
    }
    server.create(configmap("cm-3a"))  # after the snapshot: not in the next pages
    server.delete("v1", "ConfigMap", "cm-5", "default")  # deleted after it: still listed
    rest: list[str] = []
    cont = first.metadata._continue
    while cont:
        page = core.list_namespaced_config_map("default", limit=3, _continue=cont)
        assert page.metadata.resource_version == first.metadata.resource_version
        rest += [c.metadata.name for c in page.items]
        cont = page.metadata._continue
    assert rest == ["cm-3", "cm-4", "cm-5", "cm-6"]


def test_d8_expired_continue_is_410_with_an_inconsistent_continue_token(
    server: LocalApiServer,
) -> None:
    _, _, first = request(server, "GET", f"{CM}?limit=2")
    server.create(configmap("late"))
    server.compact()
    code, _, body = request(server, "GET", f"{CM}?limit=2&continue={first['metadata']['continue']}")
    assert code == 410 and body["reason"] == "Expired"
    retry = body["metadata"]["continue"]
    code, _, page = request(server, "GET", f"{CM}?limit=2&continue={retry}")
    assert code == 200 and names(page) == ["cm-2", "cm-3"]


def test_rv0_ignores_limit_and_rv_unset_pages(server: LocalApiServer) -> None:
    _, _, body = request(server, "GET", f"{CM}?resourceVersion=0&limit=2")
    assert len(body["items"]) == 7 and "continue" not in body["metadata"]
    _, _, body = request(server, "GET", f"{CM}?limit=2")
    assert len(body["items"]) == 2 and body["metadata"]["remainingItemCount"] == 5


def test_exact_resource_version_lists_the_past_state(server: LocalApiServer) -> None:
    before = server.resource_version
    server.delete("v1", "ConfigMap", "cm-0", "default")
    old = server.get("v1", "ConfigMap", "cm-1", "default")
    server.replace(dict(old, data={"k": "changed"}))
    server.create(configmap("new"))
    _, _, body = request(server, "GET", f"{CM}?resourceVersion={before}&resourceVersionMatch=Exact")
    assert body["metadata"]["resourceVersion"] == str(before)
    assert names(body) == [f"cm-{i}" for i in range(7)]
    assert body["items"][1]["data"] == {"k": "cm-1"}
    _, _, now = request(
        server, "GET", f"{CM}?resourceVersion={before}&resourceVersionMatch=NotOlderThan"
    )
    assert int(now["metadata"]["resourceVersion"]) == server.resource_version and "new" in names(
        now
    )


def test_d8_exact_list_below_compaction_is_410(server: LocalApiServer) -> None:
    before = server.resource_version
    server.create(configmap("x"))
    server.compact()
    code, _, body = request(
        server, "GET", f"{CM}?resourceVersion={before}&resourceVersionMatch=Exact"
    )
    assert (code, body["reason"], body["message"]) == (
        410,
        "Expired",
        "The resourceVersion for the provided list is too old.",
    )


def test_d8_future_resource_version_is_504_too_large(server: LocalApiServer) -> None:
    code, headers, body = request(
        server, "GET", f"{CM}?resourceVersion={server.resource_version + 100}"
    )
    assert code == 504 and headers["Retry-After"] == "1"
    assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


def test_list_options_validation_matches_the_real_server(server: LocalApiServer) -> None:
    cases = {
        "resourceVersionMatch=NotOlderThan": (422, "Invalid"),
        "resourceVersion=abc": (400, "BadRequest"),
        "sendInitialEvents=true&resourceVersionMatch=NotOlderThan": (422, "Invalid"),
        "continue=garbage": (400, "BadRequest"),
        "limit=1&resourceVersion=3&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiIvYSJ9": (
            400,
            "BadRequest",
        ),
    }
    for query, (code, reason) in cases.items():
        got, _, body = request(server, "GET", f"{CM}?{query}")
        assert (got, body["reason"]) == (code, reason), query


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("tier=fe", ["cm-1", "cm-3", "cm-5"]),
        ("tier==be,idx!=0", ["cm-2", "cm-4", "cm-6"]),
        ("idx in (1, 2)", ["cm-1", "cm-2"]),
        ("idx notin (0,1,2,3,4),tier", ["cm-5", "cm-6"]),
        ("!missing,idx>4", ["cm-5", "cm-6"]),
        ("missing", []),
    ],
)
def test_label_selector_full_syntax(
    server: LocalApiServer, selector: str, expected: list[str]
) -> None:
    items = (
        client.CoreV1Api(server.api_client())
        .list_namespaced_config_map("default", label_selector=selector)
        .items
    )
    assert [c.metadata.name for c in items] == expected


def test_invalid_label_selector_is_400_with_the_parsers_words(server: LocalApiServer) -> None:
    with pytest.raises(ApiException) as err:
        client.CoreV1Api(server.api_client()).list_namespaced_config_map(
            "default", label_selector="==="
        )
    assert (
        err.value.status == 400
        and "found '==', expected: !, identifier, or 'end of string'" in err.value.body
    )


def test_field_selectors_and_unsupported_fields(server: LocalApiServer) -> None:
    core = client.CoreV1Api(server.api_client())
    assert [
        c.metadata.name
        for c in core.list_config_map_for_all_namespaces(field_selector="metadata.name=cm-3").items
    ] == ["cm-3"]
    assert (
        core.list_config_map_for_all_namespaces(field_selector="metadata.namespace!=default").items
        == []
    )
    server.create(pod("running"))
    assert [
        p.metadata.name
        for p in core.list_namespaced_pod("default", field_selector="status.phase=Pending").items
    ] == ["running"]
    with pytest.raises(ApiException) as err:
        core.list_namespaced_pod("default", field_selector="data.k=x")
    assert err.value.status == 400 and "field label not supported: data.k" in err.value.body
    with pytest.raises(ApiException) as err:  # no field labels of its own: other wording
        core.list_namespaced_config_map("default", field_selector="data.k=x")
    assert err.value.status == 400
    assert '\\"data.k\\" is not a known field selector: only' in err.value.body


def test_selector_pages_have_continue_but_no_remaining_count(server: LocalApiServer) -> None:
    _, _, body = request(server, "GET", f"{CM}?labelSelector=tier%3Dbe&limit=2")
    assert names(body) == ["cm-0", "cm-2"] and body["metadata"]["continue"]
    assert "remainingItemCount" not in body["metadata"]


def test_all_namespaces_list_and_unknown_namespace(server: LocalApiServer) -> None:
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    server.create(configmap("z", "other"))
    _, _, body = request(server, "GET", "/api/v1/configmaps?limit=7")
    token = json.loads(base64.urlsafe_b64decode(body["metadata"]["continue"] + "=="))
    assert token["start"] == "/default/cm-6\x00" and body["metadata"]["remainingItemCount"] == 1
    code, _, body = request(server, "GET", "/api/v1/namespaces/nope/configmaps")
    assert code == 200 and body["items"] == []


def test_d9_table_output_is_a_meta_v1_table(server: LocalApiServer) -> None:
    _, _, body = request(
        server,
        "GET",
        f"{CM}?limit=2",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    )
    assert (body["kind"], body["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert [r["cells"][0] for r in body["rows"]] == ["cm-0", "cm-1"] and body["metadata"][
        "continue"
    ]


def test_deletecollection_with_selector(server: LocalApiServer) -> None:
    code, _, body = request(server, "DELETE", f"{CM}?labelSelector=tier%3Dfe")
    assert code == 200 and names(body) == ["cm-1", "cm-3", "cm-5"]
    assert [o["metadata"]["name"] for o in server.list("v1", "ConfigMap", "default")] == [
        "cm-0",
        "cm-2",
        "cm-4",
        "cm-6",
    ]


def test_cached_encodings_follow_every_write_and_past_versions_are_never_served_from_them(
    server: LocalApiServer,
) -> None:
    """Each stored version is encoded once (as the watch cache's cachingObject does); a write
    replaces it, and an exact list at an older resourceVersion still shows the old one."""
    _, _, before = request(server, "GET", CM)
    _, _, again = request(server, "GET", CM)
    assert again == before  # served from the cached encodings
    cm = server.get("v1", "ConfigMap", "cm-1", "default")
    cm["data"] = {"k": "changed"}
    server.replace(cm)
    _, _, after = request(server, "GET", CM)
    changed = next(i for i in after["items"] if i["metadata"]["name"] == "cm-1")
    assert changed["data"] == {"k": "changed"}
    assert "kind" not in changed and "apiVersion" not in changed  # typed list items
    old_rv = before["metadata"]["resourceVersion"]
    _, _, past = request(server, "GET", f"{CM}?resourceVersion={old_rv}&resourceVersionMatch=Exact")
    assert past["items"] == before["items"]
    server.delete("v1", "ConfigMap", "cm-2", "default")
    _, _, gone = request(server, "GET", CM)
    assert "cm-2" not in names(gone)
    _, _, one = request(server, "GET", f"{CM}/cm-1")
    assert one["kind"] == "ConfigMap" and one["data"] == {"k": "changed"}
