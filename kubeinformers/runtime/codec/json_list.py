"""JSON list bodies: split whole (`decode_list_body`), or cut into items while the body still
arrives (`JsonListStream`, rule K8).

Why: kube-apiserver answers the informer's first LIST (resourceVersion "0", from its watch
cache) as one response whatever the limit: ~47 MB of JSON for 10,000 pods, and custom resources
only ever come as JSON. Read whole, the client decodes nothing until the last byte is in, and
holds the body and every item at once (peak RSS 1.7x what the cache keeps, for lazy objects).

JSON is not length-delimited, and finding where an item ends byte by byte in Python would cost
more than decoding it. So the cut is found by search and proven by a parse in C: kube-apiserver
writes compact JSON whose items all begin with the same key (`{"metadata":` for a typed list,
`{"apiVersion":` for custom resources), so `},` followed by that beginning marks where an item
may end. The bytes up to the last such mark are parsed as a JSON array (msgspec, no objects
built): it parses only if the mark is between two items of the list, not inside one (a
StatefulSet's volumeClaimTemplates, say, whose brackets would not balance). A mark that fails
is passed over for an earlier one; when none holds, the next try waits until the buffer has
doubled. A list of pods is parsed once; one whose items each hold a list of objects beginning
as items do, 2-5 times (at ~2 GB/s), never once per chunk.
Whatever is left at the end (and a body in any other layout: whitespace, a Table, `"items":
null`) is parsed whole, so the items and the list's metadata are exactly the whole body's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import msgspec

__all__ = ["BATCH_BYTES", "JsonListStream", "decode_list_body", "shard_selector_of"]


class _ShardInfo(msgspec.Struct):
    selector: str = ""


class _ListMeta(msgspec.Struct):
    resourceVersion: str = ""
    # `continue` is a Python keyword: msgspec renames the attribute, not the JSON name.
    continue_: str | None = msgspec.field(default=None, name="continue")
    remainingItemCount: int | None = None
    shardInfo: _ShardInfo | None = None  # the shard selector the server applied (KEP-5866)


def shard_selector_of(meta: _ListMeta) -> str | None:
    """The selector of a list's `metadata.shardInfo` (the shard the server applied), or None."""
    return meta.shardInfo.selector if meta.shardInfo is not None else None


class _ListBody(msgspec.Struct):
    """A list page split into its items' raw JSON, no object built (the lazy decoder and
    eager per-item validation both start here)."""

    kind: str | None = None
    apiVersion: str | None = None
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)
    items: list[msgspec.Raw] | None = None


decode_list_body = msgspec.json.Decoder(_ListBody).decode


BATCH_BYTES = 65536  # bytes buffered before the first try at cutting items out of them
_MAX_HEAD = 1 << 20  # the list's metadata and the items key come within this many bytes
_TRIES = 3  # marks tried, from the last backwards, per try
_ITEMS_KEY = re.compile(rb'"items"\s*:\s*\[')
_decode_array = msgspec.json.Decoder(list[msgspec.Raw]).decode


