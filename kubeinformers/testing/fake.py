"""An in-memory ListerWatcher for tests (client-go's FakeControllerSource, in spirit).

`FakeListerWatcher` keeps objects in memory and a resourceVersion counter. `add`, `modify`
and `delete` store a copy of the object carrying the next resourceVersion and send the
matching event to every open watch. `list` answers with the current state (optionally paged),
`watch` replays the events after the requested resourceVersion and then streams new ones;
from "" or "0" it starts with the current state as synthetic ADDEDs, except that once a `list`
answered "0" (nothing written yet), a watch from "0" resumes right after that empty state.
Faults: `drop_watches()` closes every open watch cleanly (the reflector re-watches),
`expire(rv)` makes older resourceVersions answer 410 Expired (the reflector relists), and
`fail_next_list` / `fail_next_watch` make the next requests raise.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import Any, Generic, TypeVar, cast

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.keys import meta_namespace_key, object_resource_version
from kubeinformers.runtime.api.listwatch import (
    INITIAL_EVENTS_END_ANNOTATION,
    ListOptions,
    ObjectList,
    Status,
    WatchEvent,
    WatchEventType,
)
from kubeinformers.runtime.clock import Now

T = TypeVar("T")

_MAX_LIMIT_TOKEN_SEP = ":"
# Paged lists in progress whose first-page state is kept; an older one's continue gets 410.
_MAX_SNAPSHOTS = 16


def _expired_status(message: str) -> Status:
    return Status(status="Failure", message=message, reason="Expired", code=410)


def _with_resource_version(obj: T, rv: str) -> T:
    """A copy of `obj` carrying `rv`; the caller's object is never mutated."""
    if isinstance(obj, Mapping):
        new_map: MutableMapping[str, Any] = copy.deepcopy(dict(obj))
        new_meta = dict(new_map.get("metadata") or {})
        new_meta["resourceVersion"] = rv
        new_map["metadata"] = new_meta
        return cast(T, new_map)
    model_copy = getattr(obj, "model_copy", None)
    if not callable(model_copy):
        raise TypeError(
            f"FakeListerWatcher stores pydantic models or mappings, not {type(obj).__qualname__}"
        )
    metadata = getattr(obj, "metadata", None)
    if metadata is None:
        raise ValueError(
            f"{type(obj).__qualname__} object has no metadata; give it metadata with a name"
        )
    new_metadata = metadata.model_copy(update={"resource_version": rv})
    return cast(T, model_copy(update={"metadata": new_metadata}, deep=True))


class FakeWatch(Generic[T]):
    """A thread-safe watch stream: iteration blocks for events and ends on `stop()`."""

    def __init__(
        self,
        owner: FakeListerWatcher[T],
        timeout_seconds: int | None,
        clock: Now = time.monotonic,
    ) -> None:
        self._owner = owner
        self._events: deque[WatchEvent[T]] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._stopped = False
        self._finish_after_drain = False
        self._clock = clock
        self._deadline = clock() + timeout_seconds if timeout_seconds else None

    def _push(self, event: WatchEvent[T]) -> None:
        with self._cond:
            if not self._stopped:
                self._events.append(event)
                self._cond.notify()

    def _finish(self) -> None:
        """End the stream after the events already queued (a server closing the stream)."""
        with self._cond:
            self._finish_after_drain = True
            self._cond.notify_all()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> None:
        """End iteration at once, from any thread; idempotent."""
        with self._cond:
            self._stopped = True
            self._events.clear()
            self._cond.notify_all()
        self._owner._forget(self)

    def __iter__(self) -> Iterator[WatchEvent[T]]:
        while True:
            with self._cond:
                while not self._events and not self._stopped and not self._finish_after_drain:
                    if self._deadline is None:
                        self._cond.wait()
                    else:
                        remaining = self._deadline - self._clock()
                        if remaining <= 0:
                            self._finish_after_drain = True
                            break
                        self._cond.wait(remaining)
                if self._stopped or not self._events:
                    break
                event = self._events.popleft()
            yield event
        self._owner._forget(self)


