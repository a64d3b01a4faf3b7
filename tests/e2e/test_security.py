"""Security (issue 8): 401 and 403 give a clear error naming the resource and the missing
permission, are retried with growing backoff (D3/D4), and never leak a credential into a log
record or an exception; TLS is verified by default and an unknown certificate fails clearly.

Against LocalApiServer over HTTPS, and against a real kube-apiserver (issue 13, marked
`real_apiserver`): there the 403 comes from RBAC for the authenticated user `noperms`, and is
lifted by a RoleBinding in the test's own namespace. The reflector's backoff starts at 0.2 s instead of 0.8 s
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
import yaml

from kubeinformers.generated.core.v1 import Pod
from kubeinformers.generated.core.v1.informers import PodInformer
from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.listwatch import ListOptions, ObjectList
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.client.transport import ApiListerWatcher
from kubeinformers.runtime.reflector import reflector as reflector_module
from kubeinformers.runtime.reflector.backoff import Backoff
from kubeinformers.testing.local_api_server import LocalApiServer
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.support.cluster import RealCluster

TOKEN = "sec-test-admin-t0ken-9f3c"
WRONG_TOKEN = "sec-test-wrong-t0ken-77ab"
PODS = PodInformer.RESOURCE


@pytest.fixture
def backoff_from_0_2s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reflector_module, "Backoff", functools.partial(Backoff, initial=0.2))


@pytest.fixture(scope="module")
def local_server() -> Iterator[LocalApiServer]:
    with LocalApiServer(tls=True, token=TOKEN) as s:
        s.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
        yield s


class Target:
    """One server as these tests need it: clients that are unauthenticated, refused or
    allowed, and the credentials that must never appear anywhere."""

    url: str
    secrets: tuple[str, ...]

    def admin_api(self) -> Any:
        raise NotImplementedError

    def forbidden_api(self, namespace: str) -> Any:
        """A client whose list/watch of pods in `namespace` (and cluster-wide) gets 403."""
        raise NotImplementedError

    def allow(self, namespace: str) -> None:
        """Lift the 403 for pods in `namespace`."""
        raise NotImplementedError

    def forget(self) -> None:
        """Undo what forbidden_api/allow changed on a shared server."""

    def kubeconfig(self) -> dict[str, Any]:
        raise NotImplementedError


class LocalTarget(Target):
    def __init__(self, server: LocalApiServer) -> None:
        self.server, self.url, self.secrets = server, server.url, (TOKEN,)

    def admin_api(self) -> Any:
        return self.server.api_client()

    def forbidden_api(self, namespace: str) -> Any:
        self.server.forbid("pods", ["list", "watch"])
        return self.server.api_client()

    def allow(self, namespace: str) -> None:
        self.server.allow("pods")

    def forget(self) -> None:
        self.server.allow("pods")

    def kubeconfig(self) -> dict[str, Any]:
        return self.server.kubeconfig()


class RealTarget(Target):
    """RBAC does the refusing: user `noperms` is authenticated and bound to nothing."""

    def __init__(self, server: RealApiServer) -> None:
        self.server, self.url = server, server.server
        self.secrets = tuple(
            server.configuration(user).api_key["authorization"] for user in ("admin", "noperms")
        )
        self.cluster = RealCluster(server)

    def admin_api(self) -> Any:
        return self.server.api_client()

    def forbidden_api(self, namespace: str) -> Any:
        return self.server.api_client(user="noperms")

    def kubeconfig(self) -> dict[str, Any]:
        loaded: dict[str, Any] = yaml.safe_load(self.server.kubeconfig.read_text())
        return loaded

    def forget(self) -> None:
        self.cluster.close()

    def allow(self, namespace: str) -> None:
        self.cluster.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": "pod-reader", "namespace": namespace},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]}],
            }
        )
        self.cluster.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "noperms-reads-pods", "namespace": namespace},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": "pod-reader",
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "noperms"}
                ],
            }
        )


_NAMESPACES = itertools.count()

BACKENDS = ["local", pytest.param("real", marks=pytest.mark.real_apiserver)]


@pytest.fixture(params=BACKENDS)
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    made: Target
    if request.param == "local":
        made = LocalTarget(request.getfixturevalue("local_server"))
    else:
        made = RealTarget(request.getfixturevalue("real_apiserver"))
    try:
        yield made
    finally:
        made.forget()


@pytest.fixture
def namespace(target: Target) -> str:
    """A namespace of the test's own (the real server is shared by the session)."""
    name = f"sec-{next(_NAMESPACES)}"
    api = target.admin_api()
    try:
        kubernetes.client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    finally:
        api.close()
    return name


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


