"""A test-side checker of the API server's CRD rules, so our example CRDs are ones a real
kube-apiserver (apiextensions.k8s.io/v1) would accept.

It implements the validation the apiextensions API server runs on create (the parts that
matter for files written by hand): names and versions of the CRD, and the *structural schema*
rules of each version's `openAPIV3Schema`
(https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema).
It is checked against the 157 real CRDs of the shared corpus, which real servers accept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
FORBIDDEN_IN_JUNCTORS = (
    "description",
    "title",
    "type",
    "default",
    "additionalProperties",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
)
DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _valid_kind(kind: Any) -> bool:
    """apiextensions' rule: the lower-cased kind is a DNS-1035 label (so zalando's kind
    `postgresql` is as valid as `Postgresql`)."""
    return isinstance(kind, str) and bool(DNS1035.match(kind.lower()))


JSON_TYPES = {"object", "array", "string", "integer", "number", "boolean"}


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML reads YAML 1.1, where a bare `=` is the "value" tag; Go's YAML reads it as text."""


_Loader.add_constructor("tag:yaml.org,2002:value", _Loader.construct_yaml_str)


def load_documents(path: Path) -> list[Any]:
    """Every non-empty YAML document of `path`."""
    with path.open(encoding="utf-8") as f:
        return [doc for doc in yaml.load_all(f, Loader=_Loader) if doc is not None]


def crd_problems(crd: Mapping[str, Any]) -> list[str]:
    """What a kube-apiserver would reject in this CRD; empty when it would accept it."""
    problems: list[str] = []
    if crd.get("apiVersion") != "apiextensions.k8s.io/v1":
        problems.append(f"apiVersion {crd.get('apiVersion')!r} is not apiextensions.k8s.io/v1")
    if crd.get("kind") != "CustomResourceDefinition":
        problems.append(f"kind {crd.get('kind')!r} is not CustomResourceDefinition")
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group", "")
    plural = names.get("plural", "")
    if not DNS1123_SUBDOMAIN.match(group) or "." not in group:
        problems.append(f"spec.group {group!r} must be a DNS subdomain with at least one dot")
    if not DNS1035.match(plural):
        problems.append(f"spec.names.plural {plural!r} must be a lowercase DNS label")
    if crd.get("metadata", {}).get("name") != f"{plural}.{group}":
        problems.append(f"metadata.name must be {plural}.{group}")
    if not _valid_kind(names.get("kind", "")):
        problems.append(f"spec.names.kind {names.get('kind')!r} is not a valid kind")
    if "listKind" in names and not _valid_kind(names["listKind"]):
        problems.append(f"spec.names.listKind {names['listKind']!r} is not a valid kind")
    singular = names.get("singular")
    if singular is not None and not DNS1035.match(singular):
        problems.append(f"spec.names.singular {singular!r} must be a lowercase DNS label")
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        problems.append(f"spec.scope {spec.get('scope')!r} must be Namespaced or Cluster")
    versions: Sequence[Mapping[str, Any]] = spec.get("versions") or []
    if not versions:
        problems.append("spec.versions must not be empty")
    seen: set[str] = set()
    for i, version in enumerate(versions):
        where = f"spec.versions[{i}]"
        name = version.get("name", "")
        if not DNS1035.match(name) or name in seen:
            problems.append(f"{where}.name {name!r} must be a unique DNS label")
        seen.add(name)
        for flag in ("served", "storage"):
            if not isinstance(version.get(flag), bool):
                problems.append(f"{where}.{flag} must be true or false")
        schema = (version.get("schema") or spec.get("validation") or {}).get("openAPIV3Schema")
        if schema is None:
            problems.append(f"{where}.schema.openAPIV3Schema is required in apiextensions/v1")
        else:
            problems.extend(schema_problems(schema, f"{where}.schema.openAPIV3Schema", root=True))
        scale = (version.get("subresources") or {}).get("scale")
        if scale is not None:
            if not str(scale.get("specReplicasPath", "")).startswith(".spec."):
                problems.append(f"{where}.subresources.scale.specReplicasPath must be .spec.*")
            if not str(scale.get("statusReplicasPath", "")).startswith(".status."):
                problems.append(f"{where}.subresources.scale.statusReplicasPath must be .status.*")
    storage = [v.get("name") for v in versions if v.get("storage") is True]
    if len(storage) != 1:
        problems.append(f"exactly one version must be the storage version, found {storage}")
    if versions and not any(v.get("served") is True for v in versions):
        problems.append("no version is served")
    return problems


