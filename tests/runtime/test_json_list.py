"""K8 for JSON: a JSON list body is cut into its items while it arrives, and the result is
exactly the whole body's, whatever the pieces it comes in."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from kubeinformers.runtime.codec.drift import InvalidFieldError
from kubeinformers.runtime.codec.json_list import JsonListStream, decode_list_body
from kubeinformers.runtime.codec.lazy import is_lazy
from kubeinformers.runtime.codec.lazy_decoder import LazyDecoder
from kubeinformers.runtime.codec.wire import JsonDecoder, ObjectDecodeError
from tests.runtime.test_lazy import Pod

BATCH = 2048  # small batches, so that short bodies are cut many times


def _compact(value: Any) -> bytes:
    """JSON as kube-apiserver writes it: no whitespace."""
    return json.dumps(value, separators=(",", ":")).encode()


def _pod(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"web-{i}",
            "namespace": "default",
            "resourceVersion": str(100 + i),
            "labels": {"app": "web"},
        },
        "spec": {"containers": [{"name": "app", "image": "nginx"}], **extra},
    }


def _typed_list(items: list[dict[str, Any]], **meta: Any) -> bytes:
    """A typed list as the server writes it: kind, apiVersion, metadata, then items."""
    return _compact(
        {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "900", **meta}}
        | {"items": items}
    )


def _custom_list(items: list[dict[str, Any]]) -> bytes:
    """A custom resource list as the server writes it: keys sorted, so the items come before
    the kind and the list's metadata."""
    return _compact(
        {
            "apiVersion": "example.com/v1",
            "items": [{"apiVersion": "example.com/v1", "kind": "Widget", **i} for i in items],
            "kind": "WidgetList",
            "metadata": {"continue": "tok", "remainingItemCount": 7, "resourceVersion": "901"},
        }
    )


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _random_pieces(data: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(data):
        n = rng.choice((1, 7, 100, 1000, 5000))
        out.append(data[i : i + n])
        i += n
    return out


def _read(chunks: list[bytes], batch: int = BATCH) -> tuple[list[bytes], JsonListStream]:
    stream = JsonListStream(chunks, batch_bytes=batch)
    return list(stream.items()), stream


def _whole(body: bytes) -> tuple[list[bytes], str, str | None, int | None, str | None]:
    parsed = decode_list_body(body)
    meta = parsed.metadata
    items = [bytes(i) for i in parsed.items or ()]
    return items, meta.resourceVersion, meta.continue_, meta.remainingItemCount, parsed.kind


def _as_whole(items: list[bytes], stream: JsonListStream) -> tuple[Any, ...]:
    return (
        items,
        stream.resource_version,
        stream.continue_,
        stream.remaining_item_count,
        stream.kind,
    )


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("make", [_typed_list, _custom_list], ids=["typed", "custom"])
def test_k8_a_json_list_in_any_pieces_reads_as_the_whole_body(seed: int, make: Any) -> None:
    body = make([_pod(i) for i in range(60)])
    assert _as_whole(*_read(_random_pieces(body, seed))) == _whole(body)


def test_k8_json_items_are_handed_out_before_the_body_ends() -> None:
    body = _typed_list([_pod(i) for i in range(200)])
    pieces = _pieces(body, 500)
    handed_out_at: list[int] = []
    sent = 0

    def chunks() -> Iterator[bytes]:
        nonlocal sent
        for piece in pieces:
            sent += 1
            yield piece

    stream = JsonListStream(chunks(), batch_bytes=BATCH)
    for _ in stream.items():
        handed_out_at.append(sent)
    assert len(handed_out_at) == 200
    assert handed_out_at[0] < len(pieces) // 4  # the first items long before the last piece
    assert stream.parsed_bytes <= len(body)  # each byte parsed once: no mark was inside an item


def test_k8_custom_resource_list_metadata_after_the_items_is_read() -> None:
    items, stream = _read(_pieces(_custom_list([_pod(i) for i in range(40)]), 300))
    assert len(items) == 40
    assert (stream.kind, stream.resource_version, stream.continue_) == ("WidgetList", "901", "tok")
    assert stream.remaining_item_count == 7


def test_k8_item_marks_inside_items_are_passed_over() -> None:
    """Objects holding lists of objects that begin as items do (a StatefulSet's
    volumeClaimTemplates): the mark `},{"metadata":` inside an item is not a cut."""
    templates = [{"metadata": {"name": f"t{j}"}, "spec": {"x": j}} for j in range(30)]
    body = _typed_list([_pod(i, volumeClaimTemplates=templates) for i in range(40)])
    assert b'},{"metadata":' in _compact(templates)
    for seed in range(3):
        assert _as_whole(*_read(_random_pieces(body, seed))) == _whole(body)


def test_k8_marks_in_strings_do_not_cut() -> None:
    tricky = '},{"metadata":{"name":"x"}},{"metadata":'
    body = _typed_list([_pod(i, note=tricky, **{'"items":[': "]}"}) for i in range(50)])
    assert _as_whole(*_read(_pieces(body, 333))) == _whole(body)


@pytest.mark.parametrize("inner_items", [2, 5, 20])
def test_k8_a_body_whose_marks_are_mostly_inside_items_is_parsed_a_few_times_not_per_chunk(
    inner_items: int,
) -> None:
    """Every item holds `},{"metadata":` marks of its own, so most tries fail; the buffer
    doubles between failed tries, which bounds the bytes parsed to a few times the body."""
    inner = [{"metadata": {"name": f"n{j}"}} for j in range(inner_items)]
    body = _typed_list([_pod(i, inner=inner) for i in range(300)])
    items, stream = _read(_pieces(body, 100), batch=1024)
    assert _as_whole(items, stream) == _whole(body)
    assert stream.parsed_bytes <= 6 * len(body)  # a parse per 100-byte chunk: ~1,000x


@pytest.mark.parametrize(
    "body",
    [
        b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}',
        b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":null}',
        b'{"kind":"PodList","metadata":{"resourceVersion":"5"}}',
        json.dumps(json.loads(_typed_list([_pod(i) for i in range(30)])), indent=2).encode(),
        b'{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{},"rows":[{"cells":[1]}]}',
    ],
    ids=["empty", "null", "no-items", "pretty-printed", "table"],
)
def test_k8_bodies_in_other_layouts_read_as_the_whole_body(body: bytes) -> None:
    assert _as_whole(*_read(_pieces(body, 50))) == _whole(body)


