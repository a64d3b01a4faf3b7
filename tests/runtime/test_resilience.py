"""Issue 27: an index function that fails never costs a notification (B18); a handler that
falls behind is reported once, and once when it catches up (G10); `max_buffer` merges a
bounded handler's notifications per object (G11). Every queue kind.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from kubeinformers.runtime.cache.informer import QUEUE_KINDS, QueueKind, SharedIndexInformer
from kubeinformers.runtime.cache.processor import ADD, DELETE, UPDATE, ProcessorListener
from kubeinformers.runtime.cache.store import Indexer, IndexFuncError
from kubeinformers.runtime.clock import FakeClock
from kubeinformers.testing import FakeListerWatcher
from tests.runtime._informer_support import WAIT, Pod, Recorder, Runner, pod, wait_for

INFORMER_LOG = "kubeinformers.informer.pods"


def by_team(obj: Pod) -> list[str]:
    """An index function that fails on objects it was not written for (no `team` label)."""
    labels = obj.metadata.labels if obj.metadata is not None else None
    if not labels or "team" not in labels:
        raise ValueError("no team label")
    return [labels["team"]]


class _Running:
    def __init__(self, fake: FakeListerWatcher[Pod], queue: QueueKind, *handlers: Any) -> None:
        self.informer: SharedIndexInformer[Pod] = SharedIndexInformer(
            fake, Pod, name="pods", queue=queue, indexers={"team": by_team}
        )
        for h in handlers:
            self.informer.add_event_handler(h)
        self.runner = Runner(self.informer.run, name="informer-pods")
        assert wait_for(self.informer.has_synced), "informer did not sync"

    def stop(self) -> None:
        self.runner.stop()


def _errors(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == logging.ERROR and text in r.getMessage()]


@pytest.mark.parametrize("queue", QUEUE_KINDS)
def test_b18_failing_index_function_costs_no_notification(
    queue: QueueKind, caplog: pytest.LogCaptureFixture
) -> None:
    """The object is cached and delivered, left out of the index, counted, logged once per
    version, reported by health(); a fixed version is back in the index; its delete arrives."""
    caplog.set_level(logging.INFO, logger=INFORMER_LOG)
    fake: FakeListerWatcher[Pod] = FakeListerWatcher(
        [pod("good", team="a"), pod("listed-bad")], model=Pod
    )
    rec = Recorder()
    run = _Running(fake, queue, rec)
    informer = run.informer
    try:
        assert rec.expect(2).wait(WAIT), rec.snapshot()
        fake.add(pod("bad"))
        fake.modify(pod("bad", value=1))  # still unindexable: a new version, logged again
        fixed = fake.modify(pod("bad", value=2, team="b"))
        assert rec.expect(5).wait(WAIT), rec.snapshot()
        assert wait_for(lambda: informer.get_indexer().by_index("team", "b") != [])
        (indexed,) = informer.get_indexer().by_index("team", "b")
        assert indexed.metadata == fixed.metadata  # the fixed version, in the index
        fake.delete(fixed)
        assert rec.expect(6).wait(WAIT), rec.snapshot()
        kinds = [(e[0], e[1].split("@")[0]) for e in rec.snapshot()]
        assert sorted(kinds[:2]) == [("add", "default/good"), ("add", "default/listed-bad")]
        assert kinds[2:] == [
            ("add", "default/bad"),
            ("update", "default/bad"),
            ("update", "default/bad"),
            ("delete", "default/bad"),
        ]
        indexer = informer.get_indexer()
        assert indexer.get_by_key("default/bad") is None
        assert indexer.by_index("team", "a")[0].metadata.name == "good"  # type: ignore[union-attr]
        # listed-bad is still unindexable; bad was, and was fixed, then deleted.
        assert list(indexer.unindexed()) == ["default/listed-bad"]
        m = informer.metrics()
        assert (m.index_errors, m.unindexed_objects) == (3, 1)  # listed-bad, bad twice
        assert m.handlers[0].errors == 0
        health = informer.health()
        assert health.healthy and list(health.unindexed_objects) == ["default/listed-bad"]
        assert "default/listed-bad is not in index 'team'" in health.problems()[0]
        assert "no team label" in health.problems()[0]
        assert len(_errors(caplog, "index function 'team' failed on default/bad")) == 2
        assert len(_errors(caplog, "failed on default/listed-bad")) == 1
        recovered = [r for r in caplog.records if "is in index 'team' again" in r.getMessage()]
        assert [r.levelno for r in recovered] == [logging.INFO]
    finally:
        run.stop()


@pytest.mark.parametrize("queue", QUEUE_KINDS)
def test_b18_a_relist_reindexes_without_logging_the_same_version_again(
    queue: QueueKind, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=INFORMER_LOG)
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("bad")], model=Pod)
    rec = Recorder()
    run = _Running(fake, queue, rec)
    try:
        fake.add(pod("other", team="a"), notify=False)  # seen only by the relist
        fake.expire(fake.resource_version)
        fake.drop_watches()
        assert wait_for(lambda: run.informer.get_indexer().get_by_key("default/other") is not None)
        assert len(_errors(caplog, "failed on default/bad")) == 1
        assert run.informer.metrics().index_errors == 1
    finally:
        run.stop()


def test_b4_a_plain_indexer_still_raises() -> None:
    """Without a reporter (a plain Indexer) an index failure is still the B4 error."""
    indexer: Indexer[Pod] = Indexer(indexers={"team": by_team})
    with pytest.raises(IndexFuncError, match='key "default/x" on index "team"'):
        indexer.add(pod("x"))


# --------------------------------------------------------------------------- G10, G11


class _Gate:
    """A handler that blocks in its first callback until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.seen: list[tuple[int, str]] = []
        self.done = threading.Event()
        self.expected = 0

    def _record(self, kind: int, obj: Any) -> None:
        self.entered.set()
        assert self.release.wait(WAIT)
        rv = obj.metadata.resource_version if obj.metadata else ""
        self.seen.append((kind, f"{obj.metadata.name}@{rv}"))
        if len(self.seen) >= self.expected:
            self.done.set()

    def on_add(self, obj: Pod, is_in_initial_list: bool) -> None:
        self._record(ADD, obj)

    def on_update(self, old: Pod, new: Pod) -> None:
        self._record(UPDATE, new)

    def on_delete(self, obj: Any) -> None:
        self._record(DELETE, obj)


