"""The protobuf codec: Kubernetes' wire format read in pure Python, each object reading as the
JSON Go's encoding/json writes for it (K3), lazily (K5), errors as Status (K4), watch frames
(K2). Messages are built with the test-side encoder in tests/support/protobuf.py and described
by its hand-written table, whose `Widget` covers every kind and flag of the schema contract."""

from __future__ import annotations

import base64
import json
import logging
import re
from typing import Any

import pytest
from pydantic import Field

from kubeinformers.runtime.api.model import KubeModel, Status
from kubeinformers.runtime.codec.drift import (
    InvalidFieldError,
    InvalidObjectError,
    PartlyInvalidObjectError,
)
from kubeinformers.runtime.codec.lazy import (
    LazyModelBuilder,
    _state_of,
    is_lazy,
    lazy_twin,
    materialize,
)
from kubeinformers.runtime.codec.protobuf.decoder import ProtobufLazyDecoder
from kubeinformers.runtime.codec.protobuf.envelope import (
    split_list,
    split_watch_event,
    unwrap,
    watch_event_bounds,
    watch_event_object,
)
from kubeinformers.runtime.codec.protobuf.identity import read_identity
from kubeinformers.runtime.codec.protobuf.reader import (
    ProtobufDecodeError,
    read_length,
    read_varint,
    signed,
    skip_field,
)
from kubeinformers.runtime.codec.protobuf.schema import INLINE, MESSAGE, STRING
from kubeinformers.runtime.codec.protobuf.transcode import go_duration, to_json_object
from tests.support.protobuf import (
    CORE,
    MESSAGES,
    TEST,
    entry,
    fixed32,
    fixed64,
    ld,
    list_body,
    object_meta,
    packed,
    tag,
    timestamp,
    unknown,
    varint,
    vint,
    watch_frame,
)
from tests.support.threads import read_concurrently

WIDGET = TEST + "Widget"
SPEC = TEST + "WidgetSpec"


# --- models the lazy objects are built into --------------------------------------------------


class ObjectMeta(KubeModel):
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    creation_timestamp: str | None = Field(default=None, alias="creationTimestamp")


class WidgetSpec(KubeModel):
    title: str
    count: int
    tags: list[str] | None = None


class Widget(KubeModel):
    api_version: str | None = Field(default=None, alias="apiVersion")
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: WidgetSpec | None = None


# --- the wire format ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31 - 1, 2**63 - 1])
def test_varints_round_trip(value: int) -> None:
    data = varint(value)
    assert read_varint(data, 0, len(data)) == (value, len(data))


@pytest.mark.parametrize("value", [-1, -2, -(2**31), -(2**63)])
def test_negative_ints_are_ten_byte_twos_complement(value: int) -> None:
    data = varint(value)
    assert len(data) == 10
    raw, pos = read_varint(data, 0, len(data))
    assert (signed(raw), pos) == (value, 10)


def test_a_truncated_varint_raises_naming_where() -> None:
    with pytest.raises(ProtobufDecodeError, match="truncated varint"):
        read_varint(b"\x80\x80", 0, 2)


def test_a_varint_longer_than_ten_bytes_raises() -> None:
    with pytest.raises(ProtobufDecodeError, match="longer than 10 bytes"):
        read_varint(b"\xff" * 11 + b"\x01", 0, 12)


def test_a_length_past_the_message_end_raises() -> None:
    data = ld(1, "hello")[1:-1]  # the length says 5, 4 bytes follow
    with pytest.raises(ProtobufDecodeError, match="past its message"):
        read_length(data, 0, len(data))


@pytest.mark.parametrize(
    "field",
    [vint(99, 7), ld(99, "x" * 200), fixed64(99, 1.5), fixed32(99, 2.5), vint(99, -5)],
    ids=["varint", "length", "fixed64", "fixed32", "negative"],
)
def test_unknown_fields_of_every_wire_type_are_skipped(field: bytes) -> None:
    data = field + ld(1, "t")
    key, pos = read_varint(data, 0, len(data))
    assert skip_field(data, pos, key & 7, len(data)) == len(field)
    spec = to_json_object(MESSAGES, TEST + "Part", data + vint(2, 3))
    assert spec == {"name": "t", "weight": 3}


def test_a_group_wire_type_is_refused() -> None:
    with pytest.raises(ProtobufDecodeError, match="wire type 3"):
        to_json_object(MESSAGES, TEST + "Part", tag(9, 3))


# --- K3: protobuf reads as the JSON Go writes ----------------------------------------------------


