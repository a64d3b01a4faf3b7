"""Issue 27 on a real kube-apiserver: rotating service-account tokens, an index function that
fails on objects, a handler that falls behind. Each ends with the lister equal to the server,
every handler's view equal to it, and the signals checked: log lines at their level and once,
metrics, health().

Tokens: a ServiceAccount with a Role to read configmaps; its tokens come from the TokenRequest
API, each bound to a Secret, so deleting the Secret kills the token (the apiserver may still
accept it for the ~10 s of its token cache: the test waits until it is refused). The informers
reach the server through a TCP proxy whose `drop_all()` makes them send new requests.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.api.keys import meta_namespace_key, object_resource_version
from kubeinformers.runtime.cache.informer import QueueKind, SharedIndexInformer
from kubeinformers.runtime.client.transport import DecodeMode
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.support.cluster import RealCluster
from tests.support.sa_tokens import (
    ServiceAccountTokens,
    token_file_kubeconfig,
    write_token,
)
from tests.support.tcp_proxy import TcpProxy
from tests.support.view import View

pytestmark = pytest.mark.real_apiserver

CREDENTIALS_LOG = "kubeinformers.credentials"
READ_CONFIGMAPS = [
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}
]


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        tick.wait(0.05)


class Env:
    def __init__(self, real: RealApiServer, cluster: RealCluster, proxy: TcpProxy) -> None:
        self.real, self.cluster, self.proxy = real, cluster, proxy
        self.names = iter(range(1_000_000))

    def namespace(self) -> str:
        return self.cluster.namespace(f"resil-{next(self.names)}")

    def server_state(self, ns: str) -> dict[str, str]:
        return {
            f"{ns}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
            for o in self.cluster.list("v1", "ConfigMap", ns)
        }


@pytest.fixture(scope="module")
def env(real_apiserver_assets: Any) -> Iterator[Env]:
    with RealApiServer(real_apiserver_assets) as real:
        cluster = RealCluster(real)
        port = int(real.server.rsplit(":", 1)[1])
        with TcpProxy(("127.0.0.1", port)) as proxy:
            yield Env(real, cluster, proxy)
        cluster.close()


def cache_state(informer: SharedIndexInformer[Any]) -> dict[str, str]:
    return {
        meta_namespace_key(o): object_resource_version(o) for o in informer.get_indexer().list()
    }


def configmap(ns: str, name: str, gen: int, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"gen": str(gen), **labels}},
        "data": {"gen": str(gen)},
    }


# --------------------------------------------------------------------------- tokens


def kubeconfig_client(env: Env, token_file: Path, tmp_path: Path) -> Any:
    from kubernetes import config

    kubeconfig = token_file_kubeconfig(
        tmp_path / "kubeconfig", env.proxy.url, env.real.ca_file, token_file
    )
    return config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]


def in_cluster_client(env: Env, token_file: Path) -> Any:
    from kubernetes import client
    from kubernetes.config.incluster_config import InClusterConfigLoader

    configuration = client.Configuration()
    loader = InClusterConfigLoader(  # type: ignore[no-untyped-call]
        token_filename=str(token_file),
        cert_filename=str(env.real.ca_file),
        try_refresh_token=True,
        environ={
            "KUBERNETES_SERVICE_HOST": "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": str(env.proxy.port),
        },
    )
    loader.load_and_set(configuration)  # type: ignore[no-untyped-call]
    return client.ApiClient(configuration)


ROTATION_CASES = [
    # (loader, decode, queue): every loader, decode mode and queue kind at least once.
    ("kubeconfig", "lazy", "delta"),
    ("in-cluster", "eager", "ordered"),
    ("kubeconfig", "eager", "atomic"),
]


@pytest.mark.parametrize(("loader", "decode", "queue"), ROTATION_CASES)
def test_token_rotation_costs_at_most_one_refused_request(
    env: Env,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    loader: str,
    decode: DecodeMode,
    queue: QueueKind,
) -> None:
    """Issue 27 §2. First the kubelet's order: the file gets the new token, then the old one
    dies: nothing is refused. Then the harsh order: the token dies before the file has the
    new one: the informer's next request is refused once (one WARNING naming the file), it
    waits for the file, re-reads it at once when it changes and says so (one INFO). No ERROR;
    the lister and the handler's view equal the server; health() is fine."""
    caplog.set_level(logging.DEBUG, logger="kubeinformers")
    ns = env.namespace()
    tokens = ServiceAccountTokens(env.cluster, ns, rules=READ_CONFIGMAPS)
    token_file = tmp_path / "token"
    token1, secret1 = tokens.new_token()
    write_token(token_file, token1)
    api = (
        kubeconfig_client(env, token_file, tmp_path)
        if loader == "kubeconfig"
        else in_cluster_client(env, token_file)
    )
    factory = SharedInformerFactory(api, namespace=ns, decode=decode, queue=queue)
    informer = factory.core().v1().config_maps().informer()
    view = View()
    informer.add_event_handler(
        on_add=view.on_add, on_update=view.on_update, on_delete=view.on_delete
    )
    lister = factory.core().v1().config_maps().lister()
    env.cluster.create(configmap(ns, "before", 0))
    try:
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=30).values())

        # 1. The kubelet's order: a new token in the file, then the old one dies (its Secret
        # deleted; the server's token cache may accept it a few seconds longer, so the new
        # token is checked to be the one sent).
        token2, secret2 = tokens.new_token()
        write_token(token_file, token2)
        env.cluster.delete("v1", "Secret", secret1, ns)
        env.proxy.drop_all()  # the informer sends new requests: with the new token
        env.cluster.create(configmap(ns, "after-rotation", 1))
        wait_for(lambda: view.snapshot() == env.server_state(ns), "the change after rotation")
        assert api.configuration.api_key["BearerToken"].split()[-1] == token2
        assert not [
            r for r in caplog.records if r.name == CREDENTIALS_LOG and r.levelno > logging.DEBUG
        ]

        # 2. The harsh order: the token dies first; the file is rotated only later.
        tokens.kill(token2, secret2)
        env.proxy.drop_all()
        wait_for(
            lambda: any("credentials refused (401)" in r.getMessage() for r in caplog.records),
            "the refused request",
        )
        env.cluster.create(configmap(ns, "while-refused", 2))  # missed while refused
        token3, _ = tokens.new_token()
        write_token(token_file, token3)
        env.cluster.create(configmap(ns, "after-renewal", 3))
        state = env.server_state(ns)
        wait_for(lambda: cache_state(informer) == env.server_state(ns), "lister = server")
        wait_for(lambda: view.snapshot() == env.server_state(ns), "the handler's view = server")
        assert {meta_namespace_key(o) for o in lister.list()} >= set(state)
    finally:
        factory.shutdown()

    mine = [r for r in caplog.records if r.name == CREDENTIALS_LOG and r.levelno >= logging.INFO]
    assert [r.levelno for r in mine] == [logging.WARNING, logging.INFO], [
        r.getMessage() for r in mine
    ]
    assert mine[0].getMessage().startswith(
        f'credentials refused (401): cannot watch configmaps in namespace "{ns}"'
    ) or mine[0].getMessage().startswith(
        f'credentials refused (401): cannot list configmaps in namespace "{ns}"'
    )
    assert mine[1].getMessage().startswith("credentials accepted again: ")
    assert str(token_file) in mine[0].getMessage() and str(token_file) in mine[1].getMessage()
    # Nothing else speaks of it above INFO: the reflector's retries of a reported 401 are
    # DEBUG. (A connection the proxy cuts just after a re-watch is an outage line: allowed.)
    others = [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING
        and r.name != CREDENTIALS_LOG
        and "the API server is unavailable" not in r.getMessage()
    ]
    assert not others, others
    for token in (token1, token2, token3):
        assert not any(token in r.getMessage() for r in caplog.records), "a token was logged"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [
        r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR
    ]
    m = informer.metrics()
    assert m.watch_errors + m.list_calls >= 1
    health = informer.health()
    assert health.synced and not health.problems()


