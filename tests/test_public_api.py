"""The public face: `kubeinformers.__all__` (and each subpackage's) is what users import.

* Examples and the README import only public names: from `kubeinformers` (its `__all__`),
  `kubeinformers.generator` (its `__all__`) or generated packages — never a runtime module.
* Every exported name resolves, and the lazy table, the type-checking imports and `__all__`
  of each face name the same set (so mypy sees what users get at run time).
* `import kubeinformers` imports nothing but the package itself (names load on first use).
* The two renamed names still import, with a DeprecationWarning (issue 14).
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import kubeinformers

REPO = Path(kubeinformers.__file__).parent.parent
FACES = [
    "kubeinformers",
    "kubeinformers.generator",
    "kubeinformers.runtime.api",
    "kubeinformers.runtime.cache",
    "kubeinformers.runtime.client",
]
GENERATED = ("kubeinformers.generated", "examples.informers")


def example_sources() -> Iterator[tuple[str, str]]:
    for path in sorted((REPO / "examples").glob("*.py")):
        yield str(path.relative_to(REPO)), path.read_text()
    readme = (REPO / "README.md").read_text()
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", readme, re.S)):
        yield f"README.md python block {i + 1}", block


def non_public_imports(source: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kubeinformers") and not alias.name.startswith(GENERATED):
                    yield f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            module = node.module
            if not module.startswith("kubeinformers") or module.startswith(GENERATED):
                continue
            public: set[str] = set()
            if module in ("kubeinformers", "kubeinformers.generator"):
                public = set(importlib.import_module(module).__all__)
            for alias in node.names:
                if alias.name not in public:
                    yield f"from {module} import {alias.name}"


@pytest.mark.parametrize(("where", "source"), list(example_sources()))
def test_examples_and_readme_import_only_public_names(where: str, source: str) -> None:
    found = sorted(set(non_public_imports(source)))
    assert not found, f"{where} imports names that are not public:\n" + "\n".join(found)


def test_the_public_names_check_catches_a_runtime_import() -> None:
    source = "from kubeinformers.runtime.cache.keys import meta_namespace_key\nimport kubeinformers.runtime\nfrom kubeinformers import _moved\n"
    assert sorted(non_public_imports(source)) == [
        "from kubeinformers import _moved",
        "from kubeinformers.runtime.cache.keys import meta_namespace_key",
        "import kubeinformers.runtime",
    ]


def face_tables(name: str) -> tuple[set[str], set[str], set[str]]:
    """(`__all__`, the `_EXPORTS` keys, the names imported under TYPE_CHECKING) of a face."""
    module = importlib.import_module(name)
    tree = ast.parse(Path(str(module.__file__)).read_text())
    typed: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module != "typing":
                    typed |= {a.asname or a.name for a in stmt.names}
    return set(module.__all__), set(module._EXPORTS), typed


@pytest.mark.parametrize("face", FACES)
def test_a_face_exports_resolve_and_agree_with_its_type_checking_imports(face: str) -> None:
    all_names, lazy, typed = face_tables(face)
    assert all_names == lazy == typed
    module = importlib.import_module(face)
    missing = [name for name in sorted(all_names) if getattr(module, name, None) is None]
    assert not missing


def test_importing_kubeinformers_imports_only_the_package() -> None:
    code = (
        "import sys, kubeinformers\n"
        "print(sorted(m for m in sys.modules if m.startswith('kubeinformers')))\n"
        "print('pydantic' in sys.modules, 'typing' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split("\n")
    assert out[0] == "['kubeinformers', 'kubeinformers._exports', 'kubeinformers._moved']"
    assert out[1] == "False False"


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("kubeinformers.runtime.cache.listers", "NamespaceLister", "SingleNamespaceLister"),
    ],
)
def test_a_renamed_name_still_imports_with_a_deprecation_warning(
    module: str, old: str, new: str
) -> None:
    imported = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"{module}.{old} is now {new}"):
        value = getattr(imported, old)
    assert value is getattr(imported, new)
