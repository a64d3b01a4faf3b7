"""K22: a model with no declared fields (FieldsV1's trie) keeps its content as JSON until read,
and reads, compares, dumps, copies and changes exactly as one holding dicts."""

from __future__ import annotations

import copy
import datetime
import json
import pickle
from typing import Any

from pydantic import BaseModel

from bench.pods import realistic_pod
from kubeinformers.generated.core.v1 import Pod
from kubeinformers.generated.meta.v1 import FieldsV1, ManagedFieldsEntry, ObjectMeta
from kubeinformers.generated.protobuf_schema import MESSAGES
from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.codec.protobuf.transcode import to_json_object
from kubeinformers.runtime.codec.wire import JsonDecoder
from tests.support.protobuf import META, ld
from tests.support.threads import read_concurrently

_held = BaseModel.__dict__["__pydantic_extra__"].__get__  # what the slot holds, undecoded

TRIE: dict[str, Any] = {
    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
    "f:spec": {"f:containers": {'k:{"name":"app"}': {".": {}, "f:image": {}}}},
}


def _entry(trie: dict[str, Any] | None = None) -> ManagedFieldsEntry:
    return ManagedFieldsEntry.model_validate_json(
        json.dumps({"manager": "m", "fieldsType": "FieldsV1", "fieldsV1": trie or TRIE})
    )


def _trie(entry: ManagedFieldsEntry) -> FieldsV1:
    assert entry.fields_v1 is not None
    return entry.fields_v1


def _protobuf_meta() -> ObjectMeta:
    entry = ld(1, "m") + ld(2, "Update") + ld(6, "FieldsV1") + ld(7, ld(1, json.dumps(TRIE)))
    raw = ld(1, "web") + ld(3, "ns") + ld(17, entry)
    return ObjectMeta.model_validate(to_json_object(MESSAGES, META + "ObjectMeta", raw))


def test_k22_a_managed_fields_trie_is_held_as_json_until_read_over_either_wire() -> None:
    body = b'{"kind":"PodList","metadata":{},"items":['
    body += json.dumps(realistic_pod(1, "perf")).encode() + b"]}"
    pod = JsonDecoder(Pod).decode_list(body).items[0]
    assert pod.metadata is not None and pod.metadata.managed_fields
    from_json = _trie(pod.metadata.managed_fields[0])
    meta = _protobuf_meta()
    assert meta.managed_fields
    from_protobuf = _trie(meta.managed_fields[0])
    for trie in (from_json, from_protobuf):
        assert type(_held(trie)) is bytes
    assert from_protobuf.model_extra == TRIE
    assert type(_held(from_protobuf)) is dict  # decoded once read, and kept
    assert from_protobuf.model_extra is from_protobuf.model_extra
    expected = realistic_pod(1)["metadata"]["managedFields"][0]["fieldsV1"]
    assert from_json.model_dump() == expected


def test_k22_every_read_of_the_content_gives_what_dicts_would() -> None:
    for read in (
        lambda t: t.model_extra,
        lambda t: t.__pydantic_extra__,
        lambda t: t.model_dump(),
        lambda t: json.loads(t.model_dump_json()),
        lambda t: {key: getattr(t, key) for key in TRIE},
        lambda t: dict(iter(t)),
        lambda t: copy.copy(t).model_extra,
        lambda t: copy.deepcopy(t).model_extra,
        lambda t: pickle.loads(pickle.dumps(t)).model_extra,
    ):
        trie = _trie(_entry())
        assert read(trie) == TRIE
    assert "f:metadata=" in repr(_trie(_entry()))
    entry = _entry()
    assert json.loads(entry.model_dump_json(exclude_unset=True))["fieldsV1"] == TRIE


def test_k22_equal_json_compares_equal_without_decoding() -> None:
    one, two = _trie(_entry()), _trie(_entry())
    assert one == two and _entry() == _entry()
    assert type(_held(one)) is bytes and type(_held(two)) is bytes
    other = _trie(_entry({"f:spec": {}}))
    assert one != other
    decoded = _trie(_entry())
    assert decoded.model_extra == TRIE
    assert decoded == one and one == decoded  # one decoded, one not
    # The same content written in another key order is still equal (compared decoded).
    reordered = FieldsV1.model_validate_json(json.dumps(dict(reversed(TRIE.items()))))
    assert reordered == one


def test_k22_changes_to_the_content_stay_and_stay_apart() -> None:
    trie = _trie(_entry())
    twin = trie.model_copy(deep=True)
    content = trie.model_extra
    assert content is not None
    content["f:status"] = {}
    setattr(trie, "f:added", {".": {}})
    assert trie.model_dump() == {**TRIE, "f:status": {}, "f:added": {".": {}}}
    assert twin.model_dump() == TRIE and twin != trie


def test_k22_a_content_json_would_not_give_back_is_kept_as_given() -> None:
    when = datetime.datetime(2026, 11, 27, tzinfo=datetime.UTC)
    for content in ({"a": (1, 2)}, {"when": when}, {"n": float("nan")}):
        model = FieldsV1.model_validate(content)
        assert type(_held(model)) is dict  # not JSON: a tuple, a datetime, NaN
        assert model.model_extra == content  # the same objects (NaN is itself)


def test_k22_k10_concurrent_first_reads_decode_once() -> None:
    for _ in range(20):
        trie = _trie(_entry())
        seen = read_concurrently(lambda: trie.model_extra, threads=6)  # noqa: B023
        assert len(seen) == 6 and all(s is seen[0] for s in seen) and seen[0] == TRIE


def test_k22_only_models_without_declared_fields_hold_json() -> None:
    class Loose(KubeModel):
        name: str | None = None

    loose = Loose.model_validate({"name": "x", "unknown": {"a": 1}})
    assert type(_held(loose)) is dict and loose.model_extra == {"unknown": {"a": 1}}
    empty = FieldsV1.model_validate({})
    assert _held(empty) == {} and empty == FieldsV1()


def test_k22_equal_contents_share_one_json_and_change_apart() -> None:
    one, two = _trie(_entry()), _trie(_entry())
    raw = _held(one)
    assert type(raw) is bytes and _held(two) is raw  # one bytes for every equal trie
    content = one.model_extra
    assert content is not None
    content["f:mine"] = {}
    assert two.model_extra == TRIE and "f:mine" not in two.model_dump()
    assert _held(_trie(_entry())) is raw
