"""How much cyclic garbage a piece of code leaves (K9), measured without walking the heap
the test session has built by then."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator, Sized
from contextlib import contextmanager


@contextmanager
def only_new_objects_collected() -> Iterator[None]:
    """The collector off, and every object alive now out of its reach (`gc.freeze()`), so a
    `gc.collect()` inside looks only at what was made since: a collection then costs what
    the test built, not the ~1 s of walking everything earlier tests imported and generated,
    and finds the same cycles (a cycle of new objects is found whatever old objects it
    refers to). Afterwards every object is collectable again, as other tests expect."""
    was_enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def cyclic_garbage_left_by(build: Callable[[], Sized | None], rounds: int = 3) -> int:
    """What reference counting could not free of what `build` made and dropped, the least of
    `rounds` builds: a cycle of the code under test is left by every build, garbage another
    thread makes meanwhile (one an earlier test left winding down) is not.

    `build` runs once before, outside the count: the first use builds validators, classes and
    caches that live on and are no garbage."""
    with only_new_objects_collected():
        build()
        left = []
        for _ in range(rounds):
            gc.collect()
            made = build()
            del made
            left.append(gc.collect())
        return min(left)


def collected(done: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Whether `done()` holds (a dropped object freed) once the collector has run, asked
    again until `timeout`: one `gc.collect()` is not always a collection.

    - It does nothing while another thread is inside one (CPython runs one collection at a
      time; a leftover thread of an earlier test may be in one, its finalizers closing
      sockets with the GIL released).
    - A burst another thread ends meanwhile may freeze the dropped cycle (K16), which no
      collection then walks: unfrozen here, as the K16 tests leave the process.

    A strong reference that really keeps the object still fails the check."""
    deadline = time.monotonic() + timeout
    retry = threading.Event()
    while True:
        gc.collect()
        if done():
            return True
        if time.monotonic() > deadline:
            return False
        gc.unfreeze()
        retry.wait(0.05)
