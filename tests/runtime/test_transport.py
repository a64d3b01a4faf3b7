"""ApiListerWatcher against a tiny canned HTTP server on 127.0.0.1 (no real cluster).

Checks request paths and query parameters, decoding of list pages and watch lines into a
pydantic model, ERROR events as Status, 401/403 wording without the token, one bad object
skipped, stop() from another thread, and a Reflector over the transport (paging, D7/D19).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from pydantic import Field

from kubeinformers.generated.core.v1.models import ConfigMap
from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.keys import object_annotations, object_name, object_resource_version
from kubeinformers.runtime.api.listwatch import ListOptions, Status
from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.api.resource import APIResource, ProtobufKind
from kubeinformers.runtime.client import transport
from kubeinformers.runtime.client.cancel import RequestCancelled
from kubeinformers.runtime.client.server_version import (
    RECHECK_AFTER,
    parse_version,
    server_version,
)
from kubeinformers.runtime.client.transport import (
    MIN_CONNECTION_POOL_SIZE,
    ApiListerWatcher,
    DecodeMode,
    query_params,
)
from kubeinformers.runtime.codec import json_list
from kubeinformers.runtime.codec.drift import InvalidFieldError
from kubeinformers.runtime.codec.lazy import is_lazy
from kubeinformers.runtime.codec.protobuf import decoder as protobuf_decoder
from kubeinformers.runtime.codec.wire import JsonDecoder, ObjectDecodeError
from kubeinformers.runtime.reflector.outage import failure_cause, is_server_unavailable
from kubeinformers.runtime.reflector.reflector import Reflector
from tests.support import protobuf as pb
from tests.support.garbage import collected
from tests.support.silent import SilentServer
from tests.support.waiting import eventually

kubernetes_client = pytest.importorskip("kubernetes.client")

TOKEN = "s3cret-token-value"
PODS = APIResource("", "v1", "pods", "Pod", namespaced=True)
WIDGETS = APIResource("example.com", "v1", "widgets", "Widget", namespaced=True)
NODES = APIResource("", "v1", "nodes", "Node", namespaced=False)


class Meta(KubeModel):
    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = Field(None, alias="resourceVersion")
    annotations: dict[str, str] | None = None


class Spec(KubeModel):
    replicas: int = 1


class Widget(KubeModel):
    api_version: str | None = Field(None, alias="apiVersion")
    kind: str | None = None
    metadata: Meta | None = None
    spec: Spec  # required: a bookmark (metadata only) must not need it


def widget(name: str, rv: str, replicas: Any = 1, ns: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": ns, "resourceVersion": rv},
        "spec": {"replicas": replicas},
    }


def line(type_: str, obj: Any) -> bytes:
    return json.dumps({"type": type_, "object": obj}).encode() + b"\n"


def status_body(code: int, reason: str, message: str) -> bytes:
    return json.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
    ).encode()


# ------------------------------------------------------------------------------ the server


@dataclass
class Request:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    client_port: int = 0


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stream:
    """A chunked response; an Event item waits (up to 10 s) before the next chunk."""

    chunks: Iterable[bytes | threading.Event]
    content_type: str = "application/json"
    cut: bool = False  # end without the last chunk: the connection drops mid-body
    keep_alive: bool = False  # keep the connection open after the last chunk


Route = Callable[[Request], Reply | Stream]


class CannedServer:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.routes: dict[str, Route | list[Route]] = {}
        self.version = b'{"major": "1", "minor": "36", "gitVersion": "v1.36.0"}'
        self.version_requests: list[Request] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                headers = {k.lower(): v for k, v in self.headers.items()}
                req = Request(
                    parts.path, dict(parse_qsl(parts.query)), headers, self.client_address[1]
                )
                route = outer.routes.get(parts.path)
                if parts.path == "/version" and route is None:
                    outer.version_requests.append(req)  # D25: asked by the protobuf transport
                    route = lambda r: Reply(body=outer.version)  # noqa: E731
                else:
                    outer.requests.append(req)
                if isinstance(route, list):
                    route = route.pop(0) if route else None
                reply = route(req) if route else Reply(404, status_body(404, "NotFound", "no"))
                if isinstance(reply, Reply):
                    self.send_response(reply.status)
                    if "Content-Type" not in reply.headers:
                        self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_response(200)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in reply.chunks:
                        if isinstance(chunk, threading.Event):
                            chunk.wait(10)
                            continue
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                    if not reply.cut:
                        self.wfile.write(b"0\r\n\r\n")
                        self.wfile.flush()
                except OSError:
                    pass
                self.close_connection = not reply.keep_alive

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # 50 informers connect at once

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[CannedServer]:
    s = CannedServer()
    yield s
    s.close()


def api_client(url: str, token: str = TOKEN) -> Any:
    cfg = kubernetes_client.Configuration()
    cfg.host = url
    cfg.api_key = {"authorization": token}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    return kubernetes_client.ApiClient(cfg)


def widget_list(rv: str, *items: dict[str, Any], cont: str | None = None) -> Reply:
    md: dict[str, Any] = {"resourceVersion": rv}
    if cont:
        md["continue"] = cont
    return Reply(
        body=json.dumps(
            {
                "kind": "WidgetList",
                "apiVersion": "example.com/v1",
                "metadata": md,
                "items": list(items),
            }
        ).encode()
    )


# ------------------------------------------------------------------------------ requests


def test_paths_for_core_named_group_all_namespaces_and_cluster_scope(server: CannedServer) -> None:
    api = api_client(server.url)
    empty = lambda r: Reply(body=b'{"kind":"List","metadata":{"resourceVersion":"1"},"items":[]}')  # noqa: E731
    for p in (
        "/api/v1/namespaces/x/pods",
        "/api/v1/pods",
        "/apis/example.com/v1/widgets",
        "/api/v1/nodes",
    ):
        server.routes[p] = empty
    ApiListerWatcher(api, PODS, dict, namespace="x").list(ListOptions())
    ApiListerWatcher(api, PODS, dict).list(ListOptions())
    ApiListerWatcher(api, WIDGETS, dict, namespace="").list(ListOptions())
    ApiListerWatcher(api, NODES, dict, namespace="ignored").list(ListOptions())
    assert [r.path for r in server.requests] == [
        "/api/v1/namespaces/x/pods",
        "/api/v1/pods",
        "/apis/example.com/v1/widgets",
        "/api/v1/nodes",
    ]
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in server.requests)
    assert all(r.headers["accept"] == "application/json" for r in server.requests)
    assert all(r.headers["accept-encoding"] == "gzip" for r in server.requests)


def test_gzip_list_page_is_inflated(server: CannedServer) -> None:
    import gzip

    body = widget_list("9", widget("a", "1")).body
    server.routes["/apis/example.com/v1/widgets"] = lambda r: Reply(
        body=gzip.compress(body), headers={"Content-Encoding": "gzip"}
    )
    page = ApiListerWatcher(api_client(server.url), WIDGETS, Widget).list(ListOptions())
    assert page.resource_version == "9" and len(page.items) == 1


def test_list_query_params_from_list_options(server: CannedServer) -> None:
    server.routes["/api/v1/pods"] = lambda r: Reply(body=b'{"metadata":{},"items":[]}')
    lw = ApiListerWatcher(api_client(server.url), PODS, dict)
    lw.list(
        ListOptions(
            label_selector="app=web,tier in (a,b)",
            field_selector="metadata.name=x",
            resource_version="0",
            resource_version_match="NotOlderThan",
            limit=500,
            continue_="tok",
            allow_watch_bookmarks=True,  # meaningless for a list: not sent
        )
    )
    assert server.requests[0].query == {
        "labelSelector": "app=web,tier in (a,b)",
        "fieldSelector": "metadata.name=x",
        "resourceVersion": "0",
        "resourceVersionMatch": "NotOlderThan",
        "limit": "500",
        "continue": "tok",
    }


def test_watch_query_params() -> None:
    q = dict(
        query_params(
            ListOptions(
                resource_version="",
                resource_version_match="NotOlderThan",
                allow_watch_bookmarks=True,
                send_initial_events=True,
                timeout_seconds=450,
            ),
            watch=True,
        )
    )
    assert q == {
        "resourceVersionMatch": "NotOlderThan",
        "timeoutSeconds": "450",
        "watch": "true",
        "allowWatchBookmarks": "true",
        "sendInitialEvents": "true",
    }


def test_h8_tweak_applies_to_a_copy(server: CannedServer) -> None:
    server.routes["/api/v1/pods"] = lambda r: Reply(body=b'{"metadata":{},"items":[]}')
    seen: list[ListOptions] = []

    def tweak(o: ListOptions) -> None:
        o.label_selector = "team=a"
        seen.append(o)

    lw = ApiListerWatcher(api_client(server.url), PODS, dict, tweak_list_options=tweak)
    original = ListOptions(resource_version="5")
    lw.list(original)
    assert original.label_selector is None  # the caller's options are untouched
    assert seen[0] is not original
    assert server.requests[0].query["labelSelector"] == "team=a"


def test_connection_pool_is_sized_for_many_informers(server: CannedServer) -> None:
    api = api_client(server.url)
    ApiListerWatcher(api, PODS, dict)
    assert api.configuration.connection_pool_maxsize >= MIN_CONNECTION_POOL_SIZE
    assert api.rest_client.pool_manager.connection_pool_kw["maxsize"] >= 50


# ------------------------------------------------------------------------------ decoding


def test_list_page_decodes_into_the_model(server: CannedServer) -> None:
    server.routes["/apis/example.com/v1/namespaces/default/widgets"] = lambda r: widget_list(
        "42", widget("a", "40"), widget("b", "41", replicas=3), cont="next"
    )
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget, namespace="default")
    page = lw.list(ListOptions(limit=2))
    assert page.resource_version == "42" and page.continue_ == "next"
    assert [type(i) for i in page.items] == [Widget, Widget]
    assert page.items[1].spec.replicas == 3
    assert page.items[0].metadata is not None and page.items[0].metadata.name == "a"


def test_list_page_with_one_bad_object_keeps_the_others(
    server: CannedServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.routes["/apis/example.com/v1/widgets"] = lambda r: widget_list(
        "9", widget("good", "1"), widget("bad", "2", replicas="many"), widget("fine", "3")
    )
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget)
    reported: list[BaseException] = []
    lw.set_decode_error_handler(reported.append)
    page = lw.list(ListOptions())
    assert [i.metadata.name for i in page.items if i.metadata] == ["good", "fine"]
    assert lw.decode_errors == 1
    assert isinstance(reported[0], ObjectDecodeError)
    assert reported[0].key == "default/bad" and reported[0].path == "spec.replicas"
    assert "default/bad" in caplog.text


def test_model_dict_gives_plain_dicts(server: CannedServer) -> None:
    server.routes["/apis/example.com/v1/widgets"] = lambda r: widget_list("9", widget("a", "1"))
    page = ApiListerWatcher(api_client(server.url), WIDGETS, dict).list(ListOptions())
    assert page.items == [widget("a", "1")]
    assert page.resource_version == "9"


def test_d9_table_response_is_rejected() -> None:
    dec = JsonDecoder(Widget)
    with pytest.raises(ValueError, match="Table"):
        dec.decode_list(b'{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{},"rows":[]}')


def test_k7_eager_page_validates_each_item_as_the_whole_page_would() -> None:
    items = [widget("a", "1"), {**widget("b", "2", replicas=3), "extra": {"x": [1]}}]
    body = json.dumps(
        {
            "kind": "WidgetList",
            "apiVersion": "example.com/v1",
            "metadata": {"resourceVersion": "7", "continue": "c", "remainingItemCount": 4},
            "items": items,
        }
    ).encode()
    page = JsonDecoder(Widget).decode_list(body)
    assert page.items == [Widget.model_validate(i) for i in items]
    assert [type(i) for i in page.items] == [Widget, Widget]
    assert page.items[1].model_extra == {"extra": {"x": [1]}}
    assert (page.resource_version, page.continue_, page.remaining_item_count) == ("7", "c", 4)
    empty = JsonDecoder(Widget).decode_list(
        b'{"metadata": {"resourceVersion": "8"}, "items": null}'
    )
    assert (empty.items, empty.resource_version, empty.continue_) == ([], "8", None)


def test_k7_eager_page_with_an_invalid_item_fails_naming_it_and_the_field() -> None:
    body = widget_list("9", widget("good", "1"), widget("bad", "2", replicas="many")).body
    with pytest.raises(ValueError, match=r"(?s)list page of Widget: item 1: .*spec\.replicas"):
        JsonDecoder(Widget).decode_list(body)
    page, bad = JsonDecoder(Widget).decode_list_skipping(body)
    # (Widget's metadata lacks uid and labels, so the bad item cannot be kept lazily here.)
    assert [i.metadata.name for i in page.items if i.metadata] == ["good"]
    assert [(e.key, e.path) for e in bad] == [("default/bad", "spec.replicas")]


def test_k7_eager_page_that_is_not_a_list_is_refused() -> None:
    for body in (b"not json", b'{"metadata": {"remainingItemCount": "x"}}', b'{"items": {}}'):
        with pytest.raises(ValueError, match="cannot decode a list page of Widget"):
            JsonDecoder(Widget).decode_list(body)


def test_watch_stream_decodes_lines_split_across_chunks(server: CannedServer) -> None:
    body = (
        line("ADDED", widget("a", "11"))
        + line("MODIFIED", widget("a", "12", replicas=2))
        + line(
            "BOOKMARK",
            {
                "kind": "Widget",
                "apiVersion": "example.com/v1",
                "metadata": {
                    "resourceVersion": "13",
                    "annotations": {"k8s.io/initial-events-end": "true"},
                },
            },
        )
        + line("DELETED", widget("a", "14", replicas=2))
        + line("ERROR", json.loads(status_body(410, "Expired", "too old resource version: 1 (14)")))
    )
    # cut the stream at awkward places: mid-line and mid-UTF-8-free JSON
    chunks = [body[i : i + 37] for i in range(0, len(body), 37)]
    server.routes["/apis/example.com/v1/widgets"] = lambda r: Stream(chunks)
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget)
    w = lw.watch(
        ListOptions(resource_version="10", allow_watch_bookmarks=True, timeout_seconds=300)
    )
    events = list(w)
    assert [e.type for e in events] == ["ADDED", "MODIFIED", "BOOKMARK", "DELETED", "ERROR"]
    assert isinstance(events[1].object, Widget) and events[1].object.spec.replicas == 2
    bm = events[2].object
    assert type(bm) is Widget  # the reflector's type check (D12) passes for bookmarks
    assert object_resource_version(bm) == "13"
    assert object_annotations(bm)["k8s.io/initial-events-end"] == "true"
    err = events[4].object
    assert isinstance(err, Status) and err.code == 410 and err.reason == "Expired"
    q = server.requests[0].query
    assert q == {
        "resourceVersion": "10",
        "timeoutSeconds": "300",
        "watch": "true",
        "allowWatchBookmarks": "true",
    }


def test_watch_bad_object_is_logged_counted_reported_and_skipped(
    server: CannedServer, caplog: pytest.LogCaptureFixture
) -> None:
    body = (
        line("ADDED", widget("a", "11"))
        + line("ADDED", widget("broken", "12", replicas={"no": 1}))
        + line("MODIFIED", widget("broken", "13", replicas=[1]))
        + line("ADDED", widget("c", "14"))
    )
    server.routes["/apis/example.com/v1/widgets"] = lambda r: Stream([body])
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget)
    reported: list[BaseException] = []
    lw.set_decode_error_handler(reported.append)
    with caplog.at_level(logging.ERROR, logger="kubeinformers.transport"):
        events = list(lw.watch(ListOptions()))
    assert [(e.type, object_resource_version(e.object)) for e in events] == [
        ("ADDED", "11"),
        ("ADDED", "14"),
    ]
    assert lw.decode_errors == 2
    assert [type(e) for e in reported] == [ObjectDecodeError, ObjectDecodeError]
    first = reported[0]
    assert isinstance(first, ObjectDecodeError)
    assert first.key == "default/broken" and first.path == "spec.replicas"
    assert first.event_type == "ADDED"
    assert "default/broken" in caplog.text and "spec.replicas" in caplog.text


def test_watch_dict_model_and_error_event(server: CannedServer) -> None:
    body = line("ADDED", widget("a", "1")) + line(
        "ERROR", json.loads(status_body(500, "InternalError", "boom"))
    )
    server.routes["/apis/example.com/v1/widgets"] = lambda r: Stream([body])
    events = list(ApiListerWatcher(api_client(server.url), WIDGETS, dict).watch(ListOptions()))
    assert events[0].object == widget("a", "1")
    assert isinstance(events[1].object, Status) and events[1].object.code == 500


def test_watch_stop_from_another_thread_ends_iteration_promptly(server: CannedServer) -> None:
    hold = threading.Event()
    server.routes["/apis/example.com/v1/widgets"] = lambda r: Stream(
        [line("ADDED", widget("a", "1")), hold, line("ADDED", widget("late", "2"))]
    )
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget)
    w = lw.watch(ListOptions(timeout_seconds=300))
    got: list[Any] = []
    first = threading.Event()

    def consume() -> None:
        for e in w:
            got.append(e)
            first.set()

    t = threading.Thread(target=consume)
    t.start()
    assert first.wait(5)
    t0 = time.monotonic()
    w.stop()
    t.join(5)
    hold.set()
    assert not t.is_alive() and time.monotonic() - t0 < 1.0
    assert len(got) == 1


# ------------------------------------------------------------------------------ failures


@pytest.mark.parametrize("code,reason", [(401, "Unauthorized"), (403, "Forbidden")])
def test_401_403_name_server_and_resource_never_the_token(
    server: CannedServer, caplog: pytest.LogCaptureFixture, code: int, reason: str
) -> None:
    msg = 'pods is forbidden: User "system:anonymous" cannot list resource "pods"'
    server.routes["/api/v1/namespaces/x/pods"] = lambda r: Reply(
        code, status_body(code, reason, msg)
    )
    lw = ApiListerWatcher(api_client(server.url), PODS, Widget, namespace="x")
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(ApiStatusError) as info:
            lw.list(ListOptions())
    err = info.value
    assert err.code == code and err.reason == reason
    # Worded as the typed client's other calls (M4): the verb, the resource and the server.
    assert err.message.startswith(f'cannot list pods in namespace "x" at {server.url}: ')
    assert msg in err.message
    assert ("RBAC" if code == 403 else "credentials") in err.message
    assert TOKEN not in str(err) and TOKEN not in repr(err) and TOKEN not in caplog.text


def test_watch_403_is_worded_for_watch(server: CannedServer) -> None:
    server.routes["/api/v1/pods"] = lambda r: Reply(403, status_body(403, "Forbidden", "no"))
    with pytest.raises(ApiStatusError, match=r"^cannot watch pods in all namespaces at"):
        ApiListerWatcher(api_client(server.url), PODS, dict).watch(ListOptions())


def test_410_and_429_with_retry_after(server: CannedServer) -> None:
    server.routes["/api/v1/pods"] = [
        lambda r: Reply(410, status_body(410, "Expired", "too old resource version: 1 (5)")),
        lambda r: Reply(429, status_body(429, "TooManyRequests", "slow"), {"Retry-After": "3"}),
        lambda r: Reply(502, b"<html>bad gateway</html>"),
    ]
    lw = ApiListerWatcher(api_client(server.url), PODS, dict)
    with pytest.raises(ApiStatusError) as e1:
        lw.list(ListOptions(resource_version="1"))
    assert (e1.value.code, e1.value.reason) == (410, "Expired")
    with pytest.raises(ApiStatusError) as e2:
        lw.list(ListOptions())
    assert (e2.value.code, e2.value.retry_after) == (429, 3.0)
    with pytest.raises(ApiStatusError) as e3:
        lw.list(ListOptions())
    assert e3.value.code == 502 and "bad gateway" in e3.value.message


def test_connection_refused_is_a_connection_refused_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api = api_client(f"http://127.0.0.1:{port}")
    lw = ApiListerWatcher(api, PODS, dict)
    with pytest.raises(ConnectionRefusedError) as info:
        lw.list(ListOptions())
    assert f"127.0.0.1:{port}" in str(info.value)
    assert TOKEN not in str(info.value)


# ------------------------------------------------------------------------------ with a reflector


class ListStore:
    def __init__(self) -> None:
        self.replaced = threading.Event()
        self.items: list[Any] = []
        self.rv = ""
        self.adds: list[Any] = []
        self.added = threading.Event()

    def add(self, o: Any) -> None:
        self.adds.append(o)
        self.added.set()

    update = delete = add

    def replace(self, objs: list[Any], rv: str) -> None:
        self.items, self.rv = list(objs), rv
        self.replaced.set()

    def resync(self) -> None:
        pass


def test_d7_reflector_pages_through_the_transport_then_watches(server: CannedServer) -> None:
    path = "/apis/example.com/v1/widgets"
    hold = threading.Event()
    server.routes[path] = [
        lambda r: widget_list("100", widget("a", "1"), widget("b", "2"), cont="c1"),
        lambda r: widget_list("100", widget("c", "3")),
        lambda r: Stream([line("ADDED", widget("d", "101")), hold]),
    ]
    store = ListStore()
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget)
    r: Reflector[Widget] = Reflector(lw, Widget, store, use_watch_list=False, page_size=2)
    stop = threading.Event()
    t = threading.Thread(target=r.run, args=(stop,))
    t.start()
    try:
        assert store.added.wait(5)
    finally:
        stop.set()
        t.join(5)
        hold.set()
    assert not t.is_alive()
    assert [w.metadata.name for w in store.items if w.metadata] == ["a", "b", "c"]
    assert store.rv == "100"
    q = [req.query for req in server.requests]
    assert q[0] == {"resourceVersion": "0", "limit": "2"}
    assert q[1] == {"limit": "2", "continue": "c1"}
    assert q[2]["resourceVersion"] == "100" and q[2]["watch"] == "true"
    assert q[2]["allowWatchBookmarks"] == "true"
    assert r.last_sync_resource_version() == "101"


def test_d19_reflector_watch_list_over_the_transport(server: CannedServer) -> None:
    path = "/apis/example.com/v1/widgets"
    hold = threading.Event()
    end = {
        "kind": "Widget",
        "apiVersion": "example.com/v1",
        "metadata": {"resourceVersion": "50", "annotations": {"k8s.io/initial-events-end": "true"}},
    }
    server.routes[path] = [
        lambda r: Stream(
            [
                line("ADDED", widget("a", "7")),
                line("ADDED", widget("b", "9")),
                line("BOOKMARK", end),
                hold,
            ]
        ),
    ]
    store = ListStore()
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget)
    r: Reflector[Widget] = Reflector(lw, Widget, store, use_watch_list=True)
    stop = threading.Event()
    t = threading.Thread(target=r.run, args=(stop,))
    t.start()
    try:
        assert store.replaced.wait(5)
    finally:
        stop.set()
        t.join(5)
        hold.set()
    assert not t.is_alive()
    assert sorted(w.metadata.name for w in store.items if w.metadata) == ["a", "b"]
    assert store.rv == "50"
    q = server.requests[0].query
    assert q["sendInitialEvents"] == "true" and q["resourceVersionMatch"] == "NotOlderThan"
    assert "resourceVersion" not in q  # RV "" is omitted, as Go's omitempty does
    assert len(server.requests) == 1  # no LIST


def test_gc_paused_nests_and_keeps_an_application_disabled_collector() -> None:
    import gc

    from kubeinformers.runtime.codec.gc_pause import end_read_burst, gc_paused

    end_read_burst()  # an earlier test's first reads may still hold the collector (K14)
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def _collections() -> list[int]:
    import gc

    return [generation["collections"] for generation in gc.get_stats()]


def test_k16_a_big_pause_freezes_its_survivors_untraversed() -> None:
    """The survivors of a big pause (eager pods: ~126 tracked objects each) go to the
    collector's permanent generation at once, with no collection traversing them, and the
    collector is back on; a full collection never walks them again (K16)."""
    import gc

    from kubeinformers.runtime.codec import gc_pause as wire

    if not wire._FREEZE_PROMOTES:
        pytest.skip("free-threaded build: a big pause ends with one full collection instead")
    kept: list[list[int]] = []
    before = _collections()
    frozen_before = gc.get_freeze_count()
    try:
        with wire.gc_paused():
            kept.extend([i] for i in range(wire._COLLECT_AFTER_YOUNG + 1000))
        assert _collections() == before  # no collection of any generation ran
        assert gc.isenabled()
        assert gc.get_count()[0] < 1000  # the young generation is empty again...
        assert gc.get_freeze_count() >= frozen_before + len(kept)  # ...its objects frozen
        tracked = {id(o) for o in gc.get_objects()}  # generations 0-2, not the frozen ones
        assert not any(id(o) in tracked for o in kept[:: len(kept) // 10])
        # A small pause leaves the young objects to the automatic collections.
        with wire.gc_paused():
            kept.extend([i] for i in range(1000))
        assert gc.get_count()[0] >= 1000 or _collections() != before
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_k16_without_freezing_a_big_pause_moves_its_survivors_to_the_old_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """freeze_burst_survivors(False): the survivors land in the oldest generation untraversed
    (gc.freeze + gc.unfreeze), where every full collection walks them; nothing stays frozen."""
    import gc

    from kubeinformers.runtime.codec import gc_pause as wire

    if not wire._FREEZE_PROMOTES:
        pytest.skip("free-threaded build: a big pause ends with one full collection instead")
    monkeypatch.setattr(wire, "_keep_frozen", True)  # restored after the test
    wire.freeze_burst_survivors(False)
    gc.unfreeze()
    kept: list[list[int]] = []
    before = _collections()
    with wire.gc_paused():
        kept.extend([i] for i in range(wire._COLLECT_AFTER_YOUNG + 1000))
    assert _collections() == before and gc.isenabled()
    assert gc.get_freeze_count() == 0
    old = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(o) in old for o in kept[:: len(kept) // 10])


def test_k16_without_freezing_objects_the_application_froze_stay_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An application that froze objects itself (gc.freeze before forking workers) and turned
    our freezing off keeps them frozen: a big pause then ends with one full collection."""
    import gc

    from kubeinformers.runtime.codec import gc_pause as wire

    monkeypatch.setattr(wire, "_gc_survivors", 0)  # earlier tests' pauses do not count
    monkeypatch.setattr(wire, "_keep_frozen", True)
    wire.freeze_burst_survivors(False)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        kept: list[list[int]] = []
        full_before = _collections()[2]
        with wire.gc_paused():
            kept.extend([i] for i in range(wire._COLLECT_AFTER_YOUNG + 1000))
        assert _collections()[2] == full_before + 1
        # Still frozen: an unfreeze would leave none. (A few may die meanwhile, freed by
        # reference counting, as another test's threads end.)
        assert frozen - 100 <= gc.get_freeze_count() <= frozen
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_undecodable_line_ends_the_watch_so_it_resumes_from_the_last_rv(
    server: CannedServer, caplog: pytest.LogCaptureFixture
) -> None:
    body = (
        line("ADDED", widget("a", "1"))
        + b'{"type":"MODIFIED","object":{"metad\n'
        + line("ADDED", widget("b", "2"))
    )
    server.routes["/apis/example.com/v1/widgets"] = lambda r: Stream([body])
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget)
    with caplog.at_level(logging.WARNING, logger="kubeinformers.transport"):
        events = list(lw.watch(ListOptions()))
    assert [object_resource_version(e.object) for e in events] == ["1"]
    assert "undecodable line in the watch of widgets.example.com in all namespaces" in caplog.text


