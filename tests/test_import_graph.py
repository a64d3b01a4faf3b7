"""The shape of the package, read from the source (ast; nothing is imported or executed).

* No import cycles among the modules of `kubeinformers/` — imports inside functions and under
  `TYPE_CHECKING` count, since a cycle hidden there is still two modules that need each other.
* The runtime (`kubeinformers.runtime` and the top-level package) never imports the generator
  or the generated code: generated code sits on the runtime, never the other way round.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from pathlib import Path

import kubeinformers

ROOT = Path(kubeinformers.__file__).parent
GENERATED_OR_GENERATOR = ("kubeinformers.generated", "kubeinformers.generator")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in ROOT.rglob("*.py")}


def imported_names(path: Path, name: str, modules: Collection[str] = ()) -> Iterator[str]:
    """Every module name `path` imports (absolute, relative resolved; `from m import x` is
    `m.x` when that is one of `modules`, else `m` — importing a submodule needs no more of
    its package than any import of a submodule does)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                yield submodule if submodule in modules else target
        elif (  # importlib.import_module("kubeinformers....") with a literal name
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = {t for t in imported_names(path, name, modules) if t in modules and t != name}
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles() -> None:
    found = cycles(import_graph(all_modules()))
    assert not found, "import cycles (each line: modules that import each other):\n" + "\n".join(
        " <-> ".join(c) for c in found
    )


def test_the_runtime_never_imports_the_generator_or_generated_code() -> None:
    modules = all_modules()
    runtime = {
        n: p
        for n, p in modules.items()
        if n == "kubeinformers" or n.startswith(("kubeinformers.runtime", "kubeinformers._"))
    }
    offending = sorted(
        f"{name} imports {target}"
        for name, path in runtime.items()
        for target in set(imported_names(path, name, modules))
        if target.startswith(GENERATED_OR_GENERATOR)
    )
    assert not offending, "\n".join(offending)


def test_the_graph_sees_imports_in_functions_and_type_checking_blocks(tmp_path: Path) -> None:
    """The walker itself: a cycle made only of a function-level import and a TYPE_CHECKING
    import is found (so the two tests above can fail)."""
    a = tmp_path / "a.py"
    b = tmp_path / "b.py"
    a.write_text("def f():\n    from pkg import b\n")
    b.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n")
    graph = {
        "pkg.a": set(imported_names(a, "pkg.a", {"pkg.a", "pkg.b"})) & {"pkg.b"},
        "pkg.b": set(imported_names(b, "pkg.b", {"pkg.a", "pkg.b"})) & {"pkg.a"},
    }
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
