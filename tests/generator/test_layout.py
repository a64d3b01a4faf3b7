"""Rendered files are laid out as black would by construction (`generator.layout`), so that
a provider's thousands of accessor, informer and lister files need no formatter; black still
formats a file with a line too long for the construction."""

from __future__ import annotations

import black
import pytest

from kubeinformers.generator import apply, cli, kind_listers, layout
from kubeinformers.generator.layout import Call
from tests.generator.genutil import GOLDEN, REPO

MODE = black.Mode(line_length=100, target_versions={black.mode.TargetVersion.PY311})


def _black(code: str) -> str:
    return black.format_str(code, mode=MODE)


WORDS = " ".join(["word"] * 30)
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
RENDERED = ("__init__.py", "informers.py", "listers.py", "registry.py")


def test_every_rendered_file_and_lister_block_is_what_black_would_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The golden CRDs (odd names, clashes, both scopes, many versions) and the demo CRDs."""
    blocks: list[str] = []
    real_formatted = kind_listers._formatted

    def spy_formatted(block: str) -> str:
        blocks.append(block)
        return real_formatted(block)

    monkeypatch.setattr(kind_listers, "_formatted", spy_formatted)
    model = cli.collect(crds=[GOLDEN, REPO / "crds"])
    result = cli.build(model, "pkg", jobs=1)
    assert not result.errors
    rendered = {p: c for p, c in result.files.items() if p.endswith(RENDERED)}
    assert len(rendered) > 50 and len(blocks) > 20
    assert [p for p, c in rendered.items() if _black(c) != c] == []
    assert [b for b in blocks if _black(b).strip("\n") != b.strip("\n")] == []


@pytest.mark.parametrize("first", ["    RESOURCE: _ClassVar[_APIResource] = ", "    "])
@pytest.mark.parametrize("group", ["a.io", "example.com", "x" * 40 + ".example.com"])
@pytest.mark.parametrize(
    "verbs", ['"get"', '"get", "list", "watch"', ", ".join(f'"{v}"' for v in ALL_VERBS)]
)
def test_a_call_is_laid_out_as_black_lays_it_out(first: str, group: str, verbs: str) -> None:
    """On one line, hugged, or one argument per line, nested calls alike (a longer set of
    verbs than Kubernetes has would make a line too long: black's, see below)."""
    value = Call(
        "APIResource",
        [
            ("group", f'"{group}"'),
            ("version", '"v1"'),
            ("kind", '"Thing"'),
            ("verbs", Call("frozenset", [("", f"{{{verbs}}}")])),
        ],
    )
    code = layout.call(first, value, "," if first == "    " else "")
    source = f"x = (\n{code}\n    None,\n)\n" if first == "    " else f"class C:\n{code}\n"
    assert _black(source) == source


def test_a_line_too_long_for_the_construction_is_left_to_black() -> None:
    assert layout.fits("a = 1\n" + "b" * 100 + "\n")
    assert not layout.fits("a = 1\n" + "b" * 101 + "\n")
    long_def = f"class C:\n    def {'x' * 80}(self) -> {'Y' * 20}:\n        return None\n"
    assert not layout.fits(long_def) and _black(long_def) != long_def


@pytest.mark.parametrize(
    "code",
    [
        f'def f() -> None:\n    """{WORDS}"""\n',
        f'X = 1\n"""\n{WORDS}\n"""\n',
        f"if True:\n    # {WORDS}\n    pass\n",
        f"from m import (\n    {'A' * 50} as {'A' * 50},\n)\n",
        f'L = {{\n    "{"A" * 50}": "{"m" * 50}",\n}}\n',
        f'M = {{\n    G(\n        "a", "b"\n    ): "{"m" * 100}",\n}}\n',
    ],
)
def test_long_lines_black_leaves_alone_need_no_black(code: str) -> None:
    """Docstrings and comments, import aliases, lazy-import entries, registry entries: a
    provider's long kind names make such lines, and black would not change them."""
    assert layout.fits(code)
    assert _black(code) == code


def test_generated_trees_of_this_repository_need_no_formatter() -> None:
    """What `make generate` wrote (built-ins and examples) is unchanged by black, models
    aside (datamodel-code-generator formats them)."""
    trees = [REPO / "kubeinformers" / "generated", REPO / "examples" / "informers"]
    files = [p for tree in trees for p in sorted(tree.rglob("*.py")) if p.name.endswith(RENDERED)]
    assert len(files) > 100
    assert [str(p) for p in files if _black(p.read_text()) != p.read_text()] == []


def _names(n: int) -> tuple[str, str, str]:
    """A class name, an accessor and a module name of `n` characters."""
    return ("Ab" * n)[:n], ("ab_" * n)[:n], ("mo_" * n)[:n]


# The lines a provider's long kind names make too long, as the templates and the apply
# writer print them (`layout.bracket`, `apply._field`), each in a context black reads it in.
def _split_lines(n: int) -> list[tuple[str, str]]:
    m, a, mod = _names(n)
    lister, informer = f"{m}Lister", f"{m}Informer"
    bracket = layout.bracket
    cls = "class C:\n{}\n        pass\n"
    body = "class C:\n    def f(self) -> None:\n{}\n"
    return [
        (
            "if TYPE_CHECKING:\n{}\n",
            bracket(f"    from .{mod} import (", f"{m} as {m}", ")", comma=True, optional=True),
        ),
        (body, bracket(f"        from .{mod} import (", lister, ")", comma=True, optional=True)),
        (
            cls,
            bracket(f"    def {a}(", "self, namespace: str", f") -> _SingleNamespaceLister[{m}]:"),
        ),
        (cls, bracket(f"    def {a}(", "self", f") -> {informer}:", comma=True)),
        (cls, bracket("    def informer(", "self", f") -> _SharedIndexInformer[{m}]:", comma=True)),
        (
            body,
            bracket(
                f"        return {lister}(", "self.informer().get_indexer(), self.RESOURCE", ")"
            ),
        ),
        (body, bracket(f"        return {informer}(", "self._factory", ")")),
        (body, bracket("        return self._factory.typed_informer(", f"self.RESOURCE, {m}", ")")),
        ("{}\n    pass\n", bracket(f"class {lister}(", f"_NamespacedLister[{m}]", "):")),
        ("{}\n", bracket(f"{m}.__kube_lister__ = (", lister, ")", optional=True)),
        ("{}\n    pass\n", bracket(f"class {m}(", "TypedDict, total=False", "):")),
        ("{}\n    pass\n", bracket(f"class {m}Apply(", f'ApplyConfiguration["_models.{m}"]', "):")),
        (
            "class C:\n{}\n",
            layout.exploded("    __kube_model__ = (", [f'"..{mod}"', f'"{m}"'], ")"),
        ),
        (
            cls,
            bracket("    def __init__(", f"self, **fields: Unpack[_{m}ApplyFields]", ") -> None:"),
        ),
        ("class C:\n{}\n", apply._field(a, f"list[{m}Apply]")),
        ("class C:\n{}\n", apply._field(a, f"Required[_core_v1.{m}Apply]")),
        ("class C:\n{}\n", apply._field(a, f"dict[str, list[{m}Apply]]")),
        ("class C:\n{}\n", apply._field(a, f"_mo.{m}Apply")),
        ("class C:\n{}\n", apply._field(a, f'list[Literal["{m}", "{a}", "[x]"]]')),
        ("class C:\n{}\n", apply._field(a, f'Literal["{m}", "{a}"]')),
    ]


@pytest.mark.parametrize("n", [*range(20, 100, 3), 130])
def test_a_line_long_names_make_too_long_is_split_as_black_splits_it(n: int) -> None:
    """Imports, `def`s and their return types, class bases, assignments, apply fields: on one
    line, or split once as black does; a split with a line still too long is left to black."""
    for context, code in _split_lines(n):
        source = context.format(code)
        if layout.fits(source):
            assert _black(source) == source, source
        else:
            assert "\n" not in code  # the one line: black formats the file
