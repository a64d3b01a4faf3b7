"""The base of every generated model, and the few wire types the runtime itself decodes.

One base model for all kinds: unknown fields are kept (servers newer than the spec lose
nothing), fields populate by name or alias, and serialise by alias (the API's spelling).

Models share their field sets: pydantic gives every model instance its own `set` of the
fields it was given, 23 sets and ~9.5 KB of a 25 KB pod, although a kind's objects have a
handful of distinct ones. Every set pydantic hands a KubeModel (validation, construction, a
copy, an unpickle) goes through `_share`, which keeps one `SharedFieldsSet` per distinct set
of fields (a `set` that refuses changes): no walk over the built objects, one call per model
as pydantic-core builds it. A model takes its own set again before a change (an assignment, a
deletion, `model_copy(update=...)`), so only a caller changing `model_fields_set` in place
sees the difference (a TypeError saying so).

The same setter gives each model a key-sharing instance dict (K21): pydantic-core builds a
dict with its own copy of the field names per instance; an equal dict whose names live once
per class holds only the values, a third of the size for a container.

A model with no declared fields (FieldsV1's trie of managed fields) holds its content as JSON
until read (K22, `free_form`).

And models without unknown fields share one empty, read-only mapping of them (K25,
`NO_EXTRA_FIELDS`) instead of an empty dict each; an unknown attribute set later gives the
model its own.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple, Self

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler
from pydantic_core import core_schema

from kubeinformers.runtime.api.free_form import keep_content_as_json


class SharedFieldsSet(set[str]):
    """The field set many cached models share (see the module's docstring): read-only."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "this model's fields set is shared with other models of the same shape; assign "
            "the field instead (which gives the model its own), or copy the set"
        )

    add = discard = remove = pop = clear = update = _refuse
    difference_update = intersection_update = symmetric_difference_update = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse


class NoExtraFields(dict[str, Any]):
    """The unknown fields of a model that has none, one object for all of them (K25): an
    empty dict that refuses additions. pydantic gives every model of a config with
    `extra="allow"` its own empty dict (64 bytes; 27 of a pod's 30 models have no unknown
    field). Setting an unknown attribute gives the model its own dict first."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "this model has no unknown fields and shares the empty mapping of them with other "
            "models; set the attribute instead (setattr(model, name, value)), which gives the "
            "model its own"
        )

    __setitem__ = update = setdefault = __ior__ = _refuse

    def __copy__(self) -> NoExtraFields:
        return self

    def __deepcopy__(self, memo: Any) -> NoExtraFields:
        return self

    def __reduce__(self) -> Any:
        return (_no_extra_fields, ())


def _no_extra_fields() -> NoExtraFields:
    """The one NoExtraFields (what an unpickled one becomes)."""
    return NO_EXTRA_FIELDS


NO_EXTRA_FIELDS = NoExtraFields()
_extra_slot = BaseModel.__dict__["__pydantic_extra__"]
_get_extra = _extra_slot.__get__
_set_extra = _extra_slot.__set__


_MAX_SHARED_SETS = 10_000  # distinct field sets kept; a kind has a few dozen
_shared_sets: dict[frozenset[str], SharedFieldsSet] = {}
_fields_set_slot = BaseModel.__dict__["__pydantic_fields_set__"]
_get_fields_set = _fields_set_slot.__get__
_set_fields_set = _fields_set_slot.__set__


# Models share their field names too (K21): pydantic-core gives every model instance a dict
# of its own keys (272 bytes for a 7-field condition, 832 for a container); a key-sharing
# dict, whose keys live once per class, holds only the values (128 and 272 bytes).
_dict_slot = BaseModel.__dict__["__dict__"]
_get_dict = _dict_slot.__get__
_set_dict = _dict_slot.__set__
_SHRINK_INSTANCES = 40  # see key_sharing_class


def key_sharing_class(name: str, names: list[str]) -> type:
    """A private class whose new instances' dicts share the keys `names` (PEP 412), with
    values sized for just them: CPython sizes a new instance's values for the keys its class
    has seen plus a margin that shrinks with every instance made. Callers check the size they
    get, since the layout is CPython's to change."""
    holder = type(name, (), {})
    first = holder()
    for key in names:
        setattr(first, key, None)
    for _ in range(_SHRINK_INSTANCES):
        holder()
    return holder


def _key_sharing_dict(cls: type[BaseModel]) -> dict[str, Any] | None:
    """A key-sharing dict of `cls`'s field names (values None), or None if it is no smaller.

    CPython shares the keys of the instance dicts of a class without `__slots__` (PEP 412)
    and sizes each new instance's values for the keys the class has seen plus a margin that
    shrinks with every instance made: a private class per model, given every field name once
    and then made enough instances of, yields dicts with values for exactly those names.
    Checked by size, since the layout is CPython's to change.
    """
    names = list(cls.model_fields)
    holder = key_sharing_class(f"{cls.__name__}Fields", names)
    last = holder()
    for name in names:
        setattr(last, name, None)
    keys: dict[str, Any] = last.__dict__
    if not names or sys.getsizeof(keys.copy()) >= sys.getsizeof(dict.fromkeys(names)):
        return None
    return keys


