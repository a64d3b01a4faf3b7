"""The API's vocabulary every layer shares (apimachinery's counterpart): the model base and
Status (`model`), Time/MicroTime (`timestamps`), resources and GVRs (`resource`), Status
errors (`errors`), and the list/watch contract between a source and the reflector
(`listwatch`). Names load on first use.
"""

from __future__ import annotations

from kubeinformers import _exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from kubeinformers.runtime.api.errors import (
        ApiStatusError as ApiStatusError,
    )
    from kubeinformers.runtime.api.errors import (
        error_from_status as error_from_status,
    )
    from kubeinformers.runtime.api.errors import (
        is_connection_refused as is_connection_refused,
    )
    from kubeinformers.runtime.api.errors import (
        is_expired as is_expired,
    )
    from kubeinformers.runtime.api.errors import (
        is_internal_error as is_internal_error,
    )
    from kubeinformers.runtime.api.errors import (
        is_too_large_resource_version as is_too_large_resource_version,
    )
    from kubeinformers.runtime.api.errors import (
        is_too_many_requests as is_too_many_requests,
    )
    from kubeinformers.runtime.api.errors import (
        is_watch_error_retriable as is_watch_error_retriable,
    )
    from kubeinformers.runtime.api.fields import (
        field_of as field_of,
    )
    from kubeinformers.runtime.api.listwatch import (
        INITIAL_EVENTS_END_ANNOTATION as INITIAL_EVENTS_END_ANNOTATION,
    )
    from kubeinformers.runtime.api.listwatch import (
        CountsDecodeErrors as CountsDecodeErrors,
    )
    from kubeinformers.runtime.api.listwatch import (
        ListerWatcher as ListerWatcher,
    )
    from kubeinformers.runtime.api.listwatch import (
        ListOptions as ListOptions,
    )
    from kubeinformers.runtime.api.listwatch import (
        ObjectList as ObjectList,
    )
    from kubeinformers.runtime.api.listwatch import (
        ReportsDecodeErrors as ReportsDecodeErrors,
    )
    from kubeinformers.runtime.api.listwatch import (
        ServesResource as ServesResource,
    )
    from kubeinformers.runtime.api.listwatch import (
        Watch as Watch,
    )
    from kubeinformers.runtime.api.listwatch import (
        WatchEvent as WatchEvent,
    )
    from kubeinformers.runtime.api.listwatch import (
        WatchEventType as WatchEventType,
    )
    from kubeinformers.runtime.api.listwatch import (
        WatchListSemanticsUnsupported as WatchListSemanticsUnsupported,
    )
    from kubeinformers.runtime.api.listwatch import (
        watch_list_semantics_unsupported as watch_list_semantics_unsupported,
    )
    from kubeinformers.runtime.api.model import (
        KubeModel as KubeModel,
    )
    from kubeinformers.runtime.api.model import (
        Status as Status,
    )
    from kubeinformers.runtime.api.model import (
        StatusCause as StatusCause,
    )
    from kubeinformers.runtime.api.model import (
        StatusDetails as StatusDetails,
    )
    from kubeinformers.runtime.api.resource import (
        LIST_WATCH_VERBS as LIST_WATCH_VERBS,
    )
    from kubeinformers.runtime.api.resource import (
        APIResource as APIResource,
    )
    from kubeinformers.runtime.api.resource import (
        GroupVersionResource as GroupVersionResource,
    )
    from kubeinformers.runtime.api.timestamps import (
        MicroTime as MicroTime,
    )
    from kubeinformers.runtime.api.timestamps import (
        Time as Time,
    )
    from kubeinformers.runtime.api.timestamps import (
        format_micro_time as format_micro_time,
    )
    from kubeinformers.runtime.api.timestamps import (
        format_time as format_time,
    )

_EXPORTS: dict[str, str] = {
    "KubeModel": "kubeinformers.runtime.api.model",
    "Status": "kubeinformers.runtime.api.model",
    "StatusCause": "kubeinformers.runtime.api.model",
    "StatusDetails": "kubeinformers.runtime.api.model",
    "MicroTime": "kubeinformers.runtime.api.timestamps",
    "Time": "kubeinformers.runtime.api.timestamps",
    "format_micro_time": "kubeinformers.runtime.api.timestamps",
    "format_time": "kubeinformers.runtime.api.timestamps",
    "LIST_WATCH_VERBS": "kubeinformers.runtime.api.resource",
    "APIResource": "kubeinformers.runtime.api.resource",
    "GroupVersionResource": "kubeinformers.runtime.api.resource",
    "ApiStatusError": "kubeinformers.runtime.api.errors",
    "error_from_status": "kubeinformers.runtime.api.errors",
    "is_connection_refused": "kubeinformers.runtime.api.errors",
    "is_expired": "kubeinformers.runtime.api.errors",
    "is_internal_error": "kubeinformers.runtime.api.errors",
    "is_too_large_resource_version": "kubeinformers.runtime.api.errors",
    "is_too_many_requests": "kubeinformers.runtime.api.errors",
    "is_watch_error_retriable": "kubeinformers.runtime.api.errors",
    "field_of": "kubeinformers.runtime.api.fields",
    "INITIAL_EVENTS_END_ANNOTATION": "kubeinformers.runtime.api.listwatch",
    "CountsDecodeErrors": "kubeinformers.runtime.api.listwatch",
    "ListOptions": "kubeinformers.runtime.api.listwatch",
    "ListerWatcher": "kubeinformers.runtime.api.listwatch",
    "ObjectList": "kubeinformers.runtime.api.listwatch",
    "ReportsDecodeErrors": "kubeinformers.runtime.api.listwatch",
    "ServesResource": "kubeinformers.runtime.api.listwatch",
    "Watch": "kubeinformers.runtime.api.listwatch",
    "WatchEvent": "kubeinformers.runtime.api.listwatch",
    "WatchEventType": "kubeinformers.runtime.api.listwatch",
    "WatchListSemanticsUnsupported": "kubeinformers.runtime.api.listwatch",
    "watch_list_semantics_unsupported": "kubeinformers.runtime.api.listwatch",
}

__all__ = [
    "APIResource",
    "ApiStatusError",
    "CountsDecodeErrors",
    "GroupVersionResource",
    "INITIAL_EVENTS_END_ANNOTATION",
    "KubeModel",
    "LIST_WATCH_VERBS",
    "ListOptions",
    "ListerWatcher",
    "MicroTime",
    "ObjectList",
    "ReportsDecodeErrors",
    "ServesResource",
    "Status",
    "StatusCause",
    "StatusDetails",
    "Time",
    "Watch",
    "WatchEvent",
    "WatchEventType",
    "WatchListSemanticsUnsupported",
    "error_from_status",
    "field_of",
    "format_micro_time",
    "format_time",
    "is_connection_refused",
    "is_expired",
    "is_internal_error",
    "is_too_large_resource_version",
    "is_too_many_requests",
    "is_watch_error_retriable",
    "watch_list_semantics_unsupported",
]


def __getattr__(name: str) -> Any:
    return _exports.load(__name__, _EXPORTS, name)
