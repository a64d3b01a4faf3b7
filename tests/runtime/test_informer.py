"""SharedIndexInformer: section F and the shared-informer scenarios L36-L46."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown, object_labels
from kubeinformers.runtime.cache.handlers import ResourceEventHandlerFuncs
from kubeinformers.runtime.cache.informer import (
    InformerStartedError,
    InformerStoppedError,
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
)
from kubeinformers.runtime.clock import FakeClock
from kubeinformers.testing import FakeListerWatcher
from tests.runtime._informer_support import WAIT, Pod, Recorder, Runner, describe, pod, wait_for

HOUR = 3600.0


@pytest.fixture
def runners() -> Iterator[list[Runner]]:
    started: list[Runner] = []
    yield started
    for r in started:
        r.stop()


def start(informer: SharedIndexInformer[Any], runners: list[Runner]) -> Runner:
    runner = Runner(informer.run, name=f"run-{informer.name}")
    runners.append(runner)
    assert wait_for(informer.has_synced), "informer did not sync"
    return runner


def informer_with(
    *objs: Pod, **kwargs: Any
) -> tuple[FakeListerWatcher[Pod], SharedIndexInformer[Pod]]:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher(objs)
    return fake, SharedIndexInformer(fake, Pod, **kwargs)


# -- F1-F3: construction, run, has_synced ---------------------------------------------------------


def test_f1_nothing_runs_until_run_and_cache_is_keyed_by_a2() -> None:
    fake, inf = informer_with(pod("a"))
    rec = Recorder()
    inf.add_event_handler(rec)
    assert fake.list_calls == [] and fake.watch_calls == []
    assert not inf.has_synced()
    assert rec.snapshot() == []
    store = inf.get_store()
    store.add(pod("x", "1"))
    store.delete(DeletedFinalStateUnknown("default/x", None))  # A2: the tombstone's own key
    assert store.list() == []


def test_f2_second_run_warns_and_returns_at_once(
    runners: list[Runner], caplog: pytest.LogCaptureFixture
) -> None:
    _fake, inf = informer_with(pod("a"), name="twice")
    start(inf, runners)
    with caplog.at_level(logging.WARNING, logger="kubeinformers.informer.twice"):
        inf.run(threading.Event())  # returns at once: its stop event is never set
    assert any("already been started" in r.getMessage() for r in caplog.records)
    assert any(r.name == "kubeinformers.informer.twice" for r in caplog.records)


def test_f2_run_returns_after_stop_and_joins_handler_threads(runners: list[Runner]) -> None:
    _fake, inf = informer_with(pod("a"), name="joiner")
    recs = [Recorder() for _ in range(3)]
    for r in recs:
        inf.add_event_handler(r)
    runner = start(inf, runners)
    ours = [t for t in threading.enumerate() if t.name.startswith("kubeinformers-handler-joiner")]
    assert len(ours) == 3
    runner.stop(timeout=2.0)
    assert inf.is_stopped()
    assert not any(t.is_alive() for t in ours)


def test_f3_has_synced_after_initial_list_is_in_the_cache(runners: list[Runner]) -> None:
    _fake, inf = informer_with(*(pod(f"p{i}") for i in range(50)))
    assert not inf.has_synced()
    start(inf, runners)
    assert len(inf.get_store().list()) == 50


# -- F4, F9: registrations ------------------------------------------------------------------------


def test_f4_l42_same_handler_twice_gives_two_independent_registrations(
    runners: list[Runner],
) -> None:
    fake, inf = informer_with(pod("a"))
    rec = Recorder()
    r1 = inf.add_event_handler(rec)
    r2 = inf.add_event_handler(rec)
    assert r1 is not r2
    start(inf, runners)
    assert rec.expect(2).wait(WAIT)  # one add per registration
    inf.remove_event_handler(r1)
    fake.add(pod("b"))
    assert rec.expect(3).wait(WAIT)
    assert wait_for(lambda: r2.has_synced())
    assert rec.snapshot().count(("add", "default/b@2", False)) == 1


def test_f9_l42_remove_foreign_handle_is_an_error_removing_twice_or_elsewhere_is_a_no_op(
    runners: list[Runner],
) -> None:
    _fake, inf = informer_with(pod("a"))
    _fake2, other = informer_with()
    rec = Recorder()
    reg = inf.add_event_handler(rec)
    with pytest.raises(TypeError):
        inf.remove_event_handler(object())  # type: ignore[arg-type]
    other.remove_event_handler(reg)  # registered elsewhere: no effect
    start(inf, runners)
    assert rec.expect(1).wait(WAIT)
    inf.remove_event_handler(reg)
    inf.remove_event_handler(reg)  # idempotent


def test_f9_l45_removed_handler_receives_nothing_more(runners: list[Runner]) -> None:
    fake, inf = informer_with(pod("pod1"))
    removed, kept = Recorder(), Recorder()
    reg = inf.add_event_handler(removed)
    inf.add_event_handler(kept)
    start(inf, runners)
    assert removed.expect(1).wait(WAIT)
    inf.remove_event_handler(reg)
    fake.add(pod("pod2"))
    fake.add(pod("pod3"))
    assert kept.expect(3).wait(WAIT)
    # kept saw pod3, distributed after the removal: removed can no longer get anything.
    assert removed.snapshot() == [("add", "default/pod1@1", True)]


def test_f4_add_event_handler_takes_a_handler_or_functions() -> None:
    _fake, inf = informer_with()
    with pytest.raises(TypeError):
        inf.add_event_handler()
    with pytest.raises(TypeError):
        inf.add_event_handler(Recorder(), on_add=lambda o, i: None)
    reg = inf.add_event_handler(on_delete=lambda o: None)
    assert isinstance(reg.handler, ResourceEventHandlerFuncs)


# -- F5, F6: resync periods -----------------------------------------------------------------------


def test_f5_l38_shorter_handler_period_lowers_check_period_before_start() -> None:
    _fake, inf = informer_with(resync_period=12 * HOUR)
    regs = [inf.add_event_handler(Recorder(), resync_period=0)]
    assert inf.resync_check_period == 12 * HOUR
    regs.append(inf.add_event_handler(Recorder(), resync_period=60))
    assert inf.resync_check_period == 60
    regs.append(inf.add_event_handler(Recorder(), resync_period=55))
    assert inf.resync_check_period == 55
    regs.append(inf.add_event_handler(Recorder(), resync_period=5))
    assert inf.resync_check_period == 5
    assert [r.resync_period for r in regs] == [0, 60, 55, 5]


def test_f5_period_below_one_second_becomes_one_second() -> None:
    _fake, inf = informer_with(resync_period=10)
    reg = inf.add_event_handler(Recorder(), resync_period=0.01)
    assert reg.resync_period == 1.0
    assert inf.resync_check_period == 1.0


def test_f5_after_start_a_shorter_period_is_raised_to_the_check_period(
    runners: list[Runner],
) -> None:
    _fake, inf = informer_with(resync_period=HOUR)
    start(inf, runners)
    reg = inf.add_event_handler(Recorder(), resync_period=5)
    assert reg.resync_period == HOUR
    assert inf.resync_check_period == HOUR
    assert inf.add_event_handler(Recorder()).resync_period == HOUR  # default = informer's


def test_f6_informer_without_resync_never_resyncs_a_handler() -> None:
    _fake, inf = informer_with(resync_period=0)
    reg = inf.add_event_handler(Recorder(), resync_period=30)
    assert reg.resync_period == 0
    assert inf.resync_check_period == 0


def test_f6_g4_resync_delivers_unchanged_objects_to_due_handlers(runners: list[Runner]) -> None:
    """End to end with the reflector's real 1 s resync timer (D15)."""
    _fake, inf = informer_with(pod("a"), resync_period=1.0)
    resynced, never = Recorder(), Recorder()
    inf.add_event_handler(resynced)
    inf.add_event_handler(never, resync_period=0)
    start(inf, runners)
    assert resynced.expect(2).wait(WAIT)
    assert resynced.snapshot()[1] == ("update", "default/a@1", "default/a@1")
    assert never.snapshot() == [("add", "default/a@1", True)]


