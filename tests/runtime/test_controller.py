"""The low-level controller, process_deltas and the handler adapters: section E and L29-L35."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, cast

import pytest

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
    meta_namespace_key,
)
from kubeinformers.runtime.cache.controller import (
    BatchProcessingError,
    Controller,
    ControllerConfig,
    new_informer,
    process_deltas,
    process_deltas_in_batch,
)
from kubeinformers.runtime.cache.delta_fifo import Delta, DeltaFIFO, DeltaType
from kubeinformers.runtime.cache.handlers import (
    FilteringResourceEventHandler,
    ResourceEventHandlerFuncs,
)
from kubeinformers.runtime.cache.real_fifo import RealFIFO
from kubeinformers.runtime.cache.store import Indexer
from kubeinformers.testing import FakeListerWatcher
from tests.runtime._informer_support import WAIT, Pod, Recorder, Runner, describe, pod, wait_for


def new_store(*objs: Pod) -> Indexer[Pod]:
    store: Indexer[Pod] = Indexer(deletion_handling_meta_namespace_key)
    for o in objs:
        store.add(o)
    return store


@pytest.fixture
def runners() -> Iterator[list[Runner]]:
    started: list[Runner] = []
    yield started
    for r in started:
        r.stop()


# -- E1, E2: run and the process loop -------------------------------------------------------------


def test_e1_run_lists_into_queue_and_on_stop_closes_queue_and_returns(
    runners: list[Runner],
) -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a"), pod("b")])
    seen: list[str] = []
    got_two = threading.Event()

    def process(deltas: list[Delta[Pod]], initial: bool) -> None:
        seen.extend(f"{d.type}:{describe(d.object)}" for d in deltas)
        if len(seen) >= 2:
            got_two.set()

    fifo: DeltaFIFO[Pod] = DeltaFIFO(meta_namespace_key)
    ctl = Controller(ControllerConfig(queue=fifo, lister_watcher=fake, process=process, name="e1"))
    assert ctl.last_sync_resource_version() == ""
    runner = Runner(ctl.run)
    assert got_two.wait(WAIT)
    assert sorted(seen) == ["Sync:default/a@1", "Sync:default/b@2"]
    assert ctl.has_synced()
    runner.stop(timeout=2.0)
    assert fifo.is_closed()
    assert runner.error is None
    assert ctl.last_sync_resource_version() == "2"


def test_e2_processing_errors_are_logged_and_discarded(
    runners: list[Runner], caplog: pytest.LogCaptureFixture
) -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("bad"), pod("good")])
    seen: list[str] = []
    done = threading.Event()

    def process(deltas: list[Delta[Pod]], initial: bool) -> None:
        obj = deltas[-1].object
        assert not isinstance(obj, DeletedFinalStateUnknown)
        if obj.metadata and obj.metadata.name == "bad":
            raise ValueError("cannot handle bad")
        seen.append(describe(obj))
        done.set()

    fifo: DeltaFIFO[Pod] = DeltaFIFO(meta_namespace_key)
    ctl = Controller(ControllerConfig(queue=fifo, lister_watcher=fake, process=process))
    with caplog.at_level(logging.ERROR, logger="kubeinformers"):
        runners.append(Runner(ctl.run))
        assert done.wait(WAIT)
    assert seen == ["default/good@2"]
    assert any("cannot handle bad" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)
    # E2: no retry, the failed item is gone from the queue.
    assert fifo.get_by_key("default/bad") is None


class Panic(BaseException):
    """Stands in for a Go panic: not an Exception, so not a 'processing error'."""


def test_e2_l35_panic_in_processing_propagates_out_of_run() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a")])

    def process(deltas: list[Delta[Pod]], initial: bool) -> None:
        raise Panic("handler panicked")

    fifo: DeltaFIFO[Pod] = DeltaFIFO(meta_namespace_key)
    ctl = Controller(ControllerConfig(queue=fifo, lister_watcher=fake, process=process))
    runner = Runner(ctl.run)
    assert runner.ended.wait(WAIT)
    assert isinstance(runner.error, Panic)
    runner.stop()  # lets the reflector thread end


def test_e2_closed_queue_ends_the_process_loop_and_run_waits_for_stop(
    runners: list[Runner],
) -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher()
    fifo: DeltaFIFO[Pod] = DeltaFIFO(meta_namespace_key)
    ctl = Controller(ControllerConfig(queue=fifo, lister_watcher=fake, process=lambda d, i: None))
    runner = Runner(ctl.run)
    fifo.close()
    assert not runner.ended.wait(0.2)  # run() blocks until stop, like client-go's Run
    runner.stop(timeout=2.0)


# -- E3: process_deltas ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "delta_type", [DeltaType.SYNC, DeltaType.REPLACED, DeltaType.ADDED, DeltaType.UPDATED]
)
def test_e3_add_or_update_is_decided_by_store_presence_not_delta_type(
    delta_type: DeltaType,
) -> None:
    store = new_store(pod("known", "1"))
    rec = Recorder()
    process_deltas(
        rec, store, [Delta(delta_type, pod("known", "2")), Delta(delta_type, pod("new", "3"))], True
    )
    assert rec.snapshot() == [
        ("update", "default/known@1", "default/known@2"),
        ("add", "default/new@3", True),
    ]
    assert sorted(describe(o) for o in store.list()) == ["default/known@2", "default/new@3"]


def test_e3_deleted_calls_on_delete_even_for_keys_not_in_store() -> None:
    store = new_store(pod("a", "1"))
    rec = Recorder()
    tomb: DeletedFinalStateUnknown[Pod] = DeletedFinalStateUnknown("default/a", pod("a", "1"))
    process_deltas(
        rec,
        store,
        [Delta(DeltaType.DELETED, pod("ghost", "5")), Delta(DeltaType.DELETED, tomb)],
        False,
    )
    assert rec.snapshot() == [("delete", "default/ghost@5"), ("delete", "T{default/a}")]
    assert store.list() == []


def test_e3_deltas_applied_oldest_first_and_store_written_before_each_callback() -> None:
    store = new_store()
    seen_in_store: list[str | None] = []

    def snapshot(*_: Any) -> None:
        got = store.get_by_key("default/a")
        seen_in_store.append(describe(got) if got is not None else None)

    handler: ResourceEventHandlerFuncs[Pod] = ResourceEventHandlerFuncs(
        on_add=snapshot, on_update=snapshot, on_delete=snapshot
    )
    process_deltas(
        handler,
        store,
        [
            Delta(DeltaType.ADDED, pod("a", "1")),
            Delta(DeltaType.UPDATED, pod("a", "2")),
            Delta(DeltaType.DELETED, pod("a", "3")),
        ],
        False,
    )
    assert seen_in_store == ["default/a@1", "default/a@2", None]


def test_e3_l29_relist_with_delta_fifo_updates_adds_and_deletes_by_store_state() -> None:
    """L29 (DeltaFIFO flavour): kinds of callbacks match client-go; order is the FIFO's."""
    store = new_store(pod("pod-1", "1"), pod("pod-2", "2", ver="1"), pod("pod-3", "3"))
    fifo: DeltaFIFO[Pod] = DeltaFIFO(
        meta_namespace_key, known_objects=store, emit_delta_type_replaced=True
    )
    fifo.replace([pod("pod-1", "4"), pod("pod-2", "5", ver="2"), pod("pod-4", "6")], "6")
    rec = Recorder()
    while fifo.list_keys():
        fifo.pop(lambda d, initial: process_deltas(rec, store, d, initial))
    assert sorted(rec.snapshot()) == sorted(
        [
            ("delete", "T{default/pod-3}"),
            ("update", "default/pod-1@1", "default/pod-1@4"),
            ("update", "default/pod-2@2", "default/pod-2@5"),
            ("add", "default/pod-4@6", True),
        ]
    )
    assert sorted(describe(o) for o in store.list()) == [
        "default/pod-1@4",
        "default/pod-2@5",
        "default/pod-4@6",
    ]


