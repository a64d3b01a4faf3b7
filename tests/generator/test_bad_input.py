"""Bad inputs: one clear error naming the file, the document index and the place inside it;
nothing written without --keep-going; with --keep-going everything else is generated and the
exit code still says that something failed.

Exit codes (`kubeinformers generate --help`): 0 all generated, 1 some inputs failed,
2 usage or fatal error.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.generator.genutil import (
    BAD,
    GOLDEN,
    GOLDEN_GROUP_ACCESSORS,
    importable,
    python_files,
    run_generator,
)

EXIT_INPUT_FAILED = 1


@dataclass(frozen=True)
class BadCase:
    option: str
    file: str
    doc_index: int
    where: tuple[str, ...]  # fragments that locate the problem inside the document
    message: str  # a fragment of what is wrong, in words


CASES = {
    "malformed-yaml": BadCase("--crd", "malformed.yaml", 1, ("line 37",), "malformed YAML"),
    "no-served-version": BadCase(
        "--crd", "no-served-versions.yaml", 0, ("spec.versions",), "serves no version"
    ),
    "rejected-schema": BadCase(
        "--crd",
        "rejected-schema.yaml",
        0,
        ("spec.versions[0].schema.openAPIV3Schema", "properties.spec.properties.parts"),
        "items",
    ),
    "unresolvable-ref": BadCase(
        "--openapi",
        "unresolvable-ref.openapi.json",
        0,
        ("com.example.gears.v1.Gear", "properties.spec"),
        "com.example.gears.v1.GearSpecMissing",
    ),
}


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error: ")]


@pytest.mark.parametrize("case", sorted(CASES), ids=str)
def test_bad_input_gives_one_error_naming_file_document_and_path(case: str, tmp_path: Path) -> None:
    bad = CASES[case]
    out = tmp_path / "out"
    run = run_generator(bad.option, BAD / bad.file, "--out", out, "--package", "out")
    assert run.returncode == EXIT_INPUT_FAILED, run.output
    assert "Traceback" not in run.output
    errors = _errors(run.stderr)
    assert len(errors) == 1, run.output
    (error,) = errors
    assert str(BAD / bad.file) in error
    assert f"(document {bad.doc_index})" in error
    for fragment in bad.where:
        assert fragment in error, error
    assert bad.message in error, error
    assert not out.exists() or python_files(out) == [], (
        "nothing may be written without --keep-going"
    )


def test_without_keep_going_one_bad_file_stops_the_whole_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = run_generator(
        "--crd", GOLDEN, "--crd", BAD / "no-served-versions.yaml", "--out", out, "--package", "out"
    )
    assert run.returncode == EXIT_INPUT_FAILED
    assert "--keep-going" in run.stderr  # the message says how to generate the rest
    assert not out.exists() or python_files(out) == []


def test_keep_going_generates_the_rest_and_exits_with_failure(tmp_path: Path) -> None:
    bad_crds = [BAD / CASES[c].file for c in CASES if CASES[c].option == "--crd"]
    args = ["--crd", GOLDEN, *(a for f in bad_crds for a in ("--crd", f))]
    run = run_generator(*args, "--keep-going", "--out", tmp_path / "kg", "--package", "kg")
    assert run.returncode == EXIT_INPUT_FAILED, run.output
    errors = _errors(run.stderr)
    assert len(errors) == len(bad_crds), run.output
    for f in bad_crds:
        assert sum(str(f) in e for e in errors) == 1, errors
    generated = {p.parent.parent.name for p in (tmp_path / "kg").rglob("models.py")}
    # every golden group, and the good first document of malformed.yaml (group bad.example.com)
    assert generated == GOLDEN_GROUP_ACCESSORS | {"bad"}
    with importable(tmp_path, "kg"):
        bad_v1 = importlib.import_module("kg.bad.v1.models")
        assert bad_v1.Fine.model_validate({"spec": {"ok": True}}).spec.ok is True
        assert {"Ghost", "Reject"}.isdisjoint(dir(bad_v1))
        assert _public(importlib.import_module("kg.bad.informers").BadInformers) == {"v1"}
        assert _public(importlib.import_module("kg.bad.v1.informers").BadV1Informers) == {"fines"}


def test_keep_going_with_an_unresolvable_ref_still_generates_the_crds(tmp_path: Path) -> None:
    bad = CASES["unresolvable-ref"]
    run = run_generator(
        "--openapi",
        BAD / bad.file,
        "--crd",
        GOLDEN / "infra.example.com_realms.yaml",
        "--keep-going",
        "--out",
        tmp_path / "kg2",
        "--package",
        "kg2",
    )
    assert run.returncode == EXIT_INPUT_FAILED, run.output
    (error,) = _errors(run.stderr)
    assert bad.message in error
    assert (tmp_path / "kg2" / "infra" / "v1" / "models.py").is_file(), run.output
    assert not re.search(
        r"class Gear\b", "".join(p.read_text() for p in python_files(tmp_path / "kg2"))
    )


def _public(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if not n.startswith("_") and callable(v)}


SCHEMALESS_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foos.bare.example.com}
spec:
  group: bare.example.com
  names: {kind: Foo, plural: foos}
  scope: Namespaced
  versions:
  - {name: v1alpha1, served: false, storage: false}
  - {name: v1, served: true, storage: true}
"""


def test_a_version_without_a_schema_is_free_form_and_said_so(tmp_path: Path) -> None:
    """H26: a served CRD version without `openAPIV3Schema` (refused by an apiextensions v1
    server, common in hand-written files) is generated free-form, and one note names the
    file, the CRD, the version and the place of the missing schema, and says what to do."""
    (tmp_path / "foos.yaml").write_text(SCHEMALESS_CRD)
    run = run_generator("--crd", tmp_path / "foos.yaml", "--out", tmp_path / "gen")
    assert run.returncode == 0, run.output
    assert "Traceback" not in run.output
    (note,) = [line for line in run.stderr.splitlines() if "has no schema" in line]
    for fragment in (
        str(tmp_path / "foos.yaml"),
        "CRD foos.bare.example.com version v1 ",
        "spec.versions[1].schema.openAPIV3Schema",
        "untyped",
        "give the version its schema",
    ):
        assert fragment in note, note
    with importable(tmp_path, "gen"):
        foo = importlib.import_module("gen.bare.v1.foo").Foo
        obj = foo.model_validate({"metadata": {"name": "f"}, "spec": {"a": 1}})
        assert obj.metadata.name == "f" and obj.model_extra == {"spec": {"a": 1}}
