"""kubeinformers: typed, code-generated Kubernetes informers for Python.

The public API is the names imported below (`from kubeinformers import SharedIndexInformer`):
what a controller author uses. The typed informers, listers and models of the built-in API
are in `kubeinformers.generated` (`kubeinformers.generated.informers.SharedInformerFactory` is the
factory with typed accessors, a subclass of the `SharedInformerFactory` here); test doubles
are in `kubeinformers.testing`. Where each name lives and why: docs/architecture.md.

Each name is written once, as an explicit re-export under TYPE_CHECKING; at run time names
are imported on first use (`kubeinformers/_exports.py`), so `import kubeinformers` imports
none of the runtime, pydantic or the kubernetes client and stays fast.
"""

from __future__ import annotations

from kubeinformers import _exports

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    # In the order of the defining modules; `labels` is the package of label selectors
    # (apimachinery: pkg/labels): `labels.parse("app=web,tier in (fe,be)")`.
    from kubeinformers.runtime import labels as labels
    from kubeinformers.runtime.api.apply import ApplyConfiguration as ApplyConfiguration
    from kubeinformers.runtime.api.errors import AlreadyExists as AlreadyExists
    from kubeinformers.runtime.api.errors import Conflict as Conflict
    from kubeinformers.runtime.api.errors import Forbidden as Forbidden
    from kubeinformers.runtime.api.errors import Invalid as Invalid
    from kubeinformers.runtime.api.errors import NotFound as NotFound
    from kubeinformers.runtime.api.errors import TooManyRequests as TooManyRequests
    from kubeinformers.runtime.api.errors import Unauthorized as Unauthorized
    from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown as DeletedFinalStateUnknown
    from kubeinformers.runtime.api.keys import LeftShard as LeftShard
    from kubeinformers.runtime.api.keys import (
        deletion_handling_meta_namespace_key as deletion_handling_meta_namespace_key,
    )
    from kubeinformers.runtime.api.keys import meta_namespace_key as meta_namespace_key
    from kubeinformers.runtime.api.keys import object_annotations as object_annotations
    from kubeinformers.runtime.api.keys import object_labels as object_labels
    from kubeinformers.runtime.api.keys import object_name as object_name
    from kubeinformers.runtime.api.keys import object_namespace as object_namespace
    from kubeinformers.runtime.api.keys import object_resource_version as object_resource_version
    from kubeinformers.runtime.api.keys import object_uid as object_uid
    from kubeinformers.runtime.api.keys import split_meta_namespace_key as split_meta_namespace_key
    from kubeinformers.runtime.api.kinds import KindModelError as KindModelError
    from kubeinformers.runtime.api.listwatch import ListOptions as ListOptions
    from kubeinformers.runtime.api.model import Status as Status
    from kubeinformers.runtime.api.model import UnknownEnumValue as UnknownEnumValue
    from kubeinformers.runtime.api.resource import GroupVersionResource as GroupVersionResource
    from kubeinformers.runtime.api.shard import Shard as Shard
    from kubeinformers.runtime.api.shard import ShardRange as ShardRange
    from kubeinformers.runtime.cache.dynamic import DiscoveryError as DiscoveryError
    from kubeinformers.runtime.cache.dynamic import (
        DynamicSharedInformerFactory as DynamicSharedInformerFactory,
    )
    from kubeinformers.runtime.cache.dynamic import (
        MetadataSharedInformerFactory as MetadataSharedInformerFactory,
    )
    from kubeinformers.runtime.cache.dynamic import PartialObjectMetadata as PartialObjectMetadata
    from kubeinformers.runtime.cache.dynamic import discover_resource as discover_resource
    from kubeinformers.runtime.cache.events import Added as Added
    from kubeinformers.runtime.cache.events import Deleted as Deleted
    from kubeinformers.runtime.cache.events import EventStream as EventStream
    from kubeinformers.runtime.cache.events import InformerEvent as InformerEvent
    from kubeinformers.runtime.cache.events import Updated as Updated
    from kubeinformers.runtime.cache.factory import CacheSyncTimeoutError as CacheSyncTimeoutError
    from kubeinformers.runtime.cache.factory import GenericInformer as GenericInformer
    from kubeinformers.runtime.cache.factory import NoInformerFoundError as NoInformerFoundError
    from kubeinformers.runtime.cache.factory import SharedInformerFactory as SharedInformerFactory
    from kubeinformers.runtime.cache.freshness import ReadYourWritesTimeout as ReadYourWritesTimeout
    from kubeinformers.runtime.cache.handlers import (
        FilteringResourceEventHandler as FilteringResourceEventHandler,
    )
    from kubeinformers.runtime.cache.handlers import ResourceEventHandler as ResourceEventHandler
    from kubeinformers.runtime.cache.handlers import (
        ResourceEventHandlerFuncs as ResourceEventHandlerFuncs,
    )
    from kubeinformers.runtime.cache.health import FactoryHealth as FactoryHealth
    from kubeinformers.runtime.cache.health import InformerHealth as InformerHealth
    from kubeinformers.runtime.cache.informer import SharedIndexInformer as SharedIndexInformer
    from kubeinformers.runtime.cache.listers import ClusterLister as ClusterLister
    from kubeinformers.runtime.cache.listers import GenericLister as GenericLister
    from kubeinformers.runtime.cache.listers import Lister as Lister
    from kubeinformers.runtime.cache.listers import NamespacedLister as NamespacedLister
    from kubeinformers.runtime.cache.listers import NotFoundError as NotFoundError
    from kubeinformers.runtime.cache.store import NAMESPACE_INDEX as NAMESPACE_INDEX
    from kubeinformers.runtime.cache.store import Indexer as Indexer
    from kubeinformers.runtime.cache.store import (
        meta_namespace_index_func as meta_namespace_index_func,
    )
    from kubeinformers.runtime.cache.transforms import chain_transforms as chain_transforms
    from kubeinformers.runtime.cache.transforms import strip_managed_fields as strip_managed_fields
    from kubeinformers.runtime.client.retry import retry_on_conflict as retry_on_conflict
    from kubeinformers.runtime.client.retry import (
        retry_on_conflict_async as retry_on_conflict_async,
    )
    from kubeinformers.runtime.client.typed import AsyncClient as AsyncClient
    from kubeinformers.runtime.client.typed import Client as Client
    from kubeinformers.runtime.client.typed import UnreadableAnswerError as UnreadableAnswerError
    from kubeinformers.runtime.codec.drift import InvalidFieldError as InvalidFieldError
    from kubeinformers.runtime.codec.drift import InvalidObjectError as InvalidObjectError
    from kubeinformers.runtime.codec.gc_pause import (
        freeze_burst_survivors as freeze_burst_survivors,
    )
    from kubeinformers.runtime.codec.heap_trim import (
        release_freed_memory as release_freed_memory,
    )
    from kubeinformers.runtime.labels.selector import Selector as Selector
    from kubeinformers.runtime.leaderelection.async_elector import (
        AsyncLeaderElector as AsyncLeaderElector,
    )
    from kubeinformers.runtime.leaderelection.elector import LeaderCallbacks as LeaderCallbacks
    from kubeinformers.runtime.leaderelection.elector import (
        LeaderElectionConfig as LeaderElectionConfig,
    )
    from kubeinformers.runtime.leaderelection.elector import LeaderElector as LeaderElector
    from kubeinformers.runtime.leaderelection.elector import LeaseLock as LeaseLock
    from kubeinformers.runtime.metrics import register_prometheus as register_prometheus
    from kubeinformers.runtime.metrics import unregister_prometheus as unregister_prometheus
    from kubeinformers.runtime.reconcile.async_loop import AsyncReconcileLoop as AsyncReconcileLoop
    from kubeinformers.runtime.reconcile.core import Requeue as Requeue
    from kubeinformers.runtime.reconcile.loop import ReconcileLoop as ReconcileLoop
    from kubeinformers.runtime.ring.async_ring import AsyncShardRing as AsyncShardRing
    from kubeinformers.runtime.ring.async_ring import RingStoppedError as RingStoppedError
    from kubeinformers.runtime.ring.core import RingHealth as RingHealth
    from kubeinformers.runtime.ring.core import RingMetrics as RingMetrics
    from kubeinformers.runtime.ring.ring import ShardRing as ShardRing
    from kubeinformers.runtime.workqueue.async_queue import (
        AsyncRateLimitingQueue as AsyncRateLimitingQueue,
    )
    from kubeinformers.runtime.workqueue.queue import RateLimitingQueue as RateLimitingQueue
    from kubeinformers.runtime.workqueue.queue import WorkQueue as WorkQueue
    from kubeinformers.runtime.workqueue.rate_limiters import (
        ItemExponentialFailureRateLimiter as ItemExponentialFailureRateLimiter,
    )
    from kubeinformers.runtime.workqueue.rate_limiters import (
        default_controller_rate_limiter as default_controller_rate_limiter,
    )

_exports.install(__name__)
