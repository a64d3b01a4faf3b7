"""Golden CRD fixtures through the real generator: names, scopes, versions, keyword fields.

All fixtures of fixtures/golden/ are generated in one run (as a user would, so that group
collisions can happen), imported, exercised, and type-checked with mypy --strict.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import textwrap
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kubeinformers.runtime.cache.store import NAMESPACE_INDEX, Indexer, meta_namespace_index_func
from tests.generator.genutil import (
    GOLDEN,
    GOLDEN_GROUP_ACCESSORS,
    MARKER,
    REPO,
    Run,
    generate_ok,
    import_all,
    importable,
    lister_model,
    python_files,
    run_mypy,
    tree_bytes,
)

PKG = "h8_golden"
FACTORY_METHODS = {"start", "shutdown", "wait_for_cache_sync", "factory"}


@dataclass(frozen=True)
class Golden:
    root: Path
    pkg_dir: Path
    run: Run


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Golden]:
    root = tmp_path_factory.mktemp("golden")
    run = generate_ok(root, PKG, "--crd", GOLDEN)
    with importable(root, PKG):
        yield Golden(root, root / PKG, run)


def _mod(name: str) -> Any:
    return importlib.import_module(f"{PKG}.{name}")


class _GroupVersion:
    """Everything a CRD group-version package defines, by name: its package exports none of
    it (so that a type checker reading one kind reads only that kind), its `.models`,
    `.informers` and `.listers` modules do."""

    def __init__(self, name: str) -> None:
        self.modules = [_mod(f"{name}.{m}") for m in ("models", "informers", "listers")]

    def __getattr__(self, attr: str) -> Any:
        for module in self.modules:
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(attr)


def _gv(name: str) -> Any:
    return _GroupVersion(name)


def _public_methods(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if not n.startswith("_") and callable(v)}


def _ns_indexer(*objects: Any) -> Indexer[Any]:
    indexer: Indexer[Any] = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    for obj in objects:
        indexer.add(obj)
    return indexer


def test_every_file_is_marked_generated_and_every_module_imports(golden: Golden) -> None:
    files = python_files(golden.pkg_dir)
    assert files
    unmarked = [str(f) for f in files if not f.read_text().startswith(MARKER + "\n")]
    assert unmarked == []
    modules = import_all(golden.root, golden.pkg_dir)
    assert f"{PKG}.my_app.v1.models" in modules


def test_group_accessors_are_first_dns_labels_in_snake_case(golden: Golden) -> None:
    """client-go's rule: first DNS label (`my-app` → `my_app`); colliding `ops` lengthened."""
    top = importlib.import_module(f"{PKG}.informers")
    accessors = _public_methods(top.CustomInformers) - FACTORY_METHODS
    assert accessors == GOLDEN_GROUP_ACCESSORS
    packages = {p.name for p in golden.pkg_dir.iterdir() if (p / "__init__.py").is_file()}
    assert packages == accessors


def test_hyphenated_group_keeps_its_api_name_in_the_resource(golden: Golden) -> None:
    v1 = _gv("my_app.v1")
    assert v1.GizmoInformer.RESOURCE.group == "my-app.example.com"
    assert v1.GizmoInformer.RESOURCE.api_version == "my-app.example.com/v1"
    gizmo = v1.Gizmo.model_validate(
        {"apiVersion": "my-app.example.com/v1", "kind": "Gizmo", "spec": {"shape": {"sides": 5}}}
    )
    assert gizmo.spec.shape.sides == 5


def test_first_label_collision_is_reported_naming_both_groups(golden: Golden) -> None:
    """One summary note for all groups so named, not one per group."""
    notes = [line for line in golden.run.output.splitlines() if "first label" in line]
    assert len(notes) == 1, notes
    assert "2 group(s) share their first label" in notes[0]
    assert "ops.alpha.example.com \u2192 ops_alpha()" in notes[0]
    assert "ops.beta.example.org \u2192 ops_beta()" in notes[0]