def test_truncated_stream_ends_the_watch_without_a_partial_event(server: CannedServer) -> None:
    full = line("ADDED", widget("a", "1"))
    half = line("ADDED", widget("b", "2"))[:20]
    server.routes["/apis/example.com/v1/widgets"] = lambda r: Stream([full + half])
    events = list(ApiListerWatcher(api_client(server.url), WIDGETS, Widget).watch(ListOptions()))
    assert [object_resource_version(e.object) for e in events] == ["1"]


def test_fifty_informers_on_one_client_hold_watches_and_list_without_pool_churn(
    server: CannedServer, caplog: pytest.LogCaptureFixture
) -> None:
    """50 open watches plus a list each: no request waits and no connection is discarded."""
    hold = threading.Event()
    server.routes["/apis/example.com/v1/widgets"] = lambda r: (
        Stream([line("ADDED", widget("a", "1")), hold])
        if r.query.get("watch")
        else widget_list("5", widget("a", "1"))
    )
    api = api_client(server.url)
    lws = [ApiListerWatcher(api, WIDGETS, Widget) for _ in range(50)]
    started = threading.Barrier(51, timeout=10)
    done: list[int] = []
    lock = threading.Lock()

    def informer(lw: ApiListerWatcher[Widget]) -> None:
        w = lw.watch(ListOptions(timeout_seconds=300))
        it = iter(w)
        next(it)
        started.wait()
        page = lw.list(ListOptions())
        with lock:
            done.append(len(page.items))
        started.wait()
        w.stop()
        list(it)

    threads = [threading.Thread(target=informer, args=(lw,)) for lw in lws]
    with caplog.at_level(logging.WARNING, logger="urllib3"):
        for t in threads:
            t.start()
        started.wait()  # all 50 watches are open
        started.wait()  # all 50 lists answered while the watches stayed open
        hold.set()
        for t in threads:
            t.join(10)
    assert done == [1] * 50
    assert "Connection pool is full" not in caplog.text


