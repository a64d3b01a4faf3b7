"""Models built on first access: keep an item's raw JSON, decode only its identity up front.

Why: validating a full pydantic model costs ~100 µs per pod and several KB of objects, yet an
informer needs only name, namespace, resourceVersion, uid and labels to key, index and
select. A lazy object is an instance of a subclass of the generated model (so `isinstance`
and mypy see the model) holding just its raw bytes and `metadata` — itself lazy, holding those
five fields in its `__dict__`. Both live in pydantic's own per-instance slots, unused until the
object is built, so a cached object costs one small key-sharing dict (the metadata's), not three. The first access to any other attribute validates the raw
bytes with the model, fills the instance in place and turns its class into the model's own:
from then on it *is* the model, with no overhead. Reading is indistinguishable from an
eagerly decoded model; nothing the server sent is lost.

Reading one top-level field of a lazy item builds that field alone (K13); a field that is
itself a model (`spec`, `status`) comes as a nested lazy object over the field's bytes, built
the same way one level down: each of its fields alone on first read, the rest in place on a
whole read (K19). A whole read of the item builds it once; its nested objects take their part
of that build in place, keeping what they built.

How a lazy object builds its model from the raw bytes is its class's `RawFormat`: `JSON`
validates the item's JSON (or its metadata's slice) with `model_validate_json`; the protobuf
codec's format transcodes the protobuf item (or its ObjectMeta) to the JSON-shaped dict and
validates that. Either way the raw slot holds the whole item's bytes.

An object that fails validation is built field by field (runtime.codec.drift): the fields that
validate read, each one that does not raises `InvalidFieldError` naming the object, the field
path and the remedy, and the informer's `on_invalid` hook is told once (log, counter, watch
error handler) with a `PartlyInvalidObjectError` listing them. Only raw bytes that are no
object at all (a malformed protobuf item, JSON that is not an object) leave the whole object
unreadable: every access past its identity raises `InvalidObjectError`, reported once.
"""

from __future__ import annotations

import functools
import sys
import threading
import typing
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, TypeVar

import msgspec
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import SchemaValidator

from kubeinformers.runtime.api.model import key_sharing_class
from kubeinformers.runtime.codec.compact import Compactor
from kubeinformers.runtime.codec.drift import InvalidObjectError, build_lenient
from kubeinformers.runtime.codec.gc_pause import read_burst

__all__ = [
    "JSON",
    "LazyModelBuilder",
    "ModelBuild",
    "NestedRaw",
    "RawFormat",
    "is_lazy",
    "list_item_model",
    "lazy_twin",
    "materialize",
    "strip_raw_managed_fields",
]

M = TypeVar("M", bound=BaseModel)

_ERROR = "__kubeinformers_error__"  # set once validation has failed (in the __dict__)
# [reported?], in the __dict__ of a lazy object and its twins (lazy_twin): one report for all.
_REPORTED = "__kubeinformers_reported__"
# A nested lazy object's owner's metadata (in its __dict__): whose object it is, for errors.
_OWNER = "__kubeinformers_owner__"
# A nested lazy object's path from its item (in its __dict__) when its class' does not say it:
# an item of a list (`spec.containers[1]`), or an object nested in a nested one (K20).
_PATH = "__kubeinformers_path__"
# A list of models whose items take at least this many bytes each on the wire (on average)
# comes as a list of lazy objects, and a model nested in a nested object of at least this
# size as a nested lazy object (K20): smaller ones cost less built than handed out lazy (a
# lazy object and a read of one of its fields cost about what building ~200 bytes does).
LAZY_MIN_BYTES = 200


def worth_lazy(size: int, count: int = 1) -> bool:
    """Whether `count` objects taking `size` bytes on the wire in all are handed out lazy
    (K20): at least LAZY_MIN_BYTES each on average."""
    return size >= LAZY_MIN_BYTES * count


# Until a lazy object is built, pydantic's instance slots are free; they hold its state:
_RAW_SLOT = "__pydantic_fields_set__"  # the bytes it is built from (the whole item), both kinds
_META_SLOT = "__pydantic_private__"  # a lazy item's metadata, read through `metadata`
_read_meta_slot = BaseModel.__dict__[_META_SLOT].__get__  # reads that slot at C speed
# Sets the raw slot at C speed (KubeModel's setter of it shares field sets: runtime.api.model).
_set_raw_slot = BaseModel.__dict__[_RAW_SLOT].__set__
# Reads that slot at C speed (object.__getattribute__ goes through KubeModel's property).
_read_raw_slot = BaseModel.__dict__[_RAW_SLOT].__get__
# A lazy object's own instance dict, read and replaced past its class' `__dict__` property
# (which builds the object first: `_lazy_instance_dict`).
_state_of = BaseModel.__dict__["__dict__"].__get__
_set_state = BaseModel.__dict__["__dict__"].__set__


def _publish(obj: object, name: str, value: Any) -> None:
    """One step of publishing a built object's state (module-level: tests watch every step)."""
    if name == "__dict__":
        _set_state(obj, value)
    else:
        object.__setattr__(obj, name, value)


# The identity fields decoded up front, by their API (alias) names.
_IDENTITY_FIELDS = ("name", "namespace", "resourceVersion", "uid", "labels")
# The order of LazyModelBuilder.assemble_values' identity tuple.
IDENTITY_ORDER = ("name", "namespace", "uid", "resourceVersion", "labels")

# Methods of BaseModel that read __dict__ or the pydantic slots directly rather than through
# attribute access: a lazy object materialises itself before any of them runs.
_MATERIALISE_BEFORE = (
    "__repr__",
    "__str__",
    "__repr_args__",
    "__rich_repr__",
    "__pretty__",
    "__iter__",
    "__copy__",
    "__deepcopy__",
    "__getstate__",
    "__reduce__",
    "__reduce_ex__",
    "__setattr__",
    "__delattr__",
    "__sizeof__",
    "model_dump",
    "model_dump_json",
    "model_copy",
)

# One lock for all materialisations: validation holds the GIL anyway, and the lock makes
# "validate, then publish __dict__, then switch the class" atomic for concurrent readers.
_LOCK = threading.RLock()


