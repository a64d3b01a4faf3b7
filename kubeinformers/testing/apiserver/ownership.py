"""Field ownership (`metadata.managedFields`) and server-side apply, as kube-apiserver keeps them.

Why: a controller that applies its desired state counts on the server to remove what it no
longer applies, to refuse (409) a change to a field another manager owns unless forced, and
to share a field whose value both apply; a test on LocalApiServer must see that, not a merge
patch. What each manager owns is a set of field paths (structured-merge-diff's field sets):
an apply owns the fields it sets (a map it sets empty, as a field of its own); an update (a
create, a PUT, a patch that is not an apply) owns what it changed, a map it created included
(FieldsV1's "."), and takes it from the others; a field removed leaves every set. Entries are
kept per manager, operation and subresource, sorted as the server sorts them.

Not as the server: every list is one field (atomic), as a CRD's lists are by default; the
server merges a list of `x-kubernetes-list-type: map` (a pod's containers, by name) or `set`
item by item, so two managers applying different items of one such list conflict here.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from kubeinformers.testing.apiserver.errors import ObjDict, api_error

__all__ = ["apply", "updated"]

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


def _members(value: Any, prefix: Path = ()) -> dict[Path, Any]:
    """Every field of `value` (maps' keys, nested) with its value; a list is one field."""
    out: dict[Path, Any] = {}
    if isinstance(value, dict):
        for key, child in value.items():
            path = (*prefix, key)
            out[path] = child
            if isinstance(child, dict):
                out.update(_members(child, path))
    return out


def _leaves(members: dict[Path, Any]) -> set[Path]:
    """The fields an apply of these members owns: all but the maps that have fields."""
    return {path for path, value in members.items() if not (isinstance(value, dict) and value)}


def _fields_v1(fields: set[Path]) -> ObjDict:
    tree: ObjDict = {}
    for path in sorted(fields):
        node = tree
        for key in path:
            node = node.setdefault(f"f:{key}", {})
    for path in fields:  # a field owned itself that has owned fields: its "."
        node = tree
        for key in path:
            node = node[f"f:{key}"]
        if any(k != "." for k in node):
            node["."] = {}
    return _sorted(tree)


def _sorted(node: ObjDict) -> ObjDict:
    return {k: _sorted(node[k]) for k in sorted(node)}


def _paths(fields_v1: Any, prefix: Path = ()) -> set[Path]:
    """The field paths of a FieldsV1 (a list's items, "k:"/"v:", count as the list)."""
    out: set[Path] = set()
    if not isinstance(fields_v1, dict):
        return out
    for key, child in fields_v1.items():
        if key == ".":
            if prefix:
                out.add(prefix)
        elif key.startswith("f:"):
            path = (*prefix, key[2:])
            inner = _paths(child, path)
            out |= inner if inner else {path}
            if isinstance(child, dict) and "." in child:
                out.add(path)
        elif prefix:
            out.add(prefix)
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


def _rendered(entries: list[_Entry], obj: ObjDict, has_status: bool) -> list[ObjDict]:
    """The entries as managedFields: each keeps the fields `obj` still has; empty ones go;
    sorted as the server sorts them (operation, time, manager, subresource)."""
    kept = []
    for entry in entries:
        present = _members(_scope(obj, entry.subresource, has_status))
        entry.fields &= present.keys()
        if entry.fields:
            kept.append(entry)
    kept.sort(key=lambda e: (e.operation, e.time, e.manager, e.subresource))
    return [entry.render() for entry in kept]


def updated(
    old: ObjDict,
    new: ObjDict,
    manager: str,
    api_version: str,
    now: str,
    subresource: str,
    has_status: bool,
) -> list[ObjDict]:
    """The managedFields after an update of `old` to `new` by `manager`: it owns what it
    changed (a map it created included), which the others lose; removed fields leave every
    set."""
    entries = _entries(old)
    before = _members(_scope(old, subresource, has_status))
    after = _members(_scope(new, subresource, has_status))
    changed = {
        path
        for path, value in after.items()
        if path not in before
        or (
            before[path] != value
            and not (isinstance(value, dict) and isinstance(before[path], dict))
        )
    }
    if changed:
        for entry in entries:
            if entry.subresource == subresource:
                entry.fields -= changed
        mine = _entry(entries, manager, "Update", subresource)
        mine.fields |= changed
        mine.api_version, mine.time = api_version, now
    return _rendered(entries, new, has_status)


def apply(
    live: ObjDict,
    applied: ObjDict,
    manager: str,
    force: bool,
    api_version: str,
    now: str,
    subresource: str,
    has_status: bool,
) -> tuple[ObjDict, list[ObjDict]]:
    """Server-side apply of `applied` (the configuration, nulls left out) to `live` by
    `manager`: the object it makes and its managedFields. Raises the server's 409 (its
    message and causes) when a field it sets to another value is another manager's, unless
    `force`, which takes the field from them."""
    entries = _entries(live)
    config = _without_nulls(_scope(applied, subresource, has_status))
    setting = _members(config)
    owned = _leaves(setting)
    current = _members(_scope(live, subresource, has_status))
    mine = _entry(entries, manager, "Apply", subresource)
    others = [e for e in entries if e is not mine and e.subresource == subresource]
    conflicts = sorted(
        (
            (path, entry)
            for entry in others
            for path in entry.fields & owned
            if current.get(path, _MISSING) != setting[path]
        ),
        key=lambda conflict: (conflict[0], conflict[1].manager),
    )
    if conflicts and not force:
        raise _conflict(conflicts)
    for path, entry in conflicts:
        entry.fields.discard(path)
    out = copy.deepcopy(live)
    kept_by_others = set().union(*(e.fields for e in others)) if others else set()
    for path in sorted(mine.fields - owned - kept_by_others, key=len, reverse=True):
        _remove(out, path, subresource, kept_by_others)
    _merge(out, config)
    mine.fields = owned
    mine.api_version = api_version
    if _values(out) != _values(live):  # the time says when a manager last changed a value
        mine.time = now
    return out, _rendered(entries, out, has_status)


def _values(obj: ObjDict) -> ObjDict:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return dict(obj, metadata=meta)


def _without_nulls(value: Any) -> Any:
    """An apply configuration's nulls are fields it does not set."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


def _merge(target: ObjDict, config: ObjDict) -> None:
    for key, value in config.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def _remove(obj: ObjDict, path: Path, subresource: str, owned: set[Path]) -> None:
    """Remove the field at `path`, then each map above it left empty that nobody owns."""
    parents: list[tuple[ObjDict, str]] = []
    node: Any = obj
    for key in path[:-1]:
        if not isinstance(node, dict) or not isinstance(node.get(key), dict):
            return
        parents.append((node, key))
        node = node[key]
    if not isinstance(node, dict) or path[-1] not in node:
        return
    del node[path[-1]]
    for depth in range(len(parents) - 1, -1, -1):
        parent, key = parents[depth]
        if parent[key] or path[: depth + 1] in owned:
            return
        if depth == 0 and key == "metadata":
            return  # metadata stays, empty or not
        del parent[key]


def _conflict(conflicts: list[tuple[Path, _Entry]]) -> Exception:
    """The server's 409 for an apply's conflicts (structured-merge-diff's wording)."""

    def dotted(path: Path) -> str:
        return "".join(f".{key}" for key in path)

    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {entry.described()}",
            "field": dotted(path),
        }
        for path, entry in conflicts
    ]
    if len(conflicts) == 1:
        path, entry = conflicts[0]
        text = f"Apply failed with 1 conflict: conflict with {entry.described()}: {dotted(path)}"
    else:
        by_manager: dict[str, list[str]] = {}
        for path, entry in conflicts:
            by_manager.setdefault(entry.described(), []).append(dotted(path))
        lines = []
        for who in sorted(by_manager):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {path}" for path in by_manager[who])
        text = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return api_error(409, "Conflict", text, {"causes": causes})
