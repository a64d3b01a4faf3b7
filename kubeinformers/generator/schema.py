"""Step 2a: pre-process schemas into one OpenAPI document for datamodel-code-generator.

What happens here, and why:
- v3 component schemas of all documents are merged; a schema present in several documents
  must be identical in each (otherwise which one is right?);
- names become short module paths, `core.v1.models.Pod`, `meta.v1.models.ObjectMeta`
  (every apimachinery type lives in `meta.v1`), so the output has no `io/k8s/...` tree;
- the walk goes by schema keyword (`properties`, `items`, `allOf`, ...), never blindly:
  JSONSchemaProps has properties literally named `$ref`, `default` and `type`;
- validation-only keywords (`pattern`, bounds, `default`s, CEL rules) are dropped: these are
  read models for what a server sends, and a default would make a parsed object differ from
  what the server sent. Built-in enums are dropped too (a server newer than the spec may
  send values it does not list); a CRD's string and integer enums are kept and become
  `Literal[...] | UnknownEnumValue` (`| int` for integers): the API server refuses a custom
  object whose value the CRD does not list, so mypy can catch a wrong value, and a value a
  newer CRD adds still reads (adding one is a compatible change);
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubeinformers.generator import naming, shapes
from kubeinformers.generator.difference import describe
from kubeinformers.generator.load import APIModel, CRDVersion, LoadError, OpenAPIDocument, Source
from kubeinformers.generator.shapes import Matcher

OBJECT_META = "meta.v1.models.ObjectMeta"
SHARED_BUILTINS = "kubeinformers.generated"  # CRD-only output imports built-ins from here
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
    left_out: set[Source] = field(default_factory=set)  # documents that conflict (see merge)

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
        taken: set[str] | _Overlay,
        hoist: str | None = None,
        object_meta_ref: str = OBJECT_META,
        scope: str = "",
        matcher: Matcher | None = None,
    ) -> None:
        self.prep = prep
        self.source = source
        self.refs = refs
        self.ref_prefix = ref_prefix
        self.taken = taken
        self.hoist = hoist
        self.object_meta_ref = object_meta_ref
        self.scope = scope  # class names are unique per version package (its __init__ exports all)
        self.matcher = matcher
        self.same_shape: dict[str, str] = {}  # shape key → class of this kind with that shape
        # Full-path class names (`IssuerSpec`) that belong to their own path: a shortened
        # name of a deeper object (`podTemplate.spec` → `IssuerSpec`) must not take one, or
        # the object at that path would become `IssuerSpec2` (see `natural_names`).
        self.natural: set[str] = set()
        self.added: list[str] = []  # the classes hoisted, in order

    def ref(self, target: str) -> dict[str, Any]:
        return {"$ref": f"#/components/schemas/{target}"}

    def clean(self, node: Any, path: str, hint: str | tuple[str, ...]) -> dict[str, Any]:
        """`node` cleaned; `hint` is the class-name path to it (kind, field, field, ...)."""
        if isinstance(hint, str):
            hint = (hint,)
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
        if self.hoist is not None and typ in ("string", "integer"):
            enum = _enum_values(node.get("enum"), str if typ == "string" else int)
            if enum:
                out["x-python-type"] = _open_enum(enum, typ)
        props = node.get("properties")
        preserve = bool(node.get("x-kubernetes-preserve-unknown-fields"))
        embedded = bool(node.get("x-kubernetes-embedded-resource"))
        if props is not None and not isinstance(props, Mapping):
            raise self.source.error(f"{path}.properties", "must be a mapping of name to schema")
        # An embedded resource that declares nothing but the identity every object has is
        # any object (a Deployment, a Secret...): never a built-in class by shape (H25).
        any_object = embedded and not set(props or ()) - {"apiVersion", "kind", "metadata"}
        if embedded:
            props = dict(props or {})
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            out["type"] = "object"
        if props:
            cleaned: dict[str, Any] = {}
            seen: dict[str, str] = {}
            numbered: dict[str, int] = {}  # Python name -> later fields numbered after it
            for name in props:
                sub_path = f"{path}.properties.{name}"
                if embedded and name == "metadata":
                    cleaned[name] = self.ref(self.object_meta_ref)
                else:
                    cleaned[name] = self.clean(
                        props[name], sub_path, (*hint, naming.class_name(str(name)))
                    )
                py = naming.field_name(str(name))
                if py in seen and seen[py] != name:
                    pair = (seen[py], str(name))
                    # datamodel-code-generator numbers them in the order of the schema
                    numbered[py] = numbered.get(py, 0) + 1
                    if pair not in self.prep.clashes:
                        self.prep.clashes.add(pair)
                        self.prep.notes.append(
                            f"{self.source.file}: {path}: fields {pair[0]!r} and {pair[1]!r} "
                            f"both read {py!r}; {pair[1]!r} becomes {py}_{numbered[py]}"
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
                addl, f"{path}.additionalProperties", (*hint, "Value")
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
            keys = _list_map_keys(node)
            if keys:  # for the apply configurations (generator.apply); models ignore it
                out["x-kubernetes-list-map-keys"] = keys
        if out.get("type") == "array" and "items" not in out:
            out["items"] = {}
        if preserve and not out.get("properties") and out.get("type") in (None, "object"):
            if out.get("type") == "object" or "additionalProperties" not in out:
                if out.get("type") is None:
                    return out  # any JSON value
                out["additionalProperties"] = out.get("additionalProperties", True)
        if self.hoist is not None and out.get("properties"):
            return self.hoisted(out, hint, match_builtin=not any_object)
        return out

    def hoisted(
        self, schema: dict[str, Any], hint: tuple[str, ...], match_builtin: bool = True
    ) -> dict[str, Any]:
        """A `$ref` to the class of `schema`: a built-in class of the same structure (see
        `shapes`; not when `match_builtin` is False), a class of this kind with the same structure,
        or a new class."""
        assert self.hoist is not None
        nested = len(hint) > 1  # the root stays the kind's own class
        if nested and match_builtin and self.matcher is not None:
            builtin = self.matcher.match(schema, hint)
            if builtin is not None:
                return self.ref(builtin)
        key = _shape_key(schema) if nested else ""
        if nested and key in self.same_shape:
            return self.ref(self.same_shape[key])
        candidates = ["".join(hint)]
        if len(candidates[0]) > MAX_CLASS_NAME:
            # Readable names: the kind and the shortest unambiguous tail of the field path
            # (`WorkflowMatchExpressions`), not the whole path (170 characters in argo); never
            # the full-path name of another object of the kind.
            tails = [hint[0] + "".join(hint[-n:]) for n in range(1, len(hint))]
            candidates = [*(t for t in tails if t not in self.natural), *candidates]
        name = next((c for c in candidates if f"{self.scope}/{c}" not in self.taken), None)
        if name is None:
            base = candidates[0]
            name, n = f"{base}2", 3
            while f"{self.scope}/{name}" in self.taken:
                name, n = f"{base}{n}", n + 1
        final = f"{self.hoist}.{name}"
        self.taken.add(f"{self.scope}/{name}")
        self.prep.schemas[final] = schema
        self.added.append(final)
        self.prep.origin[final] = (self.source, "")
        if nested:
            self.same_shape[key] = final
            if self.matcher is not None:
                self.matcher.remember(final, schema)
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
MAX_CLASS_NAME = 40  # longer path names are shortened (see `_Walker.hoisted`)


def natural_names(node: Any, hint: tuple[str, ...]) -> set[str]:
    """The full-path class names (at most MAX_CLASS_NAME long) of the objects of a raw CRD
    schema, following the class-name path `_Walker.clean` builds."""
    out: set[str] = set()
    todo: list[tuple[Any, tuple[str, ...]]] = [(node, hint)]
    while todo:
        current, path = todo.pop()
        if not isinstance(current, Mapping):
            continue
        name = "".join(path)
        if len(name) > MAX_CLASS_NAME:
            continue  # and so are the names below it
        props = current.get("properties")
        if isinstance(props, Mapping) and props:
            out.add(name)
            todo.extend((sub, (*path, naming.class_name(str(k)))) for k, sub in props.items())
        addl = current.get("additionalProperties")
        if isinstance(addl, Mapping):
            todo.append((addl, (*path, "Value")))
        if isinstance(current.get("items"), Mapping):
            todo.append((current["items"], path))
    return out


def _shape_key(schema: Mapping[str, Any]) -> str:
    """Two nested objects of one kind with equal keys share a class (descriptions aside)."""

    def strip(node: Any) -> Any:
        if isinstance(node, Mapping):
            return {k: strip(v) for k, v in node.items() if k != "description"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return json.dumps(strip(schema), sort_keys=True)


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


def _closure_of(schemas: Mapping[str, Any], root: str) -> set[str]:
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = todo.pop()
        if name in seen or name not in schemas:
            continue
        seen.add(name)
        todo.extend(_REF.findall(json.dumps(schemas[name])))
    return seen


def _enum_values(enum: Any, typ: type) -> list[Any]:
    """The values of a string or integer enum; empty when any value is of another type."""
    if not isinstance(enum, list):
        return []
    values = [v for v in enum if v is not None]
    if not values or not all(type(v) is typ for v in values):
        return []
    return list(dict.fromkeys(values))


# What a value the enum did not list when the models were generated reads as (see _open_enum).
UNKNOWN_ENUM_VALUE = "kubeinformers.runtime.api.model.UnknownEnumValue"


def _open_enum(values: list[Any], typ: str) -> str:
    """A CRD enum's type: `Literal[...]` of its values, open to values added later.

    The API server refuses a custom object whose value its CRD does not list, so the literal
    lets mypy catch a wrong value; but adding a value is a compatible change (API
    conventions), so a server newer than the models may send one: a string enum reads it as
    `UnknownEnumValue` (a `str`), an integer enum as an `int`, never as an invalid object.
    """
    literal = f"typing.Literal[{', '.join(repr(v) for v in values)}]"
    return f"{literal} | {UNKNOWN_ENUM_VALUE if typ == 'string' else 'int'}"


def _list_map_keys(node: Mapping[str, Any]) -> list[str]:
    """The keys that identify an item of a list the server merges by key: a `map` list's
    `x-kubernetes-list-map-keys`, else the strategic-merge `x-kubernetes-patch-merge-key`."""
    keys = node.get("x-kubernetes-list-map-keys")
    list_type = node.get("x-kubernetes-list-type")
    if list_type in ("atomic", "set"):
        return []  # replaced whole (atomic) or merged by value (set): no keys
    if list_type == "map" and isinstance(keys, list):
        return [k for k in keys if isinstance(k, str)]
    merge_key = node.get("x-kubernetes-patch-merge-key")
    return [merge_key] if isinstance(merge_key, str) and merge_key else []


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


# Extensions whose lists a server writes per document: each /openapi/v3 group-version
# document of a real server lists only its own group's kinds for the shared apimachinery
# types (DeleteOptions, WatchEvent), so the same schema reads differently in every document.
_PER_DOCUMENT_LISTS = ("x-kubernetes-group-version-kind",)


def _neutral(node: Any, ref_prefix: str, in_properties: bool = False) -> Any:
    """`node` without what the generator does not read or what only the format spells.

    Dropped: descriptions and `default`s (a v3 document states defaults a swagger.json
    leaves out; models do not use them), except properties of those names. A `$ref` is
    compared by the schema it names (`#/definitions/X` in v2, `#/components/schemas/X` in
    v3, where it sits in a one-item `allOf` beside a description or default)."""
    if isinstance(node, list):
        return [_neutral(v, ref_prefix) for v in node]
    if not isinstance(node, Mapping):
        return node
    if in_properties:
        return {k: _neutral(v, ref_prefix) for k, v in node.items()}
    body = dict(node)
    wrapped = body.get("allOf")
    if (
        "$ref" not in body
        and isinstance(wrapped, list)
        and len(wrapped) == 1
        and isinstance(wrapped[0], Mapping)
        and set(wrapped[0]) == {"$ref"}
    ):
        del body["allOf"]
        body["$ref"] = wrapped[0]["$ref"]
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("description", "default"):
            continue
        if key == "$ref" and isinstance(value, str):
            out[key] = value.removeprefix(ref_prefix)
        else:
            out[key] = _neutral(value, ref_prefix, key in ("properties", "patternProperties"))
    return out


def _other_keys(body: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in _PER_DOCUMENT_LISTS}


def _comparable(body: Any, ref_prefix: str = "") -> Any:
    """What must agree between two copies of a schema (H33): what the generator reads of
    it, whichever format (swagger.json or v3) the document has; not per-document lists."""
    return _neutral(_other_keys(body), ref_prefix) if isinstance(body, Mapping) else body


def _union(first: Any, other: Any) -> Any:
    """The first list, then the other's items it lacks (order kept, so output is stable)."""
    if not isinstance(first, list) or not isinstance(other, list):
        return first if first is not None else other
    return first + [item for item in other if item not in first]


