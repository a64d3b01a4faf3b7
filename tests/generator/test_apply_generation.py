"""The generated apply configurations (M8): which keys are required, the API's field names,
the identity of a kind's metadata, the form of each TypedDict, and black's layout."""

from __future__ import annotations

from typing import Any

import black

from kubeinformers.generator import cli
from kubeinformers.generator.load import Source, crd_from_document

OBJ = {"type": "object"}


def _thing_crd() -> dict[str, Any]:
    item = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "port": {"type": "integer", "default": 80},
            "weight": {"type": "integer"},
        },
    }
    spec = {
        "type": "object",
        "required": ["size"],  # required in the model, not in an apply
        "properties": {
            "size": {"type": "string", "enum": ["s", "m"]},
            "byKey": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name", "port"],
                "items": item,
            },
            "whole": {
                "type": "array",
                "x-kubernetes-list-type": "atomic",
                "items": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {"id": {"type": "string"}, "note": {"type": "string"}},
                },
            },
            "rule": {
                "type": "object",
                "properties": {"not": {"type": "string"}, "in": {"type": "string"}},
            },
            "since": {"type": "string", "format": "date-time"},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.test.example.com"},
        "spec": {
            "group": "test.example.com",
            "scope": "Cluster",
            "names": {"kind": "Thing", "plural": "things"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


def _generated() -> str:
    model = crd_from_document(_thing_crd(), Source("things.yaml"))
    result = cli.build(model, "pkg")
    assert not result.errors, result.errors
    return result.files["test/v1/apply/thing.py"]


def test_m8_only_list_map_keys_the_item_requires_are_required() -> None:
    code = _generated()
    # byKey is a map list keyed by name and port: name is required, the defaulted port is not.
    assert "class ThingSpecByKeyApply(TypedDict, total=False):\n    name: Required[str]\n" in code
    assert "    port: int\n" in code
    # An atomic list is replaced whole: its items need no key, whatever the schema requires.
    assert "class ThingSpecWholeApply(TypedDict, total=False):\n    id: str\n" in code
    # The spec's required `size` is not required in an apply; only the enum's values are typed.
    assert '    size: Literal["s", "m"]\n' in code
    assert "    since: datetime | str\n" in code


def test_m8_a_kind_class_ties_the_configuration_to_its_model_and_identity() -> None:
    code = _generated()
    assert 'class ThingApply(ApplyConfiguration["_models.Thing"]):' in code
    assert '__kube_model__ = ("..thing", "Thing")' in code
    # Cluster-scoped: a name, no namespace.
    assert "class _ThingApplyFields(TypedDict, total=False):\n" in code
    assert "    metadata: Required[_meta_v1.ClusterObjectMetaApply]\n" in code
    assert "def __init__(self, **fields: Unpack[_ThingApplyFields]) -> None:" in code


def test_m8_keys_that_are_no_identifiers_use_the_functional_form() -> None:
    code = _generated()
    assert 'ThingSpecRuleApply = TypedDict(\n    "ThingSpecRuleApply",\n' in code
    assert '        "not": "str",\n' in code


def test_m8_apply_modules_are_laid_out_as_black_would_and_compile() -> None:
    code = _generated()
    mode = black.Mode(line_length=100, target_versions={black.mode.TargetVersion.PY311})
    assert black.format_str(code, mode=mode) == code
    compile(code, "thing.py", "exec")


def test_m8_a_kind_held_inside_another_is_its_object_typeddict() -> None:
    """A StatefulSet's volumeClaimTemplates hold whole PersistentVolumeClaims (a kind)."""
    from kubeinformers.generated.apps.v1 import apply as apps_apply
    from kubeinformers.generated.core.v1 import apply as core_apply
    from kubeinformers.generated.meta.v1 import apply as meta_apply

    spec = _fields(apps_apply.StatefulSetSpecApply)
    assert spec["volumeClaimTemplates"] == "list[_core_v1.PersistentVolumeClaimObjectApply]"
    assert "PersistentVolumeClaimObjectApply" in vars(core_apply)
    assert "PersistentVolumeClaimApply" in vars(core_apply)  # the kind's configuration
    ports = _fields(core_apply.ContainerPortApply)
    assert ports["containerPort"] == "Required[int]" and ports["protocol"] == "str"
    meta = _fields(meta_apply.NamespacedObjectMetaApply)
    assert meta["name"] == meta["namespace"] == "Required[str]"
    assert "managedFields" not in meta and "selfLink" not in meta  # the server's, not yours


def _fields(typed_dict: type) -> dict[str, str]:
    """A TypedDict's annotations as written (the modules defer them: `from __future__`)."""
    return {k: str(getattr(v, "__forward_arg__", v)) for k, v in typed_dict.__annotations__.items()}
