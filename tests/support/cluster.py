"""`Cluster`: the direct-access methods the e2e tests and the soak write and read through, served
by LocalApiServer itself and, over HTTP, by `RealCluster` for a real kube-apiserver.

LocalApiServer's `create/get/replace/delete/list` skip HTTP; against a real server they are
REST calls with the admin token. A real server has no backdoor, so `RealCluster` also has to
wait where the real thing is asynchronous (a CRD serves its kind only once Established), and to
ride out the moments after an apiserver restart (connection refused, 503, a 404 for paths not
installed yet) without repeating a write that already happened.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any, Protocol

import urllib3

from kubeinformers.runtime.client.auth import apply_auth
from kubeinformers.testing.real_apiserver import RealApiServer

ObjDict = dict[str, Any]


class Cluster(Protocol):
    """What tests need of a server, whichever it is."""

    @property
    def url(self) -> str: ...

    @property
    def resource_version(self) -> int: ...

    def api_client(self) -> Any: ...

    def create(self, obj: Mapping[str, Any]) -> ObjDict: ...

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> ObjDict: ...

    def replace(self, obj: Mapping[str, Any]) -> ObjDict: ...

    def delete(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> Any: ...

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[ObjDict]: ...


class NotFound(LookupError):
    """The object does not exist (a real 404 naming it, not a path that is not served yet)."""


_TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})


class StatusError(Exception):
    """A failure status from the server (the Status body kept for the test to look at)."""

    def __init__(self, method: str, path: str, status: int, body: bytes, retried: bool) -> None:
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        self.status = status
        self.body: dict[str, Any] = parsed if isinstance(parsed, dict) else {}
        self.retried = retried
        message = self.body.get("message") or body[:200].decode("utf-8", "replace")
        super().__init__(f"{method} {path}: HTTP {status}: {message}")

    @property
    def names_an_object(self) -> bool:
        """A 404 about a missing object names it; one for a path not served yet does not."""
        return bool((self.body.get("details") or {}).get("name"))


class RealCluster:
    """A RealApiServer's objects through LocalApiServer's direct-access method names.

    retry_for: seconds a request keeps retrying transient failures (apiserver restarting).
    """

    def __init__(self, server: RealApiServer, *, retry_for: float = 90.0) -> None:
        self.server = server
        self.retry_for = retry_for
        self._api = server.api_client()
        self._lock = threading.Lock()
        # (apiVersion, kind) -> (path prefix, plural, namespaced)
        self._kinds: dict[tuple[str, str], tuple[str, str, bool]] = {}
        from kubeinformers.generated.registry import RESOURCES

        for res in RESOURCES:
            self._register(res.group, res.version, res.kind, res.resource, res.namespaced)
        self._register("", "v1", "Namespace", "namespaces", False)
        self._register(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            False,
        )

    def close(self) -> None:
        self._api.close()

    def _register(self, group: str, version: str, kind: str, plural: str, namespaced: bool) -> None:
        api_version = f"{group}/{version}" if group else version
        prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
        self._kinds[(api_version, kind)] = (prefix, plural, namespaced)

    @property
    def url(self) -> str:
        return self.server.server

    def api_client(self) -> Any:
        return self.server.api_client()

    @property
    def resource_version(self) -> int:
        """etcd's current revision: the newest resourceVersion the server has handed out."""
        return self.server.etcd_revision()

    # --- requests -----------------------------------------------------------------------------

    def _path(self, api_version: str, kind: str, namespace: str | None, name: str | None) -> str:
        try:
            prefix, plural, namespaced = self._kinds[(api_version, kind)]
        except KeyError:
            raise LookupError(
                f"RealCluster does not know kind {kind!r} in {api_version!r}"
            ) from None
        path = prefix
        if namespaced and namespace:
            path += f"/namespaces/{namespace}"
        path += f"/{plural}"
        return path + (f"/{name}" if name else "")

    def _call(self, method: str, path: str, body: Any = None) -> ObjDict:
        """The JSON answer; StatusError for a failure status. One raised after a retry carries
        `retried=True`: an earlier attempt may have landed before its connection broke."""
        deadline = time.monotonic() + self.retry_for
        retried = False
        tick = threading.Event()
        url = self.url + path
        data = json.dumps(body).encode() if body is not None else None
        while True:
            headers = {"Accept": "application/json", "Content-Type": "application/json"}
            apply_auth(self._api, headers, [], path, method)
            try:
                response = self._api.rest_client.pool_manager.request(
                    method,
                    url,
                    body=data,
                    headers=headers,
                    timeout=urllib3.Timeout(connect=10.0, read=60.0),
                    retries=False,
                )
            except (urllib3.exceptions.HTTPError, OSError):
                if time.monotonic() > deadline:
                    raise
            else:
                if response.status < 300:
                    answer: ObjDict = json.loads(response.data)
                    return answer
                err = StatusError(method, path, response.status, response.data, retried)
                transient = err.status in _TRANSIENT_STATUS or (
                    err.status == 404 and not err.names_an_object
                )
                if not transient or time.monotonic() > deadline:
                    raise err
            retried = True
            tick.wait(0.2)

    # --- the direct-access methods ------------------------------------------------------------

    def create(self, obj: Mapping[str, Any]) -> ObjDict:
        meta = obj["metadata"]
        path = self._path(obj["apiVersion"], obj["kind"], meta.get("namespace"), None)
        try:
            created = self._call("POST", path, dict(obj))
        except StatusError as err:
            if err.status != 409 or not err.retried:
                raise
            # an earlier attempt of ours landed before the connection broke: it is ours
            created = self.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        if obj["kind"] == "CustomResourceDefinition":
            self._serve_crd(created)
        return created

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> ObjDict:
        try:
            obj = self._call("GET", self._path(api_version, kind, namespace, name))
        except StatusError as err:
            if err.status == 404:
                raise NotFound(f"{kind} {namespace}/{name}") from None
            raise
        return obj

    def replace(self, obj: Mapping[str, Any]) -> ObjDict:
        meta = obj["metadata"]
        path = self._path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
        try:
            replaced = self._call("PUT", path, dict(obj))
        except StatusError as err:
            if err.status != 409 or not err.retried:
                raise
            current = self.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
            return current  # our own earlier attempt landed (tests are the only writers)
        return replaced

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Any:
        try:
            gone = self._call("DELETE", self._path(api_version, kind, namespace, name))
        except StatusError as err:
            if err.status == 404 and err.retried:
                return None  # an earlier attempt of ours deleted it
            raise
        return gone

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[ObjDict]:
        answer = self._call("GET", self._path(api_version, kind, namespace, None))
        items: list[ObjDict] = answer.get("items") or []
        for item in items:  # a JSON list of built-in kinds leaves these out of its items
            item.setdefault("apiVersion", api_version)
            item.setdefault("kind", kind)
        return items

    def _serve_crd(self, crd: ObjDict, timeout: float = 60.0) -> None:
        """Register the CRD's kinds and wait until it is Established and its path answers."""
        spec = crd["spec"]
        group, names = spec["group"], spec["names"]
        namespaced = spec.get("scope") == "Namespaced"
        served = [v["name"] for v in spec["versions"] if v.get("served", True)]
        for version in served:
            self._register(group, version, names["kind"], names["plural"], namespaced)
        deadline = time.monotonic() + timeout
        tick = threading.Event()
        name = crd["metadata"]["name"]
        while time.monotonic() < deadline:
            current = self.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
            conditions = (current.get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                self.list(f"{group}/{served[0]}", names["kind"])  # retries a path not yet served
                return
            tick.wait(0.1)
        raise TimeoutError(f"CRD {name} not Established after {timeout:.0f} s")

    # --- conveniences -------------------------------------------------------------------------

    def namespace(self, name: str) -> str:
        """Create namespace `name` (a test's own); returns the name."""
        self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return name

    def ensure(self, obj: Mapping[str, Any]) -> ObjDict:
        """Create `obj` unless an object of that name exists (shared fixtures: CRDs)."""
        meta = obj["metadata"]
        try:
            return self.create(obj)
        except StatusError as err:
            if err.status != 409:
                raise
        existing = self.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        if obj["kind"] == "CustomResourceDefinition":
            self._serve_crd(existing)
        return existing
