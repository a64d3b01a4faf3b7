"""Kubernetes' protobuf framing: the `k8s\\x00` + runtime.Unknown envelope, lists, watch frames.

Why: every protobuf body kube-apiserver writes (an object, a list, a Status, the object inside a
watch event) is the 4-byte magic then a `runtime.Unknown` {typeMeta {apiVersion, kind}, raw} whose
`raw` is the object's own message (apimachinery runtime/serializer/protobuf). A watch stream is
length-prefixed `metav1.WatchEvent` {type, object: RawExtension{raw}} messages without the magic,
their object again in the envelope. These functions split those layers and copy out only the
bytes a caller keeps (each item), reading nothing else.
"""

from __future__ import annotations

from kubeinformers.runtime.codec.protobuf.reader import (
    LENGTH,
    ProtobufDecodeError,
    read_length,
    read_varint,
    skip_field,
)

__all__ = [
    "MAGIC",
    "ListParts",
    "Unwrapped",
    "check_kind",
    "list_meta",
    "split_list",
    "split_watch_event",
    "type_meta",
    "unwrap",
    "watch_event_bounds",
    "watch_event_object",
]

MAGIC = b"k8s\x00"

# (apiVersion, kind, the object's message bytes)
Unwrapped = tuple[str, str, bytes]
# (resourceVersion, continue, remainingItemCount or None, each item's message bytes)
ListParts = tuple[str, str, int | None, list[bytes]]


def unwrap(data: bytes, offset: int = 0, stop: int | None = None) -> Unwrapped:
    """The apiVersion, kind and object bytes of a magic-prefixed runtime.Unknown body (the
    whole of `data`, or `data[offset:stop]` read in place, as a watch event's object)."""
    end = len(data) if stop is None else stop
    if data[offset : offset + 4] != MAGIC:
        head = bytes(data[offset : min(offset + 8, end)])
        raise ProtobufDecodeError(
            f"not a Kubernetes protobuf body: it starts with {head!r}, not the magic {MAGIC!r}"
        )
    api_version = kind = ""
    raw = b""
    pos = offset + 4
    try:
        while pos < end:
            key = data[pos]
            if key < 0x80:
                pos += 1
            else:
                key, pos = read_varint(data, pos, end)
            number, wire_type = key >> 3, key & 7
            if wire_type == LENGTH and number in (1, 2, 3):
                start, pos = read_length(data, pos, end)
                if number == 2:
                    raw = data[start:pos]
                elif number == 1:
                    api_version, kind = type_meta(data, start, pos)
                elif pos > start:  # contentEncoding: none is ever set for API objects
                    encoding = data[start:pos].decode("utf-8", "replace")
                    raise ProtobufDecodeError(
                        f"runtime.Unknown with contentEncoding {encoding!r} is not supported"
                    )
            else:
                pos = skip_field(data, pos, wire_type, end)
    except ProtobufDecodeError as exc:
        raise ProtobufDecodeError(f"malformed runtime.Unknown envelope: {exc}") from None
    return api_version, kind, bytes(raw)


def check_kind(kind: str, expected: str, what: str) -> None:
    """Raise unless the envelope's kind is `expected` (`what` names the body in the message)."""
    if kind != expected:
        raise ProtobufDecodeError(
            f"{what} is of kind {kind or '<none>'!r}, expected {expected!r}"
            + (" (the server rendered a Table)" if kind == "Table" else "")
        )


def type_meta(data: bytes, pos: int, end: int) -> tuple[str, str]:
    """A runtime.TypeMeta message's (apiVersion, kind)."""
    api_version = kind = ""
    while pos < end:
        key, pos = read_varint(data, pos, end)
        if key == 0x0A:  # 1: apiVersion
            start, pos = read_length(data, pos, end)
            api_version = data[start:pos].decode()
        elif key == 0x12:  # 2: kind
            start, pos = read_length(data, pos, end)
            kind = data[start:pos].decode()
        else:
            pos = skip_field(data, pos, key & 7, end)
    return api_version, kind


