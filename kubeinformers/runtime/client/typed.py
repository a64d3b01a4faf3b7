"""Typed writes (and reads) keyed by the generated models: `Client` and its asyncio twin
`AsyncClient`, thin faces over one core (`_Calls` builds each request and decodes its answer,
`rest.RestCore` sends it).

    client = factory.client()                       # or Client(api_client)
    pod = client.get(Pod, "web", namespace="default")
    client.apply(WidgetApply(metadata={"name": "w", "namespace": "default"},
                             spec={"replicas": 3}), field_manager="my-controller")

The model's class knows its resource (`Model.__kube_lister__.RESOURCE`: group, version,
plural, scope, subresources), so no call names one. mypy --strict checks the scope: a
namespaced kind's `get`/`patch`/`delete` need `namespace=`, a cluster-scoped kind's take none;
`update_status`/`apply_status` take only kinds with a `status`. Every call returns the typed
object the server answered (`delete` the object while finalizers or a grace period keep it,
else the server's Status).

Read your writes: a client tied to an informer factory (`factory.client()`) returns from a
write only once that factory's running informer of the kind has the write in its cache
(`WriteObserver`), so listers and reconcile loops never answer for the key from before it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, cast, get_args, overload

import msgspec
from pydantic import BaseModel, ValidationError

from kubeinformers.runtime.api.apply import ApplyConfiguration, apply_document
from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.kinds import KindModelError, created_under, served_resource_of
from kubeinformers.runtime.api.listwatch import ListOptions, ObjectList
from kubeinformers.runtime.api.model import Scale, Status
from kubeinformers.runtime.api.resource import APIResource, ReadableResource, SubresourceKind
from kubeinformers.runtime.client.api_client import ApiClient
from kubeinformers.runtime.client.cancel import Cancellation
from kubeinformers.runtime.client.rest import (
    APPLY_PATCH,
    JSON,
    JSON_PATCH,
    STRATEGIC_MERGE_PATCH,
    Request,
    RestCore,
    query,
)
from kubeinformers.runtime.codec.drift import InvalidObjectError, build_lenient
from kubeinformers.runtime.codec.lazy import materialize

logger = logging.getLogger("kubeinformers.client")

# (model, object, bad field paths) already said: once each; the _REPORTED_MAX last said are
# remembered, the least recently said forgotten first (then said again if it comes back).
_REPORTED_MAX = 10_000
_reported: OrderedDict[tuple[str, str, tuple[str, ...]], None] = OrderedDict()
_reported_lock = threading.Lock()


class UnreadableAnswerError(InvalidObjectError):
    """A successful (2xx) answer of the typed client that holds no object to read: no JSON,
    or JSON that is no object (an object whose fields do not validate is read field by
    field instead, K11). Names the request and the server; for a write, it says the server
    may have applied it. `validation_error` is pydantic's error, `body` (up to 1,000 bytes)
    what the server sent."""

    def __init__(
        self,
        model: type[BaseModel],
        key: str,
        request: Request,
        server: str,
        error: ValidationError,
        body: bytes,
    ) -> None:
        write = request.method != "GET"
        dry_run = ("dryRun", "All") in request.query
        try:
            data = msgspec.json.decode(body)
        except msgspec.DecodeError:
            found = "not JSON"
        else:
            found = f"a JSON {_JSON_KINDS.get(type(data), type(data).__name__)}"
        shown = body[:200].decode("utf-8", "replace") + ("..." if len(body) > 200 else "")
        message = (
            f"cannot {request.what} at {server}: the server's answer holds no "
            f"{model.__name__} object (it is {found}: {shown!r})"
        )
        if write and not dry_run:
            message += (
                "; the server accepted the request (it answered 2xx), so it may have been "
                "applied: read the object again before redoing it"
            )
        ValueError.__init__(self, message)
        self.model = model
        self.key = key
        self.validation_error = error
        self.request = request
        self.body = body[:1000]


_JSON_KINDS: dict[type, str] = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


class _NoObject(Exception):
    """Raised by a call's decoder when the answer holds no object (see _Base._answer)."""

    def __init__(self, model: type[BaseModel], error: ValidationError) -> None:
        super().__init__(str(error))
        self.model = model
        self.error = error


def _lenient(model: type[BaseModel], body: bytes, exc: ValidationError) -> BaseModel:
    """`body` built field by field (runtime.codec.drift, as the informers build an object
    that does not validate) after `exc`; _NoObject when the body is no JSON object at all.
    Its bad fields are said once at WARNING."""
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        raise _NoObject(model, exc) from None
    if type(data) is not dict:
        raise _NoObject(model, exc)
    obj, partly = build_lenient(model, data)
    if partly is not None:
        paths = tuple(f.path for f in partly.fields)
        said = (f"{model.__module__}.{model.__qualname__}", partly.key, paths)
        with _reported_lock:
            new = said not in _reported
            _reported[said] = None
            _reported.move_to_end(said)
            if len(_reported) > _REPORTED_MAX:
                _reported.popitem(last=False)
        if new:
            listed = "; ".join(f"{f.path}: {f.reason}" for f in partly.fields[:5])
            logger.warning(
                "%s %r from the server has fields that do not validate against %s.%s (%s): "
                "a read of them raises InvalidFieldError, the rest of the object reads, and a "
                "write built from it keeps the server's values; regenerate the models from "
                "this cluster's API (kubeinformers generate --cluster) to read them",
                model.__name__,
                partly.key,
                model.__module__,
                model.__qualname__,
                listed,
            )
    return obj


