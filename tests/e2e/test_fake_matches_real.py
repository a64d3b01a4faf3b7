"""LocalApiServer answers as a real kube-apiserver does (issue 13, item 4: the differential check).

Every case below sends the same request sequence to a LocalApiServer and to a real
kube-apiserver 1.36 + etcd (RealApiServer, one private server for the module, both over HTTPS
with an admin token and a user without permissions), at the same time, and compares what a
client sees: status codes, Content-Type, list kind/metadata keys/remainingItemCount/item names,
watch event types and order (objects by kind and name, bookmarks by their keys and the
initial-events-end annotation), whether the server ended the stream, and Status objects (code,
reason, message, details, causes, metadata keys). Taken out because they legitimately differ:
resourceVersion values (compared only as =/</> against one another), uids, timestamps,
managedFields and every other field of the objects, numbers inside messages. Where they
differed, the fake was fixed (kubeinformers/testing/_server_*.py).

| case | behaviour compared (rule IDs of the spec where they apply) |
|---|---|
| list_all, list_limit_0_is_no_limit | plain list; `limit=0` means no limit |
| list_limit_continue | pages of `limit=2`: continue + remainingItemCount, one snapshot RV for all pages (writes between pages not seen), last page has neither (D9) |
| list_rv0_ignores_limit | `resourceVersion=0` is served from the cache: `limit` ignored |
| list_rv_rules | legacy RV=N, NotOlderThan N, Exact N (the items as they were), Exact + limit paginates, RV 0 + NotOlderThan |
| list_rv_errors | 422 Invalid with causes: match without RV, Exact with RV 0, unknown match, sendInitialEvents on a list, continue with match; 400: continue with RV, malformed continue token, malformed RV, bad limit |
| future_rv_times_out | list NotOlderThan a future RV: 504 Timeout, cause ResourceVersionTooLarge, retryAfterSeconds; watch-list at a future RV: the same Status as an ERROR event in a 200 stream |
| list_selectors | label selectors (=, in, !=, exists, !exists), field selectors (metadata.name/namespace, =, !=), selector + limit (continue, no remainingItemCount), 400 for a bad label selector and an unsupported field (the resource's own wording) |
| list_other_scopes | a namespace that does not exist lists empty (200); the all-namespaces path pages |
| list_metadata_only | Accept `as=PartialObjectMetadataList` (metadata informers, J1): kinds, paging |
| watch_from_current_rv | ADDED, MODIFIED, DELETED from the current RV; a stale-RV update makes no event (D10) |
| watch_from_older_rv_replays | a watch from an older RV in the window replays what happened since |
| watch_without_rv | RV unset and RV 0: synthetic ADDED for every object, plus the initial-events-end bookmark when bookmarks are allowed |
| watch_future_rv | a watch from a future RV: 200, silent, kept open |
| watch_list | sendInitialEvents=true + NotOlderThan (D17-D20): ADDEDs, the end bookmark (its RV vs the last write), live events after it; without allowWatchBookmarks no end bookmark; at RV N, at RV 0, with a label selector; sendInitialEvents=false: only live events |
| watch_list_pods_bookmark_shape | a Pod bookmark carries `spec`/`status` beside kind/apiVersion/metadata |
| watch_option_errors | 422 for watch-list without NotOlderThan, with Exact, resourceVersionMatch without sendInitialEvents; 500 without reason for a malformed RV; 400 bad label selector |
| watch_selectors | label-selected watch: an object entering is ADDED, leaving is DELETED |
| watch_single_object | fieldSelector=metadata.name: only that object's events |
| watch_timeout_seconds | timeoutSeconds ends the stream cleanly (no ERROR) |
| watch_bookmarks_follow_the_resource | pre-timeout BOOKMARKs only once the resource's version moves past the watch: none on a quiet resource, one after a write in another namespace, none after a replay up to the resource's version (D10) |
| watch_deletions | finalizer: identical update no event, delete = MODIFIED (deletionTimestamp), finalizer removed = DELETED; an unscheduled pod's delete = MODIFIED then DELETED |
| watch_metadata_only | Accept `as=PartialObjectMetadata` on a watch-list: events and end bookmark are PartialObjectMetadata (J2) |
| auth_errors | 401 Unauthorized (list and watch, bad token); 403 Forbidden for a user without RBAC: list, get, cluster-wide list, create, watch (a plain 403, not in a stream), CRDs; messages name verb, resource, group, namespace (D3/D4) |
| not_found | 404 Status NotFound for an unknown object (get, delete) and an unknown resource or version of a built-in group; text/plain `404 page not found` for an unknown group (list and watch); create in a missing namespace; unknown subresource |
| method_not_allowed | 405 MethodNotAllowed: POST to an object, PUT or PATCH to a collection |
| create_only_kinds | M13: SelfSubjectAccessReview (admin, and a user without permissions: basic-user may ask), SubjectAccessReview, LocalSubjectAccessReview, TokenReview of an unknown token, SelfSubjectReview answered in `status`; GET of a review 405; Binding through `bindings` and `pods/<name>/binding`: 201 Status Success, the pod's nodeName, a second bind 409 Conflict |
| created_under_objects | M14: evictions of a pending pod (201 Status, pod gone), a missing pod, a ready pod whose PodDisruptionBudget is still being processed (429, Retry-After) or allows none (429, its cause); a TokenRequest's answer; a token for a missing service account |
| parts_written_as_the_kind | M15: a pod's resize (strategic patch) and ephemeralcontainers (PUT), a namespace's finalize (PUT): only their part taken, the rest kept; GET through one; POST to one |
| write_errors | 409 AlreadyExists; 409 Conflict on a stale-RV update; 422 Invalid with causes (bad name, pod without containers); 400 undecodable body; 400 namespace mismatch; 415 patch type; 409 delete precondition |
| custom_resources | a CRD's resource: paging, RV 0 (empty continue in the unstructured list), watch-list, a watch from before the CRD existed (ERROR 410 Expired in the stream), text/plain 404 for an unknown version of the CRD's group, 422 schema causes (as a set), required field |
| built_in_lists_merged_by_key | a Deployment's containers and their env merged by name in server-side apply (two managers side by side, a conflict on one container's image) and in strategic merge patches (a container named, an env var added: the patch's items first; a container deleted with `$patch: delete`) |
| built_in_defaults | M20: the defaults of pods and pod templates (containers, probes, ports, volumes, env), workloads, Jobs (selector, labels), CronJobs, Services (type, ports, addresses), Secrets (`stringData` into `data`), a pod's admission (priority, tolerations) and QoS class; again on an update that leaves them out |
| dry_run | `dryRun=All` on create, update, merge patch, apply, delete, delete of a collection, a pod's eviction and binding: what would be stored (no resourceVersion for a create), nothing stored, no version passed; AlreadyExists still; `dryRun=Yes` a 422 on CreateOptions |
| server_side_apply | an apply creates (201) and owns its fields; another manager's field: 409 naming it (an update's manager "using v1"), one conflict or several, unless forced; an equal value is shared; what an apply drops is removed unless another manager owns it; an update takes what it changed; fieldManager required; an apply through `status` is that subresource's, and the main resource's ignores status |
| custom_resources_pruned_and_defaulted | what is stored of a custom resource (create, status, update, merge patch): unknown fields pruned (kept under x-kubernetes-preserve-unknown-fields; an embedded resource's metadata keeps ObjectMeta's fields), nulls dropped or defaulted, defaults in defaulted objects, list items and map values; status dropped on create; the `unknown field` warnings (one Warning header each), `fieldValidation=Strict` (400, nothing written) and `Ignore`; an embedded resource without apiVersion (422); a Strict patch (422 on `patch`); an apply of an undeclared field (500, whatever fieldValidation) |
| test_expired_versions_after_restart_and_compaction | after an API server restart: watch from an older RV is an ERROR 410 Expired in a 200 stream, lists at Exact old RV and old continue tokens still work; after etcd compaction: the continue token is 410 Expired with a new inconsistent continue token (which works), Exact old RV 410 Expired, NotOlderThan old RV 200 |

Differences found and fixed in the fake: 405 for POST to an object / PUT or PATCH to a
collection / other verbs on /status / verbs a resource does not serve; dry runs (they were
refused with a 400); JSON 404 (not
text/plain) for an unknown version of a built-in group; bookmarks only once the resource's
watch-cache version is past the watch's position, carrying that version (the fake sent them at
the global version on quiet resources); a restart restarts the watch cache (older watches 410)
and a CRD's resource gets its watch cache when the CRD is created (a watch from before: 410);
field selectors: services' spec.clusterIP/spec.type, none of apps/v1 replicasets' own, the
per-resource wording of an unsupported field; Go's wording for undecodable bodies and continue
tokens, for bad integer parameters, for 415 and for delete preconditions; custom resources
stored as sent (now pruned and defaulted by their schema, status dropped on create).

Differences left, and why:
- etcd compacted while the apiserver runs: a real 1.36 server keeps serving continue tokens
  and Exact lists of recent versions from its watch cache's snapshots (it does not learn of a
  compaction made behind its back); `LocalApiServer.compact(watch_cache=False)` answers 410 at
  once, as the real server does once those versions left its cache (the recorded transcripts
  04-list-*-compacted show that). The fake's compact() exists to provoke those 410s in tests,
  so the compared sequence restarts the real apiserver first
  (test_expired_versions_after_restart_and_compaction).
- Several CRD schema causes: the real order is Go map order (random per request); compared as
  a set. A body cut off inside a literal (`nul`): the real decoder pads it and names ' ';
  the fake says "unexpected end of JSON input" — a malformed write, never on the informer path.
- resourceVersion of an RV=0 list: the real server's is that resource's watch-cache version
  (possibly older than the newest write elsewhere), the fake's the global one; values are not
  compared and an informer watches correctly from either.
- Not compared: headers (RealApiServer runs without API Priority and Fairness, so no
  X-Kubernetes-Pf-* headers; lists are chunked on the real server), the periodic 60 s
  bookmark (too slow; the pre-timeout ones are compared, consecutive ones collapsed as their
  number depends on timing), YAML/protobuf (the fake serves JSON only: 406), Tables, object
  contents of built-in kinds and their server-side defaulting (documented in
  local_api_server.py), 429 from priority
  and fairness (not provokable on the real server here).
- A built-in kind's strategic merge patch: lists merged by key (the built-ins' schemas), but
  `$setElementOrder`, `$retainKeys` and `$deleteFromPrimitiveList` are not applied, and a list
  of scalars is replaced. A built-in kind's unknown fields are kept (a server newer than the models is
  played that way), where the real server drops them with a warning. `managedFields` of
  updates: the maps an update created are marked "." as structured-merge-diff marks a map's,
  where the real server does not mark a built-in struct (`f:spec`); compared only for applies.
"""

