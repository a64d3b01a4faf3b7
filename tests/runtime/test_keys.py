"""Keys, tombstones and metadata accessors: rules A1-A9 (kubeinformers.runtime.api.keys)."""

from __future__ import annotations

import dataclasses
import random
from collections import UserDict
from types import SimpleNamespace
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    NoMetadataError,
    ObjectKeyError,
    deletion_handling_meta_namespace_key,
    meta_namespace_key,
    object_annotations,
    object_labels,
    object_name,
    object_namespace,
    object_resource_version,
    object_uid,
    split_meta_namespace_key,
)
from tests.runtime._queue_objects import ObjectMeta, Thing, dict_thing, thing


def test_a1_namespaced_key_is_namespace_slash_name() -> None:
    assert meta_namespace_key(thing("nginx", namespace="default")) == "default/nginx"
    assert meta_namespace_key(dict_thing("nginx", "default")) == "default/nginx"


def test_a1_cluster_scoped_key_is_name_without_leading_slash() -> None:
    assert meta_namespace_key(thing("node-1")) == "node-1"
    assert meta_namespace_key(thing("node-1", namespace="")) == "node-1"
    assert meta_namespace_key(dict_thing("node-1")) == "node-1"


def test_a1_explicit_key_string_is_returned_unchanged() -> None:
    assert meta_namespace_key("a/b/c") == "a/b/c"
    assert meta_namespace_key("") == ""


def test_a1_no_escaping_no_validation() -> None:
    assert meta_namespace_key(Thing(metadata=ObjectMeta())) == ""
    assert meta_namespace_key(Thing(metadata=ObjectMeta(namespace="ns"))) == "ns/"
    assert meta_namespace_key(thing("a/b", namespace="ns")) == "ns/a/b"
    assert meta_namespace_key({"metadata": {"namespace": "ns"}}) == "ns/"


def test_a1_object_without_meta_raises_object_has_no_meta() -> None:
    with pytest.raises(NoMetadataError, match=r"^object has no meta: "):
        meta_namespace_key(42)
    with pytest.raises(NoMetadataError, match="object has no meta"):
        object_name(object())


def test_a1_metadata_none_or_missing_gives_empty_fields() -> None:
    for obj in (Thing(metadata=None), {"metadata": None}, {}, {"kind": "X"}):
        assert meta_namespace_key(obj) == ""
        assert object_name(obj) == ""
        assert object_namespace(obj) == ""
        assert object_resource_version(obj) == ""
        assert object_uid(obj) == ""
        assert dict(object_labels(obj)) == {}
        assert dict(object_annotations(obj)) == {}


def test_a1_accessors_read_models_dicts_mappings_and_plain_objects() -> None:
    md = {
        "name": "p",
        "namespace": "ns",
        "resourceVersion": "42",
        "uid": "u-1",
        "labels": {"app": "web"},
        "annotations": {"note": "x"},
    }
    model = Thing.model_validate({"metadata": md})
    as_dict: dict[str, Any] = {"metadata": md}
    as_mapping = UserDict({"metadata": UserDict(md)})
    as_object = SimpleNamespace(
        metadata=SimpleNamespace(
            name="p",
            namespace="ns",
            resource_version="42",
            uid="u-1",
            labels={"app": "web"},
            annotations={"note": "x"},
        )
    )
    model_with_dict_meta = SimpleNamespace(metadata=md)
    for obj in (model, as_dict, as_mapping, as_object, model_with_dict_meta):
        assert object_name(obj) == "p", obj
        assert object_namespace(obj) == "ns"
        assert object_resource_version(obj) == "42"
        assert object_uid(obj) == "u-1"
        assert dict(object_labels(obj)) == {"app": "web"}
        assert dict(object_annotations(obj)) == {"note": "x"}
        assert meta_namespace_key(obj) == "ns/p"


def test_a1_metadata_object_lacking_some_fields_reads_as_empty() -> None:
    partial = SimpleNamespace(metadata=SimpleNamespace(name="only-name"))
    assert meta_namespace_key(partial) == "only-name"
    assert object_namespace(partial) == ""
    assert object_resource_version(partial) == ""
    assert dict(object_labels(partial)) == {}


