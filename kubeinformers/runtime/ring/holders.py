"""What follows a shard ring's shard: informers and factories (their selector), reconcile
loops (the keys they admit) (section N, rule N24).

`follow_shard(target)` adapts an informer or an informer factory (anything with
`set_shard`): it relists with the ring's shard as it widens and narrows. `admit_shard(loop,
key)` adapts a reconcile loop (`release`/`acquire`): from the start it admits no key, then
only the keys of the buckets held; before a bucket is given away it stops admitting that
bucket's keys and waits for its running reconciles to finish. `async_admit_shard(loop, key)`
is the same for an `AsyncReconcileLoop` (its `release` is a coroutine).

A replica that holds nothing keeps its informers' last shard cached (a shard needs a range)
but admits no key, so it reconciles nothing. A factory's `health()` follows the ring's: not
healthy while a handoff is in progress or no range is held (`set_shard_state`).
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from kubeinformers.runtime.api.shard import Shard, ShardKey
from kubeinformers.runtime.ring.assignment import BUCKETS, buckets_of_shard, shard_of
from kubeinformers.runtime.ring.core import RingHealth
from kubeinformers.runtime.uncancelled import finish

__all__ = [
    "AdmitsKeys",
    "AsyncAdmitsKeys",
    "AsyncInformerHolder",
    "AsyncLoopHolder",
    "FollowsShard",
    "HolderStep",
    "InformerHolder",
    "LoopHolder",
    "ReportsShardState",
    "TellsRingState",
    "tell_state",
]

_EVERYTHING = frozenset(range(BUCKETS))


class FollowsShard(Protocol):
    """A SharedIndexInformer or an informer factory: caches the shard it is given."""

    def set_shard(self, shard: Shard | None) -> None: ...


# The steps a ring drives its holders through, in order, at every change of its shard.
HolderStep = Literal["stop_admitting", "narrow", "widen"]


@runtime_checkable
class ReportsShardState(Protocol):
    """An informer factory: its `health()` says what the ring says (N11)."""

    def set_shard_state(
        self, *, transition: str | None = None, holds_no_range: bool = False
    ) -> None: ...


@runtime_checkable
class TellsRingState(Protocol):
    """A holder whose target reports the ring's state (`InformerHolder`, N11, N23)."""

    def ring_state(self, health: RingHealth) -> None: ...


def tell_state(target: object, health: RingHealth) -> None:
    """A factory's `health()` says what the ring says (N11): a handoff in progress, or no
    range held (`set_shard_state`); an informer has no such state."""
    if not isinstance(target, ReportsShardState):
        return
    transition = None
    if health.in_transition:
        transition = (
            f"ring {health.ring}: holds {health.held_buckets} of {health.desired_buckets} "
            f"buckets assigned, {health.waiting_buckets} waiting for their owner, "
            f"{health.releasing_buckets} being released"
        )
    target.set_shard_state(transition=transition, holds_no_range=health.holds_no_range)


class AdmitsKeys(Protocol):
    """A ReconcileLoop: `release(region)` stops admitting the region's keys and waits for
    its running reconciles; `acquire(region)` admits them again."""

    def release(self, region: Shard, timeout: float | None = None) -> bool: ...

    def acquire(self, region: Shard) -> None: ...


class AsyncAdmitsKeys(Protocol):
    """An AsyncReconcileLoop: `release` is a coroutine."""

    async def release(self, region: Shard, timeout: float | None = None) -> bool: ...

    def acquire(self, region: Shard) -> None: ...


def _buckets(shard: Shard | None) -> frozenset[int]:
    return buckets_of_shard(shard) if shard is not None else frozenset()


class InformerHolder:
    """Informers follow the ring: each change of the held shard is a relist with it."""

    def __init__(self, target: FollowsShard) -> None:
        self.target = target

    def stop_admitting(self, keep: Shard | None) -> None:
        """Informers admit nothing themselves; the loops fence the work."""

    def narrow(self, keep: Shard | None) -> None:
        if keep is not None:
            self.target.set_shard(keep)

    def widen(self, hold: Shard | None) -> None:
        if hold is not None:
            self.target.set_shard(hold)

    def ring_state(self, health: RingHealth) -> None:
        tell_state(self.target, health)


class _Admitted:
    """The buckets a loop admits, and the regions to release or acquire to change them."""

    def __init__(self, key: ShardKey) -> None:
        self.key = key
        self.buckets: frozenset[int] = frozenset()

    def to_release(self, keep: Shard | None) -> Shard | None:
        gone = self.buckets - _buckets(keep)
        self.buckets -= gone
        return shard_of(gone, self.key)

    def to_acquire(self, hold: Shard | None) -> Shard | None:
        new = _buckets(hold) - self.buckets
        self.buckets |= new
        return shard_of(new, self.key)


class LoopHolder:
    """A threaded reconcile loop admits only the keys of the buckets held. Created before the
    loop runs: it releases every key at once (nothing is held yet)."""

    def __init__(self, loop: AdmitsKeys, key: ShardKey = "uid") -> None:
        self.loop = loop
        self._admitted = _Admitted(key)
        everything = shard_of(_EVERYTHING, key)
        assert everything is not None
        loop.release(everything)

    def stop_admitting(self, keep: Shard | None) -> None:
        region = self._admitted.to_release(keep)
        if region is not None:
            self.loop.release(region)  # no timeout: never give a bucket away undrained

    def narrow(self, keep: Shard | None) -> None:
        """The loop changed at `stop_admitting` already."""

    def widen(self, hold: Shard | None) -> None:
        region = self._admitted.to_acquire(hold)
        if region is not None:
            self.loop.acquire(region)


class AsyncLoopHolder:
    """`LoopHolder` for an AsyncReconcileLoop; call `start()` before the loop runs."""

    def __init__(self, loop: AsyncAdmitsKeys, key: ShardKey = "uid") -> None:
        self.loop = loop
        self._admitted = _Admitted(key)
        self._key = key

    async def start(self) -> None:
        everything = shard_of(_EVERYTHING, self._key)
        assert everything is not None
        await finish(self.loop.release(everything))

    async def stop_admitting(self, keep: Shard | None) -> None:
        region = self._admitted.to_release(keep)
        if region is not None:
            # No timeout, and not cut short by a cancellation: the region is no longer
            # admitted from here on, so no later call would wait for its reconciles.
            await finish(self.loop.release(region))

    async def narrow(self, keep: Shard | None) -> None:
        """The loop changed at `stop_admitting` already."""

    async def widen(self, hold: Shard | None) -> None:
        region = self._admitted.to_acquire(hold)
        if region is not None:
            self.loop.acquire(region)


class AsyncInformerHolder:
    """`InformerHolder` for the asyncio ring (`set_shard` is quick: it only starts a relist)."""

    def __init__(self, target: FollowsShard) -> None:
        self._sync = InformerHolder(target)

    async def stop_admitting(self, keep: Shard | None) -> None:
        """Informers admit nothing themselves; the loops fence the work."""

    async def narrow(self, keep: Shard | None) -> None:
        self._sync.narrow(keep)

    async def widen(self, hold: Shard | None) -> None:
        self._sync.widen(hold)

    def ring_state(self, health: RingHealth) -> None:
        self._sync.ring_state(health)
