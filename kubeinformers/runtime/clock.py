"""The runtime's one time abstraction: monotonic seconds, real or fake.

A part that only reads the time takes a `Now` (the reflector, backoff, informer, processor,
leader election, FakeListerWatcher): `time.monotonic` by default, `FakeClock().now` in tests. A
part that also waits on the time takes a `Clock` (the work queues, their metrics and the rate
limiters), whose `now` is such a reading. Tests take `FakeClock` from `kubeinformers.testing`.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Protocol, TypeAlias

__all__ = ["Clock", "FakeClock", "Now", "RealClock"]

Now: TypeAlias = Callable[[], float]
"""A reading of a monotonic clock in seconds: `time.monotonic`, or a `Clock`'s `now`."""


class Clock(Protocol):
    """Time source of the queues: ``now()`` in seconds (monotonic) and a timed wait."""

    def now(self) -> float: ...

    def wait_until(self, condition: threading.Condition, deadline: float | None) -> None:
        """Wait on ``condition`` (held by the caller) until notified or this clock reaches
        ``deadline``; may return early, so callers re-check their state in a loop."""
        ...


class RealClock:
    """The process's monotonic clock."""

    def now(self) -> float:
        return time.monotonic()

    def wait_until(self, condition: threading.Condition, deadline: float | None) -> None:
        if deadline is None:
            condition.wait()
        else:
            remaining = deadline - time.monotonic()
            if remaining > 0:
                condition.wait(remaining)


class FakeClock:
    """A clock that only moves when told to (``step``/``set``), so tests never wait in real time.

    Every change of time wakes all waiters, which re-check their deadline (client-go's fake
    clock does the same); ``wait_for_waiters`` lets a test know a background thread has seen
    the latest time and gone back to waiting.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._generation = 0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiters: dict[int, tuple[threading.Condition, int]] = {}
        self._ids = itertools.count()
        self.wait_calls = 0  # how often anyone started waiting: a busy loop shows here

    def now(self) -> float:
        with self._lock:
            return self._now

    def step(self, seconds: float) -> None:
        self.set(self.now() + seconds)

    def set(self, now: float) -> None:
        with self._lock:
            self._now = now
            self._generation += 1
            conditions = [c for c, _ in self._waiters.values()]
        for condition in conditions:
            with condition:
                condition.notify_all()

    def wait_until(self, condition: threading.Condition, deadline: float | None) -> None:
        with self._lock:
            self.wait_calls += 1
            if deadline is not None and self._now >= deadline:
                return
            ident = next(self._ids)
            self._waiters[ident] = (condition, self._generation)
            self._changed.notify_all()
        try:
            # The caller holds ``condition``, so set() cannot notify before we wait: no lost
            # wake-up. The real-time bound only guards tests against their own mistakes.
            condition.wait(1.0)
        finally:
            with self._lock:
                del self._waiters[ident]

    def has_waiters(self) -> bool:
        with self._lock:
            return bool(self._waiters)

    def wait_for_waiters(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Block (real time) until ``count`` threads wait on this clock having seen its
        current time."""

        def ready() -> bool:
            current = [g for _, g in self._waiters.values() if g == self._generation]
            return len(current) >= count

        with self._lock:
            return self._changed.wait_for(ready, timeout)
