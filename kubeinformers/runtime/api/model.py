"""The base of every generated model, and the few wire types the runtime itself decodes.

One base model for all kinds: unknown fields are kept (servers newer than the spec lose
nothing), fields populate by name or alias, and serialise by alias (the API's spelling).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler
from pydantic_core import core_schema


class KubeModel(BaseModel):
    """Base class of generated Kubernetes models."""

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


__all__ = ["KubeModel", "Status", "StatusCause", "StatusDetails", "UnknownEnumValue"]
