"""The informer's cache: a thread-safe keyed store with maintained secondary indices.

client-go counterpart: tools/cache/thread_safe_store.go, index.go, store.go (section B of
docs/behaviour.md).

``ThreadSafeStore`` is keyed by caller-supplied keys; ``Indexer`` wraps it with a key
function (default: tombstone-aware A2 keys) and is what informers and listers use. Indices
are maintained on every write as ``index name -> value -> set of keys``, so ``by_index`` and
``index_keys`` cost O(result), never a scan of the store.

Returned objects are the stored instances: treat them as read-only (B5) — mutating one
silently corrupts the indices.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Generic, NamedTuple, Protocol, TypeAlias, TypeVar

from kubeinformers.runtime.api.keys import (
    NoMetadataError,
    ObjectKeyError,
    deletion_handling_meta_namespace_key,
    object_namespace,
    object_resource_version,
)
from kubeinformers.runtime.api.listwatch import TransformError

__all__ = [
    "NAMESPACE_INDEX",
    "IndexFunc",
    "IndexFailureReporter",
    "IndexFuncError",
    "IndexerConflictError",
    "Indexer",
    "Indexers",
    "KeyFunc",
    "ThreadSafeStore",
    "Transaction",
    "TransactionError",
    "TransactionType",
    "index_func_to_key_func_adapter",
    "meta_namespace_index_func",
]

T = TypeVar("T")

IndexFunc: TypeAlias = Callable[[T], list[str]]
"""Computes the index values of an object of type T (several values are allowed)."""
Indexers: TypeAlias = Mapping[str, IndexFunc[T]]
"""Index name -> index function, for objects of type T: `Indexers[Pod]` takes only functions
of a Pod (or of a supertype, such as `meta_namespace_index_func`)."""
KeyFunc: TypeAlias = Callable[[T], str]
"""Computes the store key of an object of type T."""

NAMESPACE_INDEX = "namespace"
"""The canonical name of the namespace index (A9)."""

_ABSENT: Any = object()


def meta_namespace_index_func(obj: object) -> list[str]:
    """``[namespace]``; ``[""]`` for cluster-scoped objects (A9).

    An object without metadata raises NoMetadataError (Go returns ``[""]`` plus the error,
    which a store write turns into a panic, B4).
    """
    return [object_namespace(obj)]


def _checked_index_values(values: object) -> builtins.list[str]:
    """B19: an index function's result, which must be a list (or tuple) of strings.

    Anything else is the index function failing (B4, B18): a bare string would be indexed
    character by character and None, a set or a number would break the index write.
    """
    if type(values) is list or type(values) is tuple:
        for value in values:
            if not isinstance(value, str):
                raise TypeError(
                    f"an index function must return a list of strings; it returned "
                    f"{_short_repr(values)}, with an item of type {type(value).__name__}"
                )
        return values  # type: ignore[return-value]  # a tuple of str reads as a list does
    hint = " (wrap a single value in a list: [value])" if isinstance(values, str) else ""
    raise TypeError(
        f"an index function must return a list of strings; it returned "
        f"{_short_repr(values)} ({type(values).__name__}){hint}"
    )


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def index_func_to_key_func_adapter(index_func: IndexFunc[T]) -> KeyFunc[T]:
    """Use a single-valued index function as a key function (A9)."""

    def key_func(obj: T) -> str:
        values = index_func(obj)
        if len(values) > 1:
            raise ValueError(f"too many keys: {values!r}")
        if not values:
            raise ValueError("unexpected empty indexKeys")
        return values[0]

    return key_func


class IndexFuncError(RuntimeError):
    """An index function failed during a write (B4): a programming error in the indexer.

    Raised after the item map was already updated, so the indices may now be inconsistent
    with the items; fix the index function rather than catching this.
    """


class IndexFailureReporter(Protocol):
    """Told by a store that tolerates failing index functions (B18) when an object leaves an
    index because its index function failed, and when it indexes again. Called under the
    store's lock, once per object version and index: keep it quick (log, count)."""

    def index_failed(self, index_name: str, key: str, obj: Any, err: IndexFuncError) -> None: ...

    def index_recovered(self, index_name: str, key: str, obj: Any) -> None: ...