def schema_problems(node: Any, where: str, *, root: bool = False) -> list[str]:
    """The structural-schema violations in `node` and below."""
    if not isinstance(node, Mapping):
        return [f"{where} is not a schema object"]
    problems: list[str] = []
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    typ = node.get("type")
    if typ is not None and typ not in JSON_TYPES:
        problems.append(f"{where}.type {typ!r} is not a JSON schema type")
    if int_or_string and preserve:
        problems.append(f"{where}: int-or-string must not preserve unknown fields")
    if not typ and not int_or_string and not preserve:
        problems.append(f"{where} must specify a type")
    if root and typ != "object":
        problems.append(f"{where}: the root schema must be of type object")
    if root and "additionalProperties" in node:
        problems.append(f"{where}: additionalProperties must not be used at the root")
    if node.get("x-kubernetes-embedded-resource") is True and typ != "object":
        problems.append(f"{where}: x-kubernetes-embedded-resource needs type object")
    if "properties" in node and "additionalProperties" in node:
        problems.append(f"{where}: properties and additionalProperties are mutually exclusive")
    if "default" in node:
        problems.extend(_default_problems(node, node["default"], f"{where}.default"))
    required = node.get("required", [])
    if not isinstance(required, list):
        problems.append(f"{where}.required must be a list")
    properties = node.get("properties") or {}
    if not isinstance(properties, Mapping):
        problems.append(f"{where}.properties must be a mapping")
        properties = {}
    for name, prop in properties.items():
        if root and name == "metadata":
            problems.extend(_metadata_problems(prop, f"{where}.properties.metadata"))
        problems.extend(schema_problems(prop, f"{where}.properties.{name}"))
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        problems.extend(schema_problems(extra, f"{where}.additionalProperties"))
    if "items" in node:
        if typ != "array":
            problems.append(f"{where}: items needs type array")
        problems.extend(schema_problems(node["items"], f"{where}.items"))
    elif typ == "array":
        problems.append(f"{where}: an array must specify items")
    if node.get("x-kubernetes-list-type") == "map":
        problems.extend(_list_map_problems(node, where))
    for junctor in JUNCTORS:
        if junctor in node:
            branches = node[junctor] if junctor != "not" else [node[junctor]]
            if junctor == "anyOf" and _is_int_or_string_junctor(branches):
                continue
            for j, branch in enumerate(branches):
                problems.extend(_junctor_problems(branch, node, f"{where}.{junctor}[{j}]"))
    return problems


def _is_int_or_string_junctor(branches: Any) -> bool:
    """The one junctor allowed to carry types: anyOf [integer, string] (int-or-string)."""
    return isinstance(branches, list) and [b.get("type") for b in branches] == [
        "integer",
        "string",
    ]


def _junctor_problems(branch: Any, outer: Mapping[str, Any], where: str) -> list[str]:
    """Inside allOf/anyOf/oneOf/not: no types or defaults, and only fields known outside."""
    if not isinstance(branch, Mapping):
        return [f"{where} is not a schema object"]
    problems: list[str] = []
    for key in FORBIDDEN_IN_JUNCTORS:
        if key in branch:
            problems.append(f"{where} must not set {key}")
    outer_props = outer.get("properties") or {}
    for name, prop in (branch.get("properties") or {}).items():
        if name not in outer_props:
            problems.append(f"{where}.properties.{name} is not specified outside the junctor")
        else:
            for key in FORBIDDEN_IN_JUNCTORS:
                if isinstance(prop, Mapping) and key in prop:
                    problems.append(f"{where}.properties.{name} must not set {key}")
    if "items" in branch and "items" not in outer:
        problems.append(f"{where}.items is not specified outside the junctor")
    for junctor in JUNCTORS:
        if junctor in branch:
            nested = branch[junctor] if junctor != "not" else [branch[junctor]]
            for j, sub in enumerate(nested):
                problems.extend(_junctor_problems(sub, outer, f"{where}.{junctor}[{j}]"))
    return problems


def _metadata_problems(node: Any, where: str) -> list[str]:
    if not isinstance(node, Mapping):
        return [f"{where} is not a schema object"]
    if node.get("type") != "object":
        return [f"{where}.type must be object"]
    allowed = {"name", "generateName"}
    extra = set(node.get("properties") or {}) - allowed
    if extra:
        return [f"{where}: only name and generateName may be restricted, not {sorted(extra)}"]
    return []


def _list_map_problems(node: Mapping[str, Any], where: str) -> list[str]:
    keys = node.get("x-kubernetes-list-map-keys") or []
    items = node.get("items") or {}
    if not keys:
        return [f"{where}: x-kubernetes-list-type map needs x-kubernetes-list-map-keys"]
    if items.get("type") != "object":
        return [f"{where}: x-kubernetes-list-type map needs items of type object"]
    problems = []
    item_props = items.get("properties") or {}
    required = set(items.get("required") or [])
    for key in keys:
        if key not in item_props:
            problems.append(f"{where}: list-map key {key!r} is not a property of the items")
        elif key not in required and "default" not in item_props[key]:
            problems.append(f"{where}: list-map key {key!r} must be required or defaulted")
    return problems


def _default_problems(node: Mapping[str, Any], value: Any, where: str) -> list[str]:
    """A default must have the schema's type (the server validates and prunes it)."""
    if node.get("x-kubernetes-int-or-string") is True:
        ok = isinstance(value, int | str) and not isinstance(value, bool)
        return [] if ok else [f"{where} {value!r} is neither an integer nor a string"]
    expected = {
        "string": str,
        "boolean": bool,
        "object": Mapping,
        "array": list,
        "integer": int,
        "number": int | float,
    }.get(node.get("type", ""))
    if expected is None:
        return []
    if isinstance(value, bool) and node.get("type") in ("integer", "number"):
        return [f"{where} {value!r} is not a {node.get('type')}"]
    if not isinstance(value, expected):
        return [f"{where} {value!r} is not a {node.get('type')}"]
    if "enum" in node and value not in node["enum"]:
        return [f"{where} {value!r} is not one of the enum {node['enum']}"]
    return []


def iter_crd_files(folder: Path) -> Iterator[Path]:
    """Every YAML file below `folder`, sorted."""
    yield from sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml"))
