"""kubeinformers: typed, code-generated Kubernetes informers for Python.

The public API is the names below (`from kubeinformers import SharedIndexInformer`); the typed
informers, listers and models of the built-in API are in `kubeinformers.generated`
(`kubeinformers.generated.informers.SharedInformerFactory` is the factory with typed accessors, a
subclass of the `SharedInformerFactory` here). Where each name lives and why:
docs/architecture.md.

Names are imported on first use, so `import kubeinformers` imports none of the runtime, the
generated code or the test servers and stays fast.
"""

from __future__ import annotations

from kubeinformers import _exports, _moved

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    # Informers, factories and listers (client-go: tools/cache, informers)
    # Label selectors (apimachinery: pkg/labels): `labels.parse(...)`
    from kubeinformers.runtime import labels as labels
    from kubeinformers.runtime.api.errors import (
        ApiStatusError as ApiStatusError,
    )

    # The asyncio API, keyed-by-type informers, typed events, health (issue 17)
    from kubeinformers.runtime.api.kinds import KindModelError as KindModelError
    from kubeinformers.runtime.api.listwatch import (
        ListerWatcher as ListerWatcher,
    )
    from kubeinformers.runtime.api.listwatch import (
        ListOptions as ListOptions,
    )
    from kubeinformers.runtime.api.listwatch import (
        ObjectList as ObjectList,
    )
    from kubeinformers.runtime.api.listwatch import (
        Watch as Watch,
    )
    from kubeinformers.runtime.api.listwatch import (
        WatchEvent as WatchEvent,
    )
    from kubeinformers.runtime.api.resource import (
        APIResource as APIResource,
    )

    # Resources, sources and errors
    from kubeinformers.runtime.api.resource import (
        GroupVersionResource as GroupVersionResource,
    )
    from kubeinformers.runtime.async_leaderelection import (
        AsyncLeaderElector as AsyncLeaderElector,
    )
    from kubeinformers.runtime.async_reconcile import AsyncReconciler as AsyncReconciler
    from kubeinformers.runtime.cache.controller import (
        new_informer as new_informer,
    )
    from kubeinformers.runtime.cache.dynamic import (
        DiscoveryError as DiscoveryError,
    )
    from kubeinformers.runtime.cache.dynamic import (
        DynamicSharedInformerFactory as DynamicSharedInformerFactory,
    )
    from kubeinformers.runtime.cache.dynamic import (
        MetadataSharedInformerFactory as MetadataSharedInformerFactory,
    )
    from kubeinformers.runtime.cache.dynamic import (
        PartialObjectMetadata as PartialObjectMetadata,
    )
    from kubeinformers.runtime.cache.dynamic import (
        discover_resource as discover_resource,
    )
    from kubeinformers.runtime.cache.events import Added as Added
    from kubeinformers.runtime.cache.events import Deleted as Deleted
    from kubeinformers.runtime.cache.events import EventStream as EventStream
    from kubeinformers.runtime.cache.events import InformerEvent as InformerEvent
    from kubeinformers.runtime.cache.events import Updated as Updated
    from kubeinformers.runtime.cache.factory import (
        CacheSyncTimeoutError as CacheSyncTimeoutError,
    )
    from kubeinformers.runtime.cache.factory import (
        GenericInformer as GenericInformer,
    )
    from kubeinformers.runtime.cache.factory import (
        NoInformerFoundError as NoInformerFoundError,
    )
    from kubeinformers.runtime.cache.factory import (
        SharedInformerFactory as SharedInformerFactory,
    )
    from kubeinformers.runtime.cache.handlers import (
        FilteringResourceEventHandler as FilteringResourceEventHandler,
    )

    # Handlers, keys and the tombstone
    from kubeinformers.runtime.cache.handlers import (
        ResourceEventHandler as ResourceEventHandler,
    )
    from kubeinformers.runtime.cache.handlers import (
        ResourceEventHandlerFuncs as ResourceEventHandlerFuncs,
    )
    from kubeinformers.runtime.cache.health import FactoryHealth as FactoryHealth
    from kubeinformers.runtime.cache.health import InformerHealth as InformerHealth
    from kubeinformers.runtime.cache.informer import (
        InformerStartedError as InformerStartedError,
    )
    from kubeinformers.runtime.cache.informer import (
        InformerStoppedError as InformerStoppedError,
    )
    from kubeinformers.runtime.cache.informer import (
        QueueKind as QueueKind,
    )
    from kubeinformers.runtime.cache.informer import (
        ResourceEventHandlerRegistration as ResourceEventHandlerRegistration,
    )
    from kubeinformers.runtime.cache.informer import (
        SharedIndexInformer as SharedIndexInformer,
    )
    from kubeinformers.runtime.cache.keys import (
        DeletedFinalStateUnknown as DeletedFinalStateUnknown,
    )
    from kubeinformers.runtime.cache.keys import (
        deletion_handling_meta_namespace_key as deletion_handling_meta_namespace_key,
    )
    from kubeinformers.runtime.cache.keys import (
        meta_namespace_key as meta_namespace_key,
    )
    from kubeinformers.runtime.cache.keys import (
        object_annotations as object_annotations,
    )
    from kubeinformers.runtime.cache.keys import (
        object_labels as object_labels,
    )
    from kubeinformers.runtime.cache.keys import (
        object_name as object_name,
    )
    from kubeinformers.runtime.cache.keys import (
        object_namespace as object_namespace,
    )
    from kubeinformers.runtime.cache.keys import (
        object_resource_version as object_resource_version,
    )
    from kubeinformers.runtime.cache.keys import (
        object_uid as object_uid,
    )
    from kubeinformers.runtime.cache.keys import (
        split_meta_namespace_key as split_meta_namespace_key,
    )
    from kubeinformers.runtime.cache.listers import (
        ClusterLister as ClusterLister,
    )
    from kubeinformers.runtime.cache.listers import (
        GenericLister as GenericLister,
    )
    from kubeinformers.runtime.cache.listers import (
        GenericNamespaceLister as GenericNamespaceLister,
    )
    from kubeinformers.runtime.cache.listers import (
        Lister as Lister,
    )
    from kubeinformers.runtime.cache.listers import (
        NamespacedLister as NamespacedLister,
    )
    from kubeinformers.runtime.cache.listers import (
        NotFoundError as NotFoundError,
    )
    from kubeinformers.runtime.cache.listers import (
        SingleNamespaceLister as SingleNamespaceLister,
    )
    from kubeinformers.runtime.cache.store import (
        Indexer as Indexer,
    )
    from kubeinformers.runtime.cache.transforms import (
        chain_transforms as chain_transforms,
    )
    from kubeinformers.runtime.cache.transforms import (
        strip_managed_fields as strip_managed_fields,
    )
    from kubeinformers.runtime.client.transport import (
        ApiListerWatcher as ApiListerWatcher,
    )
    from kubeinformers.runtime.clock import (
        Clock as Clock,
    )
    from kubeinformers.runtime.clock import (
        FakeClock as FakeClock,
    )
    from kubeinformers.runtime.clock import (
        Now as Now,
    )
    from kubeinformers.runtime.clock import (
        RealClock as RealClock,
    )
    from kubeinformers.runtime.codec.lazy import (
        InvalidObjectError as InvalidObjectError,
    )
    from kubeinformers.runtime.codec.lazy import (
        is_lazy as is_lazy,
    )
    from kubeinformers.runtime.codec.lazy import (
        materialize as materialize,
    )
    from kubeinformers.runtime.codec.wire import (
        ObjectDecodeError as ObjectDecodeError,
    )
    from kubeinformers.runtime.labels.selector import (
        Selector as Selector,
    )
    from kubeinformers.runtime.leaderelection import (
        LeaderCallbacks as LeaderCallbacks,
    )
    from kubeinformers.runtime.leaderelection import (
        LeaderElectionConfig as LeaderElectionConfig,
    )
    from kubeinformers.runtime.leaderelection import (
        LeaderElector as LeaderElector,
    )
    from kubeinformers.runtime.leaderelection import (
        LeaseLock as LeaseLock,
    )
    from kubeinformers.runtime.leaderelection import (
        run_or_die as run_or_die,
    )

    # Metrics
    from kubeinformers.runtime.metrics import (
        InformerMetrics as InformerMetrics,
    )
    from kubeinformers.runtime.metrics import (
        WorkQueueMetrics as WorkQueueMetrics,
    )
    from kubeinformers.runtime.metrics import (
        register_prometheus as register_prometheus,
    )
    from kubeinformers.runtime.metrics import (
        unregister_prometheus as unregister_prometheus,
    )

    # The reconcile loop and leader election (client-go: tools/leaderelection)
    from kubeinformers.runtime.reconcile import (
        ReconcileLoop as ReconcileLoop,
    )
    from kubeinformers.runtime.reconcile import (
        Requeue as Requeue,
    )
    from kubeinformers.runtime.workqueue.async_queue import (
        AsyncRateLimitingQueue as AsyncRateLimitingQueue,
    )
    from kubeinformers.runtime.workqueue.queue import (
        DelayingQueue as DelayingQueue,
    )
    from kubeinformers.runtime.workqueue.queue import (
        RateLimitingQueue as RateLimitingQueue,
    )

    # Work queues and rate limiters (client-go: util/workqueue)
    from kubeinformers.runtime.workqueue.queue import (
        WorkQueue as WorkQueue,
    )
    from kubeinformers.runtime.workqueue.rate_limiters import (
        BucketRateLimiter as BucketRateLimiter,
    )
    from kubeinformers.runtime.workqueue.rate_limiters import (
        ItemExponentialFailureRateLimiter as ItemExponentialFailureRateLimiter,
    )
    from kubeinformers.runtime.workqueue.rate_limiters import (
        ItemFastSlowRateLimiter as ItemFastSlowRateLimiter,
    )
    from kubeinformers.runtime.workqueue.rate_limiters import (
        MaxOfRateLimiter as MaxOfRateLimiter,
    )
    from kubeinformers.runtime.workqueue.rate_limiters import (
        RateLimiter as RateLimiter,
    )
    from kubeinformers.runtime.workqueue.rate_limiters import (
        WithMaxWaitRateLimiter as WithMaxWaitRateLimiter,
    )
    from kubeinformers.runtime.workqueue.rate_limiters import (
        default_controller_rate_limiter as default_controller_rate_limiter,
    )
    from kubeinformers.runtime.workqueue.rate_limiters import (
        default_item_based_rate_limiter as default_item_based_rate_limiter,
    )
    from kubeinformers.testing.fake import (
        FakeListerWatcher as FakeListerWatcher,
    )

    # Test servers (kubeinformers.testing)
    from kubeinformers.testing.local_api_server import (
        LocalApiServer as LocalApiServer,
    )

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    # Informers, factories and listers (client-go: tools/cache, informers)
    "SharedInformerFactory": "kubeinformers.runtime.cache.factory",
    "GenericInformer": "kubeinformers.runtime.cache.factory",
    "CacheSyncTimeoutError": "kubeinformers.runtime.cache.factory",
    "NoInformerFoundError": "kubeinformers.runtime.cache.factory",
    "DynamicSharedInformerFactory": "kubeinformers.runtime.cache.dynamic",
    "MetadataSharedInformerFactory": "kubeinformers.runtime.cache.dynamic",
    "PartialObjectMetadata": "kubeinformers.runtime.cache.dynamic",
    "DiscoveryError": "kubeinformers.runtime.cache.dynamic",
    "discover_resource": "kubeinformers.runtime.cache.dynamic",
    "SharedIndexInformer": "kubeinformers.runtime.cache.informer",
    "ResourceEventHandlerRegistration": "kubeinformers.runtime.cache.informer",
    "QueueKind": "kubeinformers.runtime.cache.informer",
    "InformerStartedError": "kubeinformers.runtime.cache.informer",
    "InformerStoppedError": "kubeinformers.runtime.cache.informer",
    "new_informer": "kubeinformers.runtime.cache.controller",
    "Indexer": "kubeinformers.runtime.cache.store",
    "Lister": "kubeinformers.runtime.cache.listers",
    "ClusterLister": "kubeinformers.runtime.cache.listers",
    "NamespacedLister": "kubeinformers.runtime.cache.listers",
    "SingleNamespaceLister": "kubeinformers.runtime.cache.listers",
    "GenericLister": "kubeinformers.runtime.cache.listers",
    "GenericNamespaceLister": "kubeinformers.runtime.cache.listers",
    "NotFoundError": "kubeinformers.runtime.cache.listers",
    # Handlers, keys and the tombstone
    "ResourceEventHandler": "kubeinformers.runtime.cache.handlers",
    "ResourceEventHandlerFuncs": "kubeinformers.runtime.cache.handlers",
    "FilteringResourceEventHandler": "kubeinformers.runtime.cache.handlers",
    "DeletedFinalStateUnknown": "kubeinformers.runtime.cache.keys",
    "meta_namespace_key": "kubeinformers.runtime.cache.keys",
    "split_meta_namespace_key": "kubeinformers.runtime.cache.keys",
    "deletion_handling_meta_namespace_key": "kubeinformers.runtime.cache.keys",
    "object_annotations": "kubeinformers.runtime.cache.keys",
    "object_labels": "kubeinformers.runtime.cache.keys",
    "object_name": "kubeinformers.runtime.cache.keys",
    "object_namespace": "kubeinformers.runtime.cache.keys",
    "object_resource_version": "kubeinformers.runtime.cache.keys",
    "object_uid": "kubeinformers.runtime.cache.keys",
    "strip_managed_fields": "kubeinformers.runtime.cache.transforms",
    "chain_transforms": "kubeinformers.runtime.cache.transforms",
    # Resources, sources and errors
    "GroupVersionResource": "kubeinformers.runtime.api.resource",
    "APIResource": "kubeinformers.runtime.api.resource",
    "ApiStatusError": "kubeinformers.runtime.api.errors",
    "ListerWatcher": "kubeinformers.runtime.api.listwatch",
    "ListOptions": "kubeinformers.runtime.api.listwatch",
    "ObjectList": "kubeinformers.runtime.api.listwatch",
    "Watch": "kubeinformers.runtime.api.listwatch",
    "WatchEvent": "kubeinformers.runtime.api.listwatch",
    "ApiListerWatcher": "kubeinformers.runtime.client.transport",
    "InvalidObjectError": "kubeinformers.runtime.codec.lazy",
    "materialize": "kubeinformers.runtime.codec.lazy",
    "is_lazy": "kubeinformers.runtime.codec.lazy",
    "ObjectDecodeError": "kubeinformers.runtime.codec.wire",
    # Label selectors (apimachinery: pkg/labels): `labels.parse(...)`
    "labels": "kubeinformers.runtime.labels",  # the package itself
    "Selector": "kubeinformers.runtime.labels.selector",
    # Work queues and rate limiters (client-go: util/workqueue)
    "WorkQueue": "kubeinformers.runtime.workqueue.queue",
    "DelayingQueue": "kubeinformers.runtime.workqueue.queue",
    "RateLimitingQueue": "kubeinformers.runtime.workqueue.queue",
    "RateLimiter": "kubeinformers.runtime.workqueue.rate_limiters",
    "BucketRateLimiter": "kubeinformers.runtime.workqueue.rate_limiters",
    "ItemExponentialFailureRateLimiter": "kubeinformers.runtime.workqueue.rate_limiters",
    "ItemFastSlowRateLimiter": "kubeinformers.runtime.workqueue.rate_limiters",
    "MaxOfRateLimiter": "kubeinformers.runtime.workqueue.rate_limiters",
    "WithMaxWaitRateLimiter": "kubeinformers.runtime.workqueue.rate_limiters",
    "default_controller_rate_limiter": "kubeinformers.runtime.workqueue.rate_limiters",
    "default_item_based_rate_limiter": "kubeinformers.runtime.workqueue.rate_limiters",
    "Clock": "kubeinformers.runtime.clock",
    "RealClock": "kubeinformers.runtime.clock",
    "FakeClock": "kubeinformers.runtime.clock",
    "Now": "kubeinformers.runtime.clock",
    # The reconcile loop and leader election (client-go: tools/leaderelection)
    "ReconcileLoop": "kubeinformers.runtime.reconcile",
    "Requeue": "kubeinformers.runtime.reconcile",
    "LeaderElector": "kubeinformers.runtime.leaderelection",
    "LeaderElectionConfig": "kubeinformers.runtime.leaderelection",
    "LeaderCallbacks": "kubeinformers.runtime.leaderelection",
    "LeaseLock": "kubeinformers.runtime.leaderelection",
    "run_or_die": "kubeinformers.runtime.leaderelection",
    # Metrics
    "InformerMetrics": "kubeinformers.runtime.metrics",
    "WorkQueueMetrics": "kubeinformers.runtime.metrics",
    "register_prometheus": "kubeinformers.runtime.metrics",
    "unregister_prometheus": "kubeinformers.runtime.metrics",
    # The asyncio API, keyed-by-type informers, typed events, health (issue 17)
    "AsyncReconciler": "kubeinformers.runtime.async_reconcile",
    "AsyncLeaderElector": "kubeinformers.runtime.async_leaderelection",
    "AsyncRateLimitingQueue": "kubeinformers.runtime.workqueue.async_queue",
    "EventStream": "kubeinformers.runtime.cache.events",
    "InformerEvent": "kubeinformers.runtime.cache.events",
    "Added": "kubeinformers.runtime.cache.events",
    "Updated": "kubeinformers.runtime.cache.events",
    "Deleted": "kubeinformers.runtime.cache.events",
    "FactoryHealth": "kubeinformers.runtime.cache.health",
    "InformerHealth": "kubeinformers.runtime.cache.health",
    "KindModelError": "kubeinformers.runtime.api.kinds",
    # Test servers (kubeinformers.testing)
    "LocalApiServer": "kubeinformers.testing.local_api_server",
    "FakeListerWatcher": "kubeinformers.testing.fake",
}

