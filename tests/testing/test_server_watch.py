"""LocalApiServer watches: chunked JSON lines, resume from a resourceVersion, 410 when it is too
old, selector transitions, BOOKMARKs, timeoutSeconds, watch-list (D17-D19) and its stall hook.
Rule IDs are client-go's section D (what the reflector relies on)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeinformers.testing.local_api_server import LocalApiServer
from tests.testing.conftest import BASIC, configmap, request, watch

CM = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def server() -> Any:
    with LocalApiServer(resources=BASIC, history_size=50) as s:
        s.create(configmap("a", app="x"))
        s.create(configmap("b", app="y"))
        yield s
        s.drop_watches()


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def test_d12_watch_from_resource_version_replays_then_streams_live(server: LocalApiServer) -> None:
    start = server.resource_version
    server.create(configmap("c"))
    stream = watch(server, f"{CM}?watch=true&resourceVersion={start}")
    server.replace(dict(server.get("v1", "ConfigMap", "a", "default"), data={"k": "2"}))
    server.delete("v1", "ConfigMap", "b", "default")
    events = stream.wait_lines(3)
    assert types(events) == ["ADDED", "MODIFIED", "DELETED"]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[-1] == server.resource_version
    assert events[0]["object"]["kind"] == "ConfigMap" and events[0]["object"]["apiVersion"] == "v1"


def test_watch_path_form_and_single_object_watch(server: LocalApiServer) -> None:
    stream = watch(
        server,
        f"/api/v1/watch/namespaces/default/configmaps/a?resourceVersion={server.resource_version}",
    )
    server.replace(dict(server.get("v1", "ConfigMap", "b", "default"), data={"k": "b2"}))
    server.replace(dict(server.get("v1", "ConfigMap", "a", "default"), data={"k": "a2"}))
    events = stream.wait_lines(1)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("MODIFIED", "a")]


def test_d13_watch_without_resource_version_sends_synthetic_adds_first(
    server: LocalApiServer,
) -> None:
    stream = watch(server, f"{CM}?watch=1&allowWatchBookmarks=true")
    events = stream.wait_lines(3)
    assert types(events) == ["ADDED", "ADDED", "BOOKMARK"]
    assert events[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_d14_watch_from_compacted_rv_is_an_error_event_410(server: LocalApiServer) -> None:
    old = server.resource_version
    server.create(configmap("c"))
    server.compact()
    stream = watch(server, f"{CM}?watch=1&resourceVersion={old}")
    assert stream.done.wait(5) and stream.status == 200 and stream.ended == "clean"
    (event,) = stream.events()
    assert event["type"] == "ERROR"
    assert (event["object"]["code"], event["object"]["reason"]) == (410, "Expired")
    assert (
        event["object"]["message"] == f"too old resource version: {old} ({server.resource_version})"
    )


def test_bounded_history_turns_old_resource_versions_into_410(server: LocalApiServer) -> None:
    old = server.resource_version
    for i in range(60):  # history_size=50
        server.create(configmap(f"n{i}"))
    stream = watch(server, f"{CM}?watch=1&resourceVersion={old}")
    assert stream.done.wait(5)
    assert stream.events()[0]["object"]["code"] == 410
    recent = server.resource_version - 10
    ok = watch(server, f"{CM}?watch=1&resourceVersion={recent}")
    assert types(ok.wait_lines(10)) == ["ADDED"] * 10


def test_label_selector_transitions_become_added_and_deleted(server: LocalApiServer) -> None:
    stream = watch(
        server, f"{CM}?watch=1&labelSelector=app%3Dx&resourceVersion={server.resource_version}"
    )
    b = server.get("v1", "ConfigMap", "b", "default")
    b = server.replace(dict(b, metadata=dict(b["metadata"], labels={"app": "x"})))  # enters
    server.replace(dict(b, metadata=dict(b["metadata"], labels={"app": "z"})))  # leaves
    events = stream.wait_lines(2)
    assert [(e["type"], e["object"]["metadata"]["labels"]["app"]) for e in events] == [
        ("ADDED", "x"),
        ("DELETED", "x"),
    ]
    assert events[1]["object"]["metadata"]["resourceVersion"] == str(server.resource_version)


def test_d10_periodic_bookmarks_carry_the_current_resource_version(server: LocalApiServer) -> None:
    server.set_bookmark_interval(0.1)
    stream = watch(
        server, f"{CM}?watch=1&allowWatchBookmarks=true&resourceVersion={server.resource_version}"
    )
    server.create(configmap("elsewhere", "kube-system"))  # other namespace: bookmark RV still moves
    events = stream.wait_lines(2)
    assert types(events) == ["BOOKMARK", "BOOKMARK"]
    assert events[0]["object"] == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": events[0]["object"]["metadata"]["resourceVersion"]},
    }
    assert int(events[-1]["object"]["metadata"]["resourceVersion"]) == server.resource_version


def test_no_bookmarks_unless_allowed(server: LocalApiServer) -> None:
    server.set_bookmark_interval(0.05)
    stream = watch(
        server, f"{CM}?watch=1&timeoutSeconds=1&resourceVersion={server.resource_version}"
    )
    assert stream.done.wait(5) and stream.ended == "clean" and stream.lines == []


def test_timeout_seconds_ends_the_stream_cleanly_with_pre_timeout_bookmarks(
    server: LocalApiServer,
) -> None:
    stream = watch(
        server,
        f"{CM}?watch=1&allowWatchBookmarks=true&timeoutSeconds=2&resourceVersion={server.resource_version}",
    )
    server.create(configmap("elsewhere", "kube-system"))  # the resource moves past the watch
    assert stream.done.wait(5) and stream.ended == "clean"
    assert types(stream.events()) == ["BOOKMARK"]  # the one due 1 s before the deadline


def test_d10_no_bookmark_until_the_resource_moves_past_the_watch(server: LocalApiServer) -> None:
    """As kube-apiserver's watch cache: a bookmark carries the version the cache has seen for
    the resource (its last event, or now after a consistent read) and is sent only once that
    is newer than the watch's own position — other resources' writes do not count."""
    server.set_bookmark_interval(0.05)
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "moves-rv"}})
    at = server.resource_version  # newer than any configmap's version
    quiet = watch(
        server, f"{CM}?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion={at}"
    )
    assert quiet.done.wait(5) and quiet.ended == "clean" and quiet.lines == []
    request(server, "GET", CM)  # a consistent read: the cache catches up to `at` ...
    level = watch(
        server, f"{CM}?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion={at}"
    )
    assert level.done.wait(5) and level.lines == []  # ... which is not past the watch
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "moves-rv-2"}})
    request(server, "GET", CM)  # now it is
    moved = watch(server, f"{CM}?watch=1&allowWatchBookmarks=true&resourceVersion={at}")
    events = moved.wait_lines(1)
    assert types(events) == ["BOOKMARK"]
    assert events[0]["object"]["metadata"]["resourceVersion"] == str(server.resource_version)
    server.drop_watches()


def test_d18_d19_watch_list_initial_events_then_bookmark_then_live(server: LocalApiServer) -> None:
    stream = watch(
        server,
        f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
    )
    events = stream.wait_lines(3)
    assert types(events) == ["ADDED", "ADDED", "BOOKMARK"]
    assert events[2]["object"]["metadata"] == {
        "resourceVersion": str(server.resource_version),
        "annotations": {"k8s.io/initial-events-end": "true"},
    }
    server.create(configmap("c"))
    assert types(stream.wait_lines(4))[3] == "ADDED"


def test_d20_watch_list_without_rv_match_is_422(server: LocalApiServer) -> None:
    from tests.testing.conftest import request

    code, _, body = request(
        server, "GET", f"{CM}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
    )
    assert code == 422 and body["details"]["causes"][0]["field"] == "resourceVersionMatch"


def test_stall_initial_events_end_holds_the_bookmark_until_released(server: LocalApiServer) -> None:
    server.stall_initial_events_end(True)
    stream = watch(
        server,
        f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
    )
    events = stream.wait_lines(2)
    assert not stream.wait_for(lambda lines: len(lines) > 2, timeout=0.3)
    server.create(configmap("during-stall"))
    assert types(stream.wait_lines(3)) == ["ADDED", "ADDED", "ADDED"]
    server.stall_initial_events_end(False)
    events = stream.wait_lines(4)
    assert events[3]["type"] == "BOOKMARK" and events[3]["object"]["metadata"]["annotations"]


def test_watch_list_unsupported_storage_sends_error_500(server: LocalApiServer) -> None:
    server.set_watch_list_supported(False)
    stream = watch(
        server,
        f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
    )
    assert stream.done.wait(5)
    (event,) = stream.events()
    assert (event["type"], event["object"]["code"], event["object"]["reason"]) == (
        "ERROR",
        500,
        "InternalError",
    )


def test_watch_from_future_rv_stays_silent_until_it_is_reached(server: LocalApiServer) -> None:
    future = server.resource_version + 2
    stream = watch(server, f"{CM}?watch=1&resourceVersion={future}")
    server.create(configmap("c"))  # future - 1
    server.create(configmap("d"))  # == future: still not after it
    server.create(configmap("e"))
    events = stream.wait_lines(1)
    assert [e["object"]["metadata"]["name"] for e in events] == ["e"]


def test_a_watch_the_client_closed_is_released_without_waiting_for_an_event(
    server: LocalApiServer,
) -> None:
    import http.client
    import threading

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("GET", f"{CM}?watch=1&resourceVersion={server.resource_version}")
    assert conn.getresponse().status == 200
    assert server.open_watches() == 1
    conn.close()
    released = threading.Event()

    def poll() -> None:
        while server.open_watches():
            released.wait(0.02)
        released.set()

    threading.Thread(target=poll, daemon=True).start()
    assert released.wait(5), "the server kept the abandoned watch"


def test_initial_events_carry_the_current_version_after_a_write(server: LocalApiServer) -> None:
    """Initial events reuse each object's cached encoding; a write must replace it."""
    first = watch(server, f"{CM}?watch=1&allowWatchBookmarks=true").wait_lines(3)
    a = server.get("v1", "ConfigMap", "a", "default")
    a["data"] = {"k": "new"}
    server.replace(a)
    events = watch(server, f"{CM}?watch=1&allowWatchBookmarks=true").wait_lines(3)
    assert types(events) == ["ADDED", "ADDED", "BOOKMARK"]
    objs = {e["object"]["metadata"]["name"]: e["object"] for e in events[:2]}
    assert objs["a"]["data"] == {"k": "new"} and objs["a"]["kind"] == "ConfigMap"
    assert objs["b"] == next(e["object"] for e in first if e["object"]["metadata"]["name"] == "b")
