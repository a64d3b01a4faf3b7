"""SharedInformerFactory: one shared informer per resource, started, synced and stopped together.

client-go counterparts: informers/factory.go (rules H1-H5), informers/generic.go (H6).

The factory is keyed by GroupVersionResource (client-go keys by Go type; a GVR is what Python
code has). Generated code asks it for informers through `typed_informer(resource, model)`; the
first request for a resource creates the informer (so the first creator's options win, H2),
later requests share it. Informers run on daemon threads that all watch one stop event, which
`shutdown()` sets before joining them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import logging
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar, cast

from kubeinformers.runtime.api.fields import field_of
from kubeinformers.runtime.api.keys import (
    object_labels,
    object_name,
    object_resource_version,
    object_uid,
)
from kubeinformers.runtime.api.kinds import ListedModel, lister_class, resource_of
from kubeinformers.runtime.api.listwatch import ListOptions
from kubeinformers.runtime.api.model import Status
from kubeinformers.runtime.api.resource import APIResource, GroupVersionResource
from kubeinformers.runtime.api.shard import Shard
from kubeinformers.runtime.cache.freshness import ReadYourWritesTimeout
from kubeinformers.runtime.cache.health import FactoryHealth, InformerHealth
from kubeinformers.runtime.cache.informer import (
    QUEUE_KINDS,
    InformerStartedError,
    QueueKind,
    SharedIndexInformer,
)
from kubeinformers.runtime.cache.listers import GenericLister
from kubeinformers.runtime.cache.store import NAMESPACE_INDEX, meta_namespace_index_func
from kubeinformers.runtime.clock import Now
from kubeinformers.runtime.codec.compact import CACHE_COMPRESSIONS, CacheCompression
from kubeinformers.runtime.labels.parser import to_selector

if TYPE_CHECKING:
    from kubeinformers.runtime.client.api_client import ApiClient
    from kubeinformers.runtime.client.transport import DecodeMode, WireFormat
    from kubeinformers.runtime.client.typed import AsyncClient, Client

__all__ = [
    "CacheSyncTimeoutError",
    "GenericInformer",
    "NoInformerFoundError",
    "SharedInformerFactory",
    "StartableFactory",
    "TransformFunc",
    "TweakListOptionsFunc",
]

T = TypeVar("T")
L = TypeVar("L")

logger = logging.getLogger("kubeinformers.factory")

TweakListOptionsFunc = Callable[[ListOptions], ListOptions]
TransformFunc = Callable[[Any], Any]

# How often wait_for_cache_sync re-checks has_synced (client-go polls every 100 ms); it starts
# faster so that small caches in tests and short-lived tools do not pay the full period.
_POLL_FIRST = 0.005
_POLL_MAX = 0.1
# Threads that run event handlers (processor.py names them so); see shutdown().
_HANDLER_THREAD_PREFIX = "kubeinformers-handler-"


class NoInformerFoundError(LookupError):
    """`for_resource` was asked for a resource the factory does not know (H6)."""

    def __init__(self, gvr: GroupVersionResource, hint: str = "") -> None:
        message = f"no informer found for {gvr}" + (f": {hint}" if hint else "")
        mistake = gvr.core_group_mistake()  # H6
        if mistake:
            message += f"; {mistake}"
        super().__init__(message)
        self.gvr = gvr


class CacheSyncTimeoutError(TimeoutError):
    """`wait_for_cache_sync_or_raise`, `async with factory` or `factory.running()` ended with
    caches not synced; the message names each one and its last list/watch error (`unsynced`
    maps each resource to that error or None; `pending` lists them). Also raised by entering
    a factory that was shut down (`with`, `async with`, `running()`: H4)."""

    def __init__(
        self,
        unsynced: Mapping[GroupVersionResource, BaseException | None],
        timeout: float | None,
        *,
        reason: str = "",
    ) -> None:
        within = f" within {timeout:g} s" if timeout is not None else ""
        lines = [
            f"  {gvr.group_resource()} ({gvr.group_version}): "
            + (f"last error: {err}" if err is not None else "no list or watch error yet")
            for gvr, err in unsynced.items()
        ]
        count = len(unsynced)
        super().__init__(
            f"{count} informer{'s' if count != 1 else ''} did not sync{within}"
            + (f" ({reason})" if reason else "")
            + ":\n"
            + "\n".join(lines)
        )
        self.unsynced: dict[GroupVersionResource, BaseException | None] = dict(unsynced)

    @property
    def pending(self) -> list[GroupVersionResource]:
        """The resources whose informers did not sync."""
        return list(self.unsynced)


class StartableFactory(Protocol):
    """What the generated accessors and `CustomInformers` need of a factory."""

    def start(self) -> None: ...

    def wait_for_cache_sync(
        self, timeout: float | None = None
    ) -> dict[GroupVersionResource, bool]: ...

    def shutdown(self, timeout: float | None = None) -> None: ...


class GenericInformer(Generic[T]):
    """An informer plus a generic lister over its indexer (informers/generic.go, H6, H10)."""

    __slots__ = ("_gvr", "_informer")

    def __init__(self, informer: SharedIndexInformer[T], gvr: GroupVersionResource) -> None:
        self._informer = informer
        self._gvr = gvr

    @property
    def gvr(self) -> GroupVersionResource:
        return self._gvr

    def informer(self) -> SharedIndexInformer[T]:
        return self._informer

    def lister(self) -> GenericLister[T]:
        return GenericLister(self._informer.get_indexer(), self._gvr)


def _informer_name(resource: APIResource) -> str:
    return resource.gvr.group_resource()


class SharedInformerFactory:
    """Shares one informer per resource among everything that asks for it (H1-H6).

    `namespace` restricts namespaced resources to one namespace (ignored for cluster-scoped
    ones, H8); `tweak_list_options` rewrites every list and watch request (e.g. to add a label
    selector); `transform` is installed on every informer the factory creates (H2);
    `custom_resync` maps a resource to its own resync period (seconds); `queue` chooses every
    informer's queue: "atomic" (RealFIFO in atomic mode, client-go v0.36's and the default),
    "ordered" (RealFIFO) or "delta" (DeltaFIFO; see `SharedIndexInformer`);
    `decode` is "lazy" (models built on first access, the default) or "eager";
    `wire_format` is "protobuf" (built-in kinds decoded lazily come as protobuf, the default)
    or "json"; `cache_compression` is "none" (the default) or "zlib": the compact store, where
    lazy objects keep their raw bytes compressed with a dictionary per informer, trained from
    its first objects (about a tenth of the memory per cached object's bytes, ~5 µs more on
    each object's first full read; needs decode="lazy"). `use_watch_list` chooses how every
    informer gets its initial state: None (the default) follows client-go's `WatchListClient`
    gate (`KUBE_FEATURE_WatchListClient`, on unless set false): a watch-list stream where the
    server supports it; False: a LIST then a WATCH; True: watch-list even where the gate is off
    (a server without it still gets the LIST). `shard` restricts every informer to one shard of
    the objects (section N, docs/guide/scaling.md): `Shard.static(index, total)` for replica
    `index` of `total`; the API server selects them where it supports KEP-5866 sharded
    list and watch (1.36+, the ShardedListAndWatch gate), the client elsewhere.

    Use it as a context manager to have `shutdown()` called on exit.
    """

    def __init__(
        self,
        api_client: ApiClient,
        resync_period: float = 0.0,
        *,
        namespace: str | None = None,
        tweak_list_options: TweakListOptionsFunc | None = None,
        transform: TransformFunc | None = None,
        custom_resync: Mapping[GroupVersionResource, float] | None = None,
        decode: DecodeMode = "lazy",
        wire_format: WireFormat = "protobuf",
        cache_compression: CacheCompression = "none",
        queue: QueueKind = "atomic",
        watch_idle_timeout: float | None = None,
        sync_timeout: float = 60.0,
        use_watch_list: bool | None = None,
        shard: Shard | None = None,
    ) -> None:
        if resync_period < 0:
            raise ValueError(f"resync_period must be >= 0 seconds, got {resync_period}")
        self._api_client = api_client
        self._default_resync = float(resync_period)
        self._namespace = namespace or ""
        self._tweak_list_options = tweak_list_options
        self._transform = transform
        self._custom_resync: dict[GroupVersionResource, float] = dict(custom_resync or {})
        for gvr, period in self._custom_resync.items():
            mistake = gvr.core_group_mistake()  # H6: a key no informer has would be ignored
            if mistake:
                raise ValueError(f"custom_resync names {gvr}: {mistake}")
            if period < 0:
                raise ValueError(
                    f"custom_resync period of {gvr} must be >= 0 seconds, got {period}"
                )
        # "lazy": typed objects are built on first access from the raw item (fast sync,
        # little memory); "eager": validated up front (a bad object is reported at decode time
        # once and cached at the version the server sent, built field by field: only its bad
        # fields raise when read; K7, K11, docs/guide/options.md).
        self._decode: DecodeMode = decode
        # "protobuf": built-in kinds decoded lazily are asked for as protobuf, as client-go's
        # clientsets do (the server writes it twice as fast as JSON; custom resources and
        # decode="eager" stay JSON). "json": everything as JSON.
        if wire_format not in ("protobuf", "json"):
            raise ValueError(f'wire_format must be "protobuf" or "json", not {wire_format!r}')
        self._wire_format: WireFormat = wire_format
        # "zlib": the compact store (runtime.codec.compact); lazy objects only.
        if cache_compression not in CACHE_COMPRESSIONS:
            raise ValueError(
                f'cache_compression must be "none" or "zlib", not {cache_compression!r}'
            )
        if cache_compression != "none" and decode != "lazy":
            raise ValueError(
                'cache_compression compresses lazy objects: it needs decode="lazy", '
                f"not decode={decode!r}"
            )
        self._cache_compression: CacheCompression = cache_compression
        if queue not in QUEUE_KINDS:
            raise ValueError(f'queue must be "delta", "ordered" or "atomic", not {queue!r}')
        self._queue: QueueKind = queue
        if watch_idle_timeout is not None and watch_idle_timeout <= 0:
            raise ValueError(f"watch_idle_timeout must be > 0 seconds, got {watch_idle_timeout}")
        # A watch silent (no byte, not even a bookmark) for this long is reconnected.
        self._watch_idle_timeout = watch_idle_timeout
        # `async with factory`: how long entering waits for every informer to sync.
        self._sync_timeout = sync_timeout
        self._use_watch_list = use_watch_list
        if shard is not None and not isinstance(shard, Shard):
            raise TypeError(f"shard must be a Shard (Shard.static(i, n), ...), not {shard!r}")
        self._shard = shard
        self._shard_transition: str | None = None
        self._holds_no_range = False
        self._lock = threading.Lock()
        self._informers: dict[GroupVersionResource, SharedIndexInformer[Any]] = {}
        self._threads: dict[GroupVersionResource, threading.Thread] = {}
        # start() was called (H3): informers requested from then on start at once, also when
        # that start found none to run.
        self._started = False
        self._extra_models: dict[GroupVersionResource, tuple[APIResource, type[Any] | str]] = {}
        self._stop = threading.Event()
        # Set when a started informer syncs or the factory shuts down: wakes the sync waiters.
        self._sync_wake = threading.Event()
        self._shutting_down = False

    # --- options ---------------------------------------------------------------------------

    @property
    def api_client(self) -> ApiClient:
        """The kubernetes ApiClient every informer of this factory lists and watches through."""
        return self._api_client

    @property
    def namespace(self) -> str:
        """The namespace namespaced informers are restricted to ("" = all namespaces)."""
        return self._namespace

    @property
    def tweak_list_options(self) -> TweakListOptionsFunc | None:
        return self._tweak_list_options

    @property
    def queue(self) -> QueueKind:
        """The queue of every informer this factory creates ("delta", "ordered", "atomic")."""
        return self._queue

    @property
    def use_watch_list(self) -> bool | None:
        """How informers get their initial state: None = client-go's WatchListClient gate."""
        return self._use_watch_list

    @property
    def shard(self) -> Shard | None:
        """The shard every informer of this factory caches (section N); None: everything."""
        return self._shard

    def set_shard(self, shard: Shard | None) -> None:
        """Cache `shard` from now on, in every informer of this factory and those it creates
        later (N8): each running one relists (`SharedIndexInformer.set_shard`);
        `wait_for_cache_sync` waits for them all to hold the new shard. A factory created
        without `shard=` can take one only before it starts an informer (create it with
        `Shard.static(0, 1)`, every object, to change its shard while it runs)."""
        if shard is not None and not isinstance(shard, Shard):
            raise TypeError(f"shard must be a Shard (Shard.static(i, n), ...), not {shard!r}")
        with self._lock:
            if self._shard is None and shard is not None and self._threads:
                raise InformerStartedError(
                    "this informer factory was started without a shard: its informers cannot "
                    f"take shard {shard.describe()} while they run; create it with shard=... "
                    "(Shard.static(0, 1) for every object) to change its shard later"
                )
            self._shard = shard
            informers = list(self._informers.values())
        for informer in informers:
            informer.set_shard(shard)

    @property
    def default_resync(self) -> float:
        return self._default_resync

    @property
    def stop_event(self) -> threading.Event:
        """Set by `shutdown()`; every informer the factory started runs until it is set."""
        return self._stop

    def resync_period_for(self, gvr: GroupVersionResource) -> float:
        return self._custom_resync.get(gvr, self._default_resync)

    # --- informers -------------------------------------------------------------------------

    def informer_for(
        self,
        gvr: GroupVersionResource,
        new_informer: Callable[[float], SharedIndexInformer[T]],
    ) -> SharedIndexInformer[T]:
        """The informer for `gvr`, created with `new_informer(resync_period)` on first request.

        H2: an existing informer is returned as is (new_informer is not called, the first
        creator's options win); a new one gets the factory's transform.
        """
        with self._lock:
            existing = self._informers.get(gvr)
            if existing is not None:
                return cast(SharedIndexInformer[T], existing)
            informer = new_informer(self.resync_period_for(gvr))
            if self._transform is not None:
                try:
                    informer.set_transform(self._transform)
                except Exception:  # H2: the error is ignored (an informer already running)
                    logger.warning(
                        "could not install the factory's transform on the informer for %s",
                        gvr,
                        exc_info=True,
                    )
            self._informers[gvr] = informer
            if self._started and not self._shutting_down:
                # Not client-go (H3 there: a later informer waits for the next Start, and
                # WaitForCacheSync skips it, so its lister silently answers nothing): the
                # factory is running, so the late informer runs too (issue 18).
                logger.debug("the factory is running: starting the informer for %s now", gvr)
                self._start_locked(gvr, informer)
            return informer

    def typed_informer(self, resource: APIResource, model: type[T]) -> SharedIndexInformer[T]:
        """The shared informer of `resource`, decoding objects into `model` (H7, H8).

        Built over `ApiListerWatcher` with the factory's namespace (namespaced kinds only) and
        tweak function, and the namespace index.
        """
        return self.informer_for(
            resource.gvr, lambda resync: self.new_typed_informer(resource, model, resync)
        )

    def new_typed_informer(
        self, resource: APIResource, model: type[T], resync_period: float
    ) -> SharedIndexInformer[T]:
        """An unshared informer with this factory's options (`NewFilteredPodInformer`, H8)."""
        from kubeinformers.runtime.client.transport import ApiListerWatcher

        namespace = self._namespace if resource.namespaced and self._namespace else None
        lister_watcher = ApiListerWatcher(
            self._api_client,
            resource,
            model,
            namespace=namespace,
            tweak_list_options=self._tweak_list_options,
            decode=self._decode,
            wire_format=self._wire_format,
            cache_compression=self._cache_compression,
            watch_idle_timeout=self._watch_idle_timeout,
        )
        return SharedIndexInformer(
            lister_watcher,
            model,
            resync_period,
            {NAMESPACE_INDEX: meta_namespace_index_func},
            name=_informer_name(resource),
            queue=self._queue,
            use_watch_list=self._use_watch_list,
            shard=self._shard,
        )

    def informer(self, model: type[T]) -> SharedIndexInformer[T]:
        """The shared informer of a generated model's kind: `factory.informer(Pod)`.

        The same informer as the accessor chain's (`core().v1().pods().informer()`); the model
        knows its resource (`__kube_lister__.RESOURCE`). KindModelError for a class that is
        not a listable kind's generated model.
        """
        return self.typed_informer(resource_of(model), model)

    def lister(self, model: ListedModel[L]) -> L:
        """The typed lister of a generated model's kind over its shared informer's cache:
        `factory.lister(Pod) -> PodLister` (built-in and CRD models alike)."""
        model_class = cast(type[Any], model)
        lister_type = lister_class(model_class)
        informer = self.typed_informer(resource_of(model_class), model_class)
        return cast(L, lister_type(informer.get_indexer(), lister_type.RESOURCE))

    def informers(self) -> dict[GroupVersionResource, SharedIndexInformer[Any]]:
        """A snapshot of every informer requested so far."""
        with self._lock:
            return dict(self._informers)

    # --- for_resource ----------------------------------------------------------------------

    def register_model(self, resource: APIResource, model: type[Any] | str) -> None:
        """Make `for_resource` know a resource outside the built-in registry (e.g. a CRD kind).

        `model` is a class or a lazy "module:Class" path. Generated `CustomInformers` call this
        for their kinds so that `factory.for_resource(gvr)` serves them too.
        """
        with self._lock:
            self._extra_models[resource.gvr] = (resource, model)

    def for_resource(self, gvr: GroupVersionResource) -> GenericInformer[Any]:
        """The shared informer of `gvr` with a generic lister (H6).

        Known resources: the generated built-in registry
        (`kubeinformers.generated.registry.MODELS`) and those added with `register_model`;
        the informer is the same one the typed accessors return. Anything else raises
        NoInformerFoundError (`no informer found for <gvr>`).
        """
        with self._lock:
            existing = self._informers.get(gvr)
            extra = self._extra_models.get(gvr)
        if existing is not None:
            return GenericInformer(existing, gvr)
        if extra is not None:
            resource, model = extra
        else:
            resource, model = _registry_lookup(gvr)
        model_class = _import_model(model, gvr) if isinstance(model, str) else model
        return GenericInformer(self.typed_informer(resource, model_class), gvr)

    # --- the client, and reading its writes ---------------------------------------------------

    def client(
        self,
        *,
        read_your_writes: bool = True,
        read_your_writes_timeout: float = 10.0,
        field_manager: str | None = None,
    ) -> Client:
        """A typed client over this factory's ApiClient whose writes this factory's informers
        see before the write returns (M1): after `client.update(obj)` the lister answers with
        that version or a newer one. `read_your_writes=False` returns at once (the cache
        catches up when its watch delivers the event); a cache that has not caught up within
        `read_your_writes_timeout` seconds raises ReadYourWritesTimeout (the write is done)."""
        from kubeinformers.runtime.client.typed import Client

        return Client(
            self._api_client,
            observer=self,
            read_your_writes=read_your_writes,
            read_your_writes_timeout=read_your_writes_timeout,
            field_manager=field_manager,
        )

    def async_client(
        self,
        *,
        read_your_writes: bool = True,
        read_your_writes_timeout: float = 10.0,
        field_manager: str | None = None,
    ) -> AsyncClient:
        """`client()` for coroutines: the waits for the cache never block the event loop."""
        from kubeinformers.runtime.client.typed import AsyncClient

        return AsyncClient(
            self._api_client,
            observer=self,
            read_your_writes=read_your_writes,
            read_your_writes_timeout=read_your_writes_timeout,
            field_manager=field_manager,
        )

    def _informer_to_wait_for(
        self, resource: APIResource, namespace: str | None, result: object
    ) -> tuple[SharedIndexInformer[Any] | None, bool]:
        """The running, synced informer that will see this write, or None (M1: none of this
        factory's informers watches the object, so there is nothing to wait for); and whether
        the written object is in its selection (False: it fails the informer's label
        selector, or lies in another shard, so the informer sees it only leave, if it held
        it)."""
        with self._lock:
            gvr = resource.gvr
            informer = self._informers.get(gvr)
            if informer is None:
                # Another served version of the resource holds the same objects at the same
                # resourceVersions (one object in storage): its informer sees the write too.
                for other, candidate in self._informers.items():
                    if other.group == gvr.group and other.resource == gvr.resource:
                        gvr, informer = other, candidate
                        break
            running = gvr in self._threads and not self._shutting_down
        # Synced, read without the queue's lock: a transform holds it (for a whole relist at
        # once), and the write must neither wait for it past its timeout nor block a loop.
        if (
            informer is None
            or not running
            or informer.is_stopped()
            or not informer.has_synced_nowait()
        ):
            return None, False
        if resource.namespaced and self._namespace and namespace != self._namespace:
            return None, False
        shard = informer.shard
        if (
            shard is not None
            and not isinstance(result, Status)
            and (shard.key != "uid" or object_uid(result))
            and not shard.contains(result)
        ):
            # Another shard's object (N1-N3): the informer never sees it, so no event will come
            # (it holds it only while a shard change is under way, until its relist).
            return informer, False
        if self._tweak_list_options is not None:
            options = self._tweak_list_options(ListOptions()) or ListOptions()
            if options.field_selector:
                return None, False  # the server filters by fields we cannot evaluate here
            if options.label_selector and not isinstance(result, Status):
                if not to_selector(options.label_selector).matches(object_labels(result)):
                    return informer, False
        return informer, True

    def _write_check(
        self,
        informer: SharedIndexInformer[Any],
        namespace: str | None,
        name: str,
        result: object,
        selected: bool,
    ) -> tuple[str, Callable[[], bool] | None]:
        """The resourceVersion to wait for, or for a delete answered by a Status, or a write
        that lets the server delete the object (`_deleted_by_write`), a check that the key no
        longer holds the deleted object. For an object the write took out of the informer's
        label selector, a check that the cache no longer holds it (the watch says so with a
        DELETED event at the write's resourceVersion), or nothing to wait for when the cache
        does not hold it."""
        if not selected:
            return "", _left_selection(informer, namespace, name or object_name(result), result)
        if not isinstance(result, Status):
            if not _deleted_by_write(result):
                return object_resource_version(result), None
            uid = object_uid(result)
        else:
            uid = (result.details.uid if result.details else None) or ""
        key = f"{namespace}/{name}" if namespace else name
        indexer = informer.get_indexer()

        def gone() -> bool:
            cached = indexer.get_by_key(key)
            return cached is None or (bool(uid) and object_uid(cached) != uid)

        return "", gone

    def _timed_out(
        self,
        informer: SharedIndexInformer[Any],
        resource: APIResource,
        namespace: str | None,
        name: str,
        result: object,
        timeout: float,
    ) -> ReadYourWritesTimeout:
        seen = informer.last_processed_resource_version()
        what = resource.gvr.group_resource()
        key = f'{what} "{name or object_name(result)}"' + (
            f' in namespace "{namespace}"' if namespace else ""
        )
        if isinstance(result, Status):
            change = f"the delete of {key}"
        else:
            change = f"the write of {key} (resourceVersion {object_resource_version(result)})"
        return ReadYourWritesTimeout(
            f"{change} succeeded, but the informer of {what} had not seen it after {timeout:g} s "
            f"(its cache is at resourceVersion {seen or 'none'}): its watch may be down, see "
            "the informer's health(); the write is done, do not repeat it blindly",
            result,
        )

    def wait_for_write(
        self,
        resource: APIResource,
        namespace: str | None,
        name: str,
        result: object,
        timeout: float,
        *,
        deleted: bool = False,
    ) -> None:
        """M1: return once this factory's informer of `resource` has the write's `result` in
        its cache (at once if no running informer of this factory watches it)."""
        informer, selected = self._informer_to_wait_for(resource, namespace, result)
        if informer is None:
            return
        rv, gone = self._write_check(informer, namespace, name, result, selected)
        if gone is not None:
            informer.retry_now()  # the server just answered: no backoff wait for it (D4)
            ok = informer.wait_for_cache(gone, timeout)
        elif rv:
            informer.retry_now()
            ok = informer.wait_for_resource_version(rv, timeout)
        else:
            return
        if not ok:
            raise self._timed_out(informer, resource, namespace, name, result, timeout)

    async def wait_for_write_async(
        self,
        resource: APIResource,
        namespace: str | None,
        name: str,
        result: object,
        timeout: float,
        *,
        deleted: bool = False,
    ) -> None:
        """`wait_for_write` for coroutines; never blocks the event loop."""
        informer, selected = self._informer_to_wait_for(resource, namespace, result)
        if informer is None:
            return
        rv, gone = self._write_check(informer, namespace, name, result, selected)
        if gone is not None:
            informer.retry_now()  # the server just answered: no backoff wait for it (D4)
            ok = await informer.wait_for_cache_async(gone, timeout)
        elif rv:
            informer.retry_now()
            ok = await informer.wait_for_resource_version_async(rv, timeout)
        else:
            return
        if not ok:
            raise self._timed_out(informer, resource, namespace, name, result, timeout)

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Run every informer not yet started, each on its own daemon thread (H3).

        Idempotent; a no-op after `shutdown()`. Unlike client-go, an informer requested after
        a start is started at once (so configure-before-run calls such as `set_transform` on
        it may be refused: request such informers before `start()`).
        """
        with self._lock:
            if self._shutting_down:
                return
            self._started = True
            for gvr, informer in self._informers.items():
                if gvr not in self._threads:
                    self._start_locked(gvr, informer)

    def _start_locked(self, gvr: GroupVersionResource, informer: SharedIndexInformer[Any]) -> None:
        thread = threading.Thread(
            target=self._run_informer,
            args=(gvr, informer),
            name=f"informer-{gvr.group_resource()}",
            daemon=True,
        )
        self._threads[gvr] = thread
        informer.on_synced(self._sync_wake.set)
        thread.start()

    def _run_informer(self, gvr: GroupVersionResource, informer: SharedIndexInformer[Any]) -> None:
        try:
            informer.run(self._stop)
        except Exception:
            logger.exception("the informer for %s stopped with an error", gvr)

    def started(self) -> list[GroupVersionResource]:
        """The resources whose informers this factory has started."""
        with self._lock:
            return list(self._threads)

    def _started_informers(self) -> dict[GroupVersionResource, SharedIndexInformer[Any]]:
        with self._lock:
            return {gvr: self._informers[gvr] for gvr in self._threads}

    def _sync_waits(
        self,
        informers: Mapping[GroupVersionResource, SharedIndexInformer[Any]],
        timeout: float | None,
        clock: Now,
    ) -> Iterator[float]:
        """How long to wait before each next look, until every informer has synced, the
        deadline passes or the factory shuts down (polling backs off from 5 ms to 100 ms)."""
        deadline = None if timeout is None else clock() + timeout
        pending = dict(informers)
        interval = _POLL_FIRST
        while True:
            pending = {gvr: inf for gvr, inf in pending.items() if not inf.has_synced()}
            if not pending or self._stop.is_set():
                return
            wait = interval
            if deadline is not None:
                remaining = deadline - clock()
                if remaining <= 0:
                    return
                wait = min(wait, remaining)
            yield wait
            interval = min(interval * 2, _POLL_MAX)

    def wait_for_cache_sync(self, timeout: float | None = None) -> dict[GroupVersionResource, bool]:
        """Block until every started informer has synced, `timeout` passes or the factory shuts
        down; return each started informer's `has_synced()` (H5: unstarted ones are absent)."""
        informers = self._started_informers()
        for wait in self._sync_waits(informers, timeout, time.monotonic):
            # Woken by an informer's sync or the shutdown; the poll is only the fallback.
            self._sync_wake.wait(wait)
            self._sync_wake.clear()
        return {gvr: inf.has_synced() for gvr, inf in informers.items()}

    def wait_for_cache_sync_or_raise(self, timeout: float | None = None) -> None:
        """`wait_for_cache_sync`, but raise CacheSyncTimeoutError naming each informer that has
        not synced and its last list/watch error (e.g. "connection refused"), instead of
        returning False for it. Also raises when informers were requested but `start()` was
        never called, or the factory was shut down before they synced."""
        self._raise_unless_synced(self.wait_for_cache_sync(timeout), timeout)

    def _raise_unless_synced(
        self, started: dict[GroupVersionResource, bool], timeout: float | None
    ) -> None:
        """The one verdict of `wait_for_cache_sync_or_raise`, its async twin and
        `start_and_sync` on a wait's answer (H28)."""
        requested = self.informers()
        unsynced = {
            gvr: requested[gvr].last_error() for gvr, synced in started.items() if not synced
        }
        if not started and requested:
            never = "the factory was shut down" if self._stop.is_set() else "start() was not called"
            raise CacheSyncTimeoutError({gvr: None for gvr in requested}, None, reason=never)
        if unsynced:
            reason = "the factory was shut down" if self._stop.is_set() else ""
            raise CacheSyncTimeoutError(unsynced, timeout, reason=reason)

    async def wait_for_cache_sync_async(
        self, timeout: float | None = None
    ) -> dict[GroupVersionResource, bool]:
        """`wait_for_cache_sync` for coroutines: never blocks the event loop; woken by each
        informer's sync (through the loop's thread-safe call), with polling as the fallback."""
        informers = self._started_informers()
        loop = asyncio.get_running_loop()
        woken = asyncio.Event()

        def wake() -> None:  # runs on an informer's thread, under its queue lock
            try:
                loop.call_soon_threadsafe(woken.set)
            except RuntimeError:  # the loop has closed: nobody waits any more
                pass

        for informer in informers.values():
            informer.on_synced(wake)
        try:
            for wait in self._sync_waits(informers, timeout, loop.time):
                try:
                    await asyncio.wait_for(woken.wait(), wait)
                except TimeoutError:
                    pass
                woken.clear()
        finally:  # a wait that ends (timed out, cancelled) leaves nothing with the informers
            for informer in informers.values():
                informer.remove_on_synced(wake)
        return {gvr: inf.has_synced() for gvr, inf in informers.items()}

    async def wait_for_cache_sync_or_raise_async(self, timeout: float | None = None) -> None:
        """`wait_for_cache_sync_or_raise` for coroutines (H28): `wait_for_cache_sync_async`,
        then the same CacheSyncTimeoutError naming each informer that has not synced and its
        last list/watch error (also when `start()` was never called or the factory shut
        down first)."""
        self._raise_unless_synced(await self.wait_for_cache_sync_async(timeout), timeout)

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop every informer and wait for their threads to return (H4).

        Safe to call repeatedly and from several threads. `timeout` bounds the total wait;
        threads still running then are logged (they are daemons and will not block exit).
        Called from an event handler it only signals the stop: an informer waits for its
        handler threads, so waiting for the informer there would never end.
        """
        with self._lock:
            self._shutting_down = True
            self._stop.set()
            self._sync_wake.set()
            threads = list(self._threads.items())
            unstarted = [i for gvr, i in self._informers.items() if gvr not in self._threads]
        for informer in unstarted:
            informer.shut_down_unstarted()
        if threading.current_thread().name.startswith(_HANDLER_THREAD_PREFIX):
            logger.info("shutdown() called from an event handler: informers stop without waiting")
            return
        deadline = None if timeout is None else time.monotonic() + timeout
        for gvr, thread in threads:
            if thread is threading.current_thread():
                continue
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            thread.join(remaining)
            if thread.is_alive():
                logger.warning("the informer for %s did not stop within the timeout", gvr)

    @property
    def is_shut_down(self) -> bool:
        return self._shutting_down

    def _refuse_if_shut_down(self) -> None:
        """H4: a factory runs once. Entering it again after its shutdown would hand out its
        stopped informers, whose caches no longer follow the server, as if synced."""
        if self._shutting_down:
            raise CacheSyncTimeoutError(
                {gvr: None for gvr in self.informers()},
                None,
                reason="the factory was shut down: a factory runs once, make a new one",
            )

    # --- asyncio ---------------------------------------------------------------------------

    async def start_and_sync(self, timeout: float | None = None) -> None:
        """Start every informer requested so far and wait (without blocking the loop) until
        all have synced; CacheSyncTimeoutError after `timeout` seconds (None: the factory's
        `sync_timeout`)."""
        timeout = self._sync_timeout if timeout is None else timeout
        self._refuse_if_shut_down()
        self.start()
        await self.wait_for_cache_sync_or_raise_async(timeout)

    async def shutdown_async(self, timeout: float | None = None) -> None:
        """`shutdown` for coroutines: the informer threads are joined off the event loop.

        Shielded: a cancellation while it runs still lets the informers stop."""
        self._stop.set()  # informers begin stopping at once, even if we are cancelled below
        await asyncio.shield(asyncio.to_thread(self.shutdown, timeout))

    @contextlib.asynccontextmanager
    async def running(self, timeout: float | None = None) -> AsyncIterator[Self]:
        """`async with factory.running(timeout=30):` — start, wait for sync (raising
        CacheSyncTimeoutError), and shut down on exit, on an error and on cancellation."""
        try:
            await self.start_and_sync(timeout)
            yield self
        finally:
            await self.shutdown_async()

    async def __aenter__(self) -> Self:
        """`async with factory:` is `factory.running()` with the factory's `sync_timeout`."""
        try:
            await self.start_and_sync()
        except BaseException:
            await self.shutdown_async()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.shutdown_async()

    # --- health ------------------------------------------------------------------------------

    def health(self) -> FactoryHealth:
        """Every started informer's `health()`; `.healthy` answers a readiness probe."""
        shard = self._shard
        started = self._started_informers()
        names = Counter(gvr.group_resource() for gvr in started)
        entries: dict[str, InformerHealth] = {}
        for gvr, inf in started.items():
            health = inf.health()
            if names[gvr.group_resource()] == 1:
                entries[gvr.group_resource()] = health
            else:
                # Two versions of one resource (a CRD's v1 and v2) are two entries (H16), and
                # each names its version: a typed informer's own name is the same for both,
                # so `unhealthy()` could not tell which one fails.
                name = f"{gvr.group_resource()} ({gvr.group_version})"
                entries[name] = dataclasses.replace(health, name=name)
        return FactoryHealth(
            entries,
            shard=shard.describe() if shard is not None else None,
            shard_transition=self._shard_transition,
            holds_no_range=self._holds_no_range,
        )

    def set_shard_state(
        self, *, transition: str | None = None, holds_no_range: bool = False
    ) -> None:
        """What `health()` says of this replica's share of the work (N11), for whoever
        assigns the shards (a ring of replicas): `transition` names a handoff in progress
        ("releasing 2 ranges to replica-b", None: none), `holds_no_range` that the replica
        has been assigned nothing. Either makes `health().healthy` False and
        `describe()` say why."""
        self._shard_transition = transition
        self._holds_no_range = holds_no_range

    if not TYPE_CHECKING:  # mypy keeps refusing unknown attributes; this only words the error

        def __getattr__(self, name: str) -> Any:
            """H6: `from kubeinformers import SharedInformerFactory` is this runtime base, whose
            typed accessors (`core()`, `apps()`, a CRD group's) its generated subclasses add: a
            missing public attribute of the base itself says where the typed factory is."""
            if type(self) is SharedInformerFactory and not name.startswith("_"):
                raise AttributeError(
                    f"'SharedInformerFactory' object has no attribute {name!r}: "
                    "kubeinformers.SharedInformerFactory is the runtime base, without typed "
                    "accessors; the factory with core(), apps() and the other built-in groups "
                    "is kubeinformers.generated.informers.SharedInformerFactory (a generated "
                    "package's informers module for your CRDs), or use for_resource()",
                    name=name,
                    obj=self,
                )
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self
            )

    def __enter__(self) -> Self:
        """`with factory:` shuts it down on exit; entering a factory already shut down raises
        CacheSyncTimeoutError ("the factory was shut down", H4), as `async with` does."""
        self._refuse_if_shut_down()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()


