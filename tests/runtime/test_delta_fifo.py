"""DeltaFIFO: every rule of section C-1, A6/A7, and the DeltaFIFO scenarios L1-L18.

As in client-go's delta_fifo_test.go the objects are cluster-scoped, so the FIFO key is the
name; ``foo(10)`` is ``thing("foo", 10)``.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown, ObjectKeyError
from kubeinformers.runtime.cache.delta_fifo import (
    Delta,
    DeltaFIFO,
    Deltas,
    DeltaType,
    FIFOClosedError,
    RequeueError,
)
from kubeinformers.runtime.cache.store import Indexer
from tests.runtime._queue_objects import Thing, thing

Fifo = DeltaFIFO[Thing]


def known(*objs: Thing) -> Indexer[Thing]:
    idx: Indexer[Thing] = Indexer()
    for obj in objs:
        idx.add(obj)
    return idx


def render(obj: Any) -> Any:
    """foo(10) → 10; a tombstone → ("T", key, value or None)."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return ("T", obj.key, None if obj.obj is None else obj.obj.value)
    return obj.value


def desc(deltas: Deltas[Thing]) -> list[tuple[str, Any]]:
    return [(d.type.value, render(d.object)) for d in deltas]


def pop(fifo: Fifo, timeout: float = 2.0) -> tuple[Deltas[Thing], bool]:
    """Pop one item; return its deltas and the is_in_initial_list flag."""
    flags: list[bool] = []
    deltas = fifo.pop(lambda d, initial: flags.append(initial), timeout=timeout)
    assert deltas, "expected an item, the queue stayed empty"
    return deltas, flags[0]


def pop_all(fifo: Fifo) -> list[list[tuple[str, Any]]]:
    out = []
    while len(fifo):
        out.append(desc(pop(fifo)[0]))
    return out


def newest(deltas: Deltas[Thing]) -> Any:
    return render(deltas[-1].object)


# -- section L scenarios -------------------------------------------------------------------


def test_l1_add_update_delete_pop_once_then_blocks() -> None:
    fifo = Fifo()
    fifo.add(thing("foo", 10))
    fifo.update(thing("foo", 12))
    fifo.delete(thing("foo", 15))
    deltas, _ = pop(fifo)
    assert desc(deltas) == [("Added", 10), ("Updated", 12), ("Deleted", 15)]
    assert fifo.pop(lambda d, i: None, timeout=0.05) == []


def test_l2_c1_5_enqueueing_without_known_objects_drops_unknown_delete() -> None:
    fifo = Fifo()
    fifo.add(thing("foo", 10))
    fifo.update(thing("bar", 15))
    fifo.add(thing("qux", 17))
    fifo.delete(thing("qux", 18))
    fifo.delete(thing("baz", 20))
    assert [newest(pop(fifo)[0]) for _ in range(3)] == [10, 15, 18]
    assert len(fifo) == 0 and fifo.list_keys() == []


def test_l3_c1_5_enqueueing_with_known_objects_keeps_known_delete() -> None:
    fifo = Fifo(known_objects=known(thing("foo"), thing("bar"), thing("baz")))
    fifo.add(thing("foo", 10))
    fifo.update(thing("bar", 15))
    fifo.delete(thing("baz", 20))
    assert [newest(pop(fifo)[0]) for _ in range(3)] == [10, 15, 20]


def test_l4_add_then_replace_yields_one_pop_with_newest_value() -> None:
    fifo = Fifo()
    fifo.add(thing("foo", 10))
    fifo.replace([thing("foo", 15)], "0")
    deltas, _ = pop(fifo)
    assert newest(deltas) == 15
    assert len(fifo) == 0


def test_l5_c1_8_resync_skips_key_with_queued_delete() -> None:
    fifo = Fifo(known_objects=known(thing("foo", 5)))
    fifo.delete(thing("foo", 10))
    fifo.resync()
    assert desc(pop(fifo)[0]) == [("Deleted", 10)]


def test_l6_c1_8_resync_enqueues_sync_of_known_object() -> None:
    fifo = Fifo(known_objects=known(thing("foo", 5)))
    fifo.resync()
    assert desc(pop(fifo)[0]) == [("Sync", 5)]