class _LazyClass:
    """What the lazy machinery reads of a lazy class on every first read of a field, in one
    object: the class attribute `__kubeinformers_lazy__`, read through the instance
    (`_lazy_class_of`). Why: an attribute read on a pydantic model class goes through its
    metaclass' `__getattr__` hook (~4x a plain class attribute's cost), and a first read took
    a dozen of them; read through an instance, a class attribute costs a plain one's."""

    __slots__ = (
        "base",
        "classes",
        "field",
        "fields",
        "item",
        "items",
        "nested",
        "owner_model",
        "path",
        "report",
    )

    def __init__(
        self,
        base: type[BaseModel],
        item: bool,
        field: FieldBuild | None,
        nested: NestedRaw | None,
        items: ItemsRaw | None,
    ) -> None:
        self.base = base
        self.fields = frozenset(base.model_fields)
        self.item = item
        self.field = field
        self.nested = nested
        self.items = items
        self.report: Callable[[InvalidObjectError], None] | None = None
        self.owner_model: type[BaseModel] | None = None
        self.path = ""
        # The lazy classes of its fields' nested objects (`_nested_class`), by field name.
        self.classes: dict[str, Any] = {}

    def but(self, **changes: Any) -> _LazyClass:
        """A copy with `changes` (a subclass' own: its report hook, owner model, path)."""
        other = object.__new__(_LazyClass)
        for name in _LazyClass.__slots__:
            object.__setattr__(other, name, changes.get(name, getattr(self, name)))
        other.classes = {}  # the subclass' own nested classes (they tell its report hook)
        return other


def _lazy_class_of(obj: object) -> _LazyClass | None:
    """`obj`'s lazy class' _LazyClass, or None when `obj` is not lazy (a built model too)."""
    return getattr(obj, "__kubeinformers_lazy__", None)


class _Identity(msgspec.Struct, gc=False):
    name: str | None = None
    namespace: str | None = None
    resourceVersion: str | None = None
    uid: str | None = None
    labels: dict[str, str] | None = None


_NULL = msgspec.Raw(b"null")


class _ItemHead(msgspec.Struct, gc=False):
    metadata: msgspec.Raw = _NULL


_decode_head = msgspec.json.Decoder(_ItemHead).decode
_decode_identity = msgspec.json.Decoder(_Identity).decode


def _share_repeated_strings(identity: _Identity) -> None:
    """One copy of the namespace and of each label value among all cached objects.

    Thousands of objects share a namespace and a few label values (app, tier, ...): interned,
    each is stored once instead of once per object (~50 bytes apiece). msgspec already shares
    label keys. Values stay equal strings; only their identity changes.
    """
    namespace = identity.namespace
    if namespace is not None:
        identity.namespace = sys.intern(namespace)
    labels = identity.labels
    if labels:
        for key, value in labels.items():
            labels[key] = sys.intern(value)


def is_lazy(obj: object) -> bool:
    """Whether `obj` is a lazy object not yet built (materialised objects are plain models)."""
    return getattr(obj, "__kubeinformers_lazy__", None) is not None


def materialize(obj: M) -> M:
    """Build `obj` now if it is lazy (raising InvalidObjectError if it cannot be); return it."""
    if is_lazy(obj):
        _materialise(obj)
    return obj


def lazy_twin(obj: M) -> M:
    """A fresh lazy object over the same raw bytes as `obj` if `obj` is lazy, else `obj`.

    The twin shares `obj`'s raw bytes (not a copy), its identity values and the fields built
    alone so far (K13), and its metadata once built (or set by a transform); a lazy metadata
    gets its own lazy twin. It is of the same class, reads and compares equal to `obj`, and
    builds on its own first read: a read of `obj` no longer inflates it, nor it `obj`. What a
    lagging handler's buffer holds (G12). Taken under the build lock (K10): a twin is taken
    of a lazy object, never of one half built. An invalid object is reported once, by whichever
    of `obj` and its twins is built first (K11).
    """
    cls = type(obj)
    info = _lazy_class_of(obj)
    if info is None:
        return obj
    with _LOCK:
        if type(obj) is not cls:  # built meanwhile: nothing raw is left to share
            return obj
        twin: object = object.__new__(cls)
        set_slot = object.__setattr__
        state = _state_of(obj)
        if _REPORTED not in state and info.report is not None:
            state[_REPORTED] = [False]  # an invalid object is reported once, by either (K11)
        # Attribute by attribute: a lazy metadata's dict then shares its keys (see assemble).
        for name, value in state.items():
            set_slot(twin, name, value)
        set_slot(twin, _RAW_SLOT, _read_raw_slot(obj))
        if info.item:
            meta = _read_meta_slot(obj)
            if meta is not None and type(meta) is not dict:
                meta = lazy_twin(meta)  # the RLock is re-entered
            set_slot(twin, _META_SLOT, meta)
    return typing.cast(M, twin)


def strip_raw_managed_fields(obj: object) -> bool:
    """Drop `metadata.managedFields` from a lazy item's raw bytes, before anything of its
    metadata is built (so nothing is built for it: issue 26); False, changing nothing, when
    `obj` is no such object (built, its metadata built, compact, or bytes that are no item),
    for the caller to strip the built model instead."""
    cls = type(obj)
    if _lazy_class_of(obj) is None:
        return False
    strip = getattr(cls, "__kubeinformers_strip__", None)
    if strip is None:
        return False
    with _LOCK:
        if type(obj) is not cls:
            return False
        meta = _read_meta_slot(obj)
        if meta is not None and (type(meta) is dict or not is_lazy(meta)):
            return False  # a built metadata: the model is stripped
        raw = _read_raw_slot(obj)
        try:
            stripped = strip(raw)
        except ValueError:
            return False
        if stripped is not raw:
            object.__setattr__(obj, _RAW_SLOT, stripped)
            if meta is not None:
                object.__setattr__(meta, _RAW_SLOT, stripped)
    return True


def _key_of(identity: dict[str, Any]) -> str:
    name = identity.get("name") or ""
    namespace = identity.get("namespace")
    return f"{namespace}/{name}" if namespace else name