def split_list(data: bytes) -> ListParts:
    """A list message (…List {metadata=1 ListMeta, items=2 repeated}) split into its list
    metadata and each item's bytes (copied: a cached item does not keep the page alive)."""
    resource_version = continue_ = ""
    remaining: int | None = None
    items: list[bytes] = []
    append = items.append
    pos, end = 0, len(data)
    try:
        while pos < end:
            key = data[pos]
            pos += 1
            if key == 0x12:  # 2: items, the hot loop
                b = data[pos] if pos < end else -1
                if 0 <= b < 0x80:
                    start = pos + 1
                    pos = start + b
                else:
                    n, start = read_varint(data, pos, end)
                    pos = start + n
                if pos > end:
                    raise ProtobufDecodeError(
                        f"item {len(items)} runs {pos - end} bytes past the list's end"
                    )
                append(data[start:pos])
            elif key == 0x0A:  # 1: ListMeta
                start, pos = read_length(data, pos, end)
                resource_version, continue_, remaining, _ = list_meta(data, start, pos)
            else:
                if key >= 0x80:
                    key, pos = read_varint(data, pos - 1, end)
                pos = skip_field(data, pos, key & 7, end)
    except ProtobufDecodeError as exc:
        raise ProtobufDecodeError(f"malformed list: {exc}") from None
    return resource_version, continue_, remaining, items


def list_meta(data: bytes, pos: int, end: int) -> tuple[str, str, int | None, str | None]:
    """A ListMeta message's (resourceVersion, continue, remainingItemCount or None, the
    selector of its shardInfo or None: the shard selector the server applied)."""
    resource_version = continue_ = ""
    remaining: int | None = None
    shard_selector: str | None = None
    while pos < end:
        key, pos = read_varint(data, pos, end)
        if key == 0x12:  # 2: resourceVersion
            start, pos = read_length(data, pos, end)
            resource_version = data[start:pos].decode()
        elif key == 0x1A:  # 3: continue
            start, pos = read_length(data, pos, end)
            continue_ = data[start:pos].decode()
        elif key == 0x20:  # 4: remainingItemCount (*int64)
            value, pos = read_varint(data, pos, end)
            remaining = value - (1 << 64) if value >= 1 << 63 else value
        elif key == 0x2A:  # 5: shardInfo {selector=1}
            start, pos = read_length(data, pos, end)
            shard_selector = _shard_info_selector(data, start, pos)
        else:
            pos = skip_field(data, pos, key & 7, end)
    return resource_version, continue_, remaining, shard_selector


def _shard_info_selector(data: bytes, pos: int, end: int) -> str:
    """A ShardInfo message's selector (KEP-5866)."""
    selector = ""
    while pos < end:
        key, pos = read_varint(data, pos, end)
        if key == 0x0A:  # 1: selector
            start, pos = read_length(data, pos, end)
            selector = data[start:pos].decode()
        else:
            pos = skip_field(data, pos, key & 7, end)
    return selector


def split_watch_event(frame: bytes) -> tuple[str, bytes]:
    """A metav1.WatchEvent message (one frame, without its length prefix): its type and the
    enveloped bytes of its object (b"" when it has none)."""
    event_type, start, stop = watch_event_bounds(frame)
    return event_type, bytes(frame[start:stop])


