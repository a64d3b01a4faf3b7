"""The shard ring's state and its Lease steps, shared by the thread face (`ring.ShardRing`)
and the asyncio face (`async_ring.AsyncShardRing`) (section N, rules N20-N25).

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
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from kubeinformers.runtime.api.errors import client_error_status, describe_client_error
from kubeinformers.runtime.api.shard import Shard, ShardKey
from kubeinformers.runtime.clock import Now
from kubeinformers.runtime.leaderelection.elector import check_lease_timing, lease_seconds
from kubeinformers.runtime.metrics import HistogramSnapshot, LatencyRecorder, track_ring
from kubeinformers.runtime.ring.assignment import BUCKETS, assign, shard_of
from kubeinformers.runtime.ring.members import (
    ABANDONED_AFTER,
    Member,
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

# A condition said at WARNING is said again, while it lasts, at most this often (N25, as D22).
REPEAT_AFTER = 60.0

_LEASE_VERBS = "list, create, update, delete"


class Conditions:
    """What a ring has said at WARNING (N25, as D22): a condition once, its repeats at DEBUG,
    again at most every `REPEAT_AFTER` seconds while it lasts; `over(key)` ends it (True if it
    had been said), so that the same condition later is news again."""

    def __init__(self, clock: Now) -> None:
        self._clock = clock
        self._said: dict[object, float] = {}
        self._lock = threading.Lock()

    def level(self, key: object) -> int:
        now = self._clock()
        with self._lock:
            last = self._said.get(key)
            if last is None or now - last >= REPEAT_AFTER:
                self._said[key] = now
                return logging.WARNING
            return logging.DEBUG

    def over(self, key: object) -> bool:
        with self._lock:
            return self._said.pop(key, None) is not None

    def over_where(self, ended: Iterable[object]) -> bool:
        """End every condition in `ended`; True if any had been said."""
        with self._lock:
            return any([self._said.pop(k, None) is not None for k in ended])

    def keys(self) -> list[object]:
        with self._lock:
            return list(self._said)


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
    # The live members as last listed, this replica included while it is a member (alone
    # before a list has succeeded since it joined; `members_listed` says which).
    members: tuple[str, ...]
    held: str | None  # the held shard described, None when nothing is held
    held_buckets: int
    desired_buckets: int
    waiting_buckets: int
    releasing_buckets: int
    last_error: str | None = None
    list_error: str | None = None  # why the ring's Leases cannot be listed (N25)
    members_listed: bool = False  # `members` comes from a list of the ring's Leases

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
        if self.list_error:
            out.append(
                f"cannot list the ring's member Leases ({self.list_error}): it starts and "
                "releases no bucket until a list succeeds"
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
        members = f"members={len(self.members)}"
        if not self.member:
            members += " (not listed while not a member)"
        elif not self.members_listed:
            members += " (itself; the others not listed)"
        elif self.list_error:
            members += " (as last listed)"
        line = (
            f"ring {self.ring} member {self.identity}: {state} {members} "
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
        self._members: tuple[str, ...] = ()  # as last listed since it (re)joined, itself too
        self._member = False
        self._renewed_at: float | None = None  # when the last successful renewal was SENT
        self._wanted_since: dict[int, float] = {}
        self._last_error: str | None = None
        self._list_error: str | None = None
        self._said = Conditions(self._clock)
        self._joined_once = False  # a renewal succeeded: the Lease exists (or did)
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

    def _known_members(self) -> tuple[str, ...]:
        """The live members as far as known (under the lock): as last listed, and this
        replica itself while it is a member, listed or not (N23)."""
        if self._member and self.config.identity not in self._members:
            return tuple(sorted({*self._members, self.config.identity}))
        return self._members

    def health(self) -> RingHealth:
        with self._lock:
            held = shard_of(self._held, self.config.key)
            return RingHealth(
                ring=self.config.ring,
                identity=self.config.identity,
                member=self._member,
                members=self._known_members(),
                members_listed=bool(self._members),
                held=held.describe() if held is not None else None,
                held_buckets=len(self._held),
                desired_buckets=len(self._desired),
                waiting_buckets=len(self._waiting),
                releasing_buckets=len(self._releasing),
                last_error=self._last_error,
                list_error=self._list_error,
            )

    def metrics(self) -> RingMetrics:
        with self._lock:
            return RingMetrics(
                members=len(self._known_members()),
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
                    self._last_error = describe_client_error(err)
                self._renew_failed(err)
                return False
        with self._lock:
            joined = not self._member
            self._member = True
            self._renewed_at = sent
            self._joined_once = True
            self._last_error = None
        # A conflict is not over when a renewal from a fresh read succeeds: two replicas of one
        # identity take turns (N25); it is said again only after a minute, not at every turn.
        ended = [k for k in self._said.keys() if isinstance(k, tuple) and k[0] == "renew"]
        if self._said.over_where(ended):
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

    def _rbac_hint(self, verbs: str) -> str:
        return (
            f"; the replica's service account needs {verbs} on leases (coordination.k8s.io) "
            f"in namespace {self.leases.namespace}: a Role rule with apiGroups "
            f"[coordination.k8s.io], resources [leases], verbs [{_LEASE_VERBS}]"
        )

    def _renew_failed(self, err: BaseException) -> None:
        """Say a failed renewal once per cause (N25): a conflict names the duplicate identity
        (N21), a 403 the RBAC rule to add."""
        status = client_error_status(err)
        what = describe_client_error(err)
        if status == 409:
            self._log.log(
                self._said.level("conflict"),
                "ring %s: member lease %s was changed by another writer (%s): is another "
                "replica running with identity %r? Each replica of ring %s needs its own",
                self.config.ring,
                self.leases.describe(),
                what,
                self.config.identity,
                self.config.ring,
            )
            return
        cause = f"HTTP {status}" if status is not None else type(err).__name__
        self._log.log(
            self._said.level(("renew", cause)),
            "ring %s: cannot renew member lease %s: %s%s",
            self.config.ring,
            self.leases.describe(),
            what,
            self._rbac_hint("create and update") if status in (401, 403) else "",
        )

    def _list(self) -> list[Member] | None:
        """List the ring's Leases; a failure is kept for `health()` and said once per cause
        (N25): an answer of the server other than an outage's at WARNING, naming the request,
        the namespace and, for a 403, the RBAC rule to add."""
        try:
            listed = self.leases.list(self._request_timeout())
        except Exception as err:
            status = client_error_status(err)
            what = describe_client_error(err)
            with self._lock:
                if self._member:  # a list that ends after the Lease was lost is no news
                    self._list_error = what
            refused = status is not None and 400 <= status < 500 and status not in (409, 429)
            self._log.log(
                self._said.level(("list", status)) if refused else logging.DEBUG,
                "ring %s: cannot list member leases (list leases in namespace %s, label %s=%s): "
                "%s%s",
                self.config.ring,
                self.leases.namespace,
                "kubeinformers.io/ring",
                self.config.ring,
                what,
                self._rbac_hint("list") if status in (401, 403) else "",
            )
            return None
        with self._lock:
            self._list_error = None
        ended = [k for k in self._said.keys() if isinstance(k, tuple) and k[0] == "list"]
        if self._said.over_where(ended):
            self._log.info("ring %s: lists member leases again", self.config.ring)
        self._tell_unreadable(listed)
        return listed

    def _tell_unreadable(self, listed: Iterable[Member]) -> None:
        """Another member's unreadable bucket annotation: once per Lease and value (N25)."""
        seen = set()
        for m in listed:
            if m.problem is None:
                continue
            key = ("annotation", m.name, m.problem)
            seen.add(key)
            self._log.log(
                self._said.level(key),
                "ring %s: member lease %s/%s: annotation %s unreadable (%s); taken as holding "
                "nothing",
                self.config.ring,
                self.leases.namespace,
                m.name,
                "kubeinformers.io/ring-buckets",
                m.problem,
            )
        self._said.over_where(
            k
            for k in self._said.keys()
            if isinstance(k, tuple) and k[0] == "annotation" and k not in seen
        )

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
            self._members = ()  # not listed again until it rejoins
            self._list_error = None  # nor tried: health says "not a member" (N23)
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
        listed = self._list()
        if listed is None:
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
                self._log.debug(
                    "ring %s: cannot delete lease %s: %s",
                    self.config.ring,
                    name,
                    describe_client_error(err),
                )
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
        listed = self._list()
        if listed is None:
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
        its buckets at once instead of after its expiry. A replica that never joined (no
        renewal succeeded) has no Lease to speak of: a failed delete is only DEBUG then."""
        with self._lock:
            self._held = self._claimed = self._desired = frozenset()
            self._member = False
            self._members = ()
            self._list_error = None
            self._running = False
            joined = self._joined_once
        with self._write_lock:
            try:
                self.leases.delete(self._request_timeout())
            except Exception as err:
                status = client_error_status(err)
                self._log.log(
                    logging.WARNING if joined else logging.DEBUG,
                    "ring %s: could not delete member lease %s (%s%s); the others take its "
                    "buckets when it expires",
                    self.config.ring,
                    self.leases.describe(),
                    describe_client_error(err),
                    self._rbac_hint("delete") if status in (401, 403) else "",
                )
                return
        if joined:
            self._log.info("ring %s: %s left the ring", self.config.ring, self.config.identity)