def _full_spec() -> bytes:
    part = ld(1, "a") + vint(2, 2)
    return b"".join(
        [
            ld(1, "Title"),
            ld(2, "a note"),
            ld(3, b"\x00\x01\xff"),
            ld(4, b""),
            vint(5, -7),
            vint(6, 2**40),
            vint(7, 2**63 + 5),
            vint(8, 1),
            vint(9, 0),  # a non-nil *bool pointing to false
            fixed64(10, 0.25),
            fixed32(11, 1.5),
            ld(12, timestamp(1_700_000_000, 999)),
            ld(13, timestamp(1_700_000_000, 123_456_789)),
            ld(14, vint(1, 5_400_000_000_000)),
            ld(15, ld(1, "250m")),
            ld(16, vint(1, 1) + vint(2, 0) + ld(3, "http")),
            ld(17, vint(1, 0) + vint(2, -1) + ld(3, "")),
            ld(18, ld(1, b'{"a":[1,true,null]}')),
            ld(19, "x"),
            ld(19, ""),
            packed(20, [1, -2, 3]),
            vint(20, 4),  # unpacked occurrences add to a packed run, in order
            ld(21, part),
            ld(21, b""),
            entry(22, "cpu", ld(2, ld(1, "2"))),
            entry(22, "memory", None),  # an absent value: Quantity{} marshals as "0"
            entry(23, "p", ld(2, part)),
            entry(24, "groups", ld(2, ld(1, "a") + ld(1, "b"))),
            entry(24, "none", ld(2, b"")),  # an empty wrapper: ExtraValue(nil) is null
            ld(25, ld(1, "get") + ld(1, "list")),
            ld(26, ld(1, "upstream") + ld(2, "m")),
            ld(27, ld(1, "tpl")),
            ld(28, ld(1, "") + vint(2, 0)),  # a non-nil pointer to a zero struct
            ld(29, ld(1, "") + vint(2, 0)),  # a zero struct under omitzero
            ld(30, b""),  # a zero Time under omitzero
            entry(31, "k", ld(2, "")),
        ]
    )


def test_k3_every_kind_and_flag_reads_as_go_json() -> None:
    spec = to_json_object(MESSAGES, SPEC, _full_spec())
    assert spec == {
        "title": "Title",
        "note": "a note",
        "blob": base64.b64encode(b"\x00\x01\xff").decode(),
        "plainBlob": "",
        "count": -7,
        "offset": 2**40,
        "size": 2**63 + 5,
        "enabled": True,
        "paused": False,
        "ratio": 0.25,
        "weight": 1.5,
        "started": "2023-11-14T22:13:20Z",  # nanos ignored, as metav1.Time does
        "renewed": "2023-11-14T22:13:20.123456Z",  # truncated to microseconds
        "period": "1h30m0s",
        "limit": "250m",
        "port": "http",
        "surge": -1,
        "extension": {"a": [1, True, None]},
        "tags": ["x", ""],
        "ids": [1, -2, 3, 4],
        "parts": [{"name": "a", "weight": 2}, {"name": ""}],
        "limits": {"cpu": "2", "memory": "0"},
        "parts_by_name": {"p": {"name": "a", "weight": 2}},
        "extra": {"groups": ["a", "b"], "none": None},
        "verbs": ["get", "list"],
        "origin": "upstream",  # inlined into the parent object
        "mirror": "m",
        "template": {"name": "tpl"},
        "optional": {"name": ""},
        "names": {"k": ""},
    }


def test_k3_absent_fields_are_go_zero_values() -> None:
    """Nil slices, maps and []byte without omitempty are null; non-pointer structs are written
    with their own zero fields; zero Time is null; Quantity "0", IntOrString 0, Duration "0s"."""
    assert to_json_object(MESSAGES, SPEC, b"") == {
        "title": "",
        "plainBlob": None,
        "count": 0,
        "enabled": False,
        "weight": 0.0,
        "started": None,
        "period": "0s",
        "limit": "0",
        "port": 0,
        "extension": None,
        "tags": None,
        "verbs": None,
        "mirror": "",
        "template": {"name": ""},
        "names": None,
    }


def test_k3_present_zero_values_under_omitempty_are_left_out() -> None:
    data = ld(2, "") + ld(3, b"") + vint(6, 0) + vint(7, 0) + fixed64(10, 0.0) + ld(25, b"")
    spec = to_json_object(MESSAGES, SPEC, data)
    for omitted in ("note", "blob", "offset", "size", "ratio"):
        assert omitted not in spec
    assert spec["verbs"] is None  # an empty named slice without omitempty: null