def test_watch_stopped_before_reading_releases_its_connection(server: CannedServer) -> None:
    hold = threading.Event()
    server.routes["/apis/example.com/v1/widgets"] = lambda r: Stream(
        [line("ADDED", widget("a", "1")), hold]
    )
    w = ApiListerWatcher(api_client(server.url), WIDGETS, Widget).watch(ListOptions())
    w.stop()
    assert w._resp.closed  # released at once: no reader will ever come to do it
    hold.set()
    assert list(w) == []


def test_gc_pause_is_bounded_by_max_seconds() -> None:
    import gc

    from kubeinformers.runtime.codec.gc_pause import gc_paused

    tick = threading.Event()
    with gc_paused(max_seconds=0.05):
        assert not gc.isenabled()
        deadline = time.monotonic() + 5
        while not gc.isenabled() and time.monotonic() < deadline:
            tick.wait(0.01)
        assert gc.isenabled()  # the time limit gave the collector back
        with gc_paused():
            assert not gc.isenabled()  # a new hold still works
        assert gc.isenabled()
    assert gc.isenabled()


# ------------------------------------------------------------------------------ protobuf (K1-K4)

# A built-in kind described by the test table of tests/support/protobuf.py.
CONFIGMAPS = APIResource(
    "",
    "v1",
    "configmaps",
    "ConfigMap",
    namespaced=True,
    protobuf=ProtobufKind("k8s.io.api.core.v1.ConfigMap", "tests.support.protobuf"),
)
PROTOBUF_LIST = "application/vnd.kubernetes.protobuf"
PROTOBUF_WATCH = "application/vnd.kubernetes.protobuf;stream=watch"


