"""Await a step to its end through cancellations (asyncio faces of reconcile loops, leader
election and the shard ring).

Why: a drain cut short by a second cancellation lets a reconcile run on while the caller
believes it stopped (I15), and a Lease request left running in its thread writes the Lease
after its member left (N22). `finish` lets the step end, then raises the cancellation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["finish"]

T = TypeVar("T")


async def finish(step: Awaitable[T]) -> T:
    """Await `step` to its end even if the caller is cancelled meanwhile, once or again and
    again, then raise that cancellation; a cancellation of the step itself is raised at once."""
    task = asyncio.ensure_future(step)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled():  # the step itself was cancelled, not only its caller
                raise
            cancelled = True
            continue
        if cancelled:
            raise asyncio.CancelledError
        return result
