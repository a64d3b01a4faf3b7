"""What an index function's failure does inside a running informer (B4 with E2).

The indexer guide (docs/guide/indexers.md) describes this to users; these tests keep it true.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.cache.keys import object_labels
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
