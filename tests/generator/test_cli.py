"""The command line as scripts use it: exit codes, --check, reruns, stale-file removal."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kubeinformers.generator.cli import derive_package
from tests.generator.genutil import (
    BAD,
    GOLDEN,
    MARKER,
    REPO,
    generate_ok,
    importable,
    run_generator,
    run_mypy,
    tree_bytes,
)

REALMS = GOLDEN / "infra.example.com_realms.yaml"
GIZMOS = GOLDEN / "my-app.example.com_gizmos.yaml"


def test_help_documents_the_exit_codes() -> None:
    run = run_generator("--help")
    assert run.returncode == 0
    for line in ("0  everything generated", "1  some inputs failed", "2  usage error"):
        assert line in run.stdout


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    no_input = run_generator("--out", tmp_path / "o", "--package", "o")
    assert no_input.returncode == 2
    assert "--openapi, --crd, --cluster" in no_input.stderr
    bad_package = run_generator("--crd", REALMS, "--out", tmp_path / "o", "--package", "my-pkg")
    assert bad_package.returncode == 2
    assert "'my-pkg' is not a dotted Python name" in bad_package.stderr
    missing = run_generator(
        "--crd", tmp_path / "absent.yaml", "--out", tmp_path / "o", "--package", "o"
    )
    assert missing.returncode == 1
    assert f"error: {tmp_path / 'absent.yaml'}: no such file or folder" in missing.stderr
    assert not (tmp_path / "o").exists()


def test_a_rerun_rewrites_nothing(tmp_path: Path) -> None:
    generate_ok(tmp_path, "again", "--crd", GOLDEN)
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "again").rglob("*.py")}
    run = generate_ok(tmp_path, "again", "--crd", GOLDEN)
    assert "is up to date" in run.stderr and "nothing written" in run.stderr
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "again").rglob("*.py")} == before
    forced = generate_ok(tmp_path, "again", "--crd", GOLDEN, "--force")
    assert "wrote 0," in forced.stderr
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "again").rglob("*.py")} == before


def test_a_rerun_after_an_edit_or_a_changed_input_generates_again(tmp_path: Path) -> None:
    """The no-op shortcut holds only while the output is as written and the input the same."""
    crd = tmp_path / "realms.yaml"
    crd.write_bytes(REALMS.read_bytes())
    generate_ok(tmp_path, "again", "--crd", crd)
    edited = tmp_path / "again" / "infra" / "v1" / "realm.py"
    original = edited.read_text()
    edited.write_text(original + "\n# edited by hand\n")
    run = generate_ok(tmp_path, "again", "--crd", crd)
    assert "wrote 1," in run.stderr and edited.read_text() == original
    crd.write_text(crd.read_text().replace("Realm", "Kingdom").replace("realm", "kingdom"))
    run = generate_ok(tmp_path, "again", "--crd", crd)
    assert "is up to date" not in run.stderr
    assert (tmp_path / "again" / "infra" / "v1" / "kingdom.py").is_file()
    assert not edited.exists()


def test_check_mode_reports_differences_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "chk"
    generate_ok(tmp_path, "chk", "--crd", GOLDEN)
    args = ("--crd", GOLDEN, "--out", out, "--package", "chk", "--check")
    assert run_generator(*args).returncode == 0
    edited = out / "infra" / "v1" / "models.py"
    edited.write_text(edited.read_text() + "\n# edited by hand\n")
    snapshot = tree_bytes(out)
    run = run_generator(*args)
    assert run.returncode == 1
    assert f"differs: {edited}" in run.stderr
    assert tree_bytes(out) == snapshot


def test_stale_generated_files_are_removed_and_hand_written_ones_kept(tmp_path: Path) -> None:
    """Like kube_codegen.sh: files carrying the marker that this run does not produce go."""
    generate_ok(tmp_path, "stale", "--crd", REALMS, "--crd", GIZMOS)
    hand_written = tmp_path / "stale" / "my_app" / "v1" / "expansion.py"
    hand_written.write_text("def helper() -> int:\n    return 1\n")
    run = generate_ok(tmp_path, "stale", "--crd", REALMS)
    assert "removed" in run.stderr
    leftovers = sorted(
        str(p.relative_to(tmp_path)) for p in (tmp_path / "stale" / "my_app").rglob("*.py")
    )
    assert leftovers == ["stale/my_app/v1/expansion.py"]
    assert not hand_written.read_text().startswith(MARKER)
    with importable(tmp_path, "stale"):
        top = importlib.import_module("stale.informers")
        assert hasattr(top.CustomInformers, "infra")
        assert not hasattr(top.CustomInformers, "my_app")


def test_progress_goes_to_stderr_and_quiet_silences_it(tmp_path: Path) -> None:
    loud = generate_ok(tmp_path / "loud", "pkg", "--crd", GOLDEN)
    assert loud.stdout == ""
    progress = [line for line in loud.stderr.splitlines() if line.startswith("kubeinformers: ")]
    assert any(line.startswith("kubeinformers: loaded ") for line in progress), loud.stderr
    assert any(line.startswith("kubeinformers: wrote ") for line in progress), loud.stderr
    out = tmp_path / "quiet" / "pkg"
    quiet = run_generator("--crd", GOLDEN, "--out", out, "--package", "pkg", "-q")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    assert tree_bytes(out) == tree_bytes(tmp_path / "loud" / "pkg")


def test_out_pointing_at_a_file_fails_before_reading_anything(tmp_path: Path) -> None:
    a_file = tmp_path / "out.txt"
    a_file.write_text("not a folder\n")
    run = run_generator("--crd", GOLDEN, "--out", a_file, "--package", "o")
    assert run.returncode == 2, run.output
    assert run.stderr == (
        f"kubeinformers generate: --out {a_file} is a file, not a folder; give a folder (it "
        "is created when missing)\n"
    )
    assert a_file.read_text() == "not a folder\n"


def test_keep_going_with_every_input_failed_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "none"
    run = run_generator(
        "--crd", BAD / "no-served-versions.yaml", "--keep-going", "--out", out, "--package", "n"
    )
    assert run.returncode == 1, run.output
    assert (
        "kubeinformers generate: 1 input error(s) and nothing left to generate; nothing written"
        in run.stderr
    )
    assert not out.exists()


def test_the_package_name_is_derived_from_out_when_not_given(tmp_path: Path) -> None:
    assert derive_package(Path("myapp/informers"), cwd=tmp_path) == "myapp.informers"
    assert derive_package(tmp_path / "myapp" / "informers", cwd=tmp_path) == "myapp.informers"
    # outside the current folder only the folder's own name is a sensible guess
    assert derive_package(tmp_path / ".tmp" / "x" / "informers", cwd=REPO) == "informers"
    # a part below the current folder that is no identifier: the folder's own name
    assert derive_package(Path("my-app/informers"), cwd=tmp_path) == "informers"
    assert derive_package(tmp_path / "my-out", cwd=REPO) is None
    assert derive_package(tmp_path / "class", cwd=REPO) is None


def test_without_package_the_cli_says_which_name_it_chose_or_asks_for_one(
    tmp_path: Path,
) -> None:
    out = tmp_path / "gen" / "realms_pkg"
    run = run_generator("--crd", REALMS, "--out", out)
    assert run.returncode == 0, run.output
    assert (
        "kubeinformers: package realms_pkg (derived from --out; it must be importable under "
        "this name, else give --package)"
    ) in run.stderr
    with importable(tmp_path / "gen", "realms_pkg"):
        assert hasattr(importlib.import_module("realms_pkg.informers").CustomInformers, "infra")
    bad = run_generator("--crd", REALMS, "--out", tmp_path / "my-out")
    assert bad.returncode == 2
    assert bad.stderr == (
        f"kubeinformers generate: cannot derive a package name from --out {tmp_path / 'my-out'} "
        "('my-out' is not a Python identifier); give --package NAME (with make: "
        "PACKAGE=NAME)\n"
    )


def test_make_generate_for_your_crds_neither_needs_package_nor_mentions_the_builtins(
    tmp_path: Path,
) -> None:
    """`make generate CRDS=/abs OUT=/abs` generates the CRDs only: no --package (the CLI
    derives it), no built-ins run and no line about their OpenAPI spec."""
    make = shutil.which("make")
    if make is None:
        pytest.skip("needs `make` on PATH")
    dry = subprocess.run(
        # --no-print-directory: under `make test` this make is nested, and its "Entering
        # directory" lines name the clone's folder (often "kubeinformers" itself)
        [
            make,
            "--no-print-directory",
            "-n",
            "generate",
            f"CRDS={REALMS}",
            f"OUT={tmp_path / 'informers'}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    commands = [line for line in dry.stdout.splitlines() if "kubeinformers" in line]
    assert commands == [
        f".venv/bin/kubeinformers generate --crd {REALMS} --out {tmp_path / 'informers'}"
    ], dry.stdout
    assert "OpenAPI" not in dry.stdout + dry.stderr


# --- without the generator extra (pip install kubeinformers, no [generator]) ------------------

_WITHOUT_EXTRA = """
import sys
for name in ("jinja2", "black", "datamodel_code_generator"):
    sys.modules[name] = None  # import fails as when the distribution is not installed
