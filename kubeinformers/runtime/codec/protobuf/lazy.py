"""Lazy objects whose raw bytes are a protobuf item: how their models are built.

Why: a lazy object keeps the bytes the server sent and builds its model on first access
(runtime.codec.lazy). For protobuf that build is: transcode the item (or, for the lazy
`metadata`, its ObjectMeta, field 1) to the dict Go's JSON would have written, then
`model_validate` it. A malformed item fails like an invalid one: InvalidObjectError naming it.
"""

from __future__ import annotations

import functools
import threading
import types
import typing
from collections.abc import Collection
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from kubeinformers.runtime.codec.lazy import (
    FieldAbsent,
    FieldUnavailable,
    NestedRaw,
    RawFormat,
    field_alias,
    field_validators,
    list_item_model,
    worth_lazy,
)
from kubeinformers.runtime.codec.protobuf.direct import (
    Declined,
    DirectBuild,
    direct_build,
    validates_as_is,
)
from kubeinformers.runtime.codec.protobuf.reader import (
    ProtobufDecodeError,
    read_length,
    read_varint,
    skip_field,
)
from kubeinformers.runtime.codec.protobuf.schema import (
    INLINE,
    ITEMS,
    MAP,
    MESSAGE,
    RAW_JSON,
    REPEATED,
    Field,
    Messages,
)
from kubeinformers.runtime.codec.protobuf.transcode import (
    ABSENT,
    READ_STRING,
    READ_STRING_OMIT,
    Transcoder,
    scalar_reading,
)

__all__ = ["metadata_message", "protobuf_format", "shareable_messages"]

_lock = threading.Lock()
# (id(messages), message, type meta) -> (messages, the format): one lazy class per model and
# format, however many decoders use it. `messages` is kept so its id stays its own.
_formats: dict[tuple[int, str, tuple[str, str] | None], tuple[Messages, RawFormat]] = {}


def metadata_message(messages: Messages, message: str) -> str:
    """The message of `message`'s field 1, its ObjectMeta (ValueError when it has none)."""
    for number, _json_name, kind, ref, _flags in messages.get(message, ()):
        if number == 1 and kind == MESSAGE and ref is not None:
            return ref
    raise ValueError(f"message {message} has no metadata message as field 1")


def protobuf_format(
    messages: Messages, message: str, type_meta: tuple[str, str] | None = None
) -> RawFormat:
    """The RawFormat of lazy `message` items; `type_meta` (apiVersion, kind), when given, is
    added to the built object as the server's JSON has it (watch events, single objects)."""
    key = (id(messages), message, type_meta)
    with _lock:
        known = _formats.get(key)
        if known is not None and known[0] is messages:
            return known[1]
        fmt = _make_format(messages, message, type_meta)
        _formats[key] = (messages, fmt)
        return fmt


_Pair = tuple[type[BaseModel], str]  # a model and the message its values are transcoded from


