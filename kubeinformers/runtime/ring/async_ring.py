"""A shard ring over Leases for asyncio: `await ring.run()` (section N, rules N20-N25).

The same protocol and state as `ring.ShardRing` (both drive one `core.RingCore`): the Lease
requests (blocking calls of the kubernetes client) run in worker threads with
`asyncio.to_thread`, the waits are `asyncio` sleeps, and the holders' steps are coroutines
(an async reconcile loop drains with `await`). Cancelling `run` drains everything and deletes
the member Lease, as `stop` does for the threaded ring.

```python
ring = AsyncShardRing(api, "my-operator", identity=os.environ["POD_NAME"], namespace="ops")
async with asyncio.TaskGroup() as tasks:
    tasks.create_task(ring.run())
    factory = SharedInformerFactory(api, shard=await ring.wait_for_shard())
    await ring.follow(factory)     # its informers cache the ring's shard
    await ring.admit(loop)         # the loop reconciles only the keys of the buckets held
    factory.start()
    tasks.create_task(loop.run())
```
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from typing import Protocol

from kubeinformers.runtime.api.shard import Shard, ShardKey
from kubeinformers.runtime.client.api_client import ApiClient
from kubeinformers.runtime.clock import Now
from kubeinformers.runtime.leaderelection.elector import JITTER_FACTOR
from kubeinformers.runtime.ring.assignment import shard_of
from kubeinformers.runtime.ring.core import RingConfig, RingCore, RingHealth, RingMetrics
from kubeinformers.runtime.ring.holders import (
    AsyncAdmitsKeys,
    AsyncInformerHolder,
    AsyncLoopHolder,
    FollowsShard,
    HolderStep,
    TellsRingState,
)
from kubeinformers.runtime.ring.members import MemberLeaseApi, MemberLeases
from kubeinformers.runtime.uncancelled import finish

__all__ = ["AsyncShardHolder", "AsyncShardRing", "RingStoppedError"]

_log = logging.getLogger("kubeinformers.ring")


class AsyncShardHolder(Protocol):
    """`ring.ShardHolder` for asyncio: the same three steps, as coroutines."""

    async def stop_admitting(self, keep: Shard | None) -> None: ...

    async def narrow(self, keep: Shard | None) -> None: ...

    async def widen(self, hold: Shard | None) -> None: ...


class RingStoppedError(RuntimeError):
    """`AsyncShardRing.wait_for_shard()`: `run` ended (cancelled, or a step raised) before
    this replica held a shard, so none will come (N24)."""


class AsyncShardRing:
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
        self._holders: list[AsyncShardHolder] = []
        self._work: asyncio.Lock | None = None
        self._holding_event: asyncio.Event | None = None
        self._ended = False  # run has ended (or is ending): no shard will come
        self._log = _log.getChild(ring)

    def hold(self, holder: AsyncShardHolder) -> None:
        """Make `holder` follow the ring's shard (before `run`)."""
        self._holders.append(holder)

    async def follow(self, target: FollowsShard) -> None:
        """An informer or a factory caches the ring's shard from now on (`set_shard` at every
        change; at once if a shard is held). Create it with `shard=await
        ring.wait_for_shard()`: one started without a shard cannot take one."""
        await self._add(AsyncInformerHolder(target))

    async def admit(self, loop: AsyncAdmitsKeys) -> None:
        """An async reconcile loop reconciles only the keys of the buckets held from now on
        (call it before the loop runs): it stops admitting a bucket's keys and drains them
        before the bucket moves."""
        holder = AsyncLoopHolder(loop, self.config.key)
        await holder.start()
        await self._add(holder)

    async def _add(self, holder: AsyncShardHolder) -> None:
        async with self._lock():
            self._holders.append(holder)
            shard = self._core.shard()
            if shard is not None:
                await holder.widen(shard)

    async def wait_for_shard(self) -> Shard:
        """The shard held once this replica holds one. Raises `RingStoppedError` when `run`
        has ended (or ends while waiting) before one was held: no shard will come (N24)."""
        while True:
            shard = self._core.shard()
            if shard is not None:
                return shard
            if self._ended:
                # A run() task created just before this call has not begun yet (since Python
                # 3.12 `asyncio.wait_for` no longer starts this in a task of its own, after
                # it): its first step, which clears `_ended`, runs before this resumes.
                await asyncio.sleep(0)
            if self._ended:
                raise RingStoppedError(
                    f"ring {self.config.ring}: run() ended before {self.config.identity} "
                    "held a shard"
                )
            await self._holding().wait()
            if self._core.shard() is None and not self._ended:
                self._holding().clear()  # woken by a change that left nothing held

    def _holding(self) -> asyncio.Event:
        if self._holding_event is None:
            self._holding_event = asyncio.Event()
        return self._holding_event

    def shard(self) -> Shard | None:
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

    async def _each(self, step: HolderStep, shard: Shard | None) -> None:
        for holder in self._holders:
            if step == "stop_admitting":
                await holder.stop_admitting(shard)
            elif step == "narrow":
                await holder.narrow(shard)
            else:
                await holder.widen(shard)

    def _lock(self) -> asyncio.Lock:
        if self._work is None:
            self._work = asyncio.Lock()
        return self._work

    async def _stop_all(self) -> None:
        async with self._lock():
            self._holding().clear()
            await self._each("stop_admitting", None)
            await self._each("narrow", None)
            self._tell_state()

    async def step(self) -> None:
        """One handoff step (see `ring.ShardRing.step`)."""
        async with self._lock():
            plan = await asyncio.to_thread(self._core.observe)
            if plan is None:
                return
            self._tell_state()
            if plan.release:
                keep = shard_of(self._core.held() - plan.release, self.config.key)
                if keep is None:
                    self._holding().clear()
                await self._each("stop_admitting", keep)
                await asyncio.to_thread(self._core.released, plan.release)
                await self._each("narrow", keep)
            if plan.free:
                started = await asyncio.to_thread(self._core.claim, plan.free)
                if started:
                    await self._each("widen", self._core.shard())
                    self._holding().set()
            self._tell_state()

    async def _renew_loop(self, done: asyncio.Event) -> None:
        """Renew every `retry_period` until `done`; stop all work once no renewal has
        succeeded for `renew_deadline`. Not cancelled: `run` sets `done` and waits for it, so
        that neither a renewal nor a drain is cut short (as the threaded face joins it)."""
        while not done.is_set():
            renewed = await asyncio.to_thread(self._core.renew)
            if not renewed and self._core.deadline_exceeded():
                await self._stop_all()
                self._core.lose()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), self.config.retry_period)

    async def run(self) -> None:
        """Join the ring and follow it until cancelled; then drain, leave, re-raise. A
        cancellation (one, or more while it drains) ends it only after the step under way,
        the drain of every bucket and the deletion of the Lease (N22): a reconcile left
        running, or a Lease written after it, would let another replica, or this one's next
        `run`, work on the same keys."""
        self._ended = False
        done = asyncio.Event()
        renewer: asyncio.Task[None] | None = None
        period = self.config.retry_period
        try:
            await finish(asyncio.to_thread(self._core.renew))
            renewer = asyncio.create_task(
                self._renew_loop(done), name=f"ring-{self.config.ring}-renew"
            )
            while True:
                await finish(self.step())
                await asyncio.sleep(period * (1 + random.random() * (JITTER_FACTOR - 1)))
        finally:
            self._ended = True
            self._holding().set()  # wake wait_for_shard: it raises RingStoppedError (N24)
            done.set()
            await finish(self._leave(renewer))

    async def _leave(self, renewer: asyncio.Task[None] | None) -> None:
        try:
            if renewer is not None:
                await renewer  # its renewal, or its stop at the renew deadline, runs to its end
        finally:
            await self._stop_all()
            await asyncio.to_thread(self._core.leave)
