"""A shard ring over Leases, with threads: `ShardRing.run(stop)` (section N, rules N20-N23).

Replicas of one controller share the objects among the live ones: each holds a member Lease
labelled with the ring's name, rendezvous hashing over 1,024 buckets gives each live member
its share, and when members join or leave the affected buckets move, fenced so that no key is
reconciled by two replicas at once (`core` has the protocol). The ring drives the things that
work on the shard, its *holders*: informers (their selector narrows and widens) and reconcile
loops (they stop admitting a released bucket's keys and drain them before it is given away).

```python
ring = ShardRing(api, "my-controller", identity=os.environ["POD_NAME"], namespace="ops")
threading.Thread(target=ring.run, args=(stop,)).start()
factory = SharedInformerFactory(api, shard=ring.wait_for_shard())
ring.follow(factory)       # every informer of the factory caches the ring's shard
ring.admit(loop)           # the loop reconciles only the keys of the buckets held
factory.start()
loop.run(stop)
```

Two threads: one renews the member Lease every `retry_period` and, if no renewal has
succeeded for `renew_deadline`, stops all work at once; the calling one lists the ring every
`retry_period` and moves buckets. On `stop` the ring drains everything and deletes its Lease,
so the others take its buckets without waiting for it to expire.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import Protocol

from kubeinformers.runtime.api.shard import Shard, ShardKey
from kubeinformers.runtime.client.api_client import ApiClient
from kubeinformers.runtime.clock import Now
from kubeinformers.runtime.leaderelection.elector import JITTER_FACTOR
from kubeinformers.runtime.ring.assignment import shard_of
from kubeinformers.runtime.ring.core import RingConfig, RingCore, RingHealth, RingMetrics
from kubeinformers.runtime.ring.holders import (
    AdmitsKeys,
    FollowsShard,
    HolderStep,
    InformerHolder,
    LoopHolder,
    TellsRingState,
)
from kubeinformers.runtime.ring.members import MemberLeaseApi, MemberLeases

__all__ = ["ShardHolder", "ShardRing"]

_log = logging.getLogger("kubeinformers.ring")


class ShardHolder(Protocol):
    """Something that works on the ring's shard. `shard` None: nothing held.

    `stop_admitting(keep)`: stop taking keys outside `keep` and return once those already
    being worked on are done (called before a bucket is given away). `narrow(keep)`: drop what
    lies outside `keep` (after the Lease says it is given away). `widen(hold)`: start on all
    of `hold` (after the Lease claims it)."""

    def stop_admitting(self, keep: Shard | None) -> None: ...

    def narrow(self, keep: Shard | None) -> None: ...

    def widen(self, hold: Shard | None) -> None: ...


class ShardRing:
    """This replica's membership in ring `ring` (its Lease `<ring>-<identity>` in `namespace`)."""

    def __init__(
        self,
        api: ApiClient | MemberLeaseApi,
        ring: str,
        identity: str,
        *,
        namespace: str = "default",
        key: ShardKey = "uid",
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Now = time.monotonic,
    ) -> None:
        self.config = RingConfig(
            ring=ring,
            identity=identity,
            namespace=namespace,
            key=key,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            clock=clock,
        )
        self._core = RingCore(self.config, MemberLeases(api, namespace, ring, identity))
        self._holders: list[ShardHolder] = []
        self._work = threading.Lock()  # holders are driven by one thread at a time
        # What wait_for_shard waits for changes under this: a shard taken, a run begun or ended.
        self._state = threading.Condition()
        self._runs_begun = 0
        self._runs_ended = 0
        self._log = _log.getChild(ring)

    # ------------------------------------------------------------------ what callers read

    def hold(self, holder: ShardHolder) -> None:
        """Make `holder` follow the ring's shard: told the shard held now, if any, and every
        change from then on."""
        with self._work:
            self._holders.append(holder)
            shard = self._core.shard()
            if shard is not None:
                holder.widen(shard)

    def follow(self, target: FollowsShard) -> None:
        """Make an informer or an informer factory cache the ring's shard (`set_shard` at
        every change). Create it with `shard=ring.wait_for_shard()`: one started without a
        shard cannot take one."""
        self.hold(InformerHolder(target))

    def admit(self, loop: AdmitsKeys) -> None:
        """Make a reconcile loop reconcile only the keys of the buckets held (before it
        runs): it stops admitting a bucket's keys and drains them before the bucket moves."""
        self.hold(LoopHolder(loop, self.config.key))

    def wait_for_shard(self, timeout: float | None = None) -> Shard | None:
        """Wait until this replica holds a shard (the first claim after joining); returns it,
        or None after `timeout` seconds without one, or once `run` has ended (stopped before
        this replica held anything: a rollout's new replica told to stop while the old one
        still holds every bucket), so a waiting program does not wait forever.

        Called after a run has ended, with none running, it waits up to `retry_period` for
        a run to begin (the next one's thread may be started and not have entered `run`
        yet: N24) and returns None if none does."""
        deadline = None if timeout is None else time.monotonic() + timeout

        def left() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        with self._state:
            ended = self._runs_ended
            if self._runs_begun and not self._running():
                grace = self.config.retry_period
                remaining = left()
                if not self._state.wait_for(
                    lambda: self._running() or self._runs_ended != ended,
                    grace if remaining is None else min(grace, remaining),
                ):
                    return self._core.shard()  # no run begun: none will come
            self._state.wait_for(
                lambda: self._core.shard() is not None or self._runs_ended != ended, left()
            )
            return self._core.shard()

    def _running(self) -> bool:
        """A run has begun and not ended (under `_state`)."""
        return self._runs_begun > self._runs_ended

    def _changed(self, running: bool | None = None) -> None:
        """Wake wait_for_shard: a shard taken, or (`running`) a run begun or ended."""
        with self._state:
            if running is True:
                self._runs_begun += 1
            elif running is False:
                self._runs_ended += 1
            self._state.notify_all()

    def shard(self) -> Shard | None:
        """The shard this replica holds now (None: nothing)."""
        return self._core.shard()

    def health(self) -> RingHealth:
        return self._core.health()

    def _tell_state(self) -> None:
        """Holders that report health (a factory) say what the ring says (N11, N23)."""
        health = self._core.health()
        for holder in self._holders:
            if isinstance(holder, TellsRingState):
                holder.ring_state(health)

    def metrics(self) -> RingMetrics:
        return self._core.metrics()

    # ------------------------------------------------------------------ driving the holders

    def _each(self, step: HolderStep, shard: Shard | None) -> None:
        for holder in self._holders:
            if step == "stop_admitting":
                holder.stop_admitting(shard)
            elif step == "narrow":
                holder.narrow(shard)
            else:
                holder.widen(shard)

    def _stop_all(self) -> None:
        with self._work:
            self._each("stop_admitting", None)
            self._each("narrow", None)
            self._tell_state()

    def step(self) -> None:
        """One handoff step: plan, release what is no longer ours, start what is free."""
        with self._work:
            plan = self._core.observe()
            if plan is None:
                return
            self._tell_state()
            if plan.release:
                keep = self._core.held() - plan.release
                shard_kept = shard_of(keep, self.config.key)
                self._each("stop_admitting", shard_kept)
                self._core.released(plan.release)
                self._each("narrow", shard_kept)
            if plan.free:
                started = self._core.claim(plan.free)
                if started:
                    self._each("widen", self._core.shard())
                    self._changed()
            self._tell_state()

    # ------------------------------------------------------------------ running

    def _renew_loop(self, stop: threading.Event, done: threading.Event) -> None:
        period = self.config.retry_period
        while not stop.is_set() and not done.is_set():
            if not self._core.renew() and self._core.deadline_exceeded():
                self._stop_all()
                self._core.lose()
            if stop.wait(period):
                return

    def run(self, stop: threading.Event) -> None:
        """Join the ring and follow it until `stop` is set; then drain, leave, return. A step
        that raises ends it the same way (renewals stop, the member leaves), then the error
        is raised: a member must not keep its buckets while nothing follows the ring."""
        done = threading.Event()  # run is ending: the renewer stops too
        renewer = threading.Thread(
            target=self._renew_loop,
            args=(stop, done),
            name=f"ring-{self.config.ring}-renew",
            daemon=True,
        )
        self._changed(running=True)
        try:
            self._core.renew()
            renewer.start()
        except BaseException:
            self._changed(running=False)
            raise
        period = self.config.retry_period
        try:
            while not stop.is_set():
                self.step()
                if stop.wait(period * (1 + random.random() * (JITTER_FACTOR - 1))):
                    break
        finally:
            try:
                done.set()
                renewer.join()
                self._stop_all()
                self._core.leave()
            finally:
                self._changed(running=False)  # wait_for_shard returns None: nothing is held