class FakeListerWatcher(Generic[T]):
    """An in-memory source of objects that speaks the ListerWatcher protocol.

    Objects are generated models or mappings with a "metadata" mapping. Stored objects are
    copies; `list` and `watch` hand out the stored copies, so treat them as read-only.
    Watch-list (D17) is declared unsupported unless `watch_list=True`; then a watch with
    `send_initial_events` streams an ADDED per object and a BOOKMARK ending the initial events,
    built by `bookmark_factory(resource_version, annotations)` (default: a mapping, or
    `model.model_validate(...)` when `model` is given).
    """

    def __init__(
        self,
        objects: Iterable[T] = (),
        *,
        model: type[T] | None = None,
        watch_list: bool = False,
        bookmark_factory: Callable[[str, dict[str, str]], T] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._rv = 0
        self._objects: dict[str, T] = {}
        self._history: list[tuple[int, WatchEvent[T]]] = []
        # resourceVersion -> the sorted objects at it, for continue tokens (consistent pages)
        self._snapshots: OrderedDict[int, list[T]] = OrderedDict()
        self._expired_below = 0
        self._watches: list[FakeWatch[T]] = []
        # A list answered "0": a watch from "0" then means "after that (empty) state", not
        # "any version" (a real API server never lists at "0": etcd's revisions start at 1).
        self._listed_zero = False
        self._list_errors: deque[BaseException] = deque()
        self._watch_errors: deque[BaseException] = deque()
        self._model = model
        self._watch_list = watch_list
        self._bookmark_factory = bookmark_factory
        self.list_calls: list[ListOptions] = []
        self.watch_calls: list[ListOptions] = []
        for obj in objects:
            self.add(obj)

    # -- writes -------------------------------------------------------------------------------

    def _write(self, type_: WatchEventType, obj: T, notify: bool) -> T:
        key = meta_namespace_key(obj)
        with self._lock:
            if type_ == "ADDED" and key in self._objects:
                raise ValueError(f"{key} already exists in the fake source; use modify()")
            if type_ != "ADDED" and key not in self._objects:
                raise KeyError(f"{key} is not in the fake source")
            self._rv += 1
            stored = _with_resource_version(obj, str(self._rv))
            if type_ == "DELETED":
                del self._objects[key]
            else:
                self._objects[key] = stored
            if notify:
                event: WatchEvent[T] = WatchEvent(type_, stored)
                self._history.append((self._rv, event))
                for w in self._watches:
                    w._push(event)
        return stored

    def add(self, obj: T, *, notify: bool = True) -> T:
        """Store a copy of a new object at the next resourceVersion; watches get ADDED.

        With `notify=False` (also on `modify`/`delete`) the change is made but its event is
        lost: no watch ever sees it, only a relist does.
        """
        return self._write("ADDED", obj, notify)

    def modify(self, obj: T, *, notify: bool = True) -> T:
        """Replace a stored object; watches get MODIFIED."""
        return self._write("MODIFIED", obj, notify)

    def delete(self, obj: T, *, notify: bool = True) -> T:
        """Remove an object; watches get DELETED with its final state at a new resourceVersion."""
        return self._write("DELETED", obj, notify)

    def get(self, key: str) -> T | None:
        with self._lock:
            return self._objects.get(key)

    @property
    def resource_version(self) -> str:
        """The current resourceVersion (that of the last write)."""
        with self._lock:
            return str(self._rv)

    # -- faults -------------------------------------------------------------------------------

    def drop_watches(self) -> None:
        """Close every open watch cleanly, after the events already sent to it."""
        with self._lock:
            watches = list(self._watches)
        for w in watches:
            w._finish()

    def expire(self, older_than_rv: str | int) -> None:
        """Make resourceVersions older than `older_than_rv` answer 410 Expired (a compaction)."""
        threshold = int(older_than_rv)
        with self._lock:
            self._expired_below = max(self._expired_below, threshold)
            self._history = [(rv, e) for rv, e in self._history if rv >= threshold]
            for rv in [rv for rv in self._snapshots if rv < threshold]:
                del self._snapshots[rv]

    def fail_next_list(self, error: BaseException, times: int = 1) -> None:
        """The next `times` list calls raise `error`."""
        with self._lock:
            self._list_errors.extend([error] * times)

    def fail_next_watch(self, error: BaseException, times: int = 1) -> None:
        """The next `times` watch calls raise `error`."""
        with self._lock:
            self._watch_errors.extend([error] * times)

    def send_bookmark(self) -> None:
        """Send a BOOKMARK at the current resourceVersion to watches that asked for them."""
        with self._lock:
            event: WatchEvent[T] = WatchEvent("BOOKMARK", self._bookmark(str(self._rv), {}))
            for w in self._watches:
                w._push(event)

    def open_watches(self) -> int:
        with self._lock:
            return len(self._watches)

    def _forget(self, w: FakeWatch[T]) -> None:
        with self._lock:
            if w in self._watches:
                self._watches.remove(w)

    # -- ListerWatcher ------------------------------------------------------------------------

    def is_watch_list_semantics_unsupported(self) -> bool:
        return not self._watch_list

    def _too_old(self, rv: str | None) -> bool:
        if not rv or rv == "0":
            return False
        return int(rv) < self._expired_below

    def list(self, options: ListOptions) -> ObjectList[T]:
        with self._lock:
            self.list_calls.append(options)
            if self._list_errors:
                raise self._list_errors.popleft()
            if options.continue_:
                list_rv, _, offset_s = options.continue_.partition(_MAX_LIMIT_TOKEN_SEP)
                snapshot = self._snapshots.get(int(list_rv))
                if int(list_rv) < self._expired_below or snapshot is None:
                    raise ApiStatusError(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent "
                        "list result. You can start a new list without the continue parameter.",
                    )
                offset = int(offset_s)
            else:
                if self._too_old(options.resource_version):
                    raise ApiStatusError(
                        410,
                        "Expired",
                        f"too old resource version: {options.resource_version} "
                        f"({self._expired_below})",
                    )
                list_rv, offset = str(self._rv), 0
                if self._rv == 0:
                    self._listed_zero = True
                snapshot = [self._objects[k] for k in sorted(self._objects)]
            # Every page comes from the state at the first page's resourceVersion, as etcd
            # serves a continue token: writes in between must neither shift keys out of the
            # list nor show through (the watch from that resourceVersion replays them).
            limit = options.limit or 0
            end = offset + limit if limit > 0 else len(snapshot)
            items = snapshot[offset:end]
            continue_ = None
            if end < len(snapshot):
                continue_ = f"{list_rv}{_MAX_LIMIT_TOKEN_SEP}{end}"
                self._snapshots[int(list_rv)] = snapshot
                self._snapshots.move_to_end(int(list_rv))
                while len(self._snapshots) > _MAX_SNAPSHOTS:
                    self._snapshots.popitem(last=False)
            return ObjectList(items=items, resource_version=list_rv, continue_=continue_)

    def watch(self, options: ListOptions) -> FakeWatch[T]:
        with self._lock:
            self.watch_calls.append(options)
            if self._watch_errors:
                raise self._watch_errors.popleft()
            w: FakeWatch[T] = FakeWatch(self, options.timeout_seconds)
            rv = options.resource_version
            if options.send_initial_events and self._watch_list:
                for key in sorted(self._objects):
                    w._push(WatchEvent("ADDED", self._objects[key]))
                bookmark = self._bookmark(str(self._rv), {INITIAL_EVENTS_END_ANNOTATION: "true"})
                w._push(WatchEvent("BOOKMARK", bookmark))
            elif not rv or (rv == "0" and not self._listed_zero):
                # "Start at most recent" / "any": the current state as synthetic ADDEDs.
                for key in sorted(self._objects):
                    w._push(WatchEvent("ADDED", self._objects[key]))
            elif self._too_old(rv) or (rv == "0" and self._expired_below > 0):
                w._push(WatchEvent("ERROR", _expired_status(f"too old resource version: {rv}")))
                w._finish()
                return w
            else:
                since = int(rv)
                for event_rv, event in self._history:
                    if event_rv > since:
                        w._push(event)
            self._watches.append(w)
            return w

    def _bookmark(self, rv: str, annotations: dict[str, str]) -> T:
        if self._bookmark_factory is not None:
            return self._bookmark_factory(rv, annotations)
        body = {"metadata": {"resourceVersion": rv, "annotations": annotations}}
        validate = getattr(self._model, "model_validate", None)
        if callable(validate):
            return cast(T, validate(body))
        return cast(T, body)

    def __repr__(self) -> str:
        return f"FakeListerWatcher({len(self._objects)} objects, rv {self._rv})"


def resource_version_of(obj: object) -> int:
    """The integer resourceVersion the fake gave `obj` (handy in assertions)."""
    return int(object_resource_version(obj))


__all__ = ["FakeListerWatcher", "FakeWatch", "resource_version_of"]
