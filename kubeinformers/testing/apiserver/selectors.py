"""Label and field selectors as the API server parses them (for LocalApiServer).

The label-selector parser follows apimachinery's `labels.Parser` token by token so that a bad
selector gets the same 400 message a real kube-apiserver sends ("found '==', expected: !,
identifier, or 'end of string'"). Field selectors support what the real server supports for
every resource (`metadata.name`, `metadata.namespace`) plus the few per-kind fields the
built-in registries add (pods' `status.phase`, `spec.nodeName`, ...) and a CRD's
`selectableFields`; any other field is refused (400) in the real server's words for that resource.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

_SPECIAL = frozenset("=!(),<>")
_TOKENS = {
    "=": "eq",
    "==": "eq",
    "!=": "ne",
    "!": "not",
    "(": "open",
    ")": "close",
    ",": "comma",
    ">": "gt",
    "<": "lt",
}
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"
_QUALIFIED = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

LabelMatcher = Callable[[Mapping[str, str]], bool]


class SelectorError(ValueError):
    """A selector the API server would reject with 400 BadRequest (message as it words it)."""


def _lex(text: str) -> list[tuple[str, str]]:
    """Tokens as (kind, literal); kinds: id, in, notin, eq, ne, not, open, close, comma, gt, lt, end."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in _SPECIAL:
            buf, last = "", ""
            while i < n and text[i] in _SPECIAL:
                if buf + text[i] in _TOKENS:
                    buf += text[i]
                    last = buf
                    i += 1
                elif last:
                    break
                else:
                    raise SelectorError(f"error expected: keyword found '{buf + text[i]}'")
            out.append((_TOKENS[last], last))
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in _SPECIAL:
                j += 1
            word = text[i:j]
            out.append((word if word in ("in", "notin") else "id", word))
            i = j
    out.append(("end", ""))
    return out


def parse_label_selector(text: str) -> LabelMatcher:
    """Parse a label selector (=, ==, !=, in, notin, exists, !key, gt, lt) into a predicate."""
    toks = _lex(text)
    pos = 0
    reqs: list[LabelMatcher] = []

    def look() -> tuple[str, str]:
        return toks[pos]

    def take() -> tuple[str, str]:
        nonlocal pos
        tok = toks[pos]
        pos = min(pos + 1, len(toks) - 1)
        return tok

    def requirement() -> LabelMatcher:
        kind, lit = take()
        negate = kind == "not"
        if negate:
            kind, lit = take()
        if kind != "id":
            raise SelectorError(f"found '{lit}', expected: identifier")
        if not _QUALIFIED.match(lit):
            raise SelectorError(
                f"key: Invalid value: {lit!r}: name part must consist of "
                "alphanumeric characters, '-', '_' or '.'"
            )
        key = lit
        if look()[0] in ("end", "comma"):
            return (lambda lb: key not in lb) if negate else (lambda lb: key in lb)
        if negate:
            raise SelectorError(f"found '{look()[1]}', expected: ',' or 'end of string'")
        op, oplit = take()
        if op in ("in", "notin"):
            kind, lit = take()
            if kind != "open":
                raise SelectorError(f"found '{lit}' expected: '('")
            values: set[str] = set()
            if look()[0] == "close":
                take()
                values.add("")
            else:
                while True:
                    kind, lit = take()
                    if kind == "id":
                        values.add(lit)
                        kind, lit = take()
                    elif kind in ("comma", "close"):
                        values.add("")
                    if kind == "close":
                        break
                    if kind != "comma":
                        raise SelectorError(f"found '{lit}', expected: ',', or ')'")
            _check_values(values)
            if op == "in":
                return lambda lb: lb.get(key) in values
            return lambda lb: lb.get(key) not in values
        if op in ("eq", "ne", "gt", "lt"):
            if look()[0] in ("end", "comma"):
                value = ""
            else:
                kind, value = take()
                if kind != "id":
                    raise SelectorError(f"found '{value}', expected: identifier")
            if op in ("gt", "lt"):
                try:
                    bound = int(value)
                except ValueError:
                    raise SelectorError(
                        f"for 'gt', 'lt' operators, exactly one value is "
                        f"required and it must be an integer: {value}"
                    ) from None
                return _numeric(key, bound, op == "gt")
            _check_values({value})
            if op == "eq":
                return lambda lb: key in lb and lb[key] == value
            return lambda lb: lb.get(key) != value
        raise SelectorError(f"found '{oplit}', expected: {_BINARY_OPERATORS}")

    while True:
        kind, lit = look()
        if kind == "end":
            break
        if kind not in ("id", "not"):
            raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
        try:
            reqs.append(requirement())
        except SelectorError as err:
            raise SelectorError(f"unable to parse requirement: {err}") from None
        kind, lit = take()
        if kind == "end":
            break
        if kind != "comma":
            raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
        if look()[0] not in ("id", "not"):
            raise SelectorError(f"found '{look()[1]}', expected: identifier after ','")
    if not reqs:
        return lambda lb: True
    return lambda lb: all(r(lb) for r in reqs)