def test_e3_l30_relist_of_nothing_deletes_everything() -> None:
    store = new_store(pod("pod-1", "1"), pod("pod-3", "3"))
    fifo: DeltaFIFO[Pod] = DeltaFIFO(meta_namespace_key, known_objects=store)
    fifo.replace([], "2")
    rec = Recorder()
    while fifo.list_keys():
        fifo.pop(lambda d, initial: process_deltas(rec, store, d, initial))
    assert sorted(rec.snapshot()) == [
        ("delete", "T{default/pod-1}"),
        ("delete", "T{default/pod-3}"),
    ]
    assert store.list() == []


# -- E3 with the atomic queue: ReplacedAll, SyncAll, Bookmark (C3.4-C3.6) ------------------------


def _drain_atomic(fifo: RealFIFO[Pod], store: Indexer[Pod], handler: Any) -> None:
    while len(fifo):
        fifo.pop(lambda d, initial: process_deltas(handler, store, d, initial), timeout=1.0)


def test_c3_4_l29_atomic_relist_swaps_the_store_before_any_callback() -> None:
    store = new_store(pod("pod-1", "1"), pod("pod-2", "2", ver="1"), pod("pod-3", "3"))
    store_at_callback: list[list[str]] = []

    def seen(*_: Any) -> None:
        store_at_callback.append(sorted(describe(o) for o in store.list()))

    rec = Recorder(on_event=seen)
    deleted: list[Any] = []

    def on_delete(obj: Any) -> None:
        deleted.append(obj)
        rec.on_delete(obj)

    handler: ResourceEventHandlerFuncs[Pod] = ResourceEventHandlerFuncs(
        on_add=rec.on_add, on_update=rec.on_update, on_delete=on_delete
    )
    fifo: RealFIFO[Pod] = RealFIFO(meta_namespace_key, atomic=True)
    fifo.replace([pod("pod-1", "4"), pod("pod-2", "5", ver="2"), pod("pod-4", "6")], "6")
    _drain_atomic(fifo, store, handler)
    # Deletions first (tombstones holding the last stored object), then list order.
    assert rec.snapshot() == [
        ("delete", "T{default/pod-3}"),
        ("update", "default/pod-1@1", "default/pod-1@4"),
        ("update", "default/pod-2@2", "default/pod-2@5"),
        ("add", "default/pod-4@6", True),
    ]
    new_list = ["default/pod-1@4", "default/pod-2@5", "default/pod-4@6"]
    assert store_at_callback == [new_list] * 4  # every callback sees the new store
    [tombstone] = deleted
    assert isinstance(tombstone, DeletedFinalStateUnknown)
    assert describe(tombstone.obj) == "default/pod-3@3"