from __future__ import annotations

import copy
import http.client
import json
import re
import ssl
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kubeinformers.testing.local_api_server import LocalApiServer
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.support.crds import structural_crd, widget_crd

pytestmark = pytest.mark.real_apiserver

FAKE_ADMIN, FAKE_NOPERMS = "diff-admin-token", "diff-noperms-token"
BAD_TOKEN = "not-a-token-anyone-has"
USER_AGENT = "kubeinformers-diff/1.0"  # not curl: compact JSON, as libraries get it
CM = "/api/v1/namespaces/{ns}/configmaps"
PODS = "/api/v1/namespaces/{ns}/pods"
WIDGETS = "/apis/example.com/v1/namespaces/{ns}/widgets"
END = "k8s.io/initial-events-end"


# --- one request sequence, two servers --------------------------------------------------------


@dataclass
class Reply:
    status: int
    content_type: str
    body: Any  # parsed JSON, or the raw bytes of anything else
    warnings: list[str] = field(default_factory=list)  # the Warning header lines


@dataclass
class WatchReply:
    status: int
    content_type: str
    events: list[dict[str, Any]]
    ended_by_server: bool
    error_body: Any = None


@dataclass
class Target:
    """A server under test, spoken to over HTTPS exactly the same way whichever it is."""

    name: str
    port: int
    ssl_context: ssl.SSLContext
    admin: str
    noperms: str
    restart: Callable[[], None]  # the API server restarts (its watch cache starts afresh)
    compact: Callable[[], None]  # etcd compacts at the current revision
    namespaces: set[str] = field(default_factory=set)

    def _conn(self, timeout: float) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(
            "127.0.0.1", self.port, context=self.ssl_context, timeout=timeout
        )

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = "admin",
        headers: dict[str, str] | None = None,
        timeout: float = 20.0,
    ) -> Reply:
        hdrs = {"User-Agent": USER_AGENT, **(headers or {})}
        tok = {"admin": self.admin, "noperms": self.noperms}.get(token or "", token)
        if tok:
            hdrs["Authorization"] = f"Bearer {tok}"
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        conn = self._conn(timeout)
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        ctype = resp.getheader("Content-Type") or ""
        warnings = resp.msg.get_all("Warning") or []
        return Reply(resp.status, ctype, json.loads(raw) if "json" in ctype else raw, warnings)

    def watch(
        self,
        path: str,
        *,
        then: Callable[[], None] | None = None,
        until: Callable[[list[dict[str, Any]]], bool] = lambda _: False,
        seconds: float = 1.5,
        token: str = "admin",
        headers: dict[str, str] | None = None,
    ) -> WatchReply:
        """Open a watch, run `then` once the 200 is in, read events until `until` holds, the
        server ends the stream, or `seconds` pass."""
        hdrs = {"User-Agent": USER_AGENT, **(headers or {})}
        hdrs["Authorization"] = "Bearer " + {"admin": self.admin, "noperms": self.noperms}.get(
            token, token
        )
        conn = self._conn(20.0)
        try:
            conn.request("GET", path, headers=hdrs)
            resp = conn.getresponse()
            ctype = resp.getheader("Content-Type") or ""
            if resp.status != 200:
                raw = resp.read()
                return WatchReply(
                    resp.status, ctype, [], True, json.loads(raw) if "json" in ctype else raw
                )
            if then is not None:
                then()
            events: list[dict[str, Any]] = []
            deadline = time.monotonic() + seconds
            ended = False
            while not until(events):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                assert conn.sock is not None
                conn.sock.settimeout(left)
                try:
                    line = resp.readline()
                except TimeoutError:
                    break
                if not line:
                    ended = True
                    break
                events.append(json.loads(line))
            return WatchReply(200, ctype, events, ended)
        finally:
            conn.close()

    def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        reply = self.request("POST", path, obj)
        assert reply.status == 201, (self.name, path, reply)
        return reply.body  # type: ignore[no-any-return]

    def namespace(self, name: str, configmaps: int = 5) -> tuple[str, int]:
        """A fresh namespace with configmaps c0..c(n-1) (labels i=<n>, even=true|false);
        returns it and the resourceVersion of the last write."""
        assert name not in self.namespaces, f"namespace {name} used twice"
        self.namespaces.add(name)
        rv = int(
            self.create("/api/v1/namespaces", {"metadata": {"name": name}})["metadata"][
                "resourceVersion"
            ]
        )
        for i in range(configmaps):
            rv = int(
                self.create(CM.format(ns=name), configmap(f"c{i}", i))["metadata"][
                    "resourceVersion"
                ]
            )
        return name, rv

    def list_rv(self, path: str) -> int:
        return int(self.request("GET", path).body["metadata"]["resourceVersion"])


def configmap(name: str, i: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "labels": {"i": str(i), "even": "true" if i % 2 == 0 else "false"},
        },
        "data": {"k": name},
        **extra,
    }


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "diff"}},
        "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1"}]},
    }


# --- what is compared: observations with what legitimately differs taken out ---------------------

_NUMBER = re.compile(r"\d+")


def text(message: str) -> str:
    """A message with its numbers (resourceVersions, ports) taken out."""
    return _NUMBER.sub("N", message)


def status(body: Any) -> dict[str, Any]:
    """A Status as clients branch on it: code, reason, message, details (no uid). Several
    causes are compared as a set: a CRD schema's come in Go map order, random per request."""
    details = dict(body.get("details") or {})
    details.pop("uid", None)
    message = text(body.get("message", ""))
    causes = details.get("causes")
    if causes:
        details["causes"] = sorted(
            (dict(c, message=text(c.get("message", ""))) for c in causes), key=str
        )
        if len(causes) > 1:  # "X is invalid: [cause, cause]": the list is the causes again
            message = message.split(": [", 1)[0]
    return {
        "kind": body.get("kind"),
        "status": body.get("status"),
        "code": body.get("code"),
        "reason": body.get("reason"),
        "message": message,
        "details": details,
        "metadata": sorted(body.get("metadata") or {}),
    }


def shape(reply: Reply) -> dict[str, Any]:
    out: dict[str, Any] = {"status": reply.status, "content-type": reply.content_type}
    body = reply.body
    if not isinstance(body, dict):
        out["body"] = body
        return out
    kind = body.get("kind", "")
    if kind == "Status":
        out["Status"] = status(body)
    elif "items" in body:
        meta = body.get("metadata") or {}
        out.update(
            kind=kind,
            apiVersion=body.get("apiVersion"),
            metadata=sorted(meta),
            remainingItemCount=meta.get("remainingItemCount"),
            names=[i["metadata"]["name"] for i in body["items"]],
        )
    else:
        out.update(kind=kind, apiVersion=body.get("apiVersion"), name=body["metadata"]["name"])
    return out


def event(ev: dict[str, Any]) -> tuple[Any, ...]:
    obj = ev["object"]
    typ = ev["type"]
    if typ == "ERROR":
        return (typ, tuple(sorted(status(obj).items(), key=str)))
    meta = obj.get("metadata") or {}
    if typ == "BOOKMARK":
        end = (meta.get("annotations") or {}).get(END)
        return (typ, obj.get("kind"), tuple(sorted(obj)), tuple(sorted(meta)), end)
    return (typ, obj.get("kind"), meta.get("name"))