def test_first_label_collision_resolution_is_deterministic(golden: Golden, tmp_path: Path) -> None:
    """Inputs in another order (each file named, the ops files reversed) and other hash
    seeds (set and dict order): identical output."""
    files = sorted(GOLDEN.glob("*.yaml"), reverse=True)
    args = [a for f in files for a in ("--crd", f)]
    generate_ok(tmp_path, PKG, *args, env={"PYTHONHASHSEED": "1"})
    assert tree_bytes(tmp_path / PKG) == tree_bytes(golden.pkg_dir)
    generate_ok(tmp_path / "again", PKG, "--crd", GOLDEN, env={"PYTHONHASHSEED": "2"})
    assert tree_bytes(tmp_path / "again" / PKG) == tree_bytes(golden.pkg_dir)


def test_no_collision_no_lengthening(tmp_path: Path) -> None:
    """With only one of the two `ops` groups present, its accessor is plain `ops`."""
    run = generate_ok(
        tmp_path, "h8_one_ops", "--crd", GOLDEN / "ops.beta.example.org_runbooks.yaml"
    )
    assert (tmp_path / "h8_one_ops" / "ops" / "v1beta1" / "models.py").is_file()
    assert "label clashes" not in run.output


def test_same_kind_in_two_groups_keeps_two_models(golden: Golden) -> None:
    alpha = _gv("ops_alpha.v1").Runbook
    beta = _gv("ops_beta.v1beta1").Runbook
    assert alpha is not beta
    assert "alpha" in alpha.model_fields["spec"].annotation.__args__[0].model_fields
    spec_beta = beta.model_validate({"spec": {"beta": {"retries": 3}}}).spec
    assert spec_beta.beta.retries == 3
    assert _gv("ops_alpha.v1").RunbookInformer.RESOURCE.group == "ops.alpha.example.com"
    assert _gv("ops_beta.v1beta1").RunbookInformer.RESOURCE.group == "ops.beta.example.org"


def test_irregular_plurals_name_the_kind_accessors(golden: Golden) -> None:
    """Policy/policies and Index/indices: the accessor is the CRD's plural, not kind + s."""
    v1 = _gv("policy.v1")
    assert _public_methods(v1.PolicyV1Informers) == {"policies", "indices"}
    assert v1.PolicyInformer.RESOURCE.resource == "policies"
    assert v1.IndexInformer.RESOURCE.resource == "indices"
    assert "indices" in _public_methods(v1.IndexLister)
    assert "policies" in _public_methods(v1.PolicyLister)


def test_kinds_keep_their_class_names_when_nested_types_clash(golden: Golden) -> None:
    """Thing.spec would be `ThingSpec`, Thing.extra `ThingExtra`: both are kinds here."""
    clash = _gv("clash.v1")
    assert (clash.Thing.__name__, clash.ThingSpec.__name__) == ("Thing", "ThingSpec")
    assert set(clash.ThingSpec.model_fields) == {"api_version", "kind", "metadata", "spec"}
    assert set(clash.ThingExtra.model_fields) == {"api_version", "kind", "metadata", "spec"}
    thing = clash.Thing.model_validate({"spec": {"a": "1"}, "extra": {"fromThing": "2"}})
    assert (thing.spec.a, thing.extra.from_thing) == ("1", "2")
    assert type(thing.spec) is not clash.ThingSpec
    assert type(thing.extra) is not clash.ThingExtra
    assert clash.ThingSpecLister.RESOURCE.kind == "ThingSpec"
    assert _lister_model(clash.ThingSpecLister) is clash.ThingSpec
    assert _lister_model(clash.ThingExtraLister) is clash.ThingExtra


def test_keyword_and_digit_names_become_identifiers(golden: Golden) -> None:
    """Group label `in` → `in_()`, plural `pass` → `pass_()`, label `3scale` → `n3scale()`."""
    in_v1 = _gv("in_.v1")
    assert _public_methods(in_v1.InV1Informers) == {"pass_"}
    assert in_v1.PassInformer.RESOURCE.resource == "pass"
    assert in_v1.PassInformer.RESOURCE.group == "in.example.com"
    assert "pass_" in _public_methods(in_v1.PassLister)
    apis = _gv("n3scale.v1")
    assert apis.APIInformer.RESOURCE.group == "3scale.example.net"
    assert _public_methods(apis.N3scaleV1Informers) == {"apis"}


