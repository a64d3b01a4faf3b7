"""Holding off Python's cyclic garbage collector while many long-lived objects are created.

Why: decoding a list page, a watch-list's initial events, or the first full reads of many
cached objects creates thousands of objects that all survive; each time the heap grows by a
quarter CPython runs a full collection over everything, which made a 5,000-pod page ~2-5x
slower and two thirds of a first read of every cached pod (issue 26). `gc_paused` holds the
collector off for one such burst; `read_burst` (lazy objects' first reads) holds it while
reads keep coming. At the end the survivors of a big pause move to the collector's permanent
generation, where full collections no longer walk them (see _freeze_survivors); an application
that wants them collected as usual calls `freeze_burst_survivors(False)`.
"""

from __future__ import annotations

import gc
import sysconfig
import threading
import time
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from kubeinformers.runtime.codec.heap_trim import trim_heap

__all__ = [
    "end_read_burst",
    "freeze_burst_survivors",
    "gc_paused",
    "paused_over",
    "read_burst",
]

T = TypeVar("T")

_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False
_gc_survivors = 0  # young objects our collections after a pause moved to the old generation

# A pause that leaves at least this many young objects ends by moving them out of the young
# generations (frozen, see below). Left to itself, CPython would traverse them three times within moments (the
# young generation's collection at the next allocation, the middle one ten collections later,
# then a full one once they outnumber a quarter of the old objects): 126 tracked objects per
# eagerly decoded pod, so for thousands of pods that is longer than validating them.
# Lazy objects (about 2 tracked per object) rarely reach it.
_COLLECT_AFTER_YOUNG = 100_000

# gc.freeze() moves every tracked object to the collector's permanent generation in O(1) (a
# list splice in CPython's collector), without traversing any. The survivors of a big pause
# (a synced eager cache, the models a controller's first reads built) stay there: no
# collection walks them again, which is what makes a full collection with 100,000 fully read
# pods cached take milliseconds instead of seconds (issue 26). They are still freed by
# reference counting when the cache drops them, and cached objects form no reference cycles
# (K9), so nothing of the cache leaks. What it does to the rest of the process: the freeze
# takes every object alive at that moment, the application's too, and a reference cycle
# among those that becomes garbage later stays until `gc.unfreeze()` (objects created after
# the freeze are collected as usual). `freeze_burst_survivors(False)` turns it off: a big
# pause then ends with gc.freeze() + gc.unfreeze(), which moves the survivors to the oldest
# generation untraversed (where a full collection would have put them), and every full
# collection walks them again.
# Not with the GIL disabled (there freeze and unfreeze visit the whole heap), and, with the
# freeze turned off, not when the application froze objects itself (unfreeze would hand them
# back): then one gc.collect().
_FREEZE_PROMOTES = not sysconfig.get_config_var("Py_GIL_DISABLED")
_keep_frozen = True


def freeze_burst_survivors(enabled: bool) -> None:
    """Whether the objects that survive a big decode or first-read burst (thousands of models
    created at once: an eager list, a controller's first read of its cache) stay in Python's
    permanent GC generation, never walked by a collection again (the default), or go to the
    oldest generation, where every full collection walks them (False). Process-wide (rule K16
    in docs/behaviour.md says what freezing does to the rest of the process)."""
    global _keep_frozen
    _keep_frozen = enabled


def _freeze_survivors() -> bool:
    """Move all young objects out of the young generations untraversed (frozen, or to the
    oldest generation with `freeze_burst_survivors(False)`); False where it cannot."""
    if not _FREEZE_PROMOTES:
        return False
    if _keep_frozen:
        gc.freeze()
        return True
    if gc.get_freeze_count():
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

    __slots__ = ("_big_after", "_held", "_timer")

    def __init__(self, max_seconds: float | None, big_after: int | None = None) -> None:
        global _gc_depth, _gc_was_enabled
        with _gc_lock:
            if _gc_depth == 0:
                _gc_was_enabled = gc.isenabled()
                gc.disable()
            _gc_depth += 1
            self._held = True
        # Young objects from which the pause counts as big (None: _COLLECT_AFTER_YOUNG).
        self._big_after = big_after
        self._timer: threading.Timer | None = None
        if max_seconds is not None:
            self._timer = threading.Timer(max_seconds, self.release)
            self._timer.daemon = True
            self._timer.start()

    def grown(self) -> bool:
        """Whether this hold has seen enough young objects to end as a big one (if it is the
        only hold and the collector was on: `release` checks those)."""
        big_after = _COLLECT_AFTER_YOUNG if self._big_after is None else self._big_after
        return gc.get_count()[0] >= big_after

    def release(self) -> bool:
        """End this hold; True when it was big (its survivors left the young generations)."""
        global _gc_survivors
        with _gc_lock:
            if not self._held:
                return False
            self._held = False
            young = gc.get_count()[0]
            big_after = _COLLECT_AFTER_YOUNG if self._big_after is None else self._big_after
            big = _gc_depth == 1 and _gc_was_enabled and young >= big_after
            was_big = big
            # After a pause that created many objects (see _COLLECT_AFTER_YOUNG) they leave
            # the young generations at once: untraversed (frozen) when possible, else by one full
            # collection, unless they are few beside the survivors of earlier ones (the
            # quarter rule of CPython's own), so consecutive pauses, such as the pages of a
            # long list, stay linear.
            if big and _freeze_survivors():
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
        return was_big


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


