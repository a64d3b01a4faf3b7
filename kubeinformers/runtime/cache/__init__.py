"""client-go's tools/cache: keys and tombstones, the indexer, the informer queues (DeltaFIFO,
RealFIFO), the controller's process loop, the shared informer and its handler fan-out,
listers, the factories (typed, dynamic, metadata-only) and transforms.
"""
