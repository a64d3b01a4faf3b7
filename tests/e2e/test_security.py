"""Security (issue 8): 401 and 403 give a clear error naming the resource and the missing
permission, are retried with growing backoff (D3/D4), and never leak a credential into a log
record or an exception; TLS is verified by default and an unknown certificate fails clearly.

Against LocalApiServer over HTTPS. The reflector's backoff starts at 0.2 s instead of 0.8 s
(same factor 2, jitter 1) so that four attempts fit in about three seconds; the real
sequence is checked in tests/runtime/test_reflector.py (D4).
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest

from kubeinformers.generated.core.v1 import Pod
from kubeinformers.generated.core.v1.informers import PodInformer
from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.listwatch import ListOptions, ObjectList
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.client.transport import ApiListerWatcher
from kubeinformers.runtime.reflector import reflector as reflector_module
from kubeinformers.runtime.reflector.backoff import Backoff
from kubeinformers.testing.local_api_server import LocalApiServer

TOKEN = "sec-test-admin-t0ken-9f3c"
WRONG_TOKEN = "sec-test-wrong-t0ken-77ab"
PODS = PodInformer.RESOURCE


@pytest.fixture
def backoff_from_0_2s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reflector_module, "Backoff", functools.partial(Backoff, initial=0.2))


@pytest.fixture(scope="module")
def server() -> Iterator[LocalApiServer]:
    with LocalApiServer(tls=True, token=TOKEN) as s:
        s.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
        yield s


class CountingLW(ApiListerWatcher[Pod]):
    """Times every LIST attempt (the watch-list try comes first, then its LIST fallback)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.list_times: list[float] = []

    def list(self, options: ListOptions) -> ObjectList[Pod]:
        self.list_times.append(time.monotonic())
        return super().list(options)


def run_until(
    informer: SharedIndexInformer[Pod], cond: Callable[[], bool], timeout: float
) -> list[BaseException]:
    """Run the informer until `cond` or `timeout`; return what its watch error handler got
    (the default handler still logs them, as for a user who sets none)."""
    errors: list[BaseException] = []

    def handler(reflector: Any, err: BaseException) -> None:
        errors.append(err)
        reflector_module.default_watch_error_handler(reflector, err)

    informer.set_watch_error_handler(handler)
    stop = threading.Event()
    thread = threading.Thread(target=informer.run, args=(stop,), name="sec-informer")
    thread.start()
    try:
        deadline = time.monotonic() + timeout
        while not cond() and time.monotonic() < deadline:
            stop.wait(0.02)
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive(), "informer.run did not return after stop"
    return errors


def exception_texts(errors: list[BaseException]) -> str:
    """Everything a user could print of these errors: str, repr, args, tracebacks, causes."""
    parts = []
    for err in errors:
        parts += [str(err), repr(err), repr(err.args)]
        parts += traceback.format_exception(err)
    return "\n".join(parts)


def assert_backs_off(times: list[float]) -> None:
    """More than one attempt, and the gaps grow (D4: [0.2,0.4), [0.4,0.8), [0.8,1.6) s)."""
    assert len(times) >= 4, f"only {len(times)} LIST attempts"
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps[0] >= 0.2, f"no backoff between the first attempts: {gaps}"
    assert gaps[2] > 1.5 * gaps[0], f"the gaps do not grow: {gaps}"


@pytest.mark.parametrize("namespace", [None, "team"])
def test_401_names_the_resource_retries_with_backoff_and_never_logs_a_token(
    server: LocalApiServer,
    backoff_from_0_2s: None,
    caplog: pytest.LogCaptureFixture,
    namespace: str | None,
) -> None:
    api = server.api_client()
    api.configuration.api_key = {"authorization": WRONG_TOKEN}
    lw = CountingLW(api, PODS, Pod, namespace=namespace)
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(lw, Pod, name="sec-401")
    with caplog.at_level(logging.DEBUG):
        errors = run_until(informer, lambda: len(lw.list_times) >= 4, timeout=10)
    api.close()

    assert not informer.has_synced()
    assert_backs_off(lw.list_times)
    statuses = [e for e in errors if isinstance(e, ApiStatusError)]
    assert statuses and all(e.code == 401 for e in statuses), errors
    where = f'namespace "{namespace}"' if namespace else "all namespaces"
    message = str(statuses[-1])
    assert f"unauthorized: cannot list pods in {where} at {server.url}" in message
    assert "check the credentials" in message
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any(f"cannot list pods in {where}" in m for m in logged), logged
    for secret in (WRONG_TOKEN, TOKEN):
        assert secret not in caplog.text
        assert secret not in exception_texts(errors)