def test_l7_c1_8_update_resync_race_keeps_only_the_update() -> None:
    fifo = Fifo(known_objects=known(thing("foo", 5)))
    fifo.update(thing("foo", 6))
    fifo.resync()
    assert desc(pop(fifo)[0]) == [("Updated", 6)]
    assert len(fifo) == 0


KNOWN3 = (thing("foo", 5), thing("bar", 6), thing("baz", 7))


@pytest.mark.parametrize(("emit_replaced", "kind"), [(False, "Sync"), (True, "Replaced")])
def test_l8_c1_6_replace_makes_deletions(emit_replaced: bool, kind: str) -> None:
    fifo = Fifo(known_objects=known(*KNOWN3), emit_delta_type_replaced=emit_replaced)
    fifo.delete(thing("baz", 10))
    fifo.replace([thing("foo", 5)], "0")
    assert pop_all(fifo) == [
        [("Deleted", 10)],
        [(kind, 5)],
        [("Deleted", ("T", "bar", 6))],
    ]


def test_l9_c1_6_replace_tombstones_a_queued_add() -> None:
    fifo = Fifo(known_objects=known(*KNOWN3))
    fifo.add(thing("baz", 10))
    fifo.replace([thing("foo", 5)], "0")
    assert pop_all(fifo) == [
        [("Added", 10), ("Deleted", ("T", "baz", 10))],
        [("Sync", 5)],
        [("Deleted", ("T", "bar", 6))],
    ]


def test_l10_c1_6_tombstone_holds_newest_queued_object() -> None:
    fifo = Fifo(known_objects=known(*KNOWN3))
    fifo.delete(thing("bar", 6))
    fifo.add(thing("bar", 100))
    fifo.replace([thing("foo", 5)], "0")
    assert pop_all(fifo) == [
        [("Deleted", 6), ("Added", 100), ("Deleted", ("T", "bar", 100))],
        [("Sync", 5)],
        [("Deleted", ("T", "baz", 7))],
    ]


def test_l11_a6_c1_3_two_replaces_unwrap_and_collapse_tombstones() -> None:
    fifo = Fifo(known_objects=known(*KNOWN3))
    fifo.replace([thing("bar", 100), thing("foo", 5)], "0")
    fifo.replace([thing("foo", 5)], "0")
    assert pop_all(fifo) == [
        [("Sync", 100), ("Deleted", ("T", "bar", 100))],
        [("Sync", 5), ("Sync", 5)],
        [("Deleted", ("T", "baz", 7))],
    ]


@pytest.mark.parametrize("with_known", [False, True], ids=["no-known", "empty-known"])
def test_l12_c1_6_deletions_for_objects_only_in_queue(with_known: bool) -> None:
    def fresh() -> Fifo:
        return Fifo(known_objects=known() if with_known else None)

    obj, obj_v2 = thing("foo", 1), thing("foo", 2)

    fifo = fresh()
    fifo.add(obj)
    fifo.replace([], "0")
    assert pop_all(fifo) == [[("Added", 1), ("Deleted", ("T", "foo", 1))]]

    fifo = fresh()
    fifo.add(obj)
    fifo.delete(obj)
    fifo.replace([], "0")
    assert pop_all(fifo) == [[("Added", 1), ("Deleted", 1)]]

    fifo = fresh()
    fifo.add(obj)
    fifo.replace([obj], "0")
    fifo.replace([obj], "0")
    fifo.replace([], "0")
    assert pop_all(fifo) == [[("Added", 1), ("Sync", 1), ("Sync", 1), ("Deleted", ("T", "foo", 1))]]

    fifo = fresh()
    fifo.add(obj)
    fifo.replace([], "0")
    fifo.replace([], "0")
    assert pop_all(fifo) == [[("Added", 1), ("Deleted", ("T", "foo", 1))]]

    fifo = fresh()
    fifo.add(obj)
    fifo.delete(obj)
    fifo.add(obj_v2)
    fifo.replace([], "0")
    assert pop_all(fifo) == [
        [("Added", 1), ("Deleted", 1), ("Added", 2), ("Deleted", ("T", "foo", 2))]
    ]


