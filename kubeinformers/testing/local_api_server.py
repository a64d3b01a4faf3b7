"""LocalApiServer: a real HTTP(S) server on 127.0.0.1 that speaks the Kubernetes REST protocol.

For tests and demos: list (resourceVersion semantics, paging with continue tokens, label and
field selectors), watch (chunked JSON lines, BOOKMARKs, watch-list with the initial-events-end
bookmark, 410 on compacted versions), metadata-only answers (Accept
`...;as=PartialObjectMetadata(List);g=meta.k8s.io;v=v1`, as metadata informers ask) and
Tables for lists, create/get/update/patch/delete for any registered resource, CRDs that
start serving their kind when created, bearer-token authentication and per-resource denials,
and fault hooks (dropped watches, 429/500 answers, latency, restarts, compaction, corrupted
watch lines). Behaviour is checked against recorded transcripts of a real
kube-apiserver 1.36 (tests/testing/test_transcripts.py) and, where its binaries are at hand,
side by side with a running one (tests/e2e/test_fake_matches_real.py).

    with LocalApiServer(tls=True, token="s3cret") as server:
        core = kubernetes.client.CoreV1Api(server.api_client())
        core.create_namespace({"metadata": {"name": "demo"}})
        server.fail_next(2, status=429, retry_after=1)

Known differences from a real kube-apiserver (none of them visible to list/watch clients):
the defaults of only the built-in kinds a controller writes most (pods, pod templates,
workloads, Jobs, CronJobs, Services, Secrets: `testing.apiserver.defaults`), the admission a
pod passes reduced to its priority and default tolerations; a resource declared with
only list/watch (APIResource's default) accepts every verb; a strategic merge patch merges a
built-in kind's keyed lists by key (a pod's containers by name) but applies none of the
`$setElementOrder`, `$retainKeys` or `$deleteFromPrimitiveList` directives; a custom resource is pruned and defaulted by its version's schema as
the real server does (unknown fields dropped unless preserved, each told in a `Warning`
header or refused with `fieldValidation=Strict`; nulls dropped or defaulted; defaults filled
in; status not taken on create), then validated (type, required, enum, bounds, length,
pattern, an embedded resource's apiVersion and kind), but only when written: a default added
to a CRD later does not show on objects stored before; a built-in kind keeps the fields it
does not know (the real server drops them with a warning), so a test can play a server newer
than the models; served versions of one resource share storage without conversion;
server-side apply keeps field ownership as the real server does (an apply owns what it sets,
a field another manager owns and the apply changes is a 409 unless forced, what it no longer
sets goes unless another manager owns it; an update takes the fields it changes; lists merge
as the schema says: a custom resource's by key or by value, a built-in kind's by key, its
sets whole), but it cannot refuse an apply's unknown field of a built-in kind; Table output uses the default columns (Name,
Created At) and only for lists (a get or watch asking for a Table gets the objects); only
JSON is served (an Accept naming only YAML or protobuf gets 406); a watch asking for
PartialObjectMetadataList is refused with 406 up front rather than after the 200; watches
without timeoutSeconds never time out; non-watch responses carry a Content-Length instead of
chunked encoding; deleting a namespace removes its content at once.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import shutil
import ssl
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, cast

import msgspec
import yaml

from kubeinformers.runtime.api.errors import error_class
from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.runtime.codec.gc_pause import gc_paused
from kubeinformers.testing.apiserver import write
from kubeinformers.testing.apiserver.errors import ApiError
from kubeinformers.testing.apiserver.http import LocalHTTPServer
from kubeinformers.testing.apiserver.objects import CRDS, NAMESPACES, ObjDict
from kubeinformers.testing.apiserver.registry import Registry, Served, builtin
from kubeinformers.testing.apiserver.state import ServerState
from kubeinformers.testing.apiserver.store import CLOSE_CLEAN, CLOSE_DROP, Store
from kubeinformers.testing.apiserver.tls import serving_certificate

log = logging.getLogger("kubeinformers.testing.local_api_server")

_T = TypeVar("_T")

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def _builtin_resources() -> tuple[APIResource, ...]:
    """The generated registry's resources, or none yet (then pass `resources=`)."""
    try:
        from kubeinformers.generated.registry import RESOURCES  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        log.warning(
            "kubeinformers.generated.registry is missing: LocalApiServer serves only "
            "namespaces, CRDs and the resources you pass"
        )
        return ()
    return tuple(RESOURCES)