def shareable_messages(messages: Messages, model: type[BaseModel], message: str) -> frozenset[str]:
    """The messages under `message` whose transcoded values may be shared among the objects
    `model` validates (Transcoder.for_validation): those that `model`'s fields (and their
    models', all the way down) validate into objects of their own: models, lists and dicts
    of them, immutable scalars. A message is left out when any message under it holds a field
    the models would keep as given: embedded JSON (RawExtension, FieldsV1: `Any` in a
    model), a list or map or message the model has no field for (kept among its extra
    fields), or one whose field's type is not one of those (`dict[str, Any]`)."""
    edges: dict[_Pair, list[_Pair]] = {}
    bad: set[_Pair] = set()
    kept_as_given: list[str] = []  # messages whose values a model may keep as they are
    todo: list[_Pair] = [(model, message)]
    while todo:
        pair = todo.pop()
        if pair in edges:
            continue
        children = edges[pair] = []
        owner, name = pair
        fields = {(info.alias or key): info for key, info in owner.model_fields.items()}
        for _number, json_name, kind, ref, flags in messages.get(name, ()):
            if flags & INLINE and ref is not None:
                children.append((owner, ref))  # its fields are the owner's own
                continue
            container = bool(flags & (REPEATED | MAP | ITEMS)) or kind in (MESSAGE, RAW_JSON)
            info = fields.get(json_name)
            held = _held_models(info.annotation) if info is not None else None
            if not container:
                continue  # an immutable value, wherever it goes
            if held is None or kind == RAW_JSON or (flags & ITEMS and held):
                bad.add(pair)
                if ref is not None:
                    kept_as_given.append(ref)  # nowhere shared: its values may be kept here
            elif kind == MESSAGE and ref is not None:
                if len(held) != 1:
                    bad.add(pair)
                else:
                    children.append((held[0], ref))
        todo += children
    parents: dict[_Pair, list[_Pair]] = {}
    for pair, children in edges.items():
        for child in children:
            parents.setdefault(child, []).append(pair)
    spread = list(bad)
    while spread:
        for parent in parents.get(spread.pop(), ()):
            if parent not in bad:
                bad.add(parent)
                spread.append(parent)
    unsafe = {name for _owner, name in bad}
    while kept_as_given:
        name = kept_as_given.pop()
        if name not in unsafe:
            unsafe.add(name)
            kept_as_given += (ref for *_, ref, _flags in messages.get(name, ()) if ref is not None)
    return frozenset(name for _owner, name in edges if name not in unsafe)


_IMMUTABLE = (str, int, float, bool, bytes, type(None))