def test_kinds_keep_their_names_and_the_imports_are_aliased(golden: Golden) -> None:
    """Issue 15 bug 4: the class of kind K is K (`Field`, `UUID`, `Any`, `postgresql`); the
    model module imports pydantic's Field / typing's Any under an alias instead."""
    reserved = _gv("reserved.v1")
    classes = {k: getattr(reserved, k) for k in ("Field", "UUID", "Any", "postgresql")}
    assert {k: c.__name__ for k, c in classes.items()} == {k: k for k in classes}
    assert _public_methods(reserved.ReservedV1Informers) == {
        "fields",
        "uuids",
        "anies",
        "postgresqls",
    }
    assert _lister_model(reserved.FieldLister) is classes["Field"]
    assert _lister_model(reserved.UUIDLister) is classes["UUID"]
    assert _lister_model(reserved.PostgresqlLister) is classes["postgresql"]
    assert reserved.FieldInformer.RESOURCE.kind == "Field"
    assert reserved.PostgresqlInformer.RESOURCE.kind == "postgresql"
    assert reserved.UUIDLister.RESOURCE.namespaced is False
    registry = _mod("registry")
    for informer, cls in [
        (reserved.FieldInformer, classes["Field"]),
        (reserved.UUIDInformer, classes["UUID"]),
        (reserved.AnyInformer, classes["Any"]),
        (reserved.PostgresqlInformer, classes["postgresql"]),
    ]:
        assert registry.model_for(informer.RESOURCE.gvr) is cls
    field_source = (golden.pkg_dir / "reserved/v1/field.py").read_text()
    assert "from pydantic import Field as _Field\n" in field_source
    assert (
        "from typing import Annotated, Any as _Any"
        in (golden.pkg_dir / "reserved/v1/any.py").read_text()
    )
    field = classes["Field"].model_validate(
        {"kind": "Field", "spec": {"cropName": "rye", "areaM2": 9}}
    )
    assert (field.spec.crop_name, field.spec.area_m2) == ("rye", 9)
    assert field.model_dump(mode="json", exclude_unset=True)["spec"] == {
        "cropName": "rye",
        "areaM2": 9,
    }
    value = "e56657e3-764f-11ef-a397-65231a88c216"
    assert classes["UUID"].model_validate({"spec": {"value": value}}).model_dump(
        mode="json", exclude_unset=True
    ) == {"spec": {"value": value}}
    anything = {"spec": {"payload": [1, {"two": None}], "labels": {"a": "b"}}}
    assert classes["Any"].model_validate(anything).model_dump(exclude_unset=True) == anything
    pg = classes["postgresql"].model_validate({"spec": {"teamId": "acid"}})
    assert pg.spec.team_id == "acid"


def test_generator_prints_the_kinds_it_cannot_keep(tmp_path: Path) -> None:
    """A kind that is no Python identifier is the only rename, and the CLI says so."""
    crd = (GOLDEN / "reserved.example.com_fields.yaml").read_text().split("\n---\n")[-1]
    crd = crd.replace("kind: postgresql\n", "kind: None\n")
    (tmp_path / "none.yaml").write_text(crd)
    run = generate_ok(tmp_path, "renamed", "--crd", tmp_path / "none.yaml")
    assert "kind 'None' is not a Python identifier; its class is None_" in run.stderr
    assert "class None_(" in (tmp_path / "renamed/reserved/v1/none.py").read_text()


