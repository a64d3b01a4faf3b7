"""Process-level measurements shared by every contender: RSS, tracemalloc, a timer."""

from __future__ import annotations

import gc
import os
import platform
import resource
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """Resident set size now (Linux /proc; falls back to the peak where /proc is absent)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def peak_rss_bytes(pid: int | str = "self") -> int | None:
    """The process's peak resident set size so far (VmHWM), or None where /proc has none."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def machine() -> dict[str, Any]:
    """The machine a result was measured on (written beside every result)."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                cpu,
            )
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def full_collect() -> None:
    for _ in range(3):
        gc.collect()


def full_collection_seconds() -> dict[str, float]:
    """What one full collection of the cyclic garbage collector costs with the cache in place,
    and the same after `gc.freeze()` (undone afterwards).

    Why: a full collection traverses every tracked object and holds the GIL meanwhile, so every
    thread stops for it (a watch, a handler, a leader election's renewal); CPython runs one
    whenever the old generation has grown by a quarter. An eagerly decoded pod is ~126 tracked
    objects, a lazy one ~2. Call it after a full collection, so that this one frees nothing and
    measures the traversal alone.
    """
    start = time.perf_counter()
    gc.collect()
    full = time.perf_counter() - start
    if gc.get_freeze_count():  # the process froze objects itself: do not unfreeze them
        return {"full_gc_seconds": full}
    gc.freeze()
    try:
        start = time.perf_counter()
        gc.collect()
        frozen = time.perf_counter() - start
    finally:
        gc.unfreeze()
    return {"full_gc_seconds": full, "full_gc_frozen_seconds": frozen}


@dataclass
class MemoryProbe:
    """RSS (and, when tracing, tracemalloc) before and after; per-object deltas after a full GC.

    The baseline is taken after the imports and the informer's construction: what is left is
    what the cached objects cost (as the client-go probe measures after building its client).
    """

    trace: bool = False
    rss_before: int = 0
    traced_before: int = 0

    def start(self) -> None:
        full_collect()
        if self.trace:
            tracemalloc.start()
            tracemalloc.reset_peak()
            self.traced_before = tracemalloc.get_traced_memory()[0]
        self.rss_before = rss_bytes()

    def per_object(self, n: int) -> dict[str, float]:
        """Per-object figures, and the peak during the sync against the cache's size after it.

        Call it right after the sync: the peak (VmHWM) is read before the full collection.
        """
        peak = peak_rss_bytes()
        full_collect()
        after = rss_bytes() - self.rss_before
        out = {"rss_per_object": after / max(n, 1), "rss_after_over_baseline": float(after)}
        out |= full_collection_seconds()
        if peak is not None:
            out["peak_rss_over_baseline"] = float(peak - self.rss_before)
        if self.trace:
            traced, traced_peak = tracemalloc.get_traced_memory()
            out["traced_per_object"] = (traced - self.traced_before) / max(n, 1)
            # Python keeps freed arenas, so RSS hardly drops after a transient second copy:
            # the traced peak shows one that RSS would hide.
            out["traced_peak_over_after"] = (traced_peak - self.traced_before) / max(
                traced - self.traced_before, 1
            )
            tracemalloc.stop()
        return out


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """`with stopwatch() as t: ...` then `t[0]` is the elapsed wall time in seconds and `t[1]`
    the CPU time of the whole process (every thread) meanwhile: on a shared machine the wall
    time depends on the neighbours, the CPU time much less."""
    box: list[float] = []
    start, cpu = time.perf_counter(), time.process_time()
    try:
        yield box
    finally:
        box.append(time.perf_counter() - start)
        box.append(time.process_time() - cpu)
