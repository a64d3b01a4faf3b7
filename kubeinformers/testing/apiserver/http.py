"""LocalApiServer's HTTP layer: routing, authentication, authorization, faults, watch streams.

Order of checks as in kube-apiserver: authentication (401) → authorization (403) → flow
control (where injected 429/500 faults sit) → routing (404: plain text for an unknown
group/version, a JSON Status for an unknown resource) → the REST operation. Watches are
HTTP/1.1 chunked responses, one JSON event per line and per chunk, sent by
`watch_stream.WatchStreamHandler`, which `Handler` inherits.
"""

from __future__ import annotations

import json
import logging
import ssl
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from kubeinformers.runtime.api.resource import LIST_WATCH_VERBS
from kubeinformers.testing.apiserver import api, create_only, write
from kubeinformers.testing.apiserver import objects as objs
from kubeinformers.testing.apiserver import render as rendering
from kubeinformers.testing.apiserver.dry_run import dry_run_of
from kubeinformers.testing.apiserver.errors import (
    ApiError,
    ObjDict,
    api_error,
    go_json_error,
    invalid,
    status_body,
    undecodable_body,
)
from kubeinformers.testing.apiserver.registry import Served
from kubeinformers.testing.apiserver.state import (
    ADMIN_USER,
    RequestInfo,
    ServerState,
    StateHTTPServer,
    denied,
    injected_failure,
    parse_request,
)
from kubeinformers.testing.apiserver.store import encode
from kubeinformers.testing.apiserver.structural import FieldValidation
from kubeinformers.testing.apiserver.watch_stream import WatchStreamHandler, _hard_close
from kubeinformers.testing.apiserver.write import APPLY_PATCH

log = logging.getLogger("kubeinformers.testing.local_api_server")

_FLOW_SCHEMA_UID = str(uuid.uuid4())
_PRIORITY_LEVEL_UID = str(uuid.uuid4())
_PUBLIC_PATHS = ("/version", "/healthz", "/livez", "/readyz")
# What writing to a client that has hung up raises (plain HTTP, or TLS).
_CLIENT_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, ssl.SSLError)


