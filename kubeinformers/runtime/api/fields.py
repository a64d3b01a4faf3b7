"""Reading one field of an API object that may be a model, a kubernetes client object or a
mapping (a dynamic informer's dicts, a Lease from the kubernetes client).

The one reader of both: object keys and metadata accessors (`api.keys`) and leader
election's Lease records use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["field_of"]

_dict = dict


def field_of(obj: Any, attr: str, key: str) -> Any:
    """`obj.<attr>` of a model-like object, `obj[<key>]` of a mapping; None if absent."""
    if obj is None:
        return None
    if type(obj) is _dict:
        return obj.get(key)
    try:
        return getattr(obj, attr)
    except AttributeError:
        if isinstance(obj, Mapping):
            return obj.get(key)
        return None
