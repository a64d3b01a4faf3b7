"""A ListerWatcher of one shard: the server filters where it can, the client where it cannot.

`ShardedListerWatcher` wraps any ListerWatcher (section N). Every list and watch it sends
carries the shard's `shardSelector` (KEP-5866). The server says it applied the selector by
echoing it in the list's `metadata.shardInfo`; where it does not (the ShardedListAndWatch gate
off, a server older than 1.36, a fake), the same selection is made here, from the same hash,
before any object reaches the reflector's store, and one INFO says so. A watch carries no
echo: its events are checked on the client unless they are a watch-list's initial events and
a one-item LIST just before it was answered with the echo (so a server that honours the
selector streams the initial state unhashed); an event of an object outside the shard is
dropped, and one that arrives while the server was believed to filter turns the client
filter on (a restarted or downgraded server), with an INFO.

An object never leaves its shard by itself: the hash keys (`metadata.uid`,
`metadata.namespace`) are immutable, so an object outside the shard was never let in, and its
later events are dropped as its first was. The shard itself may change (`set_shard`, N8): a
list (all its pages) and the watches after it use the shard in force when the list began, so
the cache always holds one shard's objects; the informer then relists.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, Generic, Literal, TypeVar

from kubeinformers.runtime.api.keys import object_annotations
from kubeinformers.runtime.api.listwatch import (
    INITIAL_EVENTS_END_ANNOTATION,
    CancelsRequests,
    CountsDecodeErrors,
    ListerWatcher,
    ListOptions,
    ObjectList,
    RefreshesCredentials,
    ReportsDecodeErrors,
    ServesResource,
    Watch,
    WatchEvent,
    watch_list_semantics_unsupported,
)
from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.runtime.api.shard import Shard

__all__ = ["ShardFilter", "ShardedListerWatcher"]

T = TypeVar("T")

logger = logging.getLogger("kubeinformers.shard")

ShardFilter = Literal["pending", "server", "client"]
"""Who selects the shard's objects: not known yet (nothing listed), the API server (it echoed
the selector), or the client (it did not)."""


class ShardedListerWatcher(Generic[T]):
    """`inner` restricted to `shard` (section N): the selector on every request, the client's
    own filter where the server does not apply it. `filter` says which is in force;
    `dropped` counts the objects the client filter left out.

    `set_shard` changes the shard (None: every object, requests go out unchanged); the
    change takes effect at the next list (N8): a list's pages and the watches that follow it
    use `listed_shard`, the shard in force when that list began. `on_list_start`, when set,
    is called (on the reflector's thread, before the request) whenever a list or watch-list
    of a newer shard begins."""

    def __init__(self, inner: ListerWatcher[T], shard: Shard | None, *, name: str = "") -> None:
        if shard is not None and not isinstance(shard, Shard):
            raise TypeError(f"shard must be a Shard (Shard.static(i, n), ...), not {shard!r}")
        self.inner = inner
        if isinstance(inner, ServesResource):
            # Its own attribute, only then: ServesResource matches this wrapper exactly when
            # it matches the inner source (Python 3.12's protocol checks see a property of
            # the class whatever it would raise).
            self.resource: APIResource = inner.resource
        self.name = name or repr(inner)
        self.dropped = 0
        self._filter: ShardFilter = "pending"
        self._told_client = False
        self._lock = threading.Lock()
        # The shard asked for and its generation (bumped by set_shard) ...
        self._shard = shard
        self._generation = 0
        # ... and the shard of the list the cache holds now (pinned when a list begins).
        self._listed_shard = shard
        self._listed_selector = shard.selector() if shard is not None else None
        self._listed_generation = 0
        # The shards of the lists begun since the cache last held one shard whole (N9).
        self._unsettled: tuple[Shard | None, ...] = (shard,)
        self.on_list_start: Callable[[], None] | None = None

    # ----------------------------------------------------------------------------- the shard

    @property
    def shard(self) -> Shard | None:
        """The shard asked for (the next list's); None: every object."""
        return self._shard

    @property
    def selector(self) -> str | None:
        """The selector in force: that of the shard of the current list and watches."""
        return self._listed_selector

    @property
    def listed_shard(self) -> Shard | None:
        """The shard of the last list begun: what the cache holds (or is being filled with)."""
        return self._listed_shard

    @property
    def generation(self) -> int:
        """Bumped by every `set_shard`."""
        return self._generation

    @property
    def listed_generation(self) -> int:
        """The generation of the last list begun; `generation` once a list of the current
        shard has begun."""
        return self._listed_generation

    def set_shard(self, shard: Shard | None) -> bool:
        """Ask for `shard` from the next list on; False when it is the shard asked for
        already (nothing to do)."""
        if shard is not None and not isinstance(shard, Shard):
            raise TypeError(f"shard must be a Shard (Shard.static(i, n), ...), not {shard!r}")
        with self._lock:
            if shard == self._shard:
                return False
            self._shard = shard
            self._generation += 1
            return True

    def _begin_list(self) -> None:
        """A list (or watch-list) begins: pin the shard asked for; tell the informer first."""
        with self._lock:
            changed = self._listed_generation != self._generation
            shard, generation = self._shard, self._generation
        if changed and self.on_list_start is not None:
            self.on_list_start()
        with self._lock:
            self._listed_shard = shard
            self._listed_selector = shard.selector() if shard is not None else None
            self._listed_generation = generation
            if changed:
                self._unsettled = (*self._unsettled, shard)

    def left_shard(self, obj: object) -> bool:
        """Whether a relist's tombstone of `obj` means it left the shard (N9): it lies
        outside the shard of a list begun since the cache last held one shard whole (the
        tombstone came from that list, or a later one)."""
        return any(s is not None and not s.contains(obj) for s in self._unsettled)

    def settle(self) -> None:
        """The cache holds the last list's shard whole (its Replace is processed)."""
        with self._lock:
            self._unsettled = (self._listed_shard,)

    # ----------------------------------------------------------------------------- state

    @property
    def filter(self) -> ShardFilter:
        """ "server", "client", or "pending" before the first answer."""
        return self._filter

    def _set_filter(self, value: ShardFilter, why: str) -> None:
        with self._lock:
            previous, self._filter = self._filter, value
            first_client = value == "client" and not self._told_client
            if first_client:
                self._told_client = True
        if value == previous:
            return
        if value == "client":
            logger.log(
                logging.INFO if first_client or previous == "server" else logging.DEBUG,
                "%s: %s; selecting shard %s on the client (every object still crosses the "
                "network; enable the ShardedListAndWatch feature gate on the API server, "
                "Kubernetes 1.36+, to have it filter)",
                self.name,
                why,
                self._describe(),
            )
        else:
            logger.log(
                logging.INFO if previous == "client" else logging.DEBUG,
                "%s: the API server applies shard %s (%s)",
                self.name,
                self._describe(),
                why,
            )

    def _describe(self) -> str:
        shard = self._listed_shard
        return shard.describe() if shard is not None else "(none)"

    def _verdict(self, page: ObjectList[T]) -> bool:
        """True when the server says it applied our selector to `page`."""
        echoed = page.shard_selector
        if echoed == self._listed_selector:
            self._set_filter("server", "it echoes the selector in shardInfo")
            return True
        if echoed:
            logger.warning(
                "%s: the API server applied shard selector %r, not the %r asked for; "
                "filtering on the client as well",
                self.name,
                echoed,
                self._listed_selector,
            )
            self._set_filter("client", "the server applied another shard selector")
        else:
            self._set_filter(
                "client", "the API server does not honour shardSelector (no shardInfo in its list)"
            )
        return False

    # ----------------------------------------------------------------------------- list

    def _options(self, options: ListOptions) -> ListOptions:
        return options.copy(shard_selector=self._listed_selector)

    def list(self, options: ListOptions) -> ObjectList[T]:
        """One page of the shard (N2): the server's if it echoed the selector, else the
        page filtered here. A first page (no continue token) pins the shard asked for."""
        if not options.continue_:
            self._begin_list()
        shard = self._listed_shard
        if shard is None:
            return self.inner.list(options)
        page = self.inner.list(self._options(options))
        if self._verdict(page):
            return page
        contains = shard.contains
        kept = [obj for obj in page.items if contains(obj)]
        self.dropped += len(page.items) - len(kept)
        page.items = kept
        return page

    # ----------------------------------------------------------------------------- watch

    def watch(self, options: ListOptions) -> Watch[T]:
        """A watch of the shard (N3): a watch-list's initial events go unhashed only when a
        one-item LIST just before it had the server's echo; every other event is checked."""
        trust_initial = False
        if options.send_initial_events:
            self._begin_list()  # a watch-list is a list
        shard = self._listed_shard
        if shard is None:
            return self.inner.watch(options)
        if options.send_initial_events:
            trust_initial = self._probe()
        inner = self.inner.watch(self._options(options))
        return _ShardedWatch(inner, self, trust_initial=trust_initial, shard=shard)

    def _probe(self) -> bool:
        """Ask the server (a LIST of one item) whether it applies the selector."""
        try:
            page = self.inner.list(ListOptions(limit=1, shard_selector=self._listed_selector))
        except Exception as e:
            logger.debug("%s: shard probe failed (%s); checking every object", self.name, e)
            return False
        return self._verdict(page)

    def _out_of_shard(self, shard: Shard) -> None:
        """An event of an object outside the shard came in (and is dropped)."""
        self.dropped += 1
        if self._filter != "client" and shard == self._listed_shard:
            self._set_filter("client", "the API server sent an object outside the shard")

    # ------------------------------------------------------------- the inner one's capabilities

    def is_watch_list_semantics_unsupported(self) -> bool:
        return watch_list_semantics_unsupported(self.inner)

    def cancel_requests(self) -> None:
        if isinstance(self.inner, CancelsRequests):
            self.inner.cancel_requests()

    def set_decode_error_handler(self, handler: Callable[[BaseException], None]) -> None:
        if isinstance(self.inner, ReportsDecodeErrors):
            self.inner.set_decode_error_handler(handler)

    def wait_for_new_credentials(self, stop: threading.Event, timeout: float) -> bool:
        if isinstance(self.inner, RefreshesCredentials):
            return self.inner.wait_for_new_credentials(stop, timeout)
        stop.wait(timeout)  # what the reflector waits for a source whose credentials are fixed
        return False

    @property
    def decode_errors(self) -> int:
        """The inner source's count, 0 when it keeps none (what the informer's metrics read
        of a source that does not count)."""
        inner = self.inner
        return inner.decode_errors if isinstance(inner, CountsDecodeErrors) else 0

    def __getattr__(self, name: str) -> Any:
        # Everything else the inner source offers (describe(), server, ...). Not what a
        # protocol check finds: since Python 3.12 those see only the class's and the
        # instance's own attributes, so each capability is written out above.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        shard = self._shard
        return f"ShardedListerWatcher({self.inner!r}, {shard.describe() if shard else None})"


class _ShardedWatch(Generic[T]):
    """The inner watch's events, those of objects outside the shard left out."""

    __slots__ = ("_inner", "_owner", "_shard", "_trust_initial")

    def __init__(
        self,
        inner: Watch[T],
        owner: ShardedListerWatcher[T],
        *,
        trust_initial: bool,
        shard: Shard | None = None,
    ) -> None:
        self._inner = inner
        self._owner = owner
        shard = shard if shard is not None else owner.listed_shard
        if shard is None:
            raise ValueError("a sharded watch needs a shard")
        self._shard = shard
        self._trust_initial = trust_initial

    def stop(self) -> None:
        self._inner.stop()

    def __iter__(self) -> Iterator[WatchEvent[T]]:
        owner = self._owner
        shard = self._shard
        contains = shard.contains
        trusted = self._trust_initial  # until the initial-events-end bookmark
        events = iter(self._inner)
        try:
            for event in events:
                etype = event.type
                if etype == "BOOKMARK":
                    if trusted and (
                        object_annotations(event.object).get(INITIAL_EVENTS_END_ANNOTATION)
                        == "true"
                    ):
                        trusted = False
                elif etype != "ERROR" and not trusted and not contains(event.object):
                    owner._out_of_shard(shard)
                    continue
                yield event
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                try:
                    close()
                except ValueError:  # still running in another thread: it ends by itself
                    pass
