"""Talking to an API server: `transport.ApiListerWatcher` (list and watch over a kubernetes
ApiClient) and `pager` (client-go: tools/pager, following continue tokens). Names load on
first use.
"""

from __future__ import annotations

from kubeinformers import _exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from kubeinformers.runtime.client.pager import (
        DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE,
    )
    from kubeinformers.runtime.client.pager import (
        list_pages as list_pages,
    )
    from kubeinformers.runtime.client.transport import (
        MIN_CONNECTION_POOL_SIZE as MIN_CONNECTION_POOL_SIZE,
    )
    from kubeinformers.runtime.client.transport import (
        ApiListerWatcher as ApiListerWatcher,
    )
    from kubeinformers.runtime.client.transport import (
        Decoder as Decoder,
    )
    from kubeinformers.runtime.client.transport import (
        HttpWatch as HttpWatch,
    )
    from kubeinformers.runtime.client.transport import (
        ensure_connection_pool_size as ensure_connection_pool_size,
    )
    from kubeinformers.runtime.client.transport import (
        query_params as query_params,
    )

_EXPORTS: dict[str, str] = {
    "MIN_CONNECTION_POOL_SIZE": "kubeinformers.runtime.client.transport",
    "ApiListerWatcher": "kubeinformers.runtime.client.transport",
    "Decoder": "kubeinformers.runtime.client.transport",
    "HttpWatch": "kubeinformers.runtime.client.transport",
    "ensure_connection_pool_size": "kubeinformers.runtime.client.transport",
    "query_params": "kubeinformers.runtime.client.transport",
    "DEFAULT_PAGE_SIZE": "kubeinformers.runtime.client.pager",
    "list_pages": "kubeinformers.runtime.client.pager",
}

__all__ = [
    "ApiListerWatcher",
    "DEFAULT_PAGE_SIZE",
    "Decoder",
    "HttpWatch",
    "MIN_CONNECTION_POOL_SIZE",
    "ensure_connection_pool_size",
    "list_pages",
    "query_params",
]


def __getattr__(name: str) -> Any:
    return _exports.load(__name__, _EXPORTS, name)
