"""Helpers for LocalApiServer's own tests. The user-facing fixtures (local_api_server, ...)
come from the plugin that tests/conftest.py opts in to, as a user's suite does."""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import urllib3

from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.testing.local_api_server import LocalApiServer

ALL_VERBS = frozenset(
    {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
)
PODS = APIResource("", "v1", "pods", "Pod", True, "pod", ALL_VERBS)
CONFIGMAPS = APIResource("", "v1", "configmaps", "ConfigMap", True, "configmap", ALL_VERBS)
BASIC = (PODS, CONFIGMAPS)


def configmap(name: str, ns: str = "default", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "data": {"k": name},
    }


def pod(name: str, ns: str = "default", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1"}]},
    }


def request(
    server: LocalApiServer,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], Any]:
    """One plain-HTTP request; the body decoded as JSON when it is JSON."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    hdrs = dict(headers or {})
    if server.token and "Authorization" not in hdrs:
        hdrs["Authorization"] = f"Bearer {server.token}"
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
    if data is not None and "Content-Type" not in hdrs:
        hdrs["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    ctype = resp.getheader("Content-Type") or ""
    return resp.status, dict(resp.getheaders()), json.loads(raw) if "json" in ctype else raw


@dataclass
class Stream:
    """A watch read on a background thread: lines as they arrive, and how the stream ended."""

    lines: list[bytes] = field(default_factory=list)
    ended: str = ""  # "clean" (terminating chunk), "cut" (connection broken)
    status: int = 0
    got_line: threading.Condition = field(default_factory=threading.Condition)
    done: threading.Event = field(default_factory=threading.Event)

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in list(self.lines)]

    def wait_for(self, predicate: Callable[[list[bytes]], bool], timeout: float = 5.0) -> bool:
        with self.got_line:
            return self.got_line.wait_for(
                lambda: predicate(self.lines) or self.done.is_set(), timeout
            ) and predicate(self.lines)

    def wait_lines(self, n: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        assert self.wait_for(lambda lines: len(lines) >= n, timeout), (
            f"got {len(self.lines)} of {n} lines: {self.lines!r}"
        )
        return self.events()


def watch(
    server: LocalApiServer,
    path: str,
    headers: dict[str, str] | None = None,
    read_timeout: float = 10.0,
) -> Stream:
    """Start a watch request (urllib3, as the kubernetes client); the Stream fills in as events
    arrive. A stream that ends without the terminating chunk is "cut", as urllib3 reports it."""
    stream = Stream()
    hdrs = dict(headers or {})
    if server.token:
        hdrs.setdefault("Authorization", f"Bearer {server.token}")
    pool = urllib3.PoolManager(retries=False)
    resp = pool.request(
        "GET",
        f"{server.url}{path}",
        headers=hdrs,
        preload_content=False,
        timeout=urllib3.Timeout(connect=5, read=read_timeout),
    )
    stream.status = resp.status

    def read() -> None:
        try:
            for chunk in resp.read_chunked():
                # A chunk may carry several lines (initial events are batched); a cut or
                # truncated stream may leave a piece without its newline.
                with stream.got_line:
                    stream.lines.extend(re.findall(rb"[^\n]*\n|[^\n]+$", chunk))
                    stream.got_line.notify_all()
            stream.ended = "clean"
        except (urllib3.exceptions.HTTPError, OSError):
            stream.ended = "cut"
        finally:
            stream.done.set()
            with stream.got_line:
                stream.got_line.notify_all()
            resp.release_conn()
            pool.clear()

    threading.Thread(target=read, daemon=True).start()
    return stream