def merge_documents(
    documents: Sequence[OpenAPIDocument], prep: Prepared
) -> dict[str, tuple[Any, Source, str]]:
    """Component schemas of every document by name: `{name: (body, source, ref prefix)}`.

    Copies of one schema that differ only in per-document extension lists
    (`x-kubernetes-group-version-kind`) are one schema with the lists united; copies that
    differ only in descriptions or defaults, or in how a swagger.json and a v3 document
    write them, keep the first text (H33). A document whose schema really
    differs from an earlier document's is left out as a whole (an error naming both, and
    `prep.left_out`), so every other group-version is still generated from consistent types.
    """
    merged: dict[str, tuple[Any, Source, str]] = {}
    described: set[str] = set()
    both_formats: set[str] = set()
    for doc in documents:
        conflicts: list[LoadError] = []
        for name, body in doc.schemas.items():
            if name not in merged or merged[name][0] == body:
                continue
            first, first_source, first_prefix = merged[name]
            if name in _SPECIAL:  # replaced whole: what either copy says is not read
                continue
            one = _comparable(first, first_prefix)
            other = _comparable(body, doc.ref_prefix)
            if one == other:
                continue
            detail = describe(one, other, first_source.file, "this document")
            conflicts.append(
                doc.source.error(
                    f"components.schemas.{name}",
                    f"differs from the schema of the same name in {first_source.file} "
                    f"({detail}); this document is left out — generate the rest with "
                    "--keep-going, or choose groups with --group",
                )
            )
        if conflicts:
            prep.errors.extend(conflicts)
            prep.left_out.add(doc.source)
            continue
        for name, body in doc.schemas.items():
            if name not in merged:
                merged[name] = (body, doc.source, doc.ref_prefix)
                continue
            first, first_source, prefix = merged[name]
            if first == body or not isinstance(first, Mapping) or not isinstance(body, Mapping):
                continue
            if prefix != doc.ref_prefix:
                both_formats.add(name)  # a swagger.json's and a v3 document's copy (H33)
            elif _other_keys(first) != _other_keys(body):
                described.add(name)  # equal but for descriptions or defaults: checked above
            united = dict(first)
            for key in _PER_DOCUMENT_LISTS:
                if key in first or key in body:
                    united[key] = _union(first.get(key), body.get(key))
            merged[name] = (united, first_source, prefix)
    if described:
        prep.notes.append(
            f"{len(described)} schema(s) differ between documents only in descriptions "
            f"or defaults ({', '.join(sorted(described)[:3])}"
            f"{', ...' if len(described) > 3 else ''}); the first document's text is used"
        )
    if both_formats:
        prep.notes.append(
            f"{len(both_formats)} schema(s) are both in a swagger.json and in an OpenAPI v3 "
            "document, which agree on them but for how each format writes them ($refs, "
            "defaults, descriptions); the first document's copy is used"
        )
    return merged


