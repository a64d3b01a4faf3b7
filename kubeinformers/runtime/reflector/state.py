"""What the reflector's loops share: its resourceVersion bookkeeping and what `stop` must end.

The run loop (reflector.py), the paged LIST (list.py) and the watch-list (watch_list.py) each
take this one object instead of reaching into each other: the last synced resourceVersion
(D21) and whether it became unavailable (D6, D18), whether the server paginated a LIST at
"0" (D7), the open watch and the LIST in flight (so a stop ends them at once), and a failed
resync (D15) that must end the current watch.
"""

from __future__ import annotations

import threading
from typing import Any

from kubeinformers.runtime.api.listwatch import Watch


class ReflectorState:
    """The reflector's shared, lock-guarded state (the lock guards the flags and the watch)."""

    __slots__ = (
        "current_watch",
        "interrupt",
        "last_sync_rv",
        "lock",
        "paginated_result",
        "resync_error",
        "rv_unavailable",
    )

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last_sync_rv = ""  # D21: written by the reflector's thread only
        self.rv_unavailable = False
        self.paginated_result = False
        self.current_watch: Watch[Any] | None = None
        self.interrupt: threading.Event | None = None  # set by stop: ends a LIST wait
        self.resync_error: BaseException | None = None

    def relist_resource_version(self) -> str:
        """D6: "" after an unavailable RV, "0" before anything was seen, else the last RV."""
        with self.lock:
            if self.rv_unavailable:
                return ""
            return self.last_sync_rv or "0"

    def rewatch_resource_version(self) -> str:
        """D18: "" after an unavailable RV, else the last RV (initially "", not "0")."""
        with self.lock:
            return "" if self.rv_unavailable else self.last_sync_rv

    def set_last_sync_rv(self, rv: str) -> None:
        self.last_sync_rv = rv


__all__ = ["ReflectorState"]
