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
