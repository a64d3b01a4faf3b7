"""Process-level measurements shared by every contender: RSS, tracemalloc, a timer."""

from __future__ import annotations

import gc
import os
import resource
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """Resident set size now (Linux /proc; falls back to the peak where /proc is absent)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def full_collect() -> None:
    for _ in range(3):
        gc.collect()


@dataclass
class MemoryProbe:
    """RSS (and, when tracing, tracemalloc) before and after; per-object deltas after a full GC."""

    trace: bool = False
    rss_before: int = 0
    traced_before: int = 0

    def start(self) -> None:
        full_collect()
        if self.trace:
            tracemalloc.start()
            self.traced_before = tracemalloc.get_traced_memory()[0]
        self.rss_before = rss_bytes()

    def per_object(self, n: int) -> dict[str, float]:
        full_collect()
        out = {"rss_per_object": (rss_bytes() - self.rss_before) / max(n, 1)}
        if self.trace:
            out["traced_per_object"] = (
                tracemalloc.get_traced_memory()[0] - self.traced_before
            ) / max(n, 1)
            tracemalloc.stop()
        return out


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """`with stopwatch() as t: ...` then `t[0]` is the elapsed wall time in seconds."""
    box: list[float] = []
    start = time.perf_counter()
    try:
        yield box
    finally:
        box.append(time.perf_counter() - start)
