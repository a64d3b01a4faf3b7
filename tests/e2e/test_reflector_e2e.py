"""End to end (issue 3): SharedIndexInformer over ApiListerWatcher against LocalApiServer.

HTTPS + bearer token; an initial paged list of 5,000 pods, 2,000+ watch events, a forced 410,
dropped watches, a corrupt and a truncated watch line, several seconds of 429 + Retry-After,
and a server restart. At the end the
cache equals the server, and every handler's view (replaying its callbacks) equals it too.
A wrong token gives one clear error naming the server and the resource, never the token,
while the informer keeps retrying with backoff.

The reflector's backoff is shortened (monkeypatched) so the test takes seconds, not minutes;
the real sequence is checked in tests/runtime/test_reflector.py (D4).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import Field

from kubeinformers.runtime.api.keys import (
    deletion_handling_meta_namespace_key,
    object_resource_version,
)
from kubeinformers.runtime.api.listwatch import ListOptions, ObjectList
from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.client.transport import ApiListerWatcher, HttpWatch
from kubeinformers.runtime.reflector import reflector as reflector_module
from kubeinformers.runtime.reflector.backoff import Backoff
from tests.support.view import View

local_api_server = pytest.importorskip("kubeinformers.testing.local_api_server")
LocalApiServer = local_api_server.LocalApiServer

TOKEN = "e2e-s3cret-token"
PODS = APIResource("", "v1", "pods", "Pod", namespaced=True, verbs=frozenset({"list", "watch"}))


class Meta(KubeModel):
    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = Field(None, alias="resourceVersion")
    uid: str | None = None
    labels: dict[str, str] | None = None


class Pod(KubeModel):
    api_version: str | None = Field(None, alias="apiVersion")
    kind: str | None = None
    metadata: Meta | None = None


def pod(i: int, ns: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i:05d}", "namespace": ns, "labels": {"gen": "0"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


class RecordingLW(ApiListerWatcher[Pod]):
    """Records every list/watch request's options (to check paging and the relists)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lists: list[ListOptions] = []
        self.watches: list[ListOptions] = []

    def list(self, options: ListOptions) -> ObjectList[Pod]:
        self.lists.append(options.copy())
        return super().list(options)

    def watch(self, options: ListOptions) -> HttpWatch[Pod]:
        self.watches.append(options.copy())
        return super().watch(options)


def server_state(server: Any) -> dict[str, str]:
    return {
        f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
        for o in server.list("v1", "Pod")
    }


def cache_state(informer: SharedIndexInformer[Pod]) -> dict[str, str]:
    return {
        deletion_handling_meta_namespace_key(o): object_resource_version(o)
        for o in informer.get_indexer().list()
    }