def test_enums_are_literals_descriptions_reach_fields_acronyms_split(golden: Golden) -> None:
    """Issue 15: CRD enums → Literal (open to values added later, K12), descriptions → Field(
    description=...), `assignedIPv4` → `assigned_ipv4`, `enableK8sTokenAuth` →
    `enable_k8s_token_auth`, and the aliases give the API's spelling back exactly."""
    spec_cls = _gv("reserved.v1").FieldSpec
    fields = spec_cls.model_fields
    assert fields["soil"].description == "The kind of soil."
    assert fields["crop_name"].description == "What grows on the field."
    assert typing.get_args(typing.get_args(fields["soil"].annotation)[0]) == (
        "clay",
        "sand",
        "loamy sand",
    )
    body = {
        "soil": "loamy sand",
        "rows": 4,
        "assignedIPv4": "10.0.0.1",
        "enableK8sTokenAuth": True,
        "plantedAt": "2026-11-23T08:00:00Z",
        "extra": {"free": [1]},
    }
    spec = spec_cls.model_validate(body)
    assert (spec.assigned_ipv4, spec.enable_k8s_token_auth) == ("10.0.0.1", True)
    assert spec.model_dump(mode="json", exclude_unset=True) == body
    # K12: a value the CRD gained later reads (as an UnknownEnumValue), and stays a str
    peat = spec_cls.model_validate({**body, "soil": "peat"}).soil
    assert peat == "peat" and type(peat).__name__ == "UnknownEnumValue"
    assert spec_cls.model_validate({**body, "rows": 3}).rows == 3  # an integer enum: `| int`
    with pytest.raises(ValueError, match="rows"):
        spec_cls.model_validate({**body, "rows": "three"})


def test_embedded_core_types_are_the_builtin_classes(golden: Golden) -> None:
    """Issue 15: a CRD object shaped like a core type (descriptions aside, written against an
    older Kubernetes) is that type's built-in class, so a user passes a core Toleration where
    the CRD wants one; an object with a field the core type lacks keeps its own class."""
    from kubeinformers.generated.core.v1 import ResourceRequirements, Toleration
    from kubeinformers.generated.meta.v1 import LabelSelector

    embed = _gv("embed.v1")
    fields = embed.JobSpec.model_fields
    assert fields["tolerations"].annotation == list[Toleration] | None
    assert fields["resources"].annotation == ResourceRequirements | None
    assert fields["selector"].annotation == LabelSelector | None
    own = typing.get_args(typing.get_args(fields["lenient_tolerations"].annotation)[0])[0]
    assert own.__name__ == "JobSpecLenientTolerations" and "weight" in own.model_fields
    assert fields["owner"].annotation.__args__[0].__name__ == "JobSpecOwner"
    conditions = embed.JobStatus.model_fields["conditions"].annotation
    assert typing.get_args(typing.get_args(conditions)[0])[0].__name__ == "JobStatusConditions"
    # only the classes still in use are generated (matchExpressions went with LabelSelector)
    assert sorted(c for c in _mod("embed.v1.models")._LAZY if c.startswith("Job")) == [
        "Job",
        "JobSpec",
        "JobSpecLenientTolerations",
        "JobSpecOwner",
        "JobStatus",
        "JobStatusConditions",
    ]
    body = {
        "apiVersion": "embed.example.com/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": {
            "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 5}],
            "resources": {"limits": {"cpu": "500m", "memory": 1024}, "claims": [{"name": "g"}]},
            "selector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]},
            "lenientTolerations": [{"key": "k", "weight": 3}],
            "owner": {"name": "o"},
        },
    }
    job = embed.Job.model_validate(body)
    assert type(job.spec.tolerations[0]) is Toleration
    assert job.model_dump(mode="json", exclude_unset=True) == body
    built = embed.JobSpec(tolerations=[Toleration(key="k", operator="Exists")])
    assert built.model_dump(mode="json", exclude_unset=True) == {
        "tolerations": [{"key": "k", "operator": "Exists"}]
    }


EMBEDDING_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: stacks.embedding.example.com}
spec:
  group: embedding.example.com
  names: {kind: Stack, plural: stacks}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
