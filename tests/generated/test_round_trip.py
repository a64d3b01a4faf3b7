"""Round trip: what a real API server sends parses into the generated model of its kind and
serialises back (by alias) to exactly the same JSON, unknown fields included.

Inputs: every object in ../shared/data/apiserver-transcripts/ — list items (and the lists),
watch event objects, created objects (responses and request bodies), Status bodies — plus
hand-written, realistic objects of three real CRDs (cert-manager Certificate,
prometheus-operator ServiceMonitor, argo-cd Application) whose models are generated here.
"Equal" means equal after dropping `null`s on both sides: a null and an absent field mean
the same to the API server.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kubeinformers.runtime.api.model import KubeModel
from tests.generator.genutil import SAMPLES, generate_ok, importable

# Kinds the 1.35 OpenAPI spec has no schema for, so there is no model to round-trip through.
# (Table is what `Accept: as=Table` returns; informers never ask for it.)
NO_SCHEMA = {("meta.k8s.io/v1", "Table")}
# A CRD has no list schema (the transport reads its lists into ObjectList[T]); the items of
# these lists are round-tripped one by one.
CRD_LISTS = {("example.com/v1", "WidgetList")}


@dataclass(frozen=True)
class Sample:
    where: str  # file and position, for failure messages
    api_version: str
    kind: str
    body: dict[str, Any]
    event: str = ""  # the watch event type, for objects of watch events


def drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def _from_object(where: str, obj: dict[str, Any], event: str = "") -> Iterator[Sample]:
    """The object, and if it is a list, each of its items (which carry no kind themselves)."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    yield Sample(where, api_version, kind, obj, event)
    if kind.endswith("List") and isinstance(obj.get("items"), list):
        for i, item in enumerate(obj["items"]):
            yield Sample(
                f"{where} items[{i}]",
                item.get("apiVersion", api_version),
                item.get("kind", kind.removesuffix("List")),
                item,
            )


def transcript_samples(folder: Path) -> tuple[list[Sample], list[str]]:
    """Every object of the transcripts, and the files that hold no JSON object at all."""
    samples: list[Sample] = []
    not_json: list[str] = []
    for path in sorted(folder.glob("*.body.json")):
        text = path.read_text()
        if not text.lstrip().startswith("{"):
            not_json.append(path.name)  # e.g. the plain-text "404 page not found"
            continue
        samples.extend(_from_object(path.name, json.loads(text)))
    for path in sorted(folder.glob("*.body.jsonl")):
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            if line.strip():
                event = json.loads(line)
                where = f"{path.name}:{n} {event['type']}"
                samples.extend(_from_object(where, event["object"], event["type"]))
    for path in sorted(folder.glob("*.request.txt")):
        _, _, body = path.read_text().partition("\n\n")
        if body.lstrip().startswith("{"):
            samples.extend(_from_object(f"{path.name} (request body)", json.loads(body)))
    return samples, not_json


def _builtin_models() -> dict[tuple[str, str], type[KubeModel]]:
    """(apiVersion, kind) → model, from the generated registry and the meta/v1 module."""
    from kubeinformers.generated import registry

    models: dict[tuple[str, str], type[KubeModel]] = {}
    for resource in registry.RESOURCES:
        if resource.gvr not in registry.MODELS:
            continue
        model = registry.model_for(resource.gvr)
        module = importlib.import_module(model.__module__)
        models[(resource.api_version, resource.kind)] = model
        list_model = getattr(module, f"{resource.kind}List", None)
        if list_model is not None:
            models[(resource.api_version, f"{resource.kind}List")] = list_model
    meta = importlib.import_module("kubeinformers.generated.meta.v1")
    for kind in ("Status", "APIResourceList"):
        models[("v1", kind)] = getattr(meta, kind)
    return models