def _moved_by_others(ev: dict[str, Any], writes_up_to: int | None) -> bool:
    """A BOOKMARK past the newest write the case made: the real server's own writes (its
    identity Lease, renewed every 10 s) moved the version, which a loaded machine's slower
    watch lets in; the fake has no such writer."""
    if writes_up_to is None or ev["type"] != "BOOKMARK":
        return False
    version = (ev["object"].get("metadata") or {}).get("resourceVersion") or "0"
    return int(version) > writes_up_to


def watch_shape(
    reply: WatchReply, collapse_bookmarks: bool = False, writes_up_to: int | None = None
) -> dict[str, Any]:
    if reply.status != 200:
        return shape(Reply(reply.status, reply.content_type, reply.error_body))
    events = [event(e) for e in reply.events if not _moved_by_others(e, writes_up_to)]
    if collapse_bookmarks:  # how many periodic bookmarks fit in is a matter of timing
        events = [e for i, e in enumerate(events) if not (i and e == events[i - 1])]
    return {
        "status": reply.status,
        "content-type": reply.content_type,
        "events": events,
        "ended by server": reply.ended_by_server,
    }


# --- the cases ----------------------------------------------------------------------------------

Case = Callable[[Target], Any]
CASES: dict[str, Case] = {}


def case(fn: Case) -> Case:
    CASES[fn.__name__] = fn
    return fn


@case
def list_all(t: Target) -> Any:
    ns, _ = t.namespace("list-all")
    return shape(t.request("GET", CM.format(ns=ns)))


@case
def list_limit_continue(t: Target) -> Any:
    ns, _ = t.namespace("list-limit")
    pages, token, rvs = [], "", set()
    for _ in range(4):
        reply = t.request(
            "GET", CM.format(ns=ns) + "?limit=2" + (f"&continue={token}" if token else "")
        )
        pages.append(shape(reply))
        rvs.add(reply.body["metadata"]["resourceVersion"])
        token = reply.body["metadata"].get("continue", "")
        if not token:
            break
        t.create(CM.format(ns=ns), configmap(f"late{len(pages)}"))  # not in the snapshot
    return pages, len(rvs)


@case
def list_limit_0_is_no_limit(t: Target) -> Any:
    ns, _ = t.namespace("list-limit0")
    return shape(t.request("GET", CM.format(ns=ns) + "?limit=0"))


@case
def list_rv0_ignores_limit(t: Target) -> Any:
    ns, _ = t.namespace("list-rv0")
    return shape(t.request("GET", CM.format(ns=ns) + "?resourceVersion=0&limit=2"))


@case
def list_rv_rules(t: Target) -> Any:
    ns, rv = t.namespace("list-rv")
    t.request("DELETE", CM.format(ns=ns) + "/c0")
    t.create(CM.format(ns=ns), configmap("c9", 9))
    base = CM.format(ns=ns)
    out = {}
    for label, q in (
        ("legacy N", f"resourceVersion={rv}"),
        ("NotOlderThan N", f"resourceVersion={rv}&resourceVersionMatch=NotOlderThan"),
        ("Exact N (before the delete)", f"resourceVersion={rv}&resourceVersionMatch=Exact"),
        ("Exact N limit 2", f"resourceVersion={rv}&resourceVersionMatch=Exact&limit=2"),
        ("rv 0 NotOlderThan", "resourceVersion=0&resourceVersionMatch=NotOlderThan"),
    ):
        reply = t.request("GET", f"{base}?{q}")
        got = shape(reply)
        if reply.status == 200:
            got["rv vs N"] = _cmp(int(reply.body["metadata"]["resourceVersion"]), rv)
        out[label] = got
    return out


def _cmp(a: int, b: int) -> str:
    return "=" if a == b else (">" if a > b else "<")


@case
def list_rv_errors(t: Target) -> Any:
    ns, rv = t.namespace("list-rv-errors")
    base = CM.format(ns=ns)
    token = t.request("GET", f"{base}?limit=2").body["metadata"]["continue"]
    out = {}
    for label, q in (
        ("match without rv", "resourceVersionMatch=NotOlderThan"),
        ("Exact with rv 0", "resourceVersion=0&resourceVersionMatch=Exact"),
        ("unknown match", f"resourceVersion={rv}&resourceVersionMatch=Newest"),
        ("continue with rv", f"continue={token}&resourceVersion={rv}"),
        ("continue with match", f"continue={token}&resourceVersionMatch=NotOlderThan"),
        ("malformed continue", "continue=bm90LWEtdG9rZW4"),
        ("malformed rv", "resourceVersion=abc"),
        ("sendInitialEvents on a list", "sendInitialEvents=true"),
        ("bad limit", "limit=many"),
    ):
        out[label] = shape(t.request("GET", f"{base}?{q}"))
    return out


@case
def future_rv_times_out(t: Target) -> Any:
    ns, rv = t.namespace("future-rv", configmaps=1)
    base, future = CM.format(ns=ns), rv + 1000
    with ThreadPoolExecutor(2) as pool:  # both wait for the version to turn up: at once
        listed = pool.submit(
            t.request, "GET", f"{base}?resourceVersion={future}&resourceVersionMatch=NotOlderThan"
        )
        watched = pool.submit(
            t.watch,
            f"{base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
            f"&allowWatchBookmarks=true&resourceVersion={future}",
            seconds=8,
        )
        return {"list": shape(listed.result()), "watch-list": watch_shape(watched.result())}


@case
def list_selectors(t: Target) -> Any:
    ns, _ = t.namespace("list-selectors")
    base = CM.format(ns=ns)
    out = {}
    for q in (
        "labelSelector=even%3Dtrue",
        "labelSelector=i+in+(1,3)",
        "labelSelector=even!%3Dtrue,i",
        "labelSelector=!missing",
        "fieldSelector=metadata.name%3Dc1",
        "fieldSelector=metadata.name!%3Dc1",
        "fieldSelector=metadata.namespace%3D" + ns,
        "labelSelector=even%3Dtrue&limit=1",
        "fieldSelector=metadata.name!%3Dc1&limit=2",
        "labelSelector=even%3D%3D%3Dx",
        "fieldSelector=data.k%3Dc1",
    ):
        out[q] = shape(t.request("GET", f"{base}?{q}"))
    return out


@case
def list_other_scopes(t: Target) -> Any:
    t.namespace("list-scopes", configmaps=2)
    cluster = t.request("GET", "/api/v1/configmaps?limit=1")
    return {
        "missing namespace": shape(t.request("GET", CM.format(ns="no-such-namespace"))),
        "all namespaces": {
            k: v for k, v in shape(cluster).items() if k not in ("names", "remainingItemCount")
        },
    }


@case
def list_metadata_only(t: Target) -> Any:
    ns, _ = t.namespace("list-meta")
    accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
    reply = t.request("GET", CM.format(ns=ns) + "?limit=3", headers={"Accept": accept})
    got = shape(reply)
    got["item kinds"] = sorted({i.get("kind") for i in reply.body["items"]})
    return got


# watches


def _names(n: int) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda events: len(events) >= n


@case
def watch_from_current_rv(t: Target) -> Any:
    ns, _ = t.namespace("watch-current")
    base = CM.format(ns=ns)
    rv = t.list_rv(base)

    def writes() -> None:
        obj = t.create(base, configmap("new", 7))
        obj["data"] = {"k": "changed"}
        t.request("PUT", f"{base}/new", obj)
        t.request("PUT", f"{base}/new", obj)  # stale resourceVersion: 409, no event
        t.request("DELETE", f"{base}/new")
        t.request("DELETE", f"{base}/c1")

    return watch_shape(
        t.watch(f"{base}?watch=1&resourceVersion={rv}", then=writes, until=_names(4))
    )


