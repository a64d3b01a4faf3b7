"""The base of the generated apply configurations: partial objects for server-side apply.

A server-side apply sends the fields its manager owns and nothing else. The generated models
cannot say that on their own: mypy makes a model's *required* fields required (a
DeploymentSpec needs its selector and template), while applying `spec.replicas` alone is
right. So the generator writes, beside each group-version's models, its apply
configurations (client-go's `applyconfigurations`):

- one `TypedDict` (`total=False`) per object type, `DeploymentSpecApply`, keyed by the API's
  own field names (`minReadySeconds`, as in a manifest): only list-map keys are `Required`
  (`ContainerApply["name"]`, `ContainerPortApply["containerPort"]`), as the server needs them
  to merge a list; a value is sent exactly as written;
- one class per kind, `DeploymentApply(ApplyConfiguration[Deployment])`, whose keyword
  arguments are the kind's top-level fields, `metadata` with its identity required (name, and
  namespace for a namespaced kind). It knows its model, so `client.apply(DeploymentApply(...))`
  returns a `Deployment`.

Building one costs a dict: no validation, no model classes imported until a client sends it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar

__all__ = ["ApplyConfiguration", "apply_document"]

M_co = TypeVar("M_co", covariant=True)


class ApplyConfiguration(Generic[M_co]):
    """The fields one field manager applies to one object of the kind `M_co` (a generated
    model). Generated subclasses (`DeploymentApply`) type the keyword arguments; `fields` is
    the document as sent, without apiVersion and kind (the client adds them)."""

    __slots__ = ("fields",)

    # (module relative to the configuration's own package, class): the kind's model, imported
    # the first time a client needs it.
    __kube_model__: ClassVar[tuple[str, str]]

    def __init__(self, fields: Mapping[str, Any]) -> None:
        self.fields: dict[str, Any] = {k: v for k, v in fields.items() if v is not None}

    @classmethod
    def model(cls) -> type[M_co]:
        """The generated model of the kind (what `client.apply` returns)."""
        module, name = cls.__kube_model__
        package = cls.__module__.rpartition(".")[0]
        found: type[M_co] = getattr(importlib.import_module(module, package), name)
        return found

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.fields!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.fields == self.fields

    __hash__ = None  # type: ignore[assignment]


def _plain(value: Any) -> Any:
    """`value` as JSON can hold it: datetimes in RFC 3339 with six fraction digits, which
    metav1.MicroTime requires and metav1.Time reads too."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        # Imported here: the timestamps module needs pydantic, a configuration does not.
        from kubeinformers.runtime.api.timestamps import format_micro_time

        return format_micro_time(value)
    return value


def apply_document(config: ApplyConfiguration[Any], api_version: str, kind: str) -> dict[str, Any]:
    """The apply body of `config`: apiVersion and kind first, then the fields as given."""
    return {"apiVersion": api_version, "kind": kind, **_plain(config.fields)}
