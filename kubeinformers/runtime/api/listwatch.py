"""The contract between a source of objects and the reflector: list, then watch.

Anything that implements `ListerWatcher[T]` can feed an informer: the HTTP transport
(`ApiListerWatcher`), the in-memory `FakeListerWatcher`, or a user's own source.
(client-go: tools/cache/listwatch.go, apimachinery/pkg/watch)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from kubeinformers.runtime.api.model import Status

T = TypeVar("T")

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]

# A BOOKMARK carrying this annotation with value "true" ends a watch-list's initial events (D19).
INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"


@dataclass(slots=True)
class ListOptions:
    """Query options of a list or watch request (meta/v1 ListOptions, snake_case)."""

    label_selector: str | None = None
    field_selector: str | None = None
    resource_version: str | None = None
    resource_version_match: str | None = None
    limit: int | None = None
    continue_: str | None = None
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool = False
    send_initial_events: bool | None = None

    def copy(self, **changes: Any) -> ListOptions:
        """A copy with `changes` applied; the original is never mutated (tweak functions rely on it)."""
        return dataclasses.replace(self, **changes)


@dataclass(slots=True)
class ObjectList(Generic[T]):
    """One page of a list: its items, the list's resourceVersion and the continue token."""

    items: list[T]
    resource_version: str
    continue_: str | None = None
    remaining_item_count: int | None = None


@dataclass(frozen=True, slots=True)
class WatchEvent(Generic[T]):
    """One watch event. `object` is a Status for ERROR events, else the (decoded) object.

    For BOOKMARK events the object carries only metadata (resourceVersion, annotations).
    """

    type: WatchEventType
    object: T | Status


@runtime_checkable
class Watch(Protocol[T]):
    """A running watch: iterate its events; `stop()` ends the iteration from any thread."""

    def __iter__(self) -> Iterator[WatchEvent[T]]: ...

    def stop(self) -> None: ...


@runtime_checkable
class ListerWatcher(Protocol[T]):
    """Lists a resource (one page per call, following `continue_`) and watches it.

    Errors from the server are raised as `kubeinformers.runtime.api.errors.ApiStatusError`;
    connection failures as `OSError` (or a subclass) or `ApiStatusError` with code 0.
    A ListerWatcher may also define `is_watch_list_semantics_unsupported() -> bool`
    returning True to opt out of watch-list (D17).
    """

    def list(self, options: ListOptions) -> ObjectList[T]: ...

    def watch(self, options: ListOptions) -> Watch[T]: ...


def watch_list_semantics_unsupported(lister_watcher: object) -> bool:
    """Whether a ListerWatcher declares that it cannot serve watch-list requests (D17)."""
    method = getattr(lister_watcher, "is_watch_list_semantics_unsupported", None)
    return bool(method()) if callable(method) else False


__all__ = [
    "INITIAL_EVENTS_END_ANNOTATION",
    "ListOptions",
    "ListerWatcher",
    "ObjectList",
    "Watch",
    "WatchEvent",
    "WatchEventType",
    "watch_list_semantics_unsupported",
]

# Re-exported for convenience: a watch ERROR event's object.
__all__ += ["Status"]