def test_k3_a_pointer_to_a_zero_time_is_written_as_null() -> None:
    spec = to_json_object(MESSAGES, SPEC, ld(13, b""))
    assert spec["renewed"] is None


def test_k3_an_absent_pointer_struct_is_left_out_and_a_present_one_written() -> None:
    meta = object_meta(name="w")
    assert "status" not in to_json_object(MESSAGES, WIDGET, ld(1, meta))
    assert to_json_object(MESSAGES, WIDGET, ld(1, meta) + ld(3, b""))["status"] == {}


def test_k3_object_meta_as_the_server_writes_it() -> None:
    meta = object_meta(
        name="w",
        namespace="ns",
        uid="u-1",
        resource_version="42",
        labels={"app": "web", "empty": ""},
        creation=1_700_000_000,
    )
    assert to_json_object(MESSAGES, WIDGET, ld(1, meta))["metadata"] == {
        "name": "w",
        "namespace": "ns",
        "uid": "u-1",
        "resourceVersion": "42",
        "labels": {"app": "web", "empty": ""},
        "creationTimestamp": "2023-11-14T22:13:20Z",
    }
    # a zero creationTimestamp (Go writes an empty message) is omitted: omitempty,omitzero
    assert (
        "creationTimestamp"
        not in to_json_object(MESSAGES, WIDGET, ld(1, object_meta()))["metadata"]
    )


@pytest.mark.parametrize(
    ("nanoseconds", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (1_500, "1.5µs"),
        (2_000_000, "2ms"),
        (1_500_000_000, "1.5s"),
        (60_000_000_000, "1m0s"),
        (3_600_000_000_000, "1h0m0s"),
        (-90_000_000_000, "-1m30s"),
        (100 * 3_600_000_000_000 + 1, "100h0m0.000000001s"),
    ],
)
def test_k3_durations_read_as_go_duration_string(nanoseconds: int, text: str) -> None:
    assert go_duration(nanoseconds) == text


def test_k3_the_go_zero_time_and_pre_1000_years_format_as_go_does() -> None:
    spec = to_json_object(MESSAGES, SPEC, ld(12, timestamp(-62135596800)))
    assert spec["started"] is None
    spec = to_json_object(MESSAGES, SPEC, ld(12, timestamp(-60000000000)))
    assert spec["started"] == "0068-09-03T13:20:00Z"


def test_k3_embedded_json_that_does_not_parse_raises_naming_the_message() -> None:
    with pytest.raises(ProtobufDecodeError, match=r"WidgetSpec.*embedded JSON"):
        to_json_object(MESSAGES, SPEC, ld(18, ld(1, b"{nope")))


@pytest.mark.parametrize("cut", [1, 5, 20, 60])
def test_k3_truncated_messages_raise_value_error(cut: int) -> None:
    data = _full_spec()
    with pytest.raises(ValueError, match=r"malformed .*WidgetSpec"):
        to_json_object(MESSAGES, SPEC, data[: len(data) - cut])


def test_k3_a_wire_type_that_contradicts_the_table_raises_naming_the_field() -> None:
    with pytest.raises(ProtobufDecodeError, match=r"field 1 \(title\) is a varint"):
        to_json_object(MESSAGES, SPEC, vint(1, 3))


def test_k3_long_values_and_high_field_numbers_read_like_short_ones() -> None:
    """Tags of fields 16+ and lengths of 128+ bytes take two varint bytes (20,000: three)."""
    long, longer = "x" * 200, "y" * 20_000
    data = ld(19, long) + ld(19, longer) + ld(31, ld(2, longer) + ld(1, "late-key"))
    data += entry(31, long, ld(2, long))
    spec = to_json_object(MESSAGES, SPEC, data)
    assert spec["tags"] == [long, longer]
    assert spec["names"] == {"late-key": longer, long: long}  # any entry layout reads


def test_k3_a_length_of_two_varint_bytes_past_the_message_end_raises() -> None:
    data = tag(19, 2) + varint(200) + b"x" * 10
    with pytest.raises(ProtobufDecodeError, match="past its message"):
        to_json_object(MESSAGES, SPEC, data)


