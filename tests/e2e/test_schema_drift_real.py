"""Issue 27 §1 on a real kube-apiserver: a CRD upgraded before the models are regenerated.

A CRD with a required enum `phase` (Alpha, Beta), `count: integer` and `tags: []string`;
models generated from it at test time; informers running. Then the server's CRD gains the enum
value Gamma, `count` becomes a string and `tags` a map, and objects are written in the new
shapes (updates, a create, a label-only update of a drifted object, a delete). In lazy and
eager modes and with every queue kind, the end state: every lister answer equals the server (keys, resourceVersions,
labels: nothing stale), every handler saw every change, the new enum value reads (K12), a
field of a new type raises InvalidFieldError naming the object and the field while the rest
reads (K11), and the drifted objects are counted as invalid.
"""

from __future__ import annotations

import copy
import importlib
import itertools
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.api.keys import meta_namespace_key, object_resource_version
from kubeinformers.runtime.api.model import UnknownEnumValue
from kubeinformers.runtime.codec.drift import InvalidFieldError
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.support.cluster import RealCluster, StatusError
from tests.support.view import View
from tests.support.waiting import eventually

pytestmark = pytest.mark.real_apiserver

REPO = Path(__file__).resolve().parents[2]
GROUP = "drift.kubeinformers.io"
API_VERSION = f"{GROUP}/v1"
PACKAGE = "i27_drift_informers"
# (decode, queue) -> the kind it watches: one CRD per case, since each case upgrades its own.
# Both decode modes and every queue kind are covered.
KINDS = {
    ("lazy", "delta"): "LazyProbe",
    ("eager", "ordered"): "EagerProbe",
    ("lazy", "atomic"): "AtomicProbe",
}
ACCESSORS = {
    "LazyProbe": "lazy_probes",
    "EagerProbe": "eager_probes",
    "AtomicProbe": "atomic_probes",
}


def crd(kind: str, upgraded: bool) -> dict[str, Any]:
    plural = kind.lower() + "s"
    spec_props: dict[str, Any] = {
        "phase": {"type": "string", "enum": ["Alpha", "Beta", *(["Gamma"] if upgraded else [])]},
        "count": {"type": "string"} if upgraded else {"type": "integer"},
        "tags": (
            {"type": "object", "additionalProperties": {"type": "string"}}
            if upgraded
            else {"type": "array", "items": {"type": "string"}}
        ),
        "note": {"type": "string"},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": {
                                    "type": "object",
                                    "required": ["phase"],
                                    "properties": spec_props,
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def drift_package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The models of the CRDs as they were first: generated, as a user's `make generate` would."""
    root = tmp_path_factory.mktemp("drift")
    crds = root / "crds.yaml"
    crds.write_text(yaml.safe_dump_all([crd(kind, upgraded=False) for kind in KINDS.values()]))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kubeinformers.generator",
            "generate",
            "--crd",
            str(crds),
            "--out",
            str(root / PACKAGE),
            "--package",
            PACKAGE,
            "-q",
        ],
        check=True,
        cwd=REPO,
        capture_output=True,
    )
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(f"{PACKAGE}.informers")  # where CustomInformers is
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


_NAMESPACES = itertools.count()