def _shared_set(fields_set: set[str]) -> SharedFieldsSet | None:
    """The one SharedFieldsSet equal to `fields_set` (None once _MAX_SHARED_SETS are kept)."""
    key = frozenset(fields_set)
    one = _shared_sets.get(key)
    if one is None and len(_shared_sets) < _MAX_SHARED_SETS:
        one = _shared_sets.setdefault(key, SharedFieldsSet(key))
    return one


class _Shape:
    """What `_share` gives the models of one class: the field set it gave last (most models
    of a class come with the same one, found by one set comparison instead of a lookup by a
    frozenset made per model) and the key-sharing dict of its fields (None: none smaller)."""

    __slots__ = ("keys", "last")

    def __init__(self, keys: dict[str, Any] | None) -> None:
        self.last: SharedFieldsSet | None = None
        self.keys = keys


# Per model class (never a lazy class, see _share): its _Shape.
_shapes: dict[type, _Shape] = {}
# A lazy object being built, its class switched next (see _share): nothing kept.
_LAZY_SHAPE = _Shape(None)


def _shape_of(cls: type[BaseModel]) -> _Shape:
    if getattr(cls, "__kubeinformers_lazy__", None) is not None:
        # Lazy classes are made at run time, a decoder's own holding its on_invalid hook
        # (K11): kept here, they would keep a dropped decoder and the informer the hook names
        # (its reflector, store, last error) for good (K9). Their models get their field set
        # and dict from the model's class once built.
        return _LAZY_SHAPE
    return _shapes.setdefault(cls, _Shape(_key_sharing_dict(cls)))


def _share(model: BaseModel, fields_set: Any) -> None:
    """Store `fields_set` in `model`'s slot, a set as the shared one equal to it (K15), and
    give the model a key-sharing dict of its fields (K21).

    KubeModel's `__pydantic_fields_set__` setter: pydantic-core sets the slot through it for
    every model it validates (after the dict), pydantic for a construction, a copy, an
    unpickle. Anything else (a lazy object's raw bytes, which live in the same slot until it
    is built) is stored as it is. Runs once per model built: every step here is paid by every
    model, so it is kept to the fewest calls (issue 26).
    """
    kind = type(fields_set)
    if kind is not set and kind is not SharedFieldsSet:
        _set_fields_set(model, fields_set)
        return
    cls = type(model)
    shape = _shapes.get(cls)
    if shape is None:
        shape = _shape_of(cls)
    one = shape.last
    if fields_set != one:
        one = _shared_set(fields_set)
        if shape is not _LAZY_SHAPE:
            shape.last = one
    _set_fields_set(model, fields_set if one is None else one)
    # K25: no unknown fields, as most models: the one empty mapping (set before this slot).
    try:
        extra = _get_extra(model)
    except AttributeError:
        pass  # not set yet: an unpickle sets this slot first
    else:
        if type(extra) is dict and not extra:
            _set_extra(model, NO_EXTRA_FIELDS)
    # K21: an equal dict whose names the class holds once, when the model's dict holds exactly
    # its class's fields (validation, construction and copies give that; a construction
    # without some, or an unpickle, which sets this slot before the dict, does not). `keys |
    # values` copies the key-sharing dict and sets the values in one call.
    keys = shape.keys
    if keys is not None:
        values = _get_dict(model)
        if len(values) == len(keys):
            compact = keys | values
            if len(compact) == len(values):  # the same names: nothing of `values` left out
                _set_dict(model, compact)


def own_extra_fields(model: BaseModel) -> None:
    """Give `model` its own mutable dict of unknown fields again (before adding one)."""
    try:
        extra = _get_extra(model)
    except AttributeError:
        return  # not set yet
    if extra is NO_EXTRA_FIELDS:
        _set_extra(model, {})


_private_slot = BaseModel.__dict__["__pydantic_private__"]
_set_private = _private_slot.__set__


class Assembly(NamedTuple):
    """How to make a model of one class as validation leaves one, for a caller that has
    checked every value as the class would validate it and makes very many (runtime.codec's
    compiled protobuf builders, K27): the key-sharing dict of its field names (K21; None where
    it is no smaller), the fields set a model given `names` holds (K15), and the slot setters.
    A model is `object.__new__(cls)` with, in this order, its dict (every field by Python name
    in the class' order: `keys | values`, or the values), NO_EXTRA_FIELDS (K25), its fields
    set and None as private state. Only for classes without private attributes, validators
    or a `model_post_init`: the caller checks."""

    keys: dict[str, Any] | None
    fields_set: Callable[[set[str]], set[str]]
    set_dict: Callable[[BaseModel, dict[str, Any]], None]
    set_extra: Callable[[BaseModel, Any], None]
    set_fields_set: Callable[[BaseModel, set[str]], None]
    set_private: Callable[[BaseModel, Any], None]


def assembly(cls: type[BaseModel]) -> Assembly:
    """How to make models of `cls` (see Assembly)."""
    return Assembly(
        _shape_of(cls).keys, _fields_set_of, _set_dict, _set_extra, _set_fields_set, _set_private
    )