def test_a2_tombstone_key_is_used_verbatim_object_not_consulted() -> None:
    tomb: DeletedFinalStateUnknown[Thing] = DeletedFinalStateUnknown(
        "other/key", thing("real", namespace="ns")
    )
    assert deletion_handling_meta_namespace_key(tomb) == "other/key"
    assert deletion_handling_meta_namespace_key(DeletedFinalStateUnknown("k", None)) == "k"


def test_a2_non_tombstone_falls_back_to_a1() -> None:
    assert deletion_handling_meta_namespace_key(thing("a", namespace="b")) == "b/a"
    assert deletion_handling_meta_namespace_key(dict_thing("c")) == "c"


def test_a1_plain_key_function_rejects_a_tombstone() -> None:
    with pytest.raises(NoMetadataError):
        meta_namespace_key(DeletedFinalStateUnknown("k", None))


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("name", ("", "name")),
        ("ns/name", ("ns", "name")),
        ("", ("", "")),
        ("/x", ("", "x")),
        ("ns/", ("ns", "")),
    ],
)
def test_a3_split_meta_namespace_key(key: str, expected: tuple[str, str]) -> None:
    assert split_meta_namespace_key(key) == expected


@pytest.mark.parametrize("key", ["a/b/c", "//", "a//b", 'we"ird/x/y'])
def test_a3_split_rejects_more_than_one_slash_with_go_quoted_key(key: str) -> None:
    with pytest.raises(ValueError) as info:
        split_meta_namespace_key(key)
    quoted = '"' + key.replace('"', '\\"') + '"'
    assert str(info.value) == f"unexpected key format: {quoted}"


def test_a4_l60_round_trip_of_random_keys() -> None:
    """A4/L60: random strings over a-i and '/': >1 slash fails, else split+join reproduces
    the input except that a leading '/' is lost."""
    rng = random.Random(60)
    for _ in range(2000):
        s = "".join(rng.choice("abcdefghi/") for _ in range(rng.randint(0, 8)))
        if s.count("/") > 1:
            with pytest.raises(ValueError):
                split_meta_namespace_key(s)
            continue
        ns, name = split_meta_namespace_key(s)
        rebuilt = meta_namespace_key(Thing(metadata=ObjectMeta(namespace=ns, name=name)))
        assert rebuilt == (s[1:] if s.startswith("/") else s)


def test_a4_l60_tombstone_key_parses_to_the_objects_own_name() -> None:
    cm = thing("testname", namespace="testnamespace")
    tomb = DeletedFinalStateUnknown("testnamespace/testname", cm)
    parsed = split_meta_namespace_key(deletion_handling_meta_namespace_key(tomb))
    assert parsed == (object_namespace(cm), object_name(cm))


def test_a5_tombstone_is_frozen_generic_and_may_hold_none() -> None:
    t1: DeletedFinalStateUnknown[Thing] = DeletedFinalStateUnknown("ns/a", None)
    t2 = DeletedFinalStateUnknown[Thing]("ns/a", None)
    assert t1 == t2
    assert t1.obj is None and t1.key == "ns/a"
    with pytest.raises(dataclasses.FrozenInstanceError):
        t1.key = "x"  # type: ignore[misc]
    assert not hasattr(t1, "__dict__")  # slots: tombstones stay small


def test_a8_object_key_error_renders_like_client_go_and_is_a_key_error() -> None:
    inner = NoMetadataError(7)
    err = ObjectKeyError(7, inner)
    assert isinstance(err, KeyError)
    assert str(err) == f"couldn't create key for object 7: {inner}"
    assert err.err is inner


def test_labels_of_an_object_are_its_own_mapping_not_a_copy() -> None:
    labels = {"a": "b"}
    obj = thing("x", labels=labels)
    assert object_labels(obj) is obj.metadata.labels  # type: ignore[union-attr]
