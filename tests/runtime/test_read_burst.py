"""K14: first reads of lazy objects hold the cyclic collector off while they keep coming."""

from __future__ import annotations

import gc
import types
from collections.abc import Iterator

import pytest

from kubeinformers.runtime.codec import gc_pause
from kubeinformers.runtime.codec.gc_pause import end_read_burst
from kubeinformers.runtime.codec.lazy import LazyModelBuilder, is_lazy
from tests.runtime.test_lazy import Pod, pod_json
from tests.support.waiting import eventually


def _collections() -> list[int]:
    return [generation["collections"] for generation in gc.get_stats()]


@pytest.fixture(autouse=True)
def no_burst_left() -> Iterator[None]:
    end_read_burst()
    assert gc.isenabled()
    yield
    end_read_burst()
    gc.enable()


def test_k14_first_reads_hold_the_collector_off_until_they_stop() -> None:
    builder = LazyModelBuilder(Pod)
    pods = [builder.build(pod_json(f"p{i}")) for i in range(20)]
    assert gc.isenabled()  # building lazy objects reads nothing
    for pod in pods:
        assert pod.spec is not None
        assert not gc.isenabled()  # held while reads keep coming
    assert all(is_lazy(p) for p in pods)
    assert eventually(gc.isenabled)  # back on once they stop (READ_QUIET after the last)


def test_k16_a_big_burst_freezes_its_survivors_untraversed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not gc_pause._FREEZE_PROMOTES:
        pytest.skip("free-threaded build: a big pause ends with one full collection instead")
    monkeypatch.setattr(gc_pause, "_COLLECT_AFTER_YOUNG", 500)
    builder = LazyModelBuilder(Pod)
    pods = [builder.build(pod_json(f"p{i}")) for i in range(300)]
    before = _collections()
    try:
        specs = [p.spec for p in pods]
        end_read_burst()
        assert _collections() == before  # no collection of any generation ran
        assert gc.isenabled() and gc.get_freeze_count() > 0
        tracked = {id(o) for o in gc.get_objects()}  # generations 0-2, not the frozen ones
        assert not any(id(s) in tracked for s in specs[::50])
        del pods[:], specs  # frozen objects are still freed by reference counting (K9)
    finally:
        gc.unfreeze()


def test_k16_frozen_cached_objects_read_compare_and_are_freed_by_reference_counting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import copy
    import pickle
    import weakref

    if not gc_pause._FREEZE_PROMOTES:
        pytest.skip("free-threaded build: a big pause ends with one full collection instead")
    monkeypatch.setattr(gc_pause, "_COLLECT_AFTER_YOUNG", 100)
    builder = LazyModelBuilder(Pod)
    pods = [builder.build(pod_json(f"p{i}")) for i in range(100)]
    try:
        specs = [p.spec for p in pods]
        end_read_burst()
        assert gc.get_freeze_count() > 0
        eager = Pod.model_validate_json(pod_json("p7"))
        assert pods[7] == eager and copy.deepcopy(pods[7]) == eager
        assert pickle.loads(pickle.dumps(pods[7])) == eager
        gone = weakref.ref(specs[3])
        del pods[3], specs[3]
        assert gone() is None  # no collection needed: no cycle holds it
    finally:
        gc.unfreeze()


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def _burst_on_a_manual_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[_Clock, gc_pause._ReadBurst]:
    """A read burst whose time is `clock.now` and whose checks run only when called."""
    clock = _Clock()
    monkeypatch.setattr(gc_pause, "time", clock)
    monkeypatch.setattr(gc_pause._ReadBurst, "_check_in", lambda self, delay: None)
    return clock, gc_pause._ReadBurst()


def test_k16_the_tail_of_a_long_burst_cut_at_read_longest_is_frozen_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first read of the whole cache longer than READ_LONGEST is held in pieces; the last
    piece continues a big one, so its survivors are frozen however few they are."""
    if not gc_pause._FREEZE_PROMOTES:
        pytest.skip("free-threaded build: a big pause ends with one full collection instead")
    monkeypatch.setattr(gc_pause, "_COLLECT_AFTER_YOUNG", 500)
    clock, burst = _burst_on_a_manual_clock(monkeypatch)
    kept: list[list[int]] = []
    try:
        burst.touch()
        kept.extend([i] for i in range(1000))  # a big piece...
        clock.now += gc_pause.READ_LONGEST  # ...cut while reads keep coming
        burst.touch()
        clock.now += gc_pause.READ_QUIET / 2
        burst._check()
        assert gc.isenabled() and gc.get_freeze_count() >= 1000
        burst.touch()  # the tail: a few reads
        tail = [[i] for i in range(10)]
        clock.now += gc_pause.READ_QUIET * 2
        burst._check()
        assert gc.isenabled()
        tracked = {id(o) for o in gc.get_objects()}
        assert not any(id(o) in tracked for o in tail)  # frozen, though only a few
        # A small burst that continues nothing is left to the automatic collections.
        clock.now += 60
        burst.touch()
        late = [[i] for i in range(10)]
        clock.now += gc_pause.READ_QUIET * 2
        burst._check()
        assert any(id(o) in {id(x) for x in gc.get_objects()} for o in late)
    finally:
        burst.end()
        gc.unfreeze()


def test_k14_a_slow_burst_is_held_until_it_is_big_and_then_frozen_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a slow or busy machine a burst builds fewer objects per second: a hold not big yet at
    READ_LONGEST while reads keep coming goes on until it is, and then freezes (K16), instead
    of ending small again and again, its survivors left to every full collection after."""
    if not gc_pause._FREEZE_PROMOTES:
        pytest.skip("free-threaded build: a big pause ends with one full collection instead")
    monkeypatch.setattr(gc_pause, "_COLLECT_AFTER_YOUNG", 2000)
    clock, burst = _burst_on_a_manual_clock(monkeypatch)
    kept: list[list[int]] = []
    try:
        burst.touch()
        kept.extend([i] for i in range(200))  # slow reads: not big at READ_LONGEST...
        clock.now += gc_pause.READ_LONGEST
        burst.touch()
        burst._check()
        assert not gc.isenabled()  # ...so the hold goes on while they keep coming
        kept.extend([i] for i in range(2000))
        clock.now += gc_pause.READ_QUIET / 2
        burst.touch()
        burst._check()  # big now: cut, and its survivors frozen, the first ones too
        assert gc.isenabled()
        tracked = {id(o) for o in gc.get_objects()}
        assert not any(id(o) in tracked for o in kept[:200:20] + kept[-10:])
    finally:
        burst.end()
        gc.unfreeze()


