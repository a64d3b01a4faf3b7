"""Leader election for asyncio: `await elector.run(lead)` runs `lead()` while we hold the Lease.

Same algorithm and record handling as `leaderelection.LeaderElector` (it is reused for every
attempt to take, renew or release the lease); the waits are `asyncio` sleeps and each Lease
request (a blocking HTTP call of the kubernetes client) runs in a worker thread with
`asyncio.to_thread`, so the event loop never blocks. Losing the lease cancels `lead()`;
cancelling `run` stops leading (and releases the lease with `release_on_cancel`).
`on_new_leader` may be a plain function or an `async def` one (then it runs as a task, in
order of the changes, so that a slow one never delays a renewal).

```python
elector = AsyncLeaderElector(LeaseLock(api, "default", "my-operator", identity=host))
await elector.run(operate)           # operate: async def operate() -> None
```
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeAlias

from kubeinformers.runtime.leaderelection.elector import (
    JITTER_FACTOR,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    ResourceLock,
    log_lost_lease,
)
from kubeinformers.runtime.uncancelled import finish

__all__ = ["AsyncLeaderElector", "NewLeaderCallback"]

# Told the identity of every new holder of the lease, the first included.
NewLeaderCallback: TypeAlias = Callable[[str], None] | Callable[[str], Awaitable[None]]

_log = logging.getLogger("kubeinformers.leaderelection")


def _no_start(_: object) -> None:
    """The async elector calls `lead()` itself; the thread-based callbacks are unused."""


def _no_stop() -> None:
    pass


class AsyncLeaderElector:
    """One candidate; `run(lead)` may be called once at a time (client-go's defaults: lease
    15 s, renew deadline 10 s, retry every 2 s)."""

    def __init__(
        self,
        lock: ResourceLock,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = False,
        name: str = "",
        on_new_leader: NewLeaderCallback | None = None,
    ) -> None:
        self.config = LeaderElectionConfig(
            lock,
            LeaderCallbacks(_no_start, _no_stop),
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            release_on_cancel=release_on_cancel,
            name=name,
        )
        self._elector = LeaderElector(self.config)  # validates the config
        self._on_new_leader = on_new_leader
        self._reported = ""
        # The latest `async def on_new_leader` task; each awaits the one before it (in order).
        self._notification: asyncio.Task[None] | None = None
        self._notifications: set[asyncio.Task[None]] = set()  # not yet ended
        self._log = _log.getChild(name) if name else _log
        self._running = False

    def is_leader(self) -> bool:
        return self._elector.is_leader()

    def get_leader(self) -> str:
        return self._elector.get_leader()

    def check(self, max_tolerable_expired_lease: float) -> None:
        """Health check: raises if we lead but have not renewed for too long."""
        self._elector.check(max_tolerable_expired_lease)

    async def _attempt(self, timeout: float) -> bool:
        request = asyncio.ensure_future(
            asyncio.to_thread(self._elector.try_acquire_or_renew, timeout)
        )
        try:
            ok = await asyncio.shield(request)
        except asyncio.CancelledError:
            # The request goes on in its thread and may still take or renew the lease: let
            # it end (at most `timeout`), so that what it did is known to whoever releases
            # the lease next, and no release races it with a stale resourceVersion.
            await asyncio.wait({request})
            raise
        holder = self._elector.get_leader()
        if holder != self._reported:
            self._reported = holder
            self._report_new_leader(holder)
        return ok

    def _report_new_leader(self, holder: str) -> None:
        callback = self._on_new_leader
        if callback is None:
            return
        try:
            result = callback(holder)
        except Exception:
            self._log.exception("on_new_leader callback failed")
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(self._await_new_leader(result, self._notification))
            self._notification = task
            self._notifications.add(task)
            task.add_done_callback(self._notifications.discard)

    async def _end_notifications(self, grace: float) -> None:
        """I17: the `async def on_new_leader` tasks still running when `run` ends get up to
        `grace` seconds to end, in order; those still running then are cancelled (with a
        WARNING), and this returns once every one has ended, whatever cancels the caller
        meanwhile: no task of this elector outlives its `run`."""
        pending = set(self._notifications)
        if not pending:
            return
        cancelled = False  # while waiting: cancel them now, raise once they have ended
        if grace > 0:
            try:
                await asyncio.wait(pending, timeout=grace)
            except asyncio.CancelledError:
                cancelled = True
        late = [task for task in pending if not task.done()]
        if late and grace > 0 and not cancelled:
            self._log.warning(
                "on_new_leader still running %.1f s after leader election for lease %s "
                "ended; cancelled (make it return sooner, or hand slow work to a task of "
                "your own)",
                grace,
                self.config.lock.describe(),
            )
        for task in late:
            task.cancel()
        if late:
            await finish(asyncio.wait(late))
        if cancelled:
            raise asyncio.CancelledError

    async def _await_new_leader(
        self, notification: Awaitable[None], previous: asyncio.Task[None] | None
    ) -> None:
        try:
            if previous is not None:
                await asyncio.wait({previous})
            await notification
        except Exception:
            self._log.exception("on_new_leader callback failed")
        finally:
            if inspect.iscoroutine(notification):
                notification.close()  # cancelled before it ran: not "never awaited"

    async def acquire(self) -> None:
        """Return once we hold the lease (retrying every retry_period with jitter)."""
        desc = self.config.lock.describe()
        self._log.info("attempting to acquire leader lease %s...", desc)
        period = self.config.retry_period
        while not await self._attempt(self.config.renew_deadline):
            await asyncio.sleep(period + random.random() * JITTER_FACTOR * period)
        self._log.info("successfully acquired lease %s", desc)

    async def _keep(self) -> None:
        """Renew every retry_period; return when a renewal misses the renew deadline."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.config.retry_period)
            deadline = loop.time() + self.config.renew_deadline
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    log_lost_lease(self._log, self.config)
                    return
                if await self._attempt(remaining):
                    break
                await asyncio.sleep(min(self.config.retry_period, max(remaining, 0.0)))

    async def run(self, lead: Callable[[], Awaitable[None]]) -> bool:
        """Acquire the lease, then run `lead()` while renewing it. Returns True when `lead()`
        returned by itself, False when the lease was lost (then `lead()` was cancelled);
        cancelling `run` cancels `lead()` and, with release_on_cancel, releases the lease
        (also one taken by the attempt in flight when `run` was cancelled before leading).
        One call at a time: a second while one runs raises RuntimeError (I16)."""
        if self._running:
            raise RuntimeError(
                f"leader elector for lease {self.config.lock.describe()} is already running: "
                "run(lead) takes one call at a time (a second would run lead() beside the "
                "first, both holding the one lease); await the first, or make another elector "
                "with its own identity"
            )
        self._running = True
        try:
            try:
                led = await self._run(lead)
            except asyncio.CancelledError:
                await self._end_notifications(0.0)
                raise
            except BaseException:
                await self._end_notifications(self.config.renew_deadline)
                raise
            await self._end_notifications(self.config.renew_deadline)
            return led
        finally:
            self._running = False

    async def _run(self, lead: Callable[[], Awaitable[None]]) -> bool:
        try:
            await self.acquire()
        except asyncio.CancelledError:
            if self.config.release_on_cancel:
                await asyncio.shield(asyncio.to_thread(self._elector.release))
            raise

        async def leading() -> None:
            await lead()

        work = asyncio.ensure_future(leading())
        keep = asyncio.ensure_future(self._keep())
        try:
            done, _ = await asyncio.wait({work, keep}, return_when=asyncio.FIRST_COMPLETED)
            if work in done:
                work.result()  # re-raise lead()'s exception
                return True
            return False
        finally:
            for task in (work, keep):
                task.cancel()
            cancelled = False
            # lead() and the renewal run to their end, however often `run` is cancelled
            # meanwhile (I15): a lease released while lead()'s reconciles still run would let
            # another replica start beside them.
            try:
                await finish(asyncio.wait({work, keep}))
            except asyncio.CancelledError:
                # `run` itself was cancelled while lead() was stopping (a reconcile loop
                # draining after a lost lease): its caller stops, it must not see a plain
                # "lost" and campaign again (`while True: await elector.run(...)`).
                cancelled = True
            for task in (work, keep):
                if not task.cancelled():
                    task.exception()  # retrieved: raised above if it mattered
            if self.config.release_on_cancel:
                await asyncio.shield(asyncio.to_thread(self._elector.release))
            if cancelled:
                raise asyncio.CancelledError