# --- the generated registry (imported lazily: the runtime knows no kind) ---------------------

_REGISTRY_MODULE = "kubeinformers.generated.registry"
_registry_cache: dict[GroupVersionResource, tuple[APIResource, str]] | None = None


def _load_registry() -> dict[GroupVersionResource, tuple[APIResource, str]]:
    global _registry_cache
    if _registry_cache is None:
        try:
            registry = importlib.import_module(_REGISTRY_MODULE)
        except ImportError:
            return {}
        resources: Iterable[APIResource] = getattr(registry, "RESOURCES", ())
        models: Mapping[GroupVersionResource, str] = getattr(registry, "MODELS", {})
        by_gvr = {resource.gvr: resource for resource in resources}
        _registry_cache = {
            gvr: (by_gvr[gvr], path) for gvr, path in models.items() if gvr in by_gvr
        }
    return _registry_cache


def _registry_lookup(gvr: GroupVersionResource) -> tuple[APIResource, str]:
    entry = _load_registry().get(gvr)
    if entry is None:
        raise NoInformerFoundError(
            gvr,
            "it is neither a built-in resource of kubeinformers.generated nor registered with "
            "factory.register_model(); for any other resource use "
            "DynamicSharedInformerFactory",
        )
    resource, _ = entry
    if not resource.supports_list_watch:
        raise NoInformerFoundError(gvr, f"{gvr.group_resource()} does not support list and watch")
    return entry