def _held_models(annotation: Any) -> list[type[BaseModel]] | None:
    """The model classes a value validated as `annotation` may hold, when validation builds
    every container of it anew (models, lists, dicts, immutable scalars); None when it may
    keep a value as given (`Any`, `object`, an unparameterised container)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _held_models(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType or origin in (list, dict):
        found: list[type[BaseModel]] = []
        for arg in typing.get_args(annotation):
            held = _held_models(arg)
            if held is None:
                return None
            found += (m for m in held if m not in found)
        return found if typing.get_args(annotation) else None
    if origin is Literal:
        return []
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return [annotation]
        if issubclass(annotation, _IMMUTABLE):
            return []
    return None


def _invalid(model: type[BaseModel], exc: ProtobufDecodeError) -> ValidationError:
    return ValidationError.from_exception_data(
        model.__name__,
        [{"type": "value_error", "loc": (), "input": None, "ctx": {"error": exc}}],
    )


def _make_format(messages: Messages, message: str, type_meta: tuple[str, str] | None) -> RawFormat:
    transcoder = Transcoder(messages)
    to_json_object = transcoder.to_json_object
    meta_message = metadata_message(messages, message)

    @functools.cache
    def shared(model: type[BaseModel], top: str) -> frozenset[str]:
        return shareable_messages(messages, model, top)

    def for_validation(model: type[BaseModel], top: str, data: bytes) -> dict[str, Any]:
        """The JSON object of `data`, read-only, handed to `model`'s validation only."""
        return transcoder.for_validation(top, data, shared(model, top))

    def item(model: type[BaseModel], raw: bytes) -> BaseModel:
        try:
            fields: dict[str, Any] = for_validation(model, message, raw)
        except ProtobufDecodeError as exc:
            raise _invalid(model, exc) from exc
        if type_meta is not None:
            fields = {"apiVersion": type_meta[0], "kind": type_meta[1], **fields}
        return model.model_validate(fields)

    def metadata(model: type[BaseModel], raw: bytes) -> BaseModel:
        try:
            fields = for_validation(model, meta_message, _field_1(raw))
        except ProtobufDecodeError as exc:
            raise _invalid(model, exc) from exc
        return model.model_validate(fields)

    def item_data(raw: bytes) -> Any:
        try:
            fields: dict[str, Any] = to_json_object(message, raw)
        except ProtobufDecodeError as exc:
            raise ValueError(str(exc)) from None
        if type_meta is not None:
            fields = {"apiVersion": type_meta[0], "kind": type_meta[1], **fields}
        return fields

    def metadata_data(raw: bytes) -> Any:
        try:
            return to_json_object(meta_message, _field_1(raw))
        except ProtobufDecodeError as exc:
            raise ValueError(str(exc)) from None

    # The item's message fields by JSON name, for building one top-level field alone (a
    # reconcile reading `spec` and `status` never transcodes the metadata's managedFields).
    alone = {
        json_name: (number, ref)
        for number, json_name, kind, ref, flags in messages.get(message, ())
        if kind == MESSAGE and ref is not None and not flags & (REPEATED | MAP | INLINE | ITEMS)
    }

    def field(model: type[BaseModel], name: str, raw: bytes) -> Any:
        found = alone.get(field_alias(model, name))
        if found is None:
            raise FieldUnavailable(name)
        data = _field(raw, found[0])
        if data is None:
            raise FieldUnavailable(name)
        try:
            value = transcoder.for_validation(found[1], data, shared(model, message))
        except ProtobufDecodeError:
            raise FieldUnavailable(name) from None
        return field_validators(model, name)[0](value)

    def item_without(model: type[BaseModel], raw: bytes, names: Collection[str]) -> BaseModel:
        aliases = [field_alias(model, name) for name in names]
        numbers = {alone[alias][0] for alias in aliases if alias in alone}
        if len(numbers) < len(aliases):
            return item(model, raw)
        try:  # the fields left out are absent (a Go struct would be written as {})
            fields = transcoder.for_validation(
                transcoder.selected(message, numbers, False), raw, shared(model, message)
            )
        except ProtobufDecodeError as exc:
            raise _invalid(model, exc) from exc
        if type_meta is not None:
            fields = {"apiVersion": type_meta[0], "kind": type_meta[1], **fields}
        return model.model_validate(fields)

    # Nested lazy objects (K19): an item's message field read alone comes as a lazy object of
    # its model over the field's bytes, each of its own fields built on first read.
    sub_formats: dict[str, tuple[RawFormat, _Rest]] = {}

    def sub_format(ref: str) -> tuple[RawFormat, _Rest]:
        known = sub_formats.get(ref)
        if known is None:
            known = sub_formats[ref] = _sub_format(transcoder, messages, ref, shared, sub_format)
        return known

    def item_with(
        model: type[BaseModel],
        raw: bytes,
        names: Collection[str],
        parts: dict[str, tuple[type[BaseModel], Any, dict[str, Any]]],
    ) -> BaseModel:
        aliases = [field_alias(model, name) for name in (*names, *parts)]
        found = [alone.get(alias) for alias in aliases]
        numbers = {f[0] for f in found if f is not None}
        if len(numbers) < len(aliases):
            raise FieldUnavailable(", ".join(aliases))
        try:  # the fields left out are absent (a Go struct would be written as {})
            fields = transcoder.for_validation(
                transcoder.selected(message, numbers, False), raw, shared(model, message)
            )
            for name, (sub_model, sub_raw, built) in parts.items():
                alias = field_alias(model, name)
                _fmt, rest = sub_format(alone[alias][1])
                fields[alias] = rest(sub_model, sub_raw, built)
        except ProtobufDecodeError as exc:
            raise _invalid(model, exc) from exc
        if type_meta is not None:
            fields = {"apiVersion": type_meta[0], "kind": type_meta[1], **fields}
        return model.model_validate(fields)

    nested = _nested_spans(alone, sub_format)  # over the item's whole bytes

    managed_fields = next(
        (
            number
            for number, json_name, kind, _ref, _flags in messages.get(meta_message, ())
            if json_name == "managedFields" and kind == MESSAGE
        ),
        None,
    )

    def strip_managed_fields(raw: bytes) -> bytes:
        if managed_fields is None:
            return raw
        try:
            return _without_metadata_field(raw, managed_fields)
        except ProtobufDecodeError as exc:
            raise ValueError(str(exc)) from None

    return RawFormat(
        item=item,
        metadata=metadata,
        item_data=item_data,
        metadata_data=metadata_data,
        field=field,
        strip_managed_fields=strip_managed_fields,
        item_without=item_without,
        nested=nested,
        item_with=item_with,
    )


