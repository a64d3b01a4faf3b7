"""K19: an item's field that is itself a model (`spec`, `status`) comes as a nested lazy
object, each of whose own fields is built alone on first read; whatever was read, every wire
format and every whole-object read gives what a build of everything gives."""

from __future__ import annotations

import copy
import functools
import itertools
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import TypeAdapter

from kubeinformers.generated.core.v1 import Pod as GeneratedPod
from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.codec import lazy as lazy_module
from kubeinformers.runtime.codec.drift import (
    InvalidFieldError,
    InvalidObjectError,
    PartlyInvalidObjectError,
)
from kubeinformers.runtime.codec.lazy import _state_of, is_lazy, lazy_twin, materialize
from kubeinformers.runtime.codec.lazy_decoder import LazyDecoder
from kubeinformers.runtime.codec.protobuf.decoder import ProtobufLazyDecoder
from kubeinformers.runtime.codec.protobuf.schema import (
    BOOL,
    DOUBLE,
    INT,
    MESSAGE,
    OMITEMPTY,
    REPEATED,
    STRING,
)
from kubeinformers.runtime.codec.protobuf.transcode import Transcoder, to_json_object
from tests.runtime.test_protobuf_shared import (
    SHELF,
    SPEC,
    TABLE,
    Book,
    Note,
    ObjectMeta,
    Shelf,
    ShelfSpec,
    _shelf,
    _spec,
)
from tests.support.garbage import cyclic_garbage_left_by
from tests.support.protobuf import META, fixed64, ld, list_body, object_meta, packed, vint
from tests.support.threads import read_concurrently

TITLES = ("Dune", "Emma")


