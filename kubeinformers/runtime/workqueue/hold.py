"""Holding keys back (N10): the two steps of `QueueCore.set_hold` (workqueue.core), a release
(set the matching queued keys aside) and an acquire (give back those no longer held)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def set_aside(
    items: Iterable[K], hold: Callable[[K], bool], dirty: set[K], held: set[K]
) -> deque[K]:
    """The queued `items` that `hold` lets through; the others move from `dirty` to `held`."""
    kept: deque[K] = deque()
    for item in items:
        if hold(item):
            dirty.discard(item)
            held.add(item)
        else:
            kept.append(item)
    return kept


def released(held: set[K], hold: Callable[[K], bool] | None) -> list[K]:
    """The items of `held` that `hold` (None: nothing) no longer holds, taken out of `held`."""
    back = list(held) if hold is None else [item for item in held if not hold(item)]
    held.difference_update(back)
    return back