def pb_configmap(name: str, rv: str, data: dict[str, str] | None = None) -> bytes:
    body = pb.ld(1, pb.object_meta(name=name, namespace="default", resource_version=rv))
    for key, value in (data or {}).items():
        body += pb.entry(2, key, pb.ld(2, value))
    return body


def framed(*events: bytes) -> bytes:
    return b"".join(len(e).to_bytes(4, "big") + e for e in events)


def test_k1_a_built_in_kind_asks_for_protobuf_and_reads_a_protobuf_list(
    server: CannedServer,
) -> None:
    body = pb.list_body(
        "v1",
        "ConfigMapList",
        [pb_configmap("a", "5", {"k": "v"}), pb_configmap("b", "6")],
        resource_version="7",
    )
    server.routes["/api/v1/configmaps"] = lambda r: Reply(
        body=body, headers={"Content-Type": PROTOBUF_LIST}
    )
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap)
    page = lw.list(ListOptions())
    assert server.requests[0].headers["accept"] == (
        "application/vnd.kubernetes.protobuf, application/json"
    )
    assert page.resource_version == "7"
    a, b = page.items
    assert is_lazy(a) and a.metadata is not None and a.metadata.name == "a"
    assert a.data == {"k": "v"} and not is_lazy(a)
    assert a == ConfigMap.model_validate(
        {
            "metadata": {"name": "a", "namespace": "default", "resourceVersion": "5"},
            "data": {"k": "v"},
        }
    )
    assert b.metadata is not None and b.metadata.resource_version == "6"


