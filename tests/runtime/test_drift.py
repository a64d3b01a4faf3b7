"""A server newer than the models (issue 27 §1): rules K11 and K12, in every decode mode.

The demo Widget model (examples/informers) was generated from a CRD whose `spec.size` and
`status.phase` are enums, `spec.replicas` an integer and `spec.tags` a map. The server's CRD
then changed: a new enum value (compatible: reads, K12), `replicas` a string and `tags` a list
(incompatible: only those fields raise when read, K11). Lazy and eager decoding, list items and
watch events, must agree: the same object, at the version the server sent.
"""

from __future__ import annotations

import copy
import json
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from examples.informers.demo.v1.widget import Widget, WidgetSpec
from kubeinformers.runtime.api.model import UnknownEnumValue
from kubeinformers.runtime.codec.drift import (
    MISSING,
    InvalidFieldError,
    InvalidObjectError,
    PartlyInvalidObjectError,
    invalid_fields,
)
from kubeinformers.runtime.codec.lazy import is_lazy, materialize
from kubeinformers.runtime.codec.lazy_decoder import LazyDecoder
from kubeinformers.runtime.codec.wire import JsonDecoder, ObjectDecodeError
from tests.support.threads import read_concurrently

API_VERSION = "demo.kubeinformers.io/v1"


def widget(name: str = "w", rv: str = "7", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, "uid": f"u-{name}"},
        "spec": {"size": "small", "replicas": 2, "tags": {"a": "b"}, **spec},
        "status": {"phase": "Ready"},
    }


DRIFTED = widget(
    replicas="two",
    tags=["a", "b"],
    parts=[{"name": "p", "count": "many"}, {"name": "q", "count": 3}],
)
DRIFTED["status"] = {"phase": "Paused"}  # an enum value the model does not list


def _lazy_list(data: dict[str, Any], reported: list[InvalidObjectError]) -> Widget:
    body = json.dumps({"kind": "WidgetList", "metadata": {"resourceVersion": "9"}, "items": [data]})
    return LazyDecoder(Widget, on_invalid=reported.append).decode_list(body.encode()).items[0]


def _lazy_event(data: dict[str, Any], reported: list[InvalidObjectError]) -> Widget:
    line = json.dumps({"type": "MODIFIED", "object": data}).encode()
    obj = LazyDecoder(Widget, on_invalid=reported.append).decode_event(line).object
    assert isinstance(obj, Widget)
    return obj


def _eager_list(data: dict[str, Any], reported: list[InvalidObjectError]) -> Widget:
    body = json.dumps({"kind": "WidgetList", "metadata": {"resourceVersion": "9"}, "items": [data]})
    page, bad = JsonDecoder(Widget).decode_list_stream((body.encode(),))
    reported.extend(bad)  # type: ignore[arg-type]
    return page.items[0]


def _eager_event(data: dict[str, Any], reported: list[InvalidObjectError]) -> Widget:
    line = json.dumps({"type": "MODIFIED", "object": data}).encode()
    try:
        obj = JsonDecoder(Widget).decode_event(line).object
    except ObjectDecodeError as err:
        reported.append(err)  # type: ignore[arg-type]
        assert err.kept is not None and err.kept.type == "MODIFIED"
        obj = err.kept.object
    assert isinstance(obj, Widget)
    return obj


DECODES: dict[str, Callable[[dict[str, Any], list[InvalidObjectError]], Widget]] = {
    "lazy-list": _lazy_list,
    "lazy-event": _lazy_event,
    "eager-list": _eager_list,
    "eager-event": _eager_event,
}


@pytest.mark.parametrize("decode", DECODES)
def test_k12_an_enum_value_added_later_reads_as_unknown_enum_value(decode: str) -> None:
    reported: list[InvalidObjectError] = []
    data = widget(size="huge")
    data["status"] = {"phase": "Paused", "conditions": [{"type": "T", "status": "Maybe"}]}
    obj = DECODES[decode](data, reported)
    assert obj.spec is not None and obj.status is not None and obj.status.conditions
    assert obj.spec.size == "huge" and isinstance(obj.spec.size, UnknownEnumValue)
    assert obj.status.phase == "Paused" and obj.status.conditions[0].status == "Maybe"
    assert obj.spec.replicas == 2 and obj.spec.tags == {"a": "b"}
    assert reported == []  # a compatible change is no error
    assert json.loads(obj.model_dump_json(exclude_unset=True)) == data
    assert type(obj) is Widget and type(obj.spec) is WidgetSpec


