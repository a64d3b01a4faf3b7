"""Issue 5, end to end: the generated factory against LocalApiServer over HTTPS with a token,
and against a real kube-apiserver (issue 13, marked `real_apiserver`) with every queue kind
("delta", "ordered", "atomic") and watch-list on and off.

Pods, deployments, nodes (cluster-scoped) and the demo CRD kinds Widget (namespaced) and Gadget
(cluster-scoped, generated from crds/ at test time into a temporary package that shares the
runtime factory through `CustomInformers`; installed into the server from crds/), with a
factory restricted to one namespace and a label-selecting `tweak_list_options`. After each
phase of creates, updates and deletes every lister answer must equal the server's state seen
through the same filters, and a handler's replayed view of the pods must equal it too. Each
test has its own two namespaces (the real server is shared by the session).
"""

from __future__ import annotations

import copy
import importlib
import itertools
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubeinformers.generated.apps.v1 import Deployment
from kubeinformers.generated.core.v1 import Node, Pod
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime import labels
from kubeinformers.runtime.api.keys import (
    meta_namespace_key,
    object_labels,
    object_resource_version,
)
from kubeinformers.runtime.api.listwatch import ListOptions
from kubeinformers.runtime.api.resource import GroupVersionResource
from kubeinformers.runtime.cache.informer import QUEUE_KINDS, QueueKind
from kubeinformers.runtime.cache.listers import NotFoundError
from kubeinformers.testing.local_api_server import LocalApiServer
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.support.cluster import Cluster, RealCluster
from tests.support.view import View
from tests.support.waiting import eventually

REPO = Path(__file__).resolve().parents[2]
TOKEN = "e2e-s3cret-token"
SELECTOR = "e2e=yes"
WIDGETS = GroupVersionResource("demo.kubeinformers.io", "v1", "widgets")
GADGETS = GroupVersionResource("demo.kubeinformers.io", "v1", "gadgets")
CRD_PACKAGE = "h7_e2e_demo_informers"


@dataclass(frozen=True)
class Kind:
    api_version: str
    kind: str
    namespaced: bool

    def manifest(self, name: str, ns: str, lbls: dict[str, str], rng: random.Random) -> Any:
        meta: dict[str, Any] = {"name": name, "labels": lbls}
        if self.namespaced:
            meta["namespace"] = ns
        obj: dict[str, Any] = {"apiVersion": self.api_version, "kind": self.kind, "metadata": meta}
        obj.update(_SPECS[self.kind](rng))
        return obj


def _pod_spec(rng: random.Random) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "image": f"nginx:1.{rng.randint(20, 27)}"}]}}


def _deployment_spec(rng: random.Random) -> dict[str, Any]:
    return {
        "spec": {
            "replicas": rng.randint(0, 5),
            "selector": {"matchLabels": {"x": "y"}},
            "template": {"metadata": {"labels": {"x": "y"}}, **_pod_spec(rng)},
        }
    }


def _widget_spec(rng: random.Random) -> dict[str, Any]:
    return {
        "spec": {"size": rng.choice(["small", "medium", "large"]), "replicas": rng.randint(0, 9)}
    }


def _gadget_spec(rng: random.Random) -> dict[str, Any]:
    return {"spec": {"model": f"m-{rng.randint(1, 99)}"}}


_SPECS: dict[str, Callable[[random.Random], dict[str, Any]]] = {
    "Pod": _pod_spec,
    "Deployment": _deployment_spec,
    "Node": lambda rng: {},
    "Widget": _widget_spec,
    "Gadget": _gadget_spec,
}

POD = Kind("v1", "Pod", True)
DEPLOYMENT = Kind("apps/v1", "Deployment", True)
NODE = Kind("v1", "Node", False)
WIDGET = Kind("demo.kubeinformers.io/v1", "Widget", True)
GADGET = Kind("demo.kubeinformers.io/v1", "Gadget", False)
KINDS = (POD, DEPLOYMENT, NODE, WIDGET, GADGET)


