"""Golden CRD fixtures through the real generator: names, scopes, versions, keyword fields.

All fixtures of fixtures/golden/ are generated in one run (as a user would, so that group
collisions can happen), imported, exercised, and type-checked with mypy --strict.
"""

from __future__ import annotations

import importlib
import textwrap
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
    Run,
    generate_ok,
    import_all,
    importable,
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
    top = importlib.import_module(PKG)
    accessors = _public_methods(top.CustomInformers) - FACTORY_METHODS
    assert accessors == GOLDEN_GROUP_ACCESSORS
    packages = {p.name for p in golden.pkg_dir.iterdir() if (p / "__init__.py").is_file()}
    assert packages == accessors


def test_hyphenated_group_keeps_its_api_name_in_the_resource(golden: Golden) -> None:
    v1 = _mod("my_app.v1")
    assert v1.GizmoInformer.RESOURCE.group == "my-app.example.com"
    assert v1.GizmoInformer.RESOURCE.api_version == "my-app.example.com/v1"
    gizmo = v1.Gizmo.model_validate(
        {"apiVersion": "my-app.example.com/v1", "kind": "Gizmo", "spec": {"shape": {"sides": 5}}}
    )
    assert gizmo.spec.shape.sides == 5


def test_first_label_collision_is_reported_naming_both_groups(golden: Golden) -> None:
    notes = [line for line in golden.run.output.splitlines() if "label clashes" in line]
    assert any("ops.alpha.example.com" in n and "ops_alpha()" in n for n in notes), notes
    assert any("ops.beta.example.org" in n and "ops_beta()" in n for n in notes), notes
    assert len(notes) == 2, notes


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
    alpha = _mod("ops_alpha.v1").Runbook
    beta = _mod("ops_beta.v1beta1").Runbook
    assert alpha is not beta
    assert "alpha" in alpha.model_fields["spec"].annotation.__args__[0].model_fields
    spec_beta = beta.model_validate({"spec": {"beta": {"retries": 3}}}).spec
    assert spec_beta.beta.retries == 3
    assert _mod("ops_alpha.v1").RunbookInformer.RESOURCE.group == "ops.alpha.example.com"
    assert _mod("ops_beta.v1beta1").RunbookInformer.RESOURCE.group == "ops.beta.example.org"


def test_irregular_plurals_name_the_kind_accessors(golden: Golden) -> None:
    """Policy/policies and Index/indices: the accessor is the CRD's plural, not kind + s."""
    v1 = _mod("policy.v1")
    assert _public_methods(v1.PolicyV1Informers) == {"policies", "indices"}
    assert v1.PolicyInformer.RESOURCE.resource == "policies"
    assert v1.IndexInformer.RESOURCE.resource == "indices"
    assert "indices" in _public_methods(v1.IndexLister)
    assert "policies" in _public_methods(v1.PolicyLister)


def test_kinds_keep_their_class_names_when_nested_types_clash(golden: Golden) -> None:
    """Thing.spec would be `ThingSpec`, Thing.extra `ThingExtra`: both are kinds here."""
    clash = _mod("clash.v1")
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
    in_v1 = _mod("in_.v1")
    assert _public_methods(in_v1.InV1Informers) == {"pass_"}
    assert in_v1.PassInformer.RESOURCE.resource == "pass"
    assert in_v1.PassInformer.RESOURCE.group == "in.example.com"
    assert "pass_" in _public_methods(in_v1.PassLister)
    apis = _mod("n3scale.v1")
    assert apis.APIInformer.RESOURCE.group == "3scale.example.net"
    assert _public_methods(apis.N3scaleV1Informers) == {"apis"}


def test_kinds_named_like_model_imports_do_not_shadow_them(golden: Golden) -> None:
    """Kind `Field` (pydantic's Field) and `UUID`: classes `FieldModel`, `UUIDModel`."""
    reserved = _mod("reserved.v1")
    field_cls, uuid_cls = reserved.FieldModel, reserved.UUIDModel
    assert _public_methods(reserved.ReservedV1Informers) == {"fields", "uuids"}
    assert _lister_model(reserved.FieldModelLister) is field_cls
    assert _lister_model(reserved.UUIDModelLister) is uuid_cls
    assert reserved.FieldModelInformer.RESOURCE.kind == "Field"
    assert reserved.UUIDModelLister.RESOURCE.namespaced is False
    registry = _mod("registry")
    assert registry.model_for(reserved.FieldModelInformer.RESOURCE.gvr) is field_cls
    assert registry.model_for(reserved.UUIDModelInformer.RESOURCE.gvr) is uuid_cls
    field = field_cls.model_validate({"kind": "Field", "spec": {"cropName": "rye", "areaM2": 9}})
    assert (field.spec.crop_name, field.spec.area_m2) == ("rye", 9)
    assert field.model_dump(mode="json", exclude_unset=True)["spec"] == {
        "cropName": "rye",
        "areaM2": 9,
    }
    value = "e56657e3-764f-11ef-a397-65231a88c216"
    assert uuid_cls.model_validate({"spec": {"value": value}}).model_dump(
        mode="json", exclude_unset=True
    ) == {"spec": {"value": value}}


def _lister_model(lister_cls: type) -> Any:
    (base,) = lister_cls.__orig_bases__  # type: ignore[attr-defined]
    return base.__args__[0]


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
    route_cls = _mod("net.v1").Route
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
    "enum": "not-in-the-enum",
    "default": "set",
    "arrOfArr": [[1, 2], [3]],
    "mapOfList": {"k": [{"x": "1"}]},
    "nullableObj": None,
}


