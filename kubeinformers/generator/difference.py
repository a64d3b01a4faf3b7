"""Where two JSON values first differ, in words: for errors that must say what to compare.

Two definitions of one schema or one CRD that do not agree are reported with the first
place they differ (`at properties.spec.type: 'string' in A, 'integer' in B`), so a user can
see at once whether the difference matters without diffing megabytes of YAML.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_SHOWN = 60  # characters of a differing value shown in a message


def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """(path, value in a, value in b) of the first difference in key order; None when equal.

    A key present on one side only is reported with `<absent>` on the other.
    """
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in list(a) + [k for k in b if k not in a]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in a:
                return sub, _ABSENT, b[key]
            if key not in b:
                return sub, a[key], _ABSENT
            found = first_difference(a[key], b[key], sub)
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        if len(a) != len(b):
            return f"{path} (length)", len(a), len(b)
        return None
    if a == b and type(a) is type(b):
        return None
    return path, a, b


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()


def describe(a: Any, b: Any, a_name: str, b_name: str, path: str = "") -> str:
    """`at spec.x: 'string' in A, 'integer' in B` (empty when a == b)."""
    found = first_difference(a, b, path)
    if found is None:
        return ""
    where, x, y = found
    return f"at {where or '(top)'}: {_short(x)} in {a_name}, {_short(y)} in {b_name}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
