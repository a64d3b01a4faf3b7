"""Concurrent first reads: several threads released at once to read the same thing."""

from __future__ import annotations

import threading
from collections.abc import Callable


def read_concurrently(read: Callable[[], object], threads: int = 4) -> list[object]:
    """What `read()` returned in each of `threads` threads started together (joined, 10 s each)."""
    start = threading.Event()
    seen: list[object] = []

    def reader() -> None:
        start.wait(5)
        seen.append(read())

    running = [threading.Thread(target=reader) for _ in range(threads)]
    for t in running:
        t.start()
    start.set()
    for t in running:
        t.join(10)
    return seen
