"""metav1.Time and metav1.MicroTime fields write back what the API server's Go code reads.

Go: `metav1.Time.MarshalJSON` is `t.UTC().Format(time.RFC3339)` (seconds), and
`metav1.MicroTime.UnmarshalJSON` parses only `2006-01-02T15:04:05.000000Z07:00` — exactly six
fraction digits. A plain datetime dumps `...19Z` when the microseconds are zero, which the
server refuses for a MicroTime (a Lease's renewTime, an Event's eventTime).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from kubeinformers.generated.coordination.v1 import Lease, LeaseSpec
from kubeinformers.generated.core.v1 import Pod
from kubeinformers.generated.events.v1 import Event
from kubeinformers.generated.meta.v1 import MicroTime, Time
from kubeinformers.runtime.api.timestamps import format_micro_time, format_time


def _lease_json(renew_time: str) -> dict[str, object]:
    lease = Lease.model_validate({"spec": {"renewTime": renew_time}})
    return lease.model_dump(mode="json", by_alias=True, exclude_none=True)


def test_micro_time_with_zero_microseconds_keeps_six_fraction_digits() -> None:
    got = _lease_json("2026-11-22T04:50:19.000000Z")
    assert got == {"spec": {"renewTime": "2026-11-22T04:50:19.000000Z"}}


def test_micro_time_round_trips_a_fraction_and_pads_a_missing_one() -> None:
    assert _lease_json("2026-11-22T04:50:19.123456Z")["spec"] == {
        "renewTime": "2026-11-22T04:50:19.123456Z"
    }
    assert _lease_json("2026-11-22T04:50:19.5Z")["spec"] == {
        "renewTime": "2026-11-22T04:50:19.500000Z"
    }
    assert _lease_json("2026-11-22T04:50:19Z")["spec"] == {
        "renewTime": "2026-11-22T04:50:19.000000Z"
    }


def test_micro_time_is_written_in_utc_also_from_an_offset_or_a_naive_datetime() -> None:
    plus_two = datetime(2026, 11, 22, 6, 50, 19, tzinfo=timezone(timedelta(hours=2)))
    naive = datetime(2026, 11, 22, 4, 50, 19)
    for value in (plus_two, naive):
        spec = LeaseSpec(renew_time=value, acquire_time=value)
        assert spec.model_dump(mode="json", by_alias=True, exclude_none=True) == {
            "renewTime": "2026-11-22T04:50:19.000000Z",
            "acquireTime": "2026-11-22T04:50:19.000000Z",
        }
        assert '"renewTime":"2026-11-22T04:50:19.000000Z"' in spec.model_dump_json(by_alias=True)


def test_micro_time_of_an_event_and_python_mode_keeps_the_datetime() -> None:
    event = Event.model_validate(
        {"eventTime": "2026-11-22T04:50:19.000000Z", "reportingController": "x"}
    )
    assert event.model_dump(mode="json", by_alias=True)["eventTime"] == (
        "2026-11-22T04:50:19.000000Z"
    )
    assert event.event_time == datetime(2026, 11, 22, 4, 50, 19, tzinfo=UTC)
    assert event.model_dump()["eventTime"] == datetime(2026, 11, 22, 4, 50, 19, tzinfo=UTC)


def test_time_round_trips_as_rfc3339_seconds() -> None:
    pod = Pod.model_validate(
        {"metadata": {"name": "p", "creationTimestamp": "2026-11-22T04:50:19Z"}}
    )
    assert pod.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "metadata": {"name": "p", "creationTimestamp": "2026-11-22T04:50:19Z"}
    }


def test_time_is_written_in_utc_to_the_second_as_go_marshals_it() -> None:
    pod = Pod.model_validate(
        {"metadata": {"creationTimestamp": "2026-11-22T06:50:19.987654+02:00"}}
    )
    assert pod.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "metadata": {"creationTimestamp": "2026-11-22T04:50:19Z"}
    }


def test_formatters_and_the_reexported_aliases() -> None:
    early = datetime(33, 1, 2, 3, 4, 5, 6, tzinfo=UTC)  # years pad to four digits, as Go's
    assert format_time(early) == "0033-01-02T03:04:05Z"
    assert format_micro_time(early) == "0033-01-02T03:04:05.000006Z"
    from kubeinformers.runtime.api import timestamps

    assert Time is timestamps.Time and MicroTime is timestamps.MicroTime


def _conditions(*times: str) -> list[datetime | None]:
    pod = Pod.model_validate(
        {
            "status": {
                "conditions": [
                    {"type": f"T{i}", "status": "True", "lastTransitionTime": t}
                    for i, t in enumerate(times)
                ]
            }
        }
    )
    assert pod.status is not None and pod.status.conditions is not None
    return [c.last_transition_time for c in pod.status.conditions]


def test_k24_equal_server_times_are_one_datetime_object() -> None:
    a, b, c = _conditions("2026-11-27T10:00:00Z", "2026-11-27T10:00:00Z", "2026-11-27T10:00:01Z")
    assert a is b and a is not c
    (again,) = _conditions("2026-11-27T10:00:00Z")  # another object, another time: shared too
    assert again is a
    protobuf_like = Lease.model_validate({"spec": {"renewTime": "2026-11-27T10:00:00.000000Z"}})
    assert protobuf_like.spec is not None and protobuf_like.spec.renew_time is a  # MicroTime too


def test_k24_a_time_not_as_the_server_writes_it_is_kept_as_given() -> None:
    given = [
        datetime(2026, 11, 27, 10, tzinfo=UTC),  # Python's own UTC, not pydantic's "Z"
        datetime(2026, 11, 27, 11, tzinfo=timezone(timedelta(hours=1))),
    ]
    for value in given:
        lease = Lease(spec=LeaseSpec(renew_time=value))
        assert lease.spec is not None and lease.spec.renew_time is value
    (shared,) = _conditions("2026-11-27T10:00:00Z")
    assert shared == given[0] == given[1] and shared is not given[0]
    assert shared.tzinfo is not None and shared.utcoffset() == timedelta(0)