def test_a_changed_host_is_kept_by_the_kubeconfig_loader(env: Env, tmp_path: Path) -> None:
    """Issue 27 §4: the kubeconfig loader's refresh hook writes the kubeconfig's host back on
    every request; with our credentials in place the host the user sets is the one used."""
    from kubeinformers.runtime.client.credentials import credentials_for

    token_file = tmp_path / "token"
    ns = env.namespace()
    tokens = ServiceAccountTokens(env.cluster, ns, rules=READ_CONFIGMAPS)
    token, _ = tokens.new_token()
    write_token(token_file, token)
    api = kubeconfig_client(env, token_file, tmp_path)  # points at the proxy
    credentials_for(api.configuration)
    api.configuration.host = env.real.server  # straight to the server from now on
    api.configuration.get_api_key_with_prefix("BearerToken")  # runs the hook, as requests do
    assert api.configuration.host == env.real.server


# --------------------------------------------------------------------------- index failures

MODES: list[tuple[DecodeMode, QueueKind]] = [
    (decode, queue) for decode in ("lazy", "eager") for queue in ("delta", "ordered", "atomic")
]


def by_team(obj: Any) -> list[str]:
    """An index function written for configmaps that carry a `team` label."""
    labels = obj.metadata.labels or {}
    return [labels["team"]]  # KeyError on any other configmap