def test_k12_a_listed_enum_value_stays_a_plain_str() -> None:
    obj = Widget.model_validate(widget())
    assert obj.spec is not None and obj.spec.size == "small"
    assert not isinstance(obj.spec.size, UnknownEnumValue)


@pytest.mark.parametrize("decode", DECODES)
def test_k11_only_the_fields_of_a_new_type_raise_and_the_rest_reads(decode: str) -> None:
    reported: list[InvalidObjectError] = []
    obj = DECODES[decode](DRIFTED, reported)
    assert not is_lazy(materialize(obj)) and isinstance(obj, Widget)
    assert obj.metadata is not None and obj.metadata.resource_version == "7"  # this version
    spec, status = obj.spec, obj.status
    assert spec is not None and status is not None and spec.parts is not None
    assert (spec.size, status.phase, spec.parts[1].count, spec.parts[0].name) == (
        "small",
        "Paused",
        3,
        "p",
    )
    for read, path, value in (
        (lambda: spec.replicas, "spec.replicas", "two"),
        (lambda: spec.tags, "spec.tags", ["a", "b"]),
        (lambda: spec.parts[0].count, "spec.parts[0].count", "many"),
    ):
        with pytest.raises(InvalidFieldError) as info:
            read()
        err = info.value
        assert (err.key, err.path, err.value, err.model) == ("ns/w", path, value, Widget)
        assert "regenerate the models" in str(err) and "Widget 'ns/w'" in str(err)
        assert isinstance(err, InvalidObjectError)
    assert set(invalid_fields(spec)) == {"replicas", "tags"}
    assert len(reported) == 1 and "ns/w" in str(reported[0])
    # The dump holds what the server sent, so a read-modify-write keeps it.
    dumped = json.loads(obj.model_dump_json(exclude_unset=True, warnings=False))
    assert dumped == DRIFTED


def test_k11_every_decode_gives_equal_objects_that_copy_and_pickle_exactly() -> None:
    objs = [DECODES[d](DRIFTED, []) for d in DECODES]
    assert all(o == objs[0] for o in objs)
    for obj in objs:
        for twin in (copy.copy(obj), copy.deepcopy(obj), pickle.loads(pickle.dumps(obj))):
            assert twin == obj and type(twin.spec) is type(obj.spec)
            with pytest.raises(InvalidFieldError, match=r"spec\.replicas"):
                _ = twin.spec.replicas  # type: ignore[union-attr]
    assert objs[0] != Widget.model_validate(widget())


def test_k11_the_lazy_report_lists_every_bad_field_once() -> None:
    reported: list[InvalidObjectError] = []
    obj = _lazy_list(DRIFTED, reported)
    assert reported == []  # nothing read yet
    for _ in range(3):
        _ = obj.spec
        with pytest.raises(InvalidFieldError):
            _ = obj.spec.replicas  # type: ignore[union-attr]
    (report,) = reported
    assert isinstance(report, PartlyInvalidObjectError) and report.key == "ns/w"
    assert [f.path for f in report.fields] == ["spec.replicas", "spec.tags", "spec.parts[0].count"]


def test_k11_assigning_a_bad_field_makes_it_readable() -> None:
    obj = _eager_event(DRIFTED, [])
    assert obj.spec is not None
    obj.spec.replicas = 4
    assert obj.spec.replicas == 4 and set(invalid_fields(obj.spec)) == {"tags"}


def test_k11_a_missing_required_field_raises_when_read_and_names_both_causes() -> None:
    data = widget()
    del data["spec"]["size"]
    obj = _lazy_list(data, [])
    assert obj.spec is not None and obj.spec.replicas == 2
    with pytest.raises(
        InvalidFieldError, match=r"spec\.size is missing, which .*Widget requires"
    ) as info:
        _ = obj.spec.size
    # Fresh models do not mend an object stored before its CRD required the field: the
    # message says to write the field as well as to regenerate.
    assert info.value.reason == MISSING
    assert "stored before the field became required" in str(info.value)
    assert "kubeinformers generate --cluster" in str(info.value)


