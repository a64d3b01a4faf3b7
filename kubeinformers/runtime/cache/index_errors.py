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
from typing import Any

from kubeinformers.runtime.api.keys import NoMetadataError, object_resource_version
from kubeinformers.runtime.cache.store import IndexFuncError

__all__ = ["IndexFailureLog"]


def _version(obj: Any) -> str:
    try:
        rv = object_resource_version(obj)
    except NoMetadataError:
        return ""
    return f" (resourceVersion {rv})" if rv else ""


class IndexFailureLog:
    """An `IndexFailureReporter` (store.py) that logs for one informer."""

    __slots__ = ("informer", "logger")

    def __init__(self, informer: str, logger: logging.Logger) -> None:
        self.informer = informer
        self.logger = logger

    def index_failed(self, index_name: str, key: str, obj: Any, err: IndexFuncError) -> None:
        cause = err.__cause__ if err.__cause__ is not None else err
        self.logger.error(
            "%s: index function %r failed on %s%s: %s: %s; the object is cached and its "
            "handlers are notified, but by_index(%r, ...) leaves it out until a version of it "
            "indexes again (fix the index function to handle such objects)",
            self.informer,
            index_name,
            key,
            _version(obj),
            type(cause).__name__,
            cause,
            index_name,
        )

    def index_recovered(self, index_name: str, key: str, obj: Any) -> None:
        self.logger.info(
            "%s: %s%s is in index %r again", self.informer, key, _version(obj), index_name
        )
