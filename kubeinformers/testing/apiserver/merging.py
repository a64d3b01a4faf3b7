"""How kube-apiserver merges a built-in kind's lists, and the strategic merge patch.

Why: the server merges a pod's containers by name (their env by name, ports, volume mounts, a
pod's volumes, an object's owner references...) in a server-side apply and in a strategic
merge patch; replacing such a list whole would lose what a patch does not name. Which lists
and by which keys comes from the built-ins' schemas (`kubeinformers.generated._merge_keys`),
given to `ownership` as the part of a schema it reads (`properties`, `items`,
`x-kubernetes-list-type: map` and its keys), as a custom resource's schema is.

A strategic merge patch merges maps as a JSON merge patch does (null removes), and each such
list item by item by its merge key (the first of its keys, as the schemas' patch merge keys
are): an item of the patch replaces nothing but the fields it names, the patch's items come
first and the others after them, `{"$patch": "delete", <key>: ...}` removes the item, `$patch: replace` replaces the map or list it is in; the
other directives (`$setElementOrder`, `$retainKeys`, `$deleteFromPrimitiveList`) are not
applied, and a list of scalars is replaced.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from kubeinformers.testing.apiserver.errors import ObjDict
from kubeinformers.testing.apiserver.schema import child_schema

__all__ = ["builtin_schema", "strategic_merge"]

_MAX_DEPTH = 12  # deeper than any built-in kind's keyed lists


@functools.cache
def _tables() -> tuple[dict[str, dict[str, list[Any]]], dict[str, str]]:
    try:
        from kubeinformers.generated import _merge_keys  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # a tree generated without it: every list merged whole
        return {}, {}
    return _merge_keys.CLASSES, _merge_keys.KINDS


@functools.cache
def builtin_schema(group: str, version: str, kind: str) -> ObjDict | None:
    """The part of a built-in kind's schema that says how its lists merge (None: none is
    merged by key, or the kind is not a built-in)."""
    classes, kinds = _tables()
    root = kinds.get(f"{group}/{version}/{kind}")
    return None if root is None else _expand(classes, root, 0)


def _expand(classes: dict[str, dict[str, list[Any]]], name: str, depth: int) -> ObjDict:
    props: ObjDict = {}
    if depth < _MAX_DEPTH:
        for field, (keys, target) in classes.get(name, {}).items():
            inner = _expand(classes, target, depth + 1) if target else {}
            if keys:
                props[field] = {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": list(keys),
                    "items": inner,
                }
            else:
                props[field] = inner
    return {"properties": props}


def strategic_merge(target: Any, patch: Any, schema: ObjDict | None) -> Any:
    """`target` with the strategic merge `patch` applied (see the module)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if not k.startswith("$")}
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue  # a directive of the patch, not a field
        if value is None:
            out.pop(key, None)
            continue
        sub = child_schema(schema, key)
        keys = (sub or {}).get("x-kubernetes-list-map-keys")
        if keys and isinstance(value, list):
            out[key] = _merge_list(out.get(key), value, str(keys[0]), (sub or {}).get("items"))
        else:
            out[key] = strategic_merge(out.get(key), value, sub)
    return out


def _merge_list(current: Any, patch: list[Any], key: str, items: ObjDict | None) -> list[Any]:
    """A keyed list merged: the patch's items first, in its order (each merged into the item
    of its key, if any), then the items it does not name, in their order; as the server's."""
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [
            copy.deepcopy(item)
            for item in patch
            if not (isinstance(item, dict) and item.get("$patch") == "replace")
        ]
    have = [item for item in current] if isinstance(current, list) else []
    named: set[int] = set()
    front: list[Any] = []
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            front.append(copy.deepcopy(item))
            continue
        at = next(
            (
                i
                for i, old in enumerate(have)
                if i not in named and isinstance(old, dict) and old.get(key) == item[key]
            ),
            None,
        )
        if at is not None:
            named.add(at)
        if item.get("$patch") == "delete":
            continue
        front.append(strategic_merge({} if at is None else have[at], item, items))
    return front + [copy.deepcopy(old) for i, old in enumerate(have) if i not in named]
