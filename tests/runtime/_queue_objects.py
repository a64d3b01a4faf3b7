"""Small test objects shaped like the generated models (and like dynamic dicts).

Shared by the queue/store tests; the generated ``core.v1.Pod`` is not required so these
tests run before (and independently of) the generator.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kubeinformers.runtime.api.model import KubeModel


class ObjectMeta(KubeModel):
    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")
    uid: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class Thing(KubeModel):
    """A minimal kind: metadata plus one value (the ``foo(10)`` of the spec's notation)."""

    metadata: ObjectMeta | None = None
    value: int = 0


def thing(
    name: str,
    value: int = 0,
    *,
    namespace: str | None = None,
    rv: str | None = None,
    labels: dict[str, str] | None = None,
) -> Thing:
    return Thing(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            resource_version=rv if rv is not None else str(value),
            labels=labels,
        ),
        value=value,
    )


def dict_thing(name: str, namespace: str | None = None, **meta: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, **meta}
    if namespace is not None:
        md["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Thing", "metadata": md}
