"""The reflector's backoff: client-go's `wait.Backoff` stepped through a reset-after-interval manager.

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
        clock: Callable[[], float] = time.monotonic,
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


__all__ = ["Backoff"]
