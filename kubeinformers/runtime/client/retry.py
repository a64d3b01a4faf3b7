"""Retry a read-modify-write on Conflict: client-go's `retry.RetryOnConflict`.

    def bump() -> Widget:
        w = client.get(Widget, "w", namespace="default")    # a fresh read each attempt
        w.spec.size += 1
        return client.update(w)

    retry_on_conflict(bump)

`fn` must read the object again itself: retrying with the same stale object conflicts again.
The waits follow client-go's `retry.DefaultRetry` (5 attempts, 10 ms growing by 1.0, jitter
0.1); any error other than Conflict (409 with reason Conflict) is raised at once, and the
last Conflict once the attempts are spent.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from kubeinformers.runtime.api.errors import Conflict

__all__ = ["DEFAULT_RETRY", "Backoff", "retry_on_conflict", "retry_on_conflict_async"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Backoff:
    """client-go's wait.Backoff: `steps` attempts, waiting `duration` * `factor`**i (+ jitter)."""

    steps: int = 5
    duration: float = 0.010
    factor: float = 1.0
    jitter: float = 0.1
    cap: float | None = None

    def delays(self) -> list[float]:
        """The waits between attempts (one fewer than `steps`)."""
        out: list[float] = []
        duration = self.duration
        for _ in range(max(self.steps - 1, 0)):
            wait = duration
            if self.jitter > 0:
                wait += random.random() * self.jitter * duration
            out.append(wait)
            duration *= self.factor
            if self.cap is not None:
                duration = min(duration, self.cap)
        return out


DEFAULT_RETRY = Backoff()


def _is_conflict(err: BaseException) -> bool:
    return isinstance(err, Conflict)


def retry_on_conflict(
    fn: Callable[[], T],
    backoff: Backoff = DEFAULT_RETRY,
    *,
    retriable: Callable[[BaseException], bool] = _is_conflict,
) -> T:
    """Call `fn` until it returns without a Conflict (or `retriable` error); its result."""
    pause = threading.Event()  # never set: an interruptible wait without a bare sleep
    delays = backoff.delays()
    for attempt in range(backoff.steps):
        try:
            return fn()
        except Exception as e:
            if not retriable(e) or attempt >= len(delays):
                raise
            pause.wait(delays[attempt])
    raise ValueError(f"backoff.steps must be >= 1, got {backoff.steps}")


async def retry_on_conflict_async(
    fn: Callable[[], Awaitable[T]],
    backoff: Backoff = DEFAULT_RETRY,
    *,
    retriable: Callable[[BaseException], bool] = _is_conflict,
) -> T:
    """`retry_on_conflict` for a coroutine function."""
    delays = backoff.delays()
    for attempt in range(backoff.steps):
        try:
            return await fn()
        except Exception as e:
            if not retriable(e) or attempt >= len(delays):
                raise
            await asyncio.sleep(delays[attempt])
    raise ValueError(f"backoff.steps must be >= 1, got {backoff.steps}")
