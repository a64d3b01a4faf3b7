"""Many handlers, many events, random handler latency: nothing lost, doubled or reordered (G1, G2),
and a stopped informer leaves no thread behind (F2, G8)."""

from __future__ import annotations

import random
import threading
import time
from typing import Any, Literal

import pytest

from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.testing import FakeListerWatcher
from tests.runtime._informer_support import Pod, Runner, pod, wait_for

HANDLERS = 8
EVENTS = 20_000
KEYS = 300


class LatencyRecorder:
    """Records (type, key, rv) per callback, sleeping a random small time now and then."""

    def __init__(self, seed: int, expected: int) -> None:
        self.rng = random.Random(seed)
        self.events: list[tuple[str, str, int]] = []
        self.expected = expected
        self.done = threading.Event()

    def _latency(self) -> None:
        r = self.rng.random()
        if r < 0.001:
            time.sleep(0.005)  # a rare slow call: lets this handler's buffer grow
        elif r < 0.1:
            time.sleep(r * 0.002)

    def _record(self, kind: str, obj: Any) -> None:
        self._latency()
        meta = obj.metadata
        self.events.append((kind, f"{meta.namespace}/{meta.name}", int(meta.resource_version)))
        if len(self.events) >= self.expected:
            self.done.set()

    def on_add(self, obj: Pod, is_in_initial_list: bool) -> None:
        self._record("add", obj)

    def on_update(self, old: Pod, new: Pod) -> None:
        self._record("update", new)

    def on_delete(self, obj: Any) -> None:
        self._record("delete", obj)


def _write_events(fake: FakeListerWatcher[Pod], n: int, seed: int) -> list[tuple[str, str, int]]:
    rng = random.Random(seed)
    present: set[int] = set()
    written: list[tuple[str, str, int]] = []
    for _ in range(n):
        k = rng.randrange(KEYS)
        name = f"p{k}"
        if k not in present:
            stored = fake.add(pod(name))
            present.add(k)
            kind = "add"
        elif rng.random() < 0.8:
            stored = fake.modify(pod(name, value=rng.randrange(1000)))
            kind = "update"
        else:
            stored = fake.delete(pod(name))
            present.discard(k)
            kind = "delete"
        assert stored.metadata is not None and stored.metadata.resource_version is not None
        written.append((kind, f"default/{name}", int(stored.metadata.resource_version)))
    return written


def _assert_no_thread_left(before: set[threading.Thread], budget: float) -> None:
    deadline = time.monotonic() + budget
    for t in threading.enumerate():
        if t in before or t is threading.current_thread():
            continue
        t.join(max(0.0, deadline - time.monotonic()))
    left = [t.name for t in threading.enumerate() if t not in before and t.is_alive()]
    assert left == [], f"threads still running after stop: {left}"


@pytest.mark.parametrize("queue", ["delta", "ordered", "atomic"])
def test_g1_g2_eight_handlers_twenty_thousand_events_none_lost_doubled_or_reordered(
    queue: Literal["delta", "ordered", "atomic"],
) -> None:
    before = set(threading.enumerate())
    fake: FakeListerWatcher[Pod] = FakeListerWatcher()
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(
        fake, Pod, name=f"concurrency-{queue}", queue=queue
    )
    handlers = [LatencyRecorder(seed=i, expected=EVENTS) for i in range(HANDLERS)]
    for h in handlers:
        informer.add_event_handler(h)
    runner = Runner(informer.run, name="kubeinformers-test-run")
    try:
        # Write only once the (empty) initial list is in: every write is then one watch event.
        assert wait_for(informer.has_synced)
        written = _write_events(fake, EVENTS, seed=42)
        for h in handlers:
            assert h.done.wait(60), f"handler got {len(h.events)} of {EVENTS} callbacks"
    finally:
        stopped_at = time.monotonic()
        runner.stop_event.set()
    runner.stop(timeout=2.0)
    assert time.monotonic() - stopped_at < 2.0
    _assert_no_thread_left(before, budget=2.0 - (time.monotonic() - stopped_at))

    expected = sorted(written)
    per_key_written: dict[str, list[int]] = {}
    for _kind, key, rv in written:
        per_key_written.setdefault(key, []).append(rv)
    reference = handlers[0].events
    for i, h in enumerate(handlers):
        assert len(h.events) == EVENTS, f"handler {i}: {len(h.events)} callbacks"
        assert sorted(h.events) == expected, f"handler {i}: lost or duplicated callbacks"
        per_key: dict[str, list[int]] = {}
        for _kind, key, rv in h.events:
            per_key.setdefault(key, []).append(rv)
        assert per_key == per_key_written, f"handler {i}: per-object order differs"
        # G2: every listener gets the very order the informer distributed.
        assert h.events == reference, f"handler {i} saw another order than handler 0"
    if queue != "delta":
        assert reference == written  # C2.1: the RealFIFO keeps arrival order across keys


def test_g8_stop_with_a_backlog_returns_quickly_and_leaves_no_thread() -> None:
    before = set(threading.enumerate())
    fake: FakeListerWatcher[Pod] = FakeListerWatcher(pod(f"p{i}") for i in range(2000))
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(fake, Pod, name="backlog")
    first_call = threading.Event()

    class Slow:
        def on_add(self, obj: Pod, is_in_initial_list: bool) -> None:
            first_call.set()
            time.sleep(0.01)  # handler latency, so thousands of notifications queue up

        def on_update(self, old: Pod, new: Pod) -> None: ...

        def on_delete(self, obj: Any) -> None: ...

    informer.add_event_handler(Slow())
    runner = Runner(informer.run, name="kubeinformers-test-run")
    try:
        assert first_call.wait(10)
    finally:
        stopped_at = time.monotonic()
        runner.stop_event.set()
    runner.stop(timeout=2.0)
    assert time.monotonic() - stopped_at < 2.0
    _assert_no_thread_left(before, budget=2.0 - (time.monotonic() - stopped_at))