# The event types as str, shared by every event (no decode per event).
_EVENT_TYPES = {t.encode(): t for t in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR")}


def watch_event_bounds(frame: bytes) -> tuple[str, int, int]:
    """A metav1.WatchEvent message's type and where its enveloped object lies in `frame`
    (`unwrap(frame, start, stop)` reads it in place; start == stop when it has none)."""
    event_type = ""
    obj_start = obj_stop = 0
    pos, end = 0, len(frame)
    try:
        while pos < end:
            key, pos = read_varint(frame, pos, end)
            if key == 0x0A:  # 1: type
                start, pos = read_length(frame, pos, end)
                name = frame[start:pos]
                event_type = _EVENT_TYPES.get(name) or name.decode()
            elif key == 0x12:  # 2: object, a RawExtension {raw=1}
                start, pos = read_length(frame, pos, end)
                obj_start, obj_stop = _raw_extension(frame, start, pos)
            else:
                pos = skip_field(frame, pos, key & 7, end)
    except ProtobufDecodeError as exc:
        raise ProtobufDecodeError(f"malformed watch event: {exc}") from None
    return event_type, obj_start, obj_stop


# What may follow an enveloped object's raw bytes: the empty contentEncoding and contentType
# kube-apiserver writes (gogo-protobuf writes empty non-pointer fields).
_EMPTY_UNKNOWN_TAILS = frozenset({b"", b"\x1a\x00", b"\x22\x00", b"\x1a\x00\x22\x00"})
# (apiVersion, kind) by the TypeMeta message's bytes: every event of a watch carries the same.
_TYPE_METAS: dict[bytes, tuple[str, str]] = {}
_ENVELOPE_START = MAGIC + b"\x0a"  # an envelope's first field: its TypeMeta


def _length_at(frame: bytes, pos: int) -> tuple[int, int]:
    """Where the value of the length at `pos` starts and ends (a length of up to three bytes;
    a longer one raises IndexError, so that the careful path reads it)."""
    length = frame[pos]
    if length < 0x80:
        return pos + 1, pos + 1 + length
    more = frame[pos + 1]
    if more < 0x80:
        return pos + 2, pos + 2 + ((length & 0x7F) | more << 7)
    last = frame[pos + 2]
    if last >= 0x80:
        raise IndexError(pos)
    return pos + 3, pos + 3 + ((length & 0x7F) | (more & 0x7F) << 7 | last << 14)


def watch_event_object(frame: bytes) -> tuple[str, str, str, bytes] | None:
    """An object event as kube-apiserver lays it out, read in one pass: (type, apiVersion,
    kind, the object's message bytes). None for anything else (an ERROR, another field order,
    a malformed frame, a length of more than three bytes: an object over 2 MB): then
    `watch_event_bounds` and `unwrap` read it field by field and say what is wrong. The hot
    path of every watch: one copy of the object, no parse of the names, lengths read inline."""
    end = len(frame)
    try:
        if frame[0] != 0x0A or frame[1] >= 0x80:
            return None
        pos = 2 + frame[1]
        event_type = _EVENT_TYPES.get(frame[2:pos])
        if event_type is None or event_type == "ERROR" or frame[pos] != 0x12:
            return None
        # The RawExtension (field 2), then its raw (its field 1: the envelope), each running
        # to the frame's end; lengths of one or two bytes (up to 16 KB) and of three (2 MB).
        pos, stop = _length_at(frame, pos + 1)
        if stop != end or frame[pos] != 0x0A:
            return None
        pos, stop = _length_at(frame, pos + 1)
        if stop != end:
            return None
        if frame[pos : pos + 5] != _ENVELOPE_START:  # the magic, then TypeMeta (field 1)
            return None
        tm_start = pos + 6
        tm_end = tm_start + frame[pos + 5]
        if frame[pos + 5] >= 0x80:
            return None
        type_bytes = frame[tm_start:tm_end]
        names = _TYPE_METAS.get(type_bytes)
        if names is None:
            names = type_meta(frame, tm_start, tm_end)
            if len(_TYPE_METAS) < 1024:
                _TYPE_METAS[type_bytes] = names
        if frame[tm_end] != 0x12:  # the object (field 2)
            return None
        raw_start, raw_end = read_length(frame, tm_end + 1, end)
        if frame[raw_end:end] not in _EMPTY_UNKNOWN_TAILS:
            return None
    except (IndexError, ProtobufDecodeError):
        return None
    return event_type, names[0], names[1], frame[raw_start:raw_end]


def _raw_extension(data: bytes, pos: int, end: int) -> tuple[int, int]:
    raw = (0, 0)
    while pos < end:
        key, pos = read_varint(data, pos, end)
        if key == 0x0A:
            start, pos = read_length(data, pos, end)
            raw = (start, pos)
        else:
            pos = skip_field(data, pos, key & 7, end)
    return raw
