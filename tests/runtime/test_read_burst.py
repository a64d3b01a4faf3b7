"""K14: first reads of lazy objects hold the cyclic collector off while they keep coming."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator

import pytest

from kubeinformers.runtime.codec import gc_pause
from kubeinformers.runtime.codec.gc_pause import end_read_burst
from kubeinformers.runtime.codec.lazy import LazyModelBuilder, is_lazy
from tests.runtime.test_lazy import Pod, pod_json


def eventually(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    waiter = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if condition():
            return True
        waiter.wait(0.01)
    return condition()


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


def test_k14_a_big_burst_moves_its_survivors_to_the_old_generation_untraversed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not gc_pause._FREEZE_PROMOTES:
        pytest.skip("free-threaded build: a big pause ends with one full collection instead")
    monkeypatch.setattr(gc_pause, "_COLLECT_AFTER_YOUNG", 500)
    builder = LazyModelBuilder(Pod)
    pods = [builder.build(pod_json(f"p{i}")) for i in range(300)]
    before = _collections()
    specs = [p.spec for p in pods]
    end_read_burst()
    assert _collections() == before  # no collection of any generation ran
    assert gc.isenabled() and gc.get_freeze_count() == 0
    old = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(s) in old for s in specs[::50])


def test_k14_an_application_that_disabled_the_collector_keeps_it_disabled() -> None:
    pod = LazyModelBuilder(Pod).build(pod_json())
    gc.disable()
    assert pod.spec is not None
    end_read_burst()
    assert not gc.isenabled()
