"""The whole Kubernetes 1.35 built-in API: generated in well under 60 s, byte-identical to the
committed kubeinformers/generated tree, and the same from Swagger 2.0 as from OpenAPI v3.

Figure (2 shared cores, 2026-11): about 3.5 s from the 36 v3 documents, 4.3 s from
swagger.json, ~130 MB RSS. Reproduce with
`/usr/bin/time -v .venv/bin/kubeinformers generate --openapi ../shared/data/openapi/v3
--out /tmp/gen/kubeinformers/generated --package kubeinformers.generated`.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest

from tests.generator.genutil import REPO, generate_ok, tree_bytes

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


def test_swagger_v2_gives_the_same_api_as_v3(
    shared_data: Path, tmp_path: Path, from_v3: tuple[Path, float]
) -> None:
    """Same models, informers and listers; v2 adds only the discovery types to meta/v1."""
    generate_ok(tmp_path, PACKAGE, "--openapi", shared_data / "openapi" / "swagger.json")
    v2, v3 = tree_bytes(tmp_path / "kubeinformers" / "generated"), tree_bytes(from_v3[0])
    assert set(v2) == set(v3)
    differing = sorted(p for p in v2 if v2[p] != v3[p])
    assert set(differing) <= {"meta/v1/models.py", "meta/v1/__init__.py"}, differing
    meta_v2 = _classes(tmp_path / "kubeinformers" / "generated" / "meta" / "v1" / "models.py")
    meta_v3 = _classes(from_v3[0] / "meta" / "v1" / "models.py")
    assert meta_v2 - meta_v3 == DISCOVERY_ONLY
    assert meta_v3 <= meta_v2
