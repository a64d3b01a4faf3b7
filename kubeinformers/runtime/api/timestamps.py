"""`metav1.Time` and `metav1.MicroTime`: datetimes that serialise the way the API server reads.

Both parse like any pydantic `datetime`. They differ in what they write back (JSON mode only;
`model_dump()` in Python mode still gives `datetime` objects):

- `Time` as Go's `metav1.Time.MarshalJSON`: UTC, RFC 3339 to the second,
  `2026-11-22T04:50:19Z` (a fraction is dropped, as the server would drop it);
- `MicroTime` as `metav1.MicroTime.MarshalJSON`: UTC, always exactly six fraction digits,
  `2026-11-22T04:50:19.000000Z`. `MicroTime.UnmarshalJSON` on the server accepts only that
  layout, so a Lease renewTime written back as `...19Z` (what a plain datetime gives when the
  microseconds are zero) would be refused.

A naive datetime is taken to be UTC (Go has no naive times; the server always sends `Z`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, TypeAlias

from pydantic import PlainSerializer, TypeAdapter, ValidatorFunctionWrapHandler, WrapValidator

__all__ = ["MicroTime", "Time", "format_micro_time", "format_time"]


def _utc_naive(value: datetime) -> datetime:
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.replace(tzinfo=None)


def format_time(value: datetime) -> str:
    """`2026-11-22T04:50:19Z` (Go: `t.UTC().Format(time.RFC3339)`)."""
    return _utc_naive(value).isoformat(timespec="seconds") + "Z"


def format_micro_time(value: datetime) -> str:
    """`2026-11-22T04:50:19.000000Z` (Go: `t.UTC().Format("2006-01-02T15:04:05.000000Z07:00")`)."""
    return _utc_naive(value).isoformat(timespec="microseconds") + "Z"


# The tzinfo pydantic gives a time written with "Z" (one object for all of them).
_SERVER_UTC = TypeAdapter(datetime).validate_python("2000-01-01T00:00:00Z").tzinfo
_INSTANTS = 16_384
_instants: dict[datetime, datetime] = {}  # every instant kept: itself
_by_text: dict[str, datetime] = {}  # a time as the server wrote it: its instant's datetime


def _one_per_instant(value: Any, parse: ValidatorFunctionWrapHandler) -> datetime:
    """One `datetime` object for every equal time the server wrote (K24): an object's times
    repeat (its conditions', its creation, a container's start), and objects created in the
    same second share theirs; 48 bytes each. A text seen before is not parsed again. Only
    for text in UTC, as the server writes it ("Z"); a datetime given or another offset is kept
    as parsed. Bounded: the tables start again when full (what is shared stays shared)."""
    if type(value) is not str:
        return parse(value)  # type: ignore[no-any-return]
    one = _by_text.get(value)
    if one is not None:
        return one
    parsed: datetime = parse(value)
    if parsed.tzinfo is not _SERVER_UTC or parsed.fold:
        return parsed
    if len(_by_text) >= _INSTANTS:
        _by_text.clear()
        _instants.clear()
    one = _instants.setdefault(parsed, parsed)
    _by_text[value] = one
    return one


Time: TypeAlias = Annotated[
    datetime,
    WrapValidator(_one_per_instant),
    PlainSerializer(format_time, return_type=str, when_used="json"),
]
MicroTime: TypeAlias = Annotated[
    datetime,
    WrapValidator(_one_per_instant),
    PlainSerializer(format_micro_time, return_type=str, when_used="json"),
]