from kubeinformers.generator.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run_without_extra(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXTRA, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )


def test_help_without_the_generator_extra_prints_help_and_one_hint(tmp_path: Path) -> None:
    proc = _run_without_extra("generate", "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "usage: kubeinformers generate" in proc.stdout and "--crd PATH" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "note: kubeinformers generate needs the generator extra (jinja2, black, "
        "datamodel-code-generator not installed): pip install 'kubeinformers[generator]'"
    ]


def test_generate_without_the_generator_extra_fails_with_one_line(tmp_path: Path) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    proc = _run_without_extra("generate", "--crd", str(crds), "--out", "gen", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "kubeinformers generate needs the generator extra (jinja2, black, "
        "datamodel-code-generator not installed): pip install 'kubeinformers[generator]'"
    ]
    assert not (tmp_path / "gen").exists()


def _swagger_of_two_groups() -> dict[str, object]:
    """A swagger.json serving `apps` (whose Widget refers to a core type) and `batch`."""

    def ref(name: str) -> dict[str, str]:
        return {"$ref": f"#/definitions/{name}"}

    def kind(group: str, name: str, spec: str) -> dict[str, object]:
        return {
            "type": "object",
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
                "spec": ref(spec),
            },
            "x-kubernetes-group-version-kind": [{"group": group, "version": "v1", "kind": name}],
        }

    def listing(group: str, name: str, item: str) -> dict[str, object]:
        return {
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": {"type": "string"},
                "items": {"type": "array", "items": ref(item)},
                "kind": {"type": "string"},
                "metadata": ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"),
            },
            "x-kubernetes-group-version-kind": [{"group": group, "version": "v1", "kind": name}],
        }

    def paths(group: str, plural: str, name: str) -> dict[str, object]:
        gvk = {"group": group, "version": "v1", "kind": name}
        base = f"/apis/{group}/v1/namespaces/{{namespace}}/{plural}"
        ok = {"200": {"schema": ref(f"io.k8s.api.{group}.v1.{name}List")}}
        return {
            base: {
                "get": {
                    "x-kubernetes-action": "list",
                    "x-kubernetes-group-version-kind": gvk,
                    "responses": ok,
                }
            },
            f"/apis/{group}/v1/watch/namespaces/{{namespace}}/{plural}": {
                "get": {
                    "x-kubernetes-action": "watchlist",
                    "x-kubernetes-group-version-kind": gvk,
                    "responses": ok,
                }
            },
        }

    meta = "io.k8s.apimachinery.pkg.apis.meta.v1."
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.36.0"},
        "paths": {**paths("apps", "widgets", "Widget"), **paths("batch", "gadgets", "Gadget")},
        "definitions": {
            meta + "ObjectMeta": {"type": "object", "properties": {"name": {"type": "string"}}},
            meta + "ListMeta": {"type": "object", "properties": {"continue": {"type": "string"}}},
            "io.k8s.api.core.v1.Toleration": {
                "type": "object",
                "properties": {"key": {"type": "string"}},
            },
            "io.k8s.api.core.v1.Volume": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
            },
            "io.k8s.api.apps.v1.WidgetSpec": {
                "type": "object",
                "properties": {
                    "tolerations": {"type": "array", "items": ref("io.k8s.api.core.v1.Toleration")}
                },
            },
            "io.k8s.api.apps.v1.Widget": kind("apps", "Widget", "io.k8s.api.apps.v1.WidgetSpec"),
            "io.k8s.api.apps.v1.WidgetList": listing(
                "apps", "WidgetList", "io.k8s.api.apps.v1.Widget"
            ),
            "io.k8s.api.batch.v1.GadgetSpec": {
                "type": "object",
                "properties": {"volume": ref("io.k8s.api.core.v1.Volume")},
            },
            "io.k8s.api.batch.v1.Gadget": kind("batch", "Gadget", "io.k8s.api.batch.v1.GadgetSpec"),
            "io.k8s.api.batch.v1.GadgetList": listing(
                "batch", "GadgetList", "io.k8s.api.batch.v1.Gadget"
            ),
        },
    }


