"""K18: protobuf sub-messages repeated byte for byte are transcoded once for validation, and
shared only where the model validates them into objects of its own: built objects share
nothing a user can change, and equal what a fresh transcode (the JSON's shape) gives."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.codec.drift import InvalidFieldError, InvalidObjectError
from kubeinformers.runtime.codec.lazy import materialize
from kubeinformers.runtime.codec.lazy_decoder import LazyDecoder
from kubeinformers.runtime.codec.protobuf import transcode
from kubeinformers.runtime.codec.protobuf.decoder import ProtobufLazyDecoder
from kubeinformers.runtime.codec.protobuf.lazy import shareable_messages
from kubeinformers.runtime.codec.protobuf.schema import (
    MAP,
    MESSAGE,
    POINTER,
    RAW_JSON,
    REPEATED,
    STRING,
)
from kubeinformers.runtime.codec.protobuf.transcode import Transcoder, to_json_object
from tests.support.protobuf import MESSAGES, META, entry, ld, list_body, object_meta
from tests.support.threads import read_concurrently

T = "example.shelf.v1."
SHELF, SPEC, BOOK, NOTE, DRAFT = (T + n for n in ("Shelf", "ShelfSpec", "Book", "Note", "Draft"))
TABLE = {
    **MESSAGES,
    SHELF: (
        (1, "metadata", MESSAGE, META + "ObjectMeta", 0),
        (2, "spec", MESSAGE, SPEC, POINTER),
    ),
    SPEC: (
        (1, "books", MESSAGE, BOOK, REPEATED),
        (2, "note", MESSAGE, NOTE, POINTER),
        (3, "future", MESSAGE, DRAFT, REPEATED),  # a field the models do not know (yet)
    ),
    DRAFT: (
        (1, "title", STRING, None, 0),
        (2, "tags", STRING, None, REPEATED),
    ),
    BOOK: (
        (1, "title", STRING, None, 0),
        (2, "tags", STRING, None, REPEATED),
        (3, "labels", STRING, None, MAP),
    ),
    NOTE: (
        (1, "text", STRING, None, 0),
        (2, "extension", RAW_JSON, None, POINTER),  # embedded JSON: a model keeps it as given
    ),
}


class ObjectMeta(KubeModel):
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")
    labels: dict[str, str] | None = None


class Book(KubeModel):
    title: str
    tags: list[str] | None = None
    labels: dict[str, str] | None = None


class Note(KubeModel):
    text: str
    extension: Any = None


class ShelfSpec(KubeModel):
    books: list[Book] | None = None
    note: Note | None = None


class Shelf(KubeModel):
    metadata: ObjectMeta | None = None
    spec: ShelfSpec | None = None


def _book(title: str = "Dune") -> bytes:
    return ld(1, title) + ld(2, "sf") + ld(2, "classic") + entry(3, "lang", ld(2, "en"))


def _spec(*titles: str) -> bytes:
    note = ld(1, "n") + ld(2, ld(1, b'{"a":{"b":[1]}}'))
    draft = ld(1, "Future") + ld(2, "sf")
    return b"".join(ld(1, _book(t)) for t in titles) + ld(2, note) + ld(3, draft)


def _shelf(name: str, *titles: str) -> bytes:
    meta = object_meta(name=name, namespace="ns", uid=f"uid-{name}", resource_version="1")
    return ld(1, meta) + ld(2, _spec(*titles))


def _shelves(*names: str) -> list[Shelf]:
    decoder = ProtobufLazyDecoder(Shelf, message=SHELF, messages=TABLE, describe="shelves")
    body = list_body("v1", "ShelfList", [_shelf(name, "Dune", "Emma") for name in names])
    return list(decoder.decode_list(body).items)


def _mutables(obj: object) -> dict[int, object]:
    """Every model, list and dict reachable from `obj` (extra fields included), by id."""
    found: dict[int, object] = {}
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel | list | dict):
            found[id(item)] = item
        if isinstance(item, BaseModel):
            stack += item.__dict__.values()
            stack += (item.__pydantic_extra__ or {}).values()
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, dict):
            stack += item.values()
    return found


def test_k18_only_messages_the_model_builds_anew_are_shared() -> None:
    shared = shareable_messages(TABLE, Shelf, SHELF)
    assert BOOK in shared  # models, lists of str, dicts of str: all built anew
    assert NOTE not in shared  # embedded JSON: `Any` keeps the parsed value as given
    assert DRAFT not in shared  # `future` is kept as given among the spec's extra fields
    assert SPEC not in shared  # a message is shared only if everything under it is
    assert SHELF not in shared
    # A message reached through a field kept as given is shared nowhere.
    table = {**TABLE, SPEC: (*TABLE[SPEC][:2], (3, "future", MESSAGE, BOOK, REPEATED))}
    assert BOOK not in shareable_messages(table, Shelf, SHELF)


def test_k18_a_repeated_sub_message_is_transcoded_once_and_reads_as_a_fresh_transcode() -> None:
    transcoder = Transcoder(TABLE)
    shared = shareable_messages(TABLE, Shelf, SHELF)
    first = transcoder.for_validation(SPEC, _spec("Dune", "Emma"), shared)
    second = transcoder.for_validation(SPEC, _spec("Dune"), shared)
    assert first == to_json_object(TABLE, SPEC, _spec("Dune", "Emma"))
    assert second == to_json_object(TABLE, SPEC, _spec("Dune"))
    assert second["books"][0] is first["books"][0]  # the same bytes, transcoded once
    assert second["note"] is not first["note"]  # never shared: it holds embedded JSON
    assert second["future"][0] is not first["future"][0]
    assert second["future"][0] == first["future"][0] == {"title": "Future", "tags": ["sf"]}


def test_k18_objects_built_from_shared_values_share_nothing_mutable_and_stay_equal() -> None:
    a, b = _shelves("a", "b")
    a.spec, b.spec  # noqa: B018 - the reconcile's first reads
    materialize(a)
    materialize(b)
    ids_a, ids_b = _mutables(a), _mutables(b)
    assert not ids_a.keys() & ids_b.keys()
    # What any wire gives: the model of the JSON-shaped value, transcoded afresh.
    fresh = Shelf.model_validate(to_json_object(TABLE, SHELF, _shelf("b", "Dune", "Emma")))
    assert b == fresh
    assert b.spec is not None and b.spec.books is not None and b.spec.note is not None
    b.spec.books[0].tags.append("changed")  # type: ignore[union-attr]
    b.spec.books[0].labels["lang"] = "fr"  # type: ignore[index]
    b.spec.note.extension["a"]["b"].append(2)
    b.spec.__pydantic_extra__["future"][0]["title"] = "changed"  # type: ignore[index]
    assert a.spec is not None and a.spec.books is not None and a.spec.note is not None
    assert a.spec.books[0].tags == ["sf", "classic"]
    assert a.spec.books[0].labels == {"lang": "en"}
    assert a.spec.note.extension == {"a": {"b": [1]}}
    assert a.spec.model_extra == {"future": [{"title": "Future", "tags": ["sf"]}]}
    # Nor did the changes reach what later objects are built from.
    (c,) = _shelves("b")
    assert c == fresh


def test_k18_a_sub_message_that_rarely_repeats_is_no_longer_remembered() -> None:
    transcoder = Transcoder(TABLE)
    shared = shareable_messages(TABLE, Shelf, SHELF)
    for i in range(transcode._MEMO_PROBE):
        transcoder.for_validation(SPEC, _spec(f"title {i}"), shared)
    first = transcoder.for_validation(SPEC, _spec("again"), shared)
    second = transcoder.for_validation(SPEC, _spec("again"), shared)
    assert first == second and first["books"][0] is not second["books"][0]


def test_k18_the_memo_is_bounded_and_starts_again_when_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(transcode, "_MEMO_ENTRIES", 4)
    transcoder = Transcoder(TABLE)
    shared = shareable_messages(TABLE, Shelf, SHELF)
    first = transcoder.for_validation(SPEC, _spec("t0"), shared)
    for i in range(1, 6):  # six titles: the memo fills and starts again
        transcoder.for_validation(SPEC, _spec(f"t{i}"), shared)
        assert transcoder._memo_entries <= 4
    again = transcoder.for_validation(SPEC, _spec("t0"), shared)
    assert again == first and again["books"][0] is not first["books"][0]
    assert transcoder.for_validation(SPEC, _spec("t0"), shared)["books"][0] is again["books"][0]


def test_k18_k10_concurrent_first_reads_of_objects_sharing_bytes_agree() -> None:
    shelves = _shelves(*(f"s{i}" for i in range(8)))
    pending = list(shelves)

    def read() -> object:
        shelf = pending.pop()
        assert shelf.spec is not None
        return shelf.spec

    specs = read_concurrently(read, threads=8)
    assert len(specs) == 8
    fresh = ShelfSpec.model_validate(to_json_object(TABLE, SPEC, _spec("Dune", "Emma")))
    seen: set[int] = set()
    for spec in specs:
        assert spec == fresh
        ids = _mutables(spec).keys()
        assert not ids & seen
        seen |= ids


# --- K13: the rest of an object whose fields were built alone ----------------------------------


def _json_shelves(*names: str) -> list[Shelf]:
    items = [to_json_object(TABLE, SHELF, _shelf(name, "Dune", "Emma")) for name in names]
    body = json.dumps({"apiVersion": "v1", "kind": "ShelfList", "items": items}).encode()
    return list(LazyDecoder(Shelf, describe="shelves").decode_list(body).items)


@pytest.mark.parametrize("wire", [_shelves, _json_shelves], ids=["protobuf", "json"])
def test_k13_the_whole_build_after_a_field_read_alone_equals_a_build_of_everything(
    wire: Any,
) -> None:
    (obj,) = wire("a")
    (whole,) = wire("a")
    spec = obj.spec  # built alone
    materialize(obj)  # the rest, without the spec again
    materialize(whole)
    assert obj.spec is spec
    assert obj == whole
    assert obj.model_fields_set == whole.model_fields_set == {"metadata", "spec"}
    assert obj.model_dump(exclude_unset=True) == whole.model_dump(exclude_unset=True)
    assert obj.model_dump_json() == whole.model_dump_json()
    assert obj == Shelf.model_validate(to_json_object(TABLE, SHELF, _shelf("a", "Dune", "Emma")))


class Crate(KubeModel):
    metadata: ObjectMeta | None = None
    spec: ShelfSpec | None = None
    count: int | None = None


def test_k13_k11_the_rest_that_does_not_validate_is_built_field_by_field_keeping_the_field() -> (
    None
):
    reported: list[InvalidObjectError] = []
    item = {
        "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "1"},
        "spec": to_json_object(TABLE, SPEC, _spec("Dune")),
        "count": "many",  # a server newer than the models: not an int
    }
    body = json.dumps({"kind": "CrateList", "metadata": {}, "items": [item]}).encode()
    decoder = LazyDecoder(Crate, on_invalid=reported.append, describe="crates")
    (obj,) = decoder.decode_list(body).items
    spec = obj.spec  # valid alone: built alone
    assert spec is not None and spec.books is not None and spec.books[0].title == "Dune"
    assert not reported
    materialize(obj)  # the rest fails: built field by field, the spec kept
    assert obj.spec is spec
    assert len(reported) == 1 and "count" in str(reported[0])
    with pytest.raises(InvalidFieldError, match="count"):
        obj.count  # noqa: B018
    assert obj.model_fields_set == {"metadata", "spec", "count"}