@pytest.fixture(scope="module")
def crd_package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The demo CRDs generated into a throw-away package, as a user's `make generate` would."""
    root = tmp_path_factory.mktemp("gen")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kubeinformers.generator",
            "generate",
            "--crd",
            str(REPO / "crds"),
            "--out",
            str(root / CRD_PACKAGE),
            "--package",
            CRD_PACKAGE,
            "-q",
        ],
        check=True,
        cwd=REPO,
        capture_output=True,
    )
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(f"{CRD_PACKAGE}.informers")  # where CustomInformers is
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == CRD_PACKAGE]:
            del sys.modules[name]


def _demo_crds() -> list[dict[str, Any]]:
    return [
        doc
        for path in sorted((REPO / "crds").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


@pytest.fixture(scope="module")
def local_server() -> Iterator[LocalApiServer]:
    with LocalApiServer(tls=True, token=TOKEN) as s:
        for crd in _demo_crds():
            s.create(crd)
        yield s


@pytest.fixture(scope="module")
def real_cluster(real_apiserver: RealApiServer) -> Iterator[RealCluster]:
    cluster = RealCluster(real_apiserver)
    for crd in _demo_crds():
        cluster.ensure(crd)
    yield cluster
    cluster.close()


@dataclass(frozen=True)
class Scope:
    """A test's own namespaces: the factory watches one, the other must never show up."""

    watched: str
    other: str


_SCOPES = itertools.count()


@pytest.fixture
def server(request: pytest.FixtureRequest, backend: str) -> Cluster:
    cluster: Cluster = request.getfixturevalue(
        "local_server" if backend == "local" else "real_cluster"
    )
    return cluster


@pytest.fixture
def scope(server: Cluster) -> Scope:
    n = next(_SCOPES)
    made = Scope(f"typed-{n}-a", f"typed-{n}-b")
    for ns in (made.watched, made.other):
        server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    return made


def server_state(server: Cluster, scope: Scope, kind: Kind) -> dict[str, dict[str, Any]]:
    """What the factory should see: namespace-restricted (namespaced kinds) and selected."""
    selector = labels.parse(SELECTOR)
    namespace = scope.watched if kind.namespaced else None
    return {
        meta_namespace_key(o): o
        for o in server.list(kind.api_version, kind.kind, namespace)
        if selector.matches(object_labels(o))
    }


def versions(objs: Any) -> dict[str, str]:
    return {meta_namespace_key(o): object_resource_version(o) for o in objs}


class Harness:
    """The user's side: the generated factory, the CRD accessors, their listers."""

    def __init__(
        self, server: Cluster, scope: Scope, crd_package: Any, queue: QueueKind = "delta"
    ) -> None:
        def tweak(options: ListOptions) -> ListOptions:
            return options.copy(label_selector=SELECTOR)

        self.scope = scope
        self.api = server.api_client()
        self.factory = SharedInformerFactory(
            self.api, namespace=scope.watched, tweak_list_options=tweak, queue=queue
        )
        core, apps = self.factory.core().v1(), self.factory.apps().v1()
        self.custom = crd_package.CustomInformers(self.factory)
        self.pods, self.deployments, self.nodes = core.pods(), apps.deployments(), core.nodes()
        # H7: accessors are light wrappers; informer() creates the shared informer, and only
        # informers that exist when start() runs are started.
        self.deployments.informer()
        self.nodes.informer()
        demo = self.custom.demo().v1()
        self.widgets, self.gadgets = demo.widgets(), demo.gadgets()
        # One runtime factory: for_resource finds the CRD informers the accessors created.
        assert self.factory.for_resource(WIDGETS).informer() is self.widgets.informer()
        assert self.factory.for_resource(GADGETS).informer() is self.gadgets.informer()
        self.deletes: list[str] = []
        self.pods.informer().add_event_handler(
            on_delete=lambda obj: self.deletes.append(
                meta_namespace_key(obj) if isinstance(obj, Pod) else obj.key
            )
        )
        self.pod_view = View()
        self.pods.informer().add_event_handler(
            on_add=self.pod_view.on_add,
            on_update=self.pod_view.on_update,
            on_delete=self.pod_view.on_delete,
        )

    def all_listed(self, kind: Kind) -> Any:
        if kind is POD:
            return self.pods.lister().list()
        if kind is DEPLOYMENT:
            return self.deployments.lister().list()
        if kind is NODE:
            return self.nodes.lister().list()
        if kind is WIDGET:
            return self.widgets.lister().list()
        return self.gadgets.lister().list()

    def get(self, kind: Kind, name: str) -> Any:
        if kind is POD:
            return self.pods.lister().pods(self.scope.watched).get(name)
        if kind is DEPLOYMENT:
            return self.deployments.lister().deployments(self.scope.watched).get(name)
        if kind is NODE:
            return self.nodes.lister().get(name)
        if kind is WIDGET:
            return self.widgets.lister().widgets(self.scope.watched).get(name)
        return self.gadgets.lister().get(name)

    def converged(self, server: Cluster) -> Callable[[], bool]:
        """A check that the listers and the pod handler's view equal the server's state now
        (read once: the test is the only writer, and it has paused)."""
        expected = {
            kind: versions(server_state(server, self.scope, kind).values()) for kind in KINDS
        }

        def check() -> bool:
            return self.pod_view.snapshot() == expected[POD] and all(
                versions(self.all_listed(kind)) == expected[kind] for kind in KINDS
            )

        return check

    def check_every_answer(self, server: Cluster) -> None:
        # every handler's view: replayed callbacks equal the cache and the server (no lost,
        # no phantom object, no stale resourceVersion)
        assert self.pod_view.snapshot() == versions(server_state(server, self.scope, POD).values())
        for kind in KINDS:
            expected = server_state(server, self.scope, kind)
            listed = self.all_listed(kind)
            assert versions(listed) == versions(expected.values()), kind.kind
            for app in ("web", "db"):
                selected = labels.parse(f"app={app}")
                want = {k for k, o in expected.items() if selected.matches(object_labels(o))}
                got = {meta_namespace_key(o) for o in self._list(kind, f"app={app}")}
                assert got == want, (kind.kind, app)
            for key, wire in expected.items():
                name = key.rpartition("/")[2]
                cached = self.get(kind, name)
                assert object_resource_version(cached) == wire["metadata"]["resourceVersion"]
                assert dict(object_labels(cached)) == wire["metadata"].get("labels", {})
                self._check_fields(kind, cached, wire)
            for o in server.list(kind.api_version, kind.kind):
                key = meta_namespace_key(o)
                if key not in expected and (
                    not kind.namespaced or o["metadata"]["namespace"] == self.scope.watched
                ):
                    with pytest.raises(NotFoundError):
                        self.get(kind, o["metadata"]["name"])
        # the namespace restriction: nothing of the other namespace is ever cached
        assert self.pods.lister().pods(self.scope.other).list() == []
        assert self.widgets.lister().widgets(self.scope.other).list() == []

    def _list(self, kind: Kind, selector: str) -> Any:
        if kind is POD:
            return self.pods.lister().pods(self.scope.watched).list(selector)
        if kind is DEPLOYMENT:
            return self.deployments.lister().deployments(self.scope.watched).list(selector)
        if kind is NODE:
            return self.nodes.lister().list(selector)
        if kind is WIDGET:
            return self.widgets.lister().widgets(self.scope.watched).list(selector)
        return self.gadgets.lister().list(selector)

    @staticmethod
    def _check_fields(kind: Kind, cached: Any, wire: dict[str, Any]) -> None:
        if kind is POD:
            assert isinstance(cached, Pod)
            assert cached.spec is not None and cached.spec.containers
            assert cached.spec.containers[0].image == wire["spec"]["containers"][0]["image"]
        elif kind is DEPLOYMENT:
            assert isinstance(cached, Deployment)
            assert cached.spec is not None and cached.spec.replicas == wire["spec"]["replicas"]
        elif kind is NODE:
            assert isinstance(cached, Node)
        else:
            assert type(cached).__name__ == kind.kind
            dumped = cached.model_dump(by_alias=True, exclude_none=True)
            assert dumped["spec"] == wire["spec"]


_NAMES = itertools.count()


def apply_random_changes(
    server: Cluster, scope: Scope, rng: random.Random, phase: str, n: int
) -> None:
    """`n` creates, updates or deletes across kinds, namespaces and label sets."""
    for _ in range(n):
        kind = rng.choice(KINDS)
        ns = rng.choice((scope.watched, scope.other))
        existing = server.list(kind.api_version, kind.kind, ns if kind.namespaced else None)
        existing = [o for o in existing if o["metadata"]["name"].startswith("e2e-")]
        action = phase if phase != "mixed" else rng.choice(("create", "update", "delete"))
        if action == "create" or not existing:
            lbls = {"e2e": rng.choice(("yes", "yes", "no")), "app": rng.choice(("web", "db"))}
            server.create(kind.manifest(f"e2e-{next(_NAMES)}", ns, lbls, rng))
        elif action == "update":
            obj = copy.deepcopy(rng.choice(existing))
            # Move objects into and out of the selector, or just change them.
            obj["metadata"]["labels"] = {
                "e2e": rng.choice(("yes", "no")),
                "app": rng.choice(("web", "db")),
            }
            obj.update(_SPECS[kind.kind](rng))
            server.replace(obj)
        else:
            victim = rng.choice(existing)["metadata"]
            server.delete(kind.api_version, kind.kind, victim["name"], victim.get("namespace"))


# The local server runs the default queue with watch-list; the real one every combination.
CASES = [pytest.param("local", "delta", True, id="local-delta-watchlist")] + [
    pytest.param(
        "real",
        queue,
        watch_list,
        id=f"real-{queue}-{'watchlist' if watch_list else 'list-watch'}",
        marks=pytest.mark.real_apiserver,
    )
    for queue in QUEUE_KINDS
    for watch_list in (True, False)
]


@pytest.mark.parametrize(("backend", "queue", "watch_list"), CASES)
def test_issue5_generated_factory_listers_equal_server_state(
    server: Cluster,
    scope: Scope,
    crd_package: Any,
    queue: QueueKind,
    watch_list: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # D17: the WatchListClient gate chooses watch-list (initial events over a watch) or LIST
    monkeypatch.setenv("KUBE_FEATURE_WatchListClient", "true" if watch_list else "false")
    rng = random.Random(20261122)
    apply_random_changes(server, scope, rng, "create", 40)  # state before the informers start
    user = Harness(server, scope, crd_package, queue)
    try:
        with user.factory:
            user.custom.start()  # the CRD accessor starts the one shared factory
            synced = user.factory.wait_for_cache_sync(timeout=60)
            assert synced == {
                gvr: True
                for gvr in (
                    GroupVersionResource("", "v1", "pods"),
                    GroupVersionResource("apps", "v1", "deployments"),
                    GroupVersionResource("", "v1", "nodes"),
                    WIDGETS,
                    GADGETS,
                )
            }
            assert all(i.queue_kind == queue for i in user.factory.informers().values())
            assert eventually(user.converged(server)), "no convergence after the sync"
            user.check_every_answer(server)
            for phase, n in (("create", 40), ("update", 40), ("mixed", 60), ("delete", 30)):
                apply_random_changes(server, scope, rng, phase, n)
                assert eventually(user.converged(server)), f"no convergence after {phase}"
                user.check_every_answer(server)
            assert user.deletes, "pod deletions reached the handler"
        assert all(i.is_stopped() for i in user.factory.informers().values())
    finally:
        user.api.close()
