"""Ready-made informer transforms (`SharedIndexInformer.set_transform`, factory `transform=`).

A transform runs on every object before it enters the cache, so it is where memory is saved:
`metadata.managedFields` is often the largest part of an object and almost never read by
controllers (client-go: tools/cache `TransformStripManagedFields`).
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any, TypeVar

from pydantic import BaseModel

from kubeinformers.runtime.api.model import own_fields_set
from kubeinformers.runtime.codec.lazy import strip_raw_managed_fields

__all__ = ["chain_transforms", "strip_managed_fields"]

T = TypeVar("T")

_MANAGED_FIELDS_ATTR = "managed_fields"
_MANAGED_FIELDS_KEY = "managedFields"


def _strip_model_metadata(metadata: BaseModel) -> None:
    if _MANAGED_FIELDS_ATTR in type(metadata).model_fields:
        if getattr(metadata, _MANAGED_FIELDS_ATTR) is not None:
            setattr(metadata, _MANAGED_FIELDS_ATTR, None)
        # Also forget that it was set, so exclude_unset dumps do not write `managedFields: null`.
        own_fields_set(metadata)  # cached models share their field sets
        metadata.model_fields_set.discard(_MANAGED_FIELDS_ATTR)
        return
    extra = metadata.__pydantic_extra__
    if extra is not None:
        extra.pop(_MANAGED_FIELDS_KEY, None)


def strip_managed_fields(obj: T) -> T:
    """Drop `metadata.managedFields` from `obj` in place and return it.

    Works on generated models (`obj.metadata.managed_fields`), on models whose metadata keeps
    it as an unknown field, and on mappings (`obj["metadata"]["managedFields"]`). On a lazy
    object whose metadata is not built yet (what an informer's transform gets by default) it
    cuts them from the raw bytes, JSON or protobuf, and builds nothing (rule K17). Objects
    without metadata (a tombstone, a Status) are returned untouched; applying it twice is the
    same as once.
    """
    if isinstance(obj, MutableMapping):
        metadata = obj.get("metadata")
        if isinstance(metadata, MutableMapping):
            metadata.pop(_MANAGED_FIELDS_KEY, None)
        return obj
    if strip_raw_managed_fields(obj):
        return obj  # a lazy object: cut from its raw bytes, nothing built (rule K17)
    metadata = getattr(obj, "metadata", None)
    if isinstance(metadata, BaseModel):
        _strip_model_metadata(metadata)
    elif isinstance(metadata, MutableMapping):
        metadata.pop(_MANAGED_FIELDS_KEY, None)
    return obj


def chain_transforms(*transforms: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """One transform applying `transforms` left to right (an informer takes only one)."""

    def chained(obj: Any) -> Any:
        for transform in transforms:
            obj = transform(obj)
        return obj

    return chained
