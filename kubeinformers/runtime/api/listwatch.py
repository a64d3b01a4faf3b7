"""The contract between a source of objects and the reflector: list, then watch.

Anything that implements `ListerWatcher[T]` can feed an informer: the HTTP transport
(`ApiListerWatcher`), the in-memory `FakeListerWatcher`, or a user's own source.
(client-go: tools/cache/listwatch.go, apimachinery/pkg/watch)
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from kubeinformers.runtime.api.keys import meta_namespace_key, object_resource_version
from kubeinformers.runtime.api.model import Status
from kubeinformers.runtime.api.resource import APIResource

T = TypeVar("T")

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]


def an_event(event_type: str) -> str:
    """ "an ADDED", "a MODIFIED": an event type with its article, for messages."""
    return f"{'an' if event_type[:1] in 'AEIOU' else 'a'} {event_type}"


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
    # KEP-5866 (ShardedListAndWatch): only the objects whose hash falls in these ranges, e.g.
    # "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"; built
    # by `runtime.api.shard.Shard.selector` (section N).
    shard_selector: str | None = None

    def copy(self, **changes: Any) -> ListOptions:
        """A copy with `changes` applied; the original is never mutated (tweak functions rely on it)."""
        return dataclasses.replace(self, **changes)


@dataclass(slots=True)
class ObjectList(Generic[T]):
    """One page of a list: its items, the list's resourceVersion and the continue token.

    `shard_selector` is the list's `metadata.shardInfo.selector`: the shard selector the
    server applied (None when it applied none: the page holds every object, N2)."""

    items: list[T]
    resource_version: str
    continue_: str | None = None
    remaining_item_count: int | None = None
    shard_selector: str | None = None


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
    A ListerWatcher may also have the optional capabilities below (client-go checks its
    optional interfaces the same way, by type): `WatchListSemanticsUnsupported` (D17),
    `ReportsDecodeErrors`, `CountsDecodeErrors`, `ServesResource`.
    """

    def list(self, options: ListOptions) -> ObjectList[T]: ...

    def watch(self, options: ListOptions) -> Watch[T]: ...


@runtime_checkable
class WatchListSemanticsUnsupported(Protocol):
    """A source that may not serve watch-list requests: True opts out of watch-list (D17;
    client-go: watchlist.DoesClientNotSupportWatchListSemantics)."""

    def is_watch_list_semantics_unsupported(self) -> bool: ...


@runtime_checkable
class ReportsDecodeErrors(Protocol):
    """A source that finds undecodable objects and hands each to a handler (the reflector's
    watch error handler), as the HTTP transport does."""

    def set_decode_error_handler(self, handler: Callable[[BaseException], None]) -> None: ...


@runtime_checkable
class RefreshesCredentials(Protocol):
    """A source whose credentials may change (a rotated token file): after a 401 the
    reflector waits for them to change, at most its backoff delay, before trying again."""

    def wait_for_new_credentials(self, stop: threading.Event, timeout: float) -> bool: ...


@runtime_checkable
class CancelsRequests(Protocol):
    """A source whose requests a stop ends at once, wherever they wait, and refuses from
    then on (client-go cancels the request's context): its reflector has stopped."""

    def cancel_requests(self) -> None: ...


@runtime_checkable
class CountsDecodeErrors(Protocol):
    """A source that counts the objects it could not decode (an informer's metrics show it)."""

    decode_errors: int


@runtime_checkable
class ServesResource(Protocol):
    """A source of one API resource (its GVR labels the informer's metrics)."""

    resource: APIResource


def watch_list_semantics_unsupported(lister_watcher: object) -> bool:
    """Whether a ListerWatcher declares that it cannot serve watch-list requests (D17)."""
    return isinstance(lister_watcher, WatchListSemanticsUnsupported) and bool(
        lister_watcher.is_watch_list_semantics_unsupported()
    )


__all__ = [
    "INITIAL_EVENTS_END_ANNOTATION",
    "CancelsRequests",
    "CountsDecodeErrors",
    "ListOptions",
    "ListerWatcher",
    "ObjectList",
    "RefreshesCredentials",
    "ReportsDecodeErrors",
    "ServesResource",
    "TransformError",
    "Watch",
    "WatchEvent",
    "WatchEventType",
    "WatchListSemanticsUnsupported",
    "an_event",
    "apply_transform",
    "watch_list_semantics_unsupported",
]


class TransformError(ValueError):
    """An informer's transform raised, or returned None, for an object (F15); the text
    starts with `transforming <key>: `."""


def _transform_failed(obj: Any, problem: str) -> TransformError:
    try:
        what = f"{meta_namespace_key(obj)} (resourceVersion {object_resource_version(obj)})"
    except Exception:
        what = type(obj).__name__
    return TransformError(f"transforming {what}: {problem}")


def apply_transform(transform: Callable[[Any], Any], obj: Any) -> Any:
    """`transform(obj)`, its failure a TransformError naming the object and the error (F15).

    A transform that returns None (one that changes the object in place and forgets to return
    it) would otherwise cache None, which no key, lister or handler can read.
    """
    try:
        out = transform(obj)
    except Exception as e:
        raise _transform_failed(obj, f"{type(e).__name__}: {e}") from e
    if out is None:
        raise _transform_failed(
            obj, "the transform returned None; it must return the object (changed or not)"
        )
    return out


# Re-exported for convenience: a watch ERROR event's object.
__all__ += ["Status"]
