"""Install bundles (Helm / kustomize output) as --crd input: the CRDs in them are generated,
every other object is skipped with ONE summary note per path, `kind: List` wrappers are
read item by item; a path without any CRD, and an empty file, are errors naming the file.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from kubeinformers.generator import load
from tests.generator.genutil import FIXTURES, generate_ok, importable, python_files, run_generator

BUNDLE = FIXTURES / "bundle"
EXIT_INPUT_FAILED = 1
X = "\u00d7"  # MULTIPLICATION SIGN, as in the note
SKIPPED = (
    f"skipped 8 non-CRD documents: Deployment {X}3, ClusterRole {X}1, ConfigMap {X}1, "
    f"Namespace {X}1, Service {X}1, ServiceAccount {X}1"
)


def test_a_bundle_generates_its_crds_and_notes_the_skipped_objects_once(tmp_path: Path) -> None:
    run = generate_ok(tmp_path, "bundle_pkg", "--crd", BUNDLE / "install.yaml")
    notes = [line for line in run.stderr.splitlines() if "non-CRD" in line]
    assert notes == [f"kubeinformers: note: {BUNDLE / 'install.yaml'}: {SKIPPED}"], run.stderr
    assert "error" not in run.stderr.lower()
    with importable(tmp_path, "bundle_pkg"):
        v1 = importlib.import_module("bundle_pkg.bundle.v1.models")
        assert v1.Widget.model_validate({"spec": {"size": 3}}).spec.size == 3
        # Gadget came from inside the `kind: List` wrapper
        assert v1.Gadget.model_validate({"spec": {"color": "red"}}).spec.color == "red"


def test_list_items_of_other_kinds_are_skipped_not_errors() -> None:
    model = load.load_crds(BUNDLE / "install.yaml")
    assert model.errors == []
    assert sorted(d.name for d in model.definitions) == [
        "gadgets.bundle.example.com",
        "widgets.bundle.example.com",
    ]


def test_a_path_without_any_crd_is_an_error_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = run_generator("--crd", BUNDLE / "no-crds.yaml", "--out", out, "--package", "out")
    assert run.returncode == EXIT_INPUT_FAILED, run.output
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {BUNDLE / 'no-crds.yaml'}: no CustomResourceDefinition in it (skipped 2 "
        f"non-CRD documents: Deployment {X}1, ServiceAccount {X}1); give the CRD files, or the "
        "install bundle that holds them"
    ]
    assert not out.exists()


def test_an_empty_yaml_file_is_an_error_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = run_generator("--crd", BUNDLE / "empty.yaml", "--out", out, "--package", "out")
    assert run.returncode == EXIT_INPUT_FAILED, run.output
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {BUNDLE / 'empty.yaml'}: empty: no YAML document in it; give a file holding "
        "CustomResourceDefinitions, or leave this one out"
    ]
    assert not out.exists() or python_files(out) == []


def test_an_empty_file_inside_a_folder_is_counted_in_the_note(tmp_path: Path) -> None:
    folder = tmp_path / "crds"
    folder.mkdir()
    (folder / "install.yaml").write_bytes((BUNDLE / "install.yaml").read_bytes())
    (folder / "placeholder.yaml").write_text("")
    model = load.load_crds(folder)
    assert model.errors == []
    assert model.notes == [f"{folder}: {SKIPPED}; 1 empty file"]
