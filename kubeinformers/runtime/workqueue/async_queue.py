"""The rate-limited work queue for asyncio (I1-I8 on the event loop, no threads).

The same rules as `RateLimitingQueue`, from the same `QueueCore`: an item is never handed to
two workers at once, a re-add while it is processed is deferred until `done` (I4), a waiting
item is not queued twice (I2), held items are kept aside (N10); its waiting items are the
same `Delays` (I7: a ready time only moves earlier), and `add_rate_limited` delays by the
same `RateLimiter`s (I8). Only the waiting differs: a getter waits on a future, and the
earliest ready time on one loop timer; nothing blocks the loop. A `clock=` other than the
real one (a test's `FakeClock`) is waited on as the threaded queue waits on it, by one thread
that hands the due items to the loop. `add`, `add_after`, `set_hold` and `shut_down` may be
called from any thread (informer handlers run on their own threads): off the loop they are
handed over with `loop.call_soon_threadsafe`.

    async for key in queue:          # `done(key)` is called when the body finishes
        await reconcile(key)
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import AsyncGenerator, Callable, Hashable
from typing import Generic, TypeVar, cast

from kubeinformers.runtime.clock import Clock, RealClock
from kubeinformers.runtime.metrics import WorkQueueMetrics, track_queue
from kubeinformers.runtime.workqueue import queue as _threaded
from kubeinformers.runtime.workqueue.core import QueueBackend, QueueCore
from kubeinformers.runtime.workqueue.delays import Delays
from kubeinformers.runtime.workqueue.metrics import (
    MetricsProvider,
    NoopMetricsProvider,
    _QueueMetrics,
)
from kubeinformers.runtime.workqueue.rate_limiters import (
    RateLimiter,
    default_controller_rate_limiter,
)

__all__ = ["AsyncRateLimitingQueue", "QueueShutDown"]

K = TypeVar("K", bound=Hashable)


class QueueShutDown(Exception):
    """`get()` on a queue that was shut down and has nothing left to hand out."""


class AsyncRateLimitingQueue(Generic[K]):
    """A rate-limiting work queue bound to the running event loop (create it inside it).

    `clock` (default: the process's monotonic clock) times the delays, the rate limiter by
    default and the metrics; `queue` orders the ready items (default: first in, first out),
    as `RateLimitingQueue`'s do.
    """

    def __init__(
        self,
        rate_limiter: RateLimiter[K] | None = None,
        name: str = "",
        *,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
        queue: QueueBackend[K] | None = None,
    ) -> None:
        self.name = name
        self.rate_limiter: RateLimiter[K] = (
            rate_limiter
            if rate_limiter is not None
            else default_controller_rate_limiter(clock=clock)
        )
        self._clock: Clock = clock if clock is not None else RealClock()
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._delays: Delays[K] = Delays()  # on the loop's thread only
        self._timer: asyncio.TimerHandle | None = None  # at the earliest ready time (real clock)
        self._timer_at: float | None = None
        # Another clock: a thread waits on it for `_clock_deadline` (both under _wait_lock).
        self._wait_lock = threading.Lock()
        self._wait_cond = threading.Condition(self._wait_lock)
        self._clock_deadline: float | None = None
        self._clock_waiter: threading.Thread | None = None
        self._stopped = False
        self._waiters: list[asyncio.Future[None]] = []
        # I21: the same bookkeeping as the threaded queues' (`WorkQueue.metrics()`, the
        # provider's series for a named queue). The loop's thread changes the core,
        # `metrics()` may read it from a scrape's thread: both under this lock, held for
        # microseconds.
        provider = metrics_provider if metrics_provider is not None else _threaded._global_provider
        if not name or provider is None:
            provider = NoopMetricsProvider()
        self._lock = threading.Lock()
        self._metrics: _QueueMetrics[K] = _QueueMetrics(name, provider, self._clock)
        self._core: QueueCore[K] = QueueCore(self._metrics, queue)
        self._unfinished_timer: asyncio.TimerHandle | None = None
        if self._metrics.external:
            self._unfinished_timer = self._loop.call_later(
                _threaded._UNFINISHED_WORK_PERIOD, self._update_unfinished_work
            )
        track_queue(self)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the queue is bound to."""
        return self._loop

    # -- adding (any thread) -------------------------------------------------------------

    def add(self, item: K) -> None:
        """Queue `item` (I2); safe from any thread."""
        if threading.get_ident() != self._loop_thread:
            try:
                self._loop.call_soon_threadsafe(self._add, item)
            except RuntimeError:  # the loop has closed: nobody would process it
                pass
            return
        self._add(item)

    def _add(self, item: K) -> None:
        with self._lock:
            ready = self._core.add(item)
        if ready:
            self._wake()

    def add_after(self, item: K, delay: float) -> None:
        """Queue `item` after `delay` seconds; a waiting item only moves earlier (I7)."""
        if threading.get_ident() != self._loop_thread:
            try:
                self._loop.call_soon_threadsafe(self.add_after, item, delay)
            except RuntimeError:
                pass
            return
        if self._core.shutting_down:
            return
        with self._lock:
            self._metrics.retry()  # client-go counts every AddAfter as a retry
        if delay <= 0:
            self._add(item)
            return
        if self._delays.schedule(item, self._clock.now() + delay):
            self._arm()

    def queued_items(self) -> list[K]:
        """The items queued and not handed out yet (a copy; on the loop's thread): in the
        order they would come from the default backend, unordered from another."""
        with self._lock:
            return self._core.queued()

    def waiting_items(self) -> list[tuple[K, float]]:
        """The items waiting for their ready time, each with the seconds left until then
        (on the loop's thread)."""
        return self._delays.items(self._clock.now())

    def _arm(self) -> None:
        """Wait for the earliest ready time: one loop timer on the real clock, else the
        clock's waiting thread (started on the first delay). On the loop."""
        at = self._delays.next_at()
        if type(self._clock) is RealClock:
            if at == self._timer_at:
                return
            if self._timer is not None:
                self._timer.cancel()
            self._timer_at = at
            self._timer = (
                None
                if at is None
                else self._loop.call_later(max(0.0, at - self._clock.now()), self._due)
            )
            return
        with self._wait_lock:
            self._clock_deadline = at
            if self._clock_waiter is None and at is not None and not self._stopped:
                self._clock_waiter = threading.Thread(
                    target=self._wait_for_clock,
                    name=f"workqueue-delay-{self.name or id(self)}",
                    daemon=True,
                )
                self._clock_waiter.start()
            self._wait_cond.notify()

    def _due(self) -> None:
        """Queue the items whose time has come, and wait for the next. On the loop."""
        self._timer = self._timer_at = None
        for item in self._delays.due(self._clock.now()):
            self._add(item)
        self._arm()

    def _wait_for_clock(self) -> None:
        """The waiting thread of a clock other than the real one: when the clock reaches the
        earliest ready time, the loop takes the due items (`_due`, which sets the next one);
        ends with the queue's shutdown or the loop."""
        with self._wait_lock:
            while not self._stopped and not self._loop.is_closed():
                now = self._clock.now()
                at = self._clock_deadline
                if at is not None and now >= at:
                    self._clock_deadline = None  # until the loop sets the next
                    try:
                        self._loop.call_soon_threadsafe(self._due)
                    except RuntimeError:  # the loop has closed
                        return
                    continue
                heartbeat = now + _threaded.HEARTBEAT  # I7: re-checked at least this often
                self._clock.wait_until(
                    self._wait_cond, heartbeat if at is None else min(at, heartbeat)
                )

    def add_rate_limited(self, item: K) -> None:
        """Queue `item` after its rate limiter's delay (I8)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: K) -> None:
        """Clear the item's failure count (I8); the queue itself is not touched."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: K) -> int:
        return self.rate_limiter.num_requeues(item)

    def _wake(self) -> None:
        """Wake every waiting `get` and drain; each looks again (all on the loop)."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def _wait(self) -> None:
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    # -- taking (on the loop) -------------------------------------------------------------

    async def get(self) -> K:
        """The next item, marked as processing until `done(item)`; QueueShutDown once the
        queue is shut down and empty (I3, I6)."""
        core = self._core
        while True:
            while not core.ready() and not core.shutting_down:
                await self._wait()
            if not core.ready():
                raise QueueShutDown(f"work queue {self.name!r} is shut down")
            with self._lock:
                item, found = core.take()
            if found:
                return cast(K, item)

    def done(self, item: K) -> None:
        """The worker has finished `item`: a re-add made meanwhile queues it now (I4)."""
        with self._lock:
            self._core.done(item)
        self._wake()  # a getter (re-queued), a drain or a wait_released

    def __len__(self) -> int:
        return self._core.ready()

    def waiting(self) -> int:
        """Items waiting for their ready time (`add_after`, `add_rate_limited`)."""
        return len(self._delays)

    def processing(self) -> int:
        return len(self._core.processing)

    # -- holding items back (N10) -----------------------------------------------------------

    def set_hold(self, hold: Callable[[K], bool] | None, *, readmit: bool = True) -> None:
        """Hold back every item `hold` matches from now on (None: none), as
        `WorkQueue.set_hold`; held items it no longer matches are queued again (unless
        `readmit=False`). On the loop's thread (or handed to it)."""
        if threading.get_ident() != self._loop_thread:
            self._loop.call_soon_threadsafe(functools.partial(self.set_hold, hold, readmit=readmit))
            return
        with self._lock:
            back = self._core.set_hold(hold, readmit)
        if back:
            self._wake()

    def held(self) -> set[K]:
        """The items held back now (a copy)."""
        return set(self._core.held)

    def processing_items(self) -> set[K]:
        """The items handed out and not yet done (a copy)."""
        return set(self._core.processing)

    def is_held(self, item: K) -> bool:
        return item in self._core.held

    async def wait_released(self, timeout: float | None) -> bool:
        """Wait until no item being processed matches the hold predicate: True, or False
        when `timeout` passes first."""

        def idle() -> bool:
            return not self._core.holds_processed()

        async def until_idle() -> None:
            while not idle():
                await self._wait()

        if idle():
            return True
        try:
            await asyncio.wait_for(until_idle(), timeout)
        except TimeoutError:
            return idle()
        return True

    # -- shutting down ----------------------------------------------------------------------

    def shut_down(self) -> None:
        """Accept nothing more; waiting `get`s end with QueueShutDown once it is empty (I6)."""
        if threading.get_ident() != self._loop_thread:
            self._core.shutting_down = True  # nothing more is accepted from now on
            try:
                self._loop.call_soon_threadsafe(self.shut_down)
            except RuntimeError:  # the loop has closed: nobody waits on it
                self._stop_waiting()
            return
        self._core.shutting_down = True
        self._stop_waiting()
        if self._unfinished_timer is not None:
            self._unfinished_timer.cancel()
            self._unfinished_timer = None
        self._wake()

    def _stop_waiting(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._timer_at = None
        self._delays.clear()
        with self._wait_lock:
            self._stopped = True
            self._clock_deadline = None
            self._wait_cond.notify()

    async def shut_down_with_drain(self) -> None:
        """`shut_down`, then wait until every handed-out item is done (I6)."""
        self.shut_down()
        while self._core.processing:
            await self._wait()

    def shutting_down(self) -> bool:
        return self._core.shutting_down

    # -- metrics (I21) ----------------------------------------------------------------------

    def metrics(self) -> WorkQueueMetrics:
        """client-go's workqueue series for this queue, read in-process (named or not), as
        `WorkQueue.metrics()`; safe from any thread (a Prometheus scrape)."""
        with self._lock:
            return self._metrics.snapshot(
                self.name,
                depth=self._core.ready(),
                processing=len(self._core.processing),
                waiting=len(self._delays),
                held=len(self._core.held),
            )

    def update_unfinished_work(self) -> None:
        """Refresh the provider's unfinished-work gauges now (a loop timer does it every
        0.5 s for a named queue with a provider)."""
        with self._lock:
            self._metrics.update_unfinished_work()

    def _update_unfinished_work(self) -> None:
        self.update_unfinished_work()
        if not self._core.shutting_down and not self._loop.is_closed():
            self._unfinished_timer = self._loop.call_later(
                _threaded._UNFINISHED_WORK_PERIOD, self._update_unfinished_work
            )

    async def __aiter__(self) -> AsyncGenerator[K, None]:
        """`async for key in queue`: each key is `done` when the loop body finishes (also
        when it raises or breaks); iteration ends when the queue shuts down."""
        while True:
            try:
                item = await self.get()
            except QueueShutDown:
                return
            try:
                yield item
            finally:
                self.done(item)