# -- F7, F14: stop ------------------------------------------------------------------------------


def test_f7_l43_after_stop_add_fails_remove_is_a_no_op_and_state_is_stopped(
    runners: list[Runner],
) -> None:
    _fake, inf = informer_with(pod("a"))
    reg = inf.add_event_handler(Recorder())
    assert not inf.is_stopped()
    runner = start(inf, runners)
    assert not inf.is_stopped()
    runner.stop()
    assert inf.is_stopped()
    with pytest.raises(
        InformerStoppedError,
        match=r"was not added to shared informer because it has stopped already$",
    ):
        inf.add_event_handler(Recorder())
    inf.remove_event_handler(reg)
    with pytest.raises(InformerStartedError):  # started remains true (F14)
        inf.set_transform(None)


def test_f14_store_indexer_and_last_sync_resource_version(runners: list[Runner]) -> None:
    fake, inf = informer_with(pod("a"), pod("b"))
    assert inf.get_store() is inf.get_indexer()
    assert inf.last_sync_resource_version() == ""
    start(inf, runners)
    assert inf.last_sync_resource_version() == "2"
    fake.add(pod("c"))
    assert wait_for(lambda: inf.last_sync_resource_version() == "3")


# -- F8, G6: joining a running informer ------------------------------------------------------------