def _materialise(obj: Any) -> None:
    cls = type(obj)
    info = _lazy_class_of(obj)
    if info is None:
        return  # another thread got here first
    base = info.base
    with _LOCK:
        if type(obj) is not cls:
            return
        read_burst()  # the collector stays off while first reads keep coming (issue 26)
        state = _state_of(obj)  # the metadata's fields; {} for an item
        error = state.get(_ERROR)
        if error is not None:
            raise error
        raw = _read_raw_slot(obj)
        partly: InvalidObjectError | None = None
        # Fields built on their own before (issue 26) stay the objects handed out (they
        # validated alone, so a build field by field finds them valid too); the rest is built
        # without them when the format can (not validated twice).
        names = info.fields
        built = {k: v for k, v in state.items() if k in names}
        # Nested lazy objects handed out (K19) are built with the rest, in one pass over the
        # item's bytes (cheaper than building each one's rest on its own), then take their
        # part of it in place, keeping what they built alone.
        parts = {k: v for k, v in built.items() if is_lazy(v)} if built and info.item else {}
        if parts:
            built = {k: v for k, v in built.items() if k not in parts}
        # Lazy objects handed out inside the fields built alone (a list's lazy items, objects
        # nested in a nested object: K20) are built after this object, each in place.
        held = _lazy_in(built.values())
        for part in parts.values():
            part_names = _lazy_class_of_class(type(part)).fields
            held += _lazy_in(v for k, v in _state_of(part).items() if k in part_names)
        try:
            full = _build(cls, base, raw, built.keys(), parts)
        except ValidationError as exc:
            owner = info.owner_model
            if info.item:
                meta = object.__getattribute__(obj, _META_SLOT)
                fields = _state_of(meta) if meta is not None else {}
            elif owner is not None:  # a nested lazy object (K19): its item's identity
                meta = state.get(_OWNER)
                fields = _state_of(meta) if meta is not None else {}
            else:
                fields = state
            key = _key_of(fields)
            try:  # field by field: only the fields that do not validate stay unreadable
                full, partly = build_lenient(
                    base,
                    cls.__kubeinformers_data__(raw),
                    key,
                    root=owner,
                    path=state.get(_PATH) or info.path,
                )
            except (ValueError, TypeError):  # no object at all: nothing reads past identity
                invalid = InvalidObjectError(owner or base, key, exc)
                state[_ERROR] = invalid
                report = info.report
                if report is not None and _claim_report(state):
                    report(invalid)
                raise invalid from exc
        if built:
            full.__dict__.update(built)
        for name, part in parts.items():
            _take_part(part, full, name)
        if info.item:
            # The metadata handed out stays the item's: a lazy one becomes the built one in
            # place, one built (or changed by a transform) before is kept as it is.
            meta = object.__getattribute__(obj, _META_SLOT)
            built_meta = full.__dict__.get("metadata")
            if meta is not None and built_meta is not None and type(meta) is not dict:
                if is_lazy(meta):
                    _adopt(meta, built_meta)
                full.__dict__["metadata"] = meta
        # Publish the whole state, then switch the class, so that a concurrent reader never
        # sees the model's class with a state that is not the model's. Until the switch the
        # lazy class answers: its other methods wait for this build (the lock), and its
        # `metadata` reads the instance dict once the built metadata is there, else the slot,
        # which is why the slot can be reset before the switch.
        _publish(obj, "__pydantic_fields_set__", full.__pydantic_fields_set__)
        _publish(obj, "__pydantic_extra__", full.__pydantic_extra__)
        _publish(obj, "__dict__", full.__dict__)
        _publish(obj, _META_SLOT, full.__pydantic_private__)
        _publish(obj, "__class__", type(full))
        tell = partly is not None and _claim_report(state)
        for lazy in held:
            try:
                _materialise(lazy)
            except InvalidObjectError:
                pass  # no object at all: it raises where it is read (K11), reported once
    if tell:
        report = info.report
        if report is not None:
            report(typing.cast(InvalidObjectError, partly))


def _lazy_in(values: Iterable[Any]) -> list[Any]:
    """The lazy objects among `values` and among the items of the lists among them."""
    found = []
    for value in values:
        if type(value) is list:
            found += [item for item in value if is_lazy(item)]
        elif is_lazy(value):
            found.append(value)
    return found


def _build(
    cls: Any, base: type[BaseModel], raw: Any, built: Collection[str], parts: dict[str, Any]
) -> BaseModel:
    """The model of a lazy object's raw bytes, without the fields it `built` alone (the
    caller puts them back) and, when the format can, without transcoding nor validating
    again what its nested objects (`parts`, K19) built; raises ValidationError."""
    with_parts = cls.__kubeinformers_with__ if parts else None
    if with_parts is not None:
        try:
            full: BaseModel = with_parts(base, raw, built, _parts_of(parts))
        except FieldUnavailable:
            pass
        else:
            if built:  # the fields set is the whole object's: the fields built alone were sent
                _publish(full, "__pydantic_fields_set__", full.model_fields_set | set(built))
            return full
    without = cls.__kubeinformers_without__ if built else None
    if without is not None:
        full = without(base, raw, built)
        _publish(full, "__pydantic_fields_set__", full.model_fields_set | set(built))
        return full
    return typing.cast(BaseModel, cls.__kubeinformers_build__(base, raw))


def _parts_of(parts: dict[str, Any]) -> dict[str, tuple[type[BaseModel], Any, dict[str, Any]]]:
    """What ItemWith takes of nested lazy objects: their model, raw bytes and built fields."""
    out: dict[str, tuple[type[BaseModel], Any, dict[str, Any]]] = {}
    for name, part in parts.items():
        info = _lazy_class_of_class(type(part))
        state = _state_of(part)
        built = {k: v for k, v in state.items() if k in info.fields}
        out[name] = (info.base, _read_raw_slot(part), built)
    return out


def _take_part(part: Any, full: BaseModel, name: str) -> None:
    """The nested lazy object `part` (K19), handed out as the item's field `name`, becomes
    the model `full` (the item's whole build) has there, in place, keeping the fields it
    built alone; `full` then holds `part`. Under _LOCK. Where the build has no model (a
    value that does not validate, which raises when read: K11) `full` keeps that."""
    sub = full.__dict__.get(name)
    if not isinstance(sub, BaseModel):
        return
    state = _state_of(part)
    names = _lazy_class_of_class(type(part)).fields
    alone = {k: v for k, v in state.items() if k in names}
    if alone:
        sub.__dict__.update(alone)  # they validated alone: the whole build found them valid
    _adopt(part, sub)
    full.__dict__[name] = part


def _claim_report(state: dict[str, Any]) -> bool:
    """Whether a lazy object whose state is `state` reports its invalidity: yes, unless a twin
    of it (lazy_twin, sharing its report cell) did already. Under _LOCK."""
    cell = state.get(_REPORTED)
    if cell is None:
        return True
    if cell[0]:
        return False
    cell[0] = True
    return True


def _adopt(lazy: Any, built: BaseModel) -> None:
    """Turn the lazy object `lazy` into the model `built` in place (under _LOCK), as
    _materialise does with its own build."""
    _publish(lazy, "__pydantic_fields_set__", built.__pydantic_fields_set__)
    _publish(lazy, "__pydantic_extra__", built.__pydantic_extra__)
    _publish(lazy, "__dict__", built.__dict__)
    _publish(lazy, _META_SLOT, built.__pydantic_private__)
    _publish(lazy, "__class__", type(built))


ModelBuild = Callable[[type[BaseModel], bytes], BaseModel]
"""Builds a model of the given class from a lazy object's raw bytes (raising ValidationError)."""


class FieldUnavailable(LookupError):
    """A field of a lazy item cannot be built on its own (absent, or not a message field of
    the wire format): the whole model is built instead."""