__all__ = [
    "APPLY_PATCH",
    "AsyncClient",
    "Client",
    "ClusterKind",
    "FieldValidation",
    "Kind",
    "NamespacedKind",
    "PatchType",
    "PropagationPolicy",
    "StatusKind",
    "UnreadableAnswerError",
    "WriteObserver",
]

PatchType = Literal["merge", "json", "strategic"]
PropagationPolicy = Literal["Orphan", "Background", "Foreground"]
# What the server does with fields of a write's body it does not know (M16): drop them
# silently, drop them and say so in a Warning header each (its default), or refuse the write.
FieldValidation = Literal["Ignore", "Warn", "Strict"]
_FIELD_VALIDATIONS: tuple[str, ...] = get_args(FieldValidation)
_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": JSON_PATCH,
    "strategic": STRATEGIC_MERGE_PATCH,
}


# --- what mypy matches a model against ---------------------------------------------------------
# A generated model carries `__kube_lister__: ClassVar[type[XLister]]`, and XLister subclasses
# NamespacedLister (reads one namespace through `by_namespace`) or ClusterLister (reads one
# object with `get(name)`) by the kind's scope (H9): the same marker, matched here by shape
# (the client sits below the cache and does not import it).


class _NamespacedListerShape(Protocol):
    def by_namespace(self, namespace: str, /) -> object: ...


class _ClusterListerShape(Protocol):
    def get(self, name: str, /) -> object: ...


# Each shape also has `metadata`, an instance attribute of every kind's model: so an object
# matches, and its class does not (mypy matches a class object against a protocol by its class
# variables only; `client.create(ConfigMap)` passed as `__kube_lister__` is one).


class Kind(Protocol):
    """A generated model of a kind with a resource (namespaced or cluster-scoped)."""

    @property
    def __kube_lister__(self) -> type[_NamespacedListerShape] | type[_ClusterListerShape]: ...

    @property
    def metadata(self) -> object: ...


class NamespacedKind(Protocol):
    """A generated model of a namespaced kind (Pod, ConfigMap, a namespaced CRD)."""

    @property
    def __kube_lister__(self) -> type[_NamespacedListerShape]: ...

    @property
    def metadata(self) -> object: ...


class ClusterKind(Protocol):
    """A generated model of a cluster-scoped kind (Node, Namespace, a cluster CRD)."""

    @property
    def __kube_lister__(self) -> type[_ClusterListerShape]: ...

    @property
    def metadata(self) -> object: ...


class ServedKind(Protocol):
    """A generated model of a kind the server serves without list and watch (TokenReview,
    SubjectAccessReview, Binding: create only): it carries its resource itself."""

    @property
    def __kube_resource__(self) -> APIResource: ...

    @property
    def metadata(self) -> object: ...


class ReadableKind(Protocol):
    """A generated model of a kind the server serves for get and list but not watch
    (ComponentStatus; PodMetrics from a cluster with metrics-server): read, not watched."""

    @property
    def __kube_resource__(self) -> ReadableResource: ...

    @property
    def metadata(self) -> object: ...


class SubresourceCreatedKind(Protocol):
    """A generated model of a kind created only as a subresource of another object (an
    Eviction as pods/<name>/eviction, a TokenRequest as serviceaccounts/<name>/token)."""

    @property
    def __kube_subresource__(self) -> SubresourceKind: ...

    @property
    def metadata(self) -> object: ...


class StatusKind(Kind, Protocol):
    """A kind whose model has a `status` (the status subresource is checked at run time)."""

    @property
    def status(self) -> object: ...


K = TypeVar("K", bound=Kind)
WK = TypeVar("WK", bound=Kind | ServedKind | SubresourceCreatedKind)  # what `create` takes
RK = TypeVar("RK", bound=ReadableKind)  # read without a watch: scope checked at run time
GK = TypeVar("GK", bound=Kind | ReadableKind)  # what `get` and `list` take
NK = TypeVar("NK", bound=NamespacedKind)
CK = TypeVar("CK", bound=ClusterKind)
SK = TypeVar("SK", bound=StatusKind)
R = TypeVar("R")

Patch = Mapping[str, Any] | Sequence[Mapping[str, Any]]
# What `patch` and `update` write through besides the whole object (checked at run time against
# the kind's resource): a kind's status, and a few built-in kinds' parts written as the kind
# itself (a pod's container resources and ephemeral containers, a CSR's approval, a
# namespace's finalizers). The scale subresource has its own calls (`scale`, `get_scale`).
WritableSubresource = Literal["status", "resize", "ephemeralcontainers", "approval", "finalize"]


class WriteObserver(Protocol):
    """Who must see a client's writes before the write returns (an informer factory).

    `result` is the server's answer (the written object, or the Status of a delete),
    `namespace`/`name` the object's key as requested ("" name for a create: read `result`).
    Raises ReadYourWritesTimeout when `timeout` passes first.
    """

    def wait_for_write(
        self,
        resource: APIResource,
        namespace: str | None,
        name: str,
        result: object,
        timeout: float,
        *,
        deleted: bool = False,
    ) -> None: ...

    async def wait_for_write_async(
        self,
        resource: APIResource,
        namespace: str | None,
        name: str,
        result: object,
        timeout: float,
        *,
        deleted: bool = False,
    ) -> None: ...


# --- the core ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Call(Generic[R]):
    """One request, how to read its answer, and what the cache must see afterwards."""

    request: Request
    decode: Callable[[bytes], R]
    resource: APIResource | None = None  # a write: wait for the cache to see the result
    namespace: str | None = None
    name: str = ""
    deleted: bool = False