@pytest.mark.parametrize("decode", DECODES)
def test_k11_every_decode_reports_a_bad_field_by_the_same_path_and_reason(decode: str) -> None:
    data = widget(parts=[{"name": "p", "count": "many"}])
    del data["spec"]["size"]
    reported: list[InvalidObjectError] = []
    obj = DECODES[decode](data, reported)
    _ = materialize(obj)  # a lazy object reports on its first full read
    (report,) = reported
    if isinstance(report, PartlyInvalidObjectError):
        paths = [(f.path, f.reason) for f in report.fields]
        remedy = str(report)
    else:
        assert isinstance(report, ObjectDecodeError)
        paths = [(report.path, report.reason.removesuffix(" (and 1 more)"))]
        remedy = report.remedy
    assert paths[0][0] == "spec.parts[0].count" and "valid integer" in paths[0][1]
    if len(paths) > 1:
        assert paths[1] == ("spec.size", MISSING)
    # A required field missing among others: both remedies.
    assert "stored before the field became required" in remedy
    assert "kubeinformers generate --cluster" in remedy


def test_k11_an_eager_modified_event_caches_the_newest_version_not_the_last_valid_one() -> None:
    decoder = JsonDecoder(Widget)
    line = json.dumps({"type": "MODIFIED", "object": widget(rv="12", replicas="two")})
    with pytest.raises(ObjectDecodeError) as info:
        decoder.decode_event(line.encode())
    err = info.value
    assert err.cached and err.kept is not None and err.key == "ns/w"
    kept = err.kept.object
    assert kept.metadata.resource_version == "12" and kept.spec.size == "small"  # type: ignore[union-attr]


def test_k10_k11_concurrent_first_reads_of_a_drifted_object_build_it_once() -> None:
    for _ in range(20):
        reported: list[InvalidObjectError] = []
        obj = _lazy_list(DRIFTED, reported)
        seen = read_concurrently(lambda obj=obj: obj.spec)  # type: ignore[misc]
        assert len(seen) == 4 and all(s is seen[0] for s in seen)
        assert reported == []  # a nested lazy spec (K19): nothing invalid read yet
        errors = read_concurrently(lambda obj=obj: _bad_read(obj))  # type: ignore[misc]
        assert len(errors) == 4 and all(isinstance(e, InvalidFieldError) for e in errors)
        assert len(reported) == 1


def _bad_read(obj: Widget) -> Exception | None:
    try:
        _ = obj.spec.replicas  # type: ignore[union-attr]
    except InvalidFieldError as exc:
        return exc
    return None


@pytest.mark.parametrize("decode", DECODES)
def test_k11_a_drifted_objects_dump_is_silent_and_holds_the_servers_value(decode: str) -> None:
    """Every dump of an object with bad fields (the whole object, a nested model, JSON or
    Python, by alias or not, only what is set) holds the server's values and says nothing:
    pydantic's serialiser never meets a bad value in a typed field (it warned
    PydanticSerializationUnexpectedValue on every dump)."""
    obj = DECODES[decode](DRIFTED, [])
    spec = obj.spec
    assert spec is not None and spec.parts is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert json.loads(obj.model_dump_json(exclude_unset=True)) == DRIFTED
        assert obj.model_dump(mode="json", exclude_unset=True) == DRIFTED
        assert obj.model_dump(mode="json", exclude_none=True) == DRIFTED
        assert spec.model_dump(by_alias=False)["replicas"] == "two"
        assert spec.parts[0].model_dump()["count"] == "many"
        copied = obj.model_copy(deep=True)
        assert json.loads(copied.model_dump_json(exclude_unset=True)) == DRIFTED
        copied.spec.tags = {"c": "d"}  # type: ignore[union-attr]
        dumped = json.loads(copied.model_dump_json(exclude_unset=True))
    assert dumped["spec"]["tags"] == {"c": "d"} and dumped["spec"]["replicas"] == "two"
    assert set(invalid_fields(copied.spec)) == {"replicas"}  # type: ignore[arg-type]


def test_k11_a_copy_that_updates_a_bad_field_reads_it() -> None:
    """model_copy(update=...) gives the field a value as an assignment does: it reads, and
    the dump holds it once, not the server's value beside it."""
    obj = _eager_event(DRIFTED, [])
    assert obj.spec is not None
    spec = obj.spec.model_copy(update={"replicas": 5})
    assert spec.replicas == 5 and set(invalid_fields(spec)) == {"tags"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = spec.model_dump_json(exclude_unset=True)
    assert text.count('"replicas"') == 1 and json.loads(text)["replicas"] == 5
    with pytest.raises(InvalidFieldError, match=r"spec\.replicas"):
        _ = obj.spec.replicas  # the original is unchanged
