"""K27: small protobuf messages built straight into their models equal the general build.

The direct build must give, for every message and model it takes, exactly the model the
general way gives (transcode to Go's JSON shape, then validate): the same values of the same
types in the same order, the same fields set, the same shared empty unknown fields, one
datetime per instant. These tests pair every message of the generated schema with its
generated model, as the informers' kinds reach them, and compare both builds over encodings
that set, empty, zero, repeat and leave out each field; and check what makes it decline.
"""

from __future__ import annotations

import itertools
import pickle
import random
import sys
import typing
from typing import Any

import pytest
from pydantic import BaseModel, Field, field_validator

from kubeinformers.generated import registry
from kubeinformers.generated.core.v1 import EnvVar, PodCondition
from kubeinformers.runtime.api.model import NO_EXTRA_FIELDS, KubeModel
from kubeinformers.runtime.codec.lazy import is_lazy, materialize
from kubeinformers.runtime.codec.protobuf.decoder import ProtobufLazyDecoder
from kubeinformers.runtime.codec.protobuf.direct import Declined, direct_build
from kubeinformers.runtime.codec.protobuf.schema import (
    BOOL,
    INLINE,
    INT,
    MESSAGE,
    MICROTIME,
    OMITEMPTY,
    STRING,
    TIME,
    Messages,
)
from kubeinformers.runtime.codec.protobuf.tables import messages_for
from kubeinformers.runtime.codec.protobuf.transcode import Transcoder
from tests.support.protobuf import ld, list_body, object_meta, vint

_GO_ZERO_TIME = -62135596800