%s
"""
# Field names that once made an embedded free-form resource a built-in kind by shape
# ({apiVersion, kind, metadata} is most of a PodTemplate, a Service, a Node...).
EMBEDDING_FIELDS = ("template", "service", "node", "namespace", "resource", "pod")


def test_an_embedded_free_form_resource_is_no_builtin_kind(tmp_path: Path) -> None:
    """H25: `x-kubernetes-embedded-resource` with `x-kubernetes-preserve-unknown-fields` and
    no declared field is any object. Whatever its field is named it gets a class of its own,
    so a Deployment held under `service` reads whole (as a Service its `spec.selector`, a
    LabelSelector, raised InvalidFieldError) and dumps as it came, and its apply
    configuration is a `dict[str, Any]` (M8) that mypy --strict accepts with the `spec`."""
    fields = "\n".join(
        f"              {name}: {{type: object, x-kubernetes-embedded-resource: true, "
        "x-kubernetes-preserve-unknown-fields: true}"
        for name in EMBEDDING_FIELDS
    )
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "stacks.yaml").write_text(EMBEDDING_CRD % fields)
    generate_ok(tmp_path, "h25_embedding", "--crd", tmp_path / "crds")
    code = (tmp_path / "h25_embedding" / "embedding" / "v1" / "stack.py").read_text()
    assert "kubeinformers.generated.core" not in code
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "replicas": 2},
        "status": {"conditions": [{"type": "Available", "status": "True"}]},
    }
    body = {
        "apiVersion": "embedding.example.com/v1",
        "kind": "Stack",
        "metadata": {"name": "s", "namespace": "ns"},
        "spec": {name: deployment for name in EMBEDDING_FIELDS},
    }
    with importable(tmp_path, "h25_embedding"):
        module = importlib.import_module("h25_embedding.embedding.v1.stack")
        spec_fields = module.StackSpec.model_fields
        classes = {spec_fields[name].annotation.__args__[0] for name in EMBEDDING_FIELDS}
        assert [c.__module__ for c in classes] == [module.__name__]
        assert set(next(iter(classes)).model_fields) == {"api_version", "kind", "metadata"}
        stack = module.Stack.model_validate(body)
        for name in EMBEDDING_FIELDS:
            held = getattr(stack.spec, name)
            assert held.kind == "Deployment" and held.metadata.name == "web"
            assert held.model_extra["spec"]["selector"] == {"matchLabels": {"app": "web"}}
        assert stack.model_dump(mode="json", by_alias=True, exclude_unset=True) == body
    # Its apply configuration takes the whole object too: a TypedDict of apiVersion, kind and
    # metadata would refuse the Deployment's `spec` (mypy: extra key).
    usage = tmp_path / "use_stacks.py"
    usage.write_text(
        textwrap.dedent(
            """\
            from h25_embedding.embedding.v1.apply.stack import StackApply

            config = StackApply(
                metadata={"name": "s", "namespace": "ns"},
                spec={
                    "service": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "metadata": {"name": "web"},
                        "spec": {"replicas": 2},
                    }
                },
            )
            """
        )
    )
    checked = run_mypy([usage], cwd=tmp_path, mypy_path=[tmp_path])
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_one_kind_imports_without_the_other_kinds_of_its_version(golden: Golden) -> None:
    """Issue 15: one module per kind; its `models`, `informers` and `listers` modules name all
    classes lazily, so importing one kind (or its informer) builds no other kind's models."""
    probe = (
        "import sys\n"
        f"from {PKG}.reserved.v1.field import Field\n"
        f"from {PKG}.reserved.v1.informers import FieldInformer, ReservedV1Informers\n"
        f"from {PKG}.reserved.v1.models import FieldSpec\n"
        f"from {PKG}.reserved.v1.listers import UUIDLister\n"
        f"print(sorted(m for m in sys.modules if m.startswith('{PKG}.reserved.v1.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=golden.root,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(golden.root), str(REPO)])},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split("'")[1::2] == [
        f"{PKG}.reserved.v1.field",
        f"{PKG}.reserved.v1.informers",
        f"{PKG}.reserved.v1.listers",
        f"{PKG}.reserved.v1.models",
        # issue 17: a kind's lister is defined beside its model (`UUID.__kube_lister__`), so
        # the lister of UUID loads UUID's module, and still no other kind's
        f"{PKG}.reserved.v1.uuid",
    ]


