"""Protobuf → the JSON-shaped dict Go's encoding/json writes for the same Go struct.

Why: the generated models validate the API's JSON shape. A protobuf object is turned into
exactly the dict `json.Marshal` would have produced from the Go struct the protobuf decodes
into (so the model built from it equals the one built from the server's JSON), driven by the
schema table (`schema.Messages`): Go's nil vs zero values, omitempty/omitzero, pointers,
inlined structs, maps, slices and the custom JSON of Time, MicroTime, Duration, Quantity,
IntOrString and embedded raw JSON (RawExtension, FieldsV1).
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Collection
from typing import Any, NamedTuple

import msgspec

from kubeinformers.runtime.codec.protobuf import schema
from kubeinformers.runtime.codec.protobuf.reader import (
    FIXED32,
    FIXED64,
    LENGTH,
    VARINT,
    ProtobufDecodeError,
    read_double,
    read_float,
    read_length,
    read_varint,
    signed,
    skip_field,
)
from kubeinformers.runtime.codec.protobuf.schema import Messages

__all__ = [
    "ABSENT",
    "READ_BOOL",
    "READ_BOOL_OMIT",
    "READ_INT",
    "READ_INT_OMIT",
    "READ_MESSAGE",
    "READ_MICROTIME",
    "READ_STRING",
    "READ_STRING_OMIT",
    "READ_TIME",
    "Transcoder",
    "go_duration",
    "scalar_reading",
    "time_text",
    "to_json_object",
]

_STRING, _BYTES, _INT, _UINT, _BOOL = (
    schema.STRING,
    schema.BYTES,
    schema.INT,
    schema.UINT,
    schema.BOOL,
)
_DOUBLE, _FLOAT, _MESSAGE = schema.DOUBLE, schema.FLOAT, schema.MESSAGE
_TIME, _MICROTIME, _DURATION = schema.TIME, schema.MICROTIME, schema.DURATION
_QUANTITY, _INT_OR_STRING, _RAW_JSON = schema.QUANTITY, schema.INT_OR_STRING, schema.RAW_JSON
_REPEATED, _MAP, _POINTER = schema.REPEATED, schema.MAP, schema.POINTER
_OMITEMPTY, _OMITZERO, _INLINE = schema.OMITEMPTY, schema.OMITZERO, schema.INLINE
_ITEMS = schema.ITEMS
_NILABLE = _POINTER | _REPEATED | _MAP | _ITEMS  # absent on the wire: nil in Go
_OMIT = _OMITEMPTY | _OMITZERO

logger = logging.getLogger("kubeinformers.protobuf")

_VARINT_KINDS = frozenset({_INT, _UINT, _BOOL})
_SIGN = 1 << 63
_WRAP = 1 << 64
_GO_ZERO_TIME = -62135596800  # time.Time{}.Unix(): 0001-01-01T00:00:00Z
_decode_json = msgspec.json.decode
# Strings of up to _SHARED_LENGTH bytes decode once per transcoder and are handed out again
# while remembered (a pod's phase, condition types and statuses, image, pull policy, protocol,
# label and annotation keys and values... are the same str object in every pod), as
# pydantic-core's string cache does for JSON: ~50 bytes saved per repeated string of a built
# object. Unique values (names, uids, addresses) fill the table too; when it holds
# _SHARED_STRINGS it starts again, so values common later in a long list are shared as well.
_SHARED_LENGTH = 64
_SHARED_STRINGS = 16_384

# Fast-path codes: how a (field number, wire type) key's value goes into the object. Keys whose
# field needs anything else (packed scalars, bytes, omitzero, named slices, maps of messages,
# durations, a wire type that contradicts the table, unknown fields) take `Transcoder._field`.
_STR, _STR_OMIT, _STR_REP, _MSG, _MSG_REP, _INLINE_MSG, _MAP_STR, _MAP_QTY = range(8)
_TIME_VALUE, _MICROTIME_VALUE, _QTY, _IOS, _RAW, _SKIP = range(8, 14)
_LAST_LENGTH_CODE = _SKIP  # _SKIP: a length-delimited field passed over (Transcoder.selected)
_INT_VALUE, _INT_OMIT, _BOOL_VALUE, _BOOL_OMIT = range(20, 24)
_SKIP_VARINT = 24  # a varint field passed over (Transcoder.selected)

_Entry = tuple[int, str, Any]  # (code, json_name, ref or field)
# Sub-messages transcoded for validation, by message and bytes (see Transcoder.for_validation):
# message -> {its bytes: the JSON object}, or None once it is found to rarely repeat.
_Memo = dict[str, "dict[bytes, dict[str, Any]] | None"]
# A sub-message of up to _MEMO_LENGTH bytes is remembered, the first _MEMO_ENTRIES of them
# per transcoder; then the memo starts again (so it follows what the cluster runs now).
_MEMO_LENGTH = 1024
_MEMO_ENTRIES = 4096
# After _MEMO_PROBE misses of one message, it stays remembered only while it is found at least
# half as often as it is missed.
_MEMO_PROBE = 256


class _Compiled(NamedTuple):
    """One message compiled for transcoding (built once per table and message)."""

    fast: dict[int, _Entry]  # tag (number << 3 | wire type) -> its fast-path entry
    template: dict[str, Any]  # what absent fields write: Go's immutable zero values
    fresh: tuple[tuple[str, str], ...]  # absent non-pointer structs: (json name, message)
    by_number: dict[int, schema.Field]
    names: frozenset[str]  # every key the object can have (inlined fields included)
    name: str


class Transcoder:
    """Transcodes messages of one schema table (compiles each message once, on first use).

    Why compiled: each message's fields become a dict from wire tag to a small entry handled
    inline in one loop (strings, ints, bools, messages, string maps, times, quantities without
    a call per field), and the JSON of its absent fields becomes a template dict copied per
    object, so nothing walks the whole field table per object.
    """

    def __init__(self, messages: Messages) -> None:
        self.messages = messages
        self._compiled: dict[str, _Compiled] = {}
        self._selected: dict[tuple[str, frozenset[int], bool], str] = {}  # see `selected`
        # One str per distinct short string value among the objects transcoded (see
        # _SHARED_STRINGS); a built object's strings are then shared as JSON's are.
        self._strings: dict[bytes, str] = {}
        self._memo: _Memo = {}
        self._memo_entries = 0
        self._memo_counts: dict[str, list[int]] = {}

    def for_validation(
        self,
        message: str,
        data: bytes,
        shared: frozenset[str],
        start: int = 0,
        end: int | None = None,
    ) -> dict[str, Any]:
        """What `to_json_object` gives (of data[start:end]), for validation only: treat it as
        read-only.

        Why: pods of one workload repeat many of their sub-messages byte for byte (a
        container's ports, resources and probes, tolerations, security contexts), and
        transcoding is pure Python. A sub-message of a message in `shared` seen before is
        handed out as the same dict, so objects built from the result share parts of it.
        The caller names in `shared` only messages its model validates into objects of its own
        (models, lists, dicts, immutable scalars; never a value kept as given, as embedded
        JSON or an unknown field is): `protobuf.lazy.shareable_messages`.
        """
        try:
            return self._message(message, data, start, len(data) if end is None else end, shared)
        except (ProtobufDecodeError, UnicodeDecodeError) as exc:
            raise _malformed(message, exc) from None

    def messages_at(
        self, message: str, data: bytes, spans: list[tuple[int, int]], shared: frozenset[str]
    ) -> list[dict[str, Any]]:
        """What `for_validation` gives of each `message` at data[start:end] of `spans`: the
        items of a repeated field found beforehand, as its transcode would give them."""
        try:
            return [self._shared(message, data, start, end, shared) for start, end in spans]
        except (ProtobufDecodeError, UnicodeDecodeError) as exc:
            raise _malformed(message, exc) from None

    def _shared(
        self, message: str, data: bytes, start: int, end: int, shared: frozenset[str]
    ) -> dict[str, Any]:
        """The sub-message `message` at data[start:end], remembered when seen before."""
        if message not in shared or end - start > _MEMO_LENGTH:
            return self._message(message, data, start, end, shared)
        memo = self._memo
        seen = memo.get(message)
        if seen is None:
            if message in memo:  # found to rarely repeat
                return self._message(message, data, start, end, shared)
            seen = memo[message] = {}
            self._memo_counts[message] = [0, 0]
        chunk = data[start:end]
        value = seen.get(chunk)
        counts = self._memo_counts[message]  # [hits, misses]
        if value is not None:
            counts[0] += 1
            return value
        value = self._message(message, data, start, end, shared)
        counts[1] += 1
        if counts[1] >= _MEMO_PROBE and counts[0] < counts[1] // 2:
            # Mostly new values each time (a container with its pod's own env, a container
            # status with its ids): no longer remembered, so that it does not crowd out the
            # values that repeat (its own sub-messages still are).
            memo[message] = None
            self._memo_entries -= len(seen)
            return value
        if self._memo_entries >= _MEMO_ENTRIES:
            for kept in memo.values():
                if kept is not None:
                    kept.clear()
            self._memo_entries = 0
        seen[chunk] = value
        self._memo_entries += 1
        return value

    def text(self, data: bytes, start: int, end: int) -> str:
        """The string at data[start:end], shared as the transcode shares short strings."""
        chunk = data[start:end]
        return self._strings.get(chunk) or _remember(self._strings, chunk)

    @property
    def shared_texts(self) -> dict[bytes, str]:
        """The short strings decoded so far, by their bytes: a reader that decodes strings
        itself looks there first, then calls `remember_text` (as `text` does)."""
        return self._strings

    def remember_text(self, chunk: bytes) -> str:
        """`chunk` decoded, and remembered when short (see `shared_texts`)."""
        return _remember(self._strings, chunk)

    def selected(self, message: str, numbers: Collection[int], keep: bool) -> str:
        """A name to transcode `message` by (for_validation, to_json_object) reading only its
        own fields `numbers` (`keep`) or all but them: the others are passed over on the wire
        and absent from the object (their absent values too).

        Why: a part of an object built on its own (runtime.codec.lazy, K13 and K19) is
        transcoded without the fields built before, and a field read alone without the rest,
        in the one pass over the message the transcode makes anyway, instead of a scan that
        copies the message without them (or with only them) first."""
        wanted = frozenset(numbers)
        key = (message, wanted, keep)
        name = self._selected.get(key)
        if name is not None:
            return name
        name = f"{message} {'only' if keep else 'without'} {sorted(wanted)}"
        compiled = self._compile(message)

        def chosen(number: int) -> bool:
            return (number in wanted) == keep

        dropped = {f[1] for n, f in compiled.by_number.items() if not chosen(n)}
        fast: dict[int, _Entry] = {}
        for tag, entry in compiled.fast.items():
            if chosen(tag >> 3):
                fast[tag] = entry
        # The fields passed over, by the wire types they can come as (any other goes the
        # slow way, `_field`, which passes over what its table lacks): one lookup each.
        for number, (_n, _name, kind, _ref, flags) in compiled.by_number.items():
            if chosen(number):
                continue
            if kind in _VARINT_KINDS:
                fast[number << 3 | VARINT] = (_SKIP_VARINT, "", None)
                if flags & (_REPEATED | _ITEMS):  # packed
                    fast[number << 3 | LENGTH] = (_SKIP, "", None)
            elif kind not in (_DOUBLE, _FLOAT) or flags & (_REPEATED | _ITEMS):
                fast[number << 3 | LENGTH] = (_SKIP, "", None)
        self._compiled[name] = _Compiled(
            fast,
            {k: v for k, v in compiled.template.items() if k not in dropped},
            tuple(f for f in compiled.fresh if f[0] not in dropped),
            {n: f for n, f in compiled.by_number.items() if chosen(n)},
            compiled.names,
            message,
        )
        self._selected[key] = name  # once compiled: a reader of the name finds it
        return name

    def to_json_object(
        self, message: str, data: bytes, start: int = 0, end: int | None = None
    ) -> dict[str, Any]:
        """The JSON object Go writes for the `message` struct decoded from data[start:end]."""
        try:
            return self._message(message, data, start, len(data) if end is None else end)
        except (ProtobufDecodeError, UnicodeDecodeError) as exc:
            raise _malformed(message, exc) from None

    def _compile(self, message: str) -> _Compiled:
        compiled = self._compiled.get(message)
        if compiled is not None:
            return compiled
        try:
            fields = self.messages[message]
        except KeyError:
            raise ProtobufDecodeError(f"message {message} is not in the schema table") from None
        fast: dict[int, _Entry] = {}
        template: dict[str, Any] = {}
        fresh: list[tuple[str, str]] = []
        names: set[str] = set()
        for field in fields:
            number, json_name, kind, ref, flags = field
            if flags & _INLINE:
                assert ref is not None
                inlined = self._compile(ref)
                clash = names & inlined.names
                if clash:
                    raise ValueError(
                        f"schema table: {message} inlines {ref}, whose fields "
                        f"{sorted(clash)} it already has (Go would drop or shadow them)"
                    )
                names |= inlined.names
                if not flags & (_NILABLE | _OMITZERO):  # a nil embedded pointer adds nothing
                    template.update(inlined.template)
                    fresh.extend(inlined.fresh)
                if not flags & (_REPEATED | _MAP | _ITEMS | _OMITZERO) and kind == _MESSAGE:
                    fast[number << 3 | LENGTH] = (_INLINE_MSG, json_name, ref)
                continue
            if json_name in names:
                raise ValueError(f"schema table: {message} has two fields named {json_name!r}")
            names.add(json_name)
            _add_absent(field, template, fresh)
            entry = _fast_entry(field)
            if entry is not None:
                fast[number << 3 | (VARINT if entry[0] >= _INT_VALUE else LENGTH)] = entry
        compiled = _Compiled(
            fast,
            template,
            tuple(fresh),
            {f[0]: f for f in fields},
            frozenset(names),
            message,
        )
        self._compiled[message] = compiled
        return compiled

    def _message(
        self,
        message: str,
        data: bytes,
        pos: int,
        end: int,
        shared: frozenset[str] | None = None,
    ) -> dict[str, Any]:
        compiled = self._compiled.get(message)
        if compiled is None:
            compiled = self._compile(message)
        fast = compiled.fast
        strings = self._strings
        out = compiled.template.copy()
        while pos < end:
            key = data[pos]
            if key < 0x80:
                pos += 1
            elif pos + 1 < end and data[pos + 1] < 0x80:  # fields 16-2047
                key = (key & 0x7F) | data[pos + 1] << 7
                pos += 2
            else:
                key, pos = read_varint(data, pos, end)
            entry = fast.get(key)
            if entry is None:
                pos = self._field(compiled, key, data, pos, end, out)
                continue
            code, name, arg = entry
            if code <= _LAST_LENGTH_CODE:
                length = data[pos] if pos < end else 0x80
                if length < 0x80:
                    start = pos + 1
                elif pos + 1 < end and data[pos + 1] < 0x80:  # 128 to 16383 bytes
                    length = (length & 0x7F) | data[pos + 1] << 7
                    start = pos + 2
                else:
                    length, start = read_varint(data, pos, end)
                pos = start + length
                if pos > end:
                    raise ProtobufDecodeError(
                        f"length-delimited field at byte {start} runs {pos - end} bytes "
                        "past its message"
                    )
                if code == _SKIP:  # a field passed over (`selected`): most of a scan
                    continue
                if code == _STR_OMIT:  # the most frequent first
                    if pos > start:
                        chunk = data[start:pos]
                        text = strings.get(chunk)
                        if text is None:
                            text = _remember(strings, chunk)
                        out[name] = text
                    elif name in out:
                        del out[name]  # a later empty occurrence: the last one wins
                elif code == _STR:
                    chunk = data[start:pos]
                    text = strings.get(chunk)
                    if text is None:
                        text = _remember(strings, chunk)
                    out[name] = text
                elif code == _MSG_REP:
                    if shared is None:
                        value = self._message(arg, data, start, pos)
                    else:
                        value = self._shared(arg, data, start, pos, shared)
                    items = out.get(name)
                    if items is None:
                        out[name] = [value]
                    else:
                        items.append(value)
                elif code == _TIME_VALUE:
                    out[name] = _time(data, start, pos, False)
                elif code == _MSG:
                    if shared is None:
                        out[name] = self._message(arg, data, start, pos)
                    else:
                        out[name] = self._shared(arg, data, start, pos, shared)
                elif code == _STR_REP:
                    chunk = data[start:pos]
                    text = strings.get(chunk)
                    if text is None:
                        text = _remember(strings, chunk)
                    items = out.get(name)
                    if items is None:
                        out[name] = [text]
                    else:
                        items.append(text)
                elif code == _MAP_STR or code == _MAP_QTY:
                    entries = out.get(name)
                    if entries is None:
                        entries = out[name] = {}
                    found = _plain_entry(data, start, pos)
                    if found is None:
                        map_key, map_value = self._entry(arg, data, start, pos)
                    else:
                        chunk = data[start + 2 : found[0]]
                        map_key = strings.get(chunk) or _remember(strings, chunk)
                        if code == _MAP_STR:
                            chunk = data[found[1] : pos]
                            map_value = strings.get(chunk) or _remember(strings, chunk)
                        else:
                            map_value = _quantity(data, found[1], pos)
                    entries[map_key] = map_value
                elif code == _QTY:
                    out[name] = _quantity(data, start, pos)
                elif code == _INLINE_MSG:
                    out.update(self._message(arg, data, start, pos, shared))
                elif code == _RAW:
                    out[name] = _raw_json(data, start, pos)
                elif code == _IOS:
                    out[name] = _int_or_string(data, start, pos)
                else:  # _MICROTIME_VALUE
                    out[name] = _time(data, start, pos, True)
            else:
                raw = data[pos] if pos < end else 0x80
                if raw < 0x80:
                    pos += 1
                else:
                    raw, pos = read_varint(data, pos, end)
                if code == _SKIP_VARINT:
                    continue
                if code == _INT_OMIT:
                    if raw:
                        out[name] = raw - _WRAP if raw >= _SIGN else raw
                    elif name in out:
                        del out[name]  # a later empty occurrence: the last one wins
                elif code == _BOOL_OMIT:
                    if raw:
                        out[name] = True
                    elif name in out:
                        del out[name]  # a later empty occurrence: the last one wins
                elif code == _INT_VALUE:
                    out[name] = raw - _WRAP if raw >= _SIGN else raw
                else:  # _BOOL_VALUE
                    out[name] = raw != 0
        for name, ref in compiled.fresh:
            if name not in out:
                out[name] = self._message(ref, b"", 0, 0)
        return out

    def _field(
        self, compiled: _Compiled, key: int, data: bytes, pos: int, end: int, out: dict[str, Any]
    ) -> int:
        """Reads one field the fast path does not handle into `out`; returns the position after it."""
        number = key >> 3
        wire_type = key & 7
        field = compiled.by_number.get(number)
        if field is None:
            whole = self._compiled.get(compiled.name)  # `selected` leaves fields out on purpose
            if whole is None or number not in whole.by_number:
                _unknown_field(compiled.name, number)
            return skip_field(data, pos, wire_type, end)
        _number, name, kind, ref, flags = field
        if wire_type == LENGTH:
            start, pos = read_length(data, pos, end)
            if flags & _MAP:
                entries = out.get(name)
                if entries is None:
                    entries = out[name] = {}
                map_key, map_value = self._entry(field, data, start, pos)
                entries[map_key] = map_value
                return pos
            if kind in _VARINT_KINDS or kind == _DOUBLE or kind == _FLOAT:
                if not flags & _REPEATED:
                    raise ProtobufDecodeError(
                        f"{compiled.name} field {number} ({name}) is length-delimited, "
                        "expected a scalar"
                    )
                items = out.get(name)
                if items is None:
                    items = out[name] = []
                items.extend(_packed(kind, data, start, pos))
                return pos
            if flags & _OMITZERO and self._raw_is_zero(kind, ref, data, start, pos):
                out.pop(name, None)  # json:",omitzero" leaves it out
                return pos
            if flags & _ITEMS:
                value = self._items(field, data, start, pos)
            else:
                value = self._length_value(kind, ref, data, start, pos)
        elif wire_type == VARINT:
            if kind not in _VARINT_KINDS:
                raise ProtobufDecodeError(
                    f"{compiled.name} field {number} ({name}) is a varint, "
                    f"expected {_kind_name(kind)}"
                )
            raw, pos = read_varint(data, pos, end)
            value = _varint_value(kind, raw)
        elif wire_type == FIXED64 and kind == _DOUBLE:
            value = read_double(data, pos, end)
            pos += 8
        elif wire_type == FIXED32 and kind == _FLOAT:
            value = read_float(data, pos, end)
            pos += 4
        else:
            raise ProtobufDecodeError(
                f"{compiled.name} field {number} ({name}) has wire type {wire_type}, "
                f"expected {_kind_name(kind)}"
            )
        if flags & _REPEATED:
            items = out.get(name)
            if items is None:
                out[name] = [value]
            else:
                items.append(value)
        elif flags & _INLINE:
            if type(value) is dict:
                out.update(value)
        elif flags & (_MAP | _POINTER):
            out[name] = value  # a non-nil pointer is written, even to a zero value
        elif flags & _ITEMS and not value and flags & _OMIT:
            out.pop(name, None)  # a nil or empty named slice
        elif not flags & _ITEMS and flags & _OMIT and _is_empty(kind, value):
            out.pop(name, None)
        else:
            out[name] = value  # the last occurrence wins, as in Go
        return pos

    def _length_value(self, kind: int, ref: str | None, data: bytes, start: int, end: int) -> Any:
        if kind == _STRING:
            return data[start:end].decode()
        if kind == _MESSAGE:
            assert ref is not None
            return self._message(ref, data, start, end)
        if kind == _QUANTITY:
            return _quantity(data, start, end)
        if kind == _TIME:
            return _time(data, start, end, False)
        if kind == _INT_OR_STRING:
            return _int_or_string(data, start, end)
        if kind == _RAW_JSON:
            return _raw_json(data, start, end)
        if kind == _BYTES:
            return base64.b64encode(data[start:end]).decode("ascii")
        if kind == _MICROTIME:
            return _time(data, start, end, True)
        if kind == _DURATION:
            return _duration(data, start, end)
        raise ProtobufDecodeError(f"a {_kind_name(kind)} value cannot be length-delimited")

    def _items(self, field: schema.Field, data: bytes, start: int, end: int) -> Any:
        """A named slice's wrapper message {items=1 repeated} as the JSON list (None: nil)."""
        ref = field[3]
        assert ref is not None
        wrapper = self._message(ref, data, start, end)
        return next(iter(wrapper.values()), None) if wrapper else None

    def _raw_is_zero(self, kind: int, ref: str | None, data: bytes, pos: int, end: int) -> bool:
        """Whether a length-delimited value is its Go zero value (for json:",omitzero"): every
        scalar zero, every string empty, no non-nil pointer, slice or map."""
        if kind == _STRING or kind == _BYTES:
            return pos == end and kind == _STRING
        by_number = self._compile(ref).by_number if kind == _MESSAGE and ref is not None else {}
        while pos < end:
            key, pos = read_varint(data, pos, end)
            wire_type = key & 7
            field = by_number.get(key >> 3)
            if wire_type == VARINT:
                raw, pos = read_varint(data, pos, end)
                if raw:
                    return False
            elif wire_type == LENGTH:
                start, pos = read_length(data, pos, end)
                if field is None:
                    if pos > start:
                        return False  # a leaf kind's string or nested message
                elif field[4] & (_POINTER | _REPEATED | _MAP) or field[2] == _BYTES:
                    return False
                elif not self._raw_is_zero(field[2], field[3], data, start, pos):
                    return False
            else:
                pos = skip_field(data, pos, wire_type, end)
                return False
        return True

    def _entry(self, field: schema.Field, data: bytes, pos: int, end: int) -> tuple[str, Any]:
        """One map entry {key=1 string, value=2}: absent parts are Go's zero values."""
        kind, ref = field[2], field[3]
        map_key = ""
        value: Any = _MISSING
        while pos < end:
            key, pos = read_varint(data, pos, end)
            if key == 0x0A:
                start, pos = read_length(data, pos, end)
                map_key = data[start:pos].decode()
            elif key >> 3 == 2:
                wire_type = key & 7
                if wire_type == LENGTH:
                    start, pos = read_length(data, pos, end)
                    if field[4] & _ITEMS:
                        value = self._items(field, data, start, pos)
                    else:
                        value = self._length_value(kind, ref, data, start, pos)
                elif wire_type == VARINT and kind in _VARINT_KINDS:
                    raw, pos = read_varint(data, pos, end)
                    value = _varint_value(kind, raw)
                else:
                    raise ProtobufDecodeError(
                        f"map {field[1]} has a value of wire type {wire_type}"
                    )
            else:
                pos = skip_field(data, pos, key & 7, end)
        if value is _MISSING:
            if field[4] & _ITEMS:
                value = None
            elif kind == _MESSAGE:
                assert ref is not None
                value = self._message(ref, b"", 0, 0)
            else:
                value = _scalar_zero(kind)
        return map_key, value


_unknown_lock = threading.Lock()
_unknown_told: set[tuple[str, int]] = set()  # (message, field number): said once per process


def _unknown_field(message: str, number: int) -> None:
    """A field the table lacks (a newer server than the generated models): it cannot be
    named, so it is left out of the object. Said once per message and field, at WARNING:
    an update built from such an object would clear the field on the server (D25)."""
    with _unknown_lock:
        if (message, number) in _unknown_told:
            return
        _unknown_told.add((message, number))
    logger.warning(
        "protobuf field %d of %s is not in the generated models' table (a newer API server): "
        "it is left out of the objects read, and an update built from them would clear it on "
        'the server; regenerate the models against this server, or use wire_format="json"',
        number,
        message,
    )


ABSENT: Any = object()
"""What `scalar_reading` says a field's absence writes when it writes nothing."""

# How the transcode writes a single value (`scalar_reading`): a string, an int, a bool
# (each, with _OMIT, left out when empty or zero: omitempty), a Time, a MicroTime, a message.
READ_STRING, READ_STRING_OMIT, READ_INT, READ_INT_OMIT = _STR, _STR_OMIT, _INT_VALUE, _INT_OMIT
READ_BOOL, READ_BOOL_OMIT, READ_TIME, READ_MICROTIME = (
    _BOOL_VALUE,
    _BOOL_OMIT,
    _TIME_VALUE,
    _MICROTIME_VALUE,
)
READ_MESSAGE = _MSG
_SCALAR_READINGS = frozenset(
    {READ_STRING, READ_STRING_OMIT, READ_INT, READ_INT_OMIT, READ_BOOL, READ_BOOL_OMIT}
    | {READ_TIME, READ_MICROTIME, READ_MESSAGE}
)


def scalar_reading(field: schema.Field) -> tuple[int, Any] | None:
    """How the transcode writes `field` when it is a single value read the fast way: its
    READ_* code and what its absence writes (ABSENT: nothing); None for any other field (a
    list, a map, a quantity, an int-or-string, embedded JSON, an omitzero field)."""
    entry = _fast_entry(field)
    if entry is None or entry[0] not in _SCALAR_READINGS:
        return None
    template: dict[str, Any] = {}
    _add_absent(field, template, [])
    return entry[0], template.get(field[1], ABSENT)


def time_text(data: bytes, start: int, end: int, micro: bool) -> str | None:
    """The text the transcode writes for the Time (MicroTime) message at data[start:end]:
    None for Go's zero time."""
    return _time(data, start, end, micro)


def _fast_entry(field: schema.Field) -> _Entry | None:
    """The fast-path entry of a field read from its usual wire type (None: `_field` reads it)."""
    _number, name, kind, ref, flags = field
    if flags & (_ITEMS | _OMITZERO | _INLINE):
        return None
    if flags & _MAP:
        if kind == _STRING:
            return (_MAP_STR, name, field)
        if kind == _QUANTITY:
            return (_MAP_QTY, name, field)
        return None
    if flags & _REPEATED:
        if kind == _STRING:
            return (_STR_REP, name, None)
        if kind == _MESSAGE:
            return (_MSG_REP, name, ref)
        return None
    omit_empty = flags & _OMITEMPTY and not flags & _POINTER
    if kind == _STRING:
        return (_STR_OMIT if omit_empty else _STR, name, None)
    if kind == _MESSAGE:
        return (_MSG, name, ref)  # structs are never empty; a non-nil pointer is written
    if kind == _INT:
        return (_INT_OMIT if omit_empty else _INT_VALUE, name, None)
    if kind == _BOOL:
        return (_BOOL_OMIT if omit_empty else _BOOL_VALUE, name, None)
    leaf = {
        _TIME: _TIME_VALUE,
        _MICROTIME: _MICROTIME_VALUE,
        _QUANTITY: _QTY,
        _INT_OR_STRING: _IOS,
        _RAW_JSON: _RAW,
    }.get(kind)
    return None if leaf is None else (leaf, name, None)  # never empty under omitempty


def _add_absent(
    field: schema.Field, template: dict[str, Any], fresh: list[tuple[str, str]]
) -> None:
    """Records what Go's JSON writes for `field` when it is absent on the wire."""
    _number, name, kind, ref, flags = field
    if flags & _NILABLE or kind == _BYTES:
        if not flags & _OMIT:
            template[name] = None  # a nil pointer, slice, map or []byte
    elif flags & _OMITZERO:
        pass  # a zero struct or scalar is left out
    elif kind == _MESSAGE:
        assert ref is not None
        fresh.append((name, ref))  # an empty struct: a new dict per object
    else:
        zero = _scalar_zero(kind)
        if not (flags & _OMITEMPTY and _is_empty(kind, zero)):
            template[name] = zero


def _scalar_zero(kind: int) -> Any:
    """What Go's JSON writes for a non-pointer, non-struct field of `kind` at its zero value."""
    if kind == _STRING:
        return ""
    if kind == _INT or kind == _UINT:
        return 0
    if kind == _BOOL:
        return False
    if kind == _DOUBLE or kind == _FLOAT:
        return 0.0
    if kind == _QUANTITY or kind == _INT_OR_STRING:
        return "0" if kind == _QUANTITY else 0
    if kind == _DURATION:
        return "0s"
    return None  # Time, MicroTime (zero: null), RawExtension (nil Raw: null), nil []byte


def _plain_entry(data: bytes, pos: int, end: int) -> tuple[int, int] | None:
    """A map entry as Go writes it, {key=1, value=2 length-delimited, to the end}: where its
    key ends (it starts at pos + 2) and where its value starts (None for any other layout,
    which `Transcoder._entry` reads)."""
    if end - pos < 4 or data[pos] != 0x0A:
        return None
    key_end = pos + 2 + data[pos + 1]
    if data[pos + 1] >= 0x80 or key_end + 2 > end or data[key_end] != 0x12:
        return None
    length = data[key_end + 1]
    if length < 0x80:
        start = key_end + 2
    else:
        length, start = read_varint(data, key_end + 1, end)
    if start + length != end:
        return None
    return key_end, start


def _remember(strings: dict[bytes, str], chunk: bytes) -> str:
    """Decode `chunk` and, when short, remember it for the next transcode (_SHARED_STRINGS)."""
    text = chunk.decode()
    if len(chunk) <= _SHARED_LENGTH:
        if len(strings) >= _SHARED_STRINGS:
            strings.clear()
        strings[chunk] = text
    return text


_MISSING: Any = object()


def _kind_name(kind: int) -> str:
    for name in ("STRING", "BYTES", "INT", "UINT", "BOOL", "DOUBLE", "FLOAT", "MESSAGE", "TIME"):
        if getattr(schema, name) == kind:
            return name
    for name in ("MICROTIME", "DURATION", "QUANTITY", "INT_OR_STRING", "RAW_JSON"):
        if getattr(schema, name) == kind:
            return name
    return f"kind {kind}"


def _varint_value(kind: int, raw: int) -> Any:
    if kind == _INT:
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    if kind == _BOOL:
        return raw != 0
    return raw


def _packed(kind: int, data: bytes, pos: int, end: int) -> list[Any]:
    out: list[Any] = []
    if kind == _DOUBLE or kind == _FLOAT:
        width = 8 if kind == _DOUBLE else 4
        read = read_double if kind == _DOUBLE else read_float
        while pos < end:
            out.append(read(data, pos, end))
            pos += width
        return out
    while pos < end:
        raw, pos = read_varint(data, pos, end)
        out.append(_varint_value(kind, raw))
    return out


def _is_empty(kind: int, value: Any) -> bool:
    """omitempty: false, 0, "" and nil (structs and their custom JSON types are never empty)."""
    if kind == _STRING or kind == _INT or kind == _UINT or kind == _BOOL:
        return not value
    if kind == _DOUBLE or kind == _FLOAT:
        return bool(value == 0)
    if kind == _BYTES:
        return value is None or value == ""
    return False


def _fields_of_timestamp(data: bytes, pos: int, end: int) -> tuple[int, int]:
    seconds = nanos = 0
    while pos < end:
        key, pos = read_varint(data, pos, end)
        if key == 0x08:
            raw, pos = read_varint(data, pos, end)
            seconds = signed(raw)
        elif key == 0x10:
            raw, pos = read_varint(data, pos, end)
            nanos = signed(raw)
        else:
            pos = skip_field(data, pos, key & 7, end)
    return seconds, nanos


# Timestamp message bytes -> their text: an object repeats its times (conditions, managed
# fields), and formatting one costs far more than a lookup. Bounded: cleared when full.
_time_texts: dict[bytes, str | None] = {}
_microtime_texts: dict[bytes, str | None] = {}
_TIME_TEXTS_MAX = 4096


def _time(data: bytes, pos: int, end: int, micro: bool) -> str | None:
    if pos == end:
        return None  # Go's zero time: JSON null
    raw = data[pos:end]
    texts = _microtime_texts if micro else _time_texts
    text = texts.get(raw, _MISSING)
    if text is _MISSING:
        text = _format_time(raw, micro)
        if len(texts) >= _TIME_TEXTS_MAX:
            texts.clear()
        texts[raw] = text
    return text  # type: ignore[no-any-return]


def _format_time(raw: bytes, micro: bool) -> str | None:
    seconds, nanos = _fields_of_timestamp(raw, 0, len(raw))
    if seconds == _GO_ZERO_TIME and (nanos == 0 or not micro):
        return None
    t = time.gmtime(seconds)
    text = (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    )
    if micro:
        return f"{text}.{nanos // 1000:06d}Z"
    return text + "Z"


def _quantity(data: bytes, pos: int, end: int) -> str:
    text = "0"  # Quantity{} marshals as "0"
    while pos < end:
        key, pos = read_varint(data, pos, end)
        if key == 0x0A:
            start, pos = read_length(data, pos, end)
            text = data[start:pos].decode() or "0"
        else:
            pos = skip_field(data, pos, key & 7, end)
    return text


def _int_or_string(data: bytes, pos: int, end: int) -> int | str:
    is_string = False
    int_value = 0
    str_value = ""
    while pos < end:
        key, pos = read_varint(data, pos, end)
        if key == 0x08:
            raw, pos = read_varint(data, pos, end)
            is_string = signed(raw) == 1
        elif key == 0x10:
            raw, pos = read_varint(data, pos, end)
            int_value = signed(raw)
        elif key == 0x1A:
            start, pos = read_length(data, pos, end)
            str_value = data[start:pos].decode()
        else:
            pos = skip_field(data, pos, key & 7, end)
    return str_value if is_string else int_value


def _raw_json(data: bytes, pos: int, end: int) -> Any:
    raw: bytes | None = None
    while pos < end:
        key, pos = read_varint(data, pos, end)
        if key == 0x0A:
            start, pos = read_length(data, pos, end)
            raw = data[start:pos]
        else:
            pos = skip_field(data, pos, key & 7, end)
    if raw is None:
        return None  # a nil Raw marshals as null
    try:
        return _decode_json(raw)
    except msgspec.DecodeError as exc:
        raise ProtobufDecodeError(f"embedded JSON does not parse: {exc}") from None


def _duration(data: bytes, pos: int, end: int) -> str:
    nanoseconds = 0
    while pos < end:
        key, pos = read_varint(data, pos, end)
        if key == 0x08:
            raw, pos = read_varint(data, pos, end)
            nanoseconds = signed(raw)
        else:
            pos = skip_field(data, pos, key & 7, end)
    return go_duration(nanoseconds)


def _fraction(value: int, precision: int) -> tuple[str, int]:
    """Go's fmtFrac: `value`'s last `precision` digits as a fraction without trailing zeros."""
    digits = ""
    printed = False
    for _ in range(precision):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits = str(digit) + digits
        value //= 10
    return ("." + digits if printed else ""), value


def go_duration(nanoseconds: int) -> str:
    """Go's time.Duration.String(): "1h0m0s", "1.5s", "300ms", "0s"."""
    if nanoseconds == 0:
        return "0s"
    sign = "-" if nanoseconds < 0 else ""
    u = -nanoseconds if nanoseconds < 0 else nanoseconds
    if u < 1_000_000_000:
        if u < 1_000:
            return f"{sign}{u}ns"
        if u < 1_000_000:
            frac, whole = _fraction(u, 3)
            return f"{sign}{whole}{frac}µs"
        frac, whole = _fraction(u, 6)
        return f"{sign}{whole}{frac}ms"
    frac, u = _fraction(u, 9)
    text = f"{u % 60}{frac}s"
    u //= 60
    if u > 0:
        text = f"{u % 60}m{text}"
        u //= 60
        if u > 0:
            text = f"{u}h{text}"
    return sign + text


_transcoders: dict[int, Transcoder] = {}


def _malformed(message: str, exc: ProtobufDecodeError | UnicodeDecodeError) -> ProtobufDecodeError:
    """What went wrong transcoding `message`, saying which message."""
    if isinstance(exc, UnicodeDecodeError):
        return ProtobufDecodeError(f"malformed {message}: a string is not UTF-8 ({exc})")
    return ProtobufDecodeError(f"malformed {message}: {exc}")


def to_json_object(messages: Messages, message_name: str, data: bytes) -> dict[str, Any]:
    """The dict Go's encoding/json writes for the `message_name` struct decoded from `data`.

    Raises ProtobufDecodeError (a ValueError) naming what was malformed.
    """
    transcoder = _transcoders.get(id(messages))
    if transcoder is None or transcoder.messages is not messages:
        transcoder = _transcoders[id(messages)] = Transcoder(messages)
    return transcoder.to_json_object(message_name, data)
