"""What an index function's failure does inside a running informer (B18; B4 for a plain
Indexer): the object is stored, left out of that index and notified as usual. Also what
health() says of a handler whose initial add raised (G7), the other problem it lists.

The indexer guide (docs/guide/indexers.md) describes this to users; these tests keep it true.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
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


Running = tuple[FakeListerWatcher[Pod], SharedIndexInformer[Pod], Recorder]


@contextlib.contextmanager
def indexed_informer(index: Callable[[Any], list[str]]) -> Iterator[Running]:
    """A synced informer of pod a (team x) with index "team" by `index`, recording events."""
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a", "1", team="x")])
    informer = SharedIndexInformer(fake, Pod, indexers={"team": index}, name="indexed")
    recorder = Recorder()
    informer.add_event_handler(recorder)
    runner = Runner(informer.run)
    try:
        assert wait_for(informer.has_synced), "informer did not sync"
        yield fake, informer, recorder
    finally:
        runner.stop()


@pytest.fixture
def running() -> Iterator[Running]:
    with indexed_informer(by_team) as running:
        yield running


def test_b18_an_object_its_index_function_fails_on_is_stored_unindexed_and_notified(
    running: tuple[FakeListerWatcher[Pod], SharedIndexInformer[Pod], Recorder],
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake, informer, recorder = running
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        fake.add(pod("b", "2"))  # no team label: by_team raises
        fake.add(pod("c", "3", team="x"))
        assert recorder.expect(3).wait(10), recorder.snapshot()  # a's initial add, b's, c's

    indexer = informer.get_indexer()
    assert indexer.get_by_key("default/b") is not None
    assert indexer.index_keys("team", "x") == ["default/a", "default/c"]  # b in no team
    assert ("add", "default/b@2", False) in recorder.snapshot()  # the handlers heard of b
    assert recorder.snapshot()[-1] == ("add", "default/c@3", False)
    reported = [logged(r) for r in caplog.records if r.levelno == logging.ERROR]
    assert len(reported) == 1 and "failed on default/b (resourceVersion 2)" in reported[0]
    assert "KeyError: 'team'" in reported[0]


def test_b18_an_update_its_index_function_fails_on_takes_the_key_out_of_the_index(
    running: tuple[FakeListerWatcher[Pod], SharedIndexInformer[Pod], Recorder],
) -> None:
    fake, informer, recorder = running
    fake.modify(pod("a", "2"))  # the label is gone: by_team raises on the new version
    fake.add(pod("d", "3", team="y"))  # a later event, to know the update was processed
    assert recorder.expect(3).wait(10), recorder.snapshot()

    indexer = informer.get_indexer()
    stored = indexer.get_by_key("default/a")
    assert stored is not None and stored.metadata is not None
    assert stored.metadata.resource_version == "2"  # the store has the new version
    assert indexer.index_keys("team", "x") == []  # no longer under its old value
    assert [e[0] for e in recorder.snapshot()] == ["add", "update", "add"]  # a's update heard
    assert list(indexer.unindexed()) == ["default/a"]


@pytest.mark.parametrize("queue", ["delta", "ordered", "atomic"])
def test_b18_a_list_holding_an_object_the_index_function_fails_on(queue: QueueKind) -> None:
    """Every queue: the whole list is stored and notified; only b is out of the index."""
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
        assert wait_for(informer.has_synced), "informer did not sync"
        fake.add(pod("d", "4", team="x"))
        assert wait_for(lambda: ("add", "default/d@4", False) in recorder.snapshot())
        indexer = informer.get_indexer()
        assert sorted(indexer.list_keys()) == [f"default/{n}" for n in "abcd"]
        assert indexer.index_keys("team", "x") == [f"default/{n}" for n in "acd"]
        assert sorted(e[1].split("@")[0] for e in recorder.snapshot()) == [
            f"default/{n}" for n in "abcd"
        ]
        assert informer.metrics().unindexed_objects == 1
    finally:
        runner.stop()


@pytest.mark.parametrize(
    ("returned", "said"),
    [
        (None, "it returned None (NoneType)"),
        ("x", "it returned 'x' (str) (wrap a single value in a list: [value])"),
        ({"x"}, "it returned {'x'} (set)"),
        ([1], "it returned [1], with an item of type int"),
    ],
)
def test_b19_an_index_function_returning_no_list_of_strings_fails_as_b18_says(
    returned: object, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    """`labels.get("team")` for `[labels["team"]]` (a str, or None when the label is missing)
    indexed a str character by character, and None broke the write: the object's
    notification was dropped with a traceback ('error processing an item ...; dropped')."""

    def odd(obj: Any) -> list[str]:
        labels = object_labels(obj)
        return returned if labels.get("odd") else [labels["team"]]  # type: ignore[return-value]

    with indexed_informer(odd) as (fake, informer, recorder):
        with caplog.at_level(logging.ERROR, logger=LOGGER):
            fake.add(pod("b", "2", team="x", odd="yes"))
            fake.add(pod("c", "3", team="x"))
            assert recorder.expect(3).wait(10), recorder.snapshot()
        assert ("add", "default/b@2", False) in recorder.snapshot()  # b's add was delivered
        indexer = informer.get_indexer()
        assert indexer.get_by_key("default/b") is not None
        assert indexer.index_keys("team", "x") == ["default/a", "default/c"]
        assert sorted(indexer.list_index_func_values("team")) == ["x"]  # no 'x' per char etc.
        reported = [logged(r) for r in caplog.records if r.levelno == logging.ERROR]
        assert len(reported) == 1, reported
        assert "index function 'team' failed on default/b (resourceVersion 2)" in reported[0]
        assert "must return a list of strings; " + said in reported[0]
        assert informer.metrics().unindexed_objects == 1


def test_g7_a_handler_whose_initial_add_raised_is_named_by_health(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Its registration never reports synced (G7, as client-go's); the ERROR and health()
    say so, where they said only 'failed on add' and nothing: a ReconcileLoop or any code
    waiting on that registration's has_synced() waited without a word of why."""
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a", "1", team="x")])
    informer = SharedIndexInformer(fake, Pod, name="indexed")
    done: list[str] = []

    def on_add(obj: Pod, is_in_initial_list: bool) -> None:
        done.append(object_labels(obj).get("team", ""))
        if is_in_initial_list:
            raise RuntimeError("handler bug")

    with caplog.at_level(logging.ERROR, logger=LOGGER):
        registration = informer.add_event_handler(on_add=on_add)
        runner = Runner(informer.run)
        try:
            assert wait_for(informer.has_synced), "informer did not sync"
            assert wait_for(lambda: informer.health().handlers_unsynced != ()), "not reported"
            health = informer.health()
            assert health.healthy  # the cache is right; only that registration never syncs
            (problem,) = health.problems()
            assert problem.startswith("handler ") and problem.endswith(
                "on_add#1 will never report synced: its on_add raised on the initial add of "
                "default/a"
            ), problem
            assert not registration.has_synced()
        finally:
            runner.stop()
    reported = [logged(r) for r in caplog.records if r.levelno == logging.ERROR]
    assert len(reported) == 1, reported
    assert "failed on add of default/a" in reported[0]
    assert "this handler's registration will never report synced" in reported[0]


