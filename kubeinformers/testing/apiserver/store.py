"""LocalApiServer's storage: objects as JSON dicts, one global resourceVersion, event history.

Modelled on etcd + the API server's watch cache: every write takes the next value of one
global counter (as etcd's revision), a bounded history of events lets watches resume from an
older resourceVersion and lets lists be served at an exact past resourceVersion (snapshots are
rebuilt by undoing the newer events). A resourceVersion older than the history (or older than
an explicit `compact()`) is "too old": 410 Expired. Stored dicts are never mutated after they
are stored, so readers may hold them without the lock, and each one's JSON encodings can be
cached (`Store.encoded`) as kube-apiserver's watch cache does with its cachingObject.
"""

from __future__ import annotations

import bisect
import queue
import threading
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

ObjDict = dict[str, Any]
SKey = tuple[str, str]  # (group, resource): one storage for every served version
LabelMatch = Callable[[Mapping[str, str]], bool]
FieldMatch = Callable[[Mapping[str, Any]], bool]

CLOSE_CLEAN = "clean"  # end the stream as a server-side timeout does
CLOSE_DROP = "drop"  # cut the connection (server crash / network failure)


@dataclass
class Event:
    """One write, as the watch cache keeps it: the object after and before the change."""

    rv: int
    skey: SKey
    key: str  # "namespace/name" or "name"
    type: str  # ADDED / MODIFIED / DELETED
    obj: ObjDict  # for DELETED: the last state, carrying the deletion's resourceVersion
    prev: ObjDict | None
    # encode cache: (event type, apiVersion, conversion kind, its version) -> line
    lines: dict[tuple[str, str, str | None, str], bytes] = field(default_factory=dict)