def test_c3_4_l30_atomic_relist_of_nothing_deletes_everything() -> None:
    store = new_store(pod("pod-1", "1"), pod("pod-3", "3"))
    rec = Recorder()
    fifo: RealFIFO[Pod] = RealFIFO(meta_namespace_key, atomic=True)
    fifo.add(pod("seen", "1"))  # populated: the relist below is not the initial list
    fifo.replace([], "2")
    _drain_atomic(fifo, store, rec)
    assert rec.snapshot()[0] == ("add", "default/seen@1", False)
    assert sorted(rec.snapshot()[1:]) == [
        ("delete", "T{default/pod-1}"),
        ("delete", "T{default/pod-3}"),
        ("delete", "T{default/seen}"),
    ]
    assert store.list() == []


def test_c3_5_sync_all_updates_every_stored_object_with_itself() -> None:
    store = new_store(pod("a", "1"), pod("b", "2"))
    rec = Recorder()
    fifo: RealFIFO[Pod] = RealFIFO(meta_namespace_key, atomic=True)
    fifo.update(pod("a", "3"))
    fifo.resync()
    _drain_atomic(fifo, store, rec)
    assert rec.snapshot()[0] == ("update", "default/a@1", "default/a@3")
    # Processed in queue order: the resync sees a@3, never the older a@1.
    assert sorted(rec.snapshot()[1:]) == [
        ("update", "default/a@3", "default/a@3"),
        ("update", "default/b@2", "default/b@2"),
    ]


