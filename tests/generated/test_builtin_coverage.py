"""Every list/watch-able kind of the Kubernetes 1.35 API has a typed informer and lister.

The kinds are counted straight from `swagger.json`'s `paths` — operations whose
`x-kubernetes-action` is `list` and `watch`/`watchlist`, keyed by their
`x-kubernetes-group-version-kind` — independently of the generator's own loader. They are then
found by walking the committed generated factory as a user does
(`SharedInformerFactory(api).core().v1().pods()`), and the walk's typing is checked with
mypy --strict through a usage file written from what the walk found.
"""

from __future__ import annotations

import json
import re
import typing
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.cache.listers import ClusterLister, Lister, NamespacedLister
from tests.generator.genutil import lister_model

REPO = Path(__file__).resolve().parents[2]

GVK = tuple[str, str, str]


@dataclass(frozen=True)
class SpecKind:
    """A list/watch-able kind as the spec's paths describe it."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool


def list_watch_kinds(swagger: dict[str, Any]) -> dict[GVK, SpecKind]:
    """Kinds with both a `list` and a `watch`/`watchlist` operation in the spec's paths."""
    actions: dict[GVK, set[str]] = defaultdict(set)
    plurals: dict[GVK, set[str]] = defaultdict(set)
    namespaced: dict[GVK, bool] = defaultdict(bool)
    for path, item in swagger["paths"].items():
        for op in item.values():
            if not isinstance(op, dict) or "x-kubernetes-group-version-kind" not in op:
                continue
            gvk = op["x-kubernetes-group-version-kind"]
            key = (gvk["group"], gvk["version"], gvk["kind"])
            action = op.get("x-kubernetes-action", "")
            actions[key].add(action)
            if action == "list":
                plurals[key].add(path.rsplit("/", 1)[1])
                namespaced[key] |= "/namespaces/{namespace}/" in path
    found: dict[GVK, SpecKind] = {}
    for key, acts in actions.items():
        if "list" in acts and acts & {"watch", "watchlist"}:
            (plural,) = plurals[key]  # one resource per kind in the built-in API
            found[key] = SpecKind(*key, plural=plural, namespaced=namespaced[key])
    return found


@pytest.fixture(scope="module")
def spec_kinds(shared_data: Path) -> dict[GVK, SpecKind]:
    swagger = json.loads((shared_data / "openapi" / "swagger.json").read_text())
    return list_watch_kinds(swagger)


def test_the_independent_count_sees_what_the_spec_says(spec_kinds: dict[GVK, SpecKind]) -> None:
    """Sanity of the counter itself on kinds whose shape everyone knows."""
    assert spec_kinds[("", "v1", "Pod")] == SpecKind("", "v1", "Pod", "pods", True)
    assert spec_kinds[("", "v1", "Node")].namespaced is False
    assert spec_kinds[("apps", "v1", "Deployment")].plural == "deployments"
    assert spec_kinds[("networking.k8s.io", "v1", "NetworkPolicy")].plural == "networkpolicies"
    assert ("", "v1", "ComponentStatus") not in spec_kinds  # list and get, but no watch
    assert ("", "v1", "Binding") not in spec_kinds  # create only
    assert ("authorization.k8s.io", "v1", "SubjectAccessReview") not in spec_kinds
    assert len(spec_kinds) > 60


@dataclass(frozen=True)
class Found:
    """A typed informer reached from the generated factory, and where it was reached."""

    chain: tuple[str, str, str]  # group accessor, version accessor, kind accessor
    informer_cls: type
    resource: APIResource
    lister_cls: type
    model: type


def _public_methods(cls: type) -> list[str]:
    return sorted(n for n, v in vars(cls).items() if not n.startswith("_") and callable(v))


def _lister_model(lister_cls: type) -> type:
    """T of a generated `XLister(NamespacedLister["T"])` or `XLister(ClusterLister["T"])`."""
    for base in getattr(lister_cls, "__orig_bases__", ()):
        origin = typing.get_origin(base)
        if isinstance(origin, type) and issubclass(origin, Lister):
            return typing.cast(type, lister_model(lister_cls))
    raise AssertionError(f"{lister_cls} is not a Lister[T]")


@pytest.fixture(scope="module")
def walked() -> dict[GVK, Found]:
    return walk_generated_factory()