def test_k3_the_last_occurrence_of_a_scalar_wins_even_when_empty() -> None:
    spec = to_json_object(MESSAGES, SPEC, ld(2, "a note") + ld(2, "") + vint(6, 4) + vint(6, 0))
    assert "note" not in spec and "offset" not in spec
    spec = to_json_object(MESSAGES, SPEC, ld(2, "") + ld(2, "b") + vint(9, 1) + vint(9, 0))
    assert (spec["note"], spec["paused"]) == ("b", False)


def test_k3_the_same_timestamp_reads_as_time_and_as_micro_time() -> None:
    """Formatted times are remembered by their bytes, separately for Time and MicroTime."""
    stamp = timestamp(1_700_000_000, 250_000_000)
    for _ in range(2):
        spec = to_json_object(MESSAGES, SPEC, ld(12, stamp) + ld(13, stamp))
        assert spec["started"] == "2023-11-14T22:13:20Z"
        assert spec["renewed"] == "2023-11-14T22:13:20.250000Z"


def test_k3_objects_do_not_share_their_zero_values() -> None:
    first = to_json_object(MESSAGES, SPEC, b"")
    first["template"]["name"] = "changed"
    first["title"] = "changed"
    assert to_json_object(MESSAGES, SPEC, b"")["template"] == {"name": ""}
    assert to_json_object(MESSAGES, SPEC, b"")["title"] == ""


def test_k3_a_table_whose_inlined_struct_repeats_a_field_name_is_refused() -> None:
    """Go's encoding/json would shadow or drop such a field; the table must not have one."""
    table = {
        TEST + "Outer": ((1, "origin", STRING, None, 0), (2, "", MESSAGE, TEST + "Source", INLINE)),
        TEST + "Source": MESSAGES[TEST + "Source"],
    }
    with pytest.raises(ValueError, match=r"Outer inlines .*Source.*'origin'"):
        to_json_object(table, TEST + "Outer", b"")


# --- envelope, lists and watch frames -------------------------------------------------------------


def _widget(name: str, rv: str = "1", **labels: str) -> bytes:
    spec = ld(1, "T") + vint(5, 3) + ld(19, "a")
    return ld(
        1,
        object_meta(
            name=name, namespace="ns", uid=f"uid-{name}", resource_version=rv, labels=labels
        ),
    ) + ld(2, spec)


def test_lists_split_into_list_metadata_and_item_bytes() -> None:
    items = [_widget("a"), _widget("b" * 200)]
    body = list_body("example.test/v1", "WidgetList", items, "77", "next", 5)
    api_version, kind, raw = unwrap(body)
    assert (api_version, kind) == ("example.test/v1", "WidgetList")
    assert split_list(raw) == ("77", "next", 5, items)


def test_a_body_without_the_magic_is_refused_saying_what_it_starts_with() -> None:
    with pytest.raises(ProtobufDecodeError, match=re.escape("""starts with b'{"kind":'""")):
        unwrap(b'{"kind":"Status"}')


def test_a_truncated_list_raises_naming_the_item() -> None:
    _, _, raw = unwrap(list_body("v1", "WidgetList", [_widget("a"), _widget("b")]))
    with pytest.raises(ProtobufDecodeError, match="malformed list: item 1 runs"):
        split_list(raw[:-3])


def test_identity_reads_only_the_five_fields_and_interns_shared_strings() -> None:
    a = read_identity(_widget("a", "5", app="web", empty=""))
    b = read_identity(_widget("b", "6", app="web"))
    assert a == ("a", "ns", "uid-a", "5", {"app": "web", "empty": ""})
    assert b is not None and a is not None
    assert a[1] is b[1]
    assert a[4] is not None and b[4] is not None and a[4]["app"] is b[4]["app"]
    assert read_identity(ld(2, b"")) is None  # no metadata at all
    assert read_identity(ld(1, b"")) == (None, None, None, None, None)


def test_k5_identity_stops_after_the_labels_as_the_server_orders_fields() -> None:
    # Go writes ObjectMeta by field number (K26): after labels (11) come annotations,
    # owner references and managed fields, which identity never reads, nor checks.
    meta = object_meta(name="a", namespace="ns", uid="u", resource_version="7", labels={"x": "1"})
    malformed_after_labels = meta + b"\x62\x7f" + b"\x0a\x01k"  # annotations run past the end
    assert read_identity(ld(1, malformed_after_labels)) == ("a", "ns", "u", "7", {"x": "1"})
    # ... and the first read of the metadata past its identity finds it, naming the object.
    item = ld(1, malformed_after_labels)
    widget = _decoder().decode_list(list_body("v1", "WidgetList", [item])).items[0]
    assert widget.metadata is not None and widget.metadata.labels == {"x": "1"}
    with pytest.raises(InvalidObjectError, match="'ns/a'"):
        _ = widget.metadata.annotations
    with pytest.raises(ProtobufDecodeError, match="malformed object metadata"):
        read_identity(ld(1, b"\x0a\x7fa"))  # a field it reads, cut short, still fails


