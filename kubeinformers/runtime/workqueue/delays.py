"""The items of a delaying queue waiting for their ready time (I7), shared by its two faces.

`DelayingQueue` (a waiting thread) and `AsyncRateLimitingQueue` (loop timers) keep their
waiting items here and differ only in how they wait for the earliest ready time. The rule
is written once: a waiting item's ready time only moves earlier, and it waits once; due
items come out in ready-time order. Like `QueueCore`, it neither locks nor wakes: each face
calls it under its own exclusion and rearms its waiting when `schedule` says the earliest
ready time changed.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["Delays"]

K = TypeVar("K", bound=Hashable)


class Delays(Generic[K]):
    """Waiting items and their ready times (seconds of the queue's clock)."""

    __slots__ = ("_heap", "_ready_at", "_seq")

    def __init__(self) -> None:
        # An item made earlier is pushed again; the entry it leaves behind is stale (its time
        # no longer matches _ready_at) and skipped when it reaches the top.
        self._heap: list[tuple[float, int, K]] = []
        self._ready_at: dict[K, float] = {}
        self._seq = itertools.count()

    def schedule(self, item: K, ready_at: float) -> bool:
        """Make `item` ready at `ready_at`, unless it already waits until then or earlier
        (I7). True when that is now the earliest ready time (the face rearms its waiting)."""
        known = self._ready_at.get(item)
        if known is not None and known <= ready_at:
            return False
        self._ready_at[item] = ready_at
        heapq.heappush(self._heap, (ready_at, next(self._seq), item))
        return self.next_at() == ready_at

    def due(self, now: float) -> list[K]:
        """Take the items ready at `now`, in ready-time order."""
        ready: list[K] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            ready_at, _, item = heapq.heappop(heap)
            if self._ready_at.get(item) == ready_at:
                del self._ready_at[item]
                ready.append(item)
        return ready

    def next_at(self) -> float | None:
        """The earliest ready time, or None when nothing waits."""
        heap = self._heap
        while heap and self._ready_at.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)  # stale: the item was made earlier, or has been taken
        return heap[0][0] if heap else None

    def items(self, now: float) -> list[tuple[K, float]]:
        """Each waiting item with the seconds left until its ready time at `now`."""
        return [(item, max(0.0, at - now)) for item, at in self._ready_at.items()]

    def clear(self) -> None:
        self._heap.clear()
        self._ready_at.clear()

    def __len__(self) -> int:
        return len(self._ready_at)
