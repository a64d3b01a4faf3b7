"""How an informer reports an index function that fails on an object (rule B18).

An informer's cache tolerates a failing index function: the object is stored and its
notification delivered as always, it is only left out of that index until a later version
indexes again. This reporter says so in the informer's log: one ERROR per object version and
index (a relist that re-indexes the same version says nothing), one INFO when the object is
back in the index. The store counts the failures (`metrics().index_errors`) and lists the
objects left out (`health().unindexed_objects`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from kubeinformers.runtime.api.keys import NoMetadataError, object_resource_version
from kubeinformers.runtime.cache.store import IndexFuncError

__all__ = ["ERRORS_PER_WINDOW", "WINDOW_SECONDS", "IndexFailureLog"]


def _version(obj: Any) -> str:
    try:
        rv = object_resource_version(obj)
    except NoMetadataError:
        return ""
    return f" (resourceVersion {rv})" if rv else ""


ERRORS_PER_WINDOW = 10
"""B18: ERROR lines per index in one window; the rest of the window's failures go to DEBUG."""
WINDOW_SECONDS = 60.0


class IndexFailureLog:
    """An `IndexFailureReporter` (store.py) that logs for one informer.

    At most ERRORS_PER_WINDOW failures of one index are ERRORs in WINDOW_SECONDS, the last of
    them saying so; the others are DEBUG (still counted and listed by the store): an index
    function that fails on every object (a CRD upgraded under it) would otherwise log one
    ERROR per cached object at the next sync.
    """

    __slots__ = ("_clock", "_windows", "informer", "logger")

    def __init__(
        self,
        informer: str,
        logger: logging.Logger,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.informer = informer
        self.logger = logger
        self._clock = clock
        # index name -> (window start, ERRORs logged in it); written under the store's lock.
        self._windows: dict[str, tuple[float, int]] = {}

    def index_failed(self, index_name: str, key: str, obj: Any, err: IndexFuncError) -> None:
        cause = err.__cause__ if err.__cause__ is not None else err
        now = self._clock()
        start, logged = self._windows.get(index_name, (now, 0))
        if now - start >= WINDOW_SECONDS:
            start, logged = now, 0
        self._windows[index_name] = (start, logged + 1)
        if logged >= ERRORS_PER_WINDOW:
            level = logging.DEBUG
            more = ""
        else:
            level = logging.ERROR
            more = (
                f"; {ERRORS_PER_WINDOW} failures of index {index_name!r} in "
                f"{WINDOW_SECONDS:.0f} s: its further failures in that time are logged at DEBUG "
                "(metrics().index_errors counts them, health().problems() lists them)"
                if logged + 1 == ERRORS_PER_WINDOW
                else ""
            )
        self.logger.log(
            level,
            "%s: index function %r failed on %s%s: %s: %s; the object is cached and its "
            "handlers are notified, but by_index(%r, ...) leaves it out until a version of it "
            "indexes again (fix the index function to handle such objects)%s",
            self.informer,
            index_name,
            key,
            _version(obj),
            type(cause).__name__,
            cause,
            index_name,
            more,
        )

    def index_recovered(self, index_name: str, key: str, obj: Any) -> None:
        self.logger.info(
            "%s: %s%s is in index %r again", self.informer, key, _version(obj), index_name
        )