def _import_model(path: str, gvr: GroupVersionResource) -> type[Any]:
    module_name, _, attribute = path.partition(":")
    try:
        model = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as err:
        raise NoInformerFoundError(gvr, f"cannot import its model {path!r}: {err}") from err
    if not isinstance(model, type):
        raise NoInformerFoundError(gvr, f"{path!r} is not a class")
    return model


def _left_selection(
    informer: SharedIndexInformer[Any], namespace: str | None, name: str, result: object
) -> Callable[[], bool] | None:
    """M1 for a written object outside the informer's label selector: None when the cache does
    not hold it (no event will come), else a check that the cache no longer holds that
    object, or has processed the write's resourceVersion (a later write brought it back)."""
    key = f"{namespace}/{name}" if namespace else name
    indexer = informer.get_indexer()
    uid = object_uid(result)
    try:
        target = int(object_resource_version(result))
    except ValueError:
        target = -1

    def out() -> bool:
        cached = indexer.get_by_key(key)
        if cached is None or (bool(uid) and object_uid(cached) != uid):
            return True
        seen = informer.last_processed_resource_version()
        return target >= 0 and bool(seen) and int(seen) >= target

    return None if out() else out


def _deleted_by_write(obj: object) -> bool:
    """Whether the server deletes `obj` right after the write that returned it: an object
    being deleted (deletionTimestamp set, no grace period left) whose last finalizer the write
    removed. The server answers with the object as written, at the resourceVersion before the
    delete, so waiting for that version would end before the informer drops it (M1)."""
    md = field_of(obj, "metadata", "metadata")
    if md is None or field_of(md, "deletion_timestamp", "deletionTimestamp") is None:
        return False
    if field_of(md, "finalizers", "finalizers"):
        return False
    return not field_of(md, "deletion_grace_period_seconds", "deletionGracePeriodSeconds")