class IndexerConflictError(ValueError):
    """``add_indexers`` named an index that already exists (B12); nothing was added."""


class TransactionType(StrEnum):
    ADD = "Add"
    UPDATE = "Update"
    DELETE = "Delete"


class Transaction(NamedTuple):
    """One write of a batch ``Indexer.transaction`` (B16)."""

    type: TransactionType
    object: Any


class TransactionError(Exception):
    """Some writes of a batch failed (B16); ``successful_indices`` are input positions."""

    def __init__(
        self, successful_indices: list[int], total: int, errors: list[BaseException]
    ) -> None:
        self.successful_indices = successful_indices
        self.total = total
        self.errors = errors
        failed = total - len(successful_indices)
        super().__init__(
            f"failed to execute ({failed}/{total}) transactions failed due to: "
            f"[{', '.join(str(e) for e in errors)}]"
        )


def _unknown_index(name: str) -> KeyError:
    return KeyError(f"Index with name {name} does not exist")


class ThreadSafeStore(Generic[T]):
    """A key -> object map with secondary indices, guarded by one re-entrant lock.

    ``track_resource_version`` enables B15 bookkeeping (``last_store_sync_resource_version``),
    which only the v0.36 atomic FIFO mode uses; it is off by default to keep writes cheap.
    """

    __slots__ = (
        "_index_errors",
        "_indexers",
        "_indices",
        "_items",
        "_lock",
        "_reporter",
        "_rv",
        "_track_rv",
        "_unindexed",
    )

    def __init__(
        self,
        indexers: Indexers[T] | None = None,
        *,
        track_resource_version: bool = False,
        index_errors: IndexFailureReporter | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self._items: dict[str, T] = {}
        self._indexers: dict[str, IndexFunc[T]] = dict(indexers or {})
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        self._track_rv = track_resource_version
        self._rv = ""
        # B18: with a reporter, a failing index function leaves the object out of that index
        # instead of raising (B4). key -> index name -> (resourceVersion, error message).
        self._reporter = index_errors
        self._unindexed: dict[str, dict[str, tuple[str, str]]] = {}
        self._index_errors = 0

    # -- writes ----------------------------------------------------------------------

    def add(self, key: str, obj: T) -> None:
        """Insert or replace the object under ``key`` (B1: add and update are one upsert)."""
        with self._lock:
            old = self._items.get(key, _ABSENT)
            self._items[key] = obj
            if self._indexers:
                self._update_indices(key, old, obj)
            if self._track_rv:
                self._note_rv(obj)

    update = add

    def upsert(self, key: str, obj: T) -> T | None:
        """``add`` that also returns the object it replaced (None if the key was new)."""
        with self._lock:
            old = self._items.get(key, _ABSENT)
            self._items[key] = obj
            if self._indexers:
                self._update_indices(key, old, obj)
            if self._track_rv:
                self._note_rv(obj)
            return None if old is _ABSENT else old

    def delete(self, key: str, obj: Any = _ABSENT) -> None:
        """Remove ``key``; an absent key is a silent no-op (B2).

        ``obj`` (the deleted object as the caller saw it) only feeds B15 tracking.
        """
        with self._lock:
            old = self._items.pop(key, _ABSENT)
            if old is not _ABSENT and self._indexers:
                self._update_indices(key, old, _ABSENT)
            if self._unindexed:
                self._unindexed.pop(key, None)  # gone: it is in no index and misses none
            if self._track_rv and obj is not _ABSENT:
                self._note_rv(obj)

    def replace(self, items: Mapping[str, T], resource_version: str = "") -> None:
        """Swap the whole contents atomically and rebuild every index (B7)."""
        new_items = dict(items)
        with self._lock:
            indexers = tuple(self._indexers.items())
        # Index the new contents without holding the lock: readers keep the old contents
        # until the swap below.
        new_indices: dict[str, dict[str, set[str]]] = {}
        failures: list[tuple[str, str, Any, IndexFuncError]] = []
        for name, fn in indexers:
            new_indices[name] = self._build_index(name, fn, new_items, failures)
        with self._lock:
            # Indexers may have been added while we built; index those under the lock.
            for name, fn in self._indexers.items():
                if name not in new_indices:
                    new_indices[name] = self._build_index(name, fn, new_items, failures)
            self._items = new_items
            self._indices = new_indices
            if self._reporter is not None and (failures or self._unindexed):
                self._replace_unindexed(new_items, failures)
            if self._track_rv:
                self._rv = resource_version

    def bookmark(self, resource_version: str) -> None:
        """Record a bookmark's resourceVersion (B15)."""
        with self._lock:
            if self._track_rv:
                self._rv = resource_version

    def resync(self) -> None:
        """A store has nothing to resync (B13)."""

    # -- reads -----------------------------------------------------------------------

    def get(self, key: str) -> T | None:
        """The stored object (not a copy) or None; never fails (B5)."""
        return self._items.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def list(self) -> builtins.list[T]:
        """A snapshot of all objects, in unspecified order (B6)."""
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        """A snapshot of all keys, in unspecified order (B6)."""
        with self._lock:
            return list(self._items)

    def snapshot(self) -> dict[str, T]:
        """A shallow copy of key -> object, taken under one lock acquisition."""
        with self._lock:
            return self._items.copy()

    def last_store_sync_resource_version(self) -> str:
        """B15: last-writer-wins resourceVersion; ``""`` unless tracking is enabled."""
        return self._rv

    def unindexed(self) -> dict[str, dict[str, str]]:
        """B18: stored objects left out of an index because its function failed on them:
        key -> index name -> the error. Empty unless the store tolerates index failures."""
        with self._lock:
            return {
                key: {name: message for name, (_, message) in by_index.items()}
                for key, by_index in self._unindexed.items()
            }

    def unindexed_count(self) -> int:
        """B18: how many stored objects are left out of at least one index (no copy made)."""
        return len(self._unindexed)

    @property
    def index_errors(self) -> int:
        """B18: index failures reported so far, each object version and index once."""
        return self._index_errors

    # -- indices ---------------------------------------------------------------------

    def get_indexers(self) -> dict[str, IndexFunc[T]]:
        with self._lock:
            return dict(self._indexers)

    def add_indexers(self, indexers: Indexers[T]) -> None:
        """Register new indexers and index every existing item for them only (B12)."""
        with self._lock:
            conflicts = sorted(set(indexers) & set(self._indexers))
            if conflicts:
                raise IndexerConflictError(f"indexer conflict: {conflicts}")
            failures: list[tuple[str, str, Any, IndexFuncError]] = []
            for name, fn in indexers.items():
                self._indexers[name] = fn
                self._indices[name] = self._build_index(name, fn, self._items, failures)
            for name, key, obj, err in failures:
                self._note_failure(name, key, obj, err)

    def index(self, index_name: str, obj: Any) -> builtins.list[T]:
        """Stored objects sharing any index value with ``obj``, de-duplicated (B8)."""
        with self._lock:
            fn = self._indexers.get(index_name)
            if fn is None:
                raise _unknown_index(index_name)
            values = _checked_index_values(fn(obj))
            index = self._indices[index_name]
            items = self._items
            if len(values) == 1:
                return [items[k] for k in index.get(values[0], ())]
            keys: set[str] = set()
            for value in values:
                keys.update(index.get(value, ()))
            return [items[k] for k in keys]

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """Keys under ``value`` in the index, sorted ascending (B9)."""
        with self._lock:
            index = self._indices.get(index_name)
            if index is None:
                raise _unknown_index(index_name)
            return sorted(index.get(value, ()))

    def by_index(self, index_name: str, value: str) -> builtins.list[T]:
        """Objects under ``value`` in the index, unordered; empty when none (B10)."""
        with self._lock:
            index = self._indices.get(index_name)
            if index is None:
                raise _unknown_index(index_name)
            keys = index.get(value)
            if not keys:
                return []
            items = self._items
            return [items[k] for k in keys]

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Values with at least one key; an unknown index gives ``[]``, not an error (B11)."""
        with self._lock:
            index = self._indices.get(index_name)
            return list(index) if index is not None else []

    # -- internals -------------------------------------------------------------------

    def _note_rv(self, obj: Any) -> None:
        # B15: unchanged when the object has no metadata (e.g. a tombstone).
        try:
            self._rv = object_resource_version(obj)
        except NoMetadataError:
            pass

    @staticmethod
    def _values(name: str, fn: IndexFunc[Any], key: str, obj: Any) -> builtins.list[str]:
        try:
            return _checked_index_values(fn(obj))
        except Exception as e:
            raise IndexFuncError(
                f'unable to calculate an index entry for key "{key}" on index "{name}": {e}'
            ) from e

    def _build_index(
        self,
        name: str,
        fn: IndexFunc[Any],
        items: Mapping[str, Any],
        failures: builtins.list[tuple[str, str, Any, IndexFuncError]],
    ) -> dict[str, set[str]]:
        """Index `items` for one index. With a reporter (B18) an object whose function fails
        is left out and appended to `failures`; without one the failure raises (B4)."""
        index: dict[str, set[str]] = {}
        values = self._values
        tolerant = self._reporter is not None
        for key, obj in items.items():
            try:
                obj_values = values(name, fn, key, obj)
            except IndexFuncError as err:
                if not tolerant:
                    raise
                failures.append((name, key, obj, err))
                continue
            for value in obj_values:
                keys = index.get(value)
                if keys is None:
                    index[value] = {key}
                else:
                    keys.add(key)
        return index

    def _update_indices(self, key: str, old: Any, new: Any) -> None:
        """B3: move ``key`` from the old object's index values to the new object's (B18: an
        object whose index function fails is in none of that index's values)."""
        values = self._values
        old_values: Sequence[str]
        new_values: Sequence[str]
        for name, fn in self._indexers.items():
            try:
                old_values = values(name, fn, key, old) if old is not _ABSENT else ()
            except IndexFuncError:
                if self._reporter is None:
                    raise
                old_values = self._values_holding(name, key)
            try:
                new_values = values(name, fn, key, new) if new is not _ABSENT else ()
            except IndexFuncError as err:
                if self._reporter is None:
                    raise
                new_values = ()
                self._note_failure(name, key, new, err)
            else:
                if self._unindexed and new is not _ABSENT:
                    self._note_indexed(name, key, new)
            if len(old_values) == 1 and len(new_values) == 1 and old_values[0] == new_values[0]:
                continue
            index = self._indices[name]
            for value in old_values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:  # an empty value is dropped (kubernetes/kubernetes#84959)
                        del index[value]
            for value in new_values:
                keys = index.get(value)
                if keys is None:
                    index[value] = {key}
                else:
                    keys.add(key)

    def _values_holding(self, name: str, key: str) -> tuple[str, ...]:
        """The values of index `name` that hold `key` now: the old object's values when its
        index function fails today (rare: one scan of that index's values)."""
        return tuple(value for value, keys in self._indices[name].items() if key in keys)

    def _note_failure(self, name: str, key: str, obj: Any, err: IndexFuncError) -> None:
        """B18: remember that `key` is out of index `name`; report each object version once."""
        try:
            rv = object_resource_version(obj)
        except NoMetadataError:
            rv = ""
        by_index = self._unindexed.setdefault(key, {})
        previous = by_index.get(name)
        cause = err.__cause__ if err.__cause__ is not None else err
        by_index[name] = (rv, f"{type(cause).__name__}: {cause}")
        if previous is not None and previous[0] == rv:
            return  # this version was reported already (a relist re-indexes it)
        self._index_errors += 1
        reporter = self._reporter
        if reporter is not None:
            reporter.index_failed(name, key, obj, err)

    def _note_indexed(self, name: str, key: str, obj: Any) -> None:
        by_index = self._unindexed.get(key)
        if by_index is None or by_index.pop(name, None) is None:
            return
        if not by_index:
            del self._unindexed[key]
        reporter = self._reporter
        if reporter is not None:
            reporter.index_recovered(name, key, obj)

    def _replace_unindexed(
        self,
        items: Mapping[str, Any],
        failures: builtins.list[tuple[str, str, Any, IndexFuncError]],
    ) -> None:
        """After a replace (B7): the failures of the new contents, reported as `_note_failure`
        does; keys that index again are reported recovered, vanished keys are forgotten."""
        failed = {(name, key) for name, key, _, _ in failures}
        for key, by_index in list(self._unindexed.items()):
            if key not in items:
                del self._unindexed[key]
                continue
            for name in list(by_index):
                if (name, key) not in failed and name in self._indexers:
                    self._note_indexed(name, key, items[key])
        for name, key, obj, err in failures:
            self._note_failure(name, key, obj, err)


class Indexer(Generic[T]):
    """A keyed, indexed, thread-safe object cache (client-go's ``cache.Indexer``).

    ``key_func`` defaults to tombstone-aware ``deletion_handling_meta_namespace_key`` (A2);
    ``transformer`` (B14) rewrites objects on add/update/replace, after their key was
    computed from the untransformed object. An unknown index name raises KeyError.
    """

    __slots__ = ("__weakref__", "_key_func", "_store", "_transformer")

    def __init__(
        self,
        key_func: KeyFunc[Any] = deletion_handling_meta_namespace_key,
        indexers: Indexers[T] | None = None,
        *,
        transformer: Callable[[Any], Any] | None = None,
        track_resource_version: bool = False,
        index_errors: IndexFailureReporter | None = None,
    ) -> None:
        self._key_func = key_func
        self._transformer = transformer
        self._store: ThreadSafeStore[T] = ThreadSafeStore(
            indexers, track_resource_version=track_resource_version, index_errors=index_errors
        )

    @property
    def key_func(self) -> KeyFunc[Any]:
        return self._key_func

    def key_of(self, obj: Any) -> str:
        """The store key of ``obj``; a failing key function raises ObjectKeyError (A8)."""
        try:
            return self._key_func(obj)
        except Exception as e:
            raise ObjectKeyError(obj, e) from e

    def _transform(self, obj: Any) -> Any:
        try:
            out = self._transformer(obj)  # type: ignore[misc]
        except Exception as e:
            raise ValueError(f"transforming: {e}") from e
        if out is None:  # F15
            raise TransformError(
                "transforming: the transform returned None; it must return the object "
                "(changed or not)"
            )
        return out

    # -- writes ----------------------------------------------------------------------

    def add(self, obj: T) -> None:
        key = self.key_of(obj)
        if self._transformer is not None:
            obj = self._transform(obj)
        self._store.add(key, obj)

    def update(self, obj: T) -> None:
        key = self.key_of(obj)
        if self._transformer is not None:
            obj = self._transform(obj)
        self._store.add(key, obj)

    def upsert(self, obj: T) -> T | None:
        """Add or update ``obj`` and return the object it replaced, or None if it is new.

        One key computation and one lock acquisition instead of ``get`` then ``add`` /
        ``update``: the informer's hot path decides add vs update (E3) from the result.
        """
        key = self.key_of(obj)
        if self._transformer is not None:
            obj = self._transform(obj)
        return self._store.upsert(key, obj)

    def delete(self, obj: Any) -> None:
        """Remove the object's key (a tombstone's own key); absent keys are ignored (B2)."""
        self._store.delete(self.key_of(obj), obj)

    def delete_by_key(self, key: str) -> None:
        self._store.delete(key)

    def replace(self, objs: Iterable[T], resource_version: str = "") -> None:
        """Replace the contents (B7): every key is computed (and every object transformed)
        first, so a failure leaves the store unchanged; later duplicates win."""
        key_of = self.key_of
        if self._transformer is None:
            items = {key_of(obj): obj for obj in objs}
        else:
            items = {}
            for obj in objs:
                key = key_of(obj)
                items[key] = self._transform(obj)
        self._store.replace(items, resource_version)

    def transaction(self, *txns: Transaction) -> None:
        """Apply a batch of writes under one lock acquisition, in order (B16).

        Entries whose key cannot be computed (or whose transform fails) are skipped; the
        others are applied. If any was skipped, TransactionError lists the successful ones.
        """
        successful: builtins.list[int] = []
        errors: builtins.list[BaseException] = []
        store = self._store
        with store._lock:
            for i, (kind, obj) in enumerate(txns):
                try:
                    key = self.key_of(obj)
                    if kind is TransactionType.DELETE:
                        store.delete(key, obj)
                    else:
                        if self._transformer is not None:
                            obj = self._transform(obj)
                        store.add(key, obj)
                except (ObjectKeyError, ValueError) as e:
                    errors.append(e)
                    continue
                successful.append(i)
        if errors:
            raise TransactionError(successful, len(txns), errors)

    def bookmark(self, resource_version: str) -> None:
        self._store.bookmark(resource_version)

    def resync(self) -> None:
        """No-op (B13)."""

    # -- reads -----------------------------------------------------------------------

    def get(self, obj: Any) -> T | None:
        """The stored object with ``obj``'s key; fails only if the key function does (B5)."""
        return self._store.get(self.key_of(obj))

    def get_by_key(self, key: str) -> T | None:
        """The stored object under ``key`` (``"namespace/name"``, or ``"name"``); None if absent."""
        return self._store.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._store

    def __len__(self) -> int:
        return len(self._store)

    def list(self) -> builtins.list[T]:
        """Every stored object, in no particular order (B6)."""
        return self._store.list()

    def list_keys(self) -> builtins.list[str]:
        """Every stored key, in no particular order (B6)."""
        return self._store.list_keys()

    def snapshot(self) -> dict[str, T]:
        """A shallow copy of key -> object taken under one lock acquisition."""
        return self._store.snapshot()

    def last_store_sync_resource_version(self) -> str:
        return self._store.last_store_sync_resource_version()

    def unindexed(self) -> dict[str, dict[str, str]]:
        """B18: objects left out of an index because its function failed: key -> index -> error."""
        return self._store.unindexed()

    def unindexed_count(self) -> int:
        """B18: how many stored objects are left out of at least one index."""
        return self._store.unindexed_count()

    @property
    def index_errors(self) -> int:
        """B18: index failures reported so far (each object version and index once)."""
        return self._store.index_errors

    # -- indices ---------------------------------------------------------------------

    def get_indexers(self) -> dict[str, IndexFunc[T]]:
        """The index functions by index name (a copy)."""
        return self._store.get_indexers()

    def add_indexers(self, indexers: Indexers[T]) -> None:
        """Add indexes and index every stored object for them at once; a name already in
        use is `IndexerConflictError` and adds none of them (B12). On an informer, call
        `SharedIndexInformer.add_indexers`, which also refuses once it has stopped (F13)."""
        self._store.add_indexers(indexers)

    def index(self, index_name: str, obj: Any) -> builtins.list[T]:
        """The stored objects sharing any of ``obj``'s values in the index, each once, in no
        order; an unknown index raises KeyError (B8)."""
        return self._store.index(index_name, obj)

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """The keys of the stored objects under ``value`` in the index, sorted ascending;
        ``[]`` when none; an unknown index raises KeyError (B9). What a controller enqueues
        to fan one event out to many objects (docs/guide/indexers.md)."""
        return self._store.index_keys(index_name, value)

    def by_index(self, index_name: str, value: str) -> builtins.list[T]:
        """The stored objects under ``value`` in the index, in no order; ``[]`` when none;
        an unknown index raises KeyError (B10). They are the cached instances: read-only."""
        return self._store.by_index(index_name, value)

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """The values of the index that have at least one object; ``[]`` for an unknown
        index (B11)."""
        return self._store.list_index_func_values(index_name)
