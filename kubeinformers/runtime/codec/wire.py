"""Decoding list pages and watch lines from JSON bytes straight into models.

`JsonDecoder(model)` is the transport's eager `decoder`: a list page is split into its items'
raw JSON and each item validated with `model_validate_json`; a watch line is one
`model_validate_json` (through a cached generic wrapper `EventWire[model]`), so no
intermediate dict is built and no `kubernetes` model is used.
ERROR events decode into a Status. BOOKMARK objects carry only metadata, which would fail
a kind's required fields, so they are built without validation (`model_construct`) with the
metadata as the API's mapping; the keys accessors read both shapes.
`model=dict` decodes with the json module (orjson when installed) into plain dicts; a list
item with neither kind nor apiVersion gets the list's, as client-go's unstructured decoding
gives it (`set_list_item_types`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from contextlib import closing
from typing import Any, Generic, TypeVar, cast

import msgspec
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kubeinformers.runtime.api.listwatch import (
    ObjectList,
    WatchEvent,
    WatchEventType,
    an_event,
)
from kubeinformers.runtime.api.model import Status
from kubeinformers.runtime.codec.drift import PartlyInvalidObjectError, build_lenient, remedy
from kubeinformers.runtime.codec.gc_pause import gc_paused, paused_over
from kubeinformers.runtime.codec.json_list import (
    JsonListStream,
    decode_list_body,
    shard_selector_of,
)
from kubeinformers.runtime.codec.lazy import LazyModelBuilder

T = TypeVar("T")

_loads: Callable[[bytes], Any]
try:  # optional speed-up (the `bench` extra)
    import orjson

    _loads = orjson.loads
except ImportError:  # pragma: no cover - depends on the environment
    _loads = json.loads

# A stall this long while a streamed list page arrives turns the collector on (a stalled
# server must not keep it off): as for a watch-list's initial events.
LIST_GC_PAUSE_LIMIT = 30.0

_TYPE_RE = re.compile(rb'^\s*\{\s*"type"\s*:\s*"([A-Z]+)"')
_WIRE = ConfigDict(extra="ignore", populate_by_name=True)


class _ListMetaWire(BaseModel):
    model_config = _WIRE
    resource_version: str = Field("", alias="resourceVersion")
    continue_: str | None = Field(None, alias="continue")
    remaining_item_count: int | None = Field(None, alias="remainingItemCount")


class ListWire(BaseModel, Generic[T]):
    """A list response: only what the reflector needs besides the items."""

    model_config = _WIRE
    kind: str | None = None
    metadata: _ListMetaWire = Field(default_factory=_ListMetaWire)
    items: list[T] | None = None


class EventWire(BaseModel, Generic[T]):
    """One watch line: `{"type": ..., "object": ...}`."""

    model_config = _WIRE
    type: str
    object: T


class _MetaWire(BaseModel):
    model_config = _WIRE
    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = Field(None, alias="resourceVersion")


class _ObjectMetaOnly(BaseModel):
    model_config = _WIRE
    kind: str | None = None
    api_version: str | None = Field(None, alias="apiVersion")
    metadata: _MetaWire | None = None


class _EventMetaOnly(BaseModel):
    model_config = _WIRE
    type: str | None = None
    object: _ObjectMetaOnly | None = None


class _BookmarkObject(BaseModel):
    model_config = _WIRE
    kind: str | None = None
    api_version: str | None = Field(None, alias="apiVersion")
    metadata: dict[str, Any] | None = None


class _TypeOnly(BaseModel):
    model_config = _WIRE
    type: str | None = None


class ObjectDecodeError(ValueError):
    """One object could not be decoded into the model: which object, which field, why."""

    def __init__(
        self,
        what: str,
        key: str,
        resource_version: str,
        path: str,
        reason: str,
        event_type: str | None = None,
    ) -> None:
        where = f" in {an_event(event_type)} watch event" if event_type else " in a list page"
        field = f"field {path}: " if path else ""
        super().__init__(
            f"cannot decode {what} object {key or '<unnamed>'} "
            f"(resourceVersion {resource_version or '?'}){where}: {field}{reason}"
        )
        self.key = key
        self.resource_version = resource_version
        self.path = path
        self.reason = reason
        self.event_type = event_type
        # The event with the object kept at this version, built field by field (the fields
        # that do not validate raise InvalidFieldError when read; runtime.codec.drift), so
        # the cache never lacks an object the server has, nor keeps one it deleted or an
        # older version of it. None when the object has no identity to cache it by.
        self.kept: WatchEvent[Any] | None = None
        self.cached = False  # whether the object is cached (kept), a list item's too
        # What to do about it (K11): regenerate the models, or, for a required field the
        # server did not send, perhaps write it to the object (runtime.codec.drift.remedy).
        self.remedy = remedy(())


def _key(meta: _MetaWire | None) -> tuple[str, str]:
    if meta is None:
        return "", ""
    name = meta.name or ""
    key = f"{meta.namespace}/{name}" if meta.namespace else name
    return key, meta.resource_version or ""


def _first_error(
    err: ValidationError, strip: int, partly: PartlyInvalidObjectError | None = None
) -> tuple[str, str]:
    """The first error's field path (without the wrapper's leading parts) and message; those
    of the object's first bad field as its lenient build found it (`partly`, K11), when given:
    `spec.parts[0].count` and the reason a lazy read's InvalidFieldError gives."""
    if partly is not None and partly.fields:
        first_field, count = partly.fields[0], len(partly.fields)
        more = f" (and {count - 1} more)" if count > 1 else ""
        return first_field.path, f"{first_field.reason}{more}"
    errors = err.errors(include_url=False)
    if not errors:
        return "", str(err)
    first = errors[0]
    loc = ".".join(str(p) for p in first.get("loc", ())[strip:])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return loc, f"{first.get('msg', 'invalid')}{more}"


