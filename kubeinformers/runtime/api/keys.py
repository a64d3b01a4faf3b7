"""Object keys, tombstones, and the one seam through which the runtime reads metadata.

client-go counterpart: tools/cache/store.go (MetaNamespaceKeyFunc, SplitMetaNamespaceKey),
controller.go (DeletionHandlingMetaNamespaceKeyFunc), delta_fifo.go (DeletedFinalStateUnknown).

Every other runtime module reads an object's name, namespace, resourceVersion, labels,
annotations and uid only through the accessors below, so that a leaner object
representation can replace the full pydantic model later without touching the runtime.

Objects are either generated pydantic models (``obj.metadata.name``, ``.namespace``,
``.resource_version``, ``.labels``, ``.annotations``, ``.uid``; ``metadata`` may be None) or,
for dynamic informers, mappings with a ``"metadata"`` mapping in the API's camelCase
(``resourceVersion``). These functions run for every event of caches holding 100k objects,
so they try the common shapes first (plain ``dict``, then attribute access) and fall back
to the general ``Mapping`` protocol only when needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from kubeinformers.runtime.api.fields import field_of as _field

__all__ = [
    "DeletedFinalStateUnknown",
    "LeftShard",
    "NoMetadataError",
    "ObjectKeyError",
    "deletion_handling_meta_namespace_key",
    "meta_namespace_key",
    "object_annotations",
    "object_labels",
    "object_name",
    "object_namespace",
    "object_resource_version",
    "object_uid",
    "split_meta_namespace_key",
]

T = TypeVar("T")

_EMPTY: Mapping[str, str] = MappingProxyType({})
_dict = dict  # local alias: `type(x) is _dict` is the fastest test for the dynamic case


class NoMetadataError(TypeError):
    """The object exposes no Kubernetes metadata (A1: ``object has no meta: ...``)."""

    def __init__(self, obj: object) -> None:
        super().__init__(
            f"object has no meta: {type(obj).__qualname__} has neither a .metadata attribute "
            "nor a 'metadata' key; pass a generated model or a mapping with a 'metadata' mapping"
        )
        self.obj = obj


class ObjectKeyError(KeyError):
    """A key function failed for an object (client-go's ``KeyError``, rule A8).

    It is a ``KeyError`` so that ``except KeyError`` catches it; the cause is chained as
    ``__cause__`` and also kept in ``err``.
    """

    def __init__(self, obj: object, err: BaseException | str) -> None:
        super().__init__(obj, err)
        self.obj = obj
        self.err = err

    def __str__(self) -> str:
        return f"couldn't create key for object {self.obj!r}: {self.err}"


@dataclass(frozen=True)
class DeletedFinalStateUnknown(Generic[T]):
    """A tombstone: the object was deleted but its final state was missed (A5).

    Synthesised only by relist deletion detection in the FIFOs. ``obj`` is the last locally
    known state; it may be stale, and it is None when nothing was known. Handlers'
    ``on_delete`` receives either the real final object or one of these.
    """

    # Hand-written __slots__ rather than dataclass(slots=True): the latter breaks frozen
    # __setattr__ for Generic classes on Python 3.11 (``DeletedFinalStateUnknown[T](...)``).
    __slots__ = ("key", "obj")

    key: str
    obj: T | None


@dataclass(frozen=True)
class LeftShard(DeletedFinalStateUnknown[T]):
    """A tombstone for an object that left the informer's shard (N9), not one deleted.

    A sharded informer whose shard changes (`set_shard`) drops the objects outside the new
    shard from its cache and tells `on_delete` with one of these: ``obj`` is the last cached
    state; the object still exists on the server and another replica now caches it. It is a
    `DeletedFinalStateUnknown`, so key functions and handlers that keep their own view of
    the cache treat it as the object leaving it; a handler that acts on deletion (cleanup)
    must check ``isinstance(obj, LeftShard)`` first. Reconcile loops do not enqueue it.
    """

    __slots__ = ()


def _metadata(obj: object) -> Any:
    """The metadata of ``obj`` (a model, a mapping or None), or raise NoMetadataError."""
    if type(obj) is _dict:
        return obj.get("metadata")
    try:
        return obj.metadata  # type: ignore[attr-defined]
    except AttributeError:
        if isinstance(obj, Mapping):
            return obj.get("metadata")
        raise NoMetadataError(obj) from None


def object_name(obj: object) -> str:
    """``metadata.name``, or ``""`` when unset."""
    md = _metadata(obj)
    if md is None:
        return ""
    if type(md) is _dict:
        return md.get("name") or ""
    try:
        return md.name or ""
    except AttributeError:
        return _field(md, "name", "name") or ""


def object_namespace(obj: object) -> str:
    """``metadata.namespace``, or ``""`` for cluster-scoped objects (or when unset)."""
    md = _metadata(obj)
    if md is None:
        return ""
    if type(md) is _dict:
        return md.get("namespace") or ""
    try:
        return md.namespace or ""
    except AttributeError:
        return _field(md, "namespace", "namespace") or ""


def object_resource_version(obj: object) -> str:
    """``metadata.resourceVersion``, or ``""`` when unset."""
    md = _metadata(obj)
    if md is None:
        return ""
    if type(md) is _dict:
        return md.get("resourceVersion") or ""
    try:
        return md.resource_version or ""
    except AttributeError:
        return _field(md, "resource_version", "resourceVersion") or ""


def object_uid(obj: object) -> str:
    """``metadata.uid``, or ``""`` when unset."""
    return _field(_metadata(obj), "uid", "uid") or ""


def object_labels(obj: object) -> Mapping[str, str]:
    """``metadata.labels``; an empty read-only mapping when there are none.

    The returned mapping is the object's own: treat it as read-only.
    """
    md = _metadata(obj)
    if md is None:
        return _EMPTY
    if type(md) is _dict:
        return md.get("labels") or _EMPTY
    try:
        return md.labels or _EMPTY
    except AttributeError:
        return _field(md, "labels", "labels") or _EMPTY


def object_annotations(obj: object) -> Mapping[str, str]:
    """``metadata.annotations``; an empty read-only mapping when there are none."""
    return _field(_metadata(obj), "annotations", "annotations") or _EMPTY


def meta_namespace_key(obj: object) -> str:
    """``"<namespace>/<name>"``, or ``"<name>"`` for cluster-scoped objects (A1).

    A string (client-go's ExplicitKey) is returned unchanged. No escaping and no
    validation: an empty name gives ``""`` (or ``"ns/"``). Raises NoMetadataError for an
    object without metadata.
    """
    t = type(obj)
    if t is str:
        return obj  # type: ignore[return-value]
    if t is _dict:
        md = obj.get("metadata")  # type: ignore[attr-defined]
    else:
        try:
            md = obj.metadata  # type: ignore[attr-defined]
        except AttributeError:
            if isinstance(obj, str):
                return str(obj)
            if isinstance(obj, Mapping):
                md = obj.get("metadata")
            else:
                raise NoMetadataError(obj) from None
    if md is None:
        return ""
    if type(md) is _dict:
        ns = md.get("namespace")
        name = md.get("name") or ""
    else:
        try:
            ns = md.namespace
            name = md.name or ""
        except AttributeError:
            ns = _field(md, "namespace", "namespace")
            name = _field(md, "name", "name") or ""
    if ns:
        return f"{ns}/{name}"
    return name


def deletion_handling_meta_namespace_key(obj: object) -> str:
    """A tombstone's own key, verbatim (its object is not consulted); else A1 (A2)."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return meta_namespace_key(obj)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """Split a key into ``(namespace, name)`` (A3).

    One segment → ``("", name)``; two → ``(namespace, name)``; anything else raises
    ValueError ``unexpected key format: "<key>"``. ``""`` → ``("", "")``; ``"/x"`` →
    ``("", "x")``; ``"ns/"`` → ``("ns", "")``.
    """
    parts = key.split("/")
    n = len(parts)
    if n == 1:
        return "", key
    if n == 2:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {_go_quote(key)}")


def _go_quote(s: str) -> str:
    """Double-quote ``s`` the way Go's ``%q`` does for printable text."""
    escaped = s.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return f'"{escaped}"'
