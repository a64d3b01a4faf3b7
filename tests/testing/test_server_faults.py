"""LocalApiServer authentication, authorization and fault hooks: 401/403 bodies, injected
429/500, latency, dropped and corrupted watches, restarts with and without resourceVersion
continuity, compaction. Rule IDs are client-go's section D (what the reflector must survive)."""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeinformers.testing.local_api_server import LocalApiServer
from tests.testing.conftest import BASIC, configmap, request, watch

CM = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def server() -> Any:
    with LocalApiServer(resources=BASIC, token="admin", users={"weak": "nobody"}) as s:
        s.create(configmap("a"))
        yield s


def test_wrong_token_is_401_and_no_token_is_anonymous_403(server: LocalApiServer) -> None:
    code, headers, body = request(server, "GET", CM, headers={"Authorization": "Bearer wrong"})
    assert (code, body["reason"], body["message"]) == (401, "Unauthorized", "Unauthorized")
    assert "X-Kubernetes-Pf-Flowschema-Uid" not in headers
    code, _, body = request(server, "GET", CM, headers={"Authorization": ""})
    assert code == 403
    assert (
        body["message"]
        == 'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"'
    )


def test_user_without_rbac_gets_403_naming_the_verb(server: LocalApiServer) -> None:
    code, _, body = request(
        server, "GET", f"{CM}?watch=1", headers={"Authorization": "Bearer weak"}
    )
    assert code == 403 and body["details"] == {"kind": "configmaps"}
    assert 'User "nobody" cannot watch resource "configmaps"' in body["message"]


def test_forbid_and_allow_a_resource_verb(server: LocalApiServer) -> None:
    core = client.CoreV1Api(server.api_client())
    server.forbid("configmaps", ["watch"], namespace="default")
    assert core.list_namespaced_config_map("default").items
    code, _, body = request(server, "GET", f"{CM}?watch=1")
    assert code == 403 and 'User "admin" cannot watch resource "configmaps"' in body["message"]
    server.allow("configmaps")
    stream = watch(server, f"{CM}?watch=1")
    assert stream.wait_lines(1)[0]["type"] == "ADDED"
    server.drop_watches()


def test_forbidden_constructor_rules_name_the_group() -> None:
    deploy = BASIC[0].__class__("apps", "v1", "deployments", "Deployment", True)
    with LocalApiServer(resources=[deploy], forbidden=["deployments.apps:list"]) as s:
        code, _, body = request(s, "GET", "/apis/apps/v1/namespaces/default/deployments")
    assert code == 403 and body["message"].startswith(
        'deployments.apps is forbidden: User "admin" cannot list'
    )
    assert body["details"] == {"group": "apps", "kind": "deployments"}


def test_d11_fail_next_429_with_retry_after_then_recovers(server: LocalApiServer) -> None:
    server.fail_next(2, status=429, retry_after=3)
    for _ in range(2):
        code, headers, body = request(server, "GET", CM)
        assert (
            code,
            headers["Retry-After"],
            body["reason"],
            body["details"]["retryAfterSeconds"],
        ) == (429, "3", "TooManyRequests", 3)
    assert request(server, "GET", CM)[0] == 200


def test_fail_next_500_only_for_the_chosen_verbs(server: LocalApiServer) -> None:
    server.fail_next(1, status=500, verbs=["watch"])
    assert request(server, "GET", CM)[0] == 200
    with pytest.raises(ApiException) as err:
        client.CoreV1Api(server.api_client()).list_namespaced_config_map(
            "default", watch=True, _preload_content=False
        )
    assert err.value.status == 500 and json.loads(err.value.body)["reason"] == "InternalError"
    assert request(server, "GET", f"{CM}?watch=1&timeoutSeconds=1")[0] == 200


def test_set_latency_delays_each_request(server: LocalApiServer) -> None:
    server.set_latency(0.3)
    start = time.monotonic()
    assert request(server, "GET", CM)[0] == 200
    assert time.monotonic() - start >= 0.3
    server.set_latency(0)


def test_d14_drop_watches_cuts_connections_or_ends_cleanly(server: LocalApiServer) -> None:
    cut = watch(server, f"{CM}?watch=1&resourceVersion={server.resource_version}")
    assert server.open_watches() == 1 or cut.wait_for(lambda _: server.open_watches() == 1, 2)
    assert server.drop_watches() == 1
    assert cut.done.wait(5) and cut.ended == "cut"
    clean = watch(server, f"{CM}?watch=1&resourceVersion={server.resource_version}")
    assert clean.wait_for(lambda _: server.open_watches() == 1, 2)
    server.drop_watches(clean=True)
    assert clean.done.wait(5) and clean.ended == "clean"


