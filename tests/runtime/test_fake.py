"""FakeListerWatcher: the in-memory source the informer tests run on."""

from __future__ import annotations

import threading
from typing import Any, Literal

import pytest

from kubeinformers.runtime.api.errors import ApiStatusError, is_expired
from kubeinformers.runtime.api.keys import object_annotations
from kubeinformers.runtime.api.listwatch import (
    INITIAL_EVENTS_END_ANNOTATION,
    ListOptions,
    Status,
    WatchEvent,
    watch_list_semantics_unsupported,
)
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.testing import FakeListerWatcher
from kubeinformers.testing.fake import FakeWatch
from tests.runtime._informer_support import WAIT, Pod, Recorder, Runner, describe, pod, wait_for


def collect(w: FakeWatch[Any], n: int) -> list[WatchEvent[Any]]:
    """The first n events of a watch, read on another thread with a timeout."""
    got: list[WatchEvent[Any]] = []
    done = threading.Event()

    def read() -> None:
        for e in w:
            got.append(e)
            if len(got) == n:
                break
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(WAIT), f"got {len(got)} of {n} events"
    return got


def test_writes_bump_resource_version_and_store_copies() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher()
    mine = pod("a")
    stored = fake.add(mine)
    assert mine.metadata is not None and mine.metadata.resource_version == ""  # not mutated
    assert describe(stored) == "default/a@1"
    assert describe(fake.modify(pod("a", value=2))) == "default/a@2"
    assert describe(fake.delete(pod("a"))) == "default/a@3"
    assert fake.resource_version == "3"
    with pytest.raises(KeyError):
        fake.modify(pod("a"))
    fake.add(pod("a"))
    with pytest.raises(ValueError):
        fake.add(pod("a"))


def test_mappings_get_metadata_resource_version() -> None:
    fake: FakeListerWatcher[dict[str, Any]] = FakeListerWatcher()
    mine = {"metadata": {"name": "cm", "namespace": "ns"}, "data": {"k": "v"}}
    stored = fake.add(mine)
    assert stored["metadata"]["resourceVersion"] == "1"
    assert "resourceVersion" not in mine["metadata"]
    assert fake.list(ListOptions()).items == [stored]


def test_list_pages_with_continue_and_expired_continue_answers_410() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher(pod(f"p{i}") for i in range(5))
    first = fake.list(ListOptions(limit=2))
    assert [describe(o) for o in first.items] == ["default/p0@1", "default/p1@2"]
    assert first.resource_version == "5" and first.continue_
    second = fake.list(ListOptions(limit=2, continue_=first.continue_))
    third = fake.list(ListOptions(limit=2, continue_=second.continue_))
    assert [describe(o) for o in second.items + third.items] == [
        "default/p2@3",
        "default/p3@4",
        "default/p4@5",
    ]
    assert third.continue_ is None
    fake.add(pod("p9"))
    fake.expire(fake.resource_version)
    with pytest.raises(ApiStatusError) as err:
        fake.list(ListOptions(limit=2, continue_=first.continue_))
    assert is_expired(err.value)


def test_d7_continue_pages_read_the_first_pages_state_despite_writes_in_between() -> None:
    """A paged list is one consistent list at the first page's RV, as etcd serves continue
    tokens: deletes between pages once shifted unchanged objects out of the list, so an
    informer listing during a burst of deletes never learned of them."""
    fake: FakeListerWatcher[Pod] = FakeListerWatcher(pod(f"p{i}") for i in range(6))
    first = fake.list(ListOptions(resource_version="0", limit=3))
    for name in ("p0", "p1", "p2"):
        fake.delete(pod(name))
    fake.add(pod("p10"))  # sorts between p1 and p2
    fake.modify(pod("p5", value=2))
    second = fake.list(ListOptions(limit=3, continue_=first.continue_))
    assert [describe(o) for o in first.items + second.items] == [
        "default/p0@1",
        "default/p1@2",
        "default/p2@3",
        "default/p3@4",
        "default/p4@5",
        "default/p5@6",
    ]
    assert second.resource_version == first.resource_version == "6"
    assert second.continue_ is None