def test_c3_6_l32_bookmarks_and_events_set_the_stores_version_without_callbacks() -> None:
    store: Indexer[Pod] = Indexer(deletion_handling_meta_namespace_key, track_resource_version=True)
    rec = Recorder()
    fifo: RealFIFO[Pod] = RealFIFO(meta_namespace_key, atomic=True)
    fifo.replace([pod("pod-1", "10")], "10")
    _drain_atomic(fifo, store, rec)
    assert store.last_store_sync_resource_version() == "10"
    fifo.update(pod("pod-1", "11"))
    _drain_atomic(fifo, store, rec)
    assert store.last_store_sync_resource_version() == "11"  # L32: the MODIFIED's version
    fifo.bookmark("15")
    _drain_atomic(fifo, store, rec)
    assert store.last_store_sync_resource_version() == "15"
    fifo.delete(pod("pod-1", "16"))
    _drain_atomic(fifo, store, rec)
    assert store.last_store_sync_resource_version() == "16"  # L32: the DELETE's version
    assert [e[0] for e in rec.snapshot()] == ["add", "update", "delete"]  # none for the bookmark


# -- E5: the non-shared informer ----------------------------------------------------------------


def test_e5_new_informer_calls_handler_synchronously_and_delegates_state(
    runners: list[Runner],
) -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a"), pod("b")])
    threads: set[str] = set()
    rec = Recorder(on_event=lambda _: threads.add(threading.current_thread().name))
    store, ctl = new_informer(fake, Pod, 0, rec, name="e5")
    assert not ctl.has_synced()
    assert ctl.last_sync_resource_version() == ""
    runners.append(Runner(ctl.run, name="e5-run"))
    assert rec.expect(2).wait(WAIT)
    assert ctl.has_synced()
    assert ctl.last_sync_resource_version() == "2"
    fake.modify(pod("a", value=1))
    fake.delete(pod("b"))
    assert rec.expect(4).wait(WAIT)
    assert rec.snapshot()[2:] == [
        ("update", "default/a@1", "default/a@3"),
        ("delete", "default/b@4"),
    ]
    assert threads == {"e5-run"}  # the process loop's own thread: no handler threads
    assert [describe(o) for o in store.list()] == ["default/a@3"]


def test_e5_handler_that_raises_is_logged_with_key_and_store_still_updated(
    runners: list[Runner], caplog: pytest.LogCaptureFixture
) -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a", ns="ns1")])
    called = threading.Event()

    def on_add(obj: Pod, initial: bool) -> None:
        called.set()
        raise KeyError("handler bug")

    store, ctl = new_informer(fake, Pod, 0, ResourceEventHandlerFuncs(on_add=on_add))
    with caplog.at_level(logging.ERROR, logger="kubeinformers"):
        runners.append(Runner(ctl.run))
        assert called.wait(WAIT)
        fake.add(pod("b", ns="ns1"))
        # the next add is processed: the informer went on
        assert wait_for(lambda: store.get_by_key("ns1/b") is not None)
    assert store.get_by_key("ns1/a") is not None
    assert any("ns1/a" in r.getMessage() for r in caplog.records)


def test_e3_l31_watch_reset_relist_delivers_update_and_add_not_initial(
    runners: list[Runner],
) -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("pod-1")])
    rec = Recorder()
    _store, ctl = new_informer(fake, Pod, 0, rec)
    runners.append(Runner(ctl.run))
    assert rec.expect(1).wait(WAIT)
    fake.modify(pod("pod-1", value=1), notify=False)  # events the watch never delivers
    fake.add(pod("pod-2"), notify=False)
    fake.expire(fake.resource_version)
    fake.drop_watches()  # re-watch at the old RV answers 410 -> relist
    assert rec.expect(3).wait(WAIT)
    assert rec.snapshot()[1:] == [
        ("update", "default/pod-1@1", "default/pod-1@2"),
        ("add", "default/pod-2@3", False),
    ]


