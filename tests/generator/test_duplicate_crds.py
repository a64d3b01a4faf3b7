"""One CRD name in several files: identical copies are read once (one note); different
definitions are an error naming every file unless `--prefer` picks one — never a silent
"first file wins" (argo ships a full and a "minimal" `workflows.argoproj.io`).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from kubeinformers.generator import load
from tests.generator.genutil import FIXTURES, generate_ok, importable, run_generator

WIDGETS = FIXTURES / "bundle" / "install.yaml"
EXIT_INPUT_FAILED = 1
MINIMAL = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.bundle.example.com
spec:
  group: bundle.example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"""


@pytest.fixture
def copies(tmp_path: Path) -> tuple[Path, Path, Path]:
    """full/install.yaml (the bundle), same/install.yaml (identical), minimal/widgets.yaml."""
    for name in ("full", "same", "minimal"):
        (tmp_path / name).mkdir()
    (tmp_path / "full" / "install.yaml").write_bytes(WIDGETS.read_bytes())
    (tmp_path / "same" / "install.yaml").write_bytes(WIDGETS.read_bytes())
    (tmp_path / "minimal" / "widgets.yaml").write_text(MINIMAL)
    return (
        tmp_path / "full" / "install.yaml",
        tmp_path / "same" / "install.yaml",
        tmp_path / "minimal" / "widgets.yaml",
    )


def _model(*paths: Path, prefer: tuple[Path, ...] = ()) -> load.APIModel:
    model = load.APIModel()
    for path in paths:
        model.extend(load.load_crds(path))
    load.resolve_duplicates(model, prefer)
    return model


def test_identical_copies_are_read_once_with_one_note(copies: tuple[Path, Path, Path]) -> None:
    full, same, _ = copies
    model = _model(full, same)
    assert model.errors == []
    assert [v.resource.source.file for v in model.crds].count(str(full)) == 2
    assert all(v.resource.source.file == str(full) for v in model.crds)
    duplicates = [n for n in model.notes if "defined identically" in n]
    assert len(duplicates) == 2  # one per CRD name (widgets, gadgets), not per version
    assert (
        f"CRD widgets.bundle.example.com is defined identically in {full} (document 2) and "
        f"{same} (document 2); using the first"
    ) in duplicates


def test_different_definitions_are_an_error_naming_both_files(
    copies: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    full, _, minimal = copies
    run = run_generator("--crd", full, "--crd", minimal, "--out", tmp_path / "o", "--package", "o")
    assert run.returncode == EXIT_INPUT_FAILED, run.output
    (error,) = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert error.startswith(
        f"error: {full} (document 2) at spec: CRD widgets.bundle.example.com is defined "
        f"differently in {full} (document 2), {minimal} (document 0) (at spec.versions[0]"
    ), error
    assert error.endswith(f"pick one with --prefer FILE (e.g. --prefer {minimal})"), error
    assert not (tmp_path / "o").exists()


def test_prefer_picks_the_definition_to_use(
    copies: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    full, _, minimal = copies
    run = generate_ok(tmp_path, "picked", "--crd", minimal, "--crd", full, "--prefer", full.parent)
    assert (
        f"note: CRD widgets.bundle.example.com: using {full} (document 2) (--prefer); "
        f"ignoring {minimal} (document 0)"
    ) in run.stderr
    with importable(tmp_path, "picked"):
        v1 = importlib.import_module("picked.bundle.v1.models")
        assert v1.Widget.model_validate({"spec": {"size": 2}}).spec.size == 2


def test_keep_going_leaves_the_conflicting_crd_out_and_generates_the_rest(
    copies: tuple[Path, Path, Path],
) -> None:
    full, _, minimal = copies
    model = _model(full, minimal)
    assert len(model.errors) == 1
    assert {v.crd_name for v in model.crds} == {"gadgets.bundle.example.com"}
    assert {r.kind for r in model.resources} == {"Gadget"}