# A nested object's rest (K19): its model, raw bytes and fields built alone (Python names)
# -> the JSON object of its bytes without those fields, the built values in their place
# (validation keeps a model instance as it is); FieldUnavailable when it cannot.
_Rest = typing.Callable[[type[BaseModel], Any, dict[str, Any]], dict[str, Any]]


class _Lister(typing.NamedTuple):
    """What a read of a list of messages of a nested object needs (see `_sub_format`)."""

    number: int
    message: str  # its items'
    direct: DirectBuild | None  # its items' direct build (K27)


class _Reader(typing.NamedTuple):
    """What a read of one field of a nested object alone needs (see `_sub_format`)."""

    alias: str
    number: int
    only: str  # the transcode of only its numbers (Transcoder.selected)
    # A string whose model keeps it as it is: (its one-byte tag, whether an empty one is
    # left out, what its absence reads as: ABSENT when nothing), else None.
    string: tuple[int, bool, Any] | None


def _string_reading(
    fields: tuple[Field, ...], numbers: Collection[int], info: FieldInfo
) -> tuple[int, bool, Any] | None:
    """How a read of the field `numbers` (of a message's `fields`) alone reads it without a
    transcode and a validation: when it is one string with a one-byte tag, which its model
    field (`info`) validates as itself (no constraint)."""
    if len(numbers) != 1:
        return None
    (number,) = numbers
    field = next((f for f in fields if f[0] == number), None)
    reading = None if field is None or number > 15 else scalar_reading(field)
    if reading is None or reading[0] not in (READ_STRING, READ_STRING_OMIT):
        return None
    code, absent = reading
    if not validates_as_is(code, info, absent is None):
        return None
    return number << 3 | 2, code == READ_STRING_OMIT, absent