def test_non_identifier_field_names_are_distinct_attributes_that_round_trip(
    golden: Golden,
) -> None:
    """Every odd API name gets its own attribute (a.b and `a b` do not merge) and alias."""
    v1 = _mod("weird.v1")
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
    infra = _mod("infra.v1")
    assert infra.RealmLister.RESOURCE.namespaced is False
    assert "realms" not in _public_methods(infra.RealmLister)
    realm = infra.Realm.model_validate({"metadata": {"name": "eu"}, "spec": {}})
    lister = infra.RealmLister(_ns_indexer(realm), infra.RealmLister.RESOURCE)
    assert lister.get("eu") is realm
    assert lister.list() == [realm]


def test_namespaced_lister_has_the_namespace_step(golden: Golden) -> None:
    my_app = _mod("my_app.v1")
    assert my_app.GizmoLister.RESOURCE.namespaced is True
    a = my_app.Gizmo.model_validate({"metadata": {"name": "g", "namespace": "a"}})
    b = my_app.Gizmo.model_validate({"metadata": {"name": "g", "namespace": "b"}})
    lister = my_app.GizmoLister(_ns_indexer(a, b), my_app.GizmoLister.RESOURCE)
    assert lister.gizmos("b").get("g") is b
    assert lister.gizmos("a").list() == [a]
    assert sorted(g.metadata.namespace for g in lister.list()) == ["a", "b"]


def test_three_served_versions_get_three_version_accessors(golden: Golden) -> None:
    group = _mod("versions").VersionsInformers
    assert _public_methods(group) == {"v1alpha1", "v1beta1", "v1"}
    assert not (golden.pkg_dir / "versions" / "v0").exists()
    for version in ("v1alpha1", "v1beta1", "v1"):
        informer = _mod(f"versions.{version}").ToolInformer
        assert informer.RESOURCE.version == version
        assert informer.RESOURCE.resource == "tools"
    blade_v1 = _mod("versions.v1").Tool.model_validate({"spec": {"blade": {"lengthMm": 7}}})
    assert blade_v1.spec.blade.length_mm == 7
    blade_alpha = _mod("versions.v1alpha1").Tool.model_validate({"spec": {"blade": {"length": 7}}})
    assert blade_alpha.spec.blade.length == 7
    assert "sharp" in _mod("versions.v1beta1.models").ToolSpecBlade.model_fields


USAGE = """\
from __future__ import annotations

from kubeinformers.runtime.cache.factory import SharedInformerFactory
from {pkg} import CustomInformers
from {pkg}.infra.v1 import Realm, RealmLister
from {pkg}.my_app.v1 import Gizmo
from {pkg}.net.v1 import Route
from {pkg}.reserved.v1 import FieldModel
from {pkg}.versions.v1 import Tool
from {pkg}.versions.v1alpha1 import Tool as ToolV1alpha1


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
    fields: list[FieldModel] = custom.reserved().v1().fields().lister().fields("ns").list()
    return len(gates) + len(apis) + len(specs) + len(fields)


def build(factory: SharedInformerFactory) -> CustomInformers:
    return CustomInformers(factory)
"""

MISUSE = """\
from __future__ import annotations

from {pkg}.infra.v1 import RealmLister
from {pkg}.my_app.v1 import GizmoLister
from {pkg}.net.v1 import Route


def namespaced_realm(lister: RealmLister) -> object:
    return lister.realms("default")


def realm_by_namespace(lister: RealmLister) -> object:
    return lister.by_namespace("default")


def gizmo_without_namespace(lister: GizmoLister) -> object:
    return lister.get("g")


def keyword_by_api_name(route: Route) -> object:
    assert route.spec is not None
    return route.spec.from_.klass  # type: ignore[union-attr]


def wrong_type(route: Route) -> int:
    assert route.spec is not None
    return route.spec.import_
"""


def test_generated_code_and_typed_usage_pass_mypy_strict(golden: Golden, tmp_path: Path) -> None:
    usage = tmp_path / "usage_golden.py"
    usage.write_text(USAGE.format(pkg=PKG))
    result = run_mypy(
        [usage, golden.pkg_dir],
        cwd=golden.root,
        mypy_path=[golden.root],
        cache_dir=golden.root / ".mypy-cache",
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_rejects_a_namespace_step_on_a_cluster_scoped_lister(
    golden: Golden, tmp_path: Path
) -> None:
    """H9: and a get without the namespace step on a namespaced one."""
    misuse = tmp_path / "misuse_golden.py"
    misuse.write_text(MISUSE.format(pkg=PKG))
    result = run_mypy(
        [misuse], cwd=golden.root, mypy_path=[golden.root], cache_dir=golden.root / ".mypy-cache"
    )
    out = result.stdout
    assert result.returncode == 1, out
    assert '"RealmLister" has no attribute "realms"' in out, out
    assert '"RealmLister" has no attribute "by_namespace"' in out, out  # H9
    assert '"GizmoLister" has no attribute "get"' in out, out  # H9: get needs gizmos(ns)
    assert 'Incompatible return value type (got "str | None", expected "int")' in out, out
    assert len([line for line in out.splitlines() if ": error:" in line]) == 4, textwrap.indent(
        out, "  "
    )