def _unwrap(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (itself, optional, or as a list's or map's items)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _unwrap(arg)
        if found is not None:
            return found
    return None


def _pairs() -> list[tuple[Messages, str, type[BaseModel]]]:
    """Every (schema table, message, model) the built-in kinds reach, one per message."""
    seen: dict[str, tuple[Messages, str, type[BaseModel]]] = {}
    for resource in registry.RESOURCES:
        kind = resource.protobuf
        if kind is None:
            continue
        if resource.gvr not in registry.MODELS:
            continue
        model = registry.model_for(resource.gvr)
        messages = messages_for(kind)
        todo: list[tuple[str, type[BaseModel]]] = [(kind.message, model)]
        while todo:
            message, owner = todo.pop()
            if message in seen:
                continue
            seen[message] = (messages, message, owner)
            by_alias = {(f.alias or n): f for n, f in owner.model_fields.items()}
            for _number, json_name, kind_of, ref, flags in messages.get(message, ()):
                if kind_of != MESSAGE or ref is None:
                    continue
                if flags & INLINE:
                    todo.append((ref, owner))
                    continue
                info = by_alias.get(json_name)
                held = None if info is None else _unwrap(info.annotation)
                if held is not None:
                    todo.append((ref, held))
    return sorted(seen.values(), key=lambda pair: pair[1])


_PAIRS = _pairs()
_TRANSCODERS: dict[int, Transcoder] = {}


def _transcoder(messages: Messages) -> Transcoder:
    known = _TRANSCODERS.get(id(messages))
    if known is None:
        known = _TRANSCODERS[id(messages)] = Transcoder(messages)
    return known


def _direct_pairs() -> list[tuple[Messages, str, type[BaseModel]]]:
    return [
        pair for pair in _PAIRS if direct_build(_transcoder(pair[0]), pair[1], pair[2]) is not None
    ]


_DIRECT = _direct_pairs()


def _time(seconds: int, nanos: int = 0) -> bytes:
    return (vint(1, seconds) if seconds else b"") + (vint(2, nanos) if nanos else b"")


def _values(kind: int) -> list[bytes | None]:
    """Encodings of one field's value (None: left out): set, empty or zero, negative, Go's
    zero time."""
    if kind == STRING:
        return [None, b"", b"value", "ünïcode".encode(), b"long " * 40]  # a 2-byte length
    if kind in (INT, BOOL):
        return [None, 0, 1, 7, -3]  # type: ignore[list-item]
    if kind == TIME:
        return [None, b"", _time(1_700_000_000), _time(_GO_ZERO_TIME), _time(1_700_000_001)]
    if kind == MICROTIME:
        return [None, b"", _time(1_700_000_000, 123_456_789), _time(_GO_ZERO_TIME)]
    return [None]


def _encoded(number: int, kind: int, value: Any) -> bytes:
    if value is None:
        return b""
    if kind in (INT, BOOL):
        if kind == BOOL:
            value = 1 if value else 0
        return vint(number, value)
    return ld(number, value)


def _encodings(messages: Messages, message: str, count: int) -> list[bytes]:
    """`count` encodings of `message`: every field left out, then each value of each field
    alone, then random mixes (some fields written twice, one after the other; every third
    mix in another order than the numbers': read past the fields that come in order)."""
    fields = [f for f in messages[message] if f[2] in (STRING, INT, BOOL, TIME, MICROTIME)]
    out = [b""]
    for number, _name, kind, _ref, _flags in fields:
        out += [_encoded(number, kind, value) for value in _values(kind)[1:]]
    rng = random.Random(message)
    while len(out) < count:
        parts = []
        for number, _name, kind, _ref, _flags in fields:
            for _ in range(rng.choice((0, 1, 1, 1, 2))):
                parts.append(_encoded(number, kind, rng.choice(_values(kind))))
        if len(out) % 3 == 0:
            rng.shuffle(parts)
        out.append(b"".join(parts))
    return out


def _general(transcoder: Transcoder, message: str, model: type[BaseModel], data: bytes) -> Any:
    return model.model_validate(transcoder.to_json_object(message, data))


def _same(direct: BaseModel, general: BaseModel) -> None:
    assert type(direct) is type(general)
    assert direct == general
    assert list(direct.__dict__) == list(general.__dict__)  # the fields' order
    for name, value in direct.__dict__.items():
        other = general.__dict__[name]
        assert type(value) is type(other), name
        if value is not None and type(value).__name__ == "datetime":
            assert value is other, name  # one datetime per instant (K24)
    assert direct.model_fields_set == general.model_fields_set
    assert type(direct.model_fields_set) is type(general.model_fields_set)
    assert direct.__pydantic_extra__ is NO_EXTRA_FIELDS
    assert general.__pydantic_extra__ is NO_EXTRA_FIELDS
    assert direct.__pydantic_private__ == general.__pydantic_private__
    assert sys.getsizeof(direct.__dict__) == sys.getsizeof(general.__dict__)  # K21
    assert direct.model_dump_json() == general.model_dump_json()
    assert pickle.loads(pickle.dumps(direct)) == general


def test_k27_the_small_messages_a_reconcile_reads_are_built_directly() -> None:
    names = {pair[1].rsplit(".", 1)[-1] for pair in _DIRECT}
    assert {"PodCondition", "EnvVar", "ContainerPort", "Toleration"} <= names
    assert len(_DIRECT) >= 30  # conditions of every kind, ports, selectors' requirements...


@pytest.mark.parametrize("pair", _DIRECT, ids=[pair[1] for pair in _DIRECT])
def test_k27_a_direct_build_is_the_general_build(
    pair: tuple[Messages, str, type[BaseModel]],
) -> None:
    messages, message, model = pair
    transcoder = _transcoder(messages)
    build = direct_build(transcoder, message, model)
    assert build is not None
    built = 0
    for data in _encodings(messages, message, 40):
        try:
            general = _general(transcoder, message, model, data)
        except ValueError:  # a required field left out: the direct build declines too
            with pytest.raises(Declined):
                build(data, 0, len(data))
            continue
        direct = build(data, 0, len(data))  # only scalars here: nothing it does not take
        _same(direct, general)
        built += 1
    assert built >= 3


@pytest.mark.parametrize(
    ("model", "message", "data"),
    [
        pytest.param(PodCondition, "PodCondition", ld(1, "Ready") + ld(99, "x"), id="unknown"),
        pytest.param(PodCondition, "PodCondition", vint(1, 3), id="wire-type"),
        pytest.param(PodCondition, "PodCondition", ld(1, "Ready")[:-1], id="truncated"),
        pytest.param(PodCondition, "PodCondition", ld(1, b"\xff\xfe"), id="not-utf-8"),
        pytest.param(PodCondition, "PodCondition", b"\x38\x80", id="varint-past-the-end"),
        pytest.param(PodCondition, "PodCondition", b"\x0a", id="length-past-the-end"),
        pytest.param(EnvVar, "EnvVar", ld(1, "A") + ld(3, ld(1, ld(1, "x"))), id="nested-sent"),
    ],
)
def test_k27_the_direct_build_declines_what_it_does_not_take(
    model: type[BaseModel], message: str, data: bytes
) -> None:
    resource = next(r for r in registry.RESOURCES if r.kind == "Pod" and r.group == "")
    assert resource.protobuf is not None
    messages = messages_for(resource.protobuf)
    transcoder = _transcoder(messages)
    build = direct_build(transcoder, "k8s.io.api.core.v1." + message, model)
    assert build is not None
    with pytest.raises(Declined):
        build(data, 0, len(data))


class Constrained(KubeModel):
    type: str = Field(min_length=2)
    note: str | None = None


class Validated(KubeModel):
    type: str
    note: str | None = None

    @field_validator("type")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


class Plain(KubeModel):
    type: str
    note: str | None = None


def test_k27_a_model_that_validates_more_than_its_types_is_never_built_directly() -> None:
    table = {"t.Note": ((1, "type", STRING, None, 0), (2, "note", STRING, None, OMITEMPTY))}
    transcoder = Transcoder(table)
    assert direct_build(transcoder, "t.Note", Constrained) is None
    assert direct_build(transcoder, "t.Note", Validated) is None
    build = direct_build(transcoder, "t.Note", Plain)
    assert build is not None
    for data in (ld(1, "a"), ld(1, "a") + ld(2, "n"), ld(2, ""), b""):
        general = Plain.model_validate(transcoder.to_json_object("t.Note", data))
        _same(build(data, 0, len(data)), general)


@pytest.mark.parametrize("seed", range(3))
def test_k27_k20_a_pods_conditions_and_env_read_alone_are_the_whole_builds(seed: int) -> None:
    """Through the informer's decoder: the small lists a reconcile reads, built directly,
    equal a build of everything, and the whole read keeps them."""
    from kubeinformers.generated.core.v1 import Pod
    from kubeinformers.generated.core.v1.informers import PodInformer

    kind = PodInformer.RESOURCE.protobuf
    assert kind is not None
    messages = messages_for(kind)
    rng = random.Random(seed)
    conditions = b"".join(
        ld(
            2,
            ld(1, t)
            + ld(2, rng.choice(("True", "False")))
            + ld(3, b"")
            + ld(4, _time(1_700_000_000 + rng.randrange(5)))
            + ld(5, rng.choice(("", "Why")))
            + ld(6, b"")
            + vint(7, rng.randrange(3)),
        )
        for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
    )
    env = b"".join(ld(7, ld(1, f"E{i}") + ld(2, str(i) * rng.randrange(3))) for i in range(3))
    container = ld(1, "app") + ld(2, "image:1") + env
    spec = ld(2, container)
    status = ld(1, "Running") + conditions
    meta = object_meta(name="p", namespace="ns", uid="uid-p", resource_version="1")
    raw = ld(1, meta) + ld(2, spec) + ld(3, status)
    decoder = ProtobufLazyDecoder(Pod, message=kind.message, messages=messages, describe="pods")
    (pod,) = decoder.decode_list(list_body("v1", "PodList", [raw])).items
    expected = Pod.model_validate(_transcoder(messages).to_json_object(kind.message, raw))
    assert pod.status is not None and expected.status is not None
    read = pod.status.conditions
    assert read is not None and expected.status.conditions is not None
    for direct, general in itertools.zip_longest(read, expected.status.conditions):
        _same(direct, general)
    assert pod.spec is not None and pod.spec.containers is not None
    envs = pod.spec.containers[0].env
    assert envs is not None
    assert is_lazy(pod)
    materialize(pod)
    assert pod == expected
    assert pod.status.conditions is read
    assert pod.spec.containers is not None and pod.spec.containers[0].env is envs


@pytest.mark.parametrize(
    "text", ["2026-11-28T20:30:00Z", "2026-11-28T20:30:00.123456Z", "2026-11-28T21:30:00+01:00"]
)
def test_k27_k24_a_time_read_directly_is_what_a_time_field_validates(text: str) -> None:
    """The direct build's times come from `time_of_text`, built by pydantic-core without
    pydantic's TypeAdapter (whose plugins cost a process ~20 ms before its first read)."""
    from pydantic import TypeAdapter

    from kubeinformers.runtime.api import timestamps
    from kubeinformers.runtime.api.timestamps import Time, time_of_text

    timestamps._by_text.clear()
    timestamps._instants.clear()
    direct = time_of_text(text)
    assert time_of_text(text) is direct  # one object per text (K24)
    timestamps._by_text.clear()
    timestamps._instants.clear()
    general = TypeAdapter(Time).validate_python(text)
    assert direct == general and direct is not general
    assert repr(direct) == repr(general)
    assert type(direct.tzinfo) is type(general.tzinfo)
    assert TypeAdapter(Time).dump_json(direct) == TypeAdapter(Time).dump_json(general)