class TooOldError(Exception):
    """The resourceVersion asked for is older than what the history still holds."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class Watcher:
    """One open watch: a filter and a queue the writer fills (under the store lock)."""

    def __init__(
        self,
        skey: SKey,
        namespace: str | None,
        label_match: LabelMatch,
        field_match: FieldMatch,
        start_rv: int,
    ) -> None:
        self.skey = skey
        self.namespace = namespace
        self.label_match = label_match
        self.field_match = field_match
        self.start_rv = start_rv
        # Where the watch stands for bookmarks: its resourceVersion, or the last event it was
        # replayed / the snapshot its initial events came from (set by `Store.start_watch`).
        self.bookmark_after = start_rv
        self.queue: queue.SimpleQueue[tuple[str, Event] | str] = queue.SimpleQueue()

    def visible(self, obj: ObjDict | None) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        return self.label_match(meta.get("labels") or {}) and self.field_match(obj)

    def event_type(self, ev: Event) -> str | None:
        """The event this watcher sees (selector transitions become ADDED/DELETED)."""
        if ev.skey != self.skey or ev.rv <= self.start_rv:
            return None
        now_ok = ev.type != "DELETED" and self.visible(ev.obj)
        was_ok = self.visible(ev.prev)
        if now_ok:
            return "MODIFIED" if was_ok and ev.type == "MODIFIED" else "ADDED"
        return "DELETED" if was_ok else None

    def offer(self, ev: Event) -> None:
        typ = self.event_type(ev)
        if typ is not None:
            self.queue.put((typ, ev))

    def close(self, how: str = CLOSE_CLEAN) -> None:
        self.queue.put(how)


def object_key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


class Store:
    """All objects of all resources, one resourceVersion counter, the event history."""

    dry = False  # a dry run writes to `dry_run.DryRunStore` instead

    def __init__(self, history_size: int = 10_000) -> None:
        self.lock = threading.RLock()
        self.advanced = threading.Condition(self.lock)
        self.rv = 1
        self.history_size = history_size
        self._objects: dict[SKey, dict[str, ObjDict]] = {}
        self._keys: dict[SKey, list[str]] = {}
        self._history: deque[Event] = deque()
        self.watch_floor = self.rv  # every event with rv > watch_floor is in the history
        self.compacted = 0  # "etcd compaction": exact/continue lists below it → 410
        # The watch cache's start (an API server restart rebuilds it at the current version):
        # watches from before it → 410, lists are unaffected (served from "etcd").
        self.cache_floor = 0
        self._cache_start: dict[SKey, int] = {}  # a resource served later (a CRD's): its start
        # Per resource, the version its watch cache has seen: its last event, or the current
        # version after a consistent read (which waits for the cache to catch up). Bookmarks
        # carry it, and only a watch it has moved past gets one.
        self.cache_rv: dict[SKey, int] = {}
        self.watchers: set[Watcher] = set()
        # (skey, key) -> (the stored dict, {form: its encoding}); valid while that dict is current
        self._encoded: dict[tuple[SKey, str], tuple[ObjDict, dict[Hashable, bytes]]] = {}

    # --- reads -------------------------------------------------------------------------

    def get(self, skey: SKey, key: str) -> ObjDict | None:
        return self._objects.get(skey, {}).get(key)

    def current(self, skey: SKey, prefix: str = "") -> tuple[int, list[tuple[str, ObjDict]]]:
        """(rv, [(key, obj)] sorted by key) at the latest resourceVersion."""
        with self.lock:
            objs = self._objects.get(skey, {})
            keys = self._keys.get(skey, [])
            if prefix:
                lo = bisect.bisect_left(keys, prefix)
                hi = bisect.bisect_left(keys, prefix[:-1] + chr(ord(prefix[-1]) + 1))
                keys = keys[lo:hi]
            return self.rv, [(k, objs[k]) for k in keys]

    def snapshot(self, skey: SKey, at_rv: int, prefix: str = "") -> list[tuple[str, ObjDict]]:
        """The objects as they were at `at_rv` (TooOldError if the history no longer reaches)."""
        with self.lock:
            oldest = max(self.compacted, self.watch_floor)
            if at_rv < oldest:
                raise TooOldError(at_rv, oldest)
            if at_rv >= self.rv:
                return self.current(skey, prefix)[1]
            state = dict(self._objects.get(skey, {}))
            for ev in reversed(self._history):
                if ev.rv <= at_rv:
                    break
                if ev.skey != skey:
                    continue
                if ev.prev is None:
                    state.pop(ev.key, None)
                else:
                    state[ev.key] = ev.prev
        return sorted((k, v) for k, v in state.items() if k.startswith(prefix))

    def encoded(self, skey: SKey, obj: ObjDict, form: Hashable, make: Callable[[], bytes]) -> bytes:
        """`make()` — the encoding of `obj` in `form` — computed once while `obj` is current.

        Like kube-apiserver's cachingObject, every list and watch serving the same version of
        an object in the same form reuses one serialization. Past versions (snapshots) and
        objects no longer stored are encoded afresh, never cached.
        """
        ck = (skey, object_key(obj))
        entry = self._encoded.get(ck)
        if entry is None or entry[0] is not obj:
            if self._objects.get(skey, {}).get(ck[1]) is not obj:
                return make()
            entry = self._encoded[ck] = (obj, {})
        data = entry[1].get(form)
        if data is None:
            data = entry[1][form] = make()
        return data

    def count(self) -> int:
        with self.lock:
            return sum(len(v) for v in self._objects.values())

    # --- writes ------------------------------------------------------------------------

    def consistent_read(self, skey: SKey) -> int:
        """A read without resourceVersion: the resource's watch cache catches up to now."""
        with self.lock:
            self.cache_rv[skey] = self.rv
            return self.rv

    def bookmark_rv(self, watcher: Watcher) -> int | None:
        """The resourceVersion of a bookmark `watcher` may get now, None if none is due: the
        real watch cache sends one only once its version for the resource is past the watch's
        (no bookmark on a quiet resource, none at the version the watch already has)."""
        with self.lock:
            rv = self.cache_rv.get(watcher.skey, 0)
            return rv if rv > watcher.bookmark_after else None

    def _record(self, ev: Event) -> None:
        self.cache_rv[ev.skey] = ev.rv
        self._history.append(ev)
        while len(self._history) > self.history_size:
            self.watch_floor = self._history.popleft().rv
        for w in tuple(self.watchers):
            w.offer(ev)
        self.advanced.notify_all()

    def write(self, skey: SKey, obj: ObjDict, event_type: str | None = None) -> ObjDict:
        """Store `obj` (a fresh dict the store now owns) under the next resourceVersion."""
        with self.lock:
            key = object_key(obj)
            objs = self._objects.setdefault(skey, {})
            prev = objs.get(key)
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
            if prev is None:
                bisect.insort(self._keys.setdefault(skey, []), key)
            objs[key] = obj
            self._encoded.pop((skey, key), None)
            self._record(
                Event(
                    self.rv, skey, key, event_type or ("MODIFIED" if prev else "ADDED"), obj, prev
                )
            )
            return obj

    def remove(self, skey: SKey, key: str, final: ObjDict | None = None) -> ObjDict | None:
        """Delete; returns the last state (or `final`) carrying the deletion's resourceVersion."""
        with self.lock:
            prev = self._objects.get(skey, {}).pop(key, None)
            if prev is None:
                return None
            self._encoded.pop((skey, key), None)
            keys = self._keys[skey]
            del keys[bisect.bisect_left(keys, key)]
            self.rv += 1
            last = final or prev
            gone = dict(last, metadata=dict(last["metadata"], resourceVersion=str(self.rv)))
            self._record(Event(self.rv, skey, key, "DELETED", gone, prev))
            return gone

    # --- watches -----------------------------------------------------------------------

    def start_watch(
        self, watcher: Watcher, from_rv: int | None
    ) -> tuple[int, list[tuple[str, Event]]]:
        """Register `watcher`; replay history after `from_rv` (None: start now).

        Returns (current rv, events to send first). Raises TooOldError when `from_rv`
        is older than the history.
        """
        with self.lock:
            replay: list[tuple[str, Event]] = []
            if from_rv is not None and from_rv < self.rv:
                oldest = max(
                    self.watch_floor, self.cache_floor, self._cache_start.get(watcher.skey, 0)
                )
                if from_rv < oldest:
                    raise TooOldError(from_rv, oldest)
                watcher.start_rv = from_rv
                for ev in self._history:
                    typ = watcher.event_type(ev)
                    if typ is not None:
                        replay.append((typ, ev))
            watcher.start_rv = max(self.rv, from_rv or 0)
            watcher.bookmark_after = max(
                from_rv if from_rv is not None else self.rv, replay[-1][1].rv if replay else 0
            )
            self.watchers.add(watcher)
            return self.rv, replay

    def stop_watch(self, watcher: Watcher) -> None:
        with self.lock:
            self.watchers.discard(watcher)

    def close_watchers(self, how: str, skey: SKey | None = None) -> int:
        with self.lock:
            hit = [w for w in self.watchers if skey is None or w.skey == skey]
            for w in hit:
                self.watchers.discard(w)
                w.close(how)
            return len(hit)

    def wait_for_rv(self, rv: int, timeout: float) -> bool:
        with self.lock:
            return self.advanced.wait_for(lambda: self.rv >= rv, timeout)

    # --- faults ------------------------------------------------------------------------

    def compact(self, watch_cache: bool = True) -> int:
        """Forget history: lists at older RVs → 410; with watch_cache, watches too."""
        with self.lock:
            self.compacted = self.rv
            if watch_cache:
                self._history.clear()
                self.watch_floor = self.rv
            return self.rv

    def start_watch_cache(self, skey: SKey) -> None:
        """A resource starts being served (its CRD was created): its watch cache starts at the
        current version, so a watch from before that gets 410."""
        with self.lock:
            self._cache_start[skey] = self.rv

    def restart_watch_cache(self) -> None:
        """An API server restart: its watch caches start again at the current version, so a
        watch from any older version gets 410 (lists at older versions still work until etcd
        compacts them)."""
        with self.lock:
            self.cache_floor = self.rv
            for skey in self.cache_rv:
                self.cache_rv[skey] = self.rv

    def renumber(self, start: int = 1) -> None:
        """Restart the counter low (etcd restored from an old backup): all RVs change."""
        with self.lock:
            everything = sorted(
                (
                    (int(o["metadata"]["resourceVersion"]), s, k, o)
                    for s, objs in self._objects.items()
                    for k, o in objs.items()
                ),
                key=lambda t: t[0],
            )
            self.rv = start
            for _, skey, key, obj in everything:
                self.rv += 1
                self._objects[skey][key] = dict(
                    obj, metadata=dict(obj["metadata"], resourceVersion=str(self.rv))
                )
            self._history.clear()
            self._encoded.clear()
            self.watch_floor = self.compacted = self.rv

    def drop_resource(self, skey: SKey) -> list[ObjDict]:
        """Delete every object of a resource (its CRD went away); returns what was deleted."""
        with self.lock:
            keys = list(self._keys.get(skey, []))
            return [o for o in (self.remove(skey, k) for k in keys) if o is not None]

    def resources(self) -> list[SKey]:
        """Every resource that has held an object."""
        with self.lock:
            return list(self._objects)

    def all_items(self, skeys: Iterable[SKey]) -> list[tuple[SKey, ObjDict]]:
        with self.lock:
            return [(s, o) for s in skeys for o in self._objects.get(s, {}).values()]


_encode = msgspec.json.Encoder().encode


def encode(obj: Any) -> bytes:
    """Compact UTF-8 JSON, as the API server writes it (msgspec: ~5x json.dumps on big lists)."""
    return _encode(obj)
