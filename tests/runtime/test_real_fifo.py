"""RealFIFO, non-atomic mode: rules C2.1-C2.7 and scenarios L16, L18-L24, L27, L28.

Objects are cluster-scoped, so the FIFO key is the name; ``foo(10)`` is ``thing("foo", 10)``.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown, ObjectKeyError, object_name
from kubeinformers.runtime.cache.delta_fifo import Delta, Deltas, DeltaType, FIFOClosedError
from kubeinformers.runtime.cache.real_fifo import RealFIFO
from kubeinformers.runtime.cache.store import Indexer
from tests.runtime._queue_objects import Thing, thing


def known(*objs: Thing) -> Indexer[Thing]:
    idx: Indexer[Thing] = Indexer()
    for obj in objs:
        idx.add(obj)
    return idx


def fifo_with(*objs: Thing, **kwargs: Any) -> RealFIFO[Thing]:
    return RealFIFO(known_objects=known(*objs), **kwargs)


def render(obj: Any) -> Any:
    if isinstance(obj, DeletedFinalStateUnknown):
        return ("T", obj.key, None if obj.obj is None else obj.obj.value)
    return obj.value


def entry(d: Delta[Thing]) -> tuple[str, Any]:
    return (d.type.value, render(d.object))


def pop(fifo: RealFIFO[Thing], timeout: float = 2.0) -> tuple[tuple[str, Any], bool]:
    flags: list[bool] = []
    deltas = fifo.pop(lambda d, initial: flags.append(initial), timeout=timeout)
    assert len(deltas) == 1, "RealFIFO hands out one-element Deltas (C2.1)"
    return entry(deltas[0]), flags[0]


def pop_all(fifo: RealFIFO[Thing]) -> list[tuple[str, Any]]:
    out = []
    while len(fifo):
        out.append(pop(fifo)[0])
    return out


KNOWN3 = (thing("foo", 5), thing("bar", 6), thing("baz", 7))


def test_l19_c2_1_every_event_is_its_own_entry() -> None:
    fifo = fifo_with()
    fifo.add(thing("foo", 10))
    fifo.update(thing("foo", 12))
    fifo.delete(thing("foo", 15))
    assert pop_all(fifo) == [("Added", 10), ("Updated", 12), ("Deleted", 15)]
    assert fifo.pop(lambda d, i: None, timeout=0.05) == []


def test_l20_c2_3_nothing_compacted_unknown_delete_delivered() -> None:
    fifo = fifo_with()
    fifo.add(thing("foo", 10))
    fifo.update(thing("bar", 15))
    fifo.add(thing("qux", 17))
    fifo.delete(thing("qux", 18))
    fifo.delete(thing("baz", 20))
    assert [v for _, v in pop_all(fifo)] == [10, 15, 17, 18, 20]


def test_l21_c2_1_arrival_order_across_keys() -> None:
    fifo = fifo_with()
    for name, value in (("foo", 10), ("bar", 1), ("foo", 11), ("foo", 13), ("zab", 30)):
        fifo.add(thing(name, value))
    assert pop(fifo)[0][1] == 10
    fifo.add(thing("foo", 14))
    assert [v for _, v in pop_all(fifo)] == [1, 11, 13, 30, 14]


def test_l22_c2_4_synthetic_deletes_precede_replaced_items() -> None:
    fifo = fifo_with(*KNOWN3)
    fifo.delete(thing("baz", 10))
    fifo.replace([thing("foo", 5)], "0")
    assert pop_all(fifo) == [
        ("Deleted", 10),
        ("Deleted", ("T", "bar", 6)),
        ("Replaced", 5),
    ]


def test_l23_c2_4_two_replaces() -> None:
    fifo = fifo_with(*KNOWN3)
    fifo.replace([thing("bar", 100), thing("foo", 5)], "0")
    fifo.replace([thing("foo", 5)], "0")
    assert pop_all(fifo) == [
        ("Deleted", ("T", "baz", 7)),
        ("Replaced", 100),
        ("Replaced", 5),
        ("Deleted", ("T", "bar", 100)),
        ("Replaced", 5),
    ]


def test_l24_c2_4_transformer_counting() -> None:
    calls: list[int] = []

    def transform(obj: Thing) -> Thing:
        calls.append(obj.value)
        return obj.model_copy(update={"value": obj.value + 1000})

    fifo = fifo_with(transformer=transform)
    fifo.add(thing("foo", 10))
    fifo.add(thing("bar", 11))
    fifo.update(thing("foo", 12))
    fifo.delete(thing("foo", 15))
    fifo.replace([], "0")
    fifo.add(thing("bar", 16))
    fifo.replace([], "0")
    assert pop_all(fifo) == [
        ("Added", 1010),
        ("Added", 1011),
        ("Updated", 1012),
        ("Deleted", 1015),
        ("Deleted", ("T", "bar", 1011)),
        ("Added", 1016),
        ("Deleted", ("T", "bar", 1016)),
    ]
    assert calls == [10, 11, 12, 15, 16]


def test_c2_2_known_objects_are_required() -> None:
    with pytest.raises(ValueError, match="known_objects"):
        RealFIFO[Thing]()


def test_c2_3_add_update_delete_mark_populated() -> None:
    for method in ("add", "update", "delete"):
        fifo = fifo_with()
        getattr(fifo, method)(thing("x"))
        assert fifo.has_synced(), method
        assert len(fifo) == 1


def test_c2_4_key_error_aborts_before_anything_is_enqueued() -> None:
    fifo: RealFIFO[Any] = RealFIFO(known_objects=known(thing("gone")))
    with pytest.raises(ObjectKeyError):
        fifo.replace([thing("a"), 42], "0")
    assert len(fifo) == 0 and not fifo.has_synced()


def test_c2_4_known_key_lookup_failure_gives_tombstone_without_object() -> None:
    class Flaky:
        def list_keys(self) -> list[str]:
            return ["err", "absent"]

        def get_by_key(self, key: str) -> Thing | None:
            if key == "err":
                raise RuntimeError("lookup failed")
            return None

    fifo: RealFIFO[Thing] = RealFIFO(known_objects=Flaky())
    fifo.replace([], "0")
    assert pop_all(fifo) == [("Deleted", ("T", "err", None)), ("Deleted", ("T", "absent", None))]


def test_c2_4_initial_population_counts_every_queue_entry() -> None:
    fifo = fifo_with(thing("gone", 1))
    fifo.resync()  # one Sync entry, does not populate
    assert not fifo.has_synced()
    fifo.replace([thing("a"), thing("a")], "0")
    # queue: Sync gone, Deleted T{gone}, Replaced a, Replaced a → 4 entries to process
    for _ in range(3):
        _, initial = pop(fifo)
        assert initial and not fifo.has_synced()
    pop(fifo)
    assert fifo.has_synced()


def test_c2_5_resync_skips_keys_anywhere_in_queue_and_is_not_transformed() -> None:
    calls: list[Any] = []

    def transform(obj: Thing) -> Thing:
        calls.append(obj)
        return obj

    fifo = fifo_with(thing("a", 1), thing("b", 2), thing("c", 3), transformer=transform)
    fifo.update(thing("a", 10))
    fifo.add(thing("other", 0))  # "a" is no longer at the tail but still queued
    calls.clear()
    fifo.resync()
    assert calls == []
    assert pop_all(fifo) == [("Updated", 10), ("Added", 0), ("Sync", 2), ("Sync", 3)]


def test_c2_6_l16_has_synced_counts_every_entry_and_drops_after_processing() -> None:
    assert not fifo_with().has_synced()
    fifo = fifo_with()
    fifo.replace([], "0")
    assert fifo.has_synced()

    fifo = fifo_with()
    fifo.replace([thing("a", 1), thing("a", 2)], "0")
    synced_during: list[bool] = []
    fifo.pop(lambda d, i: synced_during.append(fifo.has_synced()))
    assert not fifo.has_synced()  # RealFIFO: every entry counts (unlike DeltaFIFO)
    fifo.pop(lambda d, i: synced_during.append(fifo.has_synced()))
    assert synced_during == [False, False]  # not yet synced while the last one is processed
    assert fifo.has_synced()


def test_c2_6_count_drops_even_when_process_raises() -> None:
    fifo = fifo_with()
    fifo.replace([thing("a")], "0")

    def fail(deltas: Deltas[Thing], initial: bool) -> None:
        raise RuntimeError("handler failed")

    with pytest.raises(RuntimeError):
        fifo.pop(fail)
    assert fifo.has_synced() and len(fifo) == 0


def test_c2_6_process_runs_under_the_lock() -> None:
    fifo = fifo_with()
    fifo.add(thing("a"))
    added = threading.Event()
    blocked: list[bool] = []

    def producer() -> None:
        fifo.add(thing("b"))
        added.set()

    def process(deltas: Deltas[Thing], initial: bool) -> None:
        threading.Thread(target=producer).start()
        blocked.append(not added.wait(0.1))

    fifo.pop(process)
    assert added.wait(5) and blocked == [True]


def batches(fifo: RealFIFO[Thing], count: int) -> list[tuple[str, list[tuple[str, str]]]]:
    """Drive pop_batch `count` times; record which callback got which (type, name) entries."""
    out: list[tuple[str, list[tuple[str, str]]]] = []

    def describe(d: Deltas[Thing]) -> list[tuple[str, str]]:
        return [(x.type.value, object_name(x.object)) for x in d]

    for _ in range(count):
        fifo.pop_batch(
            lambda d, i: out.append(("batch", describe(d))),
            lambda d, i: out.append(("single", describe(d))),
            timeout=1,
        )
    return out


def test_l27_c2_7_pop_batch_respects_size_and_initial_list() -> None:
    fifo = fifo_with(batch_size=2)
    fifo.replace([thing("o1"), thing("o2")], "0")
    fifo.update(thing("o3"))
    fifo.update(thing("o4"))
    assert batches(fifo, 2) == [
        ("batch", [("Replaced", "o1"), ("Replaced", "o2")]),
        ("batch", [("Updated", "o3"), ("Updated", "o4")]),
    ]

    fifo = fifo_with(batch_size=2)
    fifo.replace([thing("o1"), thing("o2"), thing("o3")], "0")
    fifo.update(thing("o4"))
    assert batches(fifo, 3) == [
        ("batch", [("Replaced", "o1"), ("Replaced", "o2")]),
        ("single", [("Replaced", "o3")]),  # never mixed with non-initial entries
        ("single", [("Updated", "o4")]),
    ]


def test_l27_c2_7_repeated_key_closes_the_batch() -> None:
    fifo = fifo_with()
    fifo.replace([thing("o1")], "0")
    fifo.update(thing("o1"))
    fifo.update(thing("o1"))
    assert batches(fifo, 3) == [
        ("single", [("Replaced", "o1")]),
        ("single", [("Updated", "o1")]),
        ("single", [("Updated", "o1")]),
    ]

    fifo = fifo_with()
    fifo.replace([thing("o1"), thing("o2")], "0")
    fifo.update(thing("o2"))
    fifo.update(thing("o3"))
    assert batches(fifo, 2) == [
        ("batch", [("Replaced", "o1"), ("Replaced", "o2")]),
        ("batch", [("Updated", "o2"), ("Updated", "o3")]),
    ]
    assert fifo.has_synced()


def test_l28_c2_7_unkeyable_entry_is_included_and_closes_the_batch() -> None:
    broken: set[str] = set()

    def key_func(obj: Any) -> str:
        name = object_name(obj)
        if name in broken:
            raise ValueError(f"cannot key {name}")
        return name

    def run(names: list[str], count: int) -> list[tuple[str, list[tuple[str, str]]]]:
        broken.clear()
        fifo: RealFIFO[Thing] = RealFIFO(key_func, known_objects=known())
        for n in names:
            fifo.add(thing(n))
        broken.update({"f3", "f4"})
        return batches(fifo, count)

    assert run(["s1", "s2", "f3", "f4"], 2) == [
        ("batch", [("Added", "s1"), ("Added", "s2"), ("Added", "f3")]),
        ("single", [("Added", "f4")]),
    ]
    assert run(["f3", "s1", "f4"], 2) == [
        ("single", [("Added", "f3")]),
        ("batch", [("Added", "s1"), ("Added", "f4")]),
    ]


def test_c2_7_non_batchable_entry_is_processed_alone() -> None:
    fifo = fifo_with()
    fifo.add(thing("a"))
    fifo._items.append(Delta(DeltaType.BOOKMARK, thing("bm")))  # only atomic mode makes these
    fifo.add(thing("b"))
    assert batches(fifo, 3) == [
        ("single", [("Added", "a")]),
        ("single", [("Bookmark", "bm")]),
        ("single", [("Added", "b")]),
    ]


def test_a7_real_fifo_key_of_accepts_a_single_delta() -> None:
    fifo = fifo_with()
    assert fifo.key_of(Delta(DeltaType.ADDED, thing("x"))) == "x"
    assert fifo.key_of([Delta(DeltaType.ADDED, DeletedFinalStateUnknown("t", None))]) == "t"
    with pytest.raises(ObjectKeyError, match="0 length Deltas"):
        fifo.key_of([])


@pytest.mark.timeout(10)
def test_l18_close_unblocks_every_blocked_pop() -> None:
    fifo = fifo_with()
    errors: list[BaseException] = []
    lock = threading.Lock()

    def consumer() -> None:
        try:
            fifo.pop(lambda d, i: None)
        except BaseException as e:
            with lock:
                errors.append(e)

    threads = [threading.Thread(target=consumer) for _ in range(10)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 5
    while fifo._waiting < 10 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert fifo._waiting == 10
    start = time.monotonic()
    fifo.close()
    for t in threads:
        t.join(timeout=0.5)
    assert time.monotonic() - start < 0.5
    assert len(errors) == 10 and all(isinstance(e, FIFOClosedError) for e in errors)
    assert fifo.is_closed()


def test_closed_queue_drains_before_raising() -> None:
    fifo = fifo_with()
    fifo.add(thing("a", 1))
    fifo.close()
    fifo.add(thing("b", 2))  # writes are still accepted
    assert pop_all(fifo) == [("Added", 1), ("Added", 2)]
    with pytest.raises(FIFOClosedError):
        fifo.pop(lambda d, i: None, timeout=0.01)
    with pytest.raises(FIFOClosedError):
        fifo.pop_batch(lambda d, i: None, lambda d, i: None)


def test_real_fifo_fits_the_controllers_queue_protocol() -> None:
    """The informer's controller (H2) accepts either FIFO through its Queue protocol."""
    from kubeinformers.runtime.cache.controller import Queue

    queue: Queue[Thing] = fifo_with()
    queue.add(thing("a"))
    assert queue.pop(lambda d, i: None)[0].type is DeltaType.ADDED


def test_c2_6_on_synced_fires_after_the_last_initial_entry_single_and_batched() -> None:
    fifo = fifo_with()
    fired: list[bool] = []
    fifo.on_synced(lambda: fired.append(True))
    fifo.replace([thing("a", 1), thing("a", 2)], "0")
    during: list[bool] = []
    fifo.pop(lambda d, i: during.append(bool(fired)))
    fifo.pop(lambda d, i: during.append(bool(fired)))
    assert during == [False, False] and fired == [True]

    batched = fifo_with()
    batched.on_synced(lambda: fired.append(False))
    batched.replace([thing("a"), thing("b"), thing("c")], "0")
    batched.pop_batch(lambda d, i: None, lambda d, i: None)
    assert fired == [True, False] and batched.has_synced()


def test_c2_6_on_synced_fires_at_an_empty_first_replace() -> None:
    fifo = fifo_with()
    fired: list[bool] = []
    fifo.on_synced(lambda: fired.append(True))
    fifo.replace([], "0")
    assert fired == [True]