@case
def watch_from_older_rv_replays(t: Target) -> Any:
    ns, rv = t.namespace("watch-older")
    base = CM.format(ns=ns)
    t.request("DELETE", f"{base}/c0")
    t.request(
        "PATCH",
        f"{base}/c1",
        {"data": {"k": "x"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    return watch_shape(t.watch(f"{base}?watch=1&resourceVersion={rv}", until=_names(2)))


@case
def watch_without_rv(t: Target) -> Any:
    ns, _ = t.namespace("watch-no-rv", configmaps=3)
    base = CM.format(ns=ns)
    return {
        "no rv": watch_shape(t.watch(f"{base}?watch=1", until=_names(3))),
        "no rv, bookmarks": watch_shape(
            t.watch(f"{base}?watch=1&allowWatchBookmarks=true", until=_names(4))
        ),
        "rv 0, bookmarks": watch_shape(
            t.watch(f"{base}?watch=1&resourceVersion=0&allowWatchBookmarks=true", until=_names(4))
        ),
    }


@case
def watch_future_rv(t: Target) -> Any:
    ns, rv = t.namespace("watch-future", configmaps=1)
    base = CM.format(ns=ns)
    return watch_shape(t.watch(f"{base}?watch=1&resourceVersion={rv + 1000}", seconds=1.5))


@case
def watch_list(t: Target) -> Any:
    ns, rv = t.namespace("watch-list", configmaps=3)
    base = CM.format(ns=ns)
    q = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
    out: dict[str, Any] = {}

    def live() -> None:
        t.create(base, configmap("live", 8))

    reply = t.watch(f"{base}?{q}&allowWatchBookmarks=true", then=live, until=_names(5))
    out["bookmarks"] = watch_shape(reply)
    end = [e for e in reply.events if e["type"] == "BOOKMARK"]
    out["end bookmark rv vs last initial item"] = (
        _cmp(int(end[0]["object"]["metadata"]["resourceVersion"]), rv) if end else None
    )
    out["no bookmarks"] = watch_shape(t.watch(f"{base}?{q}", until=_names(4), seconds=1.5))
    out["rv N, bookmarks"] = watch_shape(
        t.watch(f"{base}?{q}&allowWatchBookmarks=true&resourceVersion={rv}", until=_names(5))
    )
    out["rv 0, bookmarks"] = watch_shape(
        t.watch(f"{base}?{q}&allowWatchBookmarks=true&resourceVersion=0", until=_names(5))
    )
    out["label selector"] = watch_shape(
        t.watch(f"{base}?{q}&allowWatchBookmarks=true&labelSelector=even%3Dtrue", until=_names(3))
    )
    out["sendInitialEvents=false"] = watch_shape(
        t.watch(
            f"{base}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan"
            f"&allowWatchBookmarks=true&resourceVersion={rv}",
            then=lambda: t.create(base, configmap("after", 8)),
            until=_names(1),
        )
    )
    return out


@case
def watch_list_pods_bookmark_shape(t: Target) -> Any:
    ns, _ = t.namespace("watch-list-pods", configmaps=0)
    t.create(PODS.format(ns=ns), pod("p1"))
    q = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    return watch_shape(t.watch(PODS.format(ns=ns) + "?" + q, until=_names(2)))


@case
def watch_option_errors(t: Target) -> Any:
    ns, rv = t.namespace("watch-errors", configmaps=0)
    base = CM.format(ns=ns) + "?watch=1"
    out = {}
    for label, q in (
        ("watch-list without match", "sendInitialEvents=true"),
        (
            "watch-list Exact",
            f"sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion={rv}",
        ),
        (
            "match without sendInitialEvents",
            f"resourceVersionMatch=NotOlderThan&resourceVersion={rv}",
        ),
        ("malformed rv", "resourceVersion=abc"),
        ("bad label selector", "labelSelector=a%3D%3D%3Db"),
    ):
        out[label] = watch_shape(t.watch(f"{base}&{q}", seconds=1.0))
    return out


@case
def watch_selectors(t: Target) -> Any:
    ns, rv = t.namespace("watch-selectors", configmaps=2)
    base = CM.format(ns=ns)

    def writes() -> None:
        patch = {"Content-Type": "application/merge-patch+json"}
        t.request("PATCH", f"{base}/c1", {"metadata": {"labels": {"even": "true"}}}, headers=patch)
        t.request("PATCH", f"{base}/c0", {"metadata": {"labels": {"even": "false"}}}, headers=patch)
        t.request("PATCH", f"{base}/c1", {"data": {"k": "y"}}, headers=patch)
        t.request("DELETE", f"{base}/c1")

    return watch_shape(
        t.watch(
            f"{base}?watch=1&labelSelector=even%3Dtrue&resourceVersion={rv}",
            then=writes,
            until=_names(4),
        )
    )


@case
def watch_single_object(t: Target) -> Any:
    ns, rv = t.namespace("watch-one", configmaps=2)
    base = CM.format(ns=ns)

    def writes() -> None:
        patch = {"Content-Type": "application/merge-patch+json"}
        t.request("PATCH", f"{base}/c0", {"data": {"k": "y"}}, headers=patch)
        t.request("PATCH", f"{base}/c1", {"data": {"k": "y"}}, headers=patch)

    return watch_shape(
        t.watch(
            f"{base}?watch=1&fieldSelector=metadata.name%3Dc1&resourceVersion={rv}",
            then=writes,
            until=_names(1),
        )
    )


@case
def watch_timeout_seconds(t: Target) -> Any:
    ns, rv = t.namespace("watch-timeout", configmaps=0)
    return watch_shape(
        t.watch(CM.format(ns=ns) + f"?watch=1&timeoutSeconds=1&resourceVersion={rv}", seconds=5)
    )


@case
def watch_bookmarks_follow_the_resource(t: Target) -> Any:
    ns, _ = t.namespace("bookmarks", configmaps=1)
    other, _ = t.namespace("bookmarks-other", configmaps=0)  # moves the global version only
    base, elsewhere = CM.format(ns=ns), CM.format(ns=other)
    at = t.list_rv("/api/v1/namespaces?limit=1")
    q = "watch=1&allowWatchBookmarks=true&timeoutSeconds="
    out = {
        "quiet resource": watch_shape(
            t.watch(f"{base}?{q}3&resourceVersion={at}", seconds=6), writes_up_to=at
        )
    }
    moved: list[int] = []

    def write_elsewhere() -> None:
        moved.append(int(t.create(elsewhere, configmap("moved"))["metadata"]["resourceVersion"]))

    reply = t.watch(f"{base}?{q}4&resourceVersion={at}", then=write_elsewhere, seconds=7)
    out["a write in another namespace"] = watch_shape(
        reply, collapse_bookmarks=True, writes_up_to=moved[0] if moved else None
    )
    last = int(t.create(base, configmap("last"))["metadata"]["resourceVersion"])
    out["replayed up to the resource's version"] = watch_shape(
        t.watch(f"{base}?{q}3&resourceVersion={last - 1}", seconds=6), writes_up_to=last
    )
    return out


@case
def watch_deletions(t: Target) -> Any:
    ns, _ = t.namespace("watch-deletions", configmaps=1)
    base, pods = CM.format(ns=ns), PODS.format(ns=ns)
    rv = t.list_rv(base)

    def writes() -> None:
        held = t.create(
            base,
            configmap("held", 1, metadata={"name": "held", "finalizers": ["example.com/hold"]}),
        )
        t.request("PUT", f"{base}/held", held)  # identical: no event
        held = t.request("DELETE", f"{base}/held").body  # MODIFIED: deletionTimestamp
        held["metadata"]["finalizers"] = []
        t.request("PUT", f"{base}/held", held)  # DELETED
        t.create(pods, pod("p1"))
        t.request("DELETE", f"{pods}/p1")  # unscheduled: MODIFIED, then DELETED at once

    return watch_shape(
        t.watch(
            f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}",
            then=writes,
            until=_names(3),
        ),
    ), watch_shape(t.watch(f"{pods}?watch=1&resourceVersion={rv}", until=_names(3)))


@case
def watch_metadata_only(t: Target) -> Any:
    ns, _ = t.namespace("watch-meta", configmaps=2)
    accept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
    q = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    return watch_shape(
        t.watch(CM.format(ns=ns) + "?" + q, until=_names(3), headers={"Accept": accept})
    )


# errors


@case
def auth_errors(t: Target) -> Any:
    ns, _ = t.namespace("auth", configmaps=1)
    base = CM.format(ns=ns)
    return {
        "401 list": shape(t.request("GET", base, token=BAD_TOKEN)),
        "401 watch": watch_shape(t.watch(f"{base}?watch=1", token=BAD_TOKEN)),
        "403 list": shape(t.request("GET", base, token="noperms")),
        "403 get": shape(t.request("GET", f"{base}/c0", token="noperms")),
        "403 cluster list": shape(t.request("GET", "/api/v1/configmaps", token="noperms")),
        "403 create": shape(t.request("POST", base, configmap("x"), token="noperms")),
        "403 watch": watch_shape(t.watch(f"{base}?watch=1", token="noperms")),
        "403 crd list": shape(
            t.request(
                "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", token="noperms"
            )
        ),
    }


@case
def not_found(t: Target) -> Any:
    ns, _ = t.namespace("not-found", configmaps=1)
    base = CM.format(ns=ns)
    return {
        "unknown object": shape(t.request("GET", f"{base}/nope")),
        "delete unknown object": shape(t.request("DELETE", f"{base}/nope")),
        "unknown resource": shape(t.request("GET", f"/api/v1/namespaces/{ns}/gizmos")),
        "unknown group": shape(t.request("GET", "/apis/nope.example.com/v1/gizmos")),
        "unknown version": shape(t.request("GET", "/apis/apps/v7/deployments")),
        "unknown group, watch": watch_shape(t.watch("/apis/nope.example.com/v1/gizmos?watch=1")),
        "create in missing namespace": shape(
            t.request("POST", CM.format(ns="no-such-ns"), configmap("x"))
        ),
        "unknown subresource": shape(t.request("GET", f"{base}/c0/scale")),
    }


@case
def method_not_allowed(t: Target) -> Any:
    ns, _ = t.namespace("methods", configmaps=1)
    base = CM.format(ns=ns)
    return {
        "POST to an object": shape(t.request("POST", f"{base}/c0", configmap("c0"))),
        "PUT to a collection": shape(t.request("PUT", base, configmap("c0"))),
        "PATCH a collection": shape(
            t.request("PATCH", base, {}, headers={"Content-Type": "application/merge-patch+json"})
        ),
    }


AUTHZ = "/apis/authorization.k8s.io/v1"
AUTHN = "/apis/authentication.k8s.io/v1"


def review(reply: Reply) -> dict[str, Any]:
    """A review's answer as a client reads it: its kind and status (or the error Status)."""
    body = reply.body
    if not isinstance(body, dict) or body.get("kind") == "Status":
        return shape(reply)
    answer = dict(body.get("status") or {})
    user = answer.get("user") or answer.get("userInfo")
    if isinstance(user, dict):  # uids differ: the servers' users are made apart
        answer["userInfo" if "userInfo" in answer else "user"] = {
            k: v for k, v in user.items() if k in ("username", "groups")
        }
    return {"status": reply.status, "kind": body.get("kind"), "answer": answer}


@case
def create_only_kinds(t: Target) -> Any:
    """M13: reviews are answered, not kept; a Binding sets the pod's node."""
    ns, _ = t.namespace("reviews", configmaps=0)
    pods_here = {"verb": "list", "resource": "pods", "namespace": ns}
    t.create(PODS.format(ns=ns), pod("p0"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p0"},
        "target": {"kind": "Node", "name": "node-a"},
    }
    bind = t.request("POST", f"{PODS.format(ns=ns)}/p0/binding", binding)
    bindings = f"/api/v1/namespaces/{ns}/bindings"
    return {
        "self access": review(
            t.request(
                "POST",
                f"{AUTHZ}/selfsubjectaccessreviews",
                {"spec": {"resourceAttributes": pods_here}},
            )
        ),
        "self access, no permissions": review(
            t.request(
                "POST",
                f"{AUTHZ}/selfsubjectaccessreviews",
                {"spec": {"resourceAttributes": pods_here}},
                token="noperms",
            )
        ),
        "subject access": review(
            t.request(
                "POST",
                f"{AUTHZ}/subjectaccessreviews",
                {"spec": {"user": "nobody", "resourceAttributes": pods_here}},
            )
        ),
        "local subject access": review(
            t.request(
                "POST",
                f"{AUTHZ}/namespaces/{ns}/localsubjectaccessreviews",
                {
                    "metadata": {"namespace": ns},
                    "spec": {"user": "nobody", "resourceAttributes": pods_here},
                },
            )
        ),
        "bad token": review(
            t.request("POST", f"{AUTHN}/tokenreviews", {"spec": {"token": "not-a-token"}})
        ),
        "who am i": review(t.request("POST", f"{AUTHN}/selfsubjectreviews", {})),
        "get a review": shape(t.request("GET", f"{AUTHN}/tokenreviews")),
        "bind through the subresource": shape(bind),
        "bind again": shape(t.request("POST", bindings, dict(binding, target={"name": "node-b"}))),
        "the pod's node": t.request("GET", f"{PODS.format(ns=ns)}/p0").body["spec"].get("nodeName"),
    }


@case
def created_under_objects(t: Target) -> Any:
    """M14: evictions (a pending pod, a missing one, a ready pod whose budget allows no
    disruption, then one still being processed) and token requests."""
    ns, _ = t.namespace("evictions", configmaps=0)
    pods = PODS.format(ns=ns)
    t.create(pods, pod("pending"))
    t.create(pods, dict(pod("ready"), metadata={"name": "ready", "labels": {"app": "kept"}}))
    t.request(
        "POST", f"{pods}/ready/binding", {"metadata": {"name": "ready"}, "target": {"name": "n1"}}
    )
    ready = t.request("GET", f"{pods}/ready").body
    ready["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    t.request("PUT", f"{pods}/ready/status", ready)
    budgets = f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    budget = t.create(
        budgets,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "kept"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "kept"}}},
        },
    )

    def evict(name: str) -> Reply:
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
        return t.request("POST", f"{pods}/{name}/eviction", eviction)

    still_processed = shape(evict("ready"))
    budget["status"] = {
        "observedGeneration": budget["metadata"]["generation"],
        "disruptionsAllowed": 0,
        "currentHealthy": 1,
        "desiredHealthy": 1,
        "expectedPods": 1,
    }
    t.request("PUT", f"{budgets}/kept/status", budget)
    accounts = f"/api/v1/namespaces/{ns}/serviceaccounts"
    t.create(accounts, {"metadata": {"name": "robot"}})
    issued = t.request(
        "POST", f"{accounts}/robot/token", {"spec": {"audiences": ["x"], "expirationSeconds": 600}}
    )
    issued_body = issued.body if isinstance(issued.body, dict) else {}
    return {
        "evict a pending pod": shape(evict("pending")),
        "the pending pod": shape(t.request("GET", f"{pods}/pending")),
        "evict a missing pod": shape(evict("missing")),
        "evict under a budget still being processed": still_processed,
        "evict under a budget allowing none": shape(evict("ready")),
        "token request": {
            "status": issued.status,
            "kind": issued_body.get("kind"),
            "spec": issued_body.get("spec"),
            "status keys": sorted(issued_body.get("status") or {}),
        },
        "token for a missing account": shape(t.request("POST", f"{accounts}/nobody/token", {})),
    }