def _an_object(obj: object, verb: str) -> BaseModel:
    """The model `obj` to write; a class given where its object belongs is a TypeError."""
    if isinstance(obj, type):
        raise TypeError(
            f"{verb} takes an object, {obj.__name__}(metadata=ObjectMeta(...), ...), not the "
            f"class {obj.__name__}"
        )
    return cast(BaseModel, obj)


def _served(model: type[Any], verb: str) -> APIResource:
    """The resource of `model`'s kind, for a request of `verb`. A kind the server serves
    without list and watch (TokenReview: create only) is refused a verb it does not serve
    here, before any request, as the server would refuse it."""
    resource = served_resource_of(model)
    if not resource.supports_list_watch and verb not in resource.verbs:
        verbs = ", ".join(sorted(resource.verbs)) or "nothing"
        raise KindModelError(
            f"the server serves {resource.gvr.group_resource()} ({resource.kind}) for {verbs} "
            f"only: it offers no {verb} of it"
        )
    return resource


def _sent_on_success_status(decode: Callable[[bytes], R], sent: R) -> Callable[[bytes], R]:
    """`decode`, but an answer that is a Status (a 2xx one: a failure raises before) gives a
    copy of the object sent. The server keeps no object of some kinds it creates (a Binding
    sets the pod's `spec.nodeName`) and answers their create with `Status` Success, where
    client-go's `Bind` returns only an error."""

    def decode_answer(body: bytes) -> R:
        try:
            head = _decode_kind(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            head = None  # no JSON object: `decode` says so
        if head is not None and head.kind == "Status":
            return cast(R, cast(BaseModel, sent).model_copy(deep=True))
        return decode(body)

    return decode_answer


def _meta(obj: object) -> Any:
    return getattr(obj, "metadata", None)


def _where(resource: APIResource, name: str | None, namespace: str | None) -> str:
    what = resource.gvr.group_resource()
    if name:
        what = f'{what} "{name}"'
    if resource.namespaced and namespace:
        what = f'{what} in namespace "{namespace}"'
    return what


def _body(obj: BaseModel, api_version: str, kind: str, *, only_set: bool) -> dict[str, Any]:
    """The object as the API spells it: every field (unknown ones too), or, for apply, only
    those set on it; apiVersion and kind filled in (the resource's, or a kind created under
    another object's own)."""
    obj = materialize(obj)
    if only_set:
        data = obj.model_dump(mode="json", by_alias=True, exclude_unset=True)
    else:
        data = obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    data["apiVersion"] = data.get("apiVersion") or api_version
    data["kind"] = data.get("kind") or kind
    return data


class _Kind(msgspec.Struct):
    kind: Any = None


_decode_kind = msgspec.json.Decoder(_Kind).decode


def _encode(data: object) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def _field_validation(value: FieldValidation | None) -> str | None:
    """The `fieldValidation` query value of a write (None: not sent, the server's default,
    Warn); anything but the three modes is a ValueError before any request (M16)."""
    if value is not None and value not in _FIELD_VALIDATIONS:
        allowed = ", ".join(f'"{mode}"' for mode in _FIELD_VALIDATIONS)
        raise ValueError(f"field_validation must be {allowed} or None, not {value!r}")
    return value


def _write_query(
    field_manager: str | None,
    field_validation: FieldValidation | None,
    dry_run: bool,
    force: bool = False,
) -> tuple[tuple[str, str], ...]:
    """The query parameters of a create, update or patch (CreateOptions, UpdateOptions,
    PatchOptions): those not given are left out."""
    return query(
        fieldManager=field_manager,
        fieldValidation=_field_validation(field_validation),
        force=True if force else None,
        dryRun="All" if dry_run else None,
    )


class _Calls:
    """Builds every call of the client: paths, query parameters, bodies, decoding."""

    def _identity(
        self, obj: object, verb: str, namespace: str | None = None
    ) -> tuple[APIResource, str, str | None]:
        resource = _served(type(materialize(cast(BaseModel, obj))), verb)
        meta = _meta(obj)
        name = getattr(meta, "name", None) or ""
        ns = namespace or getattr(meta, "namespace", None) or None
        if not name:
            raise ValueError(
                f"this {resource.kind} has no metadata.name: set it (generateName is only for create)"
            )
        return resource, name, self._namespace(resource, ns, name)

    @staticmethod
    def _namespace(resource: APIResource, namespace: str | None, name: str) -> str | None:
        if not resource.namespaced:
            return None
        if not namespace:
            raise ValueError(
                f'{resource.gvr.group_resource()} is namespaced: {resource.kind} "{name}" needs '
                "a namespace: metadata.namespace of the object, or namespace= of the call"
            )
        return namespace

    @staticmethod
    def _decoder(model: type[R]) -> Callable[[bytes], R]:
        """The object in an answer, as tolerant as an informer (K11): a field that no longer
        validates (a CRD changed its type) is kept as the server sent it and raises
        InvalidFieldError when read, so a write that succeeded is never reported as failed
        and a read-modify-write keeps the server's value. An answer that is no JSON object
        raises _NoObject (worded by _Base._answer)."""
        validate = cast(type[BaseModel], model).model_validate_json

        def decode(body: bytes) -> R:
            try:
                return cast(R, validate(body))
            except ValidationError as exc:
                return cast(R, _lenient(cast(type[BaseModel], model), body, exc))

        return decode

    @staticmethod
    def _subresource(resource: APIResource, subresource: str | None) -> str:
        if subresource is None:
            return ""
        if subresource not in resource.subresources:
            offered = ", ".join(sorted(resource.subresources)) or "none"
            raise ValueError(
                f"{resource.gvr.group_resource()} has no {subresource} subresource "
                f"(its subresources: {offered}); for a custom resource, declare it under "
                "`subresources` in the CustomResourceDefinition's version and regenerate"
            )
        return f"/{subresource}"

    def get(self, model: type[R], name: str, namespace: str | None) -> _Call[R]:
        resource = _served(model, "get")
        ns = self._namespace(resource, namespace, name)
        return _Call(
            Request(
                "GET",
                resource.object_path(name, ns),
                f"get {_where(resource, name, ns)}",
                resource=resource,
            ),
            self._decoder(model),
            namespace=ns,
            name=name,
        )

    def write(
        self,
        verb: Literal["create", "update"],
        obj: R,
        *,
        subresource: str | None,
        field_manager: str | None,
        dry_run: bool,
        field_validation: FieldValidation | None = None,
    ) -> _Call[R]:
        model = _an_object(obj, verb)
        under = created_under(type(materialize(model))) if verb == "create" else None
        if under is not None:
            return self._create_under(
                under, cast(R, model), field_manager, dry_run, field_validation
            )
        resource = _served(type(materialize(model)), verb)
        meta = _meta(obj)
        if verb == "create":
            name = getattr(meta, "name", None) or ""
            ns = self._namespace(
                resource, getattr(meta, "namespace", None), name or "(generateName)"
            )
            path = resource.collection_path(ns)
            method = "POST"
        else:
            resource, name, ns = self._identity(obj, verb)
            path = resource.object_path(name, ns) + self._subresource(resource, subresource)
            method = "PUT"
        what = f"{verb} {_where(resource, name, ns)}"
        if subresource:
            what = f"{what} ({subresource})"
        decode = self._decoder(cast(type[R], type(materialize(model))))
        if verb == "create" and not resource.supports_list_watch:
            decode = _sent_on_success_status(decode, cast(R, model))
        return _Call(
            Request(
                method,
                path,
                what,
                _write_query(field_manager, field_validation, dry_run),
                _encode(_body(model, resource.api_version, resource.kind, only_set=False)),
                JSON,
                resource=resource,
                subresource=subresource,
            ),
            decode,
            None if dry_run else resource,
            ns,
            name if verb == "update" else "",
        )

    def _create_under(
        self,
        under: SubresourceKind,
        obj: R,
        field_manager: str | None,
        dry_run: bool,
        field_validation: FieldValidation | None = None,
    ) -> _Call[R]:
        """A create of a kind created only as a subresource (M14): POST to the object it
        belongs to, named by the created object's metadata (an Eviction's is the pod's)."""
        model = cast(BaseModel, obj)
        parent = under.resource
        meta = _meta(obj)
        name = getattr(meta, "name", None) or ""
        if not name:
            raise ValueError(
                f"this {under.kind} has no metadata.name: set it to the name of the "
                f"{parent.singular_name} it is for (it is created as {under.describe()})"
            )
        ns = self._namespace(parent, getattr(meta, "namespace", None), name)
        data = _body(model, under.api_version, under.kind, only_set=False)
        return _Call(
            Request(
                "POST",
                under.path(name, ns),
                f"create {under.kind} for {_where(parent, name, ns)}",
                _write_query(field_manager, field_validation, dry_run),
                _encode(data),
                JSON,
                resource=parent,
                subresource=under.subresource,
            ),
            _sent_on_success_status(self._decoder(cast(type[R], type(materialize(model)))), obj),
            None,  # nothing an informer holds: no wait for the cache
            ns,
            "",
        )

    def patch(
        self,
        model: type[R],
        name: str,
        patch: Patch | BaseModel,
        namespace: str | None,
        *,
        patch_type: PatchType,
        subresource: str | None,
        field_manager: str | None,
        dry_run: bool,
        field_validation: FieldValidation | None = None,
    ) -> _Call[R]:
        resource = _served(model, "patch")
        ns = self._namespace(resource, namespace, name)
        if patch_type not in _PATCH_CONTENT_TYPES:
            raise ValueError(
                f'patch_type must be "merge", "json" or "strategic", not {patch_type!r}'
            )
        body: object = patch
        if isinstance(patch, BaseModel):
            if patch_type == "json":
                raise TypeError("a JSON patch is a list of operations, not a model")
            body = materialize(patch).model_dump(mode="json", by_alias=True, exclude_unset=True)
        elif patch_type == "json" and not isinstance(patch, list | tuple):
            raise TypeError(
                'a JSON patch (patch_type="json") is a list of operations, such as '
                '[{"op": "replace", "path": "/spec/replicas", "value": 3}], not '
                f"a {type(patch).__name__}: pass the fields to change as a merge patch instead"
            )
        elif patch_type != "json" and not isinstance(patch, Mapping):
            raise TypeError(
                f"a {patch_type} patch is a dict of the fields to change, not a "
                f'{type(patch).__name__}: a list of operations is a JSON patch (patch_type="json")'
            )
        path = resource.object_path(name, ns) + self._subresource(resource, subresource)
        what = f"patch {_where(resource, name, ns)}" + (f" ({subresource})" if subresource else "")
        return _Call(
            Request(
                "PATCH",
                path,
                what,
                _write_query(field_manager, field_validation, dry_run),
                _encode(body),
                _PATCH_CONTENT_TYPES[patch_type],
                resource=resource,
                subresource=subresource,
            ),
            self._decoder(model),
            None if dry_run else resource,
            ns,
            name,
        )

    @overload
    def apply(
        self,
        obj: ApplyConfiguration[R],
        *,
        field_manager: str,
        force: bool,
        subresource: str | None,
        dry_run: bool,
        field_validation: FieldValidation | None = None,
    ) -> _Call[R]: ...
    @overload
    def apply(
        self,
        obj: R,
        *,
        field_manager: str,
        force: bool,
        subresource: str | None,
        dry_run: bool,
        field_validation: FieldValidation | None = None,
    ) -> _Call[R]: ...
    def apply(
        self,
        obj: R | ApplyConfiguration[R],
        *,
        field_manager: str,
        force: bool,
        subresource: str | None,
        dry_run: bool,
        field_validation: FieldValidation | None = None,
    ) -> _Call[R]:
        if not field_manager:
            raise ValueError("server-side apply needs a field_manager: who owns the fields sent")
        if isinstance(obj, ApplyConfiguration):
            model_type = cast(type[R], obj.model())
            resource = _served(model_type, "patch")
            meta = obj.fields.get("metadata") or {}
            name = str(meta.get("name") or "")
            if not name:
                raise ValueError(
                    f"this {type(obj).__name__} has no metadata name: set metadata={{'name': ...}}"
                )
            ns = self._namespace(resource, meta.get("namespace"), name)
            body = apply_document(obj, resource.api_version, resource.kind)
        else:
            model = _an_object(obj, "apply")
            resource, name, ns = self._identity(obj, "patch")
            model_type = cast(type[R], type(materialize(model)))
            body = _body(model, resource.api_version, resource.kind, only_set=True)
        path = resource.object_path(name, ns) + self._subresource(resource, subresource)
        what = f"apply {_where(resource, name, ns)}" + (f" ({subresource})" if subresource else "")
        return _Call(
            Request(
                "PATCH",
                path,
                what,
                _write_query(field_manager, field_validation, dry_run, force),
                _encode(body),
                APPLY_PATCH,
                resource=resource,
                subresource=subresource,
            ),
            self._decoder(model_type),
            None if dry_run else resource,
            ns,
            name,
        )

    def scale(
        self,
        model: type[Any],
        name: str,
        namespace: str | None,
        replicas: int | None,
        *,
        field_manager: str | None,
        dry_run: bool,
        field_validation: FieldValidation | None = None,
    ) -> _Call[Scale]:
        """Read (`replicas=None`) or set the scale subresource; the answer is a Scale."""
        resource = _served(model, "get" if replicas is None else "patch")
        ns = self._namespace(resource, namespace, name)
        path = resource.object_path(name, ns) + self._subresource(resource, "scale")
        decode = self._decoder(Scale)
        if replicas is None:
            return _Call(
                Request(
                    "GET",
                    path,
                    f"get {_where(resource, name, ns)} (scale)",
                    resource=resource,
                    subresource="scale",
                ),
                decode,
                namespace=ns,
                name=name,
            )
        return _Call(
            Request(
                "PATCH",
                path,
                f"scale {_where(resource, name, ns)} to {replicas}",
                _write_query(field_manager, field_validation, dry_run),
                _encode({"spec": {"replicas": replicas}}),
                _PATCH_CONTENT_TYPES["merge"],
                resource=resource,
                subresource="scale",
            ),
            decode,
            None if dry_run else resource,  # the Scale carries the object's resourceVersion
            ns,
            name,
        )

    def delete(
        self,
        model: type[R],
        name: str,
        namespace: str | None,
        *,
        uid: str | None,
        resource_version: str | None,
        propagation_policy: PropagationPolicy | None,
        grace_period_seconds: int | None,
        dry_run: bool,
    ) -> _Call[R | Status]:
        resource = _served(model, "delete")
        ns = self._namespace(resource, namespace, name)
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        preconditions = {
            k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v is not None
        }
        if preconditions:
            options["preconditions"] = preconditions
        if propagation_policy is not None:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if dry_run:
            options["dryRun"] = ["All"]
        decode_object = self._decoder(model)
        decode_status = self._decoder(Status)

        def decode(body: bytes) -> R | Status:
            try:
                head = _decode_kind(body)
            except (msgspec.DecodeError, msgspec.ValidationError):
                head = None  # no JSON object: decode_object says so
            if head is not None and head.kind == "Status":
                return decode_status(body)
            return decode_object(body)

        return _Call(
            Request(
                "DELETE",
                resource.object_path(name, ns),
                f"delete {_where(resource, name, ns)}",
                query(dryRun="All" if dry_run else None),
                body=_encode(options),
                content_type=JSON,
                resource=resource,
            ),
            decode,
            None if dry_run else resource,
            ns,
            name,
            deleted=True,
        )


# --- the faces ---------------------------------------------------------------------------------


class _Base:
    def __init__(
        self,
        api_client: ApiClient,
        *,
        observer: WriteObserver | None = None,
        read_your_writes: bool = True,
        read_your_writes_timeout: float = 10.0,
        field_manager: str | None = None,
        core: RestCore | None = None,
    ) -> None:
        self._core = core or RestCore(api_client)
        self._calls = _Calls()
        self._observer = observer if read_your_writes else None
        self._timeout = read_your_writes_timeout
        self.field_manager = field_manager
        self._listers: dict[tuple[APIResource, str | None], Any] = {}
        self._lock = threading.Lock()

    @property
    def api_client(self) -> ApiClient:
        """The kubernetes ApiClient the requests go through (the informers' connection)."""
        return self._core.api_client

    @property
    def read_your_writes(self) -> bool:
        """Whether writes wait for the factory's informers to see them (see the module doc)."""
        return self._observer is not None

    def _manager(self, field_manager: str | None) -> str | None:
        return field_manager or self.field_manager

    def _answer(self, call: _Call[R], body: bytes) -> R:
        """The call's answer read (K11), or UnreadableAnswerError naming the request when it
        holds no object at all."""
        try:
            return call.decode(body)
        except _NoObject as exc:
            key = f"{call.namespace}/{call.name}" if call.namespace else call.name
            raise UnreadableAnswerError(
                exc.model, key, call.request, self._core.server, exc.error, body
            ) from exc.error

    def _lister_watcher(self, model: type[Any], namespace: str | None) -> Any:
        """The informers' transport for this kind: lists come as protobuf where it wins."""
        from kubeinformers.runtime.client.transport import ApiListerWatcher

        resource = _served(model, "list")
        ns = namespace if resource.namespaced else None
        key = (resource, ns or None)
        with self._lock:
            found = self._listers.get(key)
            if found is None:
                found = ApiListerWatcher(self.api_client, resource, model, namespace=ns)
                self._listers[key] = found
        return found

    def _list_page(
        self, model: type[Any], namespace: str | None, options: ListOptions
    ) -> ObjectList[Any]:
        """One page over the informers' transport, retried as every other call of the client
        is (RestCore.wait_to_retry: a 429, or a 5xx with Retry-After)."""
        lister = self._lister_watcher(model, namespace)
        attempt = 0
        while True:
            try:
                return cast(ObjectList[Any], lister.list(options))
            except ApiStatusError as err:
                attempt += 1
                self._core.wait_to_retry(err, attempt, f"list {lister.describe()}")


class Client(_Base):
    """Typed reads and writes of generated models over a kubernetes ApiClient.

    `observer` (given by `factory.client()`) makes writes wait until the factory's informer of
    the kind has them (`read_your_writes=False` turns that off; `read_your_writes_timeout`
    bounds the wait, then ReadYourWritesTimeout). `field_manager` is the default for writes.
    Every write but `delete` takes `field_validation=`: what the server does with fields of the
    body it does not know ("Ignore", "Warn", "Strict": BadRequest, nothing written; M16);
    None leaves it to the server, which warns.
    """

    def _run(self, call: _Call[R]) -> R:
        result = self._answer(call, self._core.send(call.request))
        observer = self._observer
        if observer is not None and call.resource is not None:
            observer.wait_for_write(
                call.resource,
                call.namespace,
                call.name,
                result,
                self._timeout,
                deleted=call.deleted,
            )
        return result

    @overload
    def get(self, model: type[NK], name: str, *, namespace: str) -> NK: ...
    @overload
    def get(self, model: type[CK], name: str) -> CK: ...
    @overload
    def get(self, model: type[RK], name: str, *, namespace: str | None = None) -> RK: ...
    def get(self, model: type[GK], name: str, *, namespace: str | None = None) -> GK:
        """The object as the server has it now (NotFound if it does not exist)."""
        return self._run(self._calls.get(model, name, namespace))

    @overload
    def list(
        self,
        model: type[NK],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ObjectList[NK]: ...
    @overload
    def list(
        self,
        model: type[CK],
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ObjectList[CK]: ...
    @overload
    def list(
        self,
        model: type[RK],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ObjectList[RK]: ...
    def list(
        self,
        model: type[GK],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ObjectList[GK]:
        """One page of objects (all of them without `limit`; `namespace=None`: every
        namespace). The page's `continue_` asks for the next page."""
        options = ListOptions(label_selector, field_selector, None, None, limit, continue_)
        return cast(ObjectList[GK], self._list_page(model, namespace, options))

    def create(
        self,
        obj: WK,
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> WK:
        """Create `obj` (AlreadyExists if its name is taken); the server's copy is returned.
        A review (TokenReview, SubjectAccessReview) comes back with the server's `status`; a
        kind the server keeps no object of (a Binding) as a copy of `obj` once accepted."""
        return self._run(
            self._calls.write(
                "create",
                obj,
                subresource=None,
                field_manager=self._manager(field_manager),
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )

    def update(
        self,
        obj: K,
        *,
        subresource: WritableSubresource | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> K:
        """Replace the object; Conflict if its metadata.resourceVersion is not the server's
        (optimistic concurrency: read, change, update; see retry_on_conflict). With
        `subresource` the server takes only that part of it ("resize": the containers'
        resources; "finalize": a namespace's spec.finalizers; M15)."""
        return self._run(
            self._calls.write(
                "update",
                obj,
                subresource=subresource,
                field_manager=self._manager(field_manager),
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )

    def update_status(
        self,
        obj: SK,
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> SK:
        """Replace the status through the status subresource (only `status` changes)."""
        return self._run(
            self._calls.write(
                "update",
                obj,
                subresource="status",
                field_manager=self._manager(field_manager),
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )

    @overload
    def patch(
        self,
        model: type[NK],
        name: str,
        patch: Patch | BaseModel,
        *,
        namespace: str,
        patch_type: PatchType = "merge",
        subresource: WritableSubresource | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> NK: ...
    @overload
    def patch(
        self,
        model: type[CK],
        name: str,
        patch: Patch | BaseModel,
        *,
        patch_type: PatchType = "merge",
        subresource: WritableSubresource | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> CK: ...
    def patch(
        self,
        model: type[K],
        name: str,
        patch: Patch | BaseModel,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        subresource: WritableSubresource | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> K:
        """Patch one object: "merge" (RFC 7386; a dict, or a model's set fields), "json"
        (RFC 6902, a list of operations) or "strategic" (built-in kinds only)."""
        return self._run(
            self._calls.patch(
                model,
                name,
                patch,
                namespace,
                patch_type=patch_type,
                subresource=subresource,
                field_manager=self._manager(field_manager),
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )

    @overload
    def apply(
        self,
        obj: ApplyConfiguration[K],
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> K: ...
    @overload
    def apply(
        self,
        obj: K,
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> K: ...
    def apply(
        self,
        obj: K | ApplyConfiguration[K],
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> K:
        """Server-side apply of a generated apply configuration (`DeploymentApply(...)`: only
        the fields given) or of a model (only its fields set), owned by `field_manager`;
        Conflict if another manager owns one of them, unless `force=True` takes them over.
        Creates the object if it does not exist; returns the whole object, typed by the
        configuration's kind (see docs/guide/writing.md)."""
        call: _Call[K] = self._calls.apply(
            cast(Any, obj),  # the overloads above type the result
            field_manager=self._manager(field_manager) or "",
            force=force,
            subresource=None,
            dry_run=dry_run,
            field_validation=field_validation,
        )
        return self._run(call)

    @overload
    def apply_status(
        self,
        obj: ApplyConfiguration[SK],
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> SK: ...
    @overload
    def apply_status(
        self,
        obj: SK,
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> SK: ...
    def apply_status(
        self,
        obj: SK | ApplyConfiguration[SK],
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> SK:
        """Server-side apply of the status subresource: an apply configuration's `status`, or
        the `status` fields set on a model."""
        call: _Call[SK] = self._calls.apply(
            cast(Any, obj),  # the overloads above type the result
            field_manager=self._manager(field_manager) or "",
            force=force,
            subresource="status",
            dry_run=dry_run,
            field_validation=field_validation,
        )
        return self._run(call)

    @overload
    def delete(
        self,
        model: type[NK],
        name: str,
        *,
        namespace: str,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> NK | Status: ...
    @overload
    def delete(
        self,
        model: type[CK],
        name: str,
        *,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> CK | Status: ...
    def delete(
        self,
        model: type[K],
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> K | Status:
        """Delete one object. Preconditions `uid`/`resource_version` make it Conflict if the
        object is another one or changed. Returns the object while finalizers or a grace
        period keep it (deletionTimestamp set), else the server's Status."""
        return self._run(
            self._calls.delete(
                model,
                name,
                namespace,
                uid=uid,
                resource_version=resource_version,
                propagation_policy=propagation_policy,
                grace_period_seconds=grace_period_seconds,
                dry_run=dry_run,
            )
        )

    @overload
    def get_scale(self, model: type[NamespacedKind], name: str, *, namespace: str) -> Scale: ...
    @overload
    def get_scale(self, model: type[ClusterKind], name: str) -> Scale: ...
    def get_scale(self, model: type[Kind], name: str, *, namespace: str | None = None) -> Scale:
        """The scale subresource (autoscaling/v1 Scale: spec.replicas, status.replicas and
        selector) of a kind that has one (Deployment, a CRD declaring `scale`)."""
        return self._run(
            self._calls.scale(model, name, namespace, None, field_manager=None, dry_run=False)
        )

    @overload
    def scale(
        self,
        model: type[NamespacedKind],
        name: str,
        replicas: int,
        *,
        namespace: str,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Scale: ...
    @overload
    def scale(
        self,
        model: type[ClusterKind],
        name: str,
        replicas: int,
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Scale: ...
    def scale(
        self,
        model: type[Kind],
        name: str,
        replicas: int,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Scale:
        """Set the replicas through the scale subresource (`kubectl scale`); the new Scale."""
        return self._run(
            self._calls.scale(
                model,
                name,
                namespace,
                replicas,
                field_manager=self._manager(field_manager),
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )


async def _off_the_loop(work: Callable[[], R]) -> R:
    """`work()` (a request and the decoding of its answer) in a worker thread. M10: when the
    awaiting task is cancelled the request ends at once (its socket shut down, a wait for a
    Retry-After cut short) instead of going on in the thread for up to its timeout, retries
    included, and holding `asyncio.run` up at exit as long."""
    cancellation = Cancellation("a cancelled request of an AsyncClient")

    def scoped() -> R:
        with cancellation.scope():
            return work()

    try:
        return await asyncio.to_thread(scoped)
    except asyncio.CancelledError:
        cancellation.cancel()
        raise


class AsyncClient(_Base):
    """`Client` for coroutines: the same calls, awaited; the network runs in a worker thread
    and read-your-writes waits never block the event loop."""

    async def _run(self, build: Callable[[], _Call[R]]) -> R:
        # Building the body and decoding the answer (pydantic, a model's first validator
        # build) run in the worker thread with the request: the loop only awaits.
        def work() -> tuple[_Call[R], R]:
            call = build()
            return call, self._answer(call, self._core.send(call.request))

        call, result = await _off_the_loop(work)
        observer = self._observer
        if observer is not None and call.resource is not None:
            await observer.wait_for_write_async(
                call.resource,
                call.namespace,
                call.name,
                result,
                self._timeout,
                deleted=call.deleted,
            )
        return result

    @overload
    async def get(self, model: type[NK], name: str, *, namespace: str) -> NK: ...
    @overload
    async def get(self, model: type[CK], name: str) -> CK: ...
    @overload
    async def get(self, model: type[RK], name: str, *, namespace: str | None = None) -> RK: ...
    async def get(self, model: type[GK], name: str, *, namespace: str | None = None) -> GK:
        """`Client.get`."""
        return await self._run(lambda: self._calls.get(model, name, namespace))

    @overload
    async def list(
        self,
        model: type[NK],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ObjectList[NK]: ...
    @overload
    async def list(
        self,
        model: type[CK],
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ObjectList[CK]: ...
    @overload
    async def list(
        self,
        model: type[RK],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ObjectList[RK]: ...
    async def list(
        self,
        model: type[GK],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ObjectList[GK]:
        """`Client.list`."""
        options = ListOptions(label_selector, field_selector, None, None, limit, continue_)

        def work() -> ObjectList[GK]:
            return cast(ObjectList[GK], self._list_page(model, namespace, options))

        return await _off_the_loop(work)

    async def create(
        self,
        obj: WK,
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> WK:
        """`Client.create`."""
        return await self._run(
            lambda: self._calls.write(
                "create",
                obj,
                subresource=None,
                field_manager=self._manager(field_manager),
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )

    async def update(
        self,
        obj: K,
        *,
        subresource: WritableSubresource | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> K:
        """`Client.update`."""
        return await self._run(
            lambda: self._calls.write(
                "update",
                obj,
                subresource=subresource,
                field_manager=self._manager(field_manager),
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )

    async def update_status(
        self,
        obj: SK,
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> SK:
        """`Client.update_status`."""
        return await self._run(
            lambda: self._calls.write(
                "update",
                obj,
                subresource="status",
                field_manager=self._manager(field_manager),
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )

    @overload
    async def patch(
        self,
        model: type[NK],
        name: str,
        patch: Patch | BaseModel,
        *,
        namespace: str,
        patch_type: PatchType = "merge",
        subresource: WritableSubresource | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> NK: ...
    @overload
    async def patch(
        self,
        model: type[CK],
        name: str,
        patch: Patch | BaseModel,
        *,
        patch_type: PatchType = "merge",
        subresource: WritableSubresource | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> CK: ...
    async def patch(
        self,
        model: type[K],
        name: str,
        patch: Patch | BaseModel,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        subresource: WritableSubresource | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> K:
        """`Client.patch`."""
        return await self._run(
            lambda: self._calls.patch(
                model,
                name,
                patch,
                namespace,
                patch_type=patch_type,
                subresource=subresource,
                field_manager=self._manager(field_manager),
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )

    @overload
    async def apply(
        self,
        obj: ApplyConfiguration[K],
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> K: ...
    @overload
    async def apply(
        self,
        obj: K,
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> K: ...
    async def apply(
        self,
        obj: K | ApplyConfiguration[K],
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> K:
        """`Client.apply`."""
        return await self._run(
            lambda: self._calls.apply(
                cast(Any, obj),  # the overloads above type the result
                field_manager=self._manager(field_manager) or "",
                force=force,
                subresource=None,
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )

    @overload
    async def apply_status(
        self,
        obj: ApplyConfiguration[SK],
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> SK: ...
    @overload
    async def apply_status(
        self,
        obj: SK,
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> SK: ...
    async def apply_status(
        self,
        obj: SK | ApplyConfiguration[SK],
        *,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> SK:
        """`Client.apply_status`."""
        return await self._run(
            lambda: self._calls.apply(
                cast(Any, obj),  # the overloads above type the result
                field_manager=self._manager(field_manager) or "",
                force=force,
                subresource="status",
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )

    @overload
    async def delete(
        self,
        model: type[NK],
        name: str,
        *,
        namespace: str,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> NK | Status: ...
    @overload
    async def delete(
        self,
        model: type[CK],
        name: str,
        *,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> CK | Status: ...
    async def delete(
        self,
        model: type[K],
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> K | Status:
        """`Client.delete`."""
        return await self._run(
            lambda: self._calls.delete(
                model,
                name,
                namespace,
                uid=uid,
                resource_version=resource_version,
                propagation_policy=propagation_policy,
                grace_period_seconds=grace_period_seconds,
                dry_run=dry_run,
            )
        )

    @overload
    async def get_scale(
        self, model: type[NamespacedKind], name: str, *, namespace: str
    ) -> Scale: ...
    @overload
    async def get_scale(self, model: type[ClusterKind], name: str) -> Scale: ...
    async def get_scale(
        self, model: type[Kind], name: str, *, namespace: str | None = None
    ) -> Scale:
        """`Client.get_scale`."""
        return await self._run(
            lambda: self._calls.scale(
                model, name, namespace, None, field_manager=None, dry_run=False
            )
        )

    @overload
    async def scale(
        self,
        model: type[NamespacedKind],
        name: str,
        replicas: int,
        *,
        namespace: str,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Scale: ...
    @overload
    async def scale(
        self,
        model: type[ClusterKind],
        name: str,
        replicas: int,
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Scale: ...
    async def scale(
        self,
        model: type[Kind],
        name: str,
        replicas: int,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Scale:
        """`Client.scale`."""
        return await self._run(
            lambda: self._calls.scale(
                model,
                name,
                namespace,
                replicas,
                field_manager=self._manager(field_manager),
                dry_run=dry_run,
                field_validation=field_validation,
            )
        )