def test_l13_c1_7_replace_after_queued_delete_still_enqueues_sync() -> None:
    fifo = Fifo(known_objects=known(thing("foo", 1)))
    fifo.delete(thing("foo", 1))
    fifo.replace([thing("foo", 2)], "0")
    assert pop_all(fifo) == [[("Deleted", 1), ("Sync", 2)]]


def test_l14_c1_1_no_line_jumping() -> None:
    fifo = Fifo()
    for name, value in (("foo", 10), ("bar", 1), ("foo", 11), ("foo", 13), ("zab", 30)):
        fifo.add(thing(name, value))
    assert fifo.list_keys() == ["foo", "bar", "zab"]
    assert newest(pop(fifo)[0]) == 13
    fifo.add(thing("foo", 14))
    assert [newest(pop(fifo)[0]) for _ in range(3)] == [1, 30, 14]


def test_l15_c1_10_has_synced_correct_on_deletion() -> None:
    fifo = Fifo(known_objects=known(*KNOWN3))
    fifo.replace([thing("foo", 5)], "0")
    seen = []
    for _ in range(3):
        assert not fifo.has_synced()
        deltas, initial = pop(fifo)
        seen.append(desc(deltas))
        assert initial is True
    assert fifo.has_synced()
    assert seen == [
        [("Sync", 5)],
        [("Deleted", ("T", "bar", 6))],
        [("Deleted", ("T", "baz", 7))],
    ]


def test_l16_c1_10_has_synced_table() -> None:
    assert not Fifo().has_synced()

    fifo = Fifo()
    fifo.add(thing("a"))
    assert fifo.has_synced()

    fifo = Fifo()
    fifo.replace([], "0")
    assert fifo.has_synced()

    fifo = Fifo()
    fifo.replace([thing("a"), thing("b")], "0")
    assert not fifo.has_synced()
    pop(fifo)
    assert not fifo.has_synced()
    pop(fifo)
    assert fifo.has_synced()

    fifo = Fifo()
    fifo.replace([thing("a", 1), thing("a", 2)], "0")  # one distinct key
    assert not fifo.has_synced()
    pop(fifo)
    assert fifo.has_synced()


def test_l17_c1_2_transformer_applied_exactly_once() -> None:
    calls: list[int] = []

    def transform(obj: Thing) -> Thing:
        calls.append(obj.value)
        return obj.model_copy(update={"value": obj.value + 1000})

    fifo = Fifo(transformer=transform)
    fifo.add(thing("foo", 10))
    fifo.add(thing("bar", 11))
    fifo.update(thing("foo", 12))
    fifo.delete(thing("foo", 15))
    fifo.replace([], "0")
    fifo.add(thing("bar", 16))
    fifo.replace([], "0")
    assert fifo.list_keys() == ["foo", "bar"]
    foo, _ = pop(fifo)
    assert foo[-1] == Delta(DeltaType.DELETED, foo[-1].object)
    assert newest(foo) == 1015  # transformed once, not twice
    bar, _ = pop(fifo)
    assert bar[-1].type is DeltaType.DELETED
    assert newest(bar) == ("T", "bar", 1016)  # the tombstone wraps the once-transformed object
    assert sorted(calls) == [10, 11, 12, 15, 16]  # tombstones are never transformed


def test_l18_a7_key_of() -> None:
    fifo = Fifo()
    a, c = thing("A"), thing("C")
    assert fifo.key_of(a) == "A"
    assert fifo.key_of(DeletedFinalStateUnknown("B", None)) == "B"
    assert fifo.key_of([Delta(DeltaType.ADDED, c)]) == "C"
    assert fifo.key_of([Delta(DeltaType.DELETED, DeletedFinalStateUnknown("D", None))]) == "D"
    assert fifo.key_of([Delta(DeltaType.ADDED, c), Delta(DeltaType.ADDED, a)]) == "A"  # newest
    with pytest.raises(ObjectKeyError, match="0 length Deltas object; can't get key"):
        fifo.key_of([])
    with pytest.raises(ObjectKeyError, match="object has no meta"):
        fifo.key_of(42)