def test_e5_l33_transforming_informer_sees_only_transformed_objects(
    runners: list[Runner],
) -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("p", value=1)])
    fake.modify(pod("p", value=2))
    calls: list[int] = []

    def transform(obj: Any) -> Any:
        assert isinstance(obj, Pod) and obj.metadata is not None
        calls.append(obj.value)
        meta = obj.metadata.model_copy(update={"resource_version": ""})
        return obj.model_copy(update={"value": obj.value * 100, "metadata": meta})

    seen: list[tuple[str, int, int]] = []
    done = threading.Event()

    def on_add(o: Pod, initial: bool) -> None:
        seen.append(("add", o.value, 0))

    def on_update(old: Pod, new: Pod) -> None:
        seen.append(("update", old.value, new.value))

    def on_delete(o: Pod | DeletedFinalStateUnknown[Pod]) -> None:
        assert isinstance(o, Pod)
        seen.append(("delete", o.value, 0))
        done.set()

    store, ctl = new_informer(
        fake,
        Pod,
        0,
        ResourceEventHandlerFuncs(on_add=on_add, on_update=on_update, on_delete=on_delete),
        transform=transform,
    )
    runners.append(Runner(ctl.run))
    assert wait_for(lambda: len(seen) == 1)
    fake.modify(pod("p", value=3))
    assert wait_for(lambda: len(seen) == 2)
    assert [o.value for o in store.list()] == [300]
    fake.delete(pod("p", value=4))
    assert done.wait(WAIT)
    assert seen == [("add", 200, 0), ("update", 200, 300), ("delete", 400, 0)]
    assert calls == [2, 3, 4]  # each object transformed exactly once
    assert store.list() == []


# -- E6: handler adapters -------------------------------------------------------------------------


def test_e6_funcs_ignore_missing_functions_and_pass_is_in_initial_list() -> None:
    got: list[tuple[str, bool]] = []
    h: ResourceEventHandlerFuncs[Pod] = ResourceEventHandlerFuncs(
        on_add=lambda o, initial: got.append((describe(o), initial))
    )
    h.on_add(pod("a", "1"), True)
    assert h.on_update(pod("a", "1"), pod("a", "2")) is None
    assert h.on_delete(pod("a", "2")) is None
    assert got == [("default/a@1", True)]


def _only(label: str) -> Callable[[Any], bool]:
    def accept(obj: Any) -> bool:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        return bool(obj and obj.metadata.labels and obj.metadata.labels.get("keep") == label)

    return accept


def test_e6_filtering_handler_turns_updates_across_the_filter_into_add_and_delete() -> None:
    rec = Recorder()
    h: FilteringResourceEventHandler[Pod] = FilteringResourceEventHandler(_only("yes"), rec)
    yes1, yes2 = pod("a", "1", keep="yes"), pod("a", "2", keep="yes")
    no1, no2 = pod("a", "3", keep="no"), pod("a", "4", keep="no")
    h.on_update(yes1, yes2)  # both accepted -> update
    h.on_update(no1, yes1)  # only new -> add(new, False)
    h.on_update(yes2, no1)  # only old -> delete(old)
    h.on_update(no1, no2)  # neither -> nothing
    h.on_add(no1, True)
    h.on_add(yes1, True)
    h.on_delete(no2)
    h.on_delete(DeletedFinalStateUnknown("default/a", yes2))  # filter sees the tombstone
    assert rec.snapshot() == [
        ("update", "default/a@1", "default/a@2"),
        ("add", "default/a@1", False),
        ("delete", "default/a@2"),
        ("add", "default/a@1", True),
        ("delete", "T{default/a}"),
    ]


# -- E4: batches (RealFIFO) -----------------------------------------------------------------------