__all__ = [
    "APIResource",
    "Added",
    "ApiListerWatcher",
    "ApiStatusError",
    "AsyncLeaderElector",
    "AsyncRateLimitingQueue",
    "AsyncReconciler",
    "BucketRateLimiter",
    "CacheSyncTimeoutError",
    "Clock",
    "ClusterLister",
    "DelayingQueue",
    "Deleted",
    "DeletedFinalStateUnknown",
    "DiscoveryError",
    "DynamicSharedInformerFactory",
    "EventStream",
    "FactoryHealth",
    "FakeClock",
    "FakeListerWatcher",
    "FilteringResourceEventHandler",
    "GenericInformer",
    "GenericLister",
    "GenericNamespaceLister",
    "GroupVersionResource",
    "Indexer",
    "InformerEvent",
    "InformerHealth",
    "InformerMetrics",
    "InformerStartedError",
    "InformerStoppedError",
    "InvalidObjectError",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "KindModelError",
    "LeaderCallbacks",
    "LeaderElectionConfig",
    "LeaderElector",
    "LeaseLock",
    "ListOptions",
    "Lister",
    "ListerWatcher",
    "LocalApiServer",
    "MaxOfRateLimiter",
    "MetadataSharedInformerFactory",
    "NamespacedLister",
    "NoInformerFoundError",
    "NotFoundError",
    "Now",
    "ObjectDecodeError",
    "ObjectList",
    "PartialObjectMetadata",
    "QueueKind",
    "RateLimiter",
    "RateLimitingQueue",
    "RealClock",
    "ReconcileLoop",
    "Requeue",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerRegistration",
    "Selector",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "SingleNamespaceLister",
    "Updated",
    "Watch",
    "WatchEvent",
    "WithMaxWaitRateLimiter",
    "WorkQueue",
    "WorkQueueMetrics",
    "chain_transforms",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "deletion_handling_meta_namespace_key",
    "discover_resource",
    "is_lazy",
    "labels",
    "materialize",
    "meta_namespace_key",
    "new_informer",
    "object_annotations",
    "object_labels",
    "object_name",
    "object_namespace",
    "object_resource_version",
    "object_uid",
    "register_prometheus",
    "run_or_die",
    "split_meta_namespace_key",
    "strip_managed_fields",
    "unregister_prometheus",
]


def __getattr__(name: str) -> Any:
    return _exports.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


_moved.install()