def test_expire_makes_older_list_and_watch_resource_versions_answer_410() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a"), pod("b")])
    fake.expire(2)
    with pytest.raises(ApiStatusError) as err:
        fake.list(ListOptions(resource_version="1"))
    assert err.value.code == 410 and err.value.reason == "Expired"
    assert len(fake.list(ListOptions(resource_version="0")).items) == 2
    assert len(fake.list(ListOptions(resource_version="2")).items) == 2
    events = list(fake.watch(ListOptions(resource_version="1")))  # ends after the ERROR
    assert len(events) == 1 and events[0].type == "ERROR"
    assert isinstance(events[0].object, Status) and events[0].object.code == 410


def test_watch_replays_after_resource_version_then_streams_live_events() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a"), pod("b")])
    w = fake.watch(ListOptions(resource_version="1"))
    fake.modify(pod("a", value=1))
    events = collect(w, 2)
    assert [(e.type, describe(e.object)) for e in events] == [
        ("ADDED", "default/b@2"),
        ("MODIFIED", "default/a@3"),
    ]
    w.stop()
    assert fake.open_watches() == 0


def test_watch_from_empty_or_zero_resource_version_starts_with_current_state() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a"), pod("b")])
    fake.modify(pod("a", value=1))
    for rv in ("", "0"):
        w = fake.watch(ListOptions(resource_version=rv))
        assert [describe(e.object) for e in collect(w, 2)] == ["default/a@3", "default/b@2"]
        w.stop()


def test_a_watch_from_the_zero_an_empty_list_answered_replays_every_event_since() -> None:
    """The list of a source nothing was written to answers "0", which as a watch's version
    means "any" (the current state as synthetic ADDEDs); a watch from the version the list
    answered must still resume right after it, as from any other listed version."""
    fake: FakeListerWatcher[Pod] = FakeListerWatcher()
    listed = fake.list(ListOptions(resource_version="0"))
    assert listed.resource_version == "0" and listed.items == []
    fake.add(pod("a"))
    fake.modify(pod("a", value=1))
    fake.delete(pod("a"))
    fake.add(pod("b"))
    w = fake.watch(ListOptions(resource_version=listed.resource_version))
    assert [(e.type, describe(e.object)) for e in collect(w, 4)] == [
        ("ADDED", "default/a@1"),
        ("MODIFIED", "default/a@2"),
        ("DELETED", "default/a@3"),
        ("ADDED", "default/b@4"),
    ]
    w.stop()
    fake.expire(2)  # like any other version, that "0" can become too old
    events = list(fake.watch(ListOptions(resource_version="0")))  # ends after the ERROR
    assert len(events) == 1 and events[0].type == "ERROR"
    assert isinstance(events[0].object, Status) and events[0].object.code == 410


@pytest.mark.parametrize("queue", ["delta", "ordered", "atomic"])
def test_g1_writes_between_the_informers_empty_list_and_its_watch_are_each_delivered(
    queue: Literal["delta", "ordered", "atomic"],
) -> None:
    """G1 on the fake: the informer syncs on its empty list before its watch is open; every
    write made in between still reaches the handler as its own event, in order."""
    written = threading.Event()

    class LateWatch(FakeListerWatcher[Pod]):
        def watch(self, options: ListOptions) -> FakeWatch[Pod]:
            written.wait(WAIT)  # the watch opens only once the writes below are made
            return super().watch(options)

    fake = LateWatch()
    inf: SharedIndexInformer[Pod] = SharedIndexInformer(fake, Pod, queue=queue)
    rec = Recorder()
    inf.add_event_handler(rec)
    runner = Runner(inf.run)
    try:
        assert wait_for(inf.has_synced)
        fake.add(pod("a"))
        fake.modify(pod("a", value=1))
        fake.delete(pod("a"))
        fake.add(pod("b"))
        written.set()
        assert rec.expect(4).wait(WAIT), rec.snapshot()
        assert rec.snapshot() == [
            ("add", "default/a@1", False),
            ("update", "default/a@1", "default/a@2"),
            ("delete", "default/a@3"),
            ("add", "default/b@4", False),
        ]
        assert fake.watch_calls[0].resource_version == "0"
    finally:
        written.set()
        runner.stop()