def _lister_model(lister_cls: type) -> Any:
    return lister_model(lister_cls)


KEYWORD_ROUTE = {
    "apiVersion": "net.example.com/v1",
    "kind": "Route",
    "metadata": {"name": "r", "namespace": "n"},
    "spec": {
        "from": {"class": "gold", "in": ["a", "b"]},
        "not": {"in": ["c"]},
        "continue": True,
        "import": "x",
        "max-hops": 3,
    },
}


def test_keyword_fields_get_a_trailing_underscore_and_keep_their_alias(golden: Golden) -> None:
    models = _mod("net.v1.models")
    spec_fields = models.RouteSpec.model_fields
    expected = {
        "from_": "from",
        "not_": "not",
        "continue_": "continue",
        "import_": "import",
        "max_hops": "max-hops",
    }
    assert {name: spec_fields[name].alias for name in expected} == expected
    assert {n: f.alias for n, f in models.RouteSpecFrom.model_fields.items()} == {
        "class_": "class",
        "in_": "in",
    }


def test_keyword_fields_round_trip_by_alias(golden: Golden) -> None:
    route_cls = _gv("net.v1").Route
    route = route_cls.model_validate(KEYWORD_ROUTE)
    assert route.spec.from_.class_ == "gold"
    assert route.spec.from_.in_ == ["a", "b"]
    assert route.spec.not_.in_ == ["c"]
    assert route.spec.continue_ is True
    assert route.model_dump(mode="json", exclude_unset=True) == KEYWORD_ROUTE
    assert route_cls.model_validate_json(route.model_dump_json(exclude_unset=True)) == route


WEIRD_SPEC = {
    "#": "hash",
    "!!": "bang",
    "a.b": "dot",
    "a b": "space",
    "näme": "umlaut",
    "__init__": "dunder",
    "_private": "under",
    "model_dump": "shadow",
    "fields": "f",
    "None": "n",
    "True": True,
    "properties": {"type": "t"},
    "items": ["i"],
    "enum": "b",
    "default": "set",
    "arrOfArr": [[1, 2], [3]],
    "mapOfList": {"k": [{"x": "1"}]},
    "nullableObj": None,
}


def test_non_identifier_field_names_are_distinct_attributes_that_round_trip(
    golden: Golden,
) -> None:
    """Every odd API name gets its own attribute (a.b and `a b` do not merge) and alias."""
    v1 = _gv("weird.v1")
    spec_fields = v1.WeirdSpec.model_fields
    aliases = {info.alias or name for name, info in spec_fields.items()}
    assert aliases == set(WEIRD_SPEC)
    assert all(name.isidentifier() and not name.startswith("_") for name in spec_fields)
    body = {"apiVersion": "weird.example.com/v1", "kind": "Weird", "spec": WEIRD_SPEC}
    weird = v1.Weird.model_validate(body)
    assert weird.model_dump(mode="json", exclude_unset=True) == body
    by_alias = {info.alias or name: name for name, info in spec_fields.items()}
    assert getattr(weird.spec, by_alias["a.b"]) == "dot"
    assert getattr(weird.spec, by_alias["a b"]) == "space"
    assert getattr(weird.spec, by_alias["model_dump"]) == "shadow"
    assert callable(weird.spec.model_dump)  # the pydantic method is not shadowed
    assert weird.spec.map_of_list["k"][0].x == "1"


def test_keyword_fields_populate_by_python_name(golden: Golden) -> None:
    models = _mod("net.v1.models")
    spec = models.RouteSpec(from_=models.RouteSpecFrom(class_="c", in_=["x"]), continue_=False)
    assert spec.model_dump(mode="json", exclude_unset=True) == {
        "from": {"class": "c", "in": ["x"]},
        "continue": False,
    }