def test_k5_each_label_entry_is_decoded_once_and_every_object_gets_its_own_labels() -> None:
    a = read_identity(_widget("a", app="web", tier="fe"))
    b = read_identity(_widget("b", app="web", tier="be"))
    assert a is not None and b is not None and a[4] is not None and b[4] is not None
    assert a[4] == {"app": "web", "tier": "fe"} and b[4] == {"app": "web", "tier": "be"}
    assert a[4] is not b[4]  # one dict per object: a change to one never shows in another
    assert next(iter(a[4])) is next(iter(b[4])) and a[4]["app"] is b[4]["app"]
    # More distinct labels than the table keeps: it starts again, every value still right.
    for i in range(5_000):
        found = read_identity(_widget(f"p{i}", **{f"k{i}": f"v{i}", "app": "web"}))
        assert found is not None and found[4] == {f"k{i}": f"v{i}", "app": "web"}


def test_watch_frames_split_into_type_and_object() -> None:
    obj = unknown("example.test/v1", "Widget", _widget("a"))
    assert split_watch_event(watch_frame("MODIFIED", obj)) == ("MODIFIED", obj)


def test_an_object_event_read_in_one_pass_equals_the_field_by_field_read() -> None:
    # Lengths of one, two and three bytes (objects under 128 bytes, 16 KB and 2 MB).
    for event_type, size in (("ADDED", 1), ("MODIFIED", 300), ("DELETED", 20_000), ("BOOKMARK", 1)):
        frame = watch_frame(event_type, unknown("example.test/v1", "Widget", _widget("a" * size)))
        _, start, stop = watch_event_bounds(frame)
        assert watch_event_object(frame) == (event_type, *unwrap(frame, start, stop))


def test_anything_but_the_server_s_layout_of_an_object_event_takes_the_full_read() -> None:
    obj = unknown("v1", "Widget", _widget("a"))
    reordered = ld(2, ld(1, obj)) + ld(1, "ADDED")
    with_extra_field = watch_frame("ADDED", obj) + vint(7, 1)
    set_encoding = watch_frame("ADDED", obj[:-4] + ld(3, "gzip") + ld(4, ""))
    for frame in (
        watch_frame("ERROR", obj),
        reordered,
        with_extra_field,
        set_encoding,
        watch_frame("ADDED", obj)[:-3],
        watch_frame("ADDED", b"not enveloped"),
        b"",
    ):
        assert watch_event_object(frame) is None
    assert split_watch_event(reordered) == ("ADDED", obj)  # still read, the slow way


# --- K5: lazy objects from protobuf; K2: watch events; K4: Status ---------------------------------


def _decoder(**kwargs: Any) -> ProtobufLazyDecoder[Widget]:
    return ProtobufLazyDecoder(
        Widget, message=WIDGET, messages=MESSAGES, describe="widgets", **kwargs
    )


def test_k5_list_items_are_lazy_with_identity_and_build_the_model_on_first_access() -> None:
    items = [_widget("a", "3", app="web"), _widget("b", "4")]
    page = _decoder().decode_list(list_body("example.test/v1", "WidgetList", items, "9", "c", 1))
    assert (page.resource_version, page.continue_, page.remaining_item_count) == ("9", "c", 1)
    first = page.items[0]
    assert is_lazy(first) and isinstance(first, Widget)
    assert first.metadata is not None
    assert (first.metadata.name, first.metadata.namespace, first.metadata.uid) == (
        "a",
        "ns",
        "uid-a",
    )
    assert (first.metadata.resource_version, first.metadata.labels) == ("3", {"app": "web"})
    assert object.__getattribute__(first, "__pydantic_fields_set__") == items[0]  # raw bytes kept
    expected = Widget.model_validate(to_json_object(MESSAGES, WIDGET, items[0]))
    assert first.spec == expected.spec and first.spec is not None
    assert (first.spec.title, first.spec.count, first.spec.tags) == ("T", 3, ["a"])
    assert is_lazy(first)  # K13: only `spec` was built, from its own bytes
    spec = first.spec
    assert first == expected  # a whole-object read builds the rest
    assert not is_lazy(first) and type(first) is Widget and first.spec is spec
    assert "apiVersion" not in first.model_dump(exclude_none=True)  # list items carry no kind