def test_k14_a_steady_stream_of_reads_is_held_at_most_read_longest_growing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reads that never stop but build few objects (a busy controller's events) never become
    a big burst: the collector is back on after READ_LONGEST_GROWING, nothing frozen."""
    clock, burst = _burst_on_a_manual_clock(monkeypatch)
    frozen = gc.get_freeze_count()
    try:
        burst.touch()
        while clock.now - 1000.0 < gc_pause.READ_LONGEST_GROWING - gc_pause.READ_QUIET:
            clock.now += gc_pause.READ_QUIET / 2
            burst.touch()
            burst._check()
            assert not gc.isenabled()
        clock.now += gc_pause.READ_QUIET
        burst.touch()
        burst._check()
        assert gc.isenabled() and gc.get_freeze_count() == frozen
        burst.touch()  # the stream goes on: a new hold, continuing nothing
        assert not gc.isenabled()
    finally:
        burst.end()


def test_k16_a_read_arriving_while_a_cut_burst_is_released_continues_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The burst's next hold continues a big one cut while reads kept coming even when its
    first read comes while the cut one is still being released (its freeze, its trim)."""
    if not gc_pause._FREEZE_PROMOTES:
        pytest.skip("free-threaded build: a big pause ends with one full collection instead")
    monkeypatch.setattr(gc_pause, "_COLLECT_AFTER_YOUNG", 500)
    clock, burst = _burst_on_a_manual_clock(monkeypatch)
    release = gc_pause._GcPause.release
    during: list[bool] = []

    def release_while_a_read_arrives(pause: gc_pause._GcPause) -> bool:
        was_big = release(pause)
        if not during:
            during.append(True)
            burst.touch()  # another thread's read, before the releasing thread goes on
        return was_big

    monkeypatch.setattr(gc_pause._GcPause, "release", release_while_a_read_arrives)
    kept: list[list[int]] = []
    try:
        burst.touch()
        kept.extend([i] for i in range(1000))
        clock.now += gc_pause.READ_LONGEST
        burst.touch()
        burst._check()  # cut while reads keep coming; the read above arrives during it
        assert during and not gc.isenabled()
        tail = [[i] for i in range(10)]
        clock.now += gc_pause.READ_QUIET * 2
        burst._check()
        tracked = {id(o) for o in gc.get_objects()}
        assert not any(id(o) in tracked for o in tail)  # continued: frozen, though only a few
    finally:
        burst.end()
        gc.unfreeze()


def test_k14_an_application_that_disabled_the_collector_keeps_it_disabled() -> None:
    pod = LazyModelBuilder(Pod).build(pod_json())
    gc.disable()
    assert pod.spec is not None
    end_read_burst()
    assert not gc.isenabled()


def test_k16_a_list_arriving_for_longer_than_the_pause_limit_is_frozen_in_turns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not gc_pause._FREEZE_PROMOTES:
        pytest.skip("free-threaded build: a big pause ends with one full collection instead")
    monkeypatch.setattr(gc_pause, "_COLLECT_AFTER_YOUNG", 500)
    now = [0.0]
    monkeypatch.setattr(gc_pause, "time", types.SimpleNamespace(monotonic=lambda: now[0]))

    def arriving() -> Iterator[int]:
        for i in range(6):
            now[0] += 10.0  # a slow server: 60 s for the whole list, the limit is 30
            yield i

    kept: list[list[list[int]]] = []
    frozen_as_read = []
    for _ in gc_pause.paused_over(arriving(), max_seconds=30.0):
        assert not gc.isenabled()  # held for the whole stream, not only its first 30 s
        kept.append([[n] for n in range(400)])  # tracked survivors, as decoded objects
        frozen_as_read.append(gc.get_freeze_count())
    assert gc.isenabled()
    # Each turn (15 s, half the limit) froze what it decoded: before the end, and all of it.
    assert frozen_as_read[0] < frozen_as_read[-1]
    assert all(gc.is_tracked(d) for batch in kept for d in batch)
    assert gc.get_freeze_count() >= sum(len(batch) for batch in kept)
