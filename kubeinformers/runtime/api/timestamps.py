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

import functools
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, TypeAlias

from pydantic import PlainSerializer, ValidatorFunctionWrapHandler, WrapValidator
from pydantic_core import SchemaValidator, core_schema

__all__ = ["MicroTime", "Time", "format_micro_time", "format_time", "time_of_text"]


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


_NO_OFFSET = timedelta(0)
_INSTANTS = 16_384
_instants: dict[datetime, datetime] = {}  # every UTC instant kept: itself
_by_text: dict[str, datetime] = {}  # a time's text: the datetime it gave


def _one_per_instant(value: Any, parse: ValidatorFunctionWrapHandler) -> datetime:
    """One `datetime` object for every equal time the server wrote (K24): an object's times
    repeat (its conditions', its creation, a container's start), and objects created in the
    same second share theirs; 48 bytes each. A text seen before is not parsed again (the same
    text always gives the same datetime). Equal instants written differently share one
    object only in UTC ("Z", as the server writes them), where nothing tells them apart; a
    `datetime` given is kept as it is. Bounded: the tables start again when full (what is
    already shared stays shared)."""
    if type(value) is not str:
        return parse(value)  # type: ignore[no-any-return]
    one = _by_text.get(value)
    if one is not None:
        return one
    parsed: datetime = parse(value)
    if len(_by_text) >= _INSTANTS:
        _by_text.clear()
        _instants.clear()
    if parsed.fold or parsed.utcoffset() != _NO_OFFSET:
        one = parsed  # another offset, or none: this text's own object
    else:
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


@functools.cache
def _text_validator() -> SchemaValidator:
    """What a `Time` or `MicroTime` field validates with, built by pydantic-core directly:
    a pydantic TypeAdapter would load pydantic's plugins first (importlib.metadata: ~20 ms
    on the first read of a process that has validated nothing yet)."""
    return SchemaValidator(
        core_schema.no_info_wrap_validator_function(_one_per_instant, core_schema.datetime_schema())
    )


def time_of_text(text: str) -> datetime:
    """The datetime a `Time` (or `MicroTime`) field validates the server's `text` into: the
    one object for that text and instant (K24). Raises pydantic's ValidationError when
    `text` is no time."""
    parsed: datetime = _text_validator().validate_python(text)  # _one_per_instant's tables
    return parsed
