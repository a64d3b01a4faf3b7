"""A transform that raises, or returns None, on one object (F15): the error names the object
and the transform; the informer keeps going and its later events are delivered.

Before F15 a watch event whose transform raised was logged as `unable to apply ADDED event to
the store: boom` (no object, no word of the transform), and a transform returning None cached
None and dropped the item with a traceback (`error processing an item of ...; dropped`).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubeinformers.runtime.api.keys import object_name
from kubeinformers.runtime.cache.informer import QueueKind, SharedIndexInformer
from kubeinformers.testing import FakeListerWatcher
from tests.runtime._informer_support import Pod, Recorder, Runner, pod, wait_for


def failing_on_b(kind: str) -> Any:
    def transform(obj: Any) -> Any:
        if object_name(obj) == "b":
            if kind == "raise":
                raise ValueError("boom")
            return None
        return obj

    return transform


SAID = {
    "raise": "transforming default/b (resourceVersion 2): ValueError: boom",
    "none": "transforming default/b (resourceVersion 2): the transform returned None; it must "
    "return the object (changed or not)",
}


@pytest.mark.parametrize("queue", ["delta", "ordered", "atomic"])
@pytest.mark.parametrize("kind", ["raise", "none"])
def test_f15_a_watch_event_the_transform_fails_on_is_reported_by_key(
    kind: str, queue: QueueKind, caplog: pytest.LogCaptureFixture
) -> None:
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a", "1")])
    informer = SharedIndexInformer(
        fake, Pod, transform=failing_on_b(kind), name="transformed", queue=queue
    )
    recorder = Recorder()
    informer.add_event_handler(recorder)
    runner = Runner(informer.run)
    try:
        assert wait_for(informer.has_synced), "informer did not sync"
        with caplog.at_level(logging.ERROR):
            fake.add(pod("b", "2"))
            fake.add(pod("c", "3"))
            assert wait_for(lambda: ("add", "default/c@3", False) in recorder.snapshot())
        assert sorted(informer.get_indexer().list_keys()) == ["default/a", "default/c"]
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1, errors
        assert "unable to apply ADDED event of default/b (resourceVersion 2)" in errors[0]
        assert SAID[kind] in errors[0]
        assert not any(r.exc_info for r in caplog.records), "a traceback was logged"
    finally:
        runner.stop()


@pytest.mark.parametrize("queue", ["delta", "atomic"])
@pytest.mark.parametrize("kind", ["raise", "none"])
def test_f15_a_list_the_transform_fails_on_names_the_object(kind: str, queue: QueueKind) -> None:
    """As client-go's Replace, the list fails as a whole (B7, C1.6) and is retried; its error,
    the informer's last_error, says which object and why."""
    fake: FakeListerWatcher[Pod] = FakeListerWatcher([pod("a", "1"), pod("b", "2")])
    informer = SharedIndexInformer(
        fake, Pod, transform=failing_on_b(kind), name="transformed", queue=queue
    )
    runner = Runner(informer.run)
    try:
        assert wait_for(lambda: informer.last_error() is not None), "no list error"
        assert SAID[kind] in str(informer.last_error())
        assert not informer.has_synced()
    finally:
        runner.stop()


@pytest.mark.parametrize("kind", ["raise", "none"])
def test_f15_a_watch_list_stream_the_transform_fails_on_goes_on_without_the_object(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The watch-list's initial events (D19) go through its temporary store: as for any watch
    event, the object is left out with one ERROR naming it and the stream goes on."""
    from kubeinformers.generated.informers import SharedInformerFactory
    from kubeinformers.testing import LocalApiServer

    with LocalApiServer() as server:
        for name in "ab":
            server.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": "default"},
                }
            )
        rv = server.get("v1", "ConfigMap", "b", "default")["metadata"]["resourceVersion"]
        factory = SharedInformerFactory(
            server.api_client(), transform=failing_on_b(kind), use_watch_list=True
        )
        with factory, caplog.at_level(logging.ERROR):
            informer = factory.core().v1().config_maps().informer()
            factory.start()
            factory.wait_for_cache_sync_or_raise(timeout=30)
            assert informer.get_indexer().list_keys() == ["default/a"]
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1, errors
        assert SAID[kind].replace("resourceVersion 2", f"resourceVersion {rv}") in errors[0]
