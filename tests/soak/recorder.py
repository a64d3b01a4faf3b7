"""A handler that replays its callbacks into a view and checks each one against that view.

Checked on every callback (continuously): an update's old object is what this handler last
saw for the key (same resourceVersion), an add is for a key it does not hold, an update is for
a key it does hold (E3/F10: add vs update follows the cache; G: each handler gets every
notification in order). Tombstones (DeletedFinalStateUnknown, A5/C1.8) are counted. Armed by the fault
injector, a recorder raises from its next callbacks or blocks for seconds; it always records
first, so its view stays the truth of what it was told.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
    object_resource_version,
)

MAX_KEPT_VIOLATIONS = 20


class InjectedHandlerError(RuntimeError):
    """Raised on purpose by an armed recorder (the informer must log it and go on)."""


@dataclass
class RecorderStats:
    adds: int = 0
    updates: int = 0
    deletes: int = 0
    tombstones: int = 0
    raised: int = 0
    blocked: int = 0
    stale_updates: int = 0
    duplicate_adds: int = 0
    unknown_updates: int = 0
    violations: list[str] = field(default_factory=list)


class Recorder:
    """One registered handler of one informer."""

    def __init__(self, name: str, stop: threading.Event) -> None:
        self.name = name
        self._stop = stop
        self._lock = threading.Lock()
        self.view: dict[str, str] = {}
        self.tombstone_keys: set[str] = set()
        self.stats = RecorderStats()
        self._raise_next = 0
        self._block_next: float = 0.0

    # --- arming (fault injector) --------------------------------------------------------------

    def arm_raise(self, n: int) -> None:
        with self._lock:
            self._raise_next += n

    def arm_block(self, seconds: float) -> None:
        with self._lock:
            self._block_next = seconds

    def _after(self) -> None:
        with self._lock:
            block, self._block_next = self._block_next, 0.0
            raising = self._raise_next > 0
            if raising:
                self._raise_next -= 1
        if block:
            self.stats.blocked += 1
            self._stop.wait(block)  # a slow handler; shutdown cuts it short
        if raising:
            self.stats.raised += 1
            raise InjectedHandlerError(f"{self.name}: injected handler failure")

    def _violation(self, text: str) -> None:
        if len(self.stats.violations) < MAX_KEPT_VIOLATIONS:
            self.stats.violations.append(f"{self.name}: {text}")

    # --- callbacks ----------------------------------------------------------------------------

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        key = deletion_handling_meta_namespace_key(obj)
        rv = object_resource_version(obj)
        with self._lock:
            self.stats.adds += 1
            if key in self.view:
                self.stats.duplicate_adds += 1
                self._violation(f"add of {key}@{rv} while it holds {key}@{self.view[key]}")
            self.view[key] = rv
        self._after()

    def on_update(self, old: Any, new: Any) -> None:
        key = deletion_handling_meta_namespace_key(new)
        old_rv, new_rv = object_resource_version(old), object_resource_version(new)
        with self._lock:
            self.stats.updates += 1
            seen = self.view.get(key)
            if seen is None:
                self.stats.unknown_updates += 1
                self._violation(f"update of {key} ({old_rv} -> {new_rv}) never added")
            elif seen != old_rv:
                self.stats.stale_updates += 1
                self._violation(f"update of {key}: old is {old_rv}, it last saw {seen}")
            self.view[key] = new_rv
        self._after()

    def on_delete(self, obj: Any) -> None:
        key = deletion_handling_meta_namespace_key(obj)
        with self._lock:
            self.stats.deletes += 1
            if isinstance(obj, DeletedFinalStateUnknown):
                self.stats.tombstones += 1
                self.tombstone_keys.add(key)
            self.view.pop(key, None)
        self._after()

    def snapshot(self) -> dict[str, str]:
        with self._lock:
            return dict(self.view)

    def violation_count(self) -> int:
        s = self.stats
        return s.stale_updates + s.duplicate_adds + s.unknown_updates