def _check(samples: list[Sample], models: dict[tuple[str, str], type[KubeModel]]) -> list[str]:
    failures = []
    for s in samples:
        model = models.get((s.api_version, s.kind))
        if model is None:
            failures.append(f"{s.where}: no model for {s.api_version} {s.kind}")
            continue
        try:
            parsed = model.model_validate_json(json.dumps(s.body))
        except ValueError as e:
            failures.append(f"{s.where}: {s.kind} does not parse: {e}")
            continue
        out = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if drop_nulls(out) != drop_nulls(s.body):
            failures.append(
                f"{s.where}: {s.kind} differs after the round trip:\n{out}\n!=\n{s.body}"
            )
    return failures


@pytest.fixture(scope="module")
def transcript_crd_models(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[tuple[str, str], type[KubeModel]]]:
    """Models of the CRD the transcripts created (example.com Widget), generated from it."""
    crd = shared_data / "apiserver-transcripts" / "08-crd-get-established.body.json"
    root = tmp_path_factory.mktemp("tx-crds")
    generate_ok(root, "h8_tx_crds", "--crd", crd)
    with importable(root, "h8_tx_crds"):
        v1 = importlib.import_module("h8_tx_crds.example.v1.models")
        yield {("example.com/v1", "Widget"): v1.Widget}


def test_every_transcript_object_round_trips_through_its_model(
    shared_data: Path, transcript_crd_models: dict[tuple[str, str], type[KubeModel]]
) -> None:
    samples, not_json = transcript_samples(shared_data / "apiserver-transcripts")
    assert not_json == ["08-cr-list-unknown-version-404.body.json"]
    checked = [s for s in samples if (s.api_version, s.kind) not in NO_SCHEMA | CRD_LISTS]
    kinds = {(s.api_version, s.kind) for s in checked}
    assert {
        ("v1", "Pod"),
        ("v1", "PodList"),
        ("v1", "Status"),
        ("example.com/v1", "Widget"),
    } <= kinds
    assert len(checked) > 150
    assert len([s for s in checked if s.event == "BOOKMARK" and s.kind == "Pod"]) >= 5
    failures = _check(checked, _builtin_models() | transcript_crd_models)
    assert failures == [], "\n\n".join(failures[:5]) + f"\n({len(failures)} failures)"


def test_bookmark_objects_metadata_round_trips(shared_data: Path) -> None:
    """A BOOKMARK's object is a stub of its kind: only metadata.resourceVersion (and the
    initial-events-end annotation) mean anything, and a real server sends it with required
    fields null (`"spec": {"containers": null}` for pods). The transport reads bookmarks
    apart from the kind's model (runtime/wire.py), through their metadata; that metadata
    round-trips through the generated ObjectMeta.
    """
    from kubeinformers.generated.meta.v1 import ObjectMeta

    samples, _ = transcript_samples(shared_data / "apiserver-transcripts")
    bookmarks = [s for s in samples if s.event == "BOOKMARK"]
    assert len(bookmarks) >= 10
    for s in bookmarks:
        meta = ObjectMeta.model_validate(s.body["metadata"])
        assert meta.resource_version
        assert meta.model_dump(mode="json", by_alias=True, exclude_unset=True) == s.body["metadata"]


BOOKMARK_POD = {
    "kind": "Pod",
    "apiVersion": "v1",
    "metadata": {"resourceVersion": "248"},
    "spec": {"containers": None},
    "status": {},
}


def test_a_required_list_sent_as_null_parses_as_none() -> None:
    """Go encodes a nil slice or map as null even in a required field: a real server's Pod
    BOOKMARK has `"spec": {"containers": null}`. Required lists and maps are `X | None`
    (default None, as Go's nil); required scalars stay required."""
    from kubeinformers.generated.core.v1 import Container, Pod, PodSpec

    pod = Pod.model_validate(BOOKMARK_POD)
    assert pod.spec is not None and pod.spec.containers is None
    assert pod.metadata is not None and pod.metadata.resource_version == "248"
    assert drop_nulls(pod.model_dump(mode="json", by_alias=True)) == drop_nulls(BOOKMARK_POD)
    assert PodSpec.model_fields["containers"].is_required() is False
    assert Container.model_fields["name"].is_required() is True


