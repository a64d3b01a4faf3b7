"""The reflector's paged LIST: the initial state (and every relist) at the relist
resourceVersion, into the store (client-go: tools/cache/reflector.go `list`, rules D6-D9).

Paging follows continue tokens (`client.pager`); the LIST runs on a helper thread so a stop
ends the wait at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from kubeinformers.runtime.api.errors import is_expired, is_too_large_resource_version
from kubeinformers.runtime.api.listwatch import ListerWatcher, ListOptions, ObjectList
from kubeinformers.runtime.client.pager import DEFAULT_PAGE_SIZE, list_pages
from kubeinformers.runtime.metrics import ReflectorCounters
from kubeinformers.runtime.reflector.outage import OutageLog, is_server_unavailable
from kubeinformers.runtime.reflector.state import ReflectorState
from kubeinformers.runtime.reflector.support import wrap_list_error

T = TypeVar("T")

logger = logging.getLogger("kubeinformers.reflector")  # the reflector's logger


class PagedList(Generic[T]):
    """D6-D9: one LIST of the resource into `store` per `run`."""

    def __init__(
        self,
        lister_watcher: ListerWatcher[T],
        store: Any,
        state: ReflectorState,
        counters: ReflectorCounters,
        *,
        name: str,
        type_description: str,
        page_size: int,
        outage: OutageLog,
    ) -> None:
        self.lister_watcher = lister_watcher
        self.store = store
        self.state = state
        self.counters = counters
        self.name = name
        self.type_description = type_description
        self.page_size = page_size
        self.outage = outage

    def run(self, stop: threading.Event) -> None:
        """D6-D9: paged LIST at the relist RV, one immediate retry at "" on 410/too-large."""
        rv = self.state.relist_resource_version()
        options = ListOptions(resource_version=rv)
        # D7: choose the page size once per attempt; the D8 retry reuses it.
        if self.page_size:
            page_size = self.page_size
        elif self.state.paginated_result:
            page_size = DEFAULT_PAGE_SIZE
        elif rv not in ("", "0"):
            page_size = 0  # let the watch cache serve it
        else:
            page_size = DEFAULT_PAGE_SIZE

        def list_with_retry() -> tuple[ObjectList[T], bool]:
            try:
                return list_pages(self.lister_watcher, options, page_size)
            except Exception as e:
                if not (is_expired(e) or is_too_large_resource_version(e)):
                    raise
                self.counters.expired += 1
                self.counters.list_calls += 1  # the reflector's thread waits meanwhile
                with self.state.lock:
                    self.state.rv_unavailable = True
                logger.debug(
                    '%s: list at RV %r unavailable (%s); relisting at ""', self.name, rv, e
                )
                return list_pages(
                    self.lister_watcher,
                    ListOptions(resource_version=self.state.relist_resource_version()),
                    page_size,
                )

        self.counters.list_calls += 1
        try:
            outcome = self._interruptible(stop, list_with_retry)
        except Exception as e:
            if is_server_unavailable(e):
                self.outage.failed(f"list of {self.type_description}", e)
            else:
                # The error goes on to the watch error handler, which reports it (the
                # default once per cause until the watch works again, D22).
                logger.log(
                    logging.DEBUG,
                    "%s: failed to list %s: %s",
                    self.name,
                    self.type_description,
                    e,
                )
            raise wrap_list_error(self.type_description, e) from e
        if outcome is None:
            return  # stop requested
        self.outage.recovered()
        result, paginated = outcome
        if rv == "0" and paginated:
            self.state.paginated_result = True  # D7: sticky
        with self.state.lock:
            self.state.rv_unavailable = False
        try:
            self.store.replace(result.items, result.resource_version)
        except Exception as e:
            raise RuntimeError(f"unable to sync list result: {e}") from e
        self.counters.lists += 1
        self.state.set_last_sync_rv(result.resource_version)

    def _interruptible(
        self, stop: threading.Event, fn: Callable[[], tuple[ObjectList[T], bool]]
    ) -> tuple[ObjectList[T], bool] | None:
        """Run a (paged) LIST on a helper thread so that `stop` ends the wait at once.

        As client-go's list goroutine: when stop wins, the result is dropped and None returned.
        """
        done = threading.Event()
        box: list[tuple[ObjectList[T], bool] | BaseException] = []

        def target() -> None:
            try:
                box.append(fn())
            except BaseException as e:
                box.append(e)
            finally:
                done.set()

        with self.state.lock:
            if stop.is_set():
                return None
            self.state.interrupt = done
        threading.Thread(target=target, name=f"reflector-list:{self.name}", daemon=True).start()
        done.wait()
        with self.state.lock:
            self.state.interrupt = None
        if stop.is_set() or not box:
            return None
        value = box[0]
        if isinstance(value, BaseException):
            raise value
        return value


__all__ = ["PagedList"]
