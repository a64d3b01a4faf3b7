"""LocalApiServer's shared state: fault switches, users and denials, request parsing.

`ServerState` is what every request thread reads; `Faults` holds the hooks' switches (guarded
by its lock); `parse_request` turns a path into kube-apiserver's RequestInfo (verb, group,
version, namespace, resource, name, subresource), which authorization and routing use.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer

from kubeinformers.testing.apiserver import api
from kubeinformers.testing.apiserver.errors import ApiError, ObjDict, status_body
from kubeinformers.testing.apiserver.registry import Registry
from kubeinformers.testing.apiserver.store import Store

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    410: "Expired",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
ADMIN_USER = "admin"


@dataclass
class Faults:
    """Fault-injection switches, read by every request thread (guarded by `lock`)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    fail: list[tuple[int, float | None, frozenset[str] | None]] = field(default_factory=list)
    latency: float = 0.0
    stall_initial_events_end: bool = False
    corrupt_lines: int = 0
    truncate_lines: int = 0
    watch_list_supported: bool = True

    def take_failure(self, verb: str) -> tuple[int, float | None] | None:
        with self.lock:
            for i, (code, retry, verbs) in enumerate(self.fail):
                if verbs is None or verb in verbs:
                    del self.fail[i]
                    return code, retry
        return None

    def take_line_fault(self) -> str | None:
        with self.lock:
            if self.truncate_lines:
                self.truncate_lines -= 1
                return "truncate"
            if self.corrupt_lines:
                self.corrupt_lines -= 1
                return "corrupt"
        return None


@dataclass
class ServerState:
    """Everything the request handlers share; owned by LocalApiServer."""

    store: Store
    registry: Registry
    token: str | None
    users: dict[str, str]  # extra bearer tokens → user names without any permission
    # (verb|*, group, resource, namespace|*); replaced whole, never mutated (readers iterate it)
    forbidden: frozenset[tuple[str, str, str, str]]
    bookmark_interval: float
    too_large_wait: float
    faults: Faults = field(default_factory=Faults)
    # KEP-5866: shardSelector is applied and echoed (kube-apiserver's ShardedListAndWatch gate).
    sharded_list_and_watch: bool = False
    connections: set[socket.socket] = field(default_factory=set)
    conn_lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class RequestInfo:
    verb: str
    group: str = ""
    version: str = ""
    namespace: str | None = None
    resource: str = ""
    name: str = ""
    subresource: str = ""
    is_resource: bool = False


def parse_request(method: str, path: str, query: Mapping[str, str]) -> RequestInfo:
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:
        group, gv_len = "", 2
    elif parts[:1] == ["apis"] and len(parts) >= 2:
        group, gv_len = parts[1], 3
    else:
        return RequestInfo(verb=method.lower())
    version = parts[gv_len - 1] if len(parts) >= gv_len else ""
    rest = parts[gv_len:]
    watch = api.truthy(query.get("watch"))
    if rest[:1] == ["watch"]:
        watch, rest = True, rest[1:]
    info = RequestInfo(verb="", group=group, version=version, is_resource=bool(rest))
    if not rest:
        info.verb = method.lower()
        return info
    if (
        rest[0] == "namespaces"
        and len(rest) >= 3
        and not (len(rest) == 3 and rest[2] in ("status", "finalize"))
    ):
        info.namespace, rest = rest[1], rest[2:]
    elif rest[0] == "namespaces" and len(rest) >= 2:
        info.namespace = rest[1]
    info.resource = rest[0]
    info.name = rest[1] if len(rest) > 1 else ""
    info.subresource = "/".join(rest[2:])
    collection = not info.name
    info.verb = {
        "GET": "watch" if watch else ("list" if collection else "get"),
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "deletecollection" if collection else "delete",
    }.get(method, method.lower())
    return info


def denied(state: ServerState, info: RequestInfo) -> bool:
    for verb, group, resource, ns in state.forbidden:
        if (
            verb in ("*", info.verb)
            and group in ("*", info.group)
            and resource == info.resource
            and ns in ("*", info.namespace or "")
        ):
            return True
    return False


def injected_failure(code: int, retry_after: float | None) -> ApiError:
    headers: dict[str, str] = {}
    details: ObjDict | None = None
    if retry_after is not None:
        headers["Retry-After"] = (
            str(int(retry_after)) if retry_after == int(retry_after) else str(retry_after)
        )
        details = {"retryAfterSeconds": int(retry_after)}
    if code == 429:
        message = "Too many requests, please try again later."
    elif code == 500:
        message = "Internal error occurred: injected fault (LocalApiServer.fail_next)"
        details = dict(
            details or {}, causes=[{"message": "injected fault (LocalApiServer.fail_next)"}]
        )
    else:
        message = f"injected fault (LocalApiServer.fail_next): HTTP {code}"
    return ApiError(code, status_body(code, _REASONS.get(code, ""), message, details), headers)


class StateHTTPServer(ThreadingHTTPServer):
    """An HTTP server whose request handlers serve `state` (what the watch streams read).

    `LocalHTTPServer` (in `http`) is the one used; this base lets the watch-stream handler
    name its server's type without importing `http`, which imports it.
    """

    state: ServerState
