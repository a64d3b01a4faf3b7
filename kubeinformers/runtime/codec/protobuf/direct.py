"""Small protobuf messages built straight into their models (K27).

Why: a reconcile reads a few small lists of every object it gets (a pod's conditions and its
containers' env vars), which K20 builds whole. Built the general way, each item is transcoded
into the dict Go's JSON would have written, then validated by pydantic, whose model base then
shares the model's field set and field names (K15, K21): three passes and a Python call per
model, ~13 µs of a pod's reconcile read for its four conditions. A message whose
fields are all strings, integers, booleans and times, read into a model that validates each
of them as it is (no constraint, no validator of its own), is built here in one pass over its
bytes instead: each field's value is what the transcode would have given and the model's
validation would have kept, and the model is assembled as validation leaves one
(`runtime.api.model.assembly`). Anything else the bytes hold (a field of another kind, an
unknown field, a nested message sent, a malformed value) makes the builder decline (it
raises Declined: a list is built in one comprehension, at no cost while none does), and the
item is built the general way, which says precisely what is wrong.

How each field reads (how the transcode writes it, what its absence writes) is asked of the
transcoder (`transcode.scalar_reading`): one source of truth for Go's JSON.
The builder of each message and model is Python source compiled once (as `dataclasses` and
`collections.namedtuple` do): the fields in the order of their numbers, as the server writes
them (K26), read in straight-line code with one comparison each, then, for whatever is left
(a field out of that order or sent twice), a loop with a chain of comparisons with each
field's key; never a table lookup per field. (The straight line: ~11% less per pod condition
than the loop alone.)
"""

from __future__ import annotations

import textwrap
import threading
import types
import typing
from collections.abc import Callable
from typing import Any, Optional

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from kubeinformers.runtime.api.model import NO_EXTRA_FIELDS, SharedFieldsSet, assembly
from kubeinformers.runtime.api.timestamps import MicroTime, Time, time_of_text
from kubeinformers.runtime.codec.protobuf import schema
from kubeinformers.runtime.codec.protobuf import transcode as _t
from kubeinformers.runtime.codec.protobuf.reader import ProtobufDecodeError, read_varint

__all__ = ["Declined", "DirectBuild", "direct_build", "validates_as_is"]

DirectBuild = Callable[[bytes, int, int], BaseModel]
"""Builds the model of the message at data[start:end]; raises Declined where it does not
(then the item is built the general way)."""


class Declined(Exception):
    """A direct build that does not build this message (see the module): build it the
    general way, which says what is wrong, if anything."""


_ABSENT: Any = _t.ABSENT  # a field the object leaves out (not in its fields set)
_TIMES_KEPT = 4096  # Time message bytes -> their datetime, per builder; then it starts again

# Each code: the annotations its values validate as themselves, and whether it may give None.
_STRING_TYPES = (str, Optional[str])  # noqa: UP045 (the annotation pydantic reports)
_INT_TYPES = (int, Optional[int])  # noqa: UP045
_BOOL_TYPES = (bool, Optional[bool])  # noqa: UP045
_OPTIONAL_TIME: Any = Optional[Time]  # noqa: UP045
_OPTIONAL_MICROTIME: Any = Optional[MicroTime]  # noqa: UP045

_lock = threading.Lock()
_builders: dict[tuple[int, str, type[BaseModel]], tuple[Any, DirectBuild | None]] = {}


def direct_build(
    transcoder: _t.Transcoder, message: str, model: type[BaseModel]
) -> DirectBuild | None:
    """The builder of `model` from `message`'s bytes, or None when this pair cannot be built
    directly (a field of another kind, a constraint, a validator: see the module)."""
    key = (id(transcoder), message, model)
    with _lock:
        known = _builders.get(key)
        if known is not None and known[0] is transcoder:
            return known[1]
    build = _make(transcoder, message, model)
    with _lock:
        _builders[key] = (transcoder, build)
    return build


def _plain_model(model: type[BaseModel]) -> bool:
    """Whether `model` validates nothing beyond its fields' own types and keeps its unknown
    fields (what `model.assembly` makes as validation does)."""
    decorators = model.__pydantic_decorators__
    return (
        model.model_config.get("extra") == "allow"
        and not model.__private_attributes__
        and not getattr(model, "__pydantic_root_model__", False)
        and model.model_post_init is BaseModel.model_post_init
        and not decorators.validators
        and not decorators.field_validators
        and not decorators.root_validators
        and not decorators.model_validators
        and not decorators.computed_fields
    )


def validates_as_is(code: int, info: FieldInfo, may_be_none: bool) -> bool:
    """Whether `info`'s field validates every value `code` (a transcode READ_* code; None
    among them when `may_be_none`) gives as that value itself: no constraint, its own type."""
    if info.metadata:
        return False  # a constraint
    annotation = info.annotation
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(
        None
    ) in typing.get_args(annotation)
    if may_be_none and not optional:
        return False
    if code in (_t.READ_STRING, _t.READ_STRING_OMIT):
        return annotation in _STRING_TYPES
    if code in (_t.READ_INT, _t.READ_INT_OMIT):
        return annotation in _INT_TYPES
    if code in (_t.READ_BOOL, _t.READ_BOOL_OMIT):
        return annotation in _BOOL_TYPES
    if code == _t.READ_TIME:
        return bool(annotation == _OPTIONAL_TIME)
    if code == _t.READ_MICROTIME:
        return bool(annotation == _OPTIONAL_MICROTIME)
    return code == _t.READ_MESSAGE and optional  # a pointer to a message: None when absent