class FieldAbsent(FieldUnavailable):
    """A field of a lazy object is absent from its raw bytes as the server's JSON has it (not
    sent): it reads as its default, None, and is not in the fields set."""


FieldBuild = Callable[[type[BaseModel], str, bytes], Any]
"""Builds the value of one top-level field (by its Python name) of a model from a lazy
item's raw bytes: raises FieldUnavailable when it cannot alone, ValidationError when the
value does not validate (the whole model is then built, as any invalid object is)."""


@functools.cache
def field_adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """The validator of `model`'s field `name` alone: what validating the model does to it."""
    info = model.model_fields[name]
    annotation: Any = info.annotation
    if info.metadata:
        annotation = Annotated[annotation, *info.metadata]
    return TypeAdapter(annotation)


@functools.cache
def field_validators(
    model: type[BaseModel], name: str
) -> tuple[Callable[[Any], Any], Callable[[bytes], Any]]:
    """`field_adapter`'s validate_python and validate_json, called on its core validator
    directly once it is built (the adapter's wrappers add a few hundred ns to every first
    read of a field)."""
    adapter = field_adapter(model, name)
    validator = adapter.validator
    if isinstance(validator, SchemaValidator):
        return validator.validate_python, validator.validate_json
    return adapter.validate_python, adapter.validate_json


@functools.cache
def field_alias(model: type[BaseModel], name: str) -> str:
    """The API name of `model`'s field `name` (`model_fields` is a property that builds its
    answer on every read: too slow for every first read of a field)."""
    return model.model_fields[name].alias or name


ItemWithout = Callable[[type[BaseModel], bytes, Collection[str]], BaseModel]
"""Builds a model of the given class from a lazy item's raw bytes as if the named top-level
fields (Python names) were absent: the rest of an item whose fields were built alone (K13),
which the whole build keeps, so that it does not transcode and validate them again."""

ModelData = Callable[[bytes], Any]
"""The JSON-shaped value of a lazy object's raw bytes (for a build field by field), raising
ValueError when they hold none."""


@dataclass(frozen=True)
class RawFormat:
    """How lazy objects of one wire format are built: `item` builds the whole object from its
    raw bytes, `metadata` the object's metadata model from the same bytes; `item_data` and
    `metadata_data` give their JSON-shaped values, built field by field when a build fails
    (runtime.codec.drift)."""

    item: ModelBuild
    metadata: ModelBuild
    item_data: ModelData
    metadata_data: ModelData
    field: FieldBuild | None = None  # one top-level field of an item on its own (issue 26)
    # The whole item but the named top-level fields (left absent), once they are built alone.
    item_without: ItemWithout | None = None
    # The item's raw bytes without metadata.managedFields (ValueError when they are no item).
    strip_managed_fields: Callable[[bytes], bytes] | None = None
    # A top-level field that is a model, as a nested lazy object (K19): its model's format
    # and its raw bytes (raising FieldUnavailable when it cannot be one).
    nested: NestedRaw | None = None
    # The whole item but the named top-level fields, its nested objects' parts holding the
    # fields they built (K19); FieldUnavailable when it cannot (the whole item is built).
    item_with: ItemWith | None = None
    # A field that is a list of models, as lazy objects (K20): its items' format and their
    # raw bytes, or None and the list built when they are small (see ItemsRaw).
    items: ItemsRaw | None = None


ItemWith = Callable[
    [
        type[BaseModel],
        bytes,
        Collection[str],
        dict[str, tuple[type[BaseModel], Any, dict[str, Any]]],
    ],
    BaseModel,
]
"""Builds a model of the given class from a lazy item's raw bytes as if the named top-level
fields (Python names) were absent, each nested lazy object's field (by Python name: its model,
its raw bytes, its fields built alone by Python name) holding those fields as they are, the
rest of it built from its bytes: what a whole read of an item read in part builds (K19),
without transcoding nor validating again what was built."""


NestedRaw = Callable[[type[BaseModel], str, Any], tuple[RawFormat, Any, int]]
"""The format, raw bytes and size of a lazy object's field `name` of `model`, itself a model,
for a nested lazy object of it (K19, K20); FieldUnavailable when the format cannot give them
(FieldAbsent when the field was not sent)."""

ItemsRaw = Callable[[type[BaseModel], str, Any], tuple["RawFormat | None", list[Any]]]
"""The items' format and each item's raw bytes of a lazy object's field `name` of `model`, a
list of models, for lazy objects of them (K20); when its items take less than LAZY_MIN_BYTES
each on average, None and the list built as `field` builds it (one pass over the bytes, not
two); FieldUnavailable when the format cannot give them (absent, null, an item no object)."""


def _unpacking(build: ModelBuild, unpack: Callable[[bytes], bytes]) -> ModelBuild:
    """`build` of the bytes `unpack` restores from a compact object's raw slot."""

    def unpack_and_build(model: type[BaseModel], packed: bytes) -> BaseModel:
        return build(model, unpack(packed))

    return unpack_and_build


def _unpacking_data(data: ModelData, unpack: Callable[[bytes], bytes]) -> ModelData:
    def unpack_and_read(packed: bytes) -> Any:
        return data(unpack(packed))

    return unpack_and_read


def _unpacking_field(
    field: FieldBuild | None, unpack: Callable[[bytes], bytes]
) -> FieldBuild | None:
    if field is None:
        return None

    def unpack_and_build(model: type[BaseModel], name: str, packed: bytes) -> Any:
        return field(model, name, unpack(packed))

    return unpack_and_build


def _validate_json_item(model: type[BaseModel], raw: bytes) -> BaseModel:
    return model.model_validate_json(raw if type(raw) is bytes else bytes(raw))


def _validate_json_metadata(model: type[BaseModel], raw: bytes) -> BaseModel:
    return model.model_validate_json(bytes(_decode_head(raw).metadata))


def _json_item_data(raw: bytes) -> Any:
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise ValueError(str(exc)) from None


def _json_metadata_data(raw: bytes) -> Any:
    return _json_item_data(bytes(_decode_head(raw).metadata))


@functools.cache
def _json_top_level(model: type[BaseModel]) -> Callable[[bytes], Any]:
    """A decoder of an item's top-level fields as raw JSON slices (absent ones UNSET)."""
    fields = [(name, msgspec.Raw | msgspec.UnsetType, msgspec.UNSET) for name in model.model_fields]
    rename = {name: info.alias or name for name, info in model.model_fields.items()}
    struct = msgspec.defstruct(f"_{model.__name__}TopLevel", fields, rename=rename, gc=False)
    return msgspec.json.Decoder(struct).decode