@case
def parts_written_as_the_kind(t: Target) -> Any:
    """M15: subresources of which the server takes only a part (resize, ephemeralcontainers,
    finalize): the rest of what is sent is kept as it was; GET of one is the object."""
    ns, _ = t.namespace("parts", configmaps=0)
    pods = PODS.format(ns=ns)
    sized = pod("sized")
    sized["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "100m"},
        "limits": {"cpu": "200m"},
    }
    t.create(pods, sized)
    strategic = {"Content-Type": "application/strategic-merge-patch+json"}
    # Whole resources: LocalApiServer's strategic merge replaces lists (testing.md).
    whole = {"requests": {"cpu": "150m"}, "limits": {"cpu": "200m"}}
    resize = {"spec": {"containers": [{"name": "app", "resources": whole}]}}
    resized = t.request("PATCH", f"{pods}/sized/resize", resize, headers=strategic).body
    current = t.request("GET", f"{pods}/sized").body
    current["spec"]["containers"][0]["image"] = "other"
    current["spec"]["ephemeralContainers"] = [{"name": "debug", "image": "busybox"}]
    debugged = t.request("PUT", f"{pods}/sized/ephemeralcontainers", current).body
    namespace = t.request("GET", f"/api/v1/namespaces/{ns}").body
    namespace["spec"]["finalizers"] = ["kubernetes", "example.com/hold"]
    namespace["metadata"]["labels"] = {"not": "taken"}
    finalized = t.request("PUT", f"/api/v1/namespaces/{ns}/finalize", namespace).body

    def containers(obj: dict[str, Any]) -> Any:
        spec = obj.get("spec") or {}
        return [
            (c.get("name"), c.get("image"), c.get("resources"))
            for c in (spec.get("containers") or []) + (spec.get("ephemeralContainers") or [])
        ]

    return {
        "resized": containers(resized),
        "resized generation": resized["metadata"].get("generation"),
        "debugged": containers(debugged),
        "finalized": (finalized["spec"], finalized["metadata"].get("labels")),
        "get through resize": shape(t.request("GET", f"{pods}/sized/resize")),
        "post to resize": shape(t.request("POST", f"{pods}/sized/resize", sized)),
    }