@pytest.mark.parametrize("make", [_typed_list, _custom_list], ids=["typed", "custom"])
def test_k8_a_json_list_that_ends_early_is_an_error_never_a_shorter_list(make: Any) -> None:
    body = make([_pod(i) for i in range(40)])
    for cut in range(1, len(body), 97):
        with pytest.raises(ValueError, match=r"ended early or is not valid JSON \(after \d+ items"):
            _read(_pieces(body[:cut], 200))


# --- the decoders ---------------------------------------------------------------------------


def _pod_list_body(n: int, bad: set[int] = frozenset()) -> bytes:  # type: ignore[assignment]
    items = []
    for i in range(n):
        pod = _pod(i)
        if i in bad:
            pod["spec"]["containers"] = "not a list"
        items.append(pod)
    return _typed_list(items)


def test_k8_eager_decoder_streams_to_what_it_decodes_whole() -> None:
    body = _pod_list_body(50)
    decoder = JsonDecoder(Pod)
    page, bad = decoder.decode_list_stream(_pieces(body, 700))
    whole = decoder.decode_list(body)
    assert bad == [] and page == whole


def test_k7_k8_k11_an_invalid_item_in_a_streamed_list_is_reported_and_kept_at_its_version() -> None:
    body = _pod_list_body(30, bad={4, 17})
    page, bad = JsonDecoder(Pod).decode_list_stream(_pieces(body, 400))
    assert [(e.key, e.resource_version) for e in bad] == [
        ("default/web-4", "104"),
        ("default/web-17", "117"),
    ]
    assert all(isinstance(e, ObjectDecodeError) and "spec.containers" in e.path for e in bad)
    assert [p.metadata.name for p in page.items] == [f"web-{i}" for i in range(30)]  # type: ignore[union-attr]
    assert not is_lazy(page.items[4]) and not is_lazy(page.items[5])
    spec = page.items[4].spec  # type: ignore[union-attr]
    assert spec is not None and page.items[4].metadata.resource_version == "104"  # type: ignore[union-attr]
    with pytest.raises(InvalidFieldError, match=r"web-4.*spec\.containers"):
        _ = spec.containers


def test_k8_dict_decoder_streams_to_what_it_decodes_whole() -> None:
    body = _custom_list([_pod(i) for i in range(25)])
    decoder = JsonDecoder(dict)
    page, bad = decoder.decode_list_stream(_pieces(body, 300))
    assert bad == [] and page == decoder.decode_list(body)