class Handler(WatchStreamHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: headers and body go out as separate writes; with Nagle's algorithm every
    # request on a keep-alive connection would wait ~40 ms for the client's delayed ACK.
    disable_nagle_algorithm = True
    server: LocalHTTPServer

    def setup(self) -> None:
        super().setup()
        with self.server.state.conn_lock:
            self.server.state.connections.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        with self.server.state.conn_lock:
            self.server.state.connections.discard(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    # --- responses ---------------------------------------------------------------------------

    def _start(
        self,
        code: int,
        content_type: str,
        headers: Mapping[str, str],
        warnings: Sequence[str] = (),
    ) -> None:
        self.send_response_only(code)
        self.send_header("Date", self.date_time_string())
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Content-Type", content_type)
        if self._authenticated:
            self.send_header("X-Kubernetes-Pf-Flowschema-Uid", _FLOW_SCHEMA_UID)
            self.send_header("X-Kubernetes-Pf-Prioritylevel-Uid", _PRIORITY_LEVEL_UID)
        for k, v in headers.items():
            self.send_header(k, v)
        for warning in warnings:  # one header line each, as Go's server writes them
            self.send_header("Warning", warning)

    def _send(
        self,
        code: int,
        body: bytes,
        content_type: str = "application/json",
        headers: Mapping[str, str] | None = None,
        warnings: Sequence[str] = (),
    ) -> None:
        self._start(code, content_type, headers or {}, warnings)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.log_request(code)

    def _send_json(
        self,
        code: int,
        obj: Any,
        headers: Mapping[str, str] | None = None,
        warnings: Sequence[str] = (),
    ) -> None:
        self._send(code, encode(obj), headers=headers, warnings=warnings)

    def _send_error(self, err: ApiError) -> None:
        headers = dict(err.headers)
        if err.code == 403 and "X-Content-Type-Options" not in headers:
            headers["X-Content-Type-Options"] = "nosniff"
        self._send_json(err.code, err.body, headers, err.warnings)

    def _page_not_found(self) -> None:
        self._send(
            404,
            b"404 page not found\n",
            "text/plain; charset=utf-8",
            {"X-Content-Type-Options": "nosniff"},
        )

    # --- dispatch ----------------------------------------------------------------------------

    def _dispatch(self, method: str) -> None:
        state = self.server.state
        self._authenticated = False
        self._streaming = False
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if state.faults.latency:
            time.sleep(state.faults.latency)
        info = parse_request(method, url.path, query)
        try:
            user = self._authenticate(state)
            self._authorize(state, user, info, url.path)
            failure = state.faults.take_failure(info.verb)
            if failure is not None:
                raise injected_failure(*failure)
            if not info.is_resource:
                self._discovery(state, url.path, info)
                return
            served = state.registry.lookup(info.group, info.version, info.resource)
            if served is None:
                self._not_served(state, info)
                return
            _check_method(served, info)
            if info.verb == "create" and create_only.is_create_only(served, info):
                target = dry_run_of(state.store, query.get("dryRun"), "CreateOptions")
                if target.dry and info.subresource == "token":
                    raise _no_dry_run()  # a token issued would be taken: not done here
                code, answer = create_only.answer(
                    state, served, info, user, _body(raw, served), self._manager(query), target
                )
                self._send_json(code, answer)
                return
            self._resource(state, served, info, query, raw)
        except ApiError as err:
            self._send_unless_gone(self._send_error, err)
        except _CLIENT_GONE:
            self.close_connection = True
        except Exception as err:  # a bug in the test server must not hang the client
            log.exception("LocalApiServer failed on %s %s", method, self.path)
            if self._streaming:  # the 200 is out already: all we can do is cut the stream
                self.close_connection = True
                _hard_close(self.connection)
                return
            body = status_body(500, "InternalError", f"Internal error occurred: {err}")
            self._send_unless_gone(self._send_json, 500, body)

    def _send_unless_gone(self, send: Callable[..., None], *args: Any) -> None:
        """Answer with an error, unless the client has hung up meanwhile (a watch dropped, a
        request given up): then the connection just closes, as for a success answer, instead
        of the socket server printing a traceback to stderr."""
        try:
            send(*args)
        except _CLIENT_GONE:
            self.close_connection = True

    def _not_served(self, state: ServerState, info: RequestInfo) -> None:
        """404 for a path no resource serves: a JSON Status inside a known group/version and
        inside any version of a built-in group (its handler owns the whole /apis/<group>/
        prefix), the mux's plain-text "404 page not found" elsewhere (an unknown group, or an
        unknown version of a CRD's group), as kube-apiserver answers."""
        if info.version in state.registry.group_versions().get(
            info.group, []
        ) or state.registry.is_builtin_group(info.group):
            raise api_error(404, "NotFound", "the server could not find the requested resource", {})
        self._page_not_found()

    def _authenticate(self, state: ServerState) -> str:
        """The user name; 401 for a token nobody has (anonymous when there is no header)."""
        header = self.headers.get("Authorization", "")
        token = header[7:] if header.startswith("Bearer ") else None
        user: str | None = None
        if state.token is None or (token is not None and token == state.token):
            user = ADMIN_USER
        elif not header:
            user = "system:anonymous"
        elif token is not None:
            user = state.users.get(token)
        if user is not None:
            self._authenticated = True  # gets the flow-control (APF) headers from here on
            return user
        raise api_error(401, "Unauthorized", "Unauthorized")

    def _authorize(self, state: ServerState, user: str, info: RequestInfo, path: str) -> None:
        if user == ADMIN_USER and not (info.is_resource and denied(state, info)):
            return
        if user != "system:anonymous" and create_only.anyone_may_ask(info):
            return  # system:basic-user's: every signed-in user may ask about themselves
        if not info.is_resource:
            if path in _PUBLIC_PATHS or user != "system:anonymous":
                return
            raise api_error(
                403, "Forbidden", f'forbidden: User "{user}" cannot {info.verb} path "{path}"', {}
            )
        res = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        where = f'in the namespace "{info.namespace}"' if info.namespace else "at the cluster scope"
        subject = f"{info.resource}.{info.group}" if info.group else info.resource
        if info.name:
            subject += f' "{info.name}"'
        details: ObjDict = {"name": info.name} if info.name else {}
        if info.group:
            details["group"] = info.group
        details["kind"] = info.resource
        raise api_error(
            403,
            "Forbidden",
            f'{subject} is forbidden: User "{user}" cannot '
            f'{info.verb} resource "{res}" in API group "{info.group}" {where}',
            details,
        )

    # --- resources ---------------------------------------------------------------------------

    def _manager(self, query: Mapping[str, str]) -> str:
        return (
            query.get("fieldManager") or (self.headers.get("User-Agent") or "unknown").split("/")[0]
        )

    def _resource(
        self,
        state: ServerState,
        served: Served,
        info: RequestInfo,
        query: Mapping[str, str],
        raw: bytes,
    ) -> None:
        store, reg, ns = state.store, state.registry, info.namespace
        status_only = info.subresource == "status"
        part = info.subresource if (*served.skey, info.subresource) in objs.PARTS else ""
        if info.subresource and not (status_only and served.status_subresource) and not part:
            raise api_error(404, "NotFound", "the server could not find the requested resource", {})
        verb = info.verb
        if part and verb not in ("get", "update", "patch"):
            raise api_error(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
                {},
            )
        if query.get("dryRun") and verb not in _DRY_RUN_OPTIONS:
            raise _no_dry_run()  # deletecollection: not done here
        out = rendering.negotiate(self.headers.get("Accept", ""))  # 406 before any work, as kube
        if verb == "watch":
            if info.name:
                query = dict(
                    query,
                    fieldSelector=",".join(
                        s for s in (query.get("fieldSelector"), f"metadata.name={info.name}") if s
                    ),
                )
            plan = api.plan_watch(
                store,
                served,
                ns,
                query,
                state.faults.watch_list_supported,
                state.too_large_wait,
                out,
                sharding=state.sharded_list_and_watch,
            )
            self._stream(state, plan)
        elif verb == "list":
            result = api.list_objects(
                store,
                served,
                ns,
                query,
                state.too_large_wait,
                sharding=state.sharded_list_and_watch,
            )
            self._send_json(200, rendering.list_as(store, served, result, out))
        elif verb == "get":
            self._send_json(
                200, rendering.render_as(write.get(store, served, ns, info.name), served, out)
            )
        elif verb in ("create", "update", "patch"):
            checks = FieldValidation.of_query(query.get("fieldValidation"))
            try:
                code, obj = self._write(state, served, info, query, raw, checks, part)
            except ApiError as err:  # the body's unknown fields are told with the error too
                err.warnings = checks.warnings()
                raise
            self._send_json(code, rendering.render_as(obj, served, out), warnings=checks.warnings())
        elif verb == "delete":
            body = _delete_options(raw) if raw else {}
            target = dry_run_of(store, query.get("dryRun"), _DRY_RUN_OPTIONS["delete"])
            code, obj = write.delete(
                target, reg, served, ns, info.name, body if isinstance(body, dict) else {}
            )
            self._send_json(
                code, rendering.render_as(obj, served, out) if obj.get("kind") != "Status" else obj
            )
        elif verb == "deletecollection":
            labels, fields, _ = api.selectors(served, query)
            target = dry_run_of(store, query.get("dryRun"), _DRY_RUN_OPTIONS["delete"])
            gone = write.delete_collection(
                target,
                reg,
                served,
                ns,
                lambda o: labels(o["metadata"].get("labels") or {}) and fields(o),
            )
            self._send_json(
                200,
                rendering.list_as(store, served, rendering.ListResult(store.rv, gone), out),
            )
        else:
            raise api_error(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
                {},
            )

    def _write(
        self,
        state: ServerState,
        served: Served,
        info: RequestInfo,
        query: Mapping[str, str],
        raw: bytes,
        checks: FieldValidation,
        part: str,
    ) -> tuple[int, ObjDict]:
        """A create, update or patch (`part`: through a subresource of objs.PARTS): its status
        code and the object written (or that would be, for a dry run)."""
        store = dry_run_of(state.store, query.get("dryRun"), _DRY_RUN_OPTIONS[info.verb])
        reg, ns = state.registry, info.namespace
        status_only = info.subresource == "status"
        manager = self._manager(query)
        if info.verb == "create":
            return 201, write.create(store, reg, served, ns, _body(raw, served), manager, checks)
        if info.verb == "update":
            body = _body(raw, served)
            return 200, write.update(
                store, reg, served, ns, info.name, body, manager, status_only, part, checks
            )
        content_type = self.headers.get("Content-Type", "")
        if content_type.split(";")[0].strip() == APPLY_PATCH and not query.get("fieldManager"):
            raise invalid(
                "PatchOptions",
                "meta.k8s.io",
                "",
                [
                    (
                        "FieldValueRequired",
                        "fieldManager",
                        "Required value: is required for apply patch",
                    )
                ],
                details_name=False,
            )
        created, obj = write.patch(
            store,
            reg,
            served,
            ns,
            info.name,
            raw,
            content_type,
            manager,
            status_only,
            part,
            checks,
            query.get("force") == "true",
        )
        return (201 if created else 200), obj

    # --- discovery ---------------------------------------------------------------------------

    def _discovery(self, state: ServerState, path: str, info: RequestInfo) -> None:
        path = path.rstrip("/") or "/"
        gvs = state.registry.group_versions()
        if path == "/version":
            self._send_json(
                200,
                {
                    "major": "1",
                    "minor": "36",
                    "emulationMajor": "1",
                    "emulationMinor": "36",
                    "gitVersion": "v1.36.2-kubeinformers-local",
                    "platform": "linux/amd64",
                },
            )
        elif path in ("/healthz", "/livez", "/readyz"):
            self._send(
                200, b"ok", "text/plain; charset=utf-8", {"X-Content-Type-Options": "nosniff"}
            )
        elif path == "/api":
            self._send_json(
                200,
                {
                    "kind": "APIVersions",
                    "versions": gvs.get("", ["v1"]),
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": self.server.address()}
                    ],
                },
            )
        elif path == "/apis":
            self._send_json(
                200,
                {
                    "kind": "APIGroupList",
                    "apiVersion": "v1",
                    "groups": [_group(g, vs) for g, vs in sorted(gvs.items()) if g],
                },
            )
        elif info.group and not info.version and info.group in gvs:
            self._send_json(
                200, dict(_group(info.group, gvs[info.group]), kind="APIGroup", apiVersion="v1")
            )
        elif info.version and info.version in gvs.get(info.group, []):
            gv = f"{info.group}/{info.version}" if info.group else info.version
            resources: list[ObjDict] = []
            for s in state.registry.in_group_version(info.group, info.version):
                resources.append(
                    {
                        "name": s.api.resource,
                        "singularName": s.api.singular_name,
                        "namespaced": s.api.namespaced,
                        "kind": s.api.kind,
                        "verbs": sorted(s.api.verbs),
                    }
                )
                if s.status_subresource:
                    resources.append(
                        {
                            "name": f"{s.api.resource}/status",
                            "singularName": "",
                            "namespaced": s.api.namespaced,
                            "kind": s.api.kind,
                            "verbs": ["get", "patch", "update"],
                        }
                    )
            self._send_json(
                200,
                {
                    "kind": "APIResourceList",
                    "apiVersion": "v1",
                    "groupVersion": gv,
                    "resources": resources,
                },
            )
        elif info.version or (not info.group and path.startswith("/api/")):
            self._not_served(state, info)
        else:
            self._page_not_found()


# The writes a dry run may ask for, with the options that carry it (their wording in a 422).
_DRY_RUN_OPTIONS = {
    "create": "CreateOptions",
    "update": "UpdateOptions",
    "patch": "PatchOptions",
    "delete": "DeleteOptions",
    "deletecollection": "DeleteOptions",
}


def _no_dry_run() -> ApiError:
    """Refused rather than written: a dry run that changed the store would mislead."""
    return api_error(
        400,
        "BadRequest",
        "LocalApiServer does not implement dryRun for a token request: test it against "
        "RealApiServer",
    )


def _check_method(served: Served, info: RequestInfo) -> None:
    """405 MethodNotAllowed for a method the path does not take (POST to an object, PUT or
    PATCH to a collection, anything but get/update/patch on /status) or a verb the resource
    does not serve (e.g. deletecollection of namespaces). A resource declared with only
    list/watch (`APIResource`'s default, as in hand-written test resources) accepts every verb."""
    verb = info.verb
    if info.subresource and not (info.subresource == "status" and served.status_subresource):
        return  # a subresource this server does not serve: 404 (`Handler._resource`)
    wrong_shape = (
        (verb == "create" and bool(info.name))
        or (verb in ("update", "patch") and not info.name)
        or (bool(info.subresource) and verb not in ("get", "update", "patch"))
    )
    declared = served.api.verbs != LIST_WATCH_VERBS
    if wrong_shape or (declared and not info.subresource and verb not in served.api.verbs):
        raise api_error(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
            {},
        )


def _group(name: str, versions: list[str]) -> ObjDict:
    vs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": vs, "preferredVersion": vs[0]}


def _body(raw: bytes, served: Served) -> Any:
    """The JSON object of a create/update; 400 worded as kube-apiserver's decoder words it."""
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise undecodable_body(raw, served.api.kind) from None


def _delete_options(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        why = go_json_error(raw.decode("utf-8", "replace"))
        raise api_error(
            400, "BadRequest", f"couldn't get version/kind; json parse error: {why}"
        ) from None


class LocalHTTPServer(StateHTTPServer):
    """ThreadingHTTPServer with per-connection TLS handshakes off the accept loop."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, port: int, state: ServerState, ssl_context: ssl.SSLContext | None) -> None:
        self.state = state
        self.ssl_context = ssl_context
        super().__init__(("127.0.0.1", port), Handler)

    def address(self) -> str:
        host, port = self.server_address[:2]
        return f"{host!s}:{port}"

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.ssl_context is not None:
            try:
                request.settimeout(10)
                request = self.ssl_context.wrap_socket(request, server_side=True)
                request.settimeout(None)
            except (ssl.SSLError, OSError):
                return
        try:
            Handler(request, client_address, self)
        finally:
            if self.ssl_context is not None:
                try:
                    request.close()
                except OSError:
                    pass
