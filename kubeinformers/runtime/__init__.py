"""kubeinformers.runtime.

The asyncio controller pieces below are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubeinformers.runtime.async_leaderelection import (
        AsyncLeaderElector as AsyncLeaderElector,
    )
    from kubeinformers.runtime.async_reconcile import AsyncReconcile as AsyncReconcile
    from kubeinformers.runtime.async_reconcile import AsyncReconciler as AsyncReconciler

# issue 17: the asyncio controller loop and leader election
_LAZY = {
    "AsyncLeaderElector": "kubeinformers.runtime.async_leaderelection",
    "AsyncReconcile": "kubeinformers.runtime.async_reconcile",
    "AsyncReconciler": "kubeinformers.runtime.async_reconcile",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