def wait_for(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        tick.wait(0.05)


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same shape as client-go's (factor 2, jitter 1, cap), 20x shorter."""
    monkeypatch.setattr(
        reflector_module, "Backoff", functools.partial(Backoff, initial=0.04, cap=1.5)
    )


@pytest.fixture
def server() -> Iterator[Any]:
    with LocalApiServer(
        tls=True, token=TOKEN, resources=[PODS], bookmark_interval=1.0, too_large_rv_wait=0.3
    ) as s:
        yield s


class Writer:
    """Creates, updates and deletes pods directly in the server (each write = one event)."""

    def __init__(self, server: Any, start: int) -> None:
        self.server = server
        self.next = start
        self.live: list[int] = []
        self.events = 0

    def create(self, n: int) -> None:
        for _ in range(n):
            self.server.create(pod(self.next))
            self.live.append(self.next)
            self.next += 1
            self.events += 1

    def update(self, n: int) -> None:
        for k in range(n):
            i = self.live[(k * 7) % len(self.live)]
            obj = self.server.get("v1", "Pod", f"pod-{i:05d}", "default")
            obj["metadata"]["labels"] = {"gen": str(int(obj["metadata"]["labels"]["gen"]) + 1)}
            self.server.replace(obj)
            self.events += 1

    def delete(self, n: int) -> None:
        for _ in range(n):
            i = self.live.pop((len(self.live) * 5) // 11)
            self.server.delete("v1", "Pod", f"pod-{i:05d}", "default")
            self.events += 1

    def mix(self, n: int) -> None:
        self.create(n // 3)
        self.update(n - 2 * (n // 3))
        self.delete(n // 3)


@pytest.mark.slow
def test_informer_survives_410_drops_429_outage_and_restart(
    server: Any, fast_backoff: None, caplog: pytest.LogCaptureFixture
) -> None:
    writer = Writer(server, 0)
    writer.create(5000)
    writer.events = 0
    # D8: the initial {RV "0", limit 500} list gets a 410 -> immediate {RV "", limit 500}: paged.
    server.fail_next(1, status=410, verbs=["list"])

    lw = RecordingLW(server.api_client(), PODS, Pod)
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(
        lw, Pod, 0.0, name="e2e-pods", use_watch_list=False
    )
    early = View()
    informer.add_event_handler(
        on_add=early.on_add, on_update=early.on_update, on_delete=early.on_delete
    )
    stop = threading.Event()
    t = threading.Thread(target=informer.run, args=(stop,), name="e2e-informer")
    t.start()
    try:
        wait_for(informer.has_synced, 60, "the initial sync")
        assert len(cache_state(informer)) == 5000
        first_lists = [(o.resource_version, o.limit, bool(o.continue_)) for o in lw.lists[:3]]
        assert first_lists == [("0", 500, False), ("", 500, False), (None, 500, True)]
        assert sum(1 for o in lw.lists if o.continue_) == 9  # 10 pages of 500

        late = View()  # joins after the sync: synthetic adds of the whole cache
        late_reg = informer.add_event_handler(
            on_add=late.on_add, on_update=late.on_update, on_delete=late.on_delete
        )

        writer.mix(600)

        # a forced 410 on the re-watch after a dropped connection -> relist
        lists_before = len(lw.lists)
        server.fail_next(1, status=410, verbs=["watch"])
        server.drop_watches()
        writer.mix(300)
        wait_for(lambda: len(lw.lists) > lists_before, 20, "the relist after a 410")

        # a dropped watch: re-watch from the last RV, no relist needed
        server.drop_watches(clean=True)
        writer.mix(300)

        # a corrupt line and a truncated one: each ends the watch, which resumes from the
        # last RV, so the change on that line still arrives
        server.corrupt_next_watch_line(1)
        writer.mix(30)
        server.truncate_next_watch_line(1)
        writer.mix(30)

        # several seconds of 429 + Retry-After on every request
        server.fail_next(4, status=429, retry_after=1)
        server.drop_watches()
        t0 = time.monotonic()
        writer.mix(450)
        wait_for(lambda: cache_state(informer) == server_state(server), 60, "catch-up after 429s")
        assert time.monotonic() - t0 >= 3.0  # four Retry-After: 1 s waits were honoured

        # a restart: connections cut, the port refuses for a second, then serves again
        server.restart(keep_resource_versions=True, downtime=1.0)
        writer.mix(450)

        assert writer.events >= 2000
        wait_for(lambda: cache_state(informer) == server_state(server), 60, "the final state")
        wait_for(late_reg.has_synced, 30, "the late handler's sync")
        wait_for(lambda: early.snapshot() == server_state(server), 30, "the early handler")
        wait_for(lambda: late.snapshot() == server_state(server), 30, "the late handler")
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive(), "informer.run did not return after stop"
    assert TOKEN not in caplog.text


def test_watch_list_informer_resyncs_and_falls_back_to_list(
    server: Any, fast_backoff: None
) -> None:
    """D17-D20 over HTTP: watch-list sync (no LIST); after a 410 it re-syncs by watch-list;
    once the server stops supporting it, it falls back to LIST + watch."""
    writer = Writer(server, 0)
    writer.create(1000)
    lw = RecordingLW(server.api_client(), PODS, Pod)
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(lw, Pod, 0.0, name="e2e-wl")
    view = View()
    informer.add_event_handler(
        on_add=view.on_add, on_update=view.on_update, on_delete=view.on_delete
    )
    stop = threading.Event()
    t = threading.Thread(target=informer.run, args=(stop,))
    t.start()

    def watch_lists() -> int:
        return sum(1 for o in lw.watches if o.send_initial_events)

    try:
        wait_for(informer.has_synced, 30, "the watch-list sync")
        assert lw.lists == []
        first = lw.watches[0]
        assert (first.send_initial_events, first.resource_version_match) == (True, "NotOlderThan")
        assert first.resource_version == "" and first.allow_watch_bookmarks

        writer.mix(300)
        server.fail_next(1, status=410, verbs=["watch"])
        server.drop_watches()
        wait_for(lambda: watch_lists() >= 2, 20, "a second watch-list after the 410")
        assert lw.lists == []
        writer.mix(300)

        server.set_watch_list_supported(False)
        server.fail_next(1, status=410, verbs=["watch"])
        server.drop_watches()
        wait_for(lambda: len(lw.lists) >= 1, 20, "the LIST fallback")
        writer.mix(300)
        server.restart(keep_resource_versions=True, downtime=0.3)
        writer.mix(300)
        wait_for(lambda: cache_state(informer) == server_state(server), 60, "the final state")
        wait_for(lambda: view.snapshot() == server_state(server), 30, "the handler's view")
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive()


def test_wrong_token_gives_one_clear_error_and_keeps_retrying(
    server: Any, fast_backoff: None, caplog: pytest.LogCaptureFixture
) -> None:
    api = server.api_client()
    api.configuration.api_key = {"authorization": "wrong-token-value"}
    lw = RecordingLW(api, PODS, Pod, namespace="default")
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(lw, Pod, 0.0, name="e2e-badtoken")
    stop = threading.Event()
    t = threading.Thread(target=informer.run, args=(stop,))
    with caplog.at_level(logging.DEBUG):
        t.start()
        try:
            wait_for(lambda: len(lw.lists) >= 3, 20, "three list attempts")
        finally:
            stop.set()
            t.join(10)
    assert not t.is_alive()
    assert not informer.has_synced()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    # D23: static credentials refused: one ERROR naming the request, the resource and the
    # server (nothing will re-read them); the retries (watch-list, then LIST) at DEBUG.
    assert len(errors) == 1, [r.getMessage() for r in errors]
    text = errors[0].getMessage()
    assert text.startswith("credentials refused (401): cannot watch pods in namespace")
    assert 'pods in namespace "default"' in text and server.url in text
    assert "nothing to re-read" in text
    assert "wrong-token-value" not in caplog.text and TOKEN not in caplog.text
    retries = [r.getMessage() for r in caplog.records if "(HTTP 401" in r.getMessage()]
    assert retries and all(
        r.levelno == logging.DEBUG for r in caplog.records if "(HTTP 401" in r.getMessage()
    )
    assert any('cannot list pods in namespace "default"' in m for m in retries)
    assert all(w.send_initial_events for w in lw.watches)