@pytest.mark.timeout(10)
def test_l18_c1_11_close_unblocks_every_blocked_pop() -> None:
    fifo = Fifo()
    results: list[BaseException | None] = []
    lock = threading.Lock()
    ready = threading.Barrier(11)

    def consumer() -> None:
        ready.wait()
        try:
            fifo.pop(lambda d, i: None)
            outcome: BaseException | None = None
        except BaseException as e:
            outcome = e
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=consumer) for _ in range(10)]
    for t in threads:
        t.start()
    ready.wait()
    deadline = time.monotonic() + 5
    while fifo._waiting < 10 and time.monotonic() < deadline:  # all ten blocked in pop
        time.sleep(0.001)
    assert fifo._waiting == 10
    start = time.monotonic()
    fifo.close()
    for t in threads:
        t.join(timeout=0.5)
    assert time.monotonic() - start < 0.5
    assert len(results) == 10
    assert all(isinstance(r, FIFOClosedError) for r in results)
    assert str(results[0]) == "DeltaFIFO: manipulating with closed queue"


# -- rule by rule ---------------------------------------------------------------------------


def test_c1_1_key_listed_once_iff_it_has_deltas() -> None:
    fifo = Fifo()
    fifo.add(thing("a", 1))
    fifo.update(thing("a", 2))
    fifo.add(thing("b", 1))
    assert fifo.list_keys() == ["a", "b"]
    pop(fifo)
    assert fifo.list_keys() == ["b"] and fifo.get_by_key("a") is None


def test_c1_2_key_error_raises_and_enqueues_nothing() -> None:
    fifo: DeltaFIFO[Any] = DeltaFIFO()
    with pytest.raises(ObjectKeyError, match="couldn't create key for object 42"):
        fifo.add(42)
    assert len(fifo) == 0


def test_c1_2_transformer_not_applied_on_resync_nor_tombstones() -> None:
    calls: list[Any] = []

    def transform(obj: Any) -> Any:
        calls.append(obj)
        return obj

    fifo = Fifo(known_objects=known(thing("k", 1)), transformer=transform)
    fifo.resync()
    fifo.delete(DeletedFinalStateUnknown("k", thing("k", 1)))
    assert calls == []
    assert desc(pop(fifo)[0]) == [("Sync", 1), ("Deleted", ("T", "k", 1))]


def test_c1_3_dedup_keeps_older_delete_unless_it_is_a_tombstone() -> None:
    cases: list[tuple[Thing | DeletedFinalStateUnknown[Thing], Any, Any]] = [
        # (first deleted object, second deleted object, survivor)
        (thing("x", 1), thing("x", 2), 1),  # both real: the older survives
        (thing("x", 1), DeletedFinalStateUnknown("x", thing("x", 2)), 1),
        (DeletedFinalStateUnknown("x", thing("x", 1)), thing("x", 2), 2),
        (
            DeletedFinalStateUnknown("x", thing("x", 1)),
            DeletedFinalStateUnknown("x", thing("x", 2)),
            ("T", "x", 2),
        ),
    ]
    for first, second, survivor in cases:
        fifo = Fifo(known_objects=known(thing("x", 0)))
        fifo.delete(first)
        fifo.delete(second)
        assert desc(pop(fifo)[0]) == [("Deleted", survivor)], (first, second)


def test_c1_3_nothing_but_two_trailing_deletes_is_compacted() -> None:
    fifo = Fifo(known_objects=known(thing("x", 0)))
    fifo.add(thing("x", 1))
    fifo.update(thing("x", 2))
    fifo.update(thing("x", 3))
    fifo.delete(thing("x", 4))
    fifo.add(thing("x", 5))
    fifo.delete(thing("x", 6))
    fifo.resync()  # skipped: x is queued
    fifo.replace([thing("x", 7)], "0")
    fifo.replace([thing("x", 8)], "0")
    assert desc(pop(fifo)[0]) == [
        ("Added", 1),
        ("Updated", 2),
        ("Updated", 3),
        ("Deleted", 4),
        ("Added", 5),
        ("Deleted", 6),
        ("Sync", 7),
        ("Sync", 8),
    ]