def test_f8_l44_late_handler_gets_synthetic_initial_adds_then_live_events(
    runners: list[Runner],
) -> None:
    fake, inf = informer_with(pod("pod1"))
    first = Recorder()
    reg1 = inf.add_event_handler(first)
    assert not reg1.has_synced()  # before Run
    start(inf, runners)
    assert wait_for(reg1.has_synced)

    release = threading.Event()
    entered = threading.Event()

    class Blocked(Recorder):
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            entered.set()
            release.wait(WAIT)
            super().on_add(obj, is_in_initial_list)

    late = Blocked()
    reg2 = inf.add_event_handler(late)
    assert entered.wait(WAIT)
    assert not reg2.has_synced()  # still inside the synthetic add of pod1
    fake.add(pod("pod2"))
    release.set()
    assert late.expect(2).wait(WAIT)
    assert wait_for(reg2.has_synced)
    assert late.snapshot() == [("add", "default/pod1@1", True), ("add", "default/pod2@2", False)]


def test_f8_synthetic_adds_are_consistent_with_concurrent_events(runners: list[Runner]) -> None:
    """F8: the joiner's snapshot is taken under the delta lock: every key it later hears about
    is either in its synthetic adds or arrives as an add; nothing is missed or doubled."""
    fake, inf = informer_with(*(pod(f"p{i}") for i in range(100)))
    start(inf, runners)
    writer_done = threading.Event()

    def writer() -> None:
        for i in range(100, 400):
            fake.add(pod(f"p{i}"))
        writer_done.set()

    t = threading.Thread(target=writer)
    t.start()
    late = Recorder()
    inf.add_event_handler(late)
    assert writer_done.wait(WAIT)
    t.join()
    assert late.expect(400).wait(WAIT)
    keys = [e[1].split("@")[0] for e in late.snapshot()]
    assert sorted(keys) == sorted(f"default/p{i}" for i in range(400))
    initial = [e for e in late.snapshot() if e[2] is True]
    assert late.snapshot()[: len(initial)] == initial  # synthetic adds come first


# -- F10: notifications, sync vs update ------------------------------------------------------------


def test_f10_l39_watch_disruption_unchanged_rv_goes_only_to_syncing_handlers(
    runners: list[Runner],
) -> None:
    clock = FakeClock(0.0)
    fake, inf = informer_with(pod("pod1"), pod("pod2"), resync_period=HOUR, clock=clock.now)
    a, b = Recorder(), Recorder()
    inf.add_event_handler(a, resync_period=0)
    inf.add_event_handler(b, resync_period=HOUR)
    start(inf, runners)
    assert a.expect(2).wait(WAIT) and b.expect(2).wait(WAIT)
    fake.modify(pod("pod2", value=1), notify=False)  # changes the watch never reports
    fake.add(pod("pod3"), notify=False)
    clock.set(HOUR)
    # Stands in for the reflector's resync timer firing (D15): flags only B as syncing (G4).
    assert inf._processor.should_resync() is True
    fake.expire(fake.resource_version)
    fake.drop_watches()  # re-watch answers 410 -> relist
    assert a.expect(4).wait(WAIT) and b.expect(5).wait(WAIT)
    assert sorted(a.snapshot()[2:]) == [
        ("add", "default/pod3@4", False),
        ("update", "default/pod2@2", "default/pod2@3"),
    ]
    assert sorted(b.snapshot()[2:]) == [
        ("add", "default/pod3@4", False),
        ("update", "default/pod1@1", "default/pod1@1"),
        ("update", "default/pod2@2", "default/pod2@3"),
    ]


