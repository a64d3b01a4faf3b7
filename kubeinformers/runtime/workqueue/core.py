"""The rules of a work queue (I1-I6, N10), shared by its two faces.

`WorkQueue` (threads: a lock and a condition) and `AsyncRateLimitingQueue` (asyncio: the
loop and futures) keep their items in one `QueueCore` each and differ only in how callers
wait and are woken. The core decides everything else: an item is never handed to two workers
at once (dirty/processing sets), a re-add while it is processed is deferred until `done`
(I4), a queued item is not queued twice (I2), items a hold predicate matches are kept aside
and never handed out (N10). It neither locks nor wakes: each face calls it under its own
exclusion and wakes its waiters when a call says that something changed for them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

from kubeinformers.runtime.workqueue.hold import released, set_aside
from kubeinformers.runtime.workqueue.metrics import _QueueMetrics

__all__ = ["QueueBackend", "QueueCore"]

K = TypeVar("K", bound=Hashable)


class QueueBackend(Protocol[K]):
    """Order in which dirty items are handed out (client-go's pluggable Queue). ``touch`` is
    called when an already queued item is added again (I2)."""

    def push(self, item: K) -> None: ...
    def pop(self) -> K: ...
    def touch(self, item: K) -> None: ...
    def __len__(self) -> int: ...


class FifoBackend(Generic[K]):
    """First in, first out: client-go's default."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: deque[K] = deque()

    def push(self, item: K) -> None:
        self.items.append(item)

    def pop(self) -> K:
        return self.items.popleft()

    def touch(self, item: K) -> None:
        pass

    def __len__(self) -> int:
        return len(self.items)


class QueueCore(Generic[K]):
    """A work queue's items and the rules over them; callers lock and wake (see module)."""

    __slots__ = (
        "backend",
        "dirty",
        "drain",
        "held",
        "hold",
        "metrics",
        "processing",
        "shutting_down",
    )

    def __init__(self, metrics: _QueueMetrics[K], backend: QueueBackend[K] | None = None) -> None:
        self.metrics = metrics
        self.backend: QueueBackend[K] = backend if backend is not None else FifoBackend()
        self.dirty: set[K] = set()
        self.processing: set[K] = set()
        self.shutting_down = False
        self.drain = False
        # N10: items the hold predicate matches are held back, never handed out, until the
        # predicate changes (a shard handed to another replica; `set_hold`).
        self.hold: Callable[[K], bool] | None = None
        self.held: set[K] = set()

    def add(self, item: K) -> bool:
        """I2: queue `item`; True when it became ready to hand out (wake a getter)."""
        if self.shutting_down:
            return False
        hold = self.hold
        if hold is not None and hold(item):
            self.held.add(item)  # N10: kept back, not lost
            return False
        if self.held:
            self.held.discard(item)
        if item in self.dirty:
            # Already waiting: keep its position; a custom backend may re-rank it.
            if item not in self.processing:
                self.backend.touch(item)
            return False
        self.metrics.add(item)
        self.dirty.add(item)
        if item in self.processing:
            return False  # I4: queued again by done()
        self.backend.push(item)
        return True

    def ready(self) -> int:
        """How many items are queued to hand out (I5)."""
        return len(self.backend)

    def queued(self) -> list[K]:
        """The items queued to hand out (a copy): in the order they would come from FIFO;
        another backend's order is its own (it cannot be looked into), so unordered."""
        backend = self.backend
        if isinstance(backend, FifoBackend):
            return list(backend.items)
        processing = self.processing
        return [item for item in self.dirty if item not in processing]

    def take(self) -> tuple[K | None, bool]:
        """I3: the next item to hand out, marked as processing: (item, True); (None, False)
        when the queue had only items the hold predicate matches (set aside, N10)."""
        backend = self.backend
        while len(backend):
            item = backend.pop()
            hold = self.hold
            if hold is not None and hold(item):
                self.dirty.discard(item)  # N10: a held item is never handed out
                self.held.add(item)
                continue
            self.metrics.get(item)
            self.processing.add(item)
            self.dirty.discard(item)
            return item, True
        return None, False

    def done(self, item: K) -> bool:
        """I4: the worker finished `item`; True when a re-add made meanwhile queued it."""
        self.metrics.done(item)
        self.processing.discard(item)
        if item not in self.dirty:
            return False
        hold = self.hold
        if hold is not None and hold(item):
            self.dirty.discard(item)
            self.held.add(item)
            return False
        self.backend.push(item)
        return True

    def set_hold(self, hold: Callable[[K], bool] | None, readmit: bool) -> bool:
        """N10 (`WorkQueue.set_hold`); True when held items were queued again."""
        self.hold = hold
        held = self.held
        backend = self.backend
        if hold is not None and isinstance(backend, FifoBackend):
            # Set the queued matches aside now (other backends: when they come up).
            backend.items = set_aside(backend.items, hold, self.dirty, held)
        if not readmit:
            return False
        back = released(held, hold)
        for item in back:
            if item in self.dirty:
                continue
            self.metrics.add(item)
            self.dirty.add(item)
            if item not in self.processing:
                backend.push(item)
        return bool(back)

    def holds_processed(self) -> bool:
        """Whether an item being processed matches the hold predicate (`wait_released`)."""
        hold = self.hold
        return hold is not None and any(hold(item) for item in self.processing)
