"""Class names that would shadow a generated module's imports: placeholders in, aliases out.

A kind is named `Field`, `Any` or `UUID`, or embeds a core type whose class the module
imports (`Container`): the class keeps the kind's name, and the module imports the other
name under an alias instead (`from pydantic import Field as _Field`). datamodel-code-generator
cannot do this itself (it would emit `class Field` beside `from pydantic import Field`, and
it capitalises `postgresql`), so such classes go through it under a placeholder name that it
keeps verbatim, and `restore` puts the real names back, token by token, afterwards.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Mapping

_PLACEHOLDER = "KubeinformersPlaceholder{:05d}Class"
_KEPT_AS_IS = re.compile(r"^[A-Z][A-Za-z0-9]*$")  # datamodel-code-generator changes others


def placeholder(index: int) -> str:
    """A class name datamodel-code-generator keeps as it is and no schema uses."""
    return _PLACEHOLDER.format(index)


def needs_placeholder(name: str, imported: frozenset[str]) -> bool:
    """Whether class `name` must go through datamodel-code-generator under a placeholder."""
    return name in imported or not _KEPT_AS_IS.match(name)


def restore(code: str, names: Mapping[str, str]) -> str:
    """Put the real class names (`names`: placeholder → real) back into `code`.

    An import whose bound name equals one of the real names is aliased with a leading `_`,
    and every use of it in the module follows (attribute names, field declarations and
    keyword arguments are other things and stay).
    """
    present = {p: r for p, r in names.items() if p in code}
    if not present:
        return code
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    real = set(present.values())
    imported, module_paths = _imported_names(tokens)
    clashing = real & set(imported)
    edits: list[tuple[int, int, int, str]] = []  # (row, col, length, replacement)
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        if tok.type != tokenize.NAME:
            continue
        row, col = tok.start
        if tok.string in present:
            edits.append((row, col, len(tok.string), present[tok.string]))
            continue
        if tok.string not in clashing or i in module_paths:
            continue
        prev = _significant(tokens, i, -1)
        nxt = _significant(tokens, i, 1)
        if prev is not None and prev.string == ".":
            continue
        if i in imported.get(tok.string, ()):
            edits.append((row, col, len(tok.string), f"{tok.string} as _{tok.string}"))
            continue
        at_line_start = prev is None or prev.type in (
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.NL,
        )
        if nxt is not None and nxt.string == ":" and at_line_start:
            continue  # a field declaration
        if nxt is not None and nxt.string == "=" and depth > 0:
            continue  # a keyword argument
        edits.append((row, col, len(tok.string), f"_{tok.string}"))
    lines = code.splitlines(keepends=True)
    for row, col, length, text in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + text + line[col + length :]
    return "".join(lines)


def _significant(tokens: list[tokenize.TokenInfo], i: int, step: int) -> tokenize.TokenInfo | None:
    j = i + step
    while 0 <= j < len(tokens):
        if tokens[j].type not in (tokenize.COMMENT, tokenize.NL):
            return tokens[j]
        j += step
    return None


def _imported_names(tokens: list[tokenize.TokenInfo]) -> tuple[dict[str, set[int]], set[int]]:
    """(name bound by each top-level `from X import a, b` → indexes of its tokens there,
    indexes of the tokens naming modules: `X` there, and all of a plain `import x.y`)."""
    out: dict[str, set[int]] = {}
    module_paths: set[int] = set()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == tokenize.NAME and tok.string == "import" and tok.start[1] == 0:
            j = i + 1
            while j < len(tokens) and tokens[j].type != tokenize.NEWLINE:
                module_paths.add(j)
                j += 1
            i = j
        elif tok.type == tokenize.NAME and tok.string == "from" and tok.start[1] == 0:
            j = i + 1
            while j < len(tokens) and tokens[j].string != "import":
                module_paths.add(j)
                j += 1
            j += 1
            while j < len(tokens) and tokens[j].type != tokenize.NEWLINE:
                cur = tokens[j]
                if cur.type == tokenize.NAME and cur.string != "as":
                    after = _significant(tokens, j, 1)
                    if after is not None and after.string == "as":
                        j += 2  # `a as b`: b is the bound name (recorded next)
                        continue
                    out.setdefault(cur.string, set()).add(j)
                j += 1
            i = j
        i += 1
    return out, module_paths
