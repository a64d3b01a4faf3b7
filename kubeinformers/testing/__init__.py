"""kubeinformers.testing: in-memory, local-server and real-server sources for tests.

Names are imported lazily, so importing this package does not start or import a server.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubeinformers.testing.fake import FakeListerWatcher as FakeListerWatcher
    from kubeinformers.testing.local_api_server import LocalApiServer as LocalApiServer
    from kubeinformers.testing.real_apiserver import RealApiServer as RealApiServer

_LAZY = {
    "FakeListerWatcher": "kubeinformers.testing.fake",
    "LocalApiServer": "kubeinformers.testing.local_api_server",
    "RealApiServer": "kubeinformers.testing.real_apiserver",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kubeinformers.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["FakeListerWatcher", "LocalApiServer", "RealApiServer"]