@case
def write_errors(t: Target) -> Any:
    ns, _ = t.namespace("writes", configmaps=1)
    base = CM.format(ns=ns)
    c0 = t.request("GET", f"{base}/c0").body
    t.request(
        "PATCH",
        f"{base}/c0",
        {"data": {"k": "v2"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    bad_pod = pod("nocontainers")
    bad_pod["spec"] = {"containers": []}
    return {
        "409 AlreadyExists": shape(t.request("POST", base, configmap("c0"))),
        "409 Conflict (stale rv)": shape(t.request("PUT", f"{base}/c0", c0)),
        "422 bad name": shape(t.request("POST", base, configmap("Not_A_Name"))),
        "422 pod without containers": shape(t.request("POST", PODS.format(ns=ns), bad_pod)),
        "400 malformed body": shape(t.request("POST", base, b"{not json")),
        "400 namespace mismatch": shape(
            t.request(
                "PUT", f"{base}/c0", dict(c0, metadata=dict(c0["metadata"], namespace="other"))
            )
        ),
        "415 patch type": shape(
            t.request("PATCH", f"{base}/c0", {"data": {}}, headers={"Content-Type": "text/plain"})
        ),
        "delete precondition": shape(
            t.request(
                "DELETE",
                f"{base}/c0",
                {
                    "kind": "DeleteOptions",
                    "apiVersion": "v1",
                    "preconditions": {"resourceVersion": "1"},
                },
            )
        ),
    }


# custom resources

CRD: dict[str, Any] = widget_crd()


def widget(name: str, size: int = 1, color: str = "red") -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": size, "color": color},
    }


def _widgets_served(t: Target) -> None:
    if t.request("GET", "/apis/example.com/v1/widgets").status == 200:
        return
    t.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)
    deadline = time.monotonic() + 30
    while t.request("GET", "/apis/example.com/v1/widgets").status != 200:
        assert time.monotonic() < deadline, f"{t.name}: widgets never served"
        time.sleep(0.1)


@case
def custom_resources(t: Target) -> Any:
    _widgets_served(t)
    ns, _ = t.namespace("widgets", configmaps=0)
    base = WIDGETS.format(ns=ns)
    for i in range(3):
        t.create(base, widget(f"w{i}"))
    q = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    return {
        "list limit 2": shape(t.request("GET", f"{base}?limit=2")),
        "list rv 0": shape(t.request("GET", f"{base}?resourceVersion=0")),
        "watch-list": watch_shape(t.watch(f"{base}?{q}", until=_names(4))),
        "watch from rv 1 (before the CRD)": watch_shape(
            t.watch(f"{base}?watch=1&resourceVersion=1", seconds=2)
        ),
        "unknown version": shape(t.request("GET", f"/apis/example.com/v9/namespaces/{ns}/widgets")),
        "422 schema": shape(t.request("POST", base, widget("bad", size=0, color="green"))),
        "422 missing required": shape(
            t.request("POST", base, dict(widget("bad2"), spec={"color": "red"}))
        ),
    }


THINGS = "/apis/structural.example.com/v1/namespaces/{ns}/things"


@case
def custom_resources_pruned_and_defaulted(t: Target) -> Any:
    """M17: what the server stores of a custom resource: fields its schema does not specify
    dropped (but where it preserves unknown fields; an embedded resource's metadata keeps
    ObjectMeta's), a null it does not allow dropped or defaulted, defaults filled in (in
    defaulted objects, list items, map values); status dropped on create (a status
    subresource), pruned and defaulted through it; the same on update and patch."""
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    if t.request("GET", f"{crds}/things.structural.example.com").status != 200:
        t.create(crds, structural_crd())
    ns, _ = t.namespace("things", configmaps=0)
    base = THINGS.format(ns=ns)
    deadline = time.monotonic() + 30
    while t.request("GET", base).status != 200:
        assert time.monotonic() < deadline, f"{t.name}: things never served"
        time.sleep(0.1)
    sent = {
        "apiVersion": "structural.example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t1", "unknownMeta": 1, "labels": {"a": "b"}},
        "unknownTop": 1,
        "spec": {
            "mode": None,
            "nullable": None,
            "plain": None,
            "unknown": 2,
            "nested": {"unknown": 3},
            "items": [{"name": "a", "unknown": 4}, {"name": "b", "weight": 7}],
            "byName": {"k": {"unknown": 5}, "k2": {"v": "set"}},
            "free": {"anything": {"deep": 1}},
            "embedded": {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "e", "unknownMeta": 6},
                "data": {"a": "b"},
            },
            "embeddedShaped": {
                "apiVersion": "v1",
                "kind": "X",
                "metadata": {"name": "e2"},
                "spec": {},
                "unknown": 7,
            },
        },
        "status": {"phase": "Sent", "unknown": 8},
    }

    def stored(reply: Reply) -> Any:
        body = reply.body
        if not isinstance(body, dict) or body.get("kind") != "Thing":
            return shape(reply)
        meta = {k: v for k, v in body["metadata"].items() if k in ("name", "labels", "unknownMeta")}
        return {k: v for k, v in body.items() if k != "metadata"} | {"metadata": meta}

    created = t.request("POST", base, sent)
    strict = t.request("POST", f"{base}?fieldValidation=Strict", dict(sent, metadata={"name": "s"}))
    ignored = t.request(
        "POST", f"{base}?fieldValidation=Ignore", dict(sent, metadata={"name": "i"})
    )
    headless = copy.deepcopy(sent)
    headless["metadata"]["name"] = "h"
    del headless["spec"]["embedded"]["apiVersion"]  # an embedded resource must say what it is
    invalid = t.request("POST", base, headless)
    current = t.request("GET", f"{base}/t1").body
    current["status"] = {"unknown": 9}
    status = t.request("PUT", f"{base}/t1/status", current)
    current = t.request("GET", f"{base}/t1").body
    current["spec"].update(nested=None, replicas=None, unknown=1)
    updated = t.request("PUT", f"{base}/t1", current)
    merge = {"Content-Type": "application/merge-patch+json"}
    patched = t.request("PATCH", f"{base}/t1", {"spec": {"mode": None, "more": 1}}, headers=merge)
    refused = t.request(
        "PATCH", f"{base}/t1?fieldValidation=Strict", {"spec": {"typo": 1}}, headers=merge
    )
    apply_type = {"Content-Type": "application/apply-patch+yaml"}
    # One undeclared field: with several, the real server names some of them (Go map order).
    undeclared = {"apiVersion": sent["apiVersion"], "kind": "Thing", "metadata": {"name": "t1"}}
    undeclared["spec"] = {"typo": 1}
    applied = t.request("PATCH", f"{base}/t1?fieldManager=m", undeclared, headers=apply_type)
    return {
        "created": stored(created),
        "created: warnings": created.warnings,
        "strict": shape(strict),
        "ignored: warnings": ignored.warnings,
        "without an embedded apiVersion": shape(invalid),
        "without an embedded apiVersion: warnings": invalid.warnings,
        "status written": stored(status),
        "status written: warnings": status.warnings,
        "updated": stored(updated),
        "patched": stored(patched),
        "patched: warnings": patched.warnings,
        "strict patch": (
            refused.status,
            refused.body.get("reason"),
            [c.get("field") for c in refused.body.get("details", {}).get("causes", [])],
            refused.body.get("message", "").rsplit(": strict decoding error: ", 1)[-1],
        ),
        "apply with an undeclared field": shape(applied),
        "read": stored(t.request("GET", f"{base}/t1")),
    }


@case
def server_side_apply(t: Target) -> Any:
    """M18: server-side apply and field ownership: an apply creates (201, its fields its own), a
    field another manager owns is a 409 naming them (an update's manager "using v1") unless
    forced, an equal value is shared, what an apply no longer sets is removed unless another
    manager owns it, an update takes what it changed; fieldManager is required; an apply
    through `status` is owned as that subresource's."""
    ns, _ = t.namespace("ssa", configmaps=0)
    base = CM.format(ns=ns)
    apply_type = {"Content-Type": "application/apply-patch+yaml"}
    merge = {"Content-Type": "application/merge-patch+json"}

    def cm(data: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> Any:
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
        if labels is not None:
            obj["metadata"]["labels"] = labels
        if data is not None:
            obj["data"] = data
        return obj

    def apply(manager: str, body: Any, *, force: bool = False, path: str = f"{base}/c") -> Any:
        query = f"?fieldManager={manager}" + ("&force=true" if force else "")
        return seen(t.request("PATCH", path + query, body, headers=apply_type))

    def seen(reply: Reply) -> Any:
        body = reply.body
        if not isinstance(body, dict) or body.get("kind") == "Status":
            return shape(reply)
        # Sorted here: the server sorts entries by the second of their time, and two
        # requests fall in one second or two as the machine goes.
        owners = sorted(
            (
                (
                    entry.get("manager"),
                    entry.get("operation"),
                    entry.get("subresource") or "",
                    json.dumps(entry.get("fieldsV1")) if entry.get("operation") == "Apply" else "",
                )
                for entry in body["metadata"].get("managedFields") or []
            ),
        )
        return {
            "status": reply.status,
            "data": body.get("data"),
            "labels": body["metadata"].get("labels"),
            "spec": body.get("spec"),
            "status part": body.get("status"),
            "owners": owners,
        }

    steps = {
        "apply creates": apply("m1", cm({"k": "1", "a": "x"}, {"team": "a"})),
        "a field m1 owns": apply("m2", cm({"k": "2"})),
        "forced": apply("m2", cm({"k": "2"}), force=True),
        "m1 drops a and k": apply("m1", cm({}, {"team": "a"})),
        "equal value shared": apply("m3", cm(None, {"team": "a"})),
        "an update takes k": seen(
            t.request("PATCH", f"{base}/c?fieldManager=editor", {"data": {"k": "3"}}, headers=merge)
        ),
        "two conflicts": apply("m2", cm({"k": "2"}, {"team": "b"})),
        "m3 drops team, m1 keeps it": apply("m3", cm()),
        "without fieldManager": shape(
            t.request("PATCH", f"{base}/c", cm({"k": "9"}), headers=apply_type)
        ),
    }
    _widgets_served(t)
    widgets = WIDGETS.format(ns=ns)
    t.create(widgets, widget("w"))
    status = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "status": {"phase": "Ready"},
    }
    steps["status applied"] = apply("statusbot", status, path=f"{widgets}/w/status")
    steps["spec applied"] = apply(
        "specbot",
        dict(status, spec={"size": 3, "color": "red"}, status={"phase": "Ignored"}),
        path=f"{widgets}/w",
    )
    stale = cm({"k": "5"})
    stale["metadata"]["resourceVersion"] = "1"
    steps["a stale resourceVersion and a conflict"] = apply("m1", stale)
    fresh_key = cm({"n": "1"})
    fresh_key["metadata"]["resourceVersion"] = "1"
    steps["a stale resourceVersion"] = apply("m4", fresh_key)
    read_back = t.request("GET", f"{base}/c").body
    steps["an object read back, applied"] = apply("m4", read_back)
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    if t.request("GET", f"{crds}/things.structural.example.com").status != 200:
        t.create(crds, structural_crd())
    things = THINGS.format(ns=ns)
    deadline = time.monotonic() + 30
    while t.request("GET", things).status != 200:
        assert time.monotonic() < deadline, f"{t.name}: things never served"
        time.sleep(0.1)
    thing = {"apiVersion": "structural.example.com/v1", "kind": "Thing", "metadata": {"name": "t"}}
    # Created by an apply: its fields are those it sets, not those the defaults fill in.
    steps["apply creates, defaulted"] = apply(
        "thingbot", dict(thing, spec={"replicas": 2}), path=f"{things}/t"
    )
    # Lists merged item by item: by key (`ports`, `conditions`), by value (`tags`).
    at = f"{things}/t"
    http = {"name": "http", "port": 80}
    steps["a's port and tag"] = apply(
        "a", dict(thing, spec={"ports": [http], "tags": ["x"]}), path=at
    )
    metrics = {"name": "metrics", "port": 9090}
    steps["b's, beside a's"] = apply(
        "b", dict(thing, spec={"ports": [metrics], "tags": ["y"]}), path=at
    )
    other_http = {"name": "http", "port": 81}
    steps["b changes a's port"] = apply(
        "b", dict(thing, spec={"ports": [metrics, other_http]}), path=at
    )
    steps["a drops its port and tag"] = apply("a", dict(thing, spec={}), path=at)
    ready = {"type": "Ready", "status": "True"}
    synced = {"type": "Synced", "status": "False"}
    steps["ready's condition"] = apply(
        "ready", dict(thing, status={"conditions": [ready]}), path=f"{at}/status"
    )
    steps["synced's, beside it"] = apply(
        "synced", dict(thing, status={"conditions": [synced]}), path=f"{at}/status"
    )
    steps["an update of one condition"] = seen(
        t.request(
            "PATCH",
            f"{at}/status?fieldManager=editor",
            {"status": {"conditions": [ready, dict(synced, status="True")]}},
            headers=merge,
        )
    )
    steps["synced applies it back"] = apply(
        "synced", dict(thing, status={"conditions": [synced]}), path=f"{at}/status"
    )
    return steps