def test_cluster_scoped_lister_has_no_namespace_step(golden: Golden) -> None:
    infra = _gv("infra.v1")
    assert infra.RealmLister.RESOURCE.namespaced is False
    assert "realms" not in _public_methods(infra.RealmLister)
    realm = infra.Realm.model_validate({"metadata": {"name": "eu"}, "spec": {}})
    lister = infra.RealmLister(_ns_indexer(realm), infra.RealmLister.RESOURCE)
    assert lister.get("eu") is realm
    assert lister.list() == [realm]


def test_namespaced_lister_has_the_namespace_step(golden: Golden) -> None:
    my_app = _gv("my_app.v1")
    assert my_app.GizmoLister.RESOURCE.namespaced is True
    a = my_app.Gizmo.model_validate({"metadata": {"name": "g", "namespace": "a"}})
    b = my_app.Gizmo.model_validate({"metadata": {"name": "g", "namespace": "b"}})
    lister = my_app.GizmoLister(_ns_indexer(a, b), my_app.GizmoLister.RESOURCE)
    assert lister.gizmos("b").get("g") is b
    assert lister.gizmos("a").list() == [a]
    assert sorted(g.metadata.namespace for g in lister.list()) == ["a", "b"]


def test_three_served_versions_get_three_version_accessors(golden: Golden) -> None:
    group = _mod("versions.informers").VersionsInformers
    assert _public_methods(group) == {"v1alpha1", "v1beta1", "v1"}
    assert not (golden.pkg_dir / "versions" / "v0").exists()
    for version in ("v1alpha1", "v1beta1", "v1"):
        informer = _gv(f"versions.{version}").ToolInformer
        assert informer.RESOURCE.version == version
        assert informer.RESOURCE.resource == "tools"
    blade_v1 = _gv("versions.v1").Tool.model_validate({"spec": {"blade": {"lengthMm": 7}}})
    assert blade_v1.spec.blade.length_mm == 7
    blade_alpha = _gv("versions.v1alpha1").Tool.model_validate({"spec": {"blade": {"length": 7}}})
    assert blade_alpha.spec.blade.length == 7
    assert "sharp" in _mod("versions.v1beta1.models").ToolSpecBlade.model_fields


USAGE = """\
from __future__ import annotations

from kubeinformers.runtime.cache.factory import SharedInformerFactory
from {pkg}.informers import CustomInformers
from {pkg}.infra.v1.realm import Realm, RealmLister
from {pkg}.my_app.v1.gizmo import Gizmo
from {pkg}.net.v1.route import Route
from {pkg}.reserved.v1.field import Field
from {pkg}.reserved.v1.postgresql_models import postgresql
from {pkg}.versions.v1.tool import Tool
from {pkg}.versions.v1alpha1.tool import Tool as ToolV1alpha1


def route_class(route: Route) -> str | None:
    assert route.spec is not None and route.spec.from_ is not None
    in_: list[str] | None = route.spec.from_.in_
    return route.spec.from_.class_ if in_ else None


def keep_going(route: Route) -> bool:
    return bool(route.spec and route.spec.continue_)


def realm_zones(lister: RealmLister, name: str) -> list[str]:
    realm: Realm = lister.get(name)
    if realm.spec is None or realm.spec.region is None:
        return []
    return realm.spec.region.zones or []


def gizmo_sides(custom: CustomInformers, namespace: str, name: str) -> int | None:
    gizmo: Gizmo = custom.my_app().v1().gizmos().lister().gizmos(namespace).get(name)
    return gizmo.spec.shape.sides if gizmo.spec and gizmo.spec.shape else None


def tool_lengths(custom: CustomInformers) -> list[int]:
    versions = custom.versions()
    new: list[Tool] = versions.v1().tools().lister().list()
    old: list[ToolV1alpha1] = versions.v1alpha1().tools().lister().list()
    v1beta1 = versions.v1beta1().tools().lister()
    return [t.spec.blade.length_mm or 0 for t in new if t.spec and t.spec.blade] + [
        t.spec.blade.length or 0 for t in old if t.spec and t.spec.blade
    ] + [len(v1beta1.list())]


def odd_names(custom: CustomInformers) -> int:
    gates = custom.in_().v1().pass_().lister().pass_("ns").list()
    apis = custom.n3scale().v1().apis().lister().list()
    specs = custom.clash().v1().thing_specs().lister().list()
    fields: list[Field] = custom.reserved().v1().fields().lister().fields("ns").list()
    pgs: list[postgresql] = custom.reserved().v1().postgresqls().lister().list()
    soils = [f.spec.soil for f in fields if f.spec and f.spec.soil == "loamy sand"]
    return len(gates) + len(apis) + len(specs) + len(fields) + len(pgs) + len(soils)


def build(factory: SharedInformerFactory) -> CustomInformers:
    return CustomInformers(factory)
"""

