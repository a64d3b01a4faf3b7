"""Lazy public faces, each written once.

A face (`kubeinformers/__init__.py`, `kubeinformers.testing`, ...) lists its public names in
one place: explicit re-exports under `if TYPE_CHECKING:`, `from module import Name as Name`.
Type checkers read those imports as they are (mypy --strict sees every public name with its
real type and flags a name that is not there). At run time the block does not run; the face
calls `install(__name__)`, which gives the package a `__getattr__` that imports the defining
module of a name on first use, and `__all__` / `__dir__` computed from the same imports.

Why lazy: `import kubeinformers` stays a few milliseconds (the runtime imports pydantic and
the kubernetes client: ~0.3 s for the factory alone, ~0.45 s for every name), which the
`kubeinformers generate` command and the pytest plugin would pay on every start. The names
are read once, on first use, by parsing the face's source (well under a millisecond; the
runtime imports `ast` anyway).

Only the `X as X` form counts (the same rule mypy applies to re-exports), so a face may import
other names under TYPE_CHECKING for its own annotations.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any


def face_names(module: ModuleType) -> dict[str, tuple[str, str]]:
    """The public names of a face: name -> (defining module, attribute), read from the
    `from m import X as X` statements of its top-level `if TYPE_CHECKING:` blocks."""
    import ast  # only on first use of a name

    source = None
    try:
        with open(str(module.__file__), encoding="utf-8") as f:
            source = f.read()
    except OSError:  # not a plain file (a zip import, say): ask the loader
        get_source = (
            getattr(module.__spec__.loader, "get_source", None) if module.__spec__ else None
        )
        source = get_source(module.__name__) if get_source is not None else None
    if source is None:
        raise ImportError(f"the face {module.__name__!r} needs its source to list its names")
    names: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for alias in stmt.names:
                    if alias.asname == alias.name:
                        names[alias.name] = (stmt.module, alias.name)
    return names


def install(package: str) -> None:
    """Serve `package`'s face lazily: `__getattr__` imports a name's defining module on first
    use and caches the object in the package; `__all__` and `dir()` list the face's names."""
    module = sys.modules[package]
    table: dict[str, tuple[str, str]] = {}

    def names() -> dict[str, tuple[str, str]]:
        if not table:
            table.update(face_names(module))
        return table

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted(names())
        else:
            target = names().get(name) if not name.startswith("__") else None
            if target is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            value = resolve(*target)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *names()})

    vars(module).update(__getattr__=__getattr__, __dir__=__dir__)


def resolve(module: str, name: str) -> Any:
    """`module.name`: an attribute of the module, or its submodule of that name."""
    imported = importlib.import_module(module)
    try:
        return getattr(imported, name)
    except AttributeError:
        return importlib.import_module(f"{module}.{name}")