def test_f10_watch_events_become_add_update_delete_for_all_handlers(
    runners: list[Runner],
) -> None:
    fake, inf = informer_with()
    recs = [Recorder(), Recorder()]
    for r in recs:
        inf.add_event_handler(r)
    start(inf, runners)
    fake.add(pod("a"))
    fake.modify(pod("a", value=1))
    fake.delete(pod("a"))
    expected = [
        ("add", "default/a@1", False),
        ("update", "default/a@1", "default/a@2"),
        ("delete", "default/a@3"),
    ]
    for r in recs:
        assert r.expect(3).wait(WAIT)
        assert r.snapshot() == expected


def test_f10_relist_deletion_reaches_handlers_as_tombstone(runners: list[Runner]) -> None:
    fake, inf = informer_with(pod("a"), pod("b"))
    got: list[Pod | DeletedFinalStateUnknown[Pod]] = []
    done = threading.Event()

    def on_delete(obj: Pod | DeletedFinalStateUnknown[Pod]) -> None:
        got.append(obj)
        done.set()

    inf.add_event_handler(on_delete=on_delete)
    start(inf, runners)
    fake.delete(pod("b"), notify=False)
    fake.expire(fake.resource_version)
    fake.drop_watches()
    assert done.wait(WAIT)
    assert len(got) == 1 and isinstance(got[0], DeletedFinalStateUnknown)
    assert got[0].key == "default/b" and describe(got[0].obj) == "default/b@2"


# -- F11, F12: transform and watch error handler ---------------------------------------------------


def test_f11_l41_transform_set_before_start_is_applied_to_everything(
    runners: list[Runner],
) -> None:
    _fake, inf = informer_with(pod("pod1"), pod("pod2"))

    def upper(obj: Any) -> Any:
        meta = obj.metadata.model_copy(update={"name": obj.metadata.name.upper()})
        return obj.model_copy(update={"metadata": meta})

    inf.set_transform(lambda o: o)  # last call wins
    inf.set_transform(upper)
    rec = Recorder()
    inf.add_event_handler(rec)
    start(inf, runners)
    assert rec.expect(2).wait(WAIT)
    assert sorted(e[1] for e in rec.snapshot()) == ["default/POD1@1", "default/POD2@2"]
    assert sorted(inf.get_store().list_keys()) == ["default/POD1", "default/POD2"]
    with pytest.raises(InformerStartedError, match="informer has already started"):
        inf.set_transform(upper)
    with pytest.raises(InformerStartedError, match="informer has already started"):
        inf.set_watch_error_handler(lambda r, e: None)


def test_f11_transform_is_not_applied_to_resynced_objects(runners: list[Runner]) -> None:
    _fake, inf = informer_with(pod("a"), pod("b"), resync_period=1.0)
    calls: list[str] = []
    lock = threading.Lock()

    def counting(obj: Any) -> Any:
        with lock:
            calls.append(describe(obj))
        return obj

    inf.set_transform(counting)
    rec = Recorder()
    inf.add_event_handler(rec)
    start(inf, runners)
    assert rec.expect(4).wait(WAIT)  # 2 adds, then the 1 s resync's 2 sync updates
    assert sorted(e[0] for e in rec.snapshot()[2:]) == ["update", "update"]
    assert sorted(calls) == ["default/a@1", "default/b@2"]  # only the listed objects


def test_f12_l40_watch_error_handler_gets_list_errors(runners: list[Runner]) -> None:
    fake, inf = informer_with(pod("a"))
    fake.fail_next_list(ApiStatusError(403, "Forbidden", "Access Denied"), times=1)
    errors: list[BaseException] = []
    got = threading.Event()

    def on_error(reflector: Any, err: BaseException) -> None:
        errors.append(err)
        got.set()

    inf.set_watch_error_handler(on_error)
    runners.append(Runner(inf.run))
    assert got.wait(WAIT)
    assert "Access Denied" in str(errors[0])
    assert wait_for(inf.has_synced)  # the next attempt (after backoff) succeeds


# -- F13: indexers --------------------------------------------------------------------------------


def _label_index(obj: Any) -> list[str]:
    value = object_labels(obj).get("app")
    return [value] if value else []