def _fields_set_of(names: set[str]) -> set[str]:
    """The fields set a model given `names` holds: the shared one (K15), or `names` itself
    once no more are kept."""
    one = _shared_set(names)
    return names if one is None else one


def own_fields_set(model: BaseModel) -> None:
    """Give `model` its own mutable field set again (before changing it in place)."""
    fields_set = _get_fields_set(model)
    if type(fields_set) is SharedFieldsSet:
        _set_fields_set(model, set(fields_set))


class KubeModel(BaseModel):
    """Base class of generated Kubernetes models."""

    # The per-class state of a lazy class (runtime.codec.lazy's `_LazyClass`, read through
    # instances: `is_lazy` and every first read of a field) of every model the machinery
    # meets. Here so that a built model answers None at once, not through pydantic's
    # `__getattr__` (an exception per look, ~1 µs).
    __kubeinformers_lazy__: ClassVar[Any] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # A model with no fields of its own holds only unknown ones: FieldsV1's trie, a
        # RawExtension (K22). Its subclasses (lazy classes included) inherit what it has.
        held_as = inspect.getattr_static(cls, "__pydantic_extra__")
        if not cls.model_fields and not isinstance(held_as, property):
            keep_content_as_json(cls)

    def __setattr__(self, name: str, value: Any) -> None:
        own_fields_set(self)
        own_extra_fields(self)  # an unknown attribute goes in a dict of its own
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        own_fields_set(self)
        super().__delattr__(name)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copied = super().model_copy(deep=deep)
        if update:
            # As pydantic's own update, on the copy's own set (the copy was given a shared one).
            own_fields_set(copied)
            fields = type(self).model_fields
            allow_extra = self.model_config.get("extra") == "allow"
            for key, value in update.items():
                if key in fields or not allow_extra:
                    copied.__dict__[key] = value
                else:
                    own_extra_fields(copied)
                    extra = copied.__pydantic_extra__
                    if extra is None:
                        extra = {}
                        object.__setattr__(copied, "__pydantic_extra__", extra)
                    extra[key] = value
            _get_fields_set(copied).update(update.keys())
        return copied

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        serialize_by_alias=True,
        arbitrary_types_allowed=False,
        protected_namespaces=(),
        # Build each model's validator on first use, not at import: a group-version module
        # holds hundreds of models (core/v1: ~300 ms to build all), and an informer that only
        # reads identity through lazy objects never needs most of them.
        defer_build=True,
    )


class UnknownEnumValue(str):
    """A value of a CRD enum that the enum did not list when the models were generated.

    A CRD's string enum is generated as `Literal["Alpha", "Beta"] | UnknownEnumValue`: adding
    a value is a compatible change by the Kubernetes API conventions, so a server newer than
    the models may send one (Go enums are strings, and client-go reads it). The value reads
    as this subclass of `str` (equal to the plain string, serialised as it), so mypy shows a
    reader that the field may hold a value outside the literal, and a literal the model does
    not know is still a type error where a user writes one.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"UnknownEnumValue({str.__repr__(self)})"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            cls, core_schema.str_schema(), serialization=core_schema.to_string_ser_schema()
        )


class StatusCause(KubeModel):
    reason: str | None = None
    message: str | None = None
    field: str | None = None


class StatusDetails(KubeModel):
    name: str | None = None
    group: str | None = None
    kind: str | None = None
    uid: str | None = None
    causes: list[StatusCause] | None = None
    retry_after_seconds: int | None = Field(default=None, alias="retryAfterSeconds")


class Status(KubeModel):
    """meta/v1 Status: the body of a failed request and the object of a watch ERROR event."""

    kind: str | None = "Status"
    api_version: str | None = Field(default="v1", alias="apiVersion")
    metadata: dict[str, Any] | None = None
    status: str | None = None
    message: str | None = None
    reason: str | None = None
    details: StatusDetails | None = None
    code: int | None = None


class ScaleSpec(KubeModel):
    replicas: int | None = None


class ScaleStatus(KubeModel):
    replicas: int = 0
    selector: str | None = None


class Scale(KubeModel):
    """autoscaling/v1 Scale: what the scale subresource of any kind reads and writes."""

    kind: str | None = "Scale"
    api_version: str | None = Field(default="autoscaling/v1", alias="apiVersion")
    metadata: dict[str, Any] | None = None
    spec: ScaleSpec | None = None
    status: ScaleStatus | None = None


__all__ = [
    "Assembly",
    "assembly",
    "KubeModel",
    "NoExtraFields",
    "Scale",
    "ScaleSpec",
    "ScaleStatus",
    "SharedFieldsSet",
    "Status",
    "StatusCause",
    "StatusDetails",
    "UnknownEnumValue",
    "own_extra_fields",
    "own_fields_set",
]


# After the class is built (pydantic's metaclass drops the slot names from a class namespace):
# every field set pydantic stores in a KubeModel goes through `_share`; reads are the slot's.
type.__setattr__(KubeModel, "__pydantic_fields_set__", property(_get_fields_set, _share))