def test_k1_a_json_answer_to_the_protobuf_accept_is_read_as_json(server: CannedServer) -> None:
    doc = {
        "kind": "ConfigMapList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "3"},
        "items": [{"metadata": {"name": "j", "namespace": "default"}, "data": {"x": "y"}}],
    }
    server.routes["/api/v1/configmaps"] = lambda r: Reply(body=json.dumps(doc).encode())
    page = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap).list(ListOptions())
    assert [cm.data for cm in page.items] == [{"x": "y"}]


@pytest.mark.parametrize(
    ("resource", "options"),
    [
        (CONFIGMAPS, {"wire_format": "json"}),
        (CONFIGMAPS, {"decode": "eager"}),
        (APIResource("", "v1", "configmaps", "ConfigMap", namespaced=True), {}),
    ],
    ids=["wire_format=json", "eager", "no protobuf message"],
)
def test_k1_json_is_asked_for_when_protobuf_is_off_eager_or_unknown(
    server: CannedServer, resource: APIResource, options: dict[str, Any]
) -> None:
    server.routes["/api/v1/configmaps"] = lambda r: Reply(
        body=b'{"kind":"ConfigMapList","metadata":{"resourceVersion":"1"},"items":[]}'
    )
    lw = ApiListerWatcher(api_client(server.url), resource, ConfigMap, **options)
    lw.list(ListOptions())
    assert server.requests[0].headers["accept"] == "application/json"
    assert lw.protobuf is None


def test_k2_a_protobuf_watch_is_read_frame_by_frame_across_chunks(server: CannedServer) -> None:
    bookmark = pb.ld(
        1,
        pb.object_meta(resource_version="9", annotations={"k8s.io/initial-events-end": "true"}),
    )
    status = pb.unknown(
        "v1",
        "Status",
        pb.ld(1, b"")
        + pb.ld(2, "Failure")
        + pb.ld(3, "too old")
        + pb.ld(4, "Expired")
        + pb.vint(6, 410),
    )
    stream = framed(
        pb.watch_frame("ADDED", pb.unknown("v1", "ConfigMap", pb_configmap("a", "8", {"k": "1"}))),
        pb.watch_frame("BOOKMARK", pb.unknown("v1", "ConfigMap", bookmark)),
        pb.watch_frame("DELETED", pb.unknown("v1", "ConfigMap", pb_configmap("a", "10"))),
        pb.watch_frame("ERROR", status),
    )
    chunks = [stream[i : i + 13] for i in range(0, len(stream), 13)]
    server.routes["/api/v1/configmaps"] = lambda r: Stream(chunks, content_type=PROTOBUF_WATCH)
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap)
    events = list(lw.watch(ListOptions(resource_version="7", allow_watch_bookmarks=True)))
    assert server.requests[0].headers["accept"].startswith("application/vnd.kubernetes.protobuf")
    assert [e.type for e in events] == ["ADDED", "BOOKMARK", "DELETED", "ERROR"]
    assert events[0].object.data == {"k": "1"}
    assert object_resource_version(events[1].object) == "9"
    assert object_annotations(events[1].object)["k8s.io/initial-events-end"] == "true"
    err = events[3].object
    assert isinstance(err, Status) and (err.code, err.reason) == (410, "Expired")


def test_k2_a_protobuf_watch_cut_inside_a_frame_ends_without_a_partial_event(
    server: CannedServer, caplog: pytest.LogCaptureFixture
) -> None:
    whole = framed(pb.watch_frame("ADDED", pb.unknown("v1", "ConfigMap", pb_configmap("a", "8"))))
    cut = framed(pb.watch_frame("ADDED", pb.unknown("v1", "ConfigMap", pb_configmap("b", "9"))))
    server.routes["/api/v1/configmaps"] = lambda r: Stream(
        [whole + cut[:-5]], content_type=PROTOBUF_WATCH
    )
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap)
    with caplog.at_level(logging.INFO, logger="kubeinformers.transport"):
        events = list(lw.watch(ListOptions()))
    assert [object_resource_version(e.object) for e in events] == ["8"]
    assert "ended inside a frame" in caplog.text


def test_k4_a_protobuf_status_error_is_worded_for_the_user(server: CannedServer) -> None:
    status = pb.unknown(
        "v1",
        "Status",
        pb.ld(1, b"")
        + pb.ld(2, "Failure")
        + pb.ld(3, 'configmaps is forbidden: User "x" cannot list')
        + pb.ld(4, "Forbidden")
        + pb.vint(6, 403),
    )
    server.routes["/api/v1/configmaps"] = lambda r: Reply(
        403, status, headers={"Content-Type": PROTOBUF_LIST}
    )
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap)
    with pytest.raises(ApiStatusError) as err:
        lw.list(ListOptions())
    assert err.value.code == 403 and err.value.reason == "Forbidden"
    assert err.value.message.startswith("cannot list configmaps in all namespaces")
    assert 'User "x" cannot list' in err.value.message
    assert TOKEN not in err.value.message


# ------------------------------------------------------------------------------ protobuf (K8)


def pb_configmap_list(n: int, rv: str = "90") -> tuple[bytes, list[bytes]]:
    items = [pb_configmap(f"cm-{i}", str(i), {"k": "v" * i}) for i in range(n)]
    return pb.list_body("v1", "ConfigMapList", items, resource_version=rv), items


def test_k8_a_protobuf_list_is_decoded_while_it_arrives(
    server: CannedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    body, items = pb_configmap_list(30)
    half = body.index(items[15]) + len(items[15])
    decoded: list[bytes] = []
    first_decoded = threading.Event()
    decoded_before_the_rest: list[int] = []
    read_identity = protobuf_decoder.read_identity

    def spy(item: bytes) -> Any:
        decoded.append(item)
        first_decoded.set()
        return read_identity(item)

    monkeypatch.setattr(protobuf_decoder, "read_identity", spy)

    def chunks() -> Iterator[bytes | threading.Event]:
        yield body[:half]
        yield first_decoded  # the server waits (up to 10 s) until the client decoded an item
        decoded_before_the_rest.append(len(decoded))
        yield body[half:]

    server.routes["/api/v1/configmaps"] = lambda r: Stream(chunks(), content_type=PROTOBUF_LIST)
    page = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap).list(ListOptions())
    assert decoded_before_the_rest and decoded_before_the_rest[0] >= 1
    assert [o.metadata.name for o in page.items] == [f"cm-{i}" for i in range(30)]  # type: ignore[union-attr]
    assert page.resource_version == "90"


def test_k8_a_protobuf_list_cut_off_mid_body_fails_and_the_next_list_works(
    server: CannedServer,
) -> None:
    body, _ = pb_configmap_list(30)
    server.routes["/api/v1/configmaps"] = [
        lambda r: Stream([body[: len(body) // 2]], content_type=PROTOBUF_LIST, cut=True),
        lambda r: Stream([body], content_type=PROTOBUF_LIST),
    ]
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap)
    with pytest.raises(ConnectionError, match="cannot list configmaps in all namespaces"):
        lw.list(ListOptions())
    assert len(lw.list(ListOptions()).items) == 30


def test_k8_a_protobuf_list_body_that_ends_early_is_an_error_naming_the_kind(
    server: CannedServer,
) -> None:
    body, _ = pb_configmap_list(30)
    server.routes["/api/v1/configmaps"] = lambda r: Stream(
        pieces_of(body[:-200], 1000), content_type=PROTOBUF_LIST
    )
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap)
    with pytest.raises(
        ValueError,
        match=r"protobuf list of configmaps in all namespaces: malformed list \(after 2\d items\)",
    ):
        lw.list(ListOptions())


def json_configmap_list(n: int, rv: str = "91") -> bytes:
    items = [
        {"metadata": {"name": f"cm-{i}", "namespace": "default", "resourceVersion": str(i)}}
        for i in range(n)
    ]
    head = {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"resourceVersion": rv}}
    return json.dumps(head | {"items": items}, separators=(",", ":")).encode()


