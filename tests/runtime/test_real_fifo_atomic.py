"""RealFIFO, atomic mode (client-go v0.36's informer queue): rules C2.2, C3.1-C3.3, C3.7, C3.8
and scenarios L25, L26.

Objects are cluster-scoped, so the FIFO key is the name; ``foo(10)`` is ``thing("foo", 10)``.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import ObjectKeyError
from kubeinformers.runtime.cache.delta_fifo import Delta, Deltas, DeltaType
from kubeinformers.runtime.cache.real_fifo import (
    UNLOCK_WHILE_PROCESSING_LIMIT,
    BookmarkInfo,
    RealFIFO,
    ReplacedAllInfo,
    SyncAllInfo,
)
from kubeinformers.runtime.cache.store import Indexer
from tests.runtime._queue_objects import Thing, thing

WAIT = 10.0


def atomic(**kwargs: Any) -> RealFIFO[Thing]:
    return RealFIFO(atomic=True, **kwargs)


def entry(d: Delta[Thing]) -> tuple[str, Any]:
    obj: Any = d.object
    if isinstance(obj, ReplacedAllInfo):
        return (d.type.value, (obj.resource_version, [o.value for o in obj.objects]))
    if isinstance(obj, BookmarkInfo):
        return (d.type.value, obj.resource_version)
    if isinstance(obj, SyncAllInfo):
        return (d.type.value, None)
    return (d.type.value, obj.value)


def pop_all(fifo: RealFIFO[Thing]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    while len(fifo):
        deltas = fifo.pop(lambda d, initial: None, timeout=1.0)
        assert len(deltas) == 1
        out.append(entry(deltas[0]))
    return out


# -- C2.2: constructor invariants -----------------------------------------------------------------


def test_c2_2_atomic_mode_refuses_known_objects() -> None:
    with pytest.raises(ValueError, match="no known_objects"):
        RealFIFO(known_objects=Indexer(), atomic=True)


@pytest.mark.parametrize("option", ["emit_bookmarks", "unlock_while_processing"])
def test_c2_2_non_atomic_mode_refuses_the_atomic_options(option: str) -> None:
    with pytest.raises(ValueError, match="atomic=True"):
        RealFIFO(known_objects=Indexer(), **{option: True})


# -- C3.1 / L25: one ReplacedAll per relist -------------------------------------------------------


def test_l25_c3_1_each_replace_is_one_replaced_all_entry_with_its_version() -> None:
    fifo = atomic()
    obj = thing("obj", 1)
    fifo.add(obj)
    fifo.replace([obj], "10")
    fifo.replace([obj], "20")
    fifo.replace([], "56")
    assert pop_all(fifo) == [
        ("Added", 1),
        ("ReplacedAll", ("10", [1])),
        ("ReplacedAll", ("20", [1])),
        ("ReplacedAll", ("56", [])),
    ]


def test_c3_1_replaced_all_carries_the_transformed_list_and_no_tombstones() -> None:
    calls: list[int] = []

    def bump(obj: Thing) -> Thing:
        calls.append(obj.value)
        return thing(obj.metadata.name or "", obj.value + 100)  # type: ignore[union-attr]

    fifo = atomic(transformer=bump)
    fifo.add(thing("gone", 1))  # not relisted: the FIFO computes no tombstone for it (C3.4)
    fifo.replace([thing("a", 2), thing("b", 3)], "7")
    assert pop_all(fifo) == [("Added", 101), ("ReplacedAll", ("7", [102, 103]))]
    assert calls == [1, 2, 3]  # each object transformed once


def test_c3_1_a_replace_with_an_unkeyable_object_enqueues_nothing() -> None:
    fifo: RealFIFO[Any] = RealFIFO(atomic=True)
    with pytest.raises(ObjectKeyError):
        fifo.replace([thing("a", 1), 42], "3")
    assert len(fifo) == 0
    assert not fifo.has_synced()


# -- C3.2 / L26: one SyncAll per resync ----------------------------------------------------------


def test_l26_c3_2_resync_is_one_sync_all_entry_unconditionally() -> None:
    fifo = atomic()
    fifo.resync()
    assert pop_all(fifo) == [("SyncAll", None)]
    fifo.add(thing("obj", 1))
    fifo.resync()  # a queued key does not suppress it: it is processed in queue order
    assert pop_all(fifo) == [("Added", 1), ("SyncAll", None)]


# -- C3.3 / L25: bookmarks -----------------------------------------------------------------------


def test_l25_c3_3_bookmarks_are_entries_in_atomic_mode() -> None:
    fifo = atomic()
    fifo.bookmark("123")
    fifo.replace([], "1234")
    assert pop_all(fifo) == [("Bookmark", "123"), ("ReplacedAll", ("1234", []))]


def test_c3_3_bookmarks_enqueue_nothing_without_emission_or_in_non_atomic_mode() -> None:
    quiet = atomic(emit_bookmarks=False)
    quiet.bookmark("5")
    assert len(quiet) == 0
    ordered: RealFIFO[Thing] = RealFIFO(known_objects=Indexer())
    ordered.bookmark("5")
    assert len(ordered) == 0


# -- C3.8: synced once the first ReplacedAll was processed ----------------------------------------


def test_c3_8_synced_only_after_the_single_replaced_all_was_processed() -> None:
    fifo = atomic()
    fifo.replace([thing("a", 1), thing("b", 2)], "2")
    synced_at: list[bool] = []
    fifo.on_synced(lambda: synced_at.append(True))
    seen_during: list[tuple[bool, bool]] = []

    def process(deltas: Deltas[Thing], initial: bool) -> None:
        seen_during.append((fifo.has_synced(), initial))

    assert not fifo.has_synced()
    fifo.pop(process, timeout=1.0)
    assert seen_during == [(False, True)]  # never synced mid-processing, even unlocked
    assert fifo.has_synced() and synced_at == [True]


def test_c3_8_an_empty_first_replace_is_still_one_entry_to_process() -> None:
    fifo = atomic()
    fifo.replace([], "9")
    assert not fifo.has_synced()
    assert pop_all(fifo) == [("ReplacedAll", ("9", []))]
    assert fifo.has_synced()


def test_c3_8_an_add_before_the_first_replace_makes_the_queue_synced_at_once() -> None:
    fifo = atomic()
    fifo.add(thing("a", 1))
    fifo.replace([thing("a", 1)], "1")
    assert fifo.has_synced()


# -- C3.7: the lock is released while an entry is processed ---------------------------------------


def _add_from_another_thread(fifo: RealFIFO[Thing], obj: Thing) -> threading.Event:
    added = threading.Event()

    def add() -> None:
        fifo.add(obj)
        added.set()

    threading.Thread(target=add, daemon=True).start()
    return added


def test_c3_7_producers_are_not_blocked_while_an_entry_is_processed() -> None:
    fifo = atomic()
    fifo.add(thing("first", 1))
    added_meanwhile: list[bool] = []

    def process(deltas: Deltas[Thing], initial: bool) -> None:
        # The add completes while this entry is still being processed.
        added_meanwhile.append(_add_from_another_thread(fifo, thing("second", 2)).wait(WAIT))

    fifo.pop(process, timeout=1.0)
    assert added_meanwhile == [True]
    assert pop_all(fifo) == [("Added", 2)]


def test_c3_7_the_lock_stays_held_while_the_queue_is_long() -> None:
    fifo = atomic()
    for i in range(UNLOCK_WHILE_PROCESSING_LIMIT + 1):
        fifo.add(thing(f"t{i}", i))
    release = threading.Event()
    pending: list[threading.Event] = []

    def process(deltas: Deltas[Thing], initial: bool) -> None:
        pending.append(_add_from_another_thread(fifo, thing("late", -1)))
        # Still blocked after a generous wait: the producer needs the lock we hold.
        assert not pending[0].wait(0.3)
        release.set()

    fifo.pop(process, timeout=1.0)
    assert release.is_set()
    assert pending[0].wait(WAIT)  # it gets the lock once processing returned


def test_c3_7_pop_batch_also_processes_unlocked() -> None:
    fifo = atomic()
    fifo.add(thing("a", 1))
    fifo.add(thing("b", 2))
    added_meanwhile: list[bool] = []

    def batch(deltas: Deltas[Thing], initial: bool) -> None:
        added_meanwhile.append(_add_from_another_thread(fifo, thing("c", 3)).wait(WAIT))

    handed = fifo.pop_batch(batch, lambda d, i: None, timeout=1.0)
    assert [entry(d) for d in handed] == [("Added", 1), ("Added", 2)]
    assert added_meanwhile == [True]


def test_c2_7_whole_store_entries_are_never_batched() -> None:
    fifo = atomic()
    fifo.add(thing("a", 1))
    fifo.resync()
    fifo.add(thing("b", 2))
    fifo.bookmark("5")
    batches: list[list[tuple[str, Any]]] = []

    def record(deltas: Deltas[Thing], initial: bool) -> None:
        batches.append([entry(d) for d in deltas])

    while len(fifo):
        fifo.pop_batch(record, record, timeout=1.0)
    assert batches == [[("Added", 1)], [("SyncAll", None)], [("Added", 2)], [("Bookmark", "5")]]


def test_delta_types_of_the_atomic_mode() -> None:
    assert [t.value for t in (DeltaType.REPLACED_ALL, DeltaType.SYNC_ALL, DeltaType.BOOKMARK)] == [
        "ReplacedAll",
        "SyncAll",
        "Bookmark",
    ]
