"""Rate limiters for the rate-limiting queue: client-go's util/workqueue limiters (I9-I11).

Times are in seconds. `kubeinformers` exports the two a controller usually picks
(`ItemExponentialFailureRateLimiter`, `default_controller_rate_limiter`).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from kubeinformers.runtime.clock import Clock, RealClock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
]

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)


class RateLimiter(Protocol[K_contra]):
    """How long an item waits before its next retry (client-go TypedRateLimiter)."""

    def when(self, item: K_contra) -> float: ...
    def forget(self, item: K_contra) -> None: ...
    def num_requeues(self, item: K_contra) -> int: ...


class _PerItemFailures(Generic[K]):
    """The failure count per item that the per-item limiters keep; `forget` clears it."""

    def __init__(self) -> None:
        self._failures: dict[K, int] = {}
        self._lock = threading.Lock()

    def num_requeues(self, item: K) -> int:
        with self._lock:
            return self._failures.get(item, 0)

    def forget(self, item: K) -> None:
        with self._lock:
            self._failures.pop(item, None)


class ItemExponentialFailureRateLimiter(_PerItemFailures[K]):
    """``base_delay * 2**failures`` per item, capped at ``max_delay`` (I9)."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        super().__init__()
        self.base_delay = base_delay
        self.max_delay = max_delay

    def when(self, item: K) -> float:
        with self._lock:
            exp = self._failures.get(item, 0)  # I9: the count *before* this failure
            self._failures[item] = exp + 1
        if exp >= 1000:  # 2**exp would overflow a float; client-go caps on overflow too
            return self.max_delay
        return min(self.base_delay * 2.0**exp, self.max_delay)


class ItemFastSlowRateLimiter(_PerItemFailures[K]):
    """``fast_delay`` for the first ``max_fast_attempts`` retries of an item, then ``slow_delay``."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        super().__init__()
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts

    def when(self, item: K) -> float:
        with self._lock:
            n = self._failures.get(item, 0) + 1
            self._failures[item] = n
        return self.fast_delay if n <= self.max_fast_attempts else self.slow_delay


class BucketRateLimiter(Generic[K]):
    """Overall token bucket (golang.org/x/time/rate semantics): ``burst`` tokens to start,
    refilled at ``qps``; ``when`` reserves a token and returns how long to wait for it (I10)."""

    def __init__(self, qps: float = 10.0, burst: int = 100, *, clock: Clock | None = None) -> None:
        if qps <= 0:
            raise ValueError(f"BucketRateLimiter: qps must be > 0, got {qps}")
        self.qps = qps
        self.burst = burst
        self._clock: Clock = clock if clock is not None else RealClock()
        self._tokens = float(burst)
        self._last = self._clock.now()
        self._lock = threading.Lock()

    def when(self, item: K) -> float:
        with self._lock:
            now = self._clock.now()
            if now > self._last:
                self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
                self._last = now
            self._tokens -= 1.0
            return -self._tokens / self.qps if self._tokens < 0 else 0.0

    def num_requeues(self, item: K) -> int:
        return 0

    def forget(self, item: K) -> None:
        pass


class MaxOfRateLimiter(Generic[K]):
    """The largest delay of several limiters; every limiter is consulted on each call (I11)."""

    def __init__(self, *limiters: RateLimiter[K]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one rate limiter")
        self.limiters = limiters

    def when(self, item: K) -> float:
        return max([limiter.when(item) for limiter in self.limiters])

    def num_requeues(self, item: K) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)

    def forget(self, item: K) -> None:
        for limiter in self.limiters:
            limiter.forget(item)


class WithMaxWaitRateLimiter(Generic[K]):
    """Caps another limiter's delay at ``max_delay`` (I11)."""

    def __init__(self, limiter: RateLimiter[K], max_delay: float) -> None:
        self.limiter = limiter
        self.max_delay = max_delay

    def when(self, item: K) -> float:
        return min(self.limiter.when(item), self.max_delay)

    def num_requeues(self, item: K) -> int:
        return self.limiter.num_requeues(item)

    def forget(self, item: K) -> None:
        self.limiter.forget(item)


def default_controller_rate_limiter(*, clock: Clock | None = None) -> MaxOfRateLimiter[K]:
    """Per-item exponential 5 ms … 1000 s, and overall 10 qps with a burst of 100 (I11)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock=clock),
    )


def default_item_based_rate_limiter() -> ItemExponentialFailureRateLimiter[K]:
    """Per-item exponential 1 ms … 1000 s (I11)."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)