@pytest.mark.parametrize("decode", ["lazy", "eager"])
def test_k8_a_json_list_is_decoded_while_it_arrives(
    server: CannedServer, monkeypatch: pytest.MonkeyPatch, decode: DecodeMode
) -> None:
    monkeypatch.setattr(json_list, "BATCH_BYTES", 1024)
    body = json_configmap_list(60)
    half = len(body) // 2
    handed_out = threading.Event()
    handed_out_before_the_rest: list[bool] = []
    items = json_list.JsonListStream.items

    def spy(self: json_list.JsonListStream) -> Iterator[bytes]:
        for item in items(self):
            handed_out.set()
            yield item

    monkeypatch.setattr(json_list.JsonListStream, "items", spy)

    def chunks() -> Iterator[bytes | threading.Event]:
        yield body[:half]
        yield handed_out  # the server waits (up to 10 s) until the client has an item
        handed_out_before_the_rest.append(handed_out.is_set())
        yield body[half:]

    server.routes["/api/v1/configmaps"] = lambda r: Stream(chunks())
    lw = ApiListerWatcher(
        api_client(server.url), CONFIGMAPS, ConfigMap, wire_format="json", decode=decode
    )
    page = lw.list(ListOptions())
    assert handed_out_before_the_rest == [True]
    assert [o.metadata.name for o in page.items] == [f"cm-{i}" for i in range(60)]  # type: ignore[union-attr]
    assert page.resource_version == "91"


def test_k8_a_json_list_cut_off_mid_body_fails_and_the_next_list_works(
    server: CannedServer,
) -> None:
    body = json_configmap_list(60)
    server.routes["/api/v1/configmaps"] = [
        lambda r: Stream([body[: len(body) // 2]], cut=True),
        lambda r: Stream(pieces_of(body, 500)),
    ]
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap, wire_format="json")
    with pytest.raises(ConnectionError, match="cannot list configmaps in all namespaces"):
        lw.list(ListOptions())
    assert len(lw.list(ListOptions()).items) == 60


def test_k8_a_json_list_body_that_ends_early_is_an_error_naming_the_resource(
    server: CannedServer,
) -> None:
    body = json_configmap_list(60)
    server.routes["/api/v1/configmaps"] = lambda r: Stream(pieces_of(body[:-100], 700))
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap, decode="eager")
    with pytest.raises(
        ValueError,
        match=r"list page of configmaps in all namespaces: the list body ended early or is not "
        r"valid JSON \(after \d+ items\)",
    ):
        lw.list(ListOptions())


def test_k7_k8_bad_items_of_a_streamed_eager_list_are_reported_once_each(
    server: CannedServer,
) -> None:
    doc = json.loads(json_configmap_list(20))
    doc["items"][3]["data"] = "not a map"
    doc["items"][11]["data"] = ["nor", "this"]
    server.routes["/api/v1/configmaps"] = lambda r: Stream(pieces_of(json.dumps(doc).encode(), 300))
    reported: list[BaseException] = []
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap, decode="eager")
    lw.set_decode_error_handler(reported.append)
    page = lw.list(ListOptions())
    assert [getattr(e, "key", None) for e in reported] == ["default/cm-3", "default/cm-11"]
    assert len(page.items) == 20 and not any(is_lazy(i) for i in page.items)
    # K11: cached at the version listed, only the bad field raising when read.
    assert page.items[3].metadata.name == "cm-3"  # type: ignore[union-attr]
    with pytest.raises(InvalidFieldError, match=r"cm-3.*field data"):
        _ = page.items[3].data  # type: ignore[union-attr]


def pieces_of(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_a_watch_read_to_its_last_chunk_leaves_its_connection_to_the_next_request(
    server: CannedServer,
) -> None:
    frames = framed(
        *(
            pb.watch_frame("ADDED", pb.unknown("v1", "ConfigMap", pb_configmap(f"c{i}", str(i))))
            for i in range(50)
        )
    )
    body, _ = pb_configmap_list(3)
    server.routes["/api/v1/configmaps"] = lambda r: (
        Stream(pieces_of(frames, 100), content_type=PROTOBUF_WATCH, keep_alive=True)
        if r.query.get("watch")
        else Reply(body=body, headers={"Content-Type": PROTOBUF_LIST})
    )
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap)
    events = list(lw.watch(ListOptions()))
    assert [e.object.metadata.name for e in events] == [f"c{i}" for i in range(50)]  # type: ignore[union-attr]
    assert len(lw.list(ListOptions()).items) == 3
    watch, listed = server.requests
    assert listed.client_port == watch.client_port  # the same connection, reused


