"""The reflector (client-go: tools/cache/reflector.go): keeps a store in step with the server.

`reflector` holds the run loop and the steady watch loop; `list` the paged LIST, `watch_list`
the streamed initial state, `watch` opening watches and applying a stream to a store,
`state` what these share, `backoff` when to retry, `support` the errors, feature gates,
temporary store and consistency detector.
"""

from __future__ import annotations

from kubeinformers.runtime.reflector.reflector import (
    DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE,
)
from kubeinformers.runtime.reflector.reflector import (
    MIN_WATCH_TIMEOUT as MIN_WATCH_TIMEOUT,
)
from kubeinformers.runtime.reflector.reflector import (
    Reflector as Reflector,
)
from kubeinformers.runtime.reflector.reflector import (
    ReflectorStore as ReflectorStore,
)
from kubeinformers.runtime.reflector.reflector import (
    VeryShortWatchError as VeryShortWatchError,
)
from kubeinformers.runtime.reflector.reflector import (
    WatchListInconsistencyError as WatchListInconsistencyError,
)
from kubeinformers.runtime.reflector.reflector import (
    default_watch_error_handler as default_watch_error_handler,
)
from kubeinformers.runtime.reflector.reflector import (
    error_from_status as error_from_status,
)
from kubeinformers.runtime.reflector.reflector import (
    is_connection_refused as is_connection_refused,
)
from kubeinformers.runtime.reflector.reflector import (
    is_internal_error as is_internal_error,
)
from kubeinformers.runtime.reflector.reflector import (
    is_watch_error_retriable as is_watch_error_retriable,
)

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MIN_WATCH_TIMEOUT",
    "Reflector",
    "ReflectorStore",
    "VeryShortWatchError",
    "WatchListInconsistencyError",
    "default_watch_error_handler",
    "error_from_status",
    "is_connection_refused",
    "is_internal_error",
    "is_watch_error_retriable",
]