def test_h24_group_keeps_of_a_swagger_json_only_the_models_its_groups_use(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "swagger.json"
    spec.write_text(json.dumps(_swagger_of_two_groups()))
    generate_ok(tmp_path, "onlyapps", "--openapi", spec, "--group", "apps")
    out = tmp_path / "onlyapps"
    assert not (out / "batch").exists()  # the other group: no models, no informers
    core = (out / "core" / "v1" / "models.py").read_text()
    assert "class Toleration(" in core  # used by apps' Widget
    assert "class Volume(" not in core  # used only by batch's Gadget
    with importable(tmp_path, "onlyapps"):
        models = importlib.import_module("onlyapps.apps.v1.models")
        widget = models.Widget.model_validate({"spec": {"tolerations": [{"key": "k"}]}})
        assert widget.spec.tolerations[0].key == "k"


@pytest.mark.parametrize(
    ("given", "package"), [(("--package", "gc"), "gc"), (("--package", "json.gen"), "json.gen")]
)
def test_h31_a_package_named_like_a_standard_library_module_is_refused(
    tmp_path: Path, given: tuple[str, str], package: str
) -> None:
    """`--out gc` once wrote a package that `import gc.informers` could not find (the
    built-in gc module answers first)."""
    run = run_generator("--crd", REALMS, "--out", tmp_path / "o", *given)
    assert run.returncode == 2, run.output
    top = package.split(".")[0]
    assert run.stderr.strip().splitlines()[-1] == (
        f"kubeinformers generate: --package {package}: {top!r} is a module of Python's "
        f"standard library, so `import {package}` would not find this package or would hide "
        f"that module from every program beside it; choose another name (--package, or --out "
        f"{top}_informers)"
    )
    assert not (tmp_path / "o").exists()


def test_h31_a_package_derived_from_out_is_checked_too(tmp_path: Path) -> None:
    argv = ["generate", "--crd", str(REALMS), "--out", "gc", "-q"]
    proc = subprocess.run(
        [sys.executable, "-m", "kubeinformers.generator", *argv],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "'gc' is a module of Python's standard library" in proc.stderr
    assert not (tmp_path / "gc").exists()


def test_h34_an_installed_generated_package_is_typed_for_mypy(tmp_path: Path) -> None:
    """A generated package imported from a sys.path entry (an installed distribution, a
    `.pth` line, PYTHONPATH) rather than the checked project's own folders is typed for mypy
    --strict only with PEP 561's `py.typed`: without it every import was `import-untyped`
    and every kind `Any`. A re-run writes the marker again when it is gone."""
    site = tmp_path / "site"
    (site / "myapp").mkdir(parents=True)
    (site / "myapp" / "__init__.py").write_text("", encoding="utf-8")
    generate_ok(site, "myapp.informers", "--crd", REPO / "crds")
    marker = site / "myapp" / "informers" / "py.typed"
    assert marker.read_bytes() == b""
    marker.unlink()
    generate_ok(site, "myapp.informers", "--crd", REPO / "crds")
    assert marker.is_file()
    project = tmp_path / "project"
    project.mkdir()
    (project / "use.py").write_text(
        "from myapp.informers.demo.v1alpha1.widget import Widget\n\n\n"
        "def name(w: Widget) -> str:\n"
        "    return w.metadata.name if w.metadata and w.metadata.name else ''\n\n\n"
        "reveal_type(Widget.model_validate({}).spec)\n",
        encoding="utf-8",
    )
    # Found through the interpreter's path, as an installed package is (not MYPYPATH).
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(site)]))
    proc = run_mypy([Path("use.py")], cwd=project, mypy_path=[], timeout=600, env=env)
    assert proc.stdout.strip().splitlines() == [
        'use.py:8: note: Revealed type is "myapp.informers.demo.v1alpha1.widget.WidgetSpec | None"'
    ], proc.stdout + proc.stderr
