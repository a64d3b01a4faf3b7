"""client-go's tools/cache (and informers/, dynamicinformer, metadatainformer): keys and
tombstones (`keys`), the indexer (`store`), the informer queues (`delta_fifo`, `real_fifo`),
the process loop (`controller`), the shared informer (`informer`) and its handler fan-out
(`processor`, `handlers`), listers, the factories (`factory`, `dynamic`) and `transforms`.
Names load on first use, so importing one module of the package does not import the rest.
"""

from __future__ import annotations

from kubeinformers import _exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from kubeinformers.runtime.cache.controller import (
        BatchProcessingError as BatchProcessingError,
    )
    from kubeinformers.runtime.cache.controller import (
        BatchQueue as BatchQueue,
    )
    from kubeinformers.runtime.cache.controller import (
        Controller as Controller,
    )
    from kubeinformers.runtime.cache.controller import (
        ControllerConfig as ControllerConfig,
    )
    from kubeinformers.runtime.cache.controller import (
        ProcessFunc as ProcessFunc,
    )
    from kubeinformers.runtime.cache.controller import (
        Queue as Queue,
    )
    from kubeinformers.runtime.cache.controller import (
        Store as Store,
    )
    from kubeinformers.runtime.cache.controller import (
        new_informer as new_informer,
    )
    from kubeinformers.runtime.cache.controller import (
        process_deltas as process_deltas,
    )
    from kubeinformers.runtime.cache.controller import (
        process_deltas_in_batch as process_deltas_in_batch,
    )
    from kubeinformers.runtime.cache.delta_fifo import (
        Delta as Delta,
    )
    from kubeinformers.runtime.cache.delta_fifo import (
        DeltaFIFO as DeltaFIFO,
    )
    from kubeinformers.runtime.cache.delta_fifo import (
        Deltas as Deltas,
    )
    from kubeinformers.runtime.cache.delta_fifo import (
        DeltaType as DeltaType,
    )
    from kubeinformers.runtime.cache.delta_fifo import (
        FIFOClosedError as FIFOClosedError,
    )
    from kubeinformers.runtime.cache.delta_fifo import (
        KnownObjects as KnownObjects,
    )
    from kubeinformers.runtime.cache.delta_fifo import (
        PopProcessFunc as PopProcessFunc,
    )
    from kubeinformers.runtime.cache.delta_fifo import (
        RequeueError as RequeueError,
    )
    from kubeinformers.runtime.cache.dynamic import (
        METADATA_LIST_ACCEPT as METADATA_LIST_ACCEPT,
    )
    from kubeinformers.runtime.cache.dynamic import (
        METADATA_WATCH_ACCEPT as METADATA_WATCH_ACCEPT,
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

    # issue 17: typed events and health
    from kubeinformers.runtime.cache.events import (
        Added as Added,
    )
    from kubeinformers.runtime.cache.events import (
        Deleted as Deleted,
    )
    from kubeinformers.runtime.cache.events import (
        EventStream as EventStream,
    )
    from kubeinformers.runtime.cache.events import (
        InformerEvent as InformerEvent,
    )
    from kubeinformers.runtime.cache.events import (
        Updated as Updated,
    )
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
    from kubeinformers.runtime.cache.factory import (
        StartableFactory as StartableFactory,
    )
    from kubeinformers.runtime.cache.factory import (
        TransformFunc as TransformFunc,
    )
    from kubeinformers.runtime.cache.factory import (
        TweakListOptionsFunc as TweakListOptionsFunc,
    )
    from kubeinformers.runtime.cache.handlers import (
        AddFunc as AddFunc,
    )
    from kubeinformers.runtime.cache.handlers import (
        DeleteFunc as DeleteFunc,
    )
    from kubeinformers.runtime.cache.handlers import (
        FilterFunc as FilterFunc,
    )
    from kubeinformers.runtime.cache.handlers import (
        FilteringResourceEventHandler as FilteringResourceEventHandler,
    )
    from kubeinformers.runtime.cache.handlers import (
        HandlerResult as HandlerResult,
    )
    from kubeinformers.runtime.cache.handlers import (
        ResourceEventHandler as ResourceEventHandler,
    )
    from kubeinformers.runtime.cache.handlers import (
        ResourceEventHandlerFuncs as ResourceEventHandlerFuncs,
    )
    from kubeinformers.runtime.cache.handlers import (
        UpdateFunc as UpdateFunc,
    )
    from kubeinformers.runtime.cache.health import (
        FactoryHealth as FactoryHealth,
    )
    from kubeinformers.runtime.cache.health import (
        InformerHealth as InformerHealth,
    )
    from kubeinformers.runtime.cache.informer import (
        MINIMUM_RESYNC_PERIOD as MINIMUM_RESYNC_PERIOD,
    )
    from kubeinformers.runtime.cache.informer import (
        QUEUE_KINDS as QUEUE_KINDS,
    )
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
        NoMetadataError as NoMetadataError,
    )
    from kubeinformers.runtime.cache.keys import (
        ObjectKeyError as ObjectKeyError,
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
        IndexerReader as IndexerReader,
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
    from kubeinformers.runtime.cache.listers import (
        filter_by_selector as filter_by_selector,
    )
    from kubeinformers.runtime.cache.processor import (
        ADD as ADD,
    )
    from kubeinformers.runtime.cache.processor import (
        DELETE as DELETE,
    )
    from kubeinformers.runtime.cache.processor import (
        UPDATE as UPDATE,
    )
    from kubeinformers.runtime.cache.processor import (
        Notification as Notification,
    )
    from kubeinformers.runtime.cache.processor import (
        ProcessorListener as ProcessorListener,
    )
    from kubeinformers.runtime.cache.processor import (
        SharedProcessor as SharedProcessor,
    )
    from kubeinformers.runtime.cache.processor import (
        determine_resync_period as determine_resync_period,
    )
    from kubeinformers.runtime.cache.real_fifo import (
        DEFAULT_BATCH_SIZE as DEFAULT_BATCH_SIZE,
    )
    from kubeinformers.runtime.cache.real_fifo import (
        UNLOCK_WHILE_PROCESSING_LIMIT as UNLOCK_WHILE_PROCESSING_LIMIT,
    )
    from kubeinformers.runtime.cache.real_fifo import (
        BookmarkInfo as BookmarkInfo,
    )
    from kubeinformers.runtime.cache.real_fifo import (
        ProcessBatchFunc as ProcessBatchFunc,
    )
    from kubeinformers.runtime.cache.real_fifo import (
        RealFIFO as RealFIFO,
    )
    from kubeinformers.runtime.cache.real_fifo import (
        ReplacedAllInfo as ReplacedAllInfo,
    )
    from kubeinformers.runtime.cache.real_fifo import (
        SyncAllInfo as SyncAllInfo,
    )
    from kubeinformers.runtime.cache.store import (
        NAMESPACE_INDEX as NAMESPACE_INDEX,
    )
    from kubeinformers.runtime.cache.store import (
        Indexer as Indexer,
    )
    from kubeinformers.runtime.cache.store import (
        IndexerConflictError as IndexerConflictError,
    )
    from kubeinformers.runtime.cache.store import (
        Indexers as Indexers,
    )
    from kubeinformers.runtime.cache.store import (
        IndexFunc as IndexFunc,
    )
    from kubeinformers.runtime.cache.store import (
        IndexFuncError as IndexFuncError,
    )
    from kubeinformers.runtime.cache.store import (
        KeyFunc as KeyFunc,
    )
    from kubeinformers.runtime.cache.store import (
        ThreadSafeStore as ThreadSafeStore,
    )
    from kubeinformers.runtime.cache.store import (
        Transaction as Transaction,
    )
    from kubeinformers.runtime.cache.store import (
        TransactionError as TransactionError,
    )
    from kubeinformers.runtime.cache.store import (
        TransactionType as TransactionType,
    )
    from kubeinformers.runtime.cache.store import (
        index_func_to_key_func_adapter as index_func_to_key_func_adapter,
    )
    from kubeinformers.runtime.cache.store import (
        meta_namespace_index_func as meta_namespace_index_func,
    )
    from kubeinformers.runtime.cache.transforms import (
        chain_transforms as chain_transforms,
    )
    from kubeinformers.runtime.cache.transforms import (
        strip_managed_fields as strip_managed_fields,
    )


_EXPORTS: dict[str, str] = {
    "DeletedFinalStateUnknown": "kubeinformers.runtime.cache.keys",
    "NoMetadataError": "kubeinformers.runtime.cache.keys",
    "ObjectKeyError": "kubeinformers.runtime.cache.keys",
    "deletion_handling_meta_namespace_key": "kubeinformers.runtime.cache.keys",
    "meta_namespace_key": "kubeinformers.runtime.cache.keys",
    "object_annotations": "kubeinformers.runtime.cache.keys",
    "object_labels": "kubeinformers.runtime.cache.keys",
    "object_name": "kubeinformers.runtime.cache.keys",
    "object_namespace": "kubeinformers.runtime.cache.keys",
    "object_resource_version": "kubeinformers.runtime.cache.keys",
    "object_uid": "kubeinformers.runtime.cache.keys",
    "split_meta_namespace_key": "kubeinformers.runtime.cache.keys",
    "NAMESPACE_INDEX": "kubeinformers.runtime.cache.store",
    "IndexFunc": "kubeinformers.runtime.cache.store",
    "IndexFuncError": "kubeinformers.runtime.cache.store",
    "IndexerConflictError": "kubeinformers.runtime.cache.store",
    "Indexer": "kubeinformers.runtime.cache.store",
    "Indexers": "kubeinformers.runtime.cache.store",
    "KeyFunc": "kubeinformers.runtime.cache.store",
    "ThreadSafeStore": "kubeinformers.runtime.cache.store",
    "Transaction": "kubeinformers.runtime.cache.store",
    "TransactionError": "kubeinformers.runtime.cache.store",
    "TransactionType": "kubeinformers.runtime.cache.store",
    "index_func_to_key_func_adapter": "kubeinformers.runtime.cache.store",
    "meta_namespace_index_func": "kubeinformers.runtime.cache.store",
    "Delta": "kubeinformers.runtime.cache.delta_fifo",
    "DeltaFIFO": "kubeinformers.runtime.cache.delta_fifo",
    "DeltaType": "kubeinformers.runtime.cache.delta_fifo",
    "Deltas": "kubeinformers.runtime.cache.delta_fifo",
    "FIFOClosedError": "kubeinformers.runtime.cache.delta_fifo",
    "KnownObjects": "kubeinformers.runtime.cache.delta_fifo",
    "PopProcessFunc": "kubeinformers.runtime.cache.delta_fifo",
    "RequeueError": "kubeinformers.runtime.cache.delta_fifo",
    "DEFAULT_BATCH_SIZE": "kubeinformers.runtime.cache.real_fifo",
    "UNLOCK_WHILE_PROCESSING_LIMIT": "kubeinformers.runtime.cache.real_fifo",
    "BookmarkInfo": "kubeinformers.runtime.cache.real_fifo",
    "ProcessBatchFunc": "kubeinformers.runtime.cache.real_fifo",
    "RealFIFO": "kubeinformers.runtime.cache.real_fifo",
    "ReplacedAllInfo": "kubeinformers.runtime.cache.real_fifo",
    "SyncAllInfo": "kubeinformers.runtime.cache.real_fifo",
    "BatchProcessingError": "kubeinformers.runtime.cache.controller",
    "BatchQueue": "kubeinformers.runtime.cache.controller",
    "Controller": "kubeinformers.runtime.cache.controller",
    "ControllerConfig": "kubeinformers.runtime.cache.controller",
    "ProcessFunc": "kubeinformers.runtime.cache.controller",
    "Queue": "kubeinformers.runtime.cache.controller",
    "Store": "kubeinformers.runtime.cache.controller",
    "new_informer": "kubeinformers.runtime.cache.controller",
    "process_deltas": "kubeinformers.runtime.cache.controller",
    "process_deltas_in_batch": "kubeinformers.runtime.cache.controller",
    "MINIMUM_RESYNC_PERIOD": "kubeinformers.runtime.cache.informer",
    "QUEUE_KINDS": "kubeinformers.runtime.cache.informer",
    "InformerStartedError": "kubeinformers.runtime.cache.informer",
    "InformerStoppedError": "kubeinformers.runtime.cache.informer",
    "QueueKind": "kubeinformers.runtime.cache.informer",
    "ResourceEventHandlerRegistration": "kubeinformers.runtime.cache.informer",
    "SharedIndexInformer": "kubeinformers.runtime.cache.informer",
    "ADD": "kubeinformers.runtime.cache.processor",
    "DELETE": "kubeinformers.runtime.cache.processor",
    "UPDATE": "kubeinformers.runtime.cache.processor",
    "Notification": "kubeinformers.runtime.cache.processor",
    "ProcessorListener": "kubeinformers.runtime.cache.processor",
    "SharedProcessor": "kubeinformers.runtime.cache.processor",
    "determine_resync_period": "kubeinformers.runtime.cache.processor",
    "AddFunc": "kubeinformers.runtime.cache.handlers",
    "DeleteFunc": "kubeinformers.runtime.cache.handlers",
    "FilterFunc": "kubeinformers.runtime.cache.handlers",
    "FilteringResourceEventHandler": "kubeinformers.runtime.cache.handlers",
    "HandlerResult": "kubeinformers.runtime.cache.handlers",
    "ResourceEventHandler": "kubeinformers.runtime.cache.handlers",
    "ResourceEventHandlerFuncs": "kubeinformers.runtime.cache.handlers",
    "UpdateFunc": "kubeinformers.runtime.cache.handlers",
    "GenericLister": "kubeinformers.runtime.cache.listers",
    "GenericNamespaceLister": "kubeinformers.runtime.cache.listers",
    "IndexerReader": "kubeinformers.runtime.cache.listers",
    "ClusterLister": "kubeinformers.runtime.cache.listers",
    "Lister": "kubeinformers.runtime.cache.listers",
    "SingleNamespaceLister": "kubeinformers.runtime.cache.listers",
    "NamespacedLister": "kubeinformers.runtime.cache.listers",
    "NotFoundError": "kubeinformers.runtime.cache.listers",
    "filter_by_selector": "kubeinformers.runtime.cache.listers",
    "GenericInformer": "kubeinformers.runtime.cache.factory",
    "CacheSyncTimeoutError": "kubeinformers.runtime.cache.factory",
    "NoInformerFoundError": "kubeinformers.runtime.cache.factory",
    "SharedInformerFactory": "kubeinformers.runtime.cache.factory",
    "StartableFactory": "kubeinformers.runtime.cache.factory",
    "TransformFunc": "kubeinformers.runtime.cache.factory",
    "TweakListOptionsFunc": "kubeinformers.runtime.cache.factory",
    "METADATA_LIST_ACCEPT": "kubeinformers.runtime.cache.dynamic",
    "METADATA_WATCH_ACCEPT": "kubeinformers.runtime.cache.dynamic",
    "DiscoveryError": "kubeinformers.runtime.cache.dynamic",
    "DynamicSharedInformerFactory": "kubeinformers.runtime.cache.dynamic",
    "MetadataSharedInformerFactory": "kubeinformers.runtime.cache.dynamic",
    "PartialObjectMetadata": "kubeinformers.runtime.cache.dynamic",
    "discover_resource": "kubeinformers.runtime.cache.dynamic",
    "chain_transforms": "kubeinformers.runtime.cache.transforms",
    "strip_managed_fields": "kubeinformers.runtime.cache.transforms",
    "Added": "kubeinformers.runtime.cache.events",
    "Deleted": "kubeinformers.runtime.cache.events",
    "EventStream": "kubeinformers.runtime.cache.events",
    "InformerEvent": "kubeinformers.runtime.cache.events",
    "Updated": "kubeinformers.runtime.cache.events",
    "FactoryHealth": "kubeinformers.runtime.cache.health",
    "InformerHealth": "kubeinformers.runtime.cache.health",
}

__all__ = [
    "ADD",
    "AddFunc",
    "Added",
    "BatchProcessingError",
    "BatchQueue",
    "BookmarkInfo",
    "CacheSyncTimeoutError",
    "ClusterLister",
    "Controller",
    "ControllerConfig",
    "DEFAULT_BATCH_SIZE",
    "DELETE",
    "DeleteFunc",
    "Deleted",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "Deltas",
    "DiscoveryError",
    "DynamicSharedInformerFactory",
    "EventStream",
    "FIFOClosedError",
    "FactoryHealth",
    "FilterFunc",
    "FilteringResourceEventHandler",
    "GenericInformer",
    "GenericLister",
    "GenericNamespaceLister",
    "HandlerResult",
    "IndexFunc",
    "IndexFuncError",
    "Indexer",
    "IndexerConflictError",
    "IndexerReader",
    "Indexers",
    "InformerEvent",
    "InformerHealth",
    "InformerStartedError",
    "InformerStoppedError",
    "KeyFunc",
    "KnownObjects",
    "Lister",
    "METADATA_LIST_ACCEPT",
    "METADATA_WATCH_ACCEPT",
    "MINIMUM_RESYNC_PERIOD",
    "MetadataSharedInformerFactory",
    "NAMESPACE_INDEX",
    "NamespacedLister",
    "NoInformerFoundError",
    "NoMetadataError",
    "NotFoundError",
    "Notification",
    "ObjectKeyError",
    "PartialObjectMetadata",
    "PopProcessFunc",
    "ProcessBatchFunc",
    "ProcessFunc",
    "ProcessorListener",
    "QUEUE_KINDS",
    "Queue",
    "QueueKind",
    "RealFIFO",
    "ReplacedAllInfo",
    "RequeueError",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerRegistration",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "SharedProcessor",
    "SingleNamespaceLister",
    "StartableFactory",
    "Store",
    "SyncAllInfo",
    "ThreadSafeStore",
    "Transaction",
    "TransactionError",
    "TransactionType",
    "TransformFunc",
    "TweakListOptionsFunc",
    "UNLOCK_WHILE_PROCESSING_LIMIT",
    "UPDATE",
    "UpdateFunc",
    "Updated",
    "chain_transforms",
    "deletion_handling_meta_namespace_key",
    "determine_resync_period",
    "discover_resource",
    "filter_by_selector",
    "index_func_to_key_func_adapter",
    "meta_namespace_index_func",
    "meta_namespace_key",
    "new_informer",
    "object_annotations",
    "object_labels",
    "object_name",
    "object_namespace",
    "object_resource_version",
    "object_uid",
    "process_deltas",
    "process_deltas_in_batch",
    "split_meta_namespace_key",
    "strip_managed_fields",
]


def __getattr__(name: str) -> Any:
    return _exports.load(__name__, _EXPORTS, name)
