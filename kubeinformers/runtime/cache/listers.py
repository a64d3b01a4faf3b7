"""Listers: read-only, typed views over an informer's indexer.

client-go counterparts: listers/generic_helpers.go (the typed listers the generated code
builds on, rule H9) and tools/cache/listers.go (`GenericLister`, rule H10).

A lister never talks to the API server: `list` and `get` answer from the local cache, so they
are cheap but only as fresh as the informer. Objects returned are the cached objects
themselves: treat them as read-only.
"""

from __future__ import annotations

import builtins
import logging
import weakref
from collections.abc import Iterable
from typing import Any, Generic, Protocol, TypeVar

from kubeinformers.runtime.api.errors import NotFound
from kubeinformers.runtime.api.keys import object_labels, object_namespace
from kubeinformers.runtime.api.resource import APIResource, GroupVersionResource
from kubeinformers.runtime.cache.store import NAMESPACE_INDEX
from kubeinformers.runtime.labels.parser import to_selector
from kubeinformers.runtime.labels.selector import Selector

__all__ = [
    "NAMESPACE_INDEX",
    "GenericLister",
    "GenericNamespaceLister",
    "IndexerReader",
    "ClusterLister",
    "Lister",
    "SingleNamespaceLister",
    "NamespacedLister",
    "NotFoundError",
    "filter_by_selector",
]

T = TypeVar("T")

logger = logging.getLogger("kubeinformers.listers")


class IndexerReader(Protocol[T]):
    """What a lister needs of an indexer (store.Indexer satisfies it)."""

    def get_by_key(self, key: str, /) -> T | None: ...

    def list(self) -> list[T]: ...

    def by_index(self, index_name: str, value: str, /) -> builtins.list[T]: ...


class NotFoundError(NotFound):
    """The object is not in the informer's cache: an API NotFound (404) error, as client-go's
    (an `errors.NotFound`, so one `except NotFound` covers the cache and the client).

    The message starts exactly as the API server's (`pod "web" not found`,
    `deployment.apps "web" not found`; H9) and adds the namespace when there is one.
    `details` is `{"group", "kind": <resource>, "name"}` as in apimachinery `NewNotFound`.
    """

    def __init__(self, group: str, resource: str, name: str, namespace: str = "") -> None:
        qualified = f"{resource}.{group}" if group else resource
        message = f'{qualified} "{name}" not found'
        if namespace:
            message += f' in namespace "{namespace}"'
        super().__init__(
            404,
            "NotFound",
            message,
            details={"group": group, "kind": resource, "name": name},
        )
        self.group = group
        self.resource = resource
        self.name = name
        self.namespace = namespace

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.group, self.resource, self.name, self.namespace))


def filter_by_selector(objects: Iterable[T], selector: Selector) -> list[T]:
    """The objects whose labels match; everything() returns all without reading labels (H9)."""
    if selector.matches_nothing:
        return []
    items: list[Any] = objects if isinstance(objects, list) else list(objects)  # maybe read twice
    if selector.empty():
        return items
    match = selector.matcher
    try:  # typed objects: their labels without the generic accessor's dispatch
        return [obj for obj in items if match(obj.metadata.labels or {})]
    except AttributeError:  # mappings, or an object without metadata
        return [obj for obj in items if match(object_labels(obj))]


# The indexers warned about (H9), held weakly: a set of id()s, as it was, also silenced the
# warning for a new indexer that reused a collected one's id (40 of 50 fresh informers).
_warned_missing_index: weakref.WeakSet[Any] = weakref.WeakSet()
_warned_missing_index_ids: set[int] = set()  # indexers that cannot be weakly referenced


def _first_missing_index_warning(indexer: object) -> bool:
    """True the first time `indexer` is found without a namespace index."""
    try:
        if indexer in _warned_missing_index:
            return False
        _warned_missing_index.add(indexer)
    except TypeError:  # not weakly referenceable
        if id(indexer) in _warned_missing_index_ids:
            return False
        _warned_missing_index_ids.add(id(indexer))
    return True


def _list_namespace(indexer: IndexerReader[T], namespace: str, selector: Selector) -> list[T]:
    """Objects of one namespace from the namespace index, or a filtered scan if it is missing.

    H9: a missing index is not an error; client-go logs a warning and scans. We warn once per
    indexer (a hot loop would otherwise flood the log).
    """
    if selector.matches_nothing:
        return []
    try:
        objects = indexer.by_index(NAMESPACE_INDEX, namespace)
    except KeyError:
        if _first_missing_index_warning(indexer):
            logger.warning(
                "the indexer has no %r index: listing namespace %r scans every object; "
                "add indexers={NAMESPACE_INDEX: meta_namespace_index_func} to the informer",
                NAMESPACE_INDEX,
                namespace,
            )
        objects = [obj for obj in indexer.list() if object_namespace(obj) == namespace]
    return filter_by_selector(objects, selector)


