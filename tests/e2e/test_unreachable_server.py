"""An unreachable API server is not silent (issue 18; behaviour.md H3, H5 and the outage rules).

A newcomer's first factory pointed at the wrong address must say so at default logging: the
first failure of an informer that never synced is one WARNING naming the resource, the server
and the cause; `wait_for_cache_sync_or_raise` names each unsynced informer and its last error;
and an informer requested after `factory.start()` runs instead of answering `[]` forever.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from kubeinformers import DynamicSharedInformerFactory, GroupVersionResource
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.cache.factory import CacheSyncTimeoutError
from kubeinformers.testing.local_api_server import LocalApiServer

UNREACHABLE = "https://127.0.0.1:1"  # port 1 (tcpmux) is closed on every machine we run on


class WarningSeen(logging.Handler):
    """Sets `seen` when a WARNING (or worse) from kubeinformers arrives. Installed on the root
    logger after caplog's handler, so caplog has the record when `seen` is set."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("kubeinformers"):
            self.seen.set()


@pytest.fixture
def unreachable_factory() -> Iterator[SharedInformerFactory]:
    configuration = client.Configuration()
    configuration.host = UNREACHABLE
    factory = SharedInformerFactory(client.ApiClient(configuration))
    try:
        yield factory
    finally:
        factory.shutdown(timeout=30)


def test_issue18_the_first_failure_of_a_never_synced_informer_is_a_warning_naming_resource_server_and_cause(
    unreachable_factory: SharedInformerFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)  # the default level: what a user sees without configuring
    watcher = WarningSeen()
    logging.getLogger().addHandler(watcher)
    try:
        unreachable_factory.core().v1().pods().informer()
        unreachable_factory.start()
        assert watcher.seen.wait(5.0), "no WARNING within 5 s for an unreachable server"
    finally:
        logging.getLogger().removeHandler(watcher)
    warning = next(r for r in caplog.records if r.levelno == logging.WARNING).getMessage()
    assert warning.startswith("pods: ")
    assert UNREACHABLE in warning
    assert "cause: connection refused" in warning


def test_issue18_wait_for_cache_sync_or_raise_names_each_unsynced_informer_and_its_last_error(
    unreachable_factory: SharedInformerFactory,
) -> None:
    unreachable_factory.core().v1().pods().informer()
    unreachable_factory.apps().v1().deployments().informer()
    unreachable_factory.start()
    with pytest.raises(CacheSyncTimeoutError) as raised:
        unreachable_factory.wait_for_cache_sync_or_raise(timeout=3)
    message = str(raised.value)
    assert "2 informers did not sync within 3 s" in message
    assert "pods (v1): last error:" in message
    assert "deployments.apps (apps/v1): last error:" in message
    assert "Connection refused" in message or "connection refused" in message
    assert set(raised.value.unsynced) == {gvr for gvr in unreachable_factory.informers()}


def test_issue18_wait_for_cache_sync_or_raise_says_when_start_was_never_called(
    unreachable_factory: SharedInformerFactory,
) -> None:
    unreachable_factory.core().v1().pods().informer()
    with pytest.raises(CacheSyncTimeoutError, match=r"start\(\) was not called"):
        unreachable_factory.wait_for_cache_sync_or_raise(timeout=0)


def test_issue18_h3_an_informer_requested_after_start_is_started_and_syncs(
    local_api_server: LocalApiServer,
) -> None:
    local_api_server.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "late", "namespace": "default"},
        }
    )
    with SharedInformerFactory(local_api_server.api_client()) as factory:
        factory.core().v1().pods().informer()
        factory.start()
        factory.wait_for_cache_sync_or_raise(timeout=60)
        config_maps = factory.core().v1().config_maps()  # requested after start()
        config_maps.informer()
        factory.wait_for_cache_sync_or_raise(timeout=60)  # raises if it never started
        assert config_maps.lister().config_maps("default").get("late").metadata is not None


class Counting(logging.Handler):
    """Sets `enough` once `needed` records of the reflector mention `text`, at any level."""

    def __init__(self, text: str, needed: int) -> None:
        super().__init__(logging.DEBUG)
        self.text, self.needed, self.count = text, needed, 0
        self.enough = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.count += 1
            if self.count >= self.needed:
                self.enough.set()


def test_issue18_d16_a_repeated_403_before_the_first_sync_is_one_error_then_debug(
    local_api_server_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server: LocalApiServer = local_api_server_factory(forbidden=["configmaps"])
    caplog.set_level(logging.DEBUG, logger="kubeinformers.reflector")
    attempts = Counting("access to", needed=3)
    logging.getLogger("kubeinformers.reflector").addHandler(attempts)
    try:
        with SharedInformerFactory(server.api_client()) as factory:
            factory.core().v1().config_maps().informer()
            factory.start()
            assert attempts.enough.wait(60), "the informer did not retry three times"
    finally:
        logging.getLogger("kubeinformers.reflector").removeHandler(attempts)
    denied = [r for r in caplog.records if "access to" in r.getMessage()]
    assert [r.levelno for r in denied][:3] == [logging.ERROR, logging.DEBUG, logging.DEBUG]
    assert "configmaps" in denied[0].getMessage() and "403" in denied[0].getMessage()
    visible = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(visible) == 1, [r.getMessage() for r in visible]


def test_d1_a_dynamic_informers_errors_name_its_resource_not_dict(
    local_api_server_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server: LocalApiServer = local_api_server_factory(forbidden=["configmaps"])
    caplog.set_level(logging.DEBUG, logger="kubeinformers.reflector")
    attempts = Counting("access to", needed=1)
    logging.getLogger("kubeinformers.reflector").addHandler(attempts)
    try:
        with DynamicSharedInformerFactory(server.api_client()) as factory:
            factory.for_resource(GroupVersionResource("", "v1", "configmaps")).informer()
            factory.start()
            assert attempts.enough.wait(60), "the informer did not try to list"
    finally:
        logging.getLogger("kubeinformers.reflector").removeHandler(attempts)
    denied = next(r.getMessage() for r in caplog.records if "access to" in r.getMessage())
    assert "access to v1, Resource=configmaps denied" in denied, denied
    assert "dict" not in denied, denied
