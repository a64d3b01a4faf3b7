"""kubeinformers.runtime.

The asyncio controller pieces below are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubeinformers.runtime.leaderelection.async_elector import (
        AsyncLeaderElector as AsyncLeaderElector,
    )
    from kubeinformers.runtime.reconcile.async_loop import AsyncReconcile as AsyncReconcile
    from kubeinformers.runtime.reconcile.async_loop import AsyncReconcileLoop as AsyncReconcileLoop

# issue 17: the asyncio controller loop and leader election
_LAZY = {
    "AsyncLeaderElector": "kubeinformers.runtime.leaderelection.async_elector",
    "AsyncReconcile": "kubeinformers.runtime.reconcile.async_loop",
    "AsyncReconcileLoop": "kubeinformers.runtime.reconcile.async_loop",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
