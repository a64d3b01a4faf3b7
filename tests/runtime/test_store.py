"""ThreadSafeStore / Indexer: rules B1-B16 and A9 (kubeinformers.runtime.cache.store)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    NoMetadataError,
    ObjectKeyError,
    object_labels,
    object_name,
)
from kubeinformers.runtime.cache.store import (
    NAMESPACE_INDEX,
    Indexer,
    IndexerConflictError,
    IndexFuncError,
    ThreadSafeStore,
    Transaction,
    TransactionError,
    TransactionType,
    index_func_to_key_func_adapter,
    meta_namespace_index_func,
)
from tests.runtime._queue_objects import Thing, dict_thing, thing


def label_index(obj: Any) -> list[str]:
    return sorted(object_labels(obj).values())


def names(objs: list[Thing]) -> list[str]:
    return sorted(object_name(o) for o in objs)


def make_indexer() -> Indexer[Thing]:
    return Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func, "labels": label_index})


def test_b1_add_and_update_are_one_upsert_moving_index_values() -> None:
    idx = make_indexer()
    idx.add(thing("a", 1, namespace="ns1", labels={"k": "x"}))
    idx.add(thing("a", 2, namespace="ns1", labels={"k": "y"}))  # add of an existing key
    got = idx.get_by_key("ns1/a")
    assert got is not None and got.value == 2
    assert idx.by_index("labels", "x") == []
    assert names(idx.by_index("labels", "y")) == ["a"]
    idx.update(thing("b", 1, namespace="ns2"))  # update of a new key inserts it
    assert sorted(idx.list_keys()) == ["ns1/a", "ns2/b"]


def test_b1_upsert_returns_the_replaced_object() -> None:
    idx = make_indexer()
    first = thing("a", 1, namespace="ns", labels={"k": "x"})
    assert idx.upsert(first) is None
    assert idx.upsert(thing("a", 2, namespace="ns", labels={"k": "y"})) is first
    assert idx.by_index("labels", "x") == []
    assert [o.value for o in idx.by_index("labels", "y")] == [2]


def test_b2_delete_of_absent_key_is_silent_and_delete_removes_from_every_index() -> None:
    idx = make_indexer()
    idx.delete(thing("ghost", namespace="ns"))
    idx.add(thing("a", namespace="ns", labels={"k": "v"}))
    idx.delete(thing("a", namespace="ns"))
    assert idx.list() == []
    assert idx.list_index_func_values(NAMESPACE_INDEX) == []
    assert idx.list_index_func_values("labels") == []


def test_b2_delete_of_a_tombstone_uses_its_key() -> None:
    idx = make_indexer()
    idx.add(thing("a", namespace="ns"))
    idx.delete(DeletedFinalStateUnknown("ns/a", None))
    assert idx.get_by_key("ns/a") is None


def test_b3_empty_index_values_are_dropped_and_multi_values_supported() -> None:
    idx = make_indexer()
    idx.add(thing("a", namespace="ns", labels={"x": "red", "y": "blue"}))
    idx.add(thing("b", namespace="ns", labels={"x": "red", "z": "red"}))  # duplicate value
    assert sorted(idx.list_index_func_values("labels")) == ["blue", "red"]
    assert idx.index_keys("labels", "red") == ["ns/a", "ns/b"]
    idx.update(thing("a", namespace="ns", labels={"x": "green"}))
    assert sorted(idx.list_index_func_values("labels")) == ["green", "red"]  # blue is gone
    idx.update(thing("b", namespace="ns", labels={}))
    assert idx.index_keys("labels", "red") == []
    assert "red" not in idx.list_index_func_values("labels")  # kubernetes#84959


def test_b3_unchanged_single_value_leaves_index_intact() -> None:
    idx = make_indexer()
    idx.add(thing("a", 1, namespace="ns"))
    idx.update(thing("a", 2, namespace="ns"))
    assert idx.index_keys(NAMESPACE_INDEX, "ns") == ["ns/a"]
    assert [o.value for o in idx.by_index(NAMESPACE_INDEX, "ns")] == [2]


def test_b4_failing_index_function_on_write_is_a_non_recoverable_error() -> None:
    def broken(obj: Any) -> list[str]:
        raise RuntimeError("boom")

    idx: Indexer[Thing] = Indexer(indexers={"broken": broken})
    with pytest.raises(IndexFuncError, match=r'key "ns/a" on index "broken": boom'):
        idx.add(thing("a", namespace="ns"))
    assert idx.get_by_key("ns/a") is not None  # the item map was already updated (Go too)


def test_b5_get_fails_only_on_key_error_and_returns_the_stored_instance() -> None:
    idx = make_indexer()
    obj = thing("a", namespace="ns")
    idx.add(obj)
    assert idx.get(thing("a", namespace="ns")) is obj
    assert idx.get_by_key("ns/a") is obj
    assert idx.get_by_key("nope") is None
    with pytest.raises(ObjectKeyError) as info:
        idx.get(42)
    assert isinstance(info.value.__cause__, NoMetadataError)
    assert "couldn't create key for object 42: object has no meta" in str(info.value)


def test_b6_list_and_list_keys_are_snapshots() -> None:
    idx = make_indexer()
    idx.add(thing("a"))
    snapshot, keys = idx.list(), idx.list_keys()
    idx.add(thing("b"))
    assert names(snapshot) == ["a"] and keys == ["a"]
    assert sorted(idx.list_keys()) == ["a", "b"]


def test_b7_replace_swaps_contents_and_rebuilds_indices() -> None:
    idx = make_indexer()
    idx.add(thing("old", namespace="ns-old", labels={"l": "x"}))
    idx.replace([thing("a", 1, namespace="ns"), thing("b", namespace="ns2")], "10")
    assert sorted(idx.list_keys()) == ["ns/a", "ns2/b"]
    assert sorted(idx.list_index_func_values(NAMESPACE_INDEX)) == ["ns", "ns2"]
    assert idx.list_index_func_values("labels") == []


def test_b7_replace_with_duplicate_keys_keeps_the_later_element() -> None:
    idx = make_indexer()
    idx.replace([thing("a", 1), thing("a", 2)], "1")
    assert [o.value for o in idx.list()] == [2]
    assert idx.index_keys(NAMESPACE_INDEX, "") == ["a"]


def test_b7_replace_aborts_on_first_key_error_leaving_store_unchanged() -> None:
    idx = make_indexer()
    idx.add(thing("keep"))
    with pytest.raises(ObjectKeyError):
        idx.replace([thing("a"), 42], "1")  # type: ignore[list-item]
    assert idx.list_keys() == ["keep"]


def test_b8_index_unions_values_of_the_given_object_deduplicated() -> None:
    idx = make_indexer()
    idx.add(thing("a", labels={"x": "red"}))
    idx.add(thing("b", labels={"x": "blue"}))
    idx.add(thing("c", labels={"x": "red", "y": "blue"}))
    idx.add(thing("d", labels={"x": "green"}))
    probe = thing("probe", labels={"p": "red", "q": "blue"})
    assert names(idx.index("labels", probe)) == ["a", "b", "c"]
    assert names(idx.index("labels", thing("p", labels={"p": "red"}))) == ["a", "c"]
    with pytest.raises(KeyError, match="Index with name nope does not exist"):
        idx.index("nope", probe)


def test_b9_index_keys_sorted_empty_when_none_unknown_index_raises() -> None:
    idx = make_indexer()
    for n in ("c", "a", "b"):
        idx.add(thing(n, namespace="ns"))
    assert idx.index_keys(NAMESPACE_INDEX, "ns") == ["ns/a", "ns/b", "ns/c"]
    assert idx.index_keys(NAMESPACE_INDEX, "other") == []
    with pytest.raises(KeyError, match="Index with name nope does not exist"):
        idx.index_keys("nope", "ns")


def test_b10_by_index_returns_matches_empty_when_none_unknown_index_raises() -> None:
    idx = make_indexer()
    idx.add(thing("a", namespace="ns"))
    idx.add(dict_thing("b", "ns"))  # type: ignore[arg-type]
    idx.add(thing("c", namespace="other"))
    assert sorted(object_name(o) for o in idx.by_index(NAMESPACE_INDEX, "ns")) == ["a", "b"]
    assert idx.by_index(NAMESPACE_INDEX, "none") == []
    with pytest.raises(KeyError, match="Index with name nope does not exist"):
        idx.by_index("nope", "ns")


def test_b11_list_index_func_values_unknown_index_is_empty_not_error() -> None:
    idx = make_indexer()
    idx.add(thing("a", namespace="ns"))
    assert idx.list_index_func_values(NAMESPACE_INDEX) == ["ns"]
    assert idx.list_index_func_values("nope") == []


def test_b12_add_indexers_on_non_empty_store_indexes_existing_items() -> None:
    """B12 / L36: an index added later is immediately complete."""
    idx: Indexer[Thing] = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    idx.add(thing("pod1", labels={"l": "a"}))
    idx.add(thing("pod2", labels={"l": "b"}))
    idx.add_indexers({"labels": label_index})
    assert names(idx.by_index("labels", "a")) == ["pod1"]
    idx.add(thing("pod3", labels={"l": "a"}))
    assert names(idx.by_index("labels", "a")) == ["pod1", "pod3"]
    assert sorted(idx.list_index_func_values("labels")) == ["a", "b"]
    assert set(idx.get_indexers()) == {NAMESPACE_INDEX, "labels"}


def test_b12_add_indexers_conflict_adds_nothing() -> None:
    idx = make_indexer()
    with pytest.raises(IndexerConflictError, match=r"indexer conflict: \['labels'\]"):
        idx.add_indexers({"labels": label_index, "fresh": label_index})
    assert "fresh" not in idx.get_indexers()


def test_b13_store_resync_is_a_no_op() -> None:
    idx = make_indexer()
    idx.add(thing("a"))
    idx.resync()
    assert idx.list_keys() == ["a"]


def test_b14_transformer_runs_after_key_on_add_update_replace_not_delete() -> None:
    seen: list[str] = []

    def rename(obj: Thing) -> Thing:
        seen.append(object_name(obj))
        return thing("renamed-" + object_name(obj), obj.value)

    idx: Indexer[Thing] = Indexer(transformer=rename)
    idx.add(thing("a", 1))
    idx.update(thing("a", 2))
    idx.replace([thing("b", 3)], "5")
    assert seen == ["a", "a", "b"]
    stored = idx.get_by_key("b")  # keyed by the untransformed name
    assert stored is not None and object_name(stored) == "renamed-b"
    idx.delete(thing("b"))
    assert seen == ["a", "a", "b"] and idx.list() == []


def test_b14_transformer_failure_reads_transforming() -> None:
    def fail(obj: Thing) -> Thing:
        raise RuntimeError("nope")

    idx: Indexer[Thing] = Indexer(transformer=fail)
    with pytest.raises(ValueError, match=r"^transforming: nope$"):
        idx.add(thing("a"))
    with pytest.raises(ValueError, match=r"^transforming: nope$"):
        idx.replace([thing("a")], "1")
    assert idx.list() == []


def test_b15_last_store_sync_resource_version_is_last_writer_wins() -> None:
    off = make_indexer()
    off.add(thing("a", 7))
    assert off.last_store_sync_resource_version() == ""
    idx: Indexer[Thing] = Indexer(track_resource_version=True)
    idx.add(thing("a", 10))
    assert idx.last_store_sync_resource_version() == "10"
    idx.update(thing("b", 5))  # not a maximum
    assert idx.last_store_sync_resource_version() == "5"
    idx.delete(thing("a", 12))
    assert idx.last_store_sync_resource_version() == "12"
    idx.delete(DeletedFinalStateUnknown("b", None))  # no metadata: unchanged
    assert idx.last_store_sync_resource_version() == "12"
    idx.replace([thing("c", 1)], "20")
    assert idx.last_store_sync_resource_version() == "20"
    idx.bookmark("25")
    assert idx.last_store_sync_resource_version() == "25"
    idx.delete_by_key("c")
    assert idx.last_store_sync_resource_version() == "25"
    idx.transaction(
        Transaction(TransactionType.ADD, thing("x", 30)),
        Transaction(TransactionType.UPDATE, thing("y", 29)),
    )
    assert idx.last_store_sync_resource_version() == "29"


def test_b16_transaction_skips_unkeyable_entries_and_reports_l34() -> None:
    """B16 / L34: three adds, the second fails → items 1 and 3 applied, error (1/3)."""
    idx = make_indexer()
    idx.add(thing("gone"))
    with pytest.raises(TransactionError) as info:
        idx.transaction(
            Transaction(TransactionType.ADD, thing("a")),
            Transaction(TransactionType.ADD, 42),
            Transaction(TransactionType.DELETE, thing("gone")),
        )
    assert info.value.successful_indices == [0, 2]
    assert str(info.value).startswith("failed to execute (1/3) transactions failed due to: [")
    assert idx.list_keys() == ["a"]


def test_a9_meta_namespace_index_func() -> None:
    assert meta_namespace_index_func(thing("a", namespace="ns")) == ["ns"]
    assert meta_namespace_index_func(thing("node")) == [""]
    assert meta_namespace_index_func(dict_thing("a", "ns")) == ["ns"]
    with pytest.raises(NoMetadataError):
        meta_namespace_index_func(3)
    assert NAMESPACE_INDEX == "namespace"


def test_a9_index_func_to_key_func_adapter() -> None:
    key_func = index_func_to_key_func_adapter(meta_namespace_index_func)
    assert key_func(thing("a", namespace="ns")) == "ns"
    with pytest.raises(ValueError, match=r"too many keys: \['x', 'y'\]"):
        index_func_to_key_func_adapter(lambda o: ["x", "y"])(None)
    with pytest.raises(ValueError, match="unexpected empty indexKeys"):
        index_func_to_key_func_adapter(lambda o: [])(None)


def test_thread_safe_store_keyed_api() -> None:
    store: ThreadSafeStore[Thing] = ThreadSafeStore({NAMESPACE_INDEX: meta_namespace_index_func})
    store.add("k1", thing("a", namespace="ns"))
    store.update("k1", thing("a", 2, namespace="ns2"))
    assert store.index_keys(NAMESPACE_INDEX, "ns2") == ["k1"]
    assert "k1" in store and len(store) == 1
    store.replace({"k2": thing("b", namespace="ns")}, "3")
    assert store.list_keys() == ["k2"] and store.by_index(NAMESPACE_INDEX, "ns2") == []
    store.delete("k2")
    assert store.list() == []


def test_concurrent_writers_and_readers_keep_indices_consistent() -> None:
    idx = make_indexer()
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for i in range(2000):
                ns = f"ns{i % 7}"
                idx.add(thing(f"w{w}-{i % 50}", i, namespace=ns, labels={"w": str(w)}))
                if i % 3 == 0:
                    idx.delete(thing(f"w{w}-{(i * 7) % 50}", namespace=ns))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    def reader() -> None:
        try:
            while not stop.is_set():
                for value in idx.list_index_func_values(NAMESPACE_INDEX):
                    for obj in idx.by_index(NAMESPACE_INDEX, value):
                        assert obj is not None
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    writers = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in writers + readers:
        t.start()
    for t in writers:
        t.join(timeout=30)
    stop.set()
    for t in readers:
        t.join(timeout=30)
    assert errors == []
    # The maintained indices equal indices recomputed from scratch.
    items = idx.snapshot()
    for value in idx.list_index_func_values(NAMESPACE_INDEX):
        expected = sorted(k for k, o in items.items() if meta_namespace_index_func(o) == [value])
        assert idx.index_keys(NAMESPACE_INDEX, value) == expected
    assert sum(len(idx.by_index(NAMESPACE_INDEX, f"ns{i}")) for i in range(7)) == len(items)