# The last objects split into their top-level fields, the latest first: a reconcile reads
# `spec`, its containers' fields (each container split), then `status` of the same item,
# which the item's split, still here, serves (a pod's is ~45,000 instructions, managedFields
# being most of its bytes). Builds run under _LOCK.
_SPLITS_KEPT = 4
_splits: list[tuple[Any, type[BaseModel], Any]] = []


def _json_part(model: type[BaseModel], name: str, raw: bytes) -> msgspec.Raw:
    """The raw JSON of the object's top-level field `name` (FieldAbsent when not sent,
    FieldUnavailable when `raw` is no JSON object), from a recent split of the same object."""
    top = None
    for split in _splits:
        if split[0] is raw and split[1] is model:
            top = split[2]
            break
    if top is None:
        try:
            top = _json_top_level(model)(raw)
        except msgspec.DecodeError:
            raise FieldUnavailable(name) from None
        _splits.insert(0, (raw, model, top))
        del _splits[_SPLITS_KEPT:]
    part: msgspec.Raw | msgspec.UnsetType = getattr(top, name)
    if part is msgspec.UNSET:
        raise FieldAbsent(name)
    return part


def _json_field(model: type[BaseModel], name: str, raw: bytes) -> Any:
    return field_validators(model, name)[1](bytes(_json_part(model, name, raw)))


def _json_nested(model: type[BaseModel], name: str, raw: bytes) -> tuple[RawFormat, Any, int]:
    """The JSON format, raw object and size of the object's field `name` (K19, K20): its slice
    of the item's bytes, a msgspec.Raw over them (no copy)."""
    part = _json_part(model, name, raw)
    size = _json_object_size(part)
    if not size:
        raise FieldUnavailable(name)  # null, or no object: validated as a value
    return JSON_OBJECT, part, size


_decode_raw_items = msgspec.json.Decoder(list[msgspec.Raw]).decode


def _json_items(
    model: type[BaseModel], name: str, raw: bytes
) -> tuple[RawFormat | None, list[Any]]:
    """The JSON format and raw objects of the object's list field `name` (K20): each item's
    slice of the item's bytes; small ones validated as `_json_field` does."""
    part = _json_part(model, name, raw)
    try:
        items = _decode_raw_items(part)
    except msgspec.DecodeError:
        raise FieldUnavailable(name) from None  # null, or no list: validated as a value
    if not worth_lazy(len(memoryview(part)), len(items)):
        return None, field_validators(model, name)[1](bytes(part))
    if not all(_json_object_size(item) for item in items):
        raise FieldUnavailable(name)  # a null item, or no object: validated as a value
    return JSON_OBJECT, items


def _json_object_size(part: msgspec.Raw) -> int:
    """The size of `part` when it is a JSON object, else 0 (null, or another value)."""
    view = memoryview(part)
    return len(view) if view and view[0] == 0x7B else 0  # "{"


_decode_members = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_encode_key = msgspec.json.encode


def _json_object(members: dict[str, msgspec.Raw]) -> bytes:
    """A JSON object of `members`, each value its bytes as they were."""
    return b"{" + b",".join(_encode_key(k) + b":" + bytes(v) for k, v in members.items()) + b"}"


def _json_strip_managed_fields(raw: bytes) -> bytes:
    """`raw` (an item's JSON) without metadata.managedFields; `raw` itself if it has none.
    Every other member keeps its bytes and its place."""
    if b'"managedFields"' not in raw:
        return raw
    try:
        item = _decode_members(raw)
        meta_raw = item.get("metadata")
        if meta_raw is None or bytes(meta_raw)[:1] != b"{":
            return raw
        meta = _decode_members(meta_raw)
    except msgspec.DecodeError as exc:
        raise ValueError(str(exc)) from None
    if meta.pop("managedFields", None) is None:
        return raw
    item["metadata"] = msgspec.Raw(_json_object(meta))
    return _json_object(item)


def _json_item_without(model: type[BaseModel], raw: bytes, names: Collection[str]) -> BaseModel:
    try:
        members = _decode_members(raw)
    except msgspec.DecodeError:  # the whole build says precisely what is wrong
        return model.model_validate_json(raw if type(raw) is bytes else bytes(raw))
    for name in names:
        members.pop(field_alias(model, name), None)
    return model.model_validate_json(_json_object(members))


JSON = RawFormat(
    item=_validate_json_item,
    metadata=_validate_json_metadata,
    item_data=_json_item_data,
    metadata_data=_json_metadata_data,
    field=_json_field,
    strip_managed_fields=_json_strip_managed_fields,
    item_without=_json_item_without,
    nested=_json_nested,
    items=_json_items,
)
"""The raw bytes are the item's JSON."""

JSON_OBJECT = RawFormat(
    item=_validate_json_item,
    metadata=_validate_json_item,
    item_data=_json_item_data,
    metadata_data=_json_item_data,
    field=_json_field,
    item_without=_json_item_without,
    nested=_json_nested,
    items=_json_items,
)
"""A nested lazy object's format over JSON (K19, K20): its raw bytes are one JSON object."""


def _lazy_getattr(self: Any, item: str) -> Any:
    if item == "__dict__":  # never materialise for the instance dict itself
        raise AttributeError(item)
    _materialise(self)
    return getattr(self, item)


class _LazyField:
    """A field of a lazy class whose fields are built on their own (K13, K19): its first read
    builds it (`__get__`); once built, the instance dict holds it and answers (a non-data
    descriptor yields to it). Why a descriptor: a read past a missing attribute goes through
    an AttributeError and `__getattr__`, ~2,000 instructions more on every first read. It
    holds what that read needs to know of the field, found once per class."""

    __slots__ = ("alias", "list_model", "model", "name", "none_when_absent")

    def __init__(self, base: type[BaseModel], name: str) -> None:
        self.name = name
        self.alias = field_alias(base, name)
        self.model = _nested_model(base, name)  # a model field's model (K19)
        self.list_model = list_item_model(base, name)  # a list of models' item model (K20)
        self.none_when_absent = _reads_none_when_absent(base, name)

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        """A lazy item's (or nested lazy object's) field not built yet: build that field
        alone, when its class can (the rest stays raw until read: K13), else the whole model.
        A field that is itself a model, or a list of them, comes as nested lazy objects when
        the format can (K19, K20). One function: it runs on every first read of a field."""
        if obj is None:
            raise AttributeError(self.name)  # as on the model's class: fields are no attributes
        cls = type(obj)
        info: _LazyClass | None = getattr(obj, "__kubeinformers_lazy__", None)  # _lazy_class_of
        name = self.name
        if info is None:  # built meanwhile
            return getattr(obj, name)
        with _LOCK:
            if type(obj) is not cls:  # built meanwhile
                return getattr(obj, name)
            state = _state_of(obj)
            if name in state:
                return state[name]
            is_item = info.item
            if not state and is_item:
                holder = _item_state_holder(info.base)
                if holder is not None:  # an empty dict sharing the keys it will hold (see there)
                    state = holder().__dict__
                    _set_state(obj, state)
            if _ERROR not in state:
                read_burst()
                raw = _read_raw_slot(obj)
                try:
                    if self.model is not None and info.nested is not None:
                        nested = _nested_object(obj, info, self, raw, state)
                        if nested is not None:
                            return nested
                    elif self.list_model is not None and info.items is not None:
                        items = _lazy_items(obj, info, self, raw, state)
                        if items is not None:
                            return items
                    assert info.field is not None
                    value = info.field(info.base, name, raw)
                except FieldAbsent:
                    if self.none_when_absent:
                        return None  # not sent: the default, and not in the fields set
                except (FieldUnavailable, ValidationError, ValueError):
                    pass  # the whole model: it says precisely what is wrong
                else:
                    state[name] = value
                    return value
        _materialise(obj)
        return getattr(obj, name)


