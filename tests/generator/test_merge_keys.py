"""H36: the built-ins' lists merged by key, as written with them (`_merge_keys`)."""

from __future__ import annotations

from kubeinformers.generated import _merge_keys
from kubeinformers.generator.merge_keys import merge_keys, module_source


def test_h36_the_built_in_tree_names_each_keyed_list_and_the_paths_to_it() -> None:
    pod_spec = _merge_keys.CLASSES["core.v1.models.PodSpec"]
    assert pod_spec["containers"] == [["name"], "core.v1.models.Container"]
    assert pod_spec["volumes"][0] == ["name"]
    assert "tolerations" not in pod_spec  # merged whole
    container = _merge_keys.CLASSES["core.v1.models.Container"]
    assert container["env"] == [["name"], None]
    assert container["ports"] == [["containerPort", "protocol"], None]
    deployment = _merge_keys.KINDS["apps/v1/Deployment"]
    assert _merge_keys.CLASSES[deployment]["spec"] == [None, "apps.v1.models.DeploymentSpec"]
    meta = _merge_keys.CLASSES["meta.v1.models.ObjectMeta"]
    assert meta["ownerReferences"] == [["uid"], None]


def test_h36_keys_come_from_the_schema_and_only_paths_to_a_keyed_list_are_written() -> None:
    ref = "#/components/schemas/"
    schemas = {
        "x.Kind": {
            "properties": {
                "spec": {"$ref": ref + "x.Spec"},
                "plain": {"$ref": ref + "x.Plain"},
                "names": {"type": "array", "items": {"type": "string"}},
            }
        },
        "x.Spec": {
            "properties": {
                "items": {
                    "type": "array",
                    "items": {"$ref": ref + "x.Item"},
                    "x-kubernetes-list-map-keys": ["name"],
                },
                "whole": {"type": "array", "items": {"$ref": ref + "x.Item"}},
                "self": {"$ref": ref + "x.Spec"},  # a cycle ends
            }
        },
        "x.Item": {"properties": {"name": {"type": "string"}}},
        "x.Plain": {"properties": {"a": {"type": "string"}}},
    }

    class Served:
        group, version, kind = "x.io", "v1", "Kind"

    classes, kinds = merge_keys(schemas, {("x.io", "v1", "Kind"): "x.Kind"}, [Served()])
    assert kinds == {"x.io/v1/Kind": "x.Kind"}
    assert classes["x.Kind"] == {"spec": [None, "x.Spec"]}
    assert classes["x.Spec"]["items"] == [["name"], None]
    assert "whole" not in classes["x.Spec"] and "x.Plain" not in classes
    namespace: dict[str, object] = {}
    exec(module_source(classes, kinds), namespace)  # the module as written
    assert namespace["CLASSES"] == classes and namespace["KINDS"] == kinds
