"""client-go's tools/cache (and informers/, dynamicinformer, metadatainformer): the indexer
(`store`), the informer queues (`delta_fifo`, `real_fifo`), the process loop (`controller`),
the shared informer (`informer`) and its handler fan-out (`processor`, `handlers`), listers,
the factories (`factory`, `dynamic`), typed events (`events`), health and `transforms`.
Object keys and tombstones are in `runtime.api.keys` (the reflector reads them too).
"""