def test_stop_from_another_thread_ends_a_blocked_iteration() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher()
    w = fake.watch(ListOptions(resource_version="0"))
    ended = threading.Event()

    def read() -> None:
        for _ in w:
            pass
        ended.set()

    threading.Thread(target=read, daemon=True).start()
    assert not ended.wait(0.05)  # blocked: no events
    w.stop()
    assert ended.wait(WAIT)


def test_drop_watches_ends_every_watch_after_its_queued_events() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher()
    watches = [fake.watch(ListOptions(resource_version="0")) for _ in range(3)]
    fake.add(pod("a"))
    fake.drop_watches()
    for w in watches:
        assert [describe(e.object) for e in w] == ["default/a@1"]  # then the stream ends
    assert fake.open_watches() == 0


def test_watch_timeout_seconds_ends_the_stream() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher()
    w = fake.watch(ListOptions(resource_version="0", timeout_seconds=1))
    done = threading.Event()

    def drain() -> None:
        list(w)
        done.set()

    threading.Thread(target=drain, daemon=True).start()
    assert done.wait(WAIT)


def test_injected_list_and_watch_failures() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a")])
    fake.fail_next_list(ApiStatusError(500, "InternalError", "boom"), times=2)
    fake.fail_next_watch(ApiStatusError(429, "TooManyRequests", "slow down"))
    for _ in range(2):
        with pytest.raises(ApiStatusError, match="boom"):
            fake.list(ListOptions())
    assert len(fake.list(ListOptions()).items) == 1
    with pytest.raises(ApiStatusError, match="slow down"):
        fake.watch(ListOptions())
    fake.watch(ListOptions()).stop()
    assert len(fake.list_calls) == 3 and len(fake.watch_calls) == 2


def test_watch_list_streams_initial_objects_then_the_end_bookmark() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a"), pod("b")], model=Pod)
    assert watch_list_semantics_unsupported(fake)  # D17: fakes opt out by default
    fake_wl: FakeListerWatcher[Pod] = FakeListerWatcher(
        [pod("a"), pod("b")], model=Pod, watch_list=True
    )
    assert not watch_list_semantics_unsupported(fake_wl)
    w = fake_wl.watch(
        ListOptions(resource_version="", send_initial_events=True, allow_watch_bookmarks=True)
    )
    events = collect(w, 3)
    assert [e.type for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    bookmark = events[2].object
    assert isinstance(bookmark, Pod) and bookmark.metadata is not None
    assert bookmark.metadata.resource_version == "2"
    assert object_annotations(bookmark) == {INITIAL_EVENTS_END_ANNOTATION: "true"}
    w.stop()


def test_informer_syncs_through_watch_list_on_the_fake() -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher(
        [pod("a"), pod("b")],
        watch_list=True,
        bookmark_factory=lambda rv, ann: Pod.model_validate(
            {"metadata": {"resourceVersion": rv, "annotations": ann}}
        ),
    )
    inf: SharedIndexInformer[Pod] = SharedIndexInformer(fake, Pod, use_watch_list=True)
    rec = Recorder()
    inf.add_event_handler(rec)
    runner = Runner(inf.run)
    try:
        assert wait_for(inf.has_synced)
        assert rec.expect(2).wait(WAIT)
        assert fake.list_calls == []
        assert fake.watch_calls[0].send_initial_events is True
        fake.add(pod("c"))  # the same stream goes on after the bookmark (D19)
        assert rec.expect(3).wait(WAIT)
    finally:
        runner.stop()