class SingleNamespaceLister(Generic[T]):
    """The objects of one namespace of a namespaced resource (`PodNamespaceLister`, H9).

    With namespace "" it covers all namespaces, and `get` looks up the bare name (H9).
    """

    __slots__ = ("_indexer", "_namespace", "_resource")

    def __init__(self, indexer: IndexerReader[T], resource: APIResource, namespace: str) -> None:
        self._indexer = indexer
        self._resource = resource
        self._namespace = namespace

    @property
    def namespace(self) -> str:
        return self._namespace

    def list(self, selector: str | Selector | None = None) -> list[T]:
        """Objects in this namespace whose labels match `selector` (order unspecified)."""
        sel = to_selector(selector)
        if not self._namespace:
            return filter_by_selector(self._indexer.list(), sel)
        return _list_namespace(self._indexer, self._namespace, sel)

    def get(self, name: str) -> T:
        """The cached object `namespace/name`; NotFoundError (404) when it is not cached."""
        key = f"{self._namespace}/{name}" if self._namespace else name
        obj = self._indexer.get_by_key(key)
        if obj is None:
            raise NotFoundError(
                self._resource.group, self._resource.singular_name, name, self._namespace
            )
        return obj


class Lister(Generic[T]):
    """The base of every typed lister (H9): `list(selector)` over all namespaces.

    It has no `get`: reading one object needs a namespace for a namespaced resource and none
    for a cluster-scoped one, so that step lives in the two subclasses, and mypy rejects
    `pods().lister().get(name)` and `nodes().lister().by_namespace(ns)` instead of letting them
    fail at run time. Generated listers subclass `NamespacedLister` (`PodLister.pods(ns)`) or
    `ClusterLister` (`NodeLister.get(name)`).
    """

    __slots__ = ("_indexer", "_resource")

    def __init__(self, indexer: IndexerReader[T], resource: APIResource) -> None:
        self._indexer = indexer
        self._resource = resource

    @property
    def resource(self) -> APIResource:
        return self._resource

    @property
    def indexer(self) -> IndexerReader[T]:
        return self._indexer

    def list(self, selector: str | Selector | None = None) -> list[T]:
        """All cached objects whose labels match `selector` (order unspecified)."""
        return filter_by_selector(self._indexer.list(), to_selector(selector))


class NamespacedLister(Lister[T]):
    """A lister of a namespaced resource: one namespace is read through `by_namespace(ns)`
    (generated listers name the step after the kind: `PodLister.pods(ns)`; H9)."""

    __slots__ = ()

    def __init__(self, indexer: IndexerReader[T], resource: APIResource) -> None:
        if not resource.namespaced:
            raise TypeError(
                f"{resource.gvr.group_resource()} is cluster-scoped: "
                "use a ClusterLister, whose get(name) needs no namespace"
            )
        super().__init__(indexer, resource)

    def by_namespace(self, namespace: str) -> SingleNamespaceLister[T]:
        """A lister for one namespace ("" = all namespaces, and `get` takes the bare name)."""
        return SingleNamespaceLister(self._indexer, self._resource, namespace)


class ClusterLister(Lister[T]):
    """A lister of a cluster-scoped resource: `get(name)`, no namespace step (H9)."""

    __slots__ = ()

    def __init__(self, indexer: IndexerReader[T], resource: APIResource) -> None:
        if resource.namespaced:
            raise TypeError(
                f"{resource.gvr.group_resource()} is namespaced: use a NamespacedLister "
                "and read one object with by_namespace(namespace).get(name)"
            )
        super().__init__(indexer, resource)

    def get(self, name: str) -> T:
        """The cached object `name`; NotFoundError (404) when it is not cached."""
        obj = self._indexer.get_by_key(name)
        if obj is None:
            raise NotFoundError(self._resource.group, self._resource.singular_name, name)
        return obj


def _group_resource(resource: APIResource | GroupVersionResource) -> tuple[str, str]:
    if isinstance(resource, APIResource):
        return resource.group, resource.resource
    return resource.group, resource.resource


class GenericNamespaceLister(Generic[T]):
    """`cache.GenericNamespaceLister` (H10): `get` always looks up `namespace + "/" + name`."""

    __slots__ = ("_group", "_indexer", "_namespace", "_resource")

    def __init__(
        self, indexer: IndexerReader[T], group: str, resource: str, namespace: str
    ) -> None:
        self._indexer = indexer
        self._group = group
        self._resource = resource
        self._namespace = namespace

    def list(self, selector: str | Selector | None = None) -> list[T]:
        sel = to_selector(selector)
        if not self._namespace:
            return filter_by_selector(self._indexer.list(), sel)
        return _list_namespace(self._indexer, self._namespace, sel)

    def get(self, name: str) -> T:
        obj = self._indexer.get_by_key(f"{self._namespace}/{name}")
        if obj is None:
            raise NotFoundError(self._group, self._resource, name, self._namespace)
        return obj


class GenericLister(Generic[T]):
    """`cache.NewGenericLister(indexer, groupResource)` (H10), used by `for_resource` and the
    dynamic and metadata informers. Not-found messages use the plural resource
    (`deployments.apps "x" not found`)."""

    __slots__ = ("_group", "_indexer", "_resource")

    def __init__(
        self, indexer: IndexerReader[T], resource: APIResource | GroupVersionResource
    ) -> None:
        self._indexer = indexer
        self._group, self._resource = _group_resource(resource)

    def list(self, selector: str | Selector | None = None) -> list[T]:
        return filter_by_selector(self._indexer.list(), to_selector(selector))

    def get(self, name: str) -> T:
        """Looks up key `name` (a cluster-scoped object, H10)."""
        obj = self._indexer.get_by_key(name)
        if obj is None:
            raise NotFoundError(self._group, self._resource, name)
        return obj

    def by_namespace(self, namespace: str) -> GenericNamespaceLister[T]:
        return GenericNamespaceLister(self._indexer, self._group, self._resource, namespace)