class JsonListStream:
    """The items of one JSON list body, cut out of `chunks` (the body in any pieces).

    Iterate `items()` once: each item's JSON bytes, in order, soon after they arrive. After
    the last one, `kind`, `api_version`, `resource_version`, `continue_` and
    `remaining_item_count` hold the list's (its metadata may come before or after the items). A body that ends early or is not
    a JSON list raises ValueError saying how many items it got through; it never ends as a
    shorter list.
    """

    def __init__(self, chunks: Iterable[bytes], *, batch_bytes: int | None = None) -> None:
        self._chunks = iter(chunks)
        self._batch = batch_bytes or BATCH_BYTES
        self.kind: str | None = None
        self.api_version: str | None = None
        self.resource_version = ""
        self.continue_: str | None = None
        self.remaining_item_count: int | None = None
        self.shard_selector: str | None = None
        self.items_seen = 0
        # Bytes of items parsed, failed tries included: the doubling keeps it a small multiple
        # of the body's size.
        self.parsed_bytes = 0

    def items(self) -> Iterator[bytes]:
        parts: list[bytes] = []
        size = 0
        head_end = -1
        searched = 0  # bytes of the head already searched for the items key
        for chunk in self._chunks:
            if not chunk:
                continue
            parts.append(chunk)
            size += len(chunk)
            if searched < _MAX_HEAD:
                data = b"".join(parts)
                parts = [data]
                head_end = self._read_head(data, searched)
                searched = len(data)
                if head_end >= 0:
                    break
        else:
            yield from self._finish(b"".join(parts))
            return
        rest = parts[0][head_end:]
        yield from self._read_items(rest)

    # ------------------------------------------------------------------ head

    def _read_head(self, data: bytes, searched: int) -> int:
        """The offset just after the items array's `[` once the head parses, else -1."""
        pos = max(0, searched - 64)  # the key may straddle two chunks
        while (match := _ITEMS_KEY.search(data, pos)) is not None:
            try:
                head = decode_list_body(data[: match.end()] + b"]}")
            except msgspec.DecodeError:
                pos = match.start() + 1  # not the list's own items key
                continue
            self._take_meta(head)
            return match.end()
        return -1

    def _take_meta(self, body: _ListBody) -> None:
        """The kind and list metadata `body` has (the head's, then the tail's, if any)."""
        meta = body.metadata
        self.kind = body.kind or self.kind
        self.api_version = body.apiVersion or self.api_version
        self.resource_version = meta.resourceVersion or self.resource_version
        self.continue_ = meta.continue_ or self.continue_
        if meta.remainingItemCount is not None:
            self.remaining_item_count = meta.remainingItemCount
        if meta.shardInfo is not None:
            self.shard_selector = meta.shardInfo.selector

    # ------------------------------------------------------------------ items

    def _read_items(self, first: bytes) -> Iterator[bytes]:
        parts = [first] if first else []
        size = len(first)
        mark: bytes | None = None
        next_try = self._batch
        chunks = self._chunks
        while True:
            # What is buffered is tried before waiting for more: the server may pause.
            if size >= next_try:
                data = b"".join(parts)
                parts = [data]
                if mark is None:
                    mark = _item_mark(data)
                cut = None if mark is None else self._cut(data, mark)
                if cut is None:
                    next_try = 2 * size  # no mark held: wait until the buffer doubles
                else:
                    items, end = cut
                    self.items_seen += len(items)
                    for item in items:
                        yield bytes(item)
                    del items
                    rest = data[end:]
                    parts = [rest] if rest else []
                    size = len(rest)
                    next_try = self._batch
            chunk = next(chunks, None)
            if chunk is None:
                break
            if chunk:
                parts.append(chunk)
                size += len(chunk)
        yield from self._finish(b'{"items":[' + b"".join(parts))

    def _cut(self, data: bytes, mark: bytes) -> tuple[list[msgspec.Raw], int] | None:
        """The complete items before the last mark that ends one, and where the next begins."""
        stop = len(data)
        for _ in range(_TRIES):
            at = data.rfind(mark, 0, stop)
            if at <= 0:
                return None
            self.parsed_bytes += at + 1
            try:
                items = _decode_array(b"[" + data[: at + 1] + b"]")
            except msgspec.DecodeError:
                stop = at  # inside an item: try an earlier mark
                continue
            return items, at + 2  # past the "}," between the last item and the next
        return None

    def _finish(self, document: bytes) -> Iterator[bytes]:
        """The rest of the body parsed whole: the last items, the array's end and what follows
        it (a custom resource list's kind and metadata come after its items), or a whole body
        whose items key was never found (a Table, `"items": null`, an empty or cut-off body)."""
        self.parsed_bytes += len(document)
        try:
            body = decode_list_body(document)
        except msgspec.DecodeError as exc:
            raise ValueError(
                f"the list body ended early or is not valid JSON (after {self.items_seen} items):"
                f" {exc}"
            ) from None
        self._take_meta(body)
        for item in body.items or ():
            self.items_seen += 1
            yield bytes(item)


def _item_mark(data: bytes) -> bytes | None:
    """`},` followed by how the first item begins up to its first key's colon (`},{"metadata":`),
    or None until that much of the first item is in (or for an empty or unusual array)."""
    start = 0
    while start < len(data) and data[start] in b" \t\r\n":
        start += 1
    if start >= len(data) or data[start] != ord("{"):
        return None
    colon = data.find(b":", start)
    if colon < 0 or colon - start > 256:
        return None
    return b"}," + data[start : colon + 1]
