"""LocalApiServer's REST semantics for reads: list options, continue tokens, lists, watch setup.

Independent of HTTP: each operation takes the served resource, the namespace and the query,
and returns its result or raises `ApiError` with the Status the real kube-apiserver sends
(wording, reason and code as in the recorded transcripts). Lists honour
resourceVersion / resourceVersionMatch / limit / continue / selectors as kube-apiserver 1.36
does; watches are prepared here (validation, initial events, registration) and streamed by
the HTTP layer. Served resources are in `registry`, response forms in
`render`, writes in `write`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeinformers.runtime.api.shard import Shard
from kubeinformers.testing.apiserver import errors
from kubeinformers.testing.apiserver import objects as objs
from kubeinformers.testing.apiserver.errors import ApiError, ObjDict, api_error
from kubeinformers.testing.apiserver.registry import Served
from kubeinformers.testing.apiserver.render import (
    PLAIN,
    ListResult,
    Output,
    partial_object,
    render_as,
)
from kubeinformers.testing.apiserver.selectors import (
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)
from kubeinformers.testing.apiserver.store import Event, SKey, Store, TooOldError, Watcher

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_CONTINUE_VERSION = "meta.k8s.io/v1"
# Zero-valued, non-omitempty fields Go's typed encoders add to a bookmark's object.
BOOKMARK_EXTRAS: dict[SKey, ObjDict] = {("", "pods"): {"spec": {"containers": None}, "status": {}}}


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
    text = raw.decode("latin-1")
    why = errors.go_json_error(text)
    if why is not None:
        raise bad(why)
    data = json.loads(text)
    if not isinstance(data, dict):
        raise bad(f"incorrect encoded start resourceVersion (version {_CONTINUE_VERSION})")
    if data.get("v") != _CONTINUE_VERSION:
        raise bad(f"server does not recognize this encoded version {data.get('v') or ''}")
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
            f'strconv.ParseInt: parsing "{raw}": invalid syntax',
        ) from None


def selectors(
    served: Served, q: Mapping[str, str], *, sharding: bool = False
) -> tuple[Callable[..., bool], Callable[..., bool], bool]:
    """(label matcher, field matcher, any selector given); 400 BadRequest on a bad selector.

    With `sharding` (the ShardedListAndWatch gate) the field matcher also applies the
    `shardSelector` (KEP-5866), which is not counted as a selector (a paged list still says
    how many items remain, as kube-apiserver does); without it the parameter is ignored."""
    try:
        labels = parse_label_selector(q.get("labelSelector", ""))
        fields = parse_field_selector(q.get("fieldSelector", ""), served.field_labels, served.skey)
    except SelectorError as err:
        raise api_error(400, "BadRequest", str(err)) from None
    shard = shard_of(q, sharding)
    if shard is not None:
        by_field, contains = fields, shard.contains

        def by_field_and_shard(obj: Mapping[str, Any]) -> bool:
            return bool(by_field(obj)) and contains(obj)

        fields = by_field_and_shard
    return labels, fields, bool(q.get("labelSelector") or q.get("fieldSelector"))


def shard_of(q: Mapping[str, str], sharding: bool) -> Shard | None:
    """The request's shardSelector when the gate is on (kube-apiserver answers a malformed
    one with 500 "invalid shard selector: ...")."""
    selector = q.get("shardSelector", "")
    if not sharding or not selector:
        return None
    try:
        return Shard.parse(selector)
    except ValueError as err:
        raise api_error(500, "InternalError", f"invalid shard selector: {err}") from None


# --- list --------------------------------------------------------------------------------------


def list_objects(
    store: Store,
    served: Served,
    ns: str | None,
    q: Mapping[str, str],
    too_large_wait: float,
    *,
    sharding: bool = False,
) -> ListResult:
    validate_list_options(q, watch=False)
    label_match, field_match, selected = selectors(served, q, sharding=sharding)
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
            if not rv_s:
                store.consistent_read(served.skey)
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
    if shard_of(q, sharding) is not None:
        result.shard_selector = q["shardSelector"]  # ListMeta.shardInfo: the server applied it
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
    *,
    sharding: bool = False,
) -> WatchPlan:
    validate_list_options(q, watch=True)
    if output.kind == "PartialObjectMetadataList":
        # The real server starts the stream and fails on the first object; refused up front.
        render_as({}, served, output)
    rv_s = q.get("resourceVersion", "")
    want = parse_rv(rv_s, watch=True) if rv_s else None
    label_match, field_match, _ = selectors(served, q, sharding=sharding)
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
            if not rv_s:
                store.consistent_read(served.skey)
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