def prepare(
    model: APIModel, group_pkgs: Mapping[str, str], reuse_builtins: bool = True
) -> Prepared:
    """Merge and clean every schema of `model`. Errors are collected, not raised."""
    prep = Prepared()
    # 1. merge component schemas, remembering the first source; duplicates must agree.
    merged = merge_documents(model.documents, prep)
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
    # 4. CRDs: one module per kind and version, one root class each, nested objects hoisted.
    if model.crds:
        modules: dict[tuple[str, str, str], str] = {}
        scoped: set[str] = set()
        for c in model.crds:
            r = c.resource
            key = (r.group, r.version, r.kind)
            gv = f"{group_pkgs[r.group]}.{naming.version_package(r.version)}"
            if key in modules:
                continue
            cls, renamed = naming.kind_class(r.kind)
            if renamed:
                prep.notes.append(
                    f"{r.source.file}: kind {r.kind!r} is not a Python identifier; "
                    f"its class is {cls}"
                )
            taken_here = {m.rsplit(".", 1)[1] for m in modules.values() if m.startswith(gv + ".")}
            modules[key] = f"{gv}.{naming.kind_module(r.kind, taken_here)}"
            scoped.add(f"{gv}/{cls}")
        taken.update(scoped)
        builtins = shapes.builtin_shapes(prep.schemas)
        if not builtins and reuse_builtins:
            builtins = shapes.load_builtin_shapes(SHARED_BUILTINS)
        matcher = shapes.Matcher(builtins) if reuse_builtins else None
        for crd in model.crds:
            r = crd.resource
            _prepare_crd(prep, crd, modules[(r.group, r.version, r.kind)], taken, matcher)
    return prep