def walk_generated_factory() -> dict[GVK, Found]:
    """Walk factory → group → version → kind accessors, calling each like a user would."""
    from kubernetes.client import ApiClient

    from kubeinformers.generated.informers import SharedInformerFactory
    from kubeinformers.runtime.cache.factory import SharedInformerFactory as RuntimeFactory

    runtime_methods = set(_public_methods(RuntimeFactory))
    factory = SharedInformerFactory(ApiClient())
    found: dict[GVK, Found] = {}
    duplicates: list[str] = []
    for group_name in _public_methods(SharedInformerFactory):
        if group_name in runtime_methods:
            continue
        group = getattr(factory, group_name)()
        for version_name in _public_methods(type(group)):
            version = getattr(group, version_name)()
            for kind_name in _public_methods(type(version)):
                typed = getattr(version, kind_name)()
                resource: APIResource = type(typed).RESOURCE
                lister = typed.lister()
                key = (resource.group, resource.version, resource.kind)
                if key in found:
                    duplicates.append(f"{key} reached twice")
                found[key] = Found(
                    (group_name, version_name, kind_name),
                    type(typed),
                    resource,
                    type(lister),
                    _lister_model(type(lister)),
                )
                assert isinstance(typed.informer(), SharedIndexInformer)
    assert duplicates == []
    return found


def test_every_list_watch_kind_has_a_typed_informer_and_lister(
    spec_kinds: dict[GVK, SpecKind], walked: dict[GVK, Found]
) -> None:
    missing = sorted(set(spec_kinds) - set(walked))
    extra = sorted(set(walked) - set(spec_kinds))
    assert missing == [], f"{len(missing)} list/watch kinds without an informer: {missing}"
    assert extra == [], f"informers for kinds the spec cannot list and watch: {extra}"


def test_each_informer_names_the_resource_the_spec_serves(
    spec_kinds: dict[GVK, SpecKind], walked: dict[GVK, Found]
) -> None:
    wrong = []
    for key, spec in sorted(spec_kinds.items()):
        res = walked[key].resource
        if (res.resource, res.namespaced) != (spec.plural, spec.namespaced):
            wrong.append(
                f"{key}: {res.resource}/{res.namespaced}, spec {spec.plural}/{spec.namespaced}"
            )
        if not res.supports_list_watch:
            wrong.append(f"{key}: verbs {sorted(res.verbs)} lack list/watch")
    assert wrong == []


def test_each_lister_is_typed_with_the_kinds_model(walked: dict[GVK, Found]) -> None:
    wrong = []
    for (_group, version, kind), found in sorted(walked.items()):
        model = found.model
        if not (issubclass(model, KubeModel) and model.__name__ == kind):
            wrong.append(f"{kind}: lister of {model!r}")
        if not re.fullmatch(rf"kubeinformers\.generated\.\w+\.{version}\.models", model.__module__):
            wrong.append(f"{kind}: model lives in {model.__module__}")
    assert wrong == []


def test_cluster_scoped_listers_have_no_namespace_step(walked: dict[GVK, Found]) -> None:
    """Namespaced: `pods(namespace)` on a NamespacedLister; cluster-scoped (`nodes`): `get(name)`
    only, on a ClusterLister (H9)."""
    wrong = []
    for key, found in sorted(walked.items()):
        step = found.chain[2]
        has_step = callable(vars(found.lister_cls).get(step))
        if has_step != found.resource.namespaced:
            wrong.append(f"{key}: namespaced={found.resource.namespaced}, {step}() step={has_step}")
        base = NamespacedLister if found.resource.namespaced else ClusterLister
        if not issubclass(found.lister_cls, base):
            wrong.append(f"{key}: {found.lister_cls.__name__} is not a {base.__name__}")
    assert wrong == []


def _usage_source(walked: dict[GVK, Found]) -> str:
    """One typed function per kind: factory → lister → first object, typed as the model."""
    imports: dict[str, set[str]] = defaultdict(set)
    funcs: list[str] = []
    for i, ((_group, _version, kind), found) in enumerate(sorted(walked.items())):
        package = found.model.__module__.rsplit(".", 1)[0]
        alias = f"{kind}_{i}"
        imports[package].add(f"{kind} as {alias}")
        g, v, k = found.chain
        call = f"factory.{g}().{v}().{k}().lister()"
        if found.resource.namespaced:
            call += f".{k}(namespace)"
        funcs.append(
            f"def use_{i}(factory: SharedInformerFactory, namespace: str, name: str) -> {alias}:\n"
            f"    items: list[{alias}] = {call}.list()\n"
            f"    return items[0] if items else {call}.get(name)\n"
        )
    head = [
        "from __future__ import annotations",
        "",
        "from kubeinformers.generated.informers import SharedInformerFactory",
    ]
    head += [f"from {p} import {', '.join(sorted(names))}" for p, names in sorted(imports.items())]
    return "\n".join(head) + "\n\n\n" + "\n\n".join(funcs)


def test_typed_path_of_every_kind_passes_mypy_strict(
    walked: dict[GVK, Found], tmp_path: Path
) -> None:
    from tests.generator.genutil import run_mypy

    usage = tmp_path / "usage_builtins.py"
    usage.write_text(_usage_source(walked))
    result = run_mypy([usage], cwd=REPO, mypy_path=[])
    assert result.returncode == 0, result.stdout + result.stderr