def test_f13_l36_indexers_before_and_after_start(runners: list[Runner]) -> None:
    fake, inf = informer_with(
        pod("pod1", app="a"), pod("pod2", app="b"), indexers={"labels": _label_index}
    )
    start(inf, runners)
    idx = inf.get_indexer()
    assert [describe(o) for o in idx.by_index("labels", "a")] == ["default/pod1@1"]
    fake.add(pod("pod3", app="a"))
    assert wait_for(lambda: len(idx.by_index("labels", "a")) == 2)
    inf.add_indexers({"by_name": lambda o: [o.metadata.name]})
    assert [describe(o) for o in idx.by_index("by_name", "pod2")] == ["default/pod2@2"]
    assert sorted(idx.list_index_func_values("labels")) == ["a", "b"]


def test_f13_add_indexers_after_stop_fails(runners: list[Runner]) -> None:
    _fake, inf = informer_with()
    runner = start(inf, runners)
    runner.stop()
    with pytest.raises(
        InformerStoppedError, match="indexer was not added because it has stopped already"
    ):
        inf.add_indexers({"x": _label_index})


# -- G7 at informer level, coroutine handlers -----------------------------------------------------


def test_l46_handlers_that_always_raise_are_logged_per_object_and_never_sync(
    runners: list[Runner], caplog: pytest.LogCaptureFixture
) -> None:
    """L46 without the 1 s pause after each failure (Python logs and goes on)."""
    _fake, inf = informer_with(*(pod(f"p{i}") for i in range(5)), name="panics")
    calls = Recorder()

    def boom(obj: Pod, initial: bool) -> None:
        calls.on_add(obj, initial)
        raise RuntimeError("handler always fails")

    with caplog.at_level(logging.ERROR, logger="kubeinformers.informer.panics"):
        regs = [inf.add_event_handler(on_add=boom) for _ in range(2)]
        start(inf, runners)
        assert calls.expect(10).wait(WAIT)
        assert wait_for(lambda: len([r for r in caplog.records if r.exc_info]) == 10)
    for i in range(5):
        assert sum(f"default/p{i}" in r.getMessage() for r in caplog.records) == 2
    assert inf.has_synced()
    assert not any(r.has_synced() for r in regs)


def test_coroutine_handler_without_loop_is_rejected() -> None:
    _fake, inf = informer_with()

    async def on_add(obj: Pod, initial: bool) -> None: ...

    with pytest.raises(ValueError, match="loop="):
        inf.add_event_handler(on_add=on_add)


def test_coroutine_handlers_run_on_the_given_loop(runners: list[Runner]) -> None:
    fake, inf = informer_with(pod("a"))
    loop = asyncio.new_event_loop()
    loop_thread = threading.Thread(target=loop.run_forever, name="test-loop")
    loop_thread.start()
    try:
        seen: list[str] = []
        done = threading.Event()

        async def on_add(obj: Pod, initial: bool) -> None:
            await asyncio.sleep(0)
            seen.append(describe(obj))
            if len(seen) == 2:
                done.set()

        reg = inf.add_event_handler(on_add=on_add, loop=loop)
        start(inf, runners)
        fake.add(pod("b"))
        assert done.wait(WAIT)
        assert seen == ["default/a@1", "default/b@2"]
        assert isinstance(reg, ResourceEventHandlerRegistration)
        assert wait_for(reg.has_synced)
    finally:
        for r in runners:
            r.stop()
        loop.call_soon_threadsafe(loop.stop)
        loop_thread.join(WAIT)
        loop.close()


# -- queue="ordered": the RealFIFO (C-2) ------------------------------------------------------------


def test_ordered_queue_delivers_across_keys_in_arrival_order(runners: list[Runner]) -> None:
    """L21 through the informer: foo, bar, foo, foo, zab reach handlers in exactly that order
    (the DeltaFIFO would hand out foo's three deltas together)."""
    fake, inf = informer_with(queue="ordered")
    rec = Recorder()
    inf.add_event_handler(rec)
    start(inf, runners)
    fake.add(pod("foo"))
    fake.add(pod("bar"))
    fake.modify(pod("foo", value=1))
    fake.modify(pod("foo", value=2))
    fake.add(pod("zab"))
    assert rec.expect(5).wait(WAIT)
    assert rec.snapshot() == [
        ("add", "default/foo@1", False),
        ("add", "default/bar@2", False),
        ("update", "default/foo@1", "default/foo@3"),
        ("update", "default/foo@3", "default/foo@4"),
        ("add", "default/zab@5", False),
    ]


