"""LazyDecoder: the transport's decoder for lazy models (list pages and watch lines).

Split from `lazy` so that the lazy model builder and the eager `wire` decoder do not import
each other: `wire` builds lazy objects for items that fail validation, and this decoder falls
back to `wire` for models the lazy path cannot handle.
"""

from __future__ import annotations

import itertools
import typing
from collections.abc import Callable, Iterable
from typing import TypeVar

import msgspec
from pydantic import BaseModel, ValidationError

from kubeinformers.runtime.api.listwatch import ObjectList, WatchEvent, WatchEventType
from kubeinformers.runtime.api.model import Status
from kubeinformers.runtime.codec.compact import Compactor
from kubeinformers.runtime.codec.drift import InvalidObjectError
from kubeinformers.runtime.codec.json_list import JsonListStream, decode_list_body
from kubeinformers.runtime.codec.lazy import (
    _NULL,
    LazyModelBuilder,
    _Identity,
)
from kubeinformers.runtime.codec.wire import JsonDecoder, reject_table

__all__ = ["LazyDecoder"]

M = TypeVar("M", bound=BaseModel)


class _ObjectIdentity(msgspec.Struct, gc=False):
    metadata: _Identity | None = None


class _CanonicalEvent(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A watch event with exactly the keys kube-apiserver writes (`type`, then `object`)."""

    type: str
    object: _ObjectIdentity | None = None


_decode_canonical_event = msgspec.json.Decoder(_CanonicalEvent).decode
_EVENT_PREFIX = b'{"type":"'
_OBJECT_KEY = b'","object":'
_CANONICAL_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED"})


class _EventBody(msgspec.Struct, gc=False):
    type: str
    object: msgspec.Raw = _NULL


_decode_event_body = msgspec.json.Decoder(_EventBody).decode


class LazyDecoder(typing.Generic[M]):
    """The transport's decoder for lazy models: split bodies into items, decode identities.

    A list page is split into raw items without building any object; each item becomes a
    lazy model. ERROR events decode into a Status. Anything the lazy path cannot handle (a
    model without identity metadata) goes through the eager `fallback` decoder. With a
    `compactor` the lazy models keep their bytes compressed (the compact store).
    """

    def __init__(
        self,
        model: type[M],
        *,
        on_invalid: Callable[[InvalidObjectError], None] | None = None,
        describe: str = "",
        compactor: Compactor | None = None,
    ) -> None:
        self.model = model
        self.what = describe or model.__name__
        self.builder = LazyModelBuilder(model, on_invalid=on_invalid, compactor=compactor)
        self.fallback: JsonDecoder[M] = JsonDecoder(model, describe=self.what)

    def decode_list(self, data: bytes) -> ObjectList[M]:
        if not self.builder.supported:
            return self.fallback.decode_list(data)
        try:
            body = decode_list_body(data)
        except msgspec.DecodeError as exc:
            raise ValueError(f"cannot decode a list page of {self.what}: {exc}") from exc
        reject_table(body.kind, self.what)
        items = body.items or ()
        self.builder.train(bytes(raw) for raw in items)
        build = self.builder.build
        return ObjectList(
            items=[build(raw) for raw in items],
            resource_version=body.metadata.resourceVersion,
            continue_=body.metadata.continue_ or None,
            remaining_item_count=body.metadata.remainingItemCount,
        )

    def decode_list_stream(self, chunks: Iterable[bytes]) -> tuple[ObjectList[M], list[Exception]]:
        """A list body given in pieces as it arrives (`chunks`), each item made a lazy object
        as soon as it is cut out of the body (rule K8). Lazy objects are validated on their
        first full read; only an item whose identity cannot be read is reported here, and kept
        as the eager decoder keeps a bad item (K7)."""
        if not self.builder.supported:
            eager_page, eager_bad = self.fallback.decode_list_stream(chunks)
            return eager_page, list(eager_bad)
        stream = JsonListStream(chunks)
        build = self.builder.build
        bad: list[Exception] = []
        objects: list[M] = []

        def add(raws: Iterable[bytes]) -> None:
            append = objects.append
            for raw in raws:
                try:
                    append(build(raw))
                except ValidationError as exc:  # its identity is malformed: see build
                    error, kept = self.fallback.bad_item(raw, exc)
                    bad.append(error)
                    if kept is not None:
                        append(kept)

        try:
            items = stream.items()
            # The compact store's dictionary is trained on the first items before any is kept.
            first = list(itertools.islice(items, Compactor.TRAIN_OBJECTS))
            self.builder.train(first)
            add(first)
            del first
            add(items)
        except ValueError as exc:
            raise ValueError(f"cannot decode a list page of {self.what}: {exc}") from None
        reject_table(stream.kind, self.what)
        page = ObjectList(
            items=objects,
            resource_version=stream.resource_version,
            continue_=stream.continue_ or None,
            remaining_item_count=stream.remaining_item_count,
        )
        return page, bad

    def decode_list_skipping(self, data: bytes) -> tuple[ObjectList[M], list[Exception]]:
        """The slow path after a page failed: item by item, the bad ones apart (K7)."""
        return self.decode_list_stream((data,))

    def decode_event(self, line: bytes) -> WatchEvent[M]:
        if not self.builder.supported:
            return self.fallback.decode_event(line)
        fast = self._decode_canonical(line)
        if fast is not None:
            return fast
        try:
            event = _decode_event_body(line)
        except msgspec.DecodeError as exc:
            raise ValueError(f"cannot decode a watch event of {self.what}: {exc}") from exc
        if event.type == "ERROR":
            return WatchEvent("ERROR", Status.model_validate_json(bytes(event.object)))
        if event.type not in _OBJECT_EVENTS:
            raise ValueError(f"unknown watch event type {event.type!r} for {self.what}")
        return WatchEvent(
            typing.cast(WatchEventType, event.type), self.builder.build(bytes(event.object))
        )

    def _decode_canonical(self, line: bytes) -> WatchEvent[M] | None:
        """One parse for an event as kube-apiserver writes it, `{"type":"T","object":{...}}`.

        The parse yields the type and the object's identity; the object's bytes are the slice
        between the `"object":` key and the envelope's closing brace. Anything else (another
        key, another order, escapes, a null object, ERROR or BOOKMARK) returns None and takes
        the general path.
        """
        if type(line) is not bytes or not line.startswith(_EVENT_PREFIX):
            return None
        try:
            head = _decode_canonical_event(line)
        except msgspec.DecodeError:
            return None
        typ, obj = head.type, head.object
        if obj is None or typ not in _CANONICAL_TYPES:
            return None
        start = len(_EVENT_PREFIX) + len(typ)
        if line[start : start + len(_OBJECT_KEY)] != _OBJECT_KEY:
            return None
        end = line.rfind(b"}")
        if line[end + 1 :].strip():
            return None
        raw = line[start + len(_OBJECT_KEY) : end]
        return WatchEvent(
            typing.cast(WatchEventType, typ), self.builder.assemble(raw, obj.metadata)
        )


_OBJECT_EVENTS = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK"})
