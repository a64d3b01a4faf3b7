"""LocalApiServer answers every recorded kube-apiserver exchange the way the real server did.

For each transcript in ../shared/data/apiserver-transcripts/ the test builds the same world
(namespace `tx`, pods web-1..web-5 taken from the recording, CRD widgets.example.com), sends
the recorded request over HTTP, and compares status code, content type, the presence of the
headers clients look at, and the shape of the body: kind/apiVersion, metadata fields present,
continue-token / remainingItemCount presence, item names, Status reason/code/causes (and the
message, with numbers normalised), watch event types and order, bookmark shapes, and whether
the server itself ended the watch stream.

Differences that are deliberate: resourceVersions in requests are mapped to this server's
numbers (continue tokens are re-issued by this server); watch `timeoutSeconds` of 15 and 8 are
shortened to 3 s and the idle periodic bookmark comes after 0.5 s instead of 60 s, to keep the
suite fast — the order of events, not the clock, is what is compared.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.testing.local_api_server import LocalApiServer
from tests.conftest import SHARED_DATA

DIR = SHARED_DATA / "apiserver-transcripts"
NAMES = (
    sorted(p.name.removesuffix(".request.txt") for p in DIR.glob("*.request.txt"))
    if DIR.is_dir()
    else ["shared-data-absent"]
)
ADMIN, NOBODY = "admin-token", "nobody-token"
ALL_VERBS = frozenset(
    {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
)
PODS = APIResource("", "v1", "pods", "Pod", True, "pod", ALL_VERBS)
CONFIGMAPS = APIResource("", "v1", "configmaps", "ConfigMap", True, "configmap", ALL_VERBS)
HEADERS_COMPARED = (
    "Audit-Id",
    "Cache-Control",
    "Retry-After",
    "X-Content-Type-Options",
    "X-Kubernetes-Pf-Flowschema-Uid",
    "X-Kubernetes-Pf-Prioritylevel-Uid",
)
REFERENCE_RVS = {"235", "239", "382", "395"}  # "the current RV" at recording time


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int
    resp_headers: dict[str, str]
    payload: Any  # dict (json), list of events (jsonl), bytes (text)
    kind: str  # json / jsonl / text
    server_ended: bool = False


def load(name: str) -> Recorded:
    head, _, body = (DIR / f"{name}.request.txt").read_bytes().partition(b"\n\n")
    lines = head.decode().splitlines()
    method, path, _ = lines[0].split(" ")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    status_line, *hdr_lines = (DIR / f"{name}.headers.txt").read_text().strip().splitlines()
    resp_headers = dict(line.split(": ", 1) for line in hdr_lines if ": " in line)
    rec = Recorded(
        method, path, headers, body, int(status_line.split(" ")[1]), resp_headers, None, ""
    )
    for ext, kind in (("body.jsonl", "jsonl"), ("body.json", "json"), ("body.txt", "text")):
        p = DIR / f"{name}.{ext}"
        if p.exists():
            data = p.read_bytes()
            rec.kind = "text" if data.startswith(b"404 page") else kind
            if rec.kind == "json":
                rec.payload = json.loads(data)
            elif rec.kind == "jsonl":
                rec.payload = [json.loads(line) for line in data.splitlines() if line.strip()]
            else:
                rec.payload = data
            break
    timing = DIR / f"{name}.timing.txt"
    if rec.kind == "jsonl":
        ends = (
            re.findall(r"\+\s*([\d.]+)s <end of stream>", timing.read_text())
            if timing.exists()
            else []
        )
        timeout = dict(parse_qsl(urlsplit(path).query)).get("timeoutSeconds")
        errored = any(e["type"] == "ERROR" for e in rec.payload)
        rec.server_ended = errored or bool(
            timeout and ends and abs(float(ends[0]) - float(timeout)) < 1.5
        )
    return rec


# --- the world of the recording ------------------------------------------------------------


def recorded_objects(name: str) -> list[dict[str, Any]]:
    """Objects as a client would create them, from a recorded list body."""
    out = []
    for item in json.loads((DIR / f"{name}.body.json").read_bytes())["items"]:
        meta = {
            k: item["metadata"][k]
            for k in ("name", "namespace", "labels", "annotations")
            if k in item["metadata"]
        }
        obj = {
            "apiVersion": item.get("apiVersion", "v1"),
            "kind": item.get("kind", "Pod"),
            "metadata": meta,
            "spec": item["spec"],
        }
        out.append(obj)
    return out


def crd_body() -> dict[str, Any]:
    _, _, body = (DIR / "08-crd-create.request.txt").read_bytes().partition(b"\n\n")
    return json.loads(body)  # type: ignore[no-any-return]


@dataclass
class Scenario:
    ref_rv: int | None = None
    continue_token: str | None = None
    during_watch: Callable[[], None] | None = None
    timeout: str | None = None  # shortened timeoutSeconds


def _pods(server: LocalApiServer) -> int:
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tx"}})
    for pod in recorded_objects("02-list-no-rv"):
        server.create(pod)
    return server.resource_version


def _widgets(server: LocalApiServer, names: tuple[str, ...] = ("w-1", "w-2", "w-3")) -> int:
    server.create(crd_body())
    for w in recorded_objects("08-cr-list-rv0"):
        if w["metadata"]["name"] in names:
            server.create(w)
    return server.resource_version


def _watch_events_actions(server: LocalApiServer) -> None:
    """03-watch-events: create, label patch, identical patch, delete, finalizer dance."""
    template = recorded_objects("02-list-no-rv")[0]
    web6 = dict(
        template,
        metadata=dict(
            template["metadata"], name="web-6", labels={"app": "bench", "tier": "web", "shard": "6"}
        ),
    )
    obj = server.create(web6)
    obj = server.replace(
        dict(
            obj,
            metadata=dict(obj["metadata"], labels=dict(obj["metadata"]["labels"], benchrev="r1")),
        )
    )
    server.replace(obj)  # identical: no event
    server.delete("v1", "Pod", "web-6", "tx")
    web7 = dict(
        template, metadata=dict(template["metadata"], name="web-7", finalizers=["example.com/hold"])
    )
    server.create(web7)
    held = server.delete("v1", "Pod", "web-7", "tx")
    server.replace(dict(held, metadata=dict(held["metadata"], finalizers=[])))


def _cr_watch_actions(server: LocalApiServer) -> None:
    w1 = server.get("example.com/v1", "Widget", "w-1", "tx")
    server.replace(
        dict(
            w1,
            metadata=dict(w1["metadata"], labels={"color": "red"}),
            spec={"color": "red", "size": 10},
        )
    )
    w2 = server.get("example.com/v1", "Widget", "w-2", "tx")
    server.replace(dict(w2, status={"phase": "Ready"}), status=True)
    server.delete("example.com/v1", "Widget", "w-3", "tx")


def _configmap_elsewhere(server: LocalApiServer) -> None:
    server.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "moved", "namespace": "default"},
        }
    )


def _later(fn: Callable[[LocalApiServer], None], server: LocalApiServer) -> Callable[[], None]:
    return lambda: fn(server)


def setup(name: str, server: LocalApiServer) -> Scenario:
    if name == "00-create-namespace":
        return Scenario()
    if name in ("00-create-pod", "08-crd-create"):
        server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tx"}})
        return Scenario()
    if name.startswith("08-") or name.startswith("50-"):
        rv = _pods(server)
        if name == "08-crd-get-established" or name == "08-discovery-group-version":
            _widgets(server, ())
        elif name in ("08-cr-create", "08-cr-create-invalid-422"):
            _widgets(server)
        elif name == "08-cr-watchlist-initial-events":
            _widgets(server, ("w-1", "w-2", "w-4"))
        elif not name.startswith("50-"):
            rv = _widgets(server, ("w-1", "w-2", "w-3", "w-4"))
        sc = Scenario(ref_rv=rv)
        if name == "08-cr-watch-events":
            sc.during_watch, sc.timeout = _later(_cr_watch_actions, server), "3"
        if name == "08-cr-watch-too-old":
            server.compact()
        if name == "50-watchlist-etcd34-unsupported":
            server.set_watch_list_supported(False)
        return sc
    rv = _pods(server)
    sc = Scenario(ref_rv=rv)
    if name == "03-watch-events":
        sc.during_watch, sc.timeout = _later(_watch_events_actions, server), "3"
    elif name == "03-watch-idle-periodic-bookmark":
        server.set_bookmark_interval(0.5)
        # The recorded cluster's configmaps moved on meanwhile (the bookmark is at 258, the
        # watch at 235): a real watch cache sends no bookmark for a resource that stays put.
        sc.during_watch = _later(_configmap_elsewhere, server)
    elif name in ("04-list-exact-compacted-rv", "04-list-notolderthan-compacted-rv"):
        server.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "c", "namespace": "default"},
            }
        )
        server.compact()
    elif name == "04-watch-compacted-rv-within-cache-window":
        _watch_events_actions(server)
        server.compact(watch_cache=False)
    elif name == "04-watch-too-old-rv1":
        server.compact()
    return sc


# --- talking HTTP -------------------------------------------------------------------------


def _request_path(rec: Recorded, sc: Scenario) -> str:
    url = urlsplit(rec.path)
    query = []
    for k, v in parse_qsl(url.query, keep_blank_values=True):
        if k == "resourceVersion" and v in REFERENCE_RVS and sc.ref_rv is not None:
            v = str(sc.ref_rv)
        elif k == "continue" and sc.continue_token is not None and v != "garbage":
            v = sc.continue_token
        elif k == "timeoutSeconds" and sc.timeout is not None:
            v = sc.timeout
        query.append((k, v))
    return url.path + (f"?{urlencode(query)}" if query else "")


def _headers(rec: Recorded) -> dict[str, str]:
    out = {k: v for k, v in rec.headers.items() if k not in ("Host",)}
    auth = out.get("Authorization", "")
    if auth:
        out["Authorization"] = (
            "Bearer " + ADMIN
            if "admin" in auth
            else "Bearer " + NOBODY
            if "no RBAC" in auth
            else "Bearer not-a-valid-token"
        )
    return out


def send(
    server: LocalApiServer,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes = b"",
    *,
    stream: bool = False,
    expect: int = 0,
    server_ends: bool = False,
    max_wait: float = 5.0,
    during: Callable[[], None] | None = None,
) -> tuple[int, dict[str, str], bytes, bool]:
    """(status, headers, body, server ended the stream).

    A watch is read until the server ends it or, for streams the server keeps open (the
    recording was cut by the client), until `expect` lines arrived and 0.3 s passed quietly
    (so a slow machine does not fail the test and an extra event still shows up)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request(method, path, body=body or None, headers=headers)
    resp = conn.getresponse()
    hdrs = {k: v for k, v in resp.getheaders()}
    if not stream or resp.status != 200:
        data = resp.read()
        conn.close()
        return resp.status, hdrs, data, True
    worker = threading.Thread(target=during) if during else None
    if worker:
        worker.start()
    lines: list[bytes] = []
    ended = False
    deadline = time.monotonic() + max_wait
    quiet_until = float("inf")
    assert conn.sock is not None
    while True:
        if not server_ends and len(lines) >= expect and quiet_until == float("inf"):
            quiet_until = time.monotonic() + 0.3
        left = min(deadline, quiet_until) - time.monotonic()
        if left <= 0:
            break
        conn.sock.settimeout(left)
        try:
            line = resp.readline()
        except TimeoutError:
            break
        if not line:
            ended = True
            break
        lines.append(line)
    if worker:
        worker.join(10)
    conn.close()
    return 200, hdrs, b"".join(lines), ended