class _Overlay:
    """`base` less `hidden`, plus what is added here (`base` is left as it is)."""

    def __init__(self, base: set[str], hidden: set[str]) -> None:
        self.base = base
        self.hidden = hidden
        self.added: set[str] = set()

    def __contains__(self, name: object) -> bool:
        return name in self.added or (name in self.base and name not in self.hidden)

    def add(self, name: str) -> None:
        self.added.add(name)


def _prepare_crd(
    prep: Prepared, crd: CRDVersion, module: str, taken: set[str], matcher: shapes.Matcher | None
) -> None:
    r = crd.resource
    cls, _ = naming.kind_class(r.kind)
    root = f"{module}.{cls}"
    scope = module.rsplit(".", 1)[0]
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
        prep.notes.append(
            f"{r.source.file}: CRD {crd.crd_name} version {r.version} has no schema "
            f"(spec.versions[{crd.version_index}].schema.openAPIV3Schema): {cls} types only "
            "apiVersion, kind and metadata and keeps every other field untyped (model_extra); "
            "give the version its schema (an apiextensions.k8s.io/v1 server requires one) "
            "and generate again"
        )
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
    # The run's names, less the kind's own (its root class takes it), plus what this kind
    # hoists; an overlay, not a copy: a provider's 2,000 kinds hold 30,000 names.
    hoist_taken = _Overlay(taken, {f"{scope}/{cls}", f"{scope}/{naming.class_name(r.kind)}"})
    walker = _Walker(
        prep, r.source, {}, "#/", hoist_taken, hoist=module, scope=scope, matcher=matcher
    )
    walker.natural = natural_names(schema, (naming.class_name(r.kind),))
    try:
        cleaned = walker.clean(schema, where, naming.class_name(r.kind))
    except LoadError as e:
        for name in walker.added:
            prep.schemas.pop(name, None)
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
    # Classes only a built-in class replaced (a LabelSelector's matchExpressions) are unused.
    reachable = _closure_of(prep.schemas, root)
    new = {name for name in walker.added if name != root_name} | {root}
    for name in new - reachable:
        del prep.schemas[name]
        prep.origin.pop(name, None)
    kept = new & reachable
    for name in kept:
        prep.origin[name] = (r.source, where)
    prep.origin[root] = (r.source, where)
    taken.update(f"{scope}/{name.rsplit('.', 1)[1]}" for name in kept if name != root)
    prep.kinds[key] = root
    prep.aliases.setdefault("metadata", "metadata")
