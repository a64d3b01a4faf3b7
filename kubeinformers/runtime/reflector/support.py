"""The reflector's small parts: its errors, Status conversion, feature gates, the watch-list
temporary store and the data-consistency detector (client-go: tools/cache/reflector.go,
reflector_data_consistency_detector.go)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from inspect import CO_ASYNC_GENERATOR, CO_COROUTINE, CO_GENERATOR, CO_ITERABLE_COROUTINE
from types import FrameType
from typing import Any, Protocol, runtime_checkable

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.errors import error_from_status as error_from_status
from kubeinformers.runtime.api.keys import deletion_handling_meta_namespace_key, object_uid
from kubeinformers.runtime.api.listwatch import ListerWatcher, ListOptions, apply_transform
from kubeinformers.runtime.client.pager import DEFAULT_PAGE_SIZE, list_pages

logger = logging.getLogger("kubeinformers.reflector")

WATCH_LIST_GATE_ENV = "KUBE_FEATURE_WatchListClient"
CONSISTENCY_DETECTOR_ENV = "KUBE_WATCHLIST_INCONSISTENCY_DETECTOR"
_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
# Code flags of frames that can be suspended: generators, coroutines, async generators.
_SUSPENDABLE = CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE


class WatchStore(Protocol):
    """What a watch stream's events are applied to (`handle_watch`): the informer's queue, or
    a watch-list's temporary store. A store may also be a `BookmarkStore` or a
    `ResourceVersionUpdater`; `handle_watch` checks for both."""

    def add(self, obj: Any) -> None: ...
    def update(self, obj: Any) -> None: ...
    def delete(self, obj: Any) -> None: ...


class ReflectorStore(WatchStore, Protocol):
    """What the reflector writes to: the DeltaFIFO (or RealFIFO, or any store)."""

    def replace(self, objs: list[Any], resource_version: str) -> None: ...
    def resync(self) -> None: ...


@runtime_checkable
class BookmarkStore(Protocol):
    """A store that takes a bookmark's resourceVersion (the atomic RealFIFO, C3.6, B15)."""

    def bookmark(self, resource_version: str) -> None: ...


@runtime_checkable
class ResourceVersionUpdater(Protocol):
    """A store told the resourceVersion of every event and bookmark (client-go:
    cache.ResourceVersionUpdater)."""

    def update_resource_version(self, resource_version: str) -> None: ...


@runtime_checkable
class TransformingStore(Protocol):
    """A store that transforms objects itself (client-go: cache.TransformingStore): a
    watch-list's temporary store applies the same transform (D19)."""

    transformer: Callable[[Any], Any] | None


class VeryShortWatchError(Exception):
    """A watch closed within a second without delivering anything (D14): treated as a failure."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"very short watch: {name}: Unexpected watch close - watch lasted less than a second "
            "and no items received"
        )
        self.name = name


class WatchListInconsistencyError(AssertionError):
    """The data-consistency detector found the watch-list result differs from a LIST (D20)."""


class StopRequested(Exception):
    """Internal: the stop event was set while a watch was running."""


def watch_list_gate_enabled() -> bool:
    """The WatchListClient gate (0.2): on unless KUBE_FEATURE_WatchListClient says false."""
    value = os.environ.get(WATCH_LIST_GATE_ENV)
    if value is None or value.strip() == "":
        return True
    return value.strip().lower() not in ("false", "0", "no", "off")


def env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("true", "1", "t", "yes")


def caller_name() -> str:
    """D1: the first caller `file:line` outside kubeinformers/runtime."""
    frame: FrameType | None = sys._getframe(2)  # skip this and Reflector.__init__
    while frame is not None:
        filename = frame.f_code.co_filename
        if os.path.dirname(os.path.abspath(filename)) != _RUNTIME_DIR:
            return f"{os.path.basename(filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return "reflector"


class TempStore:
    """The watch-list's temporary store (D19): keyed like a store (A2), transformed like the FIFO."""

    __slots__ = ("_items", "_transform")

    def __init__(self, transform: Callable[[Any], Any] | None) -> None:
        self._items: dict[str, Any] = {}
        self._transform = transform

    def add(self, obj: Any) -> None:
        key = deletion_handling_meta_namespace_key(obj)  # B14: the key of the object as sent
        if self._transform is not None:
            obj = apply_transform(self._transform, obj)  # F15
        self._items[key] = obj

    update = add

    def delete(self, obj: Any) -> None:
        self._items.pop(deletion_handling_meta_namespace_key(obj), None)

    def list(self) -> list[Any]:
        return list(self._items.values())

    def __len__(self) -> int:
        return len(self._items)