def test_403_names_the_missing_permission_retries_and_never_logs_the_token(
    server: LocalApiServer, backoff_from_0_2s: None, caplog: pytest.LogCaptureFixture
) -> None:
    server.forbid("pods", ["list", "watch"])
    try:
        api = server.api_client()
        lw = CountingLW(api, PODS, Pod)
        informer: SharedIndexInformer[Pod] = SharedIndexInformer(lw, Pod, name="sec-403")
        with caplog.at_level(logging.DEBUG):
            errors = run_until(informer, lambda: len(lw.list_times) >= 4, timeout=10)
        api.close()
    finally:
        server.allow("pods")

    assert not informer.has_synced()
    assert_backs_off(lw.list_times)
    statuses = [e for e in errors if isinstance(e, ApiStatusError)]
    assert statuses and all(e.code == 403 for e in statuses), errors
    message = str(statuses[-1])
    # the resource, the verb that is missing, and what to do
    assert f"forbidden: cannot list pods in all namespaces at {server.url}" in message
    assert 'cannot list resource "pods"' in message
    assert "RBAC" in message
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("access to" in m and "denied (HTTP 403" in m for m in logged), logged
    assert TOKEN not in caplog.text
    assert TOKEN not in exception_texts(errors)


def test_403_lifted_the_informer_syncs_by_itself(
    server: LocalApiServer, backoff_from_0_2s: None
) -> None:
    """Retrying is not for show: once RBAC allows it, the same informer syncs."""
    server.forbid("pods", ["list", "watch"])
    api = server.api_client()
    lw = CountingLW(api, PODS, Pod)
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(lw, Pod, name="sec-403-lifted")

    def lift_after_two_attempts() -> bool:
        if len(lw.list_times) >= 2:
            server.allow("pods")
        return informer.has_synced()

    try:
        run_until(informer, lift_after_two_attempts, timeout=15)
    finally:
        server.allow("pods")
        api.close()
    assert informer.has_synced()


def test_tls_verification_is_on_by_default() -> None:
    cfg = kubernetes.client.Configuration()
    assert cfg.verify_ssl is True
    with LocalApiServer(tls=True, token=TOKEN) as s:
        assert s.configuration().verify_ssl is True


@pytest.mark.parametrize("how", ["configuration", "kubeconfig"])
def test_unknown_certificate_fails_clearly_and_never_syncs(
    how: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server whose CA the client was not given: the error says certificate verification
    failed and where; the informer never syncs and never talks to the server."""
    with LocalApiServer(tls=True, token=TOKEN) as s:
        if how == "configuration":
            cfg = kubernetes.client.Configuration()
            cfg.host = s.url
            cfg.api_key = {"authorization": TOKEN}
            cfg.api_key_prefix = {"authorization": "Bearer"}
            api = kubernetes.client.ApiClient(cfg)
        else:
            kubeconfig = s.kubeconfig()
            del kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]
            path = tmp_path / "kubeconfig"
            import yaml

            path.write_text(yaml.safe_dump(kubeconfig))
            api = kubernetes.config.new_client_from_config(config_file=str(path))  # type: ignore[no-untyped-call]
        lw = CountingLW(api, PODS, Pod)
        informer: SharedIndexInformer[Pod] = SharedIndexInformer(lw, Pod, name="sec-tls")
        with caplog.at_level(logging.DEBUG):
            errors = run_until(informer, lambda: len(lw.list_times) >= 2, timeout=10)
        api.close()  # type: ignore[no-untyped-call]

    assert not informer.has_synced()
    assert len(lw.list_times) >= 2, "the LIST must be retried"
    assert errors
    message = str(errors[-1])
    assert "certificate verify failed" in message.lower(), message
    assert "cannot list pods in all namespaces" in message
    assert s.url in message
    assert TOKEN not in caplog.text
    assert TOKEN not in exception_texts(errors)
