"""What kube-apiserver does to a custom resource before validating it: pruning and defaulting.

Why: a controller's test on LocalApiServer must read back what the real server would store.
The real server drops every field its CRD's structural schema does not specify (unless
`x-kubernetes-preserve-unknown-fields` keeps them), drops a `null` the schema does not allow,
and fills in each absent (or non-nullable `null`) field that has a `default`, in objects
defaulted in turn, in list items and in map values (apiextensions' `pruning.Prune`,
`defaulting.Default`, `PruneNonNullableNullsWithoutDefaults`). `metadata` (at the root and in
a `x-kubernetes-embedded-resource`) keeps only ObjectMeta's fields, as Go's decoding into
ObjectMeta does. A copy is returned; the request's body is not changed.

What was dropped is what the server tells of (`FieldValidation`, the request's
`fieldValidation`): a `Warning: 299 - "unknown field \"spec.x\""` header each (Warn, the
default), nothing (Ignore), or a 400 that writes nothing (Strict).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from kubeinformers.testing.apiserver.errors import ObjDict, api_error
from kubeinformers.testing.apiserver.schema import child_schema

__all__ = ["FieldValidation", "prune_and_default"]

_MODES = ("Ignore", "Warn", "Strict")

_RESOURCE_FIELDS = ("apiVersion", "kind", "metadata")  # kept at a resource's root
# ObjectMeta's fields (JSON names), in Go's order: what a decode into it keeps of `metadata`.
OBJECT_META_FIELDS = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)


@dataclass
class FieldValidation:
    """A write's `fieldValidation` (Warn when not given) and the unknown fields its body had,
    by path, in the order the server names them."""

    mode: str = "Warn"
    unknown: list[str] = field(default_factory=list)
    patch: bool = False  # the body is a patch's result (Strict answers 422, not 400)

    @classmethod
    def of_query(cls, value: str | None) -> FieldValidation:
        if value is None or value == "":
            return cls()
        if value not in _MODES:
            raise api_error(
                400,
                "BadRequest",
                f'fieldValidation must be one of "Ignore", "Warn", or "Strict", not "{value}"',
            )
        return cls(value)

    def check(self, kind: str, version: str, patched: ObjDict | None = None) -> None:
        """Strict: what the server answers for a body with unknown fields: a 400 for a
        create or an update; for a patch (`patched`: the object it made), a 422 on `patch`
        quoting that object."""
        if self.mode != "Strict" or not self.unknown:
            return
        fields = ", ".join(f'unknown field "{path}"' for path in self.unknown)
        if patched is None:
            raise api_error(
                400,
                "BadRequest",
                f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding '
                f"error: {fields}",
            )
        quoted = json.dumps(json.dumps(patched, separators=(",", ":"), sort_keys=True))
        cause = f"Invalid value: {quoted}: strict decoding error: {fields}"
        causes = [{"reason": "FieldValueInvalid", "message": cause, "field": "patch"}]
        raise api_error(422, "Invalid", f' "" is invalid: patch: {cause}', {"causes": causes})

    def warnings(self) -> list[str]:
        """The Warning header values (Warn only)."""
        if self.mode != "Warn":
            return []
        return [f'299 - "unknown field \\"{path}\\""' for path in self.unknown]


def prune_and_default(
    obj: ObjDict, schema: ObjDict, validation: FieldValidation | None = None
) -> ObjDict:
    """`obj` (a custom resource) as the server stores it under its version's
    `openAPIV3Schema`: defaulted, its non-nullable nulls without a default and its unknown
    fields dropped (their paths told to `validation`)."""
    out = copy.deepcopy(obj)
    _default(out, schema)
    _prune_nulls(out, schema)
    pruned: list[str] = []
    embedded_meta: list[str] = []
    _prune(out, schema, "", pruned, embedded_meta, root=True)
    if validation is not None:  # as the server: the schema's, then embedded metadata's
        validation.unknown += sorted(pruned) + sorted(embedded_meta)
    return out


def _has_default(s: ObjDict) -> bool:
    return "default" in s


def _default(x: Any, s: ObjDict | None) -> None:
    """apiextensions' `Default`: each property with a default that is absent, or a `null` it
    does not allow, gets a copy of it; then every value is defaulted by its own schema (a
    value just defaulted too)."""
    if not s:
        return
    if isinstance(x, dict):
        props = s.get("properties") or {}
        for key, prop in props.items():
            if isinstance(prop, dict) and _has_default(prop):
                if key not in x or (x[key] is None and not prop.get("nullable")):
                    x[key] = copy.deepcopy(prop["default"])
        for key, value in x.items():
            _default(value, child_schema(s, key))
    elif isinstance(x, list):
        items = s.get("items")
        if isinstance(items, dict):
            for value in x:
                _default(value, items)


def _prune_nulls(x: Any, s: ObjDict | None) -> None:
    """apiextensions' `PruneNonNullableNullsWithoutDefaults`: a `null` where the schema
    neither allows one nor has a default is dropped."""
    if not s:
        return
    if isinstance(x, dict):
        for key in list(x):
            value = x[key]
            sub = child_schema(s, key)
            if sub is None:
                continue
            if value is None and not sub.get("nullable") and not _has_default(sub):
                del x[key]
            else:
                _prune_nulls(value, sub)
    elif isinstance(x, list):
        items = s.get("items")
        if isinstance(items, dict):
            for value in x:
                _prune_nulls(value, items)


def _prune(
    x: Any,
    s: ObjDict | None,
    path: str,
    pruned: list[str],
    embedded_meta: list[str],
    *,
    root: bool = False,
    keep: bool = False,
) -> None:
    """apiextensions' `Prune`: the fields the schema does not specify are dropped (their paths
    added to `pruned`), unless it preserves unknown fields there (`keep`: the items of a list
    that does); a resource's root (the object's own, or an embedded resource's) keeps
    apiVersion, kind and ObjectMeta's part of metadata (what an embedded one drops goes to
    `embedded_meta`)."""
    preserve = keep or bool(s and s.get("x-kubernetes-preserve-unknown-fields"))
    if isinstance(x, dict):
        resource = root or bool(s and s.get("x-kubernetes-embedded-resource"))
        extra = (s or {}).get("additionalProperties")
        for key in list(x):
            value = x[key]
            at = f"{path}.{key}" if path else key
            if resource and key in _RESOURCE_FIELDS:
                if key == "metadata" and isinstance(value, dict):
                    for name in [name for name in value if name not in OBJECT_META_FIELDS]:
                        del value[name]
                        (pruned if root else embedded_meta).append(f"{at}.{name}")
                continue
            sub = child_schema(s, key)
            if sub is not None:
                _prune(value, sub, at, pruned, embedded_meta)
            elif not (extra is True or preserve):
                del x[key]
                pruned.append(at)
            # else: kept as it is
    elif isinstance(x, list):
        items = (s or {}).get("items")
        if s and not isinstance(items, dict) and preserve:
            return  # unknown items, kept as they are
        for index, value in enumerate(x):
            _prune(
                value,
                items if isinstance(items, dict) else None,
                f"{path}[{index}]",
                pruned,
                embedded_meta,
                keep=preserve,
            )
