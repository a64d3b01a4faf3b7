"""The CRDs we write ourselves (crds/ and the golden fixtures) are ones a kube-apiserver accepts.

The checker in `structural.py` is itself checked twice: it accepts all 157 real CRDs of the
shared corpus (real servers accept them), and it rejects small non-structural schemas.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.generator.genutil import generate_ok, importable
from tests.generator.structural import crd_problems, iter_crd_files, load_documents

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_CRDS = REPO / "crds"
GOLDEN = Path(__file__).parent / "fixtures" / "golden"


def _all_problems(folder: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in iter_crd_files(folder):
        for index, doc in enumerate(load_documents(path)):
            problems = crd_problems(doc)
            if problems:
                found[f"{path.relative_to(folder)}#{index}"] = problems
    return found


def test_example_crds_are_valid_structural_crds() -> None:
    assert list(iter_crd_files(EXAMPLE_CRDS)), "crds/ holds no CRD"
    assert _all_problems(EXAMPLE_CRDS) == {}


def test_example_crds_cover_the_demo_shapes() -> None:
    """crds/ has a namespaced kind with two served versions (v1 stored) and a cluster kind."""
    crds = [doc for p in iter_crd_files(EXAMPLE_CRDS) for doc in load_documents(p)]
    by_kind = {c["spec"]["names"]["kind"]: c for c in crds}
    widget, gadget = by_kind["Widget"], by_kind["Gadget"]
    assert widget["spec"]["group"] == gadget["spec"]["group"] == "demo.kubeinformers.io"
    assert widget["spec"]["scope"] == "Namespaced"
    assert gadget["spec"]["scope"] == "Cluster"
    served = {v["name"]: v["storage"] for v in widget["spec"]["versions"] if v["served"]}
    assert served == {"v1alpha1": False, "v1": True}
    spec = widget["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    props = spec["properties"]
    assert props["port"]["x-kubernetes-int-or-string"] is True
    assert props["memory"]["x-kubernetes-int-or-string"] is True and "pattern" in props["memory"]
    assert props["owner"]["properties"]["team"]["type"] == "object"
    assert props["parts"]["items"]["type"] == "object"
    assert props["tags"]["additionalProperties"] == {"type": "string"}
    assert "enum" in props["size"]
    assert props["config"]["x-kubernetes-preserve-unknown-fields"] is True
    assert widget["spec"]["versions"][1]["subresources"]["status"] == {}


def test_golden_fixtures_are_valid_structural_crds() -> None:
    assert _all_problems(GOLDEN) == {}


def test_checker_accepts_every_real_crd_of_the_corpus(shared_data: Path) -> None:
    folder = shared_data / "crds"
    assert len(list(iter_crd_files(folder))) == 157
    assert _all_problems(folder) == {}


def _crd(schema: dict[str, Any], **version: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Thing", "listKind": "ThingList", "plural": "things"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": True, "storage": True}
                | {"schema": {"openAPIV3Schema": schema}}
                | version
            ],
        },
    }


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"type": "object", "properties": {"a": {}}}, "properties.a must specify a type"),
        (
            {"type": "object", "properties": {"a": {"type": "string", "anyOf": [{"type": "a"}]}}},
            "anyOf[0] must not set type",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "object", "oneOf": [{"properties": {"b": {}}}]}},
            },
            "oneOf[0].properties.b is not specified outside",
        ),
        (
            {"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}},
            "properties.n.default 'x' is not a integer",
        ),
        (
            {
                "type": "object",
                "properties": {
                    "l": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["k"],
                        "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                    }
                },
            },
            "list-map key 'k' must be required or defaulted",
        ),
        (
            {"type": "object", "properties": {"metadata": {"type": "object", "properties": {}}}}
            | {"properties": {"metadata": {"type": "object", "properties": {"x": {}}}}},
            "only name and generateName",
        ),
    ],
)
def test_checker_rejects_non_structural_schemas(schema: dict[str, Any], fragment: str) -> None:
    problems = crd_problems(_crd(schema))
    assert any(fragment in p for p in problems), problems


def test_checker_rejects_two_storage_versions_and_a_wrong_name() -> None:
    crd = _crd({"type": "object"})
    crd["metadata"]["name"] = "thing.example.com"
    crd["spec"]["versions"].append(
        {"name": "v2", "served": True, "storage": True, "schema": {"openAPIV3Schema": {}}}
    )
    problems = crd_problems(crd)
    assert "metadata.name must be things.example.com" in problems
    assert any("exactly one version must be the storage version" in p for p in problems)
    assert any("the root schema must be of type object" in p for p in problems)


# --------------------------------------------------------------------------- generated


@pytest.fixture(scope="module")
def demo_pkg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """crds/ generated as `make generate` does, imported as package `h8_demo`."""
    root = tmp_path_factory.mktemp("demo")
    generate_ok(root, "h8_demo", "--crd", EXAMPLE_CRDS)
    with importable(root, "h8_demo"):
        yield importlib.import_module("h8_demo")


WIDGET = {
    "apiVersion": "demo.kubeinformers.io/v1",
    "kind": "Widget",
    "metadata": {"name": "w1", "namespace": "shop", "labels": {"app": "demo"}},
    "spec": {
        "size": "large",
        "color": "teal",
        "replicas": 3,
        "port": "http",
        "memory": "128Mi",
        "owner": {"name": "ana", "team": {"name": "platform", "channel": "#plat"}},
        "parts": [{"name": "gear", "count": 2, "weight": 5}, {"name": "axle", "weight": "1.5Gi"}],
        "tags": {"tier": "gold"},
        "config": {"anything": [1, {"goes": None}], "deep": {"er": True}},
        "paused": False,
        "notBefore": "2026-11-22T08:00:00Z",
    },
    "status": {
        "phase": "Ready",
        "readyReplicas": 3,
        "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-22T08:01:00Z"}
        ],
    },
}


def test_example_crds_generate_typed_models_that_round_trip(demo_pkg: Any) -> None:
    v1 = importlib.import_module("h8_demo.demo.v1.models")
    widget = v1.Widget.model_validate(WIDGET)
    spec = widget.spec
    assert (spec.port, spec.memory, spec.parts[0].weight) == ("http", "128Mi", 5)
    assert spec.owner.team.channel == "#plat"
    assert spec.tags == {"tier": "gold"}
    assert spec.config == WIDGET["spec"]["config"]  # type: ignore[index]
    assert spec.not_before.year == 2026 and spec.not_before.utcoffset() is not None
    assert widget.status.conditions[0].last_transition_time.minute == 1
    assert widget.model_dump(mode="json", exclude_unset=True) == WIDGET
    gadget = v1.Gadget.model_validate({"metadata": {"name": "g"}, "spec": {"model": "x1"}})
    assert gadget.spec.model == "x1"


def test_example_crds_accessors_versions_and_scopes(demo_pkg: Any) -> None:
    """demo() has v1alpha1 (widgets only) and v1 (widgets, gadgets); Gadget is cluster-wide."""
    assert callable(importlib.import_module("h8_demo.informers").CustomInformers.demo)
    group = importlib.import_module("h8_demo.demo.informers").DemoInformers
    assert {n for n in vars(group) if not n.startswith("_")} == {"v1alpha1", "v1"}
    v1 = importlib.import_module("h8_demo.demo.v1.informers")
    v1alpha1 = importlib.import_module("h8_demo.demo.v1alpha1.informers")
    assert {"widgets", "gadgets"} <= set(vars(v1.DemoV1Informers))
    assert "widgets" in vars(v1alpha1.DemoV1alpha1Informers)
    assert "gadgets" not in vars(v1alpha1.DemoV1alpha1Informers)
    listers = importlib.import_module("h8_demo.demo.v1.listers")
    assert "widgets" in vars(listers.WidgetLister)
    assert "gadgets" not in vars(listers.GadgetLister)
    assert listers.GadgetLister.RESOURCE.namespaced is False
    v1alpha1 = importlib.import_module("h8_demo.demo.v1alpha1.models")
    assert "parts" not in v1alpha1.WidgetSpec.model_fields