def _listener(gate: _Gate, clock: FakeClock, **kw: Any) -> ProcessorListener[Pod]:
    listener: ProcessorListener[Pod] = ProcessorListener(
        gate,
        0.0,
        0.0,
        clock.now(),
        upstream_has_synced=lambda: True,
        logger=logging.getLogger(INFORMER_LOG),
        name="Gate#1",
        clock=clock.now,
        informer="pods",
        **kw,
    )
    listener.start("test-listener")
    return listener


def test_g10_a_handler_falling_behind_is_reported_once_and_when_it_caught_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=INFORMER_LOG)
    clock = FakeClock()
    gate = _Gate()
    listener = _listener(gate, clock, lag_warning_after=10.0)
    try:
        listener.add((ADD, pod("a", "1"), False))
        assert gate.entered.wait(WAIT)  # the handler is busy with a
        for i in range(2, 6):
            listener.add((ADD, pod(f"p{i}", str(i)), False))
        assert not listener.falling_behind
        clock.step(11.0)
        listener.add((ADD, pod("late", "9"), False))  # the oldest waited 11 s: behind
        listener.add((ADD, pod("later", "10"), False))  # said once
        behind = [r for r in caplog.records if "is falling behind" in r.getMessage()]
        assert [r.levelno for r in behind] == [logging.WARNING]
        message = behind[0].getMessage()
        assert "pods: event handler Gate#1" in message
        assert "5 notifications buffered" in message and "11.0 s" in message
        m = listener.metrics()
        assert m.falling_behind and m.buffered == 6 and m.oldest_buffered_age == 11.0
        assert listener.lag_description().startswith("Gate#1 is falling behind: 6")
        gate.expected = 7
        gate.release.set()
        assert gate.done.wait(WAIT)
        assert wait_for(lambda: not listener.falling_behind)
        caught_up = [r for r in caplog.records if "has caught up" in r.getMessage()]
        assert [r.levelno for r in caught_up] == [logging.INFO]
        assert "behind for" in caught_up[0].getMessage()
    finally:
        listener.close()
        listener.join(WAIT)


