"""The shard ring's state and its Lease steps, shared by the thread face (`ring.ShardRing`)
and the asyncio face (`async_ring.AsyncShardRing`) (section N, rules N20-N23).

A replica is a member of the ring while it renews its member Lease within `renew_deadline`.
Its *desired* buckets are what rendezvous hashing (`assignment.assign`) gives it among the
live members; the buckets it *holds* (works on) move towards them in steps the faces drive:

1. `observe()` lists the ring's Leases and plans a handoff: held buckets no longer desired
   (to release) and desired buckets that no other live member's Lease claims (free to start).
2. Release: the face stops admitting the released buckets' keys and waits for those running
   (its holders' `stop_admitting`), then `released()` removes them from this Lease's claim
   (one Lease update) and the face narrows its informers.
3. Start: `claim()` writes the free buckets into this Lease's claim, lists the Leases again and
   withdraws any bucket another live member claims too (two replicas claiming at once both
   withdraw and retry); only the rest are started (the face widens its informers and admits
   their keys).

So a bucket's claim in a Lease always covers the work on it (claimed before started, released
after drained), and a bucket is started only when no live member claims it: at most one
replica works on a key at a time. A member whose Lease expired (not renewed within its
duration, on the observer's clock) claims nothing; it stopped its work at `renew_deadline`,
before anyone could judge its Lease expired (`lose()`).

Blocking calls (the Lease requests) are plain methods; the asyncio face runs them in threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field

from kubeinformers.runtime.api.shard import Shard, ShardKey
from kubeinformers.runtime.clock import Now
from kubeinformers.runtime.leaderelection.elector import check_lease_timing, lease_seconds
from kubeinformers.runtime.metrics import HistogramSnapshot, LatencyRecorder, track_ring
from kubeinformers.runtime.ring.assignment import BUCKETS, assign, shard_of
from kubeinformers.runtime.ring.members import (
    ABANDONED_AFTER,
    MemberLeases,
    MemberView,
    claims_of,
)

__all__ = [
    "HANDOFF_LATENCY_BUCKETS",
    "Handoff",
    "RingConfig",
    "RingCore",
    "RingHealth",
    "RingMetrics",
]

_log = logging.getLogger("kubeinformers.ring")

# Handoff latency buckets (seconds): a live handoff takes a Lease update or two, a crashed
# member's buckets wait for its Lease to expire (15 s by default).
HANDOFF_LATENCY_BUCKETS: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0)


@dataclass(frozen=True)
class RingConfig:
    """A ring's name and this replica's identity (its member Lease is `<ring>-<identity>` in
    `namespace`), the shard key its buckets hash, and the Lease timing (client-go's leader
    election defaults: lease 15 s, renew deadline 10 s, retry every 2 s)."""

    ring: str
    identity: str
    namespace: str = "default"
    key: ShardKey = "uid"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    clock: Now = field(default=time.monotonic)

    def validate(self) -> None:
        check_lease_timing(self.lease_duration, self.renew_deadline, self.retry_period)


@dataclass(frozen=True, slots=True)
class Handoff:
    """One planned step: `release` (held, no longer desired), `free` (desired, not held, no
    other live member claims them: may be started), `waiting` (desired but still claimed by
    another live member: its owner has not released them yet)."""

    release: frozenset[int]
    free: frozenset[int]
    waiting: frozenset[int]


@dataclass(frozen=True, slots=True)
class RingHealth:
    """This replica's place in the ring (rule N23). `healthy`: a member that holds a range and
    is not in transition; `problems()` says why not."""

    ring: str
    identity: str
    member: bool
    members: tuple[str, ...]
    held: str | None  # the held shard described, None when nothing is held
    held_buckets: int
    desired_buckets: int
    waiting_buckets: int
    releasing_buckets: int
    last_error: str | None = None

    @property
    def in_transition(self) -> bool:
        """Buckets are still to be started or released to match the live members."""
        return (
            self.waiting_buckets > 0
            or self.releasing_buckets > 0
            or (self.held_buckets != self.desired_buckets)
        )

    @property
    def holds_no_range(self) -> bool:
        return self.held_buckets == 0

    @property
    def healthy(self) -> bool:
        return self.member and not self.holds_no_range and not self.in_transition

    def problems(self) -> list[str]:
        out = []
        if not self.member:
            out.append(
                "not a member: its Lease is not renewed"
                + (f" ({self.last_error})" if self.last_error else "")
            )
        if self.holds_no_range:
            out.append("holds no range")
        if self.in_transition:
            out.append(
                f"in transition: holds {self.held_buckets} of {self.desired_buckets} buckets "
                f"assigned, {self.waiting_buckets} waiting for their owner to release them"
            )
        return out

    def describe(self) -> str:
        state = "ok" if self.healthy else "NOT OK"
        line = (
            f"ring {self.ring} member {self.identity}: {state} members={len(self.members)} "
            f"buckets={self.held_buckets}/{BUCKETS}" + (f" shard={self.held}" if self.held else "")
        )
        return "\n".join([line, *(f"  {p}" for p in self.problems())])


@dataclass(frozen=True, slots=True)
class RingMetrics:
    """Counters since the ring started: buckets started and released (moves), handoffs and
    their latency (from seeing buckets assigned to this replica to starting them), Lease
    renewals that failed, and times the Lease was lost (work stopped at `renew_deadline`).
    Exported by `register_prometheus` as `kubeinformers_ring_*`, labelled ring and identity."""

    members: int
    buckets_held: int
    buckets_started: int
    buckets_released: int
    handoffs: int
    handoff_latency: HistogramSnapshot
    renew_failures: int
    lost: int


class RingCore:
    """The state machine behind both faces; thread-safe."""

    def __init__(self, config: RingConfig, leases: MemberLeases) -> None:
        config.validate()
        self.config = config
        self.leases = leases
        self._clock = config.clock
        self._lock = threading.Lock()  # the state below
        self._write_lock = threading.Lock()  # one Lease request at a time
        self._view = MemberView()
        self._held: frozenset[int] = frozenset()
        self._claimed: frozenset[int] = frozenset()
        self._desired: frozenset[int] = frozenset()
        self._waiting: frozenset[int] = frozenset()
        self._releasing: frozenset[int] = frozenset()
        self._members: tuple[str, ...] = ()
        self._member = False
        self._renewed_at: float | None = None  # when the last successful renewal was SENT
        self._wanted_since: dict[int, float] = {}
        self._last_error: str | None = None
        self._told_error = False
        self._latency = LatencyRecorder(HANDOFF_LATENCY_BUCKETS)
        self._started = self._released = self._handoffs = 0
        self._renew_failures = self._lost = 0
        self._running = False
        self._log = _log.getChild(config.ring)
        track_ring(self)

    def running(self) -> bool:
        """Joined (first renewal attempted) and not yet left."""
        return self._running

    # --------------------------------------------------------------------------- views

    def shard(self) -> Shard | None:
        """The shard of the held buckets (None: nothing held)."""
        with self._lock:
            return shard_of(self._held, self.config.key)

    def held(self) -> frozenset[int]:
        with self._lock:
            return self._held

    def is_member(self) -> bool:
        with self._lock:
            return self._member

    def health(self) -> RingHealth:
        with self._lock:
            held = shard_of(self._held, self.config.key)
            return RingHealth(
                ring=self.config.ring,
                identity=self.config.identity,
                member=self._member,
                members=self._members,
                held=held.describe() if held is not None else None,
                held_buckets=len(self._held),
                desired_buckets=len(self._desired),
                waiting_buckets=len(self._waiting),
                releasing_buckets=len(self._releasing),
                last_error=self._last_error,
            )

    def metrics(self) -> RingMetrics:
        with self._lock:
            return RingMetrics(
                members=len(self._members),
                buckets_held=len(self._held),
                buckets_started=self._started,
                buckets_released=self._released,
                handoffs=self._handoffs,
                handoff_latency=self._latency.snapshot(),
                renew_failures=self._renew_failures,
                lost=self._lost,
            )

    # --------------------------------------------------------------------------- Lease steps

    def _request_timeout(self) -> float:
        """A member's Lease request (a renewal, and every list or delete of a handoff step)
        must not outlast its renew deadline: the time left until it. Why every request: the
        faces drive a step's requests holding the lock that stopping all work at the deadline
        takes, so a request hanging past the deadline would hold the stop back."""
        with self._lock:
            if not self._member or self._renewed_at is None:
                return self.config.renew_deadline
            left = self._renewed_at + self.config.renew_deadline - self._clock()
        return max(left, 0.05)

    def renew(self) -> bool:
        """Write this replica's Lease with the buckets claimed; True on success."""
        self._running = True
        sent = self._clock()
        with self._write_lock:
            with self._lock:
                claimed = self._claimed
            try:
                self.leases.write(
                    claimed, lease_seconds(self.config.lease_duration), self._request_timeout()
                )
            except Exception as err:
                with self._lock:
                    self._renew_failures += 1
                    self._last_error = f"{type(err).__name__}: {err}"
                    first = not self._told_error
                    self._told_error = True
                (self._log.warning if first else self._log.debug)(
                    "ring %s: cannot renew member lease %s: %s",
                    self.config.ring,
                    self.leases.describe(),
                    err,
                )
                return False
        with self._lock:
            joined = not self._member
            self._member = True
            self._renewed_at = sent
            if self._told_error:
                self._told_error = False
                self._last_error = None
                self._log.info(
                    "ring %s: member lease %s renewed again",
                    self.config.ring,
                    self.leases.describe(),
                )
        if joined:
            self._log.info(
                "ring %s: %s joined (member lease %s)",
                self.config.ring,
                self.config.identity,
                self.leases.describe(),
            )
        return True

    def deadline_exceeded(self) -> bool:
        """A member whose last successful renewal was sent more than `renew_deadline` ago:
        it must stop all work now (`lose()`), before any observer may judge its Lease
        expired (they wait `lease_duration` from seeing its last renewal)."""
        with self._lock:
            return (
                self._member
                and self._renewed_at is not None
                and self._clock() - self._renewed_at > self.config.renew_deadline
            )

    def lose(self) -> None:
        """After the face has stopped all work: hold and claim nothing, not a member until a
        renewal succeeds again."""
        with self._lock:
            self._member = False
            self._held = self._claimed = self._desired = frozenset()
            self._waiting = self._releasing = frozenset()
            self._wanted_since.clear()
            self._lost += 1
        self._log.warning(
            "ring %s: %s could not renew its member lease %s within %.1f s: stopped all its "
            "work; it rejoins once a renewal succeeds",
            self.config.ring,
            self.config.identity,
            self.leases.describe(),
            self.config.renew_deadline,
        )

    def observe(self) -> Handoff | None:
        """List the ring and plan the next handoff step (None: not a member, or the list
        failed; the next tick tries again)."""
        if not self.is_member():
            return None
        try:
            listed = self.leases.list(self._request_timeout())
        except Exception as err:
            self._log.debug("ring %s: cannot list member leases: %s", self.config.ring, err)
            return None
        now = self._clock()
        with self._lock:
            if not self._member:
                return None
            live = self._view.observe(listed, now)
            identity = self.config.identity
            members = set(live) | {identity}
            desired = assign(members)[identity]
            others = claims_of(live, identity)
            release = self._held - desired
            wanted = desired - self._held
            free = wanted - others
            waiting = wanted & others
            for b in list(self._wanted_since):
                if b not in wanted:
                    del self._wanted_since[b]
            for b in wanted:
                self._wanted_since.setdefault(b, now)
            if tuple(sorted(members)) != self._members:
                self._log.info(
                    "ring %s: members %s; %s is assigned %d of %d buckets",
                    self.config.ring,
                    ", ".join(sorted(members)),
                    identity,
                    len(desired),
                    BUCKETS,
                )
            self._members = tuple(sorted(members))
            self._desired = desired
            self._waiting = waiting
            self._releasing = release
            abandoned = self._view.abandoned(now)
        for name, rv in abandoned.items():
            try:
                if self.leases.delete_abandoned(name, rv, self._request_timeout()):
                    self._log.info(
                        "ring %s: deleted member lease %s/%s, unchanged for %d lease durations",
                        self.config.ring,
                        self.leases.namespace,
                        name,
                        ABANDONED_AFTER,
                    )
            except Exception as err:
                self._log.debug("ring %s: cannot delete lease %s: %s", self.config.ring, name, err)
        return Handoff(release=release, free=free, waiting=waiting)

    def released(self, buckets: Collection[int]) -> bool:
        """The face has drained `buckets`: stop holding and claiming them (one Lease update;
        on failure the next renewal writes it)."""
        gone = frozenset(buckets)
        with self._lock:
            self._held -= gone
            self._claimed -= gone
            self._releasing -= gone
            self._released += len(gone)
        self._log.info(
            "ring %s: %s released %d buckets", self.config.ring, self.config.identity, len(gone)
        )
        return self.renew()

    def claim(self, buckets: Collection[int]) -> frozenset[int]:
        """Claim `buckets` in this Lease, then list again and give back those another live
        member claims too; returns the buckets now held and to be started."""
        wanted = frozenset(buckets)
        if not wanted:
            return frozenset()
        with self._lock:
            self._claimed |= wanted
        if not self.renew():
            with self._lock:
                self._claimed -= wanted - self._held
            return frozenset()
        try:
            listed = self.leases.list(self._request_timeout())
        except Exception as err:
            self._log.debug("ring %s: cannot list member leases: %s", self.config.ring, err)
            with self._lock:
                self._claimed -= wanted - self._held
            self.renew()
            return frozenset()
        now = self._clock()
        with self._lock:
            live = self._view.observe(listed, now)
            contested = wanted & claims_of(live, self.config.identity)
            started = wanted - contested
            if contested:
                self._claimed -= contested
            if (
                not self._member
                or self._renewed_at is None
                or self._clock() - self._renewed_at > self.config.renew_deadline
            ):
                self._claimed -= started  # not renewed in time: start nothing
                return frozenset()
            self._held |= started
            self._waiting -= started
            if started:
                self._started += len(started)
                self._handoffs += 1
                oldest = min(self._wanted_since.get(b, now) for b in started)
                self._latency.observe(now - oldest)
                for b in started:
                    self._wanted_since.pop(b, None)
        if contested:
            self._log.info(
                "ring %s: %d buckets claimed by another member at the same time; withdrawn, "
                "retried at the next tick",
                self.config.ring,
                len(contested),
            )
            self.renew()
        if started:
            self._log.info(
                "ring %s: %s started %d buckets",
                self.config.ring,
                self.config.identity,
                len(started),
            )
        return started

    def leave(self) -> None:
        """After the face has stopped all work: delete the member Lease, so the others take
        its buckets at once instead of after its expiry."""
        with self._lock:
            self._held = self._claimed = self._desired = frozenset()
            self._member = False
            self._running = False
        with self._write_lock:
            try:
                self.leases.delete(self._request_timeout())
            except Exception as err:
                self._log.warning(
                    "ring %s: could not delete member lease %s (%s); the others take its "
                    "buckets when it expires",
                    self.config.ring,
                    self.leases.describe(),
                    err,
                )
                return
        self._log.info("ring %s: %s left the ring", self.config.ring, self.config.identity)