class Reconciler:
    """A handler that reads what a reconcile reads, and remembers what it saw per key."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: dict[str, tuple[str, str]] = {}  # key -> (resourceVersion, phase)
        self.unreadable: dict[str, str] = {}  # key -> the path of the field that raised

    def read(self, obj: Any) -> None:
        key = meta_namespace_key(obj)
        phase = str(obj.spec.phase)
        try:
            _ = obj.spec.count, obj.spec.tags
        except InvalidFieldError as err:
            with self.lock:
                self.unreadable[key] = err.path
        with self.lock:
            self.seen[key] = (object_resource_version(obj), phase)

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.read(obj)

    def on_update(self, old: Any, new: Any) -> None:
        self.read(new)

    def on_delete(self, obj: Any) -> None:
        with self.lock:
            self.seen.pop(getattr(obj, "key", None) or meta_namespace_key(obj), None)


def probe(kind: str, name: str, ns: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "drift"}},
        "spec": spec,
    }


def retrying(write: Callable[[], Any], timeout: float = 30.0) -> Any:
    """A write in the new shape, retried while the server still validates with the old CRD."""
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while True:
        try:
            return write()
        except StatusError as err:
            if err.status != 422 or time.monotonic() > deadline:
                raise
            tick.wait(0.1)


@pytest.mark.parametrize(("decode", "queue"), list(KINDS))
def test_k11_k12_a_crd_upgraded_before_the_models_keeps_the_cache_the_server(
    real_apiserver: RealApiServer,
    drift_package: Any,
    decode: str,
    queue: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="kubeinformers")
    kind = KINDS[decode, queue]
    cluster = RealCluster(real_apiserver)
    ns = cluster.namespace(f"drift-{decode}-{next(_NAMESPACES)}-{time.monotonic_ns() % 10**6}")
    cluster.ensure(crd(kind, upgraded=False))
    for i in range(3):
        cluster.create(probe(kind, f"p{i}", ns, phase="Alpha", count=i, tags=["x"]))
    api = cluster.api_client()
    factory = SharedInformerFactory(api, namespace=ns, decode=decode, queue=queue)  # type: ignore[arg-type]
    accessor = getattr(drift_package.CustomInformers(factory).drift().v1(), ACCESSORS[kind])()
    informer, lister = accessor.informer(), accessor.lister()
    view, reconciler = View(), Reconciler()
    informer.add_event_handler(
        on_add=view.on_add, on_update=view.on_update, on_delete=view.on_delete
    )
    informer.add_event_handler(
        on_add=reconciler.on_add, on_update=reconciler.on_update, on_delete=reconciler.on_delete
    )
    try:
        factory.start()
        assert all(factory.wait_for_cache_sync(timeout=60).values())

        # The CRD changes on the server; objects are written in the new shapes.
        current = cluster.get(
            "apiextensions.k8s.io/v1", "CustomResourceDefinition", f"{kind.lower()}s.{GROUP}"
        )
        upgraded = copy.deepcopy(current)
        upgraded["spec"]["versions"] = crd(kind, upgraded=True)["spec"]["versions"]
        cluster.replace(upgraded)

        def rewrite(name: str, **spec: Any) -> None:
            def write() -> Any:
                obj = cluster.get(API_VERSION, kind, name, ns)
                obj["spec"] = spec
                return cluster.replace(obj)

            retrying(write)

        rewrite("p0", phase="Gamma", count="many", tags={"k": "v"})  # every change at once
        rewrite("p1", phase="Gamma", count="two", tags={})
        retrying(lambda: cluster.create(probe(kind, "p3", ns, phase="Beta", count="3x", tags={})))
        relabel = cluster.get(API_VERSION, kind, "p1", ns)  # a label-only update of a drifted one
        relabel["metadata"]["labels"] = {"app": "drift", "tier": "gold"}
        cluster.replace(relabel)
        cluster.delete(API_VERSION, kind, "p2", ns)
        # A compatible change alone: a new enum value on an object otherwise of the old shape
        # is impossible now (count must be a string), so p4 has only the new value.
        retrying(lambda: cluster.create(probe(kind, "p4", ns, phase="Gamma", note="n")))

        server = {meta_namespace_key(o): o for o in cluster.list(API_VERSION, kind, ns)}
        expected = {k: object_resource_version(o) for k, o in server.items()}

        def converged() -> bool:
            listed = {meta_namespace_key(o): object_resource_version(o) for o in lister.list()}
            with reconciler.lock:
                seen = {k: rv for k, (rv, _phase) in reconciler.seen.items()}
            return listed == expected == view.snapshot() == seen

        assert eventually(converged), (
            {meta_namespace_key(o): object_resource_version(o) for o in lister.list()},
            expected,
            view.snapshot(),
            reconciler.seen,
        )
        # Nothing stale: each cached object is the server's newest, labels included.
        for key, obj in server.items():
            name = obj["metadata"]["name"]
            cached = lister.by_namespace(ns).get(name)
            assert cached.metadata.labels == obj["metadata"]["labels"], key
            assert cached.spec.phase == obj["spec"]["phase"], key
        gold = lister.list("tier=gold")  # a label-only update of a drifted object is not lost
        assert [o.metadata.name for o in gold] == ["p1"]

        # K12: the new enum value reads; K11: only the field of a new type raises.
        p0 = lister.by_namespace(ns).get("p0")
        assert p0.spec.phase == "Gamma" and isinstance(p0.spec.phase, UnknownEnumValue)
        with pytest.raises(InvalidFieldError) as info:
            _ = p0.spec.count
        assert info.value.path == "spec.count" and info.value.key == f"{ns}/p0"
        assert "regenerate the models" in str(info.value)
        with pytest.raises(InvalidFieldError, match=r"spec\.tags"):
            _ = p0.spec.tags
        p4 = lister.by_namespace(ns).get("p4")
        assert p4.spec.phase == "Gamma" and p4.spec.note == "n" and p4.spec.count is None
        assert reconciler.seen[f"{ns}/p4"][1] == "Gamma"
        assert f"{ns}/p4" not in reconciler.unreadable  # a compatible change is no error
        with reconciler.lock:
            assert {k: reconciler.unreadable[k] for k in (f"{ns}/p0", f"{ns}/p1", f"{ns}/p3")} == {
                f"{ns}/p0": "spec.count",
                f"{ns}/p1": "spec.count",
                f"{ns}/p3": "spec.count",
            }

        # Signals: the drifted objects are counted and logged, each once per version at most;
        # no handler failed (the reconcile caught the field's error).
        metrics = informer.metrics()
        assert metrics.invalid_objects >= 3
        assert all(h.errors == 0 for h in metrics.handlers)
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert errors and all("spec.count" in r.getMessage() for r in errors)
        assert all(r.exc_info is None for r in errors)  # no traceback
    finally:
        factory.shutdown()
        api.close()
        cluster.close()
