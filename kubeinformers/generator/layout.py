"""black's layout of the calls the templates print, by construction.

Rendered files are written as black would format them, so that formatting thousands of
accessor, informer and lister files costs nothing (black over a 2,000-CRD provider's
rendered files took a minute). The only long lines the templates print are calls such as
`APIResource(group=..., ...)`; `call` lays one out as black does: on one line when it fits
in LINE_LENGTH, else its arguments on one indented line when they fit ("hugged"), else one
argument per line with a trailing comma, each laid out the same way. A provider's long kind
names make other lines too long (a `def` with its return type, a class's base, an import,
an apply configuration's field); `bracket` and `exploded` split such a line once, as black
does. A file that still has a longer line (a name too long for one split) is formatted with
black after all (`write.format_all`); tests compare the results with black's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

LINE_LENGTH = 100


@dataclass(frozen=True)
class Call:
    """`func(args...)`; an argument is source text or another Call, after `name=` if named."""

    func: str
    args: Sequence[tuple[str, str | Call]]  # (keyword or "", value)


def flat(value: str | Call) -> str:
    if isinstance(value, str):
        return value
    inner = ", ".join(f"{k}={flat(v)}" if k else flat(v) for k, v in value.args)
    return f"{value.func}({inner})"


def call(first: str, value: str | Call, tail: str = "") -> str:
    """`value` laid out after `first` (the line's start, with its indentation), followed by
    `tail` (`,` in a collection); lines joined with newlines, no final newline."""
    return "\n".join(_lines(first, value, tail))


def _lines(first: str, value: str | Call, tail: str) -> list[str]:
    one = f"{first}{flat(value)}{tail}"
    if isinstance(value, str) or len(one) <= LINE_LENGTH or not value.args:
        return [one]
    indent = len(first) - len(first.lstrip(" "))
    pad = " " * (indent + 4)
    close = " " * indent + ")" + tail
    hugged = pad + ", ".join(f"{k}={flat(v)}" if k else flat(v) for k, v in value.args)
    if len(hugged) <= LINE_LENGTH:
        return [f"{first}{value.func}(", hugged, close]
    out = [f"{first}{value.func}("]
    for k, v in value.args:
        out.extend(_lines(f"{pad}{k}=" if k else pad, v, ","))
    out.append(close)
    return out


def bracket(
    first: str, body: str, last: str, *, comma: bool = False, optional: bool = False
) -> str:
    """`first + body + last` on one line when it fits; else split as black's right-hand split
    does: `first` (its indentation, up to and including the opening bracket), `body` one level
    deeper (with a trailing `comma` where black adds one: imports, a `def`'s lone `self`),
    `last` (from the closing bracket on) back at the first line's indentation. `optional`:
    the brackets are black's (an import's, an assignment's, an annotation's), and left out
    when the line fits. When a line of the split is still too long, the one line is returned
    (black then formats the file: a deeper split is its business)."""
    one = f"{first[:-1]}{body}{last[1:]}" if optional else f"{first}{body}{last}"
    if len(one) <= LINE_LENGTH:
        return one
    indent = " " * (len(first) - len(first.lstrip(" ")))
    split = f"{first}\n{indent}    {body}{',' if comma else ''}\n{indent}{last}"
    return split if fits(split) else one


def exploded(first: str, items: Sequence[str], last: str) -> str:
    """A collection literal (`first` ends with its opening bracket) on one line when it fits,
    else one item per line with a trailing comma, as black writes it (see `bracket`)."""
    one = f"{first}{', '.join(items)}{last}"
    if len(one) <= LINE_LENGTH:
        return one
    indent = " " * (len(first) - len(first.lstrip(" ")))
    split = "\n".join([first, *(f"{indent}    {item}," for item in items), f"{indent}{last}"])
    return split if fits(split) else one


# Long lines black leaves as they are, so a file with only these needs no black: an alias in
# a parenthesised import, a `"name": "module",` entry, a registry entry's `): "module:Class",`.
_UNSPLITTABLE = re.compile(r'^\s+(\w+ as \w+,|"[^"]*": "[^"]*",|\): "[^"]*",)$')


def fits(code: str) -> bool:
    """Whether every line of `code` is as black would leave it: no longer than LINE_LENGTH,
    or a long line black does not split (a docstring's or comment's text, an atom as above).
    Rendered code that fits is laid out as black would already; other code is left to black."""
    in_string = False
    for line in code.split("\n"):
        quotes = line.count('"""') % 2 == 1
        long = len(line) > LINE_LENGTH
        if long and not (
            in_string or line.lstrip().startswith(('"""', "#")) or _UNSPLITTABLE.match(line)
        ):
            return False
        if quotes:
            in_string = not in_string
    return True
