"""K8: a protobuf list body is cut into its items while it arrives, each item as soon as its
last byte is in; the result is exactly the whole body's, and a body that ends early never
passes for a shorter list."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from kubeinformers.runtime.codec.compact import Compactor
from kubeinformers.runtime.codec.lazy import materialize
from kubeinformers.runtime.codec.protobuf.decoder import ProtobufLazyDecoder
from kubeinformers.runtime.codec.protobuf.envelope import split_list, unwrap
from kubeinformers.runtime.codec.protobuf.list_stream import ListStream
from kubeinformers.runtime.codec.protobuf.reader import ProtobufDecodeError
from tests.runtime.test_compact import _kept
from tests.runtime.test_protobuf_codec import WIDGET, Widget, _widget
from tests.support.protobuf import MAGIC, MESSAGES, ld, list_body, unknown, vint

ITEMS = [_widget(f"w{i}", str(i), app="web", n=str(i) * (i % 40)) for i in range(40)]
BODY = list_body("example.test/v1", "WidgetList", ITEMS, "77", "next", 5)
ENVELOPE_TAIL = len(ld(3, "") + ld(4, ""))  # contentEncoding and contentType, both empty


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def random_pieces(data: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(data)), 25))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def whole(stream: ListStream) -> tuple[str, str, str, str, int | None, list[bytes]]:
    items = list(stream.items())
    return (
        stream.api_version,
        stream.kind,
        stream.resource_version,
        stream.continue_,
        stream.remaining_item_count,
        items,
    )


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 1000, len(BODY)])
def test_k8_a_list_in_pieces_of_any_size_gives_the_whole_body_s_items_and_metadata(
    size: int,
) -> None:
    _, _, raw = unwrap(BODY)
    expected = ("example.test/v1", "WidgetList", *split_list(raw))
    assert whole(ListStream(pieces(BODY, size))) == expected
    for seed in range(5):
        assert whole(ListStream(random_pieces(BODY, seed))) == expected


def test_k8_list_metadata_after_the_items_is_read_too() -> None:
    meta = ld(2, "88") + ld(3, "more") + vint(4, 9)
    body = unknown("v1", "WidgetList", b"".join(ld(2, i) for i in ITEMS[:3]) + ld(1, meta))
    assert whole(ListStream(pieces(body, 5))) == (
        "v1",
        "WidgetList",
        "88",
        "more",
        9,
        ITEMS[:3],
    )


def test_k8_each_item_is_cut_out_before_the_rest_of_the_body_is_read() -> None:
    chunks = pieces(BODY, 256)
    pulled = 0

    def arriving() -> Iterator[bytes]:
        nonlocal pulled
        for chunk in chunks:
            pulled += 1
            yield chunk

    consumed = 0
    for item in ListStream(arriving()).items():
        end = BODY.index(item) + len(item)
        consumed = end
        # The chunk holding the item's last byte is the last one read (or the one after, when
        # the next item's tag and length were read ahead).
        assert pulled <= end // 256 + 2
    assert consumed > len(BODY) - 300


@pytest.mark.parametrize("size", [1, 13, 4096])
def test_k8_a_body_that_ends_early_raises_wherever_it_is_cut(size: int) -> None:
    for cut in range(len(BODY) - ENVELOPE_TAIL):
        with pytest.raises(ProtobufDecodeError, match="malformed list"):
            whole(ListStream(pieces(BODY[:cut], size)))


def test_k8_a_table_is_refused_before_any_row_is_cut() -> None:
    table = unknown("meta.k8s.io/v1", "Table", ld(2, b"column") + ld(3, b"row"))
    stream = ListStream(pieces(table, 4), expect_kind="WidgetList")
    items = stream.items()
    with pytest.raises(ProtobufDecodeError, match="the server rendered a Table"):
        next(items)


def test_k8_a_body_that_is_not_protobuf_or_sets_a_content_encoding_is_refused() -> None:
    with pytest.raises(ProtobufDecodeError, match="not a Kubernetes protobuf body"):
        whole(ListStream([b'{"kind":"WidgetList"}']))
    encoded = MAGIC + ld(1, ld(2, "WidgetList")) + ld(3, "gzip") + ld(2, b"")
    with pytest.raises(ProtobufDecodeError, match="contentEncoding 'gzip'"):
        whole(ListStream([encoded]))


@pytest.mark.parametrize("compact", [False, True], ids=["plain", "compact"])
def test_k8_k6_the_streamed_list_decodes_to_the_whole_body_s_objects(compact: bool) -> None:
    def decoder() -> ProtobufLazyDecoder[Widget]:
        return ProtobufLazyDecoder(
            Widget,
            message=WIDGET,
            messages=MESSAGES,
            compactor=Compactor() if compact else None,
        )

    streamed = decoder().decode_list_stream(pieces(BODY, 100))
    read_whole = decoder().decode_list(BODY)
    assert (streamed.resource_version, streamed.continue_, streamed.remaining_item_count) == (
        "77",
        "next",
        5,
    )
    # The compact store's dictionary comes from the first items, so every item is compressed.
    assert [_kept(o) for o in streamed.items] == [_kept(o) for o in read_whole.items]
    assert all((_kept(o) != item) == compact for o, item in zip(streamed.items, ITEMS, strict=True))
    assert [materialize(o) for o in streamed.items] == [materialize(o) for o in read_whole.items]


def test_k8_a_stream_error_names_the_kind_and_how_far_it_got() -> None:
    cut = BODY[: len(BODY) // 2]
    decoder = ProtobufLazyDecoder(Widget, message=WIDGET, messages=MESSAGES)
    with pytest.raises(
        ValueError, match=r"protobuf list of Widget: malformed list \(after \d+ items\)"
    ):
        decoder.decode_list_stream(pieces(cut, 512))
