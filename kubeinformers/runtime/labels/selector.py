"""Label selectors: parse, match and print them exactly as apimachinery's `labels` package does.

Grammar (apimachinery: pkg/labels/selector.go `Parse`):

    selector    ::= "" | requirement ("," requirement)*
    requirement ::= ["!"] KEY [ ("in" | "notin") "(" VALUES ")" | ("=" | "==" | "!=" | ">" | "<") VALUE ]

A bare `KEY` means "the label exists", `!KEY` "the label does not exist"; `notin` and `!=`
also match objects without the label; `>`/`<` compare integer values. Whitespace between
tokens is ignored. Keys are qualified names (`[prefix/]name`, name ≤ 63 characters, prefix a DNS
subdomain ≤ 253); values are empty or ≤ 63 characters of `[A-Za-z0-9-_.]` starting and ending
alphanumeric. Requirements are kept sorted by key, so `str()` of equal selectors is equal.

Selectors are immutable and parsing is cached: listers may be called with the same selector
string thousands of times a second.

Text becomes a Selector in `kubeinformers.runtime.labels.parser` (`parse`, `to_selector`),
which imports this module; this module never imports the parser.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Operator",
    "Requirement",
    "Selector",
    "everything",
    "nothing",
    "validate_label_key",
    "validate_label_value",
]


class Operator(enum.Enum):
    """A requirement's operator; the value is how it is written (exists has no symbol)."""

    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    GREATER_THAN = ">"
    LESS_THAN = "<"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


_SET_OPERATORS = frozenset({Operator.IN, Operator.NOT_IN})
_EXACT_OPERATORS = frozenset({Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS})
_NUMERIC_OPERATORS = frozenset({Operator.GREATER_THAN, Operator.LESS_THAN})
_UNARY_OPERATORS = frozenset({Operator.EXISTS, Operator.DOES_NOT_EXIST})

# --- validation (apimachinery: pkg/util/validation IsQualifiedName, IsValidLabelValue) --------

_QUALIFIED_NAME_MAX = 63
_DNS_SUBDOMAIN_MAX = 253
_LABEL_VALUE_MAX = 63
_NAME_PART_RE = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_DNS_SUBDOMAIN_RE = re.compile(
    r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\Z"
)
_LABEL_VALUE_RE = re.compile(r"(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_INT64_RE = re.compile(r"[+-]?[0-9]+\Z")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_NAME_CHARS = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')"
)


def validate_label_key(key: str) -> list[str]:
    """Problems with `key` as a label key (a qualified name); empty when it is valid."""
    parts = key.split("/")
    if len(parts) == 1:
        prefix, name = "", parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
    else:
        return [
            "a qualified name must be an optional DNS subdomain prefix and '/' followed by a "
            f"name that {_NAME_CHARS}"
        ]
    errors: list[str] = []
    if prefix:
        if len(prefix) > _DNS_SUBDOMAIN_MAX:
            errors.append(f"prefix part must be no more than {_DNS_SUBDOMAIN_MAX} characters")
        if not _DNS_SUBDOMAIN_RE.match(prefix):
            errors.append(
                "prefix part must be a lowercase RFC 1123 subdomain: lowercase alphanumeric "
                "characters, '-' or '.', starting and ending with an alphanumeric character "
                "(e.g. 'example.com')"
            )
    if not name:
        errors.append("name part must be non-empty")
    else:
        if len(name) > _QUALIFIED_NAME_MAX:
            errors.append(f"name part must be no more than {_QUALIFIED_NAME_MAX} characters")
        if not _NAME_PART_RE.match(name):
            errors.append(f"name part {_NAME_CHARS}")
    return errors


def validate_label_value(value: str) -> list[str]:
    """Problems with `value` as a label value; empty when it is valid (the empty string is)."""
    errors: list[str] = []
    if len(value) > _LABEL_VALUE_MAX:
        errors.append(f"must be no more than {_LABEL_VALUE_MAX} characters")
    if not _LABEL_VALUE_RE.match(value):
        errors.append(
            "a valid label value must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character"
        )
    return errors