def test_k9_k11_a_kept_lazy_object_does_not_keep_its_stopped_informers_lister_watcher(
    server: CannedServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A lazy object's class holds its decoder's on_invalid hook (K11); the hook holds the
    ApiListerWatcher only weakly, so an object the application keeps does not keep a stopped
    informer's lister-watcher (its reflector, store and last error) alive (K9), and a bad
    field found by a later read is still logged."""
    import weakref

    from kubeinformers.generated.core.v1 import Pod

    lw = ApiListerWatcher(api_client(server.url), PODS, Pod, wire_format="json")
    bad = {
        "metadata": {"name": "p", "namespace": "default", "resourceVersion": "1"},
        "spec": {"containers": "not a list"},
    }
    body = json.dumps({"kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": [bad]})
    (kept,) = lw.decoder.decode_list(body.encode()).items
    assert is_lazy(kept)
    gone = weakref.ref(lw)
    del lw
    assert collected(lambda: gone() is None)
    with caplog.at_level(logging.ERROR, logger="kubeinformers.transport"):
        with pytest.raises(InvalidFieldError, match=r"spec\.containers"):
            _ = kept.spec.containers
    assert "default/p" in caplog.text and "after its informer stopped" in caplog.text


def test_m4_the_clients_list_is_retried_after_retry_after_as_its_other_calls(
    server: CannedServer,
) -> None:
    from kubeinformers.runtime.client.typed import AsyncClient, Client

    throttled = Reply(429, status_body(429, "TooManyRequests", "slow"), {"Retry-After": "0"})
    page = Reply(
        200,
        json.dumps(
            {
                "kind": "ConfigMapList",
                "apiVersion": "v1",
                "metadata": {"resourceVersion": "7"},
                "items": [{"metadata": {"name": "c", "namespace": "n"}}],
            }
        ).encode(),
    )
    path = "/api/v1/namespaces/n/configmaps"
    server.routes[path] = [lambda r: throttled, lambda r: throttled, lambda r: page]
    listed = Client(api_client(server.url)).list(ConfigMap, namespace="n")
    assert [object_name(c) for c in listed.items] == ["c"]
    assert listed.resource_version == "7" and len(server.requests) == 3

    server.routes[path] = [lambda r: throttled] * 11
    with pytest.raises(ApiStatusError) as err:
        asyncio.run(AsyncClient(api_client(server.url)).list(ConfigMap, namespace="n"))
    assert err.value.code == 429 and len(server.requests) == 3 + 11  # 10 retries, then raised

    server.routes[path] = [lambda r: Reply(403, status_body(403, "Forbidden", "no"))] * 2
    with pytest.raises(ApiStatusError) as err:
        Client(api_client(server.url)).list(ConfigMap, namespace="n")
    assert err.value.code == 403 and len(server.requests) == 3 + 11 + 1  # not retried


def test_m4_a_bad_list_request_names_the_request_and_what_to_check(server: CannedServer) -> None:
    from kubeinformers.runtime.client.typed import Client

    server.routes["/api/v1/namespaces/n/configmaps"] = [
        lambda r: Reply(400, status_body(400, "BadRequest", "found ',', expected: identifier"))
    ]
    with pytest.raises(ApiStatusError) as err:
        Client(api_client(server.url)).list(ConfigMap, namespace="n", label_selector="a,")
    text = str(err.value)
    assert err.value.code == 400 and "found ',', expected: identifier" in text
    assert 'cannot list configmaps in namespace "n" at http://127.0.0.1:' in text
    assert "check the label and field selectors" in text
    assert err.value.status.message == "found ',', expected: identifier"


# ------------------------------------------------------------------------------ D24: stop, silence


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    s = SilentServer()
    yield s
    s.close()


def _quiet_api_client(url: str) -> Any:
    api = api_client(url)
    api.configuration.verify_ssl = False  # the TLS case: the server never says hello anyway
    return api


@pytest.mark.parametrize(
    "scheme,watch_list",
    [("http", True), ("http", False), ("https", True)],
    ids=["watch-list", "LIST", "TLS handshake"],
)
def test_d24_a_stop_ends_a_request_the_server_never_answers_at_once_and_quietly(
    silent: SilentServer, caplog: pytest.LogCaptureFixture, scheme: str, watch_list: bool
) -> None:
    url = silent.url.replace("http", scheme, 1)
    lw = ApiListerWatcher(_quiet_api_client(url), WIDGETS, Widget)
    r: Reflector[Widget] = Reflector(lw, Widget, ListStore(), use_watch_list=watch_list)
    stop = threading.Event()
    t = threading.Thread(target=r.run, args=(stop,))
    caplog.set_level(logging.DEBUG, logger="kubeinformers")
    t.start()
    assert silent.received.wait(10), "the request never reached the server"
    t0 = time.monotonic()
    stop.set()
    t.join(10)
    assert not t.is_alive(), "the reflector still waits for the server after its stop"
    assert time.monotonic() - t0 < 5.0
    loud = [rec for rec in caplog.records if rec.levelno >= logging.WARNING]
    assert loud == [], [rec.getMessage() for rec in loud]
    assert silent.accepted == 1  # the cancelled request was not sent again


def test_d24_a_stop_ends_a_list_whose_answer_stops_midway(server: CannedServer) -> None:
    hold = threading.Event()
    first = json.dumps({"kind": "WidgetList", "apiVersion": "example.com/v1"}).encode()[:-1]
    server.routes["/apis/example.com/v1/widgets"] = lambda r: Stream(
        [first + b', "metadata": {"resourceVersion": "5"}, "items": [', hold]
    )
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget)
    failed: list[BaseException] = []

    def list_it() -> None:
        try:
            lw.list(ListOptions())
        except BaseException as e:
            failed.append(e)

    t = threading.Thread(target=list_it)
    t.start()
    try:
        assert eventually(lambda: len(server.requests) == 1, timeout=10)
        time.sleep(0.2)  # the answer's first chunk is read; the list waits for the rest
        assert t.is_alive()
        lw.cancel_requests()
        t.join(5)
    finally:
        hold.set()
    assert not t.is_alive()
    assert len(failed) == 1 and isinstance(failed[0], RequestCancelled), failed


def test_d24_a_stopped_source_refuses_new_requests_without_connecting(
    silent: SilentServer,
) -> None:
    lw = ApiListerWatcher(api_client(silent.url), WIDGETS, Widget)
    lw.cancel_requests()
    t0 = time.monotonic()
    with pytest.raises(RequestCancelled, match=r"widgets\.example\.com"):
        lw.list(ListOptions())
    with pytest.raises(RequestCancelled):
        lw.watch(ListOptions(timeout_seconds=300))
    assert time.monotonic() - t0 < 1.0
    assert silent.accepted == 0


def test_d24_stopping_one_source_leaves_the_other_requests_of_its_client_alone(
    server: CannedServer,
) -> None:
    server.routes["/apis/example.com/v1/widgets"] = lambda r: widget_list("7", widget("a", "1"))
    server.routes["/api/v1/nodes"] = lambda r: Reply(
        body=json.dumps(
            {"kind": "NodeList", "metadata": {"resourceVersion": "9"}, "items": []}
        ).encode()
    )
    api = api_client(server.url)
    stopped = ApiListerWatcher(api, NODES, dict)
    assert stopped.list(ListOptions()).resource_version == "9"
    stopped.cancel_requests()
    other = ApiListerWatcher(api, WIDGETS, Widget)
    for _ in range(3):  # on the connections the stopped source used before, too
        assert [object_name(w) for w in other.list(ListOptions()).items] == ["a"]
    plain = api.rest_client.pool_manager.request("GET", f"{server.url}/api/v1/nodes")
    assert plain.status == 200


def test_d24_a_watch_the_server_does_not_answer_is_an_outage_without_a_resend(
    silent: SilentServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transport, "WATCH_ANSWER_TIMEOUT", 0.5)
    lw = ApiListerWatcher(api_client(silent.url), WIDGETS, Widget)
    with pytest.raises(ConnectionError) as info:
        lw.watch(ListOptions(timeout_seconds=300))
    message = str(info.value)
    assert "cannot watch widgets.example.com in all namespaces" in message
    assert "did not answer within 0.5 s" in message
    assert is_server_unavailable(info.value)  # D16: one WARNING, then retried with backoff
    assert silent.accepted == 1


def test_d24_an_answered_watch_waits_for_its_events_longer_than_the_answer_timeout(
    server: CannedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transport, "WATCH_ANSWER_TIMEOUT", 0.3)
    hold = threading.Event()
    server.routes["/apis/example.com/v1/widgets"] = lambda r: Stream(
        [hold, line("ADDED", widget("late", "2"))]
    )
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget)
    w = lw.watch(ListOptions(timeout_seconds=300))
    timer = threading.Timer(1.0, hold.set)  # an idle watch: its first event after 1 s
    timer.start()
    try:
        got = [object_name(e.object) for e in w]
    finally:
        timer.cancel()
        hold.set()
    assert got == ["late"]


# ------------------------------------------------------------------------------ D25: a newer server

# The ConfigMap of the generated table, which says its Kubernetes release (1.36).
GENERATED_CONFIGMAPS = APIResource(
    "",
    "v1",
    "configmaps",
    "ConfigMap",
    namespaced=True,
    protobuf=ProtobufKind(
        "k8s.io.api.core.v1.ConfigMap", "kubeinformers.generated.protobuf_schema"
    ),
)


def _configmaps_in_the_format_asked(r: Request) -> Reply:
    if r.headers["accept"].startswith(PROTOBUF_LIST):
        body = pb.list_body("v1", "ConfigMapList", [pb_configmap("a", "5", {"k": "v"})], "7")
        return Reply(body=body, headers={"Content-Type": PROTOBUF_LIST})
    item = {"metadata": {"name": "a", "namespace": "default", "resourceVersion": "5"}}
    item |= {"data": {"k": "v"}, "newField": {"since": "1.37"}}  # what a 1.37 server adds
    return Reply(
        body=json.dumps({"kind": "ConfigMapList", "apiVersion": "v1", "items": [item]}).encode()
    )


@pytest.mark.parametrize(
    "minor,wire",
    [("36", "protobuf"), ("35", "protobuf"), ("37", "json"), ("37+", "json")],
)
def test_d25_a_server_newer_than_the_protobuf_table_is_read_as_json(
    server: CannedServer, caplog: pytest.LogCaptureFixture, minor: str, wire: str
) -> None:
    server.version = json.dumps({"major": "1", "minor": minor, "gitVersion": "v1.x"}).encode()
    server.routes["/api/v1/configmaps"] = _configmaps_in_the_format_asked
    lw = ApiListerWatcher(api_client(server.url), GENERATED_CONFIGMAPS, ConfigMap)
    caplog.set_level(logging.INFO, logger="kubeinformers")
    pages = [lw.list(ListOptions()) for _ in range(2)]
    accepts = [r.headers["accept"] for r in server.requests]
    told = [r for r in caplog.records if "newer than the generated models" in r.getMessage()]
    assert len(server.version_requests) == 1  # asked once, then known for RECHECK_AFTER
    if wire == "protobuf":
        assert accepts == [transport.PROTOBUF_ACCEPT] * 2 and told == []
        return
    assert accepts == ["application/json"] * 2
    (a,) = pages[0].items
    assert a.data == {"k": "v"}
    assert a.model_extra == {"newField": {"since": "1.37"}}  # kept: an update keeps it
    assert len(told) == 1 and told[0].levelno == logging.INFO
    assert f"Kubernetes 1.{minor.rstrip('+')}" in told[0].getMessage()
    assert "(1.36)" in told[0].getMessage() and server.url in told[0].getMessage()


def test_d25_a_server_that_does_not_say_its_release_is_read_as_protobuf(
    server: CannedServer,
) -> None:
    server.routes["/version"] = lambda r: Reply(403, status_body(403, "Forbidden", "no"))
    server.routes["/api/v1/configmaps"] = _configmaps_in_the_format_asked
    lw = ApiListerWatcher(api_client(server.url), GENERATED_CONFIGMAPS, ConfigMap)
    lw.list(ListOptions())
    assert server.requests[-1].headers["accept"] == transport.PROTOBUF_ACCEPT


def test_d25_a_table_that_does_not_say_its_release_is_read_as_protobuf_without_asking(
    server: CannedServer,
) -> None:
    server.routes["/api/v1/configmaps"] = _configmaps_in_the_format_asked
    server.version = b'{"major": "1", "minor": "99"}'
    lw = ApiListerWatcher(api_client(server.url), CONFIGMAPS, ConfigMap)  # the test table
    lw.list(ListOptions())
    assert server.requests[0].headers["accept"] == transport.PROTOBUF_ACCEPT
    assert server.version_requests == []


def test_d25_a_server_upgraded_while_informers_run_is_noticed_after_the_recheck(
    server: CannedServer,
) -> None:
    now = [1000.0]
    api = api_client(server.url)
    assert server_version(api, clock=lambda: now[0]) == (1, 36)
    server.version = b'{"major": "1", "minor": "37"}'
    now[0] += RECHECK_AFTER - 1
    assert server_version(api, clock=lambda: now[0]) == (1, 36)  # still trusted
    now[0] += 2
    assert server_version(api, clock=lambda: now[0]) == (1, 37)
    assert len(server.version_requests) == 2


def test_d25_parse_version_takes_the_leading_digits() -> None:
    assert parse_version(b'{"major": "1", "minor": "37+"}') == (1, 37)
    assert parse_version(b'{"major": "1", "minor": "36"}') == (1, 36)
    assert parse_version(b'{"major": "", "minor": "36"}') is None
    assert parse_version(b"not json") is None
    assert parse_version(b"{}") is None


# --- K7, K11: a drifted object is reported once per problem, not once per version -------------

DEMO_WIDGETS = APIResource("demo.kubeinformers.io", "v1", "widgets", "Widget", namespaced=True)


def demo_widget(name: str, rv: str, generation: int = 1, **spec: Any) -> dict[str, Any]:
    """A demo Widget (examples/informers) as a server whose CRD changed might send it."""
    return {
        "apiVersion": "demo.kubeinformers.io/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, "uid": f"u-{name}"},
        "spec": {"size": "small", "replicas": 2, **spec},
        "status": {"observedGeneration": generation},
    }


@pytest.mark.parametrize("decode", ["eager", "lazy"])
def test_k7_k11_a_drifted_object_is_reported_once_per_problem_not_per_version(
    server: CannedServer, caplog: pytest.LogCaptureFixture, decode: DecodeMode
) -> None:
    """A CRD changed a field's type and the object's status keeps changing: 20 new versions
    with the same bad field are one ERROR (then DEBUG), as the options guide and K7/K11 say;
    a different problem of the same object, and another object, are news again. Every one is
    counted and reaches the decode error handler. (Eager decoding said one ERROR per
    resourceVersion: 21 for 20 status updates on a real server.)"""
    from examples.informers.demo.v1.widget import Widget as DemoWidget
    from kubeinformers.runtime.codec.lazy import materialize

    events = [line("ADDED", demo_widget("w", "10", replicas="two"))]
    events += [
        line("MODIFIED", demo_widget("w", str(11 + i), generation=i, replicas="two"))
        for i in range(20)
    ]
    events += [
        line("MODIFIED", demo_widget("w", "40", replicas="two", tags=["a"])),  # news
        line("MODIFIED", demo_widget("w", "41", replicas="two", tags=["a"])),
        line("ADDED", demo_widget("v", "42", replicas="two")),  # another object: news
    ]
    server.routes["/apis/demo.kubeinformers.io/v1/widgets"] = lambda r: Stream([b"".join(events)])
    lw = ApiListerWatcher(api_client(server.url), DEMO_WIDGETS, DemoWidget, decode=decode)
    reported: list[BaseException] = []
    lw.set_decode_error_handler(reported.append)
    with caplog.at_level(logging.DEBUG, logger="kubeinformers.transport"):
        for event in lw.watch(ListOptions()):
            materialize(event.object)  # a whole read: lazy decoding finds the bad fields here
    said = [r for r in caplog.records if r.name == "kubeinformers.transport"]
    errors = [r.getMessage() for r in said if r.levelno == logging.ERROR]
    again = [r for r in said if r.levelno == logging.DEBUG and "reported before" in r.getMessage()]
    assert len(errors) == 3, errors
    assert "'ns/w'" in errors[0] or "ns/w " in errors[0]
    assert "tags" in errors[1] or "(and 1 more)" in errors[1]  # eager names the first field
    assert "'ns/v'" in errors[2] or "ns/v " in errors[2]
    assert len(again) == 21
    assert lw.decode_errors == len(reported) == 24


def test_k7_what_was_reported_is_remembered_for_a_bounded_number_of_objects(
    server: CannedServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At most `_MAX_LOGGED_BAD_OBJECTS` objects are remembered, the least recently reported
    forgotten first (and then said again at ERROR if they come back)."""
    monkeypatch.setattr(transport, "_MAX_LOGGED_BAD_OBJECTS", 3)
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget, decode="eager")

    def bad(name: str, rv: str) -> ObjectDecodeError:
        return ObjectDecodeError("Widget", f"default/{name}", rv, "spec.replicas", "not an int")

    with caplog.at_level(logging.ERROR, logger="kubeinformers.transport"):
        for name, rv in [("a", "1"), ("b", "2"), ("a", "3"), ("c", "4"), ("d", "5")]:
            lw.report_bad_object(bad(name, rv))
        assert len(caplog.records) == 4  # a, b, c, d: a's second version is not news
        assert len(lw._logged_bad) == 3  # b, the least recently reported, was forgotten
        lw.report_bad_object(bad("a", "6"))
        assert len(caplog.records) == 4
        lw.report_bad_object(bad("b", "7"))
        assert len(caplog.records) == 5