def test_b18_an_index_function_failing_on_every_object_logs_ten_errors_not_one_per_object(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A CRD upgraded under an index function makes it fail on every cached object at once:
    that was one ERROR per object (10,000 lines for 10,000 objects). Ten per index and
    minute now, the tenth saying that the rest go to DEBUG; all are counted and listed."""
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod(f"p{i:02}", "1") for i in range(25)])
    informer = SharedIndexInformer(fake, Pod, name="indexed")
    runner = Runner(informer.run)
    try:
        assert wait_for(informer.has_synced), "informer did not sync"
        with caplog.at_level(logging.DEBUG, logger=LOGGER):
            informer.add_indexers({"team": by_team})  # fails on every one of the 25
        errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
        debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
        assert len(errors) == 10, errors
        assert "its further failures in that time are logged at DEBUG" in errors[-1]
        assert not any("further failures" in e for e in errors[:-1])
        assert len([d for d in debug if "index function 'team' failed on" in d]) == 15
        assert informer.metrics().index_errors == 25
        assert len(informer.health().problems()) == 25
    finally:
        runner.stop()


def test_b18_the_error_budget_of_an_index_comes_back_after_a_minute() -> None:
    from kubeinformers.runtime.cache.index_errors import IndexFailureLog
    from kubeinformers.runtime.cache.store import IndexFuncError

    levels: list[int] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            levels.append(record.levelno)

    log = logging.getLogger("test.b18.window")
    log.setLevel(logging.DEBUG)
    log.addHandler(Keep())
    now = [0.0]
    reporter = IndexFailureLog("indexed", log, clock=lambda: now[0])
    err = IndexFuncError("boom")
    for i in range(12):
        reporter.index_failed("team", f"default/p{i}", pod(f"p{i}", "1"), err)
    reporter.index_failed("other", "default/q", pod("q", "1"), err)  # its own budget
    now[0] = 60.0
    reporter.index_failed("team", "default/r", pod("r", "1"), err)
    assert levels == [logging.ERROR] * 10 + [logging.DEBUG] * 2 + [logging.ERROR, logging.ERROR]