def test_c1_4_add_and_update_mark_populated() -> None:
    for method in ("add", "update"):
        fifo = Fifo()
        getattr(fifo, method)(thing("a"))
        assert fifo.has_synced()
        deltas, initial = pop(fifo)
        assert initial is False
        assert deltas[0].type is (DeltaType.ADDED if method == "add" else DeltaType.UPDATED)


def test_c1_5_ignored_delete_still_marks_populated() -> None:
    fifo = Fifo()
    fifo.delete(thing("ghost"))
    assert len(fifo) == 0
    assert fifo.has_synced()


def test_c1_5_with_known_objects_unknown_and_unqueued_delete_is_ignored() -> None:
    fifo = Fifo(known_objects=known(thing("present")))
    fifo.delete(thing("ghost"))
    assert len(fifo) == 0
    fifo.delete(thing("present", 3))
    assert desc(pop(fifo)[0]) == [("Deleted", 3)]


class FlakyKnown:
    """A KnownObjects whose lookups fail for some keys (and report absent for others)."""

    def __init__(self, objs: dict[str, Thing | None], failing: set[str]) -> None:
        self.objs = objs
        self.failing = failing

    def list_keys(self) -> list[str]:
        return list(self.objs)

    def get_by_key(self, key: str) -> Thing | None:
        if key in self.failing:
            raise RuntimeError(f"lookup of {key} failed")
        return self.objs.get(key)


def test_c1_5_known_lookup_error_keeps_the_delete() -> None:
    fifo = Fifo(known_objects=FlakyKnown({}, failing={"x"}))
    fifo.delete(thing("x", 9))
    assert desc(pop(fifo)[0]) == [("Deleted", 9)]


def test_c1_6_replace_key_error_aborts() -> None:
    fifo: DeltaFIFO[Any] = DeltaFIFO()
    with pytest.raises(ObjectKeyError):
        fifo.replace([thing("a"), 42, thing("b")], "0")
    assert fifo.list_keys() == ["a"]  # Go aborts mid-way too; nothing after the bad item
    assert not fifo.has_synced()  # populated is only set at the end of a Replace


def test_c1_6_replace_transforms_even_when_emitting_sync() -> None:
    fifo = Fifo(transformer=lambda o: o.model_copy(update={"value": -o.value}))
    fifo.replace([thing("a", 4)], "123")  # the resource version is ignored
    assert desc(pop(fifo)[0]) == [("Sync", -4)]


def test_c1_6_known_lookup_failure_or_absence_gives_tombstone_without_object() -> None:
    fifo = Fifo(known_objects=FlakyKnown({"gone": None, "err": thing("err")}, failing={"err"}))
    fifo.replace([], "0")
    assert sorted(pop_all(fifo)) == [
        [("Deleted", ("T", "err", None))],
        [("Deleted", ("T", "gone", None))],
    ]


def test_c1_6_initial_population_counts_queue_deletions_c1_8_resync_does_not_populate() -> None:
    fifo = Fifo(known_objects=known(thing("foo", 5), thing("bar", 6)))
    fifo.resync()
    assert not fifo.has_synced()  # C1.8: resync never marks populated
    fifo.replace([thing("foo", 5)], "0")
    # 1 distinct listed key + 1 synthetic deletion (bar was queued by the resync)
    assert desc(pop(fifo)[0]) == [("Sync", 5), ("Sync", 5)]
    assert not fifo.has_synced()
    assert desc(pop(fifo)[0]) == [("Sync", 6), ("Deleted", ("T", "bar", 6))]
    assert fifo.has_synced()


def test_c1_8_resync_without_known_objects_is_a_no_op() -> None:
    fifo = Fifo()
    fifo.resync()
    assert len(fifo) == 0


def test_c1_8_resync_skips_failed_and_absent_lookups() -> None:
    fifo = Fifo(known_objects=FlakyKnown({"a": None, "b": thing("b", 2), "c": None}, {"c"}))
    fifo.resync()
    assert pop_all(fifo) == [[("Sync", 2)]]


