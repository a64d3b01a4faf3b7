"""LocalApiServer's REST semantics: list / get / create / update / patch / delete / watch setup.

Independent of HTTP: each operation takes the served resource, the namespace, the query and
the body, and returns a JSON body or raises `ApiError` with the Status the real kube-apiserver
sends (wording, reason and code as in the recorded transcripts). Lists honour
resourceVersion / resourceVersionMatch / limit / continue / selectors as kube-apiserver 1.36
does; watches are prepared here (validation, initial events, registration) and streamed by
the HTTP layer.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import msgspec

from kubeinformers.runtime.resource import APIResource
from kubeinformers.testing import _server_errors as errors
from kubeinformers.testing import _server_objects as objs
from kubeinformers.testing._server_errors import ApiError, ObjDict, api_error
from kubeinformers.testing._server_selectors import (
    EXTRA_FIELD_LABELS,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)
from kubeinformers.testing._server_store import (
    Event,
    SKey,
    Store,
    TooOldError,
    Watcher,
    encode,
)

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_CONTINUE_VERSION = "meta.k8s.io/v1"
# Zero-valued, non-omitempty fields Go's typed encoders add to a bookmark's object.
BOOKMARK_EXTRAS: dict[SKey, ObjDict] = {("", "pods"): {"spec": {"containers": None}, "status": {}}}


@dataclass(frozen=True)
class Served:
    """A resource version the server serves, with what the registry knows about it."""

    api: APIResource
    custom: bool = False
    schema: ObjDict | None = None
    status_subresource: bool = False
    field_labels: frozenset[str] = frozenset()

    @property
    def skey(self) -> SKey:
        return (self.api.group, self.api.resource)


class Registry:
    """Which group/version/resources exist; CRDs add and remove entries at run time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_gvr: dict[tuple[str, str, str], Served] = {}

    def add(self, served: Served) -> None:
        with self._lock:
            self._by_gvr[(served.api.group, served.api.version, served.api.resource)] = served

    def remove(self, group: str, resource: str) -> None:
        with self._lock:
            for k in [k for k in self._by_gvr if (k[0], k[2]) == (group, resource)]:
                del self._by_gvr[k]

    def lookup(self, group: str, version: str, resource: str) -> Served | None:
        return self._by_gvr.get((group, version, resource))

    def group_versions(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for g, v, _ in sorted(self._by_gvr):
            if v not in out.setdefault(g, []):
                out[g].append(v)
        return out

    def in_group_version(self, group: str, version: str) -> list[Served]:
        return [s for (g, v, _), s in sorted(self._by_gvr.items()) if (g, v) == (group, version)]

    def served(self, skey: SKey) -> list[Served]:
        return [s for s in self._by_gvr.values() if s.skey == skey]


def builtin(res: APIResource) -> Served:
    key = (res.group, res.resource)
    return Served(
        res,
        status_subresource=key in objs.STATUS_SUBRESOURCE,
        field_labels=EXTRA_FIELD_LABELS.get(key, frozenset()),
    )


def served_from_crd(res: APIResource, version: ObjDict) -> Served:
    schema = ((version.get("schema") or {}).get("openAPIV3Schema")) or None
    selectable = frozenset(
        f["jsonPath"].lstrip(".") for f in version.get("selectableFields") or [] if "jsonPath" in f
    )
    return Served(
        res,
        custom=True,
        schema=schema,
        status_subresource="status" in (version.get("subresources") or {}),
        field_labels=selectable,
    )


# --- options validation ----------------------------------------------------------------------


def truthy(value: str | None) -> bool:
    """strconv.ParseBool's true values (the Python client sends "True")."""
    return value in ("1", "t", "T", "true", "TRUE", "True")


def _forbidden(fld: str, msg: str) -> tuple[str, str, str]:
    return ("FieldValueForbidden", fld, f"Forbidden: {msg}")


def _unsupported(fld: str, value: str, allowed: list[str]) -> tuple[str, str, str]:
    shown = ", ".join(f'"{a}"' for a in allowed)
    return (
        "FieldValueNotSupported",
        fld,
        f'Unsupported value: "{value}": supported values: {shown}',
    )


def validate_list_options(q: Mapping[str, str], watch: bool) -> None:
    """apimachinery's ValidateListOptions: 422 Invalid on ListOptions."""
    causes: list[tuple[str, str, str]] = []
    match, rv = q.get("resourceVersionMatch", ""), q.get("resourceVersion", "")
    sie = q.get("sendInitialEvents")
    if watch:
        if sie is not None and match != "NotOlderThan":
            causes.append(
                _forbidden(
                    "resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                )
            )
        if match:
            if sie is None:
                causes.append(
                    _forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden "
                        "for watch unless sendInitialEvents is provided",
                    )
                )
            if match != "NotOlderThan":
                causes.append(_unsupported("resourceVersionMatch", match, ["NotOlderThan"]))
            if q.get("continue"):
                causes.append(
                    _forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden when continue is provided",
                    )
                )
    else:
        if match:
            if not rv:
                causes.append(
                    _forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    )
                )
            if q.get("continue"):
                causes.append(
                    _forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden when continue is provided",
                    )
                )
            if match not in ("Exact", "NotOlderThan"):
                causes.append(
                    _unsupported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""])
                )
            if match == "Exact" and rv == "0":
                causes.append(
                    _forbidden(
                        "resourceVersionMatch",
                        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                    )
                )
        if sie is not None:
            causes.append(
                _forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")
            )
    if causes:
        err = errors.invalid("ListOptions", "meta.k8s.io", "", causes)
        del err.body["details"]["name"]
        raise err