def test_the_recorded_pod_bookmark_round_trips(shared_data: Path) -> None:
    """Line 8 of the watch transcript: the BOOKMARK a real kube-apiserver sent."""
    from kubeinformers.generated.core.v1 import Pod

    lines = (shared_data / "apiserver-transcripts" / "03-watch-events.body.jsonl").read_text()
    event = json.loads(lines.splitlines()[7])
    assert event["type"] == "BOOKMARK"
    assert event["object"]["spec"] == {"containers": None}
    pod = Pod.model_validate_json(json.dumps(event["object"]))
    out = pod.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert out == event["object"]


def test_kinds_without_a_model_really_have_no_schema_in_the_spec(shared_data: Path) -> None:
    definitions = json.loads((shared_data / "openapi" / "swagger.json").read_text())["definitions"]
    for _api_version, kind in NO_SCHEMA:
        assert not [d for d in definitions if d.rsplit(".", 1)[1] == kind]


def test_unknown_fields_survive_the_round_trip() -> None:
    """A field the spec does not know (a newer server) is kept, nested or at the top."""
    from kubeinformers.generated.core.v1 import Pod

    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "futureMeta": {"a": 1}},
        "spec": {"containers": [{"name": "c", "futureContainerField": [1, "x"]}]},
        "futureTopLevel": True,
    }
    out = Pod.model_validate(body).model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert out == body


CRD_SAMPLES = {
    "cert-manager.io_v1_Certificate.json": "cert-manager/cert-manager.io_certificates.yaml",
    "monitoring.coreos.com_v1_ServiceMonitor.json": (
        "prometheus-operator/monitoring.coreos.com_servicemonitors.yaml"
    ),
    "argoproj.io_v1alpha1_Application.json": "argo-cd/application-crd.yaml",
}


@pytest.fixture(scope="module")
def real_crd_models(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[tuple[str, str], type[KubeModel]]]:
    root = tmp_path_factory.mktemp("real-crds")
    args = [a for crd in CRD_SAMPLES.values() for a in ("--crd", shared_data / "crds" / crd)]
    generate_ok(root, "h8_real_crds", *args)
    with importable(root, "h8_real_crds"):
        yield {
            ("cert-manager.io/v1", "Certificate"): importlib.import_module(
                "h8_real_crds.cert_manager.v1.models"
            ).Certificate,
            ("monitoring.coreos.com/v1", "ServiceMonitor"): importlib.import_module(
                "h8_real_crds.monitoring.v1.models"
            ).ServiceMonitor,
            ("argoproj.io/v1alpha1", "Application"): importlib.import_module(
                "h8_real_crds.argoproj.v1alpha1.models"
            ).Application,
        }


@pytest.mark.parametrize("sample", sorted(CRD_SAMPLES))
def test_hand_written_custom_resources_round_trip(
    sample: str, real_crd_models: dict[tuple[str, str], type[KubeModel]]
) -> None:
    body = json.loads((SAMPLES / sample).read_text())
    samples = list(_from_object(sample, body))
    assert _check(samples, real_crd_models) == []


def test_custom_resource_fields_are_typed_not_just_kept(
    real_crd_models: dict[tuple[str, str], type[KubeModel]],
) -> None:
    """The samples parse into typed nested models (not a bag of extras)."""
    cert_model = real_crd_models[("cert-manager.io/v1", "Certificate")]
    cert: Any = cert_model.model_validate_json(
        (SAMPLES / "cert-manager.io_v1_Certificate.json").read_text()
    )
    assert cert.spec.issuer_ref.kind == "ClusterIssuer"
    assert cert.spec.private_key.size == 256
    assert cert.status.conditions[0].last_transition_time.year == 2026
    assert cert.spec.model_extra == {"futureSpecField": {"addedIn": "v1.99", "enabled": True}}
    sm_model = real_crd_models[("monitoring.coreos.com/v1", "ServiceMonitor")]
    sm: Any = sm_model.model_validate_json(
        (SAMPLES / "monitoring.coreos.com_v1_ServiceMonitor.json").read_text()
    )
    assert sm.spec.endpoints[1].target_port == 9102
    assert sm.spec.endpoints[0].relabelings[0].source_labels == ["__meta_kubernetes_pod_node_name"]
    app_model = real_crd_models[("argoproj.io/v1alpha1", "Application")]
    app: Any = app_model.model_validate_json(
        (SAMPLES / "argoproj.io_v1alpha1_Application.json").read_text()
    )
    assert app.spec.source.repo_url.startswith("https://github.com/")
    assert app.status.operation_state.phase == "Succeeded"