def test_d16_a_connection_closed_during_the_tls_handshake_is_an_outage() -> None:
    """A server (or a proxy, a load balancer) that closes the connection in the middle of the
    TLS handshake, as an API server going down or a dropped connection does, is the server
    being away (D16: one WARNING, retried with backoff), not a TLS failure (D22: an ERROR, as
    for a certificate the client does not trust). The real-server soak logged 'Failed to watch
    ... SSLEOFError(EOF occurred in violation of protocol)' at ERROR for a dropped connection."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    hello = threading.Event()

    def cut() -> None:
        conn, _ = listener.accept()
        with conn:
            if conn.recv(65536):  # the ClientHello read: the close is a FIN, not a reset
                hello.set()

    thread = threading.Thread(target=cut, daemon=True)
    thread.start()
    try:
        lw = ApiListerWatcher(
            _quiet_api_client(f"https://127.0.0.1:{listener.getsockname()[1]}"), WIDGETS, Widget
        )
        with pytest.raises(ConnectionError) as info:
            lw.watch(ListOptions(timeout_seconds=300))
    finally:
        thread.join(10)
        listener.close()
    assert hello.is_set()
    assert "EOF" in str(info.value)
    assert is_server_unavailable(info.value)
    assert failure_cause(info.value) == "connection closed during TLS"


def test_m11_a_list_with_a_server_warning_logs_it_once(
    server: CannedServer, caplog: pytest.LogCaptureFixture
) -> None:
    """An informer of a deprecated API version gets the server's warning with every list and
    watch: said once at WARNING with the resource and the server, as client-go's rest client
    hands it to its warning handler; the repeats at DEBUG."""
    text = f"example.com/v1 Widget is deprecated in v1.99+ ({uuid.uuid4().hex})"

    def warned(request: Request) -> Reply:
        reply = widget_list("42", widget("a", "40"))
        reply.headers["Warning"] = f'299 - "{text}"'
        return reply

    server.routes["/apis/example.com/v1/namespaces/default/widgets"] = warned
    lw = ApiListerWatcher(api_client(server.url), WIDGETS, Widget, namespace="default")
    with caplog.at_level(logging.DEBUG, logger="kubeinformers.transport"):
        for _ in range(3):
            assert len(lw.list(ListOptions()).items) == 1
    said = [r for r in caplog.records if text in r.getMessage()]
    assert [r.levelno for r in said] == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    assert said[0].getMessage() == (
        f'list widgets.example.com in namespace "default" at {server.url}: the server warns: {text}'
    )
