"""Step 2a: pre-process schemas into one OpenAPI document for datamodel-code-generator.

What happens here, and why:
- v3 component schemas of all documents are merged; a schema present in several documents
  must be identical in each (otherwise which one is right?);
- names become short module paths, `core.v1.models.Pod`, `meta.v1.models.ObjectMeta`
  (every apimachinery type lives in `meta.v1`), so the output has no `io/k8s/...` tree;
- the walk goes by schema keyword (`properties`, `items`, `allOf`, ...), never blindly:
  JSONSchemaProps has properties literally named `$ref`, `default` and `type`;
- validation-only keywords (`enum`, `pattern`, bounds, `default`s, CEL rules) are dropped:
  these are read models for what a server sends, and a server newer or older than the spec
  may send values the spec's enum does not list; a default would also make a parsed object
  differ from what the server sent;
- int-or-string (v2 `format`, CRD `x-kubernetes-int-or-string`) → `int | str`; Quantity →
  `str | int | float`; `byte`, `duration`, IP formats → `str`; `date-time` → `datetime`,
  except apimachinery's Time and MicroTime → `kubeinformers.runtime.api.timestamps` (same
  datetime, serialised as the server's Go code reads them);
- CRDs: each served version's schema gets `title` = kind, `metadata` → the shared
  ObjectMeta, nested objects hoisted into named classes (`CertificateSpecIssuerRef`),
  `x-kubernetes-preserve-unknown-fields` (free-form → `dict[str, Any]`, else extra fields are
  kept by the base model) and `x-kubernetes-embedded-resource` (apiVersion, kind, metadata).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeinformers.generator import naming
from kubeinformers.generator.load import APIModel, CRDVersion, LoadError, Source

OBJECT_META = "meta.v1.models.ObjectMeta"
_VERSION = re.compile(r"^v\d+((alpha|beta)\d+)?$")
_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "object", "array"})
_SPECIAL: dict[str, dict[str, Any]] = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {
        "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"}]
    },
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "anyOf": [{"type": "integer"}, {"type": "string"}]
    },
    # datetimes that write back what the server reads: RFC 3339 seconds for Time, exactly six
    # fraction digits for MicroTime (Go's MicroTime.UnmarshalJSON refuses anything else).
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {
        "type": "string",
        "format": "date-time",
        "customTypePath": "kubeinformers.runtime.api.timestamps.Time",
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {
        "type": "string",
        "format": "date-time",
        "customTypePath": "kubeinformers.runtime.api.timestamps.MicroTime",
    },
}


@dataclass
class Prepared:
    """The merged, cleaned schemas plus what the renderer needs to find the models."""

    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    origin: dict[str, tuple[Source, str]] = field(default_factory=dict)
    kinds: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (g, v, kind) → name
    aliases: dict[str, str] = field(default_factory=dict)  # JSON field name → Python name
    errors: list[LoadError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    crd_modules: set[str] = field(default_factory=set)
    clashes: set[tuple[str, str]] = field(default_factory=set)

    def module_of(self, name: str) -> str:
        return name.rsplit(".", 1)[0]


def split_name(final: str) -> tuple[str, str]:
    """`core.v1.models.Pod` → (`core.v1.models`, `Pod`)."""
    module, _, cls = final.rpartition(".")
    return module, cls


class _Walker:
    """Cleans one schema tree; hoists nested objects when `hoist` names a module (CRDs)."""

    def __init__(
        self,
        prep: Prepared,
        source: Source,
        refs: dict[str, str],
        ref_prefix: str,
        taken: set[str],
        hoist: str | None = None,
        object_meta_ref: str = OBJECT_META,
    ) -> None:
        self.prep = prep
        self.source = source
        self.refs = refs
        self.ref_prefix = ref_prefix
        self.taken = taken
        self.hoist = hoist
        self.object_meta_ref = object_meta_ref

    def ref(self, target: str) -> dict[str, Any]:
        return {"$ref": f"#/components/schemas/{target}"}

    def clean(self, node: Any, path: str, hint: str) -> dict[str, Any]:
        if not isinstance(node, Mapping):
            raise self.source.error(path, f"a schema must be a mapping, not {node!r}")
        desc = node.get("description")
        out: dict[str, Any] = {}
        if isinstance(desc, str) and desc:
            out["description"] = desc
        if node.get("x-kubernetes-int-or-string") or node.get("format") == "int-or-string":
            out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
            return out
        if "$ref" in node:
            return {**out, **self.resolve(node["$ref"], path)}
        if self.hoist is None:
            single = node.get("allOf")
            if isinstance(single, list) and len(single) == 1 and "properties" not in node:
                inner = self.clean(single[0], f"{path}.allOf[0]", hint)
                if "$ref" in inner:
                    return {**out, **inner} if "description" not in inner else inner
            for key in ("allOf", "anyOf", "oneOf"):
                if isinstance(node.get(key), list):
                    out[key] = [
                        self.clean(s, f"{path}.{key}[{i}]", hint) for i, s in enumerate(node[key])
                    ]
        typ = node.get("type")
        if typ is not None:
            if typ not in _JSON_TYPES:
                raise self.source.error(f"{path}.type", f"unknown type {typ!r}")
            out["type"] = typ
        if typ == "string" and node.get("format") == "date-time":
            out["format"] = "date-time"
        if node.get("nullable") is True:
            out["nullable"] = True
        props = node.get("properties")
        preserve = bool(node.get("x-kubernetes-preserve-unknown-fields"))
        embedded = bool(node.get("x-kubernetes-embedded-resource"))
        if props is not None and not isinstance(props, Mapping):
            raise self.source.error(f"{path}.properties", "must be a mapping of name to schema")
        if embedded:
            props = dict(props or {})
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            out["type"] = "object"
        if props:
            cleaned: dict[str, Any] = {}
            seen: dict[str, str] = {}
            for name in props:
                sub_path = f"{path}.properties.{name}"
                if embedded and name == "metadata":
                    cleaned[name] = self.ref(self.object_meta_ref)
                else:
                    cleaned[name] = self.clean(
                        props[name], sub_path, hint + naming.class_name(str(name))
                    )
                py = naming.field_name(str(name))
                if py in seen and seen[py] != name:
                    pair = (seen[py], str(name))
                    if pair not in self.prep.clashes:
                        self.prep.clashes.add(pair)
                        self.prep.notes.append(
                            f"{self.source.file}: {path}: fields {pair[0]!r} and {pair[1]!r} "
                            f"both read {py!r}; the second becomes {py}_1 (and so on)"
                        )
                    # One global alias map: leave both to datamodel-code-generator, which
                    # numbers clashing fields within a class.
                    self.prep.aliases[pair[0]] = ""
                    self.prep.aliases[pair[1]] = ""
                seen.setdefault(py, str(name))
                self.prep.aliases.setdefault(str(name), py)
            if embedded and "metadata" not in cleaned:
                cleaned["metadata"] = self.ref(self.object_meta_ref)
            out["properties"] = cleaned
            out.setdefault("type", "object")
            req = node.get("required")
            if isinstance(req, list):
                # Go encodes a nil slice or map as null even when the field is required
                # (a watch BOOKMARK's Pod has "containers": null): those stay optional.
                required = [
                    r
                    for r in req
                    if isinstance(r, str) and r in cleaned and not _may_be_null(cleaned[r])
                ]
                if required:
                    out["required"] = required
        elif embedded:
            out["properties"] = {"metadata": self.ref(self.object_meta_ref)}
        addl = node.get("additionalProperties")
        if isinstance(addl, Mapping):
            out["additionalProperties"] = self.clean(
                addl, f"{path}.additionalProperties", hint + "Value"
            )
            out.setdefault("type", "object")
        elif addl is True and not props:
            out["additionalProperties"] = True
        if "items" in node:
            items = node["items"]
            if not isinstance(items, Mapping):
                raise self.source.error(f"{path}.items", f"must be a schema, not {items!r}")
            out["items"] = self.clean(items, f"{path}.items", hint)
            out.setdefault("type", "array")
        if out.get("type") == "array" and "items" not in out:
            out["items"] = {}
        if preserve and not out.get("properties") and out.get("type") in (None, "object"):
            if out.get("type") == "object" or "additionalProperties" not in out:
                if out.get("type") is None:
                    return out  # any JSON value
                out["additionalProperties"] = out.get("additionalProperties", True)
        if self.hoist is not None and out.get("properties"):
            return self.hoisted(out, hint)
        return out

    def hoisted(self, schema: dict[str, Any], hint: str) -> dict[str, Any]:
        assert self.hoist is not None
        hint = naming.model_class(hint)
        name = hint
        n = 2
        while f"{self.hoist}.{name}" in self.taken:
            name = f"{hint}{n}"
            n += 1
        final = f"{self.hoist}.{name}"
        self.taken.add(final)
        self.prep.schemas[final] = schema
        self.prep.origin[final] = (self.source, "")
        out: dict[str, Any] = self.ref(final)
        return out

    def resolve(self, ref: Any, path: str) -> dict[str, Any]:
        if not isinstance(ref, str) or not ref.startswith(self.ref_prefix):
            raise self.source.error(f"{path}.$ref", f"unresolvable $ref {ref!r}")
        target = self.refs.get(ref[len(self.ref_prefix) :])
        if target is None:
            raise self.source.error(f"{path}.$ref", f"unresolvable $ref {ref!r}: no such schema")
        return self.ref(target)


_REF = re.compile(r'"\$ref": "#/components/schemas/([^"]+)"')


def _drop_dangling(prep: Prepared) -> None:
    """Drop schemas that refer to one that failed (already reported), transitively."""
    refs = {name: set(_REF.findall(json.dumps(body))) for name, body in prep.schemas.items()}
    changed = True
    while changed:
        changed = False
        for name in sorted(prep.schemas):
            missing = sorted(t for t in refs[name] if t not in prep.schemas)
            if missing:
                del prep.schemas[name]
                prep.notes.append(
                    f"schema {name} left out: it refers to {missing[0]}, which failed"
                )
                for key, kind in list(prep.kinds.items()):
                    if kind == name:
                        del prep.kinds[key]
                changed = True


def _may_be_null(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "array" or "additionalProperties" in schema


def builtin_name(original: str, gv_group: Mapping[str, str], group_pkgs: Mapping[str, str]) -> str:
    """`io.k8s.api.core.v1.Pod` → `core.v1.models.Pod`; apimachinery → `meta.v1.models.X`."""
    parts = original.split(".")
    cls = naming.class_name(parts[-1])
    if original.startswith("io.k8s.apimachinery."):
        return f"meta.v1.models.{cls}"
    prefix = ".".join(parts[:-1])
    if len(parts) >= 3 and _VERSION.match(parts[-2]):
        version = naming.version_package(parts[-2])
        group = gv_group.get(prefix)
        pkg = group_pkgs[group] if group is not None and group in group_pkgs else None
        if pkg is None:
            pkg = naming.safe_identifier(re.sub(r"[^a-z0-9]+", "_", parts[-3].lower()))
        return f"{pkg}.{version}.models.{cls}"
    pkg = naming.safe_identifier(re.sub(r"[^a-z0-9]+", "_", "_".join(parts[:-1]).lower()))
    return f"{pkg or 'other'}.models.{cls}"


def prepare(model: APIModel, group_pkgs: Mapping[str, str]) -> Prepared:
    """Merge and clean every schema of `model`. Errors are collected, not raised."""
    prep = Prepared()
    # 1. merge component schemas, remembering the first source; duplicates must agree.
    merged: dict[str, tuple[Any, Source, str]] = {}
    for doc in model.documents:
        for name, body in doc.schemas.items():
            if name in merged:
                if merged[name][0] != body:
                    prep.errors.append(
                        doc.source.error(
                            f"components.schemas.{name}",
                            f"differs from the schema of the same name in {merged[name][1].file}",
                        )
                    )
                continue
            merged[name] = (body, doc.source, doc.ref_prefix)
    # 2. group of every Go package prefix, from the schemas' x-kubernetes-group-version-kind.
    gv_group: dict[str, str] = {}
    for name, (body, _, _) in sorted(merged.items()):
        if name.startswith("io.k8s.apimachinery.") or not isinstance(body, Mapping):
            continue
        for gvk in body.get("x-kubernetes-group-version-kind") or []:
            if isinstance(gvk, Mapping) and "group" in gvk:
                gv_group.setdefault(name.rsplit(".", 1)[0], str(gvk["group"]))
    refs: dict[str, str] = {}
    used: dict[str, str] = {}
    for name in sorted(merged):
        final = builtin_name(name, gv_group, group_pkgs)
        if final in used:
            module, cls = split_name(final)
            pkg_word = naming.class_name(name.split(".")[-2])
            final = f"{module}.{pkg_word}{cls}"
            prep.notes.append(f"schema {name} and {used.get(final, '?')} clash; class {final}")
        used[final] = name
        refs[name] = final
    taken = set(refs.values())
    # 3. clean every built-in schema.
    for name, (body, source, prefix) in sorted(merged.items()):
        final = refs[name]
        where = ("definitions." if prefix == "#/definitions/" else "components.schemas.") + name
        walker = _Walker(prep, source, refs, prefix, taken)
        try:
            if name in _SPECIAL:
                cleaned = dict(_SPECIAL[name])
                if isinstance(body, Mapping) and isinstance(body.get("description"), str):
                    cleaned["description"] = body["description"]
            else:
                cleaned = walker.clean(body, where, split_name(final)[1])
        except LoadError as e:
            prep.errors.append(e)
            continue
        prep.schemas[final] = cleaned
        prep.origin[final] = (source, where)
        if isinstance(body, Mapping):
            for gvk in body.get("x-kubernetes-group-version-kind") or []:
                if isinstance(gvk, Mapping) and not name.startswith("io.k8s.apimachinery."):
                    key = (str(gvk.get("group", "")), str(gvk.get("version")), str(gvk.get("kind")))
                    prep.kinds.setdefault(key, final)
    _drop_dangling(prep)
    # 4. CRDs: one root class per served version, nested objects hoisted.
    if model.crds:
        taken.update(
            f"{group_pkgs[c.resource.group]}.{naming.version_package(c.resource.version)}"
            f".models.{naming.model_class(c.resource.kind)}"
            for c in model.crds
        )
        for crd in model.crds:
            _prepare_crd(prep, crd, group_pkgs, taken)
    return prep


def _prepare_crd(
    prep: Prepared, crd: CRDVersion, group_pkgs: Mapping[str, str], taken: set[str]
) -> None:
    r = crd.resource
    module = f"{group_pkgs[r.group]}.{naming.version_package(r.version)}.models"
    root = f"{module}.{naming.model_class(r.kind)}"
    prep.crd_modules.add(module)
    key = (r.group, r.version, r.kind)
    if key in prep.kinds:
        prep.notes.append(
            f"{r.source.file}: {r.kind} {r.group}/{r.version} defined twice; first wins"
        )
        return
    schema: dict[str, Any] = dict(crd.schema or {"type": "object"})
    if not crd.schema:
        schema["x-kubernetes-preserve-unknown-fields"] = True
    props = dict(schema.get("properties") or {})
    for field_key in ("apiVersion", "kind"):
        given = props.get(field_key)
        typed: dict[str, Any] = {"type": "string"}
        if isinstance(given, Mapping) and isinstance(given.get("description"), str):
            typed["description"] = given["description"]
        props[field_key] = typed
    props.pop("metadata", None)
    schema["properties"] = props
    schema["type"] = "object"
    where = f"spec.versions[{crd.version_index}].schema.openAPIV3Schema"
    hoist_taken = set(taken)
    hoist_taken.discard(root)
    walker = _Walker(prep, r.source, {}, "#/", hoist_taken, hoist=module)
    before = set(prep.schemas)
    try:
        cleaned = walker.clean(schema, where, naming.class_name(r.kind))
    except LoadError as e:
        for name in set(prep.schemas) - before:
            del prep.schemas[name]
        prep.errors.append(e)
        return
    # The root was hoisted under the kind's own name; give it ObjectMeta and the GVK.
    root_name = cleaned["$ref"].rsplit("/", 1)[1]
    body = prep.schemas.pop(root_name)
    prep.origin.pop(root_name, None)
    body["properties"] = {
        "apiVersion": body["properties"]["apiVersion"],
        "kind": body["properties"]["kind"],
        "metadata": walker.ref(OBJECT_META),
        **{k: v for k, v in body["properties"].items() if k not in ("apiVersion", "kind")},
    }
    body["title"] = r.kind
    # A watch BOOKMARK of a custom resource carries only apiVersion, kind and metadata.
    body.pop("required", None)
    prep.schemas[root] = body
    for name in set(prep.schemas) - before:
        prep.origin[name] = (r.source, where)
    prep.origin[root] = (r.source, where)
    taken.update(set(prep.schemas) - before)
    prep.kinds[key] = root
    prep.aliases.setdefault("metadata", "metadata")