def _check_values(values: set[str]) -> None:
    for v in values:
        if len(v) > 63 or not _VALUE.match(v):
            raise SelectorError(
                f"values[0]: Invalid value: {v!r}: a valid label must be an empty "
                "string or consist of alphanumeric characters, '-', '_' or '.'"
            )


def _numeric(key: str, bound: int, greater: bool) -> LabelMatcher:
    def match(lb: Mapping[str, str]) -> bool:
        try:
            have = int(lb[key])
        except (KeyError, ValueError):
            return False
        return have > bound if greater else have < bound

    return match


# Field labels the built-in registries add beyond metadata.name / metadata.namespace.
EXTRA_FIELD_LABELS: dict[tuple[str, str], frozenset[str]] = {
    ("", "pods"): frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        }
    ),
    ("", "events"): frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    ),
    ("", "secrets"): frozenset({"type"}),
    ("", "namespaces"): frozenset({"status.phase"}),
    ("", "nodes"): frozenset({"spec.unschedulable"}),
    ("", "replicationcontrollers"): frozenset({"status.replicas"}),
    ("", "services"): frozenset({"spec.clusterIP", "spec.type"}),
    ("batch", "jobs"): frozenset({"status.successful"}),
    ("certificates.k8s.io", "certificatesigningrequests"): frozenset({"spec.signerName"}),
}

FieldMatcher = Callable[[Mapping[str, Any]], bool]


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, Mapping) else None
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def unsupported_field(skey: tuple[str, str], field: str) -> str:
    """kube-apiserver's words for a field selector the resource does not support: each
    resource with field labels of its own has a conversion function with its own wording; the
    others get the default metadata-only conversion's."""
    if skey == ("batch", "jobs"):
        return f'field label "{field}" not supported for Job'
    if skey in EXTRA_FIELD_LABELS or skey == ("events.k8s.io", "events"):
        return f"field label not supported: {field}"
    return f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"'


def parse_field_selector(text: str, allowed: frozenset[str], skey: tuple[str, str]) -> FieldMatcher:
    """Parse `a=b,c!=d` (fields.ParseSelector) and check each field is one the resource
    (`skey`: group, resource) serves."""
    terms: list[tuple[str, bool, str]] = []
    for raw in _split_unescaped(text):
        if not raw:
            continue
        op = "!=" if "!=" in raw else "==" if "==" in raw else "=" if "=" in raw else ""
        if not op:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{raw}'")
        field, value = raw.split(op, 1)
        equal = op != "!="
        field = field.strip()
        if field not in allowed and field not in ("metadata.name", "metadata.namespace"):
            raise SelectorError(unsupported_field(skey, field))
        terms.append((field, equal, value.replace("\\,", ",").replace("\\=", "=")))
    if not terms:
        return lambda obj: True

    def match(obj: Mapping[str, Any]) -> bool:
        return all((_field_value(obj, f) == v) == eq for f, eq, v in terms)

    return match


def _split_unescaped(text: str) -> list[str]:
    parts, buf, esc = [], "", False
    for ch in text:
        if esc:
            buf += "\\" + ch
            esc = False
        elif ch == "\\":
            esc = True
        elif ch == ",":
            parts.append(buf)
            buf = ""
        else:
            buf += ch
    parts.append(buf)
    return parts
