"""mypy --strict sees kubeinformers' types from a user's own project outside the repository.

The editable install must be a plain path entry (not an import hook mypy cannot follow), and
the package must ship py.typed: then a user's `app.py` type-checks against the generated models
and the runtime's generics, and a wrong type in it is an error that names our types.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

APP = textwrap.dedent(
    """
    from kubeinformers.generated.informers import SharedInformerFactory
    from kubeinformers.generated.core.v1 import Pod


    def pod_names(factory: SharedInformerFactory, namespace: str) -> list[str]:
        pods: list[Pod] = factory.core().v1().pods().lister().pods(namespace).list("app=web")
        return [p.metadata.name for p in pods if p.metadata and p.metadata.name]
    """
)

WRONG = textwrap.dedent(
    """
    from kubeinformers.generated.informers import SharedInformerFactory


    def wrong(factory: SharedInformerFactory) -> int:
        return factory.core().v1().pods().lister().pods("ns").get("x")
    """
)


def _mypy(project: Path, *files: str) -> subprocess.CompletedProcess[str]:
    # The repository's cache (filled by `make typecheck`) keeps this from re-analysing
    # kubeinformers from scratch; the user project itself has no configuration of its own.
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(REPO / ".mypy_cache"),
            *files,
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_issue18_a_user_project_outside_the_repo_type_checks_with_mypy_strict(
    tmp_path: Path,
) -> None:
    assert REPO not in tmp_path.parents
    (tmp_path / "app.py").write_text(APP)
    done = _mypy(tmp_path, "app.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in 1 source file" in done.stdout


def test_issue18_a_wrong_type_in_user_code_is_reported_against_the_generated_model(
    tmp_path: Path,
) -> None:
    (tmp_path / "wrong.py").write_text(WRONG)
    done = _mypy(tmp_path, "wrong.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'Incompatible return value type (got "Pod", expected "int")' in done.stdout


def test_every_public_name_is_typed_for_a_user_and_a_name_that_is_not_public_is_an_error(
    tmp_path: Path,
) -> None:
    """The faces are lazy at run time, yet mypy sees each public name with its real type, and
    a name a face does not export is an error (no module `__getattr__` makes it Any)."""
    from tests.test_public_api import FACES, IMPORTABLE_FACES

    lines = [
        f"from {face} import {', '.join(f'{n} as {n}_{i}' for n in sorted(FACES[face]))}"
        for i, face in enumerate(IMPORTABLE_FACES)
    ]
    code = "\n".join(lines) + textwrap.dedent(
        """

        from kubeinformers import NotAPublicName, labels, object_name
        from kubeinformers.testing import SharedInformerFactory


        def key(obj: object) -> int:
            return object_name(obj)


        def selector() -> int:
            return labels.parse("app=web")
        """
    )
    (tmp_path / "names.py").write_text(code)
    done = _mypy(tmp_path, "names.py")
    errors = sorted(
        line.split(": error: ")[1] for line in done.stdout.splitlines() if ": error: " in line
    )
    assert errors == [
        'Incompatible return value type (got "Selector", expected "int")  [return-value]',
        'Incompatible return value type (got "str", expected "int")  [return-value]',
        'Module "kubeinformers" has no attribute "NotAPublicName"  [attr-defined]',
        'Module "kubeinformers.testing" has no attribute "SharedInformerFactory"  [attr-defined]',
    ], done.stdout + done.stderr
