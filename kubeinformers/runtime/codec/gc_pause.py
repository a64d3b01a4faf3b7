"""Holding off Python's cyclic garbage collector while many long-lived objects are created.

Why: decoding a list page, a watch-list's initial events, or the first full reads of many
cached objects creates thousands of objects that all survive; each time the heap grows by a
quarter CPython runs a full collection over everything, which made a 5,000-pod page ~2-5x
slower and two thirds of a first read of every cached pod (issue 26). `gc_paused` holds the
collector off for one such burst; `read_burst` (lazy objects' first reads) holds it while
reads keep coming. At the end the survivors of a big pause move to the old generation
untraversed (see _promote_without_traversal).
"""

from __future__ import annotations

import gc
import sysconfig
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["end_read_burst", "gc_paused", "read_burst"]

_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False
_gc_survivors = 0  # young objects our collections after a pause moved to the old generation

# A pause that leaves at least this many young objects ends by moving them to the old
# generation. Left to itself, CPython would traverse them three times within moments (the
# young generation's collection at the next allocation, the middle one ten collections later,
# then a full one once they outnumber a quarter of the old objects): 126 tracked objects per
# eagerly decoded pod, so for thousands of pods that is longer than validating them.
# Lazy objects (about 2 tracked per object) rarely reach it.
_COLLECT_AFTER_YOUNG = 100_000

# gc.freeze() + gc.unfreeze() moves every tracked object to the oldest generation in O(1)
# (two list splices in CPython's collector), without traversing any: the survivors of a
# pause land where a full collection would have put them (which cost ~0.7 s per 10,000 eager
# pods, more than validating them). The next automatic full collection still frees any
# garbage among them; as CPython did not count them, it comes after fewer new old objects
# than after a gc.collect(), and costs what every full collection of the cache costs.
# Not with the GIL disabled (there freeze and unfreeze visit the whole heap) nor when the
# application froze objects itself (unfreeze would hand them back): then one gc.collect().
# (An application thread freezing between our two calls would find its objects unfrozen:
# only its fork-time copy-on-write saving is lost, nothing is freed or leaked.)
_FREEZE_PROMOTES = not sysconfig.get_config_var("Py_GIL_DISABLED")


def _promote_without_traversal() -> bool:
    """Move all young objects to the old generation untraversed; False where it cannot."""
    if not _FREEZE_PROMOTES or gc.get_freeze_count():
        return False
    gc.freeze()
    gc.unfreeze()
    return True


def _end_hold_locked() -> None:
    global _gc_depth
    _gc_depth -= 1
    if _gc_depth == 0 and _gc_was_enabled:
        gc.enable()


class _GcPause:
    """One hold on the collector; released once, by the owner or by its time limit."""

    __slots__ = ("_held", "_timer")

    def __init__(self, max_seconds: float | None) -> None:
        global _gc_depth, _gc_was_enabled
        with _gc_lock:
            if _gc_depth == 0:
                _gc_was_enabled = gc.isenabled()
                gc.disable()
            _gc_depth += 1
            self._held = True
        self._timer: threading.Timer | None = None
        if max_seconds is not None:
            self._timer = threading.Timer(max_seconds, self.release)
            self._timer.daemon = True
            self._timer.start()

    def release(self) -> None:
        global _gc_survivors
        with _gc_lock:
            if not self._held:
                return
            self._held = False
            young = gc.get_count()[0]
            big = _gc_depth == 1 and _gc_was_enabled and young >= _COLLECT_AFTER_YOUNG
            # After a pause that created many objects (see _COLLECT_AFTER_YOUNG) they move to
            # the old generation at once: untraversed when possible, else by one full
            # collection, unless they are few beside the survivors of earlier ones (the
            # quarter rule of CPython's own), so consecutive pauses, such as the pages of a
            # long list, stay linear.
            if big and _promote_without_traversal():
                big = False
            collect = big and young * 4 >= _gc_survivors
            if collect:
                _gc_survivors += young
            else:
                _end_hold_locked()
        if collect:
            # Still a hold meanwhile (a pause starting now nests), and outside the lock:
            # finalizers the collection runs may pause the collector themselves.
            try:
                gc.collect()
            finally:
                with _gc_lock:
                    _end_hold_locked()
        if self._timer is not None and threading.current_thread() is not self._timer:
            self._timer.cancel()


@contextmanager
def gc_paused(max_seconds: float | None = None) -> Iterator[None]:
    """Hold off the cyclic garbage collector while many long-lived objects are created.

    Decoding a page (or a watch-list's initial events) creates thousands of objects that all
    survive; each time the heap grows by a quarter Python runs a full collection over
    everything, which made a 5,000-pod page ~2-5x slower. Nested and concurrent uses are
    counted; a collector the application disabled itself stays disabled. `max_seconds` bounds
    the pause (a stalled stream must not keep the collector off).
    """
    pause = _GcPause(max_seconds)
    try:
        yield
    finally:
        pause.release()


# First reads of lazy objects (their model builds) come in bursts: a controller reads every
# object of its initial list, or a batch of events. Each build allocates ~126 tracked objects
# that survive; with the collector on, the growing heap triggers full collections that walk
# everything built so far (two thirds of a first read of 10,000 pods, issue 26). So a build
# holds the collector off until READ_QUIET seconds pass without another (at most READ_LONGEST
# seconds in a row), and the hold then ends as any pause does: a big one (a burst of ~800
# pods or more) moves its survivors to the old generation untraversed, a small one (a steady
# trickle of events) just turns the collector back on, which then runs as it would have.
READ_QUIET = 0.05
READ_LONGEST = 2.0


class _ReadBurst:
    __slots__ = ("_last", "_lock", "_pause", "_started")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pause: _GcPause | None = None
        self._last = 0.0
        self._started = 0.0

    def touch(self) -> None:
        now = time.monotonic()
        self._last = now
        if self._pause is not None:
            return
        with self._lock:
            if self._held():  # another thread started this burst meanwhile
                return
            self._pause = _GcPause(None)
            self._started = now
        self._check_in(READ_QUIET)

    def _held(self) -> bool:
        return self._pause is not None

    def _check_in(self, delay: float) -> None:
        timer = threading.Timer(delay, self._check)
        timer.daemon = True
        timer.name = "kubeinformers-gc-read-burst"
        timer.start()

    def _check(self) -> None:
        now = time.monotonic()
        with self._lock:
            pause = self._pause
            if pause is None:
                return
            quiet_left = self._last + READ_QUIET - now
            if quiet_left > 0 and now - self._started < READ_LONGEST:
                pause = None  # reads keep coming: look again when they may have stopped
            else:
                self._pause = None
        if pause is None:
            self._check_in(max(quiet_left, 0.001))
            return
        pause.release()

    def end(self) -> None:
        """End the current hold now (tests; a process about to measure itself)."""
        with self._lock:
            pause, self._pause = self._pause, None
        if pause is not None:
            pause.release()


_read_burst = _ReadBurst()


def read_burst() -> None:
    """A lazy object's model is about to be built: hold the collector off for this burst."""
    _read_burst.touch()


def end_read_burst() -> None:
    """End a read burst's hold on the collector now, if one is held."""
    _read_burst.end()