# ----------------------------------------------------------------- every built-in field

FREE_FORM = {"free": {"nested": [1, "two", {"three": True}]}}
WIRE_FORMS: dict[str, Any] = {  # what a server sends for the special apimachinery types
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": ("25%", 3),
    "io.k8s.apimachinery.pkg.api.resource.Quantity": ("100m", 2),
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": ("2026-11-22T08:00:00.123456Z",) * 2,
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": ("2026-11-22T08:00:00Z",) * 2,
}


class _Synthesiser:
    """Instances of OpenAPI v3 component schemas with every property set (recursion cut)."""

    def __init__(self, schemas: dict[str, Any]) -> None:
        self.schemas = schemas

    @staticmethod
    def _ref(node: dict[str, Any]) -> str | None:
        ref = node.get("$ref")
        if ref is None and len(node.get("allOf", [])) == 1:
            ref = node["allOf"][0].get("$ref")
        return ref.rsplit("/", 1)[1] if ref else None

    def value(self, node: dict[str, Any], depth: int, stack: tuple[str, ...]) -> Any:
        name = self._ref(node)
        if name is not None:
            if name in WIRE_FORMS:
                return WIRE_FORMS[name][depth % 2]
            if name in stack:  # JSONSchemaProps refers to itself: stop here
                return None
            return self.value(self.schemas[name], depth + 1, (*stack, name))
        kind, props = node.get("type"), node.get("properties")
        if props:
            out = {k: self.value(v, depth + 1, stack) for k, v in props.items()}
            return {k: v for k, v in out.items() if v is not None}
        if kind == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                item = self.value(extra, depth + 1, stack)
                return {} if item is None else {"key": item}
            return FREE_FORM  # RawExtension, FieldsV1, free-form JSON
        if kind == "array":
            item = self.value(node.get("items", {}), depth + 1, stack)
            return [] if item is None else [item]
        if kind == "string":
            if node.get("enum"):
                return node["enum"][0]
            return {"date-time": "2026-11-22T08:00:00Z", "byte": "gICA"}.get(
                node.get("format", ""), "text"
            )
        return {"integer": 7, "number": 1.5, "boolean": True}.get(kind or "", FREE_FORM)


def test_every_builtin_kind_round_trips_an_object_that_sets_every_field(shared_data: Path) -> None:
    """For each kind of the 1.35 registry: an object setting every field of its v3 schema
    (int-or-string and quantities both ways, MicroTime, byte strings, RawExtension) plus an
    unknown field parses and serialises back unchanged."""
    from kubeinformers.generated import registry

    schemas: dict[str, Any] = {}
    for doc in sorted((shared_data / "openapi" / "v3").glob("*.json")):
        schemas.update(json.loads(doc.read_text())["components"]["schemas"])
    by_gvk = {
        (g["group"], g["version"], g["kind"]): name
        for name, schema in schemas.items()
        for g in schema.get("x-kubernetes-group-version-kind", [])
    }
    synth = _Synthesiser(schemas)
    failures, checked = [], 0
    for resource in registry.RESOURCES:
        if resource.gvr not in registry.MODELS:
            continue
        name = by_gvk[(resource.group, resource.version, resource.kind)]
        body = synth.value(schemas[name], 0, (name,))
        body |= {"apiVersion": resource.api_version, "kind": resource.kind, "h8Unknown": [1]}
        checked += 1
        try:
            parsed = registry.model_for(resource.gvr).model_validate_json(json.dumps(body))
        except ValueError as e:
            failures.append(f"{resource.kind}: does not parse: {str(e)[:400]}")
            continue
        if parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) != body:
            failures.append(f"{resource.kind}: differs after the round trip")
    assert checked >= len({r.kind for r in registry.RESOURCES if r.supports_list_watch})
    assert failures == [], "\n".join(failures)