class JsonDecoder(Generic[T]):
    """The default decoder: JSON bytes → `model` instances (or dicts for `model=dict`)."""

    def __init__(self, model: type[T], *, describe: str = "") -> None:
        self.model = model
        self.what = describe or getattr(model, "__name__", str(model))
        self._dict = model is dict
        if not self._dict:
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                raise TypeError(f"model must be a pydantic model class or dict, got {model!r}")

    # The wire model builds the model's whole validation schema (~0.1 s for a Pod): only when
    # first used, so a lazy informer, which never needs it for its own model, never pays.
    @functools.cached_property
    def _event_wire(self) -> type[EventWire[Any]]:
        return EventWire[self.model]  # type: ignore[name-defined]

    # ----------------------------------------------------------------------------- lists

    def decode_list(self, data: bytes) -> ObjectList[T]:
        if self._dict:
            with gc_paused():
                raw = _loads(data)
            reject_table(raw.get("kind"), self.what)
            md = raw.get("metadata") or {}
            objects: list[Any] = raw.get("items") or []
            set_list_item_types(objects, raw.get("apiVersion"), raw.get("kind"))
            return ObjectList(
                items=objects,
                resource_version=md.get("resourceVersion") or "",
                continue_=md.get("continue") or None,
                remaining_item_count=md.get("remainingItemCount"),
                shard_selector=(md.get("shardInfo") or {}).get("selector"),
            )
        # The page is split into its items' raw JSON first (msgspec, no objects built) and
        # each item validated on its own: validating the whole page in one call makes pydantic
        # parse all of it into one tree first (47 MB of JSON for 10,000 pods), which took twice
        # the CPU, half of it the kernel's page faults (python -m bench.eager_wire).
        try:
            body = decode_list_body(data)
        except msgspec.DecodeError as e:
            raise ValueError(f"cannot decode a list page of {self.what}: {e}") from e
        reject_table(body.kind, self.what)
        validate = self._validate
        items: list[BaseModel] = []
        append = items.append
        try:
            with gc_paused():
                for item in body.items or ():
                    append(validate(bytes(item)))
        except ValidationError as e:
            raise ValueError(
                f"cannot decode a list page of {self.what}: item {len(items)}: {e}"
            ) from e
        return ObjectList(
            items=cast("list[T]", items),
            resource_version=body.metadata.resourceVersion,
            continue_=body.metadata.continue_ or None,
            remaining_item_count=body.metadata.remainingItemCount,
            shard_selector=shard_selector_of(body.metadata),
        )

    def decode_list_stream(
        self, chunks: Iterable[bytes]
    ) -> tuple[ObjectList[T], list[ObjectDecodeError]]:
        """A list body given in pieces as it arrives (`chunks`), each item validated as soon as
        it is cut out of the body (rule K8), and each on its own (K7): an item that fails
        validation is returned as an error, its key and field path named, and kept in the page
        as a lazy object whose full read raises."""
        stream = JsonListStream(chunks)
        items: list[Any] = []
        bad: list[ObjectDecodeError] = []
        try:
            with closing(paused_over(stream.items(), LIST_GC_PAUSE_LIMIT)) as arriving:
                if self._dict:
                    items.extend(_loads(item) for item in arriving)
                else:
                    self._validate_items(arriving, items, bad)
        except ValueError as exc:  # the body itself (items are checked one by one above)
            raise ValueError(f"cannot decode a list page of {self.what}: {exc}") from None
        reject_table(stream.kind, self.what)
        if self._dict:
            set_list_item_types(items, stream.api_version, stream.kind)
        page = ObjectList(
            items=cast("list[T]", items),
            resource_version=stream.resource_version,
            continue_=stream.continue_ or None,
            remaining_item_count=stream.remaining_item_count,
            shard_selector=stream.shard_selector,
        )
        return page, bad

    def _validate_items(
        self, raws: Iterable[bytes], items: list[Any], bad: list[ObjectDecodeError]
    ) -> None:
        validate = self._validate
        append = items.append
        for raw in raws:
            try:
                append(validate(raw))
            except ValidationError as exc:
                error, kept = self.bad_item(raw, exc)
                bad.append(error)
                if kept is not None:
                    append(kept)

    def bad_item(self, raw: bytes, exc: ValidationError) -> tuple[ObjectDecodeError, T | None]:
        """A list item that failed validation (K7): the error naming it (key, resourceVersion,
        first failing field) and the object that keeps it in the page (K11: built field by
        field, its bad fields raising when read); None where there is no identity to keep it
        by (the model has none, or the item's own is malformed: no key, so no place in a
        cache)."""
        try:
            meta = _ObjectMetaOnly.model_validate_json(raw).metadata
        except ValidationError:
            meta = None
        key, rv = _key(meta)
        if meta is None or not self._keeper.supported:
            return ObjectDecodeError(self.what, key, rv, *_first_error(exc, 0)), None
        kept, partly = self._keep(raw, key)
        error = ObjectDecodeError(self.what, key, rv, *_first_error(exc, 0, partly))
        error.cached = kept is not None
        error.remedy = remedy(f.reason for f in partly.fields) if partly else error.remedy
        return error, kept

    def _keep(self, raw: bytes, key: str) -> tuple[T | None, PartlyInvalidObjectError | None]:
        """The object of `raw`, which failed validation, built field by field (K11), with
        what is wrong with its fields; else (no JSON object) a lazy one whose full read
        raises; None if its identity is malformed."""
        try:
            data = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            data = None
        if type(data) is dict:
            obj, partly = build_lenient(cast("type[BaseModel]", self.model), data, key)
            return cast("T", obj), partly
        try:
            return cast("T", self._keeper.build(raw)), None
        except ValidationError:  # the identity itself is malformed (build validates it)
            return None, None

    @functools.cached_property
    def _keeper(self) -> LazyModelBuilder[Any]:
        return LazyModelBuilder(cast("type[BaseModel]", self.model))

    def decode_list_skipping(self, data: bytes) -> tuple[ObjectList[T], list[ObjectDecodeError]]:
        """The slow path after a page failed: decode item by item, returning the bad ones apart.

        A bad item stays in the page as a lazy object (its identity readable, a full read
        raising InvalidObjectError): it exists on the server, so a relist must not delete it
        from the cache and hand handlers a tombstone for it.
        """
        return self.decode_list_stream((data,))

    # ----------------------------------------------------------------------------- events

    def decode_event(self, line: bytes) -> WatchEvent[T]:
        match = _TYPE_RE.match(line)
        etype = match.group(1).decode() if match else _TypeOnly.model_validate_json(line).type
        if self._dict:
            raw = _loads(line)
            obj = raw.get("object")
            etype = raw.get("type", etype)
            if etype == "ERROR":
                return WatchEvent("ERROR", Status.model_validate(obj or {}))
            return WatchEvent(cast(WatchEventType, etype), obj)
        if etype == "ERROR":
            status = EventWire[Status].model_validate_json(line).object
            return WatchEvent("ERROR", status)
        if etype == "BOOKMARK":
            bm = EventWire[_BookmarkObject].model_validate_json(line).object
            obj = cast(Any, self.model).model_construct(metadata=bm.metadata or {})
            return WatchEvent("BOOKMARK", obj)
        try:
            wire = self._event_wire.model_validate_json(line)
        except ValidationError as e:
            raise self._object_error(line, e, etype) from e
        return WatchEvent(cast(WatchEventType, wire.type), wire.object)

    def _validate(self, raw: bytes) -> BaseModel:
        """One item validated into the model (its field sets shared: runtime.api.model)."""
        return cast("type[BaseModel]", self.model).model_validate_json(raw)

    def _object_error(self, line: bytes, err: ValidationError, etype: str | None) -> ValueError:
        """Name the object (parsing just its metadata) and the failing field; an ADDED,
        MODIFIED or DELETED object is kept (`kept`), built field by field (K11)."""
        try:
            meta = _EventMetaOnly.model_validate_json(line)
        except ValidationError:
            return ValueError(f"cannot decode a watch event of {self.what}: {err}")
        if meta.object is None:
            return ValueError(f"cannot decode a watch event of {self.what}: {err}")
        key, rv = _key(meta.object.metadata)
        kept: T | None = None
        partly: PartlyInvalidObjectError | None = None
        if etype in ("ADDED", "MODIFIED", "DELETED") and self._keeper.supported:
            kept, partly = self._keep(bytes(_decode_raw_event(line).object), key)
        # The leading "object" of pydantic's path is dropped.
        error = ObjectDecodeError(
            self.what, key, rv, *_first_error(err, 1, partly), etype or meta.type
        )
        if kept is not None:
            error.kept = WatchEvent(cast(WatchEventType, etype), kept)
            error.cached = True
        error.remedy = remedy(f.reason for f in partly.fields) if partly else error.remedy
        return error