def check_watch_list_consistency(
    lister_watcher: ListerWatcher[Any],
    what: str,
    resource_version: str,
    streamed: list[Any],
    transform: Callable[[Any], Any] | None,
    wait_stopped: Callable[[], bool],
) -> None:
    """D20: LIST at exactly `resource_version` and compare with the streamed objects.

    Only when KUBE_WATCHLIST_INCONSISTENCY_DETECTOR is true. A failing LIST is retried every
    second (`wait_stopped` waits one and says whether to give up); a difference raises
    WatchListInconsistencyError (client-go panics).
    """
    if resource_version in ("", "0"):
        return
    options = ListOptions(resource_version=resource_version, resource_version_match="Exact")
    while True:
        try:
            listed, _ = list_pages(lister_watcher, options, DEFAULT_PAGE_SIZE)
            break
        except Exception as e:
            logger.warning("%s: consistency check list failed, retrying: %s", what, e)
            if wait_stopped():
                return
    items = [transform(i) for i in listed.items] if transform else list(listed.items)
    a = sorted(streamed, key=object_uid)
    b = sorted(items, key=object_uid)
    if a != b:
        raise WatchListInconsistencyError(
            f"{what} at RV {resource_version} differs from a LIST at the same RV "
            f"({len(a)} streamed, {len(b)} listed)"
        )


def forget_frame_locals(err: BaseException) -> None:
    """Clear the local variables of the frames `err` went through before it was caught, and
    of those its cause's and context's went through (and an exception group's members'): an
    error kept after it was handled (the reflector's last error) then holds its message and
    traceback (files, lines and functions still print) but not what the failed call held.
    Why: CPython's ssl leaves the socket of a TLS handshake the peer reset open in the frame
    that raised (`SSLSocket._create`, its `self`); a connection error kept whole kept that
    socket open until the next failure, or for good once its informer stopped.

    Left alone: the first frame of each traceback, where the exception was caught (it may
    still run), and generators' and coroutines' frames (clearing a suspended one closes it);
    a frame still running refuses (RuntimeError) and keeps its locals.
    """
    seen: set[int] = set()
    pending: list[BaseException | None] = [err]
    while pending:
        exc = pending.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        tb = exc.__traceback__
        tb = tb.tb_next if tb is not None else None
        while tb is not None:
            frame = tb.tb_frame
            if not frame.f_code.co_flags & _SUSPENDABLE:
                try:
                    frame.clear()
                except RuntimeError:
                    pass
            tb = tb.tb_next
        pending.append(exc.__cause__)
        pending.append(exc.__context__)
        if isinstance(exc, BaseExceptionGroup):
            pending.extend(exc.exceptions)


def wrap_list_error(type_description: str, err: BaseException) -> BaseException:
    """D9's wording, keeping the kind of error (callers test a 401's code or a ConnectionError)."""
    message = f"failed to list {type_description}: {err}"
    if isinstance(err, ApiStatusError):
        wrapped = ApiStatusError(
            err.code,
            err.reason,
            message,
            details=err.details if err.has_details else None,
            retry_after=err.retry_after,
        )
        wrapped.server_message = err.server_message  # the Status's own (D8 reads it)
        wrapped.reported = err.reported
        return wrapped
    if isinstance(err, ConnectionError):
        try:
            return type(err)(message)
        except Exception:
            return ConnectionError(message)
    return RuntimeError(message)


__all__ = [
    "CONSISTENCY_DETECTOR_ENV",
    "WATCH_LIST_GATE_ENV",
    "ReflectorStore",
    "StopRequested",
    "TempStore",
    "VeryShortWatchError",
    "WatchListInconsistencyError",
    "WatchStore",
    "caller_name",
    "check_watch_list_consistency",
    "env_true",
    "error_from_status",
    "forget_frame_locals",
    "watch_list_gate_enabled",
    "wrap_list_error",
]
