"""Paged LIST: follow continue tokens into one list (client-go: tools/pager/pager.go).

Used by the reflector (D7/D8) and the watch-list consistency detector (D20).
"""

from __future__ import annotations

from typing import TypeVar

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.listwatch import ListerWatcher, ListOptions, ObjectList

T = TypeVar("T")

DEFAULT_PAGE_SIZE = 500


def list_pages(
    lister_watcher: ListerWatcher[T], options: ListOptions, page_size: int = DEFAULT_PAGE_SIZE
) -> tuple[ObjectList[T], bool]:
    """List every page; returns the merged list (with the first page's RV) and whether it was paged.

    `options.limit` wins over `page_size`; a page size of 0 asks for one unpaged list.
    Continuation requests clear resourceVersion and resourceVersionMatch (the server refuses
    them with `continue`). An Expired error on a continuation page falls back to one unpaged
    list at the originally requested RV (D8; Expired only, not Gone). A server that ignores
    `limit` simply answers with one complete page.
    """
    if not options.limit:
        options = options.copy(limit=page_size or None)
    requested_rv = options.resource_version
    requested_match = options.resource_version_match
    merged: ObjectList[T] | None = None
    paginated = False
    while True:
        try:
            page = lister_watcher.list(options)
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
            merged = ObjectList(
                items=list(page.items),
                resource_version=page.resource_version,
                shard_selector=page.shard_selector,
            )
        else:
            merged.items.extend(page.items)
        if not page.continue_:
            return merged, paginated
        options = options.copy(
            continue_=page.continue_, resource_version=None, resource_version_match=None
        )
        paginated = True


__all__ = ["DEFAULT_PAGE_SIZE", "list_pages"]