def paused_over(items: Iterable[T], max_seconds: float) -> Generator[T, None, None]:
    """`items`, with the collector held off while they keep coming (a list's items, a
    watch-list's initial events).

    A stall of `max_seconds` ends the hold (a stalled server must not keep the collector off);
    a stream that goes on for longer is held in turns of half that, each ending as a pause does
    (its survivors frozen when they are many: K16), so that every part of a list that takes
    minutes to arrive is frozen, not only its first `max_seconds`. Close the iterator when
    leaving it early (`with contextlib.closing(...)`) to end the hold at once.
    """
    pause = _GcPause(max_seconds)
    turn = max_seconds / 2
    started = time.monotonic()
    try:
        for item in items:
            now = time.monotonic()
            if now - started >= turn:
                pause.release()  # a no-op if a stall already ended it
                pause = _GcPause(max_seconds)
                started = now
            yield item
    finally:
        pause.release()


# First reads of lazy objects (their model builds) come in bursts: a controller reads every
# object of its initial list, or a batch of events. Each build allocates ~126 tracked objects
# that survive; with the collector on, the growing heap triggers full collections that walk
# everything built so far (two thirds of a first read of 10,000 pods, issue 26). So a build
# holds the collector off until READ_QUIET seconds pass without another (at most READ_LONGEST
# seconds in a row), and the hold then ends as any pause does: a big one (a burst of ~800
# pods or more) freezes its survivors untraversed, a small one (a steady
# trickle of events) just turns the collector back on, which then runs as it would have.
# A hold that reads keep extending but that is not big yet at READ_LONGEST (a slow or busy
# machine: fewer builds per second) goes on until it is, for at most READ_LONGEST_GROWING
# seconds, so that how big a burst is does not depend on the machine's speed; and a hold that
# starts within READ_RESUMES seconds of a big one cut while reads kept coming continues it.
READ_QUIET = 0.05
READ_LONGEST = 2.0
READ_LONGEST_GROWING = 8.0
READ_RESUMES = 0.5


class _ReadBurst:
    __slots__ = ("_continues_until", "_last", "_lock", "_pause", "_started")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pause: _GcPause | None = None
        self._last = 0.0
        self._started = 0.0
        # A big hold cut while reads kept coming is continued by a hold that starts before this
        # time: its survivors leave the young generations however few they are (the tail of a
        # long first read of the cache is the cache's too). Set before the cut hold is
        # released, so that a read arriving during the release continues it.
        self._continues_until = 0.0

    def touch(self) -> None:
        now = time.monotonic()
        self._last = now
        if self._pause is not None:
            return
        with self._lock:
            if self._held():  # another thread started this burst meanwhile
                return
            continues = now <= self._continues_until
            self._pause = _GcPause(None, big_after=0 if continues else None)
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
            reading = quiet_left > 0
            held = now - self._started
            if reading and (
                held < READ_LONGEST or (held < READ_LONGEST_GROWING and not pause.grown())
            ):
                pause = None  # reads keep coming: look again when they may have stopped
            else:
                self._pause = None
                if reading and pause.grown():  # a big hold cut while reads keep coming
                    self._continues_until = now + READ_RESUMES
        if pause is None:
            self._check_in(max(quiet_left, 0.001))
            return
        if pause.release():
            trim_heap()  # what whole builds freed (their raw bytes) back to the OS (K23)

    def end(self) -> None:
        """End the current hold now (tests; a process about to measure itself)."""
        with self._lock:
            pause, self._pause = self._pause, None
        if pause is not None and pause.release():
            trim_heap()


_read_burst = _ReadBurst()


# A lazy object's model (or a field of it) is about to be built: hold the collector off for
# this burst. The bound method itself: it runs on every first read of a field.
read_burst = _read_burst.touch


def end_read_burst() -> None:
    """End a read burst's hold on the collector now, if one is held."""
    _read_burst.end()