def _parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64): optional sign, decimal digits, in int64 range."""
    if not _INT64_RE.match(text):
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


# --- requirements and selectors -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Requirement:
    """One condition on one label key. Build it with `Requirement.new` to have it validated."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()
    _value_set: frozenset[str] = field(default=frozenset(), compare=False, repr=False, hash=False)
    _number: int | None = field(default=None, compare=False, repr=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_value_set", frozenset(self.values))
        if self.operator in _NUMERIC_OPERATORS and len(self.values) == 1:
            object.__setattr__(self, "_number", _parse_int64(self.values[0]))

    @classmethod
    def new(cls, key: str, operator: Operator, values: Iterable[str] = ()) -> Requirement:
        """A validated requirement (apimachinery `NewRequirement`); ValueError says what is wrong.

        Values of `in`/`notin` are de-duplicated and sorted, as the parser stores them.
        """
        vals = list(values)
        problems = _requirement_problems(key, operator, vals)
        if problems:
            raise ValueError(
                f"invalid label requirement {key!r} {operator.value}: " + "; ".join(problems)
            )
        if operator in _SET_OPERATORS:
            vals = sorted(set(vals))
        return cls(key, operator, tuple(vals))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether `labels` satisfy this requirement (apimachinery `Requirement.Matches`)."""
        op = self.operator
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        if op is Operator.IN or op is Operator.EQUALS or op is Operator.DOUBLE_EQUALS:
            return value is not None and value in self._value_set
        if op is Operator.NOT_IN or op is Operator.NOT_EQUALS:
            return value is None or value not in self._value_set
        # > and <: both sides must be integers, else no match.
        if value is None or self._number is None:
            return False
        actual = _parse_int64(value)
        if actual is None:
            return False
        return actual > self._number if op is Operator.GREATER_THAN else actual < self._number

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        values = ",".join(sorted(self.values))
        if op in _SET_OPERATORS:
            return f"{self.key} {op.value} ({values})"
        return f"{self.key}{op.value}{values}"


def _requirement_problems(key: str, operator: Operator, values: list[str]) -> list[str]:
    problems = [f"key {key!r}: {p}" for p in validate_label_key(key)]
    if operator in _SET_OPERATORS and not values:
        problems.append("for 'in', 'notin' operators, values set can't be empty")
    elif operator in _EXACT_OPERATORS and len(values) != 1:
        problems.append("exact-match compatibility requires one single value")
    elif operator in _UNARY_OPERATORS and values:
        problems.append("values set must be empty for exists and does not exist")
    elif operator in _NUMERIC_OPERATORS:
        if len(values) != 1:
            problems.append("for '>', '<' operators, exactly one value is required")
        problems.extend(
            f"value {v!r}: for '>', '<' operators, the value must be an integer"
            for v in values
            if _parse_int64(v) is None
        )
    for v in values:
        problems.extend(f"value {v!r}: {p}" for p in validate_label_value(v))
    return problems


_Matcher = Callable[[Mapping[str, str]], bool]


def _fuse(requirements: tuple[Requirement, ...]) -> _Matcher:
    """One function testing every requirement, for listers that run it on every cached object.

    The expression is built from the operators only; keys and values are bound as the
    function's globals (`k0`, `v0`, ...), never written into the source.
    """
    names: dict[str, Any] = {}
    tests: list[str] = []
    for i, requirement in enumerate(requirements):
        key, op, values = requirement.key, requirement.operator, requirement.values
        k, v = f"k{i}", f"v{i}"
        names[k] = key
        if op is Operator.EXISTS:
            tests.append(f"{k} in labels")
        elif op is Operator.DOES_NOT_EXIST:
            tests.append(f"{k} not in labels")
        elif op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            names[v] = values[0] if len(values) == 1 else frozenset(values)
            tests.append(f"labels.get({k}) {'==' if len(values) == 1 else 'in'} {v}")
        elif op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            names[v] = values[0] if len(values) == 1 else frozenset(values)
            tests.append(f"labels.get({k}) {'!=' if len(values) == 1 else 'not in'} {v}")
        else:  # > and <: integer parsing, as Requirement.matches does it
            names[v] = requirement.matches
            tests.append(f"{v}(labels)")
    source = "lambda labels: " + (" and ".join(tests) if tests else "True")
    fused: _Matcher = eval(source, names)
    return fused


class Selector:
    """An AND of requirements, sorted by key. Immutable, hashable, comparable.

    `Selector()` (or `everything()`, or `parse("")`) matches every label set; `nothing()`
    matches none.
    """

    __slots__ = ("_match", "_requirements")

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        self._requirements: tuple[Requirement, ...] = tuple(
            sorted(requirements, key=lambda r: r.key)
        )
        # One function for all requirements: listers run it for every cached object.
        self._match: _Matcher = _fuse(self._requirements)

    @classmethod
    def from_set(cls, labels: Mapping[str, str], *, validate: bool = False) -> Selector:
        """A selector requiring exactly these key=value pairs (`labels.SelectorFromSet`).

        Like apimachinery it does not validate unless asked to (`validate=True` raises ValueError
        for a bad key or value); an empty mapping selects everything.
        """
        if validate:
            return cls(Requirement.new(k, Operator.EQUALS, (v,)) for k, v in labels.items())
        return cls(Requirement(k, Operator.EQUALS, (v,)) for k, v in labels.items())

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        return self._requirements

    @property
    def matches_nothing(self) -> bool:
        """True only for `nothing()` (apimachinery `MatchesNothing`)."""
        return False

    def empty(self) -> bool:
        """True when the selector does not restrict anything (it matches every label set)."""
        return not self._requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether every requirement holds for `labels` (None is an empty label set)."""
        return self._match({} if labels is None else labels)

    @property
    def matcher(self) -> Callable[[Mapping[str, str]], bool]:
        """`matches` for a label mapping that is never None, without the call in between
        (what listers run over every cached object)."""
        return self._match

    def add(self, *requirements: Requirement) -> Selector:
        """A new selector with `requirements` added (this one is unchanged)."""
        return Selector((*self._requirements, *requirements))

    def requires_exact_match(self, key: str) -> str | None:
        """The single value this selector requires for `key` (via =, == or in), else None."""
        for requirement in self._requirements:
            if requirement.key == key:
                if (
                    requirement.operator
                    in (
                        Operator.EQUALS,
                        Operator.DOUBLE_EQUALS,
                        Operator.IN,
                    )
                    and len(requirement.values) == 1
                ):
                    return requirement.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self._requirements)

    def __repr__(self) -> str:
        return f"labels.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Selector):
            return NotImplemented
        return (
            self.matches_nothing == other.matches_nothing
            and self._requirements == other._requirements
        )

    def __hash__(self) -> int:
        return hash((self.matches_nothing, self._requirements))

    def __reduce__(self) -> tuple[Any, ...]:
        # The fused matcher is built from the requirements; it is never pickled itself.
        return (Selector, (self._requirements,))


class _NothingSelector(Selector):
    """Matches no label set at all (apimachinery `labels.Nothing()`); prints as ""."""

    __slots__ = ()

    @property
    def matches_nothing(self) -> bool:
        return True

    def empty(self) -> bool:
        return False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        return False

    @property
    def matcher(self) -> Callable[[Mapping[str, str]], bool]:
        return _match_nothing

    def add(self, *requirements: Requirement) -> Selector:
        return self

    def __repr__(self) -> str:
        return "labels.nothing()"

    def __reduce__(self) -> tuple[Any, ...]:
        return (nothing, ())


def _match_nothing(labels: Mapping[str, str]) -> bool:
    return False


_EVERYTHING = Selector()
_NOTHING = _NothingSelector()


def everything() -> Selector:
    """The selector that matches every label set (shared, immutable)."""
    return _EVERYTHING


def nothing() -> Selector:
    """The selector that matches no label set (shared, immutable)."""
    return _NOTHING
