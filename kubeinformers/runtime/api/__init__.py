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
    from kubeinformers.runtime.api.listwatch import (
        INITIAL_EVENTS_END_ANNOTATION as INITIAL_EVENTS_END_ANNOTATION,
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
        Watch as Watch,
    )
    from kubeinformers.runtime.api.listwatch import (
        WatchEvent as WatchEvent,
    )
    from kubeinformers.runtime.api.listwatch import (
        WatchEventType as WatchEventType,
    )
    from kubeinformers.runtime.api.listwatch import (
        watch_list_semantics_unsupported as watch_list_semantics_unsupported,
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
    "MicroTime": "kubeinformers.runtime.api.timestamps",
    "Time": "kubeinformers.runtime.api.timestamps",
    "format_micro_time": "kubeinformers.runtime.api.timestamps",
    "format_time": "kubeinformers.runtime.api.timestamps",
    "INITIAL_EVENTS_END_ANNOTATION": "kubeinformers.runtime.api.listwatch",
    "ListOptions": "kubeinformers.runtime.api.listwatch",
    "ListerWatcher": "kubeinformers.runtime.api.listwatch",
    "ObjectList": "kubeinformers.runtime.api.listwatch",
    "Watch": "kubeinformers.runtime.api.listwatch",
    "WatchEvent": "kubeinformers.runtime.api.listwatch",
    "WatchEventType": "kubeinformers.runtime.api.listwatch",
    "watch_list_semantics_unsupported": "kubeinformers.runtime.api.listwatch",
}

__all__ = [
    "INITIAL_EVENTS_END_ANNOTATION",
    "ListOptions",
    "ListerWatcher",
    "MicroTime",
    "ObjectList",
    "Time",
    "Watch",
    "WatchEvent",
    "WatchEventType",
    "format_micro_time",
    "format_time",
    "watch_list_semantics_unsupported",
]


def __getattr__(name: str) -> Any:
    return _exports.load(__name__, _EXPORTS, name)