class _RawEvent(msgspec.Struct):
    object: msgspec.Raw = msgspec.Raw(b"null")


_decode_raw_event = msgspec.json.Decoder(_RawEvent).decode


def set_list_item_types(items: list[Any], api_version: Any, kind: Any) -> None:
    """Give every plain-dict item that has neither `kind` nor `apiVersion` the list's
    apiVersion and its kind without "List" (J1), as client-go's unstructured list decoding
    does (apimachinery unstructured `decodeToList`): kube-apiserver leaves them out of a
    built-in kind's list items (a ConfigMapList's) while every watched object has them, so a
    dynamic cache would otherwise hold both shapes. Custom resources' items have their own."""
    list_kind = kind if isinstance(kind, str) else ""
    list_api_version = api_version if isinstance(api_version, str) else ""
    if not list_kind and not list_api_version:
        return
    item_kind = list_kind.removesuffix("List")
    for item in items:
        if (
            type(item) is dict
            and not _nonempty_str(item.get("kind"))
            and not _nonempty_str(item.get("apiVersion"))
        ):
            item["kind"] = item_kind
            item["apiVersion"] = list_api_version


def _nonempty_str(value: Any) -> bool:
    """Whether `value` reads as a kind or apiVersion (unstructured's GetKind: a string)."""
    return isinstance(value, str) and value != ""


def reject_table(kind: Any, what: str) -> None:
    """D9: a Table is a server-side rendering, not a list of objects."""
    if kind == "Table":
        raise ValueError(f"cannot list {what}: the server answered with a Table, not a list")


__all__ = [
    "EventWire",
    "JsonDecoder",
    "ListWire",
    "ObjectDecodeError",
    "set_list_item_types",
]
