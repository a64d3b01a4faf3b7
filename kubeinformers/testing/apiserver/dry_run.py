"""A write's `dryRun=All`: everything a write does, nothing kept.

Why: kube-apiserver runs a dry run through the whole write (defaults, validation, admission,
field ownership, conflicts) and answers the object it would have stored, without storing it
or telling any watch. Here the write functions run unchanged against a `DryRunStore`: reads
go to the store, writes and removals are answered as the store would answer them and kept
nowhere. What the real server answers that a stored write would not: a created object has
no resourceVersion, an updated one keeps the one it has.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Protocol

from kubeinformers.testing.apiserver.errors import ObjDict, api_error
from kubeinformers.testing.apiserver.store import SKey, Store, object_key

__all__ = ["DryRunStore", "WriteTarget", "dry_run_of"]


class WriteTarget(Protocol):
    """What the write functions read and write: the `Store`, or a dry run over it."""

    lock: threading.RLock
    dry: bool

    def get(self, skey: SKey, key: str) -> ObjDict | None: ...
    def current(self, skey: SKey, prefix: str = "") -> tuple[int, list[tuple[str, ObjDict]]]: ...
    def write(self, skey: SKey, obj: ObjDict, event_type: str | None = None) -> ObjDict: ...
    def remove(self, skey: SKey, key: str, final: ObjDict | None = None) -> ObjDict | None: ...
    def start_watch_cache(self, skey: SKey) -> None: ...
    def drop_resource(self, skey: SKey) -> list[ObjDict]: ...
    def close_watchers(self, how: str, skey: SKey | None = None) -> int: ...
    def resources(self) -> list[SKey]: ...
    def all_items(self, skeys: Iterable[SKey]) -> list[tuple[SKey, ObjDict]]: ...


class DryRunStore:
    """The store as a dry run sees it (see the module)."""

    dry = True

    def __init__(self, store: Store) -> None:
        self._store = store
        self.lock = store.lock

    def get(self, skey: SKey, key: str) -> ObjDict | None:
        return self._store.get(skey, key)

    def current(self, skey: SKey, prefix: str = "") -> tuple[int, list[tuple[str, ObjDict]]]:
        return self._store.current(skey, prefix)

    def write(self, skey: SKey, obj: ObjDict, event_type: str | None = None) -> ObjDict:
        """What the store would keep: `obj`, with the resourceVersion of the object it
        replaces (none for a new one)."""
        prev = self._store.get(skey, object_key(obj))
        version = None if prev is None else prev["metadata"].get("resourceVersion")
        meta = obj["metadata"]
        if version:
            meta["resourceVersion"] = version
        else:
            meta.pop("resourceVersion", None)
        return obj

    def remove(self, skey: SKey, key: str, final: ObjDict | None = None) -> ObjDict | None:
        prev = self._store.get(skey, key)
        return None if prev is None else (final or prev)

    def start_watch_cache(self, skey: SKey) -> None:
        pass  # a dry-run CRD serves nothing

    def drop_resource(self, skey: SKey) -> list[ObjDict]:
        return []

    def close_watchers(self, how: str, skey: SKey | None = None) -> int:
        return 0

    def resources(self) -> list[SKey]:
        return self._store.resources()

    def all_items(self, skeys: Iterable[SKey]) -> list[tuple[SKey, ObjDict]]:
        return self._store.all_items(skeys)


def dry_run_of(store: Store, value: str | None, options: str) -> WriteTarget:
    """Where a write with the query's `dryRun` (`options`: its CreateOptions, UpdateOptions,
    PatchOptions or DeleteOptions) goes; a value other than "All" is the server's 422."""
    if value is None:
        return store
    if value != "All":
        causes = [
            {
                "reason": "FieldValueNotSupported",
                "message": f'Unsupported value: ["{value}"]: supported values: "All"',
                "field": "dryRun",
            }
        ]
        raise api_error(
            422,
            "Invalid",
            f'{options}.meta.k8s.io "" is invalid: dryRun: {causes[0]["message"]}',
            {"group": "meta.k8s.io", "kind": options, "causes": causes},
        )
    return DryRunStore(store)
