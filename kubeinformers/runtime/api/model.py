"""The base of every generated model, and the few wire types the runtime itself decodes.

One base model for all kinds: unknown fields are kept (servers newer than the spec lose
nothing), fields populate by name or alias, and serialise by alias (the API's spelling).

Cached objects share their field sets (`share_fields_sets`): pydantic gives every model
instance its own `set` of the fields it was given, 23 sets and ~9.5 KB of a 25 KB pod,
although a kind's objects have a handful of distinct ones. A shared set is a `SharedFieldsSet`
(a `set` that refuses changes); a model takes its own again before a change (an assignment,
a deletion, `model_copy(update=...)`), so only a caller changing `model_fields_set` in place
sees the difference (a TypeError saying so).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler
from pydantic_core import core_schema


class SharedFieldsSet(set[str]):
    """The field set many cached models share (see the module's docstring): read-only."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "this model's fields set is shared with other cached objects; assign the field "
            "instead (which gives the model its own), or copy the set"
        )

    add = discard = remove = pop = clear = update = _refuse
    difference_update = intersection_update = symmetric_difference_update = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse


_MAX_SHARED_SETS = 10_000  # distinct field sets kept; a kind has a few dozen
_shared_sets: dict[frozenset[str], SharedFieldsSet] = {}
_get_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__get__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__


def _may_hold_models(annotation: Any) -> bool:
    """Whether a field of this type may hold a model (directly or in a list or dict)."""
    if isinstance(annotation, type):
        return issubclass(annotation, BaseModel) or annotation in (list, dict)
    return any(_may_hold_models(arg) for arg in typing.get_args(annotation)) or (
        typing.get_origin(annotation) in (list, dict)
    )


# For share_fields_sets' walk, per class: the fields of a model that may hold models, lists or
# dicts (computed once per class), or False for a class that is no model (nothing to share).
_plans: dict[type, tuple[str, ...] | bool] = {}
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plan(cls: type) -> tuple[str, ...] | bool:
    plan: tuple[str, ...] | bool = False
    if issubclass(cls, BaseModel):
        plan = tuple(n for n, f in cls.model_fields.items() if _may_hold_models(f.annotation))
    _plans[cls] = plan
    return plan


def share_fields_sets(obj: Any) -> None:
    """Replace the field set of every model in `obj` (a model, or a list or dict of them) with
    a shared `SharedFieldsSet`.

    Only for objects that nobody else holds yet (a decoder's freshly built model): a thread
    changing a field of one meanwhile could see its change to the set lost.
    """
    shared, plans, scalars = _shared_sets, _plans, _SCALARS
    stack: list[Any] = [obj]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        cls = type(item)
        if cls is list:
            for value in item:
                if type(value) not in scalars:
                    push(value)
            continue
        if cls is dict:  # of models (map fields) or of plain JSON (free-form fields)
            for value in item.values():
                if type(value) not in scalars:
                    push(value)
            continue
        plan = plans.get(cls)
        if plan is None:
            plan = _plan(cls)
        if plan is False:
            continue
        fields_set = _get_fields_set(item)
        if type(fields_set) is set:
            key = frozenset(fields_set)
            one = shared.get(key)
            if one is None and len(shared) < _MAX_SHARED_SETS:
                one = shared.setdefault(key, SharedFieldsSet(key))
            if one is not None:
                _set_fields_set(item, one)
        if plan is not True:
            state = item.__dict__
            for name in plan:
                value = state.get(name)
                if value is not None:
                    push(value)


def own_fields_set(model: BaseModel) -> None:
    """Give `model` its own mutable field set again (before changing it in place)."""
    fields_set = _get_fields_set(model)
    if type(fields_set) is SharedFieldsSet:
        _set_fields_set(model, set(fields_set))


class KubeModel(BaseModel):
    """Base class of generated Kubernetes models."""

    def __setattr__(self, name: str, value: Any) -> None:
        own_fields_set(self)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        own_fields_set(self)
        super().__delattr__(name)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        if update:
            own_fields_set(self)  # the copy's set is a copy of this one, then updated
        return super().model_copy(update=update, deep=deep)

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
    "KubeModel",
    "Scale",
    "ScaleSpec",
    "ScaleStatus",
    "SharedFieldsSet",
    "Status",
    "StatusCause",
    "StatusDetails",
    "UnknownEnumValue",
    "own_fields_set",
    "share_fields_sets",
]