def page(server: LocalApiServer, path: str) -> dict[str, Any]:
    status, _, data, _ = send(server, "GET", path, {"Authorization": f"Bearer {ADMIN}"})
    assert status == 200, data
    return json.loads(data)  # type: ignore[no-any-return]


# --- comparing shapes -----------------------------------------------------------------------


def _norm(message: str) -> str:
    return re.sub(r"\d+", "N", message)


def compare_status(got: dict[str, Any], want: dict[str, Any]) -> None:
    for key in ("kind", "apiVersion", "status", "reason", "code"):
        assert got.get(key) == want.get(key), key
    assert sorted(got["metadata"]) == sorted(want["metadata"])
    assert _norm(got.get("message", "")) == _norm(want.get("message", ""))
    gd, wd = got.get("details"), want.get("details")
    assert (gd is None) == (wd is None)
    if gd is not None and wd is not None:
        assert sorted(gd) == sorted(wd)
        assert gd.get("name") == wd.get("name") and gd.get("kind") == wd.get("kind")
        assert [(c.get("reason"), c.get("field")) for c in gd.get("causes", [])] == [
            (c.get("reason"), c.get("field")) for c in wd.get("causes", [])
        ]


def compare_object(got: dict[str, Any], want: dict[str, Any], *, key_order: bool) -> None:
    if key_order:
        assert list(got) == list(want)
    else:
        assert sorted(got) == sorted(want)
    for key in ("kind", "apiVersion"):
        assert got.get(key) == want.get(key)
    gm, wm = got.get("metadata", {}), want.get("metadata", {})
    assert sorted(gm) == sorted(wm), (sorted(gm), sorted(wm))
    for key in ("name", "namespace", "labels", "annotations"):
        assert gm.get(key) == wm.get(key), key


