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
        """The URL path of the collection; a namespace of None or "" means all namespaces."""
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{prefix}/namespaces/{namespace}/{self.resource}"
        return f"{prefix}/{self.resource}"

    def object_path(self, name: str, namespace: str | None = None) -> str:
        return f"{self.collection_path(namespace)}/{name}"


__all__ = ["LIST_WATCH_VERBS", "APIResource", "GroupVersionResource", "ProtobufKind"]