_json_encode = msgspec.json.Encoder().encode
_json_decode = msgspec.json.Decoder().decode
_PAUSE_GC_ABOVE = 1 << 20  # bytes of JSON


def _copy_in(obj: Mapping[str, Any]) -> ObjDict:
    """A private deep copy of a caller's object, as if it had come over HTTP as JSON.

    The server must own what it stores: a caller changing its dict afterwards must not
    change the server (no event, no resourceVersion) or its history. A JSON round trip is
    ~5x faster than copy.deepcopy for a realistic pod and rejects what JSON cannot carry."""
    try:
        out = _json_decode(_json_encode(obj))
    except (TypeError, msgspec.EncodeError) as err:
        raise TypeError(
            f"LocalApiServer stores JSON objects: {err} (in the object given for "
            f"{obj.get('kind', '?')} {(obj.get('metadata') or {}).get('name', '?')!r})"
        ) from None
    if not isinstance(out, dict):
        raise TypeError(f"LocalApiServer stores JSON objects, not {type(obj).__qualname__}")
    return out


def _copy_out(obj: _T) -> _T:
    """A deep copy of stored state for a caller (who may change it freely).

    Many objects at once are decoded with the cyclic GC paused: they cannot form cycles,
    and the collections their allocation triggers would cost more than the copy itself
    (10,000 pods: ~0.4 s instead of ~1.2 s)."""
    data = _json_encode(obj)
    if len(data) < _PAUSE_GC_ABOVE:
        return cast(_T, _json_decode(data))
    with gc_paused(max_seconds=30):
        return cast(_T, _json_decode(data))


@contextlib.contextmanager
def _api_errors() -> Iterator[None]:
    """The direct methods raise what the typed client raises for the same request:
    `kubeinformers.Conflict`, `NotFound`, `AlreadyExists`, `Invalid`, ... (ApiStatusError),
    so `retry_on_conflict` and `except NotFound` work on them as on the client's calls."""
    try:
        yield
    except ApiError as e:
        body = e.body
        reason = str(body.get("reason", ""))
        details = body.get("details")
        raise error_class(e.code, reason)(
            e.code,
            reason,
            str(body.get("message", "")),
            details=details if isinstance(details, dict) else None,
        ) from None


def _check_namespace(served: Served, obj: Mapping[str, Any], namespace: object) -> None:
    if served.api.namespaced and not namespace:
        name = (obj.get("metadata") or {}).get("name", "")
        raise ValueError(
            f"{served.api.kind} {name!r} is namespaced: set its metadata.namespace "
            "(LocalApiServer's direct methods use no default namespace)"
        )