def compare_body(got: dict[str, Any], want: dict[str, Any]) -> None:
    custom = want.get("apiVersion", "").endswith("example.com/v1") and want.get("kind") != "Status"
    if want.get("kind") == "Status":
        compare_status(got, want)
    elif want.get("kind") == "Table":
        assert sorted(got["metadata"]) == sorted(want["metadata"])
        assert [r["object"]["metadata"]["name"] for r in got["rows"]] == [
            r["object"]["metadata"]["name"] for r in want["rows"]
        ]
        assert {r["object"]["kind"] for r in got["rows"]} == {"PartialObjectMetadata"}
    elif "items" in want:
        assert list(got) == list(want)  # CR lists: sorted keys; typed lists: kind first
        assert got["kind"] == want["kind"] and got["apiVersion"] == want["apiVersion"]
        assert sorted(got["metadata"]) == sorted(want["metadata"])
        assert [i["metadata"]["name"] for i in got["items"]] == [
            i["metadata"]["name"] for i in want["items"]
        ]
        for g, w in zip(got["items"], want["items"], strict=True):
            compare_object(g, w, key_order=custom)
    elif want.get("kind") == "APIResourceList":
        assert [
            (r["name"], r["namespaced"], r["kind"], sorted(r["verbs"])) for r in got["resources"]
        ] == [
            (r["name"], r["namespaced"], r["kind"], sorted(r["verbs"])) for r in want["resources"]
        ]
    else:
        compare_object(got, want, key_order=True)
        if want.get("kind") == "CustomResourceDefinition":
            assert [c["type"] for c in got["status"].get("conditions") or []] == [
                c["type"] for c in want["status"].get("conditions") or []
            ]


