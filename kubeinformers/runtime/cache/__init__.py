"""client-go's tools/cache: keys and tombstones, the indexer, the informer queues (DeltaFIFO,
RealFIFO), the controller's process loop, the shared informer and its handler fan-out,
listers, the factories (typed, dynamic, metadata-only) and transforms.

The asyncio-facing names below are imported on first use (this package stays cheap to import).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubeinformers.runtime.cache.events import Added as Added
    from kubeinformers.runtime.cache.events import Deleted as Deleted
    from kubeinformers.runtime.cache.events import EventStream as EventStream
    from kubeinformers.runtime.cache.events import InformerEvent as InformerEvent
    from kubeinformers.runtime.cache.events import Updated as Updated
    from kubeinformers.runtime.cache.factory import CacheSyncTimeoutError as CacheSyncTimeoutError
    from kubeinformers.runtime.cache.health import FactoryHealth as FactoryHealth
    from kubeinformers.runtime.cache.health import InformerHealth as InformerHealth

# issue 17: the async API, health and typed events
_LAZY = {
    "Added": "kubeinformers.runtime.cache.events",
    "Deleted": "kubeinformers.runtime.cache.events",
    "EventStream": "kubeinformers.runtime.cache.events",
    "InformerEvent": "kubeinformers.runtime.cache.events",
    "Updated": "kubeinformers.runtime.cache.events",
    "CacheSyncTimeoutError": "kubeinformers.runtime.cache.factory",
    "FactoryHealth": "kubeinformers.runtime.cache.health",
    "InformerHealth": "kubeinformers.runtime.cache.health",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