def parse_rv(value: str, *, watch: bool) -> int:
    try:
        n = int(value)
        if n < 0 or not value.isdigit():
            raise ValueError(value)
        return n
    except ValueError:
        msg = (
            f'resourceVersion: Invalid value: "{value}": strconv.ParseUint: parsing '
            f'"{value}": invalid syntax'
        )
        if watch:
            raise api_error(500, "", msg) from None
        raise api_error(400, "BadRequest", f"invalid resource version: {msg}") from None


def _go_quote_char(ch: str) -> str:
    if ch == "'":
        return "'\\''"
    if ch.isprintable() and ord(ch) < 0x80:
        return f"'{ch}'"
    return f"'\\x{ord(ch):02x}'" if ord(ch) < 0x100 else f"'\\u{ord(ch):04x}'"


def encode_continue(rv: int, start: str) -> str:
    raw = json.dumps({"v": _CONTINUE_VERSION, "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """(rv, start key) from a continue token; 400 BadRequest when it is not one of ours."""

    def bad(why: str) -> ApiError:
        return api_error(
            400, "BadRequest", f"invalid continue token: continue key is not valid: {why}"
        )

    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        raise bad("illegal base64 data at input byte 0") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        text = raw.decode("latin-1").lstrip()
        raise bad(
            f"invalid character {_go_quote_char(text[:1] or ' ')} looking for beginning of value"
        ) from None
    if not isinstance(data, dict) or data.get("v") != _CONTINUE_VERSION:
        raise bad(f"incorrect encoded start resourceVersion (version {_CONTINUE_VERSION})")
    rv, start = data.get("rv"), data.get("start")
    if not isinstance(rv, int) or rv == 0:
        raise bad(f"incorrect encoded start resourceVersion (version {_CONTINUE_VERSION})")
    if not isinstance(start, str) or not start:
        raise bad("encoded start key empty")
    return rv, start if start.startswith("/") else "/" + start


def int_param(q: Mapping[str, str], name: str) -> int:
    """An integer query parameter (0 when absent); 400 BadRequest when it is not one."""
    raw = q.get(name) or "0"
    try:
        return int(raw)
    except ValueError:
        raise api_error(
            400,
            "BadRequest",
            f'{name}: Invalid value: "{raw}": strconv.ParseInt: parsing "{raw}": invalid syntax',
        ) from None


def selectors(
    served: Served, q: Mapping[str, str]
) -> tuple[Callable[..., bool], Callable[..., bool], bool]:
    """(label matcher, field matcher, any selector given); 400 BadRequest on a bad selector."""
    try:
        labels = parse_label_selector(q.get("labelSelector", ""))
        fields = parse_field_selector(q.get("fieldSelector", ""), served.field_labels)
    except SelectorError as err:
        raise api_error(400, "BadRequest", str(err)) from None
    return labels, fields, bool(q.get("labelSelector") or q.get("fieldSelector"))


# --- content negotiation (Accept) ---------------------------------------------------------------

META_GROUP = "meta.k8s.io"
_META_VERSIONS = ("v1", "v1beta1")
_CONVERSIONS = ("Table", "PartialObjectMetadata", "PartialObjectMetadataList")
_JSON_RANGES = ("application/json", "application/*", "*/*")


@dataclass(frozen=True)
class Output:
    """What a request asked to get back (its Accept): the object itself (kind None) or a
    meta.k8s.io conversion of it: Table, PartialObjectMetadata, PartialObjectMetadataList."""

    kind: str | None = None
    version: str = "v1"

    @property
    def api_version(self) -> str:
        return f"{META_GROUP}/{self.version}"


PLAIN = Output()


def negotiate(accept: str) -> Output:
    """kube-apiserver's NegotiateOutputMediaType, for the JSON it serves: the first Accept
    clause (highest q first, then in the client's order) that is JSON with either no `as`
    or one of the meta.k8s.io conversions; 406 NotAcceptable when no clause is.

    As on the real server the choice ignores whether the conversion fits the endpoint
    (PartialObjectMetadata on a list is picked, then refused with 406 by `list_as`)."""
    if not accept.strip():
        return PLAIN
    clauses: list[tuple[float, str, dict[str, str]]] = []
    for clause in accept.split(","):
        media, *raw_params = clause.split(";")
        params: dict[str, str] = {}
        for raw in raw_params:
            key, _, value = raw.partition("=")
            params[key.strip().lower()] = value.strip().strip('"')
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 0.0
        if q > 0:
            clauses.append((q, media.strip().lower(), params))
    clauses.sort(key=lambda c: -c[0])  # stable: equal q keeps the client's order
    for _, media, params in clauses:
        if media not in _JSON_RANGES:
            continue
        kind = params.get("as")
        if kind is None:
            return PLAIN
        if (
            kind in _CONVERSIONS
            and params.get("g") == META_GROUP
            and params.get("v") in _META_VERSIONS
        ):
            return Output(kind, params["v"])
    raise api_error(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json "
        "(LocalApiServer serves JSON only; conversions: as=Table, as=PartialObjectMetadata, "
        "as=PartialObjectMetadataList with g=meta.k8s.io;v=v1)",
    )


def _go_type(served: Served, list_: bool) -> str:
    """How kube-apiserver names the stored type in a NotAcceptable message."""
    if served.custom:
        return "*unstructured.UnstructuredList" if list_ else "*unstructured.Unstructured"
    pkg = served.api.group.split(".")[0] or "core"
    return f"*{pkg}.{served.api.kind}{'List' if list_ else ''}"


def partial_object(obj: ObjDict, out: Output) -> ObjDict:
    """meta/v1 PartialObjectMetadata of an object: its metadata only (typed ObjectMeta order,
    also for custom resources)."""
    meta = objs.order_object({"metadata": obj.get("metadata") or {}}, False)["metadata"]
    return {"kind": "PartialObjectMetadata", "apiVersion": out.api_version, "metadata": meta}


def render_as(obj: ObjDict, served: Served, out: Output) -> ObjDict:
    """A single object (get, watch event, write response) as the request asked for it.

    A Table of one object is not implemented: such requests get the object itself."""
    if out.kind == "PartialObjectMetadata":
        return partial_object(obj, out)
    if out.kind == "PartialObjectMetadataList":
        raise api_error(
            406,
            "NotAcceptable",
            "you requested PartialObjectMetadataList, but the requested object is not a list "
            f"({_go_type(served, False)})",
        )
    return render(obj, served)


# --- list --------------------------------------------------------------------------------------


def render(obj: ObjDict, served: Served, *, in_list: bool = False) -> ObjDict:
    """The object as this version serves it (typed list items carry no kind/apiVersion)."""
    if obj.get("apiVersion") != served.api.api_version:
        obj = dict(obj, apiVersion=served.api.api_version)
        if served.custom:
            obj = objs.order_object(obj, True)
    if in_list and not served.custom:
        return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
    return obj


def encoded(store: Store, obj: ObjDict, served: Served, out: Output | None = None) -> bytes:
    """The JSON of `obj` as `render_as` (or, with no `out`, as a list item) gives it, encoded
    once per stored version and form (`Store.encoded`)."""
    if out is None:
        form: tuple[object, ...] = ("item", served.api.api_version, served.custom)
        return store.encoded(
            served.skey, obj, form, lambda: encode(render(obj, served, in_list=True))
        )
    form = ("object", served.api.api_version, served.custom, out.kind, out.version)
    return store.encoded(served.skey, obj, form, lambda: encode(render_as(obj, served, out)))


@dataclass
class ListResult:
    rv: int
    items: list[ObjDict]  # the stored objects; rendered for the response by `list_as`
    continue_: str = ""
    remaining: int | None = None


def list_objects(
    store: Store, served: Served, ns: str | None, q: Mapping[str, str], too_large_wait: float
) -> ListResult:
    validate_list_options(q, watch=False)
    label_match, field_match, selected = selectors(served, q)
    rv_s, match, cont = (
        q.get("resourceVersion", ""),
        q.get("resourceVersionMatch", ""),
        q.get("continue", ""),
    )
    limit = max(0, int_param(q, "limit"))
    prefix = f"{ns}/" if served.api.namespaced and ns else ""
    if cont:
        if rv_s:
            raise api_error(
                400, "BadRequest", "specifying resource version is not allowed when using continue"
            )
        at, start = decode_continue(cont)
        if at < 0:
            at, items = store.current(served.skey, prefix)
        else:
            try:
                items = store.snapshot(served.skey, at, prefix)
            except TooOldError:
                raise ApiError(
                    410,
                    errors.status_body(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent list result. "
                        "You can start a new list without the continue parameter, or use the continue token "
                        "in this response to retrieve the remainder of the results. Continuing with the "
                        "provided token results in an inconsistent list - objects that were created, "
                        "modified, or deleted between the time the first chunk was returned and now may "
                        "show up in the list.",
                        metadata={"continue": encode_continue(-1, start[1:])},
                    ),
                ) from None
    else:
        start = ""
        if rv_s in ("", "0"):
            at, items = store.current(served.skey, prefix)
            if rv_s == "0":
                limit = 0  # served from the watch cache, which ignores limit
        else:
            want = parse_rv(rv_s, watch=False)
            if want > store.rv and not store.wait_for_rv(want, too_large_wait):
                raise too_large(want, store.rv)
            if match == "Exact":
                try:
                    items = store.snapshot(served.skey, want, prefix)
                except TooOldError:
                    raise api_error(
                        410, "Expired", "The resourceVersion for the provided list is too old."
                    ) from None
                at = want
            else:
                at, items = store.current(served.skey, prefix)
    cut = len(prefix)
    rel = [("/" + k[cut:], o) for k, o in items]
    i = 0
    if start:
        while i < len(rel) and rel[i][0] < start:
            i += 1
    page: list[ObjDict] = []
    last = i
    while i < len(rel) and (not limit or len(page) < limit):
        obj = rel[i][1]
        meta = obj["metadata"]
        if label_match(meta.get("labels") or {}) and field_match(obj):
            page.append(obj)
        last = i
        i += 1
    result = ListResult(at, page)
    if limit and i < len(rel):
        result.continue_ = encode_continue(at, rel[last][0] + "\x00")
        if not selected:
            result.remaining = len(rel) - i
    return result


def too_large(want: int, current: int) -> ApiError:
    return ApiError(
        504,
        errors.status_body(
            504,
            "Timeout",
            f"Timeout: Too large resource version: {want}, current: {current}",
            {
                "causes": [
                    {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
                ],
                "retryAfterSeconds": 1,
            },
        ),
        {"Retry-After": "1"},
    )


def list_body(store: Store, served: Served, result: ListResult) -> ObjDict:
    meta: ObjDict = {"resourceVersion": str(result.rv)}
    if result.continue_ or served.custom:
        meta["continue"] = result.continue_
    if result.remaining is not None:
        meta["remainingItemCount"] = result.remaining
    items = [msgspec.Raw(encoded(store, o, served)) for o in result.items]
    if served.custom:  # the unstructured encoder's sorted keys (items are sorted already)
        meta = {k: meta[k] for k in sorted(meta)}
        return {
            "apiVersion": served.api.api_version,
            "items": items,
            "kind": served.api.list_kind,
            "metadata": meta,
        }
    return {
        "kind": served.api.list_kind,
        "apiVersion": served.api.api_version,
        "metadata": meta,
        "items": items,
    }


def list_as(store: Store, served: Served, result: ListResult, out: Output) -> ObjDict:
    """A list response in the negotiated form (`negotiate`)."""
    if out.kind is None:
        return list_body(store, served, result)
    if out.kind == "Table":
        return dict(table_body(served, result), apiVersion=out.api_version)
    if out.kind == "PartialObjectMetadataList":
        # Typed ListMeta: empty continue is omitted, unlike an unstructured (CR) list.
        meta: ObjDict = {"resourceVersion": str(result.rv)}
        if result.continue_:
            meta["continue"] = result.continue_
        if result.remaining is not None:
            meta["remainingItemCount"] = result.remaining
        return {
            "kind": "PartialObjectMetadataList",
            "apiVersion": out.api_version,
            "metadata": meta,
            "items": [partial_object(o, out) for o in result.items],
        }
    raise api_error(
        406,
        "NotAcceptable",
        "you requested PartialObjectMetadata, but the requested object is a list "
        f"({_go_type(served, True)})",
    )


def table_body(served: Served, result: ListResult) -> ObjDict:
    """The default table convertor's Table (Name, Created At), as `kubectl get` asks for."""
    meta: ObjDict = {"resourceVersion": str(result.rv)}
    if result.continue_:
        meta["continue"] = result.continue_
    if result.remaining is not None:
        meta["remainingItemCount"] = result.remaining
    cols = [
        {
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": "Name must be unique within a namespace.",
            "priority": 0,
        },
        {
            "name": "Created At",
            "type": "date",
            "format": "",
            "description": "CreationTimestamp is "
            "a timestamp representing the server time when this object was created.",
            "priority": 0,
        },
    ]
    rows = [
        {
            "cells": [o["metadata"].get("name"), o["metadata"].get("creationTimestamp")],
            "object": {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": o["metadata"],
            },
        }
        for o in result.items
    ]
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": cols,
        "rows": rows,
    }


# --- watch ---------------------------------------------------------------------------------------


@dataclass
class WatchPlan:
    """What a watch stream sends first, and the registered watcher for what follows."""

    served: Served
    watcher: Watcher | None
    initial: list[tuple[str, ObjDict | Event]] = field(default_factory=list)
    initial_end_rv: int | None = None  # send the initial-events-end bookmark at this RV
    error: ObjDict | None = None  # an ERROR event (then the stream ends)
    bookmarks: bool = False
    timeout: float | None = None
    output: Output = PLAIN


def plan_watch(
    store: Store,
    served: Served,
    ns: str | None,
    q: Mapping[str, str],
    watch_list_supported: bool,
    too_large_wait: float,
    output: Output = PLAIN,
) -> WatchPlan:
    validate_list_options(q, watch=True)
    if output.kind == "PartialObjectMetadataList":
        # The real server starts the stream and fails on the first object; refused up front.
        render_as({}, served, output)
    rv_s = q.get("resourceVersion", "")
    want = parse_rv(rv_s, watch=True) if rv_s else None
    label_match, field_match, _ = selectors(served, q)
    sie_raw = q.get("sendInitialEvents")
    bookmarks = truthy(q.get("allowWatchBookmarks"))
    timeout = float(int_param(q, "timeoutSeconds")) or None
    plan = WatchPlan(served, None, bookmarks=bookmarks, timeout=timeout, output=output)
    if truthy(sie_raw) and not watch_list_supported:
        plan.error = errors.status_body(
            500,
            "InternalError",
            "a watch stream was requested by the "
            "client but the required storage feature RequestWatchProgress is disabled",
        )
        return plan
    send_initial = truthy(sie_raw) if sie_raw is not None else not want
    prefix = f"{ns}/" if served.api.namespaced and ns else ""
    watcher = Watcher(
        served.skey, ns if served.api.namespaced else None, label_match, field_match, 0
    )
    if send_initial and want and want > store.rv and not store.wait_for_rv(want, too_large_wait):
        plan.error = too_large(want, store.rv).body
        return plan
    with store.lock:
        if send_initial:
            at, items = store.current(served.skey, prefix)
            plan.initial = [("ADDED", o) for _, o in items if watcher.visible(o)]
            store.start_watch(watcher, None)
            if bookmarks:
                plan.initial_end_rv = at
        else:
            try:
                _, replay = store.start_watch(watcher, want or None)
            except TooOldError as err:
                plan.error = errors.status_body(410, "Expired", str(err))
                return plan
            plan.initial = list(replay)
    plan.watcher = watcher
    return plan


def bookmark_object(
    served: Served, rv: int, initial_end: bool = False, output: Output = PLAIN
) -> ObjDict:
    meta: ObjDict = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    if output.kind == "PartialObjectMetadata":
        return partial_object({"metadata": meta}, output)
    obj: ObjDict = {"kind": served.api.kind, "apiVersion": served.api.api_version, "metadata": meta}
    obj.update(BOOKMARK_EXTRAS.get(served.skey, {}))
    return objs.order_object(obj, True) if served.custom else obj