def _event_shape(e: dict[str, Any]) -> tuple[Any, ...]:
    obj = e["object"]
    meta = obj.get("metadata", {})
    return (
        e["type"],
        obj.get("kind"),
        obj.get("apiVersion"),
        meta.get("name"),
        (meta.get("annotations") or {}).get("k8s.io/initial-events-end"),
        tuple(sorted(obj)) if e["type"] == "BOOKMARK" else None,
        obj.get("reason"),
        obj.get("code"),
        "deletionTimestamp" in meta,
    )


@pytest.mark.parametrize("name", NAMES)
def test_transcript(name: str, shared_data: Path) -> None:
    rec = load(name)
    with LocalApiServer(
        token=ADMIN, users={NOBODY: "nobody"}, resources=[PODS, CONFIGMAPS], too_large_rv_wait=0.2
    ) as server:
        sc = setup(name, server)
        if name in (
            "01-list-limit2-page2",
            "01-list-limit2-page3",
            "04-list-continue-compacted",
            "08-cr-list-limit2-page2",
        ):
            base = urlsplit(rec.path).path + "?limit=2"
            sc.continue_token = page(server, base)["metadata"]["continue"]
            if name.endswith("page3"):
                sc.continue_token = page(
                    server, f"{base}&{urlencode({'continue': sc.continue_token})}"
                )["metadata"]["continue"]
            if name == "04-list-continue-compacted":
                server.create(
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "c", "namespace": "default"},
                    }
                )
                server.compact()
        path = _request_path(rec, sc)
        timeout = dict(parse_qsl(urlsplit(path).query)).get("timeoutSeconds")
        status, headers, data, ended = send(
            server,
            rec.method,
            path,
            _headers(rec),
            rec.body,
            stream=rec.kind == "jsonl",
            expect=len(rec.payload) if rec.kind == "jsonl" else 0,
            server_ends=rec.server_ended,
            max_wait=float(timeout) + 3 if timeout and float(timeout) < 10 else 5.0,
            during=sc.during_watch,
        )
    assert status == rec.status
    assert headers["Content-Type"] == rec.resp_headers["Content-Type"]
    for h in HEADERS_COMPARED:
        assert (h in headers) == (h in rec.resp_headers), h
    if rec.kind == "text":
        assert data == rec.payload
    elif rec.kind == "json":
        compare_body(json.loads(data), rec.payload)
    else:
        got = [json.loads(line) for line in data.splitlines() if line.strip()]
        assert [_event_shape(e) for e in got] == [_event_shape(e) for e in rec.payload]
        assert ended == rec.server_ended