def _sub_format(
    transcoder: Transcoder,
    messages: Messages,
    message: str,
    shared: typing.Callable[[type[BaseModel], str], frozenset[str]],
    sub_format: typing.Callable[[str], tuple[RawFormat, _Rest]],
) -> tuple[RawFormat, _Rest]:
    """The RawFormat of nested lazy objects (K19, K20) whose raw bytes are a `message`, and
    how its rest is transcoded for the whole build of its item (`sub_format` gives those of
    the messages nested in it)."""
    fields_of = messages.get(message, ())
    inline = any(flags & INLINE for *_rest, flags in fields_of)
    by_name: dict[str, set[int]] = {}
    for number, json_name, _kind, _ref, flags in fields_of:
        if not flags & INLINE:
            by_name.setdefault(json_name, set()).add(number)
    # Its message fields, and its lists of messages, by JSON name: (number, message).
    singles: dict[str, tuple[int, str]] = {}
    lists: dict[str, tuple[int, str]] = {}
    for number, json_name, kind, ref, flags in fields_of:
        if kind != MESSAGE or ref is None or flags & (MAP | INLINE | ITEMS):
            continue
        (lists if flags & REPEATED else singles)[json_name] = (number, ref)
    # A nested object's raw bytes are where it is in its item's bytes: (the item's bytes,
    # start, end), what the functions below take as `raw`. A field read alone, or the rest of the
    # object, is transcoded in one pass over that span that passes over the other fields
    # (Transcoder.selected): no copy of the message, with or without them, first.

    def item(model: type[BaseModel], raw: Any) -> BaseModel:
        data, start, end = raw
        try:
            fields = transcoder.for_validation(message, data, shared(model, message), start, end)
        except ProtobufDecodeError as exc:
            raise _invalid(model, exc) from exc
        return model.model_validate(fields)

    def item_data(raw: Any) -> Any:
        try:
            return transcoder.to_json_object(message, *raw)
        except ProtobufDecodeError as exc:
            raise ValueError(str(exc)) from None

    def selected(model: type[BaseModel], raw: Any, numbers: set[int], keep: bool) -> Any:
        data, start, end = raw
        name = transcoder.selected(message, numbers, keep)
        return transcoder.for_validation(name, data, shared(model, message), start, end)

    # What a read of one field alone needs, found on its first read, by (model, Python name):
    # its API name, its field numbers, the transcode of only them and whether it is a string
    # read without a transcode; None when the wire has no such field. The messages shared and
    # its validator are found when first needed (milliseconds each).
    readers: dict[tuple[type[BaseModel], str], _Reader | None] = {}

    def reader(model: type[BaseModel], name: str) -> _Reader | None:
        alias = field_alias(model, name)
        numbers = by_name.get(alias)
        if numbers is None:
            return None
        return _Reader(
            alias,
            min(numbers),  # its only one: the transcoder refuses two fields of one name
            transcoder.selected(message, numbers, True),
            _string_reading(fields_of, numbers, model.model_fields[name]),
        )

    def field(model: type[BaseModel], name: str, raw: Any) -> Any:
        key = (model, name)
        try:
            read = readers[key]
        except KeyError:
            read = readers[key] = reader(model, name)
        if read is None:
            if inline:
                raise FieldUnavailable(name)  # perhaps an inlined struct's: built whole
            raise FieldAbsent(name)  # no such field on the wire: never sent
        data, start, end = raw
        try:  # transcoded from its own bytes (K26)
            start, end, _spans = _occurrences(data, read.number, start, end)
            string = read.string
            if string is not None:  # a string its model keeps as it is: read here
                tag, omit, absent = string
                if start == end:  # not sent
                    if absent is ABSENT:
                        raise FieldAbsent(name)  # Go's JSON omits it
                    return absent
                length = data[start + 1] if data[start] == tag and start + 1 < end else 0x80
                if length < 0x80 and start + 2 + length == end:  # sent once, as Go writes it
                    if omit and not length:
                        raise FieldAbsent(name)  # omitempty
                    return transcoder.text(data, start + 2, end)
            value = transcoder.for_validation(read.only, data, shared(model, message), start, end)
        except ProtobufDecodeError:
            raise FieldUnavailable(name) from None
        alias = read.alias
        if alias not in value:
            raise FieldAbsent(name)  # Go's JSON omits it (omitempty, nil)
        return field_validators(model, name)[0](value[alias])

    def item_without(model: type[BaseModel], raw: bytes, names: Collection[str]) -> BaseModel:
        aliases = [field_alias(model, name) for name in names]
        numbers: set[int] = set()
        for alias in aliases:
            known = by_name.get(alias)
            if known is None:
                return item(model, raw)
            numbers |= known
        try:  # the fields left out are absent
            fields = selected(model, raw, numbers, False)
        except ProtobufDecodeError as exc:
            raise _invalid(model, exc) from exc
        return model.model_validate(fields)

    def rest(model: type[BaseModel], raw: bytes, built: dict[str, Any]) -> dict[str, Any]:
        aliases = {name: field_alias(model, name) for name in built}
        numbers: set[int] = set()
        for alias in aliases.values():
            known = by_name.get(alias)
            if known is None:
                raise FieldUnavailable(alias)
            numbers |= known
        fields = dict(selected(model, raw, numbers, False))
        for name, alias in aliases.items():
            fields[alias] = built[name]
        return fields

    nested = _nested_spans(singles, sub_format)  # over (the item's bytes, start, end)

    # What a read of a list of messages needs, by (model, Python name): its field number,
    # its items' message and their direct build (K27); None when the wire has no such list.
    # The messages shared and its validator are found when first needed (milliseconds each).
    listers: dict[tuple[type[BaseModel], str], _Lister | None] = {}

    def lister(model: type[BaseModel], name: str) -> _Lister | None:
        found = lists.get(field_alias(model, name))
        if found is None:
            return None
        item_model = list_item_model(model, name)
        return _Lister(
            found[0],
            found[1],
            None if item_model is None else direct_build(transcoder, found[1], item_model),
        )

    def items(model: type[BaseModel], name: str, raw: Any) -> tuple[RawFormat | None, list[Any]]:
        key = (model, name)
        try:
            found = listers[key]
        except KeyError:
            found = listers[key] = lister(model, name)
        if found is None:
            raise FieldUnavailable(name)
        number, ref, direct = found
        data, start, end = raw
        spans = _occurrences(data, number, start, end)[2]
        if not spans:
            raise FieldUnavailable(name)  # absent: built alone, as Go writes it
        # The items' bytes with their keys and lengths (as JSON's measure has its commas).
        if not worth_lazy(spans[-1][1] - spans[0][0], len(spans)):
            if direct is not None:  # each item straight from its bytes (K27)
                try:
                    return None, [direct(data, begin, stop) for begin, stop in spans]
                except Declined:
                    pass  # one of them is built the general way, and so the list
            try:  # small items: the list `field` would build, without a second pass
                value = transcoder.messages_at(ref, data, spans, shared(model, message))
            except ProtobufDecodeError:
                raise FieldUnavailable(name) from None
            return None, field_validators(model, name)[0](value)
        return sub_format(ref)[0], [(data, *span) for span in spans]

    fmt = RawFormat(
        item=item,
        metadata=item,
        item_data=item_data,
        metadata_data=item_data,
        field=field,
        item_without=item_without,
        nested=nested,
        items=items,
    )
    return fmt, rest