@pytest.mark.parametrize("in_namespace", [False, True], ids=["all-namespaces", "namespace"])
def test_401_names_the_resource_retries_with_backoff_and_never_logs_a_token(
    target: Target,
    backoff_from_0_2s: None,
    caplog: pytest.LogCaptureFixture,
    in_namespace: bool,
    request: pytest.FixtureRequest,
) -> None:
    namespace: str | None = request.getfixturevalue("namespace") if in_namespace else None
    api = target.admin_api()
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
    assert f"cannot list pods in {where} at {target.url}" in message
    assert "check the credentials" in message
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    # D23: static credentials refused: one ERROR per episode, naming request, resource, server
    assert len(logged) == 1, logged
    assert logged[0].startswith("credentials refused (401): cannot ")
    assert f"pods in {where} at {target.url}" in logged[0]
    for secret in (WRONG_TOKEN, *target.secrets):
        assert secret not in caplog.text
        assert secret not in exception_texts(errors)


def test_403_names_the_missing_permission_retries_and_never_logs_the_token(
    target: Target, backoff_from_0_2s: None, caplog: pytest.LogCaptureFixture, namespace: str
) -> None:
    api = target.forbidden_api(namespace)
    try:
        lw = CountingLW(api, PODS, Pod)
        informer: SharedIndexInformer[Pod] = SharedIndexInformer(lw, Pod, name="sec-403")
        with caplog.at_level(logging.DEBUG):
            errors = run_until(informer, lambda: len(lw.list_times) >= 4, timeout=10)
    finally:
        api.close()

    assert not informer.has_synced()
    assert_backs_off(lw.list_times)
    statuses = [e for e in errors if isinstance(e, ApiStatusError)]
    assert statuses and all(e.code == 403 for e in statuses), errors
    message = str(statuses[-1])
    # the resource, the verb that is missing, and what to do
    assert f"cannot list pods in all namespaces at {target.url}" in message
    assert 'cannot list resource "pods"' in message
    assert "RBAC" in message
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("access to" in m and "denied (HTTP 403" in m for m in logged), logged
    for secret in target.secrets:
        assert secret not in caplog.text
        assert secret not in exception_texts(errors)


def test_403_lifted_the_informer_syncs_by_itself(
    target: Target, backoff_from_0_2s: None, namespace: str
) -> None:
    """Retrying is not for show: once RBAC allows it, the same informer syncs."""
    api = target.forbidden_api(namespace)
    lw = CountingLW(api, PODS, Pod, namespace=namespace)
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(lw, Pod, name="sec-403-lifted")
    lifted = threading.Event()

    def lift_after_two_attempts() -> bool:
        if len(lw.list_times) >= 2 and not lifted.is_set():
            lifted.set()
            target.allow(namespace)
        return informer.has_synced()

    try:
        run_until(informer, lift_after_two_attempts, timeout=30)
    finally:
        api.close()
    assert lifted.is_set() and informer.has_synced()


def test_tls_verification_is_on_by_default(target: Target) -> None:
    cfg = kubernetes.client.Configuration()
    assert cfg.verify_ssl is True
    api = target.admin_api()
    try:
        assert api.configuration.verify_ssl is True
        assert api.configuration.ssl_ca_cert, "the server's own CA is given, not verification off"
    finally:
        api.close()


@pytest.mark.parametrize("how", ["configuration", "kubeconfig"])
def test_unknown_certificate_fails_clearly_and_never_syncs(
    target: Target, how: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server whose CA the client was not given: the error says certificate verification
    failed and where; the informer never syncs and never talks to the server."""
    if how == "configuration":
        cfg = kubernetes.client.Configuration()
        cfg.host = target.url
        cfg.api_key = {"authorization": target.secrets[0]}
        cfg.api_key_prefix = {"authorization": "Bearer"}
        api = kubernetes.client.ApiClient(cfg)
    else:
        kubeconfig = target.kubeconfig()
        cluster = kubeconfig["clusters"][0]["cluster"]
        cluster.pop("certificate-authority-data", None)
        cluster.pop("certificate-authority", None)
        path = tmp_path / "kubeconfig"
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
    assert target.url in message
    for secret in target.secrets:
        assert secret not in caplog.text
        assert secret not in exception_texts(errors)