_SHARED_KEYS_MAX = 30  # CPython shares no more keys than this


@functools.cache
def _item_state_holder(model: type[BaseModel]) -> type | None:
    """A class whose new instances' dicts are empty dicts sharing the keys a lazy item of
    `model` holds (its fields read alone, `_ERROR`, `_REPORTED`), or None where that is no
    smaller. Why: the dict an instance of a lazy class gets shares that class's keys, which
    a few fields stored in it turn into a dict of its own (272 bytes for a pod's `spec` and
    `status`, 96 this way). Keyed by the model, not the lazy class: lazy classes are made at
    run time, one per decoder, and must not be kept (K9)."""
    names = [*model.model_fields, _ERROR, _REPORTED]
    if len(names) > _SHARED_KEYS_MAX:
        return None
    holder = key_sharing_class(f"{model.__name__}LazyState", names)
    probe = holder().__dict__
    plain: dict[str, Any] = {}
    for name in names[:2]:
        probe[name] = plain[name] = None
    if sys.getsizeof(probe) >= sys.getsizeof(plain):
        return None
    return holder


@functools.cache
def _reads_none_when_absent(model: type[BaseModel], name: str) -> bool:
    info = model.model_fields[name]
    return not info.is_required() and info.default is None and info.default_factory is None


@functools.cache
def _nested_model(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    """The model of `model`'s field `name` when it is one (`X | None`), else None."""
    return _unwrap_model(model.model_fields[name].annotation)


@functools.cache
def list_item_model(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    """The item model of `model`'s field `name` when it is a list of models, with no
    constraint of its own (`list[X] | None`), else None."""
    info = model.model_fields[name]
    if info.metadata:
        return None  # a constraint on the list is checked by building it whole
    annotation = info.annotation
    if typing.get_origin(annotation) is not list:  # `list[X] | None`: the list alone
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        annotation = args[0] if len(args) == 1 else None
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation) or (None,)
        if isinstance(item, type) and issubclass(item, BaseModel):
            return item
    return None


def _child_state(obj: Any, info: _LazyClass, state: dict[str, Any], child: Any, path: str) -> None:
    """Hand the nested lazy object `child` of `obj` (whose instance dict is `state`) what it
    needs to name itself in errors and to be reported once (K11, K19, K20). Under _LOCK."""
    set_slot = object.__setattr__
    if info.item:
        set_slot(child, _OWNER, _read_meta_slot(obj))
    else:
        set_slot(child, _OWNER, state.get(_OWNER))
        set_slot(child, _PATH, path)
    if info.report is not None:
        cell = state.get(_REPORTED)
        if cell is None:
            cell = state[_REPORTED] = [False]
        set_slot(child, _REPORTED, cell)  # the item and its parts are reported once (K11)


def _child_path(info: _LazyClass, state: dict[str, Any], field: _LazyField) -> str:
    """The path from the item of the `field` of a lazy object (`spec.containers`): one str
    for every object at that path, in every item, as the identity's shared strings are
    (sys.intern), not ~70 bytes per object. Paths are as many as the schema's fields and its
    lists' lengths, whatever the number of objects: kept, even immortal, they cannot grow."""
    if info.item:
        return field.alias
    return sys.intern(f"{state.get(_PATH) or info.path}.{field.alias}")


def _nested_object(
    obj: Any, info: _LazyClass, field: _LazyField, raw: Any, state: dict[str, Any]
) -> Any:
    """The nested lazy object for the lazy object `obj`'s `field` (K19, K20), kept in its
    `state`; below an item's own fields, the model built (and kept) when it is smaller than
    LAZY_MIN_BYTES. None when the field is no model or the format cannot give it raw (then
    built alone by the format's `field`: absent, null). Under _LOCK."""
    name, model = field.name, field.model
    assert model is not None and info.nested is not None
    item = info.item
    try:
        fmt, sub_raw, size = info.nested(info.base, name, raw)
    except FieldUnavailable:
        if item:
            raise  # an item's own field the format cannot give: the whole item is built
        return None
    if not item and not worth_lazy(size):
        built = state[name] = fmt.item(model, sub_raw)
        return built
    nested = object.__new__(_nested_class(info, name, model, fmt))
    _set_raw_slot(nested, sub_raw)
    _child_state(obj, info, state, nested, _child_path(info, state, field))
    state[name] = nested
    return nested


def _lazy_items(
    obj: Any, info: _LazyClass, field: _LazyField, raw: Any, state: dict[str, Any]
) -> list[Any] | None:
    """The list of lazy objects for the lazy object `obj`'s `field` (K20), kept in its
    `state`; the list of models built (and kept) when they are smaller than LAZY_MIN_BYTES on
    average. None when the field is no list of models or the format cannot give its items
    raw (then built alone by the format's `field`: absent, null). Under _LOCK."""
    name, model = field.name, field.list_model
    assert model is not None and info.items is not None
    try:
        fmt, raws = info.items(info.base, name, raw)
    except FieldUnavailable:
        return None
    if fmt is None:  # small items: built, as the format's `field` would
        built: list[Any] = raws
        state[name] = built
        return built
    item_cls = _nested_class(info, name, model, fmt)
    path = _child_path(info, state, field)
    items = []
    for index, item_raw in enumerate(raws):
        item = object.__new__(item_cls)
        _set_raw_slot(item, item_raw)
        _child_state(obj, info, state, item, sys.intern(f"{path}[{index}]"))  # _child_path
        items.append(item)
    state[name] = items
    return items


def _nested_class(info: _LazyClass, name: str, model: type[BaseModel], fmt: RawFormat) -> Any:
    """The lazy class of the field `name` (or of its items, for a list) of the lazy class
    whose _LazyClass is `info`: one per class and field, telling the item class's
    `on_invalid` hook (K11). Under _LOCK."""
    known = info.classes
    nested = known.get(name)
    if nested is None:
        nested = _lazy_class(
            model,
            fmt.item,
            fmt.item_data,
            False,
            fmt.field,
            None,
            fmt.item_without,
            fmt.nested,
            None,
            fmt.items,
        )
        report = info.report
        base = info.base
        owner_model = info.owner_model or base
        # An item's own fields' path; below them each object has its own (_PATH).
        path = field_alias(base, name) if info.item else ""
        namespace: dict[str, Any] = {
            "__slots__": (),
            "__module__": nested.__module__,
            "__qualname__": nested.__qualname__,
            "__kubeinformers_lazy__": _lazy_class_of_class(nested).but(
                report=report, owner_model=owner_model, path=path
            ),
        }
        nested = known[name] = type(nested.__name__, (nested,), namespace)
    return nested


def _materialising(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        _materialise(self)
        return getattr(self, name)(*args, **kwargs)

    method.__name__ = name
    return method


def _lazy_eq(self: Any, other: object) -> Any:
    _materialise(self)
    if is_lazy(other):
        _materialise(other)
    return self == other


def _lazy_item_metadata(self: Any) -> Any:
    """A lazy item's `metadata`: the lazy metadata in its slot; once a build has reset the
    slot to the model's private state (None or a dict; just before the class switch), the
    built model's, which the instance dict holds by then."""
    meta = _read_meta_slot(self)
    if meta is None or type(meta) is dict:
        return _state_of(self).get("metadata")
    return meta


def _lazy_instance_dict(self: Any) -> dict[str, Any]:
    """A lazy object's `__dict__` read from outside: the built model's (it is built first).
    Why: pydantic's serializer reads a model's fields from its `__dict__`, so a lazy object
    dumped as another model's field or through a TypeAdapter (a web framework's response, a
    list of cached objects) would otherwise dump only what was read so far."""
    _materialise(self)
    return typing.cast(dict[str, Any], _state_of(self))


def _lazy_fields_set(self: Any) -> set[str]:
    _materialise(self)
    return typing.cast(set[str], self.model_fields_set)


def _new_lazy_class(
    base: type[BaseModel],
    build: ModelBuild,
    data: ModelData,
    item: bool,
    field: FieldBuild | None = None,
    strip: Callable[[bytes], bytes] | None = None,
    without: ItemWithout | None = None,
    nested: NestedRaw | None = None,
    item_with: ItemWith | None = None,
    items: ItemsRaw | None = None,
) -> type[BaseModel]:
    namespace: dict[str, Any] = {
        "__slots__": (),
        "__module__": base.__module__,
        # The model's own names: logs, messages and `type(obj).__name__` read as the model.
        "__qualname__": base.__qualname__,
        # Any attribute the class does not answer (its fields are `_LazyField`s where it
        # builds them alone): the built model answers.
        "__getattr__": _lazy_getattr,
        "__eq__": _lazy_eq,
        "__hash__": None,
        "__kubeinformers_build__": staticmethod(build),
        "__kubeinformers_data__": staticmethod(data),
        "__kubeinformers_strip__": staticmethod(strip) if strip is not None else None,
        "__kubeinformers_without__": staticmethod(without) if without is not None else None,
        "__kubeinformers_with__": staticmethod(item_with) if item_with is not None else None,
        # What a first read of a field reads of the class; its subclasses' own (the builder's
        # on_invalid hook: `_reporting_class`; a nested object's owner and path: `_nested_class`)
        # are copies of it.
        "__kubeinformers_lazy__": _LazyClass(base, item, field, nested, items),
    }
    for name in _MATERIALISE_BEFORE:
        namespace[name] = _materialising(name)
    # The slots hold the lazy state: their public readers build the object first.
    namespace["model_fields_set"] = property(_lazy_fields_set)
    # So does the instance dict, which holds only what was read so far: what reads it from
    # outside (pydantic's serializer, for a field of another model or a TypeAdapter; vars())
    # gets the built model's.
    namespace["__dict__"] = property(_lazy_instance_dict)
    # type() on a pydantic model builds the subclass' schema once; the subclass adds no
    # field, so it validates exactly like the model (it is never validated itself).
    lazy = type(base.__name__, (base,), namespace)
    if item:
        # An item's `metadata` is read from its slot through a property (set after the class
        # is built: pydantic refuses a class attribute shadowing a field). Once built, the
        # model's own `metadata` in the instance dict is read, as the class is then the model.
        type.__setattr__(lazy, "metadata", property(_lazy_item_metadata))
    if field is not None:
        # Each other field a descriptor that builds it on first read (then the instance dict,
        # which a non-data descriptor yields to, answers): a read past a missing attribute
        # goes through an AttributeError and `__getattr__`, ~2,000 instructions more on every
        # first read of a field.
        for name in base.model_fields:
            if not (item and name == "metadata"):
                type.__setattr__(lazy, name, _LazyField(base, name))
    return lazy


# One lazy class per (model, build, item) shared by all builders; a compact store's builds
# close over its dictionary, so its classes are its own (`_new_lazy_class`).
_lazy_class = cache(_new_lazy_class)


def _reporting_class(lazy: type[BaseModel], report: Callable[[InvalidObjectError], None]) -> Any:
    """A builder's own subclass of `lazy` that tells `report` about invalid objects (a class
    attribute, so no cached object carries a reference to the hook)."""
    namespace: dict[str, Any] = {
        "__slots__": (),
        "__module__": lazy.__module__,
        "__qualname__": lazy.__qualname__,
        "__kubeinformers_lazy__": _lazy_class_of_class(lazy).but(report=report),
    }
    return type(lazy.__name__, (lazy,), namespace)


def _lazy_class_of_class(lazy: type[BaseModel]) -> _LazyClass:
    """The _LazyClass of the lazy class `lazy` (a subclass of it made, a whole build)."""
    info = type.__getattribute__(lazy, "__kubeinformers_lazy__")
    assert isinstance(info, _LazyClass)
    return info


def _unwrap_model(annotation: Any) -> type[BaseModel] | None:
    """The model class `X` of `X` or `X | None` (`Optional[X]`), else None (a union of
    anything else: which member a value is, only validation says)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    if typing.get_origin(annotation) is not list and len(args) == 1:
        (arg,) = args
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


class LazyModelBuilder(typing.Generic[M]):
    """Builds lazy instances of `model` from raw item bytes (one builder per informer).

    `supported` is False when `model` has no `metadata` model with the identity fields
    (name, namespace, resourceVersion, uid, labels); `build` then validates eagerly.
    `on_invalid` is told, once per object, when a lazy object fails validation. `raw_format`
    says what the raw bytes are (JSON unless told; the protobuf codec passes its own).
    `compactor`, when given, compresses the raw bytes each object keeps (the compact store,
    runtime.codec.compact); objects built before its dictionary exists keep them as they are.
    """

    def __init__(
        self,
        model: type[M],
        *,
        on_invalid: Callable[[InvalidObjectError], None] | None = None,
        raw_format: RawFormat = JSON,
        compactor: Compactor | None = None,
    ) -> None:
        self.model = model
        self.on_invalid = on_invalid
        self.raw_format = raw_format
        self.compactor = compactor
        self._meta_fields: tuple[tuple[str, str], ...] = ()
        self._identity_names: tuple[str, ...] = ()
        self._meta_class: type[BaseModel] | None = None
        self._item_class: type[BaseModel] | None = None
        # The classes of objects whose raw bytes are compressed (with a compactor).
        self._compact_meta_class: type[BaseModel] | None = None
        self._compact_item_class: type[BaseModel] | None = None
        meta_field = model.model_fields.get("metadata")
        meta_model = _unwrap_model(meta_field.annotation) if meta_field is not None else None
        if meta_model is not None:
            by_alias = {(f.alias or n): n for n, f in meta_model.model_fields.items()}
            if all(a in by_alias for a in _IDENTITY_FIELDS):
                self._meta_fields = tuple((a, by_alias[a]) for a in _IDENTITY_FIELDS)
                self._identity_names = tuple(by_alias[a] for a in IDENTITY_ORDER)
                self._meta_class = _lazy_class(
                    meta_model, raw_format.metadata, raw_format.metadata_data, False
                )
                self._item_class = _lazy_class(
                    model,
                    raw_format.item,
                    raw_format.item_data,
                    True,
                    raw_format.field,
                    raw_format.strip_managed_fields,
                    raw_format.item_without,
                    raw_format.nested,
                    raw_format.item_with,
                    raw_format.items,
                )
                if on_invalid is not None:
                    self._meta_class = _reporting_class(self._meta_class, on_invalid)
                    self._item_class = _reporting_class(self._item_class, on_invalid)
                if compactor is not None:
                    unpack = compactor.unpack
                    self._compact_meta_class = _new_lazy_class(
                        meta_model,
                        _unpacking(raw_format.metadata, unpack),
                        _unpacking_data(raw_format.metadata_data, unpack),
                        False,
                    )
                    self._compact_item_class = _new_lazy_class(
                        model,
                        _unpacking(raw_format.item, unpack),
                        _unpacking_data(raw_format.item_data, unpack),
                        True,
                        _unpacking_field(raw_format.field, unpack),
                    )
                    if on_invalid is not None:
                        self._compact_meta_class = _reporting_class(
                            self._compact_meta_class, on_invalid
                        )
                        self._compact_item_class = _reporting_class(
                            self._compact_item_class, on_invalid
                        )

    @property
    def supported(self) -> bool:
        return self._item_class is not None

    def build(self, raw: bytes) -> M:
        """A lazy `model` for one item's JSON bytes (copied if they are a view of a larger body)."""
        item_class, meta_class = self._item_class, self._meta_class
        if item_class is None or meta_class is None:
            return self._eager(raw)
        try:
            meta_raw = _decode_head(raw).metadata
            identity = None if meta_raw == b"null" else _decode_identity(meta_raw)
        except msgspec.DecodeError:
            return self._eager(raw)  # malformed identity: let the model say precisely why
        return self.assemble(bytes(raw), identity)

    def assemble(self, raw: bytes, identity: Any) -> M:
        """The lazy object for `raw` whose metadata identity was decoded already (`_Identity`,
        or None for a null metadata). Only for a `supported` builder."""
        raw, item_class, meta_class = self._kept(raw)
        set_slot = object.__setattr__
        meta = None
        if identity is not None:
            _share_repeated_strings(identity)
            meta = object.__new__(meta_class)
            # Attribute by attribute, not a dict assigned whole: the instance dict then shares
            # its keys with every other lazy metadata of the class (~130 bytes less each).
            for alias, name in self._meta_fields:
                set_slot(meta, name, getattr(identity, alias))
            _set_raw_slot(meta, raw)
        obj = object.__new__(item_class)
        _set_raw_slot(obj, raw)
        set_slot(obj, _META_SLOT, meta)
        return obj  # type: ignore[return-value]  # an instance of a subclass of the model

    def assemble_values(self, raw: bytes, identity: tuple[Any, ...] | None) -> M:
        """The lazy object for `raw` whose identity values were decoded already, in
        IDENTITY_ORDER (name, namespace, uid, resourceVersion, labels), or None when the
        object has no metadata. Only for a `supported` builder; `raw` is kept as is."""
        raw, item_class, meta_class = self._kept(raw)
        set_slot = object.__setattr__
        meta = None
        if identity is not None:
            meta = object.__new__(meta_class)
            # Set one by one, in IDENTITY_ORDER: a key-sharing instance dict, as in `assemble`.
            n0, n1, n2, n3, n4 = self._identity_names
            v0, v1, v2, v3, v4 = identity
            set_slot(meta, n0, v0)
            set_slot(meta, n1, v1)
            set_slot(meta, n2, v2)
            set_slot(meta, n3, v3)
            set_slot(meta, n4, v4)
            _set_raw_slot(meta, raw)
        obj = object.__new__(item_class)
        _set_raw_slot(obj, raw)
        set_slot(obj, _META_SLOT, meta)
        return obj  # type: ignore[return-value]  # an instance of a subclass of the model

    def train(self, raws: Iterable[bytes]) -> None:
        """Train the compactor's dictionary from a list page's items before they are built
        (a no-op without a compactor or once trained), so that every listed object is
        compressed."""
        if self.compactor is not None and self.supported:
            self.compactor.train(raws)

    def _kept(self, raw: bytes) -> tuple[bytes, type[BaseModel], type[BaseModel]]:
        """What a lazy object keeps of `raw` and its item and metadata classes: the deflated
        bytes and the compact classes when the compact store takes it, else `raw` as is."""
        item_class, meta_class = self._item_class, self._meta_class
        assert item_class is not None and meta_class is not None
        if self.compactor is not None:
            packed = self.compactor.pack(raw)
            if packed is not None:
                item_class, meta_class = self._compact_item_class, self._compact_meta_class
                assert item_class is not None and meta_class is not None
                return packed, item_class, meta_class
        return raw, item_class, meta_class

    def _eager(self, raw: bytes) -> M:
        if self.raw_format is not JSON:
            raise TypeError("LazyModelBuilder.build reads JSON; protobuf items use assemble_values")
        return self.model.model_validate_json(raw)