def test_k8_lazy_decoder_streams_to_what_it_decodes_whole() -> None:
    body = _pod_list_body(50)
    decoder = LazyDecoder(Pod)
    page, bad = decoder.decode_list_stream(_pieces(body, 700))
    whole = decoder.decode_list(body)
    assert bad == [] and all(is_lazy(p) for p in page.items)
    assert page.items == whole.items
    assert page.resource_version == whole.resource_version == "900"


def test_k7_k8_an_item_whose_identity_is_malformed_is_reported_not_the_whole_list() -> None:
    """An item whose metadata cannot be read (here a name that is a number) fails its model
    at once, lazy or eager; the streamed list keeps the others and reports that one (K7)."""
    items = [_pod(i) for i in range(30)]
    items[7]["metadata"]["name"] = 7
    body = _typed_list(items)
    for decoder in (LazyDecoder(Pod), JsonDecoder(Pod)):
        page, bad = decoder.decode_list_stream(_pieces(body, 400))
        assert len(bad) == 1 and isinstance(bad[0], ObjectDecodeError)
        assert bad[0].path == "metadata.name" and bad[0].resource_version == ""
        # No identity, no key: it cannot be cached, so it is reported and left out.
        names = [getattr(p.metadata, "name", None) for p in page.items]
        assert names == [f"web-{i}" for i in range(30) if i != 7]


def test_k8_a_streamed_table_is_refused_naming_the_resource() -> None:
    table = b'{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{},"rows":[]}'
    for decoder in (JsonDecoder(Pod), LazyDecoder(Pod)):
        with pytest.raises(ValueError, match="cannot list Pod: the server answered with a Table"):
            decoder.decode_list_stream([table])


def test_k8_a_streamed_list_that_ends_early_names_the_resource() -> None:
    body = _pod_list_body(40)
    for decoder in (JsonDecoder(Pod), LazyDecoder(Pod)):
        with pytest.raises(
            ValueError, match=r"cannot decode a list page of Pod: the list body ended early"
        ):
            decoder.decode_list_stream(_pieces(body[:-50], 300))


# --- J1: plain-dict list items get the list's apiVersion and kind ----------------------------


def _dict_pages(body: bytes) -> dict[str, list[Any]]:
    """The items of `body` decoded into dicts every way the transport does: whole, streamed in
    one piece, streamed in small pieces (the list's kind may come after its items)."""
    decoder = JsonDecoder(dict)
    return {
        "whole": decoder.decode_list(body).items,
        "stream": decoder.decode_list_stream((body,))[0].items,
        "pieces": decoder.decode_list_stream(iter(_pieces(body, 97)))[0].items,
    }


def test_j1_dict_items_without_api_version_and_kind_get_the_lists() -> None:
    """apimachinery's unstructured decodeToList: an item with neither kind nor apiVersion gets
    the list's apiVersion and the list's kind minus "List"; one with either keeps its own."""
    items = [_pod(i) for i in range(40)]
    items[3] |= {"kind": "", "apiVersion": ""}  # empty reads as missing (GetKind)
    items[5]["apiVersion"] = "v1"  # either one set: left as it is
    items[6]["kind"] = "Pod"
    for how, decoded in _dict_pages(_typed_list(items)).items():
        types = [(i.get("apiVersion"), i.get("kind")) for i in decoded]
        assert types[:5] == [("v1", "Pod")] * 5, how
        assert types[5:7] == [("v1", None), (None, "Pod")], how
        assert types[7:] == [("v1", "Pod")] * 33, how
        assert decoded[0]["metadata"]["name"] == "web-0", how


def test_j1_custom_resource_dict_items_keep_their_own_and_the_lists_kind_may_come_last() -> None:
    """A custom resource list's items have their own apiVersion and kind; the list's kind and
    apiVersion may come after the items (sorted keys), and still type an item lacking both."""
    doc = json.loads(_custom_list([_pod(i) for i in range(40)]))
    doc["items"][0] |= {"apiVersion": "example.com/v2", "kind": "Gadget"}
    del doc["items"][9]["apiVersion"], doc["items"][9]["kind"]
    doc = {"items": doc["items"], "kind": doc["kind"], "apiVersion": doc["apiVersion"]}
    for how, decoded in _dict_pages(_compact(doc)).items():
        types = [(i["apiVersion"], i["kind"]) for i in decoded]
        assert types[0] == ("example.com/v2", "Gadget"), how
        assert set(types[1:]) == {("example.com/v1", "Widget")}, how