def test_k5_the_lazy_metadata_builds_alone_from_the_object_meta() -> None:
    item = ld(1, object_meta(name="a", annotations={"note": "x"}, creation=1_700_000_000))
    widget = _decoder().decode_list(list_body("v1", "WidgetList", [item])).items[0]
    assert widget.metadata is not None
    assert widget.metadata.annotations == {"note": "x"}
    assert widget.metadata.creation_timestamp == "2023-11-14T22:13:20Z"
    assert is_lazy(widget)  # reading the metadata built only the metadata


def test_k5_a_body_of_another_kind_raises_naming_the_resource() -> None:
    with pytest.raises(ValueError, match=r"protobuf list of widgets.*'Table'.*Table"):
        _decoder().decode_list(unknown("meta.k8s.io/v1", "Table", b""))
    with pytest.raises(ValueError, match=r"widgets.*'GadgetList', expected 'WidgetList'"):
        _decoder().decode_list(list_body("v1", "GadgetList", []))


def test_k5_a_truncated_list_body_raises_value_error_naming_the_resource() -> None:
    body = list_body("v1", "WidgetList", [_widget("a")])
    with pytest.raises(ValueError, match="cannot decode a protobuf list of widgets"):
        _decoder().decode_list(body[:-10])


def test_k5_k11_an_invalid_field_raises_naming_it_and_the_object_is_reported_once() -> None:
    reported: list[InvalidObjectError] = []
    bad = ld(1, object_meta(name="bad", namespace="ns")) + ld(2, ld(1, "t") + vint(5, 1))
    decoder = ProtobufLazyDecoder(
        StrictWidget, message=WIDGET, messages=MESSAGES, on_invalid=reported.append
    )
    obj = decoder.decode_list(list_body("v1", "WidgetList", [bad])).items[0]
    assert obj.spec is not None and obj.spec.title == "t"  # the rest reads
    with pytest.raises(InvalidFieldError, match=r"StrictWidget 'ns/bad'.*spec\.count"):
        _ = obj.spec.count
    with pytest.raises(InvalidFieldError):
        _ = obj.spec.count
    assert len(reported) == 1 and reported[0].key == "ns/bad"
    assert isinstance(reported[0], PartlyInvalidObjectError)
    assert obj.metadata is not None and obj.metadata.name == "bad"  # the identity stays readable


class StrictSpec(KubeModel):
    title: str
    count: str  # never an int: every protobuf count fails validation


class StrictWidget(KubeModel):
    metadata: ObjectMeta | None = None
    spec: StrictSpec | None = None


def test_k5_a_malformed_object_body_fails_like_an_invalid_one() -> None:
    reported: list[InvalidObjectError] = []
    broken = ld(1, object_meta(name="x", namespace="ns")) + ld(2, b"\x0a\x05ab")
    obj = (
        _decoder(on_invalid=reported.append)
        .decode_list(list_body("v1", "WidgetList", [broken]))
        .items[0]
    )
    with pytest.raises(InvalidObjectError, match=r"Widget 'ns/x'.*malformed"):
        materialize(obj)
    assert len(reported) == 1


def test_g12_a_twin_of_a_protobuf_object_shares_its_bytes_and_builds_on_its_own() -> None:
    item = _widget("a", "3", app="web")
    obj = _decoder().decode_list(list_body("v1", "WidgetList", [item])).items[0]
    twin = lazy_twin(obj)
    assert twin is not obj and type(twin) is type(obj) and isinstance(twin, Widget)
    raw = "__pydantic_fields_set__"
    assert object.__getattribute__(twin, raw) is object.__getattribute__(obj, raw)
    materialize(obj)  # another handler's read
    assert is_lazy(twin) and _state_of(twin) == {}
    assert twin == obj == Widget.model_validate(to_json_object(MESSAGES, WIDGET, item))


def test_k5_concurrent_first_reads_build_once_and_agree() -> None:
    obj = _decoder().decode_list(list_body("v1", "WidgetList", [_widget("a")])).items[0]
    seen = read_concurrently(lambda: obj.spec)
    assert len(seen) == 4 and all(s is seen[0] for s in seen)
    assert isinstance(seen[0], WidgetSpec) and seen[0].title == "T"


