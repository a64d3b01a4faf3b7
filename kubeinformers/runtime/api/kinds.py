"""Models that know their lister: what `factory.informer(Pod)` and `factory.lister(Pod)` need.

Each generated model of a kind that offers list and watch carries one class attribute,
`__kube_lister__: ClassVar[type["PodLister"]]`, set to its generated lister class (defined in
the same module, so neither needs to import the other). mypy infers
`factory.lister(Pod) -> PodLister` by matching the class against the `ListedModel` Protocol;
the lister class carries the resource (`RESOURCE`), which is all an informer needs besides
the model.

A kind the server serves without list and watch (TokenReview, SubjectAccessReview, Binding)
has no lister; its model carries its resource itself, `__kube_resource__: ClassVar[APIResource]`,
which is what the typed client needs to write it (`served_resource_of`). A kind created only
as a subresource of another object (Eviction: pods/<name>/eviction) carries where, as
`__kube_subresource__: ClassVar[SubresourceKind]` (`created_under`).
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from kubeinformers.runtime.api.resource import APIResource, SubresourceKind

__all__ = [
    "KindModelError",
    "ListedModel",
    "created_under",
    "lister_class",
    "resource_of",
    "served_resource_of",
]

L_co = TypeVar("L_co", covariant=True)


class ListedModel(Protocol[L_co]):
    """A generated model class whose kind has a typed lister `L_co` (matched by the class)."""

    @property
    def __kube_lister__(self) -> type[L_co]: ...


class KindModelError(TypeError):
    """The class is not a generated model of a kind that offers list and watch."""


def lister_class(model: type[Any]) -> type[Any]:
    """The generated lister class of a generated model's kind."""
    value = model.__dict__.get("__kube_lister__")
    if not isinstance(value, type):
        under = created_under(model)
        if under is not None:
            raise KindModelError(
                f"{model.__module__}.{model.__qualname__} is created only as "
                f"{under.describe()} (a subresource of an object), so it has no informer or "
                "lister; create it with the typed client (client.create(...))"
            )
        served = model.__dict__.get("__kube_resource__")
        if isinstance(served, APIResource):
            verbs = ", ".join(sorted(served.verbs)) or "nothing"
            raise KindModelError(
                f"{model.__module__}.{model.__qualname__}: the server offers no list and watch "
                f"of {served.gvr.group_resource()} (only {verbs}), so it has no informer or "
                "lister; write it with the typed client (client.create(...))"
            )
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


def served_resource_of(model: type[Any]) -> APIResource:
    """The APIResource of a generated model of any kind the server serves: its lister's
    RESOURCE, or for a kind without list and watch its own `__kube_resource__`."""
    if isinstance(model.__dict__.get("__kube_lister__"), type):
        return resource_of(model)
    served = model.__dict__.get("__kube_resource__")
    if isinstance(served, APIResource):
        return served
    under = created_under(model)
    if under is not None:
        raise KindModelError(
            f"{model.__module__}.{model.__qualname__} is created only as {under.describe()} "
            "(a subresource of an object): create it (client.create(...)), nothing else"
        )
    raise KindModelError(
        f"{model.__module__}.{model.__qualname__} is not the model of a kind the server "
        "serves (no __kube_lister__ or __kube_resource__): pass a generated top-level kind such "
        "as Pod or TokenReview, not a part of one"
    )


def created_under(model: type[Any]) -> SubresourceKind | None:
    """Where a generated model of a kind created only as a subresource is created (None for
    any other class)."""
    under = model.__dict__.get("__kube_subresource__")
    return under if isinstance(under, SubresourceKind) else None
