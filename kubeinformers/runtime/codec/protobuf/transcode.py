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
import time
from typing import Any

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

__all__ = ["Transcoder", "go_duration", "to_json_object"]

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

_VARINT_KINDS = frozenset({_INT, _UINT, _BOOL})
_GO_ZERO_TIME = -62135596800  # time.Time{}.Unix(): 0001-01-01T00:00:00Z
_decode_json = msgspec.json.decode

# A compiled message: fields by number, and the fields in table order.
_Spec = tuple[dict[int, schema.Field], tuple[schema.Field, ...]]


class Transcoder:
    """Transcodes messages of one schema table (compiles each message once, on first use)."""

    def __init__(self, messages: Messages) -> None:
        self.messages = messages
        self._specs: dict[str, _Spec] = {}

    def to_json_object(self, message: str, data: bytes) -> dict[str, Any]:
        """The JSON object Go writes for the `message` struct decoded from `data`."""
        try:
            return self._message(message, data, 0, len(data))
        except ProtobufDecodeError as exc:
            raise ProtobufDecodeError(f"malformed {message}: {exc}") from None
        except UnicodeDecodeError as exc:
            raise ProtobufDecodeError(
                f"malformed {message}: a string is not UTF-8 ({exc})"
            ) from None

    def _spec(self, message: str) -> _Spec:
        spec = self._specs.get(message)
        if spec is None:
            try:
                fields = self.messages[message]
            except KeyError:
                raise ProtobufDecodeError(f"message {message} is not in the schema table") from None
            spec = ({f[0]: f for f in fields}, tuple(fields))
            self._specs[message] = spec
        return spec

    def _message(self, message: str, data: bytes, pos: int, end: int) -> dict[str, Any]:
        by_number, fields = self._spec(message)
        values: dict[int, Any] = {}
        while pos < end:
            key = data[pos]
            if key < 0x80:
                pos += 1
            else:
                key, pos = read_varint(data, pos, end)
            number = key >> 3
            wire_type = key & 7
            field = by_number.get(number)
            if field is None:
                pos = skip_field(data, pos, wire_type, end)
                continue
            kind = field[2]
            flags = field[4]
            if wire_type == LENGTH:
                start, pos = read_length(data, pos, end)
                if flags & _MAP:
                    entries = values.get(number)
                    if entries is None:
                        entries = values[number] = {}
                    map_key, map_value = self._entry(field, data, start, pos)
                    entries[map_key] = map_value
                    continue
                if kind in _VARINT_KINDS or kind == _DOUBLE or kind == _FLOAT:
                    if not flags & _REPEATED:
                        raise ProtobufDecodeError(
                            f"{message} field {number} ({field[1]}) is length-delimited, "
                            "expected a scalar"
                        )
                    items = values.get(number)
                    if items is None:
                        items = values[number] = []
                    items.extend(_packed(kind, data, start, pos))
                    continue
                if flags & _OMITZERO and self._raw_is_zero(kind, field[3], data, start, pos):
                    values[number] = _ZERO  # json:",omitzero" leaves it out
                    continue
                if flags & _ITEMS:
                    value = self._items(field, data, start, pos)
                else:
                    value = self._length_value(kind, field[3], data, start, pos)
            elif wire_type == VARINT:
                if kind not in _VARINT_KINDS:
                    raise ProtobufDecodeError(
                        f"{message} field {number} ({field[1]}) is a varint, expected {_kind_name(kind)}"
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
                    f"{message} field {number} ({field[1]}) has wire type {wire_type}, "
                    f"expected {_kind_name(kind)}"
                )
            if flags & _REPEATED:
                items = values.get(number)
                if items is None:
                    values[number] = [value]
                else:
                    items.append(value)
            else:
                values[number] = value  # the last occurrence wins, as in Go
        out: dict[str, Any] = {}
        for number, json_name, kind, ref, flags in fields:
            if number in values:
                value = values[number]
                if value is _ZERO:
                    continue
                if flags & (_REPEATED | _MAP | _POINTER):
                    pass  # present: a non-empty slice or map, a non-nil pointer: written
                elif flags & _ITEMS:
                    if not value and flags & _OMIT:
                        continue  # a nil or empty named slice
                elif flags & _OMIT and _is_empty(kind, value):
                    continue
            elif flags & _NILABLE or kind == _BYTES:
                if flags & _OMIT:
                    continue
                value = None  # a nil pointer, slice or map
            elif flags & _OMITZERO:
                continue  # a zero struct or scalar
            else:
                value = self._zero(kind, ref)
                if flags & _OMITEMPTY and _is_empty(kind, value):
                    continue
            if flags & _INLINE:
                if type(value) is dict:
                    out.update(value)  # a nil embedded pointer adds nothing
            else:
                out[json_name] = value
        return out

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
        by_number = self._spec(ref)[0] if kind == _MESSAGE and ref is not None else {}
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
            value = None if field[4] & _ITEMS else self._zero(kind, ref)
        return map_key, value

    def _zero(self, kind: int, ref: str | None) -> Any:
        """What Go's JSON writes for a non-pointer field of `kind` at its zero value."""
        if kind == _STRING:
            return ""
        if kind == _MESSAGE:
            assert ref is not None
            return self._message(ref, b"", 0, 0)
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


_MISSING: Any = object()
_ZERO: Any = object()  # a present value that is zero, under json:",omitzero"


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


def _time(data: bytes, pos: int, end: int, micro: bool) -> str | None:
    if pos == end:
        return None  # Go's zero time: JSON null
    seconds, nanos = _fields_of_timestamp(data, pos, end)
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


def to_json_object(messages: Messages, message_name: str, data: bytes) -> dict[str, Any]:
    """The dict Go's encoding/json writes for the `message_name` struct decoded from `data`.

    Raises ProtobufDecodeError (a ValueError) naming what was malformed.
    """
    transcoder = _transcoders.get(id(messages))
    if transcoder is None or transcoder.messages is not messages:
        transcoder = _transcoders[id(messages)] = Transcoder(messages)
    return transcoder.to_json_object(message_name, data)