def test_k2_watch_events_carry_the_kind_as_the_json_watch_does() -> None:
    frame = watch_frame("ADDED", unknown("example.test/v1", "Widget", _widget("a", "8")))
    event = _decoder().decode_event(frame)
    assert event.type == "ADDED" and is_lazy(event.object)
    assert isinstance(event.object, Widget) and event.object.metadata is not None
    assert event.object.metadata.resource_version == "8"
    assert (event.object.api_version, event.object.kind) == ("example.test/v1", "Widget")


def test_k2_a_bookmark_is_a_lazy_object_with_its_metadata() -> None:
    meta = ld(6, "99") + entry(12, "k8s.io/initial-events-end", ld(2, "true"))
    frame = watch_frame("BOOKMARK", unknown("example.test/v1", "Widget", ld(1, meta)))
    event = _decoder().decode_event(frame)
    assert event.type == "BOOKMARK" and isinstance(event.object, Widget)
    assert event.object.metadata is not None
    assert event.object.metadata.resource_version == "99"
    assert event.object.metadata.annotations == {"k8s.io/initial-events-end": "true"}


def _status_body() -> bytes:
    details = (
        ld(1, "nope")
        + ld(2, "")
        + ld(3, "widgets")
        + vint(5, 0)
        + ld(4, ld(1, "FieldValueInvalid") + ld(3, "spec"))
    )
    status = (
        ld(1, ld(1, "") + ld(2, "") + ld(3, ""))
        + ld(2, "Failure")
        + ld(3, "gone")
        + ld(4, "Expired")
        + ld(5, details)
        + vint(6, 410)
    )
    return unknown("v1", "Status", status)


def test_k4_an_error_event_carries_its_status() -> None:
    event = _decoder().decode_event(watch_frame("ERROR", _status_body()))
    assert event.type == "ERROR" and isinstance(event.object, Status)
    assert (event.object.code, event.object.reason, event.object.message) == (
        410,
        "Expired",
        "gone",
    )


def test_k4_an_error_body_decodes_into_the_status_the_json_would_give() -> None:
    status = _decoder().decode_status(_status_body())
    assert status == Status.model_validate(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "gone",
            "reason": "Expired",
            "details": {
                "name": "nope",
                "kind": "widgets",
                "causes": [{"reason": "FieldValueInvalid", "field": "spec"}],
            },
            "code": 410,
        }
    )
    with pytest.raises(ValueError, match=r"protobuf Status for widgets.*kind 'Widget'"):
        _decoder().decode_status(unknown("v1", "Widget", b""))


def test_k2_an_unknown_event_type_or_object_kind_raises_naming_the_resource() -> None:
    obj = unknown("example.test/v1", "Widget", _widget("a"))
    with pytest.raises(ValueError, match="watch event of widgets: unknown watch event type 'SYNC'"):
        _decoder().decode_event(watch_frame("SYNC", obj))
    with pytest.raises(ValueError, match="widgets: an ADDED event's object is of kind 'Gadget'"):
        _decoder().decode_event(watch_frame("ADDED", unknown("v1", "Gadget", b"")))


def test_the_decoder_refuses_a_message_the_table_lacks() -> None:
    with pytest.raises(ValueError, match="not in the protobuf schema table"):
        ProtobufLazyDecoder(Widget, message=TEST + "Gadget", messages=MESSAGES)


def test_config_map_binary_data_is_base64_and_immutable_false_is_written() -> None:
    data = ld(1, object_meta(name="c")) + entry(3, "b", ld(2, b"\x00\x01")) + vint(4, 0)
    assert to_json_object(MESSAGES, CORE + "ConfigMap", data) == {
        "metadata": {"name": "c"},
        "binaryData": {"b": "AAE="},
        "immutable": False,
    }


def test_k3_k11_a_drifted_object_from_protobuf_equals_the_one_from_json() -> None:
    bad = ld(1, object_meta(name="bad", namespace="ns")) + ld(2, ld(1, "t") + vint(5, 1))
    decoder = ProtobufLazyDecoder(StrictWidget, message=WIDGET, messages=MESSAGES)
    from_protobuf = decoder.decode_list(list_body("v1", "WidgetList", [bad])).items[0]
    raw = to_json_object(MESSAGES, WIDGET, bad)
    from_json = LazyModelBuilder(StrictWidget).build(json.dumps(raw).encode())
    assert materialize(from_protobuf) == materialize(from_json)
    assert from_json.spec is not None and from_json.spec.title == "t"
    with pytest.raises(InvalidFieldError, match=r"spec\.count"):
        _ = from_json.spec.count


