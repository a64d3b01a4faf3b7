"""Is an informer healthy? A snapshot a readiness probe can read (`informer.health()`).

An informer is healthy when it has synced and its list/watch is not failing: the last
error is kept with the count of consecutive failures (reset by the next processed event or
successful list). `last_event_age` is the time since the informer last processed anything
from the server (an event, a list, and with the atomic queue a bookmark); a quiet resource
has an old one, so it is reported but not judged. The factory aggregates every informer's
(`factory.health()`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = ["FactoryHealth", "HealthTracker", "InformerHealth"]

# Failures in a row after which an informer counts as unhealthy (the reflector backs off
# between attempts, so this is tens of seconds of not being able to list or watch).
UNHEALTHY_AFTER_FAILURES = 3
# `describe()` lists at most this many problems per informer.
_MAX_PROBLEM_LINES = 5


@dataclass(frozen=True, slots=True)
class InformerHealth:
    """One informer's state: synced, seconds since the last processed event (None: nothing
    processed yet), its last list/watch error and how many failed in a row."""

    name: str
    synced: bool
    last_event_age: float | None
    last_error: str | None
    consecutive_failures: int
    stopped: bool = False
    # Section N: the shard cached (`uid in [0x…, 0x…)`), and who selects its objects:
    # "server" (the API server applies the shardSelector), "client" (it does not: every object
    # is received and filtered here) or "pending" (nothing listed yet); None when not sharded.
    shard: str | None = None
    shard_filter: str | None = None
    # N8: the shard changed and the cache does not hold the new one yet (`synced` is False).
    resharding: bool = False
    # B18: cached objects an index function failed on: key -> index name -> the error. The
    # cache and the notifications are right; only lookups through that index miss them.
    unindexed_objects: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # G10: handlers reported as falling behind, each described (name, buffer, oldest age).
    handlers_behind: tuple[str, ...] = ()
    # G7: handlers whose on_add raised on an initial-list add: their registrations will never
    # report synced (a ReconcileLoop or code waiting on `registration.has_synced()` waits on).
    handlers_unsynced: tuple[str, ...] = ()

    @property
    def healthy(self) -> bool:
        """Synced, running, list/watch not failing. Unindexed objects and handlers behind do
        not make an informer unhealthy (a restart would not cure them): see `problems()`."""
        return (
            self.synced
            and not self.stopped
            and self.consecutive_failures < UNHEALTHY_AFTER_FAILURES
        )

    def problems(self) -> list[str]:
        """What needs the user's attention even when `healthy`: objects left out of an index
        (B18), handlers falling behind (G10), handlers that will never report synced (G7)."""
        out: list[str] = []
        for key, by_index in sorted(self.unindexed_objects.items()):
            for index_name, error in sorted(by_index.items()):
                out.append(f"{key} is not in index {index_name!r}: {error}")
        out.extend(f"handler {h}" for h in self.handlers_behind)
        out.extend(f"handler {h}" for h in self.handlers_unsynced)
        return out


@dataclass(frozen=True, slots=True)
class FactoryHealth:
    """Every started informer's health; `healthy` when all are (a readiness probe's answer)."""

    informers: Mapping[str, InformerHealth]
    # N11: the factory's shard, a shard handoff in progress (set by whoever assigns shards,
    # `set_shard_state`) and whether this replica was assigned no range at all.
    shard: str | None = None
    shard_transition: str | None = None
    holds_no_range: bool = False

    @property
    def healthy(self) -> bool:
        return (
            all(h.healthy for h in self.informers.values())
            and self.shard_transition is None
            and not self.holds_no_range
        )

    def unhealthy(self) -> list[InformerHealth]:
        return [h for h in self.informers.values() if not h.healthy]

    def describe(self) -> str:
        """One line per informer, for a probe's response body (after one on the shard, if
        sharded or assigned)."""
        lines = []
        if self.shard or self.shard_transition or self.holds_no_range:
            state = "NOT OK" if self.shard_transition or self.holds_no_range else "ok"
            lines.append(
                f"shard: {state} "
                + ("holds no range" if self.holds_no_range else (self.shard or "every object"))
                + (f" in transition: {self.shard_transition}" if self.shard_transition else "")
            )
        for name, h in sorted(self.informers.items()):
            age = "never" if h.last_event_age is None else f"{h.last_event_age:.1f}s ago"
            state = "ok" if h.healthy else "NOT OK"
            problems = h.problems()
            lines.append(
                f"{name}: {state} synced={h.synced} last_event={age} "
                f"failures={h.consecutive_failures}"
                + (f" shard={h.shard} filter={h.shard_filter}" if h.shard else "")
                + (" resharding" if h.resharding else "")
                + (f" last_error={h.last_error}" if h.last_error else "")
                + (f" unindexed={len(h.unindexed_objects)}" if h.unindexed_objects else "")
                + (f" handlers_behind={len(h.handlers_behind)}" if h.handlers_behind else "")
                + (f" handlers_unsynced={len(h.handlers_unsynced)}" if h.handlers_unsynced else "")
            )
            lines.extend(f"  {p}" for p in problems[:_MAX_PROBLEM_LINES])
            if len(problems) > _MAX_PROBLEM_LINES:
                lines.append(f"  ... and {len(problems) - _MAX_PROBLEM_LINES} more")
        return "\n".join(lines)


def describe_error(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


class HealthTracker:
    """Written by the informer's threads (events processed, errors reported), read anywhere."""

    __slots__ = (
        "_clock",
        "_failures",
        "_last_error",
        "_last_event",
        "_lock",
        "_served_seen",
        "_watch_errors_seen",
    )

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._last_event: float | None = None
        self._last_error: str | None = None
        self._failures = 0
        # The reflector retries failed watches itself (without the error handler); its
        # watch_errors counter at the last processed event is the baseline for "in a row".
        self._watch_errors_seen = 0
        # The reflector's lists and watches that succeeded (ReflectorCounters: lists +
        # watch_starts) when the last failure was reported: one more since means list and
        # watch work again, also for a resource with no objects, where no event comes.
        self._served_seen = 0

    def event_processed(self, watch_errors: int, ends_failures: bool = True) -> None:
        """An event processed; `ends_failures`: an object's own delta. The atomic queue's
        whole-store entries (a relist swapped in at once, a resync, a bookmark) do not: the
        queue may hand a relist out after a later failure (the first re-watch's, under load),
        and the list or watch that delivered it ended the failures before it already
        (`served`)."""
        self._last_event = self._clock()
        if not ends_failures:
            return
        if self._failures or self._watch_errors_seen != watch_errors:
            with self._lock:
                self._failures = 0
                self._watch_errors_seen = watch_errors

    def error(self, err: BaseException, served: int = 0) -> None:
        """A list or watch failure; `served`: the lists and watches that succeeded so far."""
        with self._lock:
            self._failures += 1
            self._last_error = describe_error(err)
            self._served_seen = served

    def snapshot(
        self,
        name: str,
        synced: bool,
        stopped: bool,
        watch_errors: int,
        last_error: BaseException | None = None,
        *,
        shard: str | None = None,
        shard_filter: str | None = None,
        resharding: bool = False,
        unindexed: Mapping[str, Mapping[str, str]] | None = None,
        handlers_behind: tuple[str, ...] = (),
        handlers_unsynced: tuple[str, ...] = (),
        served: int = 0,
    ) -> InformerHealth:
        """`last_error`: the reflector's, which also has the failures it retries by itself
        (they reach no error handler); else the last one the error handler saw. `served`:
        the lists and watches that succeeded so far (one since the last failure ends the
        failures in a row, as a processed event does)."""
        with self._lock:
            if served > self._served_seen:
                self._failures = 0
                self._watch_errors_seen = watch_errors
                self._served_seen = served
            last, error = self._last_event, self._last_error
            failures = self._failures + max(0, watch_errors - self._watch_errors_seen)
        if last_error is not None:
            error = describe_error(last_error)
        return InformerHealth(
            name=name,
            synced=synced,
            last_event_age=None if last is None else max(0.0, self._clock() - last),
            last_error=error,
            consecutive_failures=failures,
            stopped=stopped,
            shard=shard,
            shard_filter=shard_filter,
            resharding=resharding,
            unindexed_objects=unindexed or {},
            handlers_behind=handlers_behind,
            handlers_unsynced=handlers_unsynced,
        )