def _nested_spans(
    fields: dict[str, tuple[int, str]],
    sub_format: typing.Callable[[str], tuple[RawFormat, _Rest]],
) -> NestedRaw:
    """Where a message field of `fields` (JSON name -> number, message) is, for a nested lazy
    object of it (K19, K20): given a model, the field's Python name and the raw bytes of the
    message holding it (an item's bytes, or a nested object's (bytes, start, end)), the
    field's format, raw bytes and size; FieldUnavailable when it is no such field or absent
    (then built alone, as Go writes it). Its raw bytes are where it is in the item's bytes,
    not a copy: the item keeps them until it is built (a tuple of three: ~180 bytes less than
    a memoryview of the slice). What a field needs is found on its first read, by model and
    name."""
    known: dict[tuple[type[BaseModel], str], tuple[int, RawFormat] | None] = {}

    def nested(model: type[BaseModel], name: str, raw: Any) -> tuple[RawFormat, Any, int]:
        key = (model, name)
        try:
            found = known[key]
        except KeyError:
            field = fields.get(field_alias(model, name))
            found = known[key] = None if field is None else (field[0], sub_format(field[1])[0])
        if found is None:
            raise FieldUnavailable(name)
        if type(raw) is tuple:
            data, start, end = raw
        else:
            data, start, end = raw, 0, len(raw)
        try:
            spans = _occurrences(data, found[0], start, end)[2]
        except ProtobufDecodeError:
            raise FieldUnavailable(name) from None
        if not spans:
            raise FieldUnavailable(name)
        begin, stop = spans[-1]  # the last one wins
        return found[1], (data, begin, stop), stop - begin

    return nested


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _without_metadata_field(data: bytes, number: int) -> bytes:
    """`data` (an item) with every occurrence of its ObjectMeta's (field 1) length-delimited
    field `number` left out; `data` itself when there is none. Everything else keeps its bytes
    and its order."""
    want = (number << 3) | 2
    pieces: list[bytes] = []
    copied = pos = 0
    end = len(data)
    while pos < end:
        key_at = pos
        key, pos = read_varint(data, pos, end)
        if key != 0x0A:
            pos = skip_field(data, pos, key & 7, end)
            continue
        start, pos = read_length(data, pos, end)
        kept: list[bytes] = []
        inner = inner_copied = start
        while inner < pos:
            field_at = inner
            inner_key, inner = read_varint(data, inner, pos)
            inner = skip_field(data, inner, inner_key & 7, pos)
            if inner_key == want:
                kept.append(data[inner_copied:field_at])
                inner_copied = inner
        if inner_copied == start:
            continue  # this ObjectMeta has none
        kept.append(data[inner_copied:pos])
        meta = b"".join(kept)
        pieces += (data[copied:key_at], b"\x0a", _varint(len(meta)), meta)
        copied = pos
    if not pieces:
        return data
    pieces.append(data[copied:])
    return b"".join(pieces)


