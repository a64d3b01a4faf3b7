"""Cutting a protobuf list body into its items while the body still arrives.

Why: kube-apiserver answers the informer's first LIST (resourceVersion "0", from its watch
cache) as one response whatever the limit: ~320 MB of protobuf for 100,000 pods. Read whole,
the client decodes nothing until the last byte is in, and holds the body and every item's copy
at once. Every layer of a list body is length-delimited (the `k8s\\x00` magic, the
runtime.Unknown envelope, the …List message, each item), so each item can be cut out as soon as
its last byte arrives and decoded while the server still writes the rest.

The bytes a caller keeps (each item) are copied out; the rest of a chunk is dropped once read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kubeinformers.runtime.codec.protobuf.envelope import MAGIC, check_kind, list_meta, type_meta
from kubeinformers.runtime.codec.protobuf.reader import (
    FIXED32,
    FIXED64,
    LENGTH,
    VARINT,
    ProtobufDecodeError,
    read_varint,
)

__all__ = ["ListStream"]

_LIST_ITEM = 0x12  # …List field 2 (items), length-delimited
_LIST_META = 0x0A  # …List field 1 (ListMeta)


class ListStream:
    """The items of one protobuf list body, cut out of `chunks` (the body in any pieces).

    Iterate `items()` once; after the last item, `api_version`, `kind`, `resource_version`,
    `continue_`, `remaining_item_count` and `shard_selector` hold the list's (the list metadata may come before
    or after the items). With `expect_kind`, a body of another kind (a Table, a Status) raises
    as soon as its type is read, before any item is cut. A body that ends early or breaks the
    wire format raises ProtobufDecodeError with the byte offset.
    """

    def __init__(self, chunks: Iterable[bytes], *, expect_kind: str = "") -> None:
        self._chunks = iter(chunks)
        self._buf = b""
        self._pos = 0  # next unread byte in _buf
        self._base = 0  # offset of _buf[0] in the body
        self._expect_kind = expect_kind
        self.api_version = ""
        self.kind = ""
        self.resource_version = ""
        self.continue_ = ""
        self.remaining_item_count: int | None = None
        self.shard_selector: str | None = None  # ListMeta.shardInfo.selector (KEP-5866)
        self.items_seen = 0

    # ------------------------------------------------------------------ buffer

    def _offset(self) -> int:
        return self._base + self._pos

    def _ensure(self, n: int) -> bool:
        """At least `n` unread bytes buffered, reading chunks as needed; False at the body's
        end with fewer left. Chunks are joined once per refill, never appended one by one."""
        avail = len(self._buf) - self._pos
        if avail >= n:
            return True
        parts = [self._buf[self._pos :]]
        self._base += self._pos
        self._pos = 0
        for chunk in self._chunks:
            if chunk:
                parts.append(chunk)
                avail += len(chunk)
                if avail >= n:
                    break
        self._buf = b"".join(parts)
        return avail >= n

    def _varint(self) -> int:
        self._ensure(10)
        value, pos = read_varint(self._buf, self._pos, len(self._buf))
        self._pos = pos
        return value

    def _take(self, n: int) -> bytes:
        if not self._ensure(n):
            left = len(self._buf) - self._pos
            raise ProtobufDecodeError(
                f"the body ends at byte {self._offset() + left}, inside a field of {n} bytes "
                f"starting at byte {self._offset()}"
            )
        start = self._pos
        self._pos = start + n
        return self._buf[start : self._pos]

    def _skip(self, wire_type: int) -> None:
        if wire_type == VARINT:
            self._varint()
        elif wire_type == FIXED64:
            self._take(8)
        elif wire_type == LENGTH:
            self._take(self._varint())
        elif wire_type == FIXED32:
            self._take(4)
        else:
            raise ProtobufDecodeError(f"unsupported wire type {wire_type} at byte {self._offset()}")

    # ------------------------------------------------------------------ layers

    def items(self) -> Iterator[bytes]:
        """Each item's message bytes, in order, as soon as each is complete."""
        try:
            if not self._ensure(4) or self._buf[self._pos : self._pos + 4] != MAGIC:
                head = self._buf[self._pos : self._pos + 8]
                raise ProtobufDecodeError(
                    f"not a Kubernetes protobuf body: it starts with {head!r}, "
                    f"not the magic {MAGIC!r}"
                )
            self._pos += 4
            listed = False
            while self._ensure(1):  # runtime.Unknown
                key = self._varint()
                number, wire_type = key >> 3, key & 7
                if wire_type != LENGTH or number not in (1, 2, 3):
                    self._skip(wire_type)
                    continue
                n = self._varint()
                if number == 2:
                    yield from self._list(self._offset() + n)
                    listed = True
                elif number == 1:
                    data = self._take(n)
                    self.api_version, self.kind = type_meta(data, 0, n)
                    if self._expect_kind:
                        check_kind(self.kind, self._expect_kind, "a list")
                elif n:  # contentEncoding: none is ever set for API objects
                    encoding = self._take(n).decode("utf-8", "replace")
                    raise ProtobufDecodeError(
                        f"runtime.Unknown with contentEncoding {encoding!r} is not supported"
                    )
            if self._expect_kind:
                check_kind(self.kind, self._expect_kind, "a list")
            if not listed:  # kube-apiserver always writes it, even for an empty list
                raise ProtobufDecodeError(f"the body ends at byte {self._offset()} before its list")
        except ProtobufDecodeError as exc:
            raise ProtobufDecodeError(
                f"malformed list (after {self.items_seen} items): {exc}"
            ) from None

    def _list(self, end: int) -> Iterator[bytes]:
        """The …List message ending at body offset `end`: its items, and its ListMeta."""
        while self._offset() < end:
            # Fast path, the hot loop: an item's tag and length, then the item, all buffered.
            buf, pos = self._buf, self._pos
            if buf[pos : pos + 1] == b"\x12" and self._ensure(11):
                buf, pos = self._buf, self._pos
                n, start = read_varint(buf, pos + 1, len(buf))
                stop = start + n
                if self._base + stop > end:
                    raise ProtobufDecodeError(
                        f"item {self.items_seen} runs {self._base + stop - end} bytes past "
                        "the list's end"
                    )
                if stop <= len(buf):
                    self._pos = stop
                    self.items_seen += 1
                    yield buf[start:stop]
                    continue
                self._pos = start
                item = self._take(n)
                self.items_seen += 1
                yield item
                continue
            key = self._varint()
            if key == _LIST_ITEM:
                n = self._varint()
                if self._offset() + n > end:
                    raise ProtobufDecodeError(
                        f"item {self.items_seen} runs {self._offset() + n - end} bytes past "
                        "the list's end"
                    )
                item = self._take(n)
                self.items_seen += 1
                yield item
            elif key == _LIST_META:
                data = self._take(self._varint())
                meta = list_meta(data, 0, len(data))
                (
                    self.resource_version,
                    self.continue_,
                    self.remaining_item_count,
                    self.shard_selector,
                ) = meta
            else:
                self._skip(key & 7)
        if self._offset() != end:
            raise ProtobufDecodeError(
                f"the list's last field runs {self._offset() - end} bytes past its end"
            )
