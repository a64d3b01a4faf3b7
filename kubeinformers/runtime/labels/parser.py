"""The label-selector lexer and parser (apimachinery: pkg/labels/selector.go Lexer/Parser).

It turns a selector string into validated `Requirement`s; `parse` caches the `Selector` built
from them and `to_selector` accepts what users pass as a selector. This module imports
`selector`, never the other way round.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

from kubeinformers.runtime.labels.selector import (
    _EVERYTHING,
    _NUMERIC_OPERATORS,
    _SET_OPERATORS,
    Operator,
    Requirement,
    Selector,
    _parse_int64,
    validate_label_key,
    validate_label_value,
)

__all__ = ["parse", "to_selector"]


class _Tok(enum.Enum):
    END = "end of string"
    CLOSE_PAREN = "')'"
    COMMA = "','"
    NOT = "'!'"
    DOUBLE_EQUALS = "'=='"
    EQUALS = "'='"
    GREATER_THAN = "'>'"
    IDENTIFIER = "identifier"
    IN = "'in'"
    LESS_THAN = "'<'"
    NOT_EQUALS = "'!='"
    NOT_IN = "'notin'"
    OPEN_PAREN = "'('"


_SYMBOLS: dict[str, _Tok] = {
    ")": _Tok.CLOSE_PAREN,
    ",": _Tok.COMMA,
    "!": _Tok.NOT,
    "==": _Tok.DOUBLE_EQUALS,
    "=": _Tok.EQUALS,
    ">": _Tok.GREATER_THAN,
    "<": _Tok.LESS_THAN,
    "!=": _Tok.NOT_EQUALS,
    "(": _Tok.OPEN_PAREN,
}
_KEYWORDS = {"in": _Tok.IN, "notin": _Tok.NOT_IN}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_BINARY_OPERATORS: dict[_Tok, Operator] = {
    _Tok.IN: Operator.IN,
    _Tok.NOT_IN: Operator.NOT_IN,
    _Tok.EQUALS: Operator.EQUALS,
    _Tok.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS,
    _Tok.NOT_EQUALS: Operator.NOT_EQUALS,
    _Tok.GREATER_THAN: Operator.GREATER_THAN,
    _Tok.LESS_THAN: Operator.LESS_THAN,
}
_BINARY_LIST = "in, notin, =, ==, !=, >, <"


@dataclass(frozen=True, slots=True)
class _Item:
    tok: _Tok
    text: str
    pos: int


def _lex(s: str) -> list[_Item]:
    """Tokens with their start offsets. Any run of non-special, non-blank characters is one
    identifier (or the keyword `in`/`notin`); symbols take the longest match (`!=` over `!`)."""
    items: list[_Item] = []
    i, n = 0, len(s)
    while True:
        while i < n and s[i] in _WHITESPACE:
            i += 1
        if i >= n:
            items.append(_Item(_Tok.END, "", n))
            return items
        start = i
        if s[i] in _SPECIAL:
            two = s[i : i + 2]
            if two in _SYMBOLS:
                i += 2
                items.append(_Item(_SYMBOLS[two], two, start))
            else:
                i += 1
                items.append(_Item(_SYMBOLS[s[start]], s[start], start))
            continue
        while i < n and s[i] not in _SPECIAL and s[i] not in _WHITESPACE:
            i += 1
        word = s[start:i]
        items.append(_Item(_KEYWORDS.get(word, _Tok.IDENTIFIER), word, start))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items = _lex(text)
        self.i = 0

    def error(self, item: _Item, message: str) -> ValueError:
        found = "end of string" if item.tok is _Tok.END else f"'{item.text}'"
        return ValueError(
            f"invalid label selector {self.text!r}: at position {item.pos}: "
            f"found {found}, {message}"
        )

    def peek(self, values: bool = True) -> _Item:
        """The next token; in a value position `in`/`notin` are plain identifiers."""
        item = self.items[self.i]
        if values and item.tok in (_Tok.IN, _Tok.NOT_IN):
            return _Item(_Tok.IDENTIFIER, item.text, item.pos)
        return item

    def take(self, values: bool = True) -> _Item:
        item = self.peek(values)
        self.i += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            item = self.peek()
            if item.tok is _Tok.END:
                return requirements
            if item.tok not in (_Tok.IDENTIFIER, _Tok.NOT):
                raise self.error(item, "expected: '!', a label key, or end of string")
            requirements.append(self.requirement())
            after = self.take()
            if after.tok is _Tok.END:
                return requirements
            if after.tok is not _Tok.COMMA:
                raise self.error(after, "expected: ',' or end of string")
            nxt = self.peek()
            if nxt.tok not in (_Tok.IDENTIFIER, _Tok.NOT):
                raise self.error(nxt, "expected: '!' or a label key after ','")

    def requirement(self) -> Requirement:
        negated = False
        key_item = self.take()
        if key_item.tok is _Tok.NOT:
            negated = True
            key_item = self.take()
        if key_item.tok is not _Tok.IDENTIFIER:
            raise self.error(key_item, "expected: a label key")
        key = key_item.text
        problems = validate_label_key(key)
        if problems:
            raise self.error(key_item, "expected: a valid label key: " + "; ".join(problems))
        if negated or self.peek().tok in (_Tok.END, _Tok.COMMA):
            # `!key` never takes an operator: `!x=a` fails at the '=' (apimachinery does too).
            return Requirement(key, Operator.DOES_NOT_EXIST if negated else Operator.EXISTS)
        op_item = self.take(values=False)
        operator = _BINARY_OPERATORS.get(op_item.tok)
        if operator is None:
            raise self.error(op_item, f"expected one of: {_BINARY_LIST}")
        value_items = self.set_values() if operator in _SET_OPERATORS else self.exact_value()
        values: list[str] = []
        for value_item in value_items:
            value = value_item.text if value_item.tok is _Tok.IDENTIFIER else ""
            problems = validate_label_value(value)
            if problems:
                raise self.error(
                    value_item, "expected: a valid label value: " + "; ".join(problems)
                )
            values.append(value)
        if operator in _NUMERIC_OPERATORS and _parse_int64(values[0]) is None:
            raise self.error(value_items[0], f"expected: an integer after '{operator.value}'")
        if operator in _SET_OPERATORS:
            values = sorted(set(values))
        return Requirement(key, operator, tuple(values))

    def exact_value(self) -> list[_Item]:
        item = self.peek()
        if item.tok in (_Tok.END, _Tok.COMMA):
            # `x=` (nothing before the next ',' or the end) means the empty value.
            return [_Item(_Tok.END, "", item.pos)]
        item = self.take()
        if item.tok is not _Tok.IDENTIFIER:
            raise self.error(item, "expected: a label value")
        return [item]

    def set_values(self) -> list[_Item]:
        """`( v1, v2 )`; empty slots (`()`, `(a,)`, `(,a)`, `(a,,b)`) stand for the empty value."""
        open_item = self.take()
        if open_item.tok is not _Tok.OPEN_PAREN:
            raise self.error(open_item, "expected: '('")
        values: list[_Item] = []
        expect_value = True
        while True:
            item = self.take()
            if item.tok is _Tok.IDENTIFIER and expect_value:
                values.append(item)
                expect_value = False
            elif item.tok is _Tok.COMMA:
                if expect_value:
                    values.append(_Item(_Tok.END, "", item.pos))
                expect_value = True
            elif item.tok is _Tok.CLOSE_PAREN:
                if expect_value:
                    values.append(_Item(_Tok.END, "", item.pos))
                return values
            elif expect_value:
                raise self.error(item, "expected: a label value, ',' or ')'")
            else:
                raise self.error(item, "expected: ',' or ')'")


def to_selector(selector: str | Selector | None) -> Selector:
    """Accept what users pass to `list(selector=...)`: a string, a Selector, or None (everything)."""
    if selector is None:
        return _EVERYTHING
    if isinstance(selector, Selector):
        return selector
    if isinstance(selector, str):
        return parse(selector)
    raise TypeError(
        f"a label selector must be a string, a labels.Selector or None, not {type(selector).__name__}"
    )


@functools.lru_cache(maxsize=512)
def _parse_cached(text: str) -> Selector:
    return Selector(_Parser(text).parse())


def parse(selector: str) -> Selector:
    """Parse a label selector string; ValueError names the position and what was expected.

    >>> parse("app=web,tier in (fe,be),!canary").matches({"app": "web", "tier": "fe"})
    True
    """
    if not selector:
        return _EVERYTHING
    return _parse_cached(selector)