@case
def built_in_lists_merged_by_key(t: Target) -> Any:
    """M18, H36: a Deployment's containers (and their env) merged by name, as the built-ins' schemas
    say: two managers' containers side by side, a conflict on one container's image, a
    strategic merge patch that names one container and adds an env var (the patch's items
    first), one that deletes a container, and the apply that then conflicts."""
    ns, _ = t.namespace("keyed", configmaps=0)
    base = f"/apis/apps/v1/namespaces/{ns}/deployments"
    apply_type = {"Content-Type": "application/apply-patch+yaml"}
    strategic = {"Content-Type": "application/strategic-merge-patch+json"}

    def deployment(containers: list[dict[str, Any]]) -> dict[str, Any]:
        labels = {"app": "d"}
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}},
            },
        }

    def seen(reply: Reply) -> Any:
        body = reply.body
        if not isinstance(body, dict) or body.get("kind") == "Status":
            return shape(reply)
        containers = body["spec"]["template"]["spec"]["containers"]
        return {
            "status": reply.status,
            "containers": [
                (
                    c["name"],
                    c.get("image"),
                    [e["name"] for e in c.get("env") or []],
                    [p["containerPort"] for p in c.get("ports") or []],
                )
                for c in containers
            ],
            "owners": sorted(
                (m["manager"], m["operation"]) for m in body["metadata"]["managedFields"]
            ),
        }

    def apply(manager: str, containers: list[dict[str, Any]]) -> Any:
        body = deployment(containers)
        return seen(
            t.request("PATCH", f"{base}/d?fieldManager={manager}", body, headers=apply_type)
        )

    def patch(body: Any) -> Any:
        return seen(t.request("PATCH", f"{base}/d?fieldManager=c", body, headers=strategic))

    app = {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]}
    app["ports"] = [{"containerPort": 80}]
    sidecar = {"name": "sidecar", "image": "side:1"}
    in_template = {"spec": {"template": {"spec": {"containers": []}}}}

    def containers_patch(containers: list[dict[str, Any]]) -> Any:
        body = copy.deepcopy(in_template)
        body["spec"]["template"]["spec"]["containers"] = containers
        return body

    return {
        "a applies app": apply("a", [app]),
        "b applies a sidecar": apply("b", [sidecar]),
        "b applies app's image": apply("b", [sidecar, {"name": "app", "image": "app:2"}]),
        "a strategic patch of app": patch(
            containers_patch([{"name": "app", "image": "app:3", "env": [{"name": "B"}]}])
        ),
        "a strategic patch deleting the sidecar": patch(
            containers_patch([{"name": "sidecar", "$patch": "delete"}])
        ),
        "a applies app again": apply("a", [dict(app, env=[])]),
    }


# The parts of a created object that are the server's own choice: taken out of the comparison.
_CHOSEN = frozenset({"uid", "resourceVersion", "creationTimestamp", "managedFields", "time"})
_ADDRESSES = frozenset({"clusterIP", "clusterIPs", "nodePort"})


def _as_stored(obj: Any, uid: str = "") -> Any:
    """An object as the server stored it, without what it chooses (uids, versions, times,
    addresses; a Job's uid where its labels and selector carry it)."""
    if isinstance(obj, dict):
        uid = uid or (obj.get("metadata") or {}).get("uid", "")
        return {
            k: ("(chosen)" if k in _ADDRESSES else _as_stored(v, uid))
            for k, v in obj.items()
            if k not in _CHOSEN
        }
    if isinstance(obj, list):
        return [_as_stored(x, uid) for x in obj]
    return "(uid)" if uid and obj == uid else obj


@case
def built_in_defaults(t: Target) -> Any:
    """M20: what the server fills into the built-in kinds a controller writes most: a pod's
    and each pod template's defaults (containers, probes, ports, volumes), a workload's
    (replicas, strategies, history), a Job's selector and labels, a CronJob's policies, a
    Service's type, ports and addresses, a Secret's `stringData` written into `data`; the
    admission a pod passes (priority, tolerations) and its QoS class; on create, and again on
    an update that leaves them out."""
    ns, _ = t.namespace("defaults", configmaps=0)
    container = {
        "name": "c",
        "image": "registry.example.com/app:1.2",
        "ports": [{"containerPort": 80}],
        "readinessProbe": {"httpGet": {"port": 80}},
        "lifecycle": {"preStop": {"httpGet": {"port": 80}}},
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "resources": {"limits": {"cpu": "1", "memory": "64Mi"}},
    }
    pod_spec = {
        "containers": [container, {"name": "latest", "image": "busybox"}],
        "volumes": [{"name": "s", "secret": {"secretName": "s"}}],
    }
    template = {"metadata": {"labels": {"app": "x"}}, "spec": pod_spec}
    selector = {"matchLabels": {"app": "x"}}
    apps = f"/apis/apps/v1/namespaces/{ns}"
    batch = f"/apis/batch/v1/namespaces/{ns}"
    core = f"/api/v1/namespaces/{ns}"
    sent = {
        f"{core}/pods": {"metadata": {"name": "p"}, "spec": pod_spec},
        f"{core}/services": {
            "metadata": {"name": "s"},
            "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]},
        },
        f"{core}/services#np": {
            "metadata": {"name": "np"},
            "spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": "http"}]},
        },
        f"{core}/secrets": {
            "metadata": {"name": "sec"},
            "data": {"a": "YQ=="},
            "stringData": {"b": "b"},
        },
        f"{apps}/deployments": {
            "metadata": {"name": "d"},
            "spec": {"selector": selector, "template": template},
        },
        f"{apps}/replicasets": {
            "metadata": {"name": "rs"},
            "spec": {"selector": selector, "template": template},
        },
        f"{apps}/statefulsets": {
            "metadata": {"name": "ss"},
            "spec": {"selector": selector, "serviceName": "s", "template": template},
        },
        f"{apps}/daemonsets": {
            "metadata": {"name": "ds"},
            "spec": {"selector": selector, "template": template},
        },
        f"{batch}/jobs": {
            "metadata": {"name": "j"},
            "spec": {"template": {"spec": dict(pod_spec, restartPolicy="Never")}},
        },
        f"{batch}/cronjobs": {
            "metadata": {"name": "cj"},
            "spec": {
                "schedule": "* * * * *",
                "jobTemplate": {
                    "spec": {"template": {"spec": dict(pod_spec, restartPolicy="Never")}}
                },
            },
        },
    }
    out: dict[str, Any] = {}
    for path, body in sent.items():
        reply = t.request("POST", path.split("#")[0], body)
        out[path.replace(ns, "NS")] = (reply.status, _as_stored(reply.body))
    # An update that leaves the defaults out gets them again: no change, no new version.
    deployment = t.request("GET", f"{apps}/deployments/d").body
    resent = {
        "metadata": {"name": "d", "resourceVersion": deployment["metadata"]["resourceVersion"]},
        "spec": {"selector": selector, "template": template},
    }
    updated = t.request("PUT", f"{apps}/deployments/d", resent).body
    out["update leaving the defaults out"] = (
        _as_stored(updated) == _as_stored(deployment),
        updated["metadata"]["resourceVersion"] == deployment["metadata"]["resourceVersion"],
    )
    merge = {"Content-Type": "application/merge-patch+json"}
    unset = {
        "spec": {"replicas": None, "strategy": None, "template": {"spec": {"dnsPolicy": None}}}
    }
    patched = t.request("PATCH", f"{apps}/deployments/d", unset, headers=merge).body
    out["a merge patch unsetting defaulted fields"] = (
        patched["spec"]["replicas"],
        patched["spec"]["strategy"],
        patched["spec"]["template"]["spec"]["dnsPolicy"],
        patched["metadata"]["resourceVersion"] == deployment["metadata"]["resourceVersion"],
    )
    secret = t.request("GET", f"{core}/secrets/sec").body
    secret["stringData"] = {"c": "c"}
    out["secret updated with stringData"] = _as_stored(
        t.request("PUT", f"{core}/secrets/sec", secret).body
    )
    return out


