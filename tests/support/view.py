"""A handler's picture of the world: it replays add/update/delete callbacks into
key → resourceVersion, so a test can compare what a handler was told with the server (nothing
lost, nothing phantom)."""

from __future__ import annotations

import threading
from typing import Any

from kubeinformers.runtime.api.keys import (
    deletion_handling_meta_namespace_key,
    object_resource_version,
)


class View:
    """Register `on_add`, `on_update`, `on_delete` as one handler; `snapshot()` is its view."""

    def __init__(self) -> None:
        self.items: dict[str, str] = {}
        self.lock = threading.Lock()

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        with self.lock:
            self.items[deletion_handling_meta_namespace_key(obj)] = object_resource_version(obj)

    def on_update(self, old: Any, new: Any) -> None:
        with self.lock:
            self.items[deletion_handling_meta_namespace_key(new)] = object_resource_version(new)

    def on_delete(self, obj: Any) -> None:
        with self.lock:
            self.items.pop(deletion_handling_meta_namespace_key(obj), None)

    def snapshot(self) -> dict[str, str]:
        with self.lock:
            return dict(self.items)