def test_e4_l34_batch_with_a_failing_write_notifies_only_the_successful_items() -> None:
    store = new_store()
    rec = Recorder()
    broken = cast(Pod, object())  # no metadata: its key cannot be computed
    deltas = [
        Delta(DeltaType.ADDED, pod("o1", "1")),
        Delta(DeltaType.ADDED, broken),
        Delta(DeltaType.ADDED, pod("o3", "3")),
    ]
    with pytest.raises(BatchProcessingError) as err:
        process_deltas_in_batch(rec, store, deltas, False)
    assert "not all items in the batch successfully processed" in str(err.value)
    assert "failed to execute (1/3) transactions" in str(err.value)
    assert rec.snapshot() == [("add", "default/o1@1", False), ("add", "default/o3@3", False)]
    assert sorted(store.list_keys()) == ["default/o1", "default/o3"]


def test_e4_batch_writes_the_store_before_any_callback_and_keeps_batch_order() -> None:
    store = new_store(pod("a", "1"))
    seen: list[list[str]] = []

    def snap(*_: Any) -> None:
        seen.append(sorted(describe(o) for o in store.list()))

    handler: ResourceEventHandlerFuncs[Pod] = ResourceEventHandlerFuncs(
        on_add=snap, on_update=snap, on_delete=snap
    )
    rec = Recorder()
    deltas = [
        Delta(DeltaType.DELETED, pod("a", "4")),
        Delta(DeltaType.REPLACED, pod("b", "5")),
        Delta(DeltaType.SYNC, pod("c", "6")),
    ]
    process_deltas_in_batch(handler, store, deltas, True)
    assert seen == [["default/b@5", "default/c@6"]] * 3
    store2 = new_store(pod("a", "1"))
    process_deltas_in_batch(rec, store2, [Delta(DeltaType.UPDATED, pod("a", "2"))], False)
    assert rec.snapshot() == [("update", "default/a@1", "default/a@2")]


def test_e4_l29_relist_through_real_fifo_batches_deletes_first_then_list_order() -> None:
    """L29 exactly: delete pod-3, update pod-1, update pod-2, add pod-4 (RealFIFO, batched)."""
    store = new_store(pod("pod-1", "1"), pod("pod-2", "2", ver="1"), pod("pod-3", "3"))
    fifo: RealFIFO[Pod] = RealFIFO(meta_namespace_key, store)
    fifo.replace([pod("pod-1", "4"), pod("pod-2", "5", ver="2"), pod("pod-4", "6")], "6")
    rec = Recorder()
    batches: list[int] = []

    def batch(deltas: list[Delta[Pod]], initial: bool) -> None:
        batches.append(len(deltas))
        process_deltas_in_batch(rec, store, deltas, initial)

    while len(fifo):
        fifo.pop_batch(batch, lambda d, i: process_deltas(rec, store, d, i))
    assert batches == [4]
    assert rec.snapshot() == [
        ("delete", "T{default/pod-3}"),
        ("update", "default/pod-1@1", "default/pod-1@4"),
        ("update", "default/pod-2@2", "default/pod-2@5"),
        ("add", "default/pod-4@6", True),
    ]


def test_e4_controller_uses_pop_batch_when_a_batch_processor_is_configured(
    runners: list[Runner],
) -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher(pod(f"p{i}") for i in range(10))
    store = new_store()
    fifo: RealFIFO[Pod] = RealFIFO(meta_namespace_key, store)
    sizes: list[int] = []
    done = threading.Event()
    rec = Recorder()

    def batch(deltas: list[Delta[Pod]], initial: bool) -> None:
        sizes.append(len(deltas))
        process_deltas_in_batch(rec, store, deltas, initial)
        if len(store.list()) == 10:
            done.set()

    ctl = Controller(
        ControllerConfig(
            queue=fifo,
            lister_watcher=fake,
            process=lambda d, i: process_deltas(rec, store, d, i),
            process_batch=batch,
        )
    )
    runners.append(Runner(ctl.run))
    assert done.wait(WAIT)
    assert sizes == [10]  # the whole initial list in one batch
    assert ctl.has_synced()