class LocalApiServer:
    """A local kube-apiserver look-alike; a context manager (start on enter, stop on exit).

    tls: serve HTTPS with a throw-away CA (clients from `api_client()` verify against it).
    token: the admin bearer token; None disables authentication (everyone is admin).
    users: extra tokens → user names that have no permissions at all (403 everywhere).
    resources: built-in resources to serve (default: the generated registry's RESOURCES);
        namespaces and customresourcedefinitions are always served.
    history_size: events kept for resuming watches and for lists at past versions; a
        resourceVersion older than that answers 410 Expired.
    bookmark_interval: seconds between periodic BOOKMARKs (the real server: about 60).
    forbidden: denials, each "pods", "pods:list,watch" or "deployments.apps:watch".
    too_large_rv_wait: how long a list for a future resourceVersion waits before the 504.
    sharded_list_and_watch: kube-apiserver's ShardedListAndWatch gate (KEP-5866, 1.36): lists
        and watches apply `shardSelector` and lists echo it in `metadata.shardInfo`; off (the
        default, as in 1.36), the parameter is ignored.
    """

    def __init__(
        self,
        tls: bool = False,
        token: str | None = None,
        *,
        resources: Iterable[APIResource] | None = None,
        history_size: int = 10_000,
        bookmark_interval: float = 60.0,
        forbidden: Iterable[str] = (),
        users: Mapping[str, str] | None = None,
        too_large_rv_wait: float = 3.0,
        namespaces: Iterable[str] = DEFAULT_NAMESPACES,
        port: int = 0,
        sharded_list_and_watch: bool = False,
    ) -> None:
        self.tls = tls
        self.token = token
        self._port = port
        registry = Registry()
        for res in _builtin_resources() if resources is None else resources:
            registry.add(builtin(res))
        registry.add(builtin(NAMESPACES))
        registry.add(builtin(CRDS))
        self._state = ServerState(
            store=Store(history_size),
            registry=registry,
            token=token,
            users=dict(users or {}),
            forbidden=frozenset(),
            bookmark_interval=bookmark_interval,
            too_large_wait=too_large_rv_wait,
            sharded_list_and_watch=sharded_list_and_watch,
        )
        for rule in forbidden:
            name, _, verbs = rule.partition(":")
            resource, _, group = name.partition(".")
            self.forbid(resource, verbs.split(",") if verbs else None, group=group)
        self._namespaces = tuple(namespaces)
        self._httpd: LocalHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._tmp: Path | None = None
        self._ssl: ssl.SSLContext | None = None
        self._lifecycle = threading.Lock()

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> LocalApiServer:
        with self._lifecycle:
            if self._httpd is not None:
                return self
            self._tmp = Path(tempfile.mkdtemp(prefix="kubeinformers-apiserver-"))
            if self.tls:
                cert = serving_certificate()
                (self._tmp / "ca.crt").write_text(cert.ca_pem)
                (self._tmp / "tls.crt").write_text(cert.cert_pem)
                (self._tmp / "tls.key").write_text(cert.key_pem)
                self._ssl = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                self._ssl.load_cert_chain(self._tmp / "tls.crt", self._tmp / "tls.key")
            for ns in self._namespaces:
                if self._state.store.get(("", "namespaces"), ns) is None:
                    self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            self._serve()
        return self

    def _serve(self) -> None:
        self._httpd = LocalHTTPServer(self._port, self._state, self._ssl)
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"local-apiserver-{self._port}",
            daemon=True,
        )
        self._thread.start()

    def _halt(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        self._state.store.close_watchers(CLOSE_DROP)
        with self._state.conn_lock:
            conns = list(self._state.connections)
        for conn in conns:
            try:
                conn.shutdown(2)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)

    def stop(self) -> None:
        with self._lifecycle:
            self._halt()
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None

    def __enter__(self) -> LocalApiServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- clients ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self._port}"

    @property
    def ca_file(self) -> Path | None:
        """The CA certificate clients must trust (None without TLS)."""
        return self._tmp / "ca.crt" if self.tls and self._tmp is not None else None

    def configuration(self) -> Any:
        """A `kubernetes.client.Configuration` for this server (TLS verification on)."""
        from kubernetes import client

        cfg = client.Configuration()
        cfg.host = self.url
        if self.tls:
            cfg.ssl_ca_cert = str(self.ca_file)
            cfg.verify_ssl = True
        if self.token is not None:
            cfg.api_key = {"authorization": self.token}
            cfg.api_key_prefix = {"authorization": "Bearer"}
        return cfg

    def api_client(self) -> Any:
        """A new `kubernetes.client.ApiClient` configured for this server."""
        from kubernetes import client

        return client.ApiClient(self.configuration())

    def kubeconfig(self) -> dict[str, Any]:
        cluster: dict[str, Any] = {"server": self.url}
        if self.tls:
            cluster["certificate-authority-data"] = base64.b64encode(
                serving_certificate().ca_pem.encode()
            ).decode()
        user: dict[str, Any] = {"token": self.token} if self.token is not None else {}
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "preferences": {},
            "clusters": [{"name": "local", "cluster": cluster}],
            "users": [{"name": "local", "user": user}],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": "local"}}],
            "current-context": "local",
        }

    def write_kubeconfig(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(yaml.safe_dump(self.kubeconfig(), sort_keys=False))
        return path

    # --- direct access (seeding without HTTP round trips) -------------------------------------
    # Objects go in and come out as deep copies: what a caller holds is never the server's.

    def _served_for(self, obj: Mapping[str, Any]) -> Served:
        api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
        group, _, version = api_version.rpartition("/")
        for gv_served in self._state.registry.in_group_version(group, version):
            if gv_served.api.kind == kind:
                return gv_served
        raise LookupError(
            f"LocalApiServer does not serve kind {kind!r} in {api_version!r}: pass it "
            "in resources= or create its CustomResourceDefinition first"
        )

    def create(self, obj: Mapping[str, Any], manager: str = "kube-apiserver") -> ObjDict:
        """Create like a POST would (same defaults, events and errors), without HTTP."""
        served = self._served_for(obj)
        ns = (obj.get("metadata") or {}).get("namespace")
        _check_namespace(served, obj, ns)
        with _api_errors():
            stored = write.create(
                self._state.store, self._state.registry, served, ns, _copy_in(obj), manager
            )
        return _copy_out(stored)

    def replace(self, obj: Mapping[str, Any], *, status: bool = False) -> ObjDict:
        """Update like a PUT would (409 Conflict on a stale resourceVersion)."""
        served = self._served_for(obj)
        meta = obj.get("metadata") or {}
        _check_namespace(served, obj, meta.get("namespace"))
        with _api_errors():
            stored = write.update(
                self._state.store,
                self._state.registry,
                served,
                meta.get("namespace"),
                meta["name"],
                _copy_in(obj),
                "kube-apiserver",
                status,
            )
        return _copy_out(stored)

    def delete(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> ObjDict:
        served = self._served_for({"apiVersion": api_version, "kind": kind})
        with _api_errors():
            _, last = write.delete(
                self._state.store, self._state.registry, served, namespace, name, {}
            )
        return _copy_out(last)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> ObjDict:
        served = self._served_for({"apiVersion": api_version, "kind": kind})
        with _api_errors():
            return _copy_out(write.get(self._state.store, served, namespace, name))

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[ObjDict]:
        """The current objects of a kind (all namespaces unless one is given)."""
        served = self._served_for({"apiVersion": api_version, "kind": kind})
        prefix = f"{namespace}/" if namespace and served.api.namespaced else ""
        objs = [o for _, o in self._state.store.current(served.skey, prefix)[1]]
        return _copy_out(objs)

    @property
    def resource_version(self) -> int:
        """The current (global) resourceVersion."""
        return self._state.store.rv

    # --- authorization -----------------------------------------------------------------------

    def forbid(
        self,
        resource: str,
        verbs: Iterable[str] | None = None,
        *,
        group: str = "",
        namespace: str | None = None,
    ) -> None:
        """Deny `verbs` (all when None) on a resource for every user (403 Forbidden)."""
        rules = {(verb, group, resource, namespace or "*") for verb in verbs or ("*",)}
        with self._state.faults.lock:
            self._state.forbidden = self._state.forbidden | rules

    def allow(
        self,
        resource: str,
        verbs: Iterable[str] | None = None,
        *,
        group: str = "",
        namespace: str | None = None,
    ) -> None:
        """Lift denials made by `forbid` (every verb / namespace when not given)."""
        with self._state.faults.lock:
            keep = set(self._state.forbidden)
            for rule in self._state.forbidden:
                same_ns = namespace is None or rule[3] == namespace
                if (
                    rule[1:3] == (group, resource)
                    and same_ns
                    and (verbs is None or rule[0] in verbs)
                ):
                    keep.discard(rule)
            self._state.forbidden = frozenset(keep)

    # --- fault hooks (thread-safe) -----------------------------------------------------------

    def drop_watches(self, *, clean: bool = False) -> int:
        """End every open watch now: cut the connection (default) or end the stream cleanly."""
        return self._state.store.close_watchers(CLOSE_CLEAN if clean else CLOSE_DROP)

    def fail_next(
        self,
        n: int = 1,
        status: int = 500,
        retry_after: float | None = None,
        *,
        verbs: Iterable[str] | None = None,
    ) -> None:
        """Answer the next `n` requests (optionally only these verbs: list, watch, get, create...)
        with `status` (500 InternalError, 429 TooManyRequests + Retry-After, 503, 410...).

        The failure is the HTTP answer itself, also for a watch; a real server reports a
        too-old resourceVersion on a watch as a 200 stream with an ERROR event instead: use
        `compact()` for that."""
        if status == 429 and retry_after is None:
            retry_after = 1
        only = frozenset(verbs) if verbs is not None else None
        with self._state.faults.lock:
            self._state.faults.fail.extend([(status, retry_after, only)] * n)

    def set_latency(self, seconds: float) -> None:
        """Delay every request by `seconds` before it is handled (0 to stop)."""
        self._state.faults.latency = max(0.0, seconds)

    def restart(self, keep_resource_versions: bool = True, *, downtime: float = 0.0) -> None:
        """Simulate an API server restart: every connection is cut, the port refuses
        connections for `downtime` seconds, then serves again with the same objects. As on a
        real server the watch cache starts again at the current resourceVersion: a watch from
        an older one gets 410 Expired (lists at older versions still work). With
        keep_resource_versions=False the counter restarts low (an etcd restored from backup):
        every object gets a new, smaller resourceVersion, so clients see 410 / "too large"."""
        with self._lifecycle:
            self._halt()
            if downtime:
                time.sleep(downtime)
            if not keep_resource_versions:
                self._state.store.renumber(start=1)
            self._state.store.restart_watch_cache()
            self._serve()

    def compact(self, *, watch_cache: bool = True) -> int:
        """Make every older resourceVersion answer 410 (lists at Exact/continue; with
        watch_cache also watches). Returns the resourceVersion compacted to."""
        return self._state.store.compact(watch_cache)

    def stall_initial_events_end(self, stalled: bool = True) -> None:
        """Hold back watch-list's initial-events-end BOOKMARK while stalled."""
        self._state.faults.stall_initial_events_end = stalled

    def corrupt_next_watch_line(self, n: int = 1) -> None:
        """Replace the next `n` watch event lines (any watch) with invalid JSON; the stream goes on."""
        with self._state.faults.lock:
            self._state.faults.corrupt_lines += n

    def truncate_next_watch_line(self, n: int = 1) -> None:
        """Send only half of the next watch event line, then cut that connection."""
        with self._state.faults.lock:
            self._state.faults.truncate_lines += n

    def set_watch_list_supported(self, supported: bool) -> None:
        """False: watch-list requests get the ERROR 500 an etcd without RequestWatchProgress gives."""
        self._state.faults.watch_list_supported = supported

    def set_bookmark_interval(self, seconds: float) -> None:
        """Period of BOOKMARKs for watches opened from now on."""
        self._state.bookmark_interval = seconds

    def open_watches(self) -> int:
        """How many watch streams are open right now."""
        with self._state.store.lock:
            return len(self._state.store.watchers)
