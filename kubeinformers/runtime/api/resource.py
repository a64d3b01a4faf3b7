"""What a resource is: its group, version, plural name, kind and scope.

Shared by the transport (to build request paths), the factory (to key informers),
listers (to word NotFound errors as the API server does) and the local API server.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LIST_WATCH_VERBS = frozenset({"list", "watch"})


@dataclass(frozen=True, slots=True, order=True)
class GroupVersionResource:
    """A resource's identity, as `schema.GroupVersionResource` in apimachinery."""

    group: str
    version: str
    resource: str

    @property
    def group_version(self) -> str:
        """`v1` for the core group, else `group/version` (an object's apiVersion)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def group_resource(self) -> str:
        """`pods` or `deployments.apps`: how the API server names a resource in messages."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def core_group_mistake(self) -> str:
        """What to write instead when the group is named "core" or "api" (H6): the core
        group's name is "" (`the core API group is "": GroupVersionResource(...)`); "" for
        any other group."""
        if self.group not in ("core", "api"):
            return ""
        return (
            f'the core API group is "": GroupVersionResource("", "{self.version}", '
            f'"{self.resource}")'
        )

    def __str__(self) -> str:
        return f"{self.group_version}, Resource={self.resource}"


@dataclass(frozen=True, slots=True)
class ProtobufKind:
    """Where a built-in kind's protobuf form is described, for informers that ask for it.

    kube-apiserver writes built-in kinds as protobuf about twice as fast as JSON (custom
    resources only as JSON). `message` is the kind's full protobuf message name
    (`k8s.io.api.core.v1.Pod`); `schema_module` names the generated module whose `MESSAGES`
    table describes it, imported on first use (the runtime never imports generated code
    otherwise).
    """

    message: str
    schema_module: str


@dataclass(frozen=True, slots=True)
class APIResource:
    """A servable resource: enough to list, watch and key it, and to word errors about it."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    singular: str = ""
    verbs: frozenset[str] = field(default=LIST_WATCH_VERBS)
    # The writable subresources the server serves: "status", "scale" (from the OpenAPI paths
    # of built-in kinds, from `subresources` of a CRD version).
    subresources: frozenset[str] = field(default=frozenset())
    # Set for built-in kinds the server also serves as protobuf (see ProtobufKind).
    protobuf: ProtobufKind | None = field(default=None, compare=False)

    @property
    def gvr(self) -> GroupVersionResource:
        return GroupVersionResource(self.group, self.version, self.resource)

    @property
    def api_version(self) -> str:
        return self.gvr.group_version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    @property
    def supports_list_watch(self) -> bool:
        return LIST_WATCH_VERBS <= self.verbs

    def collection_path(self, namespace: str | None = None) -> str:
        """The URL path of the collection; a namespace of None or "" means all namespaces.
        ValueError for a namespace that is not one path segment (`path_segment_problem`)."""
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            problem = path_segment_problem(namespace)
            if problem:
                raise ValueError(
                    f"invalid namespace {namespace!r} for {self.gvr.group_resource()}: {problem} "
                    "(a namespace is one segment of the request's URL path)"
                )
            return f"{prefix}/namespaces/{namespace}/{self.resource}"
        return f"{prefix}/{self.resource}"

    def object_path(self, name: str, namespace: str | None = None) -> str:
        """The URL path of one object. ValueError for an empty name (the path would be the
        collection's: a DELETE of it deletes every object) or one that is not one path
        segment (`..` would be the namespace's path), as client-go's `Request.Name`."""
        if not name:
            raise ValueError(
                f"{self.gvr.group_resource()} name may not be empty: a request for one object "
                "needs its name (without one it would address the whole collection)"
            )
        problem = path_segment_problem(name)
        if problem:
            raise ValueError(
                f"invalid {self.gvr.group_resource()} name {name!r}: {problem} "
                "(a name is one segment of the request's URL path)"
            )
        return f"{self.collection_path(namespace)}/{name}"


@dataclass(frozen=True, slots=True)
class ReadableResource(APIResource):
    """A resource the server serves for get and list but not watch (ComponentStatus; a
    cluster's PodMetrics): no informer, and the typed client reads it (its class is what
    tells mypy so)."""


@dataclass(frozen=True, slots=True)
class SubresourceKind:
    """A kind the server takes only as a subresource of another resource's object, where it
    is created: a policy/v1 Eviction as pods/<name>/eviction, an authentication/v1
    TokenRequest as serviceaccounts/<name>/token. `resource` is the parent's, `api_version`
    and `kind` the written object's own."""

    resource: APIResource
    subresource: str
    api_version: str
    kind: str

    def path(self, name: str, namespace: str | None) -> str:
        """The URL path to create it at: the parent object's, then the subresource."""
        return f"{self.resource.object_path(name, namespace)}/{self.subresource}"

    def describe(self) -> str:
        """`pods/eviction` (as RBAC and the server's messages name it)."""
        return f"{self.resource.gvr.group_resource()}/{self.subresource}"


def path_segment_problem(segment: str) -> str:
    """Why `segment` cannot be a name or namespace in a URL path, "" if it can: apimachinery's
    `path.IsValidPathSegmentName` (what client-go's `Request.Name` and `Namespace` check)."""
    if segment in (".", ".."):
        return f"may not be {segment!r}"
    for bad in ("/", "%"):
        if bad in segment:
            return f"may not contain {bad!r}"
    return ""


__all__ = [
    "LIST_WATCH_VERBS",
    "APIResource",
    "GroupVersionResource",
    "ProtobufKind",
    "ReadableResource",
    "SubresourceKind",
    "path_segment_problem",
]
