"""strip_managed_fields and chain_transforms (client-go TransformStripManagedFields)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown
from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.cache.transforms import chain_transforms, strip_managed_fields

MANAGED = [{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:spec": {}}}]


class Meta(KubeModel):
    name: str | None = None
    managed_fields: list[dict[str, Any]] | None = Field(default=None, alias="managedFields")


class Obj(KubeModel):
    metadata: Meta | None = None


class LooseMeta(KubeModel):
    name: str | None = None


class LooseObj(KubeModel):
    metadata: LooseMeta | None = None


def test_strips_model_managed_fields_in_place_and_idempotently() -> None:
    obj = Obj.model_validate({"metadata": {"name": "a", "managedFields": MANAGED}})
    assert obj.metadata is not None and obj.metadata.managed_fields
    assert strip_managed_fields(obj) is obj
    assert obj.model_dump()["metadata"]["managedFields"] is None
    assert "managedFields" not in obj.model_dump(exclude_unset=True)["metadata"]
    strip_managed_fields(obj)
    assert obj.model_dump(exclude_unset=True) == {"metadata": {"name": "a"}}


def test_strips_unknown_field_kept_as_model_extra() -> None:
    obj = LooseObj.model_validate({"metadata": {"name": "a", "managedFields": MANAGED}})
    assert obj.model_dump()["metadata"]["managedFields"] == MANAGED
    strip_managed_fields(obj)
    assert obj.model_dump() == {"metadata": {"name": "a"}}


def test_strips_mapping_managed_fields() -> None:
    obj = {"metadata": {"name": "a", "managedFields": MANAGED}, "spec": {}}
    assert strip_managed_fields(obj) is obj
    assert obj == {"metadata": {"name": "a"}, "spec": {}}
    assert strip_managed_fields(obj) == {"metadata": {"name": "a"}, "spec": {}}


def test_leaves_objects_without_metadata_alone() -> None:
    tombstone: DeletedFinalStateUnknown[Any] = DeletedFinalStateUnknown("ns/a", None)
    assert strip_managed_fields(tombstone) is tombstone
    assert strip_managed_fields({"kind": "Status"}) == {"kind": "Status"}
    assert strip_managed_fields(Obj()).metadata is None


def test_chain_transforms_applies_left_to_right() -> None:
    def add_label(obj: dict[str, Any]) -> dict[str, Any]:
        obj["metadata"].setdefault("labels", {})["seen"] = "yes"
        return obj

    chained = chain_transforms(strip_managed_fields, add_label)
    out = chained({"metadata": {"name": "a", "managedFields": MANAGED}})
    assert out == {"metadata": {"name": "a", "labels": {"seen": "yes"}}}


# --- K17: on a lazy object, managedFields are cut from the raw bytes ---------------------------


def _json_pod_with_managed_fields() -> bytes:
    from tests.runtime.test_reference_cycles import _full_pod

    return _full_pod(1)


def test_k17_strip_cuts_managed_fields_from_a_lazy_json_objects_bytes_building_nothing() -> None:
    import json

    from kubeinformers.generated.core.v1 import Pod
    from kubeinformers.runtime.codec.lazy import LazyModelBuilder, is_lazy

    raw = _json_pod_with_managed_fields()
    lazy = LazyModelBuilder(Pod).build(raw)
    assert strip_managed_fields(lazy) is lazy
    assert is_lazy(lazy) and is_lazy(lazy.metadata)  # nothing was built
    assert strip_managed_fields(lazy) is lazy  # idempotent
    expected = strip_managed_fields(Pod.model_validate_json(raw))  # the model path
    assert lazy.metadata is not None and lazy.metadata.managed_fields is None
    assert lazy == expected
    dumped = lazy.model_dump_json(exclude_unset=True)
    assert dumped == expected.model_dump_json(exclude_unset=True)
    without = json.loads(raw)
    del without["metadata"]["managedFields"]
    assert json.loads(dumped) == without  # everything else kept, as the server sent it
    assert Pod.model_validate_json(dumped) == lazy


def test_k17_strip_cuts_managed_fields_from_a_lazy_protobuf_objects_bytes() -> None:
    from kubeinformers.runtime.codec.lazy import is_lazy, materialize
    from kubeinformers.runtime.codec.protobuf.decoder import ProtobufLazyDecoder
    from tests.runtime.test_protobuf_codec import WIDGET, Widget
    from tests.support.protobuf import MESSAGES, entry, ld, list_body, object_meta, vint

    managed = ld(17, ld(1, "kubectl") + ld(2, "Update"))
    meta = object_meta(name="w", namespace="ns", uid="u", resource_version="5")
    # managedFields in the middle of the metadata, twice; an annotation after them.
    item = ld(1, meta + managed + managed + entry(12, "note", ld(2, "kept"))) + ld(
        2, ld(1, "T") + vint(5, 3)
    )

    def decoded() -> Widget:
        decoder = ProtobufLazyDecoder(Widget, message=WIDGET, messages=MESSAGES)
        return decoder.decode_list(list_body("v1", "WidgetList", [item])).items[0]

    lazy, built = decoded(), materialize(decoded())
    assert built.metadata is not None and "managedFields" in (built.metadata.model_extra or {})
    strip_managed_fields(lazy)
    assert is_lazy(lazy) and is_lazy(lazy.metadata)
    assert lazy == strip_managed_fields(built)  # the model path: equal objects
    assert lazy.metadata is not None and lazy.metadata.model_extra == {}  # no managedFields
    assert lazy.metadata.annotations == {"note": "kept"}
    assert lazy.spec is not None and (lazy.spec.title, lazy.spec.count) == ("T", 3)


def test_k17_a_built_metadata_or_a_compact_object_is_stripped_as_a_model() -> None:
    from kubeinformers.generated.core.v1 import Pod
    from kubeinformers.runtime.codec.compact import Compactor
    from kubeinformers.runtime.codec.lazy import LazyModelBuilder, is_lazy, materialize

    raw = _json_pod_with_managed_fields()
    expected = strip_managed_fields(Pod.model_validate_json(raw))
    read = LazyModelBuilder(Pod).build(raw)
    assert read.metadata is not None and read.metadata.owner_references  # built metadata
    strip_managed_fields(read)
    assert read == expected
    compactor = Compactor()
    builder = LazyModelBuilder(Pod, compactor=compactor)
    builder.train([raw] * Compactor.TRAIN_OBJECTS)
    compact = builder.build(raw)
    assert is_lazy(compact)
    assert materialize(strip_managed_fields(compact)) == expected
