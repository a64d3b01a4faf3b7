"""Paged LIST: follow continue tokens into one list (client-go: tools/pager/pager.go).

Used by the reflector (D7/D8) and the watch-list consistency detector (D20). A source that
can read one page ahead (`ReadsPagesAhead`, the HTTP transport) is asked for the next page
while the current one is decoded (D22).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.listwatch import (
    ListerWatcher,
    ListOptions,
    ObjectList,
    ReadsPagesAhead,
)

T = TypeVar("T")

DEFAULT_PAGE_SIZE = 500


class ListStopped(Exception):
    """The paged list's stop event was set: the list ends without a result."""


def continuation(options: ListOptions, continue_: str) -> ListOptions:
    """The next page's options: the continue token, without resourceVersion and
    resourceVersionMatch (the server refuses them with `continue`)."""
    return options.copy(continue_=continue_, resource_version=None, resource_version_match=None)


def list_pages(
    lister_watcher: ListerWatcher[T],
    options: ListOptions,
    page_size: int = DEFAULT_PAGE_SIZE,
    stop: threading.Event | None = None,
) -> tuple[ObjectList[T], bool]:
    """List every page; returns the merged list (with the first page's RV) and whether it was paged.

    `options.limit` wins over `page_size`; a page size of 0 asks for one unpaged list.
    Continuation requests clear resourceVersion and resourceVersionMatch (the server refuses
    them with `continue`). An Expired error on a continuation page falls back to one unpaged
    list at the originally requested RV (D8; Expired only, not Gone). A server that ignores
    `limit` simply answers with one complete page. `stop` set ends the list between pages
    (and a read-ahead wait) with ListStopped.
    """
    if not options.limit:
        options = options.copy(limit=page_size or None)
    if options.limit and isinstance(lister_watcher, ReadsPagesAhead):
        reader = lister_watcher.read_pages_ahead(stop)
        try:
            return _follow(
                lister_watcher,
                options,
                lambda o: reader.list(o, partial(continuation, o)),
                stop,
            )
        finally:
            reader.close()  # a page read ahead that nobody took: its thread and connection end
    return _follow(lister_watcher, options, lister_watcher.list, stop)


def _follow(
    lister_watcher: ListerWatcher[T],
    options: ListOptions,
    list_page: Callable[[ListOptions], ObjectList[T]],
    stop: threading.Event | None,
) -> tuple[ObjectList[T], bool]:
    requested_rv = options.resource_version
    requested_match = options.resource_version_match
    merged: ObjectList[T] | None = None
    paginated = False
    while True:
        if stop is not None and stop.is_set():
            raise ListStopped("the list was stopped")
        try:
            page = list_page(options)
        except ApiStatusError as e:
            if e.reason != "Expired" or not options.continue_:
                raise
            full = lister_watcher.list(
                options.copy(
                    limit=None,
                    continue_=None,
                    resource_version=requested_rv,
                    resource_version_match=requested_match,
                )
            )
            return full, paginated
        if not page.continue_ and merged is None:
            return page, paginated
        if merged is None:
            merged = ObjectList(items=list(page.items), resource_version=page.resource_version)
        else:
            merged.items.extend(page.items)
        if not page.continue_:
            return merged, paginated
        options = continuation(options, page.continue_)
        paginated = True


__all__ = ["DEFAULT_PAGE_SIZE", "ListStopped", "continuation", "list_pages"]