def test_c1_9_pop_on_closed_queue_drains_then_raises() -> None:
    fifo = Fifo()
    fifo.add(thing("a", 1))
    fifo.close()
    assert fifo.is_closed()
    assert newest(pop(fifo)[0]) == 1
    with pytest.raises(FIFOClosedError):
        fifo.pop(lambda d, i: None)
    with pytest.raises(FIFOClosedError):
        fifo.pop(lambda d, i: None, timeout=0.01)


def test_c1_9_pop_blocks_until_an_item_arrives() -> None:
    fifo = Fifo()
    got: list[Deltas[Thing]] = []
    t = threading.Thread(target=lambda: got.append(fifo.pop(lambda d, i: None, timeout=10)))
    t.start()
    deadline = time.monotonic() + 5
    while fifo._waiting == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert got == []
    fifo.add(thing("late", 3))
    t.join(timeout=5)
    assert [desc(d) for d in got] == [[("Added", 3)]]


def test_c1_9_pop_timeout_returns_empty_without_calling_process() -> None:
    fifo = Fifo()
    called: list[bool] = []
    start = time.monotonic()
    assert fifo.pop(lambda d, i: called.append(i), timeout=0.05) == []
    assert time.monotonic() - start >= 0.05
    assert called == []


def test_c1_9_process_runs_under_the_queue_lock() -> None:
    fifo = Fifo()
    fifo.add(thing("a", 1))
    added = threading.Event()
    blocked_while_processing: list[bool] = []

    def process(deltas: Deltas[Thing], initial: bool) -> None:
        def producer() -> None:
            fifo.add(thing("b", 2))
            added.set()

        threading.Thread(target=producer).start()
        blocked_while_processing.append(not added.wait(0.1))
        assert fifo.has_synced()  # re-entrant calls from the consumer itself are fine

    fifo.pop(process)
    assert added.wait(5)
    assert blocked_while_processing == [True]


def test_c1_9_process_error_propagates_and_item_is_not_requeued() -> None:
    fifo = Fifo()
    fifo.add(thing("a", 1))

    def process(deltas: Deltas[Thing], initial: bool) -> None:
        raise ValueError("handler failed")

    with pytest.raises(ValueError, match="handler failed"):
        fifo.pop(process)
    assert len(fifo) == 0


def test_c1_9_is_in_initial_list_computed_before_decrement() -> None:
    fifo = Fifo()
    fifo.replace([thing("a"), thing("b")], "0")
    assert pop(fifo)[1] is True
    assert pop(fifo)[1] is True  # the last initial item is still "in the initial list"
    fifo.add(thing("c"))
    assert pop(fifo)[1] is False


def test_c1_10_has_synced_never_reverts() -> None:
    fifo = Fifo()
    fifo.replace([], "0")
    assert fifo.has_synced()
    fifo.replace([thing("a"), thing("b")], "0")
    assert fifo.has_synced()


def test_c1_11_close_does_not_reject_writes() -> None:
    fifo = Fifo()
    fifo.close()
    fifo.add(thing("a", 1))
    fifo.replace([thing("b", 2)], "0")
    assert len(fifo) == 2
    assert pop_all(fifo) == [[("Added", 1), ("Deleted", ("T", "a", 1))], [("Sync", 2)]]


def test_c1_12_requeue_error_puts_item_back_and_raises_inner_error() -> None:
    fifo = Fifo()
    fifo.add(thing("a", 1))

    def requeue(deltas: Deltas[Thing], initial: bool) -> None:
        raise RequeueError(RuntimeError("try later"))

    with pytest.raises(RuntimeError, match="try later"):
        fifo.pop(requeue)
    assert fifo.list_keys() == ["a"]

    def requeue_quietly(deltas: Deltas[Thing], initial: bool) -> None:
        raise RequeueError()

    assert desc(fifo.pop(requeue_quietly)) == [("Added", 1)]
    assert desc(pop(fifo)[0]) == [("Added", 1)]


def test_c1_12_requeue_does_not_clobber_newer_deltas() -> None:
    fifo = Fifo()
    fifo.add(thing("a", 1))

    def process(deltas: Deltas[Thing], initial: bool) -> None:
        fifo.update(thing("a", 2))  # a newer event arrived while processing
        raise RequeueError()

    fifo.pop(process)
    assert pop_all(fifo) == [[("Updated", 2)]]