def _make(transcoder: _t.Transcoder, message: str, model: type[BaseModel]) -> DirectBuild | None:
    """Compile the builder of `model` from `message` (None when it cannot be one)."""
    fields = transcoder.messages.get(message)
    if not fields or not issubclass(model, BaseModel) or not _plain_model(model):
        return None
    by_alias = {(info.alias or name): (name, info) for name, info in model.model_fields.items()}
    plans: dict[str, tuple[int, int, Any]] = {}  # Python name -> (number, code, absent)
    for field in fields:
        number, json_name, _kind, _ref, flags = field
        if number > 15 or flags & (schema.INLINE | schema.REPEATED | schema.MAP):
            return None  # a key of two bytes, or a field that is no single value
        reading = _t.scalar_reading(field)
        if reading is None or json_name not in by_alias:
            return None  # read the slow way, or kept among the unknown fields
        code, absent = reading
        if code == _t.READ_MESSAGE and not flags & schema.POINTER:
            return None  # a struct: `{}` when absent, a model to build
        may_be_none = absent is None or code in (_t.READ_TIME, _t.READ_MICROTIME)
        name, info = by_alias[json_name]
        if not validates_as_is(code, info, may_be_none):
            return None
        plans[name] = (number, code, absent)
    for name, info in model.model_fields.items():
        if name not in plans and (info.is_required() or info.default is not None):
            return None  # never on the wire, and no None to read as
        if name in plans and not info.is_required() and info.default is not None:
            return None  # absent: a default other than None
    return _compile(transcoder, model, plans)


_OMIT_CODES = (
    _t.READ_STRING_OMIT,
    _t.READ_INT_OMIT,
    _t.READ_BOOL_OMIT,
)  # an empty value is left out

_TIME_BRANCH = """\
            if pos > start:
                chunk = data[start:pos]
                v{i} = times.get(chunk, ABSENT)
                if v{i} is ABSENT:
                    v{i} = time(chunk, {micro})
            else:
                v{i} = None"""
_LENGTH_BRANCH = {
    _t.READ_STRING: """\
            chunk = data[start:pos]
            v{i} = strings.get(chunk) or remember(chunk)""",
    _t.READ_STRING_OMIT: """\
            if pos > start:
                chunk = data[start:pos]
                v{i} = strings.get(chunk) or remember(chunk)
            else:
                v{i} = ABSENT""",
    _t.READ_TIME: _TIME_BRANCH.replace("{micro}", "False"),
    _t.READ_MICROTIME: _TIME_BRANCH.replace("{micro}", "True"),
    _t.READ_MESSAGE: """\
            raise Declined  # a message sent: built the general way""",
}
_VARINT_BRANCH = {
    _t.READ_INT: """\
            v{i} = raw - WRAP if raw >= SIGN else raw""",
    _t.READ_INT_OMIT: """\
            v{i} = (raw - WRAP if raw >= SIGN else raw) if raw else ABSENT""",
    _t.READ_BOOL: """\
            v{i} = raw != 0""",
    _t.READ_BOOL_OMIT: """\
            v{i} = True if raw else ABSENT""",
}


