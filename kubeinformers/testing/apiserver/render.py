"""LocalApiServer's response forms: Accept negotiation and how objects and lists are rendered.

Split from the REST semantics (`api`) because what a response looks like on the wire
(the object as a version serves it, a list, a Table, PartialObjectMetadata(List), the cached
encoded bytes) is one concept, and deciding which objects a request gets is another.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from kubeinformers.testing.apiserver import objects as objs
from kubeinformers.testing.apiserver.errors import ObjDict, api_error
from kubeinformers.testing.apiserver.registry import Served
from kubeinformers.testing.apiserver.store import Store, encode

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


# --- render ------------------------------------------------------------------------------------


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


# --- list responses ----------------------------------------------------------------------------


@dataclass
class ListResult:
    rv: int
    items: list[ObjDict]  # the stored objects; rendered for the response by `list_as`
    continue_: str = ""
    remaining: int | None = None
    shard_selector: str = ""  # echoed as metadata.shardInfo.selector (KEP-5866)


def list_body(store: Store, served: Served, result: ListResult) -> ObjDict:
    meta: ObjDict = {"resourceVersion": str(result.rv)}
    if result.continue_ or served.custom:
        meta["continue"] = result.continue_
    if result.remaining is not None:
        meta["remainingItemCount"] = result.remaining
    if result.shard_selector:
        meta["shardInfo"] = {"selector": result.shard_selector}
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
        if result.shard_selector:
            meta["shardInfo"] = {"selector": result.shard_selector}
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
