"""Patches and CRD schema checks for LocalApiServer.

JSON merge patch (RFC 7386; also used for strategic-merge-patch, whose list merging by key is
not implemented: lists are replaced), JSON patch (RFC 6902), and the subset of OpenAPI v3
validation a CRD's structural schema applies (type, required, enum, minimum/maximum, length,
pattern, nested properties and items, an embedded resource's apiVersion and kind), with the causes worded as apiextensions words them.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from kubeinformers.testing.apiserver.errors import ObjDict, api_error


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def json_patch(target: Any, ops: list[Any]) -> Any:
    """RFC 6902 JSON patch: add, remove, replace, test, copy, move."""
    doc = copy.deepcopy(target)
    for op in ops:
        kind, path = op.get("op"), op.get("path", "")
        if kind == "test":
            if _pointer_get(doc, path) != op.get("value"):
                raise api_error(
                    422,
                    "Invalid",
                    f"the server rejected our request due to an error "
                    f"in our request: testing value {path} failed",
                )
            continue
        if kind in ("copy", "move"):
            value = copy.deepcopy(_pointer_get(doc, op.get("from", "")))
            if kind == "move":
                doc = _pointer_set(doc, op["from"], None, remove=True)
            doc = _pointer_set(doc, path, value, insert=True)
        elif kind in ("add", "replace"):
            doc = _pointer_set(doc, path, copy.deepcopy(op.get("value")), insert=kind == "add")
        elif kind == "remove":
            doc = _pointer_set(doc, path, None, remove=True)
        else:
            raise api_error(422, "Invalid", f"Unexpected kind: {kind}")
    return doc


def _parts(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]] if path else []


def _pointer_get(doc: Any, path: str) -> Any:
    cur = doc
    try:
        for p in _parts(path):
            cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    except (KeyError, IndexError, ValueError, TypeError):
        raise api_error(
            422, "Invalid", f"the server rejected our request: path {path} does not exist"
        ) from None
    return cur


def _pointer_set(
    doc: Any, path: str, value: Any, *, insert: bool = False, remove: bool = False
) -> Any:
    parts = _parts(path)
    if not parts:
        return value
    parent = (
        _pointer_get(
            doc, "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts[:-1])
        )
        if len(parts) > 1
        else doc
    )
    last = parts[-1]
    try:
        if isinstance(parent, list):
            idx = len(parent) if last == "-" else int(last)
            if remove:
                del parent[idx]
            elif insert:
                parent.insert(idx, value)
            else:
                parent[idx] = value
        elif remove:
            del parent[last]
        else:
            if not insert and last not in parent:
                raise KeyError(last)
            parent[last] = value
    except (KeyError, IndexError, ValueError, TypeError):
        raise api_error(
            422, "Invalid", f"the server rejected our request: path {path} does not exist"
        ) from None
    return doc


# --- structural schema validation (CRDs) ----------------------------------------------------

_JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def _type_ok(value: Any, typ: str) -> bool:
    if typ == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if typ == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    py = _JSON_TYPES.get(typ)
    return py is None or isinstance(value, py)


def child_schema(schema: ObjDict | None, key: str) -> ObjDict | None:
    """The schema of the field `key` of an object whose schema is `schema`: its property,
    else its `additionalProperties` (a map's values); None when it says nothing of it."""
    if not schema:
        return None
    found = (schema.get("properties") or {}).get(key)
    if found is None:
        found = schema.get("additionalProperties")
    return found if isinstance(found, dict) else None


def validate_schema(obj: ObjDict, schema: ObjDict) -> list[tuple[str, str, str]]:
    """A subset of OpenAPI v3 validation as apiextensions words it (root metadata skipped)."""
    causes: list[tuple[str, str, str]] = []
    props = schema.get("properties") or {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind", "metadata") or key not in props:
            continue
        _validate(value, props[key], key, causes)
    for req in schema.get("required") or []:
        if req not in obj:
            causes.append(("FieldValueRequired", req, "Required value"))
    return causes


def _validate(value: Any, s: ObjDict, path: str, causes: list[tuple[str, str, str]]) -> None:
    if value is None and s.get("nullable"):
        return
    typ = s.get("type")
    shown = f'"{value}"' if isinstance(value, str) else _go(value)
    if typ and not _type_ok(value, typ):
        causes.append(
            (
                "FieldValueTypeInvalid",
                path,
                f'Invalid value: "{_go_type(value)}": {path} in body must be of type {typ}: "{_go_type(value)}"',
            )
        )
        return
    if "enum" in s and value not in s["enum"]:
        allowed = ", ".join(f'"{v}"' if isinstance(v, str) else _go(v) for v in s["enum"])
        causes.append(
            (
                "FieldValueNotSupported",
                path,
                f"Unsupported value: {shown}: supported values: {allowed}",
            )
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        for key, words in (("minimum", "greater than"), ("maximum", "less than")):
            if key in s and (value < s[key] if key == "minimum" else value > s[key]):
                causes.append(
                    (
                        "FieldValueInvalid",
                        path,
                        f"Invalid value: {shown}: {path} in body should be {words} or equal to "
                        f"{_go(s[key])}",
                    )
                )
    if isinstance(value, str):
        if "maxLength" in s and len(value) > s["maxLength"]:
            causes.append(
                (
                    "FieldValueTooLong",
                    path,
                    f"Too long: may not be more than {s['maxLength']} bytes",
                )
            )
        if "minLength" in s and len(value) < s["minLength"]:
            causes.append(
                (
                    "FieldValueInvalid",
                    path,
                    f"Invalid value: {shown}: {path} in body "
                    f"should be at least {s['minLength']} chars long",
                )
            )
        if "pattern" in s and not re.search(s["pattern"], value):
            causes.append(
                (
                    "FieldValueInvalid",
                    path,
                    f"Invalid value: {shown}: {path} in body should match '{s['pattern']}'",
                )
            )
    if isinstance(value, dict):
        props = s.get("properties") or {}
        if s.get("x-kubernetes-embedded-resource"):  # a resource: it says what it is
            for req in ("apiVersion", "kind"):
                if not value.get(req):
                    causes.append(("FieldValueRequired", f"{path}.{req}", "Required value"))
        for req in s.get("required") or []:
            if req not in value:
                causes.append(("FieldValueRequired", f"{path}.{req}", "Required value"))
        extra = s.get("additionalProperties")
        for k, v in value.items():
            if k in props:
                _validate(v, props[k], f"{path}.{k}", causes)
            elif isinstance(extra, dict):
                _validate(v, extra, f"{path}.{k}", causes)
    if isinstance(value, list) and isinstance(s.get("items"), dict):
        for i, v in enumerate(value):
            _validate(v, s["items"], f"{path}[{i}]", causes)


def _go(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _go_type(v: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
    }.get(type(v), "null")
