"""kubeinformers: typed, code-generated Kubernetes informers for Python.

`kubeinformers.runtime` holds client-go's informer machinery, `kubeinformers.generated` the
typed informers and listers of the built-in API, `kubeinformers.testing` a local API server
and in-memory fakes. Importing this package imports none of them, so it stays fast.
"""

__version__ = "0.1.0"

import importlib as _importlib  # issue 17 block
from typing import TYPE_CHECKING as _TYPE_CHECKING  # issue 17 block
from typing import Any as _Any  # issue 17 block

from kubeinformers import _moved

_moved.install()

# ---- issue 17 (branch i17): the asyncio / keyed-by-type public names --------------------------
# Imported on first use, so `import kubeinformers` stays fast. The lead merges this block into
# the package's public face (phase B); every name is defined in the module named here.
# (Its three imports sit with the others at the top: ruff E402.)
if _TYPE_CHECKING:
    from kubeinformers.runtime.api.kinds import KindModelError as KindModelError
    from kubeinformers.runtime.async_leaderelection import (
        AsyncLeaderElector as AsyncLeaderElector,
    )
    from kubeinformers.runtime.async_reconcile import AsyncReconciler as AsyncReconciler
    from kubeinformers.runtime.cache.events import Added as Added
    from kubeinformers.runtime.cache.events import Deleted as Deleted
    from kubeinformers.runtime.cache.events import EventStream as EventStream
    from kubeinformers.runtime.cache.events import InformerEvent as InformerEvent
    from kubeinformers.runtime.cache.events import Updated as Updated
    from kubeinformers.runtime.cache.factory import CacheSyncTimeoutError as CacheSyncTimeoutError
    from kubeinformers.runtime.cache.health import FactoryHealth as FactoryHealth
    from kubeinformers.runtime.cache.health import InformerHealth as InformerHealth
    from kubeinformers.runtime.cache.keys import (
        DeletedFinalStateUnknown as DeletedFinalStateUnknown,
    )
    from kubeinformers.runtime.cache.listers import NotFoundError as NotFoundError
    from kubeinformers.runtime.leaderelection import LeaseLock as LeaseLock
    from kubeinformers.runtime.reconcile import Requeue as Requeue
    from kubeinformers.runtime.workqueue.async_queue import (
        AsyncRateLimitingQueue as AsyncRateLimitingQueue,
    )
    from kubeinformers.runtime.workqueue.rate_limiters import (
        ItemExponentialFailureRateLimiter as ItemExponentialFailureRateLimiter,
    )

_I17_EXPORTS = {
    "Added": "kubeinformers.runtime.cache.events",
    "AsyncLeaderElector": "kubeinformers.runtime.async_leaderelection",
    "AsyncRateLimitingQueue": "kubeinformers.runtime.workqueue.async_queue",
    "AsyncReconciler": "kubeinformers.runtime.async_reconcile",
    "CacheSyncTimeoutError": "kubeinformers.runtime.cache.factory",
    "Deleted": "kubeinformers.runtime.cache.events",
    "DeletedFinalStateUnknown": "kubeinformers.runtime.cache.keys",
    "EventStream": "kubeinformers.runtime.cache.events",
    "FactoryHealth": "kubeinformers.runtime.cache.health",
    "InformerEvent": "kubeinformers.runtime.cache.events",
    "InformerHealth": "kubeinformers.runtime.cache.health",
    "ItemExponentialFailureRateLimiter": "kubeinformers.runtime.workqueue.rate_limiters",
    "KindModelError": "kubeinformers.runtime.api.kinds",
    "LeaseLock": "kubeinformers.runtime.leaderelection",
    "NotFoundError": "kubeinformers.runtime.cache.listers",
    "Requeue": "kubeinformers.runtime.reconcile",
    "Updated": "kubeinformers.runtime.cache.events",
}

__all__ = ["__version__", *sorted(_I17_EXPORTS)]


def __getattr__(name: str) -> _Any:
    module = _I17_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kubeinformers' has no attribute {name!r}")
    return getattr(_importlib.import_module(module), name)


# ---- end of the issue 17 block ----------------------------------------------------------------
