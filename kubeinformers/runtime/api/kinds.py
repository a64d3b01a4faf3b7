"""Models that know their lister: what `factory.informer(Pod)` and `factory.lister(Pod)` need.

Each generated model of a kind that offers list and watch carries one class attribute,

    __kube_lister__: ClassVar[type["PodLister"]] = lister_ref("<package>.core.v1.listers:PodLister")

typed as its lister class (so mypy infers `factory.lister(Pod) -> PodLister` through the
`ListedModel` Protocol) and holding, at runtime, a reference that is imported on first use
(listers import the models, so the models cannot import the listers). The lister class has
the resource (`RESOURCE`), which is all an informer needs besides the model.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, TypeVar

from kubeinformers.runtime.api.resource import APIResource

__all__ = [
    "KindModelError",
    "ListedModel",
    "ListerRef",
    "lister_class",
    "lister_ref",
    "resource_of",
]

L_co = TypeVar("L_co", covariant=True)


class ListedModel(Protocol[L_co]):
    """A generated model class whose kind has a typed lister `L_co` (matched by the class)."""

    @property
    def __kube_lister__(self) -> type[L_co]: ...


class KindModelError(TypeError):
    """The class is not a generated model of a kind that offers list and watch."""


class ListerRef:
    """`module:Class` of a lister, imported when first asked for (see `lister_class`)."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def resolve(self) -> type[Any]:
        module, _, name = self.path.partition(":")
        lister: type[Any] = getattr(importlib.import_module(module), name)
        return lister

    def __repr__(self) -> str:
        return f"lister_ref({self.path!r})"


def lister_ref(path: str) -> Any:
    """The runtime value of a model's `__kube_lister__` (typed Any: the annotation says what
    it stands for)."""
    return ListerRef(path)


def lister_class(model: type[Any]) -> type[Any]:
    """The lister class of a generated model (imported and cached on first use)."""
    value = model.__dict__.get("__kube_lister__")
    if isinstance(value, ListerRef):
        value = value.resolve()
        type.__setattr__(model, "__kube_lister__", value)
    if not isinstance(value, type):
        raise KindModelError(
            f"{model.__module__}.{model.__qualname__} is not the model of a kind that offers "
            "list and watch (no __kube_lister__): pass a generated top-level kind such as Pod, "
            "or use factory.typed_informer(resource, model)"
        )
    return value


def resource_of(model: type[Any]) -> APIResource:
    """The APIResource of a generated model's kind (its lister's RESOURCE)."""
    resource = getattr(lister_class(model), "RESOURCE", None)
    if not isinstance(resource, APIResource):
        raise KindModelError(f"the lister of {model.__qualname__} has no RESOURCE")
    return resource
