"""The shape of the package, read from the source (ast; nothing is imported or executed).

* No import cycles among the modules of `kubeinformers/` — imports inside functions and under
  `TYPE_CHECKING` count, since a cycle hidden there is still two modules that need each other.
* The packages are layered (`LAYERS`, lowest first, as docs/architecture.md draws them): a
  module imports only from its own package and from packages in lower layers, never from a
  higher one or from a peer in its own layer. Every module belongs to a declared package.
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

# Lowest first. A package may import its own modules and anything in a lower layer; packages
# in one layer do not import each other. Names are relative to `kubeinformers.`.
LAYERS: list[tuple[str, ...]] = [
    ("_exports",),  # the lazy-face helper: imports nothing of the package
    ("runtime.api",),  # models, Status, errors, resources, keys and metadata, list/watch
    ("runtime.clock", "runtime.metrics", "runtime.labels", "runtime.uncancelled"),
    ("runtime.codec",),
    ("runtime.client",),
    ("runtime.reflector",),
    ("runtime.cache", "runtime.workqueue", "runtime.leaderelection"),
    ("runtime.reconcile",),
    ("runtime.ring",),  # a shard ring over Leases: drives informers and reconcile loops
    ("runtime",),  # the package itself (a docstring)
    ("generated",),
    ("generator", "testing"),
    ("",),  # the top-level face, `kubeinformers`
]


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


def package_of(module: str) -> str:
    """The declared package (a `LAYERS` entry) a module belongs to: the longest that prefixes
    it; raises for a module in no declared package."""
    relative = module.removeprefix("kubeinformers").removeprefix(".")
    candidates = [
        p for layer in LAYERS for p in layer if relative == p or relative.startswith(p + ".")
    ]
    if relative == "" or not candidates:
        candidates = [p for layer in LAYERS for p in layer if p == relative]
    if not candidates:
        raise LookupError(f"{module} is in no package of LAYERS (tests/test_import_graph.py)")
    return max(candidates, key=len)


def layering_violations(graph: dict[str, set[str]]) -> list[str]:
    layer = {p: i for i, names in enumerate(LAYERS) for p in names}
    found = []
    for name, targets in sorted(graph.items()):
        source = package_of(name)
        for target in sorted(targets):
            dest = package_of(target)
            if dest != source and layer[dest] >= layer[source]:
                where = "beside" if layer[dest] == layer[source] else "above"
                found.append(f"{name} imports {target} ({dest} is {where} {source})")
    return found


def test_every_module_belongs_to_a_declared_package() -> None:
    unplaced = []
    for name in sorted(all_modules()):
        try:
            package_of(name)
        except LookupError as e:
            unplaced.append(str(e))
    assert not unplaced, "\n".join(unplaced)


def test_packages_import_only_from_lower_layers() -> None:
    found = layering_violations(import_graph(all_modules()))
    assert not found, "imports against the package order (LAYERS):\n" + "\n".join(found)


def test_the_layering_check_catches_an_upward_and_a_sideways_import() -> None:
    graph = {
        "kubeinformers.runtime.reflector.watch": {"kubeinformers.runtime.cache.store"},
        "kubeinformers.runtime.cache.informer": {
            "kubeinformers.runtime.reflector.reflector",  # downward: allowed
            "kubeinformers.runtime.workqueue.queue",  # a peer: not allowed
            "kubeinformers.runtime.cache.store",  # its own package: allowed
        },
    }
    assert layering_violations(graph) == [
        "kubeinformers.runtime.cache.informer imports kubeinformers.runtime.workqueue.queue"
        " (runtime.workqueue is beside runtime.cache)",
        "kubeinformers.runtime.reflector.watch imports kubeinformers.runtime.cache.store"
        " (runtime.cache is above runtime.reflector)",
    ]


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