@case
def dry_run(t: Target) -> Any:
    """M19: `dryRun=All` answers what each write would store (a created object without a
    resourceVersion, an updated, patched or applied one with the one it has) and stores
    nothing (a watch replayed from before them hears only the real create); the write's errors
    still come (AlreadyExists); a value other than All is a 422 on the options."""
    ns, _ = t.namespace("dry", configmaps=0)
    base = CM.format(ns=ns)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}

    def seen(reply: Reply) -> Any:
        body = reply.body
        if not isinstance(body, dict) or body.get("kind") in ("Status", None):
            return shape(reply)
        meta = body.get("metadata") or {}
        return {
            "status": reply.status,
            "data": body.get("data"),
            "uid": bool(meta.get("uid")),
            "resourceVersion": meta.get("resourceVersion") is not None,
            "owners": sorted(
                (m["manager"], m["operation"]) for m in meta.get("managedFields") or []
            ),
        }

    merge = {"Content-Type": "application/merge-patch+json"}
    apply_type = {"Content-Type": "application/apply-patch+yaml"}
    before = t.list_rv(base)
    steps = {"dry create": seen(t.request("POST", f"{base}?dryRun=All&fieldManager=m", cm))}
    steps["get after it"] = shape(t.request("GET", f"{base}/c"))
    created = t.request("POST", f"{base}?fieldManager=m", cm)
    steps["create"] = seen(created)
    version = created.body["metadata"]["resourceVersion"]
    update = dict(cm, data={"a": "2"})
    steps["dry update"] = seen(t.request("PUT", f"{base}/c?dryRun=All&fieldManager=m", update))
    patch = {"data": {"b": "3"}}
    steps["dry patch"] = seen(
        t.request("PATCH", f"{base}/c?dryRun=All&fieldManager=p", patch, headers=merge)
    )
    applied = dict(cm, data={"z": "9"})
    steps["dry apply"] = seen(
        t.request("PATCH", f"{base}/c?dryRun=All&fieldManager=ap", applied, headers=apply_type)
    )
    steps["dry delete"] = shape(t.request("DELETE", f"{base}/c?dryRun=All"))
    steps["dry delete of the collection"] = shape(t.request("DELETE", f"{base}?dryRun=All"))
    after = t.request("GET", f"{base}/c")
    steps["unchanged after them"] = (
        seen(after),
        after.body["metadata"]["resourceVersion"] == version,
    )
    steps["dry create of one that exists"] = shape(t.request("POST", f"{base}?dryRun=All", cm))
    steps["dryRun=Yes"] = shape(
        t.request("POST", f"{base}?dryRun=Yes", dict(cm, metadata={"name": "x"}))
    )
    pods = PODS.format(ns=ns)
    t.create(pods, pod("p"))
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}}
    steps["dry eviction"] = shape(t.request("POST", f"{pods}/p/eviction?dryRun=All", eviction))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}}
    binding["target"] = {"kind": "Node", "name": "n1"}
    steps["dry binding"] = shape(t.request("POST", f"{pods}/p/binding?dryRun=All", binding))
    left = t.request("GET", f"{pods}/p").body
    steps["the pod after them"] = (
        left["metadata"].get("deletionTimestamp"),
        left["spec"].get("nodeName"),
    )
    # Replayed from before the first dry run: the real create is the only event.
    replay = t.watch(f"{base}?watch=1&resourceVersion={before}", until=lambda events: bool(events))
    # (configmaps only: the pod's own ADDED is not this resource's)
    steps["what a watch heard"] = [
        (e["type"], e["object"]["metadata"]["name"])
        for e in replay.events
        if e["type"] != "BOOKMARK"
    ]
    return steps


# --- the servers ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def targets(real_apiserver_assets: Path) -> Iterator[tuple[Target, Target]]:
    """A LocalApiServer and a private real kube-apiserver (restarted by the last test)."""
    fake_server = LocalApiServer(
        tls=True, token=FAKE_ADMIN, users={FAKE_NOPERMS: "noperms"}, too_large_rv_wait=1.0
    )
    with RealApiServer(real_apiserver_assets) as real_server, fake_server:
        admin, noperms = (
            real_server.configuration(user).api_key["authorization"]
            for user in ("admin", "noperms")
        )
        ctx = ssl.create_default_context(cafile=str(real_server.ca_file))
        fake_ctx = ssl.create_default_context(cafile=str(fake_server.ca_file))
        fake = Target(
            "LocalApiServer",
            fake_server.port,
            fake_ctx,
            FAKE_ADMIN,
            FAKE_NOPERMS,
            restart=fake_server.restart,
            compact=lambda: fake_server.compact(watch_cache=False),
        )
        real = Target(
            "kube-apiserver",
            int(real_server.server.rsplit(":", 1)[1]),
            ctx,
            admin,
            noperms,
            restart=real_server.restart_apiserver,
            compact=real_server.compact_etcd,
        )
        yield fake, real


def _diff(fake: Any, real: Any) -> str:
    f = json.dumps(fake, indent=1, sort_keys=True, default=str).splitlines()
    r = json.dumps(real, indent=1, sort_keys=True, default=str).splitlines()
    import difflib

    return "LocalApiServer (-) differs from kube-apiserver (+):\n" + "\n".join(
        difflib.unified_diff(f, r, lineterm="", n=2)
    )


def _on_both(targets: tuple[Target, Target], steps: Callable[[Target], Any]) -> tuple[Any, Any]:
    """The same steps against both servers at once (their waits overlap)."""
    with ThreadPoolExecutor(2) as pool:
        fake, real = pool.map(steps, targets)
    return fake, real


@pytest.mark.parametrize("name", list(CASES))
def test_same_answer(targets: tuple[Target, Target], name: str) -> None:
    fake, real = _on_both(targets, CASES[name])
    assert fake == real, _diff(fake, real)


# --- last: the expiry sequence restarts the real apiserver ----------------------------------------


def test_expired_versions_after_restart_and_compaction(targets: tuple[Target, Target]) -> None:
    """An API server restart starts its watch cache afresh (older watches: 410, lists still
    served from etcd); after etcd compaction older lists are 410 too."""
    fake, real = _on_both(targets, _expired)
    assert fake == real, _diff(fake, real)


def _expired(t: Target) -> Any:
    ns, rv = t.namespace("expired")
    base = CM.format(ns=ns)
    first = t.request("GET", f"{base}?limit=2").body["metadata"]
    t.create(base, configmap("later", 9))
    out: dict[str, Any] = {}
    t.restart()
    out["restarted: watch from before"] = watch_shape(
        t.watch(f"{base}?watch=1&resourceVersion={rv}", seconds=3)
    )
    out["restarted: Exact at an old rv"] = shape(
        t.request("GET", f"{base}?resourceVersion={rv}&resourceVersionMatch=Exact")
    )
    out["restarted: continue"] = shape(
        t.request("GET", f"{base}?limit=2&continue={first['continue']}")
    )
    t.compact()
    cont = t.request("GET", f"{base}?limit=2&continue={first['continue']}")
    out["compacted: continue"] = shape(cont)
    if cont.status == 410:
        token = cont.body["metadata"]["continue"]
        again = t.request("GET", f"{base}?limit=2&continue={token}")
        out["compacted: the inconsistent continue of the 410"] = shape(again)
    out["compacted: Exact at an old rv"] = shape(
        t.request("GET", f"{base}?resourceVersion={rv}&resourceVersionMatch=Exact")
    )
    out["compacted: NotOlderThan an old rv"] = shape(
        t.request("GET", f"{base}?resourceVersion={rv}&resourceVersionMatch=NotOlderThan")
    )
    return out
