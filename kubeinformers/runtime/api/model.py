"""The base of every generated model, and the few wire types the runtime itself decodes.

One base model for all kinds: unknown fields are kept (servers newer than the spec lose
nothing), fields populate by name or alias, and serialise by alias (the API's spelling).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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
    "Status",
    "StatusCause",
    "StatusDetails",
]
