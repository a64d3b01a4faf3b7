"""The lists of the built-in kinds that the API server merges item by item, for LocalApiServer.

Why: kube-apiserver merges a pod's containers by name (and their env, ports, volume mounts,
a pod's volumes and conditions, an object's owner references...) in a server-side apply and
a strategic merge patch; a test server that replaced such a list whole would lose another
manager's container, or every field of a container a patch names. The keys are the schema's
(`x-kubernetes-list-map-keys` of a `map` list, else its strategic `x-kubernetes-patch-merge-key`,
as `schema` keeps them); only the paths that lead to such a list are written.

Written with the built-ins as `_merge_keys` (one class per line): `CLASSES` maps a class to
its fields that are such lists (`[keys, item class or None]`) or objects leading to one
(`[None, class]`); `KINDS` maps "group/version/Kind" to its class. Read by LocalApiServer
(`kubeinformers.testing.apiserver.merging`), never by the runtime.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

MODULE = "_merge_keys"
_REF = "#/components/schemas/"

Field = list[Any]  # [keys or None, class or None]


def _ref(node: Mapping[str, Any]) -> str | None:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        return ref[len(_REF) :]
    for part in node.get("allOf") or ():
        if isinstance(part, Mapping) and (found := _ref(part)) is not None:
            return found
    return None


def merge_keys(
    schemas: Mapping[str, Any], kinds: Mapping[tuple[str, str, str], str], served: Iterable[Any]
) -> tuple[dict[str, dict[str, Field]], dict[str, str]]:
    """The classes (of `schemas`, a run's built-ins) whose fields lead to a list merged by key,
    with those fields, and the class of each served kind that has any."""
    fields: dict[str, dict[str, Field]] = {}
    state: dict[str, bool] = {}  # class -> leads to a keyed list (False while being visited)

    def visit(name: str) -> bool:
        if name in state:
            return state[name]
        state[name] = False  # a cycle leads nowhere new
        body = schemas.get(name)
        found: dict[str, Field] = {}
        props = body.get("properties") if isinstance(body, Mapping) else None
        for prop, node in (props or {}).items():
            if not isinstance(node, Mapping):
                continue
            keys = node.get("x-kubernetes-list-map-keys")
            items = node.get("items")
            if node.get("type") == "array" and isinstance(items, Mapping):
                item = _ref(items)
                inner = item is not None and visit(item)
                if keys:
                    found[prop] = [list(keys), item if inner else None]
                continue  # a list merged whole: nothing inside it is merged by key
            target = _ref(node)
            if target is not None and visit(target):
                found[prop] = [None, target]
        if found:
            fields[name] = found
        state[name] = bool(found)
        return state[name]

    roots: dict[str, str] = {}
    for resource in served:
        name = kinds.get((resource.group, resource.version, resource.kind))
        if name is not None and visit(name):
            roots[f"{resource.group}/{resource.version}/{resource.kind}"] = name
    return fields, roots


def _literal(value: Any) -> str:
    """A Python literal of JSON-like data (`None`, where JSON writes null)."""
    return json.dumps(value).replace("null", "None")  # no name or key holds "null"


def module_source(classes: Mapping[str, Mapping[str, Field]], kinds: Mapping[str, str]) -> str:
    """The `_merge_keys` module written with the built-ins."""
    lines = [
        '"""The lists of the built-in kinds the API server merges item by item (by these keys).',
        "",
        "Read by LocalApiServer (`kubeinformers.testing.apiserver.merging`), never at run time.",
        '"""',
        "",
        "from typing import Any",
        "",
        "# One class per line (written as is, not formatted: a small diff when the API grows).",
        "CLASSES: dict[str, dict[str, list[Any]]] = {",
        *(
            f"    {json.dumps(name)}: {_literal(dict(sorted(found.items())))},"
            for name, found in sorted(classes.items())
        ),
        "}",
        "KINDS: dict[str, str] = {",
        *(f"    {json.dumps(kind)}: {json.dumps(name)}," for kind, name in sorted(kinds.items())),
        "}",
        "",
    ]
    return "\n".join(lines)