@pytest.fixture(autouse=True, params=["small lists built", "every list lazy"])
def lazy_lists(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Every K19 case twice: as the test models' small lists and nested objects are read by
    default (built alone, K20's threshold), and with every list of models and every model
    nested below the item's own fields handed out lazy (K20), at any depth."""
    every: bool = request.param == "every list lazy"
    if every:
        monkeypatch.setattr(lazy_module, "LAZY_MIN_BYTES", 1)
    return every


def _protobuf(name: str = "a", raw: bytes | None = None) -> Shelf:
    decoder = ProtobufLazyDecoder(Shelf, message=SHELF, messages=TABLE, describe="shelves")
    body = list_body("v1", "ShelfList", [raw if raw is not None else _shelf(name, *TITLES)])
    (obj,) = decoder.decode_list(body).items
    return obj


def _json(name: str = "a", item: dict[str, Any] | None = None) -> Shelf:
    item = item if item is not None else to_json_object(TABLE, SHELF, _shelf(name, *TITLES))
    body = json.dumps({"apiVersion": "v1", "kind": "ShelfList", "items": [item]}).encode()
    (obj,) = LazyDecoder(Shelf, describe="shelves").decode_list(body).items
    return obj


def _everything(name: str = "a") -> Shelf:
    """What any wire gives: the model of the server's JSON, built whole."""
    return Shelf.model_validate(to_json_object(TABLE, SHELF, _shelf(name, *TITLES)))


WIRES = [pytest.param(_protobuf, id="protobuf"), pytest.param(_json, id="json")]


def _state(obj: object) -> dict[str, Any]:
    state: dict[str, Any] = _state_of(obj)  # the instance dict, past the class' `__dict__`
    return state


@pytest.mark.parametrize("wire", WIRES)
def test_k19_a_model_field_is_a_nested_lazy_object_that_builds_each_field_alone(
    wire: Callable[[], Shelf],
) -> None:
    obj = wire()
    spec = obj.spec
    assert isinstance(spec, ShelfSpec) and type(spec).__name__ == "ShelfSpec"
    assert is_lazy(spec) and is_lazy(obj) and obj.spec is spec
    assert not {"books", "note"} & _state(spec).keys()  # nothing of it built yet
    books = spec.books
    assert books is not None and [b.title for b in books] == list(TITLES)
    assert spec.books is books and is_lazy(spec)  # one field built alone, kept
    assert "note" not in _state(spec)  # the other field is still raw
    fresh = _everything()
    assert spec.note == fresh.spec.note  # type: ignore[union-attr]
    assert spec.model_extra == fresh.spec.model_extra  # type: ignore[union-attr]
    assert not is_lazy(spec)  # the unknown field's read built the rest in place
    assert spec.books is books and spec == fresh.spec


PARTIAL_READS: dict[str, Callable[[Shelf], object]] = {
    "nothing": lambda obj: None,
    "spec": lambda obj: obj.spec,
    "spec.books": lambda obj: obj.spec.books,  # type: ignore[union-attr]
    "spec.note": lambda obj: obj.spec.note,  # type: ignore[union-attr]
    "spec.books, then the spec whole": lambda obj: _books_then_whole_spec(obj),
    "spec.books[1].title": lambda obj: obj.spec.books[1].title,  # type: ignore[union-attr, index]
    "spec.note.text": lambda obj: obj.spec.note.text,  # type: ignore[union-attr]
}


def _books_then_whole_spec(obj: Shelf) -> object:
    assert obj.spec is not None and obj.spec.books is not None
    return materialize(obj.spec)


WHOLE_READS: dict[str, Callable[[Shelf], Any]] = {
    "materialize": lambda obj: materialize(obj),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda obj: pickle.loads(pickle.dumps(obj)),
    "model_copy": lambda obj: obj.model_copy(),
    "dump": lambda obj: Shelf.model_validate(obj.model_dump(by_alias=True, exclude_unset=True)),
    # Dumped from outside: pydantic's serializer reads the object's __dict__ (K13).
    "TypeAdapter dump": lambda obj: Shelf.model_validate(
        TypeAdapter(Shelf).dump_python(obj, by_alias=True, exclude_unset=True)
    ),
    "TypeAdapter dump_json": lambda obj: Shelf.model_validate_json(
        TypeAdapter(Shelf).dump_json(obj, by_alias=True)
    ),
    "dump as another model's field": lambda obj: Shelf.model_validate(
        _Holder(shelf=obj).model_dump(by_alias=True, exclude_unset=True)["shelf"]
    ),
    "vars": lambda obj: Shelf.model_validate(vars(obj)),
}


class _Holder(KubeModel):
    shelf: Shelf


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("partial", PARTIAL_READS, ids=str)
@pytest.mark.parametrize("whole", WHOLE_READS, ids=str)
def test_k19_whatever_was_read_a_whole_read_gives_a_build_of_everything(
    wire: Callable[[], Shelf], partial: str, whole: str
) -> None:
    obj = wire()
    PARTIAL_READS[partial](obj)
    spec_before = _state(obj).get("spec")
    books_before = _state(spec_before).get("books") if spec_before is not None else None
    result = WHOLE_READS[whole](obj)
    fresh = _everything()
    assert result == fresh and obj == fresh and fresh == obj
    assert not is_lazy(obj) and not is_lazy(obj.spec)
    assert obj.model_fields_set == fresh.model_fields_set
    assert obj.spec is not None and fresh.spec is not None
    assert obj.spec.model_fields_set == fresh.spec.model_fields_set
    assert obj.model_dump_json() == fresh.model_dump_json()
    assert obj.model_dump(exclude_unset=True) == fresh.model_dump(exclude_unset=True)
    if spec_before is not None:  # what was handed out stays what the object holds (K13)
        assert obj.spec is spec_before
    if books_before is not None:
        assert obj.spec.books is books_before


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("partial", PARTIAL_READS, ids=str)
def test_k13_k19_a_lazy_object_dumped_from_outside_dumps_its_build_of_everything(
    wire: Callable[[], Shelf], partial: str
) -> None:
    """A lazy item, its lazy metadata and its nested lazy objects dumped through a TypeAdapter
    (or as another model's field: a web framework's response, a list of cached objects) dump
    what a build of everything does, whatever was read before. (Until 2026-11-25 they dumped
    only what had been read: `{}`, or the metadata's identity.)"""
    fresh = _everything()
    assert fresh.metadata is not None and fresh.spec is not None
    obj = wire()
    PARTIAL_READS[partial](obj)
    meta = obj.metadata
    assert meta is not None
    assert TypeAdapter(ObjectMeta).dump_python(meta, exclude_unset=True) == (
        fresh.metadata.model_dump(exclude_unset=True)
    )
    obj = wire()
    PARTIAL_READS[partial](obj)
    spec = obj.spec
    assert spec is not None
    assert TypeAdapter(ShelfSpec).dump_python(spec, exclude_unset=True) == (
        fresh.spec.model_dump(exclude_unset=True)
    )
    assert not is_lazy(spec)
    obj = wire()
    PARTIAL_READS[partial](obj)
    shelves = TypeAdapter(list[Shelf])
    assert shelves.dump_json([obj]) == shelves.dump_json([fresh])
    assert not is_lazy(obj) and obj == fresh


def test_k13_a_generated_pod_dumped_from_outside_over_either_wire_dumps_every_field() -> None:
    from bench.pods import realistic_pod

    raw = json.dumps(realistic_pod(3, "perf")).encode()
    fresh = GeneratedPod.model_validate_json(raw)
    (pod,) = (
        LazyDecoder(GeneratedPod)
        .decode_list(b'{"kind":"PodList","metadata":{},"items":[' + raw + b"]}")
        .items
    )
    assert pod.status is not None and pod.status.phase == "Running"  # read in part
    pods = TypeAdapter(list[GeneratedPod])
    assert pods.dump_python([pod], exclude_unset=True) == [fresh.model_dump(exclude_unset=True)]


def test_k19_every_wire_and_every_partial_read_gives_equal_objects() -> None:
    objs = []
    wires: tuple[Callable[[], Shelf], ...] = (_protobuf, _json)
    for wire, partial in itertools.product(wires, PARTIAL_READS.values()):
        obj = wire()
        partial(obj)
        objs.append(obj)
    fresh = _everything()
    for a, b in itertools.combinations(objs, 2):
        assert a == b
    assert all(o == fresh for o in objs)
    assert all(o.spec == fresh.spec for o in objs)


@pytest.mark.parametrize("wire", WIRES)
def test_k19_k10_concurrent_readers_of_a_nested_object_see_no_torn_object_and_lose_no_field(
    wire: Callable[[], Shelf],
) -> None:
    fresh = _everything()
    reads: list[Callable[[Shelf], object]] = [
        lambda obj: obj.spec.books,  # type: ignore[union-attr]
        lambda obj: obj.spec.books[1].title,  # type: ignore[union-attr, index]
        lambda obj: obj.spec.books[0] == fresh.spec.books[0],  # type: ignore[union-attr, index]
        lambda obj: obj.spec.note.text,  # type: ignore[union-attr]
        lambda obj: obj.spec.note,  # type: ignore[union-attr]
        lambda obj: obj.spec == fresh.spec,
        lambda obj: copy.copy(obj.spec),
        lambda obj: pickle.loads(pickle.dumps(obj.spec)),
        lambda obj: materialize(obj),
        lambda obj: obj.model_dump_json(),
        lambda obj: obj == fresh,
    ]
    for _ in range(20):
        obj = wire()
        spec = obj.spec  # handed out before the race: it must stay the object's
        results: dict[int, object] = {}
        pending = list(range(len(reads)))

        def read(
            obj: Shelf = obj, pending: list[int] = pending, results: dict[int, object] = results
        ) -> object:
            index = pending.pop()  # each thread one read (list.pop is atomic)
            results[index] = reads[index](obj)
            return index

        assert len(read_concurrently(read, threads=len(reads))) == len(reads)
        books, title, book_equal, text, note, spec_equal, spec_copy, spec_pickled = (
            results[i] for i in range(8)
        )
        built, dumped, equal = (results[i] for i in range(8, len(reads)))
        assert spec_equal is True and equal is True and book_equal is True
        assert (title, text) == ("Emma", fresh.spec.note.text)  # type: ignore[union-attr]
        assert spec_copy == fresh.spec and spec_pickled == fresh.spec
        assert books == fresh.spec.books and note == fresh.spec.note  # type: ignore[union-attr]
        assert dumped == fresh.model_dump_json() and built is obj
        # No field lost: what one thread was handed is what every later read finds.
        assert spec is not None and obj.spec is spec and spec.books is books and spec.note is note
        assert obj == fresh and not is_lazy(obj) and not is_lazy(spec)


def test_k19_k10_concurrent_first_reads_of_one_nested_field_build_it_once() -> None:
    for wire in (_protobuf, _json):
        for _ in range(20):
            obj = wire()
            seen = read_concurrently(lambda obj=obj: obj.spec.books, threads=6)  # type: ignore[misc]
            assert len(seen) == 6 and all(s is seen[0] for s in seen)


@pytest.mark.parametrize("wire", WIRES)
def test_k19_g12_a_twin_shares_the_nested_object_handed_out(wire: Callable[[], Shelf]) -> None:
    obj = wire()
    spec = obj.spec
    twin = lazy_twin(obj)
    assert twin is not obj and twin.spec is spec  # a field built alone is shared (G12)
    assert twin == obj == _everything()


def test_k19_a_field_not_sent_reads_as_its_default_and_is_not_in_the_fields_set() -> None:
    item = to_json_object(TABLE, SHELF, _shelf("a", *TITLES))
    del item["spec"]["note"]
    obj = _json(item=item)
    spec = obj.spec
    assert spec is not None and spec.note is None and "note" not in _state(spec)
    assert is_lazy(spec)  # reading a field not sent builds nothing
    materialize(obj)
    assert spec.note is None and "note" not in spec.model_fields_set
    assert obj == Shelf.model_validate(item)


def test_k19_a_protobuf_field_left_out_reads_as_go_writes_it() -> None:
    raw = _shelf_without_note()
    item = to_json_object(TABLE, SHELF, raw)
    assert item["spec"]["note"] is None  # a nil pointer without omitempty: JSON null, sent
    obj = _protobuf(raw=raw)
    spec = obj.spec
    assert spec is not None and spec.note is None
    materialize(obj)
    assert "note" in spec.model_fields_set and obj == Shelf.model_validate(item)
    assert obj.model_dump(exclude_unset=True) == Shelf.model_validate(item).model_dump(
        exclude_unset=True
    )


def _shelf_without_note() -> bytes:
    from tests.runtime.test_protobuf_shared import _book

    meta = object_meta(name="a", namespace="ns", uid="uid-a", resource_version="1")
    return ld(1, meta) + ld(2, b"".join(ld(1, _book(t)) for t in TITLES))


def test_k19_k11_a_nested_field_that_does_not_validate_raises_naming_the_item_reported_once() -> (
    None
):
    reported: list[InvalidObjectError] = []
    item = to_json_object(TABLE, SHELF, _shelf("a", *TITLES))
    item["spec"]["books"][1]["title"] = ["not", "a", "title"]  # a server newer than the models
    body = json.dumps({"kind": "ShelfList", "metadata": {}, "items": [item]}).encode()
    decoder = LazyDecoder(Shelf, on_invalid=reported.append, describe="shelves")
    (obj,) = decoder.decode_list(body).items
    spec = obj.spec
    assert spec is not None and is_lazy(spec) and not reported  # nothing invalid read yet
    assert spec.note is not None and not reported
    with pytest.raises(InvalidFieldError, match=r"spec\.books\[1\]\.title") as raised:
        _ = spec.books[1].title  # type: ignore[index]
    assert raised.value.key == "ns/a" and raised.value.model is Shelf
    assert spec.books[0].title == "Dune"  # type: ignore[index]  # the rest reads
    (report,) = reported
    assert isinstance(report, PartlyInvalidObjectError) and report.key == "ns/a"
    assert [f.path for f in report.fields] == ["spec.books[1].title"]
    materialize(obj)  # the whole object: built, not reported again
    assert obj.spec is spec and len(reported) == 1
    copy.deepcopy(obj)
    twin = pickle.loads(pickle.dumps(obj))
    assert twin == obj and len(reported) == 1


def test_k19_k11_the_whole_item_read_first_reports_a_bad_nested_field_once() -> None:
    reported: list[InvalidObjectError] = []
    item = to_json_object(TABLE, SHELF, _shelf("a", *TITLES))
    item["spec"]["books"][0]["title"] = 7
    body = json.dumps({"kind": "ShelfList", "metadata": {}, "items": [item]}).encode()
    decoder = LazyDecoder(Shelf, on_invalid=reported.append, describe="shelves")
    (obj,) = decoder.decode_list(body).items
    spec = obj.spec
    assert spec is not None and spec.note is not None  # a good field read alone
    materialize(obj)  # the whole item: built field by field, the spec handed out kept
    assert obj.spec is spec and len(reported) == 1
    with pytest.raises(InvalidFieldError, match=r"spec\.books\[0\]\.title"):
        _ = spec.books[0].title  # type: ignore[index]
    assert spec.books[1].title == "Emma" and len(reported) == 1  # type: ignore[index]


@pytest.mark.parametrize("wire", WIRES)
def test_k20_a_list_of_big_models_comes_as_lazy_items_each_built_alone(
    wire: Callable[[], Shelf], lazy_lists: bool
) -> None:
    obj = wire()
    spec = obj.spec
    assert spec is not None
    books = spec.books
    assert books is not None and [type(b).__name__ for b in books] == ["Book", "Book"]
    assert all(isinstance(b, Book) for b in books)
    if not lazy_lists:  # items under LAZY_MIN_BYTES: built with the list, in one pass
        assert not any(is_lazy(b) for b in books)
        assert obj == _everything()
        return
    assert all(is_lazy(b) for b in books) and spec.books is books
    assert books[1].title == "Emma" and is_lazy(books[1])  # one field built alone
    assert set(_state(books[1])) & {"title", "tags", "labels"} == {"title"}
    assert is_lazy(books[0]) and "title" not in _state(books[0])
    note = spec.note  # a model below the item's own fields: a nested lazy object too
    assert isinstance(note, Note) and is_lazy(note)
    fresh = _everything()
    materialize(obj)  # the whole item: what was handed out is kept, and built in place
    assert obj.spec is spec and spec.books is books and spec.note is note
    assert not any(is_lazy(b) for b in books) and not is_lazy(note)
    assert obj == fresh and obj.model_dump_json() == fresh.model_dump_json()
    assert books[1].model_fields_set == fresh.spec.books[1].model_fields_set  # type: ignore[union-attr, index]


@pytest.mark.parametrize("wire", WIRES)
def test_k20_lazy_objects_at_one_path_in_different_items_hold_one_path_str(
    wire: Callable[[], Shelf], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path a deeper lazy object names itself by (K11) is one str for every object at
    that path, in every item, not ~70 bytes per object read."""
    monkeypatch.setattr(lazy_module, "LAZY_MIN_BYTES", 1)  # every list and model lazy
    first, second = wire(), wire()
    paths = []
    for obj in (first, second):
        spec = obj.spec
        assert spec is not None and spec.books is not None and is_lazy(spec.note)
        paths.append([_state(x)[lazy_module._PATH] for x in (*spec.books, spec.note)])
    assert paths[0] == ["spec.books[0]", "spec.books[1]", "spec.note"]
    assert all(a is b for a, b in zip(*paths, strict=True))


@pytest.mark.parametrize("wire", WIRES)
def test_k20_a_lazy_item_of_a_list_builds_alone_keeping_its_place_and_equality(
    wire: Callable[[], Shelf], lazy_lists: bool
) -> None:
    """A list's lazy item read whole (==, a copy, a pickle, a dump) builds itself alone, in
    place; its list and its object stay as lazy as they were."""
    obj = wire()
    books = obj.spec.books  # type: ignore[union-attr]
    assert books is not None
    fresh = _everything().spec.books  # type: ignore[union-attr]
    assert fresh is not None
    assert books[0] == fresh[0] and pickle.loads(pickle.dumps(books[1])) == fresh[1]
    assert copy.deepcopy(books) == fresh
    assert TypeAdapter(list[Book]).dump_json(books) == TypeAdapter(list[Book]).dump_json(fresh)
    assert not is_lazy(books[0]) and is_lazy(obj) and is_lazy(obj.spec)
    assert obj == _everything() and obj.spec.books is books  # type: ignore[union-attr]


def _reconcile(pod: Any) -> list[object]:
    """What a pod controller's reconcile reads (bench.child.reconcile_read's fields)."""
    seen: list[object] = [pod.metadata.labels]
    for container in pod.spec.containers:
        seen += [container.image, container.env]
    seen += [pod.status.phase, pod.status.conditions]
    return seen


def _real_pod(i: int) -> bytes:
    from bench.pods import realistic_pod

    return json.dumps(realistic_pod(i, "perf")).encode()


def test_k19_a_generated_pod_read_as_a_reconcile_then_whole_equals_its_eager_build() -> None:
    raws = [_real_pod(i) for i in range(3)]
    body = b'{"kind":"PodList","metadata":{},"items":[' + b",".join(raws) + b"]}"
    pods = LazyDecoder(GeneratedPod).decode_list(body).items
    for pod, raw in zip(pods, raws, strict=True):
        eager = GeneratedPod.model_validate_json(raw)
        assert _reconcile(pod) == _reconcile(eager)
        assert is_lazy(pod.spec) and is_lazy(pod.status)  # what the reconcile did not read: raw
        assert "tolerations" not in _state(pod.spec) and "container_statuses" not in _state(
            pod.status
        )
        spec, containers = pod.spec, pod.spec.containers  # type: ignore[union-attr]
        # A container (~500 bytes) comes lazy (K20): its image and env built, its ports,
        # resources and probes still raw; its env vars (~30 bytes each) were built.
        assert all(is_lazy(c) for c in containers)
        assert "resources" not in _state(containers[0]) and "image" in _state(containers[0])
        assert not any(is_lazy(e) for e in containers[0].env or ())
        assert pod == eager and pod.model_dump_json() == eager.model_dump_json()
        assert pod.spec is spec and pod.spec.containers is containers  # type: ignore[union-attr]
        assert not any(is_lazy(c) for c in containers)  # built in place with the pod
        assert pod.model_fields_set == eager.model_fields_set
        assert pod.spec.model_fields_set == eager.spec.model_fields_set  # type: ignore[union-attr]


def test_k19_k9_reading_nested_objects_leaves_no_cyclic_garbage() -> None:
    decoder = LazyDecoder(GeneratedPod)
    body = (
        b'{"kind":"PodList","metadata":{},"items":['
        + b",".join(_real_pod(i) for i in range(20))
        + b"]}"
    )

    def build_and_read(whole: bool) -> None:
        pods = decoder.decode_list(body).items
        for pod in pods:
            _reconcile(pod)
            if whole:
                materialize(pod)

    assert cyclic_garbage_left_by(functools.partial(build_and_read, False)) == 0
    assert cyclic_garbage_left_by(functools.partial(build_and_read, True)) == 0


def test_k19_nested_specs_of_a_protobuf_item_read_the_same_as_its_json() -> None:
    for name in ("a", "b"):
        raw = _shelf(name, *TITLES)
        pb, js = _protobuf(name), _json(name)
        assert pb.spec.books == js.spec.books  # type: ignore[union-attr]
        assert pb.spec.note == js.spec.note  # type: ignore[union-attr]
        assert (
            pb.spec
            == js.spec
            == ShelfSpec.model_validate(to_json_object(TABLE, SPEC, _spec(*TITLES)))
        )
        assert (
            materialize(pb)
            == materialize(js)
            == Shelf.model_validate(to_json_object(TABLE, SHELF, raw))
        )


# --- a nested protobuf object's field read alone: a transcode passing over the others -----

_T = "example.gauge.v1."
GAUGE, GAUGE_STATUS = _T + "Gauge", _T + "GaugeStatus"
GAUGE_TABLE = {
    **TABLE,
    GAUGE: (
        (1, "metadata", MESSAGE, META + "ObjectMeta", 0),
        (2, "status", MESSAGE, GAUGE_STATUS, 0),
    ),
    GAUGE_STATUS: (
        (1, "phase", STRING, None, OMITEMPTY),
        (2, "reason", STRING, None, 0),  # written even when empty
        (3, "tags", STRING, None, REPEATED),
    ),
}


class GaugeStatus(KubeModel):
    phase: str | None = None
    reason: str | None = None
    tags: list[str] | None = None


class Gauge(KubeModel):
    metadata: ObjectMeta | None = None
    status: GaugeStatus | None = None


@pytest.mark.parametrize(
    "status",
    [
        pytest.param(ld(1, "Running") + ld(2, "ok"), id="sent"),
        pytest.param(ld(1, "") + ld(3, "a"), id="empty"),
        pytest.param(ld(3, "a"), id="absent"),
        pytest.param(ld(1, "Pending") + ld(1, "Running") + ld(3, "a"), id="twice-the-last-wins"),
    ],
)
def test_k19_k3_a_string_read_alone_from_a_nested_protobuf_object_reads_as_go_writes_it(
    status: bytes,
) -> None:
    meta = object_meta(name="g", namespace="ns", uid="uid-g", resource_version="1")
    raw = ld(1, meta) + ld(2, status)
    decoder = ProtobufLazyDecoder(Gauge, message=GAUGE, messages=GAUGE_TABLE, describe="gauges")
    (obj,) = decoder.decode_list(list_body("v1", "GaugeList", [raw])).items
    expected = Gauge.model_validate(to_json_object(GAUGE_TABLE, GAUGE, raw))
    assert expected.status is not None and obj.status is not None
    assert (obj.status.phase, obj.status.reason) == (expected.status.phase, expected.status.reason)
    assert is_lazy(obj.status)  # read alone
    materialize(obj)
    assert obj == expected
    assert obj.status.model_fields_set == expected.status.model_fields_set


def test_k26_a_field_read_alone_passes_over_no_field_numbered_after_it() -> None:
    """The server writes fields in field-number order, so a read of `phase` (field 1) and of
    `reason` (field 2) stops before field 3; here field 3 is malformed (its length runs past
    the message), which only the whole read, reading every field, finds."""
    meta = object_meta(name="g", namespace="ns", uid="uid-g", resource_version="1")
    status = ld(1, "Running") + ld(2, "ok") + b"\x1a\x7fab"  # field 3: 127 bytes of 2
    raw = ld(1, meta) + ld(2, status)
    decoder = ProtobufLazyDecoder(Gauge, message=GAUGE, messages=GAUGE_TABLE, describe="gauges")
    (obj,) = decoder.decode_list(list_body("v1", "GaugeList", [raw])).items
    assert obj.status is not None
    assert (obj.status.phase, obj.status.reason) == ("Running", "ok")
    with pytest.raises(InvalidObjectError, match="ns/g"):
        materialize(obj)


@pytest.mark.parametrize(
    "status",
    [
        pytest.param(ld(1, "Running") + ld(2, "ok") + ld(3, "a") + ld(3, "b"), id="sent"),
        pytest.param(ld(1, "") + ld(3, "a"), id="empty"),
        pytest.param(ld(2, ""), id="absent"),
        pytest.param(ld(1, "Pending") + ld(3, "a") + ld(1, "Running"), id="twice-the-last-wins"),
    ],
)
@pytest.mark.parametrize("numbers", [{1}, {3}, {1, 3}, {1, 2, 3}], ids=str)
def test_k19_a_transcode_of_some_fields_or_all_but_them_is_the_whole_transcode_cut(
    status: bytes, numbers: set[int]
) -> None:
    """What a nested object's field read alone (only it) and its item's whole read after it
    (all but the fields built) transcode: the whole message's JSON object, cut."""
    whole = to_json_object(GAUGE_TABLE, GAUGE_STATUS, status)
    names = {json_name for number, json_name, *_ in GAUGE_TABLE[GAUGE_STATUS] if number in numbers}
    transcoder = Transcoder(GAUGE_TABLE)
    only = transcoder.selected(GAUGE_STATUS, numbers, True)
    without = transcoder.selected(GAUGE_STATUS, numbers, False)
    for _ in range(2):  # compiled once, the same after
        assert transcoder.to_json_object(only, status) == {
            k: v for k, v in whole.items() if k in names
        }
        assert transcoder.for_validation(without, status, frozenset()) == {
            k: v for k, v in whole.items() if k not in names
        }
    assert transcoder.to_json_object(GAUGE_STATUS, status) == whole  # the message itself


METER = _T + "Meter"
METER_TABLE = {
    METER: (
        (1, "phase", STRING, None, OMITEMPTY),
        (2, "count", INT, None, 0),
        (3, "ready", BOOL, None, OMITEMPTY),
        (4, "sizes", INT, None, REPEATED),
        (5, "ratio", DOUBLE, None, 0),
        (6, "tags", STRING, None, REPEATED),
    ),
}
# Every wire type a field passed over can come as, an unknown field (9) among them, and a
# repeated int both packed and not.
METER_BYTES = (
    ld(1, "Running")
    + vint(2, 300)
    + vint(3, 1)
    + packed(4, [1, 200, 3])
    + vint(4, 70_000)
    + fixed64(5, 0.5)
    + ld(6, "a")
    + vint(9, 7)
    + ld(9, "unknown")
    + ld(6, "b")
    + vint(2, 5)  # the last occurrence wins
)


@pytest.mark.parametrize(
    "numbers", [{1}, {2}, {3}, {4}, {5}, {6}, {2, 4}, {1, 2, 3, 4, 5, 6}], ids=str
)
def test_k19_a_transcode_of_some_fields_passes_over_the_others_of_every_wire_type(
    numbers: set[int],
) -> None:
    """A field read alone passes over the others in one scan, whatever their wire type (a
    varint, a packed run, a fixed64, a field the table lacks): the whole transcode, cut."""
    whole = to_json_object(METER_TABLE, METER, METER_BYTES)
    assert whole["count"] == 5 and whole["sizes"] == [1, 200, 3, 70_000]
    names = {json_name for number, json_name, *_ in METER_TABLE[METER] if number in numbers}
    transcoder = Transcoder(METER_TABLE)
    only = transcoder.selected(METER, numbers, True)
    without = transcoder.selected(METER, numbers, False)
    assert transcoder.to_json_object(only, METER_BYTES) == {
        k: v for k, v in whole.items() if k in names
    }
    assert transcoder.to_json_object(without, METER_BYTES) == {
        k: v for k, v in whole.items() if k not in names
    }
    # A span of a larger buffer (what a nested object holds) reads the same as its bytes.
    framed = b"\x00" * 3 + METER_BYTES + b"\xff"
    span = (3, 3 + len(METER_BYTES))
    assert transcoder.to_json_object(only, framed, *span) == transcoder.to_json_object(
        only, METER_BYTES
    )
    assert transcoder.for_validation(without, framed, frozenset(), *span) == {
        k: v for k, v in whole.items() if k not in names
    }


def test_k19_a_top_level_field_a_json_item_was_not_sent_reads_as_none_building_nothing() -> None:
    from bench.pods import realistic_pod

    item = realistic_pod(1, "perf")
    del item["status"]
    raw = json.dumps(item).encode()
    (pod,) = (
        LazyDecoder(GeneratedPod)
        .decode_list(b'{"kind":"PodList","metadata":{},"items":[' + raw + b"]}")
        .items
    )
    assert pod.status is None and is_lazy(pod) and "status" not in _state(pod)
    assert pod == GeneratedPod.model_validate_json(raw)
    assert "status" not in pod.model_fields_set
