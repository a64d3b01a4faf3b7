"""Reading the protobuf wire format: varints, tags, length-delimited fields, fixed-width values.

Why hand-written: the runtime decodes Kubernetes protobuf without generated classes or a
protobuf dependency, and these few functions are the hot path of every list and watch. They
work on `bytes` with integer positions (no per-field objects) and check every bound, so a
truncated or malformed message raises `ProtobufDecodeError` instead of reading past its end.
"""

from __future__ import annotations

import struct

__all__ = [
    "FIXED32",
    "FIXED64",
    "LENGTH",
    "VARINT",
    "ProtobufDecodeError",
    "read_double",
    "read_float",
    "read_length",
    "read_varint",
    "signed",
    "skip_field",
]

# wire types
VARINT = 0
FIXED64 = 1
LENGTH = 2
FIXED32 = 5

_SIGN = 1 << 63
_WRAP = 1 << 64
_unpack_double = struct.Struct("<d").unpack_from
_unpack_float = struct.Struct("<f").unpack_from


class ProtobufDecodeError(ValueError):
    """Bytes that are not the protobuf message they should be (truncated or malformed)."""


def read_varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """The unsigned varint at `pos` and the position after it (at most 10 bytes, before `end`)."""
    if pos >= end:
        raise ProtobufDecodeError(f"truncated varint at byte {pos}")
    b = data[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while pos < end:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtobufDecodeError(f"varint longer than 10 bytes before byte {pos}")
    raise ProtobufDecodeError(f"truncated varint before byte {pos}")


def signed(value: int) -> int:
    """A varint read as a two's complement int64 (negative int32/int64 take 10 bytes)."""
    value &= _WRAP - 1
    return value - _WRAP if value & _SIGN else value


def read_length(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """A length-delimited field's content bounds: (start, stop), checked against `end`."""
    b = data[pos] if pos < end else -1
    if 0 <= b < 0x80:
        start = pos + 1
        stop = start + b
    else:
        n, start = read_varint(data, pos, end)
        stop = start + n
    if stop > end:
        raise ProtobufDecodeError(
            f"length-delimited field at byte {start} runs {stop - end} bytes past its message"
        )
    return start, stop


def read_double(data: bytes, pos: int, end: int) -> float:
    if pos + 8 > end:
        raise ProtobufDecodeError(f"truncated fixed64 at byte {pos}")
    return float(_unpack_double(data, pos)[0])


def read_float(data: bytes, pos: int, end: int) -> float:
    if pos + 4 > end:
        raise ProtobufDecodeError(f"truncated fixed32 at byte {pos}")
    return float(_unpack_float(data, pos)[0])


def skip_field(data: bytes, pos: int, wire_type: int, end: int) -> int:
    """The position after a field's value of `wire_type` (an unknown field, skipped by length)."""
    if wire_type == VARINT:
        return read_varint(data, pos, end)[1]
    if wire_type == LENGTH:
        return read_length(data, pos, end)[1]
    if wire_type == FIXED64:
        stop = pos + 8
    elif wire_type == FIXED32:
        stop = pos + 4
    else:
        raise ProtobufDecodeError(f"unsupported wire type {wire_type} at byte {pos}")
    if stop > end:
        raise ProtobufDecodeError(f"truncated fixed-width field at byte {pos}")
    return stop