def _compile(
    transcoder: _t.Transcoder, model: type[BaseModel], plans: dict[str, tuple[int, int, Any]]
) -> DirectBuild:
    names = list(model.model_fields)
    # The names the loop reads, as locals (default arguments: no global lookup per field).
    lines = [
        "def build(data, pos, end, ABSENT=ABSENT, strings=strings, remember=remember, "
        "times=times, time=time):"
    ]
    for i, name in enumerate(names):
        absent = plans[name][2] if name in plans else _ABSENT
        if absent is _ABSENT:
            lines.append(f"    v{i} = ABSENT")
        else:
            assert absent in (None, "", 0, False) and type(absent) in (type(None), str, int, bool)
            lines.append(f"    v{i} = {absent!r}")  # Go's zero value: a literal
    # The fields' branches in the order of their numbers, the order they come in (K26).
    by_number = sorted(
        range(len(names)), key=lambda i: plans[names[i]][0] if names[i] in plans else 0
    )
    # Each field's branch: its key, and the lines reading its value with `pos` past the key;
    # a malformed value (past the end, a varint too long) declines, as an unknown key does.
    branches: list[tuple[int, list[str]]] = []
    for i in by_number:
        name = names[i]
        if name not in plans:
            continue
        number, code, _absent = plans[name]
        if code in _LENGTH_BRANCH:
            body = [
                "length = data[pos]",
                "if length < 0x80:",
                "    start = pos + 1",
                "else:",
                "    length, start = read_varint(data, pos, end)",
                "pos = start + length",
                "if pos > end:",
                "    raise Declined",
                *textwrap.dedent(_LENGTH_BRANCH[code].format(i=i)).splitlines(),
            ]
            key = number << 3 | 2
        else:
            body = [
                "raw = data[pos]",
                "if raw < 0x80:",
                "    pos += 1",
                "else:",
                "    raw, pos = read_varint(data, pos, end)",
                *textwrap.dedent(_VARINT_BRANCH[code].format(i=i)).splitlines(),
            ]
            key = number << 3
        branches.append((key, body))

    def indented(body: list[str], depth: int) -> list[str]:
        return [" " * (4 * depth) + line for line in body]

    # First the fields as they come, in the order of their numbers (K26), one comparison
    # each: straight-line code, no loop. Whatever is left (a field out of order or sent
    # twice, another field) goes on in the loop below, one chain of comparisons per field.
    lines += [
        "    try:",
        "        key = data[pos] if pos < end else 0",
    ]
    for key, body in branches:
        lines += [f"        if key == {key}:", "            pos += 1"]
        lines += indented(body, 3)
        lines.append("            key = data[pos] if pos < end else 0")
    lines += [
        "        while pos < end:",
        "            key = data[pos]",
        "            pos += 1",
    ]
    branch = "if"
    for key, body in branches:
        lines.append(f"            {branch} key == {key}:")
        lines += indented(body, 4)
        branch = "elif"
    lines += [
        "            else:" if branch == "elif" else "            if True:",
        "                raise Declined  # another field, or this one as another wire type",
        "    except (IndexError, DecodeError, UnicodeDecodeError):",
        "        raise Declined from None",
        "    if pos != end:",
        "        raise Declined",
        "    mask = 0",
    ]
    always: set[str] = set()  # the fields every model built holds
    maybe: dict[int, str] = {}  # bit -> the field it says the model holds
    for i, name in enumerate(names):
        plan = plans.get(name)
        if plan is not None and plan[2] is not _ABSENT and plan[1] not in _OMIT_CODES:
            always.add(name)  # written whenever absent, never left out
            continue
        info = model.model_fields[name]
        lines += [
            f"    if v{i} is ABSENT:",
            "        raise Declined" if info.is_required() else f"        v{i} = None",
        ]
        if plan is not None:
            maybe[1 << i] = name
            lines += ["    else:", f"        mask |= {1 << i}"]
    parts = assembly(model)
    lines += [
        "    fields_set = FIELDS_SETS.get(mask)",
        "    if fields_set is None:",
        "        fields_set = fields_set_of(mask)",
        "    model = new(MODEL)",
    ]
    if parts.keys is None:
        values = ", ".join(f"{name!r}: v{i}" for i, name in enumerate(names))
        lines.append(f"    values = {{{values}}}")
    else:  # equal to `keys | values` (K21), in half the time
        lines.append("    values = KEYS.copy()")
        lines += (f"    values[{name!r}] = v{i}" for i, name in enumerate(names))
    lines += [
        "    set_dict(model, values)",
        "    set_extra(model, NO_EXTRA_FIELDS)",
        "    set_fields_set(model, fields_set)",
        "    set_private(model, None)",
        "    return model",
    ]
    fields_sets: dict[int, set[str]] = {}  # mask -> the shared fields set (K15)

    def fields_set_of(mask: int) -> set[str]:
        """The fields set of a model holding `always` and the fields of `mask`'s bits."""
        names = always | {name for bit, name in maybe.items() if mask & bit}
        one = parts.fields_set(names)
        if type(one) is SharedFieldsSet:  # shared: the same for every model of this mask
            fields_sets[mask] = one
        return one

    source = "\n".join(lines) + "\n"
    times: dict[bytes, Any] = {}

    def time(chunk: bytes, micro: bool) -> Any:
        """The datetime of the Time message `chunk`, as the field validates its text (K24's
        one object per instant), remembered by its bytes (the builder looks there first)."""
        text = _t.time_text(chunk, 0, len(chunk), micro)
        value = None if text is None else time_of_text(text)
        if len(times) >= _TIMES_KEPT:
            times.clear()
        times[chunk] = value
        return value

    namespace: dict[str, Any] = {
        "ABSENT": _ABSENT,
        "DecodeError": ProtobufDecodeError,
        "Declined": Declined,
        "FIELDS_SETS": fields_sets,
        "KEYS": parts.keys,
        "MODEL": model,
        "NO_EXTRA_FIELDS": NO_EXTRA_FIELDS,
        "SIGN": 1 << 63,
        "WRAP": 1 << 64,
        "fields_set_of": fields_set_of,
        "new": object.__new__,
        "read_varint": read_varint,
        "set_dict": parts.set_dict,
        "set_extra": parts.set_extra,
        "set_fields_set": parts.set_fields_set,
        "set_private": parts.set_private,
        "remember": transcoder.remember_text,
        "strings": transcoder.shared_texts,
        "time": time,
        "times": times,
    }
    exec(compile(source, f"<direct build of {model.__name__}>", "exec"), namespace)
    return typing.cast(DirectBuild, namespace["build"])