@pytest.mark.parametrize("first", ["spec", "metadata", "whole"])
def test_k3_k13_partial_reads_agree_across_wire_formats_and_round_trip(first: str) -> None:
    """The same object from protobuf and from its JSON: a field read alone from each is equal,
    the whole objects built after it are equal, and a dump validates back to an equal one."""
    item = _widget("a", "3", app="web")
    from_protobuf = _decoder().decode_list(list_body("v1", "WidgetList", [item])).items[0]
    raw_json = json.dumps(to_json_object(MESSAGES, WIDGET, item)).encode()
    from_json = LazyModelBuilder(Widget).build(raw_json)
    if first == "spec":
        assert from_protobuf.spec == from_json.spec and from_protobuf.spec is not None
        assert is_lazy(from_protobuf) and is_lazy(from_json)
    elif first == "metadata":
        assert from_protobuf.metadata is not None and from_json.metadata is not None
        assert from_protobuf.metadata.annotations == from_json.metadata.annotations
    spec = from_protobuf.spec
    assert from_protobuf == from_json and from_protobuf.spec is spec
    for obj in (from_protobuf, from_json):
        assert Widget.model_validate_json(obj.model_dump_json(exclude_unset=True)) == obj
        assert json.loads(obj.model_dump_json(exclude_unset=True)) == json.loads(raw_json)


def test_k15_repeated_short_strings_are_one_str_among_transcoded_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A transcoder hands out one str per distinct short string (as pydantic-core's cache
    does for JSON), map keys and values included, remembers at most _SHARED_STRINGS of them
    (then starts again), and never changes a value."""
    from kubeinformers.runtime.codec.protobuf import transcode
    from kubeinformers.runtime.codec.protobuf.transcode import Transcoder

    transcoder = Transcoder(MESSAGES)
    one = transcoder.to_json_object(WIDGET, _widget("a", app="web"))
    two = transcoder.to_json_object(WIDGET, _widget("b", app="web"))
    assert one["spec"]["title"] == two["spec"]["title"] == "T"
    assert one["spec"]["title"] is two["spec"]["title"]
    assert one["metadata"]["name"] == "a" and two["metadata"]["name"] == "b"
    ((key_one, value_one),) = one["metadata"]["labels"].items()
    ((key_two, value_two),) = two["metadata"]["labels"].items()
    assert (key_one, value_one) == (key_two, value_two) == ("app", "web")
    assert key_one is key_two and value_one is value_two
    full = len(transcoder._strings)
    monkeypatch.setattr(transcode, "_SHARED_STRINGS", full)
    three = transcoder.to_json_object(WIDGET, _widget("c", app="db"))
    assert three["metadata"]["name"] == "c" and three["metadata"]["labels"] == {"app": "db"}
    assert len(transcoder._strings) < full  # full: it started again
    monkeypatch.setattr(transcode, "_SHARED_STRINGS", 2 * full)
    four = transcoder.to_json_object(WIDGET, _widget("d", app="db"))
    assert four["metadata"]["labels"]["app"] is three["metadata"]["labels"]["app"]
    assert four["spec"]["title"] is three["spec"]["title"] == "T"


def test_d25_a_field_the_table_lacks_is_left_out_and_said_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A newer server's field (a number the table lacks) cannot be named: it is left out of
    the object, and one WARNING per message and field says so and what to do."""
    from kubeinformers.runtime.codec.protobuf import transcode
    from kubeinformers.runtime.codec.protobuf.transcode import Transcoder

    monkeypatch.setattr(transcode, "_unknown_told", set())
    configmap = CORE + "ConfigMap"
    newer = ld(1, object_meta(name="a")) + entry(2, "k", ld(2, "v")) + ld(9, "from 1.99")
    transcoder = Transcoder(MESSAGES)
    caplog.set_level(logging.WARNING, logger="kubeinformers")
    for _ in range(3):
        assert transcoder.to_json_object(configmap, newer) == {
            "metadata": {"name": "a"},
            "data": {"k": "v"},
        }
    (told,) = caplog.records
    assert told.levelno == logging.WARNING
    assert f"protobuf field 9 of {configmap} is not in the generated models' table" in (
        told.getMessage()
    )
    assert 'wire_format="json"' in told.getMessage()
    caplog.clear()
    # A transcode that passes over known fields on purpose (a field read alone) says nothing.
    only_data = transcoder.selected(configmap, {2}, True)
    assert transcoder.to_json_object(only_data, ld(1, object_meta(name="a")) + ld(4, b"")) == {}
    assert caplog.records == []
