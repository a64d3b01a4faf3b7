"""What an index function's failure does inside a running informer (B4 with E2).

The indexer guide (docs/guide/indexers.md) describes this to users; these tests keep it true.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import object_labels
from kubeinformers.runtime.cache.informer import QueueKind, SharedIndexInformer
from kubeinformers.testing import FakeListerWatcher
from tests.runtime._informer_support import Pod, Recorder, Runner, pod, wait_for

LOGGER = "kubeinformers.informer.indexed"


def logged(record: logging.LogRecord) -> str:
    """A record's message with the exception it carries, if any."""
    return record.getMessage() + (f" {record.exc_info[1]}" if record.exc_info else "")


def by_team(obj: Any) -> list[str]:
    """Fails (KeyError) for an object without the label: the bug the tests provoke."""
    return [object_labels(obj)["team"]]


@pytest.fixture
def running() -> Iterator[tuple[FakeListerWatcher[Pod], SharedIndexInformer[Pod], Recorder]]:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a", "1", team="x")])
    informer = SharedIndexInformer(fake, Pod, indexers={"team": by_team}, name="indexed")
    recorder = Recorder()
    informer.add_event_handler(recorder)
    runner = Runner(informer.run)
    try:
        assert wait_for(informer.has_synced), "informer did not sync"
        yield fake, informer, recorder
    finally:
        runner.stop()


def test_b4_e2_an_object_its_index_function_fails_on_is_stored_unindexed_and_not_notified(
    running: tuple[FakeListerWatcher[Pod], SharedIndexInformer[Pod], Recorder],
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake, informer, recorder = running
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        fake.add(pod("b", "2"))  # no team label: by_team raises
        fake.add(pod("c", "3", team="x"))
        assert recorder.expect(2).wait(10), recorder.snapshot()  # a's initial add, then c's

    indexer = informer.get_indexer()
    assert indexer.get_by_key("default/b") is not None  # stored before the index failed
    assert indexer.index_keys("team", "x") == ["default/a", "default/c"]  # b in no team
    assert ("add", "default/b@2", False) not in recorder.snapshot()  # no handler heard of b
    assert recorder.snapshot()[-1] == ("add", "default/c@3", False)  # the informer goes on
    reported = [logged(r) for r in caplog.records if r.levelno == logging.ERROR]
    assert any('"default/b"' in text and '"team"' in text for text in reported), reported


def test_b4_e2_an_update_its_index_function_fails_on_leaves_the_key_under_its_old_values(
    running: tuple[FakeListerWatcher[Pod], SharedIndexInformer[Pod], Recorder],
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake, informer, recorder = running
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        fake.modify(pod("a", "2"))  # the label is gone: by_team raises on the new version
        fake.add(pod("d", "3", team="y"))  # a later event, to know the update was processed
        assert recorder.expect(2).wait(10), recorder.snapshot()

    indexer = informer.get_indexer()
    stored = indexer.get_by_key("default/a")
    assert stored is not None and stored.metadata is not None
    assert stored.metadata.resource_version == "2"  # the store has the new version
    assert indexer.index_keys("team", "x") == ["default/a"]  # the index still has the old one
    assert [e[0] for e in recorder.snapshot()] == ["add", "add"]  # a's update was not notified


# What an initial list holding one object the index function fails on leaves behind, by queue:
# (keys in the store, keys in the index's "x" entry, objects handlers were told of). A batch
# (RealFIFO's distinct keys, "ordered") stops at the failing write and notifies none of it; the
# atomic queue's whole-list swap fails as one, leaving the store as it was (here: empty).
LIST_OUTCOMES: dict[QueueKind, tuple[list[str], list[str], list[str]]] = {
    "delta": (
        ["default/a", "default/b", "default/c", "default/d"],
        ["a", "c", "d"],
        ["a", "c", "d"],
    ),
    "ordered": (["default/a", "default/b", "default/d"], ["a", "d"], ["d"]),
    "atomic": (["default/d"], ["d"], ["d"]),
}


@pytest.mark.parametrize("queue", sorted(LIST_OUTCOMES))
def test_b4_e2_e4_c3_4_a_list_holding_an_object_the_index_function_fails_on(
    queue: QueueKind,
) -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher(
        [pod("a", "1", team="x"), pod("b", "2"), pod("c", "3", team="x")]
    )
    informer = SharedIndexInformer(
        fake,
        Pod,
        indexers={"team": by_team},
        name="indexed",
        queue=queue,
    )
    recorder = Recorder()
    informer.add_event_handler(recorder)
    runner = Runner(informer.run)
    try:
        assert wait_for(informer.has_synced), "informer did not sync"  # synced all the same
        fake.add(pod("d", "4", team="x"))  # a later event: the informer goes on
        assert wait_for(lambda: ("add", "default/d@4", False) in recorder.snapshot())
        indexer = informer.get_indexer()
        keys, indexed, notified = LIST_OUTCOMES[queue]
        assert sorted(indexer.list_keys()) == keys
        assert indexer.index_keys("team", "x") == [f"default/{n}" for n in indexed]
        assert sorted(e[1].split("@")[0] for e in recorder.snapshot()) == [
            f"default/{n}" for n in notified
        ]
    finally:
        runner.stop()