@pytest.mark.parametrize(("decode", "queue"), MODES)
def test_b18_an_index_function_failing_on_real_objects_costs_no_notification(
    env: Env, caplog: pytest.LogCaptureFixture, decode: DecodeMode, queue: QueueKind
) -> None:
    """Issue 27 §1: a configmap the index function cannot place is cached and delivered
    (add, updates, delete), left out of the index until a version indexes again, logged once
    per version (ERROR) and once when it is back (INFO), counted, and listed by health()."""
    caplog.set_level(logging.INFO, logger="kubeinformers")
    ns = env.namespace()
    factory = SharedInformerFactory(env.real.api_client(), namespace=ns, decode=decode, queue=queue)
    informer = factory.core().v1().config_maps().informer()
    informer.add_indexers({"team": by_team})
    view = View()
    informer.add_event_handler(
        on_add=view.on_add, on_update=view.on_update, on_delete=view.on_delete
    )
    env.cluster.create(configmap(ns, "good", 0, team="a"))
    try:
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=30).values())
        env.cluster.create(configmap(ns, "odd", 1))
        env.cluster.replace(configmap(ns, "odd", 2))  # still no team: a second version
        wait_for(lambda: view.snapshot() == env.server_state(ns), "odd's add and update")
        health = informer.health()
        assert health.healthy and list(health.unindexed_objects) == [f"{ns}/odd"]
        assert "KeyError" in health.problems()[0]
        env.cluster.replace(configmap(ns, "odd", 3, team="b"))  # fixed
        wait_for(lambda: view.snapshot() == env.server_state(ns), "odd's fixed version")
        indexer = informer.get_indexer()
        assert [meta_namespace_key(o) for o in indexer.by_index("team", "b")] == [f"{ns}/odd"]
        assert not informer.health().unindexed_objects
        env.cluster.delete("v1", "ConfigMap", "odd", ns)
        wait_for(lambda: view.snapshot() == env.server_state(ns), "odd's delete")
        assert cache_state(informer) == env.server_state(ns)
        m = informer.metrics()
        assert (m.index_errors, m.unindexed_objects) == (2, 0)
        assert m.handlers[0].errors == 0
    finally:
        factory.shutdown()
    failed = [r for r in caplog.records if "index function 'team' failed on" in r.getMessage()]
    assert [r.levelno for r in failed] == [logging.ERROR, logging.ERROR]
    back = [r for r in caplog.records if "is in index 'team' again" in r.getMessage()]
    assert [r.levelno for r in back] == [logging.INFO]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and r not in failed], [
        r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR
    ]


# --------------------------------------------------------------------------- slow handlers


class Gated(View):
    """A handler that waits for `gate` in every callback: the slow one."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        assert self.gate.wait(30)
        super().on_add(obj, is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        assert self.gate.wait(30)
        super().on_update(old, new)

    def on_delete(self, obj: Any) -> None:
        assert self.gate.wait(30)
        super().on_delete(obj)


@pytest.mark.parametrize(("decode", "queue"), MODES)
def test_g10_g11_a_handler_that_falls_behind_is_reported_and_catches_up(
    env: Env, caplog: pytest.LogCaptureFixture, decode: DecodeMode, queue: QueueKind
) -> None:
    """Issue 27 §3: beside a fast handler, a stuck one falls behind under churn: one WARNING
    naming it, metrics and health() say so, the fast one is not held up; released, it catches
    up (one INFO) and ends with the server's state. With max_buffer (the lazy cases) its
    buffer stays bounded by merging notifications of one object."""
    caplog.set_level(logging.INFO, logger="kubeinformers")
    ns = env.namespace()
    bounded = decode == "lazy"
    factory = SharedInformerFactory(env.real.api_client(), namespace=ns, decode=decode, queue=queue)
    informer = factory.core().v1().config_maps().informer()
    fast, slow = View(), Gated()
    informer.add_event_handler(
        on_add=fast.on_add, on_update=fast.on_update, on_delete=fast.on_delete
    )
    slow_registration = informer.add_event_handler(
        slow, lag_warning_after=0.5, max_buffer=4 if bounded else None
    )
    try:
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=30).values())
        for i in range(6):
            env.cluster.create(configmap(ns, f"cm-{i}", 0))
        for gen in range(1, 4):
            for i in range(6):
                env.cluster.replace(configmap(ns, f"cm-{i}", gen))
        env.cluster.delete("v1", "ConfigMap", "cm-5", ns)
        wait_for(lambda: fast.snapshot() == env.server_state(ns), "the fast handler")
        wait_for(lambda: slow_registration.metrics().falling_behind, "the slow one to fall behind")
        behind = informer.health().handlers_behind
        assert len(behind) == 1 and behind[0].startswith(slow_registration.metrics().handler)
        m = slow_registration.metrics()
        assert m.oldest_buffered_age >= 0.5
        if bounded:
            assert m.buffered <= 4 + 6 and m.coalesced > 0
        else:
            assert m.buffered == 6 + 18 + 1 - 1  # the first one is in the handler
        slow.gate.set()
        wait_for(lambda: slow.snapshot() == env.server_state(ns), "the slow handler")
        wait_for(lambda: not slow_registration.metrics().falling_behind, "caught up")
        assert cache_state(informer) == env.server_state(ns)
        assert not informer.health().handlers_behind
    finally:
        slow.gate.set()
        factory.shutdown()
    warned = [r for r in caplog.records if "is falling behind" in r.getMessage()]
    assert [r.levelno for r in warned] == [logging.WARNING]
    assert "notifications buffered, the oldest waiting for" in warned[0].getMessage()
    caught_up = [r for r in caplog.records if "has caught up" in r.getMessage()]
    assert [r.levelno for r in caught_up] == [logging.INFO]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
