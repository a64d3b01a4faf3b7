"""Objects that do not validate against their model: built field by field, the bad fields apart.

Why: the models are generated from a cluster's API at one moment; the server may change a
CRD later (a field becomes a string, a list becomes a map) and write objects in the new
shape before the models are regenerated. Refusing the whole object would make every read of
it fail, listers and handlers included, for one field nobody may read; keeping an older
version would be worse (a stale object read as current). So an object that fails validation
is validated again field by field (`build_lenient`): every field that validates is the
model's value, nested models are built the same way, and a field that does not is kept as
the server sent it and raises `InvalidFieldError` when read, naming the object, the field
path and the remedy. The object is the newest version the server sent; its model dump holds
the server's value of the bad field (a read-modify-write keeps it), silently: the value is
held as the model holds a field it does not know (under its API name, in the unknown fields
pydantic serialises as they are), never in the typed field, whose serialiser would warn that
it is not the declared type (PydanticSerializationUnexpectedValue) on every dump.

The model whose own field is bad is an instance of a subclass of the generated model (same
name; `isinstance` holds) whose attribute reads check that field first. Such instances
compare, copy and pickle like the model; assigning a field a new value makes it readable.

Only when the item is no JSON object at all (or a protobuf item is malformed) is the whole
object unreadable: `InvalidObjectError` on any read past its identity (runtime.codec.lazy).
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

__all__ = [
    "MISSING",
    "InvalidFieldError",
    "InvalidObjectError",
    "PartlyInvalidObjectError",
    "build_lenient",
    "invalid_fields",
    "remedy",
]

M = typing.TypeVar("M", bound=BaseModel)

_REMEDY = (
    "regenerate the models from this cluster's API (kubeinformers generate --cluster) to read it"
)
# The reason of a required field the server did not send.
MISSING = "a required field is missing"
# A required field the server did not send has a second cause besides models older than the
# server: an object stored before its field became required (a CRD's schema applies to what is
# written after it; the server does not check stored objects again), which regenerating the
# models does not mend.
_MISSING_REMEDY = (
    "either the object was stored before the field became required (the server does not check "
    "stored objects again: write the field to the object), or the cluster's API changed since "
    f"the models were generated ({_REMEDY})"
)


def remedy(reasons: Iterable[str]) -> str:
    """What to do about fields that do not validate for these `reasons`."""
    kinds = {reason == MISSING for reason in reasons}
    if kinds == {True}:
        return _MISSING_REMEDY
    if True in kinds:
        return f"{_REMEDY}; for a required field the server did not send, {_MISSING_REMEDY}"
    return _REMEDY


class InvalidObjectError(ValueError):
    """An object from the server does not validate against its generated model."""

    def __init__(self, model: type[BaseModel], key: str, error: ValidationError) -> None:
        paths = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}"
            for e in error.errors()[:5]
        )
        more = error.error_count() - 5
        super().__init__(
            f"{model.__name__} {key!r} does not validate against "
            f"{model.__module__}.{model.__qualname__} ({paths}{f'; and {more} more' if more > 0 else ''}). "
            f"It stays in the cache as the server sent it; {_REMEDY}."
        )
        self.model = model
        self.key = key
        self.validation_error = error


class InvalidFieldError(InvalidObjectError):
    """A read of one field whose value the server sent does not validate against the model
    (the rest of the object reads). `path` is the field's API path (`spec.parts[0].count`),
    `value` what the server sent, `reason` why it does not validate."""

    def __init__(
        self, model: type[BaseModel], key: str, path: str, reason: str, value: Any
    ) -> None:
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        model_name = f"{model.__module__}.{model.__qualname__}"
        ValueError.__init__(
            self,
            f"{model.__name__} {key!r}: field {path} is missing, which {model_name} "
            f"requires: {_MISSING_REMEDY}. The rest of the object reads."
            if reason == MISSING
            else f"{model.__name__} {key!r}: field {path} does not validate against "
            f"{model_name} ({reason}; the server sent {shown}): the cluster's API changed "
            f"since the models were generated; {_REMEDY}. The rest of the object reads.",
        )
        self.model = model
        self.key = key
        self.path = path
        self.reason = reason
        self.value = value


class PartlyInvalidObjectError(InvalidObjectError):
    """What is reported, once, for an object some of whose fields do not validate: it is
    cached at the version the server sent, and each of `fields` raises when read."""

    def __init__(
        self, model: type[BaseModel], key: str, fields: tuple[InvalidFieldError, ...]
    ) -> None:
        listed = "; ".join(f"{f.path}: {f.reason}" for f in fields[:5])
        more = f"; and {len(fields) - 5} more" if len(fields) > 5 else ""
        ValueError.__init__(
            self,
            f"{model.__name__} {key!r} has fields that do not validate against "
            f"{model.__module__}.{model.__qualname__} ({listed}{more}). It is cached as the "
            "server sent it: a read of those fields raises InvalidFieldError, the rest of the "
            f"object reads; {remedy(f.reason for f in fields)}.",
        )
        self.model = model
        self.key = key
        self.fields = fields


# --------------------------------------------------------------------------------- the bad fields


@dataclass(frozen=True)
class _BadField:
    """One field of a built model that raises when read (listed in the model's __dict__; its
    value, if the server sent one, among the model's unknown fields under `sent_as`)."""

    root: type[BaseModel]
    key: str
    path: str
    reason: str
    value: Any
    sent_as: str | None = None  # the API's name of the field, None when it was not sent

    def error(self) -> InvalidFieldError:
        # A new error per read: raising one instance again would grow its traceback.
        return InvalidFieldError(self.root, self.key, self.path, self.reason, self.value)


_BAD = "__kubeinformers_bad_fields__"  # {field name: _BadField}, in a drifted model's __dict__


def _drifted_getattribute(self: Any, name: str) -> Any:
    bad = object.__getattribute__(self, "__dict__").get(_BAD)
    if bad is not None and name in bad:
        raise bad[name].error()
    return object.__getattribute__(self, name)


def _drifted_setattr(self: Any, name: str, value: Any) -> None:
    _forget(self, name)
    super(type(self), self).__setattr__(name, value)


def _drifted_model_copy(
    self: Any, *, update: Mapping[str, Any] | None = None, deep: bool = False
) -> Any:
    copied = super(type(self), self).model_copy(update=update, deep=deep)
    for name in update or ():
        _forget(copied, name)  # given a value: readable, and dumped once, as that value
    return copied


def _forget(obj: Any, name: str) -> None:
    """`obj`'s field `name` is given a value: it no longer raises, nor is the server's value
    of it kept among the unknown fields."""
    state = object.__getattribute__(obj, "__dict__")
    bad = state.get(_BAD)
    if bad is None or name not in bad:
        return
    sent_as = bad[name].sent_as
    state[_BAD] = {k: v for k, v in bad.items() if k != name}
    extra = object.__getattribute__(obj, "__pydantic_extra__")
    if sent_as is not None and extra and sent_as in extra:
        extra = dict(extra)
        del extra[sent_as]
        object.__setattr__(obj, "__pydantic_extra__", extra)


def _drifted_reduce_ex(self: Any, protocol: Any) -> Any:
    return (_rebuild, (type(self).__kubeinformers_drift_base__, self.__getstate__()))


def _rebuild(base: type[BaseModel], state: Any) -> BaseModel:
    obj = object.__new__(_drifted_class(base))
    obj.__setstate__(state)
    return obj


@functools.cache
def _drifted_class(base: type[BaseModel]) -> type[BaseModel]:
    namespace: dict[str, Any] = {
        "__slots__": (),
        "__module__": base.__module__,
        "__qualname__": base.__qualname__,
        "__getattribute__": _drifted_getattribute,
        "__setattr__": _drifted_setattr,
        "model_copy": _drifted_model_copy,
        "__reduce_ex__": _drifted_reduce_ex,
        "__kubeinformers_drift_base__": base,
    }
    return type(base.__name__, (base,), namespace)


def invalid_fields(obj: BaseModel) -> dict[str, InvalidFieldError]:
    """The fields of `obj` itself (not of nested models) that raise when read, by name."""
    bad = object.__getattribute__(obj, "__dict__").get(_BAD) or {}
    return {name: field.error() for name, field in bad.items()}


# ------------------------------------------------------------------------------ the lenient build


@dataclass(frozen=True)
class _Field:
    name: str
    adapter: TypeAdapter[Any]
    model: type[BaseModel] | None  # the model the value is, holds (list) or maps to (dict)
    shape: str  # "model", "list", "dict" or "" (anything else)


@functools.cache
def _fields(model: type[BaseModel]) -> dict[str, _Field]:
    """`model`'s fields by the key the API writes (alias, else name)."""
    out: dict[str, _Field] = {}
    for name, info in model.model_fields.items():
        annotation = info.annotation
        typ: Any = Annotated[annotation, *info.metadata] if info.metadata else annotation
        inner, shape = _shape(annotation)
        out[info.alias or name] = _Field(name, TypeAdapter(typ), inner, shape)
    return out


def _shape(annotation: Any) -> tuple[type[BaseModel] | None, str]:
    """The model inside `annotation` (`M`, `list[M]`, `dict[str, M]`, each maybe `| None`)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            return None, ""
        annotation = members[0]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, "model"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and len(args) == 1:
        inner, shape = _shape(args[0])
        return (inner, "list") if shape == "model" else (None, "")
    if origin is dict and len(args) == 2:
        inner, shape = _shape(args[1])
        return (inner, "dict") if shape == "model" else (None, "")
    return None, ""


class _Lenient:
    def __init__(self, root: type[BaseModel], key: str) -> None:
        self.root = root
        self.key = key
        self.bad: list[_BadField] = []

    def model(self, model: type[BaseModel], data: dict[str, Any], path: str) -> BaseModel:
        fields = _fields(model)
        values: dict[str, Any] = {}
        raw: dict[str, Any] = {}  # the bad fields' values, by the API's names
        bad: dict[str, _BadField] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            field = fields.get(key)
            if field is None:
                extra[key] = value  # kept as the model keeps unknown fields
                continue
            where = f"{path}.{key}" if path else key
            try:
                values[field.name] = self.value(field, value, where)
            except ValidationError as exc:
                raw[key] = value
                bad[field.name] = self._bad(where, _reason(exc), value, key)
        for key, field in fields.items():
            info = model.model_fields[field.name]
            if info.is_required() and field.name not in values and field.name not in bad:
                where = f"{path}.{key}" if path else key
                bad[field.name] = self._bad(where, MISSING, None, None)
        sent = {name for name, b in bad.items() if b.sent_as is not None}
        obj = model.model_construct(_fields_set={*values, *sent}, **values, **extra)
        if bad:
            # A bad field's value is kept as an unknown one is, under its API name (a dump
            # holds it as the server sent it, with no serialiser warning: the typed field's
            # would say it is not its type), and the typed field is left out of the instance
            # dict (model_construct gave it its default): its read raises (_BAD).
            state = object.__getattribute__(obj, "__dict__")
            for name in bad:
                state.pop(name, None)
            state[_BAD] = bad
            if raw:
                object.__setattr__(obj, "__pydantic_extra__", {**extra, **raw})
            object.__setattr__(obj, "__class__", _drifted_class(model))
        return obj

    def value(self, field: _Field, value: Any, path: str) -> Any:
        try:
            return field.adapter.validate_python(value)
        except ValidationError:
            model = field.model
            if model is None or value is None:
                raise
            if field.shape == "model" and type(value) is dict:
                return self.model(model, value, path)
            if field.shape == "list" and type(value) is list:
                return [self.item(model, v, f"{path}[{i}]") for i, v in enumerate(value)]
            if field.shape == "dict" and type(value) is dict:
                return {k: self.item(model, v, f"{path}[{k!r}]") for k, v in value.items()}
            raise

    def item(self, model: type[BaseModel], value: Any, path: str) -> Any:
        if type(value) is not dict:
            return model.model_validate(value)  # raises: the whole field is bad
        try:
            return model.model_validate(value)
        except ValidationError:
            return self.model(model, value, path)

    def _bad(self, path: str, reason: str, value: Any, sent_as: str | None) -> _BadField:
        field = _BadField(self.root, self.key, path, reason, value, sent_as)
        self.bad.append(field)
        return field


def _reason(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    if not errors:
        return str(exc)
    first = errors[0]
    loc = ".".join(str(p) for p in first.get("loc", ()))
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{first.get('msg', 'invalid')}{f' at {loc}' if loc else ''}{more}"


def object_key(data: Any) -> str:
    """`namespace/name` (or `name`) of an item's JSON-shaped data, "" when it has none."""
    meta = data.get("metadata") if type(data) is dict else None
    if type(meta) is not dict:
        return ""
    name = meta.get("name") or ""
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else str(name)


def build_lenient(
    model: type[M],
    data: Any,
    key: str | None = None,
    *,
    root: type[BaseModel] | None = None,
    path: str = "",
) -> tuple[M, PartlyInvalidObjectError | None]:
    """`model` built from `data` (the item's JSON-shaped value) field by field, and what to
    report about its bad fields (None when every field validates). Raises ValidationError
    only when `data` is no JSON object. `key` names the object in errors (read from the
    data's metadata unless given). A part of an object (a nested lazy object, K19) gives its
    object's model as `root` and its own field path as `path`: errors name them."""
    if type(data) is not dict:
        return model.model_validate(data), None
    root = root or model
    lenient = _Lenient(root, object_key(data) if key is None else key)
    obj = lenient.model(model, data, path)
    if not lenient.bad:
        return typing.cast(M, obj), None
    fields = tuple(b.error() for b in lenient.bad)
    return typing.cast(M, obj), PartlyInvalidObjectError(root, lenient.key, fields)