def test_c1_12_add_if_not_present() -> None:
    fifo = Fifo()
    fifo.add_if_not_present([Delta(DeltaType.ADDED, thing("a", 1))])
    assert fifo.has_synced()  # marks populated
    fifo.add(thing("b", 2))
    fifo.add_if_not_present([Delta(DeltaType.ADDED, thing("b", 99))])  # b already queued
    assert pop_all(fifo) == [[("Added", 1)], [("Added", 2)]]
    with pytest.raises(TypeError, match="Deltas"):
        fifo.add_if_not_present(thing("c"))  # type: ignore[arg-type]


def test_c1_12_list_list_keys_get_get_by_key() -> None:
    fifo = Fifo()
    fifo.add(thing("a", 1))
    fifo.add(thing("b", 2))
    fifo.update(thing("a", 3))
    assert fifo.list_keys() == ["a", "b"]
    assert [render(o) for o in fifo.list()] == [3, 2]
    got = fifo.get(thing("a"))
    assert got is not None and desc(got) == [("Added", 1), ("Updated", 3)]
    got.clear()  # a copy: the queue is unaffected
    assert fifo.get_by_key("a") is not None and len(fifo.get_by_key("a") or []) == 2
    assert fifo.get_by_key("zzz") is None


def test_delta_type_values() -> None:
    assert [t.value for t in DeltaType][:5] == ["Added", "Updated", "Deleted", "Replaced", "Sync"]
    assert DeltaType("Sync") is DeltaType.SYNC


@pytest.mark.timeout(60)
def test_c1_9_concurrent_producer_and_consumer_lose_nothing() -> None:
    """One producer, one consumer: every event of every key is delivered once, in order."""
    fifo = Fifo()
    n_keys, n_events = 50, 4000
    received: dict[str, list[int]] = {}
    done = threading.Event()

    def consume() -> None:
        while True:
            try:
                deltas = fifo.pop(lambda d, i: None)
            except FIFOClosedError:
                done.set()
                return
            for d in deltas:
                obj = d.object
                assert isinstance(obj, Thing) and obj.metadata is not None
                received.setdefault(obj.metadata.name or "", []).append(obj.value)

    consumer = threading.Thread(target=consume)
    consumer.start()
    for i in range(n_events):
        fifo.update(thing(f"k{i % n_keys}", i))
    fifo.close()
    assert done.wait(30)
    consumer.join(5)
    assert sum(len(v) for v in received.values()) == n_events
    for name, values in received.items():
        k = int(name[1:])
        assert values == list(range(k, n_events, n_keys))


def test_c1_10_on_synced_fires_once_after_the_last_initial_item_was_processed() -> None:
    fifo = Fifo()
    fired: list[bool] = []
    fifo.on_synced(lambda: fired.append(True))
    fifo.replace([thing("a"), thing("b")], "0")
    during: list[list[bool]] = []
    fifo.pop(lambda d, i: during.append(list(fired)))
    assert fired == []
    fifo.pop(lambda d, i: during.append(list(fired)))
    assert during == [[], []]  # not while the last initial item is still being processed
    assert fired == [True] and fifo.has_synced()
    fifo.add(thing("c"))
    fifo.pop(lambda d, i: None)
    assert fired == [True]


def test_c1_10_on_synced_fires_at_an_empty_first_replace_and_when_already_synced() -> None:
    fifo = Fifo()
    fired: list[str] = []
    fifo.on_synced(lambda: fired.append("first"))
    fifo.replace([], "0")
    assert fired == ["first"]
    fifo.on_synced(lambda: fired.append("late"))
    assert fired == ["first", "late"]


def test_c1_10_on_synced_fires_even_when_the_last_initial_process_raises() -> None:
    fifo = Fifo()
    fired: list[bool] = []
    fifo.on_synced(lambda: fired.append(True))
    fifo.replace([thing("a")], "0")

    def fail(deltas: Deltas[Thing], initial: bool) -> None:
        raise RuntimeError("handler failed")

    with pytest.raises(RuntimeError):
        fifo.pop(fail)
    assert fired == [True] and fifo.has_synced()