def _relist_after_changes_unseen_by_the_watch(fake: FakeListerWatcher[Pod]) -> None:
    """pod-1 modified, pod-3 deleted, pod-4 added without watch events, then a 410 and a
    dropped watch: the informer relists."""
    fake.modify(pod("pod-1", value=1), notify=False)
    fake.delete(pod("pod-3"), notify=False)
    fake.add(pod("pod-4"), notify=False)
    fake.expire(fake.resource_version)
    fake.drop_watches()


# What both RealFIFO modes deliver for that relist: the tombstone first, then list order.
RELIST_WITH_DELETIONS_FIRST = [
    ("delete", "T{default/pod-3}"),
    ("update", "default/pod-1@1", "default/pod-1@4"),
    ("update", "default/pod-2@2", "default/pod-2@2"),
    ("add", "default/pod-4@6", False),
]


def test_ordered_queue_relist_sends_tombstones_before_relisted_items(
    runners: list[Runner],
) -> None:
    fake, inf = informer_with(pod("pod-1"), pod("pod-2"), pod("pod-3"), queue="ordered")
    rec = Recorder()
    inf.add_event_handler(rec)
    start(inf, runners)
    assert rec.expect(3).wait(WAIT)
    _relist_after_changes_unseen_by_the_watch(fake)
    assert rec.expect(7).wait(WAIT)
    assert rec.snapshot()[3:] == RELIST_WITH_DELETIONS_FIRST


# -- queue="atomic": the RealFIFO in atomic mode (C-3), client-go v0.36's default -------------------


def test_atomic_queue_relist_swaps_the_store_then_deletes_then_updates_in_list_order(
    runners: list[Runner],
) -> None:
    """L29 through the informer (C3.4): every callback of the relist sees the relisted store."""
    fake, inf = informer_with(pod("pod-1"), pod("pod-2"), pod("pod-3"), queue="atomic")
    store_at_callback: list[list[str]] = []
    rec = Recorder(
        on_event=lambda _e: store_at_callback.append(
            sorted(describe(o) for o in inf.get_store().list())
        )
    )
    inf.add_event_handler(rec)
    start(inf, runners)
    assert rec.expect(3).wait(WAIT)
    assert rec.snapshot() == [
        ("add", "default/pod-1@1", True),
        ("add", "default/pod-2@2", True),
        ("add", "default/pod-3@3", True),
    ]
    _relist_after_changes_unseen_by_the_watch(fake)
    assert rec.expect(7).wait(WAIT)
    assert rec.snapshot()[3:] == RELIST_WITH_DELETIONS_FIRST
    relisted = ["default/pod-1@4", "default/pod-2@2", "default/pod-4@6"]
    assert store_at_callback[3:] == [relisted] * 4


def test_atomic_queue_store_tracks_the_version_of_events_and_bookmarks(
    runners: list[Runner],
) -> None:
    """B15 / L32: with the atomic queue the store's last_store_sync_resource_version follows
    the relist, each event and each bookmark; other queues leave it empty."""
    fake: FakeListerWatcher[Pod] = FakeListerWatcher(
        [pod("pod-1")],
        bookmark_factory=lambda rv, ann: Pod.model_validate(
            {"metadata": {"resourceVersion": rv, "annotations": ann}}
        ),
    )
    inf: SharedIndexInformer[Pod] = SharedIndexInformer(fake, Pod, queue="atomic")
    rec = Recorder()
    inf.add_event_handler(rec)
    start(inf, runners)
    store = inf.get_indexer()
    assert wait_for(lambda: store.last_store_sync_resource_version() == "1")
    fake.modify(pod("pod-1", value=1))
    assert wait_for(lambda: store.last_store_sync_resource_version() == "2")
    fake.add(pod("other"), notify=False)  # moves the fake's version on without an event
    fake.send_bookmark()
    assert wait_for(lambda: store.last_store_sync_resource_version() == "3")
    fake.delete(pod("pod-1"))
    assert wait_for(lambda: store.last_store_sync_resource_version() == "4")
    assert [e[0] for e in rec.snapshot()] == ["add", "update", "delete"]

    _fake, delta = informer_with(pod("pod-1"), queue="delta")
    start(delta, runners)
    assert delta.get_indexer().last_store_sync_resource_version() == ""


def test_queue_kind_is_validated() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher()
    with pytest.raises(ValueError, match="ordered"):
        SharedIndexInformer(fake, Pod, queue="fifo")  # type: ignore[arg-type]