def _field_bounds(
    data: bytes, number: int, pos: int = 0, end: int | None = None
) -> tuple[int, int] | None:
    """Where the length-delimited field `number` (its last occurrence) of the message at
    data[pos:end] is, or None when absent."""
    spans = _occurrences(data, number, pos, len(data) if end is None else end)[2]
    return spans[-1] if spans else None


def _occurrences(
    data: bytes, number: int, pos: int, end: int
) -> tuple[int, int, list[tuple[int, int]]]:
    """Where the field `number` of the message at data[pos:end] is: where its first key
    starts, where its last value ends ((end, end) when absent; other fields may lie between
    them), and where each of its length-delimited values is, in order. The scan ends at the
    first field numbered above it: the server writes a message's fields in field-number order
    (K26). Tags and lengths of one or two bytes (all of an item's top-level fields and their
    lengths up to 16 KB) are read inline: this runs on every first read of a field of a
    nested object and of a list of lazy objects (K19, K20)."""
    want = (number << 3) | 2
    past = (number + 1) << 3  # the first key of a field numbered above it
    first = -1
    last = end
    found = []
    while pos < end:
        at = pos
        key = data[pos]
        if key < 0x80:
            pos += 1
        elif pos + 1 < end and data[pos + 1] < 0x80:  # fields 16-2047
            key = (key & 0x7F) | data[pos + 1] << 7
            pos += 2
        else:
            key, pos = read_varint(data, pos, end)
        if key >= past:
            break  # the fields after it (K26)
        if key & 7 != 2:
            if key & 7 == 0 and pos < end and data[pos] < 0x80:
                pos += 1  # a one-byte varint (a bool, a small int)
            else:
                pos = skip_field(data, pos, key & 7, end)
        else:
            length = data[pos] if pos < end else 0x80
            if length < 0x80:
                start = pos + 1
            elif pos + 1 < end and data[pos + 1] < 0x80:
                length = (length & 0x7F) | data[pos + 1] << 7
                start = pos + 2
            else:
                length, start = read_varint(data, pos, end)
            pos = start + length
            if pos > end:
                raise ProtobufDecodeError(
                    f"length-delimited field at byte {start} runs {pos - end} bytes past its "
                    "message"
                )
            if key == want:
                found.append((start, pos))
        if key >> 3 == number:
            if first < 0:
                first = at
            last = pos
    return (first, last, found) if first >= 0 else (end, end, found)


def _field(data: bytes, number: int) -> bytes | None:
    """The bytes of a message's length-delimited field `number` (its last occurrence), or
    None when absent."""
    bounds = _field_bounds(data, number)
    return None if bounds is None else data[bounds[0] : bounds[1]]


def _field_1(data: bytes) -> bytes:
    """The bytes of a message's field 1 (b"" when absent: an empty ObjectMeta)."""
    bounds = _field_bounds(data, 1)
    return b"" if bounds is None else data[bounds[0] : bounds[1]]