def test_corrupt_next_watch_line_sends_invalid_json_then_goes_on(server: LocalApiServer) -> None:
    stream = watch(server, f"{CM}?watch=1&resourceVersion={server.resource_version}")
    assert stream.wait_for(lambda _: server.open_watches() == 1, 2)
    server.corrupt_next_watch_line()
    server.create(configmap("b"))
    server.create(configmap("c"))
    assert stream.wait_for(lambda lines: len(lines) == 2)
    with pytest.raises(json.JSONDecodeError):
        json.loads(stream.lines[0])
    assert json.loads(stream.lines[1])["object"]["metadata"]["name"] == "c"
    server.drop_watches()


def test_truncate_next_watch_line_cuts_mid_line(server: LocalApiServer) -> None:
    stream = watch(server, f"{CM}?watch=1&resourceVersion={server.resource_version}")
    assert stream.wait_for(lambda _: server.open_watches() == 1, 2)
    server.truncate_next_watch_line()
    server.create(configmap("b"))
    assert stream.done.wait(5) and stream.ended == "cut"
    assert not stream.lines[-1].endswith(b"\n")


def test_restart_keeps_objects_port_and_resource_versions(server: LocalApiServer) -> None:
    port, rv = server.port, server.resource_version
    stream = watch(server, f"{CM}?watch=1&resourceVersion={rv}")
    assert stream.wait_for(lambda _: server.open_watches() == 1, 2)
    server.restart(downtime=0.2)
    assert stream.done.wait(5) and stream.ended == "cut"
    assert server.port == port and server.resource_version == rv
    code, _, body = request(server, "GET", CM)
    assert code == 200 and body["metadata"]["resourceVersion"] == str(rv)
    resumed = watch(server, f"{CM}?watch=1&resourceVersion={rv}")
    server.create(configmap("after"))
    assert resumed.wait_lines(1)[0]["object"]["metadata"]["name"] == "after"
    server.drop_watches()


def test_d8_restart_without_rv_continuity_gives_too_large_and_410(server: LocalApiServer) -> None:
    for i in range(20):
        server.create(configmap(f"x{i}"))
        server.replace(dict(configmap(f"x{i}"), data={"k": "v2"}))  # the counter moves on
    seen = server.resource_version
    server.restart(keep_resource_versions=False)
    assert server.resource_version < seen
    server._state.too_large_wait = 0.05  # keep the test fast
    code, _, body = request(
        server, "GET", f"{CM}?resourceVersion={seen}&resourceVersionMatch=NotOlderThan"
    )
    assert code == 504 and body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    code, _, body = request(server, "GET", f"{CM}?resourceVersion=2&resourceVersionMatch=Exact")
    assert code == 410
    listed = request(server, "GET", CM)[2]
    assert (
        len(listed["items"]) == 21
        and int(listed["metadata"]["resourceVersion"]) == server.resource_version
    )


def test_compact_turns_older_resource_versions_into_410_for_watch(server: LocalApiServer) -> None:
    old = server.resource_version
    server.create(configmap("b"))
    assert server.compact() == server.resource_version
    stream = watch(server, f"{CM}?watch=1&resourceVersion={old}")
    assert stream.done.wait(5) and stream.events()[0]["object"]["code"] == 410


@pytest.mark.parametrize("fault", ["401", "injected-500"])
def test_a_client_gone_before_its_error_answer_costs_no_traceback(
    server: LocalApiServer, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """A client that hangs up (a reflector's request cut by a fault, a stop) before the
    server writes its error answer: the connection just closes, as after a success, and the
    socket server prints no 'Exception occurred during processing of request' traceback
    (the local soak printed dozens). The server goes on serving."""
    from kubeinformers.testing.apiserver.http import Handler, LocalHTTPServer

    hung_up, finished = threading.Event(), threading.Event()
    errors: list[BaseException | None] = []
    authenticate = Handler._authenticate

    def after_hang_up(self: Handler, state: Any) -> str:
        hung_up.wait(10)  # the client's reset has arrived before the answer is written
        return authenticate(self, state)

    def handle_error(self: LocalHTTPServer, request: Any, address: Any) -> None:
        errors.append(sys.exc_info()[1])

    shutdown_request = LocalHTTPServer.shutdown_request

    def shut_down(self: LocalHTTPServer, request: Any) -> None:
        shutdown_request(self, request)
        finished.set()

    monkeypatch.setattr(Handler, "_authenticate", after_hang_up)
    monkeypatch.setattr(LocalHTTPServer, "handle_error", handle_error)
    monkeypatch.setattr(LocalHTTPServer, "shutdown_request", shut_down)
    token = "wrong" if fault == "401" else "admin"
    if fault == "injected-500":
        server.fail_next(1, status=500)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
        conn.sendall(
            f"GET {CM} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n".encode()
        )
        # close with a reset (SO_LINGER 0), as a cut connection ends
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    hung_up.set()
    assert finished.wait(10)
    assert errors == []
    monkeypatch.undo()
    assert request(server, "GET", CM)[0] == 200
