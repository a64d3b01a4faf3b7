"""Giving the C heap's free pages back to the OS after a burst (K23).

Why: an informer's initial list passes megabytes of response bytes, and a first read of every
cached object builds models and drops the raw bytes they came from; glibc's malloc keeps what
is freed in the middle of its heap resident, so a synced or fully read cache showed 2-5 KB per
pod more RSS than it holds (issue 26: 19.2 KB per pod fully read against 14.3 KB for the
same objects decoded eagerly). Go's runtime hands free pages back to the OS on its own (its
scavenger), so client-go's RSS is what its cache holds; glibc does so only when asked:
`malloc_trim(0)`, which releases every whole free page of every arena, in a millisecond or two
for a 60 MB heap, without holding the GIL (ctypes lets it go).

`trim_heap` runs after an informer's initial list (or relist) has filled its store and when a
big burst of first reads ends; elsewhere than glibc (macOS, musl, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from collections.abc import Callable

__all__ = ["release_freed_memory", "trim_heap"]

logger = logging.getLogger(__name__)

_enabled = True


def _find_malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own C library: glibc's, or none
    except (OSError, AttributeError):
        return None  # musl and other C libraries have no malloc_trim
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_malloc_trim = _find_malloc_trim()


def release_freed_memory(enabled: bool) -> None:
    """Whether the C heap's free pages go back to the OS after an informer's initial list and
    after a big burst of first reads (the default: glibc's `malloc_trim`, on Linux with
    glibc). Process-wide; rule K23 in docs/behaviour.md."""
    global _enabled
    _enabled = enabled


def trim_heap() -> bool:
    """Give the C heap's whole free pages back to the OS now; True when the C library did
    release some (False where it cannot, or when turned off)."""
    if _malloc_trim is None or not _enabled:
        return False
    try:
        return bool(_malloc_trim(0))
    except OSError as exc:  # never seen; a trim is an optimisation, never a failure
        logger.debug("malloc_trim failed: %s", exc)
        return False
