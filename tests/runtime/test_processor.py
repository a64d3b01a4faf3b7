"""SharedProcessor and ProcessorListener: section G of the client-go rules."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kubeinformers.runtime.cache.processor import (
    ADD,
    DELETE,
    UPDATE,
    ProcessorListener,
    SharedProcessor,
    determine_resync_period,
)
from tests.runtime._informer_support import WAIT, Recorder, pod


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def listener(
    handler: Any,
    period: float = 0.0,
    now: float = 0.0,
    synced: bool = True,
    loop: asyncio.AbstractEventLoop | None = None,
) -> ProcessorListener[Any]:
    return ProcessorListener(
        handler, period, period, now, upstream_has_synced=lambda: synced, loop=loop
    )


@pytest.fixture
def processor() -> Iterator[SharedProcessor[Any]]:
    p: SharedProcessor[Any] = SharedProcessor(name="test")
    yield p
    p.stop()
    p.join()


def test_g1_slow_handler_does_not_block_other_handlers_or_distribute(
    processor: SharedProcessor[Any],
) -> None:
    release = threading.Event()
    blocked_started = threading.Event()

    class Blocked(Recorder):
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            blocked_started.set()
            release.wait(WAIT)
            super().on_add(obj, is_in_initial_list)

    slow, fast = Blocked(), Recorder()
    slow_l, fast_l = listener(slow), listener(fast)
    processor.add_listener(slow_l)
    processor.add_listener(fast_l)
    processor.start()
    done = fast.expect(2000)
    for i in range(2000):  # far beyond any fixed-size buffer: G1 buffers are unbounded
        processor.distribute((ADD, pod(f"p{i}", str(i)), False), False)
    assert done.wait(WAIT), "the fast handler was held up by the slow one"
    assert blocked_started.wait(WAIT)
    assert slow.snapshot() == []
    assert slow_l.pending() == 1999  # one in flight, the rest buffered
    release.set()
    assert slow.expect(2000).wait(WAIT)


def test_g2_notifications_of_one_listener_arrive_in_order(processor: SharedProcessor[Any]) -> None:
    recs = [Recorder() for _ in range(3)]
    for r in recs:
        processor.add_listener(listener(r))
    processor.start()
    sent: list[tuple[Any, ...]] = []
    for i in range(3000):
        p = pod(f"p{i % 7}", str(i))
        kind = (ADD, UPDATE, DELETE)[i % 3]
        if kind == ADD:
            processor.distribute((ADD, p, False), False)
            sent.append(("add", f"default/p{i % 7}@{i}", False))
        elif kind == UPDATE:
            processor.distribute((UPDATE, p, p), False)
            sent.append(("update", f"default/p{i % 7}@{i}", f"default/p{i % 7}@{i}"))
        else:
            processor.distribute((DELETE, p, None), False)
            sent.append(("delete", f"default/p{i % 7}@{i}"))
    for r in recs:
        assert r.expect(3000).wait(WAIT)
        assert r.snapshot() == sent


def test_g2_callbacks_of_one_listener_never_overlap(processor: SharedProcessor[Any]) -> None:
    active = 0
    max_active = 0
    lock = threading.Lock()

    def track(_: tuple[Any, ...]) -> None:
        nonlocal active, max_active
        with lock:
            active += 1
            max_active = max(max_active, active)
        with lock:
            active -= 1

    rec = Recorder(on_event=track)
    processor.add_listener(listener(rec))
    processor.start()
    for i in range(500):
        processor.distribute((ADD, pod(f"p{i}"), False), False)
    assert rec.expect(500).wait(WAIT)
    assert max_active == 1


def test_g3_distribute_before_start_is_delivered_after_start() -> None:
    p: SharedProcessor[Any] = SharedProcessor()
    rec = Recorder()
    p.add_listener(listener(rec))
    p.distribute((ADD, pod("early", "1"), True), False)
    assert rec.snapshot() == []
    p.start()
    assert rec.expect(1).wait(WAIT)
    assert rec.snapshot() == [("add", "default/early@1", True)]
    p.stop()
    p.join()


def test_g3_after_stop_distribute_delivers_nothing() -> None:
    p: SharedProcessor[Any] = SharedProcessor()
    rec = Recorder()
    lst = listener(rec)
    p.add_listener(lst)
    p.start()
    p.stop()
    p.join()
    p.distribute((ADD, pod("late", "1"), False), False)
    assert lst.pending() == 0
    assert rec.snapshot() == []


def test_g4_flags_start_syncing_and_sync_reaches_everyone_until_first_check() -> None:
    p: SharedProcessor[Any] = SharedProcessor(clock=FakeClock())
    recs = [Recorder(), Recorder()]
    p.add_listener(listener(recs[0], period=0))
    p.add_listener(listener(recs[1], period=5, now=1000.0))
    p.start()
    obj = pod("a", "1")
    p.distribute((UPDATE, obj, obj), True)
    for r in recs:
        assert r.expect(1).wait(WAIT)
    p.stop()
    p.join()


def test_g4_l37_resync_reaches_only_due_listeners() -> None:
    """L37: handlers with periods 0, 2 s, 3 s; at t=2 only the 2 s one, at t=3 only the 3 s one."""
    clock = FakeClock(0.0)
    p: SharedProcessor[Any] = SharedProcessor(clock=clock)
    recs = {period: Recorder() for period in (0, 2, 3)}
    for period, rec in recs.items():
        p.add_listener(listener(rec, period=float(period), now=0.0))
    p.start()
    obj = pod("pod1", "1")

    def resync_round() -> None:
        if p.should_resync():
            p.distribute((UPDATE, obj, obj), True)

    clock.now = 1.0
    assert p.should_resync() is False  # G4: no listener due -> all flags false
    p.distribute((UPDATE, obj, obj), True)
    clock.now = 2.0
    resync_round()
    clock.now = 3.0
    resync_round()
    marker = pod("marker", "9")
    p.distribute((ADD, marker, False), False)  # everyone gets it; it orders after the syncs
    for rec in recs.values():
        assert rec.expect(1).wait(WAIT)
    assert recs[2].expect(2).wait(WAIT)
    assert recs[3].expect(2).wait(WAIT)
    sync = ("update", "default/pod1@1", "default/pod1@1")
    add = ("add", "default/marker@9", False)
    assert recs[0].snapshot() == [add]
    assert recs[2].snapshot() == [sync, add]
    assert recs[3].snapshot() == [sync, add]
    p.stop()
    p.join()


def test_g4_due_listener_next_resync_is_now_plus_period() -> None:
    clock = FakeClock(0.0)
    p: SharedProcessor[Any] = SharedProcessor(clock=clock)
    lst = listener(Recorder(), period=2.0, now=0.0)
    p.add_listener(lst)
    clock.now = 2.5
    assert p.should_resync() is True
    assert lst.next_resync == 4.5  # now + period, measured from the check time
    clock.now = 4.0
    assert p.should_resync() is False
    clock.now = 4.5
    assert p.should_resync() is True


def test_g5_initial_next_resync_is_registration_time_plus_period() -> None:
    lst = listener(Recorder(), period=30.0, now=100.0)
    assert lst.next_resync == 130.0
    assert not lst.should_resync(129.9)
    assert lst.should_resync(130.0)


def test_f6_determine_resync_period() -> None:
    assert determine_resync_period(0, 10) == 0
    assert determine_resync_period(5, 0) == 0  # an informer that does not resync
    assert determine_resync_period(5, 10) == 10
    assert determine_resync_period(20, 10) == 20


def test_g6_registration_synced_only_after_initial_adds_returned(
    processor: SharedProcessor[Any],
) -> None:
    upstream = threading.Event()
    release = threading.Event()
    entered = threading.Event()

    class Blocking(Recorder):
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            entered.set()
            release.wait(WAIT)
            super().on_add(obj, is_in_initial_list)

    rec = Blocking()
    lst: ProcessorListener[Any] = ProcessorListener(
        rec, 0, 0, 0, upstream_has_synced=upstream.is_set
    )
    processor.add_listener(lst)
    processor.distribute((ADD, pod("a", "1"), True), False)
    processor.distribute((ADD, pod("b", "2"), True), False)
    processor.start()
    assert entered.wait(WAIT)
    upstream.set()
    assert not lst.has_synced()  # informer synced, but the handler is still in on_add
    release.set()
    assert rec.expect(2).wait(WAIT)
    # The counter drops right after on_add returns, before the next notification is delivered.
    processor.distribute((ADD, pod("c", "3"), False), False)  # not initial: not counted
    assert rec.expect(3).wait(WAIT)
    assert lst.has_synced()


def test_g6_not_synced_before_upstream_even_with_no_adds() -> None:
    lst = listener(Recorder(), synced=False)
    assert not lst.has_synced()
    assert listener(Recorder(), synced=True).has_synced()


def test_g7_handler_that_raises_is_logged_with_key_and_listener_goes_on(
    processor: SharedProcessor[Any], caplog: pytest.LogCaptureFixture
) -> None:
    class Flaky(Recorder):
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            if obj.metadata.name == "bad":
                raise ValueError("boom")
            super().on_add(obj, is_in_initial_list)

    rec = Flaky()
    lst = listener(rec)
    processor.add_listener(lst)
    processor.start()
    with caplog.at_level(logging.ERROR, logger="kubeinformers"):
        processor.distribute((ADD, pod("bad", "1", ns="ns1"), True), False)
        processor.distribute((ADD, pod("good", "2"), True), False)
        assert rec.expect(1).wait(WAIT)
    assert rec.snapshot() == [("add", "default/good@2", True)]
    messages = [r.getMessage() for r in caplog.records]
    assert any("ns1/bad" in m and "add" in m for m in messages), messages
    assert any(r.exc_info and "boom" in str(r.exc_info[1]) for r in caplog.records)
    # G7: the initial add that raised never counts as finished, so never synced.
    assert not lst.has_synced()


def test_g8_close_drops_buffered_notifications_and_ends_the_thread(
    processor: SharedProcessor[Any],
) -> None:
    release = threading.Event()
    entered = threading.Event()

    class Blocking(Recorder):
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            entered.set()
            release.wait(WAIT)
            super().on_add(obj, is_in_initial_list)

    rec = Blocking()
    lst = listener(rec)
    processor.add_listener(lst)
    processor.start()
    for i in range(10):
        processor.distribute((ADD, pod(f"p{i}", str(i)), False), False)
    assert entered.wait(WAIT)
    assert processor.remove_listener(lst) is True
    assert processor.remove_listener(lst) is False  # already removed
    assert lst.pending() == 0
    processor.distribute((ADD, pod("after"), False), False)
    release.set()
    assert lst.join(WAIT)
    assert rec.snapshot() == [("add", "default/p0@0", False)]  # the in-flight one only


def test_g8_stop_closes_every_listener_and_clears_the_set() -> None:
    p: SharedProcessor[Any] = SharedProcessor()
    lsts = [listener(Recorder()) for _ in range(4)]
    for lst in lsts:
        p.add_listener(lst)
    p.start()
    p.stop()
    p.join()
    assert p.listeners() == []
    assert all(lst.closed and lst.join(0) for lst in lsts)


class _LoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="test-loop")
        self.thread.start()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        self.loop.close()


def test_g2_coroutine_handlers_run_on_the_given_loop_one_at_a_time_in_order(
    processor: SharedProcessor[Any],
) -> None:
    lt = _LoopThread()
    try:
        seen: list[int] = []
        running = 0
        max_running = 0
        loops: set[int] = set()
        finished = threading.Event()

        class AsyncHandler:
            async def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
                nonlocal running, max_running
                loops.add(id(asyncio.get_running_loop()))
                running += 1
                max_running = max(max_running, running)
                await asyncio.sleep(0)  # yield: another callback must not start meanwhile
                seen.append(obj.value)
                running -= 1
                if len(seen) == 200:
                    finished.set()

            async def on_update(self, old: Any, new: Any) -> None: ...

            async def on_delete(self, obj: Any) -> None: ...

        processor.add_listener(listener(AsyncHandler(), loop=lt.loop))
        processor.start()
        for i in range(200):
            processor.distribute((ADD, pod(f"p{i}", value=i), False), False)
        assert finished.wait(WAIT)
        assert seen == list(range(200))
        assert max_running == 1
        assert loops == {id(lt.loop)}
    finally:
        processor.stop()
        processor.join()
        lt.close()


def test_g7_coroutine_handler_that_raises_is_logged_and_listener_goes_on(
    processor: SharedProcessor[Any], caplog: pytest.LogCaptureFixture
) -> None:
    lt = _LoopThread()
    try:
        rec = Recorder()

        class AsyncHandler:
            async def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
                if obj.metadata.name == "bad":
                    raise RuntimeError("async boom")
                rec.on_add(obj, is_in_initial_list)

            def on_update(self, old: Any, new: Any) -> None: ...

            def on_delete(self, obj: Any) -> None: ...

        processor.add_listener(listener(AsyncHandler(), loop=lt.loop))
        processor.start()
        with caplog.at_level(logging.ERROR, logger="kubeinformers"):
            processor.distribute((ADD, pod("bad", "1"), False), False)
            processor.distribute((ADD, pod("good", "2"), False), False)
            assert rec.expect(1).wait(WAIT)
        assert any("default/bad" in r.getMessage() for r in caplog.records)
    finally:
        processor.stop()
        processor.join()
        lt.close()


def test_g2_a_listener_that_cannot_buffer_a_notification_costs_the_others_nothing(
    processor: SharedProcessor[Any], caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(ProcessorListener[Any]):
        def add(self, notification: Any, now: float | None = None) -> None:
            raise RuntimeError("a bug in one listener's buffering")

    first, last = Recorder(), Recorder()
    processor.add_listener(listener(first))
    processor.add_listener(Broken(Recorder(), 0.0, 0.0, 0.0, upstream_has_synced=lambda: True))
    processor.add_listener(listener(last))
    processor.start()
    done = [first.expect(1), last.expect(1)]
    with caplog.at_level(logging.ERROR, logger="kubeinformers.processor"):
        processor.distribute((ADD, pod("web", "1"), False), False)  # raises nothing
    assert all(d.wait(WAIT) for d in done), "a handler after the broken one missed it"
    assert "could not buffer a notification of default/web" in caplog.text


def test_g14_a_coroutine_handler_whose_loop_has_closed_says_so_once(
    processor: SharedProcessor[Any],
) -> None:
    """G14: the loop a coroutine handler was registered with has closed (the factory outlived
    `asyncio.run`). Each notification failed with a bare "Event loop is closed" and a
    "coroutine ... was never awaited" warning; then each was an ERROR with a traceback, a
    flood for a busy informer. Now the first says the loop has closed and what to do, the
    rest go to DEBUG, every one is counted, and no coroutine is left un-awaited."""
    import gc
    import warnings

    loop = asyncio.new_event_loop()
    loop.close()
    records: list[logging.LogRecord] = []
    all_dropped = threading.Event()

    class AsyncHandler:
        async def on_add(self, obj: Any, is_in_initial_list: bool) -> None: ...

        def on_update(self, old: Any, new: Any) -> None: ...

        def on_delete(self, obj: Any) -> None: ...

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "dropped the" in record.getMessage():
                records.append(record)
                if len(records) == 3:
                    all_dropped.set()

    keep = Keep(logging.DEBUG)
    logger = logging.getLogger("kubeinformers")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(keep)
    registered = listener(AsyncHandler(), loop=loop)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            processor.add_listener(registered)
            processor.start()
            for name in ("late", "later", "latest"):
                processor.distribute((ADD, pod(name, "1"), False), False)
            assert all_dropped.wait(WAIT), [r.getMessage() for r in records]
            processor.stop()
            processor.join()
            gc.collect()
    finally:
        logger.removeHandler(keep)
        logger.setLevel(level)
    assert [r.levelno for r in records] == [logging.ERROR, logging.DEBUG, logging.DEBUG]
    first = records[0].getMessage()
    assert "default/late" in first and "has closed" in first and records[0].exc_info is None
    assert registered.errors == 3
    assert not [w for w in caught if "never awaited" in str(w.message)], caught
