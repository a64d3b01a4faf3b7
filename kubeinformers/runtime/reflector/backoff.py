"""When the reflector retries and how long it waits.

`Backoff`: client-go's `wait.Backoff` stepped through a reset-after-interval manager.
`RetryWithDeadline`: the internal-error retry window of D14. `is_watch_error_retriable` and
friends classify errors as client-go's reflector does (D11).

Rule D4: the n-th delay is `base_n * (1 + jitter * U[0,1))` with base 0.8 s, 1.6, 3.2, ... capped at
30 s (once the cap is hit it stays there). The sequence goes back to its first step on the first
delay asked for more than `reset_interval` (2 min) after the previous reset, not on success.
The clock and the random source are injectable so tests never wait for real.
(apimachinery: pkg/util/wait/backoff.go `Backoff.Step`, `DelayWithReset`, `backoffManager.Step`)
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable

from kubeinformers.runtime.api.errors import (
    is_connection_refused as is_connection_refused,
)
from kubeinformers.runtime.api.errors import is_internal_error
from kubeinformers.runtime.api.errors import (
    is_watch_error_retriable as is_watch_error_retriable,
)
from kubeinformers.runtime.clock import Now

DEFAULT_INITIAL = 0.8
DEFAULT_CAP = 30.0
DEFAULT_FACTOR = 2.0
DEFAULT_JITTER = 1.0
DEFAULT_RESET_INTERVAL = 120.0


class Backoff:
    """Exponential backoff with jitter, a cap, and a reset after `reset_interval` seconds.

    Thread-safe: one instance is shared by a reflector's relist loop, its watch retries and its
    watch-list retries (D4).
    """

    def __init__(
        self,
        initial: float = DEFAULT_INITIAL,
        cap: float = DEFAULT_CAP,
        factor: float = DEFAULT_FACTOR,
        jitter: float = DEFAULT_JITTER,
        steps: int | None = None,
        reset_interval: float = DEFAULT_RESET_INTERVAL,
        *,
        clock: Now = time.monotonic,
        rand: Callable[[], float] = random.random,
    ) -> None:
        if initial <= 0:
            raise ValueError(f"backoff initial delay must be > 0, got {initial}")
        self.initial = initial
        self.cap = cap
        self.factor = factor
        self.jitter = jitter
        # client-go: steps = ceil(cap / initial) (38 for the defaults); the cap ends stepping sooner.
        self.initial_steps = steps if steps is not None else math.ceil(cap / initial)
        self.reset_interval = reset_interval
        self._clock = clock
        self._rand = rand
        self._lock = threading.Lock()
        self._duration = initial
        self._steps = self.initial_steps
        self._last_reset = clock()

    def reset(self) -> None:
        with self._lock:
            self._reset_locked()

    def _reset_locked(self) -> None:
        self._duration = self.initial
        self._steps = self.initial_steps
        self._last_reset = self._clock()

    def next_delay(self) -> float:
        """The next delay in seconds (D4), advancing the sequence."""
        with self._lock:
            if self.reset_interval <= 0 or self._clock() - self._last_reset > self.reset_interval:
                self._reset_locked()
            if self._steps < 1:
                return self._jittered(self._duration)
            self._steps -= 1
            duration = self._duration
            if self.factor:
                self._duration = self._duration * self.factor
                if self.cap > 0 and self._duration > self.cap:
                    self._duration = self.cap
                    self._steps = 0
            return self._jittered(duration)

    def _jittered(self, duration: float) -> float:
        if self.jitter > 0:
            return duration + self._rand() * self.jitter * duration
        return duration


class RetryWithDeadline:
    """D14: retry internal errors for `max_duration` seconds from the first one.

    The window restarts when the previous internal error is at least `reset_period` old.
    (client-go: tools/cache/retry_with_deadline.go)
    """

    def __init__(self, max_duration: float, reset_period: float, clock: Now) -> None:
        self._max = max_duration
        self._reset_period = reset_period
        self._clock = clock
        self._first: float | None = None
        self._last: float | None = None

    def after(self, err: BaseException | None) -> None:
        if err is None or not is_internal_error(err):
            return
        now = self._clock()
        if self._last is not None and now - self._last >= self._reset_period:
            self._first = self._last = None
        if self._first is None:
            self._first = now
        self._last = now

    def should_retry(self) -> bool:
        if self._max <= 0:
            return False
        if self._first is not None and self._clock() - self._first <= self._max:
            return True
        self._first = self._last = None
        return False


__all__ = [
    "Backoff",
    "RetryWithDeadline",
    "is_connection_refused",
    "is_internal_error",
    "is_watch_error_retriable",
]