def test_g11_beyond_max_buffer_notifications_of_one_object_are_merged() -> None:
    """add+update → the add of the newest state; update+update → one update to the newest;
    update+delete → the delete; add+delete → nothing; a new object is always buffered."""
    clock = FakeClock()
    gate = _Gate()
    listener = _listener(gate, clock, max_buffer=2)
    try:
        listener.add((ADD, pod("first", "1"), False))
        assert gate.entered.wait(WAIT)  # busy: everything below is buffered
        listener.add((UPDATE, pod("u", "2"), pod("u", "3")))
        listener.add((ADD, pod("a", "4"), False))  # 2 buffered: the bound
        listener.add((UPDATE, pod("u", "3"), pod("u", "5")))  # merged into u's update
        listener.add((UPDATE, pod("a", "4"), pod("a", "6")))  # merged into a's add
        listener.add((ADD, pod("gone", "7"), False))  # a new object: buffered
        listener.add((DELETE, pod("gone", "8"), None))  # add+delete: neither is delivered
        listener.add((DELETE, pod("u", "9"), None))  # u's update becomes its delete
        m = listener.metrics()
        assert (m.buffered, m.coalesced, m.max_buffer) == (2, 4, 2)
        gate.expected = 3
        gate.release.set()
        assert gate.done.wait(WAIT)
        assert gate.seen == [(ADD, "first@1"), (DELETE, "u@9"), (ADD, "a@6")]
        assert listener.pending() == 0
    finally:
        listener.close()
        listener.join(WAIT)


@pytest.mark.parametrize("queue", QUEUE_KINDS)
def test_g11_bounded_handler_ends_with_every_objects_newest_state(queue: QueueKind) -> None:
    """Through an informer: a blocked handler with max_buffer=3 under churn gets, once
    released, the newest state of every object and the deletes, and syncs (G6)."""
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod(f"p{i}") for i in range(5)], model=Pod)
    gate = _Gate()
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(fake, Pod, name="pods", queue=queue)
    registration = informer.add_event_handler(gate, max_buffer=3)
    runner = Runner(informer.run, name="informer-pods")
    try:
        assert gate.entered.wait(WAIT)
        for round_ in range(1, 4):
            for i in range(5):
                fake.modify(pod(f"p{i}", value=round_))
        fake.delete(pod("p4"))
        final = {
            f"default/p{i}": fake.get(f"default/p{i}").metadata.resource_version  # type: ignore[union-attr]
            for i in range(4)
        }
        assert wait_for(lambda: informer.metrics().notifications.update == 15)
        gate.release.set()
        assert wait_for(registration.has_synced)
        assert wait_for(lambda: registration.metrics().buffered == 0)
        last: dict[str, tuple[int, str]] = {}
        for kind, desc in gate.seen:
            name, rv = desc.split("@")
            last[name] = (kind, rv)
        # p4 was deleted: its last notification is the delete, or (added and deleted while
        # buffered) the handler never heard of it.
        assert last.pop("p4", (DELETE, ""))[0] == DELETE
        assert {f"default/{n}": rv for n, (_, rv) in last.items()} == final
        assert registration.metrics().coalesced > 0
    finally:
        gate.release.set()
        runner.stop()