MISUSE = """\
from __future__ import annotations

from {pkg}.infra.v1.realm import RealmLister
from {pkg}.my_app.v1.gizmo import GizmoLister
from {pkg}.net.v1.route import Route
from {pkg}.reserved.v1.field import Field, FieldSpec


def namespaced_realm(lister: RealmLister) -> object:
    return lister.realms("default")


def realm_by_namespace(lister: RealmLister) -> object:
    return lister.by_namespace("default")


def gizmo_without_namespace(lister: GizmoLister) -> object:
    return lister.get("g")


def keyword_by_api_name(route: Route) -> object:
    assert route.spec is not None
    return route.spec.from_.klass  # type: ignore[union-attr]


def enum_value_added_later(field: Field) -> bool:  # K12: a value the CRD gains later may come
    return field.spec is not None and field.spec.soil == "peat"


def wrong_enum_assignment(spec: FieldSpec) -> None:
    spec.soil = "peat"


def wrong_type(route: Route) -> int:
    assert route.spec is not None
    return route.spec.import_
"""


def test_generated_code_and_typed_usage_pass_mypy_strict(golden: Golden, tmp_path: Path) -> None:
    usage = tmp_path / "usage_golden.py"
    usage.write_text(USAGE.format(pkg=PKG))
    result = run_mypy([usage, golden.pkg_dir], cwd=golden.root, mypy_path=[golden.root])
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_rejects_a_namespace_step_on_a_cluster_scoped_lister(
    golden: Golden, tmp_path: Path
) -> None:
    """H9: and a get without the namespace step on a namespaced one."""
    misuse = tmp_path / "misuse_golden.py"
    misuse.write_text(MISUSE.format(pkg=PKG))
    result = run_mypy([misuse], cwd=golden.root, mypy_path=[golden.root])
    out = result.stdout
    assert result.returncode == 1, out
    assert '"RealmLister" has no attribute "realms"' in out, out
    assert '"RealmLister" has no attribute "by_namespace"' in out, out  # H9
    assert '"GizmoLister" has no attribute "get"' in out, out  # H9: get needs gizmos(ns)
    assert 'Incompatible return value type (got "str | None", expected "int")' in out, out
    # issue 15: a CRD enum is a Literal, so writing a value it does not list is a type error;
    # comparing with one is not (K12: a value added to the CRD later reads)
    assert "Non-overlapping equality check" not in out, out
    assert "Incompatible types in assignment (expression has type \"Literal['peat']\"" in out, out
    assert len([line for line in out.splitlines() if ": error:" in line]) == 5, textwrap.indent(
        out, "  "
    )


def test_h12_no_package_init_imports_anything(golden: Golden) -> None:
    """H12: a type checker reading one kind reads the `__init__` of every package above it;
    none of them imports anything (not even under TYPE_CHECKING), so it is led to no other
    kind. The accessors and the factory are in `informers` modules instead."""
    inits = sorted(golden.pkg_dir.rglob("__init__.py"))
    assert len(inits) > 20
    importing = [
        str(p.relative_to(golden.pkg_dir))
        for p in inits
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom) and node.module != "__future__"
    ]
    assert importing == []
    assert (golden.pkg_dir / "informers.py").is_file()
    assert (golden.pkg_dir / "ops_alpha" / "informers.py").is_file()
    assert "class OpsAlphaV1Informers" in (golden.pkg_dir / "ops_alpha/v1/informers.py").read_text()
