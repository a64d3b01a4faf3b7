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
]

MAGIC = b"k8s\x00"

# (apiVersion, kind, the object's message bytes)
Unwrapped = tuple[str, str, bytes]
# (resourceVersion, continue, remainingItemCount or None, each item's message bytes)
ListParts = tuple[str, str, int | None, list[bytes]]


def unwrap(data: bytes) -> Unwrapped:
    """The apiVersion, kind and object bytes of a magic-prefixed runtime.Unknown body."""
    if data[:4] != MAGIC:
        head = bytes(data[:8])
        raise ProtobufDecodeError(
            f"not a Kubernetes protobuf body: it starts with {head!r}, not the magic {MAGIC!r}"
        )
    api_version = kind = ""
    raw = b""
    pos, end = 4, len(data)
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
                resource_version, continue_, remaining = list_meta(data, start, pos)
            else:
                if key >= 0x80:
                    key, pos = read_varint(data, pos - 1, end)
                pos = skip_field(data, pos, key & 7, end)
    except ProtobufDecodeError as exc:
        raise ProtobufDecodeError(f"malformed list: {exc}") from None
    return resource_version, continue_, remaining, items


def list_meta(data: bytes, pos: int, end: int) -> tuple[str, str, int | None]:
    """A ListMeta message's (resourceVersion, continue, remainingItemCount or None)."""
    resource_version = continue_ = ""
    remaining: int | None = None
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
        else:
            pos = skip_field(data, pos, key & 7, end)
    return resource_version, continue_, remaining


def split_watch_event(frame: bytes) -> tuple[str, bytes]:
    """A metav1.WatchEvent message (one frame, without its length prefix): its type and the
    enveloped bytes of its object (b"" when it has none)."""
    event_type = ""
    obj = b""
    pos, end = 0, len(frame)
    try:
        while pos < end:
            key, pos = read_varint(frame, pos, end)
            if key == 0x0A:  # 1: type
                start, pos = read_length(frame, pos, end)
                event_type = frame[start:pos].decode()
            elif key == 0x12:  # 2: object, a RawExtension {raw=1}
                start, pos = read_length(frame, pos, end)
                obj = _raw_extension(frame, start, pos)
            else:
                pos = skip_field(frame, pos, key & 7, end)
    except ProtobufDecodeError as exc:
        raise ProtobufDecodeError(f"malformed watch event: {exc}") from None
    return event_type, obj


def _raw_extension(data: bytes, pos: int, end: int) -> bytes:
    raw = b""
    while pos < end:
        key, pos = read_varint(data, pos, end)
        if key == 0x0A:
            start, pos = read_length(data, pos, end)
            raw = data[start:pos]
        else:
            pos = skip_field(data, pos, key & 7, end)
    return bytes(raw)
