"""Field ownership (`metadata.managedFields`) and server-side apply, as kube-apiserver keeps them.

Why: a controller that applies its desired state counts on the server to remove what it no
longer applies, to refuse (409) a change to a field another manager owns unless forced, and
to share a field whose value both apply; a test on LocalApiServer must see that, not a merge
patch. What each manager owns is a set of field paths (structured-merge-diff's field sets):
an apply owns the fields it sets (a map it sets empty, as a field of its own); an update (a
create, a PUT, a patch that is not an apply) owns what it changed, a map it created included
(FieldsV1's "."), and takes it from the others; a field removed leaves every set. Entries are
kept per manager, operation and subresource, sorted as the server sorts them.

Lists merge as the schema given says (a custom resource's, or a built-in kind's keyed lists
from `merging`): `x-kubernetes-list-type: map` item by item (by its
`x-kubernetes-list-map-keys`), `set` by value, anything else whole (atomic), as on the
server. Not as the server: a built-in kind's sets (finalizers) are owned whole.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from kubeinformers.testing.apiserver.errors import ObjDict, api_error
from kubeinformers.testing.apiserver.schema import child_schema

__all__ = ["apply", "created", "updated"]

Path = tuple[str, ...]
_MISSING: Any = object()
# What of metadata a manager may own (the rest is the server's, or identity).
_OWNED_METADATA = ("labels", "annotations", "finalizers", "ownerReferences")


@dataclass
class _Entry:
    manager: str
    operation: str  # "Apply" or "Update"
    api_version: str
    time: str
    subresource: str
    fields: set[Path]

    def render(self) -> ObjDict:
        out: ObjDict = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": _fields_v1(self.fields),
        }
        if not self.time:  # an apply that changed no value: no time, as the server's
            del out["time"]
        if self.subresource:
            out["subresource"] = self.subresource
        return out

    def described(self) -> str:
        """How a conflict names this manager (the server's printManager, without the time)."""
        text = json.dumps(self.manager)
        if self.subresource:
            text = f"{text} with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text = f"{text} using {self.api_version}"
        return text


def _scope(obj: ObjDict, subresource: str, has_status: bool) -> ObjDict:
    """The part of `obj` a write through `subresource` ("" or "status") owns fields of."""
    if subresource == "status":
        return {"status": obj["status"]} if "status" in obj else {}
    out: ObjDict = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind") or (key == "status" and has_status):
            continue
        if key == "metadata":
            meta = {k: value[k] for k in _OWNED_METADATA if isinstance(value, dict) and k in value}
            if meta:
                out["metadata"] = meta
            continue
        out[key] = value
    return out


# A field path's elements are FieldsV1's keys: "f:<name>" a field, "k:<json>" the item of a
# list of `x-kubernetes-list-type: map` with those keys, "v:<json>" an item of a `set`.
_MAP, _LIST, _ITEM, _LEAF = "map", "list", "item", "leaf"  # what a path's node is


def _list_type(schema: ObjDict | None) -> tuple[str, list[str]]:
    """A list's merge (its schema's `x-kubernetes-list-type`: "map" with its keys, "set", or
    "atomic", also when there is no schema: a built-in kind's)."""
    if not schema:
        return "atomic", []
    kind = schema.get("x-kubernetes-list-type") or "atomic"
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if kind == "map" and not keys:
        return "atomic", []
    return str(kind), [str(k) for k in keys]


def _item_key(item: Any, keys: list[str]) -> str | None:
    if not isinstance(item, dict) or any(k not in item for k in keys):
        return None
    return "k:" + json.dumps({k: item[k] for k in keys}, separators=(",", ":"), sort_keys=True)


def _members(value: Any, schema: ObjDict | None, prefix: Path = ()) -> dict[Path, tuple[str, Any]]:
    """Every field of `value` (maps' keys, the items of a list merged by item, nested) with
    what its node is and its value; another list is one field."""
    out: dict[Path, tuple[str, Any]] = {}
    if isinstance(value, dict):
        for key, child in value.items():
            path = (*prefix, f"f:{key}")
            sub = child_schema(schema, key)
            if isinstance(child, dict):
                out[path] = (_MAP, child)
                out.update(_members(child, sub, path))
            elif isinstance(child, list) and _list_type(sub)[0] != "atomic":
                out[path] = (_LIST, child)
                out.update(_items(child, sub, path))
            else:
                out[path] = (_LEAF, child)
    return out


def _items(items: list[Any], schema: ObjDict | None, prefix: Path) -> dict[Path, tuple[str, Any]]:
    kind, keys = _list_type(schema)
    item_schema = (schema or {}).get("items")
    out: dict[Path, tuple[str, Any]] = {}
    for item in items:
        if kind == "set":
            out[(*prefix, "v:" + json.dumps(item, separators=(",", ":")))] = (_LEAF, item)
            continue
        key = _item_key(item, keys)
        if key is None:
            continue  # an item without its keys: the server refuses it; not owned here
        path = (*prefix, key)
        out[path] = (_ITEM, item)
        out.update(_members(item, item_schema, path))
    return out


def _applied(members: dict[Path, tuple[str, Any]]) -> set[Path]:
    """The fields an apply of these members owns: its values, the items it lists, and each
    map or list it sets empty; not the maps and lists holding what it sets."""
    return {path for path, (kind, value) in members.items() if kind in (_LEAF, _ITEM) or not value}


def _fields_v1(fields: set[Path]) -> ObjDict:
    tree: ObjDict = {}
    for path in sorted(fields):
        node = tree
        for key in path:
            node = node.setdefault(key, {})
    for path in fields:  # a field owned itself that has owned fields: its "."
        node = tree
        for key in path:
            node = node[key]
        if any(k != "." for k in node):
            node["."] = {}
    return _sorted(tree)


def _sorted(node: ObjDict) -> ObjDict:
    return {k: _sorted(node[k]) for k in sorted(node)}


def _paths(fields_v1: Any, prefix: Path = ()) -> set[Path]:
    """The field paths of a FieldsV1: each node owned itself ("." or no children)."""
    out: set[Path] = set()
    if not isinstance(fields_v1, dict):
        return out
    for key, child in fields_v1.items():
        if key == ".":
            continue
        path = (*prefix, key)
        inner = _paths(child, path)
        if not inner or (isinstance(child, dict) and "." in child):
            out.add(path)
        out |= inner
    return out


def _entries(obj: ObjDict | None) -> list[_Entry]:
    meta = (obj or {}).get("metadata") or {}
    entries = []
    for item in meta.get("managedFields") or []:
        if not isinstance(item, dict):
            continue
        entries.append(
            _Entry(
                str(item.get("manager") or ""),
                str(item.get("operation") or "Update"),
                str(item.get("apiVersion") or ""),
                str(item.get("time") or ""),
                str(item.get("subresource") or ""),
                _paths(item.get("fieldsV1")),
            )
        )
    return entries


def _entry(entries: list[_Entry], manager: str, operation: str, subresource: str) -> _Entry:
    for entry in entries:
        if (entry.manager, entry.operation, entry.subresource) == (manager, operation, subresource):
            return entry
    entry = _Entry(manager, operation, "", "", subresource, set())
    entries.append(entry)
    return entry


def _rendered(
    entries: list[_Entry], obj: ObjDict, has_status: bool, schema: ObjDict | None
) -> list[ObjDict]:
    """The entries as managedFields: each keeps the fields `obj` still has; empty ones go;
    sorted as the server sorts them (operation, time, manager, subresource)."""
    kept = []
    present: dict[str, set[Path]] = {}  # the fields of each subresource's part, found once
    for entry in entries:
        where = entry.subresource
        if where not in present:
            present[where] = set(_members(_scope(obj, where, has_status), schema))
        entry.fields &= present[where]
        if entry.fields:
            kept.append(entry)
    kept.sort(key=lambda e: (e.operation, e.time, e.manager, e.subresource))
    return [entry.render() for entry in kept]


def created(
    obj: ObjDict,
    manager: str,
    operation: str,
    api_version: str,
    now: str,
    has_status: bool,
    schema: ObjDict | None,
) -> list[ObjDict]:
    """The managedFields of an object a create made (`obj`: for an "Apply", what it set):
    an update owns every field (a map with fields itself too, "."), an apply what it set.
    Written straight from the object (a create is the test server's most frequent write)."""
    scope = _scope(obj, "", has_status)
    meta = scope.pop("metadata", None)
    dots = operation == "Update"
    fields = _owned(scope, schema, dots)
    if meta:  # always there: not owned itself, only its fields
        fields["f:metadata"] = _owned(meta, child_schema(schema, "metadata"), dots)
    if not fields:
        return []
    entry = _Entry(manager, operation, api_version, now, "", set())
    rendered = entry.render()
    rendered["fieldsV1"] = dict(sorted(fields.items()))
    return [rendered]


def _owned(value: ObjDict, schema: ObjDict | None, dots: bool) -> ObjDict:
    """The FieldsV1 of owning every field of the map `value`, keys sorted."""
    if not schema:  # no list below merged item by item: the quick way
        return _owned_plainly(value, dots)
    out: ObjDict = {}
    for key in sorted(value):
        child = value[key]
        sub = child_schema(schema, key)
        if isinstance(child, dict):
            node = _owned(child, sub, dots)
            out[f"f:{key}"] = {".": {}, **node} if node and dots else node
        elif isinstance(child, list) and _list_type(sub)[0] != "atomic":
            out[f"f:{key}"] = _owned_items(child, sub, dots)
        else:
            out[f"f:{key}"] = {}
    return out


def _owned_plainly(value: ObjDict, dots: bool) -> ObjDict:
    # Recursing only into maps (no call per value) halves a pod's create.
    return {
        f"f:{k}": (
            ({".": {}, **_owned_plainly(x, dots)} if dots else _owned_plainly(x, dots)) if x else {}
        )
        if isinstance(x, dict)
        else {}
        for k, x in sorted(value.items())
    }


def _owned_items(items: list[Any], schema: ObjDict | None, dots: bool) -> ObjDict:
    kind, keys = _list_type(schema)
    item_schema = (schema or {}).get("items")
    out: ObjDict = {}
    for item in items:
        if kind == "set":
            out["v:" + json.dumps(item, separators=(",", ":"))] = {}
            continue
        key = _item_key(item, keys)
        if key is not None:  # an item is owned itself, with its fields
            out[key] = {".": {}, **_owned(item, item_schema, dots)}
    return dict(sorted(out.items()))


def updated(
    old: ObjDict,
    new: ObjDict,
    manager: str,
    api_version: str,
    now: str,
    subresource: str,
    has_status: bool,
    schema: ObjDict | None = None,
) -> list[ObjDict]:
    """The managedFields after an update of `old` to `new` by `manager`: it owns what it
    changed (a map, a list or an item it created included), which the others lose; removed
    fields leave every set. `schema`: a custom resource's (how its lists merge)."""
    entries = _entries(old)
    before = _members(_scope(old, subresource, has_status), schema)
    after = _members(_scope(new, subresource, has_status), schema)
    changed = {
        path
        for path, (kind, value) in after.items()
        if path not in before
        or before[path][0] != kind
        or (kind == _LEAF and before[path][1] != value)
    }
    if changed:
        for entry in entries:
            if entry.subresource == subresource:
                entry.fields -= changed
        mine = _entry(entries, manager, "Update", subresource)
        mine.fields |= changed
        mine.api_version, mine.time = api_version, now
    return _rendered(entries, new, has_status, schema)


def apply(
    live: ObjDict,
    applied: ObjDict,
    manager: str,
    force: bool,
    api_version: str,
    now: str,
    subresource: str,
    has_status: bool,
    schema: ObjDict | None = None,
) -> tuple[ObjDict, list[ObjDict]]:
    """Server-side apply of `applied` (the configuration, nulls left out) to `live` by
    `manager`: the object it makes and its managedFields. Raises the server's 409 (its
    message and causes) when a field it sets to another value is another manager's, unless
    `force`, which takes the field from them. `schema`: a custom resource's (how its lists
    merge: item by item for `x-kubernetes-list-type` map and set)."""
    entries = _entries(live)
    config = _without_nulls(_scope(applied, subresource, has_status))
    setting = _members(config, schema)
    owned = _applied(setting)
    current = _members(_scope(live, subresource, has_status), schema)
    mine = _entry(entries, manager, "Apply", subresource)
    others = [e for e in entries if e is not mine and e.subresource == subresource]
    conflicts = sorted(
        (
            (path, entry)
            for entry in others
            for path in entry.fields & owned
            if setting[path][0] == _LEAF
            and current.get(path, (None, _MISSING))[1] != setting[path][1]
        ),
        key=lambda conflict: (conflict[0], conflict[1].manager),
    )
    if conflicts and not force:
        raise _conflict(conflicts)
    for path, entry in conflicts:
        entry.fields.discard(path)
    out = copy.deepcopy(live)
    kept_by_others = set().union(*(e.fields for e in others)) if others else set()
    removed: list[Path] = []
    for path in sorted(mine.fields - owned - kept_by_others, key=len):  # the outermost first
        if any(path[: len(done)] == done for done in removed) or _is_item_key(path):
            continue  # gone with what holds it; or an item's key, which stays as long as it
        if not any(kept[: len(path)] == path for kept in kept_by_others):  # none inside it
            _remove(out, path, kept_by_others)
            removed.append(path)
    _merge(out, config, schema)
    mine.fields = owned
    mine.api_version = api_version
    if _values(out) != _values(live):  # the time says when a manager last changed a value
        mine.time = now
    return out, _rendered(entries, out, has_status, schema)


def _is_item_key(path: Path) -> bool:
    """Whether `path` is a key field of a list item (`...k:{"name":"x"}`, `f:name`)."""
    if len(path) < 2 or not path[-2].startswith("k:") or not path[-1].startswith("f:"):
        return False
    return path[-1][2:] in json.loads(path[-2][2:])


def _values(obj: ObjDict) -> ObjDict:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return dict(obj, metadata=meta)


def _without_nulls(value: Any) -> Any:
    """An apply configuration's nulls are fields it does not set."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _merge(target: ObjDict, config: ObjDict, schema: ObjDict | None) -> None:
    """Merge an apply configuration into the object: maps key by key, the lists its schema
    merges item by item (map: by its keys; set: by value), anything else replaced."""
    for key, value in config.items():
        sub = child_schema(schema, key)
        current = target.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            _merge(current, value, sub)
            continue
        kind, keys = _list_type(sub)
        if isinstance(value, list) and isinstance(current, list) and kind != "atomic":
            target[key] = _merged_list(current, value, sub, kind, keys)
        else:
            target[key] = copy.deepcopy(value)


def _merged_list(
    current: list[Any], config: list[Any], schema: ObjDict | None, kind: str, keys: list[str]
) -> list[Any]:
    out = copy.deepcopy(current)
    if kind == "set":
        out.extend(copy.deepcopy(v) for v in config if v not in out)
        return out
    at = {_item_key(item, keys): item for item in out}
    item_schema = (schema or {}).get("items")
    for item in config:
        key = _item_key(item, keys)
        live = at.get(key) if key is not None else None
        if isinstance(live, dict) and isinstance(item, dict):
            _merge(live, item, item_schema)
        else:
            out.append(copy.deepcopy(item))
    return out


def _remove(obj: ObjDict, path: Path, owned: set[Path]) -> None:
    """Remove the field (or list item) at `path`, then each map or list above it left empty
    that nobody owns (metadata stays)."""
    trail: list[tuple[Any, Any]] = []  # (container, the key or index of the next node)
    node: Any = obj
    for element in path:
        index = _find(node, element)
        if index is None:
            return
        trail.append((node, index))
        node = node[index]
    for depth in range(len(trail) - 1, -1, -1):
        container, index = trail[depth]
        if depth < len(trail) - 1:
            if container[index] or path[: depth + 1] in owned:
                return
            if depth == 0 and index == "metadata":
                return
        del container[index]


def _find(node: Any, element: str) -> Any:
    """Where `element` (a FieldsV1 key) is in `node`: a map's key, a list's index, or None."""
    if element.startswith("f:"):
        key = element[2:]
        return key if isinstance(node, dict) and key in node else None
    if not isinstance(node, list):
        return None
    if element.startswith("k:"):
        wanted = json.loads(element[2:])
        for index, item in enumerate(node):
            if isinstance(item, dict) and all(item.get(k) == v for k, v in wanted.items()):
                return index
        return None
    if element.startswith("v:"):
        wanted = json.loads(element[2:])
        for index, item in enumerate(node):
            if item == wanted:
                return index
    return None


def _dotted(path: Path) -> str:
    """A path as structured-merge-diff writes it (`.spec.conditions[type="Ready"].status`)."""
    out = []
    for element in path:
        if element.startswith("f:"):
            out.append(f".{element[2:]}")
        elif element.startswith("k:"):
            keys = json.loads(element[2:])
            out.append("[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]")
        else:
            out.append(f"[={element[2:]}]")
    return "".join(out)


def _conflict(conflicts: list[tuple[Path, _Entry]]) -> Exception:
    """The server's 409 for an apply's conflicts (structured-merge-diff's wording)."""
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {entry.described()}",
            "field": _dotted(path),
        }
        for path, entry in conflicts
    ]
    if len(conflicts) == 1:
        path, entry = conflicts[0]
        text = f"Apply failed with 1 conflict: conflict with {entry.described()}: {_dotted(path)}"
    else:
        by_manager: dict[str, list[str]] = {}
        for path, entry in conflicts:
            by_manager.setdefault(entry.described(), []).append(_dotted(path))
        lines = []
        for who in sorted(by_manager):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {path}" for path in by_manager[who])
        text = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return api_error(409, "Conflict", text, {"causes": causes})
