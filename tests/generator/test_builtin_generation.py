"""The whole Kubernetes 1.35 built-in API: generated in well under 60 s, byte-identical to the
committed kubeinformers/generated tree, and the same from Swagger 2.0 as from OpenAPI v3.

Figure (2 shared cores, 2026-11): about 3.5 s from the 36 v3 documents, 4.3 s from
swagger.json, ~130 MB RSS. Reproduce with
`/usr/bin/time -v .venv/bin/kubeinformers generate --openapi ../shared/data/openapi/v3
--out /tmp/gen/kubeinformers/generated --package kubeinformers.generated`.
"""

from __future__ import annotations

import ast
import importlib
import time
import typing
from pathlib import Path

import pytest

from tests.generator.genutil import GOLDEN, REPO, generate_ok, importable, tree_bytes

PACKAGE = "kubeinformers.generated"
COMMITTED = REPO / "kubeinformers" / "generated"
# In swagger.json but not in the v3 documents (data README): the discovery types.
DISCOVERY_ONLY = {
    "APIGroup",
    "APIGroupList",
    "APIVersions",
    "GroupVersionForDiscovery",
    "ServerAddressByClientCIDR",
    "Info",
}


@pytest.fixture(scope="module")
def from_v3(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    root = tmp_path_factory.mktemp("builtin-v3")
    started = time.perf_counter()
    generate_ok(root, PACKAGE, "--openapi", shared_data / "openapi" / "v3")
    return root / "kubeinformers" / "generated", time.perf_counter() - started


def test_whole_builtin_api_generates_in_under_60_seconds(
    shared_data: Path, from_v3: tuple[Path, float]
) -> None:
    out, seconds = from_v3
    print(f"\ngenerated the 1.35 built-in API in {seconds:.1f}s")
    assert seconds < 60
    # one models module per group-version document, plus the shared meta/v1
    documents = list((shared_data / "openapi" / "v3").glob("*.json"))
    assert len(list(out.rglob("models.py"))) == len(documents) + 1


def test_generated_tree_is_the_committed_one(from_v3: tuple[Path, float]) -> None:
    """What `make generate-builtins` writes is what is committed (no stale or edited file)."""
    out, _ = from_v3
    fresh, committed = tree_bytes(out), tree_bytes(COMMITTED)
    assert sorted(set(fresh) ^ set(committed)) == []
    assert sorted(p for p in fresh if fresh[p] != committed[p]) == []


def _classes(path: Path) -> set[str]:
    return {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef)}


def _shapes(path: Path) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return typing.cast(dict[str, object], namespace["SHAPES"])


def test_swagger_v2_gives_the_same_api_as_v3(
    shared_data: Path, tmp_path: Path, from_v3: tuple[Path, float]
) -> None:
    """Same models, informers and listers; v2 adds only the discovery types to meta/v1."""
    generate_ok(tmp_path, PACKAGE, "--openapi", shared_data / "openapi" / "swagger.json")
    v2, v3 = tree_bytes(tmp_path / "kubeinformers" / "generated"), tree_bytes(from_v3[0])
    assert set(v2) == set(v3)
    differing = sorted(p for p in v2 if v2[p] != v3[p])
    meta_files = {"meta/v1/models.py", "meta/v1/__init__.py", "meta/v1/apply.py", "_shapes.py"}
    assert set(differing) <= meta_files, differing
    # the shapes CRDs are matched against (issue 15) differ only by those discovery types
    shapes_v2 = _shapes(tmp_path / "kubeinformers" / "generated" / "_shapes.py")
    shapes_v3 = _shapes(from_v3[0] / "_shapes.py")
    extra = {n.rsplit(".", 1)[1] for n in set(shapes_v2) - set(shapes_v3)}
    assert extra <= DISCOVERY_ONLY and set(shapes_v3) <= set(shapes_v2)
    assert {n: shapes_v2[n] for n in shapes_v3} == shapes_v3
    meta_v2 = _classes(tmp_path / "kubeinformers" / "generated" / "meta" / "v1" / "models.py")
    meta_v3 = _classes(from_v3[0] / "meta" / "v1" / "models.py")
    assert meta_v2 - meta_v3 == DISCOVERY_ONLY
    assert meta_v3 <= meta_v2
    # the apply configurations of meta/v1 gain those types' TypedDicts, and nothing else
    apply_v2 = _classes(tmp_path / "kubeinformers" / "generated" / "meta" / "v1" / "apply.py")
    apply_v3 = _classes(from_v3[0] / "meta" / "v1" / "apply.py")
    assert apply_v2 - apply_v3 <= {f"{name}Apply" for name in DISCOVERY_ONLY}
    assert apply_v3 <= apply_v2


def test_builtins_and_crds_combine_into_one_factory(shared_data: Path, tmp_path: Path) -> None:
    """--openapi and --crd together: one SharedInformerFactory; a CRD group whose first label
    is a built-in group's (`policy.example.com` vs `policy`) gives way, and says so."""
    run = generate_ok(
        tmp_path, "h8_mixed", "--openapi", shared_data / "openapi" / "v3", "--crd", GOLDEN
    )
    notes = [line for line in run.stderr.splitlines() if "share their first label" in line]
    assert len(notes) == 1 and "policy.example.com \u2192 policy_example()" in notes[0], notes
    with importable(tmp_path, "h8_mixed"):
        from kubernetes.client import ApiClient

        top = importlib.import_module("h8_mixed.informers")
        factory = top.SharedInformerFactory(ApiClient())
        assert factory.policy().v1().pod_disruption_budgets().RESOURCE.group == "policy"
        assert factory.policy_example().v1().policies().RESOURCE.group == "policy.example.com"
        assert factory.core().v1().pods().RESOURCE.kind == "Pod"
        realm = importlib.import_module("h8_mixed.infra.v1.realm").Realm
        meta = importlib.import_module("h8_mixed.meta.v1").ObjectMeta
        assert typing.get_args(realm.model_fields["metadata"].annotation)[0] is meta
